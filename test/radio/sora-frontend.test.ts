import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FrontendError } from '../../src/core/errors.js';
import { cpuBackend } from '../../src/sensing/energy.js';
import { EnergyDetector } from '../../src/sensing/detector.js';
import { HEADER_BYTES, RING_MAGIC, RingOffsets as Off, SoraFrontend } from '../../radio/sora/index.js';
import { buildProducer, ProducerProcess, type ProducerOptions } from '../../radio/sora/producer.js';

const built = buildProducer();
const noProducer = built.ok ? false : `the ring producer cannot be built here: ${built.reason}`;
const exe = built.ok ? built.exe : '';

const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'cogmesh-sora-fe-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const ringPath = (): string => join(dir, `ring${serial++}`);

const isCode = (code: string) => (e: unknown) => e instanceof FrontendError && e.code === code;

/** Runs `body` with a producer and a front-end on a fresh ring, closing both afterwards whatever happens. */
async function withRadio(
  opts: Omit<ProducerOptions, 'ring'>,
  body: (fe: SoraFrontend, p: ProducerProcess) => Promise<void>,
  fe: { readTimeoutMs?: number; tuneTimeoutMs?: number } = {},
): Promise<void> {
  const path = ringPath();
  const p = await ProducerProcess.start(exe, { ring: path, ...opts });
  try {
    const radio = await SoraFrontend.open({ path, ...fe });
    try {
      await body(radio, p);
    } finally {
      await radio.close();
    }
  } finally {
    if (p.exitStatus === undefined) process.kill(p.pid!, 'SIGCONT'); // in case a test left it stopped
    await p.stop();
  }
}

test('opening: RADIO_NO_DEVICE names the missing path, RADIO_BAD_RING a file with a bad magic or version', async () => {
  const missing = join(dir, 'no-such-ring');
  await assert.rejects(SoraFrontend.open({ path: missing }), (e: unknown) => isCode('RADIO_NO_DEVICE')(e) && (e as Error).message.includes(missing));
  const bytes = new Uint8Array(HEADER_BYTES + 64 * 8);
  const h = new DataView(bytes.buffer);
  const bad = join(dir, 'bad');
  writeFileSync(bad, bytes);
  await assert.rejects(SoraFrontend.open({ path: bad }), (e: unknown) => isCode('RADIO_BAD_RING')(e) && /bad magic/.test((e as Error).message));
  h.setBigUint64(Off.magic, RING_MAGIC, true);
  h.setUint32(Off.version, 7, true);
  writeFileSync(bad, bytes);
  await assert.rejects(SoraFrontend.open({ path: bad }), (e: unknown) => isCode('RADIO_BAD_RING')(e) && /version 7/.test((e as Error).message));
});

test('capabilities come from the ring header; gain is fixed, nothing is sent', { skip: noProducer }, async () => {
  await withRadio({ source: 'counter', rateHz: 2e6, tuneRangeHz: [2.4e9, 2.5e9], centerHz: 2.412e9, retuneUs: 500, fullScaleDbm: -12 }, async (fe) => {
    assert.equal(fe.kind, 'sora');
    assert.match(fe.id, /ring\d+$/);
    assert.deepEqual(fe.capabilities, {
      sampleRateHz: 2e6,
      tuneRangeHz: [2.4e9, 2.5e9],
      gainRangeDb: [0, 0],
      retuneUs: 500,
      canTransmit: false,
      canTransmitIq: false,
    });
    assert.equal(fe.centerHz, 2.412e9);
    assert.equal(fe.calibrationDb(), -12);
    await fe.setGain(0);
    await assert.rejects(fe.setGain(10), isCode('RADIO_GAIN_RANGE'));
    await assert.rejects(fe.send(new Uint8Array(4)), isCode('RADIO_CANNOT_TRANSMIT'));
    await assert.rejects(fe.tune(2.6e9), isCode('RADIO_TUNE_RANGE'));
    const b = await fe.readIq(1000);
    assert.equal(b.count, 1000);
    assert.equal(b.centerHz, 2.412e9);
    assert.equal(b.calibrationDb, -12);
    assert.equal(b.sampleRateHz, 2e6);
    // startUs from the sample index: the counter carries the index.
    const index = b.data[0]! + b.data[1]! * 16777216;
    assert.equal(b.startUs, fe.ring.info.startTimeUs + Math.floor(index / 2));
    const next = await fe.readIq(1000, new Float32Array(2000));
    assert.equal(next.startUs, b.startUs + 500, 'contiguous blocks, 1000 samples = 500 us apart');
    assert.equal(next.droppedSamples, 0);
  });
});

