import { ConfigError, FrontendError, RangeArgumentError, type ConfigIssue } from '../../src/core/errors.js';
import { ComplexFft } from '../../src/core/fft.js';
import type { Rng } from '../../src/core/rng.js';
import type { Scheduler } from '../../src/core/scheduler.js';
import { assertMicros, US_PER_S, type Micros } from '../../src/core/time.js';
import { maskFlatOver, maskPsd, type Channel, type ChannelPlan } from '../channels.js';
import type { ReceivedFrame } from '../frontend.js';
import { burstPadded, burstView, burstViewSpan, type BurstView } from './burst.js';
import { checkPnPattern, PnProcess, type PnConfig } from './pn.js';

export interface BandConfig {
  /** Receiver noise figure over thermal noise kTB. */
  noiseFigureDb: number;
  /** Primary nodes active for the whole run (when `phases` is empty). */
  pn: PnConfig[];
  /** A PN load that changes over time: each phase holds for its duration. */
  phases: Array<{ durationS: number; pn: PnConfig[] }>;
  /** Start over from the first phase after the last one ends. */
  repeat: boolean;
}

/** Thermal noise density kT at 290 K. */
export const THERMAL_NOISE_DBM_PER_HZ = -174;

export const dbmToMw = (dbm: number): number => 10 ** (dbm / 10);
export const mwToDbm = (mw: number): number => 10 * Math.log10(mw);

export interface EmulatedBandOptions {
  /** Delivers frames at the end of their airtime. Without one, the first receiver that brings one lends it. */
  scheduler?: Scheduler;
  /**
   * Time at which the PNs (and the first phase) start; before it the band
   * carries noise only. Default: the scheduler's now, else 0.
   */
  startUs?: Micros;
  /**
   * How far behind the latest query the band still answers: ground-truth
   * queries for a past window and receivers whose reads lag one another need
   * it. Older PN intervals and frames are forgotten. Default 10 s.
   */
  historyUs?: Micros;
}

/** A PN that is on, with the label of its random stream (unique per PN, phase and cycle). */
export interface ActivePn {
  readonly label: string;
  readonly channel: number;
  readonly powerDbm: number;
}

/** A frame in the air, as `transmit` scheduled it. */
export interface Airtime {
  readonly startUs: Micros;
  readonly endUs: Micros;
}

/** What a receiver tells the band when it attaches. */
export interface ReceiverSpec {
  /** Unique among the band's receivers; a frame is never delivered to the receiver whose id sent it. */
  id: string;
  /** Centre it listens on, undefined while deaf. */
  centerHz?: number;
  /** Time since which it has listened on that centre (default: now, or 0 without a scheduler). */
  sinceUs?: Micros;
  onFrame: (frame: ReceivedFrame) => void;
  scheduler?: Scheduler;
}

/** A receiver's handle on the band. */
export interface BandReceiver {
  readonly id: string;
  readonly centerHz: number | undefined;
  readonly sinceUs: Micros;
  /** Listens on `centerHz` from `sinceUs` on; undefined makes it deaf (retuning, closed). */
  listen(centerHz: number | undefined, sinceUs: Micros): void;
  detach(): void;
}

interface PnSlot {
  readonly label: string;
  readonly channel: number;
  readonly chIndex: number;
  readonly powerDbm: number;
  readonly powerMw: number;
  readonly proc: PnProcess;
}

/** One stretch of time with one PN list: a phase of one cycle, or the whole run for `cfg.pn`. */
interface PhaseInstance {
  readonly key: string;
  readonly startUs: Micros;
  readonly endUs: Micros;
  readonly pns: readonly PnSlot[];
}

interface AirFrame {
  readonly from: string;
  readonly chIndex: number;
  readonly centerHz: number;
  readonly startUs: Micros;
  readonly endUs: Micros;
  readonly powerDbm: number;
  readonly powerMw: number;
  readonly bytes: Uint8Array;
}

/**
 * The largest piece of a power run that the spectral shaping filters at once,
 * in complex samples: bins of fs / 1024 (24 kHz at 25 Msps), far finer than
 * the mask's steps, which are MHz apart.
 */
const SHAPE_CHUNK = 1024;

/** A piece of a run shorter than this is left white: too few bins to carry a shape (see `shapeRun`). */
const SHAPE_MIN_CHUNK = 16;

/** Work arrays of the spectral shaping for one chunk size, kept on the band so that synthesis allocates nothing per call. */
interface ShapeWork {
  readonly fft: ComplexFft;
  readonly time: Float64Array;
  readonly freq: Float64Array;
  /** sqrt(S(f_m) / mean S) per bin m, for the power run numbered `run`. */
  readonly gain: Float64Array;
  run: number;
}

/** An IQ burst in the air, as `transmitIq` or `addRemoteBurst` put it there. */
interface AirBurst {
  readonly from: string;
  readonly centerHz: number;
  readonly sampleRateHz: number;
  readonly startUs: number;
  readonly endUs: number;
  readonly powerMw: number;
  readonly data: Float32Array;
  readonly count: number;
  /** How receivers see it, by `centre/rate` (see burstView); null where they do not. */
  readonly views: Map<string, BurstView | null>;
}

/** An IQ burst on the band, as `onBurst` listeners are told of it and `addRemoteBurst` takes it. */
export interface IqBurst {
  /** The sender's receiver id: it does not hear its own burst. */
  readonly from: string;
  /** Any frequency: a burst off the channel grid reaches whoever samples its band. */
  readonly centerHz: number;
  readonly sampleRateHz: number;
  /** Time of the first sample on the band's clock. */
  readonly startUs: number;
  /** dBm of a full-scale sample (mean |x|^2 = 1) at every receiver. */
  readonly powerDbm: number;
  /** Interleaved I and Q, 2 * count floats (the band keeps a copy). */
  readonly data: Float32Array;
  readonly count: number;
}

/** What the band did with IQ bursts; every field only grows. */
export interface IqBurstCounters {
  /** Bursts sent by this band's radios. */
  local: number;
  /** Bursts added from elsewhere (another process's band, through a hub). */
  remote: number;
  /** Remote bursts that began before the latest time a receiver had already synthesised: the part before it went unheard there. */
  late: number;
  /** Time of those bursts before that instant, summed (µs). */
  lateUs: number;
  /** Burst and receiver pairs the band could not resample (rates with too fine a common grid, see burstView): the receiver did not see the burst. */
  unresampled: number;
}

