import { FrontendError } from '../../src/core/errors.js';

/**
 * libuhd's C API (UHD 4.x) as the USRP front-end sees it: typed values,
 * UHD's error codes and the calls it makes. lib.ts binds these to libuhd
 * with koffi; tests hand the front-end fakes of the same interfaces.
 */

/** `uhd_error` (uhd/error.h). */
const UHD_ERROR_NAMES: ReadonlyMap<number, string> = new Map([
  [0, 'UHD_ERROR_NONE'],
  [1, 'UHD_ERROR_INVALID_DEVICE'],
  [10, 'UHD_ERROR_INDEX'],
  [11, 'UHD_ERROR_KEY'],
  [20, 'UHD_ERROR_NOT_IMPLEMENTED'],
  [21, 'UHD_ERROR_USB'],
  [30, 'UHD_ERROR_IO'],
  [31, 'UHD_ERROR_OS'],
  [40, 'UHD_ERROR_ASSERTION'],
  [41, 'UHD_ERROR_LOOKUP'],
  [42, 'UHD_ERROR_TYPE'],
  [43, 'UHD_ERROR_VALUE'],
  [44, 'UHD_ERROR_RUNTIME'],
  [45, 'UHD_ERROR_ENVIRONMENT'],
  [46, 'UHD_ERROR_SYSTEM'],
  [47, 'UHD_ERROR_EXCEPT'],
  [60, 'UHD_ERROR_BOOSTEXCEPT'],
  [70, 'UHD_ERROR_STDEXCEPT'],
  [100, 'UHD_ERROR_UNKNOWN'],
]);

export const uhdErrorName = (code: number): string => UHD_ERROR_NAMES.get(code) ?? `uhd_error ${code}`;

/** `uhd_rx_metadata_error_code_t` (uhd/types/metadata.h). */
export const RxError = {
  NONE: 0x0,
  TIMEOUT: 0x1,
  LATE_COMMAND: 0x2,
  BROKEN_CHAIN: 0x4,
  /** An overflow, or with `outOfSequence` a sequence error (packets lost between device and host). */
  OVERFLOW: 0x8,
  ALIGNMENT: 0xc,
  BAD_PACKET: 0xf,
} as const;

/** `uhd_async_metadata_event_code_t` (uhd/types/metadata.h): what a transmit streamer's async message reports. */
export const AsyncEvent = {
  /** The burst's end went out. */
  BURST_ACK: 0x1,
  /** The device ran out of samples between packets (it sent zeros meanwhile). */
  UNDERFLOW: 0x2,
  /** A packet lost between host and device. */
  SEQ_ERROR: 0x4,
  /** A packet's time was already past when it reached the device: dropped, with the rest of its burst. */
  TIME_ERROR: 0x8,
  UNDERFLOW_IN_PACKET: 0x10,
  SEQ_ERROR_IN_BURST: 0x20,
  USER_PAYLOAD: 0x40,
} as const;

/** `uhd_stream_mode_t` (uhd/usrp/usrp.h). */
export const StreamMode = {
  START_CONTINUOUS: 97,
  STOP_CONTINUOUS: 111,
  NUM_SAMPS_AND_DONE: 100,
  NUM_SAMPS_AND_MORE: 109,
} as const;
export type StreamModeValue = (typeof StreamMode)[keyof typeof StreamMode];

/** A UHD time spec: whole seconds and a fraction of a second. */
export interface TimeSpec {
  readonly fullSecs: number;
  readonly fracSecs: number;
}

/** What `uhd_rx_streamer_recv` said about the samples it returned (or why it returned none). */
export interface RxMetadata {
  /** One of `RxError`. */
  readonly errorCode: number;
  /** With `RxError.OVERFLOW`: a sequence error (a packet lost on the way), not an overrun. */
  readonly outOfSequence: boolean;
  /** Time of the first sample returned, when the device stamped it. */
  readonly timeSpec: TimeSpec | undefined;
  /** UHD's description of `errorCode` (`uhd_rx_metadata_strerror`); '' when there is no error. */
  readonly text: string;
}

export interface RecvResult {
  /** Complex samples written. */
  readonly samples: number;
  readonly md: RxMetadata;
}

export interface StreamCommand {
  readonly mode: StreamModeValue;
  /** For the NUM_SAMPS modes. */
  readonly numSamps?: number;
  /** Device time to act at; now when undefined. */
  readonly at?: TimeSpec;
}

/** `uhd_tune_result_t`, in Hz. */
export interface UhdTuneResult {
  readonly clippedRfHz: number;
  readonly targetRfHz: number;
  readonly actualRfHz: number;
  readonly targetDspHz: number;
  readonly actualDspHz: number;
}

/** One receive streamer (`uhd_rx_streamer_handle` with its metadata handle). */
export interface UhdRxStreamer {
  /** Largest number of samples one packet carries (`uhd_rx_streamer_max_num_samps`). */
  readonly maxNumSamps: number;
  issueStreamCmd(cmd: StreamCommand): void;
  /**
   * Receives up to `count` fc32 samples into `into`, from complex sample
   * `offset` on, waiting at most `timeoutS` for each packet. It runs on a
   * worker thread so that the event loop is not blocked meanwhile; the
   * samples are written straight into `into`, not copied.
   */
  recv(into: Float32Array, offset: number, count: number, timeoutS: number): Promise<RecvResult>;
  free(): void;
}

