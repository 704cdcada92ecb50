import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControlClient } from '../../src/control/client.js';
import { cogmesh, root, spawnCogmesh, stopAll } from './cli.js';
import { until } from './until.js';

/**
 * Two `cogmesh node` processes over the DSSS PHY on sim radios at 11
 * Msample/s, their bands linked through a `cogmesh band` hub: every frame
 * (HELLO, the UDP flow's data, ACKs) leaves one router as IQ samples and is
 * found again only by the receiver in the samples the other router's radios
 * read. R1 fixed (6 and 11), R3 on channel 1, R3 authenticated, a UDP flow of
 * 200-byte packets at 12.5 a second of router time for 6 s (75 packets)
 * from router 1 to router 2. What test/daemon/phy-two-nodes.test.ts
 * checks and `npm run bench:phy-mesh` measures.
 */
export interface PhyPairOptions {
  /** phy.timeScale: 1 is real time. */
  timeScale: number;
  /** sim.band.readLatencyUs (router time). */
  readLatencyUs: number;
  /** phy.timing.sifsUs and ackTimeoutUs (router time). */
  sifsUs: number;
  ackTimeoutUs: number;
  /** Run bin/cogmesh.js (the build) instead of the sources under tsx. */
  built?: boolean;
  /** When the UDP flow starts, in router time (s; default 2): it sends 75 packets over the next 6 s. */
  flowStartS?: number;
  /** How long to wait for HELLOs and for the flow (ms of wall time). */
  helloTimeoutMs?: number;
  flowTimeoutMs?: number;
}

export interface StationStatus {
  txFrames: number;
  rxFrames: number;
  acked: number;
  retries: number;
  phy: { rx: { frames: number; detections: number; fcs: number }; readErrors: number; blocks: number; lateAcks: number };
}

export interface PairStatus {
  uptimeS: number;
  lagMaxMs: number;
  drops: Record<string, number>;
  medium: Record<string, StationStatus | Record<string, number>>;
  traffic: Array<{ id: number; role: 'source' | 'sink'; sent: number; received: number }>;
}

export interface PhyPairResult {
  sent: number;
  received: number;
  /** Wall time from the processes' start until both had the other as a neighbour (s). */
  helloWallS: number;
  /** Wall time of the run, start to the last status (s). */
  wallS: number;
  /** CPU time (user + system) of each router process over the run (s). */
  cpuS: [number, number];
  status: [PairStatus, PairStatus];
}

// The routers are asked in process: a `cogmesh ctl` process per question would take CPU from them.
async function ask(c: ControlClient, cmd: string): Promise<unknown> {
  try {
    const r = await c.request(cmd, {}, 10_000);
    return r.ok ? r.result : undefined;
  } catch {
    return undefined;
  }
}

const status = async (c: ControlClient): Promise<PairStatus | undefined> => (await ask(c, 'status')) as PairStatus | undefined;
const neighbours = async (c: ControlClient): Promise<number[]> =>
  (((await ask(c, 'neighbours')) as Array<{ addr: number }> | undefined) ?? []).map((x) => x.addr);

