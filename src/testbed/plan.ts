import type { MediumSetup } from '../../radio/medium/server.js';
import { parseNodeConfig } from '../config/load.js';
import type { NodeConfig, TrafficFlowConfig } from '../config/types.js';
import { accFlow, accParams, tcpFlowSpec } from '../config/scenario.js';
import { airOf, bandConfig, flowDst, nodeCount, placeNodes, routerConfig, type Scenario } from '../config/scenario.js';
import { formatFlow } from '../vnf/flow.js';
import { formatEndpoint, parsePassiveEndpoint } from '../openflow/endpoint.js';
import { lanPrefix4, lanPrefix6 } from '../wire/addresses.js';

/** Where a testbed's processes listen: the medium, and per router its control API and monitor. */
export interface TestbedPorts {
  /** The medium's link endpoint (tcp://HOST:PORT or ipc://PATH). */
  medium: string;
  host: string;
  /** Router i's command socket is controlBase + 10 i, its telemetry the next port. */
  controlBase: number;
  /** Router i's monitor is monitorBase + i. */
  monitorBase: number;
  /** Router i's passive OpenFlow agent (when the scenario's node section turns it on) listens on openflowBase + i. */
  openflowBase: number;
}

export const DEFAULT_TESTBED_PORTS: Readonly<TestbedPorts> = Object.freeze({
  medium: 'tcp://127.0.0.1:7600',
  host: '127.0.0.1',
  controlBase: 7700,
  monitorBase: 8080,
  openflowBase: 6634,
});

/**
 * A testbed with real IP (`--netns`): each router daemon in a network
 * namespace of its own with its TUN, a client host behind each; every
 * endpoint is an ipc:// socket in `ipcDir`, since Unix sockets cross
 * network namespaces and loopback does not.
 */
export interface NetnsPlan {
  ipcDir: string;
  /** Router i's namespace. */
  routerNs: (index: number) => string;
}

export interface TestbedPlan {
  medium: MediumSetup;
  /** The medium's endpoint (the routers point at it). */
  mediumEndpoint: string;
  /** Whether the routers authenticate R3's messages (the scenario's auth.enabled): the testbed makes the keys of its run. */
  r3Auth: boolean;
  routers: Array<{
    index: number;
    name: string;
    config: NodeConfig;
    control: string;
    telemetry: string;
    monitor: string;
    /** The network namespace it runs in (`--netns`). */
    netns?: string;
  }>;
}

/**
 * With real IP, TCP-ACC splits every TCP connection of the hosts that
 * crosses the router (any addresses and ports): its legs use SACK, window
 * scaling and timestamps, and segments that fit the mesh MTU over IPv6 too.
 */
function hostsAcc(sc: Scenario): { type: string; flow: string; params: Record<string, unknown> } {
  const base = accParams(sc, tcpFlowSpec('sack', 5001));
  const mtu = routerConfig(sc, 0, sc.seed).ip.mtu;
  return {
    type: 'tcp-acc',
    flow: formatFlow({ proto: 'tcp' }),
    params: { ...base, tcp: { ...(base.tcp as Record<string, unknown>), mss: mtu - 60, timestamps: true, windowScale: true } },
  };
}

/** The medium process of a scenario: its band, channels, MAC and PHY, from the scenario and seed. */
export function mediumSetup(sc: Scenario, seed: number): MediumSetup {
  const first = routerConfig(sc, 0, seed);
  const air = airOf(sc);
  return {
    channels: first.channelPlan.channels,
    orthogonal: !sc.medium.adjacentChannelInterference,
    band: bandConfig(sc, first.channelPlan.channels),
    bandSeed: seed,
    controlChannelPn: sc.medium.controlChannelPn,
    medium: air.params,
    phy: air.phy,
  };
}

/**
 * A scenario as processes: the medium, and one router daemon per node with
 * its position on the medium, its control API and monitor ports, and the
 * scenario's flows as its test traffic. Nodes are numbered as in the
 * simulator (router i has mesh address i).
 */
