import type { Server, Socket } from 'node:net';
import { ConfigError, type ConfigIssue } from '../core/errors.js';
import type { OfTlsConfig } from '../config/types.js';
import { defaultNodeConfig } from '../config/load.js';
import { err, ok, type Result } from '../core/result.js';
import type { Micros } from '../core/time.js';
import type { Logger } from '../core/log.js';
import { budgetNote, refusalLogBudget } from '../core/log-budget.js';
import { encodeOf, errorReplyFor, OfFramer, parseOf } from '../wire/openflow/index.js';
import { CettController, type PathInfo, type Send } from '../openflow/controller.js';
import { type FlowSpec } from '../openflow/flow-spec.js';
import { formatEndpoint, parseActiveEndpoint, parsePassiveEndpoint, type OfEndpoint } from '../openflow/endpoint.js';
import { listenOf, Redialer } from './of-socket.js';
import { loadOfTls } from './of-tls.js';

/** The controller could not listen where it was told; `reason` is the system's (EADDRINUSE, ...). */
export class ListenError extends ConfigError {
  constructor(
    listen: string,
    readonly reason: string,
  ) {
    super([{ path: '/controller/listen', value: listen, expected: `an address this host can listen on (${reason})` }]);
  }
}

export interface ControllerServiceOptions {
  hysteresis: number;
  log: Logger;
  /** The controller's clock (µs). */
  now: () => Micros;
  /** Its key, certificate and the switches' CA certificate, for pssl: and ssl: endpoints (read when it starts). */
  tls?: OfTlsConfig;
  /** An active endpoint's first wait before it connects again, doubling up to reconnectMaxMs (ms); default: openflow's. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
}

/**
 * The CETT controller / VIM on TCP or TLS: routers whose OpenFlow agents are
 * in active mode connect to where it listens, and it connects to routers
 * whose agents are passive (Open vSwitch's connection methods,
 * src/openflow/endpoint.ts; over TLS each side verifies the other's
 * certificate, of-socket.ts). The core (`CettController`) learns the links' RC from
 * their ports, installs each flow along its minimum-CETT path and moves it,
 * and places TCP-ACCs on the relays. Flows can be added and removed while it
 * runs; removing one deletes its entries and stops its VNFs everywhere. Run
 * by `cogmesh controller`, and by a router that takes the controller role
 * (the node configuration's `controller` section).
 */
export class ControllerService {
  readonly core: CettController<number>;
  private readonly sockets = new Map<number, Socket>();
  /** Peers refused a TLS session; anyone who reaches the port can cause them, so a few are logged a minute (`refusedLog`). */
  readonly counters = { tlsRefused: 0 };
  private readonly refusedLog = refusalLogBudget();
  private server: Server | undefined;
  private readonly dialers: Redialer[] = [];
  private listening: string | undefined;
  /** It listens or connects (start has run). */
  private started = false;
  private nextSession = 1;
  private nextFlowId = 1;
  private lastPaths = '';

  constructor(private readonly o: ControllerServiceOptions) {
    this.core = new CettController<number>({ hysteresis: o.hysteresis });
  }

  /**
   * Listens for routers on `listen` (a passive endpoint; '' not at all) and
   * connects to each of `connect` (active endpoints, kept connected). A
   * ConfigError names what cannot be used: an endpoint that does not parse,
   * a TLS file (controller.tls) that is missing or wrong, an address it
   * cannot listen on (ListenError).
   */
  async start(listen: string, connect: readonly string[] = []): Promise<void> {
    const issues: ConfigIssue[] = [];
    const passive = listen === '' ? undefined : parsePassiveEndpoint(listen);
    if (passive && !passive.ok) issues.push({ path: '/controller/listen', value: listen, expected: passive.error });
    const active: OfEndpoint[] = [];
    connect.forEach((text, i) => {
      const e = parseActiveEndpoint(text);
      if (e.ok) active.push(e.value);
      else issues.push({ path: `/controller/connect/${i}`, value: text, expected: e.error });
    });
    if (issues.length > 0) throw new ConfigError(issues);
    const tlsUsed = (passive?.ok && passive.value.tls) || active.some((e) => e.tls);
    const tls = tlsUsed ? loadOfTls(this.o.tls ?? { privateKey: '', certificate: '', caCert: '' }, '/controller/tls') : undefined;
    if (passive?.ok) {
      try {
        const l = await listenOf(
          passive.value,
          tls,
          (sock) => this.serve(sock),
          (remote, reason) => {
            this.counters.tlsRefused++;
            const now = this.o.now();
            const v = this.refusedLog.admit(now);
            if (!v.log) return;
            this.o.log.info(
              { event: 'controller-tls-refused', remote, reason, notLogged: v.notLogged },
              `controller: refused ${remote}: no TLS session with a peer the CA certificate vouches for (${reason})${budgetNote(v, now, 'refused peers')}`,
            );
          },
        );
        this.server = l.server;
        this.listening = l.address;
      } catch (e) {
        throw new ListenError(listen, (e as NodeJS.ErrnoException).code ?? (e as Error).message);
      }
    }
    for (const ep of active) this.dial(ep, tls);
    this.started = true;
    const where = [...(this.listening ? [this.listening] : []), ...active.map((e) => `-> ${formatEndpoint(e)}`)].join(', ');
    this.o.log.info(
      { event: 'controller-start', listen: this.listening ?? '', connect: active.map(formatEndpoint), flows: this.core.paths().length },
      `CETT controller on ${where}: ${this.core.paths().length} flow(s)`,
    );
    this.report();
  }

  /** Where it listens, its port filled in (pssl:6653:127.0.0.1, ...); undefined when it does not. */
  get address(): string | undefined {
    return this.listening;
  }

