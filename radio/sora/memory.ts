import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { FrontendError } from '../../src/core/errors.js';
import { HEADER_BYTES, headerProblem } from './layout.js';

/**
 * How the consumer reaches the ring file: mapped into memory through libc's
 * mmap (called with koffi; the samples are never copied on the way in), or,
 * when koffi cannot be loaded, read through the file descriptor (every read
 * is a copy by the kernel).
 */
export type RingAccess = 'mmap' | 'fs';

/**
 * How the 64-bit header words are loaded: `atomics` (Atomics.load/store on a
 * BigUint64Array over the mapping), `plain` (DataView loads over the mapping,
 * when Atomics refuse that memory), `pread` (a read(2) per word, fs access).
 */
export type WordAccess = 'atomics' | 'plain' | 'pread';

/**
 * The ring file as the consumer sees it. Header words are read and written
 * one at a time with the ordering the ring's protocol needs (see
 * docs/sora-ring.md, "Memory ordering"):
 *
 * - `atomics`: Atomics.load and Atomics.store are sequentially consistent.
 *   V8 compiles them to plain MOV / XCHG on x86-64 and LDAR / STLR on arm64,
 *   so a load is at least an acquire and a store at least a release, and the
 *   JIT moves no other memory access across them. A store followed by a load
 *   is ordered (XCHG is a full fence; STLR then LDAR is ordered on arm64).
 *   Atomics work on a non-shared ArrayBuffer as well: the buffer that koffi
 *   makes over external memory qualifies.
 * - `plain`: aligned 8-byte loads are single-copy atomic on 64-bit CPUs; on
 *   x86-64 (TSO) loads are not reordered with other loads nor stores with
 *   other stores, which is what the consumer needs except for its store
 *   -then-load check (read_index, then claim_index), which could then miss a
 *   claim: a copy torn by the producer could go unnoticed. Used only if
 *   Atomics refuse the mapping; `info.wordAccess` says so.
 * - `pread`: each word is one read(2) or write(2) system call; the kernel's
 *   entry and exit order them against the sample copies, which are further
 *   read(2) calls.
 */
export interface RingMemory {
  readonly access: RingAccess;
  readonly wordAccess: WordAccess;
  /** Why this access was chosen (e.g. why koffi could not be used). */
  readonly note: string;
  /** Whether the consumer may write its own header fields (tune requests, read index). */
  readonly writable: boolean;
  readonly fileBytes: number;
  /** The whole file as memory, for zero-copy views; undefined with fs access. */
  readonly buffer: ArrayBuffer | undefined;
  /** The header: a view into the mapping, or a fresh copy with fs access. */
  header(): DataView;
  load(offset: number): bigint;
  store(offset: number, value: bigint): void;
  /** Copies `dst.length` bytes of the file from `offset` (fs access; with a mapping, use `buffer`). */
  copyOut(offset: number, dst: Uint8Array): void;
  /** Writes `src` into the file at `offset` (fs access; with a mapping, write through `buffer`). */
  copyIn(offset: number, src: Uint8Array): void;
  close(): void;
}

export interface MapOptions {
  /** `auto` (default): mmap through koffi, else fs. `mmap`: koffi or fail. `fs`: read(2) only. */
  access?: 'auto' | RingAccess;
  /** Loads koffi; tests replace it. Default: `import('koffi')`. */
  importKoffi?: () => Promise<unknown>;
}

/** What a ring file's header must be: `problem` says why it is not, `what` names the kind of ring in errors. */
export interface RingKind {
  readonly what: string;
  readonly problem: (h: DataView, fileBytes: number) => string | undefined;
}

const RECEIVE_RING: RingKind = { what: 'a SORA sample ring', problem: headerProblem };

