import type { Micros } from '../../src/core/time.js';
import { LINKTYPE_IEEE802_11_RADIOTAP, PcapngWriter } from '../../src/wire/pcapng.js';
import { radiotapFrame } from '../../src/wire/radiotap.js';
import type { ChannelPlan } from '../channels.js';
import type { MacFrame, PhyParams, SendOutcome, Station, StationHandlers, StationHost, StationSpec } from './types.js';

/** What a capture needs from the host it watches. */
export interface CaptureParts {
  /** The host's clock (virtual time in the simulator, the paced engine's in a daemon). */
  now(): Micros;
  /** Added to `now()` for the packets' timestamps (µs since 1970): 0 in the simulator, the start's wall time in a daemon. */
  epochUs: Micros;
  /** Rate of the data frames, bit/s, and whether the PHY is OFDM. */
  rateBps: number;
  ofdm: boolean;
  /** Centre frequency of a channel, MHz. */
  freqMHz(channel: number): number;
  /** The power at which station `spec` received a frame from mesh node `src` on `channel`, dBm (undefined: unknown). */
  signalDbm?(spec: StationSpec, src: number, channel: number): number | undefined;
  /** Where the pcapng bytes of one router (mesh address `node`) go, in order. */
  sink(node: number): (bytes: Uint8Array) => void;
}

/** What the radiotap headers say of the PHY: its data rate, OFDM or not, the plan's frequencies. */
export function captureRadio(phy: Readonly<PhyParams>, plan: ChannelPlan): Pick<CaptureParts, 'rateBps' | 'ofdm' | 'freqMHz'> {
  return { rateBps: phy.dataRateBps, ofdm: phy.ofdmSymbolUs !== undefined, freqMHz: (ch) => Math.round(plan.get(ch).centerHz / 1e6) };
}

/** The radios every router has, one pcapng interface each, in this order. */
const RADIOS = ['R1', 'R2', 'R3'] as const;

/**
 * A station host that records what its stations hear and send, one pcapng
 * stream per router with an interface per radio (docs/pcap.md). A frame a
 * station received is recorded when the medium hands it over (the end of
 * its airtime), with its signal when the host knows it; a frame a station
 * sent, once, when its outcome comes back (acknowledged, given up after the
 * retry limit, or a broadcast off the air; the 802.11 Retry flag set when it
 * took more than one attempt). Frames that never went on the air, or were
 * cut short by a retune, are not recorded. It only watches: the stations,
 * their handlers and the order of the calls are the host's own, so a run
 * captured gives the same results as one that is not.
 */
export class CaptureHost implements StationHost {
  private readonly writers = new Map<number, { w: PcapngWriter; ifc: Map<string, number> }>();

  constructor(
    private readonly host: StationHost,
    private readonly parts: CaptureParts,
  ) {}

  get sendWindow(): number | undefined {
    return this.host.sendWindow;
  }

  addStation(spec: StationSpec, handlers: StationHandlers): Station {
    const radio = spec.id.slice(spec.id.lastIndexOf('/') + 1);
    const ifcId = this.interfaceOf(spec.node, radio, spec.id);
    const w = this.writers.get(spec.node)!.w;
    const p = this.parts;
    // The station, once the host has made it (its handlers run only after that).
    const made: { st?: Station } = {};
    const record = (f: MacFrame, channel: number | undefined, signalDbm: number | undefined, retry: boolean): void => {
      if (channel === undefined) return;
      const info = { freqMHz: p.freqMHz(channel), rateBps: p.rateBps, ofdm: p.ofdm, retry, ...(signalDbm === undefined ? {} : { signalDbm }) };
      w.packet(ifcId, p.epochUs + p.now(), radiotapFrame(info, f.src, f.dst, f.payload));
    };
    const wrapped: StationHandlers = {
      onReceive: (f: MacFrame, now: Micros) => {
        const ch = made.st?.channel;
        record(f, ch, ch === undefined ? undefined : p.signalDbm?.(spec, f.src, ch), false);
        handlers.onReceive(f, now);
      },
      onSent: (f: MacFrame, o: SendOutcome) => {
        if (o.attempts > 0 && (o.ok || o.reason === 'retry-limit')) record(f, made.st?.channel, undefined, o.attempts > 1);
        handlers.onSent(f, o);
      },
      ...(handlers.onAttempt ? { onAttempt: handlers.onAttempt.bind(handlers) } : {}),
    };
    made.st = this.host.addStation(spec, wrapped);
    return made.st;
  }

  /** The interface of a router's radio, declaring the router's stream and its three interfaces on first use. */
  private interfaceOf(node: number, radio: string, id: string): number {
    let e = this.writers.get(node);
    if (!e) {
      const w = new PcapngWriter(this.parts.sink(node));
      const ifc = new Map<string, number>();
      const name = id.slice(0, id.lastIndexOf('/'));
      for (const r of RADIOS)
        ifc.set(r, w.addInterface({ name: `${name}/${r}`, description: `router ${node}, radio ${r}`, linkType: LINKTYPE_IEEE802_11_RADIOTAP }));
      e = { w, ifc };
      this.writers.set(node, e);
    }
    let i = e.ifc.get(radio);
    if (i === undefined) {
      i = e.w.addInterface({ name: id, description: `router ${node}, radio ${radio}`, linkType: LINKTYPE_IEEE802_11_RADIOTAP });
      e.ifc.set(radio, i);
    }
    return i;
  }
}
