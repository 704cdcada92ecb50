import type { Duplex } from 'node:stream';
import { FrontendError, RangeArgumentError, UsageError } from '../../src/core/errors.js';
import type { PacedEngine } from '../../src/core/paced.js';
import type { Micros } from '../../src/core/time.js';
import type { Logger } from '../../src/core/log.js';
import { LINK_VERSION, parseDown, type DownMessage, type StationDecl, type UpMessage, type Welcome } from './link.js';
import { LinkOutbox } from './outbox.js';
import { connectLink, linkEndpointText, MessageReader, parseLinkEndpoint, type LinkEndpoint } from './transport.js';
import { connectCurveLink, routerJoinProof, type RouterCurve } from './curve-link.js';
import { checkSend, zeroStationCounters } from './station.js';
import type { MacFrame, Position, SendOutcome, Station, StationCounters, StationHandlers, StationHost, StationSpec } from './types.js';

export interface RemoteMediumOptions {
  endpoint: string;
  node: number;
  name: string;
  position: Position;
  /** The router's paced engine: everything the medium says enters through it. */
  paced: PacedEngine;
  log: Logger;
  /** How long to wait for the medium's welcome (ms). */
  joinTimeoutMs?: number;
  /** Frames a sender keeps queued at its station in the medium (`sim.medium.sendWindow`, default 8). */
  sendWindow?: number;
  /** The medium's public key and this router's key pair (`sim.medium.curve`): the link then runs over CURVE. */
  curve?: RouterCurve;
}

/** The default of `sim.medium.sendWindow`. */
export const SEND_WINDOW = 8;

/**
 * A router's side of the air medium process: its radios are proxies whose
 * MAC runs in the medium (`MediumServer`). A send goes out at once and its
 * outcome comes back; a frame for this router arrives as it ends its airtime.
 * A heartbeat tells the medium the router is alive; if the medium forgot it
 * (restarted, or thought it gone) or the connection broke, the router
 * connects and joins again with its radios.
 */
export class RemoteMedium implements StationHost {
  readonly counters = { received: 0, malformed: 0, refused: 0, rejoins: 0, dropped: 0 };
  private sock: Duplex | undefined;
  /** The socket of the latest connection attempt (it becomes `sock` once connected). */
  private attempt: Duplex | undefined;
  private readonly endpoint: LinkEndpoint;
  private everConnected = false;
  private reconnect: NodeJS.Timeout | undefined;
  private rejoinRetry: NodeJS.Timeout | undefined;
  private readonly stations = new Map<string, RemoteStation>();
  private readonly outbox = new LinkOutbox();
  private closed = false;
  private beat: NodeJS.Timeout | undefined;
  private welcomed: Welcome | undefined;
  /** A join is on its way after the medium forgot this router: further refusals are of messages sent before it. */
  private rejoining = false;
  private lastRefusal: string | undefined;
  private waitWelcome: ((w: Welcome | Error) => void) | undefined;

  /**
   * R2's MAC window: frames queued at its station in the medium, so that the
   * link's round trip (a few hundred µs to ms between processes) does not
   * come between one frame's end and the next one's start. A retune or a
   * hold gives back what the station holds (server.ts), so a frame is never
   * sent on a channel other than the one it was queued for.
   */
  readonly sendWindow: number;

  private constructor(private readonly o: RemoteMediumOptions) {
    this.endpoint = parseLinkEndpoint(o.endpoint, 'sim.medium.endpoint');
    if (o.curve && this.endpoint.kind === 'ipc') throw new UsageError(`sim.medium.curve: CURVE runs over tcp only, the medium's endpoint is ${o.endpoint}`);
    const w = o.sendWindow ?? SEND_WINDOW;
    if (!Number.isSafeInteger(w) || w < 1 || w > 64) throw new RangeArgumentError('sim.medium.sendWindow', w, 'an integer number of frames in 1..64');
    this.sendWindow = w;
    this.keyProof = o.curve ? routerJoinProof(o.curve, o.node) : {};
  }

