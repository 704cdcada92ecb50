/**
 * The hardware boundary of the USRP front-end: libuhd's C API (UHD 4.x,
 * `uhd/usrp/usrp.h`, `uhd/types/*.h`, `uhd/error.h`, `uhd/version.h`) bound
 * with koffi. Every koffi call of the UHD front-end is in this file; the
 * front-end itself talks to the `UhdLib` interface, so tests hand it a fake.
 *
 * Every `uhd_error` is checked. A failure becomes a `UhdCallError` (code
 * `RADIO_UHD_ERROR`) that carries UHD's own text, read from the handle the
 * call saved it on (`uhd_usrp_last_error`, `uhd_rx_streamer_last_error`, ...)
 * or from `uhd_get_last_error`.
 *
 * koffi is an optional dependency and libuhd may be missing: both are loaded
 * on first use, never at import, and their absence is `RADIO_NO_LIBRARY`.
 */
import { createRequire } from 'node:module';
import type koffiModule from 'koffi';
import { FrontendError } from '../../src/core/errors.js';
import {
  RxError,
  type AsyncMessage,
  type TxMetadata,
  type UhdTxStreamer,
  type TimeSpec,
  type RxMetadata,
  type RecvResult,
  type StreamCommand,
  type UhdTuneResult,
  type UhdRxStreamer,
  type RxStreamArgs,
  type UhdUsrp,
  type UhdLib,
  UhdCallError,
} from './api.js';

type Koffi = typeof koffiModule;
type KoffiLibrary = ReturnType<Koffi['load']>;
type KoffiFunction = ReturnType<KoffiLibrary['func']>;
type KoffiType = ReturnType<Koffi['pointer']>;

/** The library names tried in order, unless `COGMESH_LIBUHD` names a path. */
export const LIBUHD_NAMES: readonly string[] = ['libuhd.so.4.3.0', 'libuhd.so.4', 'libuhd.so'];

/** `uhd_tune_request_policy_t`. */
const TUNE_POLICY_AUTO = 65;

export interface LoadUhdOptions {
  /** Environment to read `COGMESH_LIBUHD` from (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Names tried when `COGMESH_LIBUHD` is unset (default LIBUHD_NAMES). */
  readonly names?: readonly string[];
}

const INSTALL_HINT = 'install UHD 4.3 (Debian/Ubuntu: apt install libuhd4.3.0) or set COGMESH_LIBUHD to the path of libuhd.so';

let koffiCache: Koffi | undefined;

function requireKoffi(): Koffi {
  if (koffiCache !== undefined) return koffiCache;
  try {
    koffiCache = createRequire(import.meta.url)('koffi') as Koffi;
    return koffiCache;
  } catch (e) {
    throw new FrontendError(
      'RADIO_NO_LIBRARY',
      `cannot use libuhd: koffi (an optional dependency of cogmesh) is not installed (${errorText(e)}); run npm install koffi`,
      { cause: e },
    );
  }
}

/**
 * Loads libuhd and binds its C API, every call (no caching; `uhdLib()`
 * caches). `COGMESH_LIBUHD` overrides the names tried. Throws
 * `RADIO_NO_LIBRARY` naming what was tried and how to install UHD.
 */
export function loadUhdLib(opts: LoadUhdOptions = {}): UhdLib {
  const env = opts.env ?? process.env;
  const override = env['COGMESH_LIBUHD'];
  const names = override !== undefined && override !== '' ? [override] : (opts.names ?? LIBUHD_NAMES);
  const koffi = requireKoffi();
  const failures: string[] = [];
  for (const name of names) {
    let lib: KoffiLibrary;
    try {
      lib = koffi.load(name);
    } catch (e) {
      failures.push(`${name} (${errorText(e)})`);
      continue;
    }
    try {
      return new KoffiUhdLib(koffi, lib, name);
    } catch (e) {
      lib.unload();
      if (e instanceof FrontendError) throw e;
      throw new FrontendError('RADIO_NO_LIBRARY', `${name} loaded but could not be bound: ${errorText(e)}`, { cause: e });
    }
  }
  const what =
    override !== undefined && override !== ''
      ? `libuhd not loaded from COGMESH_LIBUHD=${failures.join(', ')}`
      : `libuhd not found: tried ${failures.join(', ')}`;
  throw new FrontendError('RADIO_NO_LIBRARY', `${what}; ${INSTALL_HINT}`);
}

let libCache: UhdLib | undefined;

