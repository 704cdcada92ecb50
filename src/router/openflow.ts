import type { AgentQueue, AgentRouter, PortCounters } from '../openflow/agent.js';
import { meshPorts, neighbourOfPort, type LinkPort } from '../openflow/ports.js';
import { OFPP } from '../wire/openflow/actions.js';
import type { MeshRouter } from './router.js';

/**
 * A router as its OpenFlow agent sees it (seeds/000 Fig. 4). The flow
 * table's decisions are carried out by the data plane (forwarding.ts); this
 * is the other way round, what the agent reads: the live neighbour links
 * with the merged w of their R1 channels, the counters per link and per QoS
 * queue, the queues themselves. The daemon serves it over TCP
 * (src/daemon/openflow.ts), the simulator over engine events
 * (src/sim/controller.ts).
 */
export interface SwitchState {
  node: { id: number; name: string };
  neighbours(): Array<{ addr: number; r1Channel: number }>;
  /** Merged w per channel from the latest sensing round. */
  w(): ReadonlyMap<number, number>;
  r1Channel(): number | undefined;
  capacityKbps(): number;
  link(addr: number): PortCounters | undefined;
  /** What this router itself received and originated. */
  local(): PortCounters;
  /** The QoS queues of every link port (the router's classes, best effort among them). */
  queues(): AgentQueue[];
}

/** A mesh router's switch state. */
export function meshSwitchState(r: MeshRouter): SwitchState {
  return {
    node: { id: r.addr, name: r.config.node.name },
    neighbours: () => r.neighbourChannels(),
    w: () => new Map((r.core.latestRound?.channels ?? []).map((c) => [c.channel, c.w])),
    r1Channel: () => r.core.r1,
    capacityKbps: () => Math.round(r.config.channel.capacityMbps * 1000),
    link: (addr) => r.links.get(addr),
    local: () => ({ rxPackets: r.counters.delivered, rxBytes: 0, txPackets: r.counters.originated, txBytes: 0, txDropped: 0 }),
    queues: () => r.qosQueues(),
  };
}

/** A port per live neighbour link, whose speed is the link's RC (`meshPorts`), and LOCAL first. */
export function linkPorts(s: SwitchState, w: ReadonlyMap<number, number> = s.w()): LinkPort[] {
  return meshPorts({ node: s.node.id, name: s.node.name, neighbours: s.neighbours(), w, capacityKbps: s.capacityKbps() });
}

/**
 * What the agent reads of the switch: the link ports, and LOCAL carrying
 * what this router can receive (RC on its own R1 channel); each port's
 * counters; the QoS queues.
 */
export function agentRouterOf(s: SwitchState): AgentRouter {
  return {
    ports: () => {
      const w = s.w();
      const all = linkPorts(s, w);
      const r1 = s.r1Channel();
      const local = all[0];
      if (r1 !== undefined && local) all[0] = { ...local, channel: r1, rcKbps: Math.round((1 - Math.min(1, Math.max(0, w.get(r1) ?? 0))) * s.capacityKbps()) };
      return all;
    },
    counters: (portNo) => {
      if (portNo === OFPP.LOCAL) return s.local();
      const n = neighbourOfPort(portNo);
      return n === undefined ? undefined : s.link(n);
    },
    queues: () => s.queues(),
  };
}
