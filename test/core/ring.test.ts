import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { describe, test } from 'node:test';
import { createRing, RingConsumer, RingProducer, SpinPolicy } from '../../src/core/ring.js';
import { Rng } from '../../src/core/rng.js';
import { workerEntry } from '../../src/core/worker-entry.js';

/** A record of `n` bytes whose contents say which record it is and where each byte sits. */
const record = (id: number, n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (id * 31 + i) & 0xff);

const ring = (capacity: number, origin = 0): { w: RingProducer; r: RingConsumer } => {
  const sab = createRing(capacity, origin);
  return { w: new RingProducer(sab), r: new RingConsumer(sab) };
};

/** Writes a whole record, reading whatever the ring holds whenever it is full; returns what was read meanwhile. */
function push(w: RingProducer, r: RingConsumer, rec: Uint8Array): Uint8Array[] {
  const got: Uint8Array[] = [];
  for (let at = w.write(rec); at < rec.length; at = w.write(rec, at)) {
    const x = r.read();
    if (x) got.push(x);
  }
  return got;
}

describe('ring: one thread on both ends', () => {
  test('records come out in order, byte for byte, and nothing is there when nothing was written', () => {
    const { w, r } = ring(256);
    assert.equal(r.read(), undefined);
    assert.equal(r.readable(), false);
    for (const n of [1, 2, 3, 4, 5, 17]) assert.equal(w.write(record(n, n)), n);
    for (const n of [1, 2, 3, 4, 5, 17]) assert.deepEqual(r.read(), record(n, n));
    assert.equal(r.read(), undefined);
    assert.equal(w.used(), 0);
  });

  test('wrap-around: fragments whose payload straddles the end of the data come out whole', () => {
    // Sizes that are not multiples of the ring: every alignment of the end comes up. In the larger
    // ring, payloads of 128 bytes and more are copied eight bytes at a time.
    for (const [capacity, most] of [
      [64, 24],
      [1024, 504],
    ] as const) {
      const { w, r } = ring(capacity);
      for (let i = 0; i < 500; i++) {
        const rec = record(i, 1 + ((i * 37) % most));
        assert.equal(w.write(rec), rec.length);
        assert.deepEqual(r.read(), rec, `record ${i} in ${capacity}`);
      }
    }
  });

  test('a payload that does not start 8-byte aligned in its buffer is copied all the same', () => {
    const { w, r } = ring(1024);
    const big = record(5, 400);
    for (const off of [1, 3, 4, 7]) {
      assert.equal(w.write(big.subarray(off)), 400 - off);
      assert.deepEqual(r.read(), big.subarray(off));
    }
  });

  test('a record ending exactly at the end of the data, and a header in its last bytes with the payload from byte 0', () => {
    const { w, r } = ring(64);
    // Fragments take 8 header bytes and their payload padded to 8: 8 + 24 = 32, twice, end at 64.
    assert.equal(w.write(record(1, 24)), 24);
    assert.equal(w.write(record(2, 24)), 24, 'ends exactly at 64');
    assert.equal(w.used(), 64);
    assert.deepEqual(r.read(), record(1, 24));
    assert.deepEqual(r.read(), record(2, 24));
    assert.equal(w.write(record(3, 8)), 8, 'the next starts at 0');
    assert.deepEqual(r.read(), record(3, 8));
    // Now at 16: 8 + 16 = 24 ends at 40, 8 + 8 at 56, and the next one's header fills 56..64, its payload from 0.
    const { w: w2, r: r2 } = ring(64);
    for (const [id, n] of [
      [4, 8],
      [5, 16],
      [6, 8],
    ] as const) {
      assert.equal(w2.write(record(id, n)), n);
      assert.deepEqual(r2.read(), record(id, n));
    }
    assert.equal(w2.write(record(7, 20)), 20, 'header at 56, payload at 0..20');
    assert.deepEqual(r2.read(), record(7, 20));
  });

  test('a record longer than the ring passes in fragments, whole and in order with those around it', () => {
    const { w, r } = ring(64);
    const big = record(9, 1000);
    assert.equal(w.write(record(8, 3)), 3);
    const got = push(w, r, big);
    got.push(...push(w, r, record(10, 5)));
    for (let x = r.read(); x; x = r.read()) got.push(x);
    assert.deepEqual(got, [record(8, 3), big, record(10, 5)]);
  });

  test('a full ring takes nothing more until the reader frees space: the writer is told, nothing is dropped', () => {
    const { w, r } = ring(128);
    let written = 0;
    while (w.write(record(written, 16)) === 16) written++;
    assert.equal(written, 5, '5 fragments of 24 bytes fit in 128');
    assert.equal(w.used(), 120);
    assert.equal(w.write(record(99, 1)), 0, 'refused, not cut');
    assert.deepEqual(r.read(), record(0, 16));
    assert.equal(w.write(record(written, 16)), 16, 'room again');
    for (let i = 1; i <= written; i++) assert.deepEqual(r.read(), record(i, 16));
    assert.equal(r.read(), undefined);
  });

  test('the byte counts wrap at 2^31 and at 2^32', () => {
    for (const origin of [0x7fff_ffc0, -64]) {
      const { w, r } = ring(64, origin);
      for (let i = 0; i < 40; i++) {
        const got = push(w, r, record(i, 1 + (i % 50)));
        for (let x = r.read(); x; x = r.read()) got.push(x);
        assert.deepEqual(got, [record(i, 1 + (i % 50))], `origin ${origin}, record ${i}`);
      }
    }
  });

  test('an empty record and a capacity that is not a power of two are refused', () => {
    const { w } = ring(64);
    assert.throws(() => w.write(new Uint8Array(0)), RangeError);
    assert.throws(() => createRing(100), RangeError);
    assert.throws(() => createRing(32), RangeError);
  });
});