test('tune: the producer serves the request, the retune time is measured, and samples resume at the new centre', { skip: noProducer }, async (t) => {
  await withRadio({ source: 'counter', rateHz: 1e6, retuneUs: 2000, centerHz: 2.412e9 }, async (fe) => {
    await fe.readIq(100);
    const before = fe.ring.tuneState();
    const requestedAt = fe.ring.writeIndex();
    const r = await fe.tune(2.437e9);
    assert.equal(r.centerHz, 2.437e9);
    // The producer is deaf for 2000 us of samples' time (2000 samples at 1 MHz) after it takes the request. In wall time the
    // retune may take less: the producer paces its samples on one timeline from its start, and after a stall it catches up.
    assert.ok(r.retuneUs > 0 && r.retuneUs < 1_000_000, `retune time measured: ${r.retuneUs} us`);
    assert.equal(fe.lastRetuneUs, r.retuneUs);
    assert.equal(fe.centerHz, 2.437e9);
    const after = fe.ring.tuneState();
    assert.ok(after.settled && before.settled, 'settled before and after');
    assert.ok(after.tuneIndex - requestedAt >= 2000, `the new centre from sample ${after.tuneIndex}, the producer's 2000 deaf samples after ${requestedAt}`);
    assert.equal(after.generation, before.generation + 2n, 'one retune: odd while deaf, even after');
    const b = await fe.readIq(500);
    assert.equal(b.centerHz, 2.437e9);
    const index = b.data[0]! + b.data[1]! * 16777216;
    assert.ok(index >= after.tuneIndex, `first sample ${index} is at or after the retune's end ${after.tuneIndex}`);
    assert.ok(fe.ring.stats.discardedForRetune >= 2000, 'the deaf samples were skipped');
    assert.equal(b.droppedSamples, 0, 'skipping deaf samples is not an overrun');
    // Out of the producer's range: it refuses (the front-end checks first, so ask the ring directly).
    const seq = fe.ring.requestTune(7e9);
    const deadline = performance.now() + 2000;
    while (fe.ring.tuneAck().seq < seq) {
      assert.ok(performance.now() < deadline, 'the producer answers within 2 s');
      await new Promise((res) => setTimeout(res, 1));
    }
    assert.equal(fe.ring.tuneAck().refused, true);
    assert.equal(fe.centerHz, 2.437e9, 'a refused request changes nothing');
    t.diagnostic(`retune served in ${r.retuneUs} us (producer's deaf time 2000 us)`);
  });
});

test('a tune cuts short a read in progress (RADIO_RETUNED)', { skip: noProducer }, async () => {
  await withRadio({ source: 'counter', rateHz: 1e6, retuneUs: 100 }, async (fe) => {
    const long = fe.readIq(500_000); // half a second
    const tuned = fe.tune(2.462e9);
    await assert.rejects(long, isCode('RADIO_RETUNED'));
    assert.equal((await tuned).centerHz, 2.462e9);
    assert.equal((await fe.readIq(10)).centerHz, 2.462e9);
  });
});

test('timeouts: a stalled producer gives RADIO_READ_TIMEOUT and RADIO_TUNE_TIMEOUT; a stopped one RADIO_STREAM_ENDED', { skip: noProducer }, async () => {
  await withRadio(
    { source: 'counter', rateHz: 1e6 },
    async (fe, p) => {
      await fe.readIq(100);
      process.kill(p.pid!, 'SIGSTOP');
      try {
        const t0 = performance.now();
        await assert.rejects(fe.readIq(100_000), (e: unknown) => isCode('RADIO_READ_TIMEOUT')(e) && /heartbeat/.test((e as Error).message));
        const waited = performance.now() - t0;
        assert.ok(waited >= 150 && waited < 1500, `waited the timeout plus the block's duration, not forever: ${waited.toFixed(0)} ms`);
        await assert.rejects(fe.tune(2.437e9), isCode('RADIO_TUNE_TIMEOUT'));
      } finally {
        process.kill(p.pid!, 'SIGCONT');
      }
      await p.stop();
      assert.equal(fe.ring.producerState(), 'stopped');
      await assert.rejects(fe.readIq(fe.ring.available() + 1000), isCode('RADIO_STREAM_ENDED'));
    },
    { readTimeoutMs: 50, tuneTimeoutMs: 100 },
  );
});

