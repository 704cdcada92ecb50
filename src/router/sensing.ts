import type { ChannelPlan } from '../../radio/channels.js';
import type { Frontend, IqBlock } from '../../radio/frontend.js';
import type { EmulatedBand } from '../../radio/sim/band.js';
import { Alarm } from '../core/alarm.js';
import type { Rng } from '../core/rng.js';
import type { Scheduler } from '../core/scheduler.js';
import type { Micros } from '../core/time.js';
import type { IqTap } from '../sensing/iq-tap.js';
import type { Visit } from '../sensing/schedule.js';
import { VisitTally, type ChannelObservation } from '../sensing/workload.js';
import type { NodeAction, NodeCore, NodeEvent } from './node-core.js';

/**
 * The one driver of the node core (sensing and the R1 decision). Radios
 * differ: a mesh router senses the emulated band at once and hears back at
 * the visit's end time, all synchronously on its event engine; a node on
 * front-ends awaits their tunes and reads. The driver serves both: an
 * operation of the radios may return a promise, and only then does the
 * driver wait (later ticks queue behind it); otherwise it runs to the end
 * before it returns, so a simulation stays one synchronous run.
 */
export interface SensingRadios {
  now(): Micros;
  /** Runs `fn` at `at` (the end of a visit whose observation was taken at once). */
  at(at: Micros, fn: (now: Micros) => void): void;
  /** A sensing round starts: transmission on the sensing radio stops. */
  pauseTx(round: number, now: Micros): void;
  /** The round is over: transmission resumes. */
  resumeTx(round: number, now: Micros): void;
  /** What the energy detector saw on the visit: at once, or once the front-end has read its samples. */
  capture(visit: Visit, now: Micros): ChannelObservation | Promise<ChannelObservation>;
  tuneR1(channel: number, now: Micros): void | Promise<void>;
  /** After a round in which R1 did not move: R1 back on its channel, when R1 itself sensed (front-ends). */
  afterRound?(r1Channel: number): void | Promise<void>;
  event(e: NodeEvent): void;
  /** A visit failed; the round goes on as if the visit saw nothing. */
  fault?(where: string, error: unknown, now: Micros): void;
  /**
   * Runs what follows a front-end's promise (the rest of a round) inside the
   * host's event loop, as a paced engine's `inject` does, so that what it
   * schedules wakes the engine; absent, it runs as it is.
   */
  enter?<T>(fn: () => T): T;
}

/** Drives a NodeCore over its radios; see SensingRadios. */
export class SensingDriver {
  private visitOut = false;
  private stopped = false;
  /** Asynchronous work in progress (front-ends): a tick waits for it. */
  private busy: Promise<void> | undefined;
  /** The driver's own timer, when it keeps one. */
  private timer: Alarm | undefined;

  constructor(
    readonly core: NodeCore,
    private readonly radios: SensingRadios,
  ) {}

  /**
   * R1 goes to the channel the core starts on. With a scheduler, the driver
   * keeps a timer of its own at the core's deadline (a node whose only core
   * this is); without, the host asks `nextDeadline` and calls `tick`.
   */
  start(now: Micros, scheduler?: Scheduler): void {
    const r1 = this.core.r1;
    if (r1 !== undefined) this.chain(this.radios.tuneR1(r1, now));
    this.timer = scheduler ? new Alarm(scheduler) : undefined;
    this.rearm();
  }

  /** When the core next has something to do; undefined while a visit is out or once stopped. */
  nextDeadline(): Micros | undefined {
    return this.stopped || this.visitOut ? undefined : this.core.nextDeadline();
  }

  /** Runs what the core has due at `now`; a promise when front-ends are still at work. */
  tick(now: Micros): void | Promise<void> {
    const run = (): void | Promise<void> => this.run(this.core.tick(now));
    return this.chain(this.busy ? this.busy.then(() => this.enter(run)) : run());
  }

  private enter<T>(fn: () => T): T {
    return this.radios.enter ? this.radios.enter(fn) : fn();
  }

  /** Re-reads the core's deadline (its own timer only; after a reconfiguration). */
  rearm(): void {
    this.timer?.set(this.nextDeadline(), (now) => this.thenRearm(this.tick(now)));
  }

