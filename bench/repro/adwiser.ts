/**
 * seeds/003 (ADWISER v2) reproduced with Linux TCP in the real-time testbed
 * (docs/reproduction.md, "ADWISER v2 at the gateway"): `cogmesh testbed
 * --netns` on the ideal medium (802.11g at 54 Mbps, no PNs, no sensing),
 * the server in the host namespace behind router 0 (the gateway, its LAN
 * or its emulated WAN, `ip.wan`), each client in the host namespace behind
 * its router, iperf3 from the server to the clients (the paper's
 * downloads), the gateway set live through the control API.
 *
 *  table2    seeds/003 Table 2: time-sliced LAN-to-mesh TCP for several
 *            T_on of T (T = 1 s as in Figs. 8 and 9, and 100 ms), with
 *            CUBIC and Reno, F-RTO on and off, against C x T_on / T.
 *  fig8      Fig. 8: a 150 ms WAN RTT, the access link (R_in = 8 Mbps) the
 *            bottleneck: with and without the proxy (TCP-ACC on the
 *            gateway), with and without time slicing (T_on 360 of 1000 ms).
 *  fig9      Fig. 9: the same with R_in = 32 Mbps, the mesh the bottleneck.
 *  tables34  Tables 3 and 4: slice sweeps with the proxy, R_in 8 and 32 Mbps.
 *  fig17     A Fig. 17-like run: three clients behind dependent mesh links
 *            (one channel), unmanaged (no gateway) against managed (slices
 *            from the dependence graph, Algorithm 2's rates): per-client
 *            throughput and aggregate utility (sum of log).
 *
 * The paper's rates are 802.11g's at one AP; every rate here (C, R_in) is
 * the paper's times --scale (0.5 by default), so that two routers' worth of
 * software radios on a 2-core machine carry it; the delays are the paper's.
 *
 *   npm run build && sudo npm run repro:adwiser -- [--only table2,fig8,fig9,tables34,fig17]
 *        [--scale 0.5] [--seconds 20] [--wan-seconds 30] [--plots DIR | --update-docs] [--json]
 *
 * Needs root, iproute2, iperf3 and the build (bin/cogmesh.js). Every
 * namespace it made is gone when it ends, also on failure or Ctrl-C.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ControlClient } from '../../src/control/client.js';
import type { GatewayState } from '../../src/gateway/role.js';
import { buildStaleness, IDEAL_MEDIUM, startTestbed, type Testbed } from '../ip/testbed.js';
import { cleanupAll, cleanupOnSignals, must, run, sleep } from '../ip/sys.js';
import { barChart, lineChart, writeChart } from './plot.js';
import { DOCS_FIGURES, OUT_FIGURES } from './common.js';

const EXPERIMENTS = ['table2', 'fig8', 'fig9', 'tables34', 'fig17'] as const;
type Experiment = (typeof EXPERIMENTS)[number];

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: EXPERIMENTS.join(',') },
    scale: { type: 'string', default: '0.5' },
    seconds: { type: 'string', default: '15' },
    'wan-seconds': { type: 'string', default: '30' },
    plots: { type: 'string' },
    'update-docs': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const usage = (msg: string): never => {
  process.stderr.write(`bench/repro/adwiser.ts: ${msg}\n`);
  process.exit(2);
};
const only = values.only!.split(',').map((s) => s.trim()) as Experiment[];
for (const e of only) if (!(EXPERIMENTS as readonly string[]).includes(e)) usage(`--only: "${e}" is not one of ${EXPERIMENTS.join(', ')}`);
const K = Number(values.scale);
if (!(K > 0 && K <= 1)) usage(`--scale: "${values.scale}" is not a factor in (0, 1]`);
const lanS = Number(values.seconds);
const wanS = Number(values['wan-seconds']);
for (const [flag, v] of [
  ['--seconds', lanS],
  ['--wan-seconds', wanS],
] as const)
  if (!(Number.isInteger(v) && v >= 8)) usage(`${flag}: "${v}" is not a whole number of seconds >= 8`);
if (values['update-docs'] && values.plots !== undefined) usage('--update-docs writes docs/figures: give it or --plots DIR, not both');
const plotDir = values['update-docs'] ? DOCS_FIGURES : (values.plots ?? OUT_FIGURES);
if (process.getuid?.() !== 0) usage('needs root (network namespaces, veth pairs, TUN devices)');
const stale = buildStaleness();
if (stale) usage(`${stale}: run \`npm run build\` first`);
for (const tool of ['ip', 'iperf3']) if ((await run('sh', ['-c', `command -v ${tool}`])).code !== 0) usage(`needs ${tool} on PATH`);
cleanupOnSignals();

/** The paper's figures (Mbps, ms). */
const PAPER = { c: 22, mu: 23, rinLow: 8, rinHigh: 32, wanRttMs: 150, tOnMs: 360, periodMs: 1000 } as const;
const C = PAPER.c * K;
/** T_on of T = 1000 ms for the sweeps. */
const SWEEP_MS = [200, 360, 500, 800];
/** Table 2's shares T_on/T, and its frames: the paper's 1 s (Figs. 8 and 9), and 100 ms, whose off-times are shorter than Linux's least RTO (200 ms). */
const SHARES = SWEEP_MS.map((t) => t / 1000);
const TABLE2_PERIODS_MS = [100, 1000];
const RUN_DIR = '/run/cogmesh/testbeds';
/**
 * The proxy's buffer (TCP-ACC's bufferBytes, half each way): a proxy server
 * such as the paper's Squid holds far more than the WAN's bandwidth-delay
 * product (32 Mbps x 150 ms = 600 KB); TCP-ACC's default 64 KB would cap
 * the WAN leg at 32 KB a round trip, 1.7 Mbps.
 */
