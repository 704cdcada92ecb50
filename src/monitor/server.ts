import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { ism2g4 } from '../../radio/channels.js';
import { isLocalEndpoint } from '../config/load.js';
import type { NodeConfig } from '../config/types.js';
import { parseHostPort } from '../core/address.js';
import { CogmeshError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { budgetNote, refusalLogBudget } from '../core/log-budget.js';
import { RealClock } from '../core/time.js';
import type { PsdView, RouterView, SpectrumView, Telemetry } from '../router/view.js';
import { encodeFrame, encodePsdFrame, FRAME_TYPE_SPECTRUM } from './frames.js';
import { RouterMetrics, type MetricsSources } from './metrics.js';
import { monitorPage, type MonitorPage } from './page.js';
import { isRecordingsPath, serveRecordings } from './recordings.js';
import { MONITOR_PROTOCOL, type EventMessage, type HelloMessage, type StateMessage } from './protocol.js';

export type MonitorErrorCode = 'MONITOR_OFF' | 'MONITOR_BAD_LISTEN' | 'MONITOR_ADDRESS_IN_USE' | 'MONITOR_LISTEN_FAILED' | 'MONITOR_STATE';

/** The monitor cannot start (no or a bad listen address, the port taken) or was used out of order. */
export class MonitorError extends CogmeshError {
  declare readonly code: MonitorErrorCode;

  constructor(code: MonitorErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** Refused streams and connections logged at most: 5 lines a minute (each is counted). */
export { REFUSAL_LOG_LINES } from '../core/log-budget.js';

/** Tuning a deployment rarely changes; tests shrink them. */
export interface MonitorOptions {
  /** Sensing rounds kept and sent to a client on connect (120), with the PSDs of their visits. */
  historyRounds?: number;
  /** Most bytes of frames the history keeps (8 MiB): the oldest go first. */
  historyBytes?: number;
  /** A client with more than this many bytes queued to it skips messages until it drains (1 MiB). */
  maxBufferedBytes?: number;
  /** Ping period; a client that has not answered the previous ping is dropped (20000 ms). */
  pingIntervalMs?: number;
}

/** What the monitor has done since it started. */
export interface MonitorCounters {
  /** WebSocket clients connected now. */
  clients: number;
  /** WebSocket connections accepted in all. */
  connections: number;
  /** Requests refused: no or a wrong token (401), a foreign Origin (403), an unknown path. */
  refused: number;
  /** TCP connections closed as they arrived: monitor.maxConnections were open. */
  connectionsDropped: number;
  pagesServed: number;
  framesSent: number;
  /** Spectrum and PSD frames not sent to a client that was too far behind. */
  framesSkipped: number;
  statesSent: number;
  statesSkipped: number;
  eventsSent: number;
  eventsSkipped: number;
  /** Messages from clients (the stream is one-way: they are ignored). */
  clientMessages: number;
  /** Spectrum and PSD telemetry that could not be framed (logged). */
  badSpectra: number;
  /** Frames (rounds and PSDs) in the history sent on connect. */
  history: number;
  /** `GET /metrics` requests that passed the token check (the one being answered included). */
  scrapes: number;
  /** Scrapes that failed: the router could not be read (500, logged). */
  scrapeErrors: number;
}

/** One connected browser or tool. */
export interface MonitorClientInfo {
  id: number;
  remote: string;
  connectedAtMs: number;
  bufferedAmount: number;
  sent: number;
  skipped: number;
}

interface Client {
  id: number;
  ws: WebSocket;
  remote: string;
  connectedAtMs: number;
  sent: number;
  skipped: number;
  alive: boolean;
}

/**
 * The live spectrum monitor of a router: an HTTP server on `monitor.listen`
 * that serves the page at `/` and the stream at `/stream` (a WebSocket: a
 * JSON `hello`, the recent spectra as binary frames, then live frames, JSON
 * `state` every `statePeriodMs` and JSON `event`s), and the Prometheus
 * metrics at `/metrics` (docs/metrics.md). With `monitor.token` set every
 * path needs the token, as `?token=` or `Authorization: Bearer`. A client that falls behind skips messages
 * instead of queueing them. docs/monitor-protocol.md describes the stream.
 */
export class MonitorServer {
  /** Frames of the last rounds, spectra and PSDs, oldest first; `historySpectra` of them are spectra. */
  private readonly history: Uint8Array[] = [];
  private historySpectra = 0;
  private historyBytesNow = 0;
  private lastRound: number | undefined;
  private readonly clientSet = new Set<Client>();
  private readonly n: MonitorCounters = {
    clients: 0,
    connections: 0,
    refused: 0,
    connectionsDropped: 0,
    pagesServed: 0,
    framesSent: 0,
    framesSkipped: 0,
    statesSent: 0,
    statesSkipped: 0,
    eventsSent: 0,
    eventsSkipped: 0,
    clientMessages: 0,
    badSpectra: 0,
    history: 0,
    scrapes: 0,
    scrapeErrors: 0,
  };
  private readonly historyRounds: number;
  private readonly historyBytes: number;
  private readonly maxBufferedBytes: number;
  private readonly pingIntervalMs: number;
  private readonly tokenDigest: Uint8Array | undefined;
  /** Refusals anyone can cause (a stream without the token, a connection beyond the cap) are logged within this budget. */
  private readonly refusalLog = refusalLogBudget();
  private readonly clock = new RealClock();
  private http: Server | undefined;
  /** The page, built at start. */
  private page: MonitorPage | undefined;
  private wss: WebSocketServer | undefined;
  private unsubscribe: (() => void) | undefined;
  private stateTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private nextClientId = 1;
  private stateFailing = false;
  private scrapeFailing = false;
  /** The Prometheus metrics of `/metrics`, read from the router when scraped. */
  readonly metrics: RouterMetrics;
  private phase: 'new' | 'starting' | 'running' | 'stopped' = 'new';

  constructor(
    private readonly view: RouterView,
    /** Where and how it serves; what it streams follows the router's running configuration. */
    private readonly cfg: Pick<NodeConfig['monitor'], 'listen' | 'token' | 'statePeriodMs' | 'maxConnections'>,
    private readonly log: Logger,
    opts: MonitorOptions = {},
    sources: MetricsSources = {},
  ) {
    this.historyRounds = Math.max(0, Math.floor(opts.historyRounds ?? 120));
    this.historyBytes = Math.max(0, Math.floor(opts.historyBytes ?? 8 << 20));
    this.maxBufferedBytes = opts.maxBufferedBytes ?? 1 << 20;
    this.pingIntervalMs = opts.pingIntervalMs ?? 20_000;
    this.tokenDigest = cfg.token === '' ? undefined : digest(cfg.token);
    this.metrics = new RouterMetrics(view, {
      ...sources,
      monitor: () => ({ clients: this.clientSet.size, refused: this.n.refused, scrapes: this.n.scrapes }),
    });
  }

  /** A copy of the counters. */
  get counters(): MonitorCounters {
    return { ...this.n, clients: this.clientSet.size, history: this.history.length };
  }

  /** The clients connected now. */
  clients(): MonitorClientInfo[] {
    return [...this.clientSet].map((c) => ({
      id: c.id,
      remote: c.remote,
      connectedAtMs: c.connectedAtMs,
      bufferedAmount: c.ws.bufferedAmount,
      sent: c.sent,
      skipped: c.skipped,
    }));
  }

  /**
   * Listens on `monitor.listen` and starts following the router's telemetry.
   * Resolves with the page's URL (the real port when the configured one is 0;
   * without the token). MonitorError when the monitor is off, the address is
   * not host:port, or it cannot listen there (MONITOR_ADDRESS_IN_USE).
   */
  async start(): Promise<{ url: string }> {
    if (this.phase !== 'new') throw new MonitorError('MONITOR_STATE', `monitor: start() on a monitor that is ${this.phase}`);
    const listen = this.cfg.listen;
    if (listen === '') throw new MonitorError('MONITOR_OFF', 'monitor: monitor.listen is empty (the monitor is off)');
    const addr = parseListen(listen);
    // The page first: a monitor whose page is not built refuses to start rather than serve nothing.
    this.page = monitorPage();
    this.phase = 'starting';

    const http = createServer((req, res) => this.onRequest(req, res));
    // Every connection counts, whatever it carries (a page, a stream, nothing yet): one beyond the cap is closed as it arrives.
    http.maxConnections = this.cfg.maxConnections;
    http.on('drop', (d?: { remoteAddress?: string; remotePort?: number }) => {
      this.n.connectionsDropped++;
      this.logRefusal(
        { event: 'monitor-connection-dropped', remote: `${d?.remoteAddress ?? '?'}:${d?.remotePort ?? '?'}`, maxConnections: this.cfg.maxConnections },
        `monitor: closed a connection from ${d?.remoteAddress ?? '?'}: ${this.cfg.maxConnections} connections are open (monitor.maxConnections)`,
        'connections closed or streams refused',
      );
    });
    const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024, perMessageDeflate: false, clientTracking: false });
    http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(req, socket, head));
    http.on('clientError', (_e, socket) => socket.destroy());
    try {
      await new Promise<void>((resolve, reject) => {
        const onError = (e: NodeJS.ErrnoException): void => reject(e);
        http.once('error', onError);
        http.listen({ host: addr.host, port: addr.port }, () => {
          http.off('error', onError);
          resolve();
        });
      });
    } catch (e) {
      this.phase = 'stopped';
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') {
        throw new MonitorError(
          'MONITOR_ADDRESS_IN_USE',
          `monitor.listen: cannot listen on ${listen}: the address is already in use (another monitor or program holds the port)`,
          { cause: e },
        );
      }
      throw new MonitorError('MONITOR_LISTEN_FAILED', `monitor.listen: cannot listen on ${listen}: ${(e as Error).message}`, { cause: e });
    }
    this.http = http;
    this.wss = wss;
    if (this.stopRequested()) {
      await new Promise<void>((resolve) => http.close(() => resolve()));
      throw new MonitorError('MONITOR_STATE', 'monitor: stopped while it was starting');
    }
    http.on('error', (e) => this.log.error({ err: e }, `monitor server error: ${e.message}`));

    const bound = http.address();
    const port = typeof bound === 'object' && bound !== null ? bound.port : addr.port;
    const host = addr.host.includes(':') ? `[${addr.host}]` : addr.host;
    const url = `http://${host}:${port}/`;

    const latest = this.view.spectrum();
    if (latest) this.remember(latest);
    this.unsubscribe = this.view.subscribe((t) => this.onTelemetry(t));
    this.stateTimer = setInterval(() => this.broadcastState(), this.cfg.statePeriodMs);
    this.stateTimer.unref();
    this.pingTimer = setInterval(() => this.ping(), this.pingIntervalMs);
    this.pingTimer.unref();
    this.phase = 'running';
    this.log.info({ url, token: this.tokenDigest !== undefined }, `monitor on ${url}${this.tokenDigest ? ' (token required)' : ''}`);
    if (this.tokenDigest === undefined && !isLocalEndpoint(listen)) {
      this.log.warn(
        { listen },
        `monitor: ${listen} is reachable beyond this machine and no monitor.token is set: anyone who can reach it can watch the router`,
      );
    }
    return { url };
  }

  /** Closes every client (1001, going away) and the server. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.phase === 'stopped' || this.phase === 'new') {
      this.phase = 'stopped';
      return;
    }
    this.phase = 'stopped';
    this.unsubscribe?.();
    clearInterval(this.stateTimer);
    clearInterval(this.pingTimer);
    for (const c of this.clientSet) c.ws.close(1001, 'monitor stopping');
    const http = this.http;
    const wss = this.wss;
    // Give the close frames a moment to leave, then cut whatever is left.
    await new Promise((r) => setTimeout(r, 20));
    for (const c of this.clientSet) c.ws.terminate();
    this.clientSet.clear();
    await new Promise<void>((resolve) => (wss ? wss.close(() => resolve()) : resolve()));
    if (http) {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    }
    this.log.info('monitor stopped');
  }

  /** A refusal's log line, within the budget: at most a few a minute, each saying how many before it were not logged. */
  private logRefusal(fields: Record<string, unknown>, msg: string, what: string): void {
    const now = this.clock.now();
    const v = this.refusalLog.admit(now);
    if (v.log) this.log.info({ ...fields, notLogged: v.notLogged }, `${msg}${budgetNote(v, now, what)}`);
  }

  /** Whether stop() came while start() was waiting for the socket. */
  private stopRequested(): boolean {
    return this.phase === 'stopped';
  }

  // -------------------------------------------------------------------------
  // HTTP

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const url = requestUrl(req);
    if (url === undefined) {
      this.n.refused++;
      res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' }).end('bad request target\n');
      return;
    }
    if (!this.hostOk(req)) {
      this.n.refused++;
      res.writeHead(421, { 'Content-Type': 'text/plain; charset=utf-8' }).end('this monitor answers only to its own address (or give it a token)\n');
      return;
    }
    const recordings = isRecordingsPath(url.pathname);
    if (req.method !== 'GET' && req.method !== 'HEAD' && !(recordings && req.method === 'POST')) {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
      return;
    }
    if (url.pathname !== '/' && url.pathname !== '/stream' && url.pathname !== '/metrics' && !recordings) {
      this.n.refused++;
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    if (!this.tokenOk(url, req)) {
      this.n.refused++;
      res
        .writeHead(401, { 'Content-Type': 'text/plain; charset=utf-8', 'WWW-Authenticate': 'Bearer realm="cogmesh monitor"' })
        .end('a token is required: ?token=... or Authorization: Bearer ...\n');
      return;
    }
    if (url.pathname === '/metrics') {
      void this.serveMetrics(req, res);
      return;
    }
    if (recordings) {
      const origin = req.headers.origin;
      serveRecordings(url.pathname, req, res, this.view.recordings?.(), origin === undefined || sameOrigin(origin, req.headers.host)).catch((e: unknown) => {
        this.log.warn({ err: e }, `monitor: ${req.method ?? '?'} ${url.pathname} failed: ${(e as Error).message}`);
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('internal error\n');
        else res.destroy();
      });
      return;
    }
    if (url.pathname === '/stream') {
      res.writeHead(426, { Upgrade: 'websocket', Connection: 'Upgrade', 'Content-Type': 'text/plain; charset=utf-8' }).end('/stream is a WebSocket\n');
      return;
    }
    const page = this.page;
    if (!page) {
      res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' }).end('the monitor is not running\n');
      return;
    }
    this.n.pagesServed++;
    res.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      // The token travels in the URL: keep it out of Referer headers.
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      // Only the page's own script runs (its hash); the styles are inline.
      'Content-Security-Policy': `default-src 'none'; style-src 'unsafe-inline'; script-src '${page.scriptHash}'; connect-src 'self'; img-src data:; frame-ancestors 'none'`,
    });
    res.end(req.method === 'HEAD' ? undefined : page.html);
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = requestUrl(req);
    const refuse = (status: number, text: string): void => {
      this.n.refused++;
      this.logRefusal(
        { event: 'monitor-refused', remote: remoteOf(req), status },
        `monitor refused a stream: ${text}`,
        'connections closed or streams refused',
      );
      const body = `${text}\n`;
      socket.end(
        `HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      socket.destroy();
    };
    if (url === undefined) return refuse(400, 'Bad Request');
    if (this.phase !== 'running' || !this.wss) return refuse(503, 'Service Unavailable');
    if (!this.hostOk(req)) return refuse(421, 'Misdirected Request');
    if (url.pathname !== '/stream') return refuse(404, 'Not Found');
    if (!this.tokenOk(url, req)) return refuse(401, 'Unauthorized');
    // A page from another site must not read the router through its user's browser.
    const origin = req.headers.origin;
    if (origin !== undefined && !sameOrigin(origin, req.headers.host)) return refuse(403, 'Forbidden');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws, req));
  }

  /**
   * Without a token (a loopback monitor) the request must name a loopback
   * host or the listen address: a DNS-rebound name (evil.example resolving
   * to 127.0.0.1) would otherwise pass the Origin check and let any web
   * site read the stream through its visitor's browser.
   */
  private hostOk(req: IncomingMessage): boolean {
    if (this.tokenDigest !== undefined) return true;
    const host = (req.headers.host ?? '').toLowerCase();
    const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d*$/, '');
    const listenHost = this.cfg.listen.replace(/:\d+$/, '').toLowerCase();
    return name === 'localhost' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name) || name === listenHost;
  }

  /** The token as `?token=`, or as `Authorization: Bearer` (how a Prometheus scrape config passes credentials). */
  private tokenOk(url: URL, req: IncomingMessage): boolean {
    if (this.tokenDigest === undefined) return true;
    const bearer = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '')?.[1];
    const given = url.searchParams.get('token') ?? bearer ?? null;
    return given !== null && timingSafeEqual(digest(given), this.tokenDigest);
  }

  /** `GET /metrics`: the router read now, in the Prometheus text format; 500 (logged once a failing spell) when it cannot be read. */
  private async serveMetrics(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.n.scrapes++;
    let body: string;
    try {
      body = await this.metrics.scrape();
      this.scrapeFailing = false;
    } catch (e) {
      this.n.scrapeErrors++;
      if (!this.scrapeFailing) this.log.warn({ err: e }, `monitor: /metrics cannot read the router: ${(e as Error).message}`);
      this.scrapeFailing = true;
      res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('the router cannot be read now\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': this.metrics.contentType, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  // -------------------------------------------------------------------------
  // Stream

  private onConnection(ws: WebSocket, req: IncomingMessage): void {
    if (this.phase !== 'running') {
      ws.terminate();
      return;
    }
    const c: Client = { id: this.nextClientId++, ws, remote: remoteOf(req), connectedAtMs: Date.now(), sent: 0, skipped: 0, alive: true };
    this.n.connections++;
    ws.on('message', (_data: RawData) => {
      this.n.clientMessages++;
    });
    ws.on('pong', () => {
      c.alive = true;
    });
    ws.on('error', (e) => this.log.debug({ client: c.id, err: e }, `monitor client ${c.id}: ${e.message}`));
    ws.on('close', () => {
      this.clientSet.delete(c);
      this.log.debug({ client: c.id, remote: c.remote }, `monitor client ${c.id} left`);
    });

    // hello, the history, a first state: all in this tick, so no live message can come between.
    const cfg = this.view.config();
    const hello: HelloMessage = {
      type: 'hello',
      protocol: MONITOR_PROTOCOL,
      node: { id: this.view.id, name: this.view.name },
      channels: ism2g4(cfg.channelPlan.channels).numbers,
      allowed: cfg.channelPlan.allowed,
      capacityBps: cfg.channel.capacityMbps * 1e6,
      queuePackets: cfg.switching.queuePackets,
      configVersion: this.view.configVersion(),
      statePeriodMs: this.cfg.statePeriodMs,
      atUs: this.view.now(),
      history: this.history.length,
      psd: cfg.monitor.psd.enabled && cfg.channel.cognitive ? { bins: cfg.monitor.psd.bins, segments: cfg.monitor.psd.segments } : null,
    };
    ws.send(json(hello));
    for (const f of this.history) ws.send(f);
    c.sent += 1 + this.history.length;
    this.n.framesSent += this.history.length;
    const state = this.stateMessage();
    if (state !== undefined) {
      ws.send(state);
      c.sent++;
      this.n.statesSent++;
    }
    this.clientSet.add(c);
    this.log.debug({ client: c.id, remote: c.remote }, `monitor client ${c.id} connected from ${c.remote}`);
  }

  private onTelemetry(t: Telemetry): void {
    if (t.kind === 'spectrum' || t.kind === 'psd') {
      const frame = t.kind === 'spectrum' ? this.remember(t.spectrum) : this.rememberPsd(t.psd);
      if (frame === undefined) return;
      for (const c of this.clientSet) {
        if (this.sendTo(c, frame)) this.n.framesSent++;
        else this.n.framesSkipped++;
      }
      return;
    }
    if (this.clientSet.size === 0) return;
    const event: EventMessage = { type: 'event', ...t };
    const msg = json(event);
    for (const c of this.clientSet) {
      if (this.sendTo(c, msg)) this.n.eventsSent++;
      else this.n.eventsSkipped++;
    }
  }

  /** Frames a round and keeps it in the history; undefined for a round already kept or one that cannot be framed. */
  private remember(s: SpectrumView): Uint8Array | undefined {
    if (s.round === this.lastRound) return undefined;
    let frame: Uint8Array;
    try {
      frame = encodeFrame(s);
    } catch (e) {
      this.n.badSpectra++;
      this.log.warn({ err: e, round: s.round }, `monitor: round ${s.round} cannot be framed: ${(e as Error).message}`);
      return undefined;
    }
    this.lastRound = s.round;
    this.keep(frame, true);
    return frame;
  }

  /** Frames a visit's PSD and keeps it in the history; undefined for one that cannot be framed. */
  private rememberPsd(p: PsdView): Uint8Array | undefined {
    let frame: Uint8Array;
    try {
      frame = encodePsdFrame(p);
    } catch (e) {
      this.n.badSpectra++;
      this.log.warn(
        { err: e, round: p.round, channel: p.channel },
        `monitor: the PSD of channel ${p.channel} in round ${p.round} cannot be framed: ${(e as Error).message}`,
      );
      return undefined;
    }
    this.keep(frame, false);
    return frame;
  }

  /** Adds a frame to the history, then drops the oldest beyond historyRounds rounds or historyBytes bytes. */
  private keep(frame: Uint8Array, spectrum: boolean): void {
    if (this.historyRounds === 0) return;
    this.history.push(frame);
    this.historyBytesNow += frame.length;
    if (spectrum) this.historySpectra++;
    while (this.history.length > 0 && (this.historySpectra > this.historyRounds || this.historyBytesNow > this.historyBytes)) {
      const old = this.history.shift()!;
      this.historyBytesNow -= old.length;
      if (old[0] === FRAME_TYPE_SPECTRUM) this.historySpectra--;
    }
  }

  private broadcastState(): void {
    if (this.clientSet.size === 0) return;
    const msg = this.stateMessage();
    if (msg === undefined) return;
    for (const c of this.clientSet) {
      if (this.sendTo(c, msg)) this.n.statesSent++;
      else this.n.statesSkipped++;
    }
  }

  /** The state message, or undefined (logged once) when the router cannot answer. */
  private stateMessage(): string | undefined {
    try {
      const v = this.view;
      const state: StateMessage = {
        type: 'state',
        atUs: v.now(),
        status: v.status(),
        queues: v.queues(),
        neighbours: v.neighbours(),
        routes: v.routes(),
        vnfs: v.vnfs(),
        flows: v.flows(),
        gateway: v.gateway?.() ?? null,
      };
      const msg = json(state);
      this.stateFailing = false;
      return msg;
    } catch (e) {
      if (!this.stateFailing) this.log.warn({ err: e }, `monitor: the router's state cannot be read: ${(e as Error).message}`);
      this.stateFailing = true;
      return undefined;
    }
  }

  /** Sends unless the client is behind by more than maxBufferedBytes (then counts a skip). */
  private sendTo(c: Client, msg: string | Uint8Array): boolean {
    if (c.ws.readyState !== c.ws.OPEN || c.ws.bufferedAmount > this.maxBufferedBytes) {
      c.skipped++;
      return false;
    }
    c.ws.send(msg);
    c.sent++;
    return true;
  }

  private ping(): void {
    for (const c of this.clientSet) {
      if (!c.alive) {
        this.log.debug({ client: c.id }, `monitor client ${c.id} did not answer a ping; dropped`);
        c.ws.terminate();
        continue;
      }
      c.alive = false;
      c.ws.ping();
    }
  }
}

/** host and port of `listen` (`host:port`, `[v6]:port`); MONITOR_BAD_LISTEN otherwise. */
export function parseListen(listen: string): { host: string; port: number } {
  const hp = parseHostPort(listen);
  if (!hp) throw new MonitorError('MONITOR_BAD_LISTEN', `monitor.listen: ${JSON.stringify(listen)} is not host:port (e.g. 127.0.0.1:8080)`);
  return hp;
}

/** JSON with undefined fields as null, so every documented key is present. */
function json(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (x === undefined ? null : x));
}

function digest(s: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(s, 'utf8').digest());
}

/** The request's target as a URL, or undefined when it is not one (a malformed request line must not throw out of the server). */
function requestUrl(req: IncomingMessage): URL | undefined {
  try {
    return new URL(req.url ?? '/', 'http://monitor');
  } catch {
    return undefined;
  }
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

function remoteOf(req: IncomingMessage): string {
  const a = req.socket.remoteAddress ?? '?';
  return `${a.includes(':') ? `[${a}]` : a}:${req.socket.remotePort ?? '?'}`;
}