/** Opens the ring file at `path` and checks its header: RADIO_NO_DEVICE when it is missing, RADIO_BAD_RING when it is not a ring. */
export async function openRingMemory(path: string, opts: MapOptions = {}, kind: RingKind = RECEIVE_RING): Promise<RingMemory> {
  const want = opts.access ?? 'auto';
  let mem: RingMemory;
  if (want === 'fs') {
    mem = FileMemory.open(path, 'fs access asked for: samples are copied by read(2)');
  } else {
    const k = await loadLibc(opts.importKoffi);
    if ('reason' in k) {
      if (want === 'mmap') throw new FrontendError('RADIO_NO_MMAP', `${path}: cannot map the ring: ${k.reason}`);
      mem = FileMemory.open(path, `koffi unavailable (${k.reason}): samples are copied by read(2), not mapped`);
    } else {
      mem = MappedMemory.open(path, k);
    }
  }
  const problem = kind.problem(mem.header(), mem.fileBytes);
  if (problem !== undefined) {
    mem.close();
    throw new FrontendError('RADIO_BAD_RING', `${path} is not ${kind.what}: ${problem}`);
  }
  return mem;
}

// ---- mmap through koffi ----

// The parts of koffi used here; koffi is an optional dependency, imported by a
// computed specifier so that nothing here depends on its typings.
interface KoffiLib {
  func(signature: string): (...args: unknown[]) => unknown;
}
interface Koffi {
  load(name: string): KoffiLib;
  view(ptr: unknown, length: number): ArrayBuffer;
  errno(): number;
}

interface Libc {
  readonly koffi: Koffi;
  readonly open: (path: string, flags: number) => number;
  readonly close: (fd: number) => number;
  readonly mmap: (addr: unknown, length: number, prot: number, flags: number, fd: number, offset: number) => bigint | null;
  readonly munmap: (addr: unknown, length: number) => number;
  readonly strerror: (errnum: number) => string;
}

// Linux values (x86-64 and arm64 alike).
const O_RDONLY = 0;
const O_RDWR = 2;
const O_CLOEXEC = 0o2000000;
const PROT_READ = 1;
const PROT_WRITE = 2;
const MAP_SHARED = 0x01;
const MAP_PRIVATE = 0x02;
const MAP_FIXED = 0x10;
const MAP_ANONYMOUS = 0x20;
const MAP_POPULATE = 0x8000;
const ENOENT = 2;
const EACCES = 13;
const EROFS = 30;
const MAP_FAILED = 0xffffffffffffffffn;

const KOFFI_MODULE: string = 'koffi';
let libcPromise: Promise<Libc | { reason: string }> | undefined;

function loadLibc(importKoffi?: () => Promise<unknown>): Promise<Libc | { reason: string }> {
  if (importKoffi !== undefined) return bindLibc(importKoffi);
  libcPromise ??= bindLibc(() => import(KOFFI_MODULE));
  return libcPromise;
}

async function bindLibc(importKoffi: () => Promise<unknown>): Promise<Libc | { reason: string }> {
  if (process.platform !== 'linux') return { reason: `mmap flags are known for Linux only, this is ${process.platform}` };
  let koffi: Koffi;
  try {
    const mod = (await importKoffi()) as { default?: unknown; load?: unknown } | undefined;
    const k = (typeof mod?.load === 'function' ? mod : mod?.default) as Partial<Koffi> | undefined;
    if (typeof k?.load !== 'function' || typeof k.view !== 'function' || typeof k.errno !== 'function') throw new Error('the module is not koffi');
    koffi = k as Koffi;
  } catch (e) {
    return { reason: `koffi cannot be imported: ${messageOf(e)}` };
  }
  try {
    const lib = koffi.load('libc.so.6');
    return {
      koffi,
      // open is variadic (the mode follows O_CREAT); declared so, and called without a mode.
      open: lib.func('int open(const char *path, int flags, ...)') as Libc['open'],
      close: lib.func('int close(int fd)') as Libc['close'],
      mmap: lib.func('void *mmap(void *addr, size_t length, int prot, int flags, int fd, int64_t offset)') as Libc['mmap'],
      munmap: lib.func('int munmap(void *addr, size_t length)') as Libc['munmap'],
      strerror: lib.func('const char *strerror(int errnum)') as Libc['strerror'],
    };
  } catch (e) {
    return { reason: `libc.so.6 cannot be bound: ${messageOf(e)}` };
  }
}