export function planTestbed(sc: Scenario, seed: number, ports: TestbedPorts = DEFAULT_TESTBED_PORTS, netns?: NetnsPlan): TestbedPlan {
  const n = nodeCount(sc.topology);
  const positions = placeNodes(sc.topology, sc.medium.txRangeM, seed);
  const flows: TrafficFlowConfig[] = sc.flows.map((f, id) => {
    const common = { id, src: f.src, dst: flowDst(f, n), label: f.label, startS: f.startS, stopS: f.stopS };
    return f.kind === 'udp-cbr'
      ? { ...common, kind: 'udp-cbr', rateMbps: f.rateMbps, packetBytes: f.packetBytes, port: 5001, variant: 'reno' }
      : { ...common, kind: 'tcp-bulk', rateMbps: 0.2, packetBytes: 1000, port: f.port, variant: f.variant };
  });
  // TCP-ACC where the scenario places it, as VNFs the routers start with (each in its sandbox).
  const p = sc.acc.placement;
  const accOn = p === 'none' ? new Set<number>() : new Set(p === 'nodes' ? sc.acc.nodes : Array.from({ length: n }, (_, i) => i));
  const accInstances = sc.flows.flatMap((f) =>
    f.kind === 'tcp-bulk' ? [{ type: 'tcp-acc', flow: formatFlow(accFlow(f, flowDst(f, n))), params: accParams(sc, f) }] : [],
  );
  if (netns) accInstances.push(hostsAcc(sc));
  const routers = Array.from({ length: n }, (_, i) => {
    const base = routerConfig(sc, i, seed);
    const control = netns ? `ipc://${netns.ipcDir}/${base.node.name}.ctl` : `tcp://${ports.host}:${ports.controlBase + 10 * i}`;
    const telemetry = netns ? `ipc://${netns.ipcDir}/${base.node.name}.tlm` : `tcp://${ports.host}:${ports.controlBase + 10 * i + 1}`;
    const monitor = netns ? '' : `${ports.host}:${ports.monitorBase + i}`;
    const medium = netns ? `ipc://${netns.ipcDir}/medium` : ports.medium;
    const config = parseNodeConfig(
      {
        ...base,
        sim: { ...base.sim, medium: { endpoint: medium, xM: positions[i]!.xM, yM: positions[i]!.yM } },
        control: { ...base.control, endpoint: control, telemetry },
        monitor: { ...base.monitor, listen: monitor },
        openflow:
          base.openflow.mode === 'passive'
            ? { ...base.openflow, listen: passiveListen(base.openflow.listen, ports.host, ports.openflowBase + i) }
            : base.openflow,
        traffic: { flows: flows.filter((f) => f.src === i || f.dst === i) },
        vnf: { ...base.vnf, instances: accOn.has(i) ? accInstances : [] },
        log: { ...base.log, format: 'json' },
        // With --netns the router carries its client host's IP traffic: its TUN, its own addresses from the plan, its LAN.
        ...(netns ? { ip: { ...base.ip, enabled: true, prefixes: [lanPrefix4(i), lanPrefix6(i)] } } : {}),
      },
      `testbed router ${i}`,
    );
    const netnsName = netns?.routerNs(i);
    return {
      index: i,
      name: base.node.name,
      config,
      control,
      telemetry,
      monitor: monitor === '' ? '' : `http://${monitor}`,
      ...(netnsName ? { netns: netnsName } : {}),
    };
  });
  return { medium: mediumSetup(sc, seed), mediumEndpoint: netns ? `ipc://${netns.ipcDir}/medium` : ports.medium, r3Auth: sc.auth.enabled, routers };
}

/** Router i's passive agent on the testbed's host and its port, over TLS when the configuration's listens with TLS. */
function passiveListen(configured: string, host: string, port: number): string {
  const e = parsePassiveEndpoint(configured);
  return e.ok && e.value.tls ? formatEndpoint({ ...e.value, host, port }) : `${host}:${port}`;
}
