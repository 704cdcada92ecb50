import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { allocBytes, withFront } from '../../src/wire/bytes.js';

describe('allocBytes', () => {
  test('every array is zero-filled, its own length, and shares no byte with another', () => {
    const sizes = [0, 1, 40, 64, 65, 100, 1040, 1500, 4096, 4097, 70_000];
    const arrays: Uint8Array[] = [];
    // Enough arrays to go through several slabs.
    for (let i = 0; i < 400; i++) {
      const n = sizes[i % sizes.length]!;
      const b = allocBytes(n);
      assert.equal(b.length, n);
      assert.ok(
        b.every((x) => x === 0),
        `array ${i} of ${n} bytes is zero-filled`,
      );
      b.fill((i % 255) + 1);
      arrays.push(b);
    }
    arrays.forEach((b, i) =>
      assert.ok(
        b.every((x) => x === (i % 255) + 1),
        `array ${i} kept its bytes while others were written`,
      ),
    );
  });

  test('room in front of an array is zero, its own, and withFront takes it in', () => {
    for (const [n, room] of [
      [20, 17],
      [1020, 17],
      [4090, 17],
      [5000, 17],
      [0, 8],
    ] as const) {
      const before = allocBytes(64);
      const b = allocBytes(n, room);
      const after = allocBytes(64);
      assert.equal(b.length, n);
      const whole = withFront(b, room);
      assert.equal(whole.length, room + n);
      assert.ok(
        whole.every((x) => x === 0),
        `${n} bytes with ${room} of room: zero-filled`,
      );
      whole.fill(0xaa);
      assert.ok(before.every((x) => x === 0) && after.every((x) => x === 0), `${n} bytes with ${room} of room: no byte of another array`);
      assert.ok(
        b.every((x) => x === 0xaa),
        'the array is the end of the whole',
      );
    }
  });

  test('a view over an array from a shared slab starts at its offset (and 8-byte aligned)', () => {
    allocBytes(100);
    const b = allocBytes(200);
    b[0] = 0xab;
    assert.equal(b.byteOffset % 8, 0);
    assert.equal(new Uint8Array(b.buffer, b.byteOffset, b.byteLength)[0], 0xab);
  });
});
