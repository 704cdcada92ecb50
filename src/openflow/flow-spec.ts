import { err, ok, type Result } from '../core/result.js';

/** TCP-ACC on a flow's relays. */
export interface AccSpec {
  mode: 'split' | 'e2e' | 'as';
  /** A VNF on every everyHops-th relay (1: all relays). Default 1. */
  everyHops?: number;
  bufferBytes?: number;
}

/** A flow the CETT controller places (seeds/000 section 4): its traffic, and what goes on its path. */
export interface FlowSpec {
  /** Non-negative integer; the entries' cookie and the VNFs' ref. */
  id: number;
  proto: 'tcp' | 'udp';
  srcAddr: number;
  dstAddr: number;
  dstPort?: number;
  acc?: AccSpec;
  /** The IPv6 flow label its packets carry (its QoS tag, both directions): its entries match it. */
  label?: number;
  /** The QoS queue its packets go in on every hop (OpenFlow set_queue); absent: the label's class decides. */
  queue?: number;
}

/**
 * A flow as text: `PROTO:SRC-DST[:PORT][,label=L][,queue=Q]` (SRC and DST routers, by number or
 * by mesh address 10.H.L.1; L and Q decimal or 0x hex): the form VNF patterns take too
 * (src/vnf/flow.ts), with the options only the controller has.
 */
export const FLOW_TEXT = 'PROTO:SRC-DST[:PORT][,label=L][,queue=Q]';

/**
 * `tcp:SRC-DST[:PORT]` (PORT: the destination port) or `udp:SRC-DST` as a controller flow, with
 * `label=L` (its IPv6 flow label; 0 is none) and `queue=Q` (the QoS queue its
 * entries set), each at most once. An error names the part that is wrong.
 */
export function parseFlowText(text: string, id: number, acc: FlowSpec['acc']): Result<FlowSpec, string> {
  const [head = '', ...opts] = text.split(',');
  const m = /^(tcp|udp):(\d+|10\.\d+\.\d+\.1)-(\d+|10\.\d+\.\d+\.1)(?::(\d+))?$/.exec(head);
  if (!m) return err(`"${text}" is not ${FLOW_TEXT} (e.g. tcp:0-4:5001 or udp:0-4,label=0x100)`);
  const [, proto, srcText, dstText, port] = m;
  const src = routerOf(srcText!);
  const dst = routerOf(dstText!);
  if (src === undefined || dst === undefined)
    return err(`"${text}": ${src === undefined ? srcText : dstText} is not a router's mesh address (10.H.L.1, H and L 0-255)`);
  // Mesh UDP packets carry no header of their own (docs/openflow.md): an entry matching UDP ports would never match.
  if (proto === 'udp' && port !== undefined) return err(`"${text}": a UDP flow takes no port (mesh UDP packets carry none); udp:SRC-DST`);
  const spec: FlowSpec = {
    id,
    proto: proto as 'tcp' | 'udp',
    srcAddr: src,
    dstAddr: dst,
    ...(port !== undefined ? { dstPort: Number(port) } : {}),
    ...(acc && proto === 'tcp' ? { acc } : {}),
  };
  const seen = new Set<string>();
  for (const o of opts) {
    const kv = /^(label|queue)=(0x[0-9a-fA-F]+|\d+)$/.exec(o);
    if (!kv) return err(`"${o}" in "${text}" is not label=L or queue=Q (decimal or 0x hex)`);
    const key = kv[1] as 'label' | 'queue';
    if (seen.has(key)) return err(`${key} is given twice in "${text}"`);
    seen.add(key);
    // label=0 is no label, as in scenarios and traffic flows.
    if (key === 'label' && Number(kv[2]) === 0) continue;
    spec[key] = Number(kv[2]);
  }
  return ok(spec);
}

/** A router's number from its text: the number itself, or its mesh address 10.H.L.1 (meshIp). */
function routerOf(text: string): number | undefined {
  if (!text.includes('.')) return Number(text);
  const [, hi, lo] = text.split('.').map(Number);
  return hi! <= 255 && lo! <= 255 ? (hi! << 8) | lo! : undefined;
}

/** `every` or `every-K`: TCP-ACC on every K-th relay. */
export function parseAccText(text: string, mode: 'split' | 'e2e' | 'as'): Result<NonNullable<FlowSpec['acc']>, string> {
  const k = text === 'every' ? '1' : /^every-(\d+)$/.exec(text)?.[1];
  if (k === undefined || Number(k) < 1) return err(`"${text}" is not every or every-K (K >= 1)`);
  return ok({ mode, everyHops: Number(k) });
}

const isAddr = (a: number): boolean => Number.isInteger(a) && a >= 0 && a <= 0xffff;

/** Whether two flows match the same packets: protocol, ends, port and label. */
export function sameTraffic(a: FlowSpec, b: FlowSpec): boolean {
  return a.proto === b.proto && a.srcAddr === b.srcAddr && a.dstAddr === b.dstAddr && a.dstPort === b.dstPort && (a.label ?? 0) === (b.label ?? 0);
}

/** What is wrong with a flow spec (named), or undefined. */
export function checkSpec(s: FlowSpec): string | undefined {
  if (!Number.isSafeInteger(s.id) || s.id < 0) return `id ${s.id}: a non-negative integer`;
  if (s.proto !== 'tcp' && s.proto !== 'udp') return `proto ${String(s.proto)}: tcp or udp`;
  if (!isAddr(s.srcAddr) || !isAddr(s.dstAddr)) return 'srcAddr and dstAddr: mesh addresses 0-65535';
  if (s.srcAddr === s.dstAddr) return 'srcAddr and dstAddr are the same router';
  if (s.dstPort !== undefined && !(Number.isInteger(s.dstPort) && s.dstPort >= 0 && s.dstPort <= 0xffff)) return `dstPort ${s.dstPort}: 0-65535`;
  if (s.label !== undefined && !(Number.isInteger(s.label) && s.label >= 1 && s.label <= 0xfffff)) return `label ${s.label}: an IPv6 flow label 1-0xfffff`;
  if (s.queue !== undefined && !(Number.isInteger(s.queue) && s.queue >= 0 && s.queue <= 0xfffffffe)) return `queue ${s.queue}: a queue id 0-4294967294`;
  if (s.acc) {
    if (s.proto !== 'tcp') return 'acc: TCP-ACC needs a tcp flow';
    if (s.acc.mode !== 'split' && s.acc.mode !== 'e2e' && s.acc.mode !== 'as') return `acc.mode ${String(s.acc.mode)}: split, e2e or as`;
    const k = s.acc.everyHops ?? 1;
    if (!Number.isInteger(k) || k < 1) return `acc.everyHops ${k}: an integer >= 1`;
  }
  return undefined;
}
