import net from 'node:net';
import type { Duplex } from 'node:stream';
import { encodeLink, parseDown, type DownMessage, type UpMessage } from '../../radio/medium/link.js';
import { MessageReader } from '../../radio/medium/transport.js';

/** A station speaking the medium's link by hand: what it says, what the medium said to it. */
export interface RawStation {
  say: (...ms: UpMessage[]) => void;
  inbox: DownMessage[];
  close: () => void;
}

/**
 * A station that speaks the medium's link by hand over its Unix socket, as
 * an attacker's program would: it can claim any address and send anything.
 */
export async function rawStation(path: string): Promise<RawStation> {
  const c = net.connect({ path });
  await new Promise((r) => c.once('connect', r));
  return rawLink(c);
}

/** The link spoken by hand over a connection (a socket, or a CURVE link); `inbox` collects what the medium says. */
export function rawLink(c: Duplex): RawStation {
  const reader = new MessageReader();
  const inbox: DownMessage[] = [];
  c.on('data', (chunk: Buffer) => {
    const got = reader.push(chunk);
    if (!(got instanceof Error)) for (const m of got) inbox.push(...parseDown(m).messages);
  });
  const say = (...ms: UpMessage[]): void => {
    const body = encodeLink(...ms);
    const out = new Uint8Array(4 + body.byteLength);
    new DataView(out.buffer).setUint32(0, body.byteLength);
    out.set(body, 4);
    c.write(out);
  };
  return { say, inbox, close: () => c.destroy() };
}
