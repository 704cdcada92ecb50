import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { createRing, RingConsumer, RingProducer, SpinPolicy } from '../core/ring.js';
import { SpinChoice } from '../core/spin-choice.js';
import type { Micros } from '../core/time.js';
import { workerEntry } from '../core/worker-entry.js';
import type { SandboxInit, SandboxStart } from './sandbox-worker.js';
import { readReply, RecordWriter, type SandboxReply, type SandboxRequest } from './sandbox-wire.js';
import type { VnfEvent, VnfInfo, VnfPacket } from './types.js';

export interface SandboxLimits {
  /** Heap of the VNF's worker (V8's old generation), MB: beyond it the worker dies and the VNF is failed. */
  memoryMb: number;
  /** Wall time one call into the VNF may take, ms: a VNF that hangs or spins is failed after it. */
  callBudgetMs: number;
}

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({ memoryMb: 64, callBudgetMs: 250 });

/**
 * How the host and the worker pass calls: sizes and spins, not limits on the
 * VNF (bench/vnf.ts measures them; tests shrink the rings).
 */
export interface SandboxTuning {
  /** Bytes of each ring (calls, replies): a power of two. A longer record still passes, in pieces. */
  ringBytes: number;
  /** How long the host spins for a reply before it waits asynchronously, µs (0: it never spins). */
  hostSpinUs: number;
  /** How long the idle worker spins for the next call before it sleeps, µs (0: it sleeps at once). */
  workerSpinUs: number;
}

export const DEFAULT_SANDBOX_TUNING: Readonly<SandboxTuning> = Object.freeze({ ringBytes: 256 * 1024, hostSpinUs: 50, workerSpinUs: 200 });

/** The longest the host spends in one go collecting replies, ms, before it lets the event loop turn. */
const MAX_PUMP_MS = 1;

export type SandboxState = 'starting' | 'running' | 'failed' | 'stopped';

/** What an intercept's reply says: whether the VNF took the packet (not, when the sandbox did not answer). */
const taken = (r: SandboxReply | undefined): boolean => r?.result === true;
const ignored = (): void => undefined;

/**
 * One VNF instance in a sandbox: its own worker thread (so its heap, its
 * event loop and its crashes are its own) with a memory limit, and a
 * watchdog on every call. A VNF that throws, hangs past its call budget,
 * runs out of memory or kills its worker is failed and reported; from then
 * on `intercept` answers false, so its flow falls back to plain forwarding,
 * and the router's other flows and VNFs are not touched. This is how the
 * router daemon runs VNFs; the simulator runs the same code in-process.
 *
 * Calls and replies pass through two rings in shared memory
 * (src/core/ring.ts, records in sandbox-wire.ts), not a message each: the
 * start is the one message. A call that does not fit in the call ring
 * waits, in order, in a backlog until the worker has read enough. While
 * calls are in flight the host collects replies by spinning for up to
 * `hostSpinUs` after the last one came (a one-at-a-time caller gets its
 * answer without a wake-up of the event loop), then by `Atomics.waitAsync`;
 * with nothing in flight it neither spins nor waits. It holds the event
 * loop at most about a millisecond at a time. Whether the two sides spin at
 * all is chosen by timing calls both ways (`SpinChoice`: on a machine with
 * no core to spare, sleeping is faster), and `SpinPolicy` stops a side's
 * spins for a while where they go to waste (a slow VNF, a slow caller).
 */
