import { channel } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import { Context, Publisher, Router } from 'zeromq';
import type { NodeConfig } from '../config/types.js';
import type { Logger } from '../core/log.js';
import { budgetNote, REFUSAL_LOG_LINES, refusalLogBudget } from '../core/log-budget.js';
import { RealClock } from '../core/time.js';
import type { RouterView, Telemetry } from '../router/view.js';
import { execute, type SetResult } from './commands.js';
import type { ConfigFile } from '../config/persist.js';
import { ZAP_DOMAIN, ZapHandler } from './curve.js';
import { CONTROL_CODES, ControlError, encodeReply, errorReply, okReply, parseRequest, telemetryFrames, type ControlReply } from './protocol.js';

/** Requests larger than this drop their connection (ZMQ_MAXMSGSIZE): no request needs a megabyte. */
export const MAX_REQUEST_BYTES = 1 << 20;

/**
 * Refused CURVE handshakes logged at most: 5 lines a minute. Anyone who can
 * reach the port can make a refusal; each is counted (zapDenied), and the
 * line after a quiet spell says how many went unlogged.
 */
export const DENIED_LOG_LINES = REFUSAL_LOG_LINES;

/** Telemetry messages waiting for the PUB socket beyond this are dropped (and counted). */
const MAX_PENDING_TELEMETRY = 1000;

/**
 * One request served, as `requestChannel` tells a tracer in the router's
 * process: when (performance.now(), in ms) the request came off the socket,
 * its reply was ready, and the reply was handed back to the socket.
 */
export interface RequestTrace {
  ok: boolean;
  receivedMs: number;
  repliedMs: number;
  sentMs: number;
}

/**
 * Every request served, for a tracer in the same process (bench:ctl's
 * probe, node:diagnostics_channel); nothing is measured without a subscriber.
 */
export const requestChannel = channel('cogmesh:control:request');

/** What the control server did, for the router's own status. */
export interface ControlCounters {
  [name: string]: number;
  requests: number;
  /** Commands carried out. */
  ok: number;
  /** Error replies, all causes. */
  errors: number;
  /** Not JSON, not an object, no cmd, several frames. */
  malformed: number;
  unknownCommand: number;
  /** Missing, unknown or ill-typed arguments; unknown paths of `get`. */
  badArgument: number;
  /** Commands refused by the router (invalid or restart-only configuration, stale version, VNF errors). */
  refused: number;
  internal: number;
  telemetrySent: number;
  telemetryDropped: number;
  zapAllowed: number;
  zapDenied: number;
}

const zeroCounters = (): ControlCounters => ({
  requests: 0,
  ok: 0,
  errors: 0,
  malformed: 0,
  unknownCommand: 0,
  badArgument: 0,
  refused: 0,
  internal: 0,
  telemetrySent: 0,
  telemetryDropped: 0,
  zapAllowed: 0,
  zapDenied: 0,
});

/**
 * The ZeroMQ control API of one router (docs/control-api.md): a ROUTER
 * socket serving commands one at a time in arrival order (DEALER and REQ
 * clients alike), and a PUB socket for telemetry. With `curve.secretKey`
 * set both are CURVE servers with that key pair, and a ZAP handler in the
 * server's own ZeroMQ context lets in only the client keys of `curve.allow`.
 */
export class ControlServer {
  readonly counters: ControlCounters = zeroCounters();
  /**
   * Requests served per command and result (`ok`, or the error counter's
   * name: malformed, unknownCommand, badArgument, refused, internal), for the
   * monitor's Prometheus metrics. A request that names no known command
   * counts under `unknown`, so a client cannot grow the map.
   */
  readonly requestsByCommand = new Map<string, Map<string, number>>();
  private readonly deniedLog = refusalLogBudget();
  /** The budget's time (a host reads a clock; the budget itself does not). */
  private readonly clock = new RealClock();
  private context: Context | undefined;
  private router: Router | undefined;
  private pub: Publisher | undefined;
  private zap: ZapHandler | undefined;
  private serving: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private pubChain: Promise<void> = Promise.resolve();
  private pubPending = 0;

  /** `configFile`: the file the router was started from, which `set` with `persist` writes (none: such a set is refused). */
  constructor(
    private readonly view: RouterView,
    private readonly cfg: NodeConfig['control'],
    private readonly log: Logger,
    private readonly configFile?: ConfigFile,
  ) {}

  /** The endpoints bound (with the port ZeroMQ picked for a `:*` endpoint); undefined when off. */
  get endpoints(): { control: string | undefined; telemetry: string | undefined } {
    return { control: this.router?.lastEndpoint ?? undefined, telemetry: this.pub?.lastEndpoint ?? undefined };
  }

