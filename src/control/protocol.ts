import { CogmeshError, ConfigError, showValue, type ConfigIssue } from '../core/errors.js';
import { MAX_JSON_DEPTH, parseJsonText } from '../core/json.js';
import { parseFlow } from '../vnf/flow.js';
import type { FlowPattern } from '../vnf/types.js';
import type { Micros } from '../core/time.js';
import type { RouterStatus, Telemetry } from '../router/view.js';
import type { FlowSpec } from '../openflow/flow-spec.js';
import { FLOW_TEXT, parseAccText, parseFlowText } from '../openflow/flow-spec.js';

/**
 * The control API's messages (docs/control-api.md): one JSON frame per
 * request, one per reply. A request is `{"id": ANY, "cmd": NAME, ...args}`;
 * its reply echoes the id with `"ok": true, "result"` or `"ok": false,
 * "error": {code, message, issues?}`. Parsing never throws: anything a
 * client may send becomes a typed command or a typed error.
 */

/** Error codes of the control API (ConfigError's CONFIG_INVALID and the VNF manager's VNF_* come through as they are). */
export const CONTROL_CODES = Object.freeze({
  malformed: 'CONTROL_MALFORMED',
  unknownCommand: 'CONTROL_UNKNOWN_COMMAND',
  badArgument: 'CONTROL_BAD_ARGUMENT',
  unknownPath: 'CONTROL_UNKNOWN_PATH',
  staleVersion: 'CONTROL_STALE_VERSION',
  restartOnly: 'CONTROL_RESTART_ONLY',
  persistFailed: 'CONTROL_PERSIST_FAILED',
  internal: 'CONTROL_INTERNAL',
  timeout: 'CONTROL_TIMEOUT',
  bind: 'CONTROL_BIND',
  notController: 'CONTROL_NOT_CONTROLLER',
} as const);

/** A refusal of the control API, with a stable code and, for configuration problems, the fields at fault. */
export class ControlError extends CogmeshError {
  constructor(
    code: string,
    message: string,
    readonly issues?: ConfigIssue[],
  ) {
    super(code, message);
  }
}

/** A request that got no reply in time (the node is down, or it does not take this client's CURVE key). */
export class ControlTimeoutError extends CogmeshError {
  constructor(
    readonly endpoint: string,
    readonly timeoutMs: number,
  ) {
    super(
      CONTROL_CODES.timeout,
      `the node at ${endpoint} did not answer within ${timeoutMs} ms (it is not running there, or it does not take this client: a CURVE key not on its allow-list, or no CURVE where it wants it, looks the same)`,
    );
  }
}

/** The body of an error reply. */
export interface ControlErrorBody {
  code: string;
  message: string;
  issues?: ConfigIssue[];
}

export type ControlReply = { id: unknown; ok: true; result: unknown } | { id: unknown; ok: false; error: ControlErrorBody };

/** A request the server can carry out. */
export type ControlCommand =
  | { cmd: 'status' }
  | { cmd: 'get'; path: string | undefined }
  | { cmd: 'set'; values: Record<string, unknown>; expect: string | undefined; persist: boolean }
  | { cmd: 'neighbours' }
  | { cmd: 'routes' }
  | { cmd: 'queues' }
  | { cmd: 'flows' }
  | { cmd: 'spectrum' }
  | { cmd: 'gateway' }
  | { cmd: 'vnf.list' }
  | { cmd: 'vnf.start'; type: string; flow: FlowPattern; params: unknown }
  | { cmd: 'vnf.stop'; vnf: number }
  | { cmd: 'controller.flows' }
  /** `acc`: none, every or every-K; absent: the role's controller.acc. */
  | { cmd: 'controller.add'; flow: FlowSpec; acc: string | undefined }
  | { cmd: 'controller.remove'; flow: number }
  | { cmd: 'help' };

export type CommandName = ControlCommand['cmd'];

/** A refused request names its command (`cmd`) when it names a known one: its arguments were wrong. */
export type ParsedRequest = { ok: true; id: unknown; command: ControlCommand } | { ok: false; id: unknown; error: ControlErrorBody; cmd?: string };

type ArgType = 'string' | 'object' | 'integer' | 'boolean' | 'any';

interface ArgSpec {
  name: string;
  type: ArgType;
  required: boolean;
  doc: string;
}

