import { createServer, connect, type Server, type Socket } from 'node:net';
import { parseHostPort } from '../core/address.js';
import { RangeArgumentError } from '../core/errors.js';
import type { Micros } from '../core/time.js';
import type { Logger } from '../core/log.js';
import { errorReplyFor, encodeOf, OfFramer } from '../wire/openflow/index.js';
import type { AgentSession, OfAgent } from '../openflow/agent.js';

export interface TransportOptions {
  mode: 'passive' | 'active';
  /** host:port: where a passive agent listens, or the controller an active one connects to. */
  address: string;
  echoIntervalMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Runs agent work at the router's time (the daemon: through its paced engine). */
  enter: (fn: (now: Micros) => void) => void;
  log: Logger;
}

/** The configuration's address, checked by the loader already. */
function splitHostPort(a: string): { host: string; port: number } {
  const hp = parseHostPort(a);
  if (!hp) throw new RangeArgumentError('openflow address', a, 'host:port');
  return hp;
}

/**
 * The OpenFlow agent on TCP: passive (a listening socket; every connection,
 * from a controller or `ovs-ofctl`, is a session of its own) or active (a
 * connection to the controller, reconnecting with exponential backoff). It
 * frames the byte stream, hands each message to the agent and writes what
 * the agent sends; a silent peer gets an ECHO_REQUEST every echo interval
 * and is dropped after three unanswered. A stream that cannot be framed
 * (a length below 8) is answered with the error and closed.
 */
export class OfTransport {
  private server: Server | undefined;
  private readonly sockets = new Map<number, Socket>();
  private stopped = false;
  private backoffMs: number;
  private reconnectTimer: NodeJS.Timeout | undefined;
  readonly counters = { accepted: 0, connects: 0, connectFailures: 0, framingErrors: 0 };

  constructor(
    private readonly agent: OfAgent,
    private readonly o: TransportOptions,
  ) {
    this.backoffMs = o.reconnectMinMs;
    agent.onSend = (s) => this.flush(s);
  }

  /** Listens (passive) or starts connecting (active); resolves with the listening address. */
  async start(): Promise<string> {
    const { host, port } = splitHostPort(this.o.address);
    if (this.o.mode === 'active') {
      this.dial();
      return this.o.address;
    }
    const server = createServer((sock) => {
      this.counters.accepted++;
      this.attach(sock);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) =>
        reject(Object.assign(new Error(`openflow.listen: cannot listen on ${this.o.address} (${e.code ?? e.message})`), { code: 'OF_LISTEN' })),
      );
      server.listen(port, host, () => resolve());
    });
    const a = server.address();
    return typeof a === 'object' && a ? `${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}` : this.o.address;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    for (const s of this.sockets.values()) s.destroy();
    this.sockets.clear();
    if (this.server) await new Promise<void>((r) => this.server!.close(() => r()));
  }

  private dial(): void {
    if (this.stopped) return;
    const { host, port } = splitHostPort(this.o.address);
    this.counters.connects++;
    const sock = connect({ host, port });
    let up = false;
    sock.once('connect', () => {
      up = true;
      this.o.log.info({ event: 'openflow-connected', controller: this.o.address }, `OpenFlow: connected to the controller at ${this.o.address}`);
    });
    this.attach(sock, () => {
      if (this.stopped) return;
      if (!up) this.counters.connectFailures++;
      const wait = this.backoffMs;
      this.backoffMs = Math.min(this.o.reconnectMaxMs, this.backoffMs * 2);
      this.o.log.info(
        { event: 'openflow-reconnect', controller: this.o.address, inMs: wait },
        `OpenFlow: ${up ? 'lost' : 'cannot reach'} the controller at ${this.o.address}; trying again in ${wait} ms`,
      );
      this.reconnectTimer = setTimeout(() => this.dial(), wait);
    });
  }

  private attach(sock: Socket, onClosed?: () => void): void {
    sock.setNoDelay(true);
    let session: AgentSession | undefined;
    this.o.enter(() => (session = this.agent.open()));
    const s = session!;
    this.sockets.set(s.id, sock);
    const framer = new OfFramer();
    let silentTicks = 0;
    // Quiet for one interval: an ECHO_REQUEST; then one each interval; three unanswered close the connection.
    const echo = setInterval(() => {
      if (++silentTicks > 4) {
        this.o.log.info({ event: 'openflow-silent', session: s.id }, 'OpenFlow: a peer did not answer three echoes; closing');
        sock.destroy();
        return;
      }
      if (silentTicks > 1) this.guard(s, sock, () => this.o.enter(() => this.agent.echo(s)));
    }, this.o.echoIntervalMs);
    let ended = false;
    sock.on('data', (chunk: Buffer) => {
      if (ended) return;
      silentTicks = 0;
      framer.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      for (let r = framer.next(); r !== undefined; r = framer.next()) {
        if (!r.ok) {
          this.counters.framingErrors++;
          ended = true;
          sock.end(encodeOf(errorReplyFor(r.error, new Uint8Array(0))));
          return;
        }
        const frame = r.value;
        this.guard(s, sock, () => this.o.enter((now) => this.agent.receive(s, frame, now)));
        if (s.helloDone && !this.handshaken) {
          // A controller that answers our HELLO is a working one: the backoff starts over.
          this.handshaken = true;
          this.backoffMs = this.o.reconnectMinMs;
        }
        if (s.closing) {
          ended = true;
          sock.end();
          return;
        }
      }
    });
    this.flush(s);
    const done = (): void => {
      clearInterval(echo);
      this.sockets.delete(s.id);
      this.handshaken = false;
      if (!this.stopped) this.o.enter(() => this.agent.close(s));
      else this.agent.close(s);
      onClosed?.();
    };
    sock.once('close', done);
    sock.on('error', (e) => this.o.log.debug({ event: 'openflow-socket-error', err: e }, `OpenFlow: ${e.message}`));
  }

  /** Writes what the agent queued for a session; a peer that does not read past MAX_BACKLOG is dropped. */
  private flush(s: AgentSession): void {
    const sock = this.sockets.get(s.id);
    // Before the socket is registered (the HELLO the session opens with), the bytes wait for it.
    if (!sock) return;
    const out = this.agent.drain(s);
    if (sock.destroyed || sock.writableEnded) return;
    for (const b of out) sock.write(b);
    if (sock.writableLength > OfTransport.MAX_BACKLOG) {
      this.o.log.warn({ event: 'openflow-backlog', session: s.id, bytes: sock.writableLength }, 'OpenFlow: a peer does not read what it is sent; closing');
      sock.destroy();
    }
  }

  /** Bytes waiting for a peer that does not read, beyond which it is dropped. */
  static readonly MAX_BACKLOG = 4 << 20;

  /** A fault in the agent (or the router under it) while serving a peer is logged and closes that connection; the router goes on. */
  private guard(s: AgentSession, sock: Socket, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.o.log.error({ event: 'openflow-fault', session: s.id, err: e }, `OpenFlow: serving a peer failed (${(e as Error).message}); closing its connection`);
      sock.destroy();
    }
  }

  private handshaken = false;
}
