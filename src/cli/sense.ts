import { Command } from 'commander';
import { ism2g4, type ChannelPlan } from '../../radio/channels.js';
import type { Frontend } from '../../radio/frontend.js';
import { ChannelDecision } from '../channel/decision.js';
import { applyOverrides, defaultNodeConfig, loadNodeConfig } from '../config/load.js';
import type { NodeConfig, PnConfig } from '../config/types.js';
import { EventEngine } from '../core/engine.js';
import { FrontendError, UsageError } from '../core/errors.js';
import { RealTimeScheduler, type Scheduler } from '../core/scheduler.js';
import { seconds } from '../core/time.js';
import { chooseBackend } from '../sensing/backend.js';
import { EnergyDetector } from '../sensing/detector.js';
import type { ChannelWorkload } from '../sensing/workload.js';
import { NodeCore } from '../router/node-core.js';
import { decisionParams } from '../router/params.js';
import { startFrontendSensing, type DriverEvent } from '../router/sensing.js';
import { createLogger } from '../core/log.js';
import { openDeviceRadio, openRecording } from '../daemon/radios.js';
import { startNode } from '../daemon/node.js';
import { runVirtual } from '../core/pump.js';
import { remainingCapacity } from '../channel/capacity.js';
import { Writable } from 'node:stream';
import { LISTED } from './listed.js';
import { numberArg } from './usage.js';

export interface SenseOptions {
  /** Required with the sim front-end, refused with the others. */
  pn?: string;
  seconds: string;
  seed: string;
  json?: boolean;
  channels: string;
  powerDbm: string;
  burstMs: string;
  dwellMs: string;
  ccaDbm?: string;
  config?: string;
  /** `sim` (default), `file` (a SigMF recording, --input) or `uhd`. */
  frontend?: string;
  /** The recording for `--frontend file`. */
  input?: string;
  /** UHD device arguments for `--frontend uhd` (default: the configuration's sensing radio's `device`). */
  deviceArgs?: string;
}

export interface SenseResult {
  seconds: number;
  seed: number;
  plan: string;
  channels: Array<{ channel: number; centerMHz: number; w: number; rc: number; powerDbm: number | null; windows: number }>;
  r1: number | null;
}

/** Parses `CH:BUSY[,CH:BUSY...]`, naming the first bad item. */
export function parsePnList(text: string, channels: number, powerDbm: number, meanBurstMs: number): PnConfig[] {
  const out: PnConfig[] = [];
  const seen = new Set<number>();
  if (text.trim() === '') return out;
  for (const item of text.split(',')) {
    const m = /^\s*(\d+)\s*:\s*([0-9.]+)\s*$/.exec(item);
    if (!m) throw new UsageError(`--pn: "${item}" is not CH:BUSY (e.g. 6:0.8)`);
    const ch = Number(m[1]);
    const busy = Number(m[2]);
    if (ch < 1 || ch > channels) throw new UsageError(`--pn: channel ${ch} in "${item}" is not in the ${channels}-channel plan (1-${channels})`);
    if (!(busy >= 0 && busy <= 1)) throw new UsageError(`--pn: busy fraction ${m[2]} in "${item}" is not between 0 and 1`);
    if (seen.has(ch)) throw new UsageError(`--pn: channel ${ch} is named twice`);
    seen.add(ch);
    out.push({ channel: ch, powerDbm, pattern: { kind: 'fraction', busy, meanBurstMs } });
  }
  return out;
}

/**
 * Senses in virtual time (the emulated band, or a recording) or in real time
 * (a UHD radio): the sensing radio scans every channel in turn for the whole
 * run (no idle time between rounds), pooling every sample monitored into w
 * (equation 1), then reports w, RC and the channel R1 would take. A
 * recording is scanned over the channels it holds, each visited as on the
 * emulated band.
 */
