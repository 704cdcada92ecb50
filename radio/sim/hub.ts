import { performance } from 'node:perf_hooks';
import { Dealer, Router } from 'zeromq';
import { RangeArgumentError } from '../../src/core/errors.js';
import type { Scheduler } from '../../src/core/scheduler.js';
import { sendChain } from '../../src/wire/send-chain.js';
import type { EmulatedBand, IqBurst } from './band.js';

/**
 * The band hub: emulated bands in several processes on one machine share
 * their IQ bursts through it, so that a burst one node's sim radio sends is
 * in the samples another node's radios read. The hub (`cogmesh band`) is a
 * ZeroMQ ROUTER; each band links to it with a DEALER (`BandHubLink`), says
 * hello every second, publishes the bursts its radios send, and adds the
 * bursts the hub forwards from the other bands to its own air. The hub
 * forwards each burst to every other band that said hello within the last
 * few seconds.
 *
 * One message is one ZeroMQ frame, little-endian:
 *
 *   0  'CMBH'             magic
 *   4  u8   version       1
 *   5  u8   kind          1 hello, 2 burst
 *   6  u8   format        samples: 0 none (hello), 1 float32, 2 int16 times `scale`
 *   7  u8   idLength      1..255 bytes of UTF-8 sender id
 *   8  f64  centerHz      burst: centre frequency
 *   16 f64  sampleRateHz  burst: complex samples per second
 *   24 f64  startUs       burst: first sample's time on the shared clock
 *   32 f64  txPowerDbm    burst: dBm of a full-scale sample (mean |x|^2 = 1)
 *   40 u32  count         burst: complex samples
 *   44 f32  scale         int16: a sample is its integer times this
 *   48      id            the sender's radio id
 *   then, from the next multiple of 4: 2 * count samples, I then Q
 *
 * The shared clock is the machine's wall clock, in µs since 2020-01-01 UTC
 * (`sharedClockUs`: performance.timeOrigin + performance.now(), so the same
 * instant in every process on the machine, to well under a µs); each link
 * turns it into its band's clock by the difference of the two clocks'
 * current readings. That is why the hub serves one machine: it binds a
 * loopback or ipc endpoint only.
 *
 * A burst that reaches a band after one of its receivers already
 * synthesised the time the burst began is late (EmulatedBand.addRemoteBurst
 * counts it); a sender that schedules its bursts a few ms ahead (`atUs`)
 * keeps clear of that. A message that does not parse is counted by cause and
 * dropped, by the hub and by the links.
 */

export const HUB_MAGIC = 'CMBH';
export const HUB_VERSION = 1;
const HEADER_BYTES = 48;
/** The largest hub message taken: some 4 M complex float32 samples (0.2 s at 22 Msps). */
export const MAX_HUB_MESSAGE = 32 * 1024 * 1024;
const SHARED_EPOCH_MS = Date.UTC(2020, 0, 1);

/** Now on the shared clock: µs since 2020-01-01 UTC by this machine's wall clock. */
export function sharedClockUs(): number {
  return (performance.timeOrigin - SHARED_EPOCH_MS + performance.now()) * 1000;
}

export type HubSampleFormat = 'f32' | 'i16';

/** What a hub message says: a band's hello, or a burst (its time on the shared clock). */
export type HubMessage = { kind: 'hello'; id: string } | { kind: 'burst'; burst: IqBurst };

/** Why a hub message was dropped. */
export type HubMalformed = 'short' | 'magic' | 'version' | 'kind' | 'format' | 'id' | 'length' | 'field' | 'samples';

const padded = (n: number): number => (n + 3) & ~3;

/** One hub message: a hello from `id`, or a burst (with `startUs` on the shared clock). */
export function encodeHubMessage(m: HubMessage, format: HubSampleFormat = 'f32'): Buffer {
  const id = Buffer.from(m.kind === 'hello' ? m.id : m.burst.from, 'utf8');
  if (id.length < 1 || id.length > 255) throw new RangeArgumentError('hub sender id', id.length, '1 to 255 bytes of UTF-8');
  const count = m.kind === 'burst' ? m.burst.count : 0;
  const width = m.kind === 'hello' ? 0 : format === 'f32' ? 4 : 2;
  const at = padded(HEADER_BYTES + id.length);
  const buf = Buffer.alloc(at + 2 * count * width);
  buf.write(HUB_MAGIC, 0, 'latin1');
  buf.writeUInt8(HUB_VERSION, 4);
  buf.writeUInt8(m.kind === 'hello' ? 1 : 2, 5);
  buf.writeUInt8(width === 0 ? 0 : format === 'f32' ? 1 : 2, 6);
  buf.writeUInt8(id.length, 7);
  buf.set(id as Uint8Array, HEADER_BYTES);
  if (m.kind === 'hello') return buf;
  const b = m.burst;
  buf.writeDoubleLE(b.centerHz, 8);
  buf.writeDoubleLE(b.sampleRateHz, 16);
  buf.writeDoubleLE(b.startUs, 24);
  buf.writeDoubleLE(b.powerDbm, 32);
  buf.writeUInt32LE(count, 40);
  if (format === 'f32') {
    buf.writeFloatLE(1, 44);
    for (let i = 0; i < 2 * count; i++) buf.writeFloatLE(b.data[i]!, at + 4 * i);
    return buf;
  }
  let peak = 0;
  for (let i = 0; i < 2 * count; i++) peak = Math.max(peak, Math.abs(b.data[i]!));
  const scale = peak > 0 ? peak / 32767 : 1;
  buf.writeFloatLE(scale, 44);
  for (let i = 0; i < 2 * count; i++) buf.writeInt16LE(Math.round(b.data[i]! / scale), at + 2 * i);
  return buf;
}