  /** Stops; resolves when the work in progress has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.busy;
  }

  /** Re-arms the driver's own timer once `r` is done. */
  private thenRearm(r: void | Promise<void>): void {
    if (r) void r.then(() => this.rearm());
    else this.rearm();
  }

  private chain(r: void | Promise<void>): void | Promise<void> {
    if (!r) return;
    const p: Promise<void> = r.finally(() => {
      if (this.busy === p) this.busy = undefined;
    });
    this.busy = p;
    return p;
  }

  /** Carries out `actions` from `from` on, in order, waiting where a radio makes it wait. */
  private run(actions: readonly NodeAction[], from = 0): void | Promise<void> {
    for (let i = from; i < actions.length; i++) {
      if (this.stopped) return;
      const r = this.step(actions[i]!);
      if (r) return r.then(() => this.run(actions, i + 1));
    }
    const r1 = this.core.r1;
    if (this.stopped || !this.radios.afterRound || r1 === undefined) return;
    if (actions.some((a) => a.kind === 'resume-tx') && !actions.some((a) => a.kind === 'tune-r1')) return this.radios.afterRound(r1);
  }

  private step(a: NodeAction): void | Promise<void> {
    const now = this.radios.now();
    switch (a.kind) {
      case 'pause-tx':
        return this.radios.pauseTx(a.round, now);
      case 'resume-tx':
        return this.radios.resumeTx(a.round, now);
      case 'event':
        return this.radios.event(a.event);
      case 'tune-r1':
        return this.radios.tuneR1(a.channel, now);
      case 'visit': {
        const v = a.visit;
        let seen: ChannelObservation | Promise<ChannelObservation>;
        try {
          seen = this.radios.capture(v, now);
        } catch (error) {
          seen = Promise.reject(error);
        }
        this.visitOut = true;
        if (!(seen instanceof Promise)) {
          const obs = seen;
          this.radios.at(Math.max(v.endUs, now), (t) => this.thenRearm(this.chain(this.visited(obs, t))));
          return;
        }
        return seen.then(
          (obs) => this.enter(() => this.visited(obs, this.radios.now())),
          (error: unknown) =>
            this.enter(() => {
              // Stopping closes the radio under the visit: nothing to report then.
              if (this.stopped) return;
              const at = this.radios.now();
              this.radios.fault?.(`sensing channel ${v.channel}`, error, at);
              return this.visited({ channel: v.channel, windows: 0, busyWindows: 0, meanPowerDbm: -Infinity, busyMeanPowerDbm: undefined, atUs: at }, at);
            }),
        );
      }
    }
  }

  private visited(obs: ChannelObservation, now: Micros): void | Promise<void> {
    if (this.stopped) return;
    this.visitOut = false;
    return this.run(this.core.visitDone(obs, now));
  }
}

/** What the driver needs of the energy detector. */
export interface Detector {
  detect(block: IqBlock): { windows: number; busyWindows: number; meanPowerDbm: number; busyMeanPowerDbm: number | undefined };
  /** A buffer the detector reads in place (its backend's memory), or undefined. */
  allocateBlock?(count: number): Float32Array | undefined;
}

/** What a node on front-ends reports beyond its core's events. */
export type DriverEvent =
  | NodeEvent
  | { kind: 'r1-tuned'; channel: number; retuneUs: Micros; atUs: Micros }
  | { kind: 'tx-paused' | 'tx-resumed'; round: number; atUs: Micros }
  | { kind: 'driver-error'; where: string; error: unknown; atUs: Micros };

export interface FrontendSensingParts {
  plan: ChannelPlan;
  scheduler: Scheduler;
  /** The radio that senses. */
  sensing: Frontend;
  /** The receive radio, tuned to the decided channel (may be the sensing radio itself). */
  r1: Frontend;
  detector: Detector;
  onEvent: (e: DriverEvent) => void;
  /** Largest block read from a front-end at once, in complex samples. */
  maxBlockSamples?: number;
  /** Reads the IQ the detector reads (the monitor's spectrum and recordings). */
  iqTap?: IqTap;
}

