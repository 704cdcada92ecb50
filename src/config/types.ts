import type { BandConfig } from '../../radio/sim/band.js';
import type { PnConfig, PnPatternConfig } from '../../radio/sim/pn.js';
import type { BackendPreference } from '../sensing/backend.js';
import type { GatewayConfig } from '../gateway/role.js';

/** The emulated band's description belongs to the band (radio/sim); the configuration names it. */
export type { BandConfig, PnConfig, PnPatternConfig };
/** The gateway section's shape belongs to the gateway role (src/gateway/role.ts). */
export type { GatewayConfig };

/**
 * The configuration of one cogmesh node, as validated against
 * `config/node.schema.json`. The schema is the one source of defaults: a file
 * may omit any field that has a default there, and `loadNodeConfig` returns
 * this type with every default filled in. Units are in the field names.
 */
export interface NodeConfig {
  node: {
    /** Node identity on the mesh: 0-65535, unique among the routers of a mesh. */
    id: number;
    /** A name for logs and the monitor. */
    name: string;
    /** Seed of every random stream of this node (and of its emulated band). */
    seed: number;
  };
  channelPlan: {
    band: 'ism2g4';
    /** 11 (North America, the seeds' plan) or 13 (ETSI). */
    channels: 11 | 13;
    /** Channels the node may use; empty means all of the plan. */
    allowed: number[];
  };
  radios: {
    /** Receive radio: sits on the channel the decision picks. */
    R1: RadioConfig;
    /** Transmit radio: switches among the neighbours' R1 channels. */
    R2: RadioConfig;
    /** Control radio: stays on the common control channel. */
    R3: RadioConfig & { channel: number };
  };
  sensing: SensingConfig;
  channel: ChannelDecisionConfig;
  switching: {
    /** How long R2 serves one channel queue before it may switch. */
    intervalMs: number;
    /** Adapt the interval to queue load. */
    adaptive: boolean;
    /** Leave a dwell early when its queue is empty and another has packets. */
    workConserving: boolean;
    /** Time lost per channel switch (radio deaf meanwhile). */
    overheadUs: number;
    /** Packets each channel queue holds. */
    queuePackets: number;
  };
  /** QoS classes inside each channel queue (seeds/002), highest priority first; best effort is queue 0 below them. */
  qos: { classes: QosClassConfig[]; burstMs: number };
  routing: RoutingConfig;
  /** The emulated band the `sim` front-ends receive from, and the air medium process they join. */
  sim: {
    /** The band, and the hub through which it shares IQ bursts with other node processes' bands (empty: none). */
    band: BandConfig & { hub: string; readLatencyUs: number };
    medium: { endpoint: string; xM: number; yM: number; sendWindow: number; curve: { serverKey: string; publicKey: string; secretKey: string } };
  };
  /** The ZeroMQ control API (docs/control-api.md). */
  control: {
    endpoint: string;
    telemetry: string;
    telemetryPeriodMs: number;
    curve: { publicKey: string; secretKey: string; allow: string[] };
  };
  /** The live spectrum monitor (docs/monitor-protocol.md). */
  monitor: {
    listen: string;
    token: string;
    statePeriodMs: number;
    maxConnections: number;
    psd: { enabled: boolean; bins: number; segments: number; maxPerS: number };
    record: { dir: string; maxS: number; maxMiB: number };
  };
  /** The embedded OpenFlow 1.3 switch agent (docs/openflow.md). */
  openflow: {
    mode: 'off' | 'passive' | 'active';
    /** pssl:PORT[:HOST], ptcp:PORT[:HOST] or HOST:PORT (src/openflow/endpoint.ts). */
    listen: string;
    /** ssl:HOST:PORT, tcp:HOST:PORT or HOST:PORT. */
    controller: string;
    datapathId: number;
    rcStepKbps: number;
    tableCapacity: number;
    echoIntervalMs: number;
    reconnectMinMs: number;
    reconnectMaxMs: number;
    tls: OfTlsConfig;
  };
  /** The 802.11b DSSS PHY and DCF over the radios' own front-ends (docs/phy.md). */
  phy: {
    enabled: boolean;
    rateMbps: 1 | 2;
    ccaDbm: number;
    blockUs: number;
    /** The router's clock runs at this fraction of real time (ScaledClock); 1 is real time. */
    timeScale: number;
    /** Overrides of the front-end kind's MAC timing profile (radio/phy/timing.ts); 0 keeps the profile's. */
    timing: { sifsUs: number; slotUs: number; ackTimeoutUs: number; cwMin: number; cwMax: number; retryLimit: number };
  };
  /** The CETT controller as a role of this router (listen and connect empty: not). */
  controller: {
    listen: string;
    /** Routers' passive agents it connects to: ssl:HOST:PORT or tcp:HOST:PORT. */
    connect: string[];
    flows: string[];
    acc: string;
    accMode: 'split' | 'e2e' | 'as';
    hysteresis: number;
    tls: OfTlsConfig;
  };
  /** Real IP over the mesh (docs/ip.md): a TUN device, the router's own addresses and the LAN prefixes it serves. */
  ip: IpConfig;
  /** The gateway role (docs/gateway.md): virtual queues per client served in time slices. */
  gateway: GatewayConfig;
  /** Test traffic over the mesh. */
  traffic: { flows: TrafficFlowConfig[] };
  /** The daemon's VNF manager: sandbox limits and the instances started with the router. */
  vnf: { memoryMb: number; callBudgetMs: number; instances: Array<{ type: string; flow: string; params: unknown }> };
  log: {
    level: 'trace' | 'debug' | 'info' | 'warn' | 'error';
    /** `pretty` for people at a terminal, `json` (one object a line) for machines. */
    format: 'pretty' | 'json';
  };
}

