import { parseDeviceAddr } from './device-addr.js';
import type { UhdLib } from './api.js';
import { uhdLib } from './lib.js';

export { deviceId, parseDeviceAddr } from './device-addr.js';
export { openUhdFrontend, UhdFrontend, type RetuneMode, type UhdCounters, type UhdFrontendOptions, type UhdFrontendParts } from './frontend.js';
export { LIBUHD_NAMES, loadUhdLib, uhdLib, type LoadUhdOptions } from './lib.js';
export {
  AsyncEvent,
  RxError,
  StreamMode,
  UhdCallError,
  uhdErrorName,
  type AsyncMessage,
  type RecvResult,
  type RxMetadata,
  type RxStreamArgs,
  type StreamCommand,
  type TimeSpec,
  type TxMetadata,
  type UhdLib,
  type UhdRxStreamer,
  type UhdTuneResult,
  type UhdTxStreamer,
  type UhdUsrp,
} from './api.js';

export interface UhdInfo {
  /** Whether libuhd (and koffi) could be loaded. */
  available: boolean;
  /** UHD's version string, e.g. `4.3.0.0+ds1-5`. */
  version?: string;
  /** UHD's ABI string, e.g. `4.3.0`. */
  abi?: string;
  /** Why it is not available. */
  reason?: string;
}

const reasonOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Which libuhd this process can use; never throws. */
export function uhdInfo(load: () => UhdLib = uhdLib): UhdInfo {
  try {
    const lib = load();
    return { available: true, version: lib.version(), abi: lib.abi() };
  } catch (e) {
    return { available: false, reason: reasonOf(e) };
  }
}

export interface UhdDevices {
  /** Whether libuhd could be loaded (false: `reason` says why). */
  available: boolean;
  /** Why nothing could be looked for: no library, or UHD's discovery failed. */
  reason?: string;
  /** What UHD's discovery found, as key/value records (`type`, `serial`, `product`, `name`, ...). */
  devices: Array<Record<string, string>>;
}

/** USRPs that answer UHD's discovery for `args` ('' for all); never throws. */
export async function uhdDevices(args = '', load: () => UhdLib = uhdLib): Promise<UhdDevices> {
  let lib: UhdLib;
  try {
    lib = load();
  } catch (e) {
    return { available: false, reason: reasonOf(e), devices: [] };
  }
  try {
    const found = await lib.find(args);
    return { available: true, devices: found.map(parseDeviceAddr) };
  } catch (e) {
    return { available: true, reason: reasonOf(e), devices: [] };
  }
}
