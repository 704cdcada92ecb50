import { Router, type Context } from 'zeromq';
import { z85Decode, z85Encode } from './z85.js';

/**
 * The ZAP handler (ZeroMQ RFC 27) that enforces a CURVE server's allow-list:
 * the control API's and the air medium's. libzmq asks the ZAP handler of
 * the socket's context about every CURVE handshake: a socket bound at
 * `inproc://zeromq.zap.01` in that context. Each server has its own
 * context, so several can run in one process, each with its own allow-list.
 */

export const ZAP_ENDPOINT = 'inproc://zeromq.zap.01';

/** One ZAP verdict, for logs and counters. */
export interface ZapDecision {
  allowed: boolean;
  /** The client's public key (Z85), undefined when it did not come with CURVE. */
  clientKey: string | undefined;
  address: string;
  mechanism: string;
}

const text = (f: Buffer | undefined): string => (f === undefined ? '' : f.toString('latin1'));

/**
 * A ZAP handler: answers 200 to CURVE handshakes from the allowed client keys
 * and 400 to everything else, so a client not on the list gets no session.
 */
export class ZapHandler {
  private readonly sock: Router;
  private readonly allowed: Set<string>;
  private loop: Promise<void> | undefined;

  constructor(
    context: Context,
    allow: readonly string[],
    private readonly hooks: { decision?: (d: ZapDecision) => void; error?: (e: unknown) => void } = {},
  ) {
    this.sock = new Router({ context, linger: 0 });
    // Keys compare as bytes (by their canonical Z85) whatever the text given.
    this.allowed = new Set(
      allow.flatMap((k) => {
        const b = z85Decode(k);
        return b && b.length === 32 ? [z85Encode(b)] : [];
      }),
    );
  }

  /** Binds the handler in its context; from then on every CURVE handshake in it asks here. */
  async start(): Promise<void> {
    await this.sock.bind(ZAP_ENDPOINT);
    this.loop = this.serve();
  }

  async stop(): Promise<void> {
    this.sock.close();
    await this.loop;
  }

  private async serve(): Promise<void> {
    try {
      for await (const frames of this.sock) {
        // RFC 27 request, after the Router's routing id and the REQ-style empty delimiter:
        // version, request id, domain, address, identity, mechanism, credentials...
        const [rid, empty, version, requestId, _domain, address, _identity, mechanism, key] = frames;
        if (rid === undefined || empty === undefined) continue;
        const mech = text(mechanism);
        const clientKey = mech === 'CURVE' && key !== undefined && key.length === 32 ? z85Encode(key) : undefined;
        const ok = text(version) === '1.0' && clientKey !== undefined && this.allowed.has(clientKey);
        this.hooks.decision?.({ allowed: ok, clientKey, address: text(address), mechanism: mech });
        await this.sock.send([rid, empty, '1.0', requestId ?? '', ok ? '200' : '400', ok ? 'OK' : 'client key not allowed', ok ? (clientKey ?? '') : '', '']);
      }
    } catch (e) {
      if (!this.sock.closed) this.hooks.error?.(e);
    }
  }
}