interface ReceiverState {
  id: string;
  centerHz: number | undefined;
  sinceUs: Micros;
  onFrame: (frame: ReceivedFrame) => void;
  attached: boolean;
}

/**
 * The emulated 2.4 GHz air: power, not waveforms. A receiver tuned to a
 * channel collects thermal noise over the channel width plus, from every
 * emitter on (primary nodes and mesh frames in the air), its power times the
 * overlap factor between the emitter's channel and its own. IQ samples are
 * complex Gaussian noise whose variance follows that power, which is all an
 * energy detector can tell apart, and whose spectrum is each emitter's
 * transmit mask over the sampled band (white where the masks are flat over
 * it, as at the default 1 Msps; see `synthesize`).
 */
export class EmulatedBand {
  readonly startUs: Micros;
  readonly historyUs: Micros;
  private scheduler: Scheduler | undefined;
  private readonly chIndexByCenter = new Map<number, number>();
  /** overlap[from * n + to]: share of an emitter's power on `from` a receiver on `to` collects. */
  private readonly overlap: Float64Array;
  private readonly noiseMw: Float64Array;
  private readonly phaseStartUs: number[] = [];
  private readonly cycleUs: number = 0;
  private readonly instances = new Map<string, PhaseInstance>();
  /** Frames by start time; those that started more than `maxAirUs` before a time are over by then. */
  private frames: AirFrame[] = [];
  private maxAirUs = 0;
  private readonly receivers = new Map<string, ReceiverState>();
  private readonly noiseStreams = new Map<string, Rng>();
  /** Power (mW, overlap included) of the emitters on each channel during the power run being reported, and how many are on. */
  private readonly runChannelMw: Float64Array;
  private readonly runChannelOn: Int32Array;
  /** Per channel: 1 when its emitters' mask has a step inside the band of the `synthesize` call in progress. */
  private readonly stepInBand: Uint8Array;
  private readonly shapeWork = new Map<number, ShapeWork>();
  /** Numbers the shaped power runs, so that a chunk size's gains are computed once per run. */
  private shapedRuns = 0;
  private latestQueryUs = -Infinity;
  private knownFromUs = -Infinity;
  /** IQ bursts by start time; those that started more than `maxBurstReachUs` before a time reach no receiver by then. */
  private bursts: AirBurst[] = [];
  /** The latest bursts' spectra (spectraOf). */
  private readonly recentSpectra = new Map<AirBurst, Map<number, Float64Array>>();
  private maxBurstReachUs = 0;
  /** The end of the latest stretch of samples synthesised for any receiver: a remote burst that begins before it is late. */
  private heardToUs = -Infinity;
  private readonly burstListeners = new Set<(b: IqBurst) => void>();
  readonly iqCounters: IqBurstCounters = { local: 0, remote: 0, late: 0, lateUs: 0, unresampled: 0 };

  /** The configuration in force (a copy: changing the caller's object later changes nothing here). */
  readonly cfg: BandConfig;

  /**
   * `cfg` is checked against the plan and refused whole (ConfigError) when a
   * PN names a channel outside it or a pattern is out of range. The fourth
   * argument is the scheduler that delivers frames, or options.
   */
  constructor(
    readonly plan: ChannelPlan,
    cfg: BandConfig,
    private readonly rng: Rng,
    schedulerOrOpts: Scheduler | EmulatedBandOptions = {},
  ) {
    this.cfg = structuredClone(cfg);
    const opts: EmulatedBandOptions = isScheduler(schedulerOrOpts) ? { scheduler: schedulerOrOpts } : schedulerOrOpts;
    this.scheduler = opts.scheduler;
    this.startUs = assertMicros('band start', opts.startUs ?? opts.scheduler?.now() ?? 0);
    this.historyUs = assertMicros('band history', opts.historyUs ?? 10 * US_PER_S);
    const chs = plan.channels;
    const n = chs.length;
    this.overlap = new Float64Array(n * n);
    this.noiseMw = new Float64Array(n);
    this.runChannelMw = new Float64Array(n);
    this.runChannelOn = new Int32Array(n);
    this.stepInBand = new Uint8Array(n);
    chs.forEach((a, i) => {
      this.chIndexByCenter.set(a.centerHz, i);
      this.noiseMw[i] = dbmToMw(THERMAL_NOISE_DBM_PER_HZ + 10 * Math.log10(a.widthHz) + cfg.noiseFigureDb);
      chs.forEach((b, j) => (this.overlap[i * n + j] = plan.overlapFactor(a.number, b.number)));
    });

    const issues = this.checkConfig();
    if (issues.length > 0) throw new ConfigError(issues, 'band configuration');
    let t = 0;
    for (const ph of cfg.phases) {
      this.phaseStartUs.push(t);
      t += Math.round(ph.durationS * US_PER_S);
    }
    this.cycleUs = t;
    for (const pn of cfg.phases.length === 0 ? cfg.pn : cfg.phases.flatMap((ph) => ph.pn)) this.pnChannels.add(pn.channel);
  }

  /** The channels some PN of the configuration is on (the static set when there are no phases, else every phase's). */
  private readonly pnChannels = new Set<number>();

  /** False when no PN of the configuration is on `channel`: the medium then never asks about it. */
  pnPossible(channel: number): boolean {
    return this.pnChannels.has(channel);
  }

  /** The plan's channel centred on `centerHz`, or FrontendError `RADIO_NOT_A_CHANNEL`. */
  channelAt(centerHz: number): Channel {
    return this.plan.channels[this.chIndexOf(centerHz)]!;
  }

  isChannelCenter(centerHz: number): boolean {
    return this.chIndexByCenter.has(centerHz);
  }

  /** Thermal noise power (kTB plus noise figure) over the channel at `centerHz`. */
  noiseFloorDbm(centerHz: number): number {
    return mwToDbm(this.noiseMw[this.chIndexOf(centerHz)]!);
  }

