import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { cogmesh, spawnCogmesh, stopAll } from '../support/cli.js';
import { until } from '../support/until.js';

/**
 * Two `cogmesh node` processes over the DSSS PHY on sim radios, their bands
 * linked through a `cogmesh band` hub: every frame (HELLO, the UDP flow's
 * data, ACKs) leaves one router as IQ samples and is found again only by the
 * receiver in the samples the other router's radios read. They find each
 * other by HELLO on R3, and a UDP flow goes from one to the other over R2 and
 * R1; the delivery ratio is reported. The routers run in slow motion
 * (phy.timeScale 0.2): three radios at 11 Msample/s each per router are more
 * than this machine synthesises and decodes in real time (docs/phy.md).
 */

interface StationStatus {
  txFrames: number;
  rxFrames: number;
  acked: number;
  phy: { rx: { frames: number; fcs: number }; readErrors: number };
}
interface Status {
  medium: Record<string, StationStatus | Record<string, number>>;
  traffic: Array<{ id: number; role: 'source' | 'sink'; sent: number; received: number }>;
}

function status(endpoint: string): Status | undefined {
  const r = cogmesh('ctl', '--node', endpoint, '--timeout', '10000', '--json', 'status');
  return r.code === 0 ? (JSON.parse(r.out) as Status) : undefined;
}

function neighbours(endpoint: string): number[] {
  const r = cogmesh('ctl', '--node', endpoint, '--timeout', '10000', '--json', 'neighbours');
  if (r.code !== 0) return [];
  return (JSON.parse(r.out) as Array<{ addr: number }>).map((x) => x.addr);
}

test('two routers over the DSSS PHY on sim radios find each other by HELLO and carry a UDP flow through synthesised IQ', { timeout: 400_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cm-phy2-'));
  const procs: ChildProcess[] = [];
  const logs: string[] = ['', ''];
  try {
    const hub = `ipc://${join(dir, 'hub')}`;
    const keyFile = join(dir, 'r3.keys');
    assert.equal(cogmesh('keygen', '--r3-key', '1', '--out', keyFile).code, 0);
    const ctl = (i: number): string => `ipc://${join(dir, `ctl${i}`)}`;
    for (const i of [1, 2]) {
      const cfg = {
        node: { id: i, name: `phy${i}`, seed: 40 + i },
        radios: {
          R1: { frontend: 'sim', sampleRateHz: 11e6 },
          R2: { frontend: 'sim', sampleRateHz: 11e6 },
          R3: { frontend: 'sim', sampleRateHz: 11e6, channel: 1 },
        },
        // A plain multi-radio mesh: R1 fixed, so that the test is about the PHY, not about sensing.
        channel: { cognitive: false, initialChannel: i === 1 ? 6 : 11 },
        routing: { auth: { keyFile } },
        sim: { band: { noiseFigureDb: 6, pn: [], hub, readLatencyUs: 2000 } },
        phy: { enabled: true, timeScale: 0.2, timing: { sifsUs: 4000, ackTimeoutUs: 12000 } },
        control: { endpoint: ctl(i) },
        // 12.5 packets a second of router time from 2 s to 8 s: 75 packets.
        traffic: { flows: [{ id: 1, kind: 'udp-cbr', src: 1, dst: 2, rateMbps: 0.02, packetBytes: 200, startS: 2, stopS: 8 }] },
        log: { level: 'info', format: 'json' },
      };
      writeFileSync(join(dir, `n${i}.json`), JSON.stringify(cfg));
    }
    const hubProc = spawnCogmesh(['band', '--bind', hub, '--log-format', 'json'], ['ignore', 'pipe', 'pipe']);
    procs.push(hubProc);
    for (const i of [1, 2]) {
      const p = spawnCogmesh(['node', '-c', join(dir, `n${i}.json`), '--for', '300'], ['ignore', 'pipe', 'pipe']);
      p.stdout!.on('data', (b: Buffer) => (logs[i - 1] += b.toString()));
      p.stderr!.on('data', (b: Buffer) => (logs[i - 1] += b.toString()));
      procs.push(p);
    }

    // HELLO over R3, both ways.
    await until(
      'the routers to hear each other',
      () => Promise.resolve(neighbours(ctl(1)).includes(2) && neighbours(ctl(2)).includes(1) ? true : undefined),
      120_000,
      2000,
    );

    // The flow ends at 8 s of router time; wait until the sink has what it will get.
    let last = -1;
    let stable = 0;
    await until(
      'the flow to end and its packets to arrive',
      () => {
        const s = status(ctl(2));
        const got = s?.traffic.find((f) => f.id === 1 && f.role === 'sink')?.received ?? -1;
        const src = status(ctl(1))?.traffic.find((f) => f.id === 1 && f.role === 'source')?.sent ?? 0;
        stable = got === last && src >= 70 ? stable + 1 : 0;
        last = got;
        return Promise.resolve(stable >= 3 ? true : undefined);
      },
      240_000,
      3000,
    );
    const s1 = status(ctl(1))!;
    const s2 = status(ctl(2))!;
    const sent = s1.traffic.find((f) => f.id === 1 && f.role === 'source')!.sent;
    const received = s2.traffic.find((f) => f.id === 1 && f.role === 'sink')!.received;
    const ratio = received / sent;
    t.diagnostic(`UDP over the DSSS PHY: ${received} of ${sent} packets delivered, delivery ratio ${ratio.toFixed(3)}`);
    assert.ok(sent >= 70 && sent <= 80, `the source sent its 75 packets: ${sent}`);
    assert.ok(ratio >= 0.8, `delivery ratio ${ratio}`);
    // Everything went as samples: frames sent as bursts through the hub, decoded from IQ.
    const st = (s: Status, r: string): StationStatus => s.medium[r] as StationStatus;
    assert.ok(st(s1, 'phy1/R2').txFrames >= received, 'data frames left R2');
    assert.ok(st(s1, 'phy1/R2').acked >= 0.8 * received, "R2 heard the receiver's ACKs");
    assert.ok(st(s2, 'phy2/R1').phy.rx.frames >= received, 'the data frames were decoded from the samples R1 read');
    assert.ok(st(s1, 'phy1/R3').phy.rx.frames > 0 && st(s2, 'phy2/R3').phy.rx.frames > 0, 'HELLOs decoded on R3');
    const hub1 = s1.medium.hub as { sent: number; received: number };
    assert.ok(hub1.sent > 0 && hub1.received > 0, 'bursts went through the hub');
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- router logs ---\n${logs.join('\n').slice(-4000)}`, { cause: e });
  } finally {
    await stopAll(procs);
    rmSync(dir, { recursive: true, force: true });
  }
});
