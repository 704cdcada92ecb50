export { AirMedium, DEFAULT_MEDIUM_PARAMS, type ChannelUsage, type MediumCounters, type MediumParts } from './medium.js';
export { CaptureHost, captureRadio, type CaptureParts } from './capture.js';
export { airtimeUs, checkPhy, phy80211b, phy80211g, RATES_80211B_BPS, RATES_80211G_BPS } from './phy.js';
export { MIN_DISTANCE_M, SPEED_OF_LIGHT_M_PER_S, TWO_RAY_GROUND, twoRayGroundW } from './propagation.js';
export { BROADCAST } from './station.js';
export type {
  MacFrame,
  MediumParams,
  PhyParams,
  PnSource,
  Position,
  SendOutcome,
  Station,
  StationCounters,
  StationHandlers,
  StationHost,
  StationSpec,
} from './types.js';