  /** An independent noise stream for a receiver, derived from the band's seed and the label. */
  noiseRng(label: string): Rng {
    return this.rng.fork(`noise/${label}`);
  }

  /** Total power received at time t by a receiver centred on `centerHz`. */
  powerDbm(centerHz: number, t: Micros): number {
    const rx = this.chIndexOf(centerHz);
    this.touch(t);
    const n = this.plan.channels.length;
    let mw = this.noiseMw[rx]!;
    for (const inst of this.instancesIn(t, t + 1)) {
      if (t < inst.startUs || t >= inst.endUs) continue;
      for (const pn of inst.pns) if (pn.proc.isBusy(t)) mw += pn.powerMw * this.overlap[pn.chIndex * n + rx]!;
    }
    const frames = this.frames;
    for (let i = this.firstFrameNear(t); i < frames.length && frames[i]!.startUs <= t; i++) {
      const f = frames[i]!;
      if (t < f.endUs) mw += f.powerMw * this.overlap[f.chIndex * n + rx]!;
    }
    return mwToDbm(mw);
  }

  /**
   * Fills out[0 .. 2*count) with interleaved I, Q samples as a receiver at
   * `centerHz` sees them: sample k is taken at startUs + k * 1e6 / sampleRateHz
   * and has mean |x|^2 = 10^((P_dBm - calibrationDb) / 10). The variance is
   * constant between changes of power, so whole runs are drawn at once.
   * `noise` is the receiver's own stream (or a label naming one), so that
   * receivers never shift each other's samples.
   *
   * The spectrum is the emitters' own. Over the sampled band
   * [centerHz - fs/2, centerHz + fs/2), thermal noise is white and each
   * emitter's part has the PSD of its transmit mask (`maskPsd`), scaled so
   * that its power is the same P_e * overlap as above. Where every emitter on
   * during a run has a flat mask over the sampled band, which is every case
   * below 2 Msps on the 5 MHz channel grid, the run is white noise, drawn as
   * it always was. Otherwise the same white draws are shaped afterwards
   * (`shapeRun`), so the noise stream moves on exactly as in the white case.
   */
  synthesize(
    centerHz: number,
    startUs: number,
    count: number,
    sampleRateHz: number,
    calibrationDb: number,
    out: Float32Array,
    noise: Rng | string,
    receiverId?: string,
  ): void {
    const rx = this.chIndexOf(centerHz);
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeArgumentError('count', count, 'an integer >= 0');
    if (!(sampleRateHz > 0) || !Number.isFinite(sampleRateHz)) {
      throw new RangeArgumentError('sampleRateHz', sampleRateHz, 'a finite number > 0');
    }
    if (out.length < 2 * count) throw new RangeArgumentError('out.length', out.length, `at least ${2 * count}`);
    if (!Number.isFinite(startUs) || startUs < 0) throw new RangeArgumentError('startUs', startUs, 'a finite time >= 0');
    if (count === 0) return;
    const rng = typeof noise === 'string' ? this.noiseStream(noise) : noise;
    const fullScaleMw = dbmToMw(calibrationDb);
    const anyStep = this.markStepsInBand(rx, sampleRateHz);
    this.powerRuns(rx, startUs, count, sampleRateHz, (k0, k1, mw, channelMw) => {
      rng.fillNormal(out, Math.sqrt(mw / fullScaleMw / 2), 2 * k0, 2 * (k1 - k0));
      if (anyStep && this.stepsInRun(channelMw)) this.shapeRun(out, k0, k1, rx, sampleRateHz, channelMw);
    });
    const endUs = startUs + (count * US_PER_S) / sampleRateHz;
    if (endUs > this.heardToUs) this.heardToUs = endUs;
    if (this.bursts.length > 0) this.addBursts(centerHz, startUs, count, sampleRateHz, fullScaleMw, out, receiverId);
  }

  /**
   * Puts an IQ burst in the air at `centerHz` (a channel centre) from
   * `atUs`: every receiver but `from` then finds it in the samples it
   * synthesises (see `addBursts`), at `powerDbm` for a full-scale sample
   * (the power frames arrive with: the band has no path loss, a sender's
   * power is what every receiver gets). The samples are copied. Listeners
   * of `onBurst` (a hub link) are told.
   */
  transmitIq(from: string, centerHz: number, data: Float32Array, count: number, sampleRateHz: number, atUs: Micros, powerDbm: number): Airtime {
    this.chIndexOf(centerHz);
    assertMicros('burst time', atUs);
    const b = this.storeBurst({ from, centerHz, sampleRateHz, startUs: atUs, powerDbm, data, count });
    this.iqCounters.local++;
    for (const l of [...this.burstListeners]) l({ from, centerHz, sampleRateHz, startUs: atUs, powerDbm, data: b.data, count });
    return { startUs: b.startUs, endUs: b.endUs };
  }

  /**
   * Adds a burst sent elsewhere (another process's band, through a hub) at
   * its time on this band's clock. A burst that begins before the latest
   * time any receiver here already synthesised is counted late (the part
   * before it is lost to that receiver; later reads still see the rest).
   * A bad burst is refused with RangeArgumentError.
   */
  addRemoteBurst(burst: IqBurst): { late: boolean } {
    const b = this.storeBurst(burst);
    this.iqCounters.remote++;
    const late = b.startUs < this.heardToUs;
    if (late) {
      this.iqCounters.late++;
      this.iqCounters.lateUs += Math.min(this.heardToUs, b.endUs) - b.startUs;
    }
    return { late };
  }

  /** Registers a listener for the bursts this band's radios send; returns its remover. */
  onBurst(listener: (b: IqBurst) => void): () => void {
    this.burstListeners.add(listener);
    return () => {
      this.burstListeners.delete(listener);
    };
  }

  /** IQ bursts kept in memory (in the air or within the history window). */
  get storedBursts(): number {
    return this.bursts.length;
  }