interface CommandSpec {
  name: CommandName;
  doc: string;
  args: ArgSpec[];
}

const arg = (name: string, type: ArgType, required: boolean, doc: string): ArgSpec => ({ name, type, required, doc });

/** Every command with its arguments (what `help` answers). */
export const COMMANDS: readonly CommandSpec[] = Object.freeze([
  { name: 'status', doc: "the router's status: R1, R2, R3, sensing, counters, drops, config version", args: [] },
  {
    name: 'get',
    doc: 'the running configuration, or one field of it, with the config version',
    args: [arg('path', 'string', false, 'dotted path, e.g. sensing or sensing.durationMs')],
  },
  {
    name: 'set',
    doc: 'changes live fields atomically (validated whole; restart-only fields refused); answers the new version and the changed paths',
    args: [
      arg('values', 'object', true, 'dotted path -> JSON value, e.g. {"sensing.durationMs": 20}'),
      arg('expect', 'string', false, 'compare-and-set: the config version the change is based on'),
      arg(
        'persist',
        'boolean',
        false,
        "true: also write the values to the router's configuration file (atomically, the previous version kept as FILE.bak); otherwise the change lasts until the router restarts",
      ),
    ],
  },
  { name: 'neighbours', doc: 'the neighbours heard on R3', args: [] },
  { name: 'routes', doc: 'the routing table (multipath AODV)', args: [] },
  { name: 'queues', doc: "R2's channel queues", args: [] },
  { name: 'flows', doc: 'traffic through this router, per flow', args: [] },
  { name: 'spectrum', doc: 'the latest sensing round (null before the first)', args: [] },
  {
    name: 'gateway',
    doc: "the gateway role: each client's virtual queue, counters, rate and share, the slices and the dependence graph (null when off)",
    args: [],
  },
  { name: 'vnf.list', doc: 'the VNF instances', args: [] },
  {
    name: 'vnf.start',
    doc: 'starts a VNF of a registered type on the flows matching a pattern',
    args: [
      arg('type', 'string', true, 'a registered VNF type, e.g. tcp-acc'),
      arg(
        'flow',
        'string',
        true,
        'PROTO:SRC-DST[:PORT][,sport=N], SRC and DST a router number, an address or *, e.g. "tcp:0-4:5001" (also "PROTO SRC:PORT > DST:PORT")',
      ),
      arg('params', 'any', false, "the type's parameters (an object, default {})"),
    ],
  },
  // The instance is "vnf", not "id": "id" is the request's own, echoed in the reply.
  { name: 'vnf.stop', doc: 'stops a VNF instance', args: [arg('vnf', 'integer', true, 'the instance id (vnf.list)')] },
  { name: 'controller.flows', doc: "the flows of this router's CETT controller (the controller role): state, path, CETT, TCP-ACC sites", args: [] },
  {
    name: 'controller.add',
    doc: 'places a flow now on its minimum-CETT path; answers its id and path',
    args: [
      arg('flow', 'string', true, `${FLOW_TEXT}, e.g. tcp:4-0:5001 or udp:0-4,label=0x100`),
      arg('acc', 'string', false, 'TCP-ACC on its relays: none, every or every-K (a TCP flow; default controller.acc, mode controller.accMode)'),
    ],
  },
  {
    name: 'controller.remove',
    doc: 'ends a flow: its entries are deleted and its VNFs stopped on every router',
    args: [arg('flow', 'integer', true, 'the flow id (controller.flows)')],
  },
  { name: 'help', doc: 'this list', args: [] },
] satisfies CommandSpec[]);

const byName = new Map<string, CommandSpec>(COMMANDS.map((c) => [c.name, c]));

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(id: unknown, code: string, message: string, issues?: ConfigIssue[]): ParsedRequest {
  return { ok: false, id, error: issues ? { code, message, issues } : { code, message } };
}

function typeOk(t: ArgType, v: unknown): boolean {
  switch (t) {
    case 'string':
      return typeof v === 'string';
    case 'object':
      return isObj(v);
    case 'integer':
      return Number.isSafeInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'any':
      return true;
  }
}

const typeWords: Record<ArgType, string> = { string: 'a string', object: 'an object', integer: 'an integer', boolean: 'true or false', any: 'a JSON value' };