export async function runSense(o: SenseOptions): Promise<SenseResult> {
  const frontend = o.frontend ?? 'sim';
  if (frontend !== 'sim' && frontend !== 'file' && frontend !== 'uhd') {
    throw new UsageError(`--frontend: "${frontend}" is not sim, file or uhd`);
  }
  if (frontend === 'file' && o.input === undefined) throw new UsageError('--frontend file needs --input PATH (a SigMF recording, NAME.sigmf-meta)');
  if (frontend !== 'file' && o.input !== undefined) throw new UsageError(`--input: a recording is read with --frontend file, not ${frontend}`);
  if (frontend === 'sim' && o.pn === undefined) throw new UsageError('--pn: required with --frontend sim (the busy fraction per channel, e.g. 6:0.8)');
  if (frontend !== 'sim' && o.pn !== undefined) {
    throw new UsageError(`--pn: sets the emulated band's primary nodes; with --frontend ${frontend} the loads are whatever the radio sees`);
  }
  if (frontend !== 'uhd' && o.deviceArgs !== undefined) throw new UsageError(`--device-args: for --frontend uhd, not ${frontend}`);
  const secs = numberArg('--seconds', o.seconds, (n) => n > 0 && n <= 3600, 'a number of seconds in (0, 3600]');
  const seed = numberArg('--seed', o.seed, (n) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff, 'an integer seed in [0, 4294967295]');
  const nch = numberArg('--channels', o.channels, (n) => n === 11 || n === 13, '11 or 13');
  const power = numberArg('--power-dbm', o.powerDbm, (n) => n >= -130 && n <= 30, 'a power in dBm in [-130, 30]');
  const burst = numberArg('--burst-ms', o.burstMs, (n) => n > 0 && n <= 10000, 'a mean burst length in ms in (0, 10000]');
  const dwell = numberArg('--dwell-ms', o.dwellMs, (n) => n >= 2 && n <= 1000, 'a dwell per channel in ms in [2, 1000]');
  if (frontend === 'file') return senseRecording(o, o.input!, secs, seed, nch as 11 | 13, dwell);
  if (frontend === 'uhd') return senseUhd(o, secs, seed, nch as 11 | 13, dwell);
  const pn = parsePnList(o.pn!, nch, power, burst);

  const base: NodeConfig = o.config ? await loadNodeConfig(o.config) : defaultNodeConfig(1);
  const sets = [
    'channelPlan.allowed=[]',
    `node.seed=${seed}`,
    `channelPlan.channels=${nch}`,
    `sim.band.pn=${JSON.stringify(pn)}`,
    'sim.band.phases=[]',
    'sensing.channelsPerRound=0',
    `sensing.durationMs=${dwell * nch}`,
    `sensing.periodMs=${dwell * nch}`,
    ...(o.ccaDbm !== undefined ? [`sensing.ccaThresholdDbm=${o.ccaDbm}`] : []),
  ];
  // applyOverrides validates the result whole and hands back a fresh object.
  const cfg = applyOverrides(base, sets, 'sense configuration');
  // Pool every sample of the run: equation (1) over everything monitored (beyond the schema's 0.99).
  cfg.sensing.memory = 1;

  const engine = new EventEngine();
  const silent = new Writable({ write: (_c, _e, cb) => cb() });
  const log = createLogger({ level: 'warn', format: 'json', virtualClock: engine.clock, destination: silent });
  const node = await startNode(cfg, { scheduler: engine, log, reproducible: true });
  await runVirtual(engine, seconds(secs));
  await node.stop();

  const plan = ism2g4(cfg.channelPlan.channels);
  return summarize(cfg, plan, plan.numbers, node.core.workload.all(), secs, seed);
}

