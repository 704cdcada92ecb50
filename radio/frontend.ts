import type { Micros } from '../src/core/time.js';

/** The front-end drivers cogmesh knows. */
export type FrontendKind = 'sim' | 'uhd' | 'sora' | 'usb' | 'file';

/** What a front-end can do; read once at start. */
export interface FrontendCapabilities {
  /** Complex samples per second delivered by `readIq`. */
  readonly sampleRateHz: number;
  /** Lowest and highest centre frequency it can tune to. */
  readonly tuneRangeHz: readonly [number, number];
  /** Gain range of its receive chain. */
  readonly gainRangeDb: readonly [number, number];
  /** Time from a tune request until samples are valid again (the radio is deaf meanwhile). */
  readonly retuneUs: Micros;
  /** Whether `send` is available (a PHY to transmit frames is configured). */
  readonly canTransmit: boolean;
  /** Whether `transmitIq` is available (the device has a transmit chain this driver drives). */
  readonly canTransmitIq: boolean;
}

/**
 * A block of complex baseband samples, interleaved I and Q as 32-bit floats
 * (`fc32`), scaled so that 10*log10(mean(I^2 + Q^2)) + calibrationDb is the
 * received power in dBm at the antenna port.
 */
export interface IqBlock {
  readonly data: Float32Array;
  /** Complex samples in `data` (data.length >= 2 * count). */
  readonly count: number;
  /** Time of the first sample. */
  readonly startUs: Micros;
  readonly sampleRateHz: number;
  readonly centerHz: number;
  /** dBm of a full-scale signal (mean |x|^2 = 1) at the gain in force for this block. */
  readonly calibrationDb: number;
  /** Samples the front-end lost before this block (overruns), 0 when none. */
  readonly droppedSamples: number;
}

/**
 * A burst of complex baseband samples to transmit at the current centre
 * frequency and the front-end's sample rate, interleaved I and Q as 32-bit
 * floats. Full scale is mean(I^2 + Q^2) = 1; the front-end's transmit gain
 * says what power that is at the antenna.
 */
export interface TxBurst {
  readonly data: Float32Array;
  /** Complex samples in `data` (data.length >= 2 * count). */
  readonly count: number;
  /**
   * When the first sample should leave the antenna, on the front-end's clock
   * (the clock of `IqBlock.startUs`); undefined sends as soon as the device can.
   */
  readonly atUs?: Micros;
}

/** What became of a transmitted burst. */
export interface TxReport {
  /** When the first sample left (or, for a device that does not say, was handed over). */
  readonly startUs: Micros;
  /** When the last sample left. */
  readonly endUs: Micros;
  /** The burst was asked for a time already past and went out late (or was dropped, see `sent`). */
  readonly late: boolean;
  /** Complex samples the device took; less than `count` when it dropped the rest (underflow, late). */
  readonly sent: number;
}

/** A frame received by a front-end's PHY. */
export interface ReceivedFrame {
  readonly bytes: Uint8Array;
  readonly centerHz: number;
  readonly atUs: Micros;
  readonly rssiDbm: number;
}

/** The outcome of a retune, with the time it really took. */
export interface TuneResult {
  readonly centerHz: number;
  readonly retuneUs: Micros;
}

/**
 * One radio front-end. Drivers (sim, uhd, sora, usb, file) implement it; the
 * node's real-time driver talks to it, and cores never do. Calls are
 * asynchronous because real devices are; the sim front-end also offers a
 * synchronous path for virtual time.
 */
export interface Frontend {
  readonly kind: FrontendKind;
  /** A name that tells this device apart from others of its kind (serial, ring path, ...). */
  readonly id: string;
  readonly capabilities: FrontendCapabilities;
  /** Current centre frequency, undefined before the first tune. */
  readonly centerHz: number | undefined;
  readonly gainDb: number;

  tune(centerHz: number): Promise<TuneResult>;
  setGain(gainDb: number): Promise<void>;
  /** dBm of a full-scale signal at the current gain. */
  calibrationDb(): number;
  /**
   * The next `count` complex samples at the current centre frequency. With
   * `into` (at least 2 * count floats) the samples are written there and the
   * block's `data` is that buffer, as UHD's recv fills the caller's buffers:
   * the energy detector hands out buffers in its own memory so that no block
   * is copied. Such a block is valid until the next read into the same buffer.
   */
  readIq(count: number, into?: Float32Array): Promise<IqBlock>;
  /** Transmits one frame at the current centre frequency. */
  send(bytes: Uint8Array): Promise<void>;
  /**
   * Transmits a burst of samples at the current centre frequency, whole, at
   * `burst.atUs` or as soon as possible. Bursts are sent in the order given.
   * Refused with RADIO_CANNOT_TRANSMIT where `capabilities.canTransmitIq` is false.
   */
  transmitIq(burst: TxBurst): Promise<TxReport>;
  /** Registers a listener for frames received at the current centre frequency; returns its remover. */
  onFrame(listener: (frame: ReceivedFrame) => void): () => void;
  close(): Promise<void>;
}