  /** Checks a burst and stores a copy of it; returns what was stored. */
  private storeBurst(burst: IqBurst): AirBurst {
    const { count, data, sampleRateHz, centerHz, startUs, powerDbm } = burst;
    if (!Number.isSafeInteger(count) || count < 1) throw new RangeArgumentError('burst count', count, 'an integer >= 1');
    if (data.length < 2 * count) throw new RangeArgumentError('burst data length', data.length, `at least ${2 * count} floats (2 per complex sample)`);
    if (!(sampleRateHz > 0) || !Number.isFinite(sampleRateHz)) throw new RangeArgumentError('burst sampleRateHz', sampleRateHz, 'a finite number > 0');
    if (!Number.isFinite(centerHz) || centerHz <= 0) throw new RangeArgumentError('burst centerHz', centerHz, 'a finite frequency > 0');
    if (!Number.isFinite(startUs) || startUs < 0) throw new RangeArgumentError('burst startUs', startUs, 'a finite time >= 0');
    if (!Number.isFinite(powerDbm)) throw new RangeArgumentError('burst powerDbm', powerDbm, 'a finite number');
    const copy = data.slice(0, 2 * count);
    for (let i = 0; i < copy.length; i++) {
      if (!Number.isFinite(copy[i]!)) throw new RangeArgumentError('burst sample', copy[i], `finite numbers (sample ${i >> 1} is not)`);
    }
    const b: AirBurst = {
      from: burst.from,
      centerHz,
      sampleRateHz,
      startUs,
      endUs: startUs + (count * US_PER_S) / sampleRateHz,
      powerMw: dbmToMw(powerDbm),
      data: copy,
      count,
      views: new Map(),
    };
    let at = this.bursts.length;
    while (at > 0 && this.bursts[at - 1]!.startUs > b.startUs) at--;
    this.bursts.splice(at, 0, b);
    // A receiver's view of it spans at most BURST_SPAN_LIMIT times its padded length (see viewOf).
    this.maxBurstReachUs = Math.max(this.maxBurstReachUs, (BURST_SPAN_LIMIT * burstPadded(count) * US_PER_S) / sampleRateHz);
    return b;
  }

  /**
   * Adds to out[0 .. 2*count) (samples from `startUs` at `sampleRateHz`, full
   * scale `fullScaleMw`) every burst in the air then that a receiver at
   * `centerHz` sees (burstView): each on the receiver's sample grid, its
   * first sample at the receiver sample nearest its start time, scaled to
   * its power. A receiver does not hear its own bursts.
   */
  private addBursts(
    centerHz: number,
    startUs: number,
    count: number,
    sampleRateHz: number,
    fullScaleMw: number,
    out: Float32Array,
    receiverId: string | undefined,
  ): void {
    const endUs = startUs + (count * US_PER_S) / sampleRateHz;
    const bursts = this.bursts;
    for (let i = this.firstBurstNear(startUs); i < bursts.length && bursts[i]!.startUs < endUs; i++) {
      const b = bursts[i]!;
      if (b.from === receiverId) continue;
      const v = this.viewOf(b, centerHz, sampleRateHz);
      if (!v) continue;
      const d = Math.round(((b.startUs - startUs) * sampleRateHz) / US_PER_S);
      const k0 = Math.max(0, d);
      const k1 = Math.min(count, d + v.count);
      if (k1 <= k0) continue;
      const amp = Math.sqrt(b.powerMw / fullScaleMw);
      const src = v.data;
      for (let k = k0, m = 2 * (k0 - d); k < k1; k++, m += 2) {
        out[2 * k] = out[2 * k]! + amp * src[m]!;
        out[2 * k + 1] = out[2 * k + 1]! + amp * src[m + 1]!;
      }
    }
  }

  /** How a receiver at `centerHz` sampling at `sampleRateHz` sees burst b, made once and kept with the burst. */
  private viewOf(b: AirBurst, centerHz: number, sampleRateHz: number): BurstView | null {
    const key = `${centerHz}/${sampleRateHz}`;
    let v = b.views.get(key);
    if (v === undefined) {
      const offsetHz = b.centerHz - centerHz;
      const whole = [b.sampleRateHz, sampleRateHz, offsetHz].every(Number.isSafeInteger);
      const span = whole ? burstViewSpan(b.sampleRateHz, sampleRateHz, offsetHz, b.count) : Infinity;
      if (span > BURST_SPAN_LIMIT * burstPadded(b.count)) {
        // Rates or an offset that are not whole Hz, or whose common grid is too fine: the burst is not carried there.
        this.iqCounters.unresampled++;
        v = null;
      } else v = burstView(b.data, b.count, b.sampleRateHz, sampleRateHz, offsetHz, this.spectraOf(b)) ?? null;
      b.views.set(key, v);
    }
    return v;
  }

  /**
   * The spectra burst b's views are made from, by DFT length, kept for the
   * last few bursts only: receivers ask for their views while a burst is on
   * the air, and a spectrum is larger than the burst.
   */
  private spectraOf(b: AirBurst): Map<number, Float64Array> {
    let m = this.recentSpectra.get(b);
    if (m === undefined) {
      m = new Map();
      if (this.recentSpectra.size >= RECENT_SPECTRA) this.recentSpectra.delete(this.recentSpectra.keys().next().value!);
      this.recentSpectra.set(b, m);
    }
    return m;
  }

  /** Index of the first burst that may still reach a receiver at time t. */
  private firstBurstNear(t: number): number {
    return firstStartedAfter(this.bursts, t - this.maxBurstReachUs);
  }

  /**
   * Sets `stepInBand` for a receiver on channel index `rx` sampling at
   * `sampleRateHz`: which channels' emitters have a mask step inside the
   * sampled band. Returns whether any has.
   */
  private markStepsInBand(rx: number, sampleRateHz: number): boolean {
    const chs = this.plan.channels;
    const centerHz = chs[rx]!.centerHz;
    let any = false;
    for (let c = 0; c < chs.length; c++) {
      const e = chs[c]!;
      const lo = centerHz - sampleRateHz / 2 - e.centerHz;
      const step = !maskFlatOver(lo, lo + sampleRateHz, e.widthHz);
      this.stepInBand[c] = step ? 1 : 0;
      any ||= step;
    }
    return any;
  }

  /** Whether an emitter on during a run (power per channel `channelMw`) has a mask step inside the sampled band. */
  private stepsInRun(channelMw: Float64Array): boolean {
    for (let c = 0; c < channelMw.length; c++) if (this.stepInBand[c] === 1 && channelMw[c]! > 0) return true;
    return false;
  }

