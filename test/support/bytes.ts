import assert from 'node:assert/strict';
import { RangeArgumentError } from '../../src/core/errors.js';
import type { Rng } from '../../src/core/rng.js';

/** Asserts that `view` is `length` bytes of `bytes` from `at` on, sharing its memory both ways (a view, not a copy). */
export function assertViewInto(view: Uint8Array, bytes: Uint8Array, at: number, length: number): void {
  assert.equal(view.buffer, bytes.buffer, 'same memory');
  assert.equal(view.byteOffset, bytes.byteOffset + at, 'at the payload');
  assert.equal(view.length, length);
  bytes[at + 1] = 0x99;
  assert.equal(view[1], 0x99, 'a write to the packet shows in the view');
  view[length - 1] = 0x77;
  assert.equal(bytes[at + length - 1], 0x77, 'a write to the view shows in the packet');
}

/** An assert.throws matcher: a RangeArgumentError naming `field`. */
export const refused = (field: string) => (e: unknown) => {
  assert.ok(e instanceof RangeArgumentError, String(e));
  assert.equal(e.code, 'CORE_OUT_OF_RANGE');
  assert.equal(e.field, field);
  assert.ok(e.message.startsWith(`${field}: `), e.message);
  return true;
};

/** A fuzzing step: a copy of `bytes` with up to 3 random bytes overwritten, then cut short (20%) or extended (10%). */
export function mutate(bytes: Uint8Array, rng: Rng): { bytes: Uint8Array; flips: number } {
  let b = Uint8Array.from(bytes);
  const flips = rng.int(0, 3);
  for (let k = 0; k < flips && b.length > 0; k++) b[rng.int(0, b.length - 1)] = rng.int(0, 255);
  const cut = rng.next();
  if (cut < 0.2) b = b.subarray(0, rng.int(0, b.length));
  else if (cut < 0.3) {
    const longer = new Uint8Array(b.length + rng.int(1, 9));
    longer.set(b);
    b = longer;
  }
  return { bytes: b, flips };
}
