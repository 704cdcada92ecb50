import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Heap } from '../../src/core/heap.js';
import { Rng } from '../../src/core/rng.js';

test('an empty heap has nothing to peek or pop', () => {
  const h = new Heap<number>((a, b) => a < b);
  assert.equal(h.size, 0);
  assert.equal(h.peek(), undefined);
  assert.equal(h.pop(), undefined);
});

test('pops random input in sorted order, duplicates included', () => {
  const rng = Rng.fromSeed(11);
  for (const n of [1, 2, 3, 10, 257, 2000]) {
    const xs = Array.from({ length: n }, () => rng.int(-50, 50));
    const h = new Heap<number>((a, b) => a < b);
    for (const x of xs) h.push(x);
    assert.equal(h.size, n);
    const out: number[] = [];
    for (let y = h.pop(); y !== undefined; y = h.pop()) out.push(y);
    assert.deepEqual(
      out,
      [...xs].sort((a, b) => a - b),
    );
    assert.equal(h.size, 0);
  }
});

test('interleaved pushes and pops always yield the least element', () => {
  const rng = Rng.fromSeed(12);
  const h = new Heap<number>((a, b) => a < b);
  const model: number[] = [];
  for (let i = 0; i < 5000; i++) {
    if (model.length === 0 || rng.next() < 0.6) {
      const x = rng.next();
      h.push(x);
      model.push(x);
    } else {
      model.sort((a, b) => a - b);
      assert.equal(h.peek(), model[0]);
      assert.equal(h.pop(), model.shift());
    }
    assert.equal(h.size, model.length);
  }
});

test('a (key, sequence) order makes ties come out in insertion order', () => {
  const rng = Rng.fromSeed(13);
  type E = { at: number; seq: number };
  const h = new Heap<E>((x, y) => (x.at !== y.at ? x.at < y.at : x.seq < y.seq));
  const es: E[] = Array.from({ length: 500 }, (_, seq) => ({ at: rng.int(0, 9), seq }));
  for (const e of es) h.push(e);
  const out: E[] = [];
  for (let e = h.pop(); e; e = h.pop()) out.push(e);
  assert.deepEqual(
    out,
    [...es].sort((x, y) => x.at - y.at || x.seq - y.seq),
  );
});