/** The report: w, RC and mean power for each of `channels`, and the channel R1 would take. */
function summarize(cfg: NodeConfig, plan: ChannelPlan, channels: readonly number[], workload: ChannelWorkload[], secs: number, seed: number): SenseResult {
  const C = cfg.channel.capacityMbps * 1e6;
  const est = new Map(workload.map((e) => [e.channel, e]));
  const rows = channels.map((n) => {
    const c = plan.get(n);
    const e = est.get(c.number);
    const w = e ? e.w : 1;
    return {
      channel: c.number,
      centerMHz: c.centerHz / 1e6,
      w: Math.round(w * 10000) / 10000,
      rc: Math.round(remainingCapacity(w, C)),
      powerDbm: e && Number.isFinite(e.meanPowerDbm) ? Math.round(e.meanPowerDbm * 10) / 10 : null,
      windows: e ? Math.round(e.windows) : 0,
    };
  });
  const decision = new ChannelDecision(plan, decisionParams(cfg, plan)).decide(new Map([...est.values()].map((e) => [e.channel, e.w])), new Map(), 0);
  return { seconds: secs, seed, plan: plan.name, channels: rows, r1: decision.channel ?? null };
}

/** The sense configuration for a radio other than the emulated band: the given channels scanned in turn. */
async function senseConfig(o: SenseOptions, seed: number, nch: 11 | 13, dwell: number, channels: readonly number[]): Promise<NodeConfig> {
  const base: NodeConfig = o.config ? await loadNodeConfig(o.config) : defaultNodeConfig(1);
  const cfg = applyOverrides(
    base,
    [
      `channelPlan.allowed=${JSON.stringify(channels)}`,
      `node.seed=${seed}`,
      `channelPlan.channels=${nch}`,
      'sensing.channelsPerRound=0',
      `sensing.durationMs=${dwell * channels.length}`,
      `sensing.periodMs=${dwell * channels.length}`,
      ...(o.ccaDbm !== undefined ? [`sensing.ccaThresholdDbm=${o.ccaDbm}`] : []),
    ],
    'sense configuration',
  );
  cfg.sensing.memory = 1;
  return cfg;
}

/**
 * Runs the node's sensing loop (its core and driver, as startNode wires
 * them) on one front-end that both senses and stands in for R1, until `run`
 * returns. A visit that fails ends the run with its error.
 */
async function senseOn(fe: Frontend, cfg: NodeConfig, plan: ChannelPlan, scheduler: Scheduler, run: () => Promise<void>): Promise<ChannelWorkload[]> {
  const choice = await chooseBackend(cfg.sensing.backend);
  const detector = new EnergyDetector({ windowUs: cfg.sensing.windowUs, ccaThresholdDbm: cfg.sensing.ccaThresholdDbm }, choice.backend);
  const core = new NodeCore(cfg, plan, fe.capabilities.retuneUs, scheduler.now());
  let failure: unknown;
  const { driver } = startFrontendSensing(core, {
    plan,
    scheduler,
    sensing: fe,
    r1: fe,
    detector,
    onEvent: (e: DriverEvent) => {
      if (e.kind === 'driver-error' && failure === undefined) failure = e.error;
    },
  });
  try {
    await run();
  } finally {
    await driver.stop();
  }
  if (failure !== undefined) throw failure;
  return core.workload.all();
}

/** Senses a SigMF recording in virtual time, over the channels it holds. */
async function senseRecording(o: SenseOptions, input: string, secs: number, seed: number, nch: 11 | 13, dwell: number): Promise<SenseResult> {
  const plan = ism2g4(nch);
  const base: NodeConfig = o.config ? await loadNodeConfig(o.config) : defaultNodeConfig(1);
  const radio = base.radios[base.sensing.radio];
  // Reads done before readIq returns: the virtual-time pump waits for promises, never for I/O.
  const fe = await openRecording({ ...radio, device: input }, { id: 'sense/file', syncReads: true });
  try {
    const channels = fe.frequencies.map((f) => {
      const c = plan.channels.find((x) => Math.abs(x.centerHz - f) < 0.5);
      if (!c) {
        throw new FrontendError(
          'RADIO_NOT_A_CHANNEL',
          `${input}: the recording's ${f / 1e6} MHz is not a channel centre of plan ${plan.name}${nch === 11 ? ' (--channels 13 for the 13-channel plan)' : ''}`,
        );
      }
      return c.number;
    });
    const cfg = await senseConfig(o, seed, nch, dwell, channels);
    const engine = new EventEngine();
    const workload = await senseOn(fe, cfg, plan, engine, () => runVirtual(engine, seconds(secs)));
    return summarize(cfg, plan, channels, workload, secs, seed);
  } finally {
    await fe.close();
  }
}

