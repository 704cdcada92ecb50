import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import { fold, sumWords, sumWordsLoop } from '../../src/wire/checksum.js';

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
      const want = fold(reference(b, start, end, initial));
      assert.equal(fold(sumWords(b, start, end, initial)), want, `${fill}, offset ${offset}, bytes ${start}-${end}`);
      assert.equal(fold(sumWordsLoop(b, start, end, initial)), want, `the loop: ${fill}, offset ${offset}, bytes ${start}-${end}`);
    }
  }
});

test('sumWords gives the word-by-word sum over a shared buffer that changes between calls', () => {
  const a = new Uint8Array(new ArrayBuffer(1024), 4, 1000).fill(0x12);
  const b = new Uint8Array(new ArrayBuffer(1024), 6, 1000).fill(0x34);
  for (const f of [sumWords, sumWordsLoop]) {
    for (const x of [a, b, a]) assert.equal(fold(f(x, 0, x.length, 0)), fold(reference(x, 0, x.length, 0)));
    a.fill(0xab);
    assert.equal(fold(f(a, 0, a.length, 0)), fold(reference(a, 0, a.length, 0)));
    a.fill(0x12);
  }
});

test('sumWords gives the word-by-word sum over spans longer than one chunk of the wide path', () => {
  const rng = Rng.fromSeed(9);
  const b = new Uint8Array(new ArrayBuffer(300_000), 2, 299_990);
  for (const fill of [0xff, -1]) {
    for (let i = 0; i < b.length; i++) b[i] = fill < 0 ? rng.int(0, 255) : fill;
    assert.equal(fold(sumWords(b, 0, b.length, 0)), fold(reference(b, 0, b.length, 0)));
  }
});

test('sumWords at the edges of the SIMD kernel: spans of 126 to 130 bytes and around 64 KiB, all ones (the largest sums of its lanes) and random', () => {
  const rng = Rng.fromSeed(13);
  const buf = new Uint8Array(new ArrayBuffer(70_000), 4, 69_990);
  for (const fill of [0xff, -1]) {
    for (let i = 0; i < buf.length; i++) buf[i] = fill < 0 ? rng.int(0, 255) : fill;
    for (const n of [126, 128, 130, 65_532, 65_534, 65_536, 65_538, 65_540]) {
      for (const start of [0, 2, 6]) {
        const want = fold(reference(buf, start, start + n, 1));
        assert.equal(fold(sumWords(buf, start, start + n, 1)), want, `fill ${fill}, ${n} bytes from ${start}`);
        // The whole of an array (no view made for the copy into the kernel's memory).
        const whole = buf.subarray(start, start + n);
        assert.equal(fold(sumWords(whole, 0, n, 1)), want, `fill ${fill}, an array of ${n} bytes`);
      }
    }
  }
});

test('sumWords leaves nothing behind between calls: a long span, then a shorter one over different bytes', () => {
  const long = new Uint8Array(4000).fill(0xee);
  const short = new Uint8Array(1000).fill(0x01);
  assert.equal(fold(sumWords(long, 0, long.length, 0)), fold(reference(long, 0, long.length, 0)));
  for (const n of [998, 1000, 130, 128]) assert.equal(fold(sumWords(short, 0, n, 0)), fold(reference(short, 0, n, 0)), `${n} bytes after 4000`);
});