/** utime + stime of a process (s), from /proc/PID/stat. */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Runs the pair until the flow has ended and its packets arrived; `logs` gets each router's output. */
export async function runPhyPair(o: PhyPairOptions, logs: string[] = ['', '']): Promise<PhyPairResult> {
  const dir = mkdtempSync(join(tmpdir(), 'cm-phy2-'));
  const procs: ChildProcess[] = [];
  const clients: ControlClient[] = [];
  const start = (args: string[]): ChildProcess =>
    o.built
      ? spawn(process.execPath, [join(root, 'bin/cogmesh.js'), ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawnCogmesh(args, ['ignore', 'pipe', 'pipe']);
  try {
    const hub = `ipc://${join(dir, 'hub')}`;
    const keyFile = join(dir, 'r3.keys');
    const k = cogmesh('keygen', '--r3-key', '1', '--out', keyFile);
    if (k.code !== 0) throw new Error(`cogmesh keygen: ${k.err}`);
    const ctl = (i: number): string => `ipc://${join(dir, `ctl${i}`)}`;
    const flowStartS = o.flowStartS ?? 2;
    for (const i of [1, 2]) {
      const cfg = {
        node: { id: i, name: `phy${i}`, seed: 40 + i },
        radios: {
          R1: { frontend: 'sim', sampleRateHz: 11e6 },
          R2: { frontend: 'sim', sampleRateHz: 11e6 },
          R3: { frontend: 'sim', sampleRateHz: 11e6, channel: 1 },
        },
        // A plain multi-radio mesh: R1 fixed, so that the run is about the PHY, not about sensing.
        channel: { cognitive: false, initialChannel: i === 1 ? 6 : 11 },
        routing: { auth: { keyFile } },
        sim: { band: { noiseFigureDb: 6, pn: [], hub, readLatencyUs: o.readLatencyUs } },
        phy: { enabled: true, timeScale: o.timeScale, timing: { sifsUs: o.sifsUs, ackTimeoutUs: o.ackTimeoutUs } },
        control: { endpoint: ctl(i) },
        // 12.5 packets a second of router time for 6 s: 75 packets.
        traffic: { flows: [{ id: 1, kind: 'udp-cbr', src: 1, dst: 2, rateMbps: 0.02, packetBytes: 200, startS: flowStartS, stopS: flowStartS + 6 }] },
        log: { level: 'info', format: 'json' },
      };
      writeFileSync(join(dir, `n${i}.json`), JSON.stringify(cfg));
    }
    procs.push(start(['band', '--bind', hub, '--log-format', 'json']));
    const t0 = Date.now();
    const nodes = [1, 2].map((i) => {
      const p = start(['node', '-c', join(dir, `n${i}.json`), '--for', '600']);
      p.stdout!.on('data', (b: Buffer) => (logs[i - 1] += b.toString()));
      p.stderr!.on('data', (b: Buffer) => (logs[i - 1] += b.toString()));
      procs.push(p);
      return p;
    });
    const [c1, c2] = [1, 2].map((i) => new ControlClient(ctl(i))) as [ControlClient, ControlClient];
    clients.push(c1, c2);

    // HELLO over R3, both ways.
    await until(
      'the routers to hear each other',
      async () => ((await neighbours(c1)).includes(2) && (await neighbours(c2)).includes(1) ? true : undefined),
      o.helloTimeoutMs ?? 120_000,
      500,
    );
    const helloWallS = (Date.now() - t0) / 1000;

    // The flow ends at 8 s of router time; wait until the sink has what it will get.
    let last = -1;
    let stable = 0;
    await until(
      'the flow to end and its packets to arrive',
      async () => {
        const got = (await status(c2))?.traffic.find((f) => f.id === 1 && f.role === 'sink')?.received ?? -1;
        const src = (await status(c1))?.traffic.find((f) => f.id === 1 && f.role === 'source')?.sent ?? 0;
        stable = got === last && src >= 70 ? stable + 1 : 0;
        last = got;
        return stable >= 3 ? true : undefined;
      },
      o.flowTimeoutMs ?? 240_000,
      Math.max(500, Math.round(600 / o.timeScale)),
    );
    const s1 = (await status(c1))!;
    const s2 = (await status(c2))!;
    const cpuS: [number, number] = [cpuSeconds(nodes[0]!.pid), cpuSeconds(nodes[1]!.pid)];
    const wallS = (Date.now() - t0) / 1000;
    return {
      sent: s1.traffic.find((f) => f.id === 1 && f.role === 'source')!.sent,
      received: s2.traffic.find((f) => f.id === 1 && f.role === 'sink')!.received,
      helloWallS,
      wallS,
      cpuS,
      status: [s1, s2],
    };
  } finally {
    for (const c of clients) c.close();
    await stopAll(procs);
    rmSync(dir, { recursive: true, force: true });
  }
}
