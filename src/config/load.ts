import { formatPrefix, parseIpAddress, parsePrefix } from '../wire/ip.js';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import stableStringify from 'fast-json-stable-stringify';
import { ism2g4 } from '../../radio/channels.js';
import { isLoopbackHost, parseHostPort } from '../core/address.js';
import { ConfigError, RangeArgumentError, type ConfigIssue } from '../core/errors.js';
import { DependenceTracker } from '../gateway/dependence.js';
import { dependenceConfig, type GatewayConfig } from '../gateway/role.js';
import { maximalIndependentSets, SLICE_DEFAULTS } from '../gateway/slices.js';
import { curvePublicKey } from '../wire/curve-key.js';
import { curveKeyProblem } from '../wire/z85.js';
import { cloneJson, isObject, markedFields, overridePaths, readJsonFile, schemaChecker, valueOrUndefined, withheld, type Schema } from '../core/schema.js';
import { mayHoldSecret, MONITOR_TOKEN_RULE, monitorTokenProblem, secretFields, secretPlaces, withoutFields } from './secrets.js';
import type { NodeConfig } from './types.js';
import type { FlowSpec } from '../openflow/flow-spec.js';
import { checkSpec, parseAccText, parseFlowText, sameTraffic } from '../openflow/flow-spec.js';
import { parseActiveEndpoint, parsePassiveEndpoint, plainBeyondLoopback } from '../openflow/endpoint.js';

/**
 * Where a JSON Schema shipped with cogmesh lives: `config/` at the repository
 * (or package) root. This file runs from `src/config/` under tsx and from
 * `dist/src/config/` once built, so both depths are tried.
 */
export function configFilePath(name: string): string {
  const candidates = [`../../config/${name}`, `../../../config/${name}`].map((rel) => fileURLToPath(new URL(rel, import.meta.url)));
  return candidates.find((p) => existsSync(p)) ?? candidates[0]!;
}

/** Where the JSON Schema of a node's configuration lives. */
export const schemaPath: string = configFilePath('node.schema.json');

/** The schema as parsed from schemaPath (read-only; it is the one source of defaults). */
export const nodeSchema: Readonly<Schema> = JSON.parse(readFileSync(schemaPath, 'utf8')) as Schema;

/** The configuration fields a running router takes live (dotted paths; a section's path covers its fields): those the schema marks `"x-live": true`. */
export const LIVE_FIELDS: readonly string[] = Object.freeze(markedFields(nodeSchema, 'x-live'));

/**
 * The top-level sections that hold a live field: a live `set` checks only
 * the ones it changes against the schema (checkNodeConfigInPlace's
 * changedSections); a set that names another section is checked whole (and
 * then refused: it needs a restart).
 */
export const LIVE_SECTIONS: readonly string[] = Object.freeze([...new Set(LIVE_FIELDS.map((f) => f.split('.', 1)[0]!))]);

const check = schemaChecker(nodeSchema, [], { members: LIVE_SECTIONS });

/**
 * The fields whose values never leave the router (dotted paths: the
 * server's CURVE secret key, the monitor's token): the one list that `get`'s
 * redaction, the configuration version and the loader's errors all follow.
 */
export const SECRET_FIELDS: readonly string[] = secretFields(nodeSchema);

const places = secretPlaces(nodeSchema, SECRET_FIELDS);

/**
 * The problems with the value of every secret withheld (REDACTED): a
 * problem at a secret field, or at an unknown field beside one (a misspelt
 * secret), anywhere in a document, so that a refusal can be shown, logged
 * and sent back without a secret in it.
 */
export function withoutSecretValues(issues: readonly ConfigIssue[]): ConfigIssue[] {
  return issues.map((i) => (mayHoldSecret(places, i.path) ? { ...i, value: withheld(i.value) } : i));
}

/**
 * Validates `input` against the schema, fills in every default and checks
 * what the schema cannot say (cross-field rules, channels of the plan).
 * The input is never mutated. Throws ConfigError listing every problem.
 */
export function parseNodeConfig(input: unknown, source = 'configuration'): NodeConfig {
  return checkNodeConfigInPlace(cloneJson(input, source), source);
}

/**
 * What parseNodeConfig does, on a document the caller gives up (one it has
 * just built and nobody else holds): the defaults go into `data` itself, so
 * it is not copied first. `opts.changedSections`: `data` is a configuration
 * that passed, changed only in these top-level sections (a live `set`'s
 * paths): the schema is checked on those alone. `opts.since`: that
 * configuration, when it passed here with `changedSections` too: the rules
 * across fields that read none of the changed sections when they passed it
 * are not run again (`RuleReads`); the others are.
 */
export function checkNodeConfigInPlace(
  data: unknown,
  source = 'configuration',
  opts: { changedSections?: readonly string[]; since?: NodeConfig } = {},
): NodeConfig {
  const changed = opts.changedSections;
  const ruled = changed ? ruleIssuesSince(data, changed, opts.since) : undefined;
  // What is wrong with a key or the token, in words, says more than the schema's "a string": it takes that issue's place.
  const keys = ruled ? ruled.issues[0]! : keyIssues(data);
  const keyAt = new Map(keys.map((i) => [i.path, i]));
  const schemaIssues = changed ? check.members(data, changed) : check(data);
  const issues = schemaIssues.map((i) => keyAt.get(i.path) ?? i);
  const seen = new Set(issues.map((i) => i.path));
  const rest = ruled ? ruled.issues.flat() : [...keys, ...semanticIssues(data)];
  for (const issue of rest) if (!seen.has(issue.path)) issues.push(issue);
  if (issues.length > 0) throw new ConfigError(withoutSecretValues(issues), source);
  if (ruled) passedReads.set(data as object, ruled.reads);
  return data as NodeConfig;
}