/** Reads a hub message; what is wrong with one that does not parse. */
export function decodeHubMessage(buf: Buffer): HubMessage | { malformed: HubMalformed } {
  const bad = (malformed: HubMalformed): { malformed: HubMalformed } => ({ malformed });
  if (buf.length < HEADER_BYTES) return bad('short');
  if (buf.toString('latin1', 0, 4) !== HUB_MAGIC) return bad('magic');
  if (buf.readUInt8(4) !== HUB_VERSION) return bad('version');
  const kind = buf.readUInt8(5);
  const format = buf.readUInt8(6);
  const idLength = buf.readUInt8(7);
  if (kind !== 1 && kind !== 2) return bad('kind');
  if (kind === 1 ? format !== 0 : format !== 1 && format !== 2) return bad('format');
  if (idLength === 0 || buf.length < HEADER_BYTES + idLength) return bad('id');
  const id = buf.toString('utf8', HEADER_BYTES, HEADER_BYTES + idLength);
  if (id.includes('\uFFFD')) return bad('id');
  const at = padded(HEADER_BYTES + idLength);
  if (kind === 1) return buf.length === at ? { kind: 'hello', id } : bad('length');
  const count = buf.readUInt32LE(40);
  const width = format === 1 ? 4 : 2;
  if (buf.length !== at + 2 * count * width) return bad('length');
  const centerHz = buf.readDoubleLE(8);
  const sampleRateHz = buf.readDoubleLE(16);
  const startUs = buf.readDoubleLE(24);
  const powerDbm = buf.readDoubleLE(32);
  const scale = buf.readFloatLE(44);
  const fine =
    count > 0 &&
    centerHz > 0 &&
    Number.isFinite(centerHz) &&
    sampleRateHz > 0 &&
    Number.isFinite(sampleRateHz) &&
    startUs >= 0 &&
    Number.isFinite(startUs) &&
    Number.isFinite(powerDbm) &&
    scale > 0 &&
    Number.isFinite(scale);
  if (!fine) return bad('field');
  const data = new Float32Array(2 * count);
  if (width === 4) {
    for (let i = 0; i < 2 * count; i++) data[i] = buf.readFloatLE(at + 4 * i);
    for (let i = 0; i < 2 * count; i++) if (!Number.isFinite(data[i]!)) return bad('samples');
  } else {
    for (let i = 0; i < 2 * count; i++) data[i] = buf.readInt16LE(at + 2 * i) * scale;
  }
  return { kind: 'burst', burst: { from: id, centerHz, sampleRateHz, startUs, powerDbm, data, count } };
}

/** Counts by cause, as both ends keep them. */
export type MalformedCounts = Partial<Record<HubMalformed, number>>;

const countMalformed = (c: { malformed: number; malformedByCause: MalformedCounts }, why: HubMalformed): void => {
  c.malformed++;
  c.malformedByCause[why] = (c.malformedByCause[why] ?? 0) + 1;
};

/** The hub: a ROUTER on a loopback or ipc endpoint that forwards each band's bursts to the others. */
export class BandHub {
  readonly counters = { hellos: 0, bursts: 0, forwarded: 0, malformed: 0, malformedByCause: {} as MalformedCounts };
  private readonly peers = new Map<string, { rid: Buffer; lastMs: number }>();
  private readonly send: (frames: Buffer[]) => Promise<void>;
  private serving: Promise<void> = Promise.resolve();
  private idle: NodeJS.Timeout | undefined;

  private constructor(
    private readonly sock: Router,
    private readonly idleMs: number,
  ) {
    this.send = sendChain((frames) => sock.send(frames));
  }

  /** Binds `endpoint` (checked by the caller to stay on this machine) and serves until `close`. */
  static async listen(endpoint: string, o: { idleMs?: number } = {}): Promise<BandHub> {
    const sock = new Router({ linger: 0, maxMessageSize: MAX_HUB_MESSAGE });
    try {
      await sock.bind(endpoint);
    } catch (e) {
      sock.close();
      throw e;
    }
    const hub = new BandHub(sock, o.idleMs ?? 5000);
    hub.serving = hub.serve();
    hub.idle = setInterval(() => hub.forgetIdle(), Math.max(100, hub.idleMs / 4));
    hub.idle.unref();
    return hub;
  }

