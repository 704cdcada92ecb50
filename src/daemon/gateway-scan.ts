import { createSocket, type Socket } from 'node:dgram';
import type { NodeConfig } from '../config/types.js';
import { ConfigError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { PacedEngine } from '../core/paced.js';
import { ms } from '../core/time.js';
import { parseScanKey, routerOfAp, ScanReports, type GatewayScanView } from '../gateway/scan-reports.js';
import type { MeshRouter } from '../router/router.js';
import { parseIpAddress } from '../wire/ip.js';
import { SCAN_REPORT_MAX_BYTES } from '../wire/scan-report.js';

type ScanConfig = NodeConfig['gateway']['scan'];

/**
 * The gateway's listener for its clients' scan reports (docs/gateway.md):
 * a UDP socket whose datagrams go, at the engine's time, through
 * `ScanReports` (the checks, counted by cause) to the router's gateway
 * role, which infers Type III dependence and recomputes the slices when the
 * graph changed. AP names map to routers by `gateway.scan.aps`, `rN` or
 * `N`; an AP outside the mesh is left out of the report.
 *
 * A live change of the gateway section makes a new role, which knows no
 * report: the listener gives it each client's latest report again, so the
 * graph survives the change. Where it listens takes a restart.
 */
export class GatewayScanListener {
  private sink: ScanReports;
  private aps: Map<string, number>;
  private oversized = 0;

  private constructor(
    private readonly socket: Socket,
    private readonly where: string,
    private cfg: NodeConfig,
    private readonly router: MeshRouter,
    private readonly paced: PacedEngine,
    private readonly log: Logger,
  ) {
    this.aps = apMap(cfg.gateway.scan);
    this.sink = this.newSink(cfg);
    this.listenOn(socket);
  }

  /** Opens the socket when `gateway.scan.enabled` (where it listens takes a restart); undefined otherwise. Rejects, naming the address, when it cannot be bound. */
  static async open(cfg: NodeConfig, router: MeshRouter, paced: PacedEngine, log: Logger): Promise<GatewayScanListener | undefined> {
    if (!cfg.gateway.scan.enabled) return undefined;
    const { socket, where } = await bind(cfg.gateway.scan);
    log.info({ event: 'gateway-scan-start', listen: where }, `gateway: scan reports on udp ${where}`);
    return new GatewayScanListener(socket, where, cfg, router, paced, log);
  }

  get view(): GatewayScanView {
    return { listening: this.where, counters: { ...this.sink.counters, oversized: this.oversized }, latest: this.sink.latest() };
  }

  /**
   * The node's new configuration, at `now` (a live set that changed the
   * gateway section): new checks (clients, key, interval, AP names) that
   * keep the counters and each client's latest report (an older one stays
   * refused), and those reports given again to the new role.
   */
  reconfigure(cfg: NodeConfig, now: number): void {
    const old = this.sink;
    this.cfg = cfg;
    this.aps = apMap(cfg.gateway.scan);
    this.sink = this.newSink(cfg);
    this.sink.carryFrom(old);
    for (const r of this.sink.latest()) this.deliver(r.client, new Map(Object.entries(r.aps)), now);
  }

  close(): void {
    this.socket.close();
  }

  private newSink(cfg: NodeConfig): ScanReports {
    const s = cfg.gateway.scan;
    return new ScanReports(
      cfg.gateway.clients.map((c) => ({ id: c.id, prefixes: [c.prefix] })),
      { minIntervalUs: ms(s.minIntervalMs), ...(s.key !== '' ? { key: parseScanKey(s.key, 'gateway.scan.key') } : {}) },
      (client, aps, now) => this.deliver(client, aps, now),
    );
  }

  /** A report taken: its APs by router (those outside the mesh left out) to the role. */
  private deliver(client: string, aps: ReadonlyMap<string, number>, now: number): boolean {
    const byRouter = new Map<number, number>();
    for (const [name, dbm] of aps) {
      const r = routerOfAp(name, this.aps);
      if (r !== undefined && (byRouter.get(r) ?? -Infinity) < dbm) byRouter.set(r, dbm);
    }
    const changed = this.router.gatewayReport(client, byRouter, now);
    if (changed) this.log.info({ event: 'gateway-graph', client }, `gateway: ${client}'s scan report changed the dependence graph`);
    return changed;
  }

  private listenOn(socket: Socket): void {
    socket.on('message', (msg, rinfo) => {
      if (msg.length > SCAN_REPORT_MAX_BYTES) {
        this.oversized++;
        return;
      }
      const from = sourceAddress(rinfo.address);
      const bytes = new Uint8Array(msg.buffer, msg.byteOffset, msg.length);
      this.paced.inject((now) => {
        this.sink.receive(bytes, from ?? new Uint8Array(0), now);
      });
    });
    socket.on('error', (e) => this.log.error({ event: 'gateway-scan-error', code: (e as NodeJS.ErrnoException).code }, `gateway: scan socket: ${e.message}`));
  }
}

function apMap(s: ScanConfig): Map<string, number> {
  return new Map(s.aps.map((a) => [a.name, a.router]));
}

/** A datagram's source as 4 or 16 bytes: an IPv4-mapped IPv6 address (a dual-stack socket's) as IPv4. */
function sourceAddress(text: string): Uint8Array | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(text);
  return parseIpAddress(mapped ? mapped[1]! : text);
}

/** A UDP socket on the configured address and port: `listen` empty is every address, IPv4 and IPv6. */
async function bind(s: ScanConfig): Promise<{ socket: Socket; where: string }> {
  const v4 = s.listen !== '' && parseIpAddress(s.listen)?.length === 4;
  const socket = createSocket({ type: v4 ? 'udp4' : 'udp6', ipv6Only: false });
  const host = s.listen === '' ? '::' : s.listen;
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(s.port, host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    socket.close();
    throw new ConfigError(
      [
        {
          path: '/gateway/scan',
          value: `${s.listen || 'every address'} port ${s.port}`,
          expected: `an address and UDP port this router PC can listen on (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
        },
      ],
      'gateway scan reports',
    );
  }
  const a = socket.address();
  return { socket, where: `${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}` };
}