/** OpenFlow over TLS (ovs-pki(8)): paths to PEM files, all three set for an ssl: or pssl: endpoint. */
export interface OfTlsConfig {
  /** This side's private key. */
  privateKey: string;
  /** This side's certificate, of that key. */
  certificate: string;
  /** The CA certificate that verifies the peer's certificate. */
  caCert: string;
}

/** A QoS class: packets with its flow label (or an OpenFlow set_queue to its queue) wait in its queue. */
export interface QosClassConfig {
  name: string;
  /** The IPv6 flow label (QoS tag) of its packets, 1-0xfffff. */
  label: number;
  /** Its queue id on every port (OpenFlow set_queue, queue stats). */
  queue: number;
  /** Rate guaranteed in each channel queue, kbps. */
  minKbps: number;
}

/** One test flow of a router daemon. */
export interface TrafficFlowConfig {
  id: number;
  kind: 'udp-cbr' | 'tcp-bulk';
  src: number;
  dst: number;
  /** IPv6 flow label of its packets (its QoS class); 0: none. */
  label: number;
  rateMbps: number;
  packetBytes: number;
  port: number;
  variant: 'reno' | 'newreno' | 'vegas' | 'sack' | 'cubic';
  startS: number;
  stopS: number;
}

/** Multipath AODV on R3 and the path decision (RFC 3561 names in the descriptions of the schema). */
export interface RoutingConfig {
  helloIntervalMs: number;
  allowedHelloLoss: number;
  activeRouteTimeoutMs: number;
  nodeTraversalMs: number;
  netDiameter: number;
  rreqRetries: number;
  maxPaths: number;
  pathHysteresis: number;
  destinationOnly: boolean;
  /** Packets a source holds per destination during discovery. */
  bufferPackets: number;
  /** R3's message authentication (docs/wire.md); keyFile empty: off. */
  auth: { keyFile: string; sendKeyId: number };
}