describe('ring: across threads', () => {
  for (const batched of [false, true]) {
    test(
      `many records, some longer than the ring, through a worker and back: in order, byte for byte, with both rings full at times${batched ? '; written without waking, each side woken once before the other waits' : ''}`,
      { timeout: 60_000 },
      async () => {
        const input = createRing(256);
        const output = createRing(256);
        const worker = new Worker(workerEntry(import.meta.url, 'fixtures/ring-echo'), { workerData: { input, output, batched } });
        try {
          const w = new RingProducer(input);
          const r = new RingConsumer(output);
          const rng = Rng.fromSeed(7);
          const sent = Array.from({ length: 3000 }, (_, i) => record(i, i % 100 === 0 ? rng.int(200, 2000) : rng.int(1, 120)));
          const got: Uint8Array[] = [];
          let next = 0;
          let at = 0;
          let fullWaits = 0;
          while (got.length < sent.length) {
            // Write what fits; when the ring is full, wait for the worker to make room or send something back.
            while (next < sent.length) {
              at = w.write(sent[next]!, at, !batched);
              if (at < sent[next]!.length) break;
              next++;
              at = 0;
            }
            let came = false;
            for (let x = r.read(); x; x = r.read()) {
              got.push(x);
              came = true;
            }
            if (!came && got.length < sent.length) {
              fullWaits++;
              if (batched) w.notify();
              await Promise.race([r.waitForDataAsync(), next < sent.length ? w.waitForSpaceAsync() : new Promise(() => undefined)]);
            }
          }
          assert.equal(got.length, sent.length);
          for (let i = 0; i < sent.length; i++) assert.deepEqual(got[i], sent[i], `record ${i}`);
          assert.ok(fullWaits > 0, 'the writer had to wait at least once');
        } finally {
          await worker.terminate();
        }
      },
    );
  }
});

describe('spinning before a blocking wait', () => {
  test('spins that go to waste make the next waits skip spinning, 1, 2, 4... in a row; a spin that pays spins fully again', () => {
    const spin = new SpinPolicy(20);
    let looks = 0;
    let answer = false;
    const ready = (): boolean => {
      looks++;
      return answer;
    };
    /** How many times one wait looked at `ready`: 1 is no spin at all. */
    const wait = (): number => {
      looks = 0;
      spin.spin(ready);
      return looks;
    };
    assert.ok(wait() > 1, 'spins');
    assert.equal(wait(), 1, 'skips once');
    assert.ok(wait() > 1, 'spins');
    assert.deepEqual([wait(), wait()], [1, 1], 'skips twice');
    assert.ok(wait() > 1, 'spins');
    assert.deepEqual([wait(), wait(), wait(), wait()], [1, 1, 1, 1], 'skips four times');
    // A spin that ends with what it waited for.
    let n = 0;
    assert.equal(
      spin.spin(() => ++n > 3),
      true,
    );
    assert.ok(wait() > 1, 'spins');
    assert.equal(wait(), 1, 'back to skipping once');
    answer = true;
    assert.equal(wait(), 1, 'ready at once: no spin');
  });

  test('a budget of 0 never spins', () => {
    let looks = 0;
    assert.equal(
      new SpinPolicy(0).spin(() => (looks++, false)),
      false,
    );
    assert.equal(looks, 1);
  });
});
