import { Counter, Gauge, Registry } from 'prom-client';
import type { RouterStatus, RouterView } from '../router/view.js';
import type { VnfInfo } from '../vnf/types.js';

/** What the control API server counts (src/control/server.ts), as the metrics read it. */
export interface ControlMetricsSource {
  readonly counters: Readonly<Record<string, number>>;
  /** Requests per command, then per result (`ok`, or the error counter's name). */
  readonly requestsByCommand: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

/** What the OpenFlow agent and its socket side count, at the moment of a scrape. */
export interface OpenFlowMetricsSource {
  /** Controller connections open now. */
  sessions: number;
  /** The agent's counters (connections, messages, flowMods, packetIns, ...). */
  agent: Readonly<Record<string, number>>;
  /** The socket side's (accepted, tlsRefused, framingErrors, connects, connectFailures). */
  transport: Readonly<Record<string, number>>;
}

/** The parts of a router beyond its view that the metrics read, each when it runs. */
export interface MetricsSources {
  /** The product's version, for cogmesh_build_info. */
  version?: string;
  control?: ControlMetricsSource;
  /** Read at each scrape: the agent starts after the router, and may not run at all (undefined). */
  openflow?: () => OpenFlowMetricsSource | undefined;
  /** The monitor's own counters. */
  monitor?: () => { clients: number; refused: number; scrapes: number };
}

/** One scrape's reading of the router: every metric is set from the same moment. */
interface Snapshot {
  status: RouterStatus;
  view: RouterView;
  openflow: OpenFlowMetricsSource | undefined;
}

type Labels = Record<string, string | number>;
/** A metric's series at one scrape: its labels and value. */
type Series = Array<[Labels, number]>;

/** The AODV counters shown as cogmesh_route_discoveries_total{result}. */
const DISCOVERY_RESULTS: ReadonlyArray<[string, string]> = [
  ['discoveriesStarted', 'started'],
  ['discoveriesFound', 'found'],
  ['discoveriesFailed', 'failed'],
];

/**
 * The router's figures in the Prometheus text format (docs/metrics.md), for
 * `GET /metrics` on the monitor. A registry of its own (never prom-client's
 * global one: two routers in one process must not share series), whose
 * metrics are set from the router's view by collect callbacks when a scrape
 * comes: nothing runs and nothing is kept between scrapes. Totals the router
 * keeps are shown as counters (they only go up while it runs); values that
 * go down (w, queue lengths, routes) as gauges. A figure the router does not
 * keep (an R1 move count on a sensing-only node, a control API that is off)
 * is left out rather than shown as zero.
 */
export class RouterMetrics {
  readonly registry = new Registry();
  private snap: Snapshot | undefined;

  constructor(
    private readonly view: RouterView,
    private readonly sources: MetricsSources = {},
  ) {
    this.registry.setDefaultLabels({ node: view.name });
    this.define();
  }

  /** The `Content-Type` of a scrape's body. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric, read from the router now, in the text format. */
  async scrape(): Promise<string> {
    this.snap = { status: this.view.status(), view: this.view, openflow: this.sources.openflow?.() };
    try {
      return await this.registry.metrics();
    } finally {
      this.snap = undefined;
    }
  }

  /** The scrape's reading; a registry read some other way reads the router afresh. */
  private now(): Snapshot {
    return this.snap ?? { status: this.view.status(), view: this.view, openflow: this.sources.openflow?.() };
  }

  private gauge(name: string, help: string, labelNames: string[], read: (s: Snapshot) => Series): void {
    this.metric('gauge', name, help, labelNames, read);
  }

  /** A counter set from a total the router keeps: reset, then the total added (prom-client's counters have no set). */
  private counter(name: string, help: string, labelNames: string[], read: (s: Snapshot) => Series): void {
    this.metric('counter', name, help, labelNames, read);
  }

  /** A metric whose series are set at each scrape from `read`, and only then. */
  private metric(kind: 'gauge' | 'counter', name: string, help: string, labelNames: string[], read: (s: Snapshot) => Series): void {
    const now = (): Snapshot => this.now();
    const config = { name, help, labelNames, registers: [this.registry] };
    if (kind === 'gauge') {
      new Gauge({
        ...config,
        collect() {
          this.reset();
          for (const [labels, v] of read(now())) this.set(labels, v);
        },
      });
    } else {
      new Counter({
        ...config,
        collect() {
          this.reset();
          for (const [labels, v] of read(now())) if (v >= 0) this.inc(labels, v);
        },
      });
    }
  }

