import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeLink, LINK_VERSION, MAX_LINK_SEQ, parseDown, parseUp, type LinkMessage } from '../../radio/medium/link.js';
import { CaptureError, layoutSegments, parseSigmfMeta } from '../../radio/file/sigmf.js';
import { configFilePath, parseNodeConfig } from '../../src/config/load.js';
import { parseRequest } from '../../src/control/protocol.js';
import { ConfigError } from '../../src/core/errors.js';
import { parseJsonText } from '../../src/core/json.js';
import { parseJsonFileText } from '../../src/core/schema.js';
import { encodeFrame, parseFrame } from '../../src/monitor/frames.js';
import { encodeControl, encodeData, parseControl, parseData } from '../../src/wire/codec.js';
import { flowHash, ipPacket, parseIp, PROTO_TCP, PROTO_UDP } from '../../src/wire/ip.js';
import type { ControlMsg, DataHeader } from '../../src/wire/mesh.js';
import { encodeOf, OfFramer, parseOf } from '../../src/wire/openflow/index.js';
import { encodeTcp, ipv4, parseTcp, TCP_ACK, TCP_SYN, type IpPair, type TcpSegment } from '../../src/wire/tcp.js';
import { MESSAGES as OPENFLOW_MESSAGES } from '../wire/openflow/samples.js';
import { r3AuthTarget } from './r3-auth.js';
import type { Rng } from '../../src/core/rng.js';

/**
 * The parsers the fuzzer runs (`npm run fuzz`), each with its valid seeds
 * and what counts as a clean refusal there. A target's `feed` returns the
 * refusal's code, or undefined when the input was accepted; it catches only
 * the error classes its parser documents as its way of refusing. Anything
 * else that leaves `feed` (a TypeError, a RangeError, a stack overflow, any
 * other class) is an escape.
 */
export interface FuzzTarget<I> {
  name: string;
  kind: I extends Uint8Array ? 'bytes' : I extends string ? 'text' : 'value';
  /** The entry points, and what a clean refusal is for them. */
  doc: string;
  seeds(): I[];
  feed(input: I): string | undefined;
  /** Mutations aimed at the format's own fields, drawn for half of the mutated inputs (bytes targets; without it, the generic ones only). */
  mutate?(rng: Rng, seed: I, other: I): I;
}

export type AnyTarget = FuzzTarget<Uint8Array> | FuzzTarget<string> | FuzzTarget<unknown>;

const CORPUS = fileURLToPath(new URL('./corpus/', import.meta.url));

/** The files of corpus/<target>/, as bytes: small valid (or once-crashing) inputs kept in the repository. */
export function corpusFiles(target: string): Uint8Array[] {
  const dir = join(CORPUS, target);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .map((f) => new Uint8Array(readFileSync(join(dir, f))));
}

const text = (b: Uint8Array): string => new TextDecoder().decode(b);

// ---------------------------------------------------------------------------
// Mesh messages (R3 control, data header)

const V4: IpPair = { src: ipv4(10, 0, 0, 1), dst: ipv4(10, 0, 4, 1) };

const MESH_CONTROL: ControlMsg[] = [
  { type: 'hello', src: 1, seq: 7, r1Channel: 6, workload: [], neighbours: [] },
  {
    type: 'hello',
    src: 65534,
    seq: 0xffffffff,
    r1Channel: 0,
    workload: [
      { channel: 1, w: 0.25, windows: 10 },
      { channel: 11, w: 1, windows: 0xffffffff },
    ],
    neighbours: [
      { addr: 2, r1Channel: 1 },
      { addr: 3, r1Channel: 255 },
    ],
  },
  {
    type: 'rreq',
    join: false,
    repair: true,
    gratuitous: true,
    destinationOnly: false,
    unknownSeq: true,
    hopCount: 3,
    rreqId: 99,
    dst: 4,
    dstSeq: 1,
    orig: 1,
    origSeq: 2,
    ttl: 7,
    firstHop: 2,
    pathCost: 12.5,
  },
  { type: 'rrep', repair: false, ackRequired: true, hopCount: 2, dst: 4, dstSeq: 9, orig: 1, lifetimeMs: 3000, lastHop: 3, pathCost: 0.001 },
  {
    type: 'rerr',
    noDelete: true,
    unreachable: [
      { dst: 4, dstSeq: 10 },
      { dst: 5, dstSeq: 0 },
    ],
  },
  {
    type: 'prefix',
    orig: 3,
    seq: 4,
    hopCount: 1,
    ttl: 16,
    lifetimeS: 60,
    prefixes: [
      { version: 4, bytes: ipv4(10, 0, 3, 0), length: 24 },
      { version: 6, bytes: Uint8Array.from([0x20, 0x01, 0x0d, 0xb8, ...new Array<number>(12).fill(0)]), length: 32 },
    ],
  },
];

