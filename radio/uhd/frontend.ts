import { FrontendError, RangeArgumentError } from '../../src/core/errors.js';
import { assertMicros, RealClock, US_PER_S, type Clock, type Micros } from '../../src/core/time.js';
import type { Frontend, FrontendCapabilities, IqBlock, ReceivedFrame, TuneResult, TxBurst, TxReport } from '../frontend.js';
import { deviceId, parseDeviceAddr } from './device-addr.js';
import { uhdLib } from './lib.js';
import {
  AsyncEvent,
  RxError,
  StreamMode,
  UhdCallError,
  type TimeSpec,
  type TxMetadata,
  type UhdLib,
  type UhdRxStreamer,
  type UhdTuneResult,
  type UhdTxStreamer,
  type UhdUsrp,
} from './api.js';

/** How a retune is issued: as a timed command when the device has them (`auto`), always (`timed`) or never (`plain`). */
export type RetuneMode = 'auto' | 'timed' | 'plain';

export interface UhdFrontendOptions {
  /** UHD device arguments: '' for the first device found, `type=b200`, `serial=30F1A2B`, ... */
  deviceArgs: string;
  /** Complex samples per second; UHD may coerce it, `capabilities.sampleRateHz` is what it set. */
  sampleRateHz: number;
  /** Overall receive gain (all stages), within the device's range. */
  gainDb: number;
  /** dBm at the antenna port of a full-scale signal (mean |x|^2 = 1) at 0 dB gain, measured for this device and band. */
  calibrationDb: number;
  /** Receive channel (default 0; 1 is the B210's second chain). */
  channel?: number;
  /** Receive antenna port, e.g. `RX2` or `TX/RX` on a B200 (default: UHD's). */
  antenna?: string;
  /** Sample format on the wire (default sc16). */
  otwFormat?: 'sc16' | 'sc8';
  /** Streamer arguments, e.g. `spp=256` (default none). */
  streamArgs?: string;
  /** Default `auto`. */
  retune?: RetuneMode;
  /** A timed tune takes effect this long after it is asked for (default 2000 µs). */
  timedTuneLeadUs?: Micros;
  /** Time allowed for the LO to lock after the tune takes effect (default 500 µs). */
  loSettleUs?: Micros;
  /** A tune whose LO is not locked after this long is refused with RADIO_LO_UNLOCKED (default 20000 µs). */
  lockTimeoutUs?: Micros;
  /** Interval between reads of the `lo_locked` sensor (default 200 µs). */
  lockPollUs?: Micros;
  /** Longest wait for a packet on top of the block's own duration before RADIO_TIMEOUT (default 100000 µs). */
  recvTimeoutUs?: Micros;
  /** `capabilities.retuneUs` (default: lead + settle when timed, 2000 µs plain); `TuneResult.retuneUs` is measured. */
  retuneEstimateUs?: Micros;
  /** Set the device's clock to `clock.now()` at open, so that block times are node times (default true). */
  setDeviceTime?: boolean;
  /** Overflows and stream errors one read recovers from before it gives up (default 8). */
  maxRecoveriesPerRead?: number;
  /** Drive the transmit chain when the device has one (default true); false keeps the front-end receive-only. */
  transmit?: boolean;
  /**
   * Transmit channel (default: the receive channel). Given, and missing from
   * a device that has transmit channels, it is refused with
   * RADIO_NO_TX_CHANNEL; a device with none is receive-only.
   */
  txChannel?: number;
  /** Transmit antenna port, e.g. `TX/RX` on a B200 (default: UHD's). */
  txAntenna?: string;
  /** Overall transmit gain (all stages) within the device's range (default: the lowest, the least power). */
  txGainDb?: number;
  /** Longest wait for buffer space, and for the burst's acknowledgement, beyond the burst's own time (default 100000 µs). */
  txTimeoutUs?: Micros;
}

export interface UhdFrontendParts {
  /** The libuhd calls (default: the real library, loaded on first use). */
  lib?: UhdLib;
  /** Node time, written into the device at open (default RealClock). */
  clock?: Clock;
  /** Waits; tests pass one that advances their fake device (default timers). */
  sleep?: (us: Micros) => Promise<void>;
}

/** Named counters of one front-end, for the control API. */
export interface UhdCounters {
  blocks: number;
  /** Overruns: the host did not read fast enough and the device dropped samples. */
  overflows: number;
  /** Packets lost between device and host (UHD's 'D'). */
  sequenceErrors: number;
  /** Samples lost before blocks, summed over blocks (`IqBlock.droppedSamples`). */
  droppedSamples: number;
  /** Streaming restarted after an overflow, a timeout or a late command. */
  streamRestarts: number;
  timeouts: number;
  /** Samples thrown away because they were taken before a retune had settled. */
  deafSamples: number;
  retunes: number;
  /** Timed tunes UHD finished sending only after their command time (their settle counts from then). */
  lateTimedTunes: number;
  /** Bursts handed to the transmit streamer, and their samples. */
  txBursts: number;
  txSamples: number;
  /** Bursts whose time was past when they reached the device (dropped by it). */
  txLate: number;
  /** Underflows the device reported (it sent zeros while it waited for samples). */
  txUnderflows: number;
  /** Packets lost between host and device on the way out. */
  txSequenceErrors: number;
}

