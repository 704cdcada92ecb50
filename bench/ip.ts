/**
 * What real IP through cogmesh costs, against the kernel and a classic
 * userspace relay measured in the same run, on an ideal medium (802.11g at
 * 54 Mbps, no PNs, no sensing: R1 fixed on channel 6), so that the software
 * path is what gets measured (docs/ip-performance.md):
 *
 *  (a) TCP goodput and CPU per MB through one relay (a 2-hop chain,
 *      r0 - r1 - r2; iperf3 from host h0 to host h2): cogmesh with TCP-ACC
 *      on every router (split at r1) and with plain forwarding, against
 *      socat relaying the same iperf3 between three namespaces of its own.
 *      CPU: utime + stime of the relaying processes over the transfer (the
 *      router daemons and the medium; socat and its forked children).
 *  (b) Forwarding rate of small packets per core: a UDP flood (iperf3 -u
 *      -l 64) over one mesh hop (h0 -> r0 -> r1 -> h1), packets/s received
 *      by h1 per core the cogmesh processes used, against the kernel
 *      forwarding the same flood between the same three namespaces. The
 *      kernel's CPU is its softirq time (machine-wide, /proc/stat): see the
 *      note the bench prints.
 *
 *  (c) CPU per packet at a relay (`npm run bench:relay`): the same UDP
 *      stream (256-byte datagrams at each rate of --relay-pps in turn)
 *      through the middle router of a 2-hop chain (h0 -> r0 -> r1 -> r2 ->
 *      h2), against a socat UDP relay (`socat -u UDP4-RECV UDP4-SENDTO`)
 *      between the bench's own namespaces: the relay's utime + stime over
 *      the window per packet the far host received, at each rate against
 *      socat's at the same rate; the goal line takes the highest rate both
 *      carry whole.
 *
 *   node --import tsx bench/ip.ts [--only tcp,udp,relay] [--tcp-seconds 10] [--udp-seconds 8]
 *                                 [--udp-rate 0] [--relay-pps 400,1000,2000,4000] [--relay-seconds 10] [--profile DIR] [--tsx]
 *
 * The testbeds run the compiled build (bin/cogmesh.js, as `cogmesh` runs;
 * `npm run build` first: a build older than the sources is refused), or
 * the sources under tsx with --tsx.
 *
 * --profile DIR: V8 CPU profiles of each testbed process's main thread over
 * each measurement (bench/ip/profile-preload.mjs, toggled by SIGUSR2), kept
 * in DIR and summed up at the end; the profiler perturbs the figures.
 *
 * Needs root, iproute2, iperf3 and socat. Prints one table per part with
 * each row's ratio against its reference, then the commands behind every
 * figure. Every namespace it or its testbeds made is gone when it ends,
 * also on failure or Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ControlClient } from '../src/control/client.js';
import { profileEnv, summarizeProfiles, toggleProfiles } from './ip/profile.js';
import { createRefNet, type RefNet } from './ip/refnet.js';
import { cleanupAll, cleanupOnSignals, cpuOf, childrenOf, deadline, isInterrupted, linkPackets, machineCpu, onCleanup, procCpu, run, sleep } from './ip/sys.js';
import { buildStaleness, IDEAL_MEDIUM, startTestbed, type Testbed } from './ip/testbed.js';

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: 'tcp,udp,relay' },
    'tcp-seconds': { type: 'string', default: '10' },
    'udp-seconds': { type: 'string', default: '8' },
    'udp-rate': { type: 'string', default: '0' },
    'relay-pps': { type: 'string', default: '400,1000,2000,4000' },
    'relay-seconds': { type: 'string', default: '10' },
    profile: { type: 'string' },
    tsx: { type: 'boolean', default: false },
  },
});
const usage = (msg: string): never => {
  process.stderr.write(`bench/ip.ts: ${msg}\n`);
  process.exit(2);
};
const only = new Set(values.only!.split(',').map((s) => s.trim()));
for (const p of only) if (p !== 'tcp' && p !== 'udp' && p !== 'relay') usage(`--only: "${p}" is not tcp, udp or relay`);
const tcpS = Number(values['tcp-seconds']);
if (!Number.isInteger(tcpS) || tcpS < 2 || tcpS > 60) usage(`--tcp-seconds: "${values['tcp-seconds']}" is not an integer from 2 to 60`);
const udpS = Number(values['udp-seconds']);
if (!Number.isInteger(udpS) || udpS < 5 || udpS > 60) usage(`--udp-seconds: "${values['udp-seconds']}" is not an integer from 5 to 60`);
const udpRate = values['udp-rate']!;
if (!/^\d+(\.\d+)?[KMG]?$/.test(udpRate)) usage(`--udp-rate: "${udpRate}" is not an iperf3 bitrate (0: as fast as it can)`);
const relayPps = values['relay-pps']!.split(',').map((v) => Number(v.trim()));
if (relayPps.some((v) => !Number.isInteger(v) || v < 10 || v > 100_000))
  usage(`--relay-pps: "${values['relay-pps']}" is not a list of integers from 10 to 100000 (e.g. 400,2000,5000)`);
relayPps.sort((a, b) => a - b);
const relayS = Number(values['relay-seconds']);
if (!Number.isInteger(relayS) || relayS < 5 || relayS > 60) usage(`--relay-seconds: "${values['relay-seconds']}" is not an integer from 5 to 60`);
if (process.getuid?.() !== 0) usage('needs root (network namespaces, veth pairs, TUN devices)');
/** The testbeds run the compiled build (what `cogmesh` runs) unless --tsx asks for the sources. */
const useTsx = values.tsx!;
if (!useTsx) {
  const stale = buildStaleness();
  if (stale) usage(`${stale}: run \`npm run build\` first, or pass --tsx to run the testbeds from the sources`);
}
for (const tool of ['ip', 'iperf3', 'socat']) if ((await run('sh', ['-c', `command -v ${tool}`])).code !== 0) usage(`needs ${tool} on PATH`);

