/**
 * The UHD front-end's logic against a fake libuhd: a device whose clock moves
 * only when samples are delivered, a bus transaction is made or the
 * front-end sleeps, and whose stream labels every sample with its index on
 * the device's sample grid (I = index, Q = -index), so that a test can see
 * exactly which samples a block holds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FrontendError } from '../../src/core/errors.js';
import type { IqBlock } from '../../radio/frontend.js';
import {
  deviceId,
  openUhdFrontend,
  parseDeviceAddr,
  RxError,
  StreamMode,
  UhdCallError,
  uhdDevices,
  uhdInfo,
  type RecvResult,
  type RxStreamArgs,
  type StreamCommand,
  type TimeSpec,
  type UhdFrontendOptions,
  type UhdLib,
  type UhdRxStreamer,
  type UhdTuneResult,
  type UhdUsrp,
} from '../../radio/uhd/index.js';

const FS = 1e6;
/** Node time at open: 5 s after the epoch. */
const OPEN_US = 5_000_000;

/** What the next recv does instead of delivering a packet; `packet` delivers one as usual. */
type Fault =
  | { kind: 'packet' }
  /** A packet whose time stamp jumps `lost` samples ahead with no error reported. */
  | { kind: 'gap'; lost: number }
  | { kind: 'overflow'; lost: number }
  | { kind: 'sequence'; lost: number }
  | { kind: 'timeout' };

interface FakeConfig {
  timed: boolean;
  lockSensor: boolean;
  /** Device time a tune takes on the bus. */
  tuneUs: number;
  /** LO lock after the tune took effect. */
  lockUs: number;
  /** Never locks. */
  neverLocks: boolean;
  /** Samples between a start command and the first sample. */
  startLatency: number;
  /** Samples per packet. */
  spp: number;
}

class FakeDevice {
  /** Device time, seconds. */
  t = 0;
  readonly commands: StreamCommand[] = [];
  readonly faults: Fault[] = [];
  readonly tunes: Array<{ hz: number; commandTime: number | undefined; at: number }> = [];
  streaming = false;
  nextIdx = 0;
  lockAt = Number.POSITIVE_INFINITY;
  commandTime: number | undefined;
  usrpFreed = 0;
  streamerFreed = 0;
  streamersMade = 0;
  rate = 0;
  gain = 0;
  antenna: string | undefined;
  /** When set, recv waits for this to resolve before it answers. */
  hold: Promise<void> | undefined;

  constructor(readonly cfg: FakeConfig) {}

  spec(t: number): TimeSpec {
    const full = Math.floor(t);
    return { fullSecs: full, fracSecs: t - full };
  }

  advance(us: number): void {
    this.t += us / 1e6;
  }
}

class FakeStreamer implements UhdRxStreamer {
  readonly maxNumSamps: number;
  constructor(private readonly d: FakeDevice) {
    this.maxNumSamps = d.cfg.spp;
  }

  issueStreamCmd(cmd: StreamCommand): void {
    this.d.commands.push(cmd);
    if (cmd.mode === StreamMode.START_CONTINUOUS) {
      this.d.streaming = true;
      this.d.nextIdx = Math.ceil(this.d.t * this.d.rate - 1e-6) + this.d.cfg.startLatency;
    } else if (cmd.mode === StreamMode.STOP_CONTINUOUS) {
      this.d.streaming = false;
    }
  }

