import { applyOverrides } from '../config/load.js';
import type { NodeConfig } from '../config/types.js';
import { changedPaths, REDACTED, restartOnlyIssues, SECRET_FIELDS, type ControllerRole, type RouterView } from '../node/view.js';
import { parseAccText } from '../openflow/flow-text.js';
import { COMMANDS, CONTROL_CODES, ControlError, type ControlCommand } from './protocol.js';

/** What `set` answers. */
export interface SetResult {
  version: string;
  /** Dotted paths of the fields that changed (empty: the values were already in force). */
  changed: string[];
}

/** What `get` answers: the whole configuration, or one field. */
export type GetResult = { config: NodeConfig; version: string } | { path: string; value: unknown; version: string };

/** Secrets `get` never shows: a client with the API learns neither the server's CURVE secret nor the monitor's token. */
const SECRETS: ReadonlyArray<readonly string[]> = SECRET_FIELDS.map((f) => f.split('.'));

export { REDACTED };

/** The configuration with its secrets blanked out. */
export function redactConfig(cfg: NodeConfig): NodeConfig {
  const out = structuredClone(cfg);
  for (const path of SECRETS) {
    const parent = path.slice(0, -1).reduce<unknown>((v, k) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined), out);
    const leaf = path[path.length - 1]!;
    if (typeof parent === 'object' && parent !== null && (parent as Record<string, unknown>)[leaf] !== '') (parent as Record<string, unknown>)[leaf] = REDACTED;
  }
  return out;
}

/**
 * Carries out one command on a router. Refusals throw (ControlError,
 * ConfigError, the VNF manager's errors), and the server turns them into
 * error replies; a refused `set` changes nothing.
 */
export async function execute(view: RouterView, c: ControlCommand): Promise<unknown> {
  switch (c.cmd) {
    case 'status':
      return view.status();
    case 'get':
      return get(view, c.path);
    case 'set':
      return set(view, c.values, c.expect);
    case 'neighbours':
      return view.neighbours();
    case 'routes':
      return view.routes();
    case 'queues':
      return view.queues();
    case 'flows':
      return view.flows();
    case 'spectrum':
      return view.spectrum() ?? null;
    case 'vnf.list':
      return view.vnfs();
    case 'vnf.start':
      return view.startVnf(c.type, c.flow, c.params);
    case 'vnf.stop':
      return view.stopVnf(c.vnf);
    case 'controller.flows':
      return controllerOf(view).flows();
    case 'controller.add': {
      const role = controllerOf(view);
      // Without `acc`, the role's own controller.acc applies to a TCP flow; an `acc` given goes with the flow (a UDP flow refuses it).
      const cfg = view.config().controller;
      const text = c.acc ?? (c.flow.proto === 'tcp' ? cfg.acc : 'none');
      const acc = text === 'none' ? undefined : parseAccText(text, cfg.accMode);
      const spec = acc?.ok ? { ...c.flow, acc: acc.value } : c.flow;
      const r = role.addFlow(spec);
      if (!r.ok) throw new ControlError(CONTROL_CODES.badArgument, `controller.add: ${r.error}`);
      return r.value;
    }
    case 'controller.remove': {
      const r = controllerOf(view).removeFlow(c.flow);
      if (!r.ok) throw new ControlError(CONTROL_CODES.badArgument, `controller.remove: ${r.error}`);
      return r.value;
    }
    case 'help':
      return { commands: COMMANDS.map((s) => ({ name: s.name, doc: s.doc, args: s.args.map((a) => ({ ...a })) })) };
  }
}

/** The router's controller role, or the refusal that it has none. */
function controllerOf(view: RouterView): ControllerRole {
  const role = view.controller();
  if (!role) throw new ControlError(CONTROL_CODES.notController, 'this router does not take the controller role (controller.listen is empty)');
  return role;
}

/** The configuration, or the field at a dotted path (array items by index). */
export function get(view: RouterView, path: string | undefined): GetResult {
  const version = view.configVersion();
  const cfg = redactConfig(view.config());
  if (path === undefined) return { config: cfg, version };
  let v: unknown = cfg;
  const segs = path.split('.');
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    const here = `/${segs.slice(0, i + 1).join('/')}`;
    if (Array.isArray(v) && /^(0|[1-9]\d*)$/.test(seg) && Number(seg) < v.length) v = v[Number(seg)];
    else if (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.hasOwn(v, seg)) v = (v as Record<string, unknown>)[seg];
    else {
      const expected = Array.isArray(v)
        ? `an index of an existing item (0..${v.length - 1})`
        : typeof v === 'object' && v !== null
          ? `no such field (allowed: ${Object.keys(v).join(', ')})`
          : 'no such field (its parent is not an object)';
      throw new ControlError(CONTROL_CODES.unknownPath, `get: no field ${path} in the configuration (at ${here})`, [{ path: here, value: undefined, expected }]);
    }
  }
  return { path, value: v, version };
}

/**
 * Compare-and-set of configuration fields: the new configuration is the
 * running one with `values` applied, validated whole by the schema; a stale
 * `expect`, an invalid value, an unknown path or a field a running router
 * takes only at restart refuses the whole set, and nothing changes.
 */
export function set(view: RouterView, values: Record<string, unknown>, expect: string | undefined): SetResult {
  const current = view.configVersion();
  if (expect !== undefined && expect !== current) {
    throw new ControlError(
      CONTROL_CODES.staleVersion,
      `set refused: it expects config version ${expect} but the router runs ${current} (someone else changed it: get the configuration again and retry)`,
    );
  }
  const prev = view.config();
  // Values go in as JSON text, which applyOverrides parses back to the very same value.
  const overrides = Object.entries(values).map(([path, value]) => `${path}=${JSON.stringify(value)}`);
  const next = applyOverrides(prev, overrides, 'set');
  const changed = changedPaths(prev, next);
  if (changed.length === 0) return { version: current, changed };
  const restart = restartOnlyIssues(prev, next);
  if (restart.length > 0) {
    throw new ControlError(
      CONTROL_CODES.restartOnly,
      `set refused: ${restart.map((i) => i.path.slice(1).replaceAll('/', '.')).join(', ')} cannot change while the router runs (restart it with the new configuration)`,
      restart,
    );
  }
  const version = view.reconfigure(next);
  return { version, changed };
}
