import type { NodeConfig } from '../config/types.js';
import type { Logger } from '../core/log.js';
import type { PacedEngine } from '../core/paced.js';
import type { Micros } from '../core/time.js';
import type { MeshRouter } from '../router/router.js';
import { formatIpAddress } from '../wire/ip.js';
import { configureTun } from './iproute.js';
import { Wan } from './wan.js';
import { hasNetAdmin, TunDevice, TunError, type TunCounters } from './tun.js';

/**
 * The daemon's IP side (docs/ip.md): the TUN device between the router
 * PC's kernel and the router's IP plane. The kernel routes the hosts'
 * packets for the mesh into the TUN (`ip.meshRoutes`); each batch read is
 * handed to the router at the engine's time; packets for the hosts this
 * router serves are written back, and the kernel takes them on.
 */
export class IpSide {
  private constructor(
    private readonly tun: TunDevice,
    private readonly router: MeshRouter,
    /** The emulated WAN between the TUN and the router (`ip.wan`), when enabled. */
    readonly wan: Wan | undefined,
  ) {}

  /** Refuses at once, naming the capability, when the process may not open a TUN. */
  static check(cfg: NodeConfig): void {
    if (cfg.ip.enabled && !hasNetAdmin()) {
      throw new TunError(
        'TUN_PERMISSION',
        `the ip section needs CAP_NET_ADMIN to open TUN device "${cfg.ip.tun}": run as root, or grant the capability (setcap cap_net_admin+ep on the node binary)`,
      );
    }
  }

  /** Opens and sets up the TUN (its addresses and the mesh routes, with iproute2), then starts reading. */
  static async open(cfg: NodeConfig, router: MeshRouter, paced: PacedEngine, log: Logger): Promise<IpSide> {
    IpSide.check(cfg);
    const tun = TunDevice.open(cfg.ip.tun);
    const a = router.ip.addresses;
    const addresses = [`${formatIpAddress(a.ipv4)}/32`, `${formatIpAddress(a.ipv6)}/128`];
    try {
      await configureTun(tun.name, { mtu: cfg.ip.mtu, addresses, routes: cfg.ip.meshRoutes });
    } catch (e) {
      await tun.close();
      throw e;
    }
    const w = cfg.ip.wan;
    const wan = w.enabled
      ? new Wan(
          w,
          paced.scheduler,
          (packet, now) => router.fromHost(packet, now),
          (packet) => void tun.write(packet),
        )
      : undefined;
    const side = new IpSide(tun, router, wan);
    router.setHostSide(wan ? (packet) => void wan.toLan.send(packet, paced.now()) : (packet) => void tun.write(packet));
    const fromHost = wan
      ? (packet: Uint8Array, now: Micros) => void wan.toMesh.send(packet, now)
      : (packet: Uint8Array, now: Micros) => router.fromHost(packet, now);
    tun.start(
      (b) =>
        paced.inject((now) => {
          for (let i = 0; i < b.count; i++) fromHost(b.data.subarray(b.offsets[i]!, b.offsets[i]! + b.lengths[i]!), now);
        }),
      (e) => log.error({ event: 'tun-error', code: e.code }, e.message),
    );
    if (wan)
      log.info(
        { event: 'wan-start', rateMbps: w.rateMbps, delayMs: w.delayMs, queuePackets: w.queuePackets, queueBytes: w.queueBytes },
        `an emulated WAN between ${tun.name} and the mesh: ${w.rateMbps} Mbps and ${w.delayMs} ms each way`,
      );
    log.info(
      { event: 'ip-start', tun: tun.name, mtu: cfg.ip.mtu, addresses, prefixes: cfg.ip.prefixes, meshRoutes: cfg.ip.meshRoutes },
      `IP over the mesh on ${tun.name} (MTU ${cfg.ip.mtu}): ${addresses.join(', ')}; serving ${cfg.ip.prefixes.join(', ') || 'no LAN'}; ${cfg.ip.meshRoutes.join(', ')} into the mesh`,
    );
    return side;
  }

  get name(): string {
    return this.tun.name;
  }

  get counters(): TunCounters {
    return this.tun.counters;
  }

  async close(): Promise<void> {
    this.router.setHostSide(undefined);
    this.wan?.stop();
    await this.tun.close();
  }
}
