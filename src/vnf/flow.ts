import { ConfigError } from '../core/errors.js';
import type { FlowPattern } from './types.js';

/** An address as text: dotted IPv4, or IPv6 as eight hex groups. */
export function ipText(ip: Uint8Array): string {
  if (ip.length === 4) return ip.join('.');
  const groups: string[] = [];
  for (let i = 0; i + 1 < ip.length; i += 2) groups.push((((ip[i] ?? 0) << 8) | (ip[i + 1] ?? 0)).toString(16));
  return groups.join(':');
}

/** The 5-tuple of a TCP or UDP packet (ports from the first four bytes). */
export function tupleOf(proto: 'tcp' | 'udp', src: Uint8Array, dst: Uint8Array, bytes: Uint8Array): Required<FlowPattern> | undefined {
  if (bytes.length < 4) return undefined;
  return {
    proto,
    srcIp: ipText(src),
    srcPort: ((bytes[0] ?? 0) << 8) | (bytes[1] ?? 0),
    dstIp: ipText(dst),
    dstPort: ((bytes[2] ?? 0) << 8) | (bytes[3] ?? 0),
  };
}

function oneWay(p: FlowPattern, t: Required<FlowPattern>): boolean {
  return (
    (p.proto === undefined || p.proto === t.proto) &&
    (p.srcIp === undefined || p.srcIp === t.srcIp) &&
    (p.srcPort === undefined || p.srcPort === t.srcPort) &&
    (p.dstIp === undefined || p.dstIp === t.dstIp) &&
    (p.dstPort === undefined || p.dstPort === t.dstPort)
  );
}

/** Whether a packet's tuple belongs to the pattern's flow, in either direction. */
export function matches(p: FlowPattern, t: Required<FlowPattern>): boolean {
  return oneWay(p, t) || oneWay(p, { proto: t.proto, srcIp: t.dstIp, srcPort: t.dstPort, dstIp: t.srcIp, dstPort: t.srcPort });
}

/** `tcp 10.0.0.1:* > 10.0.4.1:5001`, `*` for any field. */
export function formatFlow(p: FlowPattern): string {
  const f = (v: string | number | undefined): string => (v === undefined ? '*' : String(v));
  return `${f(p.proto)} ${f(p.srcIp)}:${f(p.srcPort)} > ${f(p.dstIp)}:${f(p.dstPort)}`;
}

/** The inverse of formatFlow; refused with a ConfigError naming what is wrong. */
export function parseFlow(text: string, path = '/flow'): FlowPattern {
  const m = /^\s*(tcp|udp|\*)\s+([^\s>]+):(\d+|\*)\s*>\s*([^\s>]+):(\d+|\*)\s*$/.exec(text);
  if (!m) throw new ConfigError([{ path, value: text, expected: 'PROTO SRC:PORT > DST:PORT, any field "*" (e.g. "tcp 10.0.0.1:* > 10.0.4.1:5001")' }]);
  const port = (v: string, at: string): number | undefined => {
    if (v === '*') return undefined;
    const n = Number(v);
    if (!(n >= 0 && n <= 65535)) throw new ConfigError([{ path: `${path}${at}`, value: v, expected: 'a port 0-65535 or *' }]);
    return n;
  };
  const out: FlowPattern = {};
  if (m[1] !== '*') out.proto = m[1] as 'tcp' | 'udp';
  if (m[2] !== '*') out.srcIp = m[2]!;
  const sp = port(m[3]!, '/srcPort');
  if (sp !== undefined) out.srcPort = sp;
  if (m[4] !== '*') out.dstIp = m[4]!;
  const dp = port(m[5]!, '/dstPort');
  if (dp !== undefined) out.dstPort = dp;
  return out;
}