/**
 * Sensing radios that are front-ends (hardware, recordings, the sim
 * front-end on an emulated band): tunes and reads are awaited, in real
 * time or in virtual time (the engine pumped by `runVirtual`).
 */
export class FrontendSensing implements SensingRadios {
  private txPaused = false;
  private readonly maxBlock: number;
  /** Where sensing blocks are read into: the detector's own memory when it has some, so no block is copied. */
  private readonly blockBuffer: Float32Array | undefined;

  constructor(private readonly p: FrontendSensingParts) {
    this.maxBlock = p.maxBlockSamples ?? 1 << 16;
    this.blockBuffer = p.detector.allocateBlock?.(this.maxBlock);
  }

  get transmitPaused(): boolean {
    return this.txPaused;
  }

  now(): Micros {
    return this.p.scheduler.now();
  }

  at(at: Micros, fn: (now: Micros) => void): void {
    this.p.scheduler.at(at, fn);
  }

  pauseTx(round: number, now: Micros): void {
    this.txPaused = true;
    this.p.onEvent({ kind: 'tx-paused', round, atUs: now });
  }

  resumeTx(round: number, now: Micros): void {
    this.txPaused = false;
    this.p.onEvent({ kind: 'tx-resumed', round, atUs: now });
  }

  event(e: NodeEvent): void {
    this.p.onEvent(e);
  }

  fault(where: string, error: unknown, now: Micros): void {
    this.p.onEvent({ kind: 'driver-error', where, error, atUs: now });
  }

  capture(v: Visit): Promise<ChannelObservation> {
    return captureVisit(this.p.sensing, v, {
      plan: this.p.plan,
      scheduler: this.p.scheduler,
      detector: this.p.detector,
      maxBlock: this.maxBlock,
      buffer: this.blockBuffer,
      tap: this.p.iqTap,
    });
  }

  async tuneR1(channel: number): Promise<void> {
    try {
      const r = await this.p.r1.tune(this.p.plan.get(channel).centerHz);
      this.p.onEvent({ kind: 'r1-tuned', channel, retuneUs: r.retuneUs, atUs: this.now() });
    } catch (error) {
      this.p.onEvent({ kind: 'driver-error', where: `tuning R1 to channel ${channel}`, error, atUs: this.now() });
    }
  }

  afterRound(r1Channel: number): void | Promise<void> {
    if (this.p.sensing === this.p.r1) return this.tuneR1(r1Channel);
  }
}

/** What a visit through a front-end reads with: see `captureVisit`. */
export interface VisitReader {
  plan: ChannelPlan;
  scheduler: Scheduler;
  detector: Detector;
  /** Largest block read at once, in complex samples. */
  maxBlock: number;
  /** Where blocks are read into (the detector's own memory), or undefined for the front-end's. */
  buffer: Float32Array | undefined;
  tap?: IqTap | undefined;
}

/**
 * A visit of the energy detector through front-end `fe`: tuned to the
 * visit's channel (its retune cost is the front-end's own), then read and
 * detected block by block for the visit's capture time, cut short where
 * timer lateness would run past the visit's end (real time would otherwise
 * add it up over a round's visits and stretch T_s).
 */
export async function captureVisit(fe: Frontend, v: Visit, r: VisitReader): Promise<ChannelObservation> {
  await fe.tune(r.plan.get(v.channel).centerHz);
  const captureUs = Math.max(0, Math.min(v.captureUs, v.endUs - r.scheduler.now()));
  let remaining = Math.round((captureUs * fe.capabilities.sampleRateHz) / 1e6);
  const tally = new VisitTally();
  while (remaining > 0) {
    const n = Math.min(remaining, r.maxBlock);
    const block = await fe.readIq(n, r.buffer);
    tally.add(r.detector.detect(block));
    r.tap?.block(v, block);
    remaining -= n;
  }
  r.tap?.visitEnd(v, r.scheduler.now());
  return tally.observation(v.channel, r.scheduler.now());
}

/**
 * How a router senses the emulated band: `iq` synthesises the samples and
 * runs the energy detector over them, as on a real node; `statistical`
 * draws each detector window's energy from its exact distribution instead
 * (EmulatedBand.windowEnergies), with the same windows, blocks and busy
 * test, for simulations that need the detector's counts and not the
 * samples.
 */
