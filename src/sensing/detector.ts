import type { IqBlock } from '../../radio/frontend.js';
import { RangeArgumentError } from '../core/errors.js';
import { countWindowEnergies, thresholdSum, windowSamplesFor, type EnergyBackend, type EnergyCounts } from './energy.js';

/** The energy detector's settings: its window and CCA threshold (sensing.windowUs and sensing.ccaThresholdDbm). */
export interface DetectorParams {
  windowUs: number;
  ccaThresholdDbm: number;
}

/** What the detector saw in one IQ block. */
export interface Detection {
  windows: number;
  busyWindows: number;
  /** Mean received power over the counted windows; -Infinity when no window was counted. */
  meanPowerDbm: number;
  /** Mean received power over the busy windows; undefined when none was busy. */
  busyMeanPowerDbm: number | undefined;
  /** Samples at the end of the block that did not fill a window (not counted). */
  leftoverSamples: number;
}

/** Mean power in dBm of `sum` full-scale power over `samples` samples. */
function meanDbm(sum: number, samples: number, calibrationDb: number): number {
  return 10 * Math.log10(sum / samples) + calibrationDb;
}

/**
 * The energy detector of a node: the window length and CCA threshold of its
 * sensing configuration, run by a backend (the typed-array loop on the CPU,
 * WebAssembly SIMD, or gpu.js). The window in samples follows each block's sample rate, and the
 * threshold each block's calibration, so a retuned gain or another front-end
 * needs no new detector.
 */
export class EnergyDetector {
  readonly windowUs: number;
  private cca: number;

  constructor(
    init: DetectorParams,
    readonly backend: EnergyBackend,
  ) {
    if (!Number.isFinite(init.windowUs) || init.windowUs <= 0) {
      throw new RangeArgumentError('windowUs', init.windowUs, 'a positive number of microseconds');
    }
    if (!Number.isFinite(init.ccaThresholdDbm)) {
      throw new RangeArgumentError('ccaThresholdDbm', init.ccaThresholdDbm, 'a finite number of dBm');
    }
    this.windowUs = init.windowUs;
    this.cca = init.ccaThresholdDbm;
  }

  /** The CCA threshold a window's mean power is compared with, dBm. */
  get ccaThresholdDbm(): number {
    return this.cca;
  }

  /** A new CCA threshold, from the next block on (a live reconfiguration). */
  setThreshold(dbm: number): void {
    if (!Number.isFinite(dbm)) throw new RangeArgumentError('ccaThresholdDbm', dbm, 'a finite number of dBm');
    this.cca = dbm;
  }

  /** Complex samples per window at `sampleRateHz`. */
  windowSamples(sampleRateHz: number): number {
    if (!Number.isFinite(sampleRateHz) || sampleRateHz <= 0) {
      throw new RangeArgumentError('sampleRateHz', sampleRateHz, 'a positive number of samples per second');
    }
    return windowSamplesFor(this.windowUs, sampleRateHz);
  }

  /** A block buffer for `count` complex samples that the backend reads without a copy, when it has one. */
  allocateBlock(count: number): Float32Array | undefined {
    return this.backend.allocate?.(count);
  }

  detect(block: IqBlock): Detection {
    const ws = this.windowSamples(block.sampleRateHz);
    const c = this.backend.detect(block.data, block.count, ws, thresholdSum(this.ccaThresholdDbm, block.calibrationDb, ws));
    return detection(c, ws, block.calibrationDb);
  }

  /**
   * What `detect` finds, from the window sums of a block rather than its
   * samples (the statistical sensing model): `energies` holds the sum of
   * I^2 + Q^2 of each of `windows` windows of `windowSamples(sampleRateHz)`
   * samples, in full-scale units of a block calibrated at `calibrationDb`.
   */
  detectWindowEnergies(w: { energies: Float64Array; windows: number; leftoverSamples: number; sampleRateHz: number; calibrationDb: number }): Detection {
    const ws = this.windowSamples(w.sampleRateHz);
    const c = countWindowEnergies(w.energies, w.windows, thresholdSum(this.ccaThresholdDbm, w.calibrationDb, ws), w.leftoverSamples);
    return detection(c, ws, w.calibrationDb);
  }
}

/** A detection from the counts of `ws`-sample windows of a block calibrated at `calibrationDb`. */
function detection(c: EnergyCounts, ws: number, calibrationDb: number): Detection {
  return {
    windows: c.windows,
    busyWindows: c.busyWindows,
    meanPowerDbm: c.windows > 0 ? meanDbm(c.sumPower, c.windows * ws, calibrationDb) : -Infinity,
    busyMeanPowerDbm: c.busyWindows > 0 ? meanDbm(c.busySumPower, c.busyWindows * ws, calibrationDb) : undefined,
    leftoverSamples: c.leftover,
  };
}