  async recv(into: Float32Array, offset: number, count: number, timeoutS: number): Promise<RecvResult> {
    const d = this.d;
    if (d.hold !== undefined) await d.hold;
    const md = (errorCode: number, text: string, outOfSequence = false): RecvResult => ({
      samples: 0,
      md: { errorCode, outOfSequence, timeSpec: undefined, text },
    });
    const fault = d.faults.shift();
    if (fault?.kind === 'overflow') {
      // the host fell behind: time went on, the device dropped `lost` samples and stopped
      d.nextIdx += fault.lost;
      d.t = Math.max(d.t, d.nextIdx / d.rate);
      d.streaming = false;
      return md(RxError.OVERFLOW, 'ERROR_CODE_OVERFLOW: Overflow or sequence error');
    }
    if (fault?.kind === 'sequence') {
      d.nextIdx += fault.lost;
      return md(RxError.OVERFLOW, 'ERROR_CODE_OVERFLOW: Overflow or sequence error', true);
    }
    if (fault?.kind === 'gap') d.nextIdx += fault.lost;
    if (fault?.kind === 'timeout' || !d.streaming) {
      d.t += timeoutS;
      d.streaming = false;
      return md(RxError.TIMEOUT, 'ERROR_CODE_TIMEOUT: No packet received, implementation timed-out.');
    }
    const n = Math.min(count, d.cfg.spp);
    for (let i = 0; i < n; i++) {
      into[2 * (offset + i)] = d.nextIdx + i;
      into[2 * (offset + i) + 1] = -(d.nextIdx + i);
    }
    const first = d.nextIdx;
    d.nextIdx += n;
    d.t = Math.max(d.t, d.nextIdx / d.rate);
    const full = Math.floor(first / d.rate);
    return {
      samples: n,
      md: { errorCode: RxError.NONE, outOfSequence: false, timeSpec: { fullSecs: full, fracSecs: (first - full * d.rate) / d.rate }, text: '' },
    };
  }

  free(): void {
    this.d.streamerFreed++;
  }
}

class FakeUsrp implements UhdUsrp {
  constructor(private readonly d: FakeDevice) {}
  setRxRate(rateHz: number): void {
    this.d.rate = rateHz;
  }
  getRxRate(): number {
    return this.d.rate;
  }
  setRxGain(gainDb: number): void {
    // the device's gain steps are 1 dB
    this.d.gain = Math.round(gainDb);
  }
  getRxGain(): number {
    return this.d.gain;
  }
  rxGainRange(): readonly [number, number] {
    return [0, 76];
  }
  rxFreqRange(): readonly [number, number] {
    return [70e6, 6e9];
  }
  setRxAntenna(antenna: string): void {
    this.d.antenna = antenna;
  }
  async setRxFreq(freqHz: number): Promise<UhdTuneResult> {
    const d = this.d;
    const startedAt = d.t;
    d.advance(d.cfg.tuneUs);
    // a timed tune takes effect at its command time, or as it arrives when that is past
    const effect = d.commandTime !== undefined ? Math.max(d.commandTime, d.t) : d.t;
    d.lockAt = d.cfg.neverLocks ? Number.POSITIVE_INFINITY : effect + d.cfg.lockUs / 1e6;
    d.tunes.push({ hz: freqHz, commandTime: d.commandTime, at: startedAt });
    return { clippedRfHz: freqHz, targetRfHz: freqHz, actualRfHz: freqHz, targetDspHz: 0, actualDspHz: 0 };
  }
  rxSensorNames(): string[] {
    return this.d.cfg.lockSensor ? ['lo_locked', 'rssi', 'temp'] : ['temp'];
  }
  async rxSensorBool(name: string): Promise<boolean> {
    assert.equal(name, 'lo_locked');
    this.d.advance(50);
    return this.d.t >= this.d.lockAt - 1e-12;
  }
  timeNow(): TimeSpec {
    return this.d.spec(this.d.t);
  }
  setTimeNow(t: TimeSpec): void {
    this.d.t = t.fullSecs + t.fracSecs;
  }
  setCommandTime(t: TimeSpec): void {
    if (!this.d.cfg.timed) throw new UhdCallError('uhd_usrp_set_command_time', 20, 'NotImplementedError: set_command_time');
    this.d.commandTime = t.fullSecs + t.fracSecs;
  }
  clearCommandTime(): void {
    if (!this.d.cfg.timed) throw new UhdCallError('uhd_usrp_clear_command_time', 20, 'NotImplementedError: clear_command_time');
    this.d.commandTime = undefined;
  }
  rxStream(args: RxStreamArgs): UhdRxStreamer {
    assert.equal(args.otwFormat, 'sc16');
    this.d.streamersMade++;
    return new FakeStreamer(this.d);
  }
  free(): void {
    this.d.usrpFreed++;
  }
}

function fakeLib(d: FakeDevice, found: string[] = ['type=b200,name=,serial=30F1A2B,product=B210']): UhdLib {
  return {
    path: 'fake',
    symbols: new Set(),
    version: () => '4.3.0.0-fake',
    abi: () => '4.3.0',
    find: async () => found,
    makeUsrp: async (args) => {
      if (found.length === 0) throw new UhdCallError('uhd_usrp_make', 11, `LookupError: KeyError: No devices found for ----->\nDevice Address:\n    ${args}\n`);
      return new FakeUsrp(d);
    },
  };
}