  /** Binds the sockets; a ControlError (CONTROL_BIND) names an endpoint that cannot be bound, and nothing stays open. */
  async start(): Promise<void> {
    if (this.context) throw new Error('ControlServer.start: already started');
    const { endpoint, telemetry, curve } = this.cfg;
    if (endpoint === '' && telemetry === '') return;
    const secure = curve.secretKey !== '';
    this.context = new Context({ blocky: false });
    const security = secure ? { curveServer: true, curvePublicKey: curve.publicKey, curveSecretKey: curve.secretKey, zapDomain: ZAP_DOMAIN } : {};
    try {
      if (secure) {
        this.zap = new ZapHandler(this.context, curve.allow, {
          decision: (d) => {
            if (d.allowed) this.counters.zapAllowed++;
            else {
              this.counters.zapDenied++;
              const now = this.clock.now();
              const v = this.deniedLog.admit(now);
              if (!v.log) return;
              this.log.warn(
                { event: 'control-denied', clientKey: d.clientKey ?? null, address: d.address, mechanism: d.mechanism, notLogged: v.notLogged },
                `control: refused a ${d.mechanism} client from ${d.address} (key ${d.clientKey ?? 'none'} is not on control.curve.allow)${budgetNote(v, now, 'refused handshakes')}`,
              );
            }
          },
          error: (e) => this.log.error({ event: 'control-zap-error', err: String(e) }, `control: the ZAP handler failed: ${String(e)}`),
        });
        await this.zap.start();
        if (curve.allow.length === 0)
          this.log.warn({ event: 'control-no-clients' }, 'control: CURVE is on and control.curve.allow is empty: no client can connect');
      }
      if (endpoint !== '') {
        this.router = new Router({ context: this.context, linger: 0, maxMessageSize: MAX_REQUEST_BYTES, ...security });
        await bind(this.router, endpoint, 'control.endpoint');
      }
      if (telemetry !== '') {
        this.pub = new Publisher({ context: this.context, linger: 0, ...security });
        await bind(this.pub, telemetry, 'control.telemetry');
      }
    } catch (e) {
      await this.stop();
      throw e;
    }
    if (this.router) this.serving = this.serve(this.router);
    if (this.pub) {
      this.unsubscribe = this.view.subscribe((e) => this.publishEvent(e));
      this.timer = setInterval(() => this.publishStatus(), this.cfg.telemetryPeriodMs);
      this.timer.unref();
    }
    const ep = this.endpoints;
    this.log.info(
      { event: 'control-start', endpoint: ep.control ?? null, telemetry: ep.telemetry ?? null, curve: secure, allowed: secure ? curve.allow.length : null },
      `control API on ${ep.control ?? '(off)'}, telemetry on ${ep.telemetry ?? '(off)'}${secure ? `, CURVE with ${curve.allow.length} allowed client key(s)` : ', no CURVE'}`,
    );
  }

  /** Closes every socket; commands in progress finish, queued telemetry is dropped. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.router?.close();
    this.pub?.close();
    await this.serving;
    await this.pubChain;
    await this.zap?.stop();
    this.router = undefined;
    this.pub = undefined;
    this.zap = undefined;
    this.serving = undefined;
    this.context = undefined;
  }

  /** Answers one request frame (what the ROUTER loop does with each). */
  async handle(frame: Buffer | string): Promise<ControlReply> {
    this.counters.requests++;
    const req = parseRequest(frame);
    if (!req.ok) {
      this.countCommand(req.cmd ?? 'unknown', this.count(req.error.code));
      this.log.debug({ event: 'control-bad-request', code: req.error.code }, `control: ${req.error.message}`);
      return { id: req.id, ok: false, error: req.error };
    }
    const cmd = req.command;
    try {
      const result = await execute(this.view, cmd, this.configFile);
      this.counters.ok++;
      this.countCommand(cmd.cmd, 'ok');
      if (cmd.cmd === 'set') {
        const r = result as SetResult;
        if (r.changed.length > 0 || r.persisted)
          this.log.info(
            { event: 'control-set', changed: r.changed, version: r.version, lasts: r.lasts, ...(r.persisted ? { file: r.persisted.file } : {}) },
            `control: set ${r.changed.length > 0 ? r.changed.join(', ') : 'nothing new'} (config version ${r.version})${r.persisted ? `, written to ${r.persisted.file}` : ', until restart'}`,
          );
      } else if (cmd.cmd === 'vnf.start' || cmd.cmd === 'vnf.stop') {
        this.log.info({ event: 'control-vnf', cmd: cmd.cmd }, `control: ${cmd.cmd} done`);
      }
      return okReply(req.id, result);
    } catch (e) {
      const reply = errorReply(req.id, e);
      if (!reply.ok) {
        this.countCommand(cmd.cmd, this.count(reply.error.code));
        if (reply.error.code === CONTROL_CODES.internal)
          this.log.error({ event: 'control-internal', cmd: cmd.cmd, err: String(e) }, `control: ${cmd.cmd} failed: ${reply.error.message}`);
        else this.log.info({ event: 'control-refused', cmd: cmd.cmd, code: reply.error.code }, `control: ${cmd.cmd} refused: ${reply.error.message}`);
      }
      return reply;
    }
  }

