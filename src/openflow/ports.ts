import { OFPP } from '../wire/openflow/actions.js';

/**
 * The OpenFlow ports of a mesh router (seeds/000 section 4): the local
 * access port, and one logical port per neighbour link, numbered by the
 * neighbour's mesh address + 1 so that a port keeps its number for as long
 * as the neighbour exists. A link port's curr_speed (kbps) is the link's
 * remaining capacity RC = (1 - w) * C on the neighbour's R1 channel as this
 * router senses it; max_speed is C.
 */
export interface LinkPort {
  portNo: number;
  name: string;
  /** The neighbour's mesh address; undefined for the local port. */
  neighbour: number | undefined;
  /** The neighbour's R1 channel (where this router sends to it). */
  channel: number | undefined;
  /** Remaining capacity of the link, kbps. */
  rcKbps: number;
  /** The channel's capacity C, kbps. */
  maxKbps: number;
  /** Link up (the neighbour is heard). */
  up: boolean;
}

/** What the ports are computed from: the router's live neighbours, its w per channel and C. */
export interface PortInputs {
  node: number;
  name: string;
  neighbours: ReadonlyArray<{ addr: number; r1Channel: number }>;
  /** This router's merged w per channel (missing: not yet sensed, taken as 0). */
  w: ReadonlyMap<number, number>;
  capacityKbps: number;
}

export const portOfNeighbour = (addr: number): number => addr + 1;

/** A name cut to at most `bytes` bytes of UTF-8, never in the middle of a character (ofp_port.name holds 15). */
export function utf8Prefix(s: string, bytes: number): string {
  const enc = new TextEncoder();
  let out = '';
  for (const ch of s) {
    if (enc.encode(out + ch).length > bytes) break;
    out += ch;
  }
  return out;
}
export const neighbourOfPort = (portNo: number): number | undefined => (portNo >= 1 && portNo <= 0xffff ? portNo - 1 : undefined);

/** The router's ports now: LOCAL first, then the neighbour links by port number. */
export function meshPorts(p: PortInputs): LinkPort[] {
  const local: LinkPort = {
    portNo: OFPP.LOCAL,
    name: utf8Prefix(`${p.name}-local`, 15),
    neighbour: undefined,
    channel: undefined,
    rcKbps: p.capacityKbps,
    maxKbps: p.capacityKbps,
    up: true,
  };
  const links = [...p.neighbours]
    .sort((a, b) => a.addr - b.addr)
    .map((n): LinkPort => {
      const w = Math.min(1, Math.max(0, p.w.get(n.r1Channel) ?? 0));
      return {
        portNo: portOfNeighbour(n.addr),
        name: utf8Prefix(`${p.name}-n${n.addr}`, 15),
        neighbour: n.addr,
        channel: n.r1Channel,
        rcKbps: Math.round((1 - w) * p.capacityKbps),
        maxKbps: p.capacityKbps,
        up: true,
      };
    });
  return [local, ...links];
}

export type PortChange = { reason: 'add' | 'delete' | 'modify'; port: LinkPort };

/**
 * What the controller has been told about the ports, and what it must be
 * told now: a PORT_STATUS `add` for a new neighbour, `delete` for one lost,
 * `modify` when a link's RC moved by at least `stepKbps` since it was last
 * announced (or its channel changed). Smaller moves are not announced, so a
 * controller is not flooded with sensing noise.
 */
export class PortTracker {
  private readonly told = new Map<number, LinkPort>();

  constructor(private stepKbps: number) {}

  setStep(stepKbps: number): void {
    this.stepKbps = stepKbps;
  }

  /** The changes since the last call; the ports given become what the controller knows. */
  update(ports: readonly LinkPort[]): PortChange[] {
    const out: PortChange[] = [];
    const now = new Map(ports.map((p) => [p.portNo, p]));
    for (const [no, old] of this.told) {
      if (!now.has(no)) {
        out.push({ reason: 'delete', port: { ...old, up: false } });
        this.told.delete(no);
      }
    }
    for (const p of ports) {
      const old = this.told.get(p.portNo);
      if (!old) out.push({ reason: 'add', port: p });
      else if (Math.abs(p.rcKbps - old.rcKbps) >= this.stepKbps || p.channel !== old.channel || p.up !== old.up) out.push({ reason: 'modify', port: p });
      else continue;
      this.told.set(p.portNo, p);
    }
    return out;
  }

  /** The ports as last announced (what PORT_DESC should agree with, between announcements). */
  known(): LinkPort[] {
    return [...this.told.values()].sort((a, b) => (a.portNo === OFPP.LOCAL ? -1 : b.portNo === OFPP.LOCAL ? 1 : a.portNo - b.portNo));
  }
}