  /**
   * Gives the white samples of run [k0, k1) the run's composite spectrum
   * S(f) = noise + sum over channels c of channelMw[c] * m_c(f) / mean m_c,
   * with m_c the mask of channel c's emitters at baseband frequency f and
   * the mean taken over the bins, so that each part keeps its power: bin m of
   * each chunk's FFT is multiplied by sqrt(S(f_m) / mean S).
   *
   * The filtering is circular, chunk by chunk: chunks of SHAPE_CHUNK samples,
   * then the rest of the run in pieces of falling powers of two, down to
   * SHAPE_MIN_CHUNK; a tail shorter than that stays white (it keeps its
   * power, not its shape). A circular filter turns the white chunk into a
   * stationary Gaussian stretch with exactly the target PSD at the chunk's
   * bins and exactly the run's power in expectation, with no start-up
   * transient at its edges; the price is that the filter's memory does not
   * cross a chunk edge, so samples on either side of one are independent and
   * the spectrum is resolved to fs / chunk. A linear filter carried across
   * chunks (overlap-save) would need a truncated impulse response, whose
   * ripple smears the mask's 30 dB steps, and state kept between calls,
   * which receivers reading out of order would disturb. So shaped samples
   * depend on how a capture is cut into calls (their distribution does not),
   * while white ones never did.
   */
  private shapeRun(out: Float32Array, k0: number, k1: number, rx: number, sampleRateHz: number, channelMw: Float64Array): void {
    const run = ++this.shapedRuns;
    let k = k0;
    while (k1 - k >= SHAPE_MIN_CHUNK) {
      const left = k1 - k;
      const n = left >= SHAPE_CHUNK ? SHAPE_CHUNK : 1 << (31 - Math.clz32(left));
      const w = this.shapeWorkFor(n);
      if (w.run !== run) {
        this.runGains(w.gain, n, rx, sampleRateHz, channelMw);
        w.run = run;
      }
      const { time, freq, gain } = w;
      const base = 2 * k;
      for (let j = 0; j < 2 * n; j++) time[j] = out[base + j]!;
      w.fft.forward(time, freq);
      for (let m = 0; m < n; m++) {
        const g = gain[m]!;
        freq[2 * m] = freq[2 * m]! * g;
        freq[2 * m + 1] = freq[2 * m + 1]! * g;
      }
      w.fft.inverse(freq, time);
      for (let j = 0; j < 2 * n; j++) out[base + j] = time[j]!;
      k += n;
    }
  }

  /** Fills gain[0 .. n) with sqrt(S(f_m) / mean S) over n bins (see `shapeRun`); bin m is at m * fs / n, less fs above n / 2. */
  private runGains(gain: Float64Array, n: number, rx: number, sampleRateHz: number, channelMw: Float64Array): void {
    const chs = this.plan.channels;
    const centerHz = chs[rx]!.centerHz;
    const binHz = sampleRateHz / n;
    const half = n / 2;
    gain.fill(this.noiseMw[rx]!, 0, n);
    for (let c = 0; c < chs.length; c++) {
      const p = channelMw[c]!;
      if (!(p > 0)) continue;
      const e = chs[c]!;
      const offsetHz = centerHz - e.centerHz;
      let sum = 0;
      for (let m = 0; m < n; m++) sum += maskPsd((m < half ? m : m - n) * binHz + offsetHz, e.widthHz);
      const scale = (p * n) / sum;
      for (let m = 0; m < n; m++) gain[m] = gain[m]! + scale * maskPsd((m < half ? m : m - n) * binHz + offsetHz, e.widthHz);
    }
    let total = 0;
    for (let m = 0; m < n; m++) total += gain[m]!;
    const mean = total / n;
    for (let m = 0; m < n; m++) gain[m] = Math.sqrt(gain[m]! / mean);
  }

  private shapeWorkFor(n: number): ShapeWork {
    let w = this.shapeWork.get(n);
    if (!w) {
      w = { fft: new ComplexFft(n), time: new Float64Array(2 * n), freq: new Float64Array(2 * n), gain: new Float64Array(n), run: 0 };
      this.shapeWork.set(n, w);
    }
    return w;
  }

  /**
   * The statistical twin of `synthesize` followed by the energy detector's
   * window sums: out[j] receives the energy (sum of |x|^2, in full-scale
   * units) of window j, samples [j * windowSamples, (j + 1) * windowSamples)
   * of the `count` samples `synthesize` would give for the same arguments;
   * floor(count / windowSamples) windows, the number returned. No sample is
   * drawn: the energy of n complex Gaussian samples of mean power P is
   * Gamma(n, P) exactly, and a window over which the power changes is the
   * sum of independent Gamma pieces, one per stretch of constant power, as
   * the samples themselves are independent. The pieces follow the same power
   * runs, on the same sample grid, as `synthesize`.
   *
   * It models white samples: `synthesize`'s output wherever every emitter's
   * mask is flat over the sampled band, which covers the default 1 Msps (and
   * any rate below 2 Msps on the 5 MHz channel grid). Where `synthesize`
   * shapes a run's spectrum, its samples are correlated, window sums of them
   * spread a little wider than Gamma(n, P) for the same mean, and the IQ
   * model is the reference.
   */
  windowEnergies(
    centerHz: number,
    startUs: number,
    count: number,
    sampleRateHz: number,
    calibrationDb: number,
    windowSamples: number,
    out: Float64Array,
    noise: Rng | string,
  ): number {
    const rx = this.chIndexOf(centerHz);
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeArgumentError('count', count, 'an integer >= 0');
    if (!(sampleRateHz > 0) || !Number.isFinite(sampleRateHz)) {
      throw new RangeArgumentError('sampleRateHz', sampleRateHz, 'a finite number > 0');
    }
    if (!Number.isSafeInteger(windowSamples) || windowSamples < 1) throw new RangeArgumentError('windowSamples', windowSamples, 'an integer >= 1');
    const windows = Math.floor(count / windowSamples);
    if (out.length < windows) throw new RangeArgumentError('out.length', out.length, `at least ${windows}`);
    if (!Number.isFinite(startUs) || startUs < 0) throw new RangeArgumentError('startUs', startUs, 'a finite time >= 0');
    if (windows === 0) return 0;
    const rng = typeof noise === 'string' ? this.noiseStream(noise) : noise;
    const fullScaleMw = dbmToMw(calibrationDb);
    // Runs of constant power over the windowed samples: end sample index and power per sample.
    const ends: number[] = [];
    const powers: number[] = [];
    const used = windows * windowSamples;
    this.powerRuns(rx, startUs, used, sampleRateHz, (_k0, k1, mw) => {
      const p = mw / fullScaleMw;
      // Two runs of the same power are one: a sum of Gammas of one scale is a Gamma.
      if (powers.length > 0 && powers[powers.length - 1] === p) ends[ends.length - 1] = k1;
      else {
        ends.push(k1);
        powers.push(p);
      }
    });
    let r = 0;
    let j = 0;
    while (j < windows) {
      const lo = j * windowSamples;
      while (ends[r]! <= lo) r++;
      // Windows wholly inside run r: one Gamma(windowSamples, power) each, drawn in bulk.
      const whole = Math.floor(ends[r]! / windowSamples) - j;
      if (whole > 0) {
        rng.fillGamma(out, windowSamples, powers[r]!, j, whole);
        j += whole;
        continue;
      }
      // A window across runs: one Gamma piece per run it overlaps.
      const hi = lo + windowSamples;
      let e = 0;
      for (let k = lo, q = r; k < hi; q++) {
        const end = Math.min(hi, ends[q]!);
        e += rng.gamma(end - k, powers[q]!);
        k = end;
      }
      out[j++] = e;
    }
    return windows;
  }