/**
 * The top-level sections each rule of `RULES` read when it last passed a
 * configuration: `all` where it enumerated the root (it may depend on any).
 */
type RuleReads = ReadonlyArray<ReadonlySet<string> | 'all'>;

/** What the rules read of the configurations that passed them with `changedSections` (held no longer than those). */
const passedReads = new WeakMap<object, RuleReads>();

/**
 * The rules' issues with `data` (one list per rule of `RULES`), and what
 * each read of it. A rule is a pure function of the document: run on values
 * it has read before, it reads the same and reports the same. So a rule
 * that passed `since` (every rule did: it passed) reading none of the
 * sections `data` changes, finds nothing in `data` either, and is not run;
 * every other rule runs, its reads recorded.
 */
function ruleIssuesSince(data: unknown, changed: readonly string[], since: NodeConfig | undefined): { issues: ConfigIssue[][]; reads: RuleReads } {
  const before = since === undefined ? undefined : passedReads.get(since);
  const issues: ConfigIssue[][] = [];
  const reads: Array<ReadonlySet<string> | 'all'> = [];
  for (let i = 0; i < RULES.length; i++) {
    const was = before?.[i];
    if (was !== undefined && was !== 'all' && !changed.some((s) => was.has(s))) {
      issues.push([]);
      reads.push(was);
      continue;
    }
    const r = readsOf(RULES[i]!, data);
    issues.push(r.issues);
    reads.push(r.reads);
  }
  return { issues, reads };
}

/** Runs `rule` on `data`, recording the top-level sections it reads (`all` when it enumerates them). */
function readsOf(rule: (cfg: unknown) => ConfigIssue[], data: unknown): { issues: ConfigIssue[]; reads: ReadonlySet<string> | 'all' } {
  if (!isObject(data)) return { issues: rule(data), reads: 'all' };
  const read = new Set<string>();
  let all = false;
  const note = (k: string | symbol): void => {
    if (typeof k === 'string') read.add(k);
    else all = true;
  };
  const seen = new Proxy(data, {
    get: (t, k) => (note(k), Reflect.get(t, k)),
    has: (t, k) => (note(k), Reflect.has(t, k)),
    getOwnPropertyDescriptor: (t, k) => (note(k), Reflect.getOwnPropertyDescriptor(t, k)),
    ownKeys: (t) => ((all = true), Reflect.ownKeys(t)),
    getPrototypeOf: (t) => ((all = true), Reflect.getPrototypeOf(t)),
  });
  const issues = rule(seen);
  return { issues, reads: all ? 'all' : read };
}

/** The configuration of node `id` with every other field at its default. */
export function defaultNodeConfig(id = 1): NodeConfig {
  return parseNodeConfig({ node: { id } }, 'default configuration');
}

/**
 * Reads and validates a JSON configuration file. A missing file, a JSON
 * syntax error (with its line and column) and every invalid field are all
 * reported as a ConfigError whose source is the file's path.
 */
export async function loadNodeConfig(path: string): Promise<NodeConfig> {
  return parseNodeConfig(await readJsonFile(path), path);
}

/**
 * Applies `path=value` overrides (dotted paths, e.g. `sensing.durationMs=20`;
 * array items by index, e.g. `sim.band.pn.0.powerDbm=-40`) to a copy of `cfg`
 * and validates the result whole. A value is taken as JSON when it parses as
 * JSON, otherwise as a string. Unknown paths are refused; `cfg` is unchanged.
 */
export function applyOverrides(cfg: NodeConfig, overrides: readonly string[], source = 'overrides'): NodeConfig {
  const { doc, issues } = overridePaths(cfg, overrides);
  if (issues.length > 0) throw new ConfigError(withoutSecretValues(issues), source);
  return parseNodeConfig(doc, source);
}

/**
 * A stable version of a configuration: the first 16 hex digits of the
 * SHA-256 of its canonical JSON (keys sorted) without its secret fields
 * (SECRET_FIELDS), so equal configurations have equal versions whatever the
 * order of their keys. The secrets are left out because the version is
 * shown beside a redacted configuration: a hash over them would let anyone
 * who can `get` search offline for a short secret. Two configurations that
 * differ only in a secret have the same version.
 */
export function configVersion(cfg: NodeConfig): string {
  return versionOfSections(sectionsJson(cfg));
}

/**
 * The canonical JSON of each top-level section of a configuration, by name:
 * the parts configVersion hashes, kept so that a new version hashes again
 * only the sections that changed (ConfigVersions).
 */
export type SectionsJson = ReadonlyMap<string, string>;

