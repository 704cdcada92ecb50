import { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { showValue, UsageError } from '../core/errors.js';
import { jsonSyntaxErrorText } from '../core/json.js';
import type { ClientCurve } from '../control/client.js';
import { ControlClient, TelemetryClient, type TelemetryMessage } from '../control/client.js';
import type { GetResult, SetResult } from '../control/commands.js';
import { isCurveKey } from '../control/curve.js';
import { curvePublicKey } from '../wire/curve-key.js';
import { ControlTimeoutError, isTelemetryTopic, TELEMETRY_TOPICS, type ControlErrorBody } from '../control/protocol.js';
import type { NeighbourView, RouteView } from '../routing/aodv.js';
import type { FlowView, QueueView, RouterStatus, SpectrumView } from '../router/view.js';
import { formatFlow } from '../vnf/flow.js';
import type { VnfInfo } from '../vnf/types.js';
import type { PathInfo } from '../openflow/controller.js';
import type { GatewayState } from '../gateway/role.js';
import { LISTED } from './listed.js';

interface CtlOpts {
  node?: string;
  serverKey?: string;
  keyFile?: string;
  timeout: string;
  json?: boolean;
}

/** What every `ctl` subcommand needs: where, how securely, how long to wait, how to print. */
interface Target {
  endpoint: string;
  curve: ClientCurve | undefined;
  timeoutMs: number;
  json: boolean;
}

async function target(cmd: Command): Promise<Target> {
  const o = cmd.optsWithGlobals<CtlOpts>();
  if (o.node === undefined) throw new UsageError("ctl: --node ENDPOINT is required (the router's control.endpoint, e.g. tcp://127.0.0.1:7700)");
  if (!/^(tcp|ipc|inproc):\/\/.+/.test(o.node))
    throw new UsageError(`--node: "${o.node}" is not a ZeroMQ endpoint (e.g. tcp://127.0.0.1:7700 or ipc:///run/cogmesh/ctl)`);
  const timeoutMs = Number(o.timeout);
  if (!(Number.isInteger(timeoutMs) && timeoutMs > 0 && timeoutMs <= 3_600_000))
    throw new UsageError(`--timeout: "${o.timeout}" is not a number of milliseconds in [1, 3600000]`);
  if ((o.serverKey === undefined) !== (o.keyFile === undefined)) {
    throw new UsageError("--server-key and --key-file go together: CURVE needs the node's public key and this client's key pair (`cogmesh keygen --out FILE`)");
  }
  let curve: ClientCurve | undefined;
  if (o.serverKey !== undefined && o.keyFile !== undefined) {
    if (!isCurveKey(o.serverKey))
      throw new UsageError(`--server-key: "${o.serverKey}" is not a CURVE public key (40 characters of Z85, as \`cogmesh keygen\` prints)`);
    curve = { serverKey: o.serverKey, ...(await readKeyFile(o.keyFile)) };
  }
  return { endpoint: o.node, curve, timeoutMs, json: o.json === true };
}

/** A key pair file as `cogmesh keygen --out` writes it; a clear error (never quoting the file) otherwise. */
export async function readKeyFile(file: string): Promise<{ publicKey: string; secretKey: string }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(`--key-file: cannot read ${file} (${code ?? (e as Error).message})`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text) as unknown;
  } catch {
    // JSON.parse's message would quote the file around the error: the secret key, maybe.
    throw new UsageError(`--key-file: ${file} is not JSON (${jsonSyntaxErrorText(text)})`);
  }
  const d = data as Record<string, unknown> | null;
  const pub = d?.publicKey;
  const sec = d?.secretKey;
  if (typeof pub !== 'string' || typeof sec !== 'string' || !isCurveKey(pub) || !isCurveKey(sec)) {
    throw new UsageError(`--key-file: ${file} is not a key pair {"publicKey","secretKey"} of Z85 CURVE keys (make one with \`cogmesh keygen --out FILE\`)`);
  }
  if (curvePublicKey(sec) !== pub)
    throw new UsageError(`--key-file: in ${file}, publicKey is not the public key of secretKey (both halves of one \`cogmesh keygen\` pair)`);
  return { publicKey: pub, secretKey: sec };
}

