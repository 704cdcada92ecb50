import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FrontendError } from '../../src/core/errors.js';
import { cpuBackend } from '../../src/sensing/energy.js';
import { HEADER_BYTES, RING_MAGIC, RingOffsets as Off } from '../../radio/sora/index.js';
import { buildProducer, ProducerProcess, type ProducerOptions } from '../../radio/sora/producer.js';
import { SampleRing, type RingRead } from '../../radio/sora/ring.js';

const built = buildProducer();
const noProducer = built.ok ? false : `the ring producer cannot be built here: ${built.reason}`;
const exe = built.ok ? built.exe : '';

const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'cogmesh-sora-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const ringPath = (): string => join(dir, `ring${serial++}`);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs `body` with a producer on a fresh ring, stopping it afterwards whatever happens. */
async function withProducer<T>(opts: Omit<ProducerOptions, 'ring'>, body: (p: ProducerProcess, path: string) => Promise<T>): Promise<T> {
  const path = ringPath();
  const p = await ProducerProcess.start(exe, { ring: path, ...opts });
  try {
    return await body(p, path);
  } finally {
    await p.stop();
  }
}

/** Sample index a counter-mode cf32 sample encodes (I: low 24 bits, Q: the next 24). */
const counterAt = (d: Float32Array, k: number): number => d[2 * k]! + d[2 * k + 1]! * 16777216;

/** The first sample of `d` (count samples) that does not carry index `first + k`, or -1. */
function firstMismatch(d: Float32Array, count: number, first: number): number {
  for (let k = 0; k < count; k++) if (counterAt(d, k) !== first + k) return k;
  return -1;
}

/** Waits until `count` samples are read into `dst` (polling every ms), up to `ms`. */
async function readBlock(ring: SampleRing, dst: Float32Array | Int16Array, count: number, ms = 2000): Promise<RingRead> {
  const deadline = performance.now() + ms;
  for (;;) {
    const r = ring.readInto(dst, count);
    if (r.count === count) return r;
    assert.ok(performance.now() < deadline, `no ${count} samples within ${ms} ms (available ${ring.available()})`);
    await sleep(1);
  }
}

/** A ring file written from here: a header with the given overrides, `capacity` slots of zeros. */
function writeRingFile(path: string, capacity: number, patch: (h: DataView) => void = () => {}): void {
  const bytes = new Uint8Array(HEADER_BYTES + capacity * 8);
  const h = new DataView(bytes.buffer);
  h.setBigUint64(Off.magic, RING_MAGIC, true);
  h.setUint32(Off.version, 1, true);
  h.setUint32(Off.format, 1, true);
  h.setFloat64(Off.sampleRateHz, 1e6, true);
  h.setBigUint64(Off.capacity, BigInt(capacity), true);
  h.setBigUint64(Off.centerHz, 2_412_000_000n, true);
  h.setBigUint64(Off.tuneMaxHz, 6_000_000_000n, true);
  patch(h);
  writeFileSync(path, bytes);
}

/** Rounding to nearest, ties to even, as the producer's lrintf. */
function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  return d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
}

const isCode = (code: string) => (e: unknown) => e instanceof FrontendError && e.code === code;

test('a missing ring file is RADIO_NO_DEVICE naming the path, with either access', async () => {
  const path = join(dir, 'absent');
  for (const access of ['auto', 'fs'] as const) {
    await assert.rejects(SampleRing.open(path, { access }), (e: unknown) => isCode('RADIO_NO_DEVICE')(e) && (e as Error).message.includes(path));
  }
});