  /** Counts an error reply under its counter; returns the counter's name. */
  private count(code: string): 'malformed' | 'unknownCommand' | 'badArgument' | 'internal' | 'refused' {
    this.counters.errors++;
    const name =
      code === CONTROL_CODES.malformed
        ? 'malformed'
        : code === CONTROL_CODES.unknownCommand
          ? 'unknownCommand'
          : code === CONTROL_CODES.badArgument || code === CONTROL_CODES.unknownPath
            ? 'badArgument'
            : code === CONTROL_CODES.internal
              ? 'internal'
              : 'refused';
    this.counters[name]++;
    return name;
  }

  private countCommand(cmd: string, result: string): void {
    let m = this.requestsByCommand.get(cmd);
    if (!m) this.requestsByCommand.set(cmd, (m = new Map()));
    m.set(result, (m.get(result) ?? 0) + 1);
  }

  /** One request at a time, in arrival order. A REQ client's empty delimiter frame goes back with its reply. */
  private async serve(router: Router): Promise<void> {
    try {
      for await (const [rid, ...rest] of router) {
        if (rid === undefined) continue;
        const delimited = rest.length >= 2 && rest[0]!.length === 0;
        const envelope = delimited ? [rest[0]!] : [];
        const body = delimited ? rest.slice(1) : rest;
        const traced = requestChannel.hasSubscribers;
        const receivedMs = traced ? performance.now() : 0;
        // One request's failure (even in encoding its reply) never ends the loop: the API keeps serving.
        let out: string;
        let ok = false;
        try {
          const reply = body.length === 1 ? await this.handle(body[0]!) : this.refuse(`a request is one frame of JSON (got ${body.length} frames)`);
          ok = reply.ok;
          out = encodeReply(reply);
        } catch (e) {
          this.count(CONTROL_CODES.internal);
          out = encodeReply(errorReply(null, e));
        }
        const repliedMs = traced ? performance.now() : 0;
        await router.send([rid, ...envelope, out]);
        if (traced) requestChannel.publish({ ok, receivedMs, repliedMs, sentMs: performance.now() } satisfies RequestTrace);
      }
    } catch (e) {
      if (!router.closed) this.log.error({ event: 'control-stopped', err: String(e) }, `control: the command socket failed: ${String(e)}`);
    }
  }

  private refuse(message: string): ControlReply {
    this.counters.requests++;
    this.countCommand('unknown', this.count(CONTROL_CODES.malformed));
    return errorReply(null, new ControlError(CONTROL_CODES.malformed, message));
  }

  private publishStatus(): void {
    let status;
    try {
      status = this.view.status();
    } catch (e) {
      this.log.warn({ event: 'control-status-error', err: String(e) }, `control: status for telemetry failed: ${String(e)}`);
      return;
    }
    this.publish(telemetryFrames(this.view.id, { kind: 'status', atUs: status.atUs, status }));
  }

  private publishEvent(e: Telemetry): void {
    this.publish(telemetryFrames(this.view.id, e));
  }

  /** Sends go one after another (zeromq.js takes one send at a time per socket); a backlog beyond the bound is dropped. */
  private publish(frames: [string, string]): void {
    const pub = this.pub;
    if (!pub) return;
    if (this.pubPending >= MAX_PENDING_TELEMETRY) {
      this.counters.telemetryDropped++;
      return;
    }
    this.pubPending++;
    this.pubChain = this.pubChain
      .then(() => pub.send(frames))
      .then(
        () => {
          this.counters.telemetrySent++;
        },
        (e: unknown) => {
          this.counters.telemetryDropped++;
          if (!pub.closed) this.log.warn({ event: 'control-telemetry-error', err: String(e) }, `control: telemetry send failed: ${String(e)}`);
        },
      )
      .finally(() => {
        this.pubPending--;
      });
  }
}

async function bind(sock: Router | Publisher, endpoint: string, field: string): Promise<void> {
  try {
    await sock.bind(endpoint);
  } catch (e) {
    throw new ControlError(CONTROL_CODES.bind, `${field} ${endpoint}: cannot bind (${(e as Error).message})`);
  }
}
