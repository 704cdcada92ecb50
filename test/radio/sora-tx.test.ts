/**
 * The SORA-like front-end's transmit direction against the real C consumer
 * (native/sora-ring/consumer.c) standing in for the board: bursts the node
 * writes into the TX ring come out of the consumer byte for byte, with the
 * time they were asked for, in order, whatever their length against the
 * ring's.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FrontendError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { SoraFrontend } from '../../radio/sora/index.js';
import { buildProducer, RingProcess, type ConsumerOptions } from '../../radio/sora/producer.js';

const built = buildProducer();
const skip = built.ok ? false : `the ring programs cannot be built here: ${built.reason}`;
const producerExe = built.ok ? built.exe : '';
const consumerExe = built.ok ? built.consumer : '';

const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'cogmesh-sora-tx-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;

const isCode = (code: string) => (e: unknown) => e instanceof FrontendError && e.code === code;

interface Rig {
  fe: SoraFrontend;
  consumer: RingProcess;
  out: string;
}

/** A producer on `<ring>`, a consumer on `<ring>.tx` and a front-end over both; all closed afterwards. */
async function withTx(
  opts: Partial<Omit<ConsumerOptions, 'ring' | 'out'>>,
  body: (r: Rig) => Promise<void>,
  fe: { txTimeoutMs?: number; access?: 'fs' | 'mmap' } = {},
): Promise<void> {
  const path = join(dir, `ring${serial++}`);
  const out = `${path}.out`;
  const producer = await RingProcess.start(producerExe, { ring: path, source: 'counter', rateHz: 1e6, capacity: 1 << 16 });
  try {
    const consumer = await RingProcess.startConsumer(consumerExe, { ring: `${path}.tx`, out, rateHz: 1e6, capacity: 1024, ...opts });
    try {
      const radio = await SoraFrontend.open({ path, ...fe });
      try {
        await body({ fe: radio, consumer, out });
      } finally {
        await radio.close();
      }
    } finally {
      await consumer.stop();
    }
  } finally {
    await producer.stop();
  }
}

interface OutBurst {
  seq: number;
  /** undefined: not timed. */
  atUs: number | undefined;
  startUs: number;
  samples: Float32Array;
}

/** The consumer's output file: per burst, seq, at_us, start_us, count, then the cf32 samples. */
function readOut(path: string): OutBurst[] {
  const buf = readFileSync(path);
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const bursts: OutBurst[] = [];
  for (let at = 0; at < buf.length;) {
    const seq = Number(v.getBigUint64(at, true));
    const timed = v.getBigUint64(at + 8, true);
    const startUs = Number(v.getBigUint64(at + 16, true));
    const count = Number(v.getBigUint64(at + 24, true));
    at += 32;
    const samples = new Float32Array(buf.buffer.slice(buf.byteOffset + at, buf.byteOffset + at + count * 8));
    at += count * 8;
    bursts.push({ seq, atUs: timed === 0xffffffffffffffffn ? undefined : Number(timed), startUs, samples });
  }
  return bursts;
}

function randomBurst(count: number, seed: number): Float32Array {
  const rng = Rng.fromSeed(seed);
  const data = new Float32Array(2 * count);
  for (let i = 0; i < data.length; i++) data[i] = rng.next() * 2 - 1;
  return data;
}

const nowUs = (): number => Date.now() * 1000;

test('a timed burst arrives byte for byte, with its time, and is reported sent at or after it', { skip }, async () => {
  await withTx({}, async ({ fe, out }) => {
    assert.equal(fe.capabilities.canTransmitIq, true, 'the TX ring next to the receive ring is found');
    const data = randomBurst(700, 1);
    // far enough ahead that a loaded machine still queues it in time (the board drops it as late otherwise)
    const atUs = nowUs() + 200_000;
    const r = await fe.transmitIq({ data, count: 700, atUs });
    assert.equal(r.late, false);
    assert.equal(r.sent, 700);
    assert.ok(r.startUs >= atUs, `started at ${r.startUs}, asked for ${atUs}`);
    assert.equal(r.endUs, r.startUs + 700, '700 samples at 1 MS/s');
    const got = readOut(out);
    assert.equal(got.length, 1);
    assert.equal(got[0]!.seq, 0);
    assert.equal(got[0]!.atUs, atUs, 'the time asked for reaches the board exactly');
    assert.equal(got[0]!.startUs, r.startUs);
    assert.deepEqual(Buffer.from(got[0]!.samples.buffer), Buffer.from(data.buffer), 'byte for byte');
  });
});

test('a burst longer than the ring: the node waits for slots (never drops) and every sample arrives', { skip }, async () => {
  await withTx({ capacity: 256 }, async ({ fe, out }) => {
    const data = randomBurst(10_000, 2);
    const r = await fe.transmitIq({ data, count: 10_000 });
    assert.deepEqual([r.late, r.sent], [false, 10_000]);
    const got = readOut(out);
    assert.equal(got.length, 1);
    assert.equal(got[0]!.atUs, undefined, 'not timed');
    assert.deepEqual(Buffer.from(got[0]!.samples.buffer), Buffer.from(data.buffer));
  });
});

