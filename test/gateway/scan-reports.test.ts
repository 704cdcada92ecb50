import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { RangeArgumentError, UsageError } from '../../src/core/errors.js';
import { DependenceTracker } from '../../src/gateway/dependence.js';
import { parseIwScan } from '../../src/gateway/iw-scan.js';
import { parseScanKey, ScanReports } from '../../src/gateway/scan-reports.js';
import { parseIpAddress } from '../../src/wire/ip.js';
import { encodeScanReport, parseScanReport } from '../../src/wire/scan-report.js';
import { cogmesh } from '../support/cli.js';

const KEY_HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const ip = (s: string): Uint8Array => parseIpAddress(s)!;
const tracker = (): DependenceTracker =>
  new DependenceTracker({
    clients: [
      { id: 'c1', ap: 'r1' },
      { id: 'c2', ap: 'r2' },
    ],
  });
/** Reports taken go to a dependence tracker. */
const into =
  (t: DependenceTracker) =>
  (client: string, aps: ReadonlyMap<string, number>): boolean =>
    t.report(client, aps);
const CLIENTS = [
  { id: 'c1', prefixes: ['10.0.1.0/24'] },
  { id: 'c2', prefixes: ['10.0.2.0/24', 'fd00:1:0:2::/64'] },
];
/** c1 hears r2 much louder than its own r1: a Type III dependence (p_th 0.3). */
const LOUD = new Map([
  ['r1', -70],
  ['r2', -60],
]);
const QUIET = new Map([
  ['r1', -50],
  ['r2', -90],
]);

