export { checkPnPattern, PnProcess, type BusyInterval, type PnProcessOptions } from './pn.js';
export {
  dbmToMw,
  EmulatedBand,
  mwToDbm,
  THERMAL_NOISE_DBM_PER_HZ,
  type ActivePn,
  type Airtime,
  type BandReceiver,
  type EmulatedBandOptions,
  type ReceiverSpec,
} from './band.js';
export { SimFrontend, type SimFrontendOptions } from './frontend.js';
