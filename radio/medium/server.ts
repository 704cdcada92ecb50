import { unlink } from 'node:fs/promises';
import type { Duplex } from 'node:stream';
import type { BandConfig } from '../sim/band.js';
import { isLoopbackHost } from '../../src/core/address.js';
import { CogmeshError, RangeArgumentError, UsageError } from '../../src/core/errors.js';
import { LogBudget } from '../../src/core/log-budget.js';
import { PacedEngine } from '../../src/core/paced.js';
import { Rng } from '../../src/core/rng.js';
import { assertMicros, US_PER_MS, US_PER_S, type Micros } from '../../src/core/time.js';
import type { Logger } from '../../src/core/log.js';
import { ism2g4, type ChannelPlan } from '../channels.js';
import { EmulatedBand } from '../sim/band.js';
import { LINK_VERSION, parseUp, type DownMessage, type UpMessage, type Welcome } from './link.js';
import { LinkOutbox } from './outbox.js';
import { checkJoinProof, listenCurveLink, MediumAllowList, type MediumCurve } from './curve-link.js';
import { linkEndpointText, listenLink, MessageReader, parseLinkEndpoint, type LinkEndpoint } from './transport.js';
import { AirMedium } from './medium.js';
import type { MediumParams, PhyParams, Position, Station } from './types.js';

/** Everything the medium process is made of: the band's PNs, the channels, the MAC and PHY. */
export interface MediumSetup {
  channels: 11 | 13;
  orthogonal: boolean;
  band: BandConfig;
  bandSeed: number;
  controlChannelPn: boolean;
  medium: MediumParams;
  phy: PhyParams;
}

/** A setup as JSON: Infinity (no RTS/CTS threshold) survives as the string "Infinity". */
export function mediumSetupJson(s: MediumSetup): string {
  return JSON.stringify(s, (_k, v: unknown) => (v === Infinity ? 'Infinity' : v), 2);
}

/** Reads a setup that `mediumSetupJson` wrote; the medium checks its values when it starts. */
export function parseMediumSetup(text: string): MediumSetup {
  return JSON.parse(text, (_k, v: unknown) => (v === 'Infinity' ? Infinity : v)) as MediumSetup;
}

export interface MediumServerOptions {
  /** Endpoint to listen on, e.g. tcp://127.0.0.1:7600 or ipc:///run/cogmesh/medium. */
  endpoint: string;
  log: Logger;
  /** A router silent this long is taken for gone: its radios leave the air. */
  silenceUs?: Micros;
  /**
   * How far ahead of the real clock the MAC may run (µs, default 1000): a
   * frame exchange's steps, tens of µs apart, then run without a
   * millisecond timer each (see `PacedEngine`).
   */
  aheadUs?: Micros;
  /**
   * How long what a router's input made the medium say may wait for the
   * engine's next wake-up, to leave with what that wake-up says (µs,
   * default `aheadUs`; 0: at the end of the turn, as before).
   */
  holdUs?: Micros;
  /**
   * Time origin of the PN processes (epoch µs, at or before now; default:
   * now). A medium started again with the epoch of the one before it runs
   * the very PN bursts the routers already sense (they keep the band of
   * their first welcome): the testbed restarts a medium that died so.
   */
  epochUs?: Micros;
  /**
   * CURVE keys and the router keys let in: the link then runs over ZeroMQ,
   * encrypted, and only routers on `allow` join, each as an address its
   * key may use (`MediumAllowed`). Required on a tcp endpoint
   * beyond loopback (a station that can reach the medium can put frames on
   * the air under its address); not for ipc, which has no CURVE.
   */
  curve?: MediumCurve;
  /**
   * How often a 'medium-stats' line gives the counters while the medium
   * runs (µs of its paced clock; 0 or absent: never), when any changed
   * since the last line; `stop` then writes a final one.
   */
  statsIntervalUs?: Micros;
}

