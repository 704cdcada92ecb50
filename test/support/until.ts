import assert from 'node:assert/strict';

/** Polls `f` every `everyMs` until it gives a value (errors count as not yet), failing after `ms` with what it waited for. */
export async function until<T>(what: string, f: () => Promise<T | undefined>, ms: number, everyMs = 250): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