const DATA_HEADERS: DataHeader[] = [
  { src: 1, dst: 4, ttl: 16, proto: 'udp', flow: 1, seq: 0 },
  { src: 4, dst: 1, ttl: 1, proto: 'tcp', flow: 0xffff, seq: 0xffffffff },
  { src: 2, dst: 0xffff, ttl: 255, proto: 'raw', flow: 0, seq: 5 },
  { src: 1, dst: 2, ttl: 8, proto: 'ip4', flow: 3, seq: 6, label: 0x100 },
  { src: 1, dst: 2, ttl: 8, proto: 'ip6', flow: 3, seq: 7, label: 0xfffff },
];

const meshControl: FuzzTarget<Uint8Array> = {
  name: 'mesh-control',
  kind: 'bytes',
  doc: 'parseControl (src/wire/codec.ts) on R3 control messages (HELLO, RREQ, RREP, RERR, PREFIX). Never throws: a refusal is a Result error (WireError).',
  seeds: () => [...MESH_CONTROL.map(encodeControl), ...corpusFiles('mesh-control')],
  feed(b) {
    const r = parseControl(b);
    return r.ok ? undefined : r.error.code;
  },
};

const meshData: FuzzTarget<Uint8Array> = {
  name: 'mesh-data',
  kind: 'bytes',
  doc: 'parseData (src/wire/codec.ts) on DATA and labelled DATA headers. Never throws: a refusal is a Result error (WireError).',
  seeds: () => [
    ...DATA_HEADERS.map((h, i) =>
      encodeData(
        h,
        Uint8Array.from({ length: i * 7 }, (_x, k) => k),
      ),
    ),
    ...MESH_CONTROL.slice(0, 2).map(encodeControl),
    ...corpusFiles('mesh-data'),
  ],
  feed(b) {
    const r = parseData(b);
    return r.ok ? undefined : r.error.code;
  },
};

/** R3's authentication trailer before the parser (test/fuzz/r3-auth.ts). */
const r3Auth = r3AuthTarget(MESH_CONTROL.map(encodeControl));

// ---------------------------------------------------------------------------
// TCP and IP

const SEGMENTS: TcpSegment[] = [
  {
    srcPort: 40000,
    dstPort: 5001,
    seq: 1,
    ack: 0,
    flags: TCP_SYN,
    window: 65535,
    urgent: 0,
    payload: new Uint8Array(0),
    options: { mss: 1460, windowScale: 7, sackPermitted: true, timestamp: { value: 1, echo: 0 } },
  },
  {
    srcPort: 5001,
    dstPort: 40000,
    seq: 0xfffffff0,
    ack: 2,
    flags: TCP_ACK,
    window: 1024,
    urgent: 0,
    payload: Uint8Array.from([1, 2, 3, 4, 5]),
    options: {
      sack: [
        { left: 10, right: 20 },
        { left: 30, right: 40 },
      ],
      timestamp: { value: 0xffffffff, echo: 7 },
    },
  },
  { srcPort: 0, dstPort: 0xffff, seq: 0, ack: 0, flags: 0xff, window: 0, urgent: 0xffff, payload: new Uint8Array(40), options: {} },
];

const tcp: FuzzTarget<Uint8Array> = {
  name: 'tcp',
  kind: 'bytes',
  doc: 'parseTcp (src/wire/tcp.ts), without and with an IPv4 pseudo-header (checksum checked). Never throws for any bytes: a refusal is a Result error (WireError).',
  seeds: () => [...SEGMENTS.map((s) => encodeTcp(s, V4)), ...corpusFiles('tcp')],
  feed(b) {
    parseTcp(b, V4);
    const r = parseTcp(b);
    return r.ok ? undefined : r.error.code;
  },
};

