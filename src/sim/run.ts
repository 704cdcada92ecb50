import { ism2g4 } from '../../radio/channels.js';
import { AirMedium, CaptureHost, captureRadio } from '../../radio/medium/index.js';
import { EmulatedBand } from '../../radio/sim/band.js';
import { EventEngine } from '../core/engine.js';
import { Rng } from '../core/rng.js';
import { isObject } from '../core/schema.js';
import { seconds, US_PER_MS, US_PER_S, type Micros } from '../core/time.js';
import { cpuBackend, type EnergyBackend } from '../sensing/energy.js';
import { EnergyDetector } from '../sensing/detector.js';
import { CbrSource, FlowSink, runCbr, type FlowRecord } from '../traffic/cbr.js';
import { MeshRouter, type RouterEvent } from '../router/router.js';
import type { RouterDrop } from '../router/forwarding.js';
import type { DataHeader, NodeAddr } from '../wire/mesh.js';
import { accFlow, accParams, airOf, bandConfig, flowDst, nodeCount, placeNodes, routerConfig, type FlowSpec, type Scenario } from '../config/scenario.js';
import { flowResult, nodeResult, tcpFlowResult, type RunResult } from './report.js';
import { BulkTcp, type TcpFlowRecord } from '../traffic/bulk-tcp.js';
import { attachController } from './controller.js';
import { VnfManager } from '../vnf/manager.js';
import { VNF_TYPES } from '../vnf/index.js';
import { TcpAcc } from '../vnf/tcp-acc.js';
import { RangeArgumentError } from '../core/errors.js';
import type { RunTrace } from './trace.js';
import { WiredHosts } from './wired-hosts.js';
import { keysFromSeed, R3Auth } from '../wire/r3-auth.js';

export interface RunOptions {
  /** Energy-detector backend (every backend gives the same counts; default the CPU loop). */
  backend?: EnergyBackend;
  /** Period of the queue-length samples behind the per-node queue statistics. */
  queueSampleUs?: Micros;
  /** Every event of router i (sensing rounds with their w, R1 moves...), for studies beyond the report. */
  onRouterEvent?: (router: number, e: RouterEvent) => void;
  /**
   * A per-leg TCP trace of the run (trace.ts): the run's TCP ends, TCP-ACCs
   * and R2s report to it. Its interval must be a multiple of the queue
   * sampling period, whose events also take its samples (so a trace adds no
   * event, and the result is the same with and without it).
   */
  trace?: RunTrace;
  /**
   * Called once the routers exist, before the run: a test puts its own
   * stations on the medium (a rogue sender) and schedules what they do.
   */
  attach?: (run: { engine: EventEngine; medium: AirMedium; routers: readonly MeshRouter[] }) => void;
  /**
   * Captures every router's radios in pcapng (docs/pcap.md): `sink(i)` takes
   * router i's bytes, in order. Timestamps are the virtual time from
   * 1970-01-01; the signal is the power the medium computes between the two
   * routers. The capture only watches, so the result is the same without it.
   */
  capture?: { sink(router: number): (bytes: Uint8Array) => void };
  /**
   * Called with the virtual time at each whole simulated second the run
   * reaches, for a progress display. The queue sampling's events call it, so
   * it adds no event, and the result is the same without it.
   */
  progress?: (simulatedUs: Micros) => void;
}

/** A VNF manager on each router that runs TCP-ACC under the scenario's placement (undefined elsewhere). */
function accManagers(sc: Scenario, n: number, seed: number): Array<VnfManager | undefined> {
  const p = sc.acc.placement;
  if (p === 'none') return Array.from({ length: n }, () => undefined);
  const on = new Set(p === 'nodes' ? sc.acc.nodes : Array.from({ length: n }, (_, i) => i));
  return Array.from({ length: n }, (_, i) => (on.has(i) ? new VnfManager(VNF_TYPES, (seed * 1000003 + i) >>> 0) : undefined));
}

/**
 * Whether any router's energy detector sums IQ samples in a run of `sc`: a
 * router senses (channel.cognitive, true unless the shared node section or
 * its own override says false) and the sensing model is iq. Only then does
 * the detector's backend matter (every backend gives the same counts).
 */
export function sumsIq(sc: Scenario): boolean {
  if (sc.sensing.model !== 'iq') return false;
  const cognitive = (o: Record<string, unknown>): unknown => (isObject(o.channel) ? o.channel.cognitive : undefined);
  const shared = cognitive(sc.node) ?? true;
  return shared !== false || Object.values(sc.nodeOverrides).some((o) => cognitive(o) === true);
}

/**
 * Runs one seed of a scenario: every router in one process on one event
 * engine, in virtual time. Nothing here reads a clock or Math.random, so the
 * same scenario and seed give the same result, to the byte.
 */
