import { execFile } from 'node:child_process';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { OFPP } from '../../../src/wire/openflow/actions.js';
import { OFPAT, OFPIT } from '../../../src/wire/openflow/constants.js';
import {
  encodeOf,
  OfFramer,
  oxmIdOf,
  parseOf,
  type MultipartReplyBody,
  type OfMessage,
  type OfPacketQueue,
  type TableFeatures,
} from '../../../src/wire/openflow/index.js';

/**
 * A tiny OpenFlow 1.3 "switch" on 127.0.0.1 for known-answer tests against
 * ovs-ofctl: it answers HELLO, FEATURES_REQUEST, ECHO, BARRIER,
 * GET_CONFIG, ROLE, QUEUE_GET_CONFIG (with `sampleQueues()` on the port
 * asked for) and multipart requests (with the bodies `replies` gives, else
 * empty lists) through the codec under test, and records every message
 * ovs-ofctl sends as raw bytes.
 */
export interface FakeSwitch {
  port: number;
  /** Every message received, in order, as sent. */
  received: Uint8Array[];
  /** Problems: bytes the codec refused, framing errors. */
  problems: string[];
  close(): Promise<void>;
}

export type ReplyFor = (body: Extract<OfMessage, { type: 'multipart-request' }>['body']) => MultipartReplyBody | undefined;