/** The secret fields of each section that has some, as paths within the section. */
const secretsBySection: ReadonlyMap<string, readonly string[]> = (() => {
  const m = new Map<string, string[]>();
  for (const f of SECRET_FIELDS) {
    const dot = f.indexOf('.');
    const name = dot < 0 ? f : f.slice(0, dot);
    m.set(name, [...(m.get(name) ?? []), dot < 0 ? '' : f.slice(dot + 1)]);
  }
  return m;
})();

/**
 * The canonical JSON of `cfg`'s sections without their secrets; those not in
 * `changed` (dotted paths) are taken from `prev` when it has them.
 */
export function sectionsJson(cfg: NodeConfig, prev?: SectionsJson, changed: readonly string[] = []): Map<string, string> {
  const out = new Map<string, string>();
  const doc = cfg as unknown as Record<string, unknown>;
  for (const name of Object.keys(doc)) {
    const secrets = secretsBySection.get(name);
    // A section that is a secret as a whole is left out.
    if (secrets?.includes('')) continue;
    const kept = prev === undefined || touches(changed, name) ? undefined : prev.get(name);
    const json = kept ?? stableStringify(secrets ? withoutFields(doc[name], secrets) : doc[name]);
    // What stableStringify leaves out of an object (an undefined member) is left out here too.
    if (json !== undefined) out.set(name, json);
  }
  return out;
}

/** Whether a dotted path of `changed` is the section `name` or in it. */
function touches(changed: readonly string[], name: string): boolean {
  for (const p of changed) if (p.startsWith(name) && (p.length === name.length || p.charCodeAt(name.length) === 0x2e)) return true;
  return false;
}