/**
 * Mappings closed while a view into them may still be alive: the file mapping
 * was replaced by anonymous zero pages at close (so that a stale view reads
 * zeros rather than crashing the process), and the address range is unmapped
 * once the ArrayBuffer, and with it every view, has been collected.
 */
const unmapWhenCollected = new FinalizationRegistry<{ libc: Libc; ptr: bigint; bytes: number }>((m) => {
  m.libc.munmap(m.ptr, m.bytes);
});

class MappedMemory implements RingMemory {
  readonly access = 'mmap' as const;
  readonly wordAccess: WordAccess;
  readonly note: string;
  private readonly words: BigUint64Array;
  private readonly view: DataView;
  private readonly fileView: DataView;
  private mapped: ArrayBuffer | undefined;

  private constructor(
    private readonly libc: Libc,
    private readonly ptr: bigint,
    readonly fileBytes: number,
    readonly writable: boolean,
    readonly path: string,
  ) {
    const buffer = libc.koffi.view(ptr, fileBytes);
    this.mapped = buffer;
    // words anywhere in the file: the TX ring's burst records follow its header
    this.words = new BigUint64Array(buffer, 0, Math.floor(fileBytes / 8));
    this.view = new DataView(buffer, 0, HEADER_BYTES);
    this.fileView = new DataView(buffer);
    let atomics = true;
    try {
      Atomics.load(this.words, 0);
    } catch {
      atomics = false;
    }
    this.wordAccess = atomics ? 'atomics' : 'plain';
    this.note = `mmap of ${fileBytes} bytes through koffi (zero-copy)${writable ? '' : ', read-only (tuning unavailable)'}`;
    // If the ring is dropped without close(), unmap the file once nothing can reach it.
    unmapWhenCollected.register(buffer, { libc, ptr, bytes: fileBytes }, this);
  }

  static open(path: string, libc: Libc): MappedMemory {
    let writable = true;
    let fd = libc.open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      const e = libc.koffi.errno();
      if (e !== EACCES && e !== EROFS) throw openError(path, e, libc.strerror(e));
      writable = false;
      fd = libc.open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        const e2 = libc.koffi.errno();
        throw openError(path, e2, libc.strerror(e2));
      }
    }
    let size: number;
    let ptr: bigint | null;
    try {
      size = fstatSync(fd).size;
      if (size < HEADER_BYTES)
        throw new FrontendError('RADIO_BAD_RING', `${path} is not a SORA sample ring: ${size} bytes, shorter than the ${HEADER_BYTES}-byte header`);
      // MAP_POPULATE: fault the page tables in now rather than at the first lap (a fault per 4 KiB page costs the first reads several times over).
      ptr = libc.mmap(null, size, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED | MAP_POPULATE, fd, 0);
      if (ptr === null || ptr === MAP_FAILED) {
        const e = libc.koffi.errno();
        throw new FrontendError('RADIO_RING_IO', `${path}: mmap failed: ${libc.strerror(e)}`);
      }
    } finally {
      libc.close(fd); // the mapping keeps the file
    }
    return new MappedMemory(libc, ptr, size, writable, path);
  }

  get buffer(): ArrayBuffer | undefined {
    return this.mapped;
  }

  header(): DataView {
    return this.view;
  }

  load(offset: number): bigint {
    return this.wordAccess === 'atomics' ? Atomics.load(this.words, offset >>> 3) : this.fileView.getBigUint64(offset, true);
  }

  store(offset: number, value: bigint): void {
    if (!this.writable) throw new FrontendError('RADIO_RING_READ_ONLY', `${this.path}: the ring is mapped read-only`);
    if (this.wordAccess === 'atomics') Atomics.store(this.words, offset >>> 3, value);
    else this.fileView.setBigUint64(offset, value, true);
  }

  copyOut(offset: number, dst: Uint8Array): void {
    if (this.mapped === undefined) throw new FrontendError('RADIO_CLOSED', `${this.path}: the ring is closed`);
    dst.set(new Uint8Array(this.mapped, offset, dst.length));
  }

  copyIn(offset: number, src: Uint8Array): void {
    if (this.mapped === undefined) throw new FrontendError('RADIO_CLOSED', `${this.path}: the ring is closed`);
    if (!this.writable) throw new FrontendError('RADIO_RING_READ_ONLY', `${this.path}: the ring is mapped read-only`);
    new Uint8Array(this.mapped, offset, src.length).set(src);
  }

  close(): void {
    if (this.mapped === undefined) return;
    this.mapped = undefined;
    // Views handed out (peeks) may outlive the ring: swap the file's pages for
    // private zero pages in place, so that such a view reads zeros instead of
    // faulting, and unmap the range once the buffer is collected.
    const anon = this.libc.mmap(this.ptr, this.fileBytes, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (anon === null || anon === MAP_FAILED) {
      // Could not swap: keep the file mapped rather than risk a fault; the registry unmaps it later.
      return;
    }
  }
}

