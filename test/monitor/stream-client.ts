import { Writable } from 'node:stream';
import { WebSocket } from 'ws';
import type { NodeConfig } from '../../src/config/types.js';
import { parseFrame } from '../../src/monitor/frames.js';
import { MonitorServer, type MonitorOptions } from '../../src/monitor/server.js';
import { createLogger, type Logger } from '../../src/core/log.js';
import type { SpectrumView } from '../../src/router/view.js';
import { MonitorTestView } from '../support/monitor-view.js';

/** One message of the stream as a test sees it. */
export type StreamMsg = { kind: 'json'; msg: Record<string, unknown> & { type: string } } | { kind: 'frame'; frame: SpectrumView; bytes: number };

/** A logger whose JSON lines a test can read. */
export function testLogger(): { log: Logger; lines: () => Array<Record<string, unknown>> } {
  const out: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== ''),
      );
      cb();
    },
  });
  const log = createLogger({ level: 'debug', format: 'json', destination });
  return { log, lines: () => out.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

/** A monitor on 127.0.0.1 and a port the OS picks, over a MonitorTestView. */
export async function startMonitor(
  cfg: Partial<NodeConfig['monitor']> = {},
  opts: MonitorOptions = {},
  view = new MonitorTestView(),
): Promise<{ view: MonitorTestView; server: MonitorServer; url: string; lines: () => Array<Record<string, unknown>> }> {
  const { log, lines } = testLogger();
  const server = new MonitorServer(view, { listen: '127.0.0.1:0', token: '', statePeriodMs: 500, maxConnections: 32, ...cfg }, log, opts);
  const { url } = await server.start();
  return { view, server, url, lines };
}

/** A WebSocket client that keeps every message it gets. */
export class StreamClient {
  readonly messages: StreamMsg[] = [];
  readonly badFrames: string[] = [];
  private waiters: Array<() => void> = [];
  closed: { code: number; reason: string } | undefined;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        // binaryType 'nodebuffer' (the default): one Buffer per message, fragments joined.
        const buf = data as Buffer;
        const b = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
        const r = parseFrame(b);
        if (r.ok) this.messages.push({ kind: 'frame', frame: r.value, bytes: b.length });
        else this.badFrames.push(r.error.code);
      } else {
        this.messages.push({ kind: 'json', msg: JSON.parse(String(data)) as Record<string, unknown> & { type: string } });
      }
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString('utf8') };
      this.wake();
    });
  }

  /** Connects to `/stream` of the page at `pageUrl` (with `?token=` when given). */
  static async open(pageUrl: string, opts: { token?: string; headers?: Record<string, string> } = {}): Promise<StreamClient> {
    const u = new URL('stream', pageUrl);
    u.protocol = 'ws:';
    if (opts.token !== undefined) u.searchParams.set('token', opts.token);
    const ws = new WebSocket(u, { headers: opts.headers });
    const c = new StreamClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return c;
  }

  /** The HTTP status of a refused upgrade. */
  static async refusal(pageUrl: string, opts: { token?: string; headers?: Record<string, string> } = {}): Promise<number> {
    const u = new URL('stream', pageUrl);
    u.protocol = 'ws:';
    if (opts.token !== undefined) u.searchParams.set('token', opts.token);
    const ws = new WebSocket(u, { headers: opts.headers });
    return new Promise<number>((resolve, reject) => {
      ws.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        ws.terminate();
      });
      ws.once('open', () => {
        ws.terminate();
        reject(new Error('the upgrade was accepted'));
      });
      ws.once('error', (e) => reject(e));
    });
  }

  get frames(): SpectrumView[] {
    return this.messages.flatMap((m) => (m.kind === 'frame' ? [m.frame] : []));
  }

  json(type?: string): Array<Record<string, unknown> & { type: string }> {
    return this.messages.flatMap((m) => (m.kind === 'json' && (type === undefined || m.msg.type === type) ? [m.msg] : []));
  }

  /** Resolves once `pred` holds (checked on every message), rejects after `ms`. */
  async until(what: string, pred: () => boolean, ms = 5000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pred()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${ms} ms waiting for ${what} (${this.messages.length} messages)`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 50));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    if (this.closed || this.ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
      setTimeout(() => {
        this.ws.terminate();
        resolve();
      }, 500).unref();
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}