/** configVersion from the sections' canonical JSON: the same text as stableStringify of the whole without its secrets, so the same hash. */
export function versionOfSections(sections: SectionsJson): string {
  const names = [...sections.keys()].sort();
  const text = `{${names.map((n) => `${JSON.stringify(n)}:${sections.get(n)!}`).join(',')}}`;
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/**
 * The version of a running configuration, kept up to date across live
 * changes: after a change, only the sections it touched are serialised
 * again (a router's whole configuration is some 3 kB of JSON; a `set`
 * usually changes one field).
 */
export class ConfigVersions {
  private sections: SectionsJson;
  private current: string;

  constructor(cfg: NodeConfig) {
    this.sections = sectionsJson(cfg);
    this.current = versionOfSections(this.sections);
  }

  get version(): string {
    return this.current;
  }

  /**
   * The version of `next`, which differs from the configuration last given
   * exactly at `changed` (changedPaths of the two), and from now on the one
   * kept.
   */
  update(next: NodeConfig, changed: readonly string[]): string {
    this.sections = sectionsJson(next, this.sections, changed);
    this.current = versionOfSections(this.sections);
    return this.current;
  }
}

// ---------------------------------------------------------------------------
// Rules the schema cannot express

/** The value at a path of a document that may not be valid yet; undefined where the path leaves it. */
function get(root: unknown, ...keys: string[]): unknown {
  return valueOrUndefined(root, keys);
}
/** The plans channels are checked against, made once: validation only asks them `has`. */
const PLANS = { 11: ism2g4(11), 13: ism2g4(13) } as const;

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

/**
 * The loader's rules, in the order of their issues: the keys' first (they
 * take the place of the schema's issues at their paths), then the checks
 * across fields (`semanticIssues`). Each is a pure function of the document,
 * reporting what the values it reads say and nothing else (no clock, file
 * or state of its own): `ruleIssuesSince` relies on it.
 */
const RULES: ReadonlyArray<(cfg: unknown) => ConfigIssue[]> = [
  keyIssues,
  sensingPeriodIssues,
  controlPlaneIssues,
  qosIssues,
  controllerIssues,
  ipIssues,
  gatewayIssues,
  channelIssues,
];

/**
 * Cross-field checks, each guarded so that a document the schema refused is
 * checked as far as it can be; the caller drops any issue on a path the
 * schema already reported.
 */
function semanticIssues(cfg: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (let i = 1; i < RULES.length; i++) issues.push(...RULES[i]!(cfg));
  return issues;
}

/** A sensing round fits in its period. */
function sensingPeriodIssues(cfg: unknown): ConfigIssue[] {
  const durationMs = get(cfg, 'sensing', 'durationMs');
  const periodMs = get(cfg, 'sensing', 'periodMs');
  if (isInt(durationMs) && isInt(periodMs) && durationMs > periodMs) {
    return [
      {
        path: '/sensing/durationMs',
        value: durationMs,
        expected: `at most sensing.periodMs (${periodMs} ms): a sensing round must fit in its period`,
      },
    ];
  }
  return [];
}

/** Channels are the plan's (and the allowed ones'), and a sensing round has the channels and the time it needs. */
function channelIssues(cfg: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const durationMs = get(cfg, 'sensing', 'durationMs');
  const count = get(cfg, 'channelPlan', 'channels');
  if (count !== 11 && count !== 13) return issues; // the schema has reported it; no plan to check channels against
  const plan = PLANS[count];
  const inPlan = `a channel of the plan ism2g4 with ${count} channels (1..${count})`;
  const checkChannel = (path: string, v: unknown): void => {
    if (isInt(v) && !plan.has(v)) issues.push({ path, value: v, expected: inPlan });
  };

  const allowed = get(cfg, 'channelPlan', 'allowed');
  const usable = new Set<number>();
  if (Array.isArray(allowed)) {
    const firstAt = new Map<number, number>();
    allowed.forEach((c: unknown, i) => {
      const path = `/channelPlan/allowed/${i}`;
      checkChannel(path, c);
      if (!isInt(c)) return;
      const first = firstAt.get(c);
      if (first !== undefined) {
        issues.push({ path, value: c, expected: `a channel not listed already (it is at /channelPlan/allowed/${first})` });
      } else {
        firstAt.set(c, i);
        if (plan.has(c)) usable.add(c);
      }
    });
  }
  const restricted = Array.isArray(allowed) && allowed.length > 0;
  const usableCount = restricted ? usable.size : count;

  checkChannel('/radios/R3/channel', get(cfg, 'radios', 'R3', 'channel'));

  const initial = get(cfg, 'channel', 'initialChannel');
  if (isInt(initial) && initial !== 0) {
    if (!plan.has(initial)) {
      issues.push({ path: '/channel/initialChannel', value: initial, expected: `0 (let the first decision pick) or ${inPlan}` });
    } else if (restricted && !usable.has(initial)) {
      issues.push({
        path: '/channel/initialChannel',
        value: initial,
        expected: `0 (let the first decision pick) or one of channelPlan.allowed (${[...usable].join(', ')})`,
      });
    }
  }

  if (get(cfg, 'channel', 'cognitive') === false && initial === 0) {
    issues.push({ path: '/channel/initialChannel', value: initial, expected: "a channel of the plan: with channel.cognitive false it is R1's fixed channel" });
  }

  const perRound = get(cfg, 'sensing', 'channelsPerRound');
  if (isInt(perRound) && perRound > usableCount) {
    issues.push({ path: '/sensing/channelsPerRound', value: perRound, expected: `0 (every channel) or at most ${usableCount}, the number of usable channels` });
  }
  // A round visits its channels in turn, paying a retune before each.
  const overheadUs = get(cfg, 'switching', 'overheadUs');
  if (isInt(perRound) && perRound <= usableCount && isInt(durationMs) && isInt(overheadUs) && get(cfg, 'channel', 'cognitive') !== false) {
    const visits = perRound === 0 ? usableCount : perRound;
    if (Math.floor((durationMs * 1000) / visits) <= overheadUs) {
      issues.push({
        path: '/sensing/durationMs',
        value: durationMs,
        expected: `long enough to visit ${visits} channel(s) with a ${overheadUs} us retune each (more than ${(visits * overheadUs) / 1000} ms), or fewer channels per round (sensing.channelsPerRound)`,
      });
    }
  }

  const checkPns = (base: string, pns: unknown): void => {
    if (!Array.isArray(pns)) return;
    pns.forEach((pn: unknown, i) => checkChannel(`${base}/${i}/channel`, get(pn, 'channel')));
  };
  checkPns('/sim/band/pn', get(cfg, 'sim', 'band', 'pn'));
  const phases = get(cfg, 'sim', 'band', 'phases');
  if (Array.isArray(phases)) phases.forEach((ph: unknown, i) => checkPns(`/sim/band/phases/${i}/pn`, get(ph, 'pn')));

  return issues;
}

/**
 * The OpenFlow agent's endpoints (src/openflow/endpoint.ts): each parses;
 * a passive agent listens beyond loopback only with TLS; the endpoint the
 * mode uses, when it is ssl: or pssl:, needs the three files of openflow.tls.
 */
function agentEndpointIssues(cfg: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const mode = get(cfg, 'openflow', 'mode');
  for (const [k, parse, usedIn] of [
    ['listen', parsePassiveEndpoint, 'passive'],
    ['controller', parseActiveEndpoint, 'active'],
  ] as const) {
    const v = get(cfg, 'openflow', k);
    if (typeof v !== 'string') continue;
    const e = parse(v);
    if (!e.ok) issues.push({ path: `/openflow/${k}`, value: v, expected: e.error });
    else if (mode !== usedIn) continue;
    else if (plainBeyondLoopback(e.value))
      issues.push({
        path: `/openflow/${k}`,
        value: v,
        expected: `a loopback address, or pssl:PORT[:HOST] with openflow.tls: whoever reaches a passive agent without TLS controls the router`,
      });
    else if (e.value.tls) issues.push(...tlsFileIssues(cfg, 'openflow', `openflow.${k} is ${v}`));
  }
  return issues;
}

/** The TLS files an ssl: or pssl: endpoint needs, each set (whether it reads as PEM is checked when the endpoint opens). */
function tlsFileIssues(cfg: unknown, section: 'openflow' | 'controller', why: string): ConfigIssue[] {
  const what = { privateKey: 'its private key', certificate: 'its certificate', caCert: "the CA certificate of the peers' certificates" };
  return (Object.keys(what) as Array<keyof typeof what>).flatMap((k) => {
    const v = get(cfg, section, 'tls', k);
    return v === '' ? [{ path: `/${section}/tls/${k}`, value: v, expected: `the path of a PEM file, ${what[k]}: ${why} (TLS)` }] : [];
  });
}

/** The controller role: endpoints that parse (with the TLS files a TLS one needs), and flows that parse. */
function controllerIssues(cfg: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const tlsBy: string[] = [];
  const listen = get(cfg, 'controller', 'listen');
  if (typeof listen === 'string' && listen !== '') {
    const e = parsePassiveEndpoint(listen);
    if (!e.ok) issues.push({ path: '/controller/listen', value: listen, expected: `${e.error}, or empty (not listening)` });
    else if (e.value.tls) tlsBy.push(`controller.listen is ${listen}`);
  }
  const connect = get(cfg, 'controller', 'connect');
  if (Array.isArray(connect)) {
    connect.forEach((c: unknown, i) => {
      if (typeof c !== 'string') return;
      const e = parseActiveEndpoint(c);
      if (!e.ok) issues.push({ path: `/controller/connect/${i}`, value: c, expected: e.error });
      else if (e.value.tls) tlsBy.push(`controller.connect.${i} is ${c}`);
    });
  }
  if (tlsBy.length > 0) issues.push(...tlsFileIssues(cfg, 'controller', tlsBy[0]!));
  const acc = get(cfg, 'controller', 'acc');
  if (typeof acc === 'string' && acc !== 'none' && !parseAccText(acc, 'split').ok)
    issues.push({ path: '/controller/acc', value: acc, expected: 'none, every, or every-K (TCP-ACC on every K-th relay, K >= 1)' });
  const flows = get(cfg, 'controller', 'flows');
  if (Array.isArray(flows)) {
    const specs: FlowSpec[] = [];
    flows.forEach((f: unknown, i) => {
      if (typeof f !== 'string') return;
      const r = parseFlowText(f, i + 1, undefined);
      const bad = r.ok ? checkSpec(r.value) : r.error;
      const twice = r.ok ? specs.find((s) => sameTraffic(s, r.value)) : undefined;
      if (bad !== undefined) issues.push({ path: `/controller/flows/${i}`, value: f, expected: `a flow the controller can place: ${bad}` });
      else if (twice)
        issues.push({ path: `/controller/flows/${i}`, value: f, expected: `a flow not listed already (it is at /controller/flows/${twice.id - 1})` });
      if (r.ok) specs.push(r.value);
    });
  }
  return issues;
}

/** QoS classes: each name, label and queue belongs to one class. */
/** The ip section: addresses of the right family, prefixes without host bits, none listed twice. */
function ipIssues(cfg: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const [k, version] of [
    ['ipv4', 4],
    ['ipv6', 6],
  ] as const) {
    const v = get(cfg, 'ip', k);
    if (typeof v !== 'string' || v === '') continue;
    const a = parseIpAddress(v);
    if (!a || a.length !== (version === 4 ? 4 : 16))
      issues.push({ path: `/ip/${k}`, value: v, expected: `an IPv${version} address, or empty (the address plan's)` });
  }
  for (const k of ['prefixes', 'meshRoutes'] as const) {
    const list = get(cfg, 'ip', k);
    if (!Array.isArray(list)) continue;
    const seen = new Map<string, number>();
    list.forEach((v: unknown, i) => {
      if (typeof v !== 'string') return;
      const p = parsePrefix(v);
      if (!p.ok) return void issues.push({ path: `/ip/${k}/${i}`, value: v, expected: `a prefix in CIDR notation: ${p.error}` });
      const key = formatPrefix(p.value);
      const first = seen.get(key);
      if (first !== undefined) issues.push({ path: `/ip/${k}/${i}`, value: v, expected: `a prefix not listed already (it is at /ip/${k}/${first})` });
      else seen.set(key, i);
    });
  }
  return issues;
}

