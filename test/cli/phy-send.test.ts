import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DsssReceiver } from '../../radio/phy/dsss/receiver.js';
import { buildProducer, RingProcess } from '../../radio/sora/producer.js';
import { testFrame } from '../../src/cli/phy-frames.js';
import { cogmesh } from '../support/cli.js';

/**
 * `cogmesh phy send`: test frames through a radio that transmits. Through a
 * SORA-like TX ring, the real C consumer standing in for the board takes the
 * bursts, and each decodes back to its frame; through UHD, the real libuhd
 * gets as far as it goes without a device.
 */

const built = buildProducer();
const skip = built.ok ? false : `the ring programs cannot be built here: ${built.reason}`;
const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'cogmesh-phy-send-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The consumer's output: per burst, four u64 (index, time asked or all ones, time sent, count), then count cf32 samples. */
function bursts(file: string): Array<{ atUs: bigint; count: number; iq: Float32Array }> {
  const b = readFileSync(file);
  const out: Array<{ atUs: bigint; count: number; iq: Float32Array }> = [];
  for (let at = 0; at + 32 <= b.length;) {
    const atUs = b.readBigUInt64LE(at + 8);
    const count = Number(b.readBigUInt64LE(at + 24));
    const iq = new Float32Array(b.buffer.slice(b.byteOffset + at + 32, b.byteOffset + at + 32 + 8 * count));
    out.push({ atUs, count, iq });
    at += 32 + 8 * count;
  }
  return out;
}

test('phy send through a SORA-like TX ring: the board takes timed bursts, and each decodes to its test frame', { skip }, async () => {
  if (!built.ok) return;
  const ring = join(dir, 'ring');
  const out = join(dir, 'bursts.bin');
  const producer = await RingProcess.start(built.exe, { ring, source: 'counter', rateHz: 22e6, capacity: 1 << 16 });
  try {
    const consumer = await RingProcess.startConsumer(built.consumer, { ring: `${ring}.tx`, out, rateHz: 22e6, capacity: 1 << 16 });
    try {
      const r = cogmesh('phy', 'send', '--frontend', 'sora', '--device', ring, '--frames', '4', '--bytes', '200', '--rate', '1', '--gap-us', '2000', '--json');
      assert.equal(r.code, 0, r.err);
      const res = JSON.parse(r.out) as { frames: number; late: number; unsent: number; sampleRateHz: number; frameBytes: number };
      assert.deepEqual([res.frames, res.late, res.unsent, res.sampleRateHz, res.frameBytes], [4, 0, 0, 22e6, 232]);
    } finally {
      await consumer.stop();
    }
  } finally {
    await producer.stop();
  }
  const sent = bursts(out);
  assert.equal(sent.length, 4);
  assert.equal(sent[0]!.atUs, 2n ** 64n - 1n, 'the first as soon as the board can');
  for (let k = 2; k < sent.length; k++) assert.ok(sent[k]!.atUs > sent[k - 1]!.atUs + 2000n, 'then timed bursts, at least the gap apart, in order');
  for (const [k, b] of sent.entries()) {
    const rx = new DsssReceiver({ samplesPerChip: 2 });
    // The air after the burst: silence (the receiver's timing loop looks a few samples past a frame's last chip).
    const frames = [...rx.receive(b.iq), ...rx.receive(new Float32Array(2000)), ...rx.flush()];
    assert.equal(frames.length, 1, `burst ${k}`);
    assert.ok(frames[0]!.fcsOk);
    assert.deepEqual([...frames[0]!.frame], [...testFrame(k, 200)]);
  }
});

test('phy send through UHD runs the real libuhd up to its no-device error; what cannot transmit is refused', () => {
  const uhd = cogmesh('phy', 'send', '--frontend', 'uhd', '--device', 'type=b200,serial=0000000', '--frames', '1');
  assert.notEqual(uhd.code, 0);
  assert.match(uhd.err, /RADIO_NO_DEVICE|libuhd/, uhd.err);
  for (const [args, says] of [
    [['--frontend', 'file'], /--frontend: "file" is not uhd or sora/],
    [['--frontend', 'sora', '--rate', '5.5'], /--rate/],
    [['--frontend', 'uhd', '--sample-rate', '10e6'], /--sample-rate/],
    [['--frontend', 'uhd', '--channel', '14'], /--channel/],
  ] as const) {
    const r = cogmesh('phy', 'send', ...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err, says);
  }
});