function refused(e: ControlErrorBody): string {
  const lines = [`cogmesh ctl: ${e.message.split('\n')[0]!.replace(/:$/, '')} [${e.code}]`];
  for (const i of e.issues ?? []) lines.push(`  ${i.path}: ${showValue(i.value)} — expected ${i.expected}`);
  return `${lines.join('\n')}\n`;
}

function timedOut(e: ControlTimeoutError): void {
  process.stderr.write(`cogmesh ctl: ${e.message} [${e.code}]\n`);
  process.exitCode = 1;
}

/** Sends one command; prints its result (raw with --json) or the refusal (exit code 1). */
async function call(cmd: Command, name: string, args: Record<string, unknown>, show: (result: never) => string): Promise<void> {
  const t = await target(cmd);
  const client = new ControlClient(t.endpoint, { curve: t.curve });
  try {
    const reply = await client.request(name, args, t.timeoutMs);
    if (!reply.ok) {
      process.stderr.write(refused(reply.error));
      process.exitCode = 1;
      return;
    }
    process.stdout.write(t.json ? `${JSON.stringify(reply.result, null, 2)}\n` : show(reply.result as never));
  } catch (e) {
    if (e instanceof ControlTimeoutError) return timedOut(e);
    throw e;
  } finally {
    client.close();
  }
}

/** `PATH=VALUE` items as the `values` of `set`: a value is JSON when it parses as JSON, otherwise a string. */
export function parseAssignments(items: readonly string[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`set: "${item}" is not PATH=VALUE (e.g. sensing.durationMs=20)`);
    const raw = item.slice(eq + 1);
    let v: unknown;
    try {
      v = JSON.parse(raw) as unknown;
    } catch {
      v = raw;
    }
    values[item.slice(0, eq)] = v;
  }
  return values;
}

/** The telemetry endpoint next to a tcp control endpoint: the port after it. */
export function defaultTelemetryEndpoint(node: string): string {
  const m = /^(tcp:\/\/.+):(\d+)$/.exec(node);
  if (!m) throw new UsageError(`watch: --telemetry ENDPOINT is needed (the default, the port after --node's, exists only for a tcp endpoint; got ${node})`);
  return `${m[1]}:${Number(m[2]) + 1}`;
}

// ---------------------------------------------------------------------------
// Text for people

/** Epoch microseconds as a UTC time of day; virtual time (small values) in seconds. */
function time(us: number | undefined | null): string {
  if (us === undefined || us === null) return '-';
  if (us > 1e15) return `${new Date(us / 1000).toISOString().slice(11, 23)}Z`;
  return `${(us / 1e6).toFixed(3)}s`;
}

const dash = (v: unknown): string => (v === undefined || v === null ? '-' : String(v));