test('the energy detector on in-place blocks of a synthetic 30%-busy band finds w near 0.3', { skip: noProducer }, async (t) => {
  const capacity = 1 << 22;
  const path = ringPath();
  // The whole stream fits in the ring: written as fast as possible, then read from its first sample.
  const p = await ProducerProcess.start(exe, {
    ring: path,
    source: 'noise',
    rateHz: 4e6,
    capacity,
    samples: capacity,
    fast: true,
    noiseDbfs: -40,
    burstDbfs: -10,
    busy: 0.3,
    burstUs: 250,
    seed: 7,
    fullScaleDbm: -10,
  });
  await p.wait();
  assert.equal(p.exitStatus?.code, 0, p.errors);
  const fe = await SoraFrontend.open({ path, start: 'oldest' });
  try {
    const detector = new EnergyDetector({ windowUs: 10, ccaThresholdDbm: -35 }, cpuBackend);
    let windows = 0;
    let busy = 0;
    let zeroCopy = 0;
    const block = 1 << 16;
    for (let done = 0; done < capacity; done += block) {
      const got = await fe.readIqInPlace(block);
      const d = detector.detect(got.block);
      if (done === 0 && got.zeroCopy) {
        // The read position moves at commit: reading again before it would hand out the same samples.
        await assert.rejects(fe.readIq(16), (e: Error & { code?: string }) => e.code === 'RADIO_PEEK_PENDING');
      }
      assert.equal(got.commit(), true, 'the producer is done: nothing overwrites the block');
      if (got.zeroCopy) {
        assert.equal(got.block.data.buffer, fe.ring.buffer, 'a zero-copy block is a view of the mapping');
        zeroCopy++;
      }
      windows += d.windows;
      busy += d.busyWindows;
    }
    const w = busy / windows;
    assert.equal(zeroCopy, capacity / block, 'every block read in place');
    assert.ok(Math.abs(w - 0.3) < 0.04, `w = ${w.toFixed(4)} near the producer's busy fraction 0.3`);
    t.diagnostic(`w = ${w.toFixed(4)} over ${windows} windows of 10 us (busy fraction 0.3, mean burst 250 us)`);
  } finally {
    await fe.close();
  }
});

test('the same detector on a live real-time stream', { skip: noProducer }, async (t) => {
  await withRadio({ source: 'noise', rateHz: 2e6, busy: 0.5, burstUs: 200, noiseDbfs: -40, burstDbfs: -10, seed: 3 }, async (fe) => {
    const detector = new EnergyDetector({ windowUs: 10, ccaThresholdDbm: -35 }, cpuBackend);
    let windows = 0;
    let busy = 0;
    let dropped = 0;
    const into = new Float32Array(2 * 20_000);
    for (let i = 0; i < 50; i++) {
      const b = await fe.readIq(20_000, into); // 10 ms each, half a second in all
      dropped += b.droppedSamples;
      const d = detector.detect(b);
      windows += d.windows;
      busy += d.busyWindows;
    }
    const w = busy / windows;
    assert.equal(dropped, 0, 'a reader keeping up loses nothing');
    assert.ok(Math.abs(w - 0.5) < 0.1, `w = ${w.toFixed(3)} near 0.5`);
    t.diagnostic(`live: w = ${w.toFixed(3)} over ${windows} windows, 0 dropped`);
  });
});

test('close refuses waiting reads and later calls with RADIO_CLOSED', { skip: noProducer }, async () => {
  const path = ringPath();
  const p = await ProducerProcess.start(exe, { ring: path, source: 'counter', rateHz: 1e6 });
  try {
    const fe = await SoraFrontend.open({ path });
    const waiting = fe.readIq(1_000_000);
    await fe.close();
    await assert.rejects(waiting, isCode('RADIO_CLOSED'));
    await assert.rejects(fe.readIq(10), isCode('RADIO_CLOSED'));
    await assert.rejects(fe.tune(2.437e9), isCode('RADIO_CLOSED'));
    assert.equal(fe.centerHz, undefined);
  } finally {
    await p.stop();
  }
});