  /** The bands heard from within the idle time. */
  get peerCount(): number {
    return this.peers.size;
  }

  async close(): Promise<void> {
    clearInterval(this.idle);
    this.sock.close();
    await this.serving;
  }

  private async serve(): Promise<void> {
    try {
      for await (const [rid, data] of this.sock) {
        if (rid === undefined || data === undefined) continue;
        const m = decodeHubMessage(data);
        if ('malformed' in m) {
          countMalformed(this.counters, m.malformed);
          continue;
        }
        const key = rid.toString('hex');
        this.peers.set(key, { rid, lastMs: Date.now() });
        if (m.kind === 'hello') {
          this.counters.hellos++;
          continue;
        }
        this.counters.bursts++;
        for (const [k, p] of this.peers) {
          if (k === key) continue;
          this.counters.forwarded++;
          void this.send([p.rid, data]).catch(() => undefined);
        }
      }
    } catch (e) {
      if (!this.sock.closed) throw e;
    }
  }

  private forgetIdle(): void {
    const now = Date.now();
    for (const [k, p] of this.peers) if (now - p.lastMs > this.idleMs) this.peers.delete(k);
  }
}

export interface BandHubLinkOptions {
  /** The hub's endpoint (`sim.band.hub`). */
  endpoint: string;
  band: EmulatedBand;
  /** The band's scheduler: a real-time one, whose clock runs with the shared clock. */
  scheduler: Scheduler;
  /** Names this band in its hellos. */
  id: string;
  /** Samples on the wire (default f32: exact; i16 halves the bytes, some 90 dB of dynamic range). */
  format?: HubSampleFormat;
  /** Time between hellos (default 1000 ms). */
  helloMs?: number;
  /** The shared clock (default sharedClockUs). */
  clock?: () => number;
  /** A send or receive that failed (the link goes on). */
  onError?: (e: unknown) => void;
}

/** A band's side of the hub: publishes its radios' bursts, adds the others' to its air. */
export class BandHubLink {
  readonly counters = { sent: 0, received: 0, late: 0, refused: 0, malformed: 0, malformedByCause: {} as MalformedCounts };
  private readonly sock: Dealer;
  private readonly send: (frames: Buffer[]) => Promise<void>;
  private readonly clock: () => number;
  private readonly stopListening: () => void;
  private readonly hello: NodeJS.Timeout;
  private readonly receiving: Promise<void>;

  constructor(private readonly o: BandHubLinkOptions) {
    this.clock = o.clock ?? sharedClockUs;
    this.sock = new Dealer({ linger: 100, maxMessageSize: MAX_HUB_MESSAGE });
    this.sock.connect(o.endpoint);
    this.send = sendChain((frames) => this.sock.send(frames));
    const helloMsg = encodeHubMessage({ kind: 'hello', id: o.id });
    const sayHello = (): void => void this.send([helloMsg]).catch((e: unknown) => this.failed(e));
    sayHello();
    this.hello = setInterval(sayHello, o.helloMs ?? 1000);
    this.hello.unref();
    const format = o.format ?? 'f32';
    this.stopListening = o.band.onBurst((b) => {
      const startUs = b.startUs + this.offsetUs();
      this.counters.sent++;
      void this.send([encodeHubMessage({ kind: 'burst', burst: { ...b, startUs } }, format)]).catch((e: unknown) => this.failed(e));
    });
    this.receiving = this.receive();
  }

  async close(): Promise<void> {
    this.stopListening();
    clearInterval(this.hello);
    this.sock.close();
    await this.receiving;
  }

  /** Shared clock minus the band's clock, now. */
  private offsetUs(): number {
    return this.clock() - this.o.scheduler.now();
  }

  private async receive(): Promise<void> {
    try {
      for await (const [data] of this.sock) {
        if (data === undefined) continue;
        const m = decodeHubMessage(data);
        if ('malformed' in m) {
          countMalformed(this.counters, m.malformed);
          continue;
        }
        if (m.kind !== 'burst') continue;
        this.counters.received++;
        const startUs = m.burst.startUs - this.offsetUs();
        if (!(startUs >= 0)) {
          // Before this band's clock began: nothing here can hear it.
          this.counters.late++;
          continue;
        }
        try {
          if (this.o.band.addRemoteBurst({ ...m.burst, from: `hub:${m.burst.from}`, startUs }).late) this.counters.late++;
        } catch (e) {
          this.counters.refused++;
          this.failed(e);
        }
      }
    } catch (e) {
      if (!this.sock.closed) this.failed(e);
    }
  }

  private failed(e: unknown): void {
    this.o.onError?.(e);
  }
}