const BASE: UhdFrontendOptions = { deviceArgs: '', sampleRateHz: FS, gainDb: 30, calibrationDb: -20 };

async function rig(cfg: Partial<FakeConfig> = {}, opts: Partial<UhdFrontendOptions> = {}) {
  const d = new FakeDevice({
    timed: true,
    lockSensor: true,
    tuneUs: 300,
    lockUs: 100,
    neverLocks: false,
    startLatency: 100,
    spp: 100,
    ...cfg,
  });
  const fe = await openUhdFrontend(
    { ...BASE, ...opts },
    {
      lib: fakeLib(d),
      clock: { now: () => OPEN_US },
      sleep: async (us) => d.advance(us),
    },
  );
  return { d, fe };
}

/** Device time now, µs. */
const nowUs = (d: FakeDevice): number => Math.round(d.t * 1e6);

/** Sample indices of a block, read back from the fake's labels. */
function indices(b: IqBlock): number[] {
  const out: number[] = [];
  for (let i = 0; i < b.count; i++) out.push(b.data[2 * i]!);
  return out;
}

function assertContiguous(b: IqBlock): void {
  const idx = indices(b);
  const first = idx[0]!;
  assert.ok(
    idx.every((v, i) => v === first + i),
    `block is not contiguous: ${idx.slice(0, 5).join(',')}...`,
  );
  assert.ok(
    idx.every((v, i) => b.data[2 * i + 1] === -v),
    'Q does not match I',
  );
  assert.equal(b.startUs, first, 'startUs is the first sample time (1 sample = 1 µs here)');
}

