/**
 * The 802.11b DSSS PHY at 1 and 2 Mb/s (IEEE 802.11-2016 clause 16), long
 * preamble: a transmitter to complex baseband, a channel model (carrier offset,
 * sample clock drift) and a streaming receiver with chip timing recovery.
 * docs/phy.md describes it and what it does not do yet.
 */
export { driftSampleClock, turnCarrier } from './channel.js';
export { appendFcs, crc16PlcpBits, crc32, fcsMatches, FCS_BYTES } from './crc.js';
export { BARKER_11, modulateFrame, ppduSamples, type DsssTxOptions, type SamplesPerChip } from './modem.js';
export { lengthMicros, parsePlcpHeader, ppduBits, PSDU_MAX_BYTES, type DsssRate, type PlcpHeader } from './plcp.js';
export { DsssReceiver, zeroDsssRxCounters, type DsssRxCounters, type DsssRxFrame, type DsssRxOptions } from './receiver.js';
export { Descrambler, LONG_PREAMBLE_SEED, Scrambler } from './scrambler.js';
