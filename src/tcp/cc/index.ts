import { NewReno } from './newreno.js';
import { Reno } from './reno.js';
import { SackRecovery } from './sack.js';
import type { CcName, CcParams, CongestionControl } from './types.js';
import { Vegas } from './vegas.js';

export * from './types.js';
export { NewReno, Reno, SackRecovery, Vegas };

/** The congestion control of a name. */
export function congestionControl(name: CcName, p: CcParams): CongestionControl {
  switch (name) {
    case 'reno':
      return new Reno(p);
    case 'newreno':
      return new NewReno(p);
    case 'vegas':
      return new Vegas(p);
    case 'sack':
      return new SackRecovery(p);
  }
}
