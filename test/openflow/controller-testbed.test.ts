import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { ControlClient } from '../../src/control/client.js';
import { spawnCogmesh, stopAll } from '../support/cli.js';
import { until } from '../support/until.js';

/**
 * `cogmesh controller` and a testbed whose routers' OpenFlow agents connect to
 * it: the controller installs the flow along its minimum-CETT path and places
 * TCP-ACC on the relay through the experimenter message; the relay forwards
 * by its flow table and runs the VNF in its sandbox; the sink checks every byte.
 * The flow starts after the VNF is placed: a TCP-ACC lets a connection it did
 * not see open pass through.
 */

const CTL = 'tcp://127.0.0.1:19900';
const CONTROLLER = '127.0.0.1:19960';
const procs: ChildProcess[] = [];
const lines: Array<Record<string, unknown>> = [];

function run(args: string[]): ChildProcess {
  const p = spawnCogmesh([...args], ['ignore', 'pipe', 'inherit']);
  createInterface({ input: p.stdout! }).on('line', (l) => {
    try {
      lines.push(JSON.parse(l) as Record<string, unknown>);
    } catch {
      // a non-JSON line
    }
  });
  procs.push(p);
  return p;
}

describe('the CETT controller places a flow and its TCP-ACC on a testbed of router processes', { timeout: 150_000 }, () => {
  const clients: ControlClient[] = [];
  const ctl = (i: number): ControlClient => {
    const c = new ControlClient(CTL.replace('19900', String(19900 + 10 * i)));
    clients.push(c);
    return c;
  };

  before(() => {
    run(['controller', '--listen', CONTROLLER, '--flow', 'tcp:0-2:5001', '--acc', 'every', '--log-format', 'json', '--for', '140']);
    run([
      'testbed',
      'config/scenarios/urbanx-chain.json',
      '--hops',
      '2',
      '--tcp',
      'reno',
      '--set',
      'flows.0.startS=10',
      '--set',
      'node.openflow.mode=active',
      '--set',
      `node.openflow.controller=${CONTROLLER}`,
      '--medium',
      'tcp://127.0.0.1:19850',
      '--control-base',
      '19900',
      '--monitor-base',
      '19880',
      '--log-format',
      'json',
      '--for',
      '135',
    ]);
  });

  after(async () => {
    for (const c of clients) c.close();
    await stopAll(procs);
  });

  test('the path 0 -> 1 -> 2 is installed, the relay forwards by its flow table and runs TCP-ACC, the sink reads every byte', async () => {
    await until(
      'the controller to install the path',
      async () => (lines.some((l) => l.event === 'flow-path' && l.state === 'installed') ? true : undefined),
      60_000,
    );
    const path = lines.find((l) => l.event === 'flow-path' && l.state === 'installed')!;
    assert.deepEqual(path.routers, [0, 1, 2]);
    assert.deepEqual(path.vnfs, [1], 'TCP-ACC on the relay');
    type Status = { counters: { byFlowTable: number }; traffic: Array<{ id: number; bytes: number; corruptBytes?: number }> };
    const got = await until(
      '150 kB at the sink',
      async () => {
        const r = await ctl(2).request('status', {}, 2000);
        const t = r.ok ? (r.result as Status).traffic.find((x) => x.id === 0) : undefined;
        return t && t.bytes >= 150_000 ? t : undefined;
      },
      90_000,
    );
    assert.equal(got.corruptBytes, 0, 'every byte as the source sent it');
    // The source sees its progress in what the sink acknowledged (its own status cannot count the sink's reads).
    const source = await ctl(0).request('status', {}, 2000);
    const sent = source.ok ? (source.result as Status).traffic.find((x) => x.id === 0) : undefined;
    assert.ok(sent && sent.bytes >= 150_000, `the source's acknowledged bytes: ${JSON.stringify(sent)}`);
    const relay = await ctl(1).request('status', {}, 2000);
    assert.ok(
      relay.ok && (relay.result as Status).counters.byFlowTable > 50,
      `the relay forwards by its flow table: ${JSON.stringify(relay.ok && (relay.result as Status).counters)}`,
    );
    const vnfs = await ctl(1).request('vnf.list', {}, 2000);
    const acc = vnfs.ok ? (vnfs.result as Array<{ type: string; state: string; packetsTaken: number }>).find((v) => v.type === 'tcp-acc') : undefined;
    assert.ok(acc && acc.state === 'running' && acc.packetsTaken > 50, `the controller's TCP-ACC works the flow: ${JSON.stringify(vnfs)}`);
  });
});