export type SensingModel = 'iq' | 'statistical';

/** Complex samples a simulated router synthesises and detects at once; a visit longer than that is several blocks. */
export const SENSE_BLOCK_SAMPLES = 65536;

/** What the statistical model needs of the energy detector. */
export interface WindowDetector {
  windowSamples(sampleRateHz: number): number;
  detectWindowEnergies(w: { energies: Float64Array; windows: number; leftoverSamples: number; sampleRateHz: number; calibrationDb: number }): {
    windows: number;
    busyWindows: number;
    meanPowerDbm: number;
    busyMeanPowerDbm: number | undefined;
  };
}

/**
 * A visit to the emulated band in the statistical model: what `senseBand`
 * finds over blocks of `blockSamples` samples, each window's energy drawn
 * from its distribution into `energies` (at least blockSamples /
 * windowSamples long) instead of summed over synthesised samples. A block's
 * trailing part window goes uncounted, as in `senseBand`.
 */
export function senseBandStatistical(
  band: EmulatedBand,
  detector: WindowDetector,
  radio: { sampleRateHz: number; calibrationDb: number; gainDb: number },
  centerHz: number,
  fromUs: Micros,
  captureUs: Micros,
  blockSamples: number,
  energies: Float64Array,
  noise: Rng,
): VisitTally {
  const rate = radio.sampleRateHz;
  const cal = radio.calibrationDb - radio.gainDb;
  const ws = detector.windowSamples(rate);
  return visitBlocks(rate, fromUs, captureUs, blockSamples, (t, n) => {
    const windows = band.windowEnergies(centerHz, t, n, rate, cal, ws, energies, noise);
    return detector.detectWindowEnergies({ energies, windows, leftoverSamples: n - windows * ws, sampleRateHz: rate, calibrationDb: cal });
  });
}

/** A visit's capture taken block by block (at most `maxBlock` samples each, from `fromUs`), what each block found added up. */
function visitBlocks(
  rate: number,
  fromUs: Micros,
  captureUs: Micros,
  maxBlock: number,
  block: (t: Micros, n: number) => Parameters<VisitTally['add']>[0],
): VisitTally {
  let remaining = Math.round((captureUs * rate) / 1e6);
  let t = fromUs;
  const tally = new VisitTally();
  while (remaining > 0) {
    const n = Math.min(remaining, maxBlock);
    tally.add(block(t, n));
    remaining -= n;
    t += (n * 1e6) / rate;
  }
  return tally;
}

/**
 * A visit to the emulated band, at once: the band's IQ over the visit's
 * capture, synthesised and detected block by block into `iq`; `tap` sees
 * each block after the detector.
 */
export function senseBand(
  band: EmulatedBand,
  detector: Detector,
  radio: { sampleRateHz: number; calibrationDb: number; gainDb: number },
  centerHz: number,
  fromUs: Micros,
  captureUs: Micros,
  iq: Float32Array,
  noise: Rng,
  tap?: (block: IqBlock) => void,
): VisitTally {
  const rate = radio.sampleRateHz;
  const cal = radio.calibrationDb - radio.gainDb;
  return visitBlocks(rate, fromUs, captureUs, iq.length / 2, (t, n) => {
    band.synthesize(centerHz, t, n, rate, cal, iq, noise);
    const block: IqBlock = { data: iq, count: n, startUs: t, sampleRateHz: rate, centerHz, calibrationDb: cal, droppedSamples: 0 };
    const seen = detector.detect(block);
    tap?.(block);
    return seen;
  });
}

/**
 * A node core driven over front-ends, with the driver's own timer on the
 * parts' scheduler: R1 tunes to the core's first channel and the rounds
 * begin. `radios` tells whether a round holds transmission.
 */
export function startFrontendSensing(core: NodeCore, parts: FrontendSensingParts): { driver: SensingDriver; radios: FrontendSensing } {
  const radios = new FrontendSensing(parts);
  const driver = new SensingDriver(core, radios);
  driver.start(parts.scheduler.now(), parts.scheduler);
  return { driver, radios };
}