  /**
   * Calls `run(k0, k1, mw, channelMw)` for each stretch of samples [k0, k1)
   * (k1 > k0) of a block of `count` samples from `startUs` over which the
   * received power is constant, in time order; together they cover
   * [0, count). `mw` is the total; channelMw[c] (valid during the call only)
   * the part of it from emitters on channel index c.
   */
  private powerRuns(
    rx: number,
    startUs: number,
    count: number,
    sampleRateHz: number,
    run: (k0: number, k1: number, mw: number, channelMw: Float64Array) => void,
  ): void {
    const usPerSample = US_PER_S / sampleRateHz;
    const a0 = Math.floor(startUs);
    const a1 = Math.max(a0 + 1, Math.ceil(startUs + count * usPerSample));
    this.touch(a0);

    // Power changes within [a0, a1): +mW where an emitter turns on, -mW where it turns off.
    const n = this.plan.channels.length;
    const times: number[] = [];
    const deltas: number[] = [];
    /** Channel index of each on/off pair's emitter. */
    const chans: number[] = [];
    const span: number[] = [];
    for (const inst of this.instancesIn(a0, a1)) {
      const lo = Math.max(a0, inst.startUs);
      const hi = Math.min(a1, inst.endUs);
      if (hi <= lo) continue;
      for (const pn of inst.pns) {
        const mw = pn.powerMw * this.overlap[pn.chIndex * n + rx]!;
        span.length = 0;
        pn.proc.collect(lo, hi, span);
        for (let i = 0; i < span.length; i += 2) {
          times.push(span[i]!, span[i + 1]!);
          deltas.push(mw, -mw);
          chans.push(pn.chIndex);
        }
      }
    }
    const frames = this.frames;
    for (let i = this.firstFrameNear(a0); i < frames.length && frames[i]!.startUs < a1; i++) {
      const f = frames[i]!;
      if (f.endUs <= a0) continue;
      const mw = f.powerMw * this.overlap[f.chIndex * n + rx]!;
      times.push(Math.max(a0, f.startUs), Math.min(a1, f.endUs));
      deltas.push(mw, -mw);
      chans.push(f.chIndex);
    }
    const order = Array.from(times.keys()).sort((i, j) => times[i]! - times[j]! || i - j);

    // Sample index of the first sample at or after time t, within [0, count].
    const sampleAt = (t: number): number => {
      const k = Math.ceil(((t - startUs) * sampleRateHz) / US_PER_S);
      return k < 0 ? 0 : k > count ? count : k;
    };
    const fill = (from: number, to: number, mw: number): void => {
      const k0 = sampleAt(from);
      const k1 = sampleAt(to);
      if (k1 > k0) run(k0, k1, mw, channelMw);
    };

    const floorMw = this.noiseMw[rx]!;
    const channelMw = this.runChannelMw.fill(0);
    const channelOn = this.runChannelOn.fill(0);
    let emittersMw = 0;
    let on = 0;
    let segStart = a0;
    for (const i of order) {
      const t = times[i]!;
      if (t > segStart) {
        fill(segStart, t, floorMw + emittersMw);
        segStart = t;
      }
      // Events come in pairs: even indices turn an emitter on, odd ones off.
      const step = (i & 1) === 0 ? 1 : -1;
      on += step;
      // Back to exact zero when nothing is on, so rounding never accumulates.
      emittersMw = on === 0 ? 0 : emittersMw + deltas[i]!;
      const c = chans[i >> 1]!;
      const onC = (channelOn[c] = channelOn[c]! + step);
      channelMw[c] = onC === 0 ? 0 : channelMw[c]! + deltas[i]!;
    }
    fill(segStart, a1, floorMw + emittersMw);
  }

  /** Fraction of [t0, t1) during which at least one PN on exactly `channel` is on. */
  pnBusyFraction(channel: number, t0: Micros, t1: Micros): number {
    if (t1 < t0) throw new RangeArgumentError('window', [t0, t1], 't0 <= t1');
    return t1 === t0 ? 0 : this.pnBusyTime(channel, t0, t1) / (t1 - t0);
  }

  /** Time within [t0, t1) during which at least one PN on exactly `channel` is on, in µs. */
  pnBusyTime(channel: number, t0: Micros, t1: Micros): Micros {
    let total = 0;
    for (const [s, e] of this.pnBusyIntervals(channel, t0, t1)) total += e - s;
    return total;
  }