export class VnfSandbox {
  state: SandboxState = 'starting';
  /** Why it failed or stopped. */
  reason: string | null = null;
  readonly tuning: Readonly<SandboxTuning>;
  private readonly worker: Worker;
  private nextId: number;
  /** Calls in flight, oldest first (the worker answers in order). */
  private readonly waiting = new Map<number, { resolve: (r: SandboxReply) => void; budgetMs: number; sentAt: number }>();
  /** The watchdog of the oldest call in flight: a call's budget starts when the worker can start on it. */
  private watchdog: NodeJS.Timeout | undefined;
  /** When the watchdog's timer fires (performance.now(), ms); 0 when none is set. */
  private watchdogDue = 0;
  /** The call whose budget the watchdog runs, and since when (performance.now(), ms). */
  private watched: number | undefined;
  private watchedSince = 0;
  private watchedBudgetMs = 0;
  private readonly outbox: VnfPacket[] = [];
  private readonly events: VnfEvent[] = [];
  private deadline: Micros | undefined;
  private readonly started: Promise<void>;
  private readonly calls: RingProducer;
  private readonly replies: RingConsumer;
  private readonly records = new RecordWriter();
  /** Calls written only in part (or not at all) for want of room, oldest first: `at` is where the rest starts. */
  private backlog: Array<{ bytes: Uint8Array; at: number }> = [];
  /** Where the backlog's first call not all written is (those before it are written). */
  private backlogHead = 0;
  private readonly spin: SpinPolicy;
  /** Whether both sides spin or sleep, from how long calls take either way. */
  private readonly choice = new SpinChoice();
  /** A reply came, or the worker made room for a call in the backlog. */
  private readonly moved = (): boolean => this.replies.readable() || (this.backlogged() && this.calls.used() <= this.calls.capacity / 2);
  private pumpScheduled = false;
  /** The next pump waits for the event loop to turn (setImmediate), not for the caller's code to end. */
  private pumpDeferred = false;
  /** When the last reply was settled (performance.now(), ms). */
  private lastSettled = 0;
  private readonly pumpNow = (): void => this.pump();
  private repliesAwaited = false;
  private spaceAwaited = false;

