import type { Vnf, VnfType } from '../src/vnf/types.js';

/** The cheapest VNF there is: counts the packets it is offered and forwards them all (for bench/vnf.ts). */
export const counter: VnfType = {
  name: 'counter',
  params: () => ({}),
  create: (): Vnf => {
    let n = 0;
    return {
      handle: () => {
        n++;
        return false;
      },
      tick: () => undefined,
      nextDeadline: () => undefined,
      poll: () => [],
      counters: () => ({ offered: n }),
      stop: () => undefined,
    };
  },
};
