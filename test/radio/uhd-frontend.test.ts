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
  AsyncEvent,
  deviceId,
  openUhdFrontend,
  parseDeviceAddr,
  RxError,
  StreamMode,
  UhdCallError,
  uhdDevices,
  uhdInfo,
  type AsyncMessage,
  type RecvResult,
  type RxStreamArgs,
  type StreamCommand,
  type TimeSpec,
  type TxMetadata,
  type UhdFrontendOptions,
  type UhdLib,
  type UhdRxStreamer,
  type UhdTuneResult,
  type UhdTxStreamer,
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
  /** Transmit channels (0: a receive-only device). */
  txChannels: number;
  /** Samples per transmit packet (`maxNumSamps` of the transmit streamer). */
  txSpp: number;
}

/** What the next transmit send does instead of taking every sample; `take` takes them. */
type TxFault =
  | { kind: 'take' }
  /** Takes only `n` of the samples (its buffers filled up before the timeout). */
  | { kind: 'short'; n: number }
  /** Takes none: the device stopped draining. */
  | { kind: 'stall' }
  /** The device reports an underflow of `us` within the burst (its end comes that much later). */
  | { kind: 'underflow'; us: number };

interface TxSend {
  readonly offset: number;
  readonly count: number;
  readonly md: TxMetadata;
  readonly timeoutS: number;
  /** I of the samples sent (the test bursts label sample k with I = k). */
  readonly firstI: number | undefined;
  readonly lastI: number | undefined;
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
  readonly txSends: TxSend[] = [];
  readonly txFaults: TxFault[] = [];
  /** Async messages waiting for recvAsyncMsg. */
  readonly asyncQueue: AsyncMessage[] = [];
  /** No acknowledgement at the end of a burst. */
  noAck = false;
  txRate = 0;
  txGain = 0;
  txAntenna: string | undefined;
  readonly txTunes: Array<{ hz: number; commandTime: number | undefined }> = [];
  txStreamerFreed = 0;
  /** The burst being sent: its first sample's device time, and the samples so far. */
  private burst: { startT: number; samples: number; stretchUs: number } | undefined;

  constructor(readonly cfg: FakeConfig) {}

  spec(t: number): TimeSpec {
    const full = Math.floor(t);
    return { fullSecs: full, fracSecs: t - full };
  }

  advance(us: number): void {
    this.t += us / 1e6;
  }

  /** The device side of a send: a timed start of burst is late when its time is past; an ACK follows the end. */
  txSend(taken: number, md: TxMetadata): void {
    if (md.startOfBurst) {
      const at = md.timeSpec !== undefined ? md.timeSpec.fullSecs + md.timeSpec.fracSecs : this.t;
      if (at < this.t) {
        this.asyncQueue.push({ eventCode: AsyncEvent.TIME_ERROR, channel: 0, timeSpec: this.spec(this.t) });
        this.burst = undefined;
      } else {
        this.burst = { startT: at, samples: 0, stretchUs: 0 };
      }
    }
    const b = this.burst;
    if (b === undefined) return;
    b.samples += taken;
    if (md.endOfBurst && taken > 0) {
      this.burst = undefined;
      const end = b.startT + b.samples / this.txRate + b.stretchUs / 1e6;
      this.t = Math.max(this.t, end);
      if (!this.noAck) this.asyncQueue.push({ eventCode: AsyncEvent.BURST_ACK, channel: 0, timeSpec: this.spec(end) });
    }
  }

  underflow(us: number): void {
    if (this.burst !== undefined) this.burst.stretchUs += us;
    this.asyncQueue.push({ eventCode: AsyncEvent.UNDERFLOW, channel: 0, timeSpec: this.spec(this.t) });
  }
}

class FakeTxStreamer implements UhdTxStreamer {
  readonly maxNumSamps: number;
  constructor(private readonly d: FakeDevice) {
    this.maxNumSamps = d.cfg.txSpp;
  }

