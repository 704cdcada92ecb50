import { Duplex } from 'node:stream';
import { Context, Dealer, Router } from 'zeromq';
import { ZapHandler, type ZapDecision } from '../../src/wire/zap.js';
import { MAX_LINK_MESSAGE } from './transport.js';

/**
 * The medium link beyond this machine: the same length-prefixed link
 * messages, each carried in a ZeroMQ message over CURVE (encrypted, and the
 * medium lets in only the router keys of its allow-list, through the ZAP
 * handler the control API uses). Each side sees a stream per peer, as on a
 * plain socket, so the medium and the router treat both links alike. The
 * plain stream socket stays the link on loopback and ipc, where it costs a
 * third of a ZeroMQ message (docs/testbed.md).
 */

/** The ZAP domain of the medium's socket. */
export const MEDIUM_ZAP_DOMAIN = 'cogmesh-medium';

/** The medium's CURVE keys and the router public keys it lets in (all Z85). */
export interface MediumCurve {
  publicKey: string;
  secretKey: string;
  allow: readonly string[];
}

/** A router's CURVE keys: the medium's public key and the router's own pair (all Z85). */
export interface RouterCurve {
  serverKey: string;
  publicKey: string;
  secretKey: string;
}

const MAX_ZMQ_MESSAGE = MAX_LINK_MESSAGE + 4;

/**
 * One peer as a stream: what it sends arrives as 'data', writes go out by
 * `send` (which the owner keeps to one at a time per ZeroMQ socket).
 */
class PeerStream extends Duplex {
  constructor(
    private readonly sendOut: (chunk: Buffer) => Promise<void>,
    private readonly onDestroy: () => void,
  ) {
    super({ allowHalfOpen: false });
  }

  override _read(): void {}

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.sendOut(chunk).then(() => cb(), cb);
  }

  override _final(cb: (e?: Error | null) => void): void {
    cb();
    this.destroy();
  }

  override _destroy(e: Error | null, cb: (e: Error | null) => void): void {
    this.onDestroy();
    cb(e);
  }
}

/** A chain that keeps a ZeroMQ socket's sends one at a time (it allows no more). */
function sendChain(send: (frames: Buffer[]) => Promise<void>): (frames: Buffer[]) => Promise<void> {
  let chain: Promise<void> = Promise.resolve();
  return (frames) => {
    const next = chain.then(() => send(frames));
    chain = next.catch(() => undefined);
    return next;
  };
}

/** The medium's side: a ROUTER socket with CURVE; each router that passes the allow-list is a stream. */
export interface CurveLinkServer {
  close(): Promise<void>;
}

/**
 * Listens at a tcp endpoint with CURVE. A ZeroMQ peer has no close a stream
 * socket would see: a peer silent for `idleMs` (a router beats every 250 ms)
 * is taken for gone and its stream closed.
 */
export async function listenCurveLink(
  endpoint: string,
  curve: MediumCurve,
  onConnection: (s: Duplex) => void,
  hooks: { decision?: (d: ZapDecision) => void; error?: (e: unknown) => void; idleMs?: number } = {},
): Promise<CurveLinkServer> {
  const context = new Context({ blocky: false });
  const zap = new ZapHandler(context, curve.allow, hooks);
  await zap.start();
  const sock = new Router({
    context,
    linger: 0,
    maxMessageSize: MAX_ZMQ_MESSAGE,
    curveServer: true,
    curvePublicKey: curve.publicKey,
    curveSecretKey: curve.secretKey,
    zapDomain: MEDIUM_ZAP_DOMAIN,
  });
  try {
    await sock.bind(endpoint);
  } catch (e) {
    sock.close();
    await zap.stop();
    throw e;
  }
  const send = sendChain((frames) => sock.send(frames));
  const peers = new Map<string, { stream: PeerStream; lastMs: number }>();
  const serve = (async () => {
    try {
      for await (const [rid, data] of sock) {
        if (rid === undefined || data === undefined) continue;
        const id = rid.toString('hex');
        let p = peers.get(id);
        if (!p) {
          const stream = new PeerStream(
            (chunk) => send([rid, chunk]),
            () => peers.delete(id),
          );
          p = { stream, lastMs: Date.now() };
          peers.set(id, p);
          onConnection(stream);
        }
        p.lastMs = Date.now();
        p.stream.push(data);
      }
    } catch (e) {
      if (!sock.closed) hooks.error?.(e);
    }
  })();
  const idleMs = hooks.idleMs ?? 30_000;
  const idle = setInterval(
    () => {
      const now = Date.now();
      for (const p of [...peers.values()]) if (now - p.lastMs > idleMs) p.stream.destroy();
    },
    Math.max(100, idleMs / 4),
  );
  idle.unref();
  return {
    close: async () => {
      clearInterval(idle);
      for (const p of [...peers.values()]) p.stream.destroy();
      sock.close();
      await serve;
      await zap.stop();
    },
  };
}

/**
 * A router's side: a DEALER socket with CURVE, as a stream. It says
 * 'connect' at once (ZeroMQ connects, and again after a break, by itself;
 * what is written meanwhile waits in its queue); a handshake the medium
 * refuses (a key not on its allow-list, or a wrong server key) is an
 * 'error' that names it, and ZeroMQ tries again.
 */
export function connectCurveLink(endpoint: string, curve: RouterCurve): Duplex {
  const sock = new Dealer({
    linger: 100,
    maxMessageSize: MAX_ZMQ_MESSAGE,
    curveServerKey: curve.serverKey,
    curvePublicKey: curve.publicKey,
    curveSecretKey: curve.secretKey,
  });
  const send = sendChain((frames) => sock.send(frames));
  const stream = new PeerStream(
    (chunk) => send([chunk]),
    () => sock.close(),
  );
  const refused = (why: string) => () => {
    if (!stream.destroyed) stream.emit('error', new Error(`the medium at ${endpoint} refused the CURVE handshake: ${why}`));
  };
  sock.events.on('handshake:error:auth', refused(`this router's key ${curve.publicKey} is not on its allow-list`));
  sock.events.on('handshake:error:protocol', refused("a protocol error (is sim.medium.curve.serverKey the medium's public key?)"));
  sock.connect(endpoint);
  void (async () => {
    try {
      for await (const [data] of sock) if (data !== undefined) stream.push(data);
    } catch (e) {
      if (!sock.closed && !stream.destroyed) stream.destroy(e as Error);
    }
  })();
  setImmediate(() => stream.emit('connect'));
  return stream;
}