/**
 * The gateway section: client ids and prefixes each listed once, prefixes
 * without host bits; static sets of known clients, each once a set, shares
 * summing to at most 1 and given with mode static; line rate only without
 * adaptation; positions of routers each once, with a range to use them.
 */
function gatewayIssues(cfg: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const ids = new Map<string, number>();
  const clients = get(cfg, 'gateway', 'clients');
  const prefixes = new Map<string, number>();
  if (Array.isArray(clients)) {
    clients.forEach((c: unknown, i) => {
      const id = get(c, 'id');
      if (typeof id === 'string') {
        const first = ids.get(id);
        if (first !== undefined) issues.push({ path: `/gateway/clients/${i}/id`, value: id, expected: `an id no other client has (client ${first} has it)` });
        else ids.set(id, i);
      }
      const v = get(c, 'prefix');
      if (typeof v !== 'string') return;
      const p = parsePrefix(v);
      if (!p.ok) return void issues.push({ path: `/gateway/clients/${i}/prefix`, value: v, expected: `a prefix in CIDR notation: ${p.error}` });
      const key = formatPrefix(p.value);
      const first = prefixes.get(key);
      if (first !== undefined)
        issues.push({ path: `/gateway/clients/${i}/prefix`, value: v, expected: `a prefix no other client has (client ${first} has it)` });
      else prefixes.set(key, i);
    });
  }
  const mode = get(cfg, 'gateway', 'slicing', 'mode');
  const sets = get(cfg, 'gateway', 'slicing', 'static');
  if (Array.isArray(sets)) {
    let total = 0;
    sets.forEach((s: unknown, i) => {
      const share = get(s, 'share');
      if (typeof share === 'number') total += share;
      const members = get(s, 'clients');
      if (!Array.isArray(members)) return;
      const seen = new Set<unknown>();
      members.forEach((m: unknown, k) => {
        const at = `/gateway/slicing/static/${i}/clients/${k}`;
        if (typeof m === 'string' && !ids.has(m))
          issues.push({ path: at, value: m, expected: `the id of a client in gateway.clients (${[...ids.keys()].join(', ') || 'none'})` });
        else if (seen.has(m)) issues.push({ path: at, value: m, expected: 'a client not listed already in this set' });
        seen.add(m);
      });
    });
    if (total > 1 + 1e-9) issues.push({ path: '/gateway/slicing/static', value: sets, expected: `shares summing to at most 1 (they sum to ${total})` });
    if (mode === 'static' && sets.length === 0 && get(cfg, 'gateway', 'enabled') === true)
      issues.push({ path: '/gateway/slicing/static', value: sets, expected: 'at least one set with mode static (else no client is ever served)' });
    if (mode === 'computed' && sets.length > 0)
      issues.push({ path: '/gateway/slicing/static', value: sets, expected: 'no sets with mode computed (or mode static)' });
  }
  const listen = get(cfg, 'gateway', 'scan', 'listen');
  if (typeof listen === 'string' && listen !== '' && parseIpAddress(listen) === undefined)
    issues.push({ path: '/gateway/scan/listen', value: listen, expected: 'an IPv4 or IPv6 address, or empty (every address)' });
  const aps = get(cfg, 'gateway', 'scan', 'aps');
  if (Array.isArray(aps)) {
    const names = new Map<unknown, number>();
    aps.forEach((a: unknown, i) => {
      const name = get(a, 'name');
      const first = names.get(name);
      if (first !== undefined) issues.push({ path: `/gateway/scan/aps/${i}/name`, value: name, expected: `a name not given already (aps/${first} has it)` });
      else names.set(name, i);
    });
  }
  if (get(cfg, 'gateway', 'rate', 'adapt') === true && get(cfg, 'gateway', 'rate', 'rateMbps') === 0)
    issues.push({ path: '/gateway/rate/rateMbps', value: 0, expected: 'a rate > 0 to start rate adaptation from (0, line rate, only with rate.adapt false)' });
  const minRate = get(cfg, 'gateway', 'rate', 'minRateMbps');
  const maxRate = get(cfg, 'gateway', 'rate', 'maxRateMbps');
  if (typeof minRate === 'number' && typeof maxRate === 'number' && maxRate > 0 && maxRate < minRate)
    issues.push({ path: '/gateway/rate/maxRateMbps', value: maxRate, expected: `0 (no cap) or at least rate.minRateMbps (${minRate})` });
  const pairs = get(cfg, 'gateway', 'interferingAps');
  if (Array.isArray(pairs))
    pairs.forEach((p: unknown, i) => {
      if (!Array.isArray(p) || p.length !== 2) return;
      if (p[0] === p[1]) issues.push({ path: `/gateway/interferingAps/${i}`, value: p, expected: 'two different routers' });
      else if (Array.isArray(clients) && !p.every((r) => clients.some((c) => get(c, 'router') === r)))
        issues.push({ path: `/gateway/interferingAps/${i}`, value: p, expected: 'two routers that clients of gateway.clients are behind' });
    });
  const positions = get(cfg, 'gateway', 'apPositions');
  if (Array.isArray(positions)) {
    const at = new Map<unknown, number>();
    positions.forEach((p: unknown, i) => {
      const r = get(p, 'router');
      const first = at.get(r);
      if (first !== undefined)
        issues.push({ path: `/gateway/apPositions/${i}/router`, value: r, expected: `a router given one position (it is at /gateway/apPositions/${first})` });
      else at.set(r, i);
    });
  }
  if (get(cfg, 'gateway', 'rate', 'adapt') === true) {
    const rate = get(cfg, 'gateway', 'rate', 'rateMbps');
    if (typeof rate === 'number' && rate > 0 && typeof minRate === 'number' && rate < minRate)
      issues.push({ path: '/gateway/rate/rateMbps', value: rate, expected: `at least rate.minRateMbps (${minRate}) to start rate adaptation from` });
    if (typeof rate === 'number' && typeof maxRate === 'number' && maxRate > 0 && rate > maxRate)
      issues.push({ path: '/gateway/rate/rateMbps', value: rate, expected: `at most rate.maxRateMbps (${maxRate}) to start rate adaptation from` });
  }
  if (issues.length === 0 && mode === 'computed' && Array.isArray(clients) && clients.length > 0) issues.push(...gatewayGraphIssues(get(cfg, 'gateway')));
  return issues;
}