/** Senses with a USRP through UHD, in real time, every channel of the plan in turn. */
async function senseUhd(o: SenseOptions, secs: number, seed: number, nch: 11 | 13, dwell: number): Promise<SenseResult> {
  const plan = ism2g4(nch);
  const cfg = await senseConfig(o, seed, nch, dwell, plan.numbers);
  const radio = cfg.radios[cfg.sensing.radio];
  const fe = await openDeviceRadio('--frontend uhd', { ...radio, frontend: 'uhd', device: o.deviceArgs ?? radio.device }, { id: 'sense/uhd' });
  const scheduler = new RealTimeScheduler();
  try {
    const workload = await senseOn(fe, cfg, plan, scheduler, () => new Promise((resolve) => setTimeout(resolve, secs * 1000)));
    return summarize(cfg, plan, plan.numbers, workload, secs, seed);
  } finally {
    scheduler.cancelAll();
    await fe.close();
  }
}

/** Text for people; `source` tells what was sensed when it was not the emulated band. */
export function formatSense(r: SenseResult, source?: string): string {
  const what = source === undefined ? `(virtual time, seed ${r.seed})` : `(${source})`;
  const lines = [`sensed ${r.plan} for ${r.seconds} s ${what}`, ' ch   MHz      w   RC Mbps  power dBm  busy'];
  for (const c of r.channels) {
    const bar = '#'.repeat(Math.round(c.w * 20)).padEnd(20, '.');
    lines.push(
      `${String(c.channel).padStart(3)}  ${c.centerMHz.toFixed(0)}  ${c.w.toFixed(3)}  ${(c.rc / 1e6).toFixed(3).padStart(7)}  ${(c.powerDbm === null ? '-' : c.powerDbm.toFixed(1)).padStart(9)}  ${bar}`,
    );
  }
  lines.push(r.r1 === null ? 'R1: no channel measured' : `R1 would take channel ${r.r1}`);
  return `${lines.join('\n')}\n`;
}

export function senseCommand(): Command {
  return new Command('sense')
    .description(LISTED.sense.about)
    .option('--pn <list>', 'busy fraction per channel, CH:BUSY[,CH:BUSY...]; channels not named are idle (required with --frontend sim)')
    .option('--frontend <kind>', 'what to sense: sim (the emulated band), file (a SigMF recording, --input), uhd (a USRP)', 'sim')
    .option('--input <path>', 'the SigMF recording for --frontend file (NAME.sigmf-meta)')
    .option('--device-args <args>', "UHD device arguments for --frontend uhd (default: the configuration's sensing radio device)")
    .option('--seconds <s>', 'seconds to sense (virtual, real with uhd)', '5')
    .option('--seed <n>', 'random seed (same seed, same output)', '1')
    .option('--json', 'print one JSON object: {"channels":[{"channel","w","rc",...}],"r1":N}')
    .option('--channels <n>', 'channel plan: 11 or 13 channels', '11')
    .option('--power-dbm <dbm>', 'received power of every primary node while it transmits', '-50')
    .option('--burst-ms <ms>', 'mean length of a primary-node burst', '1')
    .option('--dwell-ms <ms>', 'time on each channel per sweep, retune included', '10')
    .option('--cca-dbm <dbm>', "CCA energy threshold (default: the configuration's, -62)")
    .option('--config <file>', 'take the other node parameters (C, window, calibration) from this configuration')
    .action(async (o: SenseOptions) => {
      const r = await runSense(o);
      const source = o.frontend === 'file' ? `recording ${o.input}, virtual time` : o.frontend === 'uhd' ? 'UHD radio, real time' : undefined;
      process.stdout.write(o.json ? `${JSON.stringify(r)}\n` : formatSense(r, source));
    });
}
