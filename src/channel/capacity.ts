/**
 * Remaining capacity, equation (2) of the Urban-X paper: the share of a
 * channel's capacity C that the primary nodes leave to the mesh.
 * RC(s,i) = (1 - w(s,i)) * C, in the unit of C (bits per second here).
 */
export function remainingCapacity(w: number, capacityBps: number): number {
  const clamped = w < 0 ? 0 : w > 1 ? 1 : w;
  return (1 - clamped) * capacityBps;
}
