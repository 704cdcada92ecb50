import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ByteRing } from '../../src/tcp/ring.js';

/** A ring of 16 bytes whose head sits at `head`, holding 0, 1, 2 ... (len bytes). */
function ringAt(head: number, len: number): ByteRing {
  const r = new ByteRing(16);
  r.push(new Uint8Array(head));
  r.consume(head);
  r.push(Uint8Array.from({ length: len }, (_, i) => i));
  return r;
}

describe('ByteRing', () => {
  test('view gives the bytes peek gives, at every head, offset and length, wrapped or not', () => {
    for (let head = 0; head < 16; head++) {
      for (let off = 0; off <= 12; off++) {
        for (let n = 0; off + n <= 12; n++) {
          const r = ringAt(head, 12);
          assert.deepEqual([...r.view(off, n)], [...r.peek(off, n)], `head ${head}, bytes ${off}+${n}`);
        }
      }
    }
  });

  test('a view is of the ring itself when its bytes lie in one run, a copy when they wrap', () => {
    const r = ringAt(10, 12);
    const inRun = r.view(0, 6);
    const wrapped = r.view(4, 6);
    assert.deepEqual([...wrapped], [4, 5, 6, 7, 8, 9]);
    r.consume(12);
    r.push(new Uint8Array(16).fill(0xee));
    assert.deepEqual([...inRun], [0xee, 0xee, 0xee, 0xee, 0xee, 0xee], 'a view shows what the ring holds now');
    assert.deepEqual([...wrapped], [4, 5, 6, 7, 8, 9], 'a copy keeps its bytes');
  });

  test('peek is a copy of its own', () => {
    const r = ringAt(0, 8);
    const p = r.peek(0, 8);
    r.consume(8);
    r.push(new Uint8Array(16).fill(1));
    assert.deepEqual([...p], [0, 1, 2, 3, 4, 5, 6, 7]);
  });
});
