import { OFPBIC, OFPBMC, OFPBRC, OFPET, OFPFMFC } from '../wire/openflow/constants.js';

/**
 * OpenFlow 1.3 ERROR types and codes (OpenFlow 1.3.5 section 7.4.4) that the
 * flow table reports, as values: a refused FLOW_MOD or stats request is an
 * expected outcome, named by the ERROR the agent sends back. `type` and
 * `code` are the specification's names without their prefixes (OFPET_,
 * OFPFMFC_, OFPBMC_, OFPBIC_, OFPBRC_); `ofErrorNumbers` gives the numbers
 * the codec writes.
 */

export { OFPBIC, OFPBMC, OFPBRC, OFPET, OFPFMFC };

/** An OpenFlow ERROR to send, with a human-readable detail for logs (not part of the message). */
export type OfError =
  | { type: 'BAD_REQUEST'; code: keyof typeof OFPBRC; detail: string }
  | { type: 'BAD_INSTRUCTION'; code: keyof typeof OFPBIC; detail: string }
  | { type: 'BAD_MATCH'; code: keyof typeof OFPBMC; detail: string }
  | { type: 'FLOW_MOD_FAILED'; code: keyof typeof OFPFMFC; detail: string };

export const badRequest = (code: keyof typeof OFPBRC, detail: string): OfError => ({ type: 'BAD_REQUEST', code, detail });
export const badInstruction = (code: keyof typeof OFPBIC, detail: string): OfError => ({ type: 'BAD_INSTRUCTION', code, detail });
export const badMatch = (code: keyof typeof OFPBMC, detail: string): OfError => ({ type: 'BAD_MATCH', code, detail });
export const flowModFailed = (code: keyof typeof OFPFMFC, detail: string): OfError => ({ type: 'FLOW_MOD_FAILED', code, detail });

/** The numbers of ofp_error_msg's type and code fields. */
export function ofErrorNumbers(e: OfError): { type: number; code: number } {
  switch (e.type) {
    case 'BAD_REQUEST':
      return { type: OFPET.BAD_REQUEST, code: OFPBRC[e.code] };
    case 'BAD_INSTRUCTION':
      return { type: OFPET.BAD_INSTRUCTION, code: OFPBIC[e.code] };
    case 'BAD_MATCH':
      return { type: OFPET.BAD_MATCH, code: OFPBMC[e.code] };
    case 'FLOW_MOD_FAILED':
      return { type: OFPET.FLOW_MOD_FAILED, code: OFPFMFC[e.code] };
  }
}