const DEFAULTS = {
  channel: 0,
  otwFormat: 'sc16',
  streamArgs: '',
  retune: 'auto',
  timedTuneLeadUs: 2000,
  loSettleUs: 500,
  lockTimeoutUs: 20_000,
  lockPollUs: 200,
  recvTimeoutUs: 100_000,
  txTimeoutUs: 100_000,
  plainRetuneEstimateUs: 2000,
  maxRecoveriesPerRead: 8,
} as const;

const LO_LOCKED = 'lo_locked';

const defaultSleep = (us: Micros): Promise<void> => new Promise((resolve) => setTimeout(resolve, us / 1000));

/** UHD's multi-line messages on one line. */
const oneLine = (s: string): string => s.replace(/\s*\n\s*/g, ' ').trim();

function checkOptions(opts: UhdFrontendOptions): void {
  if (typeof opts.deviceArgs !== 'string') throw new RangeArgumentError('deviceArgs', opts.deviceArgs, 'a string of UHD device arguments');
  if (!(opts.sampleRateHz > 0) || !Number.isFinite(opts.sampleRateHz)) {
    throw new RangeArgumentError('sampleRateHz', opts.sampleRateHz, 'a finite number > 0');
  }
  if (!Number.isFinite(opts.gainDb)) throw new RangeArgumentError('gainDb', opts.gainDb, 'a finite number');
  if (!Number.isFinite(opts.calibrationDb)) throw new RangeArgumentError('calibrationDb', opts.calibrationDb, 'a finite number');
  const chan = opts.channel ?? DEFAULTS.channel;
  if (!Number.isSafeInteger(chan) || chan < 0) throw new RangeArgumentError('channel', chan, 'an integer >= 0');
  const txChan = opts.txChannel;
  if (txChan !== undefined && (!Number.isSafeInteger(txChan) || txChan < 0)) throw new RangeArgumentError('txChannel', txChan, 'an integer >= 0');
  if (opts.txGainDb !== undefined && !Number.isFinite(opts.txGainDb)) throw new RangeArgumentError('txGainDb', opts.txGainDb, 'a finite number');
  if (opts.txAntenna !== undefined && typeof opts.txAntenna !== 'string') throw new RangeArgumentError('txAntenna', opts.txAntenna, 'a string');
  for (const k of ['timedTuneLeadUs', 'loSettleUs', 'lockTimeoutUs', 'lockPollUs', 'recvTimeoutUs', 'retuneEstimateUs', 'txTimeoutUs'] as const) {
    const v = opts[k];
    if (v !== undefined) assertMicros(k, v);
  }
  if (opts.timedTuneLeadUs !== undefined && opts.timedTuneLeadUs <= 0) {
    throw new RangeArgumentError('timedTuneLeadUs', opts.timedTuneLeadUs, 'an integer > 0');
  }
  const rec = opts.maxRecoveriesPerRead;
  if (rec !== undefined && (!Number.isSafeInteger(rec) || rec < 0)) throw new RangeArgumentError('maxRecoveriesPerRead', rec, 'an integer >= 0');
  const mode = opts.retune;
  if (mode !== undefined && mode !== 'auto' && mode !== 'timed' && mode !== 'plain') {
    throw new RangeArgumentError('retune', mode, "'auto', 'timed' or 'plain'");
  }
}

function checkBurst(b: TxBurst): void {
  if (!Number.isSafeInteger(b.count) || b.count <= 0) throw new RangeArgumentError('burst.count', b.count, 'an integer > 0');
  if (!(b.data instanceof Float32Array) || b.data.length < 2 * b.count) {
    throw new RangeArgumentError('burst.data', b.data?.length, `a Float32Array of at least ${2 * b.count} floats (2 per complex sample)`);
  }
  if (b.atUs !== undefined) assertMicros('burst.atUs', b.atUs);
}

/**
 * Opens a USRP through libuhd. It asks UHD to find devices first; when none
 * answers it still asks UHD to open `deviceArgs` (a device can be reachable
 * without answering discovery), and when that fails too it refuses with
 * `RADIO_NO_DEVICE`, quoting UHD.
 */
export async function openUhdFrontend(opts: UhdFrontendOptions, parts: UhdFrontendParts = {}): Promise<UhdFrontend> {
  checkOptions(opts);
  const lib = parts.lib ?? uhdLib();
  const args = opts.deviceArgs;
  const found = await lib.find(args);
  let usrp: UhdUsrp;
  try {
    usrp = await lib.makeUsrp(args);
  } catch (e) {
    if (found.length === 0 && e instanceof UhdCallError) {
      throw new FrontendError('RADIO_NO_DEVICE', `no USRP found (device args "${args}": UHD said "${oneLine(e.uhdText)}")`, { cause: e });
    }
    throw e;
  }
  let fe: UhdFrontend;
  try {
    fe = new UhdFrontend(usrp, found[0] ?? '', opts, parts);
  } catch (e) {
    try {
      usrp.free();
    } catch {
      // the error that stopped the open is the one to report
    }
    throw e;
  }
  if (fe.capabilities.canTransmitIq) {
    try {
      checkTxBinding(lib);
    } catch (e) {
      await fe.close();
      throw e;
    }
  }
  return fe;
}

