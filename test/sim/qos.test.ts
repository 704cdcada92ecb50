import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Forwarding } from '../../src/router/forwarding.js';
import { runScenario } from '../../src/sim/run.js';
import { parseScenario } from '../../src/config/scenario.js';

/**
 * config/scenarios/qos-relay.json, shortened: a 3-router chain where four
 * unlabelled background flows from the relay (router 1) congest its queue
 * toward router 2, and router 0 sends two client flows through it, one
 * tagged high (flow label 256) and one unlabelled. `node` is the scenario's
 * router configuration section.
 */
function qosRelay(node: Record<string, unknown> = {}) {
  const client = (label: number) => ({ kind: 'udp-cbr', src: 0, dst: 2, label, rateMbps: 0.15, packetBytes: 500, startS: 5 });
  const background = { kind: 'udp-cbr', src: 1, dst: 2, rateMbps: 0.3, packetBytes: 1000, startS: 5 };
  return parseScenario(
    {
      name: 'qos-relay-short',
      seed: 1,
      durationS: 30,
      topology: { kind: 'chain', nodes: 3, spacingM: 200 },
      medium: { phy: '802.11b', dataRateMbps: 2, txRangeM: 250, csRangeM: 550, controlChannelPn: false, adjacentChannelInterference: false },
      pn: { sources: [{ channels: 'all', powerDbm: -50, pattern: { kind: 'onoff', idleMs: 2000, busyMs: 500, distribution: 'exponential' } }] },
      node: {
        sensing: { durationMs: 70, periodMs: 1070 },
        channel: { capacityMbps: 2, controlGuard: 1 },
        switching: { intervalMs: 50, overheadUs: 1000 },
        radios: { R3: { channel: 1 } },
        ...node,
      },
      flows: [client(256), client(0), background, background, background, background],
    },
    'qos-relay-short',
  );
}

test('QoS classes at a congested relay: the high-labelled flow gets through, the unlabelled one loses; without classes both lose alike; same seed, same bytes', () => {
  const sc = qosRelay();
  const r = runScenario(sc, 1);
  const [high, plain, ...bg] = r.flows;
  assert.ok(high && plain && bg.length === 4, 'six flows');
  assert.ok(high.sent > 800 && plain.sent > 800, `both clients ran: ${high.sent}, ${plain.sent} sent`);
  const bgRatio = bg.reduce((a, f) => a + f.received, 0) / bg.reduce((a, f) => a + f.sent, 0);
  assert.ok(bgRatio < 0.9, `the relay is congested: background delivery ${bgRatio.toFixed(3)}`);
  assert.ok(high.deliveryRatio > 0.97, `high (label 256) is delivered: ${high.deliveryRatio}`);
  assert.ok(high.deliveryRatio > plain.deliveryRatio + 0.15, `high (${high.deliveryRatio}) well above unlabelled (${plain.deliveryRatio})`);
  assert.ok((r.nodes[1]?.drops['queue-full'] ?? 0) > 500, `the relay's queue overflows: ${JSON.stringify(r.nodes[1]?.drops)}`);

  const flat = runScenario(qosRelay({ qos: { classes: [] } }), 1);
  const [h, p] = flat.flows;
  assert.ok(h && p, 'the clients ran without classes');
  assert.ok(h.deliveryRatio < 0.9, `without classes high's label buys nothing: ${h.deliveryRatio}`);
  assert.ok(Math.abs(h.deliveryRatio - p.deliveryRatio) < 0.05, `without classes both clients are delivered alike: ${h.deliveryRatio} and ${p.deliveryRatio}`);

  assert.equal(JSON.stringify(runScenario(sc, 1)), JSON.stringify(r), 'the same seed gives byte-identical results');
});

test("a TCP-ACC speaking for a labelled flow sends with the flow's label, in both directions", () => {
  const sent: Array<{ dst: number; label: number | undefined }> = [];
  const originate = Forwarding.prototype.originate;
  // Every packet a VNF emits (the data plane's originate with a `from`) is recorded.
  Forwarding.prototype.originate = function (this: Forwarding, dst, proto, flow, seq, payload, now, opts = {}) {
    if (opts.from !== undefined) sent.push({ dst, label: opts.label });
    return originate.call(this, dst, proto, flow, seq, payload, now, opts);
  } as typeof originate;
  try {
    const sc = parseScenario(
      {
        name: 'acc-label',
        seed: 1,
        durationS: 20,
        topology: { kind: 'chain', nodes: 4, spacingM: 200 },
        acc: { placement: 'every', mode: 'split' },
        flows: [{ kind: 'tcp-bulk', src: 0, dst: 3, label: 256, variant: 'reno', port: 5001, startS: 5 }],
      },
      'acc-label',
    );
    runScenario(sc, 1);
  } finally {
    Forwarding.prototype.originate = originate;
  }
  assert.ok(sent.filter((s) => s.dst === 0).length > 100 && sent.filter((s) => s.dst === 3).length > 100, `the accelerators sent both ways: ${sent.length}`);
  assert.deepEqual(
    sent.filter((s) => s.label !== 256),
    [],
    'every packet with the label',
  );
});