/**
 * How deep a request may nest objects and arrays (a whole configuration
 * section in a `set` is some 10 levels): deeper, it is refused before
 * anything walks it, since echoing or copying it would recurse that deep.
 */
export const MAX_REQUEST_DEPTH = MAX_JSON_DEPTH;

/** A dotted configuration path: names or array indices, separated by dots. */
const DOTTED = /^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/;

/** Parses one request frame into a command, or an error reply naming what is wrong. Never throws. */
export function parseRequest(frame: Buffer | string): ParsedRequest {
  const text = typeof frame === 'string' ? frame : frame.toString('utf8');
  // Refusals say where, and quote nothing of the request (a `set` may carry a secret).
  const parsed = parseJsonText(text, MAX_REQUEST_DEPTH);
  if (!parsed.ok) {
    const e = parsed.error;
    return fail(null, CONTROL_CODES.malformed, e.kind === 'depth' ? `request has ${e.message}: no command takes that` : `request is not JSON: ${e.message}`);
  }
  const msg = parsed.value;
  if (!isObj(msg))
    return fail(null, CONTROL_CODES.malformed, `request is not a JSON object (got ${Array.isArray(msg) ? 'an array' : msg === null ? 'null' : typeof msg})`);
  const id = msg.id ?? null;
  if (id !== null && typeof id !== 'string' && typeof id !== 'number') {
    return fail(
      null,
      CONTROL_CODES.malformed,
      `"id" is a ${Array.isArray(id) ? 'list' : typeof id}: it must be a string, a number or null (it comes back in the reply)`,
    );
  }
  if (typeof id === 'string' && id.length > 256) return fail(null, CONTROL_CODES.malformed, `"id" is ${id.length} characters long: at most 256`);
  const name = msg.cmd;
  if (name === undefined) return fail(id, CONTROL_CODES.malformed, 'request has no "cmd" (e.g. {"id": 1, "cmd": "status"})');
  if (typeof name !== 'string') return fail(id, CONTROL_CODES.malformed, `"cmd" is not a string (got ${showValue(name)})`);
  const spec = byName.get(name);
  if (!spec) return fail(id, CONTROL_CODES.unknownCommand, `no command ${showValue(name)} (commands: ${COMMANDS.map((c) => c.name).join(', ')})`);
  const r = parseArgs(msg, id, spec);
  return r.ok ? r : { ...r, cmd: spec.name };
}

/** A known command's arguments. */
function parseArgs(msg: Record<string, unknown>, id: unknown, spec: CommandSpec): ParsedRequest {
  const name = spec.name;
  const argNames = spec.args.map((a) => a.name);
  for (const k of Object.keys(msg)) {
    if (k === 'id' || k === 'cmd' || argNames.includes(k)) continue;
    const takes = argNames.length === 0 ? 'takes no arguments' : `takes ${argNames.join(', ')}`;
    return fail(id, CONTROL_CODES.badArgument, `${name}: no argument ${showValue(k)} (${name} ${takes})`);
  }
  for (const a of spec.args) {
    const v = msg[a.name];
    if (v === undefined) {
      if (a.required) return fail(id, CONTROL_CODES.badArgument, `${name}: argument "${a.name}" is missing (${typeWords[a.type]}: ${a.doc})`);
      continue;
    }
    if (!typeOk(a.type, v))
      return fail(id, CONTROL_CODES.badArgument, `${name}: argument "${a.name}" is ${showValue(v)}, expected ${typeWords[a.type]} (${a.doc})`);
  }

  switch (spec.name) {
    case 'get': {
      const path = msg.path as string | undefined;
      if (path !== undefined && path !== '' && !DOTTED.test(path)) {
        return fail(id, CONTROL_CODES.badArgument, `get: path ${showValue(path)} is not a dotted path (e.g. sensing.durationMs)`);
      }
      return { ok: true, id, command: { cmd: 'get', path: path === '' ? undefined : path } };
    }
    case 'set': {
      const values = msg.values as Record<string, unknown>;
      const keys = Object.keys(values);
      if (keys.length === 0) return fail(id, CONTROL_CODES.badArgument, 'set: "values" is empty (e.g. {"sensing.durationMs": 20})');
      const bad = keys.find((k) => !DOTTED.test(k));
      if (bad !== undefined) return fail(id, CONTROL_CODES.badArgument, `set: ${showValue(bad)} in "values" is not a dotted path (e.g. sensing.durationMs)`);
      return { ok: true, id, command: { cmd: 'set', values, expect: msg.expect as string | undefined, persist: msg.persist === true } };
    }
    case 'vnf.start': {
      let flow: FlowPattern;
      try {
        flow = parseFlow(msg.flow as string, '/flow');
      } catch (e) {
        if (e instanceof ConfigError)
          return fail(id, CONTROL_CODES.badArgument, `vnf.start: argument "flow" ${showValue(msg.flow)} is not a flow pattern`, e.issues);
        throw e;
      }
      return { ok: true, id, command: { cmd: 'vnf.start', type: msg.type as string, flow, params: msg.params ?? {} } };
    }
    case 'vnf.stop':
      return { ok: true, id, command: { cmd: 'vnf.stop', vnf: msg.vnf as number } };
    case 'controller.add': {
      const acc = msg.acc as string | undefined;
      if (acc !== undefined && acc !== 'none' && !parseAccText(acc, 'split').ok) {
        return fail(id, CONTROL_CODES.badArgument, `controller.add: argument "acc" ${showValue(acc)} is not every or every-K`);
      }
      // Id 0: the controller gives the next free one.
      const flow = parseFlowText(msg.flow as string, 0, undefined);
      if (!flow.ok) return fail(id, CONTROL_CODES.badArgument, `controller.add: argument "flow": ${flow.error}`);
      return { ok: true, id, command: { cmd: 'controller.add', flow: flow.value, acc } };
    }
    case 'controller.remove':
      return { ok: true, id, command: { cmd: 'controller.remove', flow: msg.flow as number } };
    default:
      return { ok: true, id, command: { cmd: spec.name } as ControlCommand };
  }
}

