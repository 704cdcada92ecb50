/**
 * The router daemon's TUN device: where the host's IP packets enter and leave
 * the mesh. libc is bound with koffi (no native addon); koffi is an optional
 * dependency, loaded on first use.
 *
 * Reading: a koffi async call of poll() on [TUN fd, eventfd] waits in a libuv
 * threadpool thread (koffi's async calls are napi async work). When it reports
 * the TUN readable, the main thread drains it with non-blocking read()s into
 * one preallocated arena (up to `batchSize` packets or EAGAIN), hands the batch
 * to the callback once, and re-arms the poll (or, when the batch filled up,
 * drains again from setImmediate, sparing the thread hop while packets keep
 * coming and still letting the event loop run between batches). Nothing is
 * allocated per packet:
 * each arena slot has a view made once, and the batch gives offsets and
 * lengths. `close()` wakes the poll through the eventfd, waits for its
 * completion, then closes both fds, so no fd is used after close and no async
 * call stays pending to keep the process alive.
 *
 * While a device is read it holds one libuv threadpool thread (4 by default,
 * shared with fs, dns.lookup, zlib and crypto) and, like a listening socket,
 * keeps the process alive until closed.
 *
 * Linux only; the flag and ioctl values are the generic ones (x86, arm, arm64,
 * riscv, loongarch; ppc64 has its own TUNSETIFF).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type koffiModule from 'koffi';
import type { KoffiFunc, LibraryHandle } from 'koffi';
import { CogmeshError, RangeArgumentError } from '../core/errors.js';

type Koffi = typeof koffiModule;

export type TunErrorCode =
  | 'TUN_NO_LIBRARY'
  | 'TUN_PERMISSION'
  | 'TUN_NO_DRIVER'
  | 'TUN_BUSY'
  | 'TUN_REFUSED'
  | 'TUN_OPEN_FAILED'
  | 'TUN_CLOSED'
  | 'TUN_STATE'
  | 'TUN_POLL_FAILED'
  | 'TUN_READ_FAILED'
  | 'TUN_DETACHED';

/** A TUN device that cannot be opened (no permission, no driver, the name taken) or read, or was used out of order. */
export class TunError extends CogmeshError {
  declare readonly code: TunErrorCode;

