/**
 * The 802.11b DSSS PHY at 1 and 2 Mb/s (IEEE 802.11-2016 clause 16), long
 * preamble: a transmitter to complex baseband (rectangular or shaped chips),
 * a channel model (carrier offset, sample clock drift), a streaming receiver
 * with chip timing recovery, and a rational resampler to and from a
 * front-end's rate.
 * docs/phy.md describes it and what it does not do yet.
 */
export { driftSampleClock, turnCarrier } from './channel.js';
export { appendFcs, crc16PlcpBits, crc32, fcsMatches, FCS_BYTES } from './crc.js';
export { BARKER_11, modulateFrame, ppduSamples, shapedLeadSamples, type DsssTxOptions, type SamplesPerChip } from './modem.js';
export { firWasmUnavailable, PolyphaseFir, type FirKernel } from './polyphase.js';
export { DSSS_PASSBAND_HZ, kaiserLowpass, Resampler, type ResamplerOptions } from './resample.js';
export { ChipShaper, shaperToRate, shapingTaps, SHAPING_HALF_SPAN_CHIPS, SHAPING_ROLLOFF } from './shaping.js';
export { lengthMicros, parsePlcpHeader, ppduBits, PSDU_MAX_BYTES, type DsssRate, type PlcpHeader } from './plcp.js';
export { despreadWasmUnavailable, DsssReceiver, zeroDsssRxCounters, type DsssRxCounters, type DsssRxFrame, type DsssRxOptions } from './receiver.js';
export { Descrambler, LONG_PREAMBLE_SEED, Scrambler } from './scrambler.js';
