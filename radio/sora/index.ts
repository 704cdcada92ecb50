export { SoraFrontend, type InPlaceBlock, type SoraFrontendOptions } from './frontend.js';
export { HEADER_BYTES, Off as RingOffsets, RING_MAGIC, RING_VERSION, type RingConstants, type SampleFormat } from './layout.js';
export { type MapOptions, type RingAccess, type WordAccess } from './memory.js';
export {
  buildProducer,
  consumerArgs,
  ProducerProcess,
  producerArgs,
  producerSourceDir,
  RingProcess,
  type BuildResult,
  type ConsumerOptions,
  type ProducerOptions,
} from './producer.js';
export { SampleRing, type RingInfo, type RingPeek, type RingRead, type RingStats, type SampleRingOptions, type TuneState } from './ring.js';
export { TxRing, type BurstOutcome, type TxRingInfo } from './tx-ring.js';
