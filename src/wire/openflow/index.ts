/** The OpenFlow 1.3 codec: typed messages (`types.ts`), bytes (`codec.ts`), numbers (`constants.ts`). */
export * from './codec.js';
export * from './constants.js';
export * from './errors.js';
export { isMaskable, OXM_FIELD_SPECS, oxmHeader, oxmIdOf, prerequisiteProblem } from './oxm.js';
export { PACKET_QUEUE_FIXED, QUEUE_PROP_EXPERIMENTER_FIXED, QUEUE_PROP_HEADER_BYTES, QUEUE_PROP_RATE_BYTES } from './queue.js';
export * from './types.js';
export * from './replies.js';
