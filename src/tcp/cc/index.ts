import { Cubic } from './cubic.js';
import { NewReno } from './newreno.js';
import { Reno } from './reno.js';
import { SackRecovery } from './sack.js';
import type { CcName, CcParams, CongestionControl } from './types.js';
import { Vegas } from './vegas.js';

export * from './types.js';
export { Cubic, NewReno, Reno, SackRecovery, Vegas };

/** Whether HyStart++ runs when a connection does not say: with CUBIC only, as Linux runs HyStart with it. */
export function hystartDefault(name: CcName): boolean {
  return name === 'cubic';
}

/**
 * The congestion control of a name. `p.sack` says whether SACK was
 * negotiated (CUBIC recovers by RFC 6675 then, by NewReno otherwise);
 * `p.hystart` undefined takes the variant's default.
 */
export function congestionControl(name: CcName, p: CcParams): CongestionControl {
  if (p.hystart === undefined && hystartDefault(name)) p = { ...p, hystart: true };
  switch (name) {
    case 'reno':
      return new Reno(p);
    case 'newreno':
      return new NewReno(p);
    case 'vegas':
      return new Vegas(p);
    case 'sack':
      return new SackRecovery(p);
    case 'cubic':
      return p.sack === true ? new SackRecovery(p, new Cubic(p)) : new Cubic(p);
  }
}
