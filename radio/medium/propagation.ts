import type { Position } from './types.js';

/**
 * ns-2's TwoRayGround with its default radio (the 914 MHz Lucent WaveLAN
 * values, used by the seeds unchanged): transmit power, unit antenna gains,
 * antennas 1.5 m above the ground, no system loss. The wavelength is the
 * channel's: Friis below the crossover distance, the two-ray ground model
 * (independent of frequency) beyond it.
 */
export const TWO_RAY_GROUND = {
  txPowerW: 0.28183815,
  txGain: 1,
  rxGain: 1,
  antennaHeightM: 1.5,
  systemLoss: 1,
} as const;

export const SPEED_OF_LIGHT_M_PER_S = 299_792_458;

/**
 * Distances below this are taken as this: Friis grows without bound as the
 * distance goes to zero, and two routers placed at one spot should still
 * compare powers as finite numbers.
 */
export const MIN_DISTANCE_M = 1;

/** The constants of one channel's path loss: P(d) = friis / d^2 below `crossoverM`, twoRay / d^4 beyond. */
export interface PathLoss {
  readonly crossoverM: number;
  readonly friis: number;
  readonly twoRay: number;
}

export function pathLoss(centerHz: number): PathLoss {
  const { txPowerW, txGain, rxGain, antennaHeightM: h, systemLoss } = TWO_RAY_GROUND;
  const lambda = SPEED_OF_LIGHT_M_PER_S / centerHz;
  return {
    crossoverM: (4 * Math.PI * h * h) / lambda,
    friis: (txPowerW * txGain * rxGain * lambda * lambda) / ((4 * Math.PI) ** 2 * systemLoss),
    twoRay: (txPowerW * txGain * rxGain * h * h * h * h) / systemLoss,
  };
}

/** Received power in W at `distanceM` under path loss `pl`. */
export function powerAt(pl: PathLoss, distanceM: number): number {
  const d = distanceM < MIN_DISTANCE_M ? MIN_DISTANCE_M : distanceM;
  if (d < pl.crossoverM) return pl.friis / (d * d);
  const d2 = d * d;
  return pl.twoRay / (d2 * d2);
}

export function distanceM(a: Position, b: Position): number {
  return Math.hypot(a.xM - b.xM, a.yM - b.yM);
}

/** TwoRayGround received power in W between two positions on a channel centred on `centerHz`. */
export function twoRayGroundW(a: Position, b: Position, centerHz: number): number {
  return powerAt(pathLoss(centerHz), distanceM(a, b));
}
