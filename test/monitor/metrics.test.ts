import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import parsePrometheusTextFormat, { type PromFamily } from 'parse-prometheus-text-format';
import type { MetricsSources, OpenFlowMetricsSource } from '../../src/monitor/metrics.js';
import { MonitorServer } from '../../src/monitor/server.js';
import { MonitorTestView } from '../support/monitor-view.js';
import { testLogger } from './stream-client.js';

const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});

/** A control server's counters as the metrics read them (src/control/server.ts keeps the same shape). */
function controlCounts(): {
  counters: Record<string, number>;
  requestsByCommand: Map<string, Map<string, number>>;
} {
  return {
    counters: { telemetrySent: 40, telemetryDropped: 2 },
    requestsByCommand: new Map([
      [
        'status',
        new Map([
          ['ok', 7],
          ['internal', 1],
        ]),
      ],
      ['set', new Map([['refused', 2]])],
      ['unknown', new Map([['malformed', 3]])],
    ]),
  };
}

const OPENFLOW: OpenFlowMetricsSource = {
  sessions: 1,
  agent: {
    connections: 3,
    messages: 120,
    malformed: 1,
    errorsSent: 2,
    flowMods: 9,
    packetOuts: 4,
    packetIns: 5,
    portStatus: 6,
    flowRemoved: 0,
    vnfRequests: 0,
  },
  transport: { accepted: 3, tlsRefused: 1, framingErrors: 0, connects: 0, connectFailures: 0 },
};

const EVERY_SOURCE: MetricsSources = { version: '9.8.7', control: controlCounts(), openflow: () => OPENFLOW };

/** A monitor over a view that has sensed `rounds` rounds, with every source unless told. */
async function fullMonitor(
  cfg: { token?: string } = {},
  rounds = 12,
  sources = EVERY_SOURCE,
): Promise<{ view: MonitorTestView; server: MonitorServer; url: string }> {
  const view = new MonitorTestView();
  for (let i = 0; i < rounds; i++) view.pushRound();
  const server = new MonitorServer(
    view,
    { listen: '127.0.0.1:0', token: cfg.token ?? '', statePeriodMs: 60_000, maxConnections: 32 },
    testLogger().log,
    {},
    sources,
  );
  const { url } = await server.start();
  cleanup.push(() => server.stop());
  return { view, server, url };
}

async function scrape(url: string, init: RequestInit = {}, query = ''): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(new URL(`/metrics${query}`, url), init);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

function family(fams: PromFamily[], name: string): PromFamily {
  const f = fams.find((x) => x.name === name);
  assert.ok(f, `the scrape has ${name} (it has ${fams.map((x) => x.name).join(', ')})`);
  return f;
}

/** A series' value by its labels (besides node); NaN when absent. */
function value(f: PromFamily, labels: Record<string, string> = {}): number {
  const s = f.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return s === undefined ? Number.NaN : Number(s.value);
}