/** The ideal medium (IDEAL_MEDIUM) as testbed arguments. */
const IDEAL = IDEAL_MEDIUM.flatMap((s) => ['--set', s]);
const PORT = '5201';
const profileDir = values.profile ? resolve(values.profile) : undefined;
/** With --profile: the testbed's processes load the profiler, each testbed into its own directory. */
const profiling = (label: string): { env?: Record<string, string> } => {
  if (!profileDir) return {};
  mkdirSync(join(profileDir, label), { recursive: true });
  return { env: profileEnv(join(profileDir, label)) };
};
const profiles: string[] = [];

cleanupOnSignals();
const started = performance.now();
const commands: string[] = [];
const out: string[] = [];

/** An iperf3 server in a namespace, until stopped (or the namespace goes). */
async function iperfServer(ns: string): Promise<() => Promise<void>> {
  const child = spawn('ip', ['netns', 'exec', ns, 'iperf3', '-s', '-p', PORT, '--forceflush'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = onCleanup(async () => {
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`iperf3 -s in ${ns} did not start listening`)), 5000);
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('listening')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', () => reject(new Error(`iperf3 -s in ${ns} exited`)));
  }).catch(async (e: unknown) => {
    await stop();
    throw e;
  });
  return stop;
}

interface TcpResult {
  mbps: number;
  mb: number;
  retransmits: number;
  cpuS: number;
  wallS: number;
  perProcess: string;
}

/** iperf3 TCP from `ns` to `dst` for tcpS seconds; `cpu` is read before the client starts and after it ends. */
async function tcpRun(ns: string, dst: string, cpu: () => Record<string, number>): Promise<TcpResult> {
  const args = ['netns', 'exec', ns, 'iperf3', '-c', dst, '-p', PORT, '-t', String(tcpS), '-J'];
  const before = cpu();
  const t0 = performance.now();
  const r = await run('ip', args, (tcpS + 30) * 1000);
  const wallS = (performance.now() - t0) / 1000;
  await sleep(300); // forked relays end with their connections and are reaped
  const after = cpu();
  const j = JSON.parse(r.stdout || '{}') as {
    error?: string;
    end?: { sum_received?: { bytes: number; seconds: number }; sum_sent?: { retransmits?: number } };
  };
  if (r.code !== 0 || j.error || !j.end?.sum_received) throw new Error(`\`ip ${args.join(' ')}\` failed: ${j.error ?? r.stderr.trim()}`);
  const delta = Object.fromEntries(Object.keys(after).map((k) => [k, (after[k] ?? 0) - (before[k] ?? 0)]));
  const { bytes, seconds } = j.end.sum_received;
  return {
    mbps: (bytes * 8) / seconds / 1e6,
    mb: bytes / 1e6,
    retransmits: j.end.sum_sent?.retransmits ?? 0,
    cpuS: Object.values(delta).reduce((a, b) => a + b, 0),
    wallS,
    perProcess: Object.entries(delta)
      .map(([k, v]) => `${k} ${v.toFixed(2)} s`)
      .join(', '),
  };
}

