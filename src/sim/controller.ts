import type { EventEngine } from '../core/engine.js';
import { US_PER_S, type Micros } from '../core/time.js';
import type { MeshRouter } from '../router/router.js';
import { OfAgent, type AgentSession } from '../openflow/agent.js';
import { CettController } from '../openflow/controller.js';
import { FlowTables } from '../openflow/pipeline.js';
import { FlowTableForwarder } from '../openflow/forwarder.js';
import { neighbourOfPort, PortTracker, type LinkPort } from '../openflow/ports.js';
import { linkPorts, meshSwitchState } from '../router/openflow.js';
import { parseFlow } from '../vnf/flow.js';
import type { VnfManager } from '../vnf/manager.js';
import { encodeOf, parseOf } from '../wire/openflow/index.js';
import { OFPP } from '../wire/openflow/actions.js';
import { flowDst, type Scenario } from '../config/scenario.js';
import { accParams } from '../config/scenario.js';

/**
 * seeds/000 Fig. 4 in virtual time: every router runs the OpenFlow agent the
 * daemon runs, with its flow table ahead of AODV; the CETT controller talks to
 * each over bytes (every message encoded and parsed, delivered as an engine
 * event) and places each scenario flow on its minimum-CETT path, with the
 * scenario's TCP-ACC on the path's relays (its experimenter message starts
 * them in the routers' VNF managers). Returns the controller, for reports.
 */
export function attachController(
  sc: Scenario,
  engine: EventEngine,
  routers: readonly MeshRouter[],
  managers: ReadonlyArray<VnfManager | undefined>,
): CettController<number> {
  const ctl = new CettController<number>({ hysteresis: sc.controller.hysteresis });
  const n = routers.length;
  const sessions: AgentSession[] = [];
  const agents: OfAgent[] = [];
  const trackers: PortTracker[] = [];
  const allTables: FlowTables[] = [];
  const allPorts: Array<() => LinkPort[]> = [];
  const deliverToAgent = (i: number, bytes: Uint8Array): void => {
    engine.at(engine.now(), (now) => agents[i]!.receive(sessions[i]!, bytes, now));
  };
  const deliverToController = (i: number, bytes: Uint8Array): void => {
    engine.at(engine.now(), (now) => {
      const m = parseOf(bytes);
      if (!m.ok) return;
      for (const out of ctl.receive(i, m.value, now)) deliverToAgent(out.to, encodeOf(out.msg));
    });
  };
  routers.forEach((r, i) => {
    const tables = new FlowTables(1);
    const forwarder = new FlowTableForwarder(tables, i);
    r.forwarder = forwarder;
    allTables[i] = tables;
    const cfg = r.config;
    const state = meshSwitchState(r);
    // The link ports carry the paths' RC; LOCAL stays as meshPorts gives it (the simulator's
    // controller places paths on links only, and these agents have always reported it so).
    const ports = () => linkPorts(state);
    allPorts[i] = ports;
    const mgr = managers[i];
    const placed = new Map<string, number>();
    const agent = new OfAgent({
      datapathId: (0x02n << 40n) | BigInt(i),
      tables,
      router: {
        ports,
        counters: (portNo) => {
          const nb = portNo === OFPP.LOCAL ? undefined : neighbourOfPort(portNo);
          return nb === undefined ? undefined : state.link(nb);
        },
        queues: state.queues,
      },
      node: { id: i, name: cfg.node.name },
      version: 'sim',
      startUs: engine.now(),
      ...(mgr
        ? {
            vnfs: {
              start: async (type: string, flow: string, params: unknown, ref: number) => {
                const key = `${type}/${ref}`;
                if (placed.has(key)) return;
                // The legs speak the flow's own TCP, as the simulator's static placement does; the
                // controller chose the relays, so each accelerator takes every connection it sees.
                const spec = sc.flows[ref - 1];
                const base = spec && spec.kind === 'tcp-bulk' ? accParams(sc, spec) : {};
                const p = { ...base, ...(params as Record<string, unknown>), everyHops: 1 };
                placed.set(key, mgr.instantiate(type, parseFlow(flow, '/flow'), p, engine.now()).id);
              },
              stop: async (type: string, ref: number) => {
                const id = placed.get(`${type}/${ref}`);
                placed.delete(`${type}/${ref}`);
                if (id !== undefined) mgr.terminate(id, engine.now());
              },
            },
          }
        : {}),
    });
    forwarder.onController = (p) => agent.packetIn(p);
    agent.onSend = (s) => {
      for (const b of agent.drain(s)) deliverToController(i, b);
    };
    agents[i] = agent;
    trackers[i] = new PortTracker(cfg.openflow.rcStepKbps);
    trackers[i]!.update(ports());
    sessions[i] = agent.open();
    for (const m of ctl.open(i)) deliverToAgent(i, encodeOf(m));
  });
  const period = sc.controller.statusPeriodMs * 1000;
  const tick = (now: Micros): void => {
    routers.forEach((r, i) => {
      if (r.isDown) return;
      agents[i]!.flowRemoved(allTables[i]!.tick(now));
      agents[i]!.portStatus(trackers[i]!.update(allPorts[i]!()));
    });
    engine.at(now + period, tick);
  };
  engine.at(engine.now() + period, tick);
  // The flows, from the start: a flow with no path yet waits (pending) for the routers' ports.
  const every = /^every(?:-(\d+))?$/.exec(sc.acc.placement);
  sc.flows.forEach((f, id) => {
    const dst = flowDst(f, n);
    const tcp = f.kind === 'tcp-bulk';
    const r = ctl.addFlow(
      {
        id: id + 1,
        proto: tcp ? 'tcp' : 'udp',
        srcAddr: f.src,
        dstAddr: dst,
        ...(tcp ? { dstPort: f.port } : {}),
        ...(f.label ? { label: f.label } : {}),
        ...(tcp && every ? { acc: { mode: sc.acc.mode, everyHops: every[1] ? Number(every[1]) : 1, bufferBytes: sc.acc.bufferBytes } } : {}),
      },
      engine.now(),
    );
    if (r.ok) for (const out of r.value.out) deliverToAgent(out.to, encodeOf(out.msg));
    // A flow that stops ends at the controller too: its entries go and its TCP-ACCs stop.
    if (r.ok && f.stopS > 0 && f.stopS < sc.durationS) {
      engine.at(Math.round(f.stopS * US_PER_S), (now) => {
        const gone = ctl.removeFlow(id + 1, now);
        if (gone.ok) for (const out of gone.value) deliverToAgent(out.to, encodeOf(out.msg));
      });
    }
  });
  return ctl;
}