describe('monitor /metrics', () => {
  test('the text format, parsed: families, types, labels and values as the router shows them', async () => {
    const { view, url } = await fullMonitor();
    const res = await scrape(url);
    assert.equal(res.status, 200);
    assert.match(res.type ?? '', /^text\/plain; version=0\.0\.4/);
    const fams = parsePrometheusTextFormat(res.text);

    for (const f of fams) {
      assert.match(f.name, /^cogmesh_[a-z0-9_]+$/, `${f.name}: prefixed, snake case`);
      assert.ok(f.help.length > 0, `${f.name} has help`);
      assert.equal(f.type === 'COUNTER', f.name.endsWith('_total'), `${f.name}: counters, and only counters, end in _total`);
      for (const m of f.metrics) assert.equal(m.labels?.node, 'rooftop-1', `${f.name}: every series carries the node`);
    }
    assert.equal(new Set(fams.map((f) => f.name)).size, fams.length, 'one family per name');

    const build = family(fams, 'cogmesh_build_info');
    assert.equal(build.type, 'GAUGE');
    assert.equal(value(build, { version: '9.8.7', nodejs: process.versions.node }), 1);

    const s = view.spectrum()!;
    const w = family(fams, 'cogmesh_channel_workload_ratio');
    const rc = family(fams, 'cogmesh_channel_remaining_capacity_bytes_per_second');
    const power = family(fams, 'cogmesh_channel_power_dbm');
    const own = family(fams, 'cogmesh_channel_own_workload_ratio');
    assert.equal(w.type, 'GAUGE');
    assert.equal(w.metrics.length, 11, 'one w per channel');
    for (const c of s.channels) {
      const ch = { channel: String(c.channel) };
      assert.equal(value(w, ch), c.w, `w of channel ${c.channel}`);
      assert.ok(value(w, ch) >= 0 && value(w, ch) <= 1, 'w is a ratio');
      assert.equal(value(rc, ch), c.rcBps / 8, `RC of channel ${c.channel}, in bytes per second`);
      if (c.powerDbm === undefined) assert.ok(Number.isNaN(value(power, ch)), 'no power for a channel not visited');
      else assert.equal(value(power, ch), c.powerDbm);
      if (c.ownW === undefined) assert.ok(Number.isNaN(value(own, ch)));
      else assert.equal(value(own, ch), c.ownW);
    }

    const st = view.status();
    assert.equal(value(family(fams, 'cogmesh_sensing_rounds_total')), 12);
    assert.equal(value(family(fams, 'cogmesh_r2_switches_total')), st.r2.switches);
    assert.equal(value(family(fams, 'cogmesh_r1_moves_total')), st.r1.moves);
    assert.equal(value(family(fams, 'cogmesh_log_dropped_lines_total')), st.log!.dropped);
    const radio = family(fams, 'cogmesh_radio_channel');
    assert.equal(value(radio, { radio: 'R1' }), st.r1.channel);
    assert.equal(value(radio, { radio: 'R2' }), st.r2.channel);
    assert.equal(value(radio, { radio: 'R3' }), 3);

    const qp = family(fams, 'cogmesh_queue_packets');
    const qb = family(fams, 'cogmesh_queue_bytes');
    for (const q of view.queues()) {
      const l = { channel: String(q.channel), queue: '0', class: 'best-effort' };
      assert.equal(value(qp, l), q.packets, `queue of channel ${q.channel}`);
      assert.equal(value(qb, l), q.bytes);
    }
    const drops = family(fams, 'cogmesh_packets_dropped_total');
    assert.equal(drops.type, 'COUNTER');
    assert.deepEqual(drops.metrics.map((m) => m.labels?.reason).sort(), Object.keys(st.drops).sort(), 'every drop reason');

    const routes = family(fams, 'cogmesh_routes');
    assert.equal(value(routes, { state: 'valid' }), 3);
    assert.equal(value(routes, { state: 'invalid' }), 1);
    assert.equal(value(family(fams, 'cogmesh_route_paths'), { dst: '4' }), 2);
    const disc = family(fams, 'cogmesh_route_discoveries_total');
    assert.equal(value(disc, { result: 'started' }), st.routing!.discoveriesStarted);
    assert.equal(value(disc, { result: 'found' }), st.routing!.discoveriesFound);
    assert.equal(value(disc, { result: 'failed' }), 1);
    assert.equal(disc.metrics.length, 3, 'discoveries only, not every AODV counter');
    assert.equal(value(family(fams, 'cogmesh_neighbours')), 3);

    const acc = view.vnfs()[0]!.counters;
    assert.equal(value(family(fams, 'cogmesh_tcp_acc_sessions_total'), { vnf: '1' }), acc.sessions);
    assert.equal(value(family(fams, 'cogmesh_tcp_acc_active_sessions'), { vnf: '1' }), acc.activeSessions);
    const bytes = family(fams, 'cogmesh_tcp_acc_bytes_total');
    assert.equal(value(bytes, { vnf: '1', direction: 'down' }), 12 * 1460);
    assert.equal(value(bytes, { vnf: '1', direction: 'up' }), 12 * 40);
    assert.equal(value(family(fams, 'cogmesh_tcp_acc_sessions_ended_total'), { vnf: '1', how: 'closed' }), acc.sessionsClosed);
    assert.equal(value(family(fams, 'cogmesh_vnfs'), { type: 'tcp-acc', state: 'running' }), 1);

    assert.equal(value(family(fams, 'cogmesh_openflow_connections')), 1);
    assert.equal(value(family(fams, 'cogmesh_openflow_connections_total')), 3);
    const ofm = family(fams, 'cogmesh_openflow_messages_total');
    assert.equal(value(ofm, { kind: 'received' }), 120);
    assert.equal(value(ofm, { kind: 'flowMods' }), 9);
    assert.equal(value(family(fams, 'cogmesh_openflow_transport_events_total'), { event: 'tlsRefused' }), 1);

    const ctl = family(fams, 'cogmesh_control_requests_total');
    assert.equal(ctl.type, 'COUNTER');
    assert.equal(value(ctl, { cmd: 'status', result: 'ok' }), 7);
    assert.equal(value(ctl, { cmd: 'status', result: 'internal' }), 1);
    assert.equal(value(ctl, { cmd: 'set', result: 'refused' }), 2);
    assert.equal(value(ctl, { cmd: 'unknown', result: 'malformed' }), 3);
    assert.equal(value(family(fams, 'cogmesh_control_telemetry_messages_total'), { result: 'dropped' }), 2);
  });

  test('read at scrape time: the next scrape shows the next round, and nothing reads the router between scrapes', async () => {
    const { view, url } = await fullMonitor();
    const before = view.statusReads;
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(view.statusReads, before, 'no scrape, no reads');
    const first = parsePrometheusTextFormat((await scrape(url)).text);
    assert.equal(view.statusReads, before + 1, 'one status read a scrape');
    view.pushRound();
    const second = parsePrometheusTextFormat((await scrape(url)).text);
    assert.equal(value(family(first, 'cogmesh_sensing_rounds_total')), 12);
    assert.equal(value(family(second, 'cogmesh_sensing_rounds_total')), 13);
    assert.equal(value(family(second, 'cogmesh_channel_workload_ratio'), { channel: '6' }), view.spectrum()!.channels[5]!.w);
    assert.equal(value(family(second, 'cogmesh_monitor_scrapes_total')), 2);
  });

  test('what the router does not have is left out: no spectrum before the first round, no control or OpenFlow families when they are off', async () => {
    const { url } = await fullMonitor({}, 0, {});
    const fams = parsePrometheusTextFormat((await scrape(url)).text);
    const names = new Set(fams.map((f) => f.name));
    assert.ok(names.has('cogmesh_build_info'));
    assert.equal(value(family(fams, 'cogmesh_build_info'), { version: 'unknown' }), 1);
    for (const n of ['cogmesh_control_requests_total', 'cogmesh_openflow_connections']) assert.ok(!names.has(n), `no ${n}`);
    assert.equal(family(fams, 'cogmesh_channel_workload_ratio').metrics.length, 0, 'no w before the first round');
  });

  test('with a token: /metrics refuses a missing or wrong one (401), takes ?token= or Authorization: Bearer', async () => {
    const { url, server } = await fullMonitor({ token: 's3cret token' });
    assert.equal((await scrape(url)).status, 401, 'no token');
    const refused = await fetch(new URL('/metrics', url));
    assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer /);
    assert.equal((await scrape(url, { headers: { Authorization: 'Bearer guess' } })).status, 401, 'a wrong bearer token');
    assert.equal((await scrape(url, { headers: { Authorization: 'Bearer s3cret' } })).status, 401, 'a prefix of the token');
    assert.equal((await scrape(url, { headers: { Authorization: 'Basic czNjcmV0IHRva2Vu' } })).status, 401, 'not a bearer token');
    assert.equal((await scrape(url, {}, '?token=guess')).status, 401, 'a wrong ?token=');
    assert.equal(server.counters.refused, 6);
    assert.equal(server.counters.scrapes, 0, 'refusals are not scrapes');

    const byQuery = await scrape(url, {}, `?token=${encodeURIComponent('s3cret token')}`);
    assert.equal(byQuery.status, 200);
    // A token with a space cannot go as a Bearer token (RFC 6750 §2.1 b64token); this one has none.
    const { url: url2 } = await fullMonitor({ token: 'Zq8vXw4Ty6Rb1Nm0Lk2Jh_' });
    const byBearer = await scrape(url2, { headers: { Authorization: 'Bearer Zq8vXw4Ty6Rb1Nm0Lk2Jh_' } });
    assert.equal(byBearer.status, 200);
    assert.ok(parsePrometheusTextFormat(byBearer.text).some((f) => f.name === 'cogmesh_channel_workload_ratio'));
    // The page and the stream take the Bearer header too (one rule for every path).
    const page = await fetch(url2, { headers: { Authorization: 'Bearer Zq8vXw4Ty6Rb1Nm0Lk2Jh_' } });
    assert.equal(page.status, 200);
  });

  test('HEAD answers with the headers only; a router that cannot be read gives 500', async () => {
    const { view, url, server } = await fullMonitor({}, 0, {});
    const head = await fetch(new URL('/metrics', url), { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    view.status = () => {
      throw new Error('router gone');
    };
    assert.equal((await scrape(url)).status, 500);
    assert.equal(server.counters.scrapeErrors, 1);
  });

  test('promtool check metrics accepts the scrape, when promtool is installed', async (t) => {
    const probe = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) {
      t.skip('promtool is not installed');
      return;
    }
    const { url } = await fullMonitor();
    const text = (await scrape(url)).text;
    const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    assert.equal(r.status, 0, `promtool: ${r.stdout}${r.stderr}`);
  });
});