describe('the controller as a role of router 0: flows added and removed at run time through its control API', { timeout: 150_000 }, () => {
  const ROLE = '127.0.0.1:19961';
  const clients: ControlClient[] = [];
  const ctl = (i: number): ControlClient => {
    const c = new ControlClient(`tcp://127.0.0.1:${19800 + 10 * i}`);
    clients.push(c);
    return c;
  };
  const role: ChildProcess[] = [];

  before(() => {
    const p = spawnCogmesh(
      [
        'testbed',
        'config/scenarios/urbanx-chain.json',
        '--hops',
        '2',
        '--tcp',
        'reno',
        '--set',
        'flows.0.startS=20',
        '--set',
        'node.openflow.mode=active',
        '--set',
        `node.openflow.controller=${ROLE}`,
        '--set',
        `nodeOverrides.0.controller.listen=${ROLE}`,
        '--medium',
        'tcp://127.0.0.1:19770',
        '--control-base',
        '19800',
        '--monitor-base',
        '19790',
        '--log-format',
        'json',
        '--for',
        '140',
      ],
      ['ignore', 'ignore', 'inherit'],
    );
    role.push(p);
  });

  after(async () => {
    for (const c of clients) c.close();
    await stopAll(role);
  });

  type Path = { id: number; state: string; routers: number[]; vnfs: number[] };
  type Vnf = { type: string; state: string; reason: string | null; packetsTaken: number };

  test('controller.add places the flow and its TCP-ACC on the relay; controller.remove ends it there', async () => {
    const r0 = ctl(0);
    await until('router 0 to answer', async () => ((await r0.request('status', {}, 2000)).ok ? true : undefined), 60_000);
    // One add, with time to answer on a loaded machine: an add retried after a lost answer
    // would be refused, rightly, as the same traffic placed twice.
    const add = await r0.request('controller.add', { flow: 'tcp:0-2:5001', acc: 'every' }, 30_000);
    assert.ok(add.ok, JSON.stringify(add));
    const added = add.result as Path;
    assert.equal(added.id, 1);
    const path = await until(
      'the path to be installed',
      async () => {
        const r = await r0.request('controller.flows', {}, 2000);
        const p = r.ok ? (r.result as Path[]).find((f) => f.id === added.id) : undefined;
        return p?.state === 'installed' ? p : undefined;
      },
      60_000,
    );
    assert.deepEqual(path.routers, [0, 1, 2]);
    assert.deepEqual(path.vnfs, [1], 'TCP-ACC on the relay');
    const relay = ctl(1);
    const running = await until(
      'the relay to run the TCP-ACC on the flow',
      async () => {
        const r = await relay.request('vnf.list', {}, 2000);
        const v = r.ok ? (r.result as Vnf[]).find((x) => x.type === 'tcp-acc') : undefined;
        return v && v.state === 'running' && v.packetsTaken > 50 ? v : undefined;
      },
      60_000,
    );
    assert.ok(running.packetsTaken > 50, 'the accelerator works the flow');
    const gone = await r0.request('controller.remove', { flow: added.id }, 30_000);
    assert.ok(gone.ok, JSON.stringify(gone));
    const stopped = await until(
      'the relay to stop the TCP-ACC',
      async () => {
        const r = await relay.request('vnf.list', {}, 2000);
        const v = r.ok ? (r.result as Vnf[]).find((x) => x.type === 'tcp-acc') : undefined;
        return v && v.state === 'stopped' ? v : undefined;
      },
      20_000,
    );
    assert.equal(stopped.reason, 'terminated');
    const left = await r0.request('controller.flows', {}, 2000);
    assert.deepEqual(left.ok && left.result, [], 'no flow left');
    const notController = await relay.request('controller.flows', {}, 2000);
    assert.ok(!notController.ok && notController.error.code === 'CONTROL_NOT_CONTROLLER', 'the relay is not the controller');
  });
});