  private define(): void {
    const { control, monitor } = this.sources;
    const version = this.sources.version ?? 'unknown';
    this.gauge('cogmesh_build_info', 'Always 1: the version of cogmesh this router runs, and its Node.js', ['version', 'nodejs'], () => [
      [{ version, nodejs: process.versions.node }, 1],
    ]);
    this.gauge('cogmesh_uptime_seconds', 'Seconds since the router started', [], (s) => [[{}, s.status.uptimeS]]);
    this.gauge('cogmesh_node_id', "The router's mesh address (node.id)", [], (s) => [[{}, s.status.node.id]]);
    this.counter(
      'cogmesh_log_dropped_lines_total',
      "Log lines dropped: the log's reader went away or fell behind (absent when the log is written synchronously)",
      [],
      (s) => (s.status.log === undefined ? [] : [[{}, s.status.log.dropped]]),
    );

    // Spectrum: the latest sensing round.
    const channels = (s: Snapshot): NonNullable<ReturnType<RouterView['spectrum']>>['channels'] => s.view.spectrum()?.channels ?? [];
    this.gauge('cogmesh_channel_workload_ratio', "Merged workload w of a channel (own and neighbours'), 0-1, at the latest sensing round", ['channel'], (s) =>
      channels(s).map((c) => [{ channel: c.channel }, c.w]),
    );
    this.gauge('cogmesh_channel_own_workload_ratio', "This router's own workload w of a channel, 0-1 (absent when it did not sense it)", ['channel'], (s) =>
      channels(s).flatMap((c): Series => (c.ownW === undefined ? [] : [[{ channel: c.channel }, c.ownW]])),
    );
    this.gauge(
      'cogmesh_channel_remaining_capacity_bytes_per_second',
      'Remaining capacity RC = (1 - w) * C of a channel, in bytes per second (RC in bit/s divided by 8)',
      ['channel'],
      (s) => channels(s).map((c) => [{ channel: c.channel }, c.rcBps / 8]),
    );
    this.gauge('cogmesh_channel_power_dbm', 'Mean power the energy detector measured on a channel, dBm (absent when not visited)', ['channel'], (s) =>
      channels(s).flatMap((c): Series => (c.powerDbm === undefined ? [] : [[{ channel: c.channel }, c.powerDbm]])),
    );
    this.counter('cogmesh_sensing_rounds_total', 'Sensing rounds completed', [], (s) => [[{}, s.status.sensing.rounds]]);

    // The radios and their channel decisions.
    this.gauge('cogmesh_radio_channel', 'The channel a radio is on (R1: receive, R2: switching, R3: control); absent while it has none', ['radio'], (s) => {
      const out: Series = [];
      if (s.status.r1.channel !== undefined) out.push([{ radio: 'R1' }, s.status.r1.channel]);
      if (s.status.r2.channel !== undefined) out.push([{ radio: 'R2' }, s.status.r2.channel]);
      out.push([{ radio: 'R3' }, s.status.r3.channel]);
      return out;
    });
    this.counter('cogmesh_r1_moves_total', 'R1 retunes to a new channel (the first tune included)', [], (s) =>
      s.status.r1.moves === undefined ? [] : [[{}, s.status.r1.moves]],
    );
    this.counter('cogmesh_r2_switches_total', 'R2 channel switches', [], (s) => [[{}, s.status.r2.switches]]);

    // Queues and drops.
    this.gauge('cogmesh_queue_packets', "Packets waiting in a QoS queue of a channel's R2 queue", ['channel', 'queue', 'class'], (s) =>
      s.view.queues().flatMap((q) => q.classes.map((c): [Labels, number] => [{ channel: q.channel, queue: c.queue, class: c.name }, c.packets])),
    );
    this.gauge('cogmesh_queue_bytes', "Bytes waiting in a QoS queue of a channel's R2 queue", ['channel', 'queue', 'class'], (s) =>
      s.view.queues().flatMap((q) => q.classes.map((c): [Labels, number] => [{ channel: q.channel, queue: c.queue, class: c.name }, c.bytes])),
    );
    // The gateway role (absent when it is off).
    const gwClients = (s: Snapshot) => s.view.gateway?.()?.clients ?? [];
    this.gauge('cogmesh_gateway_queue_bytes', "Bytes waiting in a gateway client's virtual queue", ['client'], (s) =>
      gwClients(s).map((c) => [{ client: c.id }, c.queueBytes]),
    );
    this.gauge('cogmesh_gateway_rate_mbps', "A gateway client's service rate v_j during its slices, Mbps (0: line rate)", ['client'], (s) =>
      gwClients(s).map((c) => [{ client: c.id }, c.rateMbps]),
    );
    this.gauge('cogmesh_gateway_share_ratio', "A gateway client's share of the frame, 0-1", ['client'], (s) =>
      gwClients(s).map((c) => [{ client: c.id }, c.share]),
    );
    this.counter(
      'cogmesh_gateway_packets_total',
      'Packets for a gateway client: queued, sent on into the mesh, or dropped (queue full)',
      ['client', 'outcome'],
      (s) =>
        gwClients(s).flatMap((c): Series => [
          [{ client: c.id, outcome: 'queued' }, c.enqueued],
          [{ client: c.id, outcome: 'sent' }, c.sent],
          [{ client: c.id, outcome: 'dropped' }, c.dropped],
        ]),
    );
    this.counter('cogmesh_packets_dropped_total', 'Data packets the router dropped, by reason', ['reason'], (s) =>
      Object.entries(s.status.drops).map(([reason, v]) => [{ reason }, v]),
    );
    this.counter(
      'cogmesh_router_events_total',
      "The router's own counters (packets originated, delivered, forwarded, rerouted, ...), by name",
      ['event'],
      (s) => Object.entries(s.status.counters).map(([event, v]) => [{ event }, v]),
    );

    // Routing.
    this.gauge('cogmesh_neighbours', 'Neighbours heard from and not yet lost', [], (s) => [[{}, s.view.neighbours().length]]);
    this.gauge('cogmesh_routes', 'Routes in the routing table, by state', ['state'], (s) => {
      const by = new Map<string, number>();
      for (const r of s.view.routes()) by.set(r.state, (by.get(r.state) ?? 0) + 1);
      return [...by].map(([state, n]) => [{ state }, n]);
    });
    this.gauge('cogmesh_route_paths', 'Paths known to a destination (multipath AODV)', ['dst'], (s) =>
      s.view.routes().map((r) => [{ dst: r.dst }, r.paths.length]),
    );
    this.counter('cogmesh_route_discoveries_total', 'Route discoveries started, and those that found a route or gave up', ['result'], (s) => {
      const r = s.status.routing;
      return r === undefined ? [] : DISCOVERY_RESULTS.flatMap(([k, result]): Series => (r[k] === undefined ? [] : [[{ result }, r[k]]]));
    });

    // TCP-ACC instances (running and ended, each its own series).
    const accs = (s: Snapshot): VnfInfo[] => s.view.vnfs().filter((v) => v.type === 'tcp-acc');
    const accCounter = (v: VnfInfo, k: string): Series => {
      const n = v.counters[k];
      return n === undefined ? [] : [[{ vnf: v.id }, n]];
    };
    this.gauge('cogmesh_vnfs', 'VNF instances by type and state', ['type', 'state'], (s) => {
      const by = new Map<string, [Labels, number]>();
      for (const v of s.view.vnfs()) {
        const key = `${v.type}\0${v.state}`;
        const e = by.get(key) ?? [{ type: v.type, state: v.state }, 0];
        e[1]++;
        by.set(key, e);
      }
      return [...by.values()];
    });
    this.counter('cogmesh_tcp_acc_sessions_total', 'TCP connections a TCP-ACC instance split', ['vnf'], (s) =>
      accs(s).flatMap((v) => accCounter(v, 'sessions')),
    );
    this.gauge('cogmesh_tcp_acc_active_sessions', 'TCP connections a TCP-ACC instance holds now', ['vnf'], (s) =>
      accs(s).flatMap((v) => accCounter(v, 'activeSessions')),
    );
    this.counter('cogmesh_tcp_acc_sessions_ended_total', 'TCP-ACC sessions ended, closed or reset', ['vnf', 'how'], (s) =>
      accs(s).flatMap((v) => [
        ...accCounter(v, 'sessionsClosed').map(([l, n]): [Labels, number] => [{ ...l, how: 'closed' }, n]),
        ...accCounter(v, 'sessionsReset').map(([l, n]): [Labels, number] => [{ ...l, how: 'reset' }, n]),
      ]),
    );
    this.counter(
      'cogmesh_tcp_acc_bytes_total',
      'Payload bytes a TCP-ACC instance relayed, by direction (up: from the client towards the server; down: back)',
      ['vnf', 'direction'],
      (s) =>
        accs(s).flatMap((v) => [
          ...accCounter(v, 'bytesUp').map(([l, n]): [Labels, number] => [{ ...l, direction: 'up' }, n]),
          ...accCounter(v, 'bytesDown').map(([l, n]): [Labels, number] => [{ ...l, direction: 'down' }, n]),
        ]),
    );

    // OpenFlow.
    if (this.sources.openflow) {
      this.gauge('cogmesh_openflow_connections', 'OpenFlow controller connections open now', [], (s) => (s.openflow ? [[{}, s.openflow.sessions]] : []));
      this.counter('cogmesh_openflow_connections_total', 'OpenFlow controller connections opened', [], (s) =>
        s.openflow?.agent.connections === undefined ? [] : [[{}, s.openflow.agent.connections]],
      );
      this.counter('cogmesh_openflow_messages_total', 'OpenFlow messages by kind (received, flowMods, packetOuts, packetIns, errorsSent, ...)', ['kind'], (s) =>
        Object.entries(s.openflow?.agent ?? {})
          .filter(([k]) => k !== 'connections')
          .map(([kind, v]) => [{ kind: kind === 'messages' ? 'received' : kind }, v]),
      );
      this.counter(
        'cogmesh_openflow_transport_events_total',
        'OpenFlow socket events (accepted, tlsRefused, framingErrors, connects, connectFailures)',
        ['event'],
        (s) => Object.entries(s.openflow?.transport ?? {}).map(([event, v]) => [{ event }, v]),
      );
    }

    // The control API.
    if (control) {
      this.counter('cogmesh_control_requests_total', 'Control API requests by command and result (ok, or the kind of error)', ['cmd', 'result'], () =>
        [...control.requestsByCommand].flatMap(([cmd, m]) => [...m].map(([result, n]): [Labels, number] => [{ cmd, result }, n])),
      );
      this.counter('cogmesh_control_telemetry_messages_total', 'Telemetry messages published, or dropped behind a slow PUB socket', ['result'], () => [
        [{ result: 'sent' }, control.counters.telemetrySent ?? 0],
        [{ result: 'dropped' }, control.counters.telemetryDropped ?? 0],
      ]);
    }

    // The monitor itself.
    if (monitor) {
      this.gauge('cogmesh_monitor_clients', 'Monitor stream clients connected now', [], () => [[{}, monitor().clients]]);
      this.counter('cogmesh_monitor_refused_total', 'Monitor requests refused (no or a wrong token, a foreign Origin, an unknown path)', [], () => [
        [{}, monitor().refused],
      ]);
      this.counter('cogmesh_monitor_scrapes_total', 'Scrapes of /metrics served', [], () => [[{}, monitor().scrapes]]);
    }
    this.counter(
      'cogmesh_monitor_psd_visits_total',
      "Sensing visits by what the monitor's PSD did with them: estimated, or skipped (rate, busy: estimates still waiting, short: under one segment)",
      ['result'],
      (s) => {
        const c = s.view.psdCounters?.();
        if (!c) return [];
        return [
          [{ result: 'estimated' }, c.estimates],
          [{ result: 'rate' }, c.skippedRate],
          [{ result: 'busy' }, c.skippedBusy],
          [{ result: 'short' }, c.tooShort],
        ];
      },
    );
  }
}
