import { RangeArgumentError } from '../../src/core/errors.js';
import type { Micros } from '../../src/core/time.js';
import type { FrontendKind } from '../frontend.js';
import { lengthMicros, PREAMBLE_AND_HEADER_BITS, type DsssRate } from './dsss/plcp.js';
import { FCS_BYTES } from './dsss/crc.js';
import { DOT11_ACK_BYTES } from '../../src/wire/dot11.js';

/**
 * The DCF's intervals for a station whose MAC runs on the host, behind a
 * front-end (docs/phy.md, "MAC timing"). 802.11b's own (SIFS 10 µs, slot
 * 20 µs) assume a MAC beside the radio; a host-based SDR answers only after
 * its samples have crossed the bus, been read in blocks and decoded, and the
 * answer has crossed back, which takes far longer.
 */
export interface MacTiming {
  /** From the end of a received frame to the start of its ACK. */
  readonly sifsUs: Micros;
  /** A backoff slot: at least the time to notice another station's transmission (read latency plus turnaround). */
  readonly slotUs: Micros;
  /** From the end of a sent data frame until the ACK must have been decoded. */
  readonly ackTimeoutUs: Micros;
  /** Contention window bounds in slots (CW doubles from cwMin + 1 up to cwMax + 1). */
  readonly cwMin: number;
  readonly cwMax: number;
  /** Transmission attempts of a unicast frame before it is given up. */
  readonly retryLimit: number;
}

/** DIFS = SIFS + 2 slots (IEEE 802.11-2016 10.3.7). */
export function difsUs(t: MacTiming): Micros {
  return t.sifsUs + 2 * t.slotUs;
}

/** The long preamble and PLCP header: 192 bits at 1 Mb/s. */
const PLCP_LONG_US: Micros = PREAMBLE_AND_HEADER_BITS;

/** Air time of an ACK (10 bytes and the FCS) at 1 Mb/s with the long preamble: 304 µs. */
export const ACK_AIRTIME_US: Micros = PLCP_LONG_US + lengthMicros(DOT11_ACK_BYTES + FCS_BYTES, 1);

/** Air time of a data frame of `macBytes` (header, body; the FCS is added here) at `rate`, long preamble. */
export function frameAirtimeUs(macBytes: number, rate: DsssRate): Micros {
  return PLCP_LONG_US + lengthMicros(macBytes + FCS_BYTES, rate);
}

/**
 * Defaults per front-end kind, each overridable in the configuration:
 *
 * - `sora`: 802.11b's own intervals. A SORA-like board moves samples over
 *   PCIe to cores dedicated to the radio and keeps the ACK's waveform ready,
 *   which is how SORA met 802.11's SIFS in software (Tan et al., NSDI 2009).
 * - `uhd` and `usb`: host-based over USB or Ethernet. The bus and the host's
 *   buffering put the round trip from antenna to host and back well above
 *   802.11's tens of microseconds, at the order of a millisecond and more
 *   (Nychis et al., NSDI 2009; Truong, Suh and Yu, MILCOM 2013, who measured
 *   GNU Radio/USRP round trips). A 1 ms SIFS and slot with a 2 ms allowance
 *   in the ACK timeout is the shortest that such a station meets reliably.
 * - `sim`: the emulated band in real time hands samples over in blocks of
 *   about a millisecond and answers through Node timers, so its turnaround is
 *   that of a host-based SDR, with more jitter on a loaded machine.
 * - `file`: a recording cannot transmit; its profile is never used for
 *   sending, and is uhd's.
 */
export const MAC_TIMING: Readonly<Record<FrontendKind, MacTiming>> = {
  sora: { sifsUs: 10, slotUs: 20, ackTimeoutUs: 10 + ACK_AIRTIME_US + 50, cwMin: 31, cwMax: 1023, retryLimit: 7 },
  uhd: { sifsUs: 1000, slotUs: 1000, ackTimeoutUs: 1000 + ACK_AIRTIME_US + 2000, cwMin: 15, cwMax: 255, retryLimit: 7 },
  usb: { sifsUs: 1000, slotUs: 1000, ackTimeoutUs: 1000 + ACK_AIRTIME_US + 2000, cwMin: 15, cwMax: 255, retryLimit: 7 },
  sim: { sifsUs: 2000, slotUs: 1000, ackTimeoutUs: 2000 + ACK_AIRTIME_US + 4000, cwMin: 15, cwMax: 255, retryLimit: 7 },
  file: { sifsUs: 1000, slotUs: 1000, ackTimeoutUs: 1000 + ACK_AIRTIME_US + 2000, cwMin: 15, cwMax: 255, retryLimit: 7 },
};

/** Checks a timing profile whole; the error names the first field that is wrong. */
export function checkMacTiming(t: MacTiming, where = 'timing'): MacTiming {
  const int = (name: keyof MacTiming, min: number, max: number): void => {
    const v = t[name];
    if (!Number.isInteger(v) || v < min || v > max) throw new RangeArgumentError(`${where}.${name}`, v, `an integer ${min}-${max}`);
  };
  int('sifsUs', 1, 1_000_000);
  int('slotUs', 1, 1_000_000);
  int('ackTimeoutUs', 1, 10_000_000);
  int('cwMin', 1, 1023);
  int('cwMax', 1, 1023);
  int('retryLimit', 1, 255);
  if (t.cwMax < t.cwMin) throw new RangeArgumentError(`${where}.cwMax`, t.cwMax, `at least cwMin (${t.cwMin})`);
  if (t.ackTimeoutUs <= t.sifsUs + ACK_AIRTIME_US) {
    throw new RangeArgumentError(`${where}.ackTimeoutUs`, t.ackTimeoutUs, `more than SIFS plus an ACK's air time (${t.sifsUs + ACK_AIRTIME_US} µs)`);
  }
  return t;
}