/** A timed start of burst, made by UHD and read back: a binding that got time_t's width wrong would move every burst. */
function checkTxBinding(lib: UhdLib): void {
  const md: TxMetadata = { startOfBurst: true, endOfBurst: false, timeSpec: { fullSecs: 1_234_567_890, fracSecs: 0.25 } };
  const back = lib.checkTxMetadata(md);
  const same = back.startOfBurst && !back.endOfBurst && back.timeSpec?.fullSecs === md.timeSpec?.fullSecs && back.timeSpec?.fracSecs === md.timeSpec?.fracSecs;
  if (!same) {
    throw new FrontendError(
      'RADIO_NO_LIBRARY',
      `${lib.path}: transmit metadata does not survive the binding (made ${JSON.stringify(md)}, UHD holds ${JSON.stringify(back)}); bursts would go out at the wrong time`,
    );
  }
}

/**
 * A USRP as a cogmesh front-end: its receive chain, and its transmit chain
 * for bursts of samples (`transmitIq`; no PHY yet, so no frames).
 *
 * Samples stream continuously from the first read on, and each block
 * continues where the previous one ended, stamped with the device's time of
 * its first sample (the device clock is set to node time at open). An
 * overflow or a lost packet leaves a gap: the samples lost, measured from the
 * time stamps, are the next block's `droppedSamples`, a block never spans a
 * gap, and after an overrun the stream is restarted. A receive timeout is
 * refused with `RADIO_TIMEOUT`, never an empty or short block; the next read
 * restarts the stream.
 *
 * A retune is a timed command when the device has them: it takes effect
 * `timedTuneLeadUs` after the request, samples are valid `loSettleUs` later
 * (checked against the `lo_locked` sensor), and samples stamped before that
 * are thrown away. Otherwise the tune is sent at once and samples are valid
 * from when the sensor reports the LO locked. `TuneResult.retuneUs` is the
 * device time from the request until samples are valid.
 *
 * The transmit chain, when the device has one (and `transmit` is not
 * false), runs at the receive sample rate and follows every tune (the same
 * timed command). A burst is sent in packets of at most the streamer's
 * `maxNumSamps`, the first with start of burst and, for a timed burst, the
 * device time of `atUs` (the clock of the blocks' `startUs`), the last with
 * end of burst; then the front-end waits for the device's acknowledgement.
 * A burst whose time was past when it reached the device is dropped by it
 * (UHD's time error): it is reported `late` with `sent` 0. Underflows are
 * counted (`txUnderflows`): the device sent zeros meanwhile, the samples
 * still went out, later.
 *
 * Calls run one at a time, in the order made: a tune asked for during a read
 * takes effect after it, and reads wait while a burst is sent (samples
 * received meanwhile wait in UHD's buffers).
 */
export class UhdFrontend implements Frontend {
  readonly kind = 'uhd' as const;
  readonly id: string;
  readonly capabilities: FrontendCapabilities;
  /** The device address UHD's discovery reported ({} when it was opened without being found). */
  readonly device: Readonly<Record<string, string>>;
  /** Whether retunes are timed commands. */
  readonly timedRetune: boolean;
  /** Whether the device reports `lo_locked`. */
  readonly hasLockSensor: boolean;

  private readonly chan: number;
  private readonly rx: UhdRxStreamer;
  /** The transmit streamer, undefined for a receive-only front-end (`txWhyNot` says why). */
  private readonly tx: UhdTxStreamer | undefined;
  private readonly txChan: number;
  private readonly txWhyNot: string;
  private readonly txTimeoutUs: Micros;
  private txGain: number | undefined;
  private readonly sleep: (us: Micros) => Promise<void>;
  private readonly baseCalibrationDb: number;
  private readonly timedTuneLeadUs: Micros;
  private readonly loSettleUs: Micros;
  private readonly lockTimeoutUs: Micros;
  private readonly lockPollUs: Micros;
  private readonly recvTimeoutUs: Micros;
  private readonly maxRecoveries: number;
  /** Whole seconds of device time that relative times count from. */
  private readonly epochSecs: number;
  private readonly counts: UhdCounters = {
    blocks: 0,
    overflows: 0,
    sequenceErrors: 0,
    droppedSamples: 0,
    streamRestarts: 0,
    timeouts: 0,
    deafSamples: 0,
    retunes: 0,
    lateTimedTunes: 0,
    txBursts: 0,
    txSamples: 0,
    txLate: 0,
    txUnderflows: 0,
    txSequenceErrors: 0,
  };
  private readonly listeners = new Set<(frame: ReceivedFrame) => void>();
  private center: number | undefined;
  private gain: number;
  private lastTune: UhdTuneResult | undefined;
  private lastTxTune: UhdTuneResult | undefined;
  private streaming = false;
  private streamedOnce = false;
  /** Where the stream goes on (seconds after epochSecs), once known. */
  private nextRel: number | undefined;
  /** Samples before this (seconds after epochSecs) were taken during a retune. */
  private validFromRel = Number.NEGATIVE_INFINITY;
  private tail: Promise<unknown> = Promise.resolve();
  private closing: Promise<void> | undefined;

