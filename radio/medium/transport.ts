import { unlink } from 'node:fs/promises';
import net from 'node:net';
import { UsageError } from '../../src/core/errors.js';

/**
 * Where the medium link runs: a Unix domain socket (`ipc:///run/cogmesh/medium`)
 * for processes on one machine, or TCP (`tcp://127.0.0.1:7600`,
 * `tcp://0.0.0.0:7600` to bind every address) for routers on a LAN. The
 * link is a plain stream socket: a send is one write() from the event loop's
 * thread, which costs about a third of a ZeroMQ message (whose I/O threads
 * add two thread wake-ups per message; measured in docs/testbed.md).
 */
export type LinkEndpoint = { kind: 'ipc'; path: string } | { kind: 'tcp'; host: string; port: number };

/** Reads an endpoint; a clear error names what is wrong with it. */
export function parseLinkEndpoint(text: string, what = 'medium endpoint'): LinkEndpoint {
  if (text.startsWith('ipc://')) {
    const path = text.slice('ipc://'.length);
    if (path === '') throw new UsageError(`${what}: "${text}" has no socket path (ipc:///run/cogmesh/medium)`);
    // sun_path holds 108 bytes with its terminating NUL.
    if (Buffer.byteLength(path) > 107) throw new UsageError(`${what}: the socket path of "${text}" is longer than a Unix socket allows (107 bytes)`);
    return { kind: 'ipc', path };
  }
  const m = /^tcp:\/\/(\[[0-9a-fA-F:.]+\]|[^:/\s]+):(\d{1,5})$/.exec(text);
  if (!m) throw new UsageError(`${what}: "${text}" is not tcp://HOST:PORT or ipc://PATH`);
  const port = Number(m[2]);
  if (port < 1 || port > 65535) throw new UsageError(`${what}: port ${m[2]} of "${text}" is not 1..65535`);
  const host = m[1]!.replace(/^\[|\]$/g, '');
  return { kind: 'tcp', host: host === '*' ? '0.0.0.0' : host, port };
}

/** The text of an endpoint, as `parseLinkEndpoint` reads it. */
export function linkEndpointText(e: LinkEndpoint): string {
  return e.kind === 'ipc' ? `ipc://${e.path}` : `tcp://${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}`;
}

/** How much one read of a link takes at most (`connectLink` with `onData`). */
const READ_BYTES = 64 * 1024;

/**
 * Connects to an endpoint (the socket's 'connect' or 'error' follows).
 * With `onData`, what arrives goes to it and not to 'data' events: each
 * read fills one buffer the socket keeps, and `onData` gets a copy of what
 * it read (the caller may hold it). A wake-up of a router then costs no
 * stream machinery (Readable's push, its 'data' event, its read-more tick)
 * and no 64 kB allocation per read; the end of the stream still ends and
 * closes the socket.
 */
export function connectLink(e: LinkEndpoint, onData?: (chunk: Buffer) => void): net.Socket {
  const onread = onData && {
    buffer: new Uint8Array(READ_BYTES),
    callback: (n: number, buf: Uint8Array): boolean => {
      onData(Buffer.from(buf.subarray(0, n)));
      return true;
    },
  };
  const s = e.kind === 'ipc' ? net.connect({ path: e.path, onread }) : net.connect({ host: e.host, port: e.port, onread });
  if (e.kind === 'tcp') s.setNoDelay(true);
  return s;
}

/**
 * Listens on an endpoint. A Unix socket file left by a process that died is
 * replaced; one that a live process answers on is not (EADDRINUSE).
 */
export async function listenLink(e: LinkEndpoint, onConnection: (s: net.Socket) => void): Promise<net.Server> {
  const server = net.createServer({ noDelay: true }, onConnection);
  const attempt = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const fail = (err: Error): void => reject(err);
      server.once('error', fail);
      const done = (): void => {
        server.off('error', fail);
        resolve();
      };
      if (e.kind === 'ipc') server.listen(e.path, done);
      else server.listen(e.port, e.host, done);
    });
  try {
    await attempt();
  } catch (err) {
    if (e.kind !== 'ipc' || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || (await answers(e.path))) throw err;
    await unlink(e.path).catch(() => undefined);
    await attempt();
  }
  return server;
}

/** Whether a process accepts connections on the Unix socket at `path`. */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ path });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** The largest link message a reader takes (a welcome with a large band is the longest; packets are a few kB). */
export const MAX_LINK_MESSAGE = 16 * 1024 * 1024;

/**
 * Cuts a byte stream into link messages: each is a 32-bit big-endian length
 * and that many bytes. A length beyond `MAX_LINK_MESSAGE` means the stream
 * cannot be trusted any more: `push` returns an error and the connection
 * must be closed.
 */
export class MessageReader {
  private chunks: Buffer[] = [];
  private have = 0;

  /** The whole messages that `chunk` completes, in order; or what broke the stream. */
  push(chunk: Buffer): Buffer[] | Error {
    this.chunks.push(chunk);
    this.have += chunk.byteLength;
    const out: Buffer[] = [];
    for (;;) {
      if (this.have < 4) return out;
      const head = this.chunks[0]!.byteLength >= 4 ? this.chunks[0]! : this.flatten();
      const len = head.readUInt32BE(0);
      if (len > MAX_LINK_MESSAGE) return new Error(`a link message of ${len} bytes announced, more than ${MAX_LINK_MESSAGE}: the stream is not a cogmesh link`);
      if (this.have < 4 + len) return out;
      const first = this.chunks[0]!.byteLength >= 4 + len ? this.chunks[0]! : this.flatten();
      out.push(first.subarray(4, 4 + len));
      const rest = first.subarray(4 + len);
      if (rest.byteLength > 0) this.chunks[0] = rest;
      else this.chunks.shift();
      this.have -= 4 + len;
    }
  }

  private flatten(): Buffer {
    const b = Buffer.alloc(this.have);
    let o = 0;
    for (const c of this.chunks) {
      b.set(c as ArrayLike<number>, o);
      o += c.byteLength;
    }
    this.chunks = [b];
    return b;
  }
}
