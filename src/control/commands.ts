import type { NodeConfig } from '../config/types.js';
import { type ControllerRole, type RouterView } from '../router/view.js';
import { liveChange, redactConfig } from '../config/live.js';
import { withoutSecretValues } from '../config/load.js';
import { ConfigError } from '../core/errors.js';
import { setPaths, valueAt } from '../core/schema.js';
import type { ConfigFile } from '../config/persist.js';
import { parseAccText } from '../openflow/flow-spec.js';
import { COMMANDS, CONTROL_CODES, ControlError, type ControlCommand } from './protocol.js';

/** What `set` answers. */
export interface SetResult {
  version: string;
  /** Dotted paths of the fields that changed (empty: the values were already in force). */
  changed: string[];
  /** How long the change lasts: until the router restarts, or across restarts (written to its configuration file). */
  lasts: 'until-restart' | 'across-restarts';
  /** With `persist`: the file written and the backup of its previous version. */
  persisted?: { file: string; backup: string };
}

/** What `get` answers: the whole configuration, or one field. */
export type GetResult = { config: NodeConfig; version: string } | { path: string; value: unknown; version: string };

/**
 * Carries out one command on a router. Refusals throw (ControlError,
 * ConfigError, the VNF manager's errors), and the server turns them into
 * error replies; a refused `set` changes nothing.
 */
export async function execute(view: RouterView, c: ControlCommand, file?: ConfigFile): Promise<unknown> {
  switch (c.cmd) {
    case 'status':
      return view.status();
    case 'get':
      return get(view, c.path);
    case 'set':
      return c.persist ? setPersisted(view, file, c.values, c.expect) : set(view, c.values, c.expect);
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
    case 'gateway':
      return view.gateway?.() ?? null;
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
      const cfg = view.runningConfig().controller;
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
  if (!role)
    throw new ControlError(CONTROL_CODES.notController, 'this router does not take the controller role (controller.listen and controller.connect are empty)');
  return role;
}

/** The configuration, or the field at a dotted path (array items by index). */
export function get(view: RouterView, path: string | undefined): GetResult {
  const version = view.configVersion();
  const cfg = redactConfig(view.runningConfig());
  if (path === undefined) return { config: cfg, version };
  const r = valueAt(cfg, path.split('.'));
  if (!r.ok)
    throw new ControlError(CONTROL_CODES.unknownPath, `get: no field ${path} in the configuration (at ${r.at})`, [
      { path: r.at, value: undefined, expected: r.expected },
    ]);
  return { path, value: r.value, version };
}

/**
 * Compare-and-set of configuration fields: the new configuration is the
 * running one with `values` applied, checked once, whole (the schema, on the
 * sections the paths name: the others are the running configuration's; and
 * the loader's rules); a stale `expect`, an invalid value, an unknown path or a
 * field a running router takes only at restart refuses the whole set, and
 * nothing changes.
 */
export function set(view: RouterView, values: Record<string, unknown>, expect: string | undefined): SetResult {
  const current = refuseStale(view, expect);
  // setPaths copies the sections the paths name; they are this set's own, so they are checked in place. The others
  // stay the running configuration's objects: nothing checks, fills or changes them, and a configuration is never
  // changed once it runs.
  const prev = view.runningConfig();
  const entries = Object.entries(values);
  const { doc, issues } = setPaths(prev, entries, { shareOthers: true });
  if (issues.length > 0) throw new ConfigError(withoutSecretValues(issues), 'set');
  // The copy differs from the running configuration (which passed) only in the sections the paths name.
  const sections = entries.map(([p]) => p.split('.', 1)[0]!);
  const change = liveChange(prev, doc, 'set', current, { take: true, sections });
  if (change.changed.length === 0) return { version: current, changed: [], lasts: 'until-restart' };
  if (change.restartOnly.length > 0) {
    throw new ControlError(
      CONTROL_CODES.restartOnly,
      `set refused: ${change.restartOnly.map((i) => i.path.slice(1).replaceAll('/', '.')).join(', ')} cannot change while the router runs (restart it with the new configuration)`,
      change.restartOnly,
    );
  }
  return { version: view.reconfigure(change), changed: change.changed, lasts: 'until-restart' };
}

/** The running config version, once `expect` (compare-and-set) is found to be it; a ControlError otherwise. */
function refuseStale(view: RouterView, expect: string | undefined): string {
  const current = view.configVersion();
  if (expect !== undefined && expect !== current) {
    throw new ControlError(
      CONTROL_CODES.staleVersion,
      `set refused: it expects config version ${expect} but the router runs ${current} (someone else changed it: get the configuration again and retry)`,
    );
  }
  return current;
}

/**
 * `set` with `persist`: the values are applied to the router's configuration
 * file as it is on disk and the result checked whole first (a file the
 * change would make invalid refuses the set before anything changes); then
 * the live set; then the file is written atomically, its previous version
 * kept as FILE.bak. If the write fails, the live change is undone and the
 * set is refused, so the router never runs a change its file does not hold.
 * Values already in force are still written: an earlier set without
 * `persist` may have left the file behind the running configuration.
 */
export async function setPersisted(
  view: RouterView,
  file: ConfigFile | undefined,
  values: Record<string, unknown>,
  expect: string | undefined,
): Promise<SetResult> {
  if (!file) {
    throw new ControlError(
      CONTROL_CODES.badArgument,
      'set refused: persist needs the configuration file this router was started from, and it was given none (`cogmesh node --config FILE` gives one)',
    );
  }
  refuseStale(view, expect);
  const write = await file.prepare(values);
  const before = view.runningConfig() as NodeConfig;
  const r = set(view, values, expect);
  try {
    await file.commit(write);
  } catch (e) {
    if (r.changed.length > 0) view.reconfigure(liveChange(view.runningConfig() as NodeConfig, before, 'set', r.version));
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new ControlError(
      CONTROL_CODES.persistFailed,
      `set refused: could not write ${file.path} or its backup ${file.backup} (${code}); the change was undone and the router runs as before`,
    );
  }
  return { ...r, lasts: 'across-restarts', persisted: { file: file.path, backup: file.backup } };
}
