import { createServer, type Server, type Socket } from 'node:net';
import { parseHostPort } from '../core/address.js';
import { ConfigError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import type { Micros } from '../core/time.js';
import type { Logger } from '../core/log.js';
import { encodeOf, errorReplyFor, OfFramer, parseOf } from '../wire/openflow/index.js';
import { CettController, type PathInfo, type Send } from '../openflow/controller.js';
import { type FlowSpec } from '../openflow/flow-spec.js';

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
}

/**
 * The CETT controller / VIM on TCP: routers whose OpenFlow agents are in
 * active mode connect; the core (`CettController`) learns the links' RC from
 * their ports, installs each flow along its minimum-CETT path and moves it,
 * and places TCP-ACCs on the relays. Flows can be added and removed while it
 * runs; removing one deletes its entries and stops its VNFs everywhere. Run
 * by `cogmesh controller`, and by a router that takes the controller role
 * (the node configuration's `controller` section).
 */
export class ControllerService {
  readonly core: CettController<number>;
  private readonly sockets = new Map<number, Socket>();
  private server: Server | undefined;
  private nextSession = 1;
  private nextFlowId = 1;
  private lastPaths = '';

  constructor(private readonly o: ControllerServiceOptions) {
    this.core = new CettController<number>({ hysteresis: o.hysteresis });
  }

  /** Listens for routers on `host:port`; a ConfigError names an address that cannot be used. */
  async start(listen: string): Promise<void> {
    const hp = parseHostPort(listen);
    if (!hp) throw new ConfigError([{ path: '/controller/listen', value: listen, expected: 'host:port (port 0-65535), e.g. 127.0.0.1:6653' }]);
    const server = createServer((sock) => this.serve(sock));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) => reject(new ListenError(listen, e.code ?? e.message)));
      server.listen(hp.port, hp.host, () => resolve());
    });
    this.server = server;
    this.o.log.info(
      { event: 'controller-start', listen, flows: this.core.paths().length },
      `CETT controller on ${listen}: ${this.core.paths().length} flow(s)`,
    );
    this.report();
  }

  async stop(): Promise<void> {
    for (const s of this.sockets.values()) s.destroy();
    this.sockets.clear();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Places a flow (its id: the spec's, or the next free one when 0); refused whole, with the reason, when bad or its id is taken. */
  addFlow(spec: FlowSpec): Result<PathInfo, string> {
    const id = spec.id > 0 ? spec.id : this.freeId();
    const r = this.core.addFlow({ ...spec, id }, this.o.now());
    if (!r.ok) return err(r.error.detail);
    this.nextFlowId = Math.max(this.nextFlowId, id + 1);
    this.deliver(r.value.out);
    // Flows given before it listens are logged once it does.
    if (this.server) {
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

  private serve(sock: Socket): void {
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