async function rejectsWith(p: Promise<unknown>, code: string): Promise<Error> {
  let caught: unknown;
  await p.then(
    () => assert.fail(`expected a rejection with ${code}`),
    (e: unknown) => {
      caught = e;
    },
  );
  assert.ok(caught instanceof FrontendError, `expected a FrontendError, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  return caught;
}

test('open: configures rate, gain and time, and reports what the device set', async () => {
  const { d, fe } = await rig({}, { gainDb: 30.4, antenna: 'RX2' });
  assert.equal(fe.kind, 'uhd');
  assert.equal(fe.id, 'b200:30F1A2B');
  assert.equal(fe.device['product'], 'B210');
  assert.equal(d.rate, FS);
  assert.equal(d.antenna, 'RX2');
  assert.equal(fe.gainDb, 30, 'the gain the device coerced to');
  assert.equal(fe.calibrationDb(), -50);
  assert.equal(d.t, 5, 'device clock set to node time');
  assert.equal(fe.timedRetune, true);
  assert.equal(fe.hasLockSensor, true);
  assert.equal(d.commandTime, undefined, 'the probe left no command time set');
  assert.deepEqual(fe.capabilities, {
    sampleRateHz: FS,
    tuneRangeHz: [70e6, 6e9],
    gainRangeDb: [0, 76],
    retuneUs: 2500,
    canTransmit: false,
    canTransmitIq: false,
  });
  assert.equal(fe.centerHz, undefined);
  assert.equal(d.commands.length, 0, 'no streaming before the first read');
  await fe.close();
});

test('open: a gain outside the range is refused and the device freed', async () => {
  const d = new FakeDevice({ timed: true, lockSensor: true, tuneUs: 0, lockUs: 0, neverLocks: false, startLatency: 0, spp: 10 });
  await rejectsWith(openUhdFrontend({ ...BASE, gainDb: 90 }, { lib: fakeLib(d), clock: { now: () => OPEN_US } }), 'RADIO_GAIN_RANGE');
  assert.equal(d.usrpFreed, 1);
  assert.equal(d.streamersMade, 0);
});

test('open: nothing found and nothing opened is RADIO_NO_DEVICE with UHD words on one line', async () => {
  const d = new FakeDevice({ timed: true, lockSensor: true, tuneUs: 0, lockUs: 0, neverLocks: false, startLatency: 0, spp: 10 });
  const e = await rejectsWith(openUhdFrontend({ ...BASE, deviceArgs: 'type=b200' }, { lib: fakeLib(d, []) }), 'RADIO_NO_DEVICE');
  assert.equal(e.message, 'no USRP found (device args "type=b200": UHD said "LookupError: KeyError: No devices found for -----> Device Address: type=b200")');
});

test('open: refused options never reach the device', async () => {
  const d = new FakeDevice({ timed: true, lockSensor: true, tuneUs: 0, lockUs: 0, neverLocks: false, startLatency: 0, spp: 10 });
  await assert.rejects(openUhdFrontend({ ...BASE, sampleRateHz: 0 }, { lib: fakeLib(d) }), { code: 'CORE_OUT_OF_RANGE' });
  await assert.rejects(openUhdFrontend({ ...BASE, channel: -1 }, { lib: fakeLib(d) }), { code: 'CORE_OUT_OF_RANGE' });
  await assert.rejects(openUhdFrontend({ ...BASE, timedTuneLeadUs: 1.5 }, { lib: fakeLib(d) }), { code: 'CORE_INVALID_TIME' });
  assert.equal(d.usrpFreed, 0);
});

test('open: retune "timed" on a device without timed commands is RADIO_NO_TIMED_TUNE', async () => {
  await rejectsWith(rig({ timed: false }, { retune: 'timed' }), 'RADIO_NO_TIMED_TUNE');
});

test('reads before a tune, with a bad count or a short buffer are refused', async () => {
  const { fe } = await rig();
  await rejectsWith(fe.readIq(10), 'RADIO_NOT_TUNED');
  await fe.tune(2.412e9);
  await assert.rejects(fe.readIq(0), { code: 'CORE_OUT_OF_RANGE' });
  await assert.rejects(fe.readIq(10, new Float32Array(19)), { code: 'CORE_OUT_OF_RANGE' });
  await fe.close();
});

test('streaming: blocks follow each other without gaps, in the caller buffer, stamped by the device', async () => {
  const { d, fe } = await rig();
  await fe.tune(2.412e9);
  const buf = new Float32Array(2 * 250);
  const a = await fe.readIq(250, buf);
  assert.equal(a.data, buf, 'samples land in the caller buffer');
  assertContiguous(a);
  const firstA = a.data[0]!;
  const b = await fe.readIq(250);
  assertContiguous(b);
  assert.equal(b.data[0], firstA + 250, 'the second block goes on where the first ended');
  assert.equal(b.startUs, a.startUs + 250);
  for (const blk of [a, b]) {
    assert.equal(blk.droppedSamples, 0);
    assert.equal(blk.centerHz, 2.412e9);
    assert.equal(blk.sampleRateHz, FS);
    assert.equal(blk.calibrationDb, -50);
  }
  assert.deepEqual(
    d.commands.map((c) => c.mode),
    [StreamMode.START_CONTINUOUS],
    'one start, no restarts',
  );
  assert.equal(fe.counters().blocks, 2);
  await fe.close();
});

test('overflow: counted, streaming restarted, and the block starts after the gap with the loss reported', async () => {
  const { d, fe } = await rig();
  await fe.tune(2.412e9);
  const a = await fe.readIq(100);
  const expectedNext = a.data[0]! + 100;
  // the second block's first packet arrives, then the device overflows
  d.faults.push({ kind: 'overflow', lost: 300 });
  const b = await fe.readIq(250);
  assertContiguous(b);
  // the stream restarted `startLatency` samples after the device time at the restart
  assert.equal(b.droppedSamples, b.data[0]! - expectedNext, 'every sample between the blocks is counted');
  assert.ok(b.droppedSamples >= 300, `dropped ${b.droppedSamples}`);
  const c = fe.counters();
  assert.equal(c.overflows, 1);
  assert.equal(c.streamRestarts, 1);
  assert.equal(c.droppedSamples, b.droppedSamples);
  assert.deepEqual(
    d.commands.map((x) => x.mode),
    [StreamMode.START_CONTINUOUS, StreamMode.STOP_CONTINUOUS, StreamMode.START_CONTINUOUS],
  );
  await fe.close();
});

test('overflow in the middle of a block: the partial block is dropped too, never joined across the gap', async () => {
  const { d, fe } = await rig();
  await fe.tune(2.412e9);
  const a = await fe.readIq(100);
  const expectedNext = a.data[0]! + 100;
  // the next read's first packet (100 samples) arrives, then the overflow
  d.faults.push({ kind: 'packet' }, { kind: 'overflow', lost: 50 });
  const b = await fe.readIq(250);
  assertContiguous(b);
  assert.equal(b.droppedSamples, b.data[0]! - expectedNext);
  assert.ok(b.droppedSamples >= 100 + 50, `the 100 samples read before the overflow count as dropped (${b.droppedSamples})`);
  assert.equal(d.commands.filter((x) => x.mode === StreamMode.START_CONTINUOUS).length, 2);
  await fe.close();
});

test('a silent time-stamp gap in the middle of a block: counted, and the block restarts after it', async () => {
  const { d, fe } = await rig();
  await fe.tune(2.412e9);
  const a = await fe.readIq(100);
  d.faults.push({ kind: 'packet' }, { kind: 'gap', lost: 40 });
  const b = await fe.readIq(250);
  assertContiguous(b);
  assert.equal(b.data[0], a.data[0]! + 100 + 100 + 40, 'starts with the packet after the gap');
  assert.equal(b.droppedSamples, 100 + 40, 'the 100 samples before the gap and the 40 in it');
  assert.equal(d.commands.length, 1, 'no restart without an error');
  await fe.close();
});

test('sequence error: the lost packet is counted from the time stamps, streaming goes on', async () => {
  const { d, fe } = await rig();
  await fe.tune(2.412e9);
  const a = await fe.readIq(100);
  d.faults.push({ kind: 'sequence', lost: 100 });
  const b = await fe.readIq(100);
  assertContiguous(b);
  assert.equal(b.data[0], a.data[0]! + 200);
  assert.equal(b.droppedSamples, 100);
  assert.equal(fe.counters().sequenceErrors, 1);
  assert.equal(fe.counters().streamRestarts, 0);
  assert.equal(d.commands.length, 1, 'no restart for a sequence error');
  await fe.close();
});

test('an overflowing stream is given up after maxRecoveriesPerRead with RADIO_STREAM', async () => {
  const { d, fe } = await rig({}, { maxRecoveriesPerRead: 2 });
  await fe.tune(2.412e9);
  for (let i = 0; i < 3; i++) d.faults.push({ kind: 'overflow', lost: 10 });
  await rejectsWith(fe.readIq(100), 'RADIO_STREAM');
  const b = await fe.readIq(100);
  assertContiguous(b);
  await fe.close();
});

test('recv timeout: the read is refused with RADIO_TIMEOUT (never a short block) and the next read restarts streaming', async () => {
  const { d, fe } = await rig({}, { recvTimeoutUs: 50_000 });
  await fe.tune(2.412e9);
  const a = await fe.readIq(100);
  d.faults.push({ kind: 'timeout' });
  const e = await rejectsWith(fe.readIq(100), 'RADIO_TIMEOUT');
  assert.match(e.message, /no samples within 50 ms/);
  assert.match(e.message, /No packet received/, 'quotes UHD');
  assert.equal(fe.counters().timeouts, 1);
  const b = await fe.readIq(100);
  assertContiguous(b);
  assert.equal(b.droppedSamples, b.data[0]! - (a.data[0]! + 100), 'samples lost while stalled are counted');
  assert.deepEqual(
    d.commands.map((x) => x.mode),
    [StreamMode.START_CONTINUOUS, StreamMode.STOP_CONTINUOUS, StreamMode.START_CONTINUOUS],
  );
  await fe.close();
});

test('timed tune: takes effect lead after the request, reports lead + settle, and drops the deaf samples', async () => {
  const { d, fe } = await rig();
  await fe.tune(2.412e9);
  const a = await fe.readIq(100);
  assertContiguous(a);
  const requestedUs = nowUs(d);
  const r = await fe.tune(2.437e9);
  assert.deepEqual(r, { centerHz: 2.437e9, retuneUs: 2500 });
  const tune = d.tunes[1]!;
  assert.equal(Math.round(tune.commandTime! * 1e6), requestedUs + 2000, 'command time = request + lead');
  assert.equal(d.commandTime, undefined, 'command time cleared after the tune');
  assert.ok(nowUs(d) >= requestedUs + 2500, 'the tune resolves once samples are valid');
  const b = await fe.readIq(100);
  assertContiguous(b);
  assert.equal(b.startUs, requestedUs + 2500, 'the first sample is the first valid one');
  assert.equal(b.centerHz, 2.437e9);
  assert.equal(b.droppedSamples, 0, 'deaf samples are not losses');
  assert.equal(fe.counters().deafSamples, b.data[0]! - (a.data[0]! + 100));
  assert.equal(fe.counters().retunes, 2);
  assert.equal(d.commands.length, 1, 'retuning does not restart the stream');
  await fe.close();
});

test('timed tune whose commands reach the device after their time: settle counts from then', async () => {
  const { fe } = await rig({ tuneUs: 3000 });
  const r = await fe.tune(2.412e9);
  assert.equal(r.retuneUs, 3000 + 500);
  assert.equal(fe.counters().lateTimedTunes, 1);
  await fe.close();
});

test('timed tune whose LO locks later than the settle allowance: samples valid from the lock', async () => {
  const { d, fe } = await rig({ lockUs: 900 });
  const requestedUs = nowUs(d);
  const r = await fe.tune(2.412e9);
  // effect at +2000, lock at +2900; first poll at +2550 (false), then polls every 200 + 50 µs
  assert.equal(r.retuneUs, 3050);
  assert.ok(nowUs(d) - requestedUs >= 2900, 'resolved after the lock');
  await fe.close();
});

test('plain tune (no timed commands): retune time measured from the request to the lock', async () => {
  const { d, fe } = await rig({ timed: false, lockUs: 400 });
  assert.equal(fe.timedRetune, false);
  assert.equal(fe.capabilities.retuneUs, 2000, 'an estimate until measured');
  const r = await fe.tune(2.412e9);
  // tune 300 µs, lock 400 µs later (at 700): polls at 350, 600 (false), 850 (true)
  assert.deepEqual(r, { centerHz: 2.412e9, retuneUs: 850 });
  assert.equal(d.tunes[0]!.commandTime, undefined);
  const b = await fe.readIq(50);
  assert.ok(b.startUs >= OPEN_US + 850, `block starts at ${b.startUs}`);
  assertContiguous(b);
  await fe.close();
});

test('plain tune without a lock sensor: valid loSettleUs after the tune returns', async () => {
  const { fe } = await rig({ timed: false, lockSensor: false }, { loSettleUs: 700 });
  assert.equal(fe.hasLockSensor, false);
  const r = await fe.tune(2.412e9);
  assert.equal(r.retuneUs, 300 + 700);
  await fe.close();
});

test('an LO that does not lock is RADIO_LO_UNLOCKED', async () => {
  const { fe } = await rig({ neverLocks: true }, { lockTimeoutUs: 2000 });
  await rejectsWith(fe.tune(2.412e9), 'RADIO_LO_UNLOCKED');
  assert.equal(fe.centerHz, undefined);
  await fe.close();
});

test('tunes outside the range are refused before reaching the device', async () => {
  const { d, fe } = await rig();
  await rejectsWith(fe.tune(10e9), 'RADIO_TUNE_RANGE');
  assert.equal(d.tunes.length, 0);
  await fe.close();
});

test('calls run in order: a tune asked for during a read takes effect after it', async () => {
  const { fe } = await rig();
  await fe.tune(2.412e9);
  const read = fe.readIq(300);
  const tune = fe.tune(2.462e9);
  const b = await read;
  assert.equal(b.centerHz, 2.412e9);
  assert.equal((await tune).centerHz, 2.462e9);
  assert.equal((await fe.readIq(10)).centerHz, 2.462e9);
  await fe.close();
});

test('setGain: the device value is kept, calibration follows it, out of range is refused', async () => {
  const { fe } = await rig();
  await fe.setGain(40.3);
  assert.equal(fe.gainDb, 40);
  assert.equal(fe.calibrationDb(), -60);
  await rejectsWith(fe.setGain(-1), 'RADIO_GAIN_RANGE');
  assert.equal(fe.gainDb, 40);
  await fe.close();
});

test('send is refused: no PHY in this release', async () => {
  const { fe } = await rig();
  assert.equal(fe.capabilities.canTransmit, false);
  await fe.tune(2.412e9);
  const e = await rejectsWith(fe.send(new Uint8Array([1, 2, 3])), 'RADIO_CANNOT_TRANSMIT');
  assert.match(e.message, /no PHY/);
  const off = fe.onFrame(() => assert.fail('no frames without a PHY'));
  off();
  await fe.close();
});

test('close: waits for the read in progress, frees once, is idempotent, refuses later calls', async () => {
  const { d, fe } = await rig();
  await fe.tune(2.412e9);
  let release: () => void = () => undefined;
  d.hold = new Promise((r) => {
    release = r;
  });
  const read = fe.readIq(50);
  const queued = fe.readIq(50);
  await new Promise((r) => setImmediate(r));
  const c1 = fe.close();
  const c2 = fe.close();
  assert.equal(c1, c2, 'closing again returns the same promise');
  await new Promise((r) => setImmediate(r));
  assert.equal(d.streamerFreed, 0, 'nothing freed while a receive runs');
  assert.equal(d.usrpFreed, 0, 'nothing freed while a receive runs');
  release();
  d.hold = undefined;
  const b = await read;
  assertContiguous(b);
  await rejectsWith(queued, 'RADIO_CLOSED');
  await c1;
  await fe.close();
  assert.equal(d.streamerFreed, 1);
  assert.equal(d.usrpFreed, 1);
  assert.equal(d.commands.at(-1)?.mode, StreamMode.STOP_CONTINUOUS, 'streaming stopped before freeing');
  await rejectsWith(fe.readIq(10), 'RADIO_CLOSED');
  await rejectsWith(fe.tune(2.412e9), 'RADIO_CLOSED');
  await rejectsWith(fe.setGain(10), 'RADIO_CLOSED');
  await rejectsWith(fe.send(new Uint8Array(1)), 'RADIO_CLOSED');
});

test('close without ever streaming frees without a stop command', async () => {
  const { d, fe } = await rig();
  await fe.close();
  assert.equal(d.commands.length, 0);
  assert.equal(d.usrpFreed, 1);
});

test('parseDeviceAddr and deviceId read UHD find strings', () => {
  assert.deepEqual(parseDeviceAddr('type=b200,name=,serial=30F1A2B,product=B210'), {
    type: 'b200',
    name: '',
    serial: '30F1A2B',
    product: 'B210',
  });
  assert.deepEqual(parseDeviceAddr(''), {});
  assert.deepEqual(parseDeviceAddr('addr=192.168.10.2, type = usrp2 ,flag'), { addr: '192.168.10.2', type: 'usrp2', flag: '' });
  assert.equal(deviceId({ type: 'b200', serial: 'X' }, 'f'), 'b200:X');
  assert.equal(deviceId({ serial: 'X' }, 'f'), 'X');
  assert.equal(deviceId({}, 'f'), 'f');
});

test('uhdInfo and uhdDevices never throw: a missing library is a value', async () => {
  const missing = (): UhdLib => {
    throw new FrontendError('RADIO_NO_LIBRARY', 'libuhd not found: tried x');
  };
  assert.deepEqual(uhdInfo(missing), { available: false, reason: 'libuhd not found: tried x' });
  assert.deepEqual(await uhdDevices('', missing), { available: false, reason: 'libuhd not found: tried x', devices: [] });
  const d = new FakeDevice({ timed: true, lockSensor: true, tuneUs: 0, lockUs: 0, neverLocks: false, startLatency: 0, spp: 10 });
  const lib = fakeLib(d, ['type=b200,serial=1', 'type=x300,addr=192.168.40.2']);
  assert.deepEqual(await uhdDevices('', () => lib), {
    available: true,
    devices: [
      { type: 'b200', serial: '1' },
      { type: 'x300', addr: '192.168.40.2' },
    ],
  });
  const failing: UhdLib = { ...lib, find: () => Promise.reject(new UhdCallError('uhd_usrp_find', 44, 'RuntimeError: boom')) };
  const r = await uhdDevices('', () => failing);
  assert.equal(r.available, true);
  assert.deepEqual(r.devices, []);
  assert.match(r.reason ?? '', /boom/);
  assert.deepEqual(
    uhdInfo(() => lib),
    { available: true, version: '4.3.0.0-fake', abi: '4.3.0' },
  );
});