interface GrafanaPanel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: Array<{ refId: string; expr: string; datasource?: { type: string; uid: string } }>;
}

describe('the Grafana dashboard (hw/grafana/cogmesh-dashboard.json)', () => {
  const dash = JSON.parse(readFileSync(new URL('../../hw/grafana/cogmesh-dashboard.json', import.meta.url), 'utf8')) as {
    __inputs: Array<{ name: string; type: string; pluginId: string }>;
    title: string;
    uid: string;
    schemaVersion: number;
    panels: GrafanaPanel[];
    templating: { list: Array<{ name: string; datasource: { uid: string }; query: { query: string } }> };
  };
  const DS = '${DS_PROMETHEUS}';

  test('imports cleanly: a Prometheus datasource input, every panel placed and on that datasource', () => {
    assert.deepEqual(
      dash.__inputs.map((i) => [i.name, i.type, i.pluginId]),
      [['DS_PROMETHEUS', 'datasource', 'prometheus']],
    );
    assert.equal(typeof dash.title, 'string');
    assert.match(dash.uid, /^[a-z0-9-]{1,40}$/);
    assert.equal(typeof dash.schemaVersion, 'number');
    assert.equal(new Set(dash.panels.map((p) => p.id)).size, dash.panels.length, 'panel ids are unique');
    for (const p of dash.panels) {
      for (const k of ['h', 'w', 'x', 'y'] as const) assert.equal(typeof p.gridPos[k], 'number', `${p.title}: gridPos.${k}`);
      assert.ok(p.gridPos.x + p.gridPos.w <= 24, `${p.title}: within the 24 columns`);
      if (p.type === 'row') continue;
      assert.equal(p.type, 'timeseries');
      assert.equal(p.datasource?.uid, DS, `${p.title}: the input's datasource`);
      assert.ok((p.targets ?? []).length > 0, `${p.title} has queries`);
      for (const t of p.targets ?? []) {
        assert.equal(t.datasource?.uid, DS, `${p.title} ${t.refId}`);
        assert.ok(t.expr.length > 0);
      }
    }
    assert.equal(dash.templating.list[0]?.datasource.uid, DS);
  });

  test('every query names only metrics /metrics exposes, and every area of the issue has a panel', async () => {
    const { url } = await fullMonitor();
    const exposed = new Set(parsePrometheusTextFormat((await scrape(url)).text).map((f) => f.name));
    const used = new Set<string>();
    const queries = [...dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)), ...dash.templating.list.map((v) => v.query.query)];
    for (const q of queries) {
      const names = q.match(/\bcogmesh_[a-z0-9_]+/g) ?? [];
      assert.ok(names.length > 0, `${q} reads a cogmesh metric`);
      for (const n of names) {
        assert.ok(exposed.has(n), `${q}: ${n} is not exposed by /metrics`);
        used.add(n);
      }
      if (/\brate\(|\bincrease\(/.test(q)) for (const n of names) assert.match(n, /_total$/, `${q}: rate() only over counters`);
    }
    for (const n of [
      'cogmesh_channel_workload_ratio',
      'cogmesh_channel_remaining_capacity_bytes_per_second',
      'cogmesh_channel_power_dbm',
      'cogmesh_r1_moves_total',
      'cogmesh_r2_switches_total',
      'cogmesh_queue_packets',
      'cogmesh_packets_dropped_total',
      'cogmesh_routes',
      'cogmesh_route_discoveries_total',
      'cogmesh_tcp_acc_sessions_total',
      'cogmesh_tcp_acc_bytes_total',
      'cogmesh_openflow_connections',
      'cogmesh_control_requests_total',
    ])
      assert.ok(used.has(n), `a panel shows ${n}`);
  });
});

test('docs/metrics.md lists every metric /metrics exposes, and no other', async () => {
  const doc = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');
  const listed = new Set([...doc.matchAll(/^\| `(cogmesh_[a-z0-9_]+)` \|/gm)].map((m) => m[1]!));
  const { url } = await fullMonitor();
  const exposed = new Set(parsePrometheusTextFormat((await scrape(url)).text).map((f) => f.name));
  assert.deepEqual(
    [...exposed].filter((n) => !listed.has(n)),
    [],
    'exposed but not documented',
  );
  assert.deepEqual(
    [...listed].filter((n) => !exposed.has(n)),
    [],
    'documented but not exposed',
  );
});