test('bad magic, version, capacity or size is RADIO_BAD_RING', async () => {
  const cases: [string, (h: DataView) => void, RegExp][] = [
    ['magic', (h) => h.setBigUint64(Off.magic, 0x1234n, true), /bad magic/],
    ['version', (h) => h.setUint32(Off.version, 2, true), /layout version 2/],
    ['capacity', (h) => h.setBigUint64(Off.capacity, 100n, true), /power of two/],
    ['size', (h) => h.setBigUint64(Off.capacity, 1024n, true), /needs/],
  ];
  for (const [name, patch, message] of cases) {
    const path = join(dir, `bad-${name}`);
    writeRingFile(path, 64, patch);
    for (const access of ['auto', 'fs'] as const) {
      await assert.rejects(
        SampleRing.open(path, { access }),
        (e: unknown) => isCode('RADIO_BAD_RING')(e) && message.test((e as Error).message),
        `${name} (${access})`,
      );
    }
  }
  const short = join(dir, 'short');
  writeFileSync(short, new Uint8Array(100));
  await assert.rejects(SampleRing.open(short), isCode('RADIO_BAD_RING'));
});

test('without koffi the ring is read through fs, and info says samples are copied', async () => {
  const path = join(dir, 'static');
  writeRingFile(path, 64, (h) => {
    h.setBigUint64(Off.writeIndex, 10n, true);
    h.setBigUint64(Off.claimIndex, 10n, true);
    for (let k = 0; k < 10; k++) h.setFloat32(HEADER_BYTES + 8 * k, k, true);
  });
  const ring = await SampleRing.open(path, { start: 'oldest', importKoffi: () => Promise.reject(new Error('Cannot find package koffi')) });
  try {
    assert.equal(ring.info.access, 'fs');
    assert.equal(ring.info.wordAccess, 'pread');
    assert.match(ring.info.accessNote, /koffi unavailable.*copied/);
    assert.equal(ring.buffer, undefined);
    assert.equal(ring.peek(4), undefined, 'no zero-copy view without a mapping');
    const dst = new Float32Array(20);
    const r = ring.readInto(dst, 10);
    assert.deepEqual(r, { count: 10, index: 0, dropped: 0 });
    assert.deepEqual([...dst.filter((_, i) => i % 2 === 0)], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(ring.readInto(dst, 1).count, 0, 'nothing more to read');
  } finally {
    ring.close();
  }
  await assert.rejects(SampleRing.open(path, { access: 'mmap', importKoffi: () => Promise.reject(new Error('no koffi')) }), isCode('RADIO_NO_MMAP'));
});

test('the mapping is read in place: a peek is a view whose buffer is the mapping, and readInto of that view copies nothing', async () => {
  const path = join(dir, 'peek');
  writeRingFile(path, 64, (h) => {
    h.setBigUint64(Off.writeIndex, 40n, true);
    h.setBigUint64(Off.claimIndex, 40n, true);
    for (let k = 0; k < 40; k++) h.setFloat32(HEADER_BYTES + 8 * k, k, true);
  });
  const ring = await SampleRing.open(path, { start: 'oldest' });
  try {
    assert.equal(ring.info.access, 'mmap', ring.info.accessNote);
    assert.equal(ring.info.wordAccess, 'atomics');
    const p = ring.peek(16);
    assert.ok(p !== undefined && p.format === 'cf32', 'a peek of ready samples');
    assert.equal(p.data.buffer, ring.buffer, 'the view is over the mapping');
    assert.equal(p.data.byteOffset, HEADER_BYTES);
    assert.equal(p.data[2 * 5], 5);
    // The same memory as the file: a store through the view is seen by a new reader of the file.
    const other = await SampleRing.open(path, { start: 'oldest', access: 'fs' });
    p.data[1] = 42;
    const copy = new Float32Array(2);
    assert.equal(other.readInto(copy, 1).count, 1, 'fs reader reads one sample');
    assert.equal(copy[1], 42, 'the view is the file, not a copy of it');
    other.close();
    assert.deepEqual(ring.readInto(p.data, 16), { count: 16, index: 0, dropped: 0 });
    assert.equal(ring.readIndex, 16);
    assert.throws(() => ring.readInto(p.data, 16), /outside the ring, or the peek/, 'a stale view is refused');
    const p2 = ring.peek(16);
    assert.ok(p2 !== undefined, 'second peek');
    assert.equal(ring.commit(p2), true);
    assert.equal(ring.peek(16), undefined, '8 samples left: not enough');
    assert.equal(ring.available(), 8);
  } finally {
    ring.close();
  }
});

test('counter mode at 10 Msps read continuously for 3 s: no sample lost or duplicated', { skip: noProducer }, async (t) => {
  await withProducer({ source: 'counter', rateHz: 10e6, capacity: 1 << 22 }, async (_p, path) => {
    const ring = await SampleRing.open(path);
    try {
      const block = 1 << 15;
      const dst = new Float32Array(2 * block);
      let next = -1;
      let delivered = 0;
      let busyMs = 0;
      const t0 = performance.now();
      while (performance.now() - t0 < 3000) {
        const c0 = performance.now();
        const r = ring.readInto(dst, block);
        if (r.count === 0) {
          await sleep(1);
          continue;
        }
        busyMs += performance.now() - c0;
        assert.equal(r.dropped, 0, `no overrun (block at ${r.index})`);
        if (next >= 0) assert.equal(r.index, next, 'blocks follow each other');
        const bad = firstMismatch(dst, block, r.index);
        assert.equal(bad, -1, `sample ${r.index + bad} carries ${counterAt(dst, bad)}`);
        next = r.index + block;
        delivered += block;
      }
      const seconds = (performance.now() - t0) / 1e3;
      assert.ok(delivered > 0.8 * 10e6 * seconds, `${delivered} samples in ${seconds.toFixed(2)} s keeps up with 10 Msps`);
      assert.equal(ring.stats.dropped, 0);
      assert.equal(ring.stats.tornReads, 0);
      assert.equal(ring.producerOverruns(), 0, 'the producer saw no overrun either');
      t.diagnostic(
        `delivered ${delivered} samples in ${seconds.toFixed(2)} s, 0 lost, 0 duplicated; readInto copied at ${(delivered / busyMs / 1e3).toFixed(0)} Msps`,
      );
    } finally {
      ring.close();
    }
  });
});

test('a slow reader is lapped: overruns are counted exactly and reading resumes at valid data', { skip: noProducer }, async (t) => {
  const capacity = 1 << 16;
  await withProducer({ source: 'counter', rateHz: 1e6, capacity }, async (_p, path) => {
    const ring = await SampleRing.open(path);
    try {
      const block = 4096;
      const dst = new Float32Array(2 * block);
      const first = await readBlock(ring, dst, block);
      let end = first.index + block;
      let dropped = 0;
      for (let i = 0; i < 4; i++) {
        await sleep(120); // 120 000 samples at 1 Msps, the ring holds 65 536
        const r = await readBlock(ring, dst, block);
        assert.ok(r.dropped > 120_000 - capacity - 20_000, `overrun counted after a 120 ms stall: ${r.dropped}`);
        assert.equal(r.index, end + r.dropped, 'the block starts exactly the lost count after the previous one');
        const bad = firstMismatch(dst, block, r.index);
        assert.equal(bad, -1, `valid data after the overrun (sample ${r.index + bad} carries ${counterAt(dst, bad)})`);
        dropped += r.dropped;
        end = r.index + block;
      }
      assert.equal(ring.stats.dropped, dropped);
      assert.equal(ring.stats.delivered + ring.stats.dropped, end - first.index, 'every sample is either delivered or counted lost');
      const producerCount = ring.producerOverruns();
      assert.ok(producerCount >= dropped - 4 * block && producerCount <= dropped + capacity, `producer's count ${producerCount} agrees with ${dropped}`);
      t.diagnostic(`lost ${dropped} samples over 4 stalls (consumer, exact); producer counted ${producerCount}; torn copies redone: ${ring.stats.tornReads}`);
    } finally {
      ring.close();
    }
  });
});

test('a peek overwritten by the producer is refused at commit, and the next read counts the loss', { skip: noProducer }, async () => {
  // 100k samples/s laps the 4096-slot ring every 41 ms: the peeked sample is still the one peeked when it is
  // first read (at 1M/s a 4 ms stall of a loaded CI machine was enough to see it overwritten already).
  await withProducer({ source: 'counter', rateHz: 1e5, capacity: 1 << 12 }, async (_p, path) => {
    const ring = await SampleRing.open(path);
    try {
      const dst = new Float32Array(2 * 256);
      const deadline = performance.now() + 2000;
      let p = ring.peek(256);
      while (p === undefined) {
        assert.ok(performance.now() < deadline, 'a peek within 2 s');
        await sleep(1);
        p = ring.peek(256);
      }
      assert.ok(p.format === 'cf32', 'cf32 peek');
      const index = p.index;
      assert.equal(counterAt(p.data, 0), index);
      while (ring.writeIndex() < index + 2 * 4096) await sleep(2); // the 4096-slot ring is lapped
      // The producer keeps rewriting the slot (every 41 ms here): a read that lands in the middle
      // of a write can see a torn sample, so read until a whole one shows.
      let seen = counterAt(p.data, 0);
      for (let i = 0; i < 100 && (seen - index) % 4096 !== 0; i++) {
        await sleep(1);
        seen = counterAt(p.data, 0);
      }
      assert.notEqual(seen, index, 'the view is live memory: the producer wrote over it');
      assert.equal((seen - index) % 4096, 0, `a sample one or more laps later (saw ${seen}, peeked ${index})`);
      assert.ok(ring.producerOverruns() > 0, 'the producer counted the overrun too');
      assert.equal(ring.commit(p), false, 'the peek was overwritten');
      assert.equal(ring.readIndex, index, 'nothing consumed');
      const r = await readBlock(ring, dst, 256);
      assert.ok(r.dropped > 0, 'loss reported');
      assert.equal(r.index, index + r.dropped - p.dropped, 'resumes exactly the lost count after the refused peek');
      assert.equal(firstMismatch(dst, 256, r.index), -1, 'valid data');
    } finally {
      ring.close();
    }
  });
});

test('ci16 rings: raw Int16 reads and scaled float reads of the counter', { skip: noProducer }, async () => {
  await withProducer({ source: 'counter', format: 'ci16', rateHz: 1e6, capacity: 1 << 14 }, async (_p, path) => {
    const ring = await SampleRing.open(path);
    try {
      assert.equal(ring.info.format, 'ci16');
      assert.equal(ring.info.sampleBytes, 4);
      const raw = new Int16Array(2 * 1000);
      const a = await readBlock(ring, raw, 1000);
      for (let k = 0; k < 1000; k++) {
        const idx = (raw[2 * k]! & 0xffff) + (raw[2 * k + 1]! & 0xffff) * 65536;
        assert.equal(idx, a.index + k, `raw sample ${k}`);
      }
      const f = new Float32Array(2 * 1000);
      const b = await readBlock(ring, f, 1000);
      assert.equal(b.index, a.index + 1000);
      assert.equal(Math.round(f[0]! * 32768) & 0xffff, b.index & 0xffff, 'scaled by 1/32768');
    } finally {
      ring.close();
    }
  });
});

test('file source: a cf32 file comes out sample for sample, and as ci16 rounded to 1/32768', { skip: noProducer }, async () => {
  const n = 5000;
  const iq = new Float32Array(2 * n);
  for (let i = 0; i < iq.length; i++) iq[i] = Math.sin(i * 0.37) * 0.9;
  const file = join(dir, 'capture.sigmf-data');
  writeFileSync(file, new Uint8Array(iq.buffer));
  for (const format of ['cf32', 'ci16'] as const) {
    const path = ringPath();
    const p = await ProducerProcess.start(exe, { ring: path, source: 'file', file, format, fast: true, capacity: 1 << 13 });
    await p.wait();
    assert.equal(p.exitStatus?.code, 0, p.errors);
    const ring = await SampleRing.open(path, { start: 'oldest' });
    try {
      assert.equal(ring.producerState(), 'stopped');
      assert.equal(ring.writeIndex(), n, 'the producer stops at the end of the file');
      const out = new Float32Array(2 * n);
      assert.equal(ring.readInto(out, n).count, n);
      if (format === 'cf32') assert.deepEqual(out, iq);
      else for (let i = 0; i < iq.length; i++) assert.equal(out[i], roundHalfEven(iq[i]! * 32768) / 32768, `ci16 sample ${i}`);
    } finally {
      ring.close();
    }
  }
});

test('consumer throughput: copies, in-place peeks, fs reads, and the energy detector on each', { skip: noProducer }, async (t) => {
  const capacity = 1 << 22;
  const path = ringPath();
  const p = await ProducerProcess.start(exe, { ring: path, source: 'counter', fast: true, capacity, samples: capacity });
  await p.wait();
  const block = 1 << 16;
  const windowSamples = 40;
  type Mode = { access: 'auto' | 'fs'; inPlace: boolean; detect: boolean };
  /** Complex Msps of passes over the whole ring: the first (a fresh mapping) and the best of three more. */
  const measure = async (m: Mode): Promise<{ cold: number; warm: number }> => {
    const ring = await SampleRing.open(path, { start: 'oldest', access: m.access });
    const dst = new Float32Array(2 * block);
    const times: number[] = [];
    let busy = 0;
    try {
      for (let pass = 0; pass < 4; pass++) {
        assert.equal(ring.seek(0), 0, 'replay from the first sample');
        const t0 = performance.now();
        for (let done = 0; done < capacity; done += block) {
          if (m.inPlace) {
            const pk = ring.peek(block);
            assert.ok(pk !== undefined && pk.format === 'cf32', 'in-place block');
            if (m.detect) busy += cpuBackend.detect(pk.data, block, windowSamples, Infinity).busyWindows;
            assert.ok(ring.commit(pk), 'intact');
          } else {
            assert.equal(ring.readInto(dst, block).count, block);
            if (m.detect) busy += cpuBackend.detect(dst, block, windowSamples, Infinity).busyWindows;
          }
        }
        times.push(performance.now() - t0);
        if (!m.inPlace) assert.equal(firstMismatch(dst, block, capacity - block), -1, 'last block read right');
      }
    } finally {
      ring.close();
    }
    assert.equal(busy, 0, 'the counter never exceeds the threshold');
    const rate = (ms: number): number => capacity / ms / 1e3;
    return { cold: rate(times[0]!), warm: rate(Math.min(...times.slice(1))) };
  };
  const f = (m: { cold: number; warm: number }): string => `${m.warm.toFixed(0)} Msps (first pass over a fresh mapping ${m.cold.toFixed(0)})`;
  const copy = await measure({ access: 'auto', inPlace: false, detect: false });
  const peek = await measure({ access: 'auto', inPlace: true, detect: false });
  const fsCopy = await measure({ access: 'fs', inPlace: false, detect: false });
  const copyDetect = await measure({ access: 'auto', inPlace: false, detect: true });
  const peekDetect = await measure({ access: 'auto', inPlace: true, detect: true });
  t.diagnostic(`readInto (mmap, copy): ${f(copy)}`);
  t.diagnostic(`peek+commit (zero-copy, samples untouched): ${f(peek)}`);
  t.diagnostic(`readInto (fs fallback, read(2)): ${f(fsCopy)}`);
  t.diagnostic(`readInto + energy detector (cpu): ${f(copyDetect)}`);
  t.diagnostic(`peek + energy detector (cpu) + commit: ${f(peekDetect)}`);
  assert.ok(copy.warm > 10 && peekDetect.warm > 10 && fsCopy.warm > 1, 'well above the rates a SORA board delivers (40 Msps is the top)');
});
