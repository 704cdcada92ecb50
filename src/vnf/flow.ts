import { ConfigError } from '../core/errors.js';
import { meshIpText } from '../wire/addresses.js';
import { parseIpAddress } from '../wire/ip.js';
import type { FlowPattern } from './types.js';

/** An address as text: dotted IPv4, or IPv6 as eight hex groups. */
export function ipText(ip: Uint8Array): string {
  if (ip.length === 4) return ip.join('.');
  const groups: string[] = [];
  for (let i = 0; i + 1 < ip.length; i += 2) groups.push((((ip[i] ?? 0) << 8) | (ip[i + 1] ?? 0)).toString(16));
  return groups.join(':');
}

/**
 * A flow pattern made ready to match packets as they come, without text:
 * its addresses as bytes. An address that is not one (it could never match
 * a packet) is `null`.
 */
export interface FlowMatcher {
  proto: 'tcp' | 'udp' | undefined;
  srcIp: Uint8Array | null | undefined;
  srcPort: number | undefined;
  dstIp: Uint8Array | null | undefined;
  dstPort: number | undefined;
}

export function flowMatcher(p: FlowPattern): FlowMatcher {
  const ip = (text: string | undefined): Uint8Array | null | undefined => (text === undefined ? undefined : (parseIpAddress(text) ?? null));
  return { proto: p.proto, srcIp: ip(p.srcIp), srcPort: p.srcPort, dstIp: ip(p.dstIp), dstPort: p.dstPort };
}

function sameIp(want: Uint8Array | null | undefined, ip: Uint8Array): boolean {
  if (want === undefined) return true;
  if (want === null || want.length !== ip.length) return false;
  for (let i = 0; i < ip.length; i++) if (want[i] !== ip[i]) return false;
  return true;
}

/**
 * Whether a TCP or UDP packet (ports from the first four bytes of
 * `bytes`) belongs to the pattern's flow, in either direction. A packet
 * shorter than its ports belongs to none.
 */
export function inFlow(m: FlowMatcher, proto: 'tcp' | 'udp', src: Uint8Array, dst: Uint8Array, bytes: Uint8Array): boolean {
  if (bytes.length < 4 || (m.proto !== undefined && m.proto !== proto)) return false;
  const sport = (bytes[0]! << 8) | bytes[1]!;
  const dport = (bytes[2]! << 8) | bytes[3]!;
  return (
    ((m.srcPort === undefined || m.srcPort === sport) && (m.dstPort === undefined || m.dstPort === dport) && sameIp(m.srcIp, src) && sameIp(m.dstIp, dst)) ||
    ((m.srcPort === undefined || m.srcPort === dport) && (m.dstPort === undefined || m.dstPort === sport) && sameIp(m.srcIp, dst) && sameIp(m.dstIp, src))
  );
}

/**
 * A flow as text, in the one form every command takes (the controller's --flow, `ctl vnf
 * start`, `vnf.instances`, the control API's vnf.start, OpenFlow's VNF messages):
 * `PROTO:SRC-DST[:PORT][,sport=N]`, e.g. `tcp:10.0.0.1-10.0.4.1:5001`. `*` for any protocol
 * or address; no PORT for any destination port; an IPv6 address in brackets.
 */
export function formatFlow(p: FlowPattern): string {
  const end = (ip: string | undefined): string => (ip === undefined ? '*' : ip.includes(':') ? `[${ip}]` : ip);
  const port = p.dstPort === undefined ? '' : `:${p.dstPort}`;
  const sport = p.srcPort === undefined ? '' : `,sport=${p.srcPort}`;
  return `${p.proto ?? '*'}:${end(p.srcIp)}-${end(p.dstIp)}${port}${sport}`;
}

const FLOW_FORM = 'PROTO:SRC-DST[:PORT][,sport=N]: PROTO tcp, udp or *; SRC and DST a router number, an IPv4 address, [an IPv6 address] or *';

/**
 * The inverse of formatFlow, where SRC and DST may also be router numbers (router 4 is its
 * mesh address 10.0.4.1, as in the controller's --flow). The older form
 * `PROTO SRC:PORT > DST:PORT` (any field `*`) is still taken, so that configuration files
 * and scripts written with it keep working. Refused with a ConfigError naming what is wrong.
 */
export function parseFlow(text: string, path = '/flow'): FlowPattern {
  const port = (v: string, at: string): number | undefined => {
    if (v === '*') return undefined;
    const n = Number(v);
    if (!(/^\d+$/.test(v) && n <= 65535)) throw new ConfigError([{ path: `${path}${at}`, value: v, expected: 'a port 0-65535 or *' }]);
    return n;
  };
  const out: FlowPattern = {};
  const m = /^\s*(tcp|udp|\*):(\[[0-9a-fA-F:.]+\]|[^\s:[\],-]+)-(\[[0-9a-fA-F:.]+\]|[^\s:[\],-]+)(?::([^\s,]+))?((?:,[^,]*)*)\s*$/.exec(text);
  if (m) {
    const end = (v: string, at: string): string | undefined => {
      if (v === '*') return undefined;
      if (v.startsWith('[')) return v.slice(1, -1);
      if (/^\d+\.\d+\.\d+\.\d+$/.test(v)) return v;
      if (/^\d+$/.test(v) && Number(v) <= 0xffff) return meshIpText(Number(v));
      throw new ConfigError([{ path: `${path}${at}`, value: v, expected: 'a router number 0-65535, an IPv4 address, [an IPv6 address] or *' }]);
    };
    if (m[1] !== '*') out.proto = m[1] as 'tcp' | 'udp';
    const src = end(m[2]!, '/srcIp');
    if (src !== undefined) out.srcIp = src;
    const dst = end(m[3]!, '/dstIp');
    if (dst !== undefined) out.dstIp = dst;
    const dp = m[4] === undefined ? undefined : port(m[4], '/dstPort');
    if (dp !== undefined) out.dstPort = dp;
    for (const o of m[5]!.split(',').slice(1)) {
      const kv = /^sport=(.*)$/.exec(o.trim());
      if (!kv) throw new ConfigError([{ path, value: text, expected: `${FLOW_FORM} ("${o}" is not sport=N)` }]);
      const sp = port(kv[1]!, '/srcPort');
      if (sp !== undefined) out.srcPort = sp;
    }
    return out;
  }
  const old = /^\s*(tcp|udp|\*)\s+([^\s>]+):(\d+|\*)\s*>\s*([^\s>]+):(\d+|\*)\s*$/.exec(text);
  if (!old) throw new ConfigError([{ path, value: text, expected: `${FLOW_FORM} (e.g. "tcp:0-4:5001" or "tcp:10.0.0.1-10.0.4.1:5001")` }]);
  if (old[1] !== '*') out.proto = old[1] as 'tcp' | 'udp';
  if (old[2] !== '*') out.srcIp = old[2]!;
  const sp = port(old[3]!, '/srcPort');
  if (sp !== undefined) out.srcPort = sp;
  if (old[4] !== '*') out.dstIp = old[4]!;
  const dp = port(old[5]!, '/dstPort');
  if (dp !== undefined) out.dstPort = dp;
  return out;
}