/** What `uhd_tx_metadata_make` is given for one `uhd_tx_streamer_send`. */
export interface TxMetadata {
  readonly startOfBurst: boolean;
  readonly endOfBurst: boolean;
  /** Device time the first sample of this send leaves at; as soon as possible when undefined. */
  readonly timeSpec?: TimeSpec;
}

/** One message of `uhd_tx_streamer_recv_async_msg` (`uhd_async_metadata_handle`). */
export interface AsyncMessage {
  /** One of `AsyncEvent`. */
  readonly eventCode: number;
  readonly channel: number;
  /** When it happened on the device, when the device stamped it. */
  readonly timeSpec: TimeSpec | undefined;
}

/** One transmit streamer (`uhd_tx_streamer_handle` with its async metadata handle). */
export interface UhdTxStreamer {
  /** Largest number of samples one packet carries (`uhd_tx_streamer_max_num_samps`). */
  readonly maxNumSamps: number;
  /**
   * Sends `count` fc32 samples of `data` from complex sample `offset` on,
   * with `md` (a fresh `uhd_tx_metadata_handle` each call), waiting at most
   * `timeoutS` for buffer space; resolves with the samples UHD took (fewer
   * on a timeout). Runs on a worker thread, as `recv` does.
   */
  send(data: Float32Array, offset: number, count: number, md: TxMetadata, timeoutS: number): Promise<number>;
  /** The next async message, waiting at most `timeoutS` (0: only one already there); undefined when none came. On a worker thread. */
  recvAsyncMsg(timeoutS: number): Promise<AsyncMessage | undefined>;
  free(): void;
}

export interface RxStreamArgs {
  /** Format on the wire: sc16 (default) or sc8. The CPU format is always fc32. */
  readonly otwFormat: string;
  /** Streamer arguments (`uhd_stream_args_t.args`), e.g. "spp=200". */
  readonly args: string;
  readonly channel: number;
}

/** One open device (`uhd_usrp_handle`); channel and motherboard 0 unless given. */
export interface UhdUsrp {
  setRxRate(rateHz: number, chan: number): void;
  getRxRate(chan: number): number;
  setRxGain(gainDb: number, chan: number): void;
  getRxGain(chan: number): number;
  /** Overall receive gain range (all gain stages). */
  rxGainRange(chan: number): readonly [number, number];
  rxFreqRange(chan: number): readonly [number, number];
  setRxAntenna(antenna: string, chan: number): void;
  /** Tunes RF and DSP automatically to `freqHz`; runs on a worker thread (it can take milliseconds). */
  setRxFreq(freqHz: number, chan: number): Promise<UhdTuneResult>;
  rxSensorNames(chan: number): string[];
  /** A boolean receive sensor such as `lo_locked`; on a worker thread (one bus transaction). */
  rxSensorBool(name: string, chan: number): Promise<boolean>;
  timeNow(): TimeSpec;
  setTimeNow(t: TimeSpec): void;
  /** Later calls take effect at `t` on devices with timed commands; refused by this libuhd when it lacks them. */
  setCommandTime(t: TimeSpec): void;
  clearCommandTime(): void;
  rxStream(args: RxStreamArgs): UhdRxStreamer;
  /** Transmit channels of the device (`uhd_usrp_get_tx_num_channels`); 0 on a receive-only device. */
  txNumChannels(): number;
  setTxRate(rateHz: number, chan: number): void;
  getTxRate(chan: number): number;
  setTxGain(gainDb: number, chan: number): void;
  getTxGain(chan: number): number;
  /** Overall transmit gain range (all gain stages). */
  txGainRange(chan: number): readonly [number, number];
  txFreqRange(chan: number): readonly [number, number];
  setTxAntenna(antenna: string, chan: number): void;
  /** As `setRxFreq`, for the transmit chain; timed by the same command time. */
  setTxFreq(freqHz: number, chan: number): Promise<UhdTuneResult>;
  /** Same arguments as `rxStream`: fc32 on the host, `otwFormat` on the wire, one channel. */
  txStream(args: RxStreamArgs): UhdTxStreamer;
  free(): void;
}

/** The libuhd calls the front-end needs, checked. */
export interface UhdLib {
  /** The file or name the library was loaded from. */
  readonly path: string;
  /** Symbols bound, optional ones included when present. */
  readonly symbols: ReadonlySet<string>;
  version(): string;
  abi(): string;
  /** UHD's device address strings (`type=b200,serial=...`); on a worker thread (discovery waits for replies). */
  find(args: string): Promise<string[]>;
  /**
   * Makes UHD's transmit metadata for `md` and reads it back: what a send
   * would carry. A check of the binding (time_t's width above all) before
   * the first burst; refused with UHD_ERROR_NOT_IMPLEMENTED without the
   * transmit calls.
   */
  checkTxMetadata(md: TxMetadata): TxMetadata;
  /** Opens a device; on a worker thread (it can load firmware and FPGA images for seconds). */
  makeUsrp(args: string): Promise<UhdUsrp>;
}

/** A libuhd call that returned an error; `uhdText` is UHD's own words. */
export class UhdCallError extends FrontendError {
  constructor(
    readonly call: string,
    readonly uhdCode: number,
    readonly uhdText: string,
  ) {
    super('RADIO_UHD_ERROR', `${call} failed (${uhdErrorName(uhdCode)}): ${uhdText || '(UHD gave no text)'}`);
  }
}
