import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import { fold, sumWords } from '../../src/wire/checksum.js';

/** The sum word by word, as RFC 1071 writes it: the reference for the wide path. */
function reference(b: Uint8Array, start: number, end: number, sum: number): number {
  for (let i = start; i < end; i += 2) sum += (b[i]! << 8) | b[i + 1]!;
  return sum;
}

test('sumWords folds to the word-by-word sum at every alignment, length and fill', () => {
  const rng = Rng.fromSeed(7);
  const buf = new ArrayBuffer(8192);
  const all = new Uint8Array(buf);
  for (const fill of ['random', 'zero', 'ones'] as const) {
    for (let i = 0; i < all.length; i++) all[i] = fill === 'random' ? rng.int(0, 255) : fill === 'zero' ? 0 : 0xff;
    for (let trial = 0; trial < 400; trial++) {
      const offset = rng.int(0, 64);
      const len = rng.int(0, 3000);
      const b = new Uint8Array(buf, offset, len);
      const start = 2 * rng.int(0, 8);
      if (start > len) continue;
      const end = start + 2 * Math.floor((len - start) / 2);
      const initial = rng.int(0, 3) === 0 ? 0 : rng.int(0, 0xfffff);
      assert.equal(fold(sumWords(b, start, end, initial)), fold(reference(b, start, end, initial)), `${fill}, offset ${offset}, bytes ${start}-${end}`);
    }
  }
});

test('sumWords gives the word-by-word sum over a shared buffer that changes between calls', () => {
  const a = new Uint8Array(new ArrayBuffer(1024), 4, 1000).fill(0x12);
  const b = new Uint8Array(new ArrayBuffer(1024), 6, 1000).fill(0x34);
  for (const x of [a, b, a]) assert.equal(fold(sumWords(x, 0, x.length, 0)), fold(reference(x, 0, x.length, 0)));
  a.fill(0xab);
  assert.equal(fold(sumWords(a, 0, a.length, 0)), fold(reference(a, 0, a.length, 0)));
});

test('sumWords gives the word-by-word sum over spans longer than one chunk of the wide path', () => {
  const rng = Rng.fromSeed(9);
  const b = new Uint8Array(new ArrayBuffer(300_000), 2, 299_990);
  for (const fill of [0xff, -1]) {
    for (let i = 0; i < b.length; i++) b[i] = fill < 0 ? rng.int(0, 255) : fill;
    assert.equal(fold(sumWords(b, 0, b.length, 0)), fold(reference(b, 0, b.length, 0)));
  }
});