describe("the gateway's scan reports: Type III from what the clients hear", () => {
  test('a report taken changes the graph when it changes a dependence, and the latest is kept', () => {
    const t = tracker();
    const s = new ScanReports(CLIENTS, { minIntervalUs: 0 }, into(t));
    assert.deepEqual(s.receive(encodeScanReport({ client: 'c1', boot: 1, seq: 1, aps: LOUD }), ip('10.0.1.2'), 1000), { verdict: 'taken', changed: true });
    assert.deepEqual(
      t.graph.edges.map((e) => e.kind),
      ['type-iii'],
    );
    assert.deepEqual(s.receive(encodeScanReport({ client: 'c1', boot: 1, seq: 2, aps: LOUD }), ip('10.0.1.2'), 2000), { verdict: 'taken', changed: false });
    assert.deepEqual(s.receive(encodeScanReport({ client: 'c1', boot: 1, seq: 3, aps: QUIET }), ip('10.0.1.2'), 3000), { verdict: 'taken', changed: true });
    assert.equal(t.graph.edges.length, 0);
    assert.deepEqual(s.latest(), [{ client: 'c1', atUs: 3000, boot: 1, seq: 3, aps: { r1: -50, r2: -90 } }]);
    assert.equal(s.counters.taken, 3);
    assert.equal(s.counters.graphChanges, 2);
  });

  test('forged, replayed, misdirected and flooding reports are counted by cause and change nothing', () => {
    const t = tracker();
    const s = new ScanReports(CLIENTS, { minIntervalUs: 1_000_000 }, into(t));
    const r = (client: string, boot: number, seq: number, from: string, now: number, aps = LOUD) =>
      s.receive(encodeScanReport({ client, boot, seq, aps }), ip(from), now).verdict;
    assert.equal(s.receive(new Uint8Array([1, 2, 3]), ip('10.0.1.2'), 0).verdict, 'malformed');
    assert.equal(r('c9', 1, 1, '10.0.1.2', 0), 'unknown-client');
    assert.equal(r('c1', 1, 1, '10.0.2.2', 0), 'wrong-source');
    assert.equal(
      r(
        'c2',
        1,
        1,
        'fd00:1:0:2::9',
        0,
        new Map([
          ['r1', -90],
          ['r2', -50],
        ]),
      ),
      'taken',
    );
    assert.equal(r('c1', 5, 10, '10.0.1.2', 0, QUIET), 'taken');
    assert.equal(r('c1', 5, 10, '10.0.1.2', 2_000_000), 'stale');
    assert.equal(r('c1', 4, 99, '10.0.1.2', 2_000_000), 'stale');
    assert.equal(r('c1', 5, 11, '10.0.1.2', 500_000), 'rate-limited');
    assert.equal(t.graph.edges.length, 0, 'nothing refused reached the graph');
    // A restarted client (a later boot) is newer whatever its count.
    assert.equal(r('c1', 6, 1, '10.0.1.2', 2_000_000), 'taken');
    assert.equal(t.graph.edges.length, 1);
    assert.deepEqual(s.counters, {
      taken: 3,
      graphChanges: 1,
      malformed: 1,
      badMac: 0,
      unknownClient: 1,
      wrongSource: 1,
      stale: 2,
      rateLimited: 1,
      graphRefused: 0,
    });
  });

  test('with a key, only sealed reports are taken', () => {
    const key = parseScanKey(KEY_HEX, 'gateway.scan.key');
    const s = new ScanReports(CLIENTS, { key, minIntervalUs: 0 }, into(tracker()));
    assert.equal(s.receive(encodeScanReport({ client: 'c1', boot: 1, seq: 1, aps: LOUD }), ip('10.0.1.2'), 0).verdict, 'bad-mac');
    assert.equal(s.receive(encodeScanReport({ client: 'c1', boot: 1, seq: 1, aps: LOUD }, new Uint8Array(16)), ip('10.0.1.2'), 0).verdict, 'bad-mac');
    assert.equal(s.receive(encodeScanReport({ client: 'c1', boot: 1, seq: 1, aps: LOUD }, key), ip('10.0.1.2'), 0).verdict, 'taken');
    assert.equal(s.counters.badMac, 2);
  });

  test('a report the graph refuses (too many independent sets) is counted, not kept, and its count is used up', () => {
    let calls = 0;
    const s = new ScanReports(CLIENTS, { minIntervalUs: 0 }, () => {
      calls++;
      throw new RangeArgumentError('maxSets', 4096, 'at least the number of maximal independent sets');
    });
    assert.deepEqual(s.receive(encodeScanReport({ client: 'c1', boot: 1, seq: 1, aps: LOUD }), ip('10.0.1.2'), 0), {
      verdict: 'graph-refused',
      changed: false,
    });
    assert.equal(s.receive(encodeScanReport({ client: 'c1', boot: 1, seq: 1, aps: LOUD }), ip('10.0.1.2'), 10).verdict, 'stale');
    assert.equal(calls, 1, 'the replay cost no graph computation');
    assert.deepEqual(s.latest(), []);
    assert.equal(s.counters.graphRefused, 1);
    assert.equal(s.counters.taken, 0);
  });

  test('a bad client list or key is refused, naming it and never showing the key', () => {
    assert.throws(() => new ScanReports([{ id: '', prefixes: [] }], { minIntervalUs: 0 }, into(tracker())), /clients\[0\]\.id/);
    assert.throws(() => new ScanReports([{ id: 'c1', prefixes: ['10.0.1.1/24'] }], { minIntervalUs: 0 }, into(tracker())), /did you mean 10\.0\.1\.0\/24/);
    assert.throws(
      () => parseScanKey('abcd', 'gateway.scan.key'),
      (e) => e instanceof RangeArgumentError && /gateway\.scan\.key/.test(e.message) && !/abcd/.test(e.message),
    );
  });

  test("`iw dev IFACE scan` output gives each BSSID's strongest signal", () => {
    const text = [
      'BSS 02:00:00:00:01:00(on wlan0) -- associated',
      '\tfreq: 2412',
      '\tsignal: -47.00 dBm',
      '\tSSID: mesh',
      'BSS 02:00:00:00:02:00(on wlan0)',
      '\tsignal: -81.00 dBm',
      'BSS 02:00:00:00:02:00(on wlan0)',
      '\tsignal: -77.50 dBm',
      'BSS 02:00:00:00:03:00(on wlan0)',
      '\tSSID: no signal line',
    ].join('\n');
    assert.deepEqual(
      [...parseIwScan(text)],
      [
        ['02:00:00:00:01:00', -47],
        ['02:00:00:00:02:00', -77.5],
      ],
    );
    assert.throws(
      () => parseIwScan('wlan0: no scan results', 'scan.txt'),
      (e) => e instanceof UsageError && /scan\.txt/.test(e.message),
    );
  });

  test('`cogmesh gateway scan-report` sends sealed reports a gateway takes, and refuses a bad command line', async () => {
    const sock = createSocket('udp4');
    const got: Uint8Array[] = [];
    sock.on('message', (m) => got.push(new Uint8Array(m)));
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
    const port = sock.address().port;
    const dir = mkdtempSync(join(tmpdir(), 'cogmesh-scan-'));
    try {
      writeFileSync(join(dir, 'key'), `${KEY_HEX}\n`);
      const r = cogmesh(
        'gateway',
        'scan-report',
        '--to',
        `127.0.0.1:${port}`,
        '--client',
        'c1',
        '--ap',
        'r1=-70',
        '--ap',
        'r2=-60.25',
        '--every',
        '0.05',
        '--count',
        '3',
        '--key-file',
        join(dir, 'key'),
      );
      assert.equal(r.code, 0, r.err);
      assert.equal(r.out.trim().split('\n').length, 3, r.out);
      await new Promise((res) => setTimeout(res, 200));
      assert.equal(got.length, 3);
      const key = parseScanKey(KEY_HEX, 'key');
      const parsed = got.map((b) => parseScanReport(b, key));
      assert.ok(parsed.every((p) => p.ok));
      assert.deepEqual(
        parsed.map((p) => (p.ok ? p.value.seq : -1)),
        [1, 2, 3],
      );
      assert.deepEqual(parsed[0]!.ok && [...parsed[0]!.value.aps], [
        ['r1', -70],
        ['r2', -60.25],
      ]);
      for (const [args, why] of [
        [['--to', 'nowhere', '--client', 'c1', '--ap', 'r1=-70'], /--to: "nowhere"/],
        [['--to', `127.0.0.1:${port}`, '--client', 'c1'], /--ap NAME=DBM/],
        [['--to', `127.0.0.1:${port}`, '--client', 'c1', '--ap', 'r1'], /--ap: "r1"/],
        [['--to', `127.0.0.1:${port}`, '--client', 'c1', '--ap', 'r1=-500'], /AP r1/],
      ] as const) {
        const bad = cogmesh('gateway', 'scan-report', ...args);
        assert.notEqual(bad.code, 0);
        assert.match(bad.err, why);
      }
      assert.equal(got.length, 3, 'a refused command sent nothing');
    } finally {
      sock.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