/**
 * Computed slices need the maximal independent sets of the dependence graph,
 * which computeSlices takes up to a cap: the graph of the configuration alone
 * (same router, Type II) must be within it. Reports only add edges to it.
 */
function gatewayGraphIssues(gateway: unknown): ConfigIssue[] {
  const g = gateway as GatewayConfig;
  if (![g.clients, g.interferingAps, g.apPositions].every(Array.isArray)) return [];
  let edges: Array<[number, number]>;
  try {
    edges = new DependenceTracker(dependenceConfig(g)).graph.edges.map((e) => [e.a, e.b]);
  } catch {
    return []; // a section the schema refuses, which it has reported
  }
  try {
    maximalIndependentSets(g.clients.length, edges);
    return [];
  } catch (e) {
    if (!(e instanceof RangeArgumentError)) throw e;
    return [
      {
        path: '/gateway/clients',
        value: `${g.clients.length} clients`,
        expected: `clients whose dependence graph (same router, Type II) has at most ${SLICE_DEFAULTS.maxSets} maximal independent sets for computed slices, or slicing.mode static`,
      },
    ];
  }
}

function qosIssues(cfg: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const classes = get(cfg, 'qos', 'classes');
  if (!Array.isArray(classes)) return issues;
  for (const key of ['name', 'label', 'queue'] as const) {
    const first = new Map<unknown, number>();
    classes.forEach((c: unknown, i) => {
      const v = get(c, key);
      if (v === undefined) return;
      const at = first.get(v);
      if (at === undefined) first.set(v, i);
      else issues.push({ path: `/qos/classes/${i}/${key}`, value: v, expected: `a ${key} no other class has (class ${at} has it)` });
    });
  }
  return issues;
}