  /** Connects, joins and waits for the medium's welcome (refused with a clear error when it does not come). */
  static async connect(o: RemoteMediumOptions): Promise<RemoteMedium> {
    const m = new RemoteMedium(o);
    m.open();
    const timeoutMs = o.joinTimeoutMs ?? 10_000;
    const w = await new Promise<Welcome | Error>((resolve) => {
      const timer = setTimeout(
        () =>
          resolve(
            new FrontendError(
              'RADIO_NO_MEDIUM',
              m.lastRefusal
                ? `sim.medium.endpoint: the medium at ${o.endpoint} kept refusing this router for ${timeoutMs} ms: ${m.lastRefusal}`
                : m.lastError !== undefined && o.curve
                  ? `sim.medium.endpoint: the medium at ${o.endpoint} did not let this router in within ${timeoutMs} ms: ${m.lastError}`
                  : `sim.medium.endpoint: no air medium answered at ${o.endpoint} within ${timeoutMs} ms (is \`cogmesh medium\` running there?)`,
            ),
          ),
        timeoutMs,
      );
      m.waitWelcome = (v) => {
        clearTimeout(timer);
        resolve(v);
      };
    });
    m.waitWelcome = undefined;
    if (w instanceof Error) {
      m.close();
      throw w;
    }
    // Heartbeats from the welcome on (before it, a beat would only be refused: not joined yet).
    m.beat = setInterval(() => m.post({ t: 'beat' }), 250);
    return m;
  }

  get welcome(): Welcome {
    if (!this.welcomed) throw new FrontendError('RADIO_NO_MEDIUM', 'the medium has not welcomed this router');
    return this.welcomed;
  }

  addStation(spec: StationSpec, handlers: StationHandlers): Station {
    if (this.stations.has(spec.id)) throw new FrontendError('RADIO_DUPLICATE_ID', `a station with id ${JSON.stringify(spec.id)} is already attached`);
    const decl: StationDecl = {
      id: spec.id,
      acceptsUnicast: spec.acceptsUnicast,
      acceptsBroadcast: spec.acceptsBroadcast,
      ...(spec.channel !== undefined ? { channel: spec.channel } : {}),
      ...(spec.pnAffected !== undefined ? { pnAffected: spec.pnAffected } : {}),
      ...(spec.queueLimit !== undefined ? { queueLimit: spec.queueLimit } : {}),
    };
    const st = new RemoteStation(decl, handlers, this.welcome.channels, (m) => this.post(m));
    this.stations.set(spec.id, st);
    this.post({ t: 'station', spec: decl });
    return st;
  }

  /** Leaves the medium (its radios go off the air at once) and closes the socket. */
  close(): void {
    if (this.closed) return;
    if (this.beat) clearInterval(this.beat);
    if (this.reconnect) clearTimeout(this.reconnect);
    if (this.rejoinRetry) clearTimeout(this.rejoinRetry);
    if (this.welcomed) this.post({ t: 'leave' });
    this.outbox.flush();
    this.closed = true;
    // A connection still being attempted (a medium that never answered) is dropped at once.
    if (this.attempt && this.attempt !== this.sock) this.attempt.destroy();
    this.sock?.end();
    const s = this.sock;
    if (s) setTimeout(() => s.destroy(), 50).unref();
  }

  private join(): void {
    this.post({ t: 'join', version: LINK_VERSION, node: this.o.node, name: this.o.name, position: this.o.position, ...this.keyProof });
  }

  /** Over CURVE, the join proves this router's key (the medium holds each key to its addresses). */
  private readonly keyProof: { key: string; proof: string } | Record<string, never>;

  /** Joins again and brings the radios back; what they had in flight is lost. */
  private rejoin(): void {
    this.rejoining = true;
    this.join();
    this.o.paced.inject((now) => {
      for (const st of this.stations.values()) st.redeclare(now);
    });
  }

