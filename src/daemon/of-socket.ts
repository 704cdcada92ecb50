import { connect as tcpConnect, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { connect as tlsConnect, createServer as createTlsServer, type ConnectionOptions, type TlsOptions, type TLSSocket } from 'node:tls';
import { formatEndpoint, type OfEndpoint } from '../openflow/endpoint.js';
import type { OfTls } from './of-tls.js';

/**
 * The sockets of OpenFlow's connection methods (src/openflow/endpoint.ts),
 * for the agent and the controller alike: tcp/ptcp over node:net, ssl/pssl
 * over node:tls with mutual authentication as Open vSwitch does it. Each
 * side shows its certificate and verifies the peer's against its CA
 * certificate; like Open vSwitch, neither checks the peer's name (ovs-pki
 * names a certificate after a switch or a controller, not a host): the CA
 * is the authority on who may connect, so a CA should sign only the
 * switches (or only the controllers) it vouches for.
 */

/** TLS 1.2 or later, this side's key and certificate, the peer's CA. */
function material(tls: OfTls): TlsOptions & ConnectionOptions {
  return { key: tls.key, cert: tls.cert, ca: tls.ca, minVersion: 'TLSv1.2' };
}

/** A peer that was not served: its address and why (a TLS handshake that failed). */
export type Refusal = (remote: string, reason: string) => void;

/**
 * Listens on a passive endpoint; resolves with the server and the address
 * it listens on (the port filled in when it was 0). Over TLS a connection
 * reaches `onPeer` only once its handshake is done and the peer's
 * certificate verified: a plain TCP peer, or one whose certificate the CA
 * certificate does not verify, is never served, and `onRefused` says why.
 * Rejects with the system's error when it cannot listen.
 */
export async function listenOf(
  ep: OfEndpoint,
  tls: OfTls | undefined,
  onPeer: (sock: Socket) => void,
  onRefused: Refusal,
): Promise<{ server: Server; address: string }> {
  if (ep.tls && !tls) throw new Error(`${formatEndpoint(ep)} needs TLS material`);
  const remote = (sock: Socket): string => `${sock.remoteAddress}:${sock.remotePort}`;
  // The peer's certificate is checked here, before a byte is read from it or written to it, rather
  // than by node:tls's rejectUnauthorized, which closes such a peer without a word of who or why.
  // A peer without a certificate is not authorized either (node:tls: UNABLE_TO_GET_ISSUER_CERT).
  const verified = (sock: TLSSocket): void => {
    if (sock.authorized) return onPeer(sock);
    onRefused(remote(sock), String(sock.authorizationError ?? 'no certificate'));
    sock.destroy();
  };
  const server = ep.tls && tls ? createTlsServer({ ...material(tls), requestCert: true, rejectUnauthorized: false }, verified) : createTcpServer(onPeer);
  // A handshake that fails (a plain TCP peer, a TLS version or cipher it does not share) never reaches `verified`.
  if (ep.tls) server.on('tlsClientError', (e: NodeJS.ErrnoException, sock: Socket) => onRefused(remote(sock), e.code ?? e.message));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const done = (): void => {
      server.off('error', reject);
      resolve();
    };
    if (ep.host === '') server.listen(ep.port, done);
    else server.listen(ep.port, ep.host, done);
  });
  const a = server.address();
  const port = typeof a === 'object' && a ? a.port : ep.port;
  return { server, address: formatEndpoint({ ...ep, port }) };
}

/**
 * Connects to an active endpoint. `ready` is the event after which the
 * connection is up: `connect`, or over TLS `secureConnect`, once the
 * peer's certificate is verified (a peer the CA does not vouch for ends the
 * socket with an error before it).
 */
export function dialOf(ep: OfEndpoint, tls: OfTls | undefined): { sock: Socket; ready: 'connect' | 'secureConnect' } {
  if (ep.tls && !tls) throw new Error(`${formatEndpoint(ep)} needs TLS material`);
  if (ep.tls && tls) {
    // The CA vouches for the peer; its name is not checked (see above).
    const sock = tlsConnect({ ...material(tls), host: ep.host, port: ep.port, rejectUnauthorized: true, checkServerIdentity: () => undefined });
    return { sock, ready: 'secureConnect' };
  }
  return { sock: tcpConnect({ host: ep.host, port: ep.port }), ready: 'connect' };
}

export interface RedialOptions {
  endpoint: OfEndpoint;
  tls: OfTls | undefined;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** The connection is up (TLS: the peer verified). */
  onUp: (sock: Socket) => void;
  /** It went, or never came up; the next attempt is in `inMs`. `reason`: the socket's last error. */
  onDown: (d: { wasUp: boolean; reason: string | undefined; inMs: number }) => void;
}

/**
 * An active endpoint kept connected: a connection that fails or goes is
 * made again after a wait that doubles from reconnectMinMs up to
 * reconnectMaxMs, and starts over once the owner says the peer works.
 */
export class Redialer {
  readonly counters = { connects: 0, connectFailures: 0 };
  private backoffMs: number;
  private timer: NodeJS.Timeout | undefined;
  private current: Socket | undefined;
  private stopped = false;

  constructor(private readonly o: RedialOptions) {
    this.backoffMs = o.reconnectMinMs;
  }

  start(): void {
    this.dial();
  }

  /** The peer answers as it should: the next loss waits the shortest time. */
  working(): void {
    this.backoffMs = this.o.reconnectMinMs;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.current?.destroy();
  }

  private dial(): void {
    if (this.stopped) return;
    this.counters.connects++;
    const { sock, ready } = dialOf(this.o.endpoint, this.o.tls);
    this.current = sock;
    let up = false;
    let reason: string | undefined;
    sock.on('error', (e: NodeJS.ErrnoException) => (reason = e.code ?? e.message));
    sock.once(ready, () => {
      up = true;
      this.o.onUp(sock);
    });
    sock.once('close', () => {
      if (this.current === sock) this.current = undefined;
      if (this.stopped) return;
      if (!up) this.counters.connectFailures++;
      const inMs = this.backoffMs;
      this.backoffMs = Math.min(this.o.reconnectMaxMs, this.backoffMs * 2);
      this.o.onDown({ wasUp: up, reason, inMs });
      this.timer = setTimeout(() => this.dial(), inMs);
    });
  }
}
