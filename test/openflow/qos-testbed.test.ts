import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { ControlClient } from '../../src/control/client.js';
import { spawnCogmesh, stopAll } from '../support/cli.js';
import { until } from '../support/until.js';

/**
 * seeds/002's QoS classes on a testbed of router processes
 * (config/scenarios/qos-relay.json): three client flows tagged high, low and
 * best effort in their IPv6 flow label cross the relay, where four
 * background flows congest the channel queue toward the sink. Read through
 * the real ovs-ofctl from the relay's passive agent: queue stats per class
 * and the queues' guaranteed rates; then a set_queue entry moves the
 * background into the high queue.
 */

const OF_BASE = 16700;
const RELAY_OF = `tcp:127.0.0.1:${OF_BASE + 1}`;
const CONTROL_BASE = 19700;
/** The relay's port toward the sink (router 2): neighbour + 1. */
const TO_SINK = 3;
const procs: ChildProcess[] = [];
const skip = spawnSync('sh', ['-c', 'command -v ovs-ofctl']).status === 0 ? false : 'ovs-ofctl is not installed here (.ci/run installs it)';

function ofctl(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync('ovs-ofctl', ['-O', 'OpenFlow13', ...args], { encoding: 'utf8', timeout: 15_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

type QueueRow = { bytes: number; pkts: number; errors: number };

/** `ovs-ofctl queue-stats` of the relay's port toward the sink, per queue id. */
function queueStats(): Map<number, QueueRow> {
  const r = ofctl('queue-stats', RELAY_OF, String(TO_SINK));
  assert.equal(r.code, 0, r.err);
  const out = new Map<number, QueueRow>();
  for (const m of r.out.matchAll(/port (\d+) queue (\d+): bytes=(\d+), pkts=(\d+), errors=(\d+)/g)) {
    assert.equal(Number(m[1]), TO_SINK, 'only the port asked for');
    out.set(Number(m[2]), { bytes: Number(m[3]), pkts: Number(m[4]), errors: Number(m[5]) });
  }
  return out;
}

describe('QoS classes on a testbed, read and steered with ovs-ofctl', { skip, timeout: 170_000 }, () => {
  const clients: ControlClient[] = [];
  const ctl = (i: number): ControlClient => {
    const c = new ControlClient(`tcp://127.0.0.1:${CONTROL_BASE + 10 * i}`);
    clients.push(c);
    return c;
  };

  before(() => {
    const p = spawnCogmesh(
      [
        'testbed',
        'config/scenarios/qos-relay.json',
        '--set',
        'node.openflow.mode=passive',
        '--openflow-base',
        String(OF_BASE),
        '--medium',
        'tcp://127.0.0.1:19750',
        '--control-base',
        String(CONTROL_BASE),
        '--monitor-base',
        '19680',
        '--log-format',
        'json',
        '--for',
        '160',
      ],
      ['ignore', 'ignore', 'inherit'],
    );
    procs.push(p);
  });

  after(async () => {
    for (const c of clients) c.close();
    await stopAll(procs);
  });

  test('per-class queue stats and rates over OpenFlow; high-priority loss stays low while best effort takes it; set_queue moves a flow', async (t) => {
    // Congestion at the relay: best effort's queue toward the sink overflows.
    const congested = await until(
      'best effort to overflow at the relay',
      async () => {
        const r = ofctl('queue-stats', RELAY_OF, String(TO_SINK));
        if (r.code !== 0) return undefined;
        const q = queueStats();
        return (q.get(0)?.errors ?? 0) > 200 && (q.get(1)?.pkts ?? 0) > 200 ? q : undefined;
      },
      100_000,
    );
    assert.deepEqual([...congested.keys()], [1, 2, 0], 'the classes in priority order, best effort last');
    assert.ok(congested.get(2)!.pkts > 100, `low's queue carries its flow: ${JSON.stringify([...congested])}`);
    assert.ok(congested.get(0)!.errors > 10 * (congested.get(1)!.errors + 1), `best effort takes the loss, not high: ${JSON.stringify([...congested])}`);

    const conf = ofctl('queue-get-config', RELAY_OF, String(TO_SINK));
    assert.equal(conf.code, 0, conf.err);
    assert.match(conf.out, /queue 1: min_rate:20\.0%/, 'high: 400 kbps of the 2 Mbps link');
    assert.match(conf.out, /queue 2: min_rate:10\.0%/, 'low: 200 kbps');
    assert.match(conf.out, /queue 0:\s*$/m, 'best effort: no guarantee');

    // Delivery per class, end to end, over 15 s of congestion: what router 2 received against what router 0 sent
    // (start-up and the packets in flight at either end of the window cancel out).
    type Traffic = { traffic: Array<{ id: number; sent: number; received: number }> };
    const status = async (i: number): Promise<Traffic['traffic']> => {
      const r = await ctl(i).request('status', {}, 3000);
      assert.ok(r.ok, JSON.stringify(r));
      return (r.result as Traffic).traffic;
    };
    const counts = async (): Promise<Map<number, { sent: number; received: number }>> => {
      const [src, sink] = [await status(0), await status(2)];
      return new Map([0, 1, 2].map((id) => [id, { sent: src.find((t) => t.id === id)?.sent ?? 0, received: sink.find((t) => t.id === id)?.received ?? 0 }]));
    };
    const a = await counts();
    await new Promise((r) => setTimeout(r, 15_000));
    const b = await counts();
    const delivery = (id: number): number => (b.get(id)!.received - a.get(id)!.received) / Math.max(1, b.get(id)!.sent - a.get(id)!.sent);
    const [high, low, be] = [delivery(0), delivery(1), delivery(2)];
    t.diagnostic(`delivery over 15 s: high ${high.toFixed(3)}, low ${low.toFixed(3)}, best effort ${be.toFixed(3)}`);
    assert.ok(high > 0.9 && high > be + 0.15, `high (${high.toFixed(3)}) is delivered, best effort (${be.toFixed(3)}) loses`);
    assert.ok(low > be, `low (${low.toFixed(3)}) does better than best effort (${be.toFixed(3)})`);

    // The control API shows the classes inside the relay's channel queues, and the flows' labels.
    const queues = await ctl(1).request('queues', {}, 3000);
    assert.ok(queues.ok, JSON.stringify(queues));
    const names = (queues.result as Array<{ classes: Array<{ name: string }> }>)[0]?.classes.map((c) => c.name);
    assert.deepEqual(names, ['high', 'low', 'best-effort']);
    const flows = await ctl(1).request('flows', {}, 3000);
    assert.ok(
      flows.ok && (flows.result as Array<{ flow: number; label: number; role: string }>).some((f) => f.flow === 0 && f.label === 0x100 && f.role === 'relay'),
      JSON.stringify(flows),
    );

    // set_queue: the relay's own background flows (unlabelled, IPv4 from 10.0.1.1) go into the high queue.
    const add = ofctl('add-flow', RELAY_OF, `priority=100,udp,nw_src=10.0.1.1,actions=set_queue:1,output:${TO_SINK}`);
    assert.equal(add.code, 0, add.err);
    const before = queueStats().get(1)!.bytes;
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, 8000));
    const rateKbps = ((queueStats().get(1)!.bytes - before) * 8) / (Date.now() - t0);
    t.diagnostic(`queue 1 after set_queue: ${rateKbps.toFixed(0)} kbps`);
    // High's own flow is 150 kbps; with the background it carries far more.
    assert.ok(rateKbps > 300, `queue 1 carries the background after set_queue: ${rateKbps.toFixed(0)} kbps`);
  });
});
