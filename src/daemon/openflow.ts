import type { NodeConfig } from '../config/types.js';
import type { Micros } from '../core/time.js';
import type { Logger } from '../core/log.js';
import { OfAgent, type AgentVnfs } from '../openflow/agent.js';
import { FlowTables } from '../openflow/pipeline.js';
import { FlowTableForwarder } from '../openflow/forwarder.js';
import { PortTracker } from '../openflow/ports.js';
import { agentRouterOf, type SwitchState } from '../router/openflow.js';
import { OfTransport } from './of-transport.js';
import { parseActiveEndpoint, parsePassiveEndpoint, type OfEndpoint } from '../openflow/endpoint.js';
import { ConfigError } from '../core/errors.js';
import { loadOfTls } from './of-tls.js';

/** What the OpenFlow side reads of a running router, and how it enters the router's time. */
export interface OpenFlowRouter extends SwitchState {
  now(): Micros;
  /** Runs work at the router's time (the daemon: through its paced engine). */
  enter(fn: (now: Micros) => void): void;
}

/** The router's OpenFlow side: its flow table (with the forwarder that puts it ahead of AODV), the agent and its transport. */
export interface OpenFlowSide {
  tables: FlowTables;
  forwarder: FlowTableForwarder;
  agent: OfAgent;
  /** Its socket side: counters of connections, TLS refusals and dials. */
  transport: OfTransport;
  /** Where it listens or what it connects to, as an endpoint (pssl:6634:127.0.0.1, ssl:10.0.0.254:6653, ...). */
  address: string;
  stop(): Promise<void>;
}

/** A datapath id from the node id when the configuration gives none: 00:00:02:00:00:00:hi:lo. */
export function datapathIdOf(cfg: NodeConfig): bigint {
  return cfg.openflow.datapathId !== 0 ? BigInt(cfg.openflow.datapathId) : (0x02n << 40n) | BigInt(cfg.node.id);
}

/** The endpoint openflow.mode uses (listen or controller), as the loader checked it. */
function agentEndpoint(cfg: NodeConfig): OfEndpoint {
  const o = cfg.openflow;
  const [field, text] = o.mode === 'active' ? (['controller', o.controller] as const) : (['listen', o.listen] as const);
  const ep = o.mode === 'active' ? parseActiveEndpoint(text) : parsePassiveEndpoint(text);
  if (!ep.ok) throw new ConfigError([{ path: `/openflow/${field}`, value: text, expected: ep.error }]);
  return ep.value;
}

/**
 * Starts the OpenFlow agent of a router (openflow.mode passive or active):
 * a flow table of `openflow.tableCapacity` entries, the agent answering on
 * its transport, and every 250 ms the table's timeouts (FLOW_REMOVED) and the
 * ports' RC (PORT_STATUS past `openflow.rcStepKbps`). An ssl: or pssl:
 * endpoint reads openflow.tls first: a file that is missing or is not what
 * it should be is a ConfigError naming its field.
 */
export async function startOpenFlow(cfg: NodeConfig, r: OpenFlowRouter, log: Logger, version: string, vnfs?: AgentVnfs): Promise<OpenFlowSide> {
  const endpoint = agentEndpoint(cfg);
  const tls = endpoint.tls ? loadOfTls(cfg.openflow.tls, '/openflow/tls') : undefined;
  const tables = new FlowTables(1, { capacity: cfg.openflow.tableCapacity });
  const forwarder = new FlowTableForwarder(tables, cfg.node.id);
  const adapter = agentRouterOf(r);
  const agent = new OfAgent({
    datapathId: datapathIdOf(cfg),
    tables,
    router: adapter,
    node: { id: cfg.node.id, name: cfg.node.name },
    version,
    startUs: r.now(),
    ...(vnfs ? { vnfs } : {}),
  });
  forwarder.onController = (p) => agent.packetIn(p);
  const tracker = new PortTracker(cfg.openflow.rcStepKbps);
  tracker.update(adapter.ports());
  const o = cfg.openflow;
  const transport = new OfTransport(agent, {
    endpoint,
    ...(tls ? { tls } : {}),
    echoIntervalMs: o.echoIntervalMs,
    reconnectMinMs: o.reconnectMinMs,
    reconnectMaxMs: o.reconnectMaxMs,
    enter: r.enter,
    log,
  });
  const address = await transport.start();
  const timer = setInterval(() => {
    try {
      r.enter((now) => {
        agent.flowRemoved(tables.tick(now));
        agent.portStatus(tracker.update(adapter.ports()));
      });
    } catch (e) {
      log.error({ event: 'openflow-fault', err: e }, `OpenFlow: the agent's timer failed: ${(e as Error).message}`);
    }
  }, 250);
  log.info(
    { event: 'openflow-start', mode: o.mode, address, datapathId: datapathIdOf(cfg).toString(16), ...(tls ? { certificate: tls.subject } : {}) },
    o.mode === 'active' ? `OpenFlow 1.3 agent: connecting to the controller at ${address}` : `OpenFlow 1.3 agent listening on ${address}`,
  );
  return {
    tables,
    forwarder,
    agent,
    transport,
    address,
    async stop() {
      clearInterval(timer);
      await transport.stop();
    },
  };
}