/** Columns padded to their widest cell, numbers right-aligned. */
export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => /^-?[\d.]+$|^-$/.test(r[i] ?? '')));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(headers), ...rows.map(line)].join('\n')}\n`;
}

const none = (what: string) => `(no ${what})\n`;

const counts = (r: Record<string, number>): string =>
  Object.entries(r)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';

export function formatStatus(s: RouterStatus): string {
  return (
    [
      `node ${s.node.id} "${s.node.name}", up ${s.uptimeS.toFixed(1)} s, config ${s.configVersion}, ${s.mesh ? 'on the mesh' : 'sensing only (no medium)'}`,
      `R1  channel ${dash(s.r1.channel)} since ${time(s.r1.since)}${s.r1.reason ? ` (${s.r1.reason})` : ''}`,
      `R2  channel ${dash(s.r2.channel)}, dwell ends ${time(s.r2.dwellEndUs)}, ${s.r2.switches} switch(es)`,
      `R3  channel ${s.r3.channel}${s.r3.auth ? `, authenticated${s.r3.keys ? ` (signing with key ${s.r3.keys.sendKeyId} of ${s.r3.keys.ids.join(', ')})` : ''}: ${counts(s.r3.auth)}` : ''}`,
      `sensing  ${s.sensing.rounds} round(s), ${s.sensing.durationMs} ms every ${s.sensing.periodMs} ms, CCA ${s.sensing.ccaThresholdDbm} dBm${s.sensing.transmitPaused ? ', transmission paused' : ''}`,
      `counters ${counts(s.counters)}`,
      `drops    ${counts(s.drops)}`,
      // Said only when there is something to say: a log that lost nothing is the rule.
      ...(s.log !== undefined && (s.log.dropped > 0 || s.log.gone !== undefined)
        ? [
            `log      ${s.log.dropped} line(s) dropped${s.log.gone === undefined ? ' (its reader fell behind)' : `, writing stopped (${s.log.gone}: its reader went away)`}`,
          ]
        : []),
    ].join('\n') + '\n'
  );
}

function formatGet(r: GetResult): string {
  if ('config' in r) return `${JSON.stringify(r.config, null, 2)}\nconfig version ${r.version}\n`;
  const v = typeof r.value === 'object' && r.value !== null ? `\n${JSON.stringify(r.value, null, 2)}` : ` ${JSON.stringify(r.value)}`;
  return `${r.path} =${v}\nconfig version ${r.version}\n`;
}

function formatSet(r: SetResult): string {
  const what = r.changed.length === 0 ? `nothing changed (config version ${r.version})` : `changed ${r.changed.join(', ')}; config version ${r.version}`;
  const lasts = r.persisted
    ? `written to ${r.persisted.file} (the previous version in ${r.persisted.backup}): it survives a restart`
    : r.changed.length === 0
      ? ''
      : 'this lasts until the router restarts (--persist writes it to its configuration file)';
  return lasts === '' ? `${what}\n` : `${what}\n${lasts}\n`;
}

function formatNeighbours(ns: NeighbourView[]): string {
  if (ns.length === 0) return none('neighbours');
  return table(
    ['addr', 'R1 ch', 'last heard', 'lost at'],
    ns.map((n) => [String(n.addr), dash(n.r1Channel), time(n.lastHeardUs), time(n.lostAtUs)]),
  );
}

function formatRoutes(rs: RouteView[]): string {
  if (rs.length === 0) return none('routes');
  return table(
    ['dst', 'state', 'seq', 'next hop', 'paths (next hop: hops, cost; * chosen)'],
    rs.map((r) => [
      String(r.dst),
      r.state,
      dash(r.seq),
      dash(r.chosen),
      r.paths.map((p) => `${p.chosen ? '*' : ''}${p.nextHop}: ${p.hopCount}, ${p.pathCost.toFixed(2)}`).join('; ') || '-',
    ]),
  );
}

function formatQueues(qs: QueueView[]): string {
  if (qs.length === 0) return none('queues');
  // One column per QoS class (packets waiting in it), highest priority first.
  const names = qs[0]?.classes.map((c) => c.name) ?? [];
  return table(
    ['channel', 'packets', 'bytes', ...names],
    qs.map((q) => [String(q.channel), String(q.packets), String(q.bytes), ...names.map((n) => String(q.classes.find((c) => c.name === n)?.packets ?? 0))]),
  );
}

function formatFlows(fs: FlowView[]): string {
  if (fs.length === 0) return none('flows');
  return table(
    ['proto', 'src', 'dst', 'flow', 'label', 'role', 'packets', 'bytes', 'next hop', 'last'],
    fs.map((f) => [
      f.proto,
      String(f.src),
      String(f.dst),
      String(f.flow),
      f.label ? `0x${f.label.toString(16).padStart(5, '0')}` : '-',
      f.role,
      String(f.packets),
      String(f.bytes),
      dash(f.nextHop),
      time(f.lastUs),
    ]),
  );
}

export function formatGateway(g: GatewayState | null): string {
  if (g === null) return '(the gateway role is off)\n';
  const head = `period ${g.periodMs} ms, slices ${g.mode} (${g.sliceChanges} computed), ${g.unshaped} packet(s) unshaped\n`;
  const clients = table(
    ['client', 'prefix', 'router', 'share', 'Mbps', 'queue B', 'queued', 'sent', 'dropped', 'bytes sent'],
    g.clients.map((c) => [
      c.id,
      c.prefix,
      String(c.router),
      c.share.toFixed(4),
      c.rateMbps === 0 ? 'line' : c.rateMbps.toFixed(3),
      String(c.queueBytes),
      String(c.enqueued),
      String(c.sent),
      String(c.dropped),
      String(c.bytes),
    ]),
  );
  const slices = g.slices.map((s) => `  {${s.clients.join(', ')}}  ${s.share.toFixed(4)}\n`).join('');
  const graph = g.graph.map((e) => `  ${e.a} -- ${e.b}  ${e.kind}\n`).join('') || '  (no dependent pairs)\n';
  const sc = g.scan;
  const scan = sc
    ? `scan reports on udp ${sc.listening}: ${sc.counters.taken} taken (${sc.counters.graphChanges} changed the graph); refused: ${(['malformed', 'badMac', 'unknownClient', 'wrongSource', 'stale', 'rateLimited', 'graphRefused', 'oversized'] as const).map((k) => `${k} ${sc.counters[k]}`).join(', ')}\n${sc.latest
        .map(
          (r) =>
            `  ${r.client} (boot ${r.boot}, seq ${r.seq}): ${
              Object.entries(r.aps)
                .map(([ap, dbm]) => `${ap} ${dbm} dBm`)
                .join(', ') || 'no AP'
            }\n`,
        )
        .join('')}`
    : '';
  return `${head}${clients}slices:\n${slices || '  (none)\n'}dependence graph:\n${graph}${scan}`;
}

function formatSpectrum(s: SpectrumView | null): string {
  if (s === null) return '(no sensing round yet)\n';
  const head = `round ${s.round}, ${time(s.startUs)} to ${time(s.endUs)}\n`;
  return (
    head +
    table(
      ['ch', 'MHz', 'w', 'own w', 'RC Mbps', 'power dBm', 'busy'],
      s.channels.map((c) => [
        String(c.channel),
        c.centerMHz.toFixed(0),
        c.w.toFixed(3),
        c.ownW === undefined || c.ownW === null ? '-' : c.ownW.toFixed(3),
        (c.rcBps / 1e6).toFixed(3),
        c.powerDbm === undefined || c.powerDbm === null ? '-' : c.powerDbm.toFixed(1),
        '#'.repeat(Math.round(c.w * 20)).padEnd(20, '.'),
      ]),
    )
  );
}

function formatVnfs(vs: VnfInfo[]): string {
  if (vs.length === 0) return none('VNF instances');
  return table(
    ['id', 'type', 'state', 'flow', 'taken', 'forwarded', 'sent', 'reason'],
    vs.map((v) => [
      String(v.id),
      v.type,
      v.state,
      formatFlow(v.flow),
      String(v.packetsTaken),
      String(v.packetsForwarded),
      String(v.packetsSent),
      dash(v.reason),
    ]),
  );
}

function formatPaths(ps: PathInfo[]): string {
  if (ps.length === 0) return none('controller flows');
  return table(
    ['flow', 'state', 'path', 'CETT (ms)', 'TCP-ACC on'],
    ps.map((p) => [String(p.id), p.state, p.routers.join(' -> ') || '-', p.state === 'installed' ? (p.cett * 1000).toFixed(2) : '-', p.vnfs.join(', ') || '-']),
  );
}

const formatVnf = (v: VnfInfo): string => `vnf ${v.id} (${v.type}) ${v.state} on ${formatFlow(v.flow)}${v.reason ? ` (${v.reason})` : ''}\n`;

/** A PSD in a few words: its span, bins, and the mean and peak density (the JSON carries the bins). */
function formatPsd(p: { centerHz: number; sampleRateHz: number; segments: number; dbmPerHz: ArrayLike<number> }): string {
  const bins = p.dbmPerHz;
  const n = bins.length;
  let peak = 0;
  let mw = 0;
  for (let i = 0; i < n; i++) {
    if (bins[i]! > bins[peak]!) peak = i;
    mw += 10 ** (bins[i]! / 10);
  }
  const mhz = (i: number): string => ((p.centerHz + ((i - n / 2) * p.sampleRateHz) / n) / 1e6).toFixed(2);
  const mean = n > 0 ? (10 * Math.log10(mw / n)).toFixed(1) : '-';
  return `${mhz(0)}-${mhz(n)} MHz, ${n} bins, ${p.segments} segment(s), mean ${mean} dBm/Hz, peak ${n > 0 ? bins[peak]!.toFixed(1) : '-'} dBm/Hz at ${mhz(peak)} MHz`;
}

/** One line per telemetry message. */
export function formatTelemetry(m: TelemetryMessage): string {
  const b = m.body;
  const at = `${time(b.atUs)} r${b.node} ${m.topic.padEnd(9)}`;
  switch (b.kind) {
    case 'status': {
      const s = b.status;
      return `${at} R1 ch ${dash(s.r1.channel)}, R2 ch ${dash(s.r2.channel)}, sensing ${s.sensing.durationMs}/${s.sensing.periodMs} ms, ${s.sensing.rounds} round(s), config ${s.configVersion}\n`;
    }
    case 'spectrum':
      return `${at} round ${b.spectrum.round}: ${b.spectrum.channels.map((c) => `${c.channel}:${c.w.toFixed(2)}`).join(' ')}\n`;
    case 'psd':
      return `${at} round ${b.psd.round} channel ${b.psd.channel}: ${formatPsd(b.psd)}\n`;
    case 'r1':
      return `${at} ${b.changed ? 'moved to' : 'stays on'} channel ${dash(b.channel)} (${b.reason})\n`;
    case 'r2':
      return `${at} channel ${dash(b.channel)}\n`;
    case 'config':
      return `${at} version ${b.version}: ${b.changed.join(', ') || 'no change'}\n`;
    case 'vnf':
      return `${at} ${b.event.kind} ${b.event.id} (${b.event.type})${'reason' in b.event ? `: ${b.event.reason}` : 'error' in b.event ? `: ${b.event.error}` : ''}\n`;
    case 'neighbour':
      return `${at} ${b.addr} ${b.up ? 'up' : 'lost'}\n`;
    case 'record': {
      const r = b.recording;
      const end =
        r.state === 'recording'
          ? `started, ${r.seconds} s`
          : `${r.state} (${r.reason ?? '-'}): ${r.samples} samples in ${r.captures} captures${r.error ? `: ${r.error}` : ''}`;
      return `${at} ${r.name} ${end}\n`;
    }
  }
}

// ---------------------------------------------------------------------------
// The command

export function ctlCommand(): Command {
  const ctl = new Command('ctl')
    .description(LISTED.ctl.about)
    .option('--node <endpoint>', "the router's control endpoint (control.endpoint), e.g. tcp://127.0.0.1:7700")
    .option('--server-key <z85>', "the router's CURVE public key (control.curve.publicKey), when it runs CURVE")
    .option('--key-file <file>', "this client's CURVE key pair (`cogmesh keygen --out FILE`; its public key on the router's control.curve.allow)")
    .option('--timeout <ms>', 'how long to wait for an answer', '5000')
    .option('--json', 'print the raw result (JSON)');

  ctl
    .command('status')
    .description("the router's status: R1, R2, R3, sensing, counters, drops")
    .action((_o: unknown, cmd: Command) => call(cmd, 'status', {}, formatStatus));
  ctl
    .command('get')
    .description('the running configuration, or one field of it (secrets redacted)')
    .argument('[path]', 'dotted path, e.g. sensing or sensing.durationMs')
    .action((path: string | undefined, _o: unknown, cmd: Command) => call(cmd, 'get', path === undefined ? {} : { path }, formatGet));
  ctl
    .command('set')
    .description('change live fields at once (all or nothing); restart-only fields are refused; the change lasts until the router restarts unless --persist')
    .argument('<assignments...>', 'PATH=VALUE, the value JSON or else a string, e.g. sensing.durationMs=20')
    .option('--expect <version>', 'compare-and-set: refuse unless the router runs this config version')
    .option(
      '--persist',
      "also write the values to the router's configuration file (atomically; the previous version kept as FILE.bak), so they survive a restart",
    )
    .action((items: string[], o: { expect?: string; persist?: boolean }, cmd: Command) =>
      call(
        cmd,
        'set',
        { values: parseAssignments(items), ...(o.expect !== undefined ? { expect: o.expect } : {}), ...(o.persist ? { persist: true } : {}) },
        formatSet,
      ),
    );
  ctl
    .command('neighbours')
    .description('the neighbours heard on R3')
    .action((_o: unknown, cmd: Command) => call(cmd, 'neighbours', {}, formatNeighbours));
  ctl
    .command('routes')
    .description('the routing table')
    .action((_o: unknown, cmd: Command) => call(cmd, 'routes', {}, formatRoutes));
  ctl
    .command('queues')
    .description("R2's channel queues")
    .action((_o: unknown, cmd: Command) => call(cmd, 'queues', {}, formatQueues));
  ctl
    .command('flows')
    .description('traffic through the router, per flow')
    .action((_o: unknown, cmd: Command) => call(cmd, 'flows', {}, formatFlows));
  ctl
    .command('spectrum')
    .description('the latest sensing round')
    .action((_o: unknown, cmd: Command) => call(cmd, 'spectrum', {}, formatSpectrum));
  ctl
    .command('gateway')
    .description("the gateway role: clients' queues, rates and shares, the slices, the dependence graph")
    .action((_o: unknown, cmd: Command) => call(cmd, 'gateway', {}, formatGateway));

  const vnf = ctl.command('vnf').description('the VNF instances: list, start, stop');
  vnf
    .command('list')
    .description('every VNF instance')
    .action((_o: unknown, cmd: Command) => call(cmd, 'vnf.list', {}, formatVnfs));
  vnf
    .command('start')
    .description('start a VNF on the flows matching a pattern')
    .argument('<type>', 'a registered VNF type, e.g. tcp-acc')
    .argument(
      '<flow>',
      'PROTO:SRC-DST[:PORT][,sport=N] as the controller\'s --flow, SRC and DST a router number, an address or *: tcp:0-4:5001 (the older "tcp 10.0.0.1:* > 10.0.4.1:5001" is still taken)',
    )
    .argument('[params]', 'the type\'s parameters as JSON, e.g. \'{"mode":"split"}\'')
    .action((type: string, flow: string, params: string | undefined, _o: unknown, cmd: Command) => {
      let p: unknown = {};
      if (params !== undefined) {
        try {
          p = JSON.parse(params) as unknown;
        } catch (e) {
          throw new UsageError(`vnf start: params ${JSON.stringify(params)} is not JSON (${(e as Error).message})`);
        }
      }
      return call(cmd, 'vnf.start', { type, flow, params: p }, formatVnf);
    });
  vnf
    .command('stop')
    .description('stop a VNF instance')
    .argument('<id>', 'the instance id (vnf list)')
    .action((id: string, _o: unknown, cmd: Command) => {
      const n = Number(id);
      if (!Number.isSafeInteger(n) || n < 0) throw new UsageError(`vnf stop: "${id}" is not an instance id (an integer, see vnf list)`);
      return call(cmd, 'vnf.stop', { vnf: n }, formatVnf);
    });

  const controller = ctl.command('controller').description("the router's CETT controller (the controller role): flows, add, remove");
  controller
    .command('flows')
    .description('its flows: state, path, CETT, TCP-ACC sites')
    .action((_o: unknown, cmd: Command) => call(cmd, 'controller.flows', {}, formatPaths));
  controller
    .command('add')
    .description('place a flow now on its minimum-CETT path')
    .argument('<flow>', 'PROTO:SRC-DST[:PORT][,label=L][,queue=Q], e.g. tcp:4-0:5001 or udp:0-4,label=0x100')
    .option('--acc <none|every|every-K>', "TCP-ACC on its relays (default: the controller's controller.acc)")
    .action((flow: string, o: { acc?: string }, cmd: Command) =>
      call(cmd, 'controller.add', { flow, ...(o.acc !== undefined ? { acc: o.acc } : {}) }, (p: PathInfo) => formatPaths([p])),
    );
  controller
    .command('remove')
    .description('end a flow: its entries are deleted and its VNFs stopped on every router')
    .argument('<id>', 'the flow id (controller flows)')
    .action((id: string, _o: unknown, cmd: Command) => {
      const n = /^\d{1,15}$/.test(id) ? Number(id) : NaN;
      if (!Number.isSafeInteger(n)) throw new UsageError(`controller remove: "${id}" is not a flow id (a decimal integer, see controller flows)`);
      return call(cmd, 'controller.remove', { flow: n }, (r: { id: number }) => `flow ${r.id} removed\n`);
    });

  ctl
    .command('watch')
    .description(`print telemetry as it comes (topics: ${TELEMETRY_TOPICS.join(', ')}; all when none named); Ctrl-C stops`)
    .argument('[topics...]', 'topics to watch')
    .option('--telemetry <endpoint>', "the router's telemetry endpoint (default: --node's port + 1)")
    .option('--count <n>', 'stop after this many messages')
    .action(async (topics: string[], o: { telemetry?: string; count?: string }, cmd: Command) => {
      const t = await target(cmd);
      const bad = topics.find((x) => !isTelemetryTopic(x));
      if (bad !== undefined) throw new UsageError(`watch: no topic "${bad}" (topics: ${TELEMETRY_TOPICS.join(', ')})`);
      const count = o.count === undefined ? Infinity : Number(o.count);
      if (!(count === Infinity || (Number.isSafeInteger(count) && count > 0))) throw new UsageError(`--count: "${o.count}" is not a positive integer`);
      const endpoint = o.telemetry ?? defaultTelemetryEndpoint(t.endpoint);
      if (!/^(tcp|ipc|inproc):\/\/.+/.test(endpoint)) throw new UsageError(`--telemetry: "${endpoint}" is not a ZeroMQ endpoint`);
      // Each message waits at most --timeout when it is given; otherwise for ever.
      const waitMs = cmd.getOptionValueSourceWithGlobals('timeout') === 'cli' ? t.timeoutMs : undefined;
      const sub = new TelemetryClient(endpoint, topics, { curve: t.curve });
      const stop = (): void => sub.close();
      process.once('SIGINT', stop);
      try {
        for (let n = 0; n < count; n++) {
          const m = await sub.next(waitMs);
          process.stdout.write(t.json ? `${JSON.stringify({ topic: m.topic, ...m.body })}\n` : formatTelemetry(m));
        }
      } catch (e) {
        if (e instanceof ControlTimeoutError) {
          process.stderr.write(
            `cogmesh ctl: no telemetry from ${endpoint} within ${t.timeoutMs} ms (the router is not publishing there, or it does not take this client: a CURVE key not on its allow-list looks the same) [${e.code}]\n`,
          );
          process.exitCode = 1;
        } else if (!sub.closed) throw e;
      } finally {
        process.off('SIGINT', stop);
        if (!sub.closed) sub.close();
      }
    });
  return ctl;
}