interface Peer {
  key: string;
  conn: Duplex;
  node: number;
  name: string;
  position: Position;
  /** Distinguishes a router's stations from those of its earlier runs on the medium. */
  incarnation: number;
  stations: Map<string, Station>;
  lastHeardUs: Micros;
  gone: boolean;
}

export interface MediumServerCounters {
  received: number;
  /** Messages that could not be read, or asked for what the router does not have (a station it never declared). */
  malformed: number;
  refused: number;
  /**
   * The same by reason: `not-joined` (a message before a join, or after the
   * medium took the router for gone), `address-held` (a join claiming an
   * address a live router holds), `spoofed-source` (a frame whose source is
   * not the address its connection joined with), `key-address` (over
   * CURVE, a join as an address the key it proves may not use, or that
   * proves no key on the allow-list).
   */
  refusedByReason: Record<RefusalReason, number>;
  joins: number;
  gone: number;
  sent: number;
  /** Faults of the medium's own: something it did for a message or an event threw. The medium went on. */
  faults: number;
  /** The same by reason: the error's stable code (CORE_OUT_OF_RANGE, ...), or its class name when it has none. */
  faultsByReason: Record<string, number>;
  /** CURVE handshakes let in and refused by the allow-list (both 0 without CURVE). */
  zapAllowed: number;
  zapDenied: number;
}

/** Why the medium refused a router's message (`counters.refusedByReason`). */
export type RefusalReason = 'not-joined' | 'address-held' | 'spoofed-source' | 'key-address';

/** A message asks for what the medium cannot do for this router: counted with the malformed ones, not a fault. */
class LinkRefusal extends CogmeshError {
  constructor(message: string) {
    super('LINK_REFUSED', message);
  }
}

/**
 * A medium reachable beyond this machine must authenticate who joins: any
 * station that reaches it puts frames on the air under the address it joins
 * with. CURVE runs over tcp only.
 */
function checkExposure(e: LinkEndpoint, curve: MediumCurve | undefined): void {
  if (e.kind === 'ipc') {
    if (curve) throw new UsageError(`medium endpoint ipc://${e.path}: CURVE runs over tcp only (an ipc socket is guarded by its file's permissions)`);
    return;
  }
  if (!curve && !isLoopbackHost(e.host)) {
    throw new UsageError(
      `medium endpoint ${linkEndpointText(e)} is reachable beyond this machine: give the medium CURVE keys and the routers' public keys (--key-file, --allow), or bind a loopback or ipc endpoint`,
    );
  }
}

/** `: REASON n, ...` for counts by reason (those above 0), or nothing when there were none. */
export function byReasonText(byReason: Readonly<Record<string, number>>): string {
  const parts = Object.entries(byReason)
    .filter(([, n]) => n > 0)
    .map(([reason, n]) => `${reason} ${n}`);
  return parts.length > 0 ? `: ${parts.join(', ')}` : '';
}

/**
 * The counters as the flat fields of a log line: each count by reason
 * (those above 0) as `refused.REASON` and `faults.REASON` beside the
 * totals, so that a log query reads any of them as one field.
 */
export function flatCounters(c: MediumServerCounters): Record<string, number> {
  const { refusedByReason, faultsByReason, ...totals } = c;
  const out: Record<string, number> = { ...totals };
  for (const [r, n] of Object.entries(refusedByReason)) if (n > 0) out[`refused.${r}`] = n;
  for (const [r, n] of Object.entries(faultsByReason)) if (n > 0) out[`faults.${r}`] = n;
  return out;
}

/** What a fault is counted under: its stable code, else its class name. */
export function faultReason(e: unknown): string {
  if (e instanceof CogmeshError) return e.code;
  if (e instanceof Error) return e.name;
  return typeof e;
}

