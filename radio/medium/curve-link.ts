import { createHmac, timingSafeEqual } from 'node:crypto';
import { Duplex } from 'node:stream';
import { Context, Dealer, Router } from 'zeromq';
import { UsageError } from '../../src/core/errors.js';
import { curveSharedSecret } from '../../src/wire/curve-key.js';
import { curveKeyProblem, z85Decode, z85Encode } from '../../src/wire/z85.js';
import { sendChain } from '../../src/wire/send-chain.js';
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

/**
 * A router the medium lets in: its CURVE public key (Z85) and the mesh
 * addresses it may join as; a key alone (or without `addresses`) may join
 * as any address no live router holds.
 */
export type MediumAllowed = string | { key: string; addresses?: readonly number[] };

/** The medium's CURVE keys and the routers it lets in (keys in Z85). */
export interface MediumCurve {
  publicKey: string;
  secretKey: string;
  allow: readonly MediumAllowed[];
}

/** The highest mesh address a router may join as (0xffff is broadcast). */
const MAX_NODE = 0xfffe;

/**
 * One `--allow` value: `KEY` (any address) or `KEY=ADDR[,ADDR...]` (only
 * those). A value that is neither is a UsageError naming it.
 */
export function parseMediumAllowed(text: string): MediumAllowed {
  // Z85 has '=' among its characters: the key is the first 40, and '=' after it starts the addresses.
  const key = text.slice(0, 40);
  const keyProblem = curveKeyProblem(key);
  if (keyProblem !== undefined || (text.length > 40 && text[40] !== '='))
    throw new UsageError(
      `--allow: "${text}" is not KEY or KEY=ADDR[,ADDR...] (KEY: a router's CURVE public key, 40 characters of Z85 as \`cogmesh keygen\` prints${keyProblem ? `; here ${keyProblem}` : ''})`,
    );
  if (text.length === 40) return key;
  const list = text.slice(41).split(',');
  const addresses = list.map((a) => (/^\d{1,5}$/.test(a) ? Number(a) : NaN));
  const bad = list.find((_a, i) => !(addresses[i]! <= MAX_NODE));
  if (bad !== undefined)
    throw new UsageError(`--allow: "${text}": ${JSON.stringify(bad)} is not a mesh address (KEY=ADDR[,ADDR...], each address 0..${MAX_NODE})`);
  return { key, addresses: [...new Set(addresses)] };
}

/**
 * The allow-list as the medium checks it: the keys ZAP lets in (canonical
 * Z85, whatever the text given) and, for each key bound to addresses, the
 * addresses it may join as.
 */
export class MediumAllowList {
  /** Each allowed key and its addresses (undefined: any). */
  private readonly byKey = new Map<string, ReadonlySet<number> | undefined>();

  constructor(allow: readonly MediumAllowed[]) {
    for (const a of allow) {
      const text = typeof a === 'string' ? a : a.key;
      const key = canonicalKey(text);
      if (key === undefined) throw new UsageError(`allow-list (--allow): "${text}" is not a CURVE public key (40 characters of Z85)`);
      if (this.byKey.has(key)) throw new UsageError(`allow-list (--allow): key ${key} is given twice (give it once, with all the addresses it may join as)`);
      this.byKey.set(key, typeof a === 'string' || a.addresses === undefined ? undefined : new Set(a.addresses));
    }
  }

  get size(): number {
    return this.byKey.size;
  }

  /** How many keys are bound to addresses (a join must then prove its key: `curveJoinProof`). */
  get bound(): number {
    return [...this.byKey.values()].filter((a) => a !== undefined).length;
  }

  /** The keys ZAP lets in. */
  keys(): string[] {
    return [...this.byKey.keys()];
  }

  /** Whether `key` is on the list. */
  has(key: string): boolean {
    const k = canonicalKey(key);
    return k !== undefined && this.byKey.has(k);
  }

  /** The addresses `key` may join as: undefined for any, [] for a key not on the list. */
  addresses(key: string): readonly number[] | undefined {
    const k = canonicalKey(key);
    if (k === undefined || !this.byKey.has(k)) return [];
    const set = this.byKey.get(k);
    return set === undefined ? undefined : [...set];
  }

  /** Whether `key` may join as `node`. */
  mayUse(key: string, node: number): boolean {
    const k = canonicalKey(key);
    if (k === undefined || !this.byKey.has(k)) return false;
    const set = this.byKey.get(k);
    return set === undefined || set.has(node);
  }
}

function canonicalKey(text: string): string | undefined {
  const b = text.length === 40 ? z85Decode(text) : undefined;
  return b && b.length === 32 ? z85Encode(b) : undefined;
}

/** What a join proof is made for: this purpose, in this version of it. */
const JOIN_PROOF_LABEL = 'cogmesh-medium-join/1';

/**
 * Which CURVE key a join comes from. The medium cannot ask its ROUTER
 * socket: libzmq keeps the key ZAP let in as the messages' metadata, which
 * zeromq.js does not expose, and the ZAP request does not carry the
 * client's routing id (its identity frame is the server socket's own; and
 * a client picks its routing id freely), so a ZAP verdict cannot be tied
 * to the connection whose messages follow.
 * Instead a router proves in its join that it holds the secret half of a
 * key: `proof` is HMAC-SHA256, keyed with the X25519 secret that only the
 * router's and the medium's secret keys compute (RFC 7748 section 6.1),
 * over a label, both public keys and the address joined as. The medium
 * computes the same from its secret key and the key the join names, and
 * lets the join in only for an address that key may use. A router holding
 * one key cannot make another's proof; the proof travels inside CURVE's
 * encryption, so nobody but the medium sees it to replay it, and it names
 * the medium's key and the address, so it is good for nothing else.
 * (The proof shows a key, not the key of the CURVE session: a router that
 * holds two allowed keys may connect with one and join with the other,
 * which gives it nothing either key does not.)
 */
export function curveJoinProof(shared: Uint8Array, mediumKey: string, routerKey: string, node: number): string {
  return createHmac('sha256', shared).update(`${JOIN_PROOF_LABEL}\n${mediumKey}\n${routerKey}\n${node}`).digest('hex');
}

/** A router's proof for its join as `node` (see `curveJoinProof`). */
export function routerJoinProof(curve: RouterCurve, node: number): { key: string; proof: string } {
  const shared = curveSharedSecret(curve.secretKey, curve.serverKey);
  if (shared === undefined) throw new UsageError('sim.medium.curve: serverKey and secretKey must be CURVE keys (40 characters of Z85)');
  return { key: curve.publicKey, proof: curveJoinProof(shared, curve.serverKey, curve.publicKey, node) };
}

/**
 * Whether `proof` shows that the join's sender holds the secret half of
 * `routerKey` (see `curveJoinProof`); `shared` caches the X25519 secret per
 * key (computed once per allowed key the medium is asked about).
 */
export function checkJoinProof(curve: MediumCurve, shared: Map<string, Uint8Array | undefined>, routerKey: string, node: number, proof: string): boolean {
  if (!shared.has(routerKey)) shared.set(routerKey, curveSharedSecret(curve.secretKey, routerKey));
  const secret = shared.get(routerKey);
  if (secret === undefined || !/^[0-9a-f]{64}$/.test(proof)) return false;
  const bytes = (hex: string): Uint8Array => Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16));
  return timingSafeEqual(bytes(curveJoinProof(secret, curve.publicKey, routerKey, node)), bytes(proof));
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
  const zap = new ZapHandler(context, new MediumAllowList(curve.allow).keys(), hooks);
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
