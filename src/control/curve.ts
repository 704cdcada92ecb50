import { isCurveKey, z85Decode, z85Encode } from '../wire/z85.js';
import { ZapHandler } from '../wire/zap.js';

export { isCurveKey, z85Decode, z85Encode, ZapHandler };

/** The ZAP domain of the control API's sockets. */
export const ZAP_DOMAIN = 'cogmesh-control';
