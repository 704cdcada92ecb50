/**
 * A pcapng writer (the PCAP Next Generation capture file format,
 * draft-ietf-opsawg-pcapng): one Section Header Block, an Interface
 * Description Block per interface, then an Enhanced Packet Block per packet.
 * Sans-IO: every block goes to the `write` callback as it is made, so the
 * caller decides whether bytes pile up in memory or stream to a file.
 *
 * Blocks are written little-endian (the SHB's byte-order magic tells the
 * reader). Timestamps are microseconds, the format's default resolution
 * (no `if_tsresol` option is written).
 */

import { RangeArgumentError } from '../core/errors.js';
import type { Micros } from '../core/time.js';

/** LINKTYPE_IEEE802_11_RADIOTAP: 802.11 frames behind a radiotap header. */
export const LINKTYPE_IEEE802_11_RADIOTAP = 127;

const SHB_TYPE = 0x0a0d0d0a;
const IDB_TYPE = 0x00000001;
const EPB_TYPE = 0x00000006;
const BYTE_ORDER_MAGIC = 0x1a2b3c4d;
/** Option codes: opt_endofopt, shb_userappl, if_name, if_description. */
const OPT_END = 0;
const OPT_SHB_USERAPPL = 4;
const OPT_IF_NAME = 2;
const OPT_IF_DESCRIPTION = 3;
/** The largest packet an interface declares it captures whole. */
const SNAPLEN = 65535;

const pad4 = (n: number): number => (n + 3) & ~3;
const utf8 = new TextEncoder();

interface Option {
  code: number;
  value: Uint8Array;
}

function optionsBytes(opts: readonly Option[]): number {
  if (opts.length === 0) return 0;
  return opts.reduce((sum, o) => sum + 4 + pad4(o.value.length), 0) + 4;
}

/** One block: type, total length, body (written by `fill` from offset 8), options, total length again. */
function block(type: number, bodyBytes: number, opts: readonly Option[], fill: (v: DataView, out: Uint8Array) => void): Uint8Array {
  const total = 12 + pad4(bodyBytes) + optionsBytes(opts);
  const out = new Uint8Array(total);
  const v = new DataView(out.buffer);
  v.setUint32(0, type, true);
  v.setUint32(4, total, true);
  fill(v, out);
  let at = 8 + pad4(bodyBytes);
  if (opts.length > 0) {
    for (const o of opts) {
      v.setUint16(at, o.code, true);
      v.setUint16(at + 2, o.value.length, true);
      out.set(o.value, at + 4);
      at += 4 + pad4(o.value.length);
    }
    v.setUint16(at, OPT_END, true);
    v.setUint16(at + 2, 0, true);
  }
  v.setUint32(total - 4, total, true);
  return out;
}

const textOption = (code: number, text: string | undefined): Option[] => (text ? [{ code, value: utf8.encode(text) }] : []);

export interface PcapngInterface {
  /** `if_name`, e.g. `r0/R3`. */
  name: string;
  /** `if_description`. */
  description?: string;
  /** LINKTYPE_* of the packets on it. */
  linkType: number;
}

/** Writes one pcapng section: the header at construction, then interfaces and packets in the order given. */
export class PcapngWriter {
  private interfaces = 0;

  constructor(
    private readonly write: (bytes: Uint8Array) => void,
    /** `shb_userappl`: the application that wrote the file. */
    app = 'cogmesh',
  ) {
    write(
      block(SHB_TYPE, 16, textOption(OPT_SHB_USERAPPL, app), (v) => {
        v.setUint32(8, BYTE_ORDER_MAGIC, true);
        v.setUint16(12, 1, true); // major version
        v.setUint16(14, 0, true); // minor version
        // Section length -1: not given (the file is written as it goes).
        v.setInt32(16, -1, true);
        v.setInt32(20, -1, true);
      }),
    );
  }

  /** Declares an interface; returns its id, the `interfaceId` of its packets (0, 1, ... in order). */
  addInterface(ifc: PcapngInterface): number {
    if (!Number.isInteger(ifc.linkType) || ifc.linkType < 0 || ifc.linkType > 0xffff) {
      throw new RangeArgumentError('linkType', ifc.linkType, 'an integer 0-65535');
    }
    const opts = [...textOption(OPT_IF_NAME, ifc.name), ...textOption(OPT_IF_DESCRIPTION, ifc.description)];
    this.write(
      block(IDB_TYPE, 8, opts, (v) => {
        v.setUint16(8, ifc.linkType, true);
        v.setUint16(10, 0, true);
        v.setUint32(12, SNAPLEN, true);
      }),
    );
    return this.interfaces++;
  }

  /** One packet on interface `interfaceId`, captured whole, at `timeUs` microseconds since 1970-01-01 UTC. */
  packet(interfaceId: number, timeUs: Micros, data: Uint8Array): void {
    if (!Number.isInteger(interfaceId) || interfaceId < 0 || interfaceId >= this.interfaces) {
      throw new RangeArgumentError('interfaceId', interfaceId, `an interface declared so far (0-${this.interfaces - 1})`);
    }
    if (!Number.isSafeInteger(timeUs) || timeUs < 0) throw new RangeArgumentError('timeUs', timeUs, 'an integer number of microseconds >= 0');
    this.write(
      block(EPB_TYPE, 20 + data.length, [], (v, out) => {
        v.setUint32(8, interfaceId, true);
        v.setUint32(12, Math.floor(timeUs / 2 ** 32), true);
        v.setUint32(16, timeUs % 2 ** 32, true);
        v.setUint32(20, data.length, true);
        v.setUint32(24, data.length, true);
        out.set(data, 28);
      }),
    );
  }
}