  /** Connects; once connected, joins (again, with the radios, after a broken connection). */
  private open(): void {
    const reader = new MessageReader();
    const onData = (chunk: Buffer): void => {
      const got = reader.push(chunk);
      if (got instanceof Error) {
        this.counters.malformed++;
        this.o.log.warn({ event: 'medium-malformed', code: 'LINK_MALFORMED' }, `closed the link to the medium: ${got.message}`);
        s.destroy();
        return;
      }
      // What the router answers to this read (a relay's sends) leaves in one write at its end.
      this.outbox.hold();
      try {
        for (const message of got) this.take(message);
      } finally {
        this.outbox.release();
      }
    };
    // A plain socket hands its reads straight to onData; a CURVE link is a stream of its own.
    const s: Duplex = this.o.curve ? connectCurveLink(linkEndpointText(this.endpoint), this.o.curve).on('data', onData) : connectLink(this.endpoint, onData);
    this.attempt = s;
    s.on('connect', () => {
      this.sock = s;
      if (!this.everConnected) {
        this.everConnected = true;
        this.join();
      } else if (this.welcomed) {
        this.counters.rejoins++;
        this.o.log.warn({ event: 'medium-rejoin', reason: 'reconnected' }, 'connected to the medium again; joining again');
        this.rejoin();
      } else this.join();
    });
    s.on('error', (e) => {
      if (this.lastError !== e.message) this.o.log.debug({ event: 'medium-link-error', err: e }, `link to the medium: ${e.message}`);
      this.lastError = e.message;
    });
    s.on('close', () => {
      if (this.sock === s) this.sock = undefined;
      if (this.closed) return;
      if (this.welcomed) this.o.log.warn({ event: 'medium-disconnected' }, `the link to the medium at ${this.o.endpoint} closed; connecting again`);
      this.reconnect = setTimeout(() => this.open(), 250);
      this.reconnect.unref();
    });
  }

  private lastError: string | undefined;

  /** One link message from the medium. */
  private take(message: Buffer): void {
    const batch = parseDown(message);
    for (const e of batch.errors) {
      this.counters.malformed++;
      this.o.log.warn({ event: 'medium-malformed', code: e.code }, `dropped a malformed message from the medium: ${e.message}`);
    }
    // A batch enters the router's engine at once: its messages in order, each at the time the batch arrived.
    // A fault in the router's own events while taking one is logged, and the link goes on.
    const fault = (e: unknown): void => this.o.log.error({ event: 'medium-fault', err: e }, `router: an event failed: ${(e as Error).message}`);
    try {
      this.o.paced.inject(() => {
        for (const m of batch.messages) {
          this.counters.received++;
          try {
            this.dispatch(m);
          } catch (e) {
            fault(e);
          }
        }
      });
    } catch (e) {
      fault(e);
    }
  }

  private dispatch(m: DownMessage): void {
    switch (m.t) {
      case 'welcome':
        this.rejoining = false;
        if (this.welcomed && m.epochUs !== this.welcomed.epochUs) {
          this.o.log.warn(
            { event: 'medium-restarted' },
            'the medium restarted: its PN bursts now differ from what this router senses until the router restarts',
          );
        }
        this.welcomed ??= m;
        this.waitWelcome?.(m);
        return;
      case 'refused':
        this.counters.refused++;
        if (!this.welcomed) {
          // Not yet in (e.g. the process this one replaces still holds the address until the medium
          // takes it for gone): ask again shortly, until the join times out.
          if (this.lastRefusal === undefined)
            this.o.log.warn({ event: 'medium-refused', reason: m.reason }, `the medium refused this router for now: ${m.reason}; asking again`);
          this.lastRefusal = m.reason;
          setTimeout(() => this.join(), 500).unref();
          return;
        }
        // The medium forgot this router: join again, once, and bring the radios back. Refusals that follow
        // are of messages sent before that join; if no welcome comes (the medium still held this router's
        // address for a connection it had not yet seen close), the router asks again.
        if (this.rejoining) {
          this.rejoinRetry ??= setTimeout(() => {
            this.rejoinRetry = undefined;
            if (this.rejoining && !this.closed) this.rejoin();
          }, 500);
          return;
        }
        this.counters.rejoins++;
        this.o.log.warn({ event: 'medium-rejoin', reason: m.reason }, `the medium forgot this router (${m.reason}); joining again`);
        this.rejoin();
        return;
      default: {
        const st = this.stations.get(m.st);
        if (!st) {
          this.counters.malformed++;
          return;
        }
        // Inside the batch's inject (take): at the engine's time.
        st.hear(m, this.o.paced.now());
      }
    }
  }

  private post(m: UpMessage): void {
    if (this.closed) return;
    // While the link is down nothing is sent (the router joins again when it is back); a medium
    // that does not read must not make this router grow without bound (the outbox's limit).
    if (!this.sock || !this.outbox.post(this.sock, m)) this.counters.dropped++;
  }
}

interface Outstanding {
  seq: number;
  frame: MacFrame;
}