const PROXY_BUFFER_BYTES = 4 << 20;

const setArgs = (sets: readonly string[]): string[] => sets.flatMap((s) => ['--set', s]);
const wanSet = (rinMbps: number): string =>
  `nodeOverrides.0.ip.wan=${JSON.stringify({ enabled: true, rateMbps: rinMbps, delayMs: PAPER.wanRttMs / 2, queuePackets: 0, queueBytes: Math.round(((rinMbps * 1e6) / 8) * (PAPER.wanRttMs / 1000)) })}`;

const commands: string[] = [];
const log = (s: string): void => void process.stderr.write(`${s}\n`);

interface Bed {
  tb: Testbed;
  ctl: ControlClient;
  clients: number[];
}

async function bed(label: string, args: string[], routers: number, clients: number[]): Promise<Bed> {
  log(`[${label}] starting the testbed`);
  const tb = await startTestbed({ args, routers, upTimeoutMs: 90_000 });
  commands.push(`[${label}] ${tb.command}`);
  // Every client reachable before a measurement (its route found, its prefix announced).
  for (const i of clients)
    for (let k = 0; ; k++) {
      if ((await run('ip', ['netns', 'exec', tb.hostNs(0), 'ping', '-c', '1', '-W', '1', tb.hostAddr(i)], 5000)).code === 0) break;
      if (k > 60) throw new Error(`[${label}] h0 cannot reach ${tb.hostAddr(i)}`);
    }
  return { tb, ctl: new ControlClient(`ipc://${RUN_DIR}/${tb.tag}.ipc/r0.ctl`), clients };
}

async function closeBed(b: Bed): Promise<void> {
  b.ctl.close();
  await b.tb.stop();
}

/**
 * The server's TCP (host 0, the sender): F-RTO by its namespace's sysctl;
 * the congestion control goes on each iperf3 socket (-C), since a network
 * namespace may only default to the algorithms the machine allows.
 */
let congestion: 'cubic' | 'reno' = 'cubic';
async function serverTcp(b: Bed, cc: 'cubic' | 'reno', frto: boolean): Promise<void> {
  congestion = cc;
  await must('ip', ['netns', 'exec', b.tb.hostNs(0), 'sysctl', '-q', '-w', `net.ipv4.tcp_frto=${frto ? 2 : 0}`]);
}

/** The gateway's section, set live on router 0 (undefined: the gateway off). */
async function gateway(b: Bed, section: Record<string, unknown> | undefined): Promise<void> {
  const r = await b.ctl.request('set', { values: { gateway: section ?? { enabled: false } } }, 5000);
  if (!r.ok) throw new Error(`ctl set gateway: ${JSON.stringify(r)}`);
}

/** One client in a static slice of `tOnMs` of every `periodMs`, served at C. */
const sliced = (client: number, tOnMs: number, periodMs: number = PAPER.periodMs): Record<string, unknown> => ({
  enabled: true,
  clients: [{ id: `h${client}`, prefix: `10.0.${client}.0/24`, router: client }],
  slicing: { periodMs, mode: 'static', static: [{ clients: [`h${client}`], share: tOnMs / periodMs }] },
  rate: { adapt: false, rateMbps: C },
});

