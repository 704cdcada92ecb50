import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { ControlClient } from '../../src/control/client.js';
import { loadScenario } from '../../src/config/scenario.js';
import { createLogger } from '../../src/core/log.js';
import { DEFAULT_TESTBED_PORTS, planTestbed } from '../../src/testbed/plan.js';
import { Supervisor } from '../../src/testbed/supervisor.js';
import { root } from './cli.js';

/** A log line of the testbed or one of its processes (`proc`). */
export interface TestbedLine {
  proc?: string;
  event?: string;
  msg?: string;
  /** When the test process read it (Date.now()). */
  seenMs: number;
  [k: string]: unknown;
}

export interface TrafficRow {
  id: number;
  role: string;
  sent: number;
  received: number;
  bytes: number;
}

/**
 * A testbed run by a `Supervisor` inside the test process, as `cogmesh
 * testbed` runs one: the medium and a `cogmesh node` per router, from the
 * sources. Every endpoint is a Unix socket in a folder of its own and no
 * monitor listens, so that testbeds of several tests (or several runs on
 * one machine) never meet; `stop` stops the processes and removes the folder.
 */
export class LocalTestbed {
  private readonly clients = new Map<number, ControlClient>();

  private constructor(
    readonly sup: Supervisor,
    readonly dir: string,
    readonly routers: number,
    readonly lines: TestbedLine[],
  ) {}

  /** Starts `scenario` with these overrides (`--set`) and chain length; resolves once every router's control API answers. */
  static async start(scenario: string, o: { hops?: number; set?: string[]; seed?: number } = {}): Promise<LocalTestbed> {
    const sc = await loadScenario(join(root, scenario), { set: o.set ?? [], ...(o.hops !== undefined ? { hops: o.hops } : {}) });
    const dir = mkdtempSync(join(tmpdir(), 'cm-testbed-'));
    const plan = planTestbed(sc, o.seed ?? sc.seed, { ...DEFAULT_TESTBED_PORTS, medium: `ipc://${join(dir, 'medium')}` });
    for (const r of plan.routers) {
      r.config.control.endpoint = `ipc://${join(dir, `${r.name}.ctl`)}`;
      r.config.control.telemetry = `ipc://${join(dir, `${r.name}.tlm`)}`;
      r.config.monitor.listen = '';
      r.control = r.config.control.endpoint;
    }
    const lines: TestbedLine[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _e, cb) {
        const seenMs = Date.now();
        for (const l of chunk.toString().split('\n')) {
          if (l.trim() === '') continue;
          try {
            lines.push({ ...(JSON.parse(l) as Record<string, unknown>), seenMs });
          } catch {
            lines.push({ msg: l, seenMs });
          }
        }
        cb();
      },
    });
    const sup = new Supervisor(plan, {
      log: createLogger({ level: 'info', format: 'json', destination: sink }),
      command: { execPath: process.execPath, args: ['--import', 'tsx', join(root, 'src/cli/main.ts')] },
    });
    const tb = new LocalTestbed(sup, dir, plan.routers.length, lines);
    try {
      await sup.start();
      for (let i = 0; i < tb.routers; i++) await tb.waitFor(`router ${i}'s control API`, async () => (await tb.status(i, 1000)).pid, 60_000);
    } catch (e) {
      await tb.stop();
      throw e;
    }
    return tb;
  }

  ctl(i: number): ControlClient {
    let c = this.clients.get(i);
    if (!c) {
      c = new ControlClient(`ipc://${join(this.dir, `r${i}.ctl`)}`);
      this.clients.set(i, c);
    }
    return c;
  }

  async status(i: number, timeoutMs = 3000): Promise<{ pid: number; traffic: TrafficRow[] } & Record<string, unknown>> {
    const r = await this.ctl(i).request('status', {}, timeoutMs);
    assert.ok(r.ok, JSON.stringify(r));
    return r.result as { pid: number; traffic: TrafficRow[] };
  }

  /** Flow `id` at router i, as its status shows it (undefined until the flow has started there). */
  async flow(i: number, id: number): Promise<TrafficRow | undefined> {
    return (await this.status(i)).traffic.find((t) => t.id === id);
  }

  /** Polls `f` every `everyMs` until it gives a value (errors count as not yet), failing after `ms`. */
  async waitFor<T>(what: string, f: () => Promise<T | undefined>, ms: number, everyMs = 250): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await f().catch(() => undefined);
      if (v !== undefined) return v;
      if (Date.now() > end) assert.fail(`timed out after ${ms} ms waiting for ${what}\n${this.tail()}`);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  /** The last log lines, for a failure's message. */
  tail(n = 30): string {
    return this.lines
      .slice(-n)
      .map((l) => `  ${JSON.stringify(l).slice(0, 300)}`)
      .join('\n');
  }

  /** Closes the control clients (a router restarted behind one leaves it waiting on a dead socket) and the client of router i alone when given. */
  dropClients(i?: number): void {
    for (const [k, c] of this.clients) {
      if (i !== undefined && k !== i) continue;
      c.close();
      this.clients.delete(k);
    }
  }

  async stop(): Promise<void> {
    this.dropClients();
    await this.sup.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
