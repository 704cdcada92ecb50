import { CogmeshError } from '../../core/errors.js';

/**
 * Why bytes are not an OpenFlow message the codec accepts. Stable codes:
 *
 * - OF_TRUNCATED    fewer bytes than the header (8) or than its length field says
 * - OF_BAD_LENGTH   a length that contradicts another: the header's against
 *                   the bytes or the type's fixed size, a match's, an
 *                   action's or instruction's (also: not a multiple of 8), a
 *                   property's, a list entry's
 * - OF_BAD_VERSION  a message other than HELLO whose version is not 0x04
 * - OF_BAD_FIELD    a value the layout does not allow (an unknown flow-mod
 *                   command or reason, an OXM value or mask out of range, a
 *                   string without its NUL)
 * - OF_BAD_PADDING  a padding byte that is not zero (accepted messages
 *                   re-encode to the same bytes, so padding must be zero)
 * - OF_UNSUPPORTED  a type the codec cannot represent where the message
 *                   cannot be kept without it: a match type other than OXM,
 *                   an OXM class or field outside `OfMatch`, an unknown
 *                   table-feature property type
 * - OF_DUP_FIELD    an OXM field twice in one match
 * - OF_BAD_PREREQ   an OXM field whose prerequisite is missing from the match
 *
 * `answer` is the OFPT_ERROR the agent sends back (OpenFlow 1.3.5 section
 * 7.4.4): e.g. OFPET_BAD_REQUEST / OFPBRC_BAD_LEN for a bad header length,
 * OFPET_BAD_MATCH / OFPBMC_BAD_FIELD for an OXM field outside `OfMatch`,
 * OFPET_BAD_ACTION / OFPBAC_BAD_LEN for an action whose length is wrong.
 * `xid` and `msgType` are set when the header was readable.
 */
export type OfErrorCode =
  'OF_TRUNCATED' | 'OF_BAD_LENGTH' | 'OF_BAD_VERSION' | 'OF_BAD_FIELD' | 'OF_BAD_PADDING' | 'OF_UNSUPPORTED' | 'OF_DUP_FIELD' | 'OF_BAD_PREREQ';

/** The ERROR message's type and code (OFPET_* and the matching OFP*C_* code). */
export interface OfErrorAnswer {
  type: number;
  code: number;
}

export class OfParseError extends CogmeshError {
  declare readonly code: OfErrorCode;

  constructor(
    code: OfErrorCode,
    /** The message or part being read: 'FLOW_MOD', 'match', 'action', 'framing', ... */
    readonly what: string,
    message: string,
    readonly answer: OfErrorAnswer,
    readonly xid: number | undefined = undefined,
    readonly msgType: number | undefined = undefined,
  ) {
    super(code, message);
  }

  /** The same error with the header's xid and type (set by the top-level parse). */
  withHeader(xid: number, msgType: number): OfParseError {
    if (this.xid === xid && this.msgType === msgType) return this;
    return new OfParseError(this.code, this.what, this.message, this.answer, xid, msgType);
  }
}