const V6_SRC = Uint8Array.from([0x20, 0x01, 0x0d, 0xb8, ...new Array<number>(11).fill(0), 1]);
const V6_DST = Uint8Array.from([0x20, 0x01, 0x0d, 0xb8, ...new Array<number>(11).fill(0), 2]);

const ip: FuzzTarget<Uint8Array> = {
  name: 'ip',
  kind: 'bytes',
  doc: 'parseIp (src/wire/ip.ts) on IPv4 and IPv6 packets, and flowHash on what it accepts. Never throws: a refusal is a Result error (WireError).',
  seeds: () => [
    ipPacket(PROTO_TCP, V4.src, V4.dst, encodeTcp(SEGMENTS[1]!, V4), { df: true, id: 7 }),
    ipPacket(PROTO_UDP, V4.src, V4.dst, Uint8Array.from([0x13, 0x89, 0x13, 0x89, 0, 12, 0, 0, 1, 2, 3, 4]), { ttl: 1 }),
    ipPacket(1, V4.src, V4.dst, Uint8Array.from([8, 0, 0xf7, 0xff, 0, 0, 0, 0])),
    ipPacket(PROTO_TCP, V6_SRC, V6_DST, encodeTcp(SEGMENTS[0]!, { src: V6_SRC, dst: V6_DST }), { tos: 0xb8 }),
    ipPacket(58, V6_SRC, V6_DST, Uint8Array.from([128, 0, 0, 0, 0, 1, 0, 1])),
    ...corpusFiles('ip'),
  ],
  feed(b) {
    const r = parseIp(b);
    if (!r.ok) return r.error.code;
    flowHash(r.value);
    return undefined;
  },
};

// ---------------------------------------------------------------------------
// OpenFlow

const openflow: FuzzTarget<Uint8Array> = {
  name: 'openflow',
  kind: 'bytes',
  doc:
    'OfFramer (the stream cut into messages) and parseOf (src/wire/openflow/codec.ts) on each message it yields, one message of every type and multipart body as seeds. ' +
    'Never throws: a refusal is a Result error (OfParseError, the framer\u2019s fatal OF_BAD_LENGTH included).',
  seeds: () => [...OPENFLOW_MESSAGES.map(encodeOf), ...corpusFiles('openflow')],
  feed(b) {
    const framer = new OfFramer();
    // Two chunks, so that a message cut across reads is framed too.
    const cut = b.length >>> 1;
    framer.push(b.subarray(0, cut));
    framer.push(b.subarray(cut));
    let code: string | undefined;
    let frames = 0;
    for (let f = framer.next(); f !== undefined; f = framer.next()) {
      if (!f.ok) {
        code ??= f.error.code;
        break;
      }
      frames++;
      const r = parseOf(f.value);
      if (!r.ok) code ??= r.error.code;
    }
    const whole = parseOf(b);
    if (!whole.ok) code ??= whole.error.code;
    return frames === 0 ? (code ?? 'OF_TRUNCATED') : code;
  },
};

// ---------------------------------------------------------------------------
// The medium's link

const PAYLOAD = Uint8Array.from([0x10, 1, 0, 1]);
const LINK: LinkMessage[] = [
  { t: 'join', version: LINK_VERSION, node: 3, name: 'r3', position: { xM: 10.5, yM: -3 } },
  { t: 'station', spec: { id: 'r3/R1', acceptsUnicast: true, acceptsBroadcast: false, channel: 6, pnAffected: true, queueLimit: 1 } },
  { t: 'send', st: 'r3/R2', seq: MAX_LINK_SEQ, src: 3, dst: 0xffff, payload: PAYLOAD },
  { t: 'retune', st: 'r3/R2', channel: 11, overheadUs: 1000 },
  { t: 'hold', st: 'r3/R2' },
  { t: 'detach', st: 'r3/R1' },
  { t: 'beat' },
  { t: 'leave' },
  { t: 'rx', st: 'r1/R3', src: 0, dst: 0xffff, atUs: 1_700_000_000_123_457, payload: PAYLOAD },
  { t: 'sent', st: 'r1/R2', seq: 7, outcome: { ok: false, reason: 'retry-limit', attempts: 7, atUs: 5 } },
  { t: 'sent', st: 'é/R2', seq: 9, outcome: { ok: true, attempts: 1, atUs: Number.MAX_SAFE_INTEGER } },
  { t: 'attempt', st: 'r1/R2', seq: 7, attempts: 2 },
  { t: 'refused', reason: 'not joined' },
];