  async send(data: Float32Array, offset: number, count: number, md: TxMetadata, timeoutS: number): Promise<number> {
    const d = this.d;
    assert.ok(count <= this.maxNumSamps, `a send of ${count} samples, more than a packet (${this.maxNumSamps})`);
    const fault = count > 0 ? d.txFaults.shift() : undefined;
    let taken = count;
    if (fault?.kind === 'short') taken = Math.min(count, fault.n);
    if (fault?.kind === 'stall') {
      taken = 0;
      d.t += timeoutS;
    }
    d.txSends.push({
      offset,
      count,
      md,
      timeoutS,
      firstI: count > 0 ? data[2 * offset] : undefined,
      lastI: count > 0 ? data[2 * (offset + taken - 1)] : undefined,
    });
    if (fault?.kind === 'underflow') d.underflow(fault.us);
    // UHD sends end of burst only with the last sample of the call
    d.txSend(taken, taken < count ? { ...md, endOfBurst: false } : md);
    return taken;
  }

  async recvAsyncMsg(timeoutS: number): Promise<AsyncMessage | undefined> {
    const msg = this.d.asyncQueue.shift();
    if (msg === undefined) this.d.t += timeoutS;
    return msg;
  }

  free(): void {
    this.d.txStreamerFreed++;
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
  txNumChannels(): number {
    return this.d.cfg.txChannels;
  }
  setTxRate(rateHz: number): void {
    this.d.txRate = rateHz;
  }
  getTxRate(): number {
    return this.d.txRate;
  }
  setTxGain(gainDb: number): void {
    // transmit gain steps are 0.25 dB
    this.d.txGain = Math.round(gainDb * 4) / 4;
  }
  getTxGain(): number {
    return this.d.txGain;
  }
  txGainRange(): readonly [number, number] {
    return [0, 89.75];
  }
  txFreqRange(): readonly [number, number] {
    return [70e6, 6e9];
  }
  setTxAntenna(antenna: string): void {
    this.d.txAntenna = antenna;
  }
  async setTxFreq(freqHz: number): Promise<UhdTuneResult> {
    this.d.txTunes.push({ hz: freqHz, commandTime: this.d.commandTime });
    return { clippedRfHz: freqHz, targetRfHz: freqHz, actualRfHz: freqHz, targetDspHz: 0, actualDspHz: 0 };
  }
  txStream(args: RxStreamArgs): UhdTxStreamer {
    assert.equal(args.otwFormat, 'sc16');
    return new FakeTxStreamer(this.d);
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
    checkTxMetadata: (md) => md,
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
    txChannels: 1,
    txSpp: 100,
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
    canTransmitIq: true,
  });
  assert.equal(fe.centerHz, undefined);
  assert.equal(d.commands.length, 0, 'no streaming before the first read');
  await fe.close();
});

test('open: a gain outside the range is refused and the device freed', async () => {
  const d = new FakeDevice({ timed: true, lockSensor: true, tuneUs: 0, lockUs: 0, neverLocks: false, startLatency: 0, spp: 10, txChannels: 1, txSpp: 10 });
  await rejectsWith(openUhdFrontend({ ...BASE, gainDb: 90 }, { lib: fakeLib(d), clock: { now: () => OPEN_US } }), 'RADIO_GAIN_RANGE');
  assert.equal(d.usrpFreed, 1);
  assert.equal(d.streamersMade, 0);
});

test('open: nothing found and nothing opened is RADIO_NO_DEVICE with UHD words on one line', async () => {
  const d = new FakeDevice({ timed: true, lockSensor: true, tuneUs: 0, lockUs: 0, neverLocks: false, startLatency: 0, spp: 10, txChannels: 1, txSpp: 10 });
  const e = await rejectsWith(openUhdFrontend({ ...BASE, deviceArgs: 'type=b200' }, { lib: fakeLib(d, []) }), 'RADIO_NO_DEVICE');
  assert.equal(e.message, 'no USRP found (device args "type=b200": UHD said "LookupError: KeyError: No devices found for -----> Device Address: type=b200")');
});