test('without a mapping (read(2) and write(2) access) a burst longer than the ring arrives whole too', { skip }, async () => {
  await withTx(
    { capacity: 128 },
    async ({ fe, out }) => {
      assert.equal(fe.txRing?.info.access, 'fs');
      const data = randomBurst(3000, 9);
      const r = await fe.transmitIq({ data, count: 3000 });
      assert.equal(r.sent, 3000);
      assert.deepEqual(Buffer.from(readOut(out)[0]!.samples.buffer), Buffer.from(data.buffer));
    },
    { access: 'fs' },
  );
});

test('bursts go in the order given; a late one is dropped by the board and reported so', { skip }, async () => {
  await withTx({ lateUs: 1000 }, async ({ fe, out }) => {
    const a = randomBurst(100, 3);
    const b = randomBurst(50, 4);
    const c = randomBurst(300, 5);
    const [ra, rb, rc] = await Promise.all([
      fe.transmitIq({ data: a, count: 100 }),
      fe.transmitIq({ data: b, count: 50, atUs: nowUs() - 100_000 }),
      fe.transmitIq({ data: c, count: 300 }),
    ]);
    assert.deepEqual([ra.late, ra.sent], [false, 100]);
    assert.deepEqual([rb.late, rb.sent], [true, 0]);
    assert.equal(rb.startUs, rb.endUs);
    assert.deepEqual([rc.late, rc.sent], [false, 300]);
    assert.ok(rc.startUs >= ra.startUs, 'in order');
    const got = readOut(out);
    assert.deepEqual(
      got.map((g) => g.seq),
      [0, 2],
      'the late burst is not sent',
    );
    assert.deepEqual(Buffer.from(got[0]!.samples.buffer), Buffer.from(a.buffer));
    assert.deepEqual(Buffer.from(got[1]!.samples.buffer), Buffer.from(c.buffer));
    assert.equal(fe.txRing?.lateBursts(), 1);
  });
});

test('bad bursts are refused; a stopped consumer is RADIO_STREAM_ENDED, not a silent drop', { skip }, async () => {
  await withTx({}, async ({ fe, consumer }) => {
    await assert.rejects(fe.transmitIq({ data: new Float32Array(8), count: 0 }), { code: 'CORE_OUT_OF_RANGE' });
    await assert.rejects(fe.transmitIq({ data: new Float32Array(8), count: 5 }), { code: 'CORE_OUT_OF_RANGE' });
    await assert.rejects(fe.transmitIq({ data: new Float32Array(8), count: 4, atUs: 1.5 }), { code: 'CORE_INVALID_TIME' });
    await consumer.stop();
    await assert.rejects(fe.transmitIq({ data: randomBurst(10, 6), count: 10 }), isCode('RADIO_STREAM_ENDED'));
  });
});

test('a consumer that stalls with the ring full: RADIO_TX_TIMEOUT, then the TX ring is refused', { skip }, async () => {
  await withTx(
    { capacity: 64 },
    async ({ fe, consumer }) => {
      process.kill(consumer.pid!, 'SIGSTOP');
      try {
        const e = await fe.transmitIq({ data: randomBurst(1000, 7), count: 1000 }).then(
          () => assert.fail('expected a timeout'),
          (x: unknown) => x,
        );
        assert.ok(isCode('RADIO_TX_TIMEOUT')(e), String(e));
        assert.match((e as Error).message, /64 of 1000 samples written and the ring full/);
        await assert.rejects(fe.transmitIq({ data: randomBurst(10, 8), count: 10 }), isCode('RADIO_TX_RING_BROKEN'));
      } finally {
        process.kill(consumer.pid!, 'SIGCONT');
      }
    },
    { txTimeoutMs: 200 },
  );
});

test('receive-only without a TX ring; a TX path that is missing, not a TX ring, or at another rate is refused', { skip }, async () => {
  const path = join(dir, `ring${serial++}`);
  const producer = await RingProcess.start(producerExe, { ring: path, source: 'counter', rateHz: 1e6, capacity: 1 << 12 });
  try {
    const fe = await SoraFrontend.open({ path });
    assert.equal(fe.capabilities.canTransmitIq, false);
    await assert.rejects(
      fe.transmitIq({ data: new Float32Array(2), count: 1 }),
      (e: unknown) => isCode('RADIO_CANNOT_TRANSMIT')(e) && (e as Error).message.includes(`${path}.tx`),
    );
    await fe.close();
    await assert.rejects(SoraFrontend.open({ path, txPath: join(dir, 'none.tx') }), isCode('RADIO_NO_DEVICE'));
    await assert.rejects(
      SoraFrontend.open({ path, txPath: path }),
      (e: unknown) => isCode('RADIO_BAD_RING')(e) && /not a SORA TX ring: bad magic/.test((e as Error).message),
    );
    const other = join(dir, `other${serial++}.tx`);
    const consumer = await RingProcess.startConsumer(consumerExe, { ring: other, out: `${other}.out`, rateHz: 2e6 });
    try {
      await assert.rejects(
        SoraFrontend.open({ path, txPath: other }),
        (e: unknown) => isCode('RADIO_BAD_RING')(e) && /2000000 S\/s/.test((e as Error).message),
      );
    } finally {
      await consumer.stop();
    }
    const fe2 = await SoraFrontend.open({ path, txPath: false });
    assert.equal(fe2.capabilities.canTransmitIq, false);
    await fe2.close();
  } finally {
    await producer.stop();
  }
});
