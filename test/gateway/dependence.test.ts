import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RangeArgumentError } from '../../src/core/errors.js';
import { ADWISER_P_TH, DependenceTracker, typeIIIDependent, type GatewayClient } from '../../src/gateway/dependence.js';
import { computeSlices } from '../../src/gateway/slices.js';

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

describe('the paper’s moving clients (seeds/003 Figs. 22-24), slices recomputed only when the graph changes', () => {
  test('apart: 1/2 each; STA 2 by AP2: 3/4, 1/4, 3/8, 3/8; all by AP1: 1/4 each', () => {
    const t = new DependenceTracker({
      clients: [
        { id: 'sta1', ap: 'ap1' },
        { id: 'sta2', ap: 'ap1' },
        { id: 'sta3', ap: 'ap2' },
        { id: 'sta4', ap: 'ap2' },
      ],
    });
    let recomputed = 0;
    let shares: readonly number[] = [];
    const slices = (): void => {
      recomputed++;
      shares = computeSlices(
        4,
        t.graph.edges.map((e) => [e.a, e.b] as const),
        { tolerance: 1e-9 },
      ).clientShares;
    };
    const report = (id: string, o: Record<string, number>): void => {
      if (t.report(id, scan(o))) slices();
    };
    const near = (want: number[]): void => want.forEach((x, j) => assert.ok(Math.abs(shares[j]! - x) < 1e-4, `${j}: ${shares[j]} vs ${x}`));
    slices();
    // Each client close to its AP (Fig. 22): only clients of the same AP are dependent.
    for (const [id, own, other] of [
      ['sta1', 'ap1', 'ap2'],
      ['sta2', 'ap1', 'ap2'],
      ['sta3', 'ap2', 'ap1'],
      ['sta4', 'ap2', 'ap1'],
    ])
      report(id!, { [own!]: -40, [other!]: -85 });
    near([0.5, 0.5, 0.5, 0.5]);
    assert.equal(recomputed, 1);
    // STA 2 moves towards AP2 (Fig. 23).
    report('sta2', { ap1: -72, ap2: -60 });
    near([0.75, 0.25, 0.375, 0.375]);
    assert.equal(recomputed, 2);
    // Scans that change nothing: no recomputation.
    report('sta1', { ap1: -41, ap2: -84 });
    report('sta2', { ap1: -73, ap2: -61 });
    assert.equal(recomputed, 2);
    // STA 3 and STA 4 move towards AP1 (Fig. 24): all dependent.
    report('sta3', { ap1: -50, ap2: -70 });
    report('sta4', { ap1: -52, ap2: -68 });
    assert.deepEqual(t.graph.edges.length, 6);
    near([0.25, 0.25, 0.25, 0.25]);
    assert.equal(recomputed, 4);
  });
});