function openError(path: string, errno: number, text: string): FrontendError {
  return errno === ENOENT
    ? new FrontendError('RADIO_NO_DEVICE', `no SORA ring at ${path} (is the producer running?)`)
    : new FrontendError('RADIO_RING_IO', `${path}: cannot open the ring: ${text}`);
}

// ---- read(2) fallback ----

class FileMemory implements RingMemory {
  readonly access = 'fs' as const;
  readonly wordAccess = 'pread' as const;
  readonly buffer = undefined;
  private readonly word = new DataView(new ArrayBuffer(8));
  private readonly wordBytes = new Uint8Array(this.word.buffer);
  private fd: number | undefined;

  private constructor(
    fd: number,
    readonly fileBytes: number,
    readonly writable: boolean,
    readonly note: string,
    readonly path: string,
  ) {
    this.fd = fd;
  }

  static open(path: string, note: string): FileMemory {
    let fd: number;
    let writable = true;
    try {
      fd = openSync(path, 'r+');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw openError(path, ENOENT, 'no such file');
      if (code !== 'EACCES' && code !== 'EROFS') throw new FrontendError('RADIO_RING_IO', `${path}: cannot open the ring: ${messageOf(e)}`, { cause: e });
      writable = false;
      fd = openSync(path, 'r');
    }
    const size = fstatSync(fd).size;
    return new FileMemory(fd, size, writable, `${note}${writable ? '' : ', read-only (tuning unavailable)'}`, path);
  }

  private get handle(): number {
    if (this.fd === undefined) throw new FrontendError('RADIO_CLOSED', `${this.path}: the ring is closed`);
    return this.fd;
  }

  header(): DataView {
    const h = new Uint8Array(HEADER_BYTES);
    const n = Math.min(HEADER_BYTES, this.fileBytes);
    this.copyOut(0, h.subarray(0, n));
    return new DataView(h.buffer);
  }

  load(offset: number): bigint {
    this.copyOut(offset, this.wordBytes);
    return this.word.getBigUint64(0, true);
  }

  store(offset: number, value: bigint): void {
    if (!this.writable) throw new FrontendError('RADIO_RING_READ_ONLY', `${this.path}: the ring is open read-only`);
    this.word.setBigUint64(0, value, true);
    writeSync(this.handle, this.wordBytes, 0, 8, offset);
  }

  copyOut(offset: number, dst: Uint8Array): void {
    const fd = this.handle;
    let done = 0;
    while (done < dst.length) {
      const n = readSync(fd, dst, done, dst.length - done, offset + done);
      if (n <= 0) throw new FrontendError('RADIO_RING_IO', `${this.path}: short read at byte ${offset + done}`);
      done += n;
    }
  }

  copyIn(offset: number, src: Uint8Array): void {
    if (!this.writable) throw new FrontendError('RADIO_RING_READ_ONLY', `${this.path}: the ring is open read-only`);
    const fd = this.handle;
    let done = 0;
    while (done < src.length) done += writeSync(fd, src, done, src.length - done, offset + done);
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