export interface RadioConfig {
  frontend: 'sim' | 'uhd' | 'sora' | 'usb' | 'file';
  /** Complex IQ samples per second. */
  sampleRateHz: number;
  gainDb: number;
  /** dBm of a full-scale signal at 0 dB gain (front-end calibration). */
  calibrationDb: number;
  /** Driver-specific device selector (UHD device args, ring path, capture file). */
  device: string;
  /** Transmit gain (uhd): within the device's range, 0 the least power on a USRP. */
  txGainDb: number;
  /** Transmit channel of the device (uhd). */
  txChannel: number;
  /** Transmit antenna port (uhd); '' for the driver's default. */
  txAntenna: string;
}

export interface SensingConfig {
  /** Which radio senses; data transmission on it pauses while it does. */
  radio: 'R1' | 'R2' | 'R3';
  /** T_s: length of one sensing round. */
  durationMs: number;
  /** A round starts every period (the seeds' transmission period, 1 s). */
  periodMs: number;
  /** Channels visited in one round, in turn; 0 means every channel of the plan. */
  channelsPerRound: number;
  /** One sensing sample: the energy detector's averaging window. */
  windowUs: number;
  /** A window is busy when its mean power exceeds this (802.11 CCA energy detect: -62 dBm). */
  ccaThresholdDbm: number;
  /** Weight of past rounds in w: 0 keeps only the last round, 0.9 remembers long. */
  memory: number;
  /** Energy-detector backend: `auto` probes the CPU loop, WebAssembly SIMD and gpu.js at start and keeps the fastest that agrees with the CPU loop. */
  backend: BackendPreference;
  cooperative: {
    /** Merge neighbours' shared w into this node's. */
    enabled: boolean;
    /** A neighbour report loses half its weight every half-life. */
    halfLifeMs: number;
    /** Reports older than this are dropped. */
    maxAgeMs: number;
    /** Weight of a neighbour's window relative to one of our own. */
    neighbourWeight: number;
  };
}

export interface ChannelDecisionConfig {
  /** C of equation (2): capacity of a channel free of PN traffic. */
  capacityMbps: number;
  /** Switch R1 only when another channel offers this fraction of C more than the current one. */
  hysteresis: number;
  /** R1 stays at least this long on a channel before it may move again. */
  minDwellMs: number;
  /** Traffic this node must receive: a channel that cannot carry it is left even within hysteresis. */
  loadMbps: number;
  /** Sensing and the R1 decision run (true); false keeps R1 on initialChannel with no sensing at all. */
  cognitive: boolean;
  /** R1's channel before the first sensing round; 0 lets the first decision pick. With cognitive false, R1's fixed channel. */
  initialChannel: number;
  /** R1 avoids channels overlapping R3's control channel by at least this factor. */
  controlGuard: number;
  /** Chance of leaving a channel shared with another router for a better one, per decision. */
  contendedMoveProbability: number;
}

/** The router's IP side (docs/ip.md). */
export interface IpConfig {
  enabled: boolean;
  tun: string;
  /** The mesh MTU, bytes. */
  mtu: number;
  /** Its own addresses; empty: the address plan's. */
  ipv4: string;
  ipv6: string;
  /** LAN prefixes it serves, CIDR. */
  prefixes: string[];
  /** Prefixes routed into the mesh through the TUN. */
  meshRoutes: string[];
  announceIntervalMs: number;
  icmpRatePerS: number;
  icmpBurst: number;
  /** A WAN emulated between the TUN and the router (docs/ip.md). */
  wan: IpWanConfig;
}

/** The emulated WAN on a router's LAN side: each direction's rate, one-way delay and drop-tail queue. */
export interface IpWanConfig {
  enabled: boolean;
  rateMbps: number;
  delayMs: number;
  /** Packets the queue holds besides the one on the wire (0: no packet limit). */
  queuePackets: number;
  /** Bytes the queue holds besides the packet on the wire (0: no byte limit). */
  queueBytes: number;
}