  /**
   * The stretches of [t0, t1) during which at least one PN on exactly
   * `channel` is on: sorted, disjoint, each clipped to the window.
   */
  pnBusyIntervals(channel: number, t0: Micros, t1: Micros): Array<readonly [Micros, Micros]> {
    this.plan.get(channel);
    if (t1 < t0) throw new RangeArgumentError('window', [t0, t1], 't0 <= t1');
    if (t1 === t0) return [];
    this.touch(t0);
    const spans: number[] = [];
    for (const inst of this.instancesIn(t0, t1)) {
      const lo = Math.max(t0, inst.startUs);
      const hi = Math.min(t1, inst.endUs);
      if (hi <= lo) continue;
      for (const pn of inst.pns) if (pn.channel === channel) pn.proc.collect(lo, hi, spans);
    }
    const order = Array.from({ length: spans.length / 2 }, (_, i) => i).sort((i, j) => spans[2 * i]! - spans[2 * j]!);
    const out: Array<readonly [Micros, Micros]> = [];
    let curS = -Infinity;
    let curE = -Infinity;
    for (const i of order) {
      const s = spans[2 * i]!;
      const e = spans[2 * i + 1]!;
      if (s > curE) {
        if (curE > curS) out.push([curS, curE]);
        curS = s;
        curE = e;
      } else if (e > curE) curE = e;
    }
    if (curE > curS) out.push([curS, curE]);
    return out;
  }

  /** The PNs on at time t. */
  activePn(t: Micros): ActivePn[] {
    this.touch(t);
    const out: ActivePn[] = [];
    for (const inst of this.instancesIn(t, t + 1)) {
      if (t < inst.startUs || t >= inst.endUs) continue;
      for (const pn of inst.pns) {
        if (pn.proc.isBusy(t)) out.push({ label: pn.label, channel: pn.channel, powerDbm: pn.powerDbm });
      }
    }
    return out;
  }

  /**
   * Puts a frame in the air from `atUs` for ceil(bits * 1e6 / rateBps) µs. It
   * adds its power to every receiver (with overlap leakage) meanwhile, and at
   * its end is delivered to every attached receiver but the sender that
   * listened on the same centre for the whole airtime. A plain broadcast: no
   * carrier sense, no collisions.
   */
  transmit(from: string, centerHz: number, bytes: Uint8Array, atUs: Micros, powerDbm: number, rateBps: number): Airtime {
    const chIndex = this.chIndexOf(centerHz);
    assertMicros('transmit time', atUs);
    if (bytes.length === 0) throw new RangeArgumentError('frame length', 0, 'at least 1 byte');
    if (!Number.isFinite(powerDbm)) throw new RangeArgumentError('powerDbm', powerDbm, 'a finite number');
    if (!(rateBps > 0) || !Number.isFinite(rateBps)) throw new RangeArgumentError('rateBps', rateBps, 'a finite number > 0');
    const scheduler = this.scheduler;
    if (!scheduler) {
      throw new FrontendError('RADIO_NO_SCHEDULER', 'the band needs a scheduler to deliver frames: pass one to the band or to attach');
    }
    const airUs = Math.ceil((bytes.length * 8 * US_PER_S) / rateBps);
    const frame: AirFrame = {
      from,
      chIndex,
      centerHz,
      startUs: atUs,
      endUs: atUs + airUs,
      powerDbm,
      powerMw: dbmToMw(powerDbm),
      bytes: bytes.slice(),
    };
    // Frames mostly come in time order: insert from the back.
    let at = this.frames.length;
    while (at > 0 && this.frames[at - 1]!.startUs > frame.startUs) at--;
    this.frames.splice(at, 0, frame);
    this.maxAirUs = Math.max(this.maxAirUs, airUs);
    scheduler.at(Math.max(frame.endUs, scheduler.now()), () => this.deliver(frame));
    return { startUs: frame.startUs, endUs: frame.endUs };
  }

  /** Frames kept in memory (in the air or within the history window). */
  get storedFrames(): number {
    return this.frames.length;
  }

  attach(spec: ReceiverSpec): BandReceiver {
    if (this.receivers.get(spec.id)?.attached) {
      throw new FrontendError('RADIO_DUPLICATE_ID', `a receiver with id ${JSON.stringify(spec.id)} is already attached to the band`);
    }
    if (spec.scheduler) {
      if (!this.scheduler) this.scheduler = spec.scheduler;
      else if (this.scheduler !== spec.scheduler) {
        throw new FrontendError('RADIO_SCHEDULER_MISMATCH', `receiver ${spec.id} brings a scheduler other than the band's`);
      }
    }
    if (spec.centerHz !== undefined) this.chIndexOf(spec.centerHz);
    const st: ReceiverState = {
      id: spec.id,
      centerHz: spec.centerHz,
      sinceUs: spec.sinceUs ?? this.scheduler?.now() ?? 0,
      onFrame: spec.onFrame,
      attached: true,
    };
    this.receivers.set(spec.id, st);
    const checkTune = (centerHz: number): void => void this.chIndexOf(centerHz);
    const forget = (): void => {
      if (this.receivers.get(st.id) === st) this.receivers.delete(st.id);
    };
    return {
      id: st.id,
      get centerHz() {
        return st.centerHz;
      },
      get sinceUs() {
        return st.sinceUs;
      },
      listen(centerHz: number | undefined, sinceUs: Micros): void {
        if (centerHz !== undefined) checkTune(centerHz);
        st.centerHz = centerHz;
        st.sinceUs = sinceUs;
      },
      detach(): void {
        if (!st.attached) return;
        st.attached = false;
        forget();
      },
    };
  }

  private deliver(f: AirFrame): void {
    for (const r of [...this.receivers.values()]) {
      if (!r.attached || r.id === f.from || r.centerHz !== f.centerHz || r.sinceUs > f.startUs) continue;
      r.onFrame({ bytes: f.bytes.slice(), centerHz: f.centerHz, atUs: f.endUs, rssiDbm: f.powerDbm });
    }
  }

  /** Index of the first frame that may still be in the air at time t (all before it ended by then). */
  private firstFrameNear(t: number): number {
    return firstStartedAfter(this.frames, t - this.maxAirUs);
  }

