/**
 * Sequence numbers. On the wire they are 32-bit and wrap (RFC 9293 3.4); a
 * connection keeps every position as an absolute offset from its initial
 * sequence number instead (a JS number is exact to 2^53, enough for 8 PB), so
 * that comparisons are plain `<` and no wrap bug can hide in the state machine.
 * These two functions are the only crossing points.
 */

const TWO_32 = 4294967296;

/** The wire sequence number of absolute offset `abs` from the initial sequence number `isn`. */
export function toWire(isn: number, abs: number): number {
  return (isn + (abs % TWO_32)) >>> 0;
}

/**
 * The absolute offset of wire sequence number `wire`, taken as the one
 * nearest to `near` (an absolute offset known to be within 2^31 of it: the
 * oldest unacknowledged byte for an ACK, the next expected byte for data).
 */
export function fromWire(isn: number, wire: number, near: number): number {
  const rel = (wire - isn) >>> 0;
  const diff = (rel - (near % TWO_32)) | 0;
  return near + diff;
}

/** `a < b` in 32-bit wrapping order (RFC 9293 3.4), for code that only has wire numbers. */
export function seqLt(a: number, b: number): boolean {
  return ((a - b) | 0) < 0;
}
