import { parentPort } from 'node:worker_threads';
import type { Micros } from '../core/time.js';
import { VNF_TYPES } from './index.js';
import { VnfManager } from './manager.js';
import type { FlowPattern, VnfEvent, VnfPacket, VnfType } from './types.js';

/**
 * A VNF sandbox's worker thread: one VNF manager with one instance, driven
 * by the host over messages (`VnfSandbox` in sandbox.ts). Every reply
 * carries what the instance emitted, its lifecycle events and its next
 * deadline, so the host never waits on more than one round trip per call.
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

export type SandboxCall =
  | { id: number; op: 'intercept'; pkt: VnfPacket; now: Micros }
  | { id: number; op: 'tick'; now: Micros }
  | { id: number; op: 'list' }
  | { id: number; op: 'stop'; now: Micros };

export interface SandboxReply {
  id: number;
  result?: unknown;
  error?: string;
  packets: VnfPacket[];
  events: VnfEvent[];
  nextDeadline: Micros | undefined;
}

const port = parentPort;
if (!port) throw new Error('sandbox-worker runs as a worker thread of VnfSandbox');

let manager: VnfManager | undefined;
let instanceId = 0;

port.once('message', async (init: SandboxInit) => {
  try {
    const extra: VnfType[] = [];
    for (const m of init.modules) extra.push((await import(m.url))[m.export] as VnfType);
    manager = new VnfManager([...VNF_TYPES, ...extra], init.seed);
    instanceId = manager.instantiate(init.type, init.flow, init.params, init.now).id;
    port.postMessage(reply(0, init.now, instanceId));
  } catch (e) {
    port.postMessage({ id: 0, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e), packets: [], events: [], nextDeadline: undefined });
    return;
  }
  port.on('message', (c: SandboxCall) => {
    const m = manager!;
    const now = 'now' in c ? c.now : 0;
    let result: unknown;
    switch (c.op) {
      case 'intercept':
        result = m.intercept(c.pkt, c.now);
        break;
      case 'tick':
        m.tick(c.now);
        break;
      case 'list':
        result = m.list();
        break;
      case 'stop':
        result = m.list().some((i) => i.id === instanceId && i.state === 'running') ? m.terminate(instanceId, c.now) : undefined;
        break;
    }
    port.postMessage(reply(c.id, now, result));
  });
});

function reply(id: number, now: Micros, result: unknown): SandboxReply {
  const { packets, events } = manager!.poll(now);
  return { id, result, packets, events, nextDeadline: manager!.nextDeadline() };
}