  constructor(
    code: TunErrorCode,
    message: string,
    /** The errno name (`EPERM`) when a system call failed. */
    readonly errno?: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

export interface TunOpenOptions {
  /** Multi-queue TUN is not supported yet; the type keeps the option's place. */
  multiQueue?: false;
  /** Most packets read per batch (64, 1 to 1024). */
  batchSize?: number;
  /** Largest packet read; a longer one is counted in `rxErrors` and dropped (65535, 576 to 65535). The MTU shrinks the arena. */
  maxPacketBytes?: number;
}

/** Named counters, read by the control API. */
export interface TunCounters {
  rxPackets: number;
  rxBytes: number;
  rxBatches: number;
  txPackets: number;
  txBytes: number;
  /** Writes refused for want of room (EAGAIN, ENOBUFS). */
  txDropped: number;
  /** Reads that failed or returned a packet longer than `maxPacketBytes`. */
  rxErrors: number;
  /** Writes that failed for another reason (EINVAL for a malformed packet, EIO...). */
  txErrors: number;
}

/**
 * The packets of one wake-up. Packet `i` is `data[offsets[i] .. offsets[i] + lengths[i])`.
 * Everything here is reused: valid only during the callback; copy what you keep.
 */
export interface TunBatch {
  readonly count: number;
  readonly data: Uint8Array;
  readonly offsets: Int32Array;
  readonly lengths: Int32Array;
  /** A view of packet `i` (allocates a view; the hot path uses data/offsets/lengths). */
  packet(i: number): Uint8Array;
}

const O_RDWR = 0o2;
const O_NONBLOCK = 0o4000;
const O_CLOEXEC = 0o2000000;
/** `_IOW('T', 202, int)`: 0x400454ca; powerpc encodes the write direction as 4. */
const TUNSETIFF = process.arch === 'ppc64' ? 0x800454ca : 0x400454ca;
const IFF_TUN = 0x0001;
const IFF_NO_PI = 0x1000;
const IFNAMSIZ = 16;
const IFREQ_BYTES = 40;
const POLLIN = 0x1;
const POLLERR = 0x8;
const POLLHUP = 0x10;
const POLLNVAL = 0x20;
const CAP_NET_ADMIN = 12n;
const TUN_PATH = '/dev/net/tun';

interface Libc {
  readonly koffi: Koffi;
  readonly errnoNames: ReadonlyMap<number, string>;
  readonly EAGAIN: number;
  readonly EINTR: number;
  readonly ENOBUFS: number;
  open(path: string, flags: number): number;
  close(fd: number): number;
  read(fd: number, buf: Uint8Array, n: number): number;
  write(fd: number, buf: Uint8Array, n: number): number;
  ioctl(fd: number, request: number, argType: string, arg: Uint8Array): number;
  eventfd(initval: number, flags: number): number;
  poll: KoffiFunc<(fds: Uint8Array, nfds: number, timeoutMs: number) => number>;
}

let libcCache: Libc | undefined;

function libc(): Libc {
  if (libcCache !== undefined) return libcCache;
  let koffi: Koffi;
  try {
    koffi = createRequire(import.meta.url)('koffi') as Koffi;
  } catch (e) {
    throw new TunError(
      'TUN_NO_LIBRARY',
      `cannot open a TUN device: koffi (an optional dependency of cogmesh) is not installed (${errorText(e)}); run npm install koffi`,
      undefined,
      { cause: e },
    );
  }
  let lib: LibraryHandle;
  try {
    lib = koffi.load('libc.so.6');
  } catch {
    lib = koffi.load(null); // musl: libc's symbols are the process's own
  }
  const errnoNames = new Map<number, string>();
  for (const [name, value] of Object.entries(koffi.os.errno)) if (!errnoNames.has(value)) errnoNames.set(value, name);
  const f = <T>(decl: string): T => lib.func(decl) as unknown as T;
  libcCache = {
    koffi,
    errnoNames,
    EAGAIN: errnoValue(koffi, 'EAGAIN'),
    EINTR: errnoValue(koffi, 'EINTR'),
    ENOBUFS: errnoValue(koffi, 'ENOBUFS'),
    open: f('int open(const char *path, int flags)'),
    close: f('int close(int fd)'),
    // The buffers are passed as plain pointers (no _Out_): koffi hands C the typed array's own memory.
    read: f('long read(int fd, void *buf, size_t count)'),
    write: f('long write(int fd, const void *buf, size_t count)'),
    ioctl: f('int ioctl(int fd, unsigned long request, ...)'),
    eventfd: f('int eventfd(unsigned int initval, int flags)'),
    poll: f('int poll(void *fds, unsigned long nfds, int timeout)'),
  };
  return libcCache;
}

function errnoValue(koffi: Koffi, name: string): number {
  const v = koffi.os.errno[name];
  if (v === undefined) throw new Error(`koffi knows no errno ${name}`);
  return v;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Whether this process has CAP_NET_ADMIN in its effective set (`CapEff` of /proc/self/status, bit 12). */
export function hasNetAdmin(): boolean {
  let status: string;
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return false;
  }
  const m = /^CapEff:\s*([0-9a-fA-F]+)\s*$/m.exec(status);
  if (m === null) return false;
  return ((BigInt(`0x${m[1]}`) >> CAP_NET_ADMIN) & 1n) === 1n;
}

const NAME_EXPECTED = 'an interface name of 1 to 15 bytes without "/", ":" or white space, not "." or ".."';

function checkName(name: string): void {
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes < 1 || bytes >= IFNAMSIZ || /[/:\s]/.test(name) || name === '.' || name === '..') {
    throw new RangeArgumentError('name', name, NAME_EXPECTED);
  }
}

function checkInt(field: string, v: number, min: number, max: number): number {
  if (!Number.isInteger(v) || v < min || v > max) throw new RangeArgumentError(field, v, `an integer from ${min} to ${max}`);
  return v;
}

function openError(l: Libc, name: string, call: string, errno: number): TunError {
  const e = l.errnoNames.get(errno) ?? `errno ${errno}`;
  switch (e) {
    case 'EPERM':
    case 'EACCES':
      return new TunError(
        'TUN_PERMISSION',
        `opening TUN device "${name}" needs CAP_NET_ADMIN: run as root or grant the capability (setcap cap_net_admin+ep on the node binary); ${call} failed with ${e}`,
        e,
      );
    case 'ENOENT':
    case 'ENODEV':
    case 'ENXIO':
      return new TunError(
        'TUN_NO_DRIVER',
        `cannot open TUN device "${name}": ${TUN_PATH} is missing or has no driver (${e}): load the tun module (modprobe tun) or create the device node (mknod ${TUN_PATH} c 10 200)`,
        e,
      );
    case 'EBUSY':
      return new TunError(
        'TUN_BUSY',
        `TUN device "${name}" is busy (${call} failed with EBUSY): another file has it open; stop that process or choose another name`,
        e,
      );
    case 'EINVAL':
      return new TunError(
        'TUN_REFUSED',
        `the kernel refused TUN device "${name}" (${call} failed with EINVAL): an interface of that name exists and is not a single-queue TUN device; choose another name or delete it (ip link del ${name})`,
        e,
      );
    default:
      return new TunError('TUN_OPEN_FAILED', `cannot open TUN device "${name}": ${call} failed with ${e}`, e);
  }
}

class Batch implements TunBatch {
  count = 0;
  readonly offsets: Int32Array;
  readonly lengths: Int32Array;

