import type { GatewayConfig } from '../config/types.js';
import type { Micros } from '../core/time.js';
import { GatewayRole, type GatewayState } from '../gateway/role.js';
import { meshIp } from '../wire/addresses.js';
import { dataHeaderBytes } from '../wire/codec.js';
import { parseIp } from '../wire/ip.js';
import type { DataHeader } from '../wire/mesh.js';

/**
 * The router's gateway side (docs/gateway.md): with `gateway.enabled`, what
 * enters the mesh at this router for a client (IP packets from the host
 * side, packets of the hosts on its wired link) waits in the client's
 * virtual queue of the GatewayRole and goes on into the mesh when the
 * shaper lets it, at the router's gateway alarm. A host's IP packet belongs
 * to the client whose prefix holds its destination; a wired host's mesh
 * packet that is not IP, to the client whose prefix holds the address plan's
 * address of its destination router (10.hi.lo.1). Anything else passes at
 * once.
 */

/** A packet held by the shaper: a host-side IP packet (a copy), or a wired host's mesh packet. */
export type GatewayPacket = Uint8Array | { header: DataHeader; payload: Uint8Array };

export interface GatewayParts {
  /** A host-side IP packet goes on into the mesh (the IP plane's fromHost). */
  toIp(packet: Uint8Array, now: Micros): void;
  /** A wired host's packet goes on into the mesh (the data plane's fromWire). */
  toMesh(header: DataHeader, payload: Uint8Array, now: Micros): void;
}

export class GatewaySide {
  private role: GatewayRole<GatewayPacket> | undefined;
  /** Made once: the shaper's emit for every packet it lets go. */
  private readonly emit = (p: GatewayPacket, now: Micros): void => {
    if (p instanceof Uint8Array) this.parts.toIp(p, now);
    else this.parts.toMesh(p.header, p.payload, now);
  };

  constructor(
    cfg: GatewayConfig,
    now: Micros,
    private readonly parts: GatewayParts,
  ) {
    this.role = cfg.enabled ? new GatewayRole<GatewayPacket>(cfg, now) : undefined;
  }

  /** The role, when the gateway is enabled (its graph and slices). */
  get active(): GatewayRole<GatewayPacket> | undefined {
    return this.role;
  }

  /** A host-side IP packet (`packet` may be a reused view): true when the shaper took it (queued or dropped). */
  fromHost(packet: Uint8Array, now: Micros): boolean {
    const role = this.role;
    if (!role) return false;
    const info = parseIp(packet);
    if (!info.ok) return false;
    const j = role.classify(info.value.dst);
    if (j < 0) return false;
    role.offer(j, packet.slice(), packet.length, now);
    return true;
  }

  /** A wired host's mesh packet: true when the shaper took it (queued or dropped). */
  fromWire(header: DataHeader, payload: Uint8Array, now: Micros): boolean {
    const role = this.role;
    if (!role) return false;
    let dst: Uint8Array;
    if (header.proto === 'ip4' || header.proto === 'ip6') {
      const info = parseIp(payload);
      if (!info.ok) return false;
      dst = info.value.dst;
    } else dst = meshIp(header.dst);
    const j = role.classify(dst);
    if (j < 0) return false;
    role.offer(j, { header, payload }, dataHeaderBytes(header) + payload.length, now);
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
   * packets the old one held offered to it again (counters start again; a
   * graph given whole, or scan reports, are for the caller to give again).
   */
  reconfigure(cfg: GatewayConfig, now: Micros): void {
    const held = this.role?.drain() ?? [];
    this.role = cfg.enabled ? new GatewayRole<GatewayPacket>(cfg, now) : undefined;
    for (const p of held) {
      if (p instanceof Uint8Array) {
        if (!this.fromHost(p, now)) this.parts.toIp(p, now);
      } else if (!this.fromWire(p.header, p.payload, now)) this.parts.toMesh(p.header, p.payload, now);
    }
  }

  state(): GatewayState | undefined {
    return this.role?.state();
  }
}