let port = 5400;
/** iperf3 from the server (h0) to each client at once for `seconds` (the first `omit` left out): each receiver's rate (Mbps). */
async function download(b: Bed, seconds: number, omit: number): Promise<number[]> {
  const ports = b.clients.map(() => port++);
  const servers = b.clients.map((c, k) => run('ip', ['netns', 'exec', b.tb.hostNs(c), 'iperf3', '-s', '-1', '-p', String(ports[k])], (seconds + 90) * 1000));
  for (const [k, c] of b.clients.entries())
    for (let n = 0; ; n++) {
      const ss = await run('ip', ['netns', 'exec', b.tb.hostNs(c), 'ss', '-Hltn', `sport = :${ports[k]}`]);
      if (ss.stdout.trim() !== '') break;
      if (n > 100) throw new Error(`iperf3 -s in ${b.tb.hostNs(c)} did not listen`);
      await sleep(100);
    }
  const clients = b.clients.map((c, k) =>
    run(
      'ip',
      [
        'netns',
        'exec',
        b.tb.hostNs(0),
        'iperf3',
        '-c',
        b.tb.hostAddr(c),
        '-p',
        String(ports[k]),
        '-t',
        String(seconds),
        '-O',
        String(omit),
        '-C',
        congestion,
        '-J',
      ],
      (seconds + 90) * 1000,
    ),
  );
  const out = await Promise.all(clients);
  await Promise.all(servers);
  return out.map((r, k) => {
    const j = JSON.parse(r.stdout || '{}') as { end?: { sum_received?: { bits_per_second: number } }; error?: string };
    if (r.code !== 0 || !j.end?.sum_received) throw new Error(`iperf3 to ${b.tb.hostAddr(b.clients[k]!)}: ${j.error ?? r.stderr}`);
    return j.end.sum_received.bits_per_second / 1e6;
  });
}