  /** Keeps a router's passive agent connected: each connection is a session, as one that came in. */
  private dial(ep: OfEndpoint, tls: ReturnType<typeof loadOfTls> | undefined): void {
    const text = formatEndpoint(ep);
    const defaults = this.o.reconnectMinMs === undefined || this.o.reconnectMaxMs === undefined ? defaultNodeConfig().openflow : undefined;
    const dialer: Redialer = new Redialer({
      endpoint: ep,
      tls,
      reconnectMinMs: this.o.reconnectMinMs ?? defaults!.reconnectMinMs,
      reconnectMaxMs: this.o.reconnectMaxMs ?? defaults!.reconnectMaxMs,
      onUp: (sock) => this.serve(sock, () => dialer.working()),
      onDown: ({ wasUp, reason, inMs }) =>
        this.o.log.info(
          { event: 'controller-reconnect', router: text, inMs, ...(reason ? { reason } : {}) },
          `controller: ${wasUp ? 'lost' : 'cannot reach'} the router at ${text}${reason ? ` (${reason})` : ''}; trying again in ${inMs} ms`,
        ),
    });
    this.dialers.push(dialer);
    dialer.start();
  }

  async stop(): Promise<void> {
    for (const d of this.dialers.splice(0)) d.stop();
    for (const s of this.sockets.values()) s.destroy();
    this.sockets.clear();
    const server = this.server;
    this.server = undefined;
    this.started = false;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Places a flow (its id: the spec's, or the next free one when 0); refused whole, with the reason, when bad or its id is taken. */
  addFlow(spec: FlowSpec): Result<PathInfo, string> {
    const id = spec.id > 0 ? spec.id : this.freeId();
    const r = this.core.addFlow({ ...spec, id }, this.o.now());
    if (!r.ok) return err(r.error.detail);
    this.nextFlowId = Math.max(this.nextFlowId, id + 1);
    this.deliver(r.value.out);
    // Flows given before it starts are logged once it does.
    if (this.started) {
      this.o.log.info({ event: 'flow-added', flow: id }, `flow ${id} added`);
      this.report();
    }
    return ok(this.core.paths().find((p) => p.id === id)!);
  }

  /** The flow has ended: its entries are deleted and its VNFs stopped on every router. */
  removeFlow(id: number): Result<{ id: number }, string> {
    const r = this.core.removeFlow(id, this.o.now());
    if (!r.ok) return err(r.error.detail);
    this.deliver(r.value);
    this.o.log.info({ event: 'flow-removed', flow: id }, `flow ${id} removed: its entries deleted and its VNFs stopped`);
    this.lastPaths = '';
    this.report();
    return ok({ id });
  }

  /** Every flow: its state, path, CETT and VNF sites. */
  flows(): PathInfo[] {
    return this.core.paths();
  }

  /** Connected routers (sessions). */
  get sessions(): number {
    return this.sockets.size;
  }

  private freeId(): number {
    const taken = new Set(this.core.paths().map((p) => p.id));
    while (taken.has(this.nextFlowId)) this.nextFlowId++;
    return this.nextFlowId;
  }

  private deliver(out: readonly Send<number>[]): void {
    for (const s of out) this.sockets.get(s.to)?.write(encodeOf(s.msg));
  }

  /** Logs the paths when they change. */
  private report(): void {
    const paths = this.core.paths();
    const text = JSON.stringify(paths.map((p) => [p.id, p.state, p.routers]));
    if (text === this.lastPaths) return;
    this.lastPaths = text;
    for (const p of paths) {
      this.o.log.info(
        { event: 'flow-path', flow: p.id, state: p.state, routers: p.routers, cett: p.cett, vnfs: p.vnfs },
        `flow ${p.id}: ${p.state === 'installed' ? `${p.routers.join(' -> ')} (CETT ${(p.cett * 1000).toFixed(2)} ms${p.vnfs.length > 0 ? `, TCP-ACC on ${p.vnfs.join(', ')}` : ''})` : 'pending: no path yet'}`,
      );
    }
  }

  /** A router's connection, either way; `working` is told when its first message arrives. */
  private serve(sock: Socket, working?: () => void): void {
    const key = this.nextSession++;
    this.sockets.set(key, sock);
    const framer = new OfFramer();
    this.o.log.info({ event: 'switch-connected', session: key, remote: `${sock.remoteAddress}:${sock.remotePort}` }, `a router connected (session ${key})`);
    for (const msg of this.core.open(key)) sock.write(encodeOf(msg));
    sock.on('data', (chunk: Buffer) => {
      try {
        framer.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        for (let r = framer.next(); r !== undefined; r = framer.next()) {
          if (!r.ok) {
            sock.destroy();
            return;
          }
          working?.();
          const parsed = parseOf(r.value);
          if (!parsed.ok) {
            sock.write(encodeOf(errorReplyFor(parsed.error, r.value)));
            continue;
          }
          this.deliver(this.core.receive(key, parsed.value, this.o.now()));
        }
        this.report();
      } catch (e) {
        // One router's bad session never takes the controller down.
        this.o.log.error({ event: 'controller-session-fault', session: key, err: String(e) }, `controller: session ${key} failed: ${String(e)}`);
        sock.destroy();
      }
    });
    sock.on('error', () => undefined);
    sock.once('close', () => {
      if (this.sockets.get(key) !== sock) return;
      this.sockets.delete(key);
      this.o.log.info({ event: 'switch-gone', session: key }, `a router's connection closed (session ${key})`);
      this.deliver(this.core.close(key, this.o.now()));
      this.report();
    });
  }
}