  /**
   * Configures an open device; `usrp` is the device's bound libuhd calls
   * (tests pass a fake). `found` is UHD's address string for it, '' if none.
   */
  constructor(
    private readonly usrp: UhdUsrp,
    found: string,
    opts: UhdFrontendOptions,
    parts: Omit<UhdFrontendParts, 'lib'> = {},
  ) {
    checkOptions(opts);
    this.device = parseDeviceAddr(found);
    this.id = deviceId(this.device, opts.deviceArgs === '' ? 'usrp' : opts.deviceArgs);
    this.chan = opts.channel ?? DEFAULTS.channel;
    this.sleep = parts.sleep ?? defaultSleep;
    this.baseCalibrationDb = opts.calibrationDb;
    this.timedTuneLeadUs = opts.timedTuneLeadUs ?? DEFAULTS.timedTuneLeadUs;
    this.loSettleUs = opts.loSettleUs ?? DEFAULTS.loSettleUs;
    this.lockTimeoutUs = opts.lockTimeoutUs ?? DEFAULTS.lockTimeoutUs;
    this.lockPollUs = opts.lockPollUs ?? DEFAULTS.lockPollUs;
    this.recvTimeoutUs = opts.recvTimeoutUs ?? DEFAULTS.recvTimeoutUs;
    this.maxRecoveries = opts.maxRecoveriesPerRead ?? DEFAULTS.maxRecoveriesPerRead;

    if (opts.antenna !== undefined) usrp.setRxAntenna(opts.antenna, this.chan);
    usrp.setRxRate(opts.sampleRateHz, this.chan);
    const sampleRateHz = usrp.getRxRate(this.chan);
    if (!(sampleRateHz > 0)) {
      throw new FrontendError('RADIO_UHD_ERROR', `${this.id}: UHD reports a sample rate of ${sampleRateHz} after setting ${opts.sampleRateHz}`);
    }
    const gainRangeDb = usrp.rxGainRange(this.chan);
    this.checkGain(opts.gainDb, gainRangeDb);
    usrp.setRxGain(opts.gainDb, this.chan);
    this.gain = usrp.getRxGain(this.chan);
    let tuneRangeHz = usrp.rxFreqRange(this.chan);

    this.txChan = opts.txChannel ?? this.chan;
    this.txTimeoutUs = opts.txTimeoutUs ?? DEFAULTS.txTimeoutUs;
    const txChannels = usrp.txNumChannels();
    let transmit = false;
    if (opts.transmit === false) {
      this.txWhyNot = 'transmit is off in its options';
    } else if (txChannels <= this.txChan) {
      if (txChannels > 0 && opts.txChannel !== undefined) {
        throw new FrontendError(
          'RADIO_NO_TX_CHANNEL',
          `${this.id}: transmit channel ${this.txChan} asked, the device has transmit channels 0 to ${txChannels - 1}`,
        );
      }
      this.txWhyNot =
        txChannels === 0
          ? 'the device has no transmit channel (or this libuhd lacks the transmit calls)'
          : `the device has no transmit channel ${this.txChan} (transmit channels 0 to ${txChannels - 1})`;
    } else {
      this.txWhyNot = '';
      transmit = true;
      tuneRangeHz = this.setUpTransmit(opts, sampleRateHz, tuneRangeHz);
    }

    if (opts.setDeviceTime ?? true) {
      const nowUs = (parts.clock ?? new RealClock()).now();
      this.epochSecs = Math.floor(nowUs / US_PER_S);
      usrp.setTimeNow(this.spec((nowUs - this.epochSecs * US_PER_S) / US_PER_S));
    } else {
      this.epochSecs = usrp.timeNow().fullSecs;
    }
    this.timedRetune = this.probeTimedCommands(opts.retune ?? DEFAULTS.retune);
    this.hasLockSensor = usrp.rxSensorNames(this.chan).includes(LO_LOCKED);

    this.capabilities = {
      sampleRateHz,
      tuneRangeHz: [tuneRangeHz[0], tuneRangeHz[1]],
      gainRangeDb: [gainRangeDb[0], gainRangeDb[1]],
      retuneUs: opts.retuneEstimateUs ?? (this.timedRetune ? this.timedTuneLeadUs + this.loSettleUs : DEFAULTS.plainRetuneEstimateUs),
      canTransmit: false,
      canTransmitIq: transmit,
    };
    // last, so that a failure before leaves nothing but the device to free
    const streamArgs = { otwFormat: opts.otwFormat ?? DEFAULTS.otwFormat, args: opts.streamArgs ?? DEFAULTS.streamArgs };
    this.rx = usrp.rxStream({ ...streamArgs, channel: this.chan });
    try {
      this.tx = transmit ? usrp.txStream({ ...streamArgs, channel: this.txChan }) : undefined;
    } catch (e) {
      this.rx.free();
      throw e;
    }
  }