/** libuhd from process.env's `COGMESH_LIBUHD` or the usual names, loaded once (a failure is retried next time). */
export function uhdLib(): UhdLib {
  libCache ??= loadUhdLib();
  return libCache;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A C string from a buffer UHD filled with strncpy (not terminated when it filled the buffer). */
function cString(buf: Buffer): string {
  const end = buf.indexOf(0);
  return buf.toString('utf8', 0, end < 0 ? buf.length : end);
}

const STRING_BUFFER_BYTES = 2048;

/** Anonymous koffi types, so that nothing is added to koffi's global type names. */
interface UhdTypes {
  readonly usrp: KoffiType;
  readonly rxStreamer: KoffiType;
  readonly txStreamer: KoffiType;
  readonly rxMetadata: KoffiType;
  readonly txMetadata: KoffiType;
  readonly asyncMetadata: KoffiType;
  readonly stringVector: KoffiType;
  readonly metaRange: KoffiType;
  readonly sensorValue: KoffiType;
  readonly tuneRequest: KoffiType;
  readonly tuneResult: KoffiType;
  readonly streamArgs: KoffiType;
  readonly streamCmd: KoffiType;
}

let typesCache: UhdTypes | undefined;

function uhdTypes(k: Koffi): UhdTypes {
  typesCache ??= {
    usrp: k.pointer(k.opaque()),
    rxStreamer: k.pointer(k.opaque()),
    txStreamer: k.pointer(k.opaque()),
    rxMetadata: k.pointer(k.opaque()),
    txMetadata: k.pointer(k.opaque()),
    asyncMetadata: k.pointer(k.opaque()),
    stringVector: k.pointer(k.opaque()),
    metaRange: k.pointer(k.opaque()),
    sensorValue: k.pointer(k.opaque()),
    tuneRequest: k.struct({
      target_freq: 'double',
      rf_freq_policy: 'int',
      rf_freq: 'double',
      dsp_freq_policy: 'int',
      dsp_freq: 'double',
      args: 'const char *',
    }),
    tuneResult: k.struct({
      clipped_rf_freq: 'double',
      target_rf_freq: 'double',
      actual_rf_freq: 'double',
      target_dsp_freq: 'double',
      actual_dsp_freq: 'double',
    }),
    streamArgs: k.struct({
      cpu_format: 'const char *',
      otw_format: 'const char *',
      args: 'const char *',
      channel_list: 'size_t *',
      n_channels: 'int',
    }),
    streamCmd: k.struct({
      stream_mode: 'int',
      num_samps: 'size_t',
      stream_now: 'bool',
      time_spec_full_secs: 'int64_t',
      time_spec_frac_secs: 'double',
    }),
  };
  return typesCache;
}

/** A koffi type: a name, a type object or a direction marker. */
type ArgSpec = Parameters<Koffi['out']>[0];

/** The C signatures, `uhd_error name(args)` for all of them; `optional` ones may be absent from a libuhd. */
function signatures(k: Koffi, t: UhdTypes): Array<{ name: string; args: ArgSpec[]; optional?: boolean }> {
  const ptr = (type: ArgSpec): ArgSpec => k.pointer(type);
  const out = (type: ArgSpec): ArgSpec => k.out(k.pointer(type));
  const inout = (type: ArgSpec): ArgSpec => k.inout(k.pointer(type));
  const str = 'const char *';
  const buf = 'char *';
  const size = 'size_t';
  return [
    // uhd/version.h, uhd/error.h
    { name: 'uhd_get_version_string', args: [buf, size] },
    { name: 'uhd_get_abi_string', args: [buf, size] },
    { name: 'uhd_get_last_error', args: [buf, size] },
    // uhd/types/string_vector.h
    { name: 'uhd_string_vector_make', args: [out(t.stringVector)] },
    { name: 'uhd_string_vector_free', args: [inout(t.stringVector)] },
    { name: 'uhd_string_vector_size', args: [t.stringVector, out(size)] },
    { name: 'uhd_string_vector_at', args: [t.stringVector, size, buf, size] },
    { name: 'uhd_string_vector_last_error', args: [t.stringVector, buf, size] },
    // uhd/types/ranges.h
    { name: 'uhd_meta_range_make', args: [out(t.metaRange)] },
    { name: 'uhd_meta_range_free', args: [inout(t.metaRange)] },
    { name: 'uhd_meta_range_start', args: [t.metaRange, out('double')] },
    { name: 'uhd_meta_range_stop', args: [t.metaRange, out('double')] },
    { name: 'uhd_meta_range_last_error', args: [t.metaRange, buf, size] },
    // uhd/types/sensors.h
    { name: 'uhd_sensor_value_make', args: [out(t.sensorValue)] },
    { name: 'uhd_sensor_value_free', args: [inout(t.sensorValue)] },
    { name: 'uhd_sensor_value_to_bool', args: [t.sensorValue, out('bool')] },
    { name: 'uhd_sensor_value_last_error', args: [t.sensorValue, buf, size] },
    // uhd/types/metadata.h
    { name: 'uhd_rx_metadata_make', args: [out(t.rxMetadata)] },
    { name: 'uhd_rx_metadata_free', args: [inout(t.rxMetadata)] },
    { name: 'uhd_rx_metadata_error_code', args: [t.rxMetadata, out('int')] },
    { name: 'uhd_rx_metadata_out_of_sequence', args: [t.rxMetadata, out('bool')] },
    { name: 'uhd_rx_metadata_has_time_spec', args: [t.rxMetadata, out('bool')] },
    { name: 'uhd_rx_metadata_time_spec', args: [t.rxMetadata, out('int64_t'), out('double')] },
    { name: 'uhd_rx_metadata_strerror', args: [t.rxMetadata, buf, size] },
    { name: 'uhd_rx_metadata_last_error', args: [t.rxMetadata, buf, size] },
    // uhd/usrp/usrp.h: device
    { name: 'uhd_usrp_find', args: [str, ptr(t.stringVector)] },
    { name: 'uhd_usrp_make', args: [out(t.usrp), str] },
    { name: 'uhd_usrp_free', args: [inout(t.usrp)] },
    { name: 'uhd_usrp_last_error', args: [t.usrp, buf, size] },
    // receive chain
    { name: 'uhd_usrp_set_rx_rate', args: [t.usrp, 'double', size] },
    { name: 'uhd_usrp_get_rx_rate', args: [t.usrp, size, out('double')] },
    { name: 'uhd_usrp_set_rx_freq', args: [t.usrp, ptr(t.tuneRequest), size, out(t.tuneResult)] },
    { name: 'uhd_usrp_get_rx_freq_range', args: [t.usrp, size, t.metaRange] },
    { name: 'uhd_usrp_set_rx_gain', args: [t.usrp, 'double', size, str] },
    { name: 'uhd_usrp_get_rx_gain', args: [t.usrp, size, str, out('double')] },
    { name: 'uhd_usrp_get_rx_gain_range', args: [t.usrp, str, size, t.metaRange] },
    { name: 'uhd_usrp_set_rx_antenna', args: [t.usrp, str, size] },
    { name: 'uhd_usrp_get_rx_sensor_names', args: [t.usrp, size, ptr(t.stringVector)] },
    { name: 'uhd_usrp_get_rx_sensor', args: [t.usrp, str, size, ptr(t.sensorValue)] },
    // time and timed commands
    { name: 'uhd_usrp_get_time_now', args: [t.usrp, size, out('int64_t'), out('double')] },
    { name: 'uhd_usrp_set_time_now', args: [t.usrp, 'int64_t', 'double', size] },
    { name: 'uhd_usrp_set_command_time', args: [t.usrp, 'int64_t', 'double', size], optional: true },
    { name: 'uhd_usrp_clear_command_time', args: [t.usrp, size], optional: true },
    // receive streamer
    { name: 'uhd_rx_streamer_make', args: [out(t.rxStreamer)] },
    { name: 'uhd_rx_streamer_free', args: [inout(t.rxStreamer)] },
    { name: 'uhd_usrp_get_rx_stream', args: [t.usrp, ptr(t.streamArgs), t.rxStreamer] },
    { name: 'uhd_rx_streamer_max_num_samps', args: [t.rxStreamer, out(size)] },
    { name: 'uhd_rx_streamer_issue_stream_cmd', args: [t.rxStreamer, ptr(t.streamCmd)] },
    {
      name: 'uhd_rx_streamer_recv',
      args: [t.rxStreamer, 'void **', size, ptr(t.rxMetadata), 'double', 'bool', out(size)],
    },
    { name: 'uhd_rx_streamer_last_error', args: [t.rxStreamer, buf, size] },
    // transmit chain and streamer: optional, a libuhd without them makes a receive-only front-end
    { name: 'uhd_usrp_get_tx_num_channels', args: [t.usrp, out(size)], optional: true },
    { name: 'uhd_usrp_set_tx_rate', args: [t.usrp, 'double', size], optional: true },
    { name: 'uhd_usrp_get_tx_rate', args: [t.usrp, size, out('double')], optional: true },
    { name: 'uhd_usrp_set_tx_freq', args: [t.usrp, ptr(t.tuneRequest), size, out(t.tuneResult)], optional: true },
    { name: 'uhd_usrp_get_tx_freq_range', args: [t.usrp, size, t.metaRange], optional: true },
    { name: 'uhd_usrp_set_tx_gain', args: [t.usrp, 'double', size, str], optional: true },
    { name: 'uhd_usrp_get_tx_gain', args: [t.usrp, size, str, out('double')], optional: true },
    { name: 'uhd_usrp_get_tx_gain_range', args: [t.usrp, str, size, t.metaRange], optional: true },
    { name: 'uhd_usrp_set_tx_antenna', args: [t.usrp, str, size], optional: true },
    { name: 'uhd_tx_streamer_make', args: [out(t.txStreamer)], optional: true },
    { name: 'uhd_tx_streamer_free', args: [inout(t.txStreamer)], optional: true },
    { name: 'uhd_usrp_get_tx_stream', args: [t.usrp, ptr(t.streamArgs), t.txStreamer], optional: true },
    { name: 'uhd_tx_streamer_max_num_samps', args: [t.txStreamer, out(size)], optional: true },
    {
      name: 'uhd_tx_streamer_send',
      args: [t.txStreamer, 'const void **', size, ptr(t.txMetadata), 'double', out(size)],
      optional: true,
    },
    { name: 'uhd_tx_streamer_recv_async_msg', args: [t.txStreamer, ptr(t.asyncMetadata), 'double', out('bool')], optional: true },
    { name: 'uhd_tx_streamer_last_error', args: [t.txStreamer, buf, size], optional: true },
    // uhd/types/metadata.h: time_t is 64 bits on the 64-bit Linux UHD 4 runs on (checked by checkTxMetadata)
    {
      name: 'uhd_tx_metadata_make',
      args: [out(t.txMetadata), 'bool', 'int64_t', 'double', 'bool', 'bool'],
      optional: true,
    },
    { name: 'uhd_tx_metadata_free', args: [inout(t.txMetadata)], optional: true },
    { name: 'uhd_tx_metadata_has_time_spec', args: [t.txMetadata, out('bool')], optional: true },
    { name: 'uhd_tx_metadata_time_spec', args: [t.txMetadata, out('int64_t'), out('double')], optional: true },
    { name: 'uhd_tx_metadata_start_of_burst', args: [t.txMetadata, out('bool')], optional: true },
    { name: 'uhd_tx_metadata_end_of_burst', args: [t.txMetadata, out('bool')], optional: true },
    { name: 'uhd_tx_metadata_last_error', args: [t.txMetadata, buf, size], optional: true },
    { name: 'uhd_async_metadata_make', args: [out(t.asyncMetadata)], optional: true },
    { name: 'uhd_async_metadata_free', args: [inout(t.asyncMetadata)], optional: true },
    { name: 'uhd_async_metadata_channel', args: [t.asyncMetadata, out(size)], optional: true },
    { name: 'uhd_async_metadata_has_time_spec', args: [t.asyncMetadata, out('bool')], optional: true },
    { name: 'uhd_async_metadata_time_spec', args: [t.asyncMetadata, out('int64_t'), out('double')], optional: true },
    { name: 'uhd_async_metadata_event_code', args: [t.asyncMetadata, out('int')], optional: true },
    { name: 'uhd_async_metadata_last_error', args: [t.asyncMetadata, buf, size], optional: true },
  ];
}

/** The calls of the transmit side: a libuhd lacking any of them gives a receive-only front-end. */
const TX_CALLS: readonly string[] = [
  'uhd_usrp_get_tx_num_channels',
  'uhd_usrp_set_tx_rate',
  'uhd_usrp_get_tx_rate',
  'uhd_usrp_set_tx_freq',
  'uhd_usrp_get_tx_freq_range',
  'uhd_usrp_set_tx_gain',
  'uhd_usrp_get_tx_gain',
  'uhd_usrp_get_tx_gain_range',
  'uhd_usrp_set_tx_antenna',
  'uhd_tx_streamer_make',
  'uhd_tx_streamer_free',
  'uhd_usrp_get_tx_stream',
  'uhd_tx_streamer_max_num_samps',
  'uhd_tx_streamer_send',
  'uhd_tx_streamer_recv_async_msg',
  'uhd_tx_streamer_last_error',
  'uhd_tx_metadata_make',
  'uhd_tx_metadata_free',
  'uhd_async_metadata_make',
  'uhd_async_metadata_free',
  'uhd_async_metadata_event_code',
];

/** Calls `fn` on koffi's worker threads and resolves with its uhd_error. */
function callAsync(fn: KoffiFunction, ...args: unknown[]): Promise<number> {
  return new Promise((resolve, reject) => {
    fn.async(...args, (err: unknown, rc: unknown) => {
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else resolve(rc as number);
    });
  });
}

const toTimeSpec = (full: unknown, frac: unknown): TimeSpec => ({ fullSecs: Number(full), fracSecs: Number(frac) });

class KoffiUhdLib implements UhdLib {
  readonly symbols: ReadonlySet<string>;
  private readonly fn: ReadonlyMap<string, KoffiFunction>;

  constructor(
    k: Koffi,
    lib: KoffiLibrary,
    readonly path: string,
  ) {
    const fn = new Map<string, KoffiFunction>();
    const missing: string[] = [];
    for (const sig of signatures(k, uhdTypes(k))) {
      try {
        fn.set(sig.name, lib.func(sig.name, 'int', sig.args));
      } catch {
        if (!sig.optional) missing.push(sig.name);
      }
    }
    if (missing.length > 0) {
      throw new FrontendError(
        'RADIO_NO_LIBRARY',
        `${path} loaded but lacks ${missing.join(', ')}: not UHD 4's C API (UHD built without ENABLE_C_API?); ${INSTALL_HINT}`,
      );
    }
    this.fn = fn;
    this.symbols = new Set(fn.keys());
    this.hasTx = TX_CALLS.every((name) => fn.has(name));
  }

  /** Whether every call of the transmit side is bound. */
  readonly hasTx: boolean;

  /** The bound function, or a refusal naming the symbol this libuhd lacks. */
  f(name: string): KoffiFunction {
    const f = this.fn.get(name);
    if (f === undefined) throw new UhdCallError(name, 20, `${this.path} has no ${name}`);
    return f;
  }

  /** Throws UhdCallError for a failed call; `errorOf` reads the handle's saved error, else UHD's global one. */
  check(call: string, rc: number, errorOf?: (buf: Buffer, len: number) => number): void {
    if (rc === 0) return;
    throw new UhdCallError(call, rc, this.errorText(errorOf));
  }

  errorText(errorOf?: (buf: Buffer, len: number) => number): string {
    const buf = Buffer.alloc(STRING_BUFFER_BYTES);
    let text = '';
    if (errorOf !== undefined && errorOf(buf, buf.length) === 0) text = cString(buf);
    if (text === '' || text === 'None') {
      buf.fill(0);
      if (this.f('uhd_get_last_error')(buf, buf.length) === 0) text = cString(buf);
    }
    return text === 'None' ? '' : text;
  }

  /** Calls `name` synchronously and checks it. */
  call(name: string, errorOf: ((buf: Buffer, len: number) => number) | undefined, ...args: unknown[]): void {
    this.check(name, this.f(name)(...args) as number, errorOf);
  }

  async callOnWorker(name: string, errorOf: ((buf: Buffer, len: number) => number) | undefined, ...args: unknown[]): Promise<void> {
    this.check(name, await callAsync(this.f(name), ...args), errorOf);
  }

  version(): string {
    const buf = Buffer.alloc(256);
    this.call('uhd_get_version_string', undefined, buf, buf.length);
    return cString(buf);
  }

  abi(): string {
    const buf = Buffer.alloc(256);
    this.call('uhd_get_abi_string', undefined, buf, buf.length);
    return cString(buf);
  }

  /** Runs `use` on a fresh string vector and frees it afterwards. */
  async withStringVector<T>(use: (h: unknown) => Promise<T> | T): Promise<T> {
    const h: unknown[] = [null];
    this.call('uhd_string_vector_make', undefined, h);
    try {
      return await use(h[0]);
    } finally {
      this.f('uhd_string_vector_free')(h);
    }
  }

  readStrings(h: unknown): string[] {
    const errorOf = (b: Buffer, n: number): number => this.f('uhd_string_vector_last_error')(h, b, n) as number;
    const size: unknown[] = [0];
    this.call('uhd_string_vector_size', errorOf, h, size);
    const out: string[] = [];
    const buf = Buffer.alloc(STRING_BUFFER_BYTES);
    for (let i = 0; i < Number(size[0]); i++) {
      buf.fill(0);
      this.call('uhd_string_vector_at', errorOf, h, i, buf, buf.length);
      out.push(cString(buf));
    }
    return out;
  }

  find(args: string): Promise<string[]> {
    return this.withStringVector(async (h) => {
      await this.callOnWorker('uhd_usrp_find', undefined, args, [h]);
      return this.readStrings(h);
    });
  }

  /** A fresh `uhd_tx_metadata_handle` for `md`, as [handle] (what uhd_tx_metadata_free wants). */
  makeTxMetadata(md: TxMetadata): unknown[] {
    const h: unknown[] = [null];
    const t = md.timeSpec;
    this.call('uhd_tx_metadata_make', undefined, h, t !== undefined, t?.fullSecs ?? 0, t?.fracSecs ?? 0, md.startOfBurst, md.endOfBurst);
    return h;
  }

  checkTxMetadata(md: TxMetadata): TxMetadata {
    const h = this.makeTxMetadata(md);
    const m = h[0];
    try {
      const errorOf = (b: Buffer, n: number): number => this.f('uhd_tx_metadata_last_error')(m, b, n) as number;
      const flag = (name: string): boolean => {
        const out: unknown[] = [false];
        this.call(name, errorOf, m, out);
        return out[0] === true;
      };
      const startOfBurst = flag('uhd_tx_metadata_start_of_burst');
      const endOfBurst = flag('uhd_tx_metadata_end_of_burst');
      if (!flag('uhd_tx_metadata_has_time_spec')) return { startOfBurst, endOfBurst };
      const full: unknown[] = [0];
      const frac: unknown[] = [0];
      this.call('uhd_tx_metadata_time_spec', errorOf, m, full, frac);
      return { startOfBurst, endOfBurst, timeSpec: toTimeSpec(full[0], frac[0]) };
    } finally {
      this.f('uhd_tx_metadata_free')(h);
    }
  }

  async makeUsrp(args: string): Promise<UhdUsrp> {
    const h: unknown[] = [null];
    await this.callOnWorker('uhd_usrp_make', undefined, h, args);
    return new KoffiUsrp(this, h[0]);
  }
}

class KoffiUsrp implements UhdUsrp {
  private sensor: unknown = null;
  private freed = false;
  private readonly errorOf = (buf: Buffer, len: number): number => this.lib.f('uhd_usrp_last_error')(this.h, buf, len) as number;

  constructor(
    private readonly lib: KoffiUhdLib,
    private readonly h: unknown,
  ) {}

  private call(name: string, ...args: unknown[]): void {
    this.lib.call(name, this.errorOf, this.h, ...args);
  }

  /** A call whose last argument is its `double *` or `size_t *` result. */
  private number(name: string, ...args: unknown[]): number {
    const out: unknown[] = [0];
    this.call(name, ...args, out);
    return Number(out[0]);
  }

  setRxRate(rateHz: number, chan: number): void {
    this.call('uhd_usrp_set_rx_rate', rateHz, chan);
  }

  getRxRate(chan: number): number {
    return this.number('uhd_usrp_get_rx_rate', chan);
  }

  setRxGain(gainDb: number, chan: number): void {
    this.call('uhd_usrp_set_rx_gain', gainDb, chan, '');
  }

  getRxGain(chan: number): number {
    return this.number('uhd_usrp_get_rx_gain', chan, '');
  }

  rxGainRange(chan: number): readonly [number, number] {
    return this.metaRange((mr) => this.call('uhd_usrp_get_rx_gain_range', '', chan, mr));
  }

  rxFreqRange(chan: number): readonly [number, number] {
    return this.metaRange((mr) => this.call('uhd_usrp_get_rx_freq_range', chan, mr));
  }

  private metaRange(fill: (mr: unknown) => void): readonly [number, number] {
    const h: unknown[] = [null];
    this.lib.call('uhd_meta_range_make', undefined, h);
    const mr = h[0];
    try {
      fill(mr);
      const errorOf = (b: Buffer, n: number): number => this.lib.f('uhd_meta_range_last_error')(mr, b, n) as number;
      const start: unknown[] = [0];
      const stop: unknown[] = [0];
      this.lib.call('uhd_meta_range_start', errorOf, mr, start);
      this.lib.call('uhd_meta_range_stop', errorOf, mr, stop);
      return [Number(start[0]), Number(stop[0])];
    } finally {
      this.lib.f('uhd_meta_range_free')(h);
    }
  }

  setRxAntenna(antenna: string, chan: number): void {
    this.call('uhd_usrp_set_rx_antenna', antenna, chan);
  }

  setRxFreq(freqHz: number, chan: number): Promise<UhdTuneResult> {
    return this.tuneOnWorker('uhd_usrp_set_rx_freq', freqHz, chan);
  }

  /** `uhd_usrp_set_rx_freq` or `uhd_usrp_set_tx_freq` with an automatic tune request, on a worker thread. */
  private async tuneOnWorker(name: string, freqHz: number, chan: number): Promise<UhdTuneResult> {
    const request = {
      target_freq: freqHz,
      rf_freq_policy: TUNE_POLICY_AUTO,
      rf_freq: 0,
      dsp_freq_policy: TUNE_POLICY_AUTO,
      dsp_freq: 0,
      // UHD makes a std::string of it: never NULL
      args: '',
    };
    const result: Record<string, number> = {};
    await this.lib.callOnWorker(name, this.errorOf, this.h, request, chan, result);
    return {
      clippedRfHz: result['clipped_rf_freq'] ?? Number.NaN,
      targetRfHz: result['target_rf_freq'] ?? Number.NaN,
      actualRfHz: result['actual_rf_freq'] ?? Number.NaN,
      targetDspHz: result['target_dsp_freq'] ?? Number.NaN,
      actualDspHz: result['actual_dsp_freq'] ?? Number.NaN,
    };
  }

  rxSensorNames(chan: number): string[] {
    const h: unknown[] = [null];
    this.lib.call('uhd_string_vector_make', undefined, h);
    try {
      this.call('uhd_usrp_get_rx_sensor_names', chan, [h[0]]);
      return this.lib.readStrings(h[0]);
    } finally {
      this.lib.f('uhd_string_vector_free')(h);
    }
  }

  async rxSensorBool(name: string, chan: number): Promise<boolean> {
    if (this.sensor === null) {
      const h: unknown[] = [null];
      this.lib.call('uhd_sensor_value_make', undefined, h);
      this.sensor = h[0];
    }
    const sensor = this.sensor;
    await this.lib.callOnWorker('uhd_usrp_get_rx_sensor', this.errorOf, this.h, name, chan, [sensor]);
    const out: unknown[] = [false];
    this.lib.call('uhd_sensor_value_to_bool', (b, n) => this.lib.f('uhd_sensor_value_last_error')(sensor, b, n) as number, sensor, out);
    return out[0] === true;
  }

  timeNow(): TimeSpec {
    const full: unknown[] = [0];
    const frac: unknown[] = [0];
    this.call('uhd_usrp_get_time_now', 0, full, frac);
    return toTimeSpec(full[0], frac[0]);
  }

  setTimeNow(t: TimeSpec): void {
    this.call('uhd_usrp_set_time_now', t.fullSecs, t.fracSecs, 0);
  }

  setCommandTime(t: TimeSpec): void {
    this.call('uhd_usrp_set_command_time', t.fullSecs, t.fracSecs, 0);
  }

  clearCommandTime(): void {
    this.call('uhd_usrp_clear_command_time', 0);
  }

  rxStream(args: RxStreamArgs): UhdRxStreamer {
    const h: unknown[] = [null];
    this.lib.call('uhd_rx_streamer_make', undefined, h);
    const md: unknown[] = [null];
    try {
      const streamer = h[0];
      const errorOf = (b: Buffer, n: number): number => this.lib.f('uhd_rx_streamer_last_error')(streamer, b, n) as number;
      this.lib.call(
        'uhd_usrp_get_rx_stream',
        errorOf,
        this.h,
        { cpu_format: 'fc32', otw_format: args.otwFormat, args: args.args, channel_list: [args.channel], n_channels: 1 },
        streamer,
      );
      this.lib.call('uhd_rx_metadata_make', undefined, md);
      return new KoffiRxStreamer(this.lib, h, md);
    } catch (e) {
      if (md[0] !== null) this.lib.f('uhd_rx_metadata_free')(md);
      this.lib.f('uhd_rx_streamer_free')(h);
      throw e;
    }
  }

  txNumChannels(): number {
    if (!this.lib.hasTx) return 0;
    return this.number('uhd_usrp_get_tx_num_channels');
  }

  setTxRate(rateHz: number, chan: number): void {
    this.call('uhd_usrp_set_tx_rate', rateHz, chan);
  }

  getTxRate(chan: number): number {
    return this.number('uhd_usrp_get_tx_rate', chan);
  }

  setTxGain(gainDb: number, chan: number): void {
    this.call('uhd_usrp_set_tx_gain', gainDb, chan, '');
  }

  getTxGain(chan: number): number {
    return this.number('uhd_usrp_get_tx_gain', chan, '');
  }

  txGainRange(chan: number): readonly [number, number] {
    return this.metaRange((mr) => this.call('uhd_usrp_get_tx_gain_range', '', chan, mr));
  }

  txFreqRange(chan: number): readonly [number, number] {
    return this.metaRange((mr) => this.call('uhd_usrp_get_tx_freq_range', chan, mr));
  }

  setTxAntenna(antenna: string, chan: number): void {
    this.call('uhd_usrp_set_tx_antenna', antenna, chan);
  }

  setTxFreq(freqHz: number, chan: number): Promise<UhdTuneResult> {
    return this.tuneOnWorker('uhd_usrp_set_tx_freq', freqHz, chan);
  }

  txStream(args: RxStreamArgs): UhdTxStreamer {
    const h: unknown[] = [null];
    this.lib.call('uhd_tx_streamer_make', undefined, h);
    const md: unknown[] = [null];
    try {
      const streamer = h[0];
      const errorOf = (b: Buffer, n: number): number => this.lib.f('uhd_tx_streamer_last_error')(streamer, b, n) as number;
      this.lib.call(
        'uhd_usrp_get_tx_stream',
        errorOf,
        this.h,
        { cpu_format: 'fc32', otw_format: args.otwFormat, args: args.args, channel_list: [args.channel], n_channels: 1 },
        streamer,
      );
      this.lib.call('uhd_async_metadata_make', undefined, md);
      return new KoffiTxStreamer(this.lib, h, md);
    } catch (e) {
      if (md[0] !== null) this.lib.f('uhd_async_metadata_free')(md);
      this.lib.f('uhd_tx_streamer_free')(h);
      throw e;
    }
  }

  free(): void {
    if (this.freed) return;
    this.freed = true;
    if (this.sensor !== null) this.lib.f('uhd_sensor_value_free')([this.sensor]);
    this.sensor = null;
    this.lib.call('uhd_usrp_free', undefined, [this.h]);
  }
}

class KoffiRxStreamer implements UhdRxStreamer {
  readonly maxNumSamps: number;
  private freed = false;
  private readonly errorOf = (buf: Buffer, len: number): number => this.lib.f('uhd_rx_streamer_last_error')(this.h(), buf, len) as number;
  private readonly mdErrorOf = (buf: Buffer, len: number): number => this.lib.f('uhd_rx_metadata_last_error')(this.md(), buf, len) as number;

  constructor(
    private readonly lib: KoffiUhdLib,
    /** [handle], as uhd_rx_streamer_free wants a pointer to it. */
    private readonly hRef: unknown[],
    private readonly mdRef: unknown[],
  ) {
    const out: unknown[] = [0];
    this.lib.call('uhd_rx_streamer_max_num_samps', this.errorOf, this.h(), out);
    this.maxNumSamps = Number(out[0]);
  }

  private h(): unknown {
    return this.hRef[0];
  }

  private md(): unknown {
    return this.mdRef[0];
  }

  issueStreamCmd(cmd: StreamCommand): void {
    this.lib.call('uhd_rx_streamer_issue_stream_cmd', this.errorOf, this.h(), {
      stream_mode: cmd.mode,
      num_samps: cmd.numSamps ?? 0,
      stream_now: cmd.at === undefined,
      time_spec_full_secs: cmd.at?.fullSecs ?? 0,
      time_spec_frac_secs: cmd.at?.fracSecs ?? 0,
    });
  }

  async recv(into: Float32Array, offset: number, count: number, timeoutS: number): Promise<RecvResult> {
    if (this.freed) throw new FrontendError('RADIO_CLOSED', 'uhd_rx_streamer_recv on a freed streamer');
    const items: unknown[] = [0];
    // buffs is void*[1]: koffi passes the typed array's own memory, so recv writes in place
    const buffs = [into.subarray(2 * offset, 2 * (offset + count))];
    await this.lib.callOnWorker('uhd_rx_streamer_recv', this.errorOf, this.h(), buffs, count, [this.md()], timeoutS, false, items);
    return { samples: Number(items[0]), md: this.metadata() };
  }

  private metadata(): RxMetadata {
    const md = this.md();
    const code: unknown[] = [0];
    const oos: unknown[] = [false];
    const has: unknown[] = [false];
    this.lib.call('uhd_rx_metadata_error_code', this.mdErrorOf, md, code);
    this.lib.call('uhd_rx_metadata_out_of_sequence', this.mdErrorOf, md, oos);
    this.lib.call('uhd_rx_metadata_has_time_spec', this.mdErrorOf, md, has);
    let timeSpec: TimeSpec | undefined;
    if (has[0] === true) {
      const full: unknown[] = [0];
      const frac: unknown[] = [0];
      this.lib.call('uhd_rx_metadata_time_spec', this.mdErrorOf, md, full, frac);
      timeSpec = toTimeSpec(full[0], frac[0]);
    }
    const errorCode = Number(code[0]);
    let text = '';
    if (errorCode !== RxError.NONE) {
      const buf = Buffer.alloc(512);
      this.lib.call('uhd_rx_metadata_strerror', this.mdErrorOf, md, buf, buf.length);
      text = cString(buf);
    }
    return { errorCode, outOfSequence: oos[0] === true, timeSpec, text };
  }

  free(): void {
    if (this.freed) return;
    this.freed = true;
    this.lib.f('uhd_rx_metadata_free')(this.mdRef);
    this.lib.f('uhd_rx_streamer_free')(this.hRef);
  }
}

class KoffiTxStreamer implements UhdTxStreamer {
  readonly maxNumSamps: number;
  private freed = false;
  private readonly errorOf = (buf: Buffer, len: number): number => this.lib.f('uhd_tx_streamer_last_error')(this.hRef[0], buf, len) as number;

  constructor(
    private readonly lib: KoffiUhdLib,
    /** [handle], as uhd_tx_streamer_free wants a pointer to it. */
    private readonly hRef: unknown[],
    /** [async metadata handle], reused by every recvAsyncMsg. */
    private readonly asyncRef: unknown[],
  ) {
    const out: unknown[] = [0];
    this.lib.call('uhd_tx_streamer_max_num_samps', this.errorOf, this.hRef[0], out);
    this.maxNumSamps = Number(out[0]);
  }

  async send(data: Float32Array, offset: number, count: number, md: TxMetadata, timeoutS: number): Promise<number> {
    if (this.freed) throw new FrontendError('RADIO_CLOSED', 'uhd_tx_streamer_send on a freed streamer');
    const mdRef = this.lib.makeTxMetadata(md);
    try {
      const items: unknown[] = [0];
      // buffs is const void*[1]: the typed array's own memory, not a copy
      const buffs = [data.subarray(2 * offset, 2 * (offset + count))];
      await this.lib.callOnWorker('uhd_tx_streamer_send', this.errorOf, this.hRef[0], buffs, count, mdRef, timeoutS, items);
      return Number(items[0]);
    } finally {
      this.lib.f('uhd_tx_metadata_free')(mdRef);
    }
  }

  async recvAsyncMsg(timeoutS: number): Promise<AsyncMessage | undefined> {
    if (this.freed) throw new FrontendError('RADIO_CLOSED', 'uhd_tx_streamer_recv_async_msg on a freed streamer');
    const valid: unknown[] = [false];
    await this.lib.callOnWorker('uhd_tx_streamer_recv_async_msg', this.errorOf, this.hRef[0], this.asyncRef, timeoutS, valid);
    if (valid[0] !== true) return undefined;
    const md = this.asyncRef[0];
    const errorOf = (b: Buffer, n: number): number => this.lib.f('uhd_async_metadata_last_error')(md, b, n) as number;
    const code: unknown[] = [0];
    const chan: unknown[] = [0];
    const has: unknown[] = [false];
    this.lib.call('uhd_async_metadata_event_code', errorOf, md, code);
    this.lib.call('uhd_async_metadata_channel', errorOf, md, chan);
    this.lib.call('uhd_async_metadata_has_time_spec', errorOf, md, has);
    let timeSpec: TimeSpec | undefined;
    if (has[0] === true) {
      const full: unknown[] = [0];
      const frac: unknown[] = [0];
      this.lib.call('uhd_async_metadata_time_spec', errorOf, md, full, frac);
      timeSpec = toTimeSpec(full[0], frac[0]);
    }
    return { eventCode: Number(code[0]), channel: Number(chan[0]), timeSpec };
  }

  free(): void {
    if (this.freed) return;
    this.freed = true;
    this.lib.f('uhd_async_metadata_free')(this.asyncRef);
    this.lib.f('uhd_tx_streamer_free')(this.hRef);
  }
}
