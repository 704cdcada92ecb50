import { Worker } from 'node:worker_threads';
import type { Micros } from '../core/time.js';
import { workerEntry } from '../core/worker-entry.js';
import type { SandboxCall, SandboxInit, SandboxReply } from './sandbox-worker.js';
import type { VnfEvent, VnfInfo, VnfPacket } from './types.js';

export interface SandboxLimits {
  /** Heap of the VNF's worker (V8's old generation), MB: beyond it the worker dies and the VNF is failed. */
  memoryMb: number;
  /** Wall time one call into the VNF may take, ms: a VNF that hangs or spins is failed after it. */
  callBudgetMs: number;
}

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({ memoryMb: 64, callBudgetMs: 250 });

export type SandboxState = 'starting' | 'running' | 'failed' | 'stopped';

/** A call without its id (which the sandbox gives it). */
type SandboxRequest = SandboxCall extends infer C ? (C extends unknown ? Omit<C, 'id'> : never) : never;

/**
 * One VNF instance in a sandbox: its own worker thread (so its heap, its
 * event loop and its crashes are its own) with a memory limit, and a
 * watchdog on every call. A VNF that throws, hangs past its call budget,
 * runs out of memory or kills its worker is failed and reported; from then
 * on `intercept` answers false, so its flow falls back to plain forwarding,
 * and the router's other flows and VNFs are not touched. This is how the
 * router daemon runs VNFs; the simulator runs the same code in-process.
 */
export class VnfSandbox {
  state: SandboxState = 'starting';
  /** Why it failed or stopped. */
  reason: string | null = null;
  private readonly worker: Worker;
  private nextId = 1;
  /** Calls in flight, oldest first (the worker answers in order). */
  private readonly waiting = new Map<number, { resolve: (r: SandboxReply) => void; budgetMs: number }>();
  /** The watchdog of the oldest call in flight: a call's budget starts when the worker can start on it. */
  private watchdog: NodeJS.Timeout | undefined;
  private readonly outbox: VnfPacket[] = [];
  private readonly events: VnfEvent[] = [];
  private deadline: Micros | undefined;
  private readonly started: Promise<void>;

  constructor(
    init: Omit<SandboxInit, 'modules'> & { modules?: SandboxInit['modules'] },
    readonly limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
  ) {
    this.worker = new Worker(workerEntry(import.meta.url, 'sandbox-worker'), { resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb } });
    this.worker.unref();
    this.worker.on('error', (e) => this.fail(e instanceof Error ? `${e.name}: ${e.message}` : String(e)));
    this.worker.on('exit', (code) => this.fail(`its worker exited (code ${code})`));
    this.started = new Promise<void>((resolve) => {
      this.waiting.set(0, {
        resolve: (r) => (r.error === undefined ? resolve() : (this.fail(r.error), resolve())),
        budgetMs: Math.max(5000, limits.callBudgetMs),
      });
      this.rewatch();
    });
    this.worker.on('message', (r: SandboxReply) => this.settle(r));
    this.worker.postMessage({ modules: [], ...init } satisfies SandboxInit);
  }

  /** Resolves once the instance runs (or failed to start: see `state`). */
  async ready(): Promise<this> {
    await this.started;
    if (this.state === 'starting') this.state = 'running';
    return this;
  }

  /** A packet of the router's: true if the VNF took it; false (forward it) also when the VNF failed. */
  async intercept(pkt: VnfPacket, now: Micros): Promise<boolean> {
    const r = await this.call({ op: 'intercept', pkt, now });
    return r?.result === true;
  }

  async tick(now: Micros): Promise<void> {
    await this.call({ op: 'tick', now });
  }

  /** The instance as its manager lists it. */
  async info(): Promise<VnfInfo | undefined> {
    const r = await this.call({ op: 'list' });
    return (r?.result as VnfInfo[] | undefined)?.[0];
  }

  /** Terminates the instance and its worker. */
  async stop(now: Micros): Promise<void> {
    // A VNF that is idle is asked to stop (it resets what it holds); one busy with a call is not waited for.
    if (this.state === 'running' && this.waiting.size === 0) await this.call({ op: 'stop', now });
    if (this.state === 'running' || this.state === 'starting') {
      this.state = 'stopped';
      this.reason = 'terminated';
    }
    this.settleAll();
    await this.worker.terminate();
  }

  nextDeadline(): Micros | undefined {
    return this.state === 'running' ? this.deadline : undefined;
  }

  /** Packets and lifecycle events since the last poll. */
  poll(): { packets: VnfPacket[]; events: VnfEvent[] } {
    return { packets: this.outbox.splice(0), events: this.events.splice(0) };
  }

  private async call(c: SandboxRequest): Promise<SandboxReply | undefined> {
    // Once started, a call is in flight from the moment it is made (stop() sees it).
    if (this.state === 'starting') await this.started;
    if (this.state === 'starting') this.state = 'running';
    if (this.state !== 'running') return undefined;
    const id = this.nextId++;
    return new Promise<SandboxReply | undefined>((resolve) => {
      this.waiting.set(id, { resolve, budgetMs: this.limits.callBudgetMs });
      if (this.waiting.size === 1) this.rewatch();
      this.worker.postMessage({ ...c, id } as SandboxCall);
    });
  }

  /** Arms the watchdog for the oldest call in flight (none: disarmed). It never keeps the process alive. */
  private rewatch(): void {
    if (this.watchdog !== undefined) clearTimeout(this.watchdog);
    this.watchdog = undefined;
    const oldest = this.waiting.values().next();
    if (oldest.done) return;
    const ms = oldest.value.budgetMs;
    this.watchdog = setTimeout(() => this.fail(`exceeded its call budget (${ms} ms): hung or too slow`), ms);
    this.watchdog.unref();
  }

  private settle(r: SandboxReply): void {
    const w = this.waiting.get(r.id);
    if (!w) return;
    this.waiting.delete(r.id);
    this.rewatch();
    this.outbox.push(...r.packets.map((p) => ({ ...p, src: new Uint8Array(p.src), dst: new Uint8Array(p.dst), bytes: new Uint8Array(p.bytes) })));
    this.events.push(...r.events);
    this.deadline = r.nextDeadline;
    const failed = r.events.find((e) => e.kind === 'failed');
    if (failed && failed.kind === 'failed') {
      this.markFailed(failed.error);
      // Its manager removed the instance; the worker has nothing left to do.
      void this.worker.terminate();
    }
    w.resolve(r);
    if (this.state === 'failed') this.settleAll();
  }

  private fail(reason: string): void {
    if (this.state !== 'failed' && this.state !== 'stopped') {
      this.markFailed(reason);
      this.events.push({ kind: 'failed', id: 0, type: 'sandbox', atUs: 0, error: reason });
      void this.worker.terminate();
    }
    this.settleAll();
  }

  /** Every call in flight answers "not taken" (the flow is forwarded); no timer is left. */
  private settleAll(): void {
    if (this.watchdog !== undefined) clearTimeout(this.watchdog);
    this.watchdog = undefined;
    const calls = [...this.waiting];
    this.waiting.clear();
    for (const [id, w] of calls) w.resolve({ id, packets: [], events: [], nextDeadline: undefined });
  }

  private markFailed(reason: string): void {
    this.state = 'failed';
    this.reason = reason;
  }
}