  /** Configures the transmit chain; returns the tuning range both chains share. */
  private setUpTransmit(opts: UhdFrontendOptions, sampleRateHz: number, rxRange: readonly [number, number]): readonly [number, number] {
    const usrp = this.usrp;
    if (opts.txAntenna !== undefined) usrp.setTxAntenna(opts.txAntenna, this.txChan);
    usrp.setTxRate(sampleRateHz, this.txChan);
    const txRate = usrp.getTxRate(this.txChan);
    if (Math.abs(txRate - sampleRateHz) > 1e-9 * sampleRateHz) {
      throw new FrontendError(
        'RADIO_UHD_ERROR',
        `${this.id}: UHD set the transmit rate to ${txRate} S/s for a receive rate of ${sampleRateHz} S/s; bursts are at the receive rate`,
      );
    }
    const range = usrp.txGainRange(this.txChan);
    const gain = opts.txGainDb ?? range[0];
    this.checkGain(gain, range, 'transmit gain');
    usrp.setTxGain(gain, this.txChan);
    this.txGain = usrp.getTxGain(this.txChan);
    const txRange = usrp.txFreqRange(this.txChan);
    const lo = Math.max(rxRange[0], txRange[0]);
    const hi = Math.min(rxRange[1], txRange[1]);
    if (!(lo <= hi)) {
      throw new FrontendError(
        'RADIO_TUNE_RANGE',
        `${this.id}: the receive range [${rxRange[0]}, ${rxRange[1]}] Hz and the transmit range [${txRange[0]}, ${txRange[1]}] Hz do not overlap`,
      );
    }
    return [lo, hi];
  }

  get centerHz(): number | undefined {
    return this.center;
  }

  get gainDb(): number {
    return this.gain;
  }

  /** The transmit gain the device set, undefined for a receive-only front-end. */
  get txGainDb(): number | undefined {
    return this.txGain;
  }

  /** What UHD reported for the last tune (RF and DSP parts), undefined before the first. */
  get lastTuneResult(): UhdTuneResult | undefined {
    return this.lastTune;
  }

  /** What UHD reported for the transmit chain's last tune, undefined before the first or when receive-only. */
  get lastTxTuneResult(): UhdTuneResult | undefined {
    return this.lastTxTune;
  }

  counters(): Readonly<UhdCounters> {
    return { ...this.counts };
  }

  calibrationDb(): number {
    return this.baseCalibrationDb - this.gain;
  }

  tune(centerHz: number): Promise<TuneResult> {
    if (this.closing !== undefined) return Promise.reject(this.closedError());
    const [lo, hi] = this.capabilities.tuneRangeHz;
    if (!(centerHz >= lo && centerHz <= hi)) {
      return Promise.reject(new FrontendError('RADIO_TUNE_RANGE', `${this.id}: ${centerHz} Hz is outside the tuning range [${lo}, ${hi}] Hz`));
    }
    return this.serial(async () => {
      const requestedRel = this.nowRel();
      const validRel = this.timedRetune ? await this.timedTune(centerHz, requestedRel) : await this.plainTune(centerHz);
      this.center = centerHz;
      this.validFromRel = validRel;
      this.counts.retunes++;
      return { centerHz, retuneUs: Math.max(0, Math.round((validRel - requestedRel) * US_PER_S)) };
    });
  }

