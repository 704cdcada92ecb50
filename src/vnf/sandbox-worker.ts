import { parentPort } from 'node:worker_threads';
import { RingConsumer, RingProducer, SpinPolicy } from '../core/ring.js';
import type { Micros } from '../core/time.js';
import { VNF_TYPES } from './index.js';
import { VnfManager } from './manager.js';
import { callSpins, readCall, RecordWriter, type SandboxCall, type SandboxReply } from './sandbox-wire.js';
import type { FlowPattern, VnfType } from './types.js';

/**
 * A VNF sandbox's worker thread: one VNF manager with one instance, driven
 * by the host (`VnfSandbox` in sandbox.ts). The start comes as a message;
 * from then on calls come through a ring in shared memory and replies go
 * back through another, in order (sandbox-wire.ts has the records). Every
 * reply carries what the instance emitted, its lifecycle events and its
 * next deadline, so the host never waits on more than one reply per call.
 *
 * Idle, the thread first spins briefly on the call ring (a call that comes
 * soon after the last one is served without the wake-up of a sleeping
 * thread; the host says in each call whether to, and `SpinPolicy` stops
 * spinning where it does not pay), then sleeps in `Atomics.wait` until the
 * host writes. Being a
 * worker, it may block; `Worker.terminate()` still ends it, asleep or busy.
 */
export interface SandboxInit {
  type: string;
  flow: FlowPattern;
  params: unknown;
  seed: number;
  now: Micros;
  /** Modules exporting extra VNF types (by export name), for types beyond cogmesh's own. */
  modules: Array<{ url: string; export: string }>;
}

/** What the host sends to start the worker: the instance, and the rings (sandbox.ts makes them). */
export interface SandboxStart extends SandboxInit {
  calls: SharedArrayBuffer;
  replies: SharedArrayBuffer;
  /** How long the thread spins for the next call before it sleeps, µs. */
  spinUs: number;
}

const port = parentPort;
if (!port) throw new Error('sandbox-worker runs as a worker thread of VnfSandbox');

port.once('message', async (init: SandboxStart) => {
  let manager: VnfManager;
  let instanceId: number;
  try {
    const extra: VnfType[] = [];
    for (const m of init.modules) extra.push((await import(m.url))[m.export] as VnfType);
    manager = new VnfManager([...VNF_TYPES, ...extra], init.seed);
    instanceId = manager.instantiate(init.type, init.flow, init.params, init.now).id;
  } catch (e) {
    port.postMessage({
      id: 0,
      error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
      packets: [],
      events: [],
      nextDeadline: undefined,
    } satisfies SandboxReply);
    return;
  }
  // The start's answer is a message (it is the one call not on the rings), then the rings carry everything.
  port.postMessage(reply(manager, 0, init.now, instanceId));
  serve(manager, instanceId, init);
});

function reply(manager: VnfManager, id: number, now: Micros, result: unknown): SandboxReply {
  const { packets, events } = manager.poll(now);
  return { id, result, packets, events, nextDeadline: manager.nextDeadline() };
}

function answer(manager: VnfManager, instanceId: number, c: SandboxCall): SandboxReply {
  switch (c.op) {
    case 'intercept':
      return reply(manager, c.id, c.now, manager.intercept(c.pkt, c.now));
    case 'tick':
      manager.tick(c.now);
      return reply(manager, c.id, c.now, undefined);
    case 'list':
      return reply(manager, c.id, 0, manager.list());
    case 'stop': {
      const running = manager.list().some((i) => i.id === instanceId && i.state === 'running');
      return reply(manager, c.id, c.now, running ? manager.terminate(instanceId, c.now) : undefined);
    }
  }
}

/** Serves calls until the host terminates the thread. */
function serve(manager: VnfManager, instanceId: number, init: SandboxStart): never {
  const calls = new RingConsumer(init.calls);
  const replies = new RingProducer(init.replies);
  const records = new RecordWriter();
  const spin = new SpinPolicy(init.spinUs);
  let spinning = true;
  for (;;) {
    const rec = calls.read();
    if (rec !== undefined) {
      spinning = callSpins(rec);
      const out = records.reply(answer(manager, instanceId, readCall(rec)));
      // A full reply ring: wait for the host to read (backpressure), never drop.
      for (let at = replies.write(out, 0, false); at < out.length; at = replies.write(out, at, false)) {
        replies.notify();
        replies.waitForSpace();
      }
      continue;
    }
    // Replies are written without waking the host; it is woken (if it sleeps) once the calls run dry, so
    // that calls in flight together cost one wake-up, not one each.
    replies.notify();
    if (spinning && spin.spin(() => calls.readable())) continue;
    calls.waitForData();
  }
}