export async function startFakeSwitch(replies: ReplyFor = () => undefined, datapathId = 0x0000_0000_0000_cafen): Promise<FakeSwitch> {
  const received: Uint8Array[] = [];
  const problems: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => undefined);
    const framer = new OfFramer();
    const send = (m: OfMessage): void => {
      sock.write(encodeOf(m));
    };
    send({ type: 'hello', version: 4, xid: 1, elements: [{ type: 'version-bitmap', bitmaps: [0x10] }] });
    sock.on('data', (chunk: Buffer) => {
      framer.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
      for (let f = framer.next(); f !== undefined; f = framer.next()) {
        if (!f.ok) {
          problems.push(f.error.message);
          sock.destroy();
          return;
        }
        received.push(f.value);
        const p = parseOf(f.value);
        if (!p.ok) {
          problems.push(`${p.error.code}: ${p.error.message}`);
          continue;
        }
        const m = p.value;
        const xid = m.xid;
        switch (m.type) {
          case 'features-request':
            send({ type: 'features-reply', xid, datapathId, nBuffers: 0, nTables: 1, auxiliaryId: 0, capabilities: 0x47 });
            break;
          case 'echo-request':
            send({ type: 'echo-reply', xid, data: m.data });
            break;
          case 'barrier-request':
            send({ type: 'barrier-reply', xid });
            break;
          case 'get-config-request':
            send({ type: 'get-config-reply', xid, flags: 0, missSendLen: 128 });
            break;
          case 'role-request':
            send({ type: 'role-reply', xid, role: m.role === 'nochange' ? 'equal' : m.role, generationId: m.generationId });
            break;
          case 'multipart-request':
            send({ type: 'multipart-reply', xid, flags: 0, body: replies(m.body) ?? emptyReply(m.body) });
            break;
          case 'queue-get-config-request':
            send({
              type: 'queue-get-config-reply',
              xid,
              portNo: m.portNo,
              queues: sampleQueues().filter((q) => m.portNo === OFPP.ANY || q.portNo === m.portNo),
            });
            break;
          default:
            break;
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    received,
    problems,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function emptyReply(body: Extract<OfMessage, { type: 'multipart-request' }>['body']): MultipartReplyBody {
  switch (body.type) {
    case 'desc':
      return { type: 'desc', desc: { mfrDesc: 'cogmesh', hwDesc: 'test', swDesc: 'test', serialNum: '1', dpDesc: 'fake' } };
    case 'flow':
      return { type: 'flow', stats: [] };
    case 'aggregate':
      return { type: 'aggregate', stats: { packetCount: 0n, byteCount: 0n, flowCount: 0 } };
    case 'table':
      return { type: 'table', stats: [] };
    case 'port-stats':
      return { type: 'port-stats', stats: [] };
    case 'queue':
      return { type: 'queue', stats: [] };
    case 'group-desc':
      return { type: 'group-desc', groups: [] };
    case 'meter-features':
      return { type: 'meter-features', features: { maxMeter: 0, bandTypes: 0, capabilities: 0, maxBands: 0, maxColor: 0 } };
    case 'table-features':
      return { type: 'table-features', tables: [sampleTableFeatures()] };
    case 'port-desc':
      return { type: 'port-desc', ports: [] };
    case 'experimenter':
      return { type: 'experimenter', experimenter: body.experimenter, expType: body.expType, data: new Uint8Array(0) };
    case 'unsupported':
      return { type: 'unsupported', mpType: body.mpType, data: new Uint8Array(0) };
  }
}

/** Runs ovs-ofctl with `args` (the target is `tcp:127.0.0.1:<port>`), resolving with its exit code and output. */
export function ofctl(args: string[], timeoutMs = 10_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('ovs-ofctl', args, { timeout: timeoutMs }, (e, stdout, stderr) => {
      const code = e === null ? 0 : typeof (e as { code?: unknown }).code === 'number' ? (e as { code: number }).code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** One table with every property type (ovs-ofctl wants at least one table before it sends a FLOW_MOD). */
export function sampleTableFeatures(tableId = 0): TableFeatures {
  const instructions = [OFPIT.GOTO_TABLE, OFPIT.WRITE_METADATA, OFPIT.WRITE_ACTIONS, OFPIT.APPLY_ACTIONS, OFPIT.CLEAR_ACTIONS, OFPIT.METER].map((type) => ({
    type,
  }));
  const actions = [OFPAT.OUTPUT, OFPAT.SET_QUEUE, OFPAT.GROUP, OFPAT.DEC_NW_TTL, OFPAT.SET_FIELD].map((type) => ({ type }));
  const match = [
    oxmIdOf('inPort'),
    oxmIdOf('ethDst', true),
    oxmIdOf('ethSrc', true),
    oxmIdOf('ethType'),
    oxmIdOf('vlanVid', true),
    oxmIdOf('ipDscp'),
    oxmIdOf('ipProto'),
    oxmIdOf('ipv4Src', true),
    oxmIdOf('ipv4Dst', true),
    oxmIdOf('tcpSrc'),
    oxmIdOf('tcpDst'),
    oxmIdOf('udpSrc'),
    oxmIdOf('udpDst'),
    oxmIdOf('ipv6Src', true),
    oxmIdOf('ipv6Dst', true),
    oxmIdOf('ipv6Flabel', true),
  ];
  const setfield = [oxmIdOf('ethDst'), oxmIdOf('ipv6Flabel'), oxmIdOf('ipDscp')];
  return {
    tableId,
    name: `table${tableId}`,
    metadataMatch: 0xffff_ffff_ffff_ffffn,
    metadataWrite: 0xffff_ffff_ffff_ffffn,
    config: 0,
    maxEntries: 1_000_000,
    properties: [
      { type: 'instructions', ids: instructions },
      { type: 'instructions-miss', ids: instructions },
      { type: 'next-tables', tableIds: [1, 2] },
      { type: 'next-tables-miss', tableIds: [1] },
      { type: 'write-actions', ids: actions },
      { type: 'write-actions-miss', ids: actions },
      { type: 'apply-actions', ids: actions },
      { type: 'apply-actions-miss', ids: actions },
      { type: 'match', oxmIds: match },
      { type: 'wildcards', oxmIds: match.map((m) => ({ ...m, hasMask: false, length: m.hasMask ? m.length / 2 : m.length })) },
      { type: 'write-setfield', oxmIds: setfield },
      { type: 'write-setfield-miss', oxmIds: setfield },
      { type: 'apply-setfield', oxmIds: setfield },
      { type: 'apply-setfield-miss', oxmIds: setfield },
      { type: 'experimenter', experimenter: 0x00002320, expType: 7, data: Uint8Array.of(1, 2, 3, 4) },
      { type: 'experimenter-miss', experimenter: 0x00002320, expType: 8, data: new Uint8Array(0) },
    ],
  };
}

/**
 * Queues on ports 1 and 2 with every property type: min and max rates
 * (50 % and 75 % of the port's speed; 1001 is a disabled max rate) and an
 * experimenter property (Open vSwitch ignores that one).
 */
export function sampleQueues(): OfPacketQueue[] {
  return [
    {
      queueId: 0,
      portNo: 1,
      properties: [
        { type: 'min-rate', rate: 500 },
        { type: 'max-rate', rate: 750 },
      ],
    },
    { queueId: 1, portNo: 1, properties: [{ type: 'max-rate', rate: 1001 }] },
    {
      queueId: 7,
      portNo: 2,
      properties: [
        { type: 'experimenter', experimenter: 0x00002320, data: Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8) },
        { type: 'min-rate', rate: 125 },
      ],
    },
    { queueId: 8, portNo: 2, properties: [] },
  ];
}
