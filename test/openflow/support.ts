import assert from 'node:assert/strict';
import type { Result } from '../../src/core/result.js';
import { flowMod, OFPG_ANY, OFPP, type FlowMod, type OfAction, type OfInstruction } from '../../src/wire/openflow/actions.js';
import type { OfError } from '../../src/openflow/errors.js';
import type { FlowStatsRequest } from '../../src/openflow/flow-table.js';

/** A FLOW_MOD with defaults: add, table 0, priority 100, no timeouts, flags 0, empty match, no instructions. */
export const mod = (over: Partial<FlowMod> = {}): FlowMod => flowMod({ priority: 100, ...over });

/** A flow or aggregate stats request with no restriction (table 0). */
export const statsReq = (over: Partial<FlowStatsRequest> = {}): FlowStatsRequest => ({
  tableId: 0,
  outPort: OFPP.ANY,
  outGroup: OFPG_ANY,
  cookie: 0n,
  cookieMask: 0n,
  match: {},
  ...over,
});

export const output = (port: number): OfAction => ({ type: 'output', port, maxLen: 0 });
export const apply = (...actions: OfAction[]): OfInstruction => ({ type: 'apply-actions', actions });
export const write = (...actions: OfAction[]): OfInstruction => ({ type: 'write-actions', actions });

const show = (e: OfError): string => `${e.type}/${e.code} (${e.detail})`;

/** The value of an ok result; fails the test naming the error otherwise. */
export function okValue<T>(r: Result<T, OfError>, what: string): T {
  if (!r.ok) assert.fail(`${what}: expected success, got ${show(r.error)}`);
  return r.value;
}

/** Asserts a refusal with the given ERROR type and code. */
export function assertRefused(r: Result<unknown, OfError>, type: OfError['type'], code: string, what: string): void {
  assert.ok(!r.ok, `${what}: expected ${type}/${code}, got success`);
  if (r.ok) return;
  assert.deepEqual([r.error.type, r.error.code], [type, code], `${what}: got ${show(r.error)}`);
}

export const ipv6 = (...tail: number[]): Uint8Array => {
  const a = new Uint8Array(16);
  a.set([0x20, 0x01, 0x0d, 0xb8]);
  a.set(tail, 16 - tail.length);
  return a;
};

export const mac = (...bytes: number[]): Uint8Array => Uint8Array.from(bytes);