/** CPU seconds of the testbed's relaying processes, one entry each. */
const meshCpu = (tb: Testbed) => (): Record<string, number> => {
  const o: Record<string, number> = {};
  tb.routerPids.forEach((p, i) => (o[`r${i}`] = cpuOf([p])));
  o.medium = cpuOf([tb.mediumPid]);
  return o;
};

/** A router's status from its control API (in-process: no CLI start-up in the figures). */
async function status(tb: Testbed, i: number): Promise<Record<string, unknown>> {
  const c = new ControlClient(`ipc:///run/cogmesh/testbeds/${tb.tag}.ipc/r${i}.ctl`);
  try {
    const r = (await c.request('status')) as { ok: boolean; result?: Record<string, unknown>; error?: unknown };
    if (!r.ok || !r.result) throw new Error(`r${i} refused status: ${JSON.stringify(r.error)}`);
    return r.result;
  } finally {
    c.close();
  }
}

const fmt = (x: number, d = 2): string => (Number.isFinite(x) ? x.toFixed(d) : '-');
const table = (head: string[], rows: string[][]): string =>
  [`| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

try {
  let ref: RefNet | undefined;
  const refNet = async (): Promise<RefNet> => {
    if (!ref) {
      ref = await createRefNet();
      commands.push(`[reference namespaces] ${ref.commands.join('; ')}`);
    }
    return ref;
  };

  if (only.has('tcp')) {
    // The reference: socat relaying iperf3 in the middle namespace.
    const net = await refNet();
    const stopServer = await iperfServer(net.server);
    const socatArgs = ['netns', 'exec', net.relay, 'socat', `TCP-LISTEN:${PORT},bind=${net.relayAddr},fork,reuseaddr`, `TCP:${net.serverAddr}:${PORT}`];
    const socat = spawn('ip', socatArgs, { stdio: 'ignore' });
    const stopSocat = onCleanup(async () => {
      socat.kill('SIGKILL');
      if (socat.exitCode === null && socat.signalCode === null) await new Promise((r) => socat.once('exit', r));
    });
    await sleep(300);
    // `ip netns exec` execs socat: this pid is socat's. Its forked children count once reaped (cutime/cstime), or while alive.
    const socatCpu = (): Record<string, number> => {
      const p = procCpu(socat.pid!);
      return { socat: (p?.self ?? 0) + (p?.children ?? 0) + cpuOf(childrenOf(socat.pid!)) };
    };
    const s = await tcpRun(net.client, net.relayAddr, socatCpu);
    await stopSocat();
    await stopServer();
    commands.push(`[socat] ip ${socatArgs.join(' ')}`, `[socat] ip netns exec ${net.server} iperf3 -s -p ${PORT}`);
    commands.push(`[socat] ip netns exec ${net.client} iperf3 -c ${net.relayAddr} -p ${PORT} -t ${tcpS} -J`);

    const mesh = async (label: string, extra: string[]): Promise<TcpResult & { check: string }> => {
      const tb = await startTestbed({ args: ['--hops', '2', ...extra, ...IDEAL], routers: 3, fromSources: useTsx, ...profiling(label) });
      const relaying = [...tb.routerPids, tb.mediumPid];
      try {
        const stopServer = await iperfServer(tb.hostNs(2));
        if (profileDir) toggleProfiles(relaying);
        const r = await tcpRun(tb.hostNs(0), tb.hostAddr(2), meshCpu(tb));
        if (profileDir) toggleProfiles(relaying);
        await stopServer();
        const st = await status(tb, 1);
        const counters = st.counters as Record<string, number>;
        const tun = (await status(tb, 0)).ip as { tun: Record<string, number> };
        const check = `r1: vnfTaken ${counters.vnfTaken}, forwarded ${counters.forwarded}; r0's TUN: ${tun.tun.rxPackets} packets read in ${tun.tun.rxBatches} batches`;
        commands.push(`[${label}] ${tb.command}   (up in ${fmt(tb.upS, 1)} s)`);
        commands.push(`[${label}] ip netns exec ${tb.hostNs(2)} iperf3 -s -p ${PORT}`);
        commands.push(`[${label}] ip netns exec ${tb.hostNs(0)} iperf3 -c ${tb.hostAddr(2)} -p ${PORT} -t ${tcpS} -J   (${check})`);
        return { ...r, check };
      } finally {
        await tb.stop();
        if (profileDir) profiles.push(`[${label}]`, ...summarizeProfiles(join(profileDir, label)));
      }
    };
    const acc = await mesh('tcp-acc', ['--acc', 'every']);
    const plain = await mesh('plain', []);

    const cpuPerMb = (r: TcpResult): number => (r.cpuS * 1000) / r.mb;
    const row = (name: string, r: TcpResult): string[] => [
      name,
      fmt(r.mbps),
      fmt(r.mb, 1),
      String(r.retransmits),
      fmt(r.cpuS),
      fmt(cpuPerMb(r), 1),
      fmt(r.mbps / s.mbps, 3),
      fmt(cpuPerMb(r) / cpuPerMb(s), 1),
    ];
    const gRatio = acc.mbps / s.mbps;
    const cRatio = cpuPerMb(acc) / cpuPerMb(s);
    const met = gRatio >= 0.5 && cRatio <= 2;
    out.push(
      `(a) TCP through one relay (h0 -> r1 -> h2, 2 hops), ideal medium (802.11g 54 Mbps, no PNs, no sensing), iperf3 -t ${tcpS}`,
      '',
      table(
        ['path', 'goodput (Mbps)', 'MB', 'retr', 'relay CPU (s)', 'CPU ms/MB', 'goodput vs socat', 'CPU/MB vs socat'],
        [row('socat relay (reference)', s), row('cogmesh, TCP-ACC every router', acc), row('cogmesh, plain forwarding', plain)],
      ),
      '',
      `CPU by process: socat: ${s.perProcess}; TCP-ACC: ${acc.perProcess}; plain: ${plain.perProcess}`,
      `goal: >= 0.5x socat's goodput at <= 2x its CPU per byte: ${met ? 'met' : 'not met'} (TCP-ACC: ${fmt(gRatio, 3)}x goodput, ${fmt(cRatio, 1)}x CPU/MB)`,
      '',
    );
  }

  if (only.has('udp')) {
    const floodArgs = (dst: string, rate: string): string[] => ['iperf3', '-c', dst, '-p', PORT, '-u', '-l', '64', '-b', rate, '-t', String(udpS)];
    interface Flood {
      rate: string;
      pps: number;
      offeredPps: number;
      cores: number;
    }
    /** A flood from `ns`; the window is its middle (1.5 s in, 3 s shorter than the flood): packets received on `rx`, sent on `tx`, CPU by `cpu`. */
    const flood = async (ns: string, dst: string, rate: string, rx: [string, string], tx: [string, string], cpu: () => number): Promise<Flood> => {
      // `ip netns exec` execs iperf3: the child's pid is the client's.
      const client = spawn('ip', ['netns', 'exec', ns, ...floodArgs(dst, rate)], { stdio: ['ignore', 'pipe', 'pipe'] });
      const stopClient = onCleanup(async () => void client.kill('SIGKILL'));
      let said = '';
      client.stdout.on('data', (d: Buffer) => (said = (said + d.toString()).slice(-2000)));
      client.stderr.on('data', (d: Buffer) => (said = (said + d.toString()).slice(-2000)));
      const exit = new Promise<number | null>((resolve) => client.once('exit', (code) => resolve(code)));
      await sleep(1500);
      const [r0, t0, c0, w0] = [await linkPackets(...rx), await linkPackets(...tx), cpu(), performance.now()];
      await sleep((udpS - 3) * 1000);
      const [r1, t1, c1, w1] = [await linkPackets(...rx), await linkPackets(...tx), cpu(), performance.now()];
      const code = await Promise.race([exit, deadline(20_000).then(() => -1)]);
      await stopClient();
      if (code !== 0) throw new Error(`the UDP flood \`ip netns exec ${ns} ${floodArgs(dst, rate).join(' ')}\` failed (${code}): ${said.trim().slice(-300)}`);
      const wallS = (w1 - w0) / 1000;
      return {
        rate,
        pps: (r1.rx - r0.rx) / wallS,
        offeredPps: (t1.tx - t0.tx) / wallS,
        cores: (c1 - c0) / wallS,
      };
    };
    /** Mean RTT of 20 pings (56 bytes, 20 ms apart) from `ns` to `dst` (ms). */
    const rtt = async (ns: string, dst: string): Promise<number> => {
      const r = await run('ip', ['netns', 'exec', ns, 'ping', '-q', '-c', '20', '-i', '0.02', '-W', '2', dst], 20_000);
      const m = /= [\d.]+\/([\d.]+)\//.exec(r.stdout);
      return m ? Number(m[1]) : NaN;
    };

    // The reference: the kernel forwarding in the middle namespace. Its CPU: softirq time, machine-wide.
    const net = await refNet();
    const kRtt = await rtt(net.client, net.serverAddr);
    let stopServer = await iperfServer(net.server);
    const k = await flood(net.client, net.serverAddr, udpRate, [net.server, net.serverDev], [net.client, net.clientDev], () => machineCpu().softirq);
    await stopServer();
    commands.push(`[kernel] ip netns exec ${net.client} ping -q -c 20 -i 0.02 ${net.serverAddr}`);
    commands.push(
      `[kernel] ip netns exec ${net.server} iperf3 -s -p ${PORT}`,
      `[kernel] ip netns exec ${net.client} ${floodArgs(net.serverAddr, udpRate).join(' ')}`,
    );

    const tb = await startTestbed({ args: ['--hops', '1', ...IDEAL], routers: 2, fromSources: useTsx, ...profiling('flood') });
    const mesh: Flood[] = [];
    let mRtt = NaN;
    try {
      mRtt = await rtt(tb.hostNs(0), tb.hostAddr(1));
      commands.push(`[cogmesh] ${tb.command}   (up in ${fmt(tb.upS, 1)} s)`, `[cogmesh] ip netns exec ${tb.hostNs(0)} ping -q -c 20 -i 0.02 ${tb.hostAddr(1)}`);
      commands.push(`[cogmesh] ip netns exec ${tb.hostNs(1)} iperf3 -s -p ${PORT}`);
      stopServer = await iperfServer(tb.hostNs(1));
      const cpu = meshCpu(tb);
      const relaying = [...tb.routerPids, tb.mediumPid];
      const meshFlood = (rate: string): Promise<Flood> =>
        flood(tb.hostNs(0), tb.hostAddr(1), rate, [tb.hostNs(1), tb.hostDev(1)], [tb.hostNs(0), tb.hostDev(0)], () =>
          Object.values(cpu()).reduce((a, b) => a + b, 0),
        );
      if (profileDir) toggleProfiles(relaying);
      mesh.push(await meshFlood(udpRate));
      if (profileDir) toggleProfiles(relaying);
      // Where the flood's packets went: the kernel's TUN queue at r0, r0's reads, r1's writes (so far).
      const [s0, s1] = [await status(tb, 0), await status(tb, 1)];
      const tun = (st: Record<string, unknown>): Record<string, number> => (st.ip as { tun: Record<string, number> }).tun;
      const q = await run('ip', ['-n', tb.routerNs(0), '-s', '-j', 'link', 'show', 'dev', 'cogmesh0']);
      const tunDropped = (JSON.parse(q.stdout || '[{}]') as Array<{ stats64?: { tx: { dropped: number } } }>)[0]?.stats64?.tx.dropped;
      const fate = `so far: r0's TUN queue dropped ${tunDropped ?? '?'}, r0 read ${tun(s0).rxPackets} from its TUN, r1 wrote ${tun(s1).txPackets} to its TUN`;
      commands.push(`[cogmesh] ip netns exec ${tb.hostNs(0)} ${floodArgs(tb.hostAddr(1), udpRate).join(' ')}   (${fate})`);
      // Then offered no more than the mesh carried: the cost of a packet that crosses, without those dropped at r0.
      const carried = String(Math.max(1000, Math.round(mesh[0]!.pps * 64 * 8)));
      mesh.push(await meshFlood(carried));
      commands.push(`[cogmesh] ip netns exec ${tb.hostNs(0)} ${floodArgs(tb.hostAddr(1), carried).join(' ')}`);
      await stopServer();
    } finally {
      await tb.stop();
      if (profileDir) profiles.push('[flood]', ...summarizeProfiles(join(profileDir, 'flood')));
    }
    const perCore = (f: Flood): number => f.pps / f.cores;
    const row = (name: string, f: Flood, r: number): string[] => [
      name,
      f.rate,
      fmt(r, 2),
      fmt(f.offeredPps, 0),
      fmt(f.pps, 0),
      fmt(f.cores),
      fmt(perCore(f), 0),
      fmt(f.pps / k.pps, 4),
      fmt(perCore(f) / perCore(k), 4),
    ];
    out.push(
      `(b) Forwarding rate of 64-byte UDP packets (iperf3 -u -l 64), ${udpS - 3} s window in the middle of a ${udpS} s flood; idle RTT: 20 pings`,
      '',
      table(
        ['path', '-b', 'idle RTT (ms)', 'offered (pps)', 'received (pps)', 'CPU (cores)', 'pps per core', 'pps vs kernel', 'pps/core vs kernel'],
        [
          row('kernel forwarding, veth (reference)', k, kRtt),
          row('cogmesh, 1 hop (TUN -> medium -> TUN)', mesh[0]!, mRtt),
          row('cogmesh, offered what it carried', mesh[1]!, mRtt),
        ],
      ),
      '',
      'CPU attribution: cogmesh = utime+stime of r0, r1 and the medium over the window (/proc/<pid>/stat), kernel work they cause in their',
      'own system calls included; kernel = softirq time machine-wide over the window (/proc/stat), where veth receive and IP forwarding run',
      "(the senders' and receivers' own system calls left out on both sides).",
      '',
    );
  }

  if (only.has('relay')) {
    const SIZE = 256;
    /** CPU (cores) each process uses over `seconds` with no traffic: the background a per-packet figure leaves out. */
    const idle = async (cpu: () => Record<string, number>, seconds: number): Promise<Record<string, number>> => {
      const [c0, w0] = [cpu(), performance.now()];
      await sleep(seconds * 1000);
      const [c1, w1] = [cpu(), performance.now()];
      const used: Record<string, number> = {};
      for (const k of Object.keys(c1)) used[k] = (c1[k]! - (c0[k] ?? 0)) / ((w1 - w0) / 1000);
      return used;
    };
    /**
     * A paced UDP stream from `ns` to dst:PORT at `pps` for relayS seconds (a small Node
     * script, the same on both paths); the window is its middle: packets the
     * far end's `rx` link received, and the CPU `cpu` reports, over it.
     */
    const stream = async (
      pps: number,
      ns: string,
      dst: string,
      rx: [string, string],
      cpu: () => Record<string, number>,
      around?: () => void,
    ): Promise<{ pps: number; sentPps: number; cpu: Record<string, number> }> => {
      const script =
        "const d=require('dgram').createSocket('udp4');const [h,p,pps,s,n]=process.argv.slice(1).map((v,i)=>i?Number(v):v);" +
        'const b=Buffer.alloc(n);let sent=0;const t0=Date.now();const end=t0+s*1000;' +
        'const tick=()=>{const now=Date.now();if(now>=end){d.close();return}const due=Math.floor((now-t0)*pps/1000);while(sent<due){d.send(b,p,h);sent++}setTimeout(tick,2)};tick();';
      const args = ['netns', 'exec', ns, process.execPath, '-e', script, dst, PORT, String(pps), String(relayS), String(SIZE)];
      const child = spawn('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
      const stop = onCleanup(async () => void child.kill('SIGKILL'));
      let said = '';
      child.stderr.on('data', (d: Buffer) => (said = (said + d.toString()).slice(-1000)));
      const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      await sleep(2000);
      around?.();
      const [r0, c0, w0] = [await linkPackets(...rx), cpu(), performance.now()];
      await sleep((relayS - 4) * 1000);
      const [r1, c1, w1] = [await linkPackets(...rx), cpu(), performance.now()];
      around?.();
      const code = await Promise.race([exit, deadline(20_000).then(() => -1)]);
      await stop();
      if (code !== 0) throw new Error(`the UDP stream from ${ns} to ${dst} failed (${code}): ${said.trim().slice(-300)}`);
      const wallS = (w1 - w0) / 1000;
      const used: Record<string, number> = {};
      for (const k of Object.keys(c1)) used[k] = (c1[k]! - (c0[k] ?? 0)) / wallS;
      // A stream's queues drain before the next one starts.
      await sleep(1000);
      return { pps: (r1.rx - r0.rx) / wallS, sentPps: pps, cpu: used };
    };
    commands.push(`[relay] ip netns exec <client> node -e <a paced UDP sender> <dst> ${PORT} <pps: ${relayPps.join(', ')}> ${relayS} ${SIZE}`);

    // The reference: socat relaying the datagrams in the middle namespace, one process, no fork, every rate in turn.
    const net = await refNet();
    const socatArgs = ['netns', 'exec', net.relay, 'socat', '-u', `UDP4-RECV:${PORT},bind=${net.relayAddr}`, `UDP4-SENDTO:${net.serverAddr}:${PORT}`];
    const socat = spawn('ip', socatArgs, { stdio: 'ignore' });
    const stopSocat = onCleanup(async () => {
      socat.kill('SIGKILL');
      if (socat.exitCode === null && socat.signalCode === null) await new Promise((r) => socat.once('exit', r));
    });
    await sleep(300);
    const socatCpu = (): Record<string, number> => ({ socat: cpuOf([socat.pid!]) });
    const refIdle = await idle(socatCpu, relayS - 4);
    const refs: Array<Awaited<ReturnType<typeof stream>>> = [];
    for (const pps of relayPps) refs.push(await stream(pps, net.client, net.relayAddr, [net.server, net.serverDev], socatCpu));
    await stopSocat();
    commands.push(`[relay] ip ${socatArgs.join(' ')}`);

    const tb = await startTestbed({ args: ['--hops', '2', ...IDEAL], routers: 3, fromSources: useTsx, ...profiling('relay') });
    const meshes: Array<Awaited<ReturnType<typeof stream>>> = [];
    let meshIdle: Record<string, number>;
    try {
      meshIdle = await idle(meshCpu(tb), relayS - 4);
      commands.push(`[relay] ${tb.command}   (up in ${fmt(tb.upS, 1)} s)`);
      const relaying = [...tb.routerPids, tb.mediumPid];
      for (const [i, pps] of relayPps.entries()) {
        // With --profile, the highest rate is profiled.
        const around = profileDir && i === relayPps.length - 1 ? () => toggleProfiles(relaying) : undefined;
        meshes.push(await stream(pps, tb.hostNs(0), tb.hostAddr(2), [tb.hostNs(2), tb.hostDev(2)], meshCpu(tb), around));
      }
    } finally {
      await tb.stop();
      if (profileDir) profiles.push('[relay]', ...summarizeProfiles(join(profileDir, 'relay')));
    }
    const usPer = (cores: number, pps: number): number => (cores * 1e6) / pps;
    const sum = (o: Record<string, number>): number => Object.values(o).reduce((a, b) => a + b, 0);
    const row = (
      name: string,
      offered: number,
      pps: number,
      cores: number,
      idleCores: number,
      us: number,
      netUs: number,
      refUs: number,
      refNetUs: number,
    ): string[] => [
      name,
      fmt(offered, 0),
      fmt(pps, 0),
      fmt(cores, 3),
      fmt(idleCores, 3),
      fmt(us, 1),
      fmt(netUs, 1),
      fmt(us / refUs, 1),
      fmt(netUs / refNetUs, 1),
    ];
    const rows: string[][] = [];
    const perRate = relayPps.map((pps, i) => {
      const ref = refs[i]!;
      const mesh = meshes[i]!;
      const refUs = usPer(ref.cpu.socat!, ref.pps);
      const refNetUs = usPer(ref.cpu.socat! - refIdle.socat!, ref.pps);
      const relayUs = usPer(mesh.cpu.r1!, mesh.pps);
      const relayNetUs = usPer(mesh.cpu.r1! - meshIdle.r1!, mesh.pps);
      const allUs = usPer(sum(mesh.cpu), mesh.pps);
      const allNetUs = usPer(sum(mesh.cpu) - sum(meshIdle), mesh.pps);
      rows.push(
        row('socat UDP relay (reference)', pps, ref.pps, ref.cpu.socat!, refIdle.socat!, refUs, refNetUs, refUs, refNetUs),
        row('cogmesh r1 (the relay router)', pps, mesh.pps, mesh.cpu.r1!, meshIdle.r1!, relayUs, relayNetUs, refUs, refNetUs),
        row('cogmesh r0 + r1 + r2 + medium', pps, mesh.pps, sum(mesh.cpu), sum(meshIdle), allUs, allNetUs, refUs, refNetUs),
      );
      // Carried whole: at least 95% of the offered rate arrived.
      return { pps, relayUs, relayNetUs, whole: mesh.pps >= 0.95 * pps && ref.pps >= 0.95 * pps, mesh };
    });
    const best = perRate.filter((r) => r.whole).at(-1);
    const most = Math.max(...meshes.map((m) => m.pps));
    out.push(
      `(c) CPU per packet at a relay: ${SIZE}-byte UDP datagrams at ${relayPps.join(', ')} pps, ${relayS} s each, ${relayS - 4} s window; 2-hop chain, ideal medium;`,
      `    net: less the CPU each process used over ${relayS - 4} s with no traffic (a router's timers, heartbeats, HELLOs); ratios against socat at the same rate`,
      `    testbed run from ${useTsx ? 'the sources under tsx (--tsx)' : 'the compiled build (bin/cogmesh.js)'}`,
      '',
      table(
        ['relay', 'offered (pps)', 'received (pps)', 'CPU (cores)', 'idle CPU (cores)', 'µs per packet', 'net µs per packet', 'vs socat', 'net vs socat'],
        rows,
      ),
      '',
      'CPU: utime + stime of every thread (/proc/<pid>/stat), counted in clock ticks: a figure of a few hundredths of a core is coarse.',
      ...perRate.map(
        (r) =>
          `CPU by process at ${r.pps} pps (cores): ${Object.entries(r.mesh.cpu)
            .map(([k, v]) => `${k} ${v.toFixed(3)}`)
            .join(', ')}`,
      ),
      `the mesh carried at most ${fmt(most, 0)} pps (${
        perRate
          .filter((r) => !r.whole)
          .map((r) => `${r.pps} pps offered: ${fmt((100 * r.mesh.pps) / r.pps, 0)}% arrived`)
          .join('; ') || 'every rate whole'
      })`,
      best
        ? `goal (issue 17): <= 50 µs of CPU per packet forwarded at the relay, at the highest rate both carry whole (${best.pps} pps): ${best.relayUs <= 50 ? 'met' : 'not met'} (${fmt(best.relayUs, 1)} µs; ${fmt(best.relayNetUs, 1)} µs net of the idle background)`
        : 'goal (issue 17): <= 50 µs of CPU per packet forwarded at the relay: no rate was carried whole by both (lower --relay-pps)',
      '',
    );
  }

  out.push('commands:', ...commands.map((c) => `  ${c}`), '');
  if (profileDir)
    out.push(`CPU profiles (main threads, self time, over each measurement; figures above are perturbed by the profiler) in ${profileDir}:`, ...profiles, '');
  out.push(`bench time ${fmt((performance.now() - started) / 1000, 1)} s`);
  process.stdout.write(`${out.join('\n')}\n`);
} catch (e) {
  if (!isInterrupted()) process.stderr.write(`bench/ip.ts: ${(e as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