const mediumLink: FuzzTarget<Uint8Array> = {
  name: 'medium-link',
  kind: 'bytes',
  doc:
    'parseUp and parseDown (radio/medium/link.ts), both on every input. Never throw: a record that cannot be read is counted in the batch\u2019s errors (LINK_*), ' +
    'the refusal here; an input is accepted when either reads it without an error.',
  seeds: () => [...LINK.map((m) => encodeLink(m)), encodeLink(...LINK.slice(0, 8)), encodeLink(...LINK.slice(8)), ...corpusFiles('medium-link')],
  feed(b) {
    const up = parseUp(b);
    const down = parseDown(b);
    // A message is for one direction: accepted when either reads it whole.
    return up.errors.length === 0 || down.errors.length === 0 ? undefined : up.errors[0]!.code;
  },
};

// ---------------------------------------------------------------------------
// Control requests and monitor frames

const REQUESTS = [
  { id: 1, cmd: 'status' },
  { id: 'a', cmd: 'get', path: 'sensing.durationMs' },
  { id: 2, cmd: 'set', values: { 'sensing.durationMs': 20, 'channel.hysteresis': 0.2 }, expect: '0123456789abcdef' },
  { id: 3, cmd: 'vnf.start', type: 'tcp-acc', flow: 'tcp 10.0.0.1:* > 10.0.4.1:5001', params: { bufferBytes: 65536 } },
  { id: 4, cmd: 'vnf.stop', vnf: 1 },
  { id: 5, cmd: 'controller.add', flow: 'tcp:4-0:5001', acc: 'every-2' },
  { id: 6, cmd: 'controller.add', flow: 'udp:0-4,label=0x100' },
  { id: 7, cmd: 'controller.remove', flow: 1 },
  { id: null, cmd: 'help' },
].map((r) => JSON.stringify(r));

const control: FuzzTarget<string> = {
  name: 'control',
  kind: 'text',
  doc: 'parseRequest (src/control/protocol.ts) on request frames. Never throws: a refusal is a { ok: false } reply body with a CONTROL_* code.',
  seeds: () => [...REQUESTS, ...corpusFiles('control').map(text)],
  feed(t) {
    const r = parseRequest(t);
    return r.ok ? undefined : r.error.code;
  },
};

const monitor: FuzzTarget<Uint8Array> = {
  name: 'monitor',
  kind: 'bytes',
  doc:
    'parseFrame (src/monitor/frames.ts), the binary spectrum frame of the monitor\u2019s stream (src/monitor/protocol.ts; its JSON messages are only written by the server and read by the page with JSON.parse). ' +
    'What a client sends the monitor is counted (clientMessages) and never parsed, so it has no parser to fuzz. Never throws: a refusal is a Result error (FrameError).',
  seeds: () => [
    encodeFrame({ round: 0, startUs: 0, endUs: 0, channels: [] }),
    encodeFrame({
      round: 7,
      startUs: 1_000_000,
      endUs: 1_070_000,
      channels: [
        { channel: 1, centerMHz: 2412, w: 0.25, ownW: 0.5, rcBps: 1.5e6, powerDbm: -80 },
        { channel: 6, centerMHz: 2437, w: 1, ownW: undefined, rcBps: 0, powerDbm: undefined },
        { channel: 0xffff, centerMHz: 5825, w: 0, ownW: 0, rcBps: 2e6, powerDbm: -120 },
      ],
    }),
    ...corpusFiles('monitor'),
  ],
  feed(b) {
    const r = parseFrame(b);
    return r.ok ? undefined : r.error.code;
  },
};

// ---------------------------------------------------------------------------
// Configuration and SigMF metadata

function configSeeds(): string[] {
  const examples = ['node.json', 'demo.json', 'openflow-passive.json'].map((f) => readFileSync(configFilePath(`examples/${f}`), 'utf8'));
  return ['{"node":{"id":1}}', ...examples, ...corpusFiles('config').map(text)];
}

/** A ConfigError is the loader's refusal; its code. */
function configRefusal(e: unknown): string {
  if (e instanceof ConfigError) return e.code;
  throw e;
}

