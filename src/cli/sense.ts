import { Command } from 'commander';
import { ism2g4 } from '../../radio/channels.js';
import { ChannelDecision } from '../channel/decision.js';
import { applyOverrides, defaultNodeConfig, loadNodeConfig } from '../config/load.js';
import type { NodeConfig, PnConfig } from '../config/types.js';
import { EventEngine } from '../core/engine.js';
import { UsageError } from '../core/errors.js';
import { seconds } from '../core/time.js';
import { decisionParams } from '../node/core.js';
import { createLogger } from '../node/log.js';
import { startNode } from '../node/run.js';
import { runVirtual } from '../sim/pump.js';
import { remainingCapacity } from '../channel/capacity.js';
import { Writable } from 'node:stream';

export interface SenseOptions {
  pn: string;
  seconds: string;
  seed: string;
  json?: boolean;
  channels: string;
  powerDbm: string;
  burstMs: string;
  dwellMs: string;
  ccaDbm?: string;
  config?: string;
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

const num = (flag: string, v: string, check: (n: number) => boolean, expected: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || !check(n)) throw new UsageError(`${flag}: "${v}" is not ${expected}`);
  return n;
};

/**
 * Senses the emulated band in virtual time: the sensing radio scans every
 * channel in turn for the whole run (no idle time between rounds), pooling
 * every sample monitored into w (equation 1), then reports w, RC and the
 * channel R1 would take.
 */
export async function runSense(o: SenseOptions): Promise<SenseResult> {
  const secs = num('--seconds', o.seconds, (n) => n > 0 && n <= 3600, 'a number of seconds in (0, 3600]');
  const seed = num('--seed', o.seed, (n) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff, 'an integer seed in [0, 4294967295]');
  const nch = num('--channels', o.channels, (n) => n === 11 || n === 13, '11 or 13');
  const power = num('--power-dbm', o.powerDbm, (n) => n >= -130 && n <= 30, 'a power in dBm in [-130, 30]');
  const burst = num('--burst-ms', o.burstMs, (n) => n > 0 && n <= 10000, 'a mean burst length in ms in (0, 10000]');
  const dwell = num('--dwell-ms', o.dwellMs, (n) => n >= 2 && n <= 1000, 'a dwell per channel in ms in [2, 1000]');
  const pn = parsePnList(o.pn, nch, power, burst);

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
  const C = cfg.channel.capacityMbps * 1e6;
  const est = new Map(node.core.workload.all().map((e) => [e.channel, e]));
  const channels = plan.channels.map((c) => {
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
  const decision = new ChannelDecision(plan, decisionParams(cfg, plan)).decide(
    new Map([...est.values()].map((e) => [e.channel, e.w])),
    new Map(),
    0,
  );
  return { seconds: secs, seed, plan: plan.name, channels, r1: decision.channel ?? null };
}

export function formatSense(r: SenseResult): string {
  const lines = [`sensed ${r.plan} for ${r.seconds} s (virtual time, seed ${r.seed})`, ' ch   MHz      w   RC Mbps  power dBm  busy'];
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
    .description('sense the emulated band with given primary-node loads and print w and RC per channel and the R1 choice')
    .requiredOption('--pn <list>', 'busy fraction per channel, CH:BUSY[,CH:BUSY...]; channels not named are idle')
    .option('--seconds <s>', 'virtual seconds to sense', '5')
    .option('--seed <n>', 'random seed (same seed, same output)', '1')
    .option('--json', 'print one JSON object: {"channels":[{"channel","w","rc",...}],"r1":N}')
    .option('--channels <n>', 'channel plan: 11 or 13 channels', '11')
    .option('--power-dbm <dbm>', 'received power of every primary node while it transmits', '-50')
    .option('--burst-ms <ms>', 'mean length of a primary-node burst', '1')
    .option('--dwell-ms <ms>', 'time on each channel per sweep, retune included', '10')
    .option('--cca-dbm <dbm>', 'CCA energy threshold (default: the configuration\'s, -62)')
    .option('--config <file>', 'take the other node parameters (C, window, calibration) from this configuration')
    .action(async (o: SenseOptions) => {
      const r = await runSense(o);
      process.stdout.write(o.json ? `${JSON.stringify(r)}\n` : formatSense(r));
    });
}