/**
 * The medium link: an endpoint it can be; beyond loopback, CURVE keys (a
 * medium reachable from the network lets in only the routers it knows,
 * and this router must know it is talking to that medium).
 */
function mediumLinkIssues(cfg: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const medium = get(cfg, 'sim', 'medium', 'endpoint');
  const keys = (['serverKey', 'publicKey', 'secretKey'] as const).map((k) => [k, get(cfg, 'sim', 'medium', 'curve', k)] as const);
  const given = keys.filter(([, v]) => typeof v === 'string' && v !== '');
  const curve = given.length === keys.length;
  if (given.length > 0 && !curve) {
    const [missing] = keys.find(([, v]) => v === '')!;
    issues.push({ path: `/sim/medium/curve/${missing}`, value: '', expected: 'set with the two other keys of sim.medium.curve (all three, or none)' });
  }
  if (typeof medium !== 'string' || medium === '') return issues;
  if (!LINK_ENDPOINT.test(medium)) {
    issues.push({ path: '/sim/medium/endpoint', value: medium, expected: 'the medium link endpoint: tcp://HOST:PORT or ipc://PATH' });
  } else if (medium.startsWith('ipc://') && given.length > 0) {
    issues.push({ path: '/sim/medium/curve', value: '(keys)', expected: 'no keys: CURVE runs over tcp only, and the medium endpoint is ipc' });
  } else if (!isLocalEndpoint(medium) && !curve) {
    issues.push({
      path: '/sim/medium/endpoint',
      value: medium,
      expected:
        "a loopback or ipc endpoint, or CURVE keys in sim.medium.curve (the medium's public key and this router's pair): a medium beyond this machine lets in only the routers on its allow-list",
    });
  }
  return issues;
}

/** tcp://HOST:PORT or ipc://PATH. */
const LINK_ENDPOINT = /^(tcp:\/\/(\[[0-9a-fA-F:.]+\]|[^:/\s]+):\d{1,5}|ipc:\/\/.+)$/;

/**
 * What is wrong with a band hub endpoint (`sim.band.hub`, `cogmesh band
 * --bind`), or undefined: it must be tcp or ipc, and stay on this machine,
 * since the bands it links share the machine's wall clock.
 */
export function bandHubEndpointProblem(endpoint: string): string | undefined {
  if (!LINK_ENDPOINT.test(endpoint)) return 'the band hub endpoint: tcp://HOST:PORT or ipc://PATH';
  if (!isLocalEndpoint(endpoint)) return "a loopback or ipc endpoint: the bands a hub links share this machine's wall clock";
  return undefined;
}

/** Whether a ZeroMQ endpoint or a host:port stays on this machine (loopback or ipc). */
export function isLocalEndpoint(endpoint: string): boolean {
  if (endpoint.startsWith('ipc://') || endpoint.startsWith('inproc://')) return true;
  const host = endpoint
    .replace(/^[a-z]+:\/\//, '')
    .replace(/:[^:\]]*$/, '')
    .replace(/^\[|\]$/g, '');
  return isLoopbackHost(host);
}

/**
 * The keys of the control API and the monitor: each CURVE key that is not
 * one, and why; a key pair whose halves do not belong together; a monitor
 * token of fewer than 128 bits. In words that never quote a secret (its
 * `value` withheld): a length, an alphabet, a count of bits.
 */
