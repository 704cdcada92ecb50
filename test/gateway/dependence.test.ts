import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RangeArgumentError } from '../../src/core/errors.js';
import { ADWISER_P_TH, DependenceTracker, typeIIIDependent, type GatewayClient } from '../../src/gateway/dependence.js';

const CLIENTS: GatewayClient[] = [
  { id: 's1', ap: 'a1' },
  { id: 's2', ap: 'a1' },
  { id: 's3', ap: 'a2' },
  { id: 's4', ap: 'a3' },
];
const scan = (o: Record<string, number>): Map<string, number> => new Map(Object.entries(o));
const edges = (t: DependenceTracker): string[] => t.graph.edges.map((e) => `${t.clients[e.a]}-${t.clients[e.b]}:${e.kind}`);

describe('dependence graph (seeds/003 Section 4)', () => {
  test('clients of the same AP are dependent; others are not without Type II or III', () => {
    const t = new DependenceTracker({ clients: CLIENTS });
    assert.deepEqual(edges(t), ['s1-s2:same-ap']);
    assert.equal(t.pTh, ADWISER_P_TH);
  });

  test('Type II from a list of interfering APs', () => {
    const t = new DependenceTracker({ clients: CLIENTS, interferingAps: [['a2', 'a3']] });
    assert.deepEqual(edges(t), ['s1-s2:same-ap', 's3-s4:type-ii']);
    assert.equal(t.apsInterfering('a3', 'a2'), true);
  });

  test('Type II from AP positions: APs at most the interference range apart', () => {
    const t = new DependenceTracker({
      clients: CLIENTS,
      apPositions: [
        { ap: 'a1', x: 0, y: 0 },
        { ap: 'a2', x: 30, y: 40 }, // 50 m from a1
        { ap: 'a3', x: 200, y: 0 },
      ],
      interferenceRangeM: 50,
    });
    assert.deepEqual(edges(t), ['s1-s2:same-ap', 's1-s3:type-ii', 's2-s3:type-ii']);
  });

  test('the Type III test: own/other beacon power (linear) below p_th on either client', () => {
    // 10·log10(0.3) = -5.23 dB: the other AP heard more than 5.23 dB above the own one.
    assert.equal(typeIIIDependent('a1', 'a2', scan({ a1: -70, a2: -65 }), undefined, 0.3), false); // -5.0 dB: ratio 0.316
    assert.equal(typeIIIDependent('a1', 'a2', scan({ a1: -70, a2: -64.5 }), undefined, 0.3), true); // -5.5 dB: ratio 0.282
    // The second client's side alone suffices ("... or P22/P12 < p_th").
    assert.equal(typeIIIDependent('a1', 'a2', scan({ a1: -40, a2: -90 }), scan({ a1: -50, a2: -60 }), 0.3), true);
    // A beacon not reported is not heard: that side does not hold.
    assert.equal(typeIIIDependent('a1', 'a2', scan({ a2: -30 }), scan({ a2: -50 }), 0.3), false);
  });

  test('Type III inferred from reports; the graph changes only when the inference does', () => {
    const t = new DependenceTracker({ clients: CLIENTS });
    const before = t.graph;
    // s3 (on a2) hears a1 far below a2: no dependence, no change.
    assert.equal(t.report('s3', scan({ a1: -85, a2: -45 })), false);
    assert.equal(t.graph, before);
    // s2 moves towards a2: hears a2 8 dB above its own a1 → dependent on s3 (a2's client).
    assert.equal(t.report('s2', scan({ a1: -70, a2: -62 })), true);
    assert.deepEqual(edges(t), ['s1-s2:same-ap', 's2-s3:type-iii']);
    // The same report again, and a new one with the same outcome: no change.
    const after = t.graph;
    assert.equal(t.report('s2', scan({ a1: -70, a2: -62 })), false);
    assert.equal(t.report('s2', scan({ a1: -71, a2: -60 })), false);
    assert.equal(t.graph, after);
    // s2 back by a1: the dependence goes.
    assert.equal(t.report('s2', scan({ a1: -40, a2: -80 })), true);
    assert.deepEqual(edges(t), ['s1-s2:same-ap']);
  });

  test('APs that interfere give Type II, whatever the reports say', () => {
    const t = new DependenceTracker({ clients: CLIENTS, interferingAps: [['a1', 'a2']] });
    t.report('s2', scan({ a1: -70, a2: -50 }));
    assert.ok(edges(t).includes('s2-s3:type-ii'));
    assert.ok(!edges(t).some((e) => e.endsWith('type-iii')));
  });

  test('p_th is the configuration’s', () => {
    const t = new DependenceTracker({ clients: CLIENTS, pTh: 2 });
    // 2 dB below the other AP: ratio 0.63 < 2.
    assert.equal(t.report('s1', scan({ a1: -50, a2: -48 })), true);
    assert.deepEqual(edges(t), ['s1-s2:same-ap', 's1-s3:type-iii']);
  });

  test('refuses bad configuration and reports, naming what is wrong', () => {
    const refused = (f: () => unknown, field: string): void => assert.throws(f, (e: unknown) => e instanceof RangeArgumentError && e.field === field, field);
    refused(() => new DependenceTracker({ clients: [] }), 'clients');
    refused(() => new DependenceTracker({ clients: [CLIENTS[0]!, CLIENTS[0]!] }), 'clients[1].id');
    refused(() => new DependenceTracker({ clients: CLIENTS, interferingAps: [['a1', 'zz']] }), 'interferingAps[0]');
    refused(() => new DependenceTracker({ clients: CLIENTS, interferingAps: [['a1', 'a1']] }), 'interferingAps[0]');
    refused(() => new DependenceTracker({ clients: CLIENTS, apPositions: [{ ap: 'a1', x: 0, y: 0 }] }), 'interferenceRangeM');
    refused(() => new DependenceTracker({ clients: CLIENTS, pTh: 0 }), 'pTh');
    const t = new DependenceTracker({ clients: CLIENTS });
    refused(() => t.report('nobody', scan({ a1: -50 })), 'report.client');
    refused(() => t.report('s1', scan({ a1: Number.NaN })), 'report.s1.a1');
  });
});
