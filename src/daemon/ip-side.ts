import type { NodeConfig } from '../config/types.js';
import type { Logger } from '../core/log.js';
import type { PacedEngine } from '../core/paced.js';
import type { MeshRouter } from '../router/router.js';
import { formatIpAddress } from '../wire/ip.js';
import { configureTun } from './iproute.js';
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
    const side = new IpSide(tun, router);
    router.setHostSide((packet) => void tun.write(packet));
    tun.start(
      (b) =>
        paced.inject((now) => {
          for (let i = 0; i < b.count; i++) router.fromHost(b.data.subarray(b.offsets[i]!, b.offsets[i]! + b.lengths[i]!), now);
        }),
      (e) => log.error({ event: 'tun-error', code: e.code }, e.message),
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
    await this.tun.close();
  }
}