function keyIssues(cfg: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const keyIssue = (path: string, v: unknown, what: string, secret = false): void => {
    const problem = typeof v === 'string' && v !== '' ? curveKeyProblem(v) : undefined;
    if (problem === undefined) return;
    issues.push({
      path,
      value: secret ? withheld(v) : v,
      expected: `${what}, 40 characters of Z85 (\`cogmesh keygen\` makes a pair): this one has ${problem}`,
    });
  };
  // A pair whose public key is not its secret key's: every peer (told the public key) would fail its handshake.
  const pairIssue = (at: string, pub: unknown, sec: unknown): void => {
    if (typeof pub === 'string' && typeof sec === 'string' && pub !== '' && curveKeyProblem(pub) === undefined && curveKeyProblem(sec) === undefined) {
      if (curvePublicKey(sec) !== pub) {
        issues.push({
          path: `/${at.replaceAll('.', '/')}/publicKey`,
          value: pub,
          expected: `the public key of ${at}.secretKey (this one belongs to another secret key): both halves of one \`cogmesh keygen\` pair`,
        });
      }
    }
  };
  const pub = get(cfg, 'control', 'curve', 'publicKey');
  const sec = get(cfg, 'control', 'curve', 'secretKey');
  keyIssue('/control/curve/publicKey', pub, 'a CURVE public key');
  keyIssue('/control/curve/secretKey', sec, 'a CURVE secret key', true);
  const allow = get(cfg, 'control', 'curve', 'allow');
  if (Array.isArray(allow)) allow.forEach((k: unknown, i) => keyIssue(`/control/curve/allow/${i}`, k, "a client's CURVE public key"));
  pairIssue('control.curve', pub, sec);
  const medium = (k: string): unknown => get(cfg, 'sim', 'medium', 'curve', k);
  keyIssue('/sim/medium/curve/serverKey', medium('serverKey'), "the medium's CURVE public key");
  keyIssue('/sim/medium/curve/publicKey', medium('publicKey'), "this router's CURVE public key");
  keyIssue('/sim/medium/curve/secretKey', medium('secretKey'), "this router's CURVE secret key", true);
  pairIssue('sim.medium.curve', medium('publicKey'), medium('secretKey'));
  const token = get(cfg, 'monitor', 'token');
  const weak = typeof token === 'string' && token !== '' ? monitorTokenProblem(token) : undefined;
  if (weak !== undefined) issues.push({ path: '/monitor/token', value: withheld(token), expected: `${MONITOR_TOKEN_RULE}: this one has ${weak}` });
  return issues;
}

/** The control API and the monitor: encrypted and authenticated beyond loopback; traffic that names real ends. */
function controlPlaneIssues(cfg: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const pub = get(cfg, 'control', 'curve', 'publicKey');
  const sec = get(cfg, 'control', 'curve', 'secretKey');
  const curve = typeof sec === 'string' && sec !== '';
  if (typeof pub === 'string' && typeof sec === 'string' && (pub === '') !== (sec === '')) {
    issues.push({
      path: pub === '' ? '/control/curve/publicKey' : '/control/curve/secretKey',
      value: pub === '' ? pub : sec,
      expected: 'set together with the other key of the pair (`cogmesh keygen`), or both empty',
    });
  }
  for (const k of ['endpoint', 'telemetry'] as const) {
    const e = get(cfg, 'control', k);
    if (typeof e !== 'string' || e === '') continue;
    if (!/^(tcp|ipc|inproc):\/\/.+/.test(e))
      issues.push({ path: `/control/${k}`, value: e, expected: 'a ZeroMQ endpoint such as tcp://127.0.0.1:7700 or ipc:///run/cogmesh/ctl' });
    else if (!isLocalEndpoint(e) && !curve)
      issues.push({
        path: `/control/${k}`,
        value: e,
        expected:
          'a loopback or ipc endpoint, or CURVE keys in control.curve: the API is encrypted and authenticated whenever it is reachable from beyond this machine',
      });
  }
  const listen = get(cfg, 'monitor', 'listen');
  if (typeof listen === 'string' && listen !== '') {
    if (!parseHostPort(listen)) issues.push({ path: '/monitor/listen', value: listen, expected: 'host:port, e.g. 127.0.0.1:8080' });
    else if (!isLocalEndpoint(listen) && get(cfg, 'monitor', 'token') === '') {
      issues.push({ path: '/monitor/token', value: '', expected: `${MONITOR_TOKEN_RULE}: the monitor listens beyond loopback (${listen})` });
    }
  }
  issues.push(...agentEndpointIssues(cfg));
  const rmin = get(cfg, 'openflow', 'reconnectMinMs');
  const rmax = get(cfg, 'openflow', 'reconnectMaxMs');
  if (isInt(rmin) && isInt(rmax) && rmax < rmin)
    issues.push({ path: '/openflow/reconnectMaxMs', value: rmax, expected: `at least openflow.reconnectMinMs (${rmin} ms)` });
  issues.push(...mediumLinkIssues(cfg));
  const hub = get(cfg, 'sim', 'band', 'hub');
  const hubProblem = typeof hub === 'string' && hub !== '' ? bandHubEndpointProblem(hub) : undefined;
  if (hubProblem !== undefined) issues.push({ path: '/sim/band/hub', value: hub, expected: hubProblem });
  const flows = get(cfg, 'traffic', 'flows');
  if (Array.isArray(flows)) {
    const ids = new Map<number, number>();
    flows.forEach((f: unknown, i) => {
      const id = get(f, 'id');
      if (isInt(id)) {
        const first = ids.get(id);
        if (first !== undefined)
          issues.push({ path: `/traffic/flows/${i}/id`, value: id, expected: `an id no other flow has (/traffic/flows/${first} has it)` });
        else ids.set(id, i);
      }
      if (isInt(get(f, 'src')) && get(f, 'src') === get(f, 'dst'))
        issues.push({ path: `/traffic/flows/${i}/dst`, value: get(f, 'dst'), expected: 'a router other than the source' });
    });
  }
  return issues;
}
