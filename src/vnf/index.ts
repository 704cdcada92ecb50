export * from './flow.js';
export * from './manager.js';
export * from './tcp-acc.js';
export * from './types.js';

import { tcpAccType } from './tcp-acc.js';
import type { VnfType } from './types.js';

/** Every VNF type cogmesh ships, for a manager's registry. */
export const VNF_TYPES: readonly VnfType[] = [tcpAccType];