  constructor(
    readonly data: Uint8Array,
    size: number,
    stride: number,
  ) {
    this.offsets = new Int32Array(size);
    this.lengths = new Int32Array(size);
    for (let i = 0; i < size; i++) this.offsets[i] = i * stride;
  }

  packet(i: number): Uint8Array {
    if (!Number.isInteger(i) || i < 0 || i >= this.count) throw new RangeArgumentError('packet', i, `an index below the batch's count ${this.count}`);
    const o = this.offsets[i]!;
    return this.data.subarray(o, o + this.lengths[i]!);
  }
}

type State = 'open' | 'reading' | 'closing' | 'closed';

/**
 * The devices with a poll() pending on libuv's thread pool. At exit libuv
 * joins the pool's threads, so a poll left waiting would hold the process
 * for ever (an exit without close(): an uncaught exception, process.exit):
 * one exit listener wakes them all through their eventfds.
 */
const pollingDevices = new Set<TunDevice>();
let exitHooked = false;

/** One non-persistent TUN interface (IFF_TUN | IFF_NO_PI): it exists while this object is open. */
export class TunDevice {
  readonly counters: TunCounters = { rxPackets: 0, rxBytes: 0, rxBatches: 0, txPackets: 0, txBytes: 0, txDropped: 0, rxErrors: 0, txErrors: 0 };

  private state: State = 'open';
  /** An async poll() is pending: its buffer and the fds belong to the worker thread until it completes. */
  private polling = false;
  /** A setImmediate of `resume` is pending. */
  private resuming = false;
  private batchWasFull = false;
  private onBatch: ((batch: TunBatch) => void) | undefined;
  private onError: ((e: TunError) => void) | undefined;
  private closed: Promise<void> | undefined;
  private closeDone: (() => void) | undefined;
  /**
   * struct pollfd[2]: { int fd; short events; short revents; } for the TUN and the eventfd.
   * Made from an ArrayBuffer, whose memory is off V8's heap and never moves while the worker writes revents.
   */
  private readonly pollFds = new Uint8Array(new ArrayBuffer(16));
  private readonly pollShorts = new Int16Array(this.pollFds.buffer);
  /** A little- or big-endian uint64 1, to write to the eventfd. */
  private readonly wake = new Uint8Array(new BigUint64Array([1n]).buffer);
  private readonly batch: Batch;
  /** One view per arena slot, made once, for read(). */
  private readonly slots: Uint8Array[];
  private readonly maxPacketBytes: number;

  private constructor(
    private readonly l: Libc,
    /** The interface's name as the kernel gave it. */
    readonly name: string,
    private fd: number,
    private efd: number,
    batchSize: number,
    maxPacketBytes: number,
  ) {
    this.maxPacketBytes = maxPacketBytes;
    // One byte more than the largest packet: the kernel truncates a packet to the buffer, so a read that fills it was too long.
    const stride = (maxPacketBytes + 1 + 63) & ~63;
    const data = new Uint8Array(stride * batchSize);
    this.batch = new Batch(data, batchSize, stride);
    this.slots = Array.from({ length: batchSize }, (_, i) => data.subarray(i * stride, i * stride + maxPacketBytes + 1));
    const ints = new Int32Array(this.pollFds.buffer);
    ints[0] = fd;
    this.pollShorts[2] = POLLIN;
    ints[2] = efd;
    this.pollShorts[6] = POLLIN;
  }

