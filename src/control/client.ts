import { Dealer, Subscriber } from 'zeromq';
import { CONTROL_CODES, ControlError, ControlTimeoutError, type ControlReply, type TelemetryBody } from './protocol.js';

/** A client's CURVE keys: the server's public key and the client's own pair (`cogmesh keygen`). */
export interface ClientCurve {
  serverKey: string;
  publicKey: string;
  secretKey: string;
}

export interface ClientOptions {
  /** CURVE for a node whose control.curve.secretKey is set; omitted: plain (loopback or ipc only). */
  curve?: ClientCurve;
}

const security = (c: ClientCurve | undefined) => (c ? { curveServerKey: c.serverKey, curvePublicKey: c.publicKey, curveSecretKey: c.secretKey } : {});

const isEagain = (e: unknown): boolean => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'EAGAIN';

const utf8 = (f: Buffer): string => f.toString('utf8');

/**
 * A client of a router's control API: a DEALER socket, one request at a
 * time, each reply matched to its request by id (a late reply to a request
 * that timed out is dropped). A refusal comes back as a reply with `ok:
 * false`; a node that does not answer in time is a ControlTimeoutError.
 */
export class ControlClient {
  private readonly sock: Dealer;
  private nextId = 1;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly endpoint: string,
    opts: ClientOptions = {},
  ) {
    this.sock = new Dealer({ linger: 0, immediate: true, ...security(opts.curve) });
    this.sock.connect(endpoint);
  }

  /** Sends `{"id", "cmd", ...args}` and waits for its reply. */
  request(cmd: string, args: Record<string, unknown> = {}, timeoutMs = 5000): Promise<ControlReply> {
    const id = this.nextId++;
    return this.serial(() => this.exchange(JSON.stringify({ ...args, id, cmd }), timeoutMs, (r) => r.id === id));
  }

  /** Sends frames as they are (for tests of malformed requests) and returns the next reply, whatever its id. */
  requestRaw(frames: string | string[], timeoutMs = 5000): Promise<ControlReply> {
    return this.serial(() => this.exchange(frames, timeoutMs, () => true));
  }

  close(): void {
    this.sock.close();
  }

  private serial<T>(job: () => Promise<T>): Promise<T> {
    const run = this.chain.then(job, job);
    this.chain = run.catch(() => {});
    return run;
  }

  private async exchange(frames: string | string[], timeoutMs: number, mine: (r: ControlReply) => boolean): Promise<ControlReply> {
    const deadline = Date.now() + timeoutMs;
    try {
      this.sock.sendTimeout = timeoutMs;
      await this.sock.send(frames);
      for (;;) {
        this.sock.receiveTimeout = Math.max(1, deadline - Date.now());
        const msg = await this.sock.receive();
        const last = msg[msg.length - 1];
        let reply: ControlReply;
        try {
          reply = JSON.parse(last === undefined ? '' : utf8(last)) as ControlReply;
        } catch {
          throw new ControlError(CONTROL_CODES.malformed, `the node at ${this.endpoint} answered something that is not JSON`);
        }
        if (mine(reply)) return reply;
      }
    } catch (e) {
      if (isEagain(e)) throw new ControlTimeoutError(this.endpoint, timeoutMs);
      throw e;
    }
  }
}

/** One telemetry message: its topic and body. */
export interface TelemetryMessage {
  topic: string;
  body: TelemetryBody;
}

/**
 * A subscriber to a router's telemetry socket, on some topics (all when none
 * are named). Messages published before the subscription reached the node
 * are not seen (ZeroMQ PUB/SUB).
 */
export class TelemetryClient {
  private readonly sock: Subscriber;
  private readonly topics: ReadonlySet<string>;

  constructor(
    readonly endpoint: string,
    topics: readonly string[] = [],
    opts: ClientOptions = {},
  ) {
    this.sock = new Subscriber({ linger: 0, ...security(opts.curve) });
    this.topics = new Set(topics);
    if (topics.length === 0) this.sock.subscribe();
    else this.sock.subscribe(...topics);
    this.sock.connect(endpoint);
  }

  /** The next message on one of the topics; a ControlTimeoutError when none comes within timeoutMs (default: wait for ever). */
  async next(timeoutMs?: number): Promise<TelemetryMessage> {
    const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
    try {
      for (;;) {
        this.sock.receiveTimeout = deadline === undefined ? -1 : Math.max(1, deadline - Date.now());
        const [topic, body] = await this.sock.receive();
        if (topic === undefined || body === undefined) continue;
        const t = utf8(topic);
        // Subscriptions match prefixes; a topic is taken only whole.
        if (this.topics.size > 0 && !this.topics.has(t)) continue;
        return { topic: t, body: JSON.parse(utf8(body)) as TelemetryBody };
      }
    } catch (e) {
      if (isEagain(e) && !this.sock.closed) throw new ControlTimeoutError(this.endpoint, timeoutMs ?? 0);
      throw e;
    }
  }

  /** The first message (on the topics) that `pred` takes, skipping others, within timeoutMs. */
  async waitFor(pred: (m: TelemetryMessage) => boolean, timeoutMs: number): Promise<TelemetryMessage> {
    const deadline = Date.now() + timeoutMs;
    try {
      for (;;) {
        const m = await this.next(Math.max(1, deadline - Date.now()));
        if (pred(m)) return m;
      }
    } catch (e) {
      throw e instanceof ControlTimeoutError ? new ControlTimeoutError(this.endpoint, timeoutMs) : e;
    }
  }

  get closed(): boolean {
    return this.sock.closed;
  }

  close(): void {
    this.sock.close();
  }
}