test('open: refused options never reach the device', async () => {
  const d = new FakeDevice({ timed: true, lockSensor: true, tuneUs: 0, lockUs: 0, neverLocks: false, startLatency: 0, spp: 10, txChannels: 1, txSpp: 10 });
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
  const d = new FakeDevice({ timed: true, lockSensor: true, tuneUs: 0, lockUs: 0, neverLocks: false, startLatency: 0, spp: 10, txChannels: 1, txSpp: 10 });
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

// ---- transmit -------------------------------------------------------------

/** A burst of `count` samples labelled I = k, Q = -k. */
function burstData(count: number): Float32Array {
  const data = new Float32Array(2 * count);
  for (let k = 0; k < count; k++) {
    data[2 * k] = k;
    data[2 * k + 1] = -k;
  }
  return data;
}

const specUs = (t: TimeSpec | undefined): number => (t === undefined ? Number.NaN : Math.round((t.fullSecs + t.fracSecs) * 1e6));

test('transmit: open configures the transmit chain at the receive rate, its gain the lowest unless given', async () => {
  const a = await rig();
  assert.equal(a.fe.capabilities.canTransmitIq, true);
  assert.equal(a.d.txRate, FS);
  assert.equal(a.fe.txGainDb, 0, 'the least power by default');
  await a.fe.close();
  assert.equal(a.d.txStreamerFreed, 1, 'close frees the transmit streamer');
  const b = await rig({}, { txGainDb: 10.1, txAntenna: 'TX/RX' });
  assert.equal(b.fe.txGainDb, 10, 'the gain the device coerced to');
  assert.equal(b.d.txAntenna, 'TX/RX');
  await b.fe.close();
});

test('transmit: a timed burst is packets of maxNumSamps, start of burst and time on the first, end of burst on the last', async () => {
  const { d, fe } = await rig({ txSpp: 100 });
  await fe.tune(2.412e9);
  const atUs = nowUs(d) + 10_000;
  const report = await fe.transmitIq({ data: burstData(250), count: 250, atUs });
  assert.deepEqual(
    d.txSends.map((s) => [s.offset, s.count, s.md.startOfBurst, s.md.endOfBurst, s.firstI, s.lastI]),
    [
      [0, 100, true, false, 0, 99],
      [100, 100, false, false, 100, 199],
      [200, 50, false, true, 200, 249],
    ],
  );
  assert.equal(specUs(d.txSends[0]!.md.timeSpec), atUs, 'the first packet carries the burst time on the device clock');
  assert.ok(
    d.txSends.slice(1).every((s) => s.md.timeSpec === undefined),
    'later packets carry no time',
  );
  assert.ok(d.txSends[0]!.timeoutS >= 0.01 + 250 / FS, 'the send may wait until the burst is due and has gone');
  assert.deepEqual(report, { startUs: atUs, endUs: atUs + 250, late: false, sent: 250 });
  const c = fe.counters();
  assert.deepEqual([c.txBursts, c.txSamples, c.txLate, c.txUnderflows], [1, 250, 0, 0]);
  assert.deepEqual(d.txTunes, [{ hz: 2.412e9, commandTime: d.tunes[0]!.commandTime }], 'the transmit chain tunes with the same timed command');
  await fe.close();
});

test('transmit: a burst without a time starts a burst with no time spec and reports when it was handed over', async () => {
  const { d, fe } = await rig({ txSpp: 1000 });
  await fe.tune(2.412e9);
  const t0 = nowUs(d);
  const report = await fe.transmitIq({ data: burstData(300), count: 300 });
  assert.equal(d.txSends.length, 1);
  assert.deepEqual(d.txSends[0]!.md, { startOfBurst: true, endOfBurst: true });
  assert.deepEqual(report, { startUs: t0, endUs: t0 + 300, late: false, sent: 300 });
  await fe.close();
});

test('transmit: a short send goes on from where the device stopped, never repeating the start of burst', async () => {
  const { d, fe } = await rig({ txSpp: 100 });
  await fe.tune(2.412e9);
  d.txFaults.push({ kind: 'take' }, { kind: 'short', n: 30 });
  const atUs = nowUs(d) + 5000;
  const report = await fe.transmitIq({ data: burstData(250), count: 250, atUs });
  assert.deepEqual(
    d.txSends.map((s) => [s.offset, s.count, s.md.startOfBurst, s.md.endOfBurst]),
    [
      [0, 100, true, false],
      [100, 100, false, false],
      [130, 100, false, false],
      [230, 20, false, true],
    ],
  );
  assert.equal(report.sent, 250);
  await fe.close();
});

test('transmit: a burst asked for a time already past is reported late with nothing sent; the next burst is clean', async () => {
  const { d, fe } = await rig();
  await fe.tune(2.412e9);
  const lateAt = nowUs(d) - 1000;
  const nowAtSend = nowUs(d);
  const r = await fe.transmitIq({ data: burstData(150), count: 150, atUs: lateAt });
  assert.equal(r.late, true);
  assert.equal(r.sent, 0, 'the device drops a late burst');
  assert.equal(r.startUs, nowAtSend, 'when the device saw it late');
  assert.equal(fe.counters().txLate, 1);
  const atUs = nowUs(d) + 2000;
  const next = await fe.transmitIq({ data: burstData(50), count: 50, atUs });
  assert.deepEqual(next, { startUs: atUs, endUs: atUs + 50, late: false, sent: 50 });
  assert.equal(fe.counters().txLate, 1);
  await fe.close();
});

test('transmit: an underflow is counted, the samples still go out and the end comes later', async () => {
  const { d, fe } = await rig({ txSpp: 100 });
  await fe.tune(2.412e9);
  d.txFaults.push({ kind: 'take' }, { kind: 'underflow', us: 500 });
  const atUs = nowUs(d) + 3000;
  const r = await fe.transmitIq({ data: burstData(250), count: 250, atUs });
  assert.deepEqual(r, { startUs: atUs, endUs: atUs + 250 + 500, late: false, sent: 250 });
  assert.equal(fe.counters().txUnderflows, 1);
  await fe.close();
});

test('transmit: messages left from earlier bursts are counted, not taken for this burst', async () => {
  const { d, fe } = await rig();
  await fe.tune(2.412e9);
  d.asyncQueue.push(
    { eventCode: AsyncEvent.UNDERFLOW, channel: 0, timeSpec: undefined },
    { eventCode: AsyncEvent.BURST_ACK, channel: 0, timeSpec: d.spec(1) },
    { eventCode: AsyncEvent.SEQ_ERROR, channel: 0, timeSpec: undefined },
  );
  const atUs = nowUs(d) + 2000;
  const r = await fe.transmitIq({ data: burstData(40), count: 40, atUs });
  assert.deepEqual(r, { startUs: atUs, endUs: atUs + 40, late: false, sent: 40 });
  assert.equal(fe.counters().txUnderflows, 1);
  assert.equal(fe.counters().txSequenceErrors, 1);
  await fe.close();
});

test('transmit: a device that stops taking samples is RADIO_TX_TIMEOUT, the burst is ended, the next one goes', async () => {
  const { d, fe } = await rig({ txSpp: 100 });
  await fe.tune(2.412e9);
  d.txFaults.push({ kind: 'take' }, { kind: 'stall' });
  const e = await rejectsWith(fe.transmitIq({ data: burstData(250), count: 250 }), 'RADIO_TX_TIMEOUT');
  assert.match(e.message, /took 100 of 250 samples/);
  const end = d.txSends.at(-1)!;
  assert.deepEqual([end.count, end.md.startOfBurst, end.md.endOfBurst], [0, false, true], 'an empty end of burst closes it');
  const r = await fe.transmitIq({ data: burstData(10), count: 10 });
  assert.equal(r.sent, 10);
  await fe.close();
});

test('transmit: a send refused by UHD mid-burst is reported as UHD said, and the burst is ended', async () => {
  const { d, fe } = await rig({ txSpp: 100 });
  await fe.tune(2.412e9);
  const streamer = (fe as unknown as { tx: FakeTxStreamer }).tx;
  const send = streamer.send.bind(streamer);
  let calls = 0;
  streamer.send = async (...args) => {
    if (++calls === 2) throw new UhdCallError('uhd_tx_streamer_send', 44, 'RuntimeError: transport failed');
    return send(...args);
  };
  const e = await rejectsWith(fe.transmitIq({ data: burstData(250), count: 250 }), 'RADIO_UHD_ERROR');
  assert.match(e.message, /transport failed/);
  const end = d.txSends.at(-1)!;
  assert.deepEqual([end.count, end.md.endOfBurst], [0, true], 'an empty end of burst closes it');
  assert.equal(fe.counters().txSamples, 100);
  await fe.close();
});

test('transmit: no acknowledgement from the device is RADIO_TX_TIMEOUT', async () => {
  const { d, fe } = await rig();
  await fe.tune(2.412e9);
  d.noAck = true;
  const e = await rejectsWith(fe.transmitIq({ data: burstData(10), count: 10 }), 'RADIO_TX_TIMEOUT');
  assert.match(e.message, /did not acknowledge/);
  await fe.close();
});

test('transmit: refused before a tune, for bad bursts, on a receive-only device, and after close', async () => {
  const { fe } = await rig();
  await rejectsWith(fe.transmitIq({ data: burstData(10), count: 10 }), 'RADIO_NOT_TUNED');
  await fe.tune(2.412e9);
  await assert.rejects(fe.transmitIq({ data: burstData(10), count: 0 }), { code: 'CORE_OUT_OF_RANGE' });
  await assert.rejects(fe.transmitIq({ data: burstData(10), count: 11 }), { code: 'CORE_OUT_OF_RANGE' });
  await assert.rejects(fe.transmitIq({ data: burstData(10), count: 10, atUs: 1.5 }), { code: 'CORE_INVALID_TIME' });
  await fe.close();
  await rejectsWith(fe.transmitIq({ data: burstData(10), count: 10 }), 'RADIO_CLOSED');

  const rxOnly = await rig({ txChannels: 0 });
  assert.equal(rxOnly.fe.capabilities.canTransmitIq, false);
  assert.equal(rxOnly.fe.txGainDb, undefined);
  await rxOnly.fe.tune(2.412e9);
  const e = await rejectsWith(rxOnly.fe.transmitIq({ data: burstData(10), count: 10 }), 'RADIO_CANNOT_TRANSMIT');
  assert.match(e.message, /no transmit channel/);
  assert.equal(rxOnly.d.txTunes.length, 0, 'no transmit tune without a transmit chain');
  await rxOnly.fe.close();

  const none = await rig({ txChannels: 0 }, { txChannel: 0 });
  assert.equal(none.fe.capabilities.canTransmitIq, false, 'a device with no transmit chain is receive-only, channel given or not');
  await none.fe.close();

  const off = await rig({}, { transmit: false });
  assert.equal(off.fe.capabilities.canTransmitIq, false);
  await off.fe.close();
});

test('transmit: a missing transmit channel or a gain out of range is refused at open, the device freed', async () => {
  const d = new FakeDevice({ timed: true, lockSensor: true, tuneUs: 0, lockUs: 0, neverLocks: false, startLatency: 0, spp: 10, txChannels: 1, txSpp: 10 });
  const open = (o: Partial<UhdFrontendOptions>) => openUhdFrontend({ ...BASE, ...o }, { lib: fakeLib(d), clock: { now: () => OPEN_US } });
  const e = await rejectsWith(open({ txChannel: 1 }), 'RADIO_NO_TX_CHANNEL');
  assert.match(e.message, /transmit channel 1 asked, the device has transmit channels 0 to 0/);
  const g = await rejectsWith(open({ txGainDb: 95 }), 'RADIO_GAIN_RANGE');
  assert.match(g.message, /transmit gain 95 dB is outside the range \[0, 89.75\] dB/);
  await assert.rejects(open({ txChannel: -1 }), { code: 'CORE_OUT_OF_RANGE' });
  assert.equal(d.usrpFreed, 2);
  assert.equal(d.streamersMade, 0);
});

test('transmit: a binding that does not keep the metadata is refused at open', async () => {
  const d = new FakeDevice({ timed: true, lockSensor: true, tuneUs: 0, lockUs: 0, neverLocks: false, startLatency: 0, spp: 10, txChannels: 1, txSpp: 10 });
  // what a 32-bit time_t would do to a time in 2009
  const lib: UhdLib = { ...fakeLib(d), checkTxMetadata: (md) => ({ ...md, timeSpec: { fullSecs: 0, fracSecs: md.timeSpec?.fracSecs ?? 0 } }) };
  const e = await rejectsWith(openUhdFrontend(BASE, { lib, clock: { now: () => OPEN_US } }), 'RADIO_NO_LIBRARY');
  assert.match(e.message, /wrong time/);
  assert.equal(d.usrpFreed, 1);
  assert.equal(d.txStreamerFreed, 1);
});

test('transmit: calls run in order: a burst asked for during a read goes after it, a tune after the burst', async () => {
  const { d, fe } = await rig();
  await fe.tune(2.412e9);
  const done: string[] = [];
  const read = fe.readIq(300).then(() => done.push('read'));
  const burst = fe.transmitIq({ data: burstData(20), count: 20 }).then(() => done.push('burst'));
  const tune = fe.tune(2.462e9).then(() => done.push('tune'));
  await Promise.all([read, burst, tune]);
  assert.deepEqual(done, ['read', 'burst', 'tune']);
  assert.deepEqual(
    d.txTunes.map((t) => t.hz),
    [2.412e9, 2.462e9],
  );
  await fe.close();
});