  /**
   * Creates (or attaches to a persistent) TUN interface `name`, non-blocking.
   * Throws TunError: TUN_PERMISSION (no CAP_NET_ADMIN), TUN_NO_DRIVER, TUN_BUSY,
   * TUN_REFUSED (the name is another kind of interface), TUN_OPEN_FAILED.
   */
  static open(name: string, opts: TunOpenOptions = {}): TunDevice {
    checkName(name);
    if (opts.multiQueue !== undefined && opts.multiQueue !== false)
      throw new RangeArgumentError('multiQueue', opts.multiQueue, 'false (multi-queue TUN is not supported)');
    const batchSize = checkInt('batchSize', opts.batchSize ?? 64, 1, 1024);
    const maxPacketBytes = checkInt('maxPacketBytes', opts.maxPacketBytes ?? 65535, 576, 65535);
    if (process.platform !== 'linux')
      throw new TunError('TUN_NO_DRIVER', `cannot open TUN device "${name}": TUN devices are Linux only, this is ${process.platform}`);
    const l = libc();
    const fd = l.open(TUN_PATH, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw openError(l, name, `open(${TUN_PATH})`, l.koffi.errno());
    let efd = -1;
    try {
      const ifr = new Uint8Array(IFREQ_BYTES);
      new TextEncoder().encodeInto(name, ifr.subarray(0, IFNAMSIZ - 1));
      new Uint16Array(ifr.buffer, IFNAMSIZ, 1)[0] = IFF_TUN | IFF_NO_PI;
      if (l.ioctl(fd, TUNSETIFF, 'void *', ifr) < 0) throw openError(l, name, 'ioctl(TUNSETIFF)', l.koffi.errno());
      const end = ifr.indexOf(0);
      const kernelName = new TextDecoder().decode(ifr.subarray(0, end < 0 || end > IFNAMSIZ ? IFNAMSIZ : end));
      efd = l.eventfd(0, O_NONBLOCK | O_CLOEXEC);
      if (efd < 0) throw openError(l, name, 'eventfd()', l.koffi.errno());
      return new TunDevice(l, kernelName, fd, efd, batchSize, maxPacketBytes);
    } catch (e) {
      l.close(fd);
      if (efd >= 0) l.close(efd);
      throw e;
    }
  }

  /** True once close() was called. */
  get isClosed(): boolean {
    return this.state === 'closing' || this.state === 'closed';
  }

  /** True while a start()ed reader is running (it stops on close or a read fault). */
  get isReading(): boolean {
    return this.state === 'reading';
  }

  /**
   * Starts reading: `onBatch` gets every batch on the main thread. A fault that
   * stops the reader (the interface deleted under it, a failed read or poll)
   * goes to `onError`, or is thrown as an uncaught exception when there is none.
   */
  start(onBatch: (batch: TunBatch) => void, onError?: (e: TunError) => void): void {
    if (this.isClosed) throw new TunError('TUN_CLOSED', `TUN device "${this.name}" is closed`);
    if (this.state === 'reading' || this.polling || this.resuming) throw new TunError('TUN_STATE', `TUN device "${this.name}" is already being read`);
    this.onBatch = onBatch;
    this.onError = onError;
    this.state = 'reading';
    this.arm();
  }

  /**
   * Writes one IP packet, non-blocking. False when it was not taken: the
   * queue was full (EAGAIN, ENOBUFS: `txDropped`) or the kernel refused it
   * (`txErrors`). Throws TUN_CLOSED after close().
   */
  write(packet: Uint8Array): boolean {
    if (this.isClosed) throw new TunError('TUN_CLOSED', `TUN device "${this.name}" is closed`);
    const n = this.l.write(this.fd, packet, packet.length);
    if (n === packet.length) {
      this.counters.txPackets++;
      this.counters.txBytes += n;
      return true;
    }
    if (n < 0) {
      const e = this.l.koffi.errno();
      if (e === this.l.EAGAIN || e === this.l.ENOBUFS) {
        this.counters.txDropped++;
        return false;
      }
    }
    this.counters.txErrors++;
    return false;
  }

  /**
   * Stops reading and closes the device (a non-persistent TUN disappears).
   * A pending poll is woken through the eventfd and the fds are closed once it
   * has returned; the promise resolves then. Calling it again returns the same promise.
   */
  close(): Promise<void> {
    if (this.closed !== undefined) return this.closed;
    if (this.polling) {
      this.state = 'closing';
      this.closed = new Promise((resolve) => (this.closeDone = resolve));
      // The counter is 0 and the write is 8 bytes: it cannot fail with EAGAIN.
      this.l.write(this.efd, this.wake, 8);
    } else {
      this.release();
      this.closed = Promise.resolve();
    }
    return this.closed;
  }

  /** At exit, a poll still pending: woken, so that libuv's thread can end (the fds close with the process). */
  private wakeAtExit(): void {
    if (this.efd >= 0) this.l.write(this.efd, this.wake, 8);
  }

  private release(): void {
    this.state = 'closed';
    if (this.fd >= 0) this.l.close(this.fd);
    if (this.efd >= 0) this.l.close(this.efd);
    this.fd = -1;
    this.efd = -1;
    this.onBatch = undefined;
    this.onError = undefined;
    this.closeDone?.();
  }

  private arm(): void {
    this.pollShorts[3] = 0;
    this.pollShorts[7] = 0;
    this.polling = true;
    pollingDevices.add(this);
    if (!exitHooked) {
      exitHooked = true;
      process.on('exit', () => {
        for (const d of pollingDevices) d.wakeAtExit();
      });
    }
    try {
      this.l.poll.async(this.pollFds, 2, -1, this.polled);
    } catch (e) {
      this.polling = false;
      pollingDevices.delete(this);
      this.fail(new TunError('TUN_POLL_FAILED', `cannot wait for packets on TUN device "${this.name}": ${errorText(e)}`, undefined, { cause: e }));
    }
  }

  /** The completion of the async poll(), on the main thread. One function for the life of the device. */
  private readonly polled = (err: unknown, ready: number): void => {
    this.polling = false;
    pollingDevices.delete(this);
    if (this.state === 'closing') {
      this.release();
      return;
    }
    if (this.state !== 'reading') return;
    if (err !== null && err !== undefined) {
      this.fail(new TunError('TUN_POLL_FAILED', `poll() on TUN device "${this.name}" failed: ${errorText(err)}`, undefined, { cause: err }));
      return;
    }
    if (ready < 0) {
      const e = this.l.koffi.errno(); // koffi restores the worker's errno for the callback
      if (e === this.l.EINTR) this.arm();
      else this.fail(new TunError('TUN_POLL_FAILED', `poll() on TUN device "${this.name}" failed with ${this.errnoName(e)}`, this.errnoName(e)));
      return;
    }
    const revents = this.pollShorts[3]!;
    if ((revents & (POLLERR | POLLHUP | POLLNVAL)) !== 0) {
      this.fail(new TunError('TUN_DETACHED', `TUN device "${this.name}" was deleted or detached (poll revents 0x${revents.toString(16)})`));
      return;
    }
    if ((revents & POLLIN) !== 0) this.service();
    else this.arm();
  };

  /** A batch filled up last time: more is likely queued, so read again after the event loop's I/O, without a poll. */
  private readonly resume = (): void => {
    this.resuming = false;
    if (this.state === 'reading') this.service();
  };

  /** Drains a batch, then waits again: through setImmediate when the batch was full, through poll() when the TUN ran dry. */
  private service(): void {
    let fault: TunError | undefined;
    let full = false;
    try {
      fault = this.drain();
      full = this.batchWasFull;
    } finally {
      if (fault !== undefined) this.fail(fault);
      else if (this.state === 'reading') {
        if (full) {
          this.resuming = true;
          setImmediate(this.resume);
        } else this.arm();
      }
    }
  }

  /** Reads up to a batch without blocking and delivers it. Returns a fault that must stop the reader. */
  private drain(): TunError | undefined {
    const { batch, slots, maxPacketBytes, counters, l } = this;
    const slotBytes = maxPacketBytes + 1;
    const fd = this.fd;
    const max = slots.length;
    let n = 0;
    let bytes = 0;
    let fault: TunError | undefined;
    this.batchWasFull = false;
    while (n < max) {
      const r = l.read(fd, slots[n]!, slotBytes);
      if (r < 0) {
        const e = l.koffi.errno();
        if (e === l.EAGAIN) break;
        if (e === l.EINTR) continue;
        counters.rxErrors++;
        fault = new TunError('TUN_READ_FAILED', `read() from TUN device "${this.name}" failed with ${this.errnoName(e)}`, this.errnoName(e));
        break;
      }
      if (r === 0) break;
      if (r > maxPacketBytes) {
        counters.rxErrors++; // truncated to the slot: dropped
        continue;
      }
      batch.lengths[n] = r;
      bytes += r;
      n++;
    }
    this.batchWasFull = n === max;
    if (n > 0) {
      counters.rxPackets += n;
      counters.rxBytes += bytes;
      counters.rxBatches++;
      batch.count = n;
      try {
        this.onBatch?.(batch);
      } finally {
        batch.count = 0;
      }
    }
    return fault;
  }

  private fail(e: TunError): void {
    const onError = this.onError;
    if (this.state === 'reading') this.state = 'open';
    if (onError !== undefined) onError(e);
    else
      process.nextTick(() => {
        throw e;
      });
  }

  private errnoName(e: number): string {
    return this.l.errnoNames.get(e) ?? `errno ${e}`;
  }
}