  setGain(gainDb: number): Promise<void> {
    if (this.closing !== undefined) return Promise.reject(this.closedError());
    try {
      this.checkGain(gainDb, this.capabilities.gainRangeDb);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.serial(async () => {
      this.usrp.setRxGain(gainDb, this.chan);
      this.gain = this.usrp.getRxGain(this.chan);
    });
  }

  readIq(count: number, into?: Float32Array): Promise<IqBlock> {
    if (this.closing !== undefined) return Promise.reject(this.closedError());
    if (this.center === undefined) return Promise.reject(this.notTuned());
    if (!Number.isSafeInteger(count) || count <= 0) {
      return Promise.reject(new RangeArgumentError('count', count, 'an integer > 0'));
    }
    if (into !== undefined && into.length < 2 * count) {
      return Promise.reject(new RangeArgumentError('into', into.length, `a buffer of at least ${2 * count} floats (2 per complex sample)`));
    }
    return this.serial(() => this.receive(count, into ?? new Float32Array(2 * count)));
  }

  send(_bytes: Uint8Array): Promise<void> {
    if (this.closing !== undefined) return Promise.reject(this.closedError());
    return Promise.reject(new FrontendError('RADIO_CANNOT_TRANSMIT', `${this.id}: the UHD front-end has no PHY in this release and receives only`));
  }

  /**
   * Sends `burst` at the current centre frequency, at `burst.atUs` on the
   * device clock or as soon as possible, and resolves once the device has
   * acknowledged its end (or reported it late). RADIO_TX_TIMEOUT when the
   * device takes no samples, or sends no acknowledgement, within the
   * burst's time plus `txTimeoutUs` (the burst is ended where it stopped).
   */
  transmitIq(burst: TxBurst): Promise<TxReport> {
    if (this.closing !== undefined) return Promise.reject(this.closedError());
    const tx = this.tx;
    if (tx === undefined) return Promise.reject(new FrontendError('RADIO_CANNOT_TRANSMIT', `${this.id}: receive-only: ${this.txWhyNot}`));
    if (this.center === undefined) return Promise.reject(new FrontendError('RADIO_NOT_TUNED', `${this.id}: tune before transmitting`));
    try {
      checkBurst(burst);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.serial(() => this.transmit(burst, tx));
  }

  /** Frames need a PHY, which this release does not have: listeners are kept but never called. */
  onFrame(listener: (frame: ReceivedFrame) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Stops streaming and frees the streamer and the device, once the call in
   * progress (a receive runs on a worker thread) has ended; calls still
   * queued are refused with RADIO_CLOSED. Closing again returns the same
   * promise.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    await this.tail;
    this.listeners.clear();
    try {
      if (this.streaming) this.rx.issueStreamCmd({ mode: StreamMode.STOP_CONTINUOUS });
    } finally {
      this.streaming = false;
      try {
        this.rx.free();
        this.tx?.free();
      } finally {
        this.usrp.free();
      }
    }
  }

  /** Runs `op` after every call made before it; refused once closing. */
  private serial<T>(op: () => Promise<T>): Promise<T> {
    const run = this.tail.then(() => {
      if (this.closing !== undefined) throw this.closedError();
      return op();
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  // ---- retune -------------------------------------------------------------

  /** Whether timed commands are to be used: `auto` tries one (set then cleared) and falls back to plain. */
  private probeTimedCommands(mode: RetuneMode): boolean {
    if (mode === 'plain') return false;
    try {
      this.usrp.setCommandTime(this.spec(this.nowRel() + 1));
      this.usrp.clearCommandTime();
      return true;
    } catch (e) {
      if (mode === 'timed') {
        throw new FrontendError('RADIO_NO_TIMED_TUNE', `${this.id}: timed commands refused: ${e instanceof Error ? e.message : String(e)}`, {
          cause: e,
        });
      }
      return false;
    }
  }

  /** Returns when samples are valid again (seconds after epochSecs). */
  private async timedTune(centerHz: number, requestedRel: number): Promise<number> {
    const atRel = requestedRel + this.timedTuneLeadUs / US_PER_S;
    this.usrp.setCommandTime(this.spec(atRel));
    try {
      this.lastTune = await this.usrp.setRxFreq(centerHz, this.chan);
      if (this.tx !== undefined) this.lastTxTune = await this.usrp.setTxFreq(centerHz, this.txChan);
    } finally {
      this.usrp.clearCommandTime();
    }
    let validRel = atRel + this.loSettleUs / US_PER_S;
    const sentRel = this.nowRel();
    if (sentRel > atRel) {
      // the device ran the late commands as they came: settle from the last one
      this.counts.lateTimedTunes++;
      validRel = Math.max(validRel, sentRel + this.loSettleUs / US_PER_S);
    }
    await this.sleepUntil(validRel);
    if (this.hasLockSensor) {
      const lock = await this.waitForLock(centerHz);
      if (!lock.firstPoll) validRel = Math.max(validRel, lock.atRel);
    }
    return validRel;
  }

  private async plainTune(centerHz: number): Promise<number> {
    this.lastTune = await this.usrp.setRxFreq(centerHz, this.chan);
    if (this.tx !== undefined) this.lastTxTune = await this.usrp.setTxFreq(centerHz, this.txChan);
    if (this.hasLockSensor) return (await this.waitForLock(centerHz)).atRel;
    const validRel = this.nowRel() + this.loSettleUs / US_PER_S;
    await this.sleepUntil(validRel);
    return validRel;
  }

  /** Polls `lo_locked` until it is true; `atRel` is the device time it was seen true. */
  private async waitForLock(centerHz: number): Promise<{ firstPoll: boolean; atRel: number }> {
    const startRel = this.nowRel();
    for (let poll = 0; ; poll++) {
      const locked = await this.usrp.rxSensorBool(LO_LOCKED, this.chan);
      const atRel = this.nowRel();
      if (locked) return { firstPoll: poll === 0, atRel };
      if ((atRel - startRel) * US_PER_S >= this.lockTimeoutUs) {
        throw new FrontendError('RADIO_LO_UNLOCKED', `${this.id}: LO not locked ${this.lockTimeoutUs} us after tuning to ${centerHz} Hz`);
      }
      await this.sleep(this.lockPollUs);
    }
  }

  // ---- streaming ----------------------------------------------------------

  private async receive(count: number, data: Float32Array): Promise<IqBlock> {
    const fs = this.capabilities.sampleRateHz;
    const centerHz = this.center as number;
    const calibrationDb = this.calibrationDb();
    const timeoutS = (this.recvTimeoutUs + (count * US_PER_S) / fs) / US_PER_S;
    if (!this.streaming) this.startStream();
    let filled = 0;
    let startRel = 0;
    let dropped = 0;
    let recoveries = 0;
    const recover = (what: string): void => {
      if (++recoveries > this.maxRecoveries) {
        throw new FrontendError('RADIO_STREAM', `${this.id}: gave up a read of ${count} samples after ${this.maxRecoveries} recoveries (last: ${what})`);
      }
      // a block never spans a gap: what it held is lost to it
      dropped += filled;
      filled = 0;
    };
    while (filled < count) {
      const r = await this.rx.recv(data, filled, count - filled, timeoutS);
      const md = r.md;
      if (md.errorCode === RxError.TIMEOUT) {
        this.counts.timeouts++;
        this.streaming = false;
        throw new FrontendError(
          'RADIO_TIMEOUT',
          `${this.id}: no samples within ${Math.round(timeoutS * 1000)} ms (UHD: "${oneLine(md.text)}"); streaming restarts on the next read`,
        );
      }
      if (md.errorCode === RxError.OVERFLOW) {
        if (md.outOfSequence) {
          this.counts.sequenceErrors++;
        } else {
          this.counts.overflows++;
          this.restartStream();
        }
        recover(md.outOfSequence ? 'sequence error' : 'overflow');
        continue;
      }
      if (md.errorCode === RxError.LATE_COMMAND || md.errorCode === RxError.BROKEN_CHAIN) {
        this.restartStream();
        recover(oneLine(md.text));
        continue;
      }
      if (md.errorCode !== RxError.NONE) {
        throw new FrontendError('RADIO_STREAM', `${this.id}: receive failed: UHD said "${oneLine(md.text)}" (error code 0x${md.errorCode.toString(16)})`);
      }
      let n = r.samples;
      if (n === 0) {
        recover('a receive with no samples and no error');
        continue;
      }
      let t = md.timeSpec !== undefined ? this.rel(md.timeSpec) : (this.nextRel ?? this.nowRel());
      let at = filled;
      if (this.nextRel !== undefined) {
        // samples missing between where the stream was and this packet; none count while deaf
        const lost = Math.round((t - Math.max(this.nextRel, this.validFromRel)) * fs);
        if (lost > 0) {
          dropped += lost + filled;
          if (filled > 0) data.copyWithin(0, 2 * filled, 2 * (filled + n));
          filled = 0;
          at = 0;
        }
      }
      this.nextRel = t + n / fs;
      if (t < this.validFromRel) {
        const deaf = Math.min(n, Math.ceil((this.validFromRel - t) * fs - 1e-6));
        this.counts.deafSamples += deaf;
        if (deaf === n) continue;
        data.copyWithin(2 * at, 2 * (at + deaf), 2 * (at + n));
        t += deaf / fs;
        n -= deaf;
      }
      if (at === 0) startRel = t;
      filled = at + n;
    }
    this.counts.blocks++;
    this.counts.droppedSamples += dropped;
    return {
      data,
      count,
      startUs: this.toMicros(startRel),
      sampleRateHz: fs,
      centerHz,
      calibrationDb,
      droppedSamples: dropped,
    };
  }

  private startStream(): void {
    if (this.streamedOnce) {
      this.restartStream();
      return;
    }
    this.rx.issueStreamCmd({ mode: StreamMode.START_CONTINUOUS });
    this.streaming = true;
    this.streamedOnce = true;
  }

  /**
   * Stop, then start now. UHD 4.3 already re-arms some devices after an
   * overrun (rx_vita_core_3000); doing it here as well makes the restart the
   * same on every device, and the samples it costs are counted from the time
   * stamps like any other gap.
   */
  private restartStream(): void {
    this.rx.issueStreamCmd({ mode: StreamMode.STOP_CONTINUOUS });
    this.rx.issueStreamCmd({ mode: StreamMode.START_CONTINUOUS });
    this.streaming = true;
    this.counts.streamRestarts++;
  }

  // ---- transmit -----------------------------------------------------------

  private async transmit(b: TxBurst, tx: UhdTxStreamer): Promise<TxReport> {
    const fs = this.capabilities.sampleRateHz;
    // messages that came after an earlier burst's wait (a late ACK) are not this burst's
    await this.drainAsync(tx);
    const sendRel = this.nowRel();
    const atRel = b.atUs === undefined ? undefined : (b.atUs - this.epochSecs * US_PER_S) / US_PER_S;
    const durationS = b.count / fs;
    const waitS = Math.max(0, (atRel ?? sendRel) - sendRel) + durationS + this.txTimeoutUs / US_PER_S;
    const packet = Math.max(1, tx.maxNumSamps);
    this.counts.txBursts++;
    let off = 0;
    try {
      while (off < b.count) {
        const n = Math.min(packet, b.count - off);
        const md: TxMetadata =
          off === 0 && atRel !== undefined
            ? { startOfBurst: true, endOfBurst: n === b.count, timeSpec: this.spec(atRel) }
            : { startOfBurst: off === 0, endOfBurst: off + n === b.count };
        const took = await tx.send(b.data, off, n, md, waitS);
        if (took === 0) {
          throw new FrontendError(
            'RADIO_TX_TIMEOUT',
            `${this.id}: the device took ${off} of ${b.count} samples of a burst, then none within ${Math.round(waitS * 1000)} ms; the burst was ended there`,
          );
        }
        off += took;
      }
    } catch (e) {
      // end the burst where it stopped, so that the next one starts clean (best effort: the first error is the one to report)
      try {
        await tx.send(b.data, 0, 0, { startOfBurst: false, endOfBurst: true }, this.txTimeoutUs / US_PER_S);
      } catch {
        // already reporting why the burst stopped
      }
      throw e;
    } finally {
      this.counts.txSamples += off;
    }

    let late: TimeSpec | null | undefined;
    let ack: TimeSpec | null | undefined;
    while (ack === undefined) {
      const msg = await tx.recvAsyncMsg(late === undefined ? waitS : this.txTimeoutUs / US_PER_S);
      if (msg === undefined) break;
      if ((msg.eventCode & AsyncEvent.BURST_ACK) !== 0) ack = msg.timeSpec ?? null;
      if ((msg.eventCode & AsyncEvent.TIME_ERROR) !== 0 && late === undefined) {
        late = msg.timeSpec ?? null;
        this.counts.txLate++;
      }
      this.countTxEvent(msg.eventCode);
    }
    if (late !== undefined) {
      // the device drops a late packet and the rest of its burst
      const at = this.toMicros(late === null ? this.nowRel() : this.rel(late));
      return { startUs: at, endUs: at, late: true, sent: 0 };
    }
    if (ack === undefined) {
      throw new FrontendError(
        'RADIO_TX_TIMEOUT',
        `${this.id}: the device took all ${b.count} samples of a burst but did not acknowledge its end within ${Math.round(waitS * 1000)} ms`,
      );
    }
    const startUs = this.toMicros(atRel ?? sendRel);
    const computedEnd = startUs + Math.round(durationS * US_PER_S);
    // an underflow stretches the burst: the acknowledgement's time stamp says by how much
    const endUs = ack === null ? computedEnd : Math.max(computedEnd, this.toMicros(this.rel(ack)));
    return { startUs, endUs, late: false, sent: off };
  }

  /** Counts the messages waiting from earlier bursts. */
  private async drainAsync(tx: UhdTxStreamer): Promise<void> {
    for (let i = 0; i < 256; i++) {
      const msg = await tx.recvAsyncMsg(0);
      if (msg === undefined) return;
      this.countTxEvent(msg.eventCode);
    }
  }

  private countTxEvent(code: number): void {
    if ((code & (AsyncEvent.UNDERFLOW | AsyncEvent.UNDERFLOW_IN_PACKET)) !== 0) this.counts.txUnderflows++;
    if ((code & (AsyncEvent.SEQ_ERROR | AsyncEvent.SEQ_ERROR_IN_BURST)) !== 0) this.counts.txSequenceErrors++;
  }

  // ---- device time --------------------------------------------------------

  /** Seconds after epochSecs; small numbers keep sub-nanosecond precision in a double. */
  private rel(t: TimeSpec): number {
    return t.fullSecs - this.epochSecs + t.fracSecs;
  }

  private spec(rel: number): TimeSpec {
    const whole = Math.floor(rel);
    return { fullSecs: this.epochSecs + whole, fracSecs: rel - whole };
  }

  private nowRel(): number {
    return this.rel(this.usrp.timeNow());
  }

  private toMicros(rel: number): Micros {
    return this.epochSecs * US_PER_S + Math.round(rel * US_PER_S);
  }

  private async sleepUntil(rel: number): Promise<void> {
    const us = Math.ceil((rel - this.nowRel()) * US_PER_S);
    if (us > 0) await this.sleep(us);
  }

  // ---- checks -------------------------------------------------------------

  private checkGain(gainDb: number, [lo, hi]: readonly [number, number], what = 'gain'): void {
    if (!(gainDb >= lo && gainDb <= hi)) {
      throw new FrontendError('RADIO_GAIN_RANGE', `${this.id}: ${what} ${gainDb} dB is outside the range [${lo}, ${hi}] dB`);
    }
  }

  private closedError(): FrontendError {
    return new FrontendError('RADIO_CLOSED', `${this.id}: the front-end is closed`);
  }

  private notTuned(): FrontendError {
    return new FrontendError('RADIO_NOT_TUNED', `${this.id}: tune before reading samples`);
  }
}
