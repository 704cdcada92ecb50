import { err, ok, type Result } from '../core/result.js';
import type { FlowSpec } from './controller.js';

/** A flow as text: `PROTO:SRC-DST[:PORT][,label=L][,queue=Q]` (mesh addresses; L and Q decimal or 0x hex). */
export const FLOW_TEXT = 'PROTO:SRC-DST[:PORT][,label=L][,queue=Q]';

/**
 * `tcp:SRC-DST[:PORT]` (PORT: the destination port) or `udp:SRC-DST` as a controller flow, with
 * `label=L` (its IPv6 flow label; 0 is none) and `queue=Q` (the QoS queue its
 * entries set), each at most once. An error names the part that is wrong.
 */
export function parseFlowText(text: string, id: number, acc: FlowSpec['acc']): Result<FlowSpec, string> {
  const [head = '', ...opts] = text.split(',');
  const m = /^(tcp|udp):(\d+)-(\d+)(?::(\d+))?$/.exec(head);
  if (!m) return err(`"${text}" is not ${FLOW_TEXT} (e.g. tcp:0-4:5001 or udp:0-4,label=0x100)`);
  const [, proto, src, dst, port] = m;
  // Mesh UDP packets carry no header of their own (docs/openflow.md): an entry matching UDP ports would never match.
  if (proto === 'udp' && port !== undefined) return err(`"${text}": a UDP flow takes no port (mesh UDP packets carry none); udp:SRC-DST`);
  const spec: FlowSpec = { id, proto: proto as 'tcp' | 'udp', srcAddr: Number(src), dstAddr: Number(dst), ...(port !== undefined ? { dstPort: Number(port) } : {}), ...(acc && proto === 'tcp' ? { acc } : {}) };
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

/** `every` or `every-K`: TCP-ACC on every K-th relay. */
export function parseAccText(text: string, mode: 'split' | 'e2e'): Result<NonNullable<FlowSpec['acc']>, string> {
  const k = text === 'every' ? '1' : /^every-(\d+)$/.exec(text)?.[1];
  if (k === undefined || Number(k) < 1) return err(`"${text}" is not every or every-K (K >= 1)`);
  return ok({ mode, everyHops: Number(k) });
}
