import type { Server, Socket } from 'node:net';
import { ConfigError } from '../core/errors.js';
import type { Micros } from '../core/time.js';
import type { Logger } from '../core/log.js';
import { budgetNote, refusalLogBudget } from '../core/log-budget.js';
import { errorReplyFor, encodeOf, OfFramer } from '../wire/openflow/index.js';
import type { AgentSession, OfAgent } from '../openflow/agent.js';
import { formatEndpoint, plainBeyondLoopback, type OfEndpoint } from '../openflow/endpoint.js';
import { listenOf, Redialer } from './of-socket.js';
import type { OfTls } from './of-tls.js';

export interface TransportOptions {
  /** Passive: where the agent listens; active: the controller it connects to. */
  endpoint: OfEndpoint;
  /** The agent's TLS material, for an ssl: or pssl: endpoint. */
  tls?: OfTls;
  echoIntervalMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Runs agent work at the router's time (the daemon: through its paced engine). */
  enter: (fn: (now: Micros) => void) => void;
  log: Logger;
}

/**
 * The OpenFlow agent on TCP or TLS (of-socket.ts): passive (a listening
 * socket; every connection, from a controller or `ovs-ofctl`, is a session of
 * its own; over TLS only once the peer's certificate is verified) or active
 * (a connection to the controller, reconnecting with exponential backoff). It
 * frames the byte stream, hands each message to the agent and writes what
 * the agent sends; a silent peer gets an ECHO_REQUEST every echo interval
 * and is dropped after three unanswered. A stream that cannot be framed
 * (a length below 8) is answered with the error and closed.
 */
export class OfTransport {
  private server: Server | undefined;
  private redialer: Redialer | undefined;
  private readonly sockets = new Map<number, Socket>();
  private stopped = false;
  readonly counters = { accepted: 0, tlsRefused: 0, framingErrors: 0 };
  /** Anyone who reaches the port can be refused at will: every refusal counted, a few logged a minute. */
  private readonly refusedLog = refusalLogBudget();

  constructor(
    private readonly agent: OfAgent,
    private readonly o: TransportOptions,
  ) {
    agent.onSend = (s) => this.flush(s);
  }

  /** Connection attempts of an active agent, and those that never came up. */
  get dials(): { connects: number; connectFailures: number } {
    return this.redialer?.counters ?? { connects: 0, connectFailures: 0 };
  }

  /**
   * Listens (passive) or starts connecting (active); resolves with the
   * endpoint, its port filled in. A plain listener beyond loopback is
   * refused (the loader refuses it in a configuration already).
   */
  async start(): Promise<string> {
    const ep = this.o.endpoint;
    const text = formatEndpoint(ep);
    if (ep.role === 'active') {
      this.redialer = new Redialer({
        endpoint: ep,
        tls: this.o.tls,
        reconnectMinMs: this.o.reconnectMinMs,
        reconnectMaxMs: this.o.reconnectMaxMs,
        onUp: (sock) => {
          this.o.log.info({ event: 'openflow-connected', controller: text }, `OpenFlow: connected to the controller at ${text}`);
          this.attach(sock);
        },
        onDown: ({ wasUp, reason, inMs }) =>
          this.o.log.info(
            { event: 'openflow-reconnect', controller: text, inMs, ...(reason ? { reason } : {}) },
            `OpenFlow: ${wasUp ? 'lost' : 'cannot reach'} the controller at ${text}${reason ? ` (${reason})` : ''}; trying again in ${inMs} ms`,
          ),
      });
      this.redialer.start();
      return text;
    }
    if (plainBeyondLoopback(ep)) {
      throw new ConfigError([
        {
          path: '/openflow/listen',
          value: text,
          expected: 'a loopback address, or pssl: (TLS): whoever reaches a passive agent without TLS controls the router',
        },
      ]);
    }
    try {
      const { server, address } = await listenOf(
        ep,
        this.o.tls,
        (sock) => {
          this.counters.accepted++;
          this.attach(sock);
        },
        (remote, reason) => {
          this.counters.tlsRefused++;
          this.o.enter((now) => {
            const v = this.refusedLog.admit(now);
            if (!v.log) return;
            this.o.log.info(
              { event: 'openflow-tls-refused', remote, reason, notLogged: v.notLogged },
              `OpenFlow: refused ${remote}: no TLS session with a peer the CA certificate vouches for (${reason})${budgetNote(v, now, 'refused peers')}`,
            );
          });
        },
      );
      this.server = server;
      return address;
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
      throw Object.assign(new Error(`openflow.listen: cannot listen on ${text} (${why})`), { code: 'OF_LISTEN' });
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.redialer?.stop();
    for (const s of this.sockets.values()) s.destroy();
    this.sockets.clear();
    if (this.server) await new Promise<void>((r) => this.server!.close(() => r()));
  }

  private attach(sock: Socket): void {
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
          this.redialer?.working();
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