const f = (x: number, d = 2): string => x.toFixed(d);
const results: Record<string, unknown> = { scale: K, cMbps: C };
/** Each experiment's table goes out as soon as it is measured (with --json, everything at the end). */
const out = {
  push: (...lines: string[]): void => {
    if (!values.json) process.stdout.write(`${lines.join('\n')}\n`);
  },
};
const table = (head: string[], rows: string[][]): string =>
  [`| ${head.join(' | ')} |`, `| ${head.map((h, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
const plot = async (name: string, svg: Promise<string>): Promise<void> => {
  if (plotDir !== '') await writeChart(join(plotDir, name), await svg);
};

try {
  if (only.includes('table2')) {
    const b = await bed('table2', ['--hops', '1', ...setArgs(IDEAL_MEDIUM)], 2, [1]);
    try {
      await gateway(b, undefined);
      await serverTcp(b, 'cubic', true);
      const [mu] = await download(b, lanS, 2);
      const rows: string[][] = [];
      const t2: Array<{ periodMs: number; tOnMs: number; cc: string; frto: boolean; expectedMbps: number; mbps: number }> = [];
      for (const periodMs of TABLE2_PERIODS_MS)
        for (const share of SHARES) {
          const tOn = Math.round(share * periodMs);
          await gateway(b, sliced(1, tOn, periodMs));
          const expected = C * share;
          const row = [`${tOn} of ${periodMs}`, f(expected)];
          for (const cc of ['cubic', 'reno'] as const)
            for (const frto of [true, false]) {
              await serverTcp(b, cc, frto);
              const [got] = await download(b, lanS, 2);
              log(`[table2] T_on ${tOn} of ${periodMs} ms, ${cc}${frto ? ' F-RTO' : ''}: ${f(got!)} Mbps (expected ${f(expected)})`);
              row.push(`${f(got!)} (${f(got! / expected)})`);
              t2.push({ periodMs, tOnMs: tOn, cc, frto, expectedMbps: expected, mbps: got! });
            }
          rows.push(row);
        }
      results.table2 = { muMbps: mu, runs: t2 };
      out.push(
        `seeds/003 Table 2: time-sliced LAN-to-mesh TCP (one hop, no WAN), C = ${f(C)} Mbps (the paper's 22 x ${K}); unsliced, no gateway: ${f(mu!)} Mbps (the paper's mu = 23 Mbps x ${K} = ${f(PAPER.mu * K)}). Cells: Mbps (measured / expected)`,
        table(['T_on of T (ms)', 'expected C T_on/T', 'CUBIC, F-RTO', 'CUBIC', 'Reno, F-RTO', 'Reno'], rows),
        '',
      );
      await plot(
        'adwiser-table2.svg',
        barChart({
          title: `Time-sliced LAN-to-mesh TCP (C = ${f(C)} Mbps), CUBIC with F-RTO`,
          xLabel: 'T_on/T',
          yLabel: 'throughput (Mbps)',
          series: [
            { name: 'expected C T_on/T', points: SHARES.map((x) => ({ x: `${x}`, y: C * x })) },
            ...TABLE2_PERIODS_MS.map((periodMs) => ({
              name: `T = ${periodMs} ms`,
              points: t2.filter((r) => r.periodMs === periodMs && r.cc === 'cubic' && r.frto).map((r) => ({ x: `${r.tOnMs / periodMs}`, y: r.mbps })),
            })),
          ],
        }),
      );
    } finally {
      await closeBed(b);
    }
  }

  const wanExperiments = only.filter((e) => e === 'fig8' || e === 'fig9' || e === 'tables34');
  if (wanExperiments.length > 0) {
    const rins = [
      ...(only.includes('fig8') || only.includes('tables34') ? [{ fig: 'fig8', table: 'Table 3', rin: PAPER.rinLow * K }] : []),
      ...(only.includes('fig9') || only.includes('tables34') ? [{ fig: 'fig9', table: 'Table 4', rin: PAPER.rinHigh * K }] : []),
    ];
    for (const { fig, table: tableName, rin } of rins) {
      const cells = new Map<string, number>();
      const sweep: Array<{ tOn: number; mbps: number }> = [];
      // The figure needs both testbeds; the table alone only the one with the proxy.
      for (const proxy of only.includes(fig as Experiment) ? [false, true] : [true]) {
        const label = `${fig}${proxy ? ' proxy' : ''}`;
        const b = await bed(
          label,
          ['--hops', '1', ...(proxy ? ['--acc', '0', '--set', `acc.bufferBytes=${PROXY_BUFFER_BYTES}`] : []), ...setArgs([...IDEAL_MEDIUM, wanSet(rin)])],
          2,
          [1],
        );
        try {
          await serverTcp(b, 'cubic', true);
          if (only.includes(fig as Experiment)) {
            for (const slicing of [false, true]) {
              await gateway(b, slicing ? sliced(1, PAPER.tOnMs) : undefined);
              const [got] = await download(b, wanS, 5);
              log(`[${label}] ${slicing ? 'time-sliced' : 'no slicing'}: ${f(got!)} Mbps`);
              cells.set(`${proxy ? 'with' : 'without'} proxy, ${slicing ? 'with' : 'without'} time slicing`, got!);
            }
          }
          if (proxy && only.includes('tables34'))
            for (const tOn of SWEEP_MS) {
              await gateway(b, sliced(1, tOn));
              const [got] = await download(b, wanS, 5);
              log(`[${tableName}] T_on ${tOn} ms: ${f(got!)} Mbps`);
              sweep.push({ tOn, mbps: got! });
            }
        } finally {
          await closeBed(b);
        }
      }
      const expectedSliced = Math.min(rin, (C * PAPER.tOnMs) / PAPER.periodMs);
      if (cells.size > 0) {
        results[fig] = { rinMbps: rin, expectedSlicedMbps: expectedSliced, cells: Object.fromEntries(cells) };
        out.push(
          `seeds/003 ${fig === 'fig8' ? 'Fig. 8' : 'Fig. 9'}: WAN RTT ${PAPER.wanRttMs} ms, R_in = ${f(rin)} Mbps (the paper's ${fig === 'fig8' ? PAPER.rinLow : PAPER.rinHigh} x ${K}; ${fig === 'fig8' ? 'the access link' : 'the mesh'} the bottleneck), C = ${f(C)} Mbps, T_on ${PAPER.tOnMs} of ${PAPER.periodMs} ms (expected sliced: ${f(expectedSliced)} Mbps), CUBIC with F-RTO at the server`,
          table(
            ['configuration', 'Mbps', 'of expected (R_in unsliced, C T_on/T sliced)'],
            [...cells].map(([k, v]) => [k, f(v), f(v / (k.includes('with time') ? expectedSliced : rin))]),
          ),
          '',
        );
        await plot(
          `adwiser-${fig}.svg`,
          barChart({
            title: `WAN RTT 150 ms, R_in ${f(rin)} Mbps`,
            xLabel: 'configuration',
            yLabel: 'throughput (Mbps)',
            series: [{ name: 'measured', points: [...cells].map(([k, v]) => ({ x: k, y: v })) }],
          }),
        );
      }
      if (sweep.length > 0) {
        results[tableName] = { rinMbps: rin, runs: sweep.map((s) => ({ ...s, expectedMbps: Math.min(rin, (C * s.tOn) / PAPER.periodMs) })) };
        out.push(
          `seeds/003 ${tableName}: with the proxy (TCP-ACC on the gateway), WAN RTT ${PAPER.wanRttMs} ms, R_in = ${f(rin)} Mbps, C = ${f(C)} Mbps, T = ${PAPER.periodMs} ms`,
          table(
            ['T_on (ms)', 'expected min(R_in, C T_on/T)', 'measured', 'ratio'],
            sweep.map((s) => {
              const e = Math.min(rin, (C * s.tOn) / PAPER.periodMs);
              return [`${s.tOn}`, f(e), f(s.mbps), f(s.mbps / e)];
            }),
          ),
          '',
        );
        await plot(
          `adwiser-${tableName === 'Table 3' ? 'table3' : 'table4'}.svg`,
          lineChart({
            title: `${tableName}: with the proxy, WAN RTT 150 ms, R_in ${f(rin)} Mbps`,
            xLabel: 'T_on (ms of 1000)',
            yLabel: 'throughput (Mbps)',
            series: [
              { name: 'expected min(R_in, C T_on/T)', points: sweep.map((x) => ({ x: x.tOn, y: Math.min(rin, (C * x.tOn) / PAPER.periodMs) })) },
              { name: 'measured', points: sweep.map((x) => ({ x: x.tOn, y: x.mbps })) },
            ],
          }),
        );
      }
    }
  }

  if (only.includes('fig17')) {
    // Routers on a line through the gateway: r1 and r2 one hop either side, r4 three hops out (through r1 and r3), one channel.
    // The far client's flow crosses three links that contend with the near clients' (the mesh's unfairness to long paths).
    const topology = {
      kind: 'positions',
      nodes: [
        { xM: 0, yM: 0 },
        { xM: 150, yM: 0 },
        { xM: -150, yM: 0 },
        { xM: 300, yM: 0 },
        { xM: 450, yM: 0 },
      ],
    };
    const b = await bed('fig17', setArgs([...IDEAL_MEDIUM, `topology=${JSON.stringify(topology)}`]), 5, [1, 2, 4]);
    try {
      await serverTcp(b, 'cubic', true);
      await gateway(b, undefined);
      const unmanaged = await download(b, wanS, 5);
      const clients = b.clients.map((c) => ({ id: `h${c}`, prefix: `10.0.${c}.0/24`, router: c }));
      await gateway(b, {
        enabled: true,
        clients,
        interferingAps: [
          [1, 2],
          [1, 4],
          [2, 4],
        ],
        slicing: { periodMs: 100, mode: 'computed' },
        rate: { adapt: true, rateMbps: C / 2 },
      });
      const managed = await download(b, wanS * 2, 10);
      const reply = await b.ctl.request('gateway', {}, 5000);
      if (!reply.ok) throw new Error(`ctl gateway: ${JSON.stringify(reply)}`);
      const state = reply.result as GatewayState;
      const utility = (xs: number[]): number => xs.reduce((u, x) => u + Math.log(Math.max(x, 1e-3)), 0);
      results.fig17 = { unmanaged, managed, slices: state.slices, rates: state.clients.map((c) => c.rateMbps) };
      out.push(
        `A Fig. 17-like run: clients h1 and h2 one hop from the gateway, h4 three hops (through r1 and r3), one channel (every pair dependent); unmanaged: no gateway; managed: slices from the dependence graph (${state.slices.map((s) => `${s.clients.join('+')} ${f(s.share, 3)}`).join(', ')}), Algorithm 2's rates from ${f(C / 2)} Mbps`,
        table(
          ['client', 'hops', 'unmanaged (Mbps)', 'managed (Mbps)'],
          [
            ...b.clients.map((c, k) => [`h${c}`, c === 4 ? '3' : '1', f(unmanaged[k]!), f(managed[k]!)]),
            ['aggregate', '', f(unmanaged.reduce((a, x) => a + x, 0)), f(managed.reduce((a, x) => a + x, 0))],
            ['utility (sum of ln Mbps)', '', f(utility(unmanaged)), f(utility(managed))],
          ],
        ),
        '',
      );
      await plot(
        'adwiser-fig17.svg',
        barChart({
          title: 'Three clients behind dependent mesh links (h4 three hops out)',
          xLabel: 'client',
          yLabel: 'throughput (Mbps)',
          series: [
            { name: 'unmanaged', points: b.clients.map((c, k) => ({ x: `h${c}`, y: unmanaged[k]! })) },
            { name: 'managed (ADWISER)', points: b.clients.map((c, k) => ({ x: `h${c}`, y: managed[k]! })) },
          ],
        }),
      );
    } finally {
      await closeBed(b);
    }
  }
} finally {
  await cleanupAll();
}

if (values.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
else process.stdout.write(`commands:\n${commands.map((c) => `  ${c}`).join('\n')}\n`);