/** One radio of this router, its MAC running in the medium. */
class RemoteStation implements Station {
  readonly id: string;
  private ch: number | undefined;
  private readonly outstanding: Outstanding[] = [];
  private headAttempts = 0;
  private nextSeq = 0;
  private detached = false;
  private fromMedium: StationCounters = zeroStationCounters();
  private localQueueDrops = 0;
  private readonly queueLimit: number;

  constructor(
    private readonly decl: StationDecl,
    private readonly handlers: StationHandlers,
    private readonly channels: number,
    private readonly post: (m: UpMessage) => void,
  ) {
    this.id = decl.id;
    this.ch = decl.channel;
    this.queueLimit = decl.queueLimit ?? 64;
  }

  get channel(): number | undefined {
    return this.ch;
  }

  get counters(): StationCounters {
    return { ...this.fromMedium, queueDrops: this.fromMedium.queueDrops + this.localQueueDrops };
  }

  get idle(): boolean {
    return this.outstanding.length === 0;
  }

  get queued(): number {
    return Math.max(0, this.outstanding.length - 1);
  }

  get serviceAttempts(): number | undefined {
    return this.outstanding.length > 0 ? this.headAttempts : undefined;
  }

  send(frame: MacFrame): boolean {
    checkSend(this.id, this.detached, frame);
    if (this.outstanding.length > 0 && this.queued >= this.queueLimit) {
      this.localQueueDrops++;
      return false;
    }
    const seq = this.nextSeq++;
    this.outstanding.push({ seq, frame });
    this.post({ t: 'send', st: this.id, seq, src: frame.src, dst: frame.dst, payload: frame.payload });
    return true;
  }

  /** Gives back the frames queued behind the one in service (they come back 'aborted'). */
  hold(): void {
    if (this.detached || this.outstanding.length <= 1) return;
    this.post({ t: 'hold', st: this.id });
  }

  /** On the medium, a remote retune also gives back the frames queued behind the one in service (server.ts). */
  retune(channel: number | undefined, overheadUs: Micros): void {
    if (this.detached) throw new FrontendError('RADIO_DETACHED', `station ${this.id} is detached from the medium`);
    if (channel !== undefined && !(Number.isInteger(channel) && channel >= 1 && channel <= this.channels)) {
      throw new RangeArgumentError('channel', channel, `a channel of the plan (1..${this.channels})`);
    }
    if (!Number.isSafeInteger(overheadUs) || overheadUs < 0) throw new RangeArgumentError('overheadUs', overheadUs, 'an integer number of µs >= 0');
    this.ch = channel;
    // The exchange in service is aborted there; its frame comes back as 'aborted'.
    this.headAttempts = 0;
    this.post({ t: 'retune', st: this.id, channel: channel ?? null, overheadUs });
  }

  detach(): void {
    if (this.detached) return;
    this.detached = true;
    this.post({ t: 'detach', st: this.id });
  }

  /** After a rejoin: the medium gets this radio again, on its current channel; what was in flight there is lost. */
  redeclare(now: Micros): void {
    if (this.detached) return;
    const { channel: _old, ...rest } = this.decl;
    this.post({ t: 'station', spec: { ...rest, ...(this.ch !== undefined ? { channel: this.ch } : {}) } });
    const lost = this.outstanding.splice(0, this.outstanding.length);
    this.headAttempts = 0;
    for (const o of lost) this.handlers.onSent(o.frame, { ok: false, reason: 'aborted', attempts: 0, atUs: now });
  }

  /** What the medium said about this radio. */
  hear(m: Exclude<DownMessage, { t: 'welcome' } | { t: 'refused' }>, now: Micros): void {
    switch (m.t) {
      case 'rx':
        this.handlers.onReceive({ src: m.src, dst: m.dst, payload: m.payload }, now);
        return;
      case 'attempt':
        if (this.outstanding[0]?.seq === m.seq) this.headAttempts = m.attempts;
        return;
      case 'sent': {
        const out = this.outstanding;
        let i = 0;
        while (i < out.length && out[i]!.seq !== m.seq) i++;
        if (i === out.length) return;
        const o = out[i]!;
        if (i === 0) {
          out.shift();
          this.headAttempts = 0;
        } else out.splice(i, 1);
        const outcome: SendOutcome = m.outcome;
        outcome.atUs = now;
        this.handlers.onSent(o.frame, outcome);
        return;
      }
      case 'counters':
        this.fromMedium = m.counters;
        return;
    }
  }
}