/** The reply to a command carried out. */
export function okReply(id: unknown, result: unknown): ControlReply {
  return { id, ok: true, result: result ?? null };
}

/** The reply to a command refused or failed: CogmeshErrors keep their code (and a ConfigError its issues). */
export function errorReply(id: unknown, e: unknown): ControlReply {
  if (e instanceof ControlError)
    return { id, ok: false, error: e.issues ? { code: e.code, message: e.message, issues: e.issues } : { code: e.code, message: e.message } };
  if (e instanceof ConfigError) return { id, ok: false, error: { code: e.code, message: e.message, issues: e.issues } };
  if (e instanceof CogmeshError) return { id, ok: false, error: { code: e.code, message: e.message } };
  return { id, ok: false, error: { code: CONTROL_CODES.internal, message: `internal error: ${e instanceof Error ? e.message : String(e)}` } };
}

/** A reply as its one frame. */
export function encodeReply(r: ControlReply): string {
  return JSON.stringify(r, (_k, v: unknown) => (v === undefined ? null : v));
}

// ---------------------------------------------------------------------------
// Telemetry: two frames a message, the topic then the JSON body

/** Topics of the telemetry socket: `status` every telemetryPeriodMs, the others as they happen. */
export const TELEMETRY_TOPICS = Object.freeze(['status', 'spectrum', 'psd', 'r1', 'r2', 'config', 'vnf', 'neighbour', 'record'] as const);

export type TelemetryTopic = (typeof TELEMETRY_TOPICS)[number];

/** The body of a telemetry message: the event (its `kind` is the topic) and the router it came from. */
export type TelemetryBody = ({ kind: 'status'; atUs: Micros; status: RouterStatus } | Telemetry) & { node: number };

export function isTelemetryTopic(t: string): t is TelemetryTopic {
  return (TELEMETRY_TOPICS as readonly string[]).includes(t);
}

/**
 * The frames of one telemetry message. A PSD's bins go as a JSON array of
 * dBm/Hz rounded to 0.01 dB (the monitor's stream carries them as float32).
 */
export function telemetryFrames(node: number, e: { kind: 'status'; atUs: Micros; status: RouterStatus } | Telemetry): [TelemetryTopic, string] {
  return [
    e.kind,
    JSON.stringify({ node, ...e }, (_k, v: unknown) =>
      v === undefined ? null : v instanceof Float32Array ? Array.from(v, (x) => Math.round(x * 100) / 100) : v,
    ),
  ];
}