  constructor(
    init: Omit<SandboxInit, 'modules'> & { modules?: SandboxInit['modules'] },
    readonly limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
    tuning: Partial<SandboxTuning> = {},
    /** The first call's id (tests start near the 32-bit wrap). */
    firstId = 1,
  ) {
    this.tuning = { ...DEFAULT_SANDBOX_TUNING, ...tuning };
    this.nextId = firstId;
    const calls = createRing(this.tuning.ringBytes);
    const replies = createRing(this.tuning.ringBytes);
    this.calls = new RingProducer(calls);
    this.replies = new RingConsumer(replies);
    this.spin = new SpinPolicy(this.tuning.hostSpinUs);
    this.worker = new Worker(workerEntry(import.meta.url, 'sandbox-worker'), { resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb } });
    this.worker.unref();
    this.worker.on('error', (e) => this.fail(e instanceof Error ? `${e.name}: ${e.message}` : String(e)));
    this.worker.on('exit', (code) => this.fail(`its worker exited (code ${code})`));
    this.started = new Promise<void>((resolve) => {
      this.waiting.set(0, {
        resolve: (r) => (r.error === undefined ? resolve() : (this.fail(r.error), resolve())),
        budgetMs: Math.max(5000, limits.callBudgetMs),
        sentAt: performance.now(),
      });
      this.rewatch();
    });
    // The start's answer comes as a message (a listener also keeps the process alive while the worker is, as before).
    this.worker.on('message', (r: SandboxReply) => this.settle(r));
    this.worker.postMessage({ modules: [], ...init, calls, replies, spinUs: this.tuning.workerSpinUs } satisfies SandboxStart);
  }

  /** Resolves once the instance runs (or failed to start: see `state`). */
  async ready(): Promise<this> {
    await this.started;
    if (this.state === 'starting') this.state = 'running';
    return this;
  }

  /** A packet of the router's: true if the VNF took it; false (forward it) also when the VNF failed. */
  intercept(pkt: VnfPacket, now: Micros): Promise<boolean> {
    return this.call({ op: 'intercept', pkt, now }, taken);
  }

  tick(now: Micros): Promise<void> {
    return this.call({ op: 'tick', now }, ignored);
  }

  /** The instance as its manager lists it. */
  info(): Promise<VnfInfo | undefined> {
    return this.call({ op: 'list' }, (r) => (r?.result as VnfInfo[] | undefined)?.[0]);
  }

  /** Terminates the instance and its worker. */
  async stop(now: Micros): Promise<void> {
    // A VNF that is idle is asked to stop (it resets what it holds); one busy with a call is not waited for.
    if (this.state === 'running' && this.waiting.size === 0) await this.call({ op: 'stop', now }, ignored);
    if (this.state === 'running' || this.state === 'starting') {
      this.state = 'stopped';
      this.reason = 'terminated';
    }
    this.settleAll();
    await this.worker.terminate();
    this.release();
  }

  nextDeadline(): Micros | undefined {
    return this.state === 'running' ? this.deadline : undefined;
  }

  /** Packets and lifecycle events since the last poll. */
  poll(): { packets: VnfPacket[]; events: VnfEvent[] } {
    return { packets: this.outbox.splice(0), events: this.events.splice(0) };
  }

  /**
   * Makes a call; what `then` makes of its reply (of undefined, when the
   * sandbox does not run) is the answer. Once the sandbox runs, a call is in
   * flight from the moment it is made (stop() sees it), with one promise and
   * no microtask before it is written.
   */
  private call<T>(c: SandboxRequest, then: (r: SandboxReply | undefined) => T): Promise<T> {
    if (this.state !== 'running') return this.callOnceStarted(c, then);
    return new Promise<T>((resolve) => this.post(c, (r) => resolve(then(r))));
  }

  /** A call made before the sandbox runs: once it has started, made as any other; if it could not start, not made. */
  private async callOnceStarted<T>(c: SandboxRequest, then: (r: SandboxReply | undefined) => T): Promise<T> {
    if (this.state === 'starting') await this.started;
    if (this.state === 'starting') this.state = 'running';
    return this.state === 'running' ? this.call(c, then) : then(undefined);
  }

  private post(c: SandboxRequest, resolve: (r: SandboxReply) => void): void {
    const id = this.nextId;
    // Ids travel as 32 bits: they wrap (skipping 0, the start's) long before two in flight could meet.
    this.nextId = this.nextId === 0xffff_ffff ? 1 : this.nextId + 1;
    this.waiting.set(id, { resolve, budgetMs: this.limits.callBudgetMs, sentAt: performance.now() });
    if (this.waiting.size === 1) this.rewatch();
    this.send(this.records.call(c, id, this.choice.spinning));
    this.schedulePump();
  }

  /** Writes a call to the ring, or what does not fit to the backlog (behind whatever already waits there). */
  private send(rec: Uint8Array): void {
    // The worker is woken (if it sleeps) by the pump, once for the calls made together; when the pump waits
    // for the event loop, at once.
    const at = this.backlogged() ? 0 : this.calls.write(rec, 0, this.pumpDeferred);
    // The record is the writer's scratch buffer: what waits needs its own copy.
    if (at < rec.length) this.backlog.push({ bytes: rec.slice(), at });
  }

  private backlogged(): boolean {
    return this.backlogHead < this.backlog.length;
  }

  /** Writes what it can of the backlog. */
  private flush(): void {
    for (; this.backlogHead < this.backlog.length; this.backlogHead++) {
      const b = this.backlog[this.backlogHead]!;
      b.at = this.calls.write(b.bytes, b.at, false);
      if (b.at < b.bytes.length) {
        // What is written goes once it is half the backlog (a backlog that never empties must not keep it).
        if (this.backlogHead >= 64 && this.backlogHead * 2 >= this.backlog.length) {
          this.backlog = this.backlog.slice(this.backlogHead);
          this.backlogHead = 0;
        }
        return;
      }
    }
    this.backlog = [];
    this.backlogHead = 0;
  }

  /** Settles every reply that has come and writes what it can of the backlog. */
  private drain(): void {
    for (;;) {
      if (this.backlogged()) this.flush();
      const rec = this.replies.read();
      if (rec === undefined) return;
      this.settle(readReply(rec));
      if (!this.live()) return;
    }
  }

  private live(): boolean {
    return this.state === 'running' || this.state === 'starting';
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    // After the caller's synchronous code, so that calls made together are written before the host spins.
    queueMicrotask(this.pumpNow);
  }

  /** Collects replies while calls are in flight: spins while they come, then waits for the next asynchronously. */
  private pump(): void {
    this.pumpScheduled = false;
    this.pumpDeferred = false;
    const start = performance.now();
    for (;;) {
      this.drain();
      // The calls written since the last look (made together, or from the backlog) wake the worker once.
      this.calls.notify();
      if (this.waiting.size === 0 || !this.live()) return;
      if (performance.now() - start >= MAX_PUMP_MS) {
        // Long enough: the event loop turns, then collection goes on.
        this.pumpScheduled = true;
        this.pumpDeferred = true;
        setImmediate(() => this.pump());
        return;
      }
      if (!this.choice.spinning || !this.spin.spin(this.moved)) break;
    }
    if (!this.repliesAwaited) {
      this.repliesAwaited = true;
      void this.replies.waitForDataAsync().then(() => {
        this.repliesAwaited = false;
        if (this.waiting.size > 0 && this.live()) this.schedulePump();
      });
    }
    if (this.backlogged() && !this.spaceAwaited) {
      // A call written in part needs room for its rest before the worker can answer it.
      this.spaceAwaited = true;
      void this.calls.waitForSpaceAsync().then(() => {
        this.spaceAwaited = false;
        if (this.waiting.size > 0 && this.live()) this.schedulePump();
      });
    }
  }

  /**
   * Runs the watchdog on the oldest call in flight. One timer serves every
   * call in turn: a timer set for an earlier call fires no later than this
   * one's budget ends, and then it is set again for what is left, so calls
   * answered in time touch no timer. With none in flight it is left to fire
   * once and find nothing. It never keeps the process alive.
   */
  private rewatch(): void {
    if (this.waiting.size === 0) {
      this.watched = undefined;
      return;
    }
    const [id, { budgetMs }] = this.waiting.entries().next().value!;
    if (id === this.watched) return;
    this.watched = id;
    this.watchedSince = performance.now();
    this.watchedBudgetMs = budgetMs;
    if (this.watchdogDue === 0 || this.watchdogDue > this.watchedSince + budgetMs) this.arm(budgetMs);
  }

  private arm(ms: number): void {
    if (this.watchdog !== undefined) clearTimeout(this.watchdog);
    this.watchdogDue = performance.now() + ms;
    this.watchdog = setTimeout(() => this.expire(), ms);
    this.watchdog.unref();
  }

  private expire(): void {
    this.watchdogDue = 0;
    const id = this.watched;
    if (id === undefined) return;
    // The timer may have been set for an earlier call: this call's budget counts from when it began.
    const left = this.watchedBudgetMs - (performance.now() - this.watchedSince);
    if (left > 1) return this.arm(left);
    // A reply that came while the event loop was busy is taken first: the worker answered.
    this.drain();
    if (this.watched === id && this.waiting.has(id)) this.fail(`exceeded its call budget (${this.watchedBudgetMs} ms): hung or too slow`);
  }

  private settle(r: SandboxReply): void {
    const w = this.waiting.get(r.id);
    if (!w) return;
    this.waiting.delete(r.id);
    if (r.id !== 0) {
      // What the call cost: from when it was made, or from the reply before if that came later
      // (calls in flight together are each charged the gap to the one before, not the queue).
      const now = performance.now();
      this.choice.record((now - Math.max(w.sentAt, this.lastSettled)) * 1000);
      this.lastSettled = now;
    }
    this.rewatch();
    for (const p of r.packets) this.outbox.push(p);
    this.deadline = r.nextDeadline;
    if (r.events.length > 0) {
      this.events.push(...r.events);
      const failed = r.events.find((e) => e.kind === 'failed');
      if (failed && failed.kind === 'failed') {
        this.markFailed(failed.error);
        // Its manager removed the instance; the worker has nothing left to do.
        void this.worker.terminate();
      }
    }
    w.resolve(r);
    if (this.state === 'failed') this.settleAll();
  }

  private fail(reason: string): void {
    if (this.state !== 'failed' && this.state !== 'stopped') {
      // Replies the worker wrote before it died still count.
      this.drain();
    }
    if (this.state !== 'failed' && this.state !== 'stopped') {
      this.markFailed(reason);
      this.events.push({ kind: 'failed', id: 0, type: 'sandbox', atUs: 0, error: reason });
      void this.worker.terminate();
    }
    this.settleAll();
    this.release();
  }

  /** Every call in flight answers "not taken" (the flow is forwarded); no timer is left. */
  private settleAll(): void {
    if (this.watchdog !== undefined) clearTimeout(this.watchdog);
    this.watchdog = undefined;
    this.watchdogDue = 0;
    this.watched = undefined;
    this.backlog = [];
    this.backlogHead = 0;
    const calls = [...this.waiting];
    this.waiting.clear();
    for (const [id, w] of calls) w.resolve({ id, packets: [], events: [], nextDeadline: undefined });
  }

  /** Nothing is left waiting on the rings (an asynchronous wait would hold them). */
  private release(): void {
    this.calls.wakeAll();
    this.replies.wakeAll();
  }

  private markFailed(reason: string): void {
    this.state = 'failed';
    this.reason = reason;
  }
}
