import type { GatewayConfig } from '../config/types.js';
import type { Micros } from '../core/time.js';
import { GatewayRole, type GatewayState } from '../gateway/role.js';
import { meshIp } from '../wire/addresses.js';
import { dataHeaderBytes } from '../wire/codec.js';
import { parseIp } from '../wire/ip.js';
import type { DataPacket, EnteringPacket, FlowEntry } from './forwarding.js';

/**
 * The router's gateway side (docs/gateway.md): with `gateway.enabled`, a
 * packet entering the mesh at this router for a client waits in the
 * client's virtual queue of the GatewayRole and goes on into the mesh when
 * the shaper lets it, at the router's gateway alarm. A packet enters the
 * mesh here from the router's hosts (the TUN), its wired link or its VNFs,
 * and the gateway sees it after the VNFs: a TCP-ACC on the gateway splits a
 * server's connection on the LAN side of the virtual queues, as seeds/003's
 * proxy sits in front of ADWISER. A host's IP packet belongs to the client
 * whose prefix holds its destination; any other mesh packet, to the client
 * whose prefix holds the address plan's address of its destination router
 * (10.hi.lo.1). Anything else passes at once.
 */

export interface GatewayParts {
  /** A packet the gateway lets go: on into the mesh (the data plane's `enter`). */
  enter(packet: DataPacket, payload: Uint8Array, entry: FlowEntry, now: Micros): void;
}

export class GatewaySide {
  private role: GatewayRole<EnteringPacket> | undefined;
  /** Made once: the shaper's emit for every packet it lets go. */
  private readonly emit = (e: EnteringPacket, now: Micros): void => this.parts.enter(e.packet, e.payload, e.entry, now);

  constructor(
    cfg: GatewayConfig,
    now: Micros,
    private readonly parts: GatewayParts,
  ) {
    this.role = cfg.enabled ? new GatewayRole<EnteringPacket>(cfg, now) : undefined;
  }

  /** The role, when the gateway is enabled (its graph and slices). */
  get active(): GatewayRole<EnteringPacket> | undefined {
    return this.role;
  }

  /** A packet entering the mesh here: true when the shaper took it (queued or dropped), false when it goes on at once. */
  admit(packet: DataPacket, payload: Uint8Array, entry: FlowEntry, now: Micros): boolean {
    const role = this.role;
    if (!role) return false;
    const { header } = packet;
    let dst: Uint8Array;
    let bytes: number;
    if (header.proto === 'ip4' || header.proto === 'ip6') {
      const info = parseIp(payload);
      if (!info.ok) return false;
      dst = info.value.dst;
      // A host's packet counts as its IP packet, as the hosts see the rate.
      bytes = info.value.totalBytes;
    } else {
      dst = meshIp(header.dst);
      bytes = dataHeaderBytes(header) + payload.length;
    }
    const j = role.classify(dst);
    if (j < 0) return false;
    role.offer(j, { packet, payload, entry }, bytes, now);
    return true;
  }

  nextDeadline(): Micros | undefined {
    return this.role?.nextDeadline();
  }

  /** What is due at `now`: rate adaptation runs and the packets the slices let go. */
  tick(now: Micros): void {
    this.role?.poll(now, this.emit);
  }

  /**
   * A new gateway section (a live set): a new role from `now`, with the
   * packets the old one held offered to it again. A client that keeps its id
   * keeps its counters; a graph given whole, or scan reports, are for the
   * caller to give again. The old role is drained only once the new one is
   * made.
   */
  reconfigure(cfg: GatewayConfig, now: Micros): void {
    const old = this.role;
    const role = cfg.enabled ? new GatewayRole<EnteringPacket>(cfg, now) : undefined;
    if (old && role) role.carryFrom(old);
    const held = old?.drain() ?? [];
    this.role = role;
    for (const e of held) if (!this.admit(e.packet, e.payload, e.entry, now)) this.parts.enter(e.packet, e.payload, e.entry, now);
  }

  state(): GatewayState | undefined {
    return this.role?.state();
  }
}
