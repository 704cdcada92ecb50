import { RangeArgumentError } from '../../src/core/errors.js';
import type { Micros } from '../../src/core/time.js';
import type { PhyParams } from './types.js';

/** The rates of 802.11b DSSS (1, 2 Mbps) and CCK (5.5, 11 Mbps). */
export const RATES_80211B_BPS: readonly number[] = [1e6, 2e6, 5.5e6, 11e6];
/** The rates of 802.11g ERP-OFDM. */
export const RATES_80211G_BPS: readonly number[] = [6e6, 9e6, 12e6, 18e6, 24e6, 36e6, 48e6, 54e6];

/** OFDM service field and tail bits around the frame body. */
const OFDM_SERVICE_BITS = 16;
const OFDM_TAIL_BITS = 6;

/**
 * 802.11b with the long preamble, as ns-2's Mac802_11 defaults: 20 µs slots,
 * SIFS 10, DIFS 50, CW 31..1023, 192 µs PLCP, control frames at 1 Mbps,
 * RTS/CTS off.
 */
export function phy80211b(dataRateBps = 2e6): PhyParams {
  if (!RATES_80211B_BPS.includes(dataRateBps)) {
    throw new RangeArgumentError('dataRateBps', dataRateBps, 'an 802.11b rate: 1e6, 2e6, 5.5e6 or 11e6');
  }
  return {
    dataRateBps,
    basicRateBps: 1e6,
    slotUs: 20,
    sifsUs: 10,
    difsUs: 50,
    cwMin: 31,
    cwMax: 1023,
    plcpUs: 192,
    macHeaderBytes: 28,
    ackBytes: 14,
    rtsBytes: 20,
    ctsBytes: 14,
    shortRetryLimit: 7,
    longRetryLimit: 4,
    rtsThresholdBytes: Infinity,
  };
}

/**
 * 802.11g ERP-OFDM without protection (short slots): slot 9, SIFS 10,
 * DIFS 28, CW 15..1023, 20 µs preamble and SIGNAL, 4 µs symbols, a 6 µs
 * signal extension after every frame, control frames at 6 Mbps.
 */
export function phy80211g(dataRateBps = 54e6): PhyParams {
  if (!RATES_80211G_BPS.includes(dataRateBps)) {
    throw new RangeArgumentError('dataRateBps', dataRateBps, 'an 802.11g ERP-OFDM rate: 6, 9, 12, 18, 24, 36, 48 or 54 Mbps');
  }
  return {
    dataRateBps,
    basicRateBps: 6e6,
    slotUs: 9,
    sifsUs: 10,
    difsUs: 28,
    cwMin: 15,
    cwMax: 1023,
    plcpUs: 20,
    ofdmSymbolUs: 4,
    signalExtensionUs: 6,
    macHeaderBytes: 28,
    ackBytes: 14,
    rtsBytes: 20,
    ctsBytes: 14,
    shortRetryLimit: 7,
    longRetryLimit: 4,
    rtsThresholdBytes: Infinity,
  };
}

/** Time on the air of a frame of `bytes` (MAC header included) sent at `rateBps`, PLCP included. */
export function airtimeUs(phy: PhyParams, bytes: number, rateBps: number): Micros {
  const sym = phy.ofdmSymbolUs;
  if (sym !== undefined) {
    const bitsPerSymbol = (rateBps * sym) / 1e6;
    const symbols = Math.ceil((OFDM_SERVICE_BITS + 8 * bytes + OFDM_TAIL_BITS) / bitsPerSymbol);
    return phy.plcpUs + sym * symbols + (phy.signalExtensionUs ?? 0);
  }
  // 8 * bytes * 1e6 and an integer rate in bit/s: the quotient is exact when it is an integer.
  return phy.plcpUs + Math.ceil((8 * bytes * 1e6) / rateBps);
}

/**
 * A copy of `phy` with every field, in one order, made at one place. Its
 * hidden class is then the same in every run of a process: the MAC reads
 * these fields on every frame, and code that V8 optimised for one run's
 * copies keeps running for the next run's. A spread copy (`{ ...phy }`,
 * frozen or not) may get a new hidden class each time V8's clone cache
 * misses, and then every function that read the old one is compiled again.
 */
export function phyParams(phy: PhyParams): PhyParams {
  return {
    dataRateBps: phy.dataRateBps,
    basicRateBps: phy.basicRateBps,
    slotUs: phy.slotUs,
    sifsUs: phy.sifsUs,
    difsUs: phy.difsUs,
    cwMin: phy.cwMin,
    cwMax: phy.cwMax,
    plcpUs: phy.plcpUs,
    ofdmSymbolUs: phy.ofdmSymbolUs,
    signalExtensionUs: phy.signalExtensionUs,
    macHeaderBytes: phy.macHeaderBytes,
    ackBytes: phy.ackBytes,
    rtsBytes: phy.rtsBytes,
    ctsBytes: phy.ctsBytes,
    shortRetryLimit: phy.shortRetryLimit,
    longRetryLimit: phy.longRetryLimit,
    rtsThresholdBytes: phy.rtsThresholdBytes,
  };
}

/** Refuses PHY parameters a DCF cannot run with, naming the field. */
export function checkPhy(phy: PhyParams): void {
  const rate = (field: keyof PhyParams, v: number): void => {
    if (!Number.isSafeInteger(v) || v <= 0) throw new RangeArgumentError(`phy.${field}`, v, 'an integer number of bit/s > 0');
  };
  const micros = (field: keyof PhyParams, v: number | undefined, min: number): void => {
    if (v === undefined) return;
    if (!Number.isSafeInteger(v) || v < min) throw new RangeArgumentError(`phy.${field}`, v, `an integer number of µs >= ${min}`);
  };
  const count = (field: keyof PhyParams, v: number, min: number): void => {
    if (!Number.isSafeInteger(v) || v < min) throw new RangeArgumentError(`phy.${field}`, v, `an integer >= ${min}`);
  };
  rate('dataRateBps', phy.dataRateBps);
  rate('basicRateBps', phy.basicRateBps);
  micros('slotUs', phy.slotUs, 1);
  micros('sifsUs', phy.sifsUs, 0);
  micros('difsUs', phy.difsUs, 0);
  micros('plcpUs', phy.plcpUs, 0);
  micros('ofdmSymbolUs', phy.ofdmSymbolUs, 1);
  micros('signalExtensionUs', phy.signalExtensionUs, 0);
  count('cwMin', phy.cwMin, 0);
  count('cwMax', phy.cwMax, phy.cwMin);
  count('macHeaderBytes', phy.macHeaderBytes, 0);
  count('ackBytes', phy.ackBytes, 1);
  count('rtsBytes', phy.rtsBytes, 1);
  count('ctsBytes', phy.ctsBytes, 1);
  count('shortRetryLimit', phy.shortRetryLimit, 1);
  count('longRetryLimit', phy.longRetryLimit, 1);
  if (typeof phy.rtsThresholdBytes !== 'number' || !(phy.rtsThresholdBytes >= 0)) {
    throw new RangeArgumentError('phy.rtsThresholdBytes', phy.rtsThresholdBytes, 'a number of bytes >= 0, or Infinity');
  }
  if (phy.ofdmSymbolUs !== undefined) {
    for (const f of ['dataRateBps', 'basicRateBps'] as const) {
      const bits = (phy[f] * phy.ofdmSymbolUs) / 1e6;
      if (!Number.isInteger(bits)) throw new RangeArgumentError(`phy.${f}`, phy[f], 'a whole number of bits per OFDM symbol');
    }
  }
}
