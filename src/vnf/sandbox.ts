import { Worker } from 'node:worker_threads';
import type { Micros } from '../core/time.js';
import { workerEntry } from '../core/worker-entry.js';
import type { SandboxCall, SandboxInit, SandboxReply } from './sandbox-worker.js';
import type { FlowPattern, VnfEvent, VnfInfo, VnfPacket } from './types.js';

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
  private readonly waiting = new Map<number, { resolve: (r: SandboxReply) => void; timer: NodeJS.Timeout }>();
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
      this.waiting.set(0, { resolve: (r) => (r.error === undefined ? resolve() : (this.fail(r.error), resolve())), timer: this.watch(0, Math.max(5000, limits.callBudgetMs)) });
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
    if (this.state === 'running') await this.call({ op: 'stop', now });
    if (this.state === 'running' || this.state === 'starting') {
      this.state = 'stopped';
      this.reason = 'terminated';
    }
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
    await this.started;
    if (this.state === 'starting') this.state = 'running';
    if (this.state !== 'running') return undefined;
    const id = this.nextId++;
    return new Promise<SandboxReply | undefined>((resolve) => {
      this.waiting.set(id, { resolve, timer: this.watch(id, this.limits.callBudgetMs) });
      this.worker.postMessage({ ...c, id } as SandboxCall);
    });
  }

  private watch(id: number, ms: number): NodeJS.Timeout {
    return setTimeout(() => {
      if (this.waiting.has(id)) this.fail(`exceeded its call budget (${ms} ms): hung or too slow`);
    }, ms);
  }

  private settle(r: SandboxReply): void {
    const w = this.waiting.get(r.id);
    if (!w) return;
    clearTimeout(w.timer);
    this.waiting.delete(r.id);
    this.outbox.push(...r.packets.map((p) => ({ ...p, src: new Uint8Array(p.src), dst: new Uint8Array(p.dst), bytes: new Uint8Array(p.bytes) })));
    this.events.push(...r.events);
    this.deadline = r.nextDeadline;
    const failed = r.events.find((e) => e.kind === 'failed');
    if (failed && failed.kind === 'failed') this.markFailed(failed.error);
    w.resolve(r);
  }

  private fail(reason: string): void {
    if (this.state === 'failed' || this.state === 'stopped') return;
    this.markFailed(reason);
    this.events.push({ kind: 'failed', id: 0, type: 'sandbox', atUs: 0, error: reason });
    void this.worker.terminate();
    // Every call in flight answers "not taken": the flow is forwarded.
    for (const [id, w] of this.waiting) {
      clearTimeout(w.timer);
      w.resolve({ id, packets: [], events: [], nextDeadline: undefined });
    }
    this.waiting.clear();
  }

  private markFailed(reason: string): void {
    this.state = 'failed';
    this.reason = reason;
  }
}
