/**
 * Two routers over the DSSS PHY in real time: the pair of
 * test/support/phy-pair.ts (two `cogmesh node` processes on sim radios at
 * 11 Msample/s, a `cogmesh band` hub between their bands, HELLO on R3 and a
 * UDP flow of 75 packets over R2 and R1 from 5 s of router time (both
 * routers up and neighbours by then), every frame sent and found again as
 * IQ samples) at each time scale asked for, real time first, and the same
 * pair in slow motion as the reference in the same run (docs/phy.md):
 *
 *   npm run build && node --import tsx bench/phy-mesh.ts [--scales 1,0.2] [--runs 1] [--json]
 *
 * Every run has the same router-time settings: a host-based radio's read
 * latency of 6 ms (sim.band.readLatencyUs), SIFS 8 ms and an ACK timeout of
 * 24 ms (phy.timing), room for a burst to cross the hub between processes
 * before the other band has made the samples it falls in. It prints per
 * run: the delivery ratio, the wall time until both routers had the other
 * as a neighbour, R2's attempts per delivered frame, the bursts that came
 * late to the other band (their start unheard), the routers' largest event
 * lag, and the CPU each router process used per second of router time (1.0
 * is a whole core); then each scale's delivery ratio over the slowest
 * scale's. The routers run the build (bin/cogmesh.js).
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { runPhyPair, type PairStatus, type StationStatus } from '../test/support/phy-pair.js';

const { values } = parseArgs({
  options: {
    scales: { type: 'string', default: '1,0.2' },
    runs: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
  },
});
const fail = (what: string): never => {
  process.stderr.write(`bench/phy-mesh.ts: ${what}\n`);
  process.exit(2);
};
const scales = (values.scales ?? '').split(',').map(Number);
if (scales.length === 0 || !scales.every((s) => s > 0 && s <= 1)) fail(`--scales: "${values.scales}" is not a list of time scales in (0, 1]`);
const runs = Number(values.runs);
if (!(Number.isInteger(runs) && runs >= 1 && runs <= 10)) fail(`--runs: "${values.runs}" is not a number of runs in [1, 10]`);

interface Row {
  timeScale: number;
  run: number;
  sent: number;
  received: number;
  deliveryRatio: number;
  helloWallS: number;
  r2AttemptsPerFrame: number;
  lateBursts: number;
  remoteBursts: number;
  lagMaxMs: number;
  /** The source router's drops by reason (none but those that happened). */
  drops: Record<string, number>;
  cpuPerRouterSecond: [number, number];
}

const rows: Row[] = [];
for (let run = 1; run <= runs; run++) {
  for (const timeScale of scales) {
    const r = await runPhyPair({
      timeScale,
      readLatencyUs: 6000,
      sifsUs: 8000,
      ackTimeoutUs: 24000,
      flowStartS: 5,
      built: true,
      flowTimeoutMs: 60_000 / timeScale + 60_000,
    });
    const [s1, s2] = r.status;
    const r2 = s1.medium['phy1/R2'] as StationStatus;
    const band = (s: PairStatus): { late: number; remote: number } => s.medium.band as { late: number; remote: number };
    rows.push({
      timeScale,
      run,
      sent: r.sent,
      received: r.received,
      deliveryRatio: r.received / r.sent,
      helloWallS: r.helloWallS,
      r2AttemptsPerFrame: (r2.acked + r2.retries) / Math.max(1, r2.acked),
      lateBursts: band(s1).late + band(s2).late,
      remoteBursts: band(s1).remote + band(s2).remote,
      lagMaxMs: Math.max(s1.lagMaxMs, s2.lagMaxMs),
      drops: Object.fromEntries(Object.entries(s1.drops).filter(([, n]) => n > 0)),
      // Router time elapsed is its uptime: CPU over it, per process.
      cpuPerRouterSecond: [r.cpuS[0] / s1.uptimeS, r.cpuS[1] / s2.uptimeS],
    });
  }
}

const slowest = Math.min(...scales);
const refRatio = (run: number): number => rows.find((x) => x.run === run && x.timeScale === slowest)!.deliveryRatio;
const machine = { cores: cpus().length, load: loadavg().map((l) => Number(l.toFixed(2))) };
if (values.json) {
  process.stdout.write(JSON.stringify({ machine, rows: rows.map((x) => ({ ...x, deliveryVsSlowest: x.deliveryRatio / refRatio(x.run) })) }, null, 2) + '\n');
} else {
  console.log(`machine: ${machine.cores} cores, load average ${machine.load.join(' ')}`);
  console.log(
    '| time scale | run | delivered | ratio | vs slowest | HELLO both ways (s wall) | R2 attempts per frame | late bursts | max lag (ms) | drops at the source | CPU per router second |',
  );
  console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :--- | ---: |');
  for (const x of rows) {
    console.log(
      `| ${x.timeScale} | ${x.run} | ${x.received} of ${x.sent} | ${x.deliveryRatio.toFixed(3)} | ${(x.deliveryRatio / refRatio(x.run)).toFixed(2)} | ${x.helloWallS.toFixed(1)} | ${x.r2AttemptsPerFrame.toFixed(2)} | ${x.lateBursts} of ${x.remoteBursts} | ${x.lagMaxMs.toFixed(0)} | ${
        Object.entries(x.drops)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ') || 'none'
      } | ${x.cpuPerRouterSecond.map((c) => c.toFixed(2)).join(', ')} |`,
    );
  }
}