/**
 * The emulated air as a process of its own: routers' `sim` radios join it
 * over ZeroMQ and it runs every station's 802.11 DCF MAC, the propagation,
 * collisions, capture and PN interference, exactly as the simulator does in
 * virtual time, here on the real clock (a paced event engine). A router
 * that falls silent (killed, crashed) leaves the air after `silenceUs`: its
 * frames stop and frames to it go unacknowledged, as when a router PC dies.
 *
 * Nothing a router sends and no fault of its own ends the medium: a fault
 * while serving one message, running one event of the MAC or sweeping is
 * counted by reason (`counters.faultsByReason`) and logged, the first of a
 * reason at once and then at most one line per reason every 10 s
 * (`LogBudget`), and the medium goes on with the next.
 *
 * Whoever reaches the medium puts frames on the air, so a station speaks
 * only for the address its connection joined with (a frame claiming another
 * source is refused), an address belongs to one live router, and beyond
 * loopback only routers whose CURVE key is on `curve.allow` get in, each
 * only as an address its key may use (a key bound to addresses proves
 * itself in the join: curve-link.ts `curveJoinProof`). Those
 * refusals are counted by reason (`counters.refusedByReason`, `zapDenied`)
 * and logged within the same budget.
 */
export class MediumServer {
  readonly counters: MediumServerCounters = {
    received: 0,
    malformed: 0,
    refused: 0,
    refusedByReason: { 'not-joined': 0, 'address-held': 0, 'spoofed-source': 0, 'key-address': 0 },
    joins: 0,
    gone: 0,
    sent: 0,
    faults: 0,
    faultsByReason: {},
    zapAllowed: 0,
    zapDenied: 0,
  };
  readonly paced: PacedEngine;
  readonly air: AirMedium;
  readonly band: EmulatedBand;
  readonly epochUs: Micros;
  private listener: { close(): Promise<void> } | undefined;
  private readonly conns = new Set<Duplex>();
  private connections = 0;
  private readonly endpoint: LinkEndpoint;
  private readonly peers = new Map<string, Peer>();
  private readonly byNode = new Map<number, Peer>();
  private incarnations = 0;
  private readonly outbox: LinkOutbox;
  private closed = false;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly silenceUs: Micros;
  private readonly plan: ChannelPlan;
  /** Lines about faults, malformed and refused messages: a few a minute, however many there are. */
  /** One line of a kind (event and detail) every 10 s at most. */
  private readonly logBudget = new LogBudget(1, 10 * US_PER_S);
  /** Over CURVE: the keys let in and the addresses each may join as. */
  private readonly allowList: MediumAllowList | undefined;
  /** The X25519 secret shared with each allowed key a join named (for its proof). */
  private readonly joinSecrets = new Map<string, Uint8Array | undefined>();

  constructor(
    readonly setup: MediumSetup,
    private readonly o: MediumServerOptions,
  ) {
    const aheadUs = o.aheadUs ?? MediumServer.AHEAD_US;
    this.holdUs = o.holdUs ?? aheadUs;
    this.paced = new PacedEngine(undefined, {
      aheadUs,
      afterRun: (fromTimer) => this.afterRun(fromTimer),
      onFault: (e) => this.fault('event', e),
    });
    this.outbox = new LinkOutbox(undefined, true);
    this.endpoint = parseLinkEndpoint(o.endpoint);
    checkExposure(this.endpoint, o.curve);
    this.allowList = o.curve ? new MediumAllowList(o.curve.allow) : undefined;
    const now = this.paced.now();
    this.epochUs = o.epochUs === undefined ? now : assertMicros('epochUs', o.epochUs);
    if (this.epochUs > now) throw new RangeArgumentError('epochUs', o.epochUs, `a time at or before now (${now} epoch µs)`);
    this.silenceUs = o.silenceUs ?? 2000 * US_PER_MS;
    const full = ism2g4(setup.channels);
    const plan = setup.orthogonal ? full.asOrthogonal() : full;
    this.plan = plan;
    this.band = new EmulatedBand(plan, setup.band, Rng.fromSeed(setup.bandSeed).fork('band'), { startUs: this.epochUs, historyUs: 60 * US_PER_S });
    this.air = new AirMedium({ scheduler: this.paced.engine, plan, rng: Rng.fromSeed(setup.bandSeed).fork('medium'), pn: this.band }, setup.medium, setup.phy);
  }