export function runScenario(sc: Scenario, seed: number, opts: RunOptions = {}): RunResult {
  const engine = new EventEngine(0);
  const rng = Rng.fromSeed(seed);
  const n = nodeCount(sc.topology);
  const configs = Array.from({ length: n }, (_, i) => routerConfig(sc, i, seed));
  // Without adjacent-channel interference every part (band, medium, channel decisions) sees orthogonal channels.
  const fullPlan = ism2g4(configs[0]!.channelPlan.channels);
  const plan = sc.medium.adjacentChannelInterference ? fullPlan : fullPlan.asOrthogonal();
  const durationUs = seconds(sc.durationS);
  // The medium reads PN bursts ahead of the sensing radios; the band keeps the whole run so either may ask.
  const band = new EmulatedBand(plan, bandConfig(sc, plan.channels.length), rng.fork('band'), { startUs: 0, historyUs: durationUs + seconds(60) });
  const m = sc.medium;
  const air = airOf(sc);
  const medium = new AirMedium({ scheduler: engine, plan, rng: rng.fork('medium'), pn: band }, air.params, air.phy);
  const positions = placeNodes(sc.topology, m.txRangeM, seed);
  const host = opts.capture
    ? new CaptureHost(medium, {
        now: () => engine.now(),
        epochUs: 0,
        ...captureRadio(air.phy, plan),
        // Router i has mesh address i.
        signalDbm: (spec, src, ch) => {
          const from = positions[src];
          return from ? 10 * Math.log10(medium.receivedPowerW(from, spec.position, ch)) + 30 : undefined;
        },
        sink: (node) => opts.capture!.sink(node),
      })
    : medium;
  const trace = opts.trace;
  const sampleUs = opts.queueSampleUs ?? 10 * US_PER_MS;
  if (trace && trace.intervalUs % sampleUs !== 0) throw new RangeArgumentError('trace interval', trace.intervalUs, `a multiple of ${sampleUs} us`);

  const flowEnd = (f: FlowSpec): Micros => (f.stopS > 0 ? Math.min(seconds(f.stopS), durationUs) : durationUs);
  const udpFlows = new Map<number, FlowRecord>();
  sc.flows.forEach((f, i) => {
    if (f.kind !== 'udp-cbr') return;
    udpFlows.set(i, {
      flow: i,
      src: f.src,
      dst: flowDst(f, n),
      kind: f.kind,
      offeredMbps: f.rateMbps,
      startUs: seconds(f.startS),
      endUs: flowEnd(f),
      sent: 0,
      received: 0,
      duplicates: 0,
      receivedBytes: 0,
      delaysUs: [],
    });
  });
  const sinks = new Map([...udpFlows.values()].map((r) => [r.flow, new FlowSink(r)]));
  // Routers exist before the TCP hosts send through them; the hosts reach them through this array.
  const routers: MeshRouter[] = [];
  // Hosts behind wired links (nodes n and up), when the scenario has any.
  const wired =
    sc.hosts.length > 0
      ? new WiredHosts(sc.hosts, n, {
          engine,
          routers,
          deliver: (host, h, payload, now) => deliver(host, h, payload, now),
          dropped: (h, reason) => dropped(h, reason),
        })
      : undefined;
  // With the controller, every router may be asked to run an accelerator (it picks the path's relays).
  const vnfs = sc.controller.enabled
    ? Array.from({ length: n }, (_, i) => (sc.acc.placement === 'none' ? undefined : new VnfManager(VNF_TYPES, (seed * 1000003 + i) >>> 0)))
    : accManagers(sc, n, seed);
  // A TCP checksum guards bytes against a link that damages them; the medium
  // and the wired links deliver a frame's bytes as they were sent or not at
  // all. So unless the scenario asks for them always, the hosts leave their
  // checksums out (0, unverified: a host whose network card offloads them, and
  // ns-3's default) when only the run's own TCP ends write and read the
  // segments: not when a capture shows them, a TCP-ACC parses and remakes
  // them, the controller may be handed them, or a test puts its own stations
  // on the medium. Nothing in the result depends on it.
  const checksums =
    sc.checksums.tcp === 'always' || opts.capture !== undefined || opts.attach !== undefined || sc.controller.enabled || vnfs.some((m) => m !== undefined);
  const tcp: BulkTcp = new BulkTcp({
    engine,
    rng: rng.fork('tcp'),
    checksums,
    // A TCP flow's id is its index in the scenario; both directions carry its label.
    originate: (from, to, flow, seq, bytes, now, room) => {
      const label = sc.flows[flow]?.label ?? 0;
      if (from >= n) wired!.send(from, to, 'tcp', flow, bytes, now, label);
      else routers[from]!.originate(to, 'tcp', flow, seq, bytes, now, { label, room });
    },
    ...(trace ? { observer: trace.bulk((): TcpFlowRecord[] => tcp.records()) } : {}),
  });
  trace?.begin({
    scenario: sc.name,
    seed,
    durationUs,
    flows: sc.flows.flatMap((f, i) =>
      f.kind === 'tcp-bulk' ? [{ flow: i, src: f.src, dst: flowDst(f, n), variant: f.variant, startUs: seconds(f.startS), endUs: flowEnd(f) }] : [],
    ),
  });
  const deliver = (at: NodeAddr, h: DataHeader, payload: Uint8Array, now: Micros): void => {
    if (h.proto === 'tcp') tcp.deliver(at, h, payload, now);
    else sinks.get(h.flow)?.receive(h, payload, now);
  };
  const dropped = (h: DataHeader, reason: RouterDrop): void => {
    if (h.proto === 'tcp') tcp.dropped(h, reason);
  };

  const boot = rng.fork('boot');
  // Every router holds the same two keys, made from the seed; each boots at time 0, its index.
  const keys = sc.auth.enabled ? keysFromSeed(seed) : undefined;
  if (trace)
    vnfs.forEach((m, i) =>
      m?.watch((vnf) => {
        if (vnf instanceof TcpAcc) vnf.observe(trace.acc(i));
      }),
    );
  configs.forEach((cfg, i) => {
    const detector = new EnergyDetector(cfg.sensing, opts.backend ?? cpuBackend);
    // Routers do not boot in step: each starts its sensing rounds at its own offset.
    const startUs = boot.int(0, cfg.sensing.periodMs * US_PER_MS - 1);
    routers[i] = new MeshRouter(cfg, {
      engine,
      medium: host,
      band,
      plan,
      detector,
      sensingModel: sc.sensing.model,
      rng: rng.fork(`router/${i}`),
      position: { xM: positions[i]!.xM, yM: positions[i]!.yM },
      controlChannelPn: m.controlChannelPn,
      startUs,
      deliver: (h, payload, now) => deliver(i, h, payload, now),
      onDrop: dropped,
      ...(wired
        ? { hostRoutes: wired.routes, toWire: (h: DataHeader, payload: Uint8Array, bytes: number, now: Micros) => wired.toWire(h, payload, bytes, now) }
        : {}),
      ...(vnfs[i] ? { vnf: vnfs[i] } : {}),
      ...(opts.onRouterEvent ? { onEvent: (e: RouterEvent) => opts.onRouterEvent!(i, e) } : {}),
      ...(trace ? { r2Observer: trace.r2(i) } : {}),
      ...(keys ? { auth: new R3Auth(keys, 0) } : {}),
      impairments: sc.impairments
        .filter((m) => m.to === i)
        .map((m) => ({
          from: m.from,
          lossProbability: m.lossProbability,
          reorderProbability: m.reorderProbability,
          reorderDelayUs: Math.round(m.reorderDelayMs * US_PER_MS),
        })),
    });
  });

  const tcpFlows = new Map<number, TcpFlowRecord>();
  for (const [i, f] of sc.flows.entries()) {
    if (f.kind === 'tcp-bulk') {
      tcpFlows.set(i, tcp.addFlow(i, f, f.src, flowDst(f, n), seconds(f.startS), flowEnd(f)));
      if (!sc.controller.enabled) for (const m of vnfs) m?.instantiate('tcp-acc', accFlow(f, flowDst(f, n)), accParams(sc, f), 0);
      continue;
    }
    const rec = udpFlows.get(i)!;
    const router = routers[f.src];
    const src = new CbrSource(rec, f.packetBytes, (flow, seq, payload, now) =>
      router ? router.originate(rec.dst, 'udp', flow, seq, payload, now, { label: f.label }) : wired!.send(f.src, rec.dst, 'udp', flow, payload, now, f.label),
    );
    if (rec.startUs < rec.endUs) runCbr(engine, src, rec.startUs);
  }

  if (sc.controller.enabled) attachController(sc, engine, routers, vnfs);
  opts.attach?.({ engine, medium, routers });

  for (const e of sc.events) {
    const router = routers[e.node]!;
    engine.at(seconds(e.atS), (now) => router.fail(now));
  }

  const progress = opts.progress;
  let reportedS = 0;
  const sample = (): void => {
    for (const r of routers) r.sampleQueues();
    tcp.sampleCwnd(engine.now());
    trace?.sample(engine.now());
    if (progress && Math.floor(engine.now() / US_PER_S) > reportedS) {
      reportedS = Math.floor(engine.now() / US_PER_S);
      progress(engine.now());
    }
    if (engine.now() + sampleUs <= durationUs) engine.after(sampleUs, sample);
  };
  engine.at(0, sample);

  engine.run(durationUs);

  return {
    seed,
    durationS: sc.durationS,
    events: engine.eventsFired,
    flows: sc.flows.map((_, i) => {
      const t = tcpFlows.get(i);
      return t ? tcpFlowResult(t) : flowResult(udpFlows.get(i)!);
    }),
    nodes: routers.map((r, i) => nodeResult(r, positions[i]!)),
    ...(wired ? { hosts: wired.counters() } : {}),
  };
}