const configText: FuzzTarget<string> = {
  name: 'config-text',
  kind: 'text',
  doc:
    'A configuration file\u2019s text as loadNodeConfig reads it: parseJsonFileText (src/core/schema.ts, what readJsonFile does with the text) then parseNodeConfig (src/config/load.ts). ' +
    'A refusal is a thrown ConfigError.',
  seeds: configSeeds,
  feed(t) {
    try {
      parseNodeConfig(parseJsonFileText(t, 'fuzz.json'), 'fuzz.json');
      return undefined;
    } catch (e) {
      return configRefusal(e);
    }
  },
};

const configObject: FuzzTarget<unknown> = {
  name: 'config-object',
  kind: 'value',
  doc:
    'parseNodeConfig (src/config/load.ts) on a configuration handed over as a value (as the testbed and the simulator do), including what JSON cannot hold ' +
    '(NaN, undefined, a BigInt, a function, a Map, a sparse array, __proto__ as an own key). A refusal is a thrown ConfigError.',
  seeds: () => configSeeds().map((t) => JSON.parse(t) as unknown),
  feed(v) {
    try {
      parseNodeConfig(v, 'fuzz');
      return undefined;
    } catch (e) {
      return configRefusal(e);
    }
  },
};

const SIGMF_DOCS = [
  {
    global: { 'core:datatype': 'cf32_le', 'core:sample_rate': 1e6, 'core:version': '1.2.0' },
    captures: [
      { 'core:sample_start': 0, 'core:frequency': 2.412e9 },
      { 'core:sample_start': 100, 'core:frequency': 2.437e9 },
    ],
    annotations: [],
  },
  {
    global: {
      'core:datatype': 'ci16_le',
      'core:sample_rate': 20e6,
      'core:version': '1.2.0',
      'core:description': 'bench',
      'core:hw': 'b210',
      'core:trailing_bytes': 4,
      'core:extensions': [{ name: 'cogmesh', version: '1.0.0', optional: true }],
      'cogmesh:calibration_db': -10,
      'other:key': [1, 2],
    },
    captures: [
      {
        'core:sample_start': 0,
        'core:frequency': 2.462e9,
        'core:datetime': '2024-05-01T10:00:00.123456Z',
        'core:header_bytes': 16,
        'cogmesh:calibration_db': -11,
      },
    ],
    annotations: [
      { 'core:sample_start': 0, 'core:sample_count': 10, 'core:label': 'burst', 'core:freq_lower_edge': 2.45e9, 'core:freq_upper_edge': 2.47e9 },
      { 'core:sample_start': 5, 'core:comment': 'x', 'core:generator': 'cogmesh' },
    ],
  },
].map((d) => JSON.stringify(d));

const sigmf: FuzzTarget<string> = {
  name: 'sigmf',
  kind: 'text',
  doc:
    'A .sigmf-meta text as readSigmf reads it (radio/file/sigmf.ts): parseJsonText (depth-limited), parseSigmfMeta, then layoutSegments for data files of a few sizes (accepted when one fits). ' +
    'A refusal is a JSON refusal (which readSigmf throws as a CaptureError) or a thrown CaptureError.',
  seeds: () => [...SIGMF_DOCS, ...corpusFiles('sigmf').map(text)],
  feed(t) {
    const doc = parseJsonText(t);
    if (!doc.ok) return `JSON_${doc.error.kind.toUpperCase()}`;
    try {
      const meta = parseSigmfMeta(doc.value, 'fuzz.sigmf-meta');
      // Accepted when a data file of one of the sizes fits the metadata.
      let code: string | undefined = 'RADIO_BAD_CAPTURE';
      for (const bytes of [0, 816, 8020, 2 ** 40]) {
        try {
          layoutSegments(meta, bytes, 'fuzz.sigmf-data');
          code = undefined;
        } catch (e) {
          if (!(e instanceof CaptureError)) throw e;
        }
      }
      return code;
    } catch (e) {
      if (e instanceof CaptureError) return e.code;
      throw e;
    }
  },
};

/** Every target, in the order the report lists them. */
export const TARGETS: readonly AnyTarget[] = [meshControl, meshData, r3Auth, tcp, ip, openflow, mediumLink, control, monitor, configText, configObject, sigmf];