  /** The default of `aheadUs`: about one tick of Node's timers. */
  static readonly AHEAD_US: Micros = 1000;

  private readonly holdUs: Micros;
  private flushSet = false;
  private readonly flushNow = (): void => {
    this.flushSet = false;
    try {
      this.outbox.flush();
    } catch (e) {
      this.fault('flush', e);
    }
  };

  /**
   * When what the engine's run staged leaves. A router's frame makes the MAC
   * answer at once (its attempt, its neighbour's reception): each answer in
   * a write of its own would wake the routers once more per frame. Such
   * answers wait for the engine's next wake-up when it is at most `holdUs`
   * away, and leave with what it says: a router then wakes about once per
   * wake-up of the medium, however many frames cross. Either way they leave
   * at the end of an event-loop turn, several inputs' in one write.
   */
  private afterRun(fromTimer: boolean): void {
    if (this.flushSet || !this.outbox.pending) return;
    if (!fromTimer && this.holdUs > 0) {
      const wake = this.paced.nextWakeUs;
      if (wake !== undefined && wake - this.paced.clock.now() <= this.holdUs) return;
    }
    this.flushSet = true;
    setImmediate(this.flushNow);
  }

  /** Binds the endpoint and serves until `stop`. */
  async start(): Promise<void> {
    const curve = this.o.curve;
    if (curve) {
      this.listener = await listenCurveLink(linkEndpointText(this.endpoint), curve, (c) => this.accept(c), {
        decision: (d) => {
          if (d.allowed) this.counters.zapAllowed++;
          else {
            this.counters.zapDenied++;
            this.note(
              'warn',
              'medium-denied',
              'curve',
              { clientKey: d.clientKey ?? null, address: d.address, mechanism: d.mechanism },
              `refused a ${d.mechanism} router from ${d.address} (key ${d.clientKey ?? 'none'} is not on the allow-list)`,
            );
          }
        },
        error: (e) => this.fault('zap', e),
      });
      if (this.allowList!.size === 0) this.o.log.warn({ event: 'medium-no-routers' }, 'medium: CURVE is on and the allow-list is empty: no router can join');
    } else {
      const server = await listenLink(this.endpoint, (c) => this.accept(c));
      this.listener = { close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
    }
    this.paced.start();
    this.statsAtUs = this.paced.clock.now();
    this.lastStats = this.statsText();
    this.sweeper = setInterval(() => {
      try {
        this.paced.inject((now) => this.sweep(now));
      } catch (e) {
        this.fault('sweep', e);
      }
    }, 250);
    this.o.log.info(
      { event: 'medium-start', endpoint: this.o.endpoint, channels: this.setup.channels, epochUs: this.epochUs, curve: curve !== undefined },
      `air medium on ${linkEndpointText(this.endpoint)}${curve ? ` (CURVE, ${this.allowList!.size} router key(s) allowed, ${this.allowList!.bound} bound to addresses)` : ''}: ${this.setup.channels} channels, ${this.setup.phy.dataRateBps / 1e6} Mbps, ${this.setup.band.pn.length + this.setup.band.phases.length} PN source(s)`,
    );
  }

  async stop(): Promise<void> {
    if (this.closed) return;
    if ((this.o.statsIntervalUs ?? 0) > 0) this.logStats(true);
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.paced.stop();
    for (const c of this.conns) c.destroy();
    await this.listener?.close();
    if (this.endpoint.kind === 'ipc') await unlink(this.endpoint.path).catch(() => undefined);
  }

  /** The routers on the air now: address, name, position, radios. */
  routers(): Array<{ node: number; name: string; position: Position; stations: string[] }> {
    return [...this.byNode.values()].map((p) => ({ node: p.node, name: p.name, position: p.position, stations: [...p.stations.keys()] }));
  }

  /** A router connected: its link messages in, until it closes (its radios then leave the air). */
  private accept(c: Duplex): void {
    if (this.closed) {
      c.destroy();
      return;
    }
    const key = `c${++this.connections}`;
    this.conns.add(c);
    const reader = new MessageReader();
    c.on('data', (chunk: Buffer) => {
      const got = reader.push(chunk);
      if (got instanceof Error) {
        this.counters.malformed++;
        this.note('warn', 'medium-malformed', 'LINK_MALFORMED', { code: 'LINK_MALFORMED', peer: key }, `closed a connection: ${got.message}`);
        c.destroy();
        return;
      }
      for (const message of got) {
        try {
          this.paced.inject((now) => this.handle(c, key, message, now));
        } catch (e) {
          this.fault('message', e, { peer: key });
        }
      }
    });
    c.on('error', (e) => this.o.log.debug({ event: 'medium-conn-error', peer: key, err: e }, `connection ${key}: ${e.message}`));
    c.on('close', () => {
      this.conns.delete(c);
      this.outbox.forget(c);
      const peer = this.peers.get(key);
      if (!peer || peer.gone || this.closed) return;
      try {
        this.paced.inject(() => this.leave(peer, 'disconnected'));
      } catch (e) {
        this.fault('leave', e, { node: peer.node });
      }
    });
  }

  /** One link message from a router: its messages in order, each on its own (a bad one is counted and dropped). */
  private handle(conn: Duplex, key: string, message: Buffer, now: Micros): void {
    const batch = parseUp(message);
    for (const e of batch.errors) {
      this.counters.malformed++;
      this.note('warn', 'medium-malformed', e.code, { code: e.code, peer: key }, `dropped a malformed message: ${e.message}`);
    }
    for (const msg of batch.messages) {
      this.counters.received++;
      try {
        this.take(conn, key, msg, now);
      } catch (e) {
        this.fault('message', e, { peer: key, t: msg.t });
      }
    }
  }

  private take(conn: Duplex, key: string, msg: UpMessage, now: Micros): void {
    if (msg.t === 'join') {
      this.join(conn, key, msg, now);
      return;
    }
    const peer = this.peers.get(key);
    if (!peer || peer.gone) {
      this.refuse('not-joined');
      // A beat is answered too: a router the medium forgot learns it even when it has nothing to send.
      if (msg.t !== 'leave') this.post(conn, { t: 'refused', reason: 'not joined (join first, or the medium took this router for gone)' });
      return;
    }
    peer.lastHeardUs = now;
    try {
      this.apply(peer, msg);
    } catch (e) {
      // A send the medium cannot carry out still ends: the router's radio must not wait for it for ever.
      if (msg.t === 'send') this.abort(conn, msg, now);
      if (e instanceof LinkRefusal) {
        this.counters.malformed++;
        this.note('warn', 'medium-refused', msg.t, { node: peer.node, t: msg.t, err: e }, `router ${peer.name}: ${msg.t} refused: ${e.message}`);
      } else {
        this.fault('message', e, { node: peer.node, t: msg.t });
        this.reset(peer, msg.t);
      }
    }
  }

  /**
   * After a fault while serving a router's message, what the MAC holds for
   * its radios is in doubt (a frame taken into service whose access was
   * never scheduled would hold the radio for ever): its radios leave the air
   * and it is told to join again, which brings them back clean and gives
   * back what they had in flight. At most once per router every log interval,
   * so a fault that keeps coming does not make routers churn.
   */
  private reset(peer: Peer, t: string): void {
    const now = this.paced.clock.now();
    const last = this.resetAtUs.get(peer.node);
    if (last !== undefined && now - last < this.logBudget.windowUs) return;
    this.resetAtUs.set(peer.node, now);
    this.leave(peer, `a fault while serving its ${t}`);
    this.post(peer.conn, { t: 'refused', reason: 'the medium had a fault serving this router: join again' });
  }

  private readonly resetAtUs = new Map<number, Micros>();

  private refuse(reason: RefusalReason): void {
    this.counters.refused++;
    this.counters.refusedByReason[reason]++;
  }

  private abort(conn: Duplex, msg: Extract<UpMessage, { t: 'send' }>, now: Micros): void {
    this.post(conn, { t: 'sent', st: msg.st, seq: msg.seq, outcome: { ok: false, reason: 'aborted', attempts: 0, atUs: now } });
  }

  /**
   * A fault of the medium's own (`where`: a message, an event of the MAC, the
   * sweep): counted by reason and logged within the budget; the medium goes on.
   */
  private fault(where: string, e: unknown, fields: Record<string, unknown> = {}): void {
    const reason = faultReason(e);
    const count = (this.counters.faultsByReason[reason] ?? 0) + 1;
    this.counters.faultsByReason[reason] = count;
    this.counters.faults++;
    const what = e instanceof Error ? e.message : String(e);
    this.note('error', 'medium-fault', reason, { where, reason, count, err: e, ...fields }, `medium: ${where} failed (${reason}): ${what}; the medium goes on`);
  }

  /** A line of a kind (event and detail) that may come once per message: logged within the budget. */
  private note(level: 'warn' | 'error', event: string, detail: string, fields: Record<string, unknown>, msg: string): void {
    const v = this.logBudget.admit(this.paced.clock.now(), `${event}/${detail}`);
    if (!v.log) return;
    const held = v.notLogged;
    this.o.log[level]({ event, ...fields, ...(held > 0 ? { held } : {}) }, held > 0 ? `${msg} (and ${held} more like it since the last such line)` : msg);
  }

  /** One line for each kind whose lines were held back, once its interval is over. */
  private tellHeld(): void {
    for (const { key, held } of this.logBudget.due(this.paced.clock.now())) {
      const cut = key.indexOf('/');
      const event = key.slice(0, cut);
      const detail = key.slice(cut + 1);
      this.o.log[event === 'medium-fault' ? 'error' : 'warn'](
        { event, detail, held },
        `${held} more ${event} (${detail}) in the last ${this.logBudget.windowUs / US_PER_S} s`,
      );
    }
  }

  /**
   * Over CURVE, why the join may not take its address: it proves no key of
   * the allow-list, or its key may not use that address; undefined when it
   * may. Checked before whether the address is held, so that a refused
   * key learns nothing of who holds which address.
   */
  private keyAddressProblem(msg: Extract<UpMessage, { t: 'join' }>): string | undefined {
    const curve = this.o.curve;
    const list = this.allowList;
    if (!curve || !list) return undefined;
    if (msg.key === undefined || msg.proof === undefined) {
      // With no key bound to addresses any allowed key may join as any address, so the join need
      // not say which (a router of an earlier cogmesh says none); once one is bound, it must.
      return list.bound === 0
        ? undefined
        : `the join as ${msg.node} proves no CURVE key, and the medium holds keys to addresses (a router of an older cogmesh?)`;
    }
    if (!list.has(msg.key)) return `key ${msg.key} is not on the medium's allow-list`;
    if (!checkJoinProof(curve, this.joinSecrets, msg.key, msg.node, msg.proof))
      return `the join's proof does not hold for key ${msg.key} (not made with its secret key)`;
    if (!list.mayUse(msg.key, msg.node)) return `key ${msg.key} may join as ${list.addresses(msg.key)!.join(', ')}, not as ${msg.node}`;
    return undefined;
  }

  private join(conn: Duplex, key: string, msg: Extract<UpMessage, { t: 'join' }>, now: Micros): void {
    const keyProblem = this.keyAddressProblem(msg);
    if (keyProblem !== undefined) {
      this.refuse('key-address');
      this.note(
        'warn',
        'medium-refused',
        'key-address',
        { reason: 'key-address', node: msg.node, key: msg.key ?? null, peer: key },
        `refused a join as ${msg.name} (${msg.node}): ${keyProblem}`,
      );
      this.post(conn, { t: 'refused', reason: keyProblem });
      return;
    }
    const earlier = this.byNode.get(msg.node);
    if (earlier && earlier.key !== key && now - earlier.lastHeardUs <= this.silenceUs) {
      // Another live process holds this address (two routers configured alike, or a station claiming
      // a live router's address): the first keeps it.
      this.refuse('address-held');
      const reason = `address ${msg.node} is held by a live router (${earlier.name}, heard ${Math.round((now - earlier.lastHeardUs) / 1000)} ms ago)`;
      this.note('warn', 'medium-refused', 'address-held', { reason: 'address-held', node: msg.node, peer: key }, `refused a join as ${msg.name}: ${reason}`);
      this.post(conn, { t: 'refused', reason });
      return;
    }
    if (earlier) this.leave(earlier, earlier.key === key ? 'joined again' : 'replaced by a new process');
    // The same connection joining under another address leaves its old one.
    const same = this.peers.get(key);
    if (same && same !== earlier) this.leave(same, `joined again as ${msg.node}`);
    const peer: Peer = {
      key,
      conn,
      node: msg.node,
      name: msg.name,
      position: { xM: msg.position.xM, yM: msg.position.yM },
      incarnation: ++this.incarnations,
      stations: new Map(),
      lastHeardUs: now,
      gone: false,
    };
    this.peers.set(key, peer);
    this.byNode.set(msg.node, peer);
    this.counters.joins++;
    const s = this.setup;
    const welcome: Welcome = {
      t: 'welcome',
      version: LINK_VERSION,
      epochUs: this.epochUs,
      bandSeed: s.bandSeed,
      band: s.band,
      channels: s.channels,
      orthogonal: s.orthogonal,
      controlChannelPn: s.controlChannelPn,
      medium: s.medium,
      phy: s.phy,
    };
    this.post(conn, welcome);
    this.o.log.info(
      { event: 'router-joined', node: msg.node, router: msg.name, position: msg.position },
      `router ${msg.name} (${msg.node}) joined at (${msg.position.xM}, ${msg.position.yM}) m`,
    );
  }

  private apply(peer: Peer, msg: UpMessage): void {
    switch (msg.t) {
      case 'station': {
        if (peer.stations.has(msg.spec.id)) throw new LinkRefusal(`station ${msg.spec.id} is already attached`);
        this.checkChannel(msg.spec.channel);
        const name = msg.spec.id;
        const st = this.air.addStation(
          { ...msg.spec, id: `${name}#${peer.incarnation}`, node: peer.node, position: peer.position },
          {
            onReceive: (f, at) => this.send(peer, { t: 'rx', st: name, src: f.src, dst: f.dst, atUs: at, payload: f.payload }),
            onSent: (f, outcome) => this.send(peer, { t: 'sent', st: name, seq: f.tag as number, outcome }),
            onAttempt: (f, attempts) => this.send(peer, { t: 'attempt', st: name, seq: f.tag as number, attempts }),
          },
        );
        peer.stations.set(name, st);
        return;
      }
      case 'send':
        if (msg.src !== peer.node) {
          // A station speaks only for the address it joined with: a frame claiming another
          // source (another router's) would make its neighbours believe that router said it.
          this.refuse('spoofed-source');
          this.note(
            'warn',
            'medium-refused',
            'spoofed-source',
            { reason: 'spoofed-source', node: peer.node, src: msg.src },
            `router ${peer.name} (${peer.node}): refused a frame claiming source ${msg.src}, not the address it joined with`,
          );
          this.abort(peer.conn, msg, this.paced.now());
          return;
        }
        // A full queue at the station is the router's overrun: the frame comes back, as a refusal would.
        if (!this.station(peer, msg.st).send({ src: msg.src, dst: msg.dst, payload: msg.payload, tag: msg.seq })) this.abort(peer.conn, msg, this.paced.now());
        return;
      case 'retune': {
        // A router's retune takes back everything its radio holds: frames it queued for the channel
        // it leaves must not go out on the next one (the router keeps a window of them queued here).
        const st = this.station(peer, msg.st);
        this.checkChannel(msg.channel ?? undefined);
        st.hold();
        st.retune(msg.channel ?? undefined, msg.overheadUs);
        return;
      }
      case 'hold':
        this.station(peer, msg.st).hold();
        return;
      case 'detach':
        this.station(peer, msg.st).detach();
        peer.stations.delete(msg.st);
        return;
      case 'beat':
        return;
      case 'leave':
        this.leave(peer, 'left');
        return;
      case 'join':
        return;
    }
  }

  private station(peer: Peer, name: string): Station {
    const st = peer.stations.get(name);
    if (!st) throw new LinkRefusal(`no station ${JSON.stringify(name)} (attached: ${[...peer.stations.keys()].join(', ') || 'none'})`);
    return st;
  }

  private checkChannel(channel: number | undefined): void {
    if (channel !== undefined && !this.plan.has(channel)) {
      throw new LinkRefusal(`channel ${channel} is not in the medium's plan ${this.plan.name} (${this.plan.numbers.join(', ')})`);
    }
  }

  private statsAtUs: Micros = 0;
  private lastStats = '';

  private statsText(): string {
    return JSON.stringify({ ...flatCounters(this.counters), routers: this.byNode.size });
  }

  /** A 'medium-stats' line once `statsIntervalUs` is over, when a counter changed since the last. */
  private statsDue(now: Micros): void {
    const every = this.o.statsIntervalUs ?? 0;
    if (every <= 0 || now - this.statsAtUs < every) return;
    this.statsAtUs = now;
    if (this.statsText() !== this.lastStats) this.logStats(false);
  }

  /** One 'medium-stats' line: the counters, flat (`flatCounters`), and the routers on the air now. */
  private logStats(final: boolean): void {
    this.lastStats = this.statsText();
    const c = this.counters;
    this.o.log.info(
      { event: 'medium-stats', final, ...flatCounters(c), routers: this.byNode.size },
      `medium${final ? ' (final)' : ''}: ${this.byNode.size} router(s) on the air, ${c.joins} joins, ${c.received} received, ${c.malformed} malformed, ${c.refused} refused${byReasonText(c.refusedByReason)}; ${c.faults} faults${byReasonText(c.faultsByReason)}; CURVE ${c.zapAllowed} let in, ${c.zapDenied} denied`,
    );
  }

  /** Routers silent past the limit leave the air; the others hear their radios' counters. */
  private sweep(now: Micros): void {
    this.tellHeld();
    this.statsDue(now);
    // A sweep that comes late (this process stalled: a loaded machine, a long GC) has not yet read
    // the heartbeats waiting in its socket: it takes nobody for gone this time.
    const late = this.lastSweepUs !== undefined && now - this.lastSweepUs > this.silenceUs / 2;
    this.lastSweepUs = now;
    if (late) {
      for (const p of this.peers.values()) p.lastHeardUs = Math.max(p.lastHeardUs, now);
    }
    for (const p of [...this.peers.values()]) {
      if (now - p.lastHeardUs > this.silenceUs) {
        this.counters.gone++;
        this.leave(p, `silent for ${Math.round((now - p.lastHeardUs) / 1000)} ms`);
      }
    }
    this.countersDue -= 1;
    if (this.countersDue <= 0) {
      this.countersDue = 4;
      for (const p of this.peers.values()) for (const [name, st] of p.stations) this.send(p, { t: 'counters', st: name, counters: { ...st.counters } });
    }
  }

  private countersDue = 4;
  private lastSweepUs: Micros | undefined;

  private leave(peer: Peer, why: string): void {
    peer.gone = true;
    for (const st of peer.stations.values()) st.detach();
    peer.stations.clear();
    this.peers.delete(peer.key);
    this.outbox.forget(peer.conn);
    if (this.byNode.get(peer.node) === peer) this.byNode.delete(peer.node);
    this.o.log.info({ event: 'router-left', node: peer.node, router: peer.name, why }, `router ${peer.name} (${peer.node}) left the air: ${why}`);
  }

  private send(peer: Peer, m: DownMessage): void {
    if (peer.gone) return;
    this.post(peer.conn, m);
  }

  /** Queues a message for the router at the other end of `to`; what is queued in one turn leaves in one write. */
  private post(to: Duplex, m: DownMessage): void {
    if (this.closed) return;
    if (this.outbox.post(to, m)) this.counters.sent++;
  }
}
