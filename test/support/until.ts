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

/**
 * A claim that something measured in real time reaches a level (a flow's
 * rate, say), on a machine other processes share: one of them taking a core
 * for a few seconds can hold a run under the level, while nothing outside
 * lifts a run over it. So `measure` runs up to `tries` times, until `meets`
 * holds for a run; the claim fails only when no run meets it. Returns
 * whether one did and every run's value (for the message).
 */
export async function reaches<T>(tries: number, measure: () => Promise<T>, meets: (v: T) => boolean): Promise<{ met: boolean; runs: T[] }> {
  const runs: T[] = [];
  for (let i = 0; i < tries; i++) {
    const v = await measure();
    runs.push(v);
    if (meets(v)) return { met: true, runs };
  }
  return { met: false, runs };
}