  private noiseStream(label: string): Rng {
    let r = this.noiseStreams.get(label);
    if (!r) {
      r = this.noiseRng(label);
      this.noiseStreams.set(label, r);
    }
    return r;
  }

  private chIndexOf(centerHz: number): number {
    const i = this.chIndexByCenter.get(centerHz);
    if (i === undefined) {
      const centres = this.plan.channels.map((c) => c.centerHz / 1e6).join(', ');
      throw new FrontendError('RADIO_NOT_A_CHANNEL', `${centerHz} Hz is not a channel centre of plan ${this.plan.name} (${centres} MHz)`);
    }
    return i;
  }

  /** Records a query at time t and forgets PN phases and frames that no later query may need. */
  private touch(t: number): void {
    if (!Number.isFinite(t) || t < 0) throw new RangeArgumentError('time', t, 'a finite time >= 0');
    if (t < this.knownFromUs) {
      throw new RangeArgumentError('time', t, `a time at or after ${this.knownFromUs} us (the band keeps ${this.historyUs} us of history)`);
    }
    if (t <= this.latestQueryUs) return;
    this.latestQueryUs = t;
    const cut = Math.floor(t) - this.historyUs;
    if (cut <= this.knownFromUs) return;
    this.knownFromUs = cut;
    for (const [key, inst] of this.instances) if (inst.endUs <= cut) this.instances.delete(key);
    const gone = this.firstFrameNear(cut);
    if (gone > 0) this.frames.splice(0, gone);
    const goneBursts = this.firstBurstNear(cut);
    if (goneBursts > 0) this.bursts.splice(0, goneBursts);
  }

  /** The phase instances that overlap [t0, t1), created on first use, in time order. */
  private instancesIn(t0: number, t1: number): PhaseInstance[] {
    const out: PhaseInstance[] = [];
    if (t1 <= this.startUs) return out;
    const phases = this.cfg.phases;
    if (phases.length === 0) {
      out.push(this.instance('static', this.startUs, Infinity, this.cfg.pn, 'pn/static'));
      return out;
    }
    const last = phases.length - 1;
    const rel = Math.max(0, t0 - this.startUs);
    let cycle = 0;
    let k = 0;
    if (this.cfg.repeat) {
      cycle = Math.floor(rel / this.cycleUs);
      const r = rel - cycle * this.cycleUs;
      while (k < last && this.phaseStartUs[k + 1]! <= r) k++;
    } else {
      while (k < last && this.phaseStartUs[k + 1]! <= rel) k++;
    }
    for (;;) {
      const base = this.startUs + cycle * this.cycleUs;
      const s = base + this.phaseStartUs[k]!;
      if (s >= t1) break;
      const isLast = k === last;
      const e = isLast ? (this.cfg.repeat ? base + this.cycleUs : Infinity) : base + this.phaseStartUs[k + 1]!;
      if (e > s && e > t0) {
        const ph = phases[k]!;
        out.push(this.instance(`${cycle}/${k}`, s, e, ph.pn, `pn/cycle${cycle}/phase${k}`));
      }
      if (e === Infinity) break;
      if (isLast) {
        cycle++;
        k = 0;
      } else k++;
    }
    return out;
  }

  private instance(key: string, startUs: Micros, endUs: Micros, pns: readonly PnConfig[], label: string): PhaseInstance {
    let inst = this.instances.get(key);
    if (!inst) {
      inst = {
        key,
        startUs,
        endUs,
        pns: pns.map((p, i) => {
          const l = `${label}/${i}`;
          return {
            label: l,
            channel: p.channel,
            chIndex: this.plan.channels.indexOf(this.plan.get(p.channel)),
            powerDbm: p.powerDbm,
            powerMw: dbmToMw(p.powerDbm),
            proc: new PnProcess(p.pattern, this.rng.fork(l), { startUs, historyUs: this.historyUs }),
          };
        }),
      };
      this.instances.set(key, inst);
    }
    return inst;
  }

  private checkConfig(): ConfigIssue[] {
    const cfg = this.cfg;
    const issues: ConfigIssue[] = [];
    if (!Number.isFinite(cfg.noiseFigureDb)) {
      issues.push({ path: '/noiseFigureDb', value: cfg.noiseFigureDb, expected: 'a finite number of dB' });
    }
    const checkPns = (pns: readonly PnConfig[], at: string): void =>
      pns.forEach((p, i) => {
        const path = `${at}/${i}`;
        if (!this.plan.has(p.channel)) {
          issues.push({ path: `${path}/channel`, value: p.channel, expected: `a channel of plan ${this.plan.name} (${this.plan.numbers.join(', ')})` });
        }
        if (!Number.isFinite(p.powerDbm)) issues.push({ path: `${path}/powerDbm`, value: p.powerDbm, expected: 'a finite number of dBm' });
        for (const is of checkPnPattern(p.pattern)) issues.push({ ...is, path: `${path}/pattern${is.path}` });
      });
    checkPns(cfg.pn, '/pn');
    let total = 0;
    cfg.phases.forEach((ph, k) => {
      if (!Number.isFinite(ph.durationS) || ph.durationS < 0) {
        issues.push({ path: `/phases/${k}/durationS`, value: ph.durationS, expected: 'a finite number of seconds >= 0' });
      } else total += Math.round(ph.durationS * US_PER_S);
      checkPns(ph.pn, `/phases/${k}/pn`);
    });
    if (cfg.repeat && cfg.phases.length > 0 && total === 0) {
      issues.push({ path: '/phases', value: cfg.phases.map((p) => p.durationS), expected: 'repeating phases that last longer than 0 s in all' });
    }
    return issues;
  }
}

/** Bursts whose spectra are kept (spectraOf). */
const RECENT_SPECTRA = 8;

/** A burst's view spans at most this many times its padded length (else the band does not carry the burst to that receiver). */
const BURST_SPAN_LIMIT = 4;

/** Index of the first of `items` (sorted by start) that starts after `t`. */
function firstStartedAfter(items: readonly { readonly startUs: number }[], t: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid]!.startUs <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function isScheduler(x: Scheduler | EmulatedBandOptions): x is Scheduler {
  return typeof (x as Partial<Scheduler>).at === 'function';
}
