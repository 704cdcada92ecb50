import net from 'node:net';
import { encodeLink, parseDown, type DownMessage, type UpMessage } from '../../radio/medium/link.js';
import { MessageReader } from '../../radio/medium/transport.js';

/**
 * A station that speaks the medium's link by hand over its Unix socket, as
 * an attacker's program would: it can claim any address and send anything.
 * `inbox` collects what the medium says to it.
 */
export async function rawStation(path: string): Promise<{ say: (...ms: UpMessage[]) => void; inbox: DownMessage[]; close: () => void }> {
  const c = net.connect({ path });
  const reader = new MessageReader();
  const inbox: DownMessage[] = [];
  c.on('data', (chunk: Buffer) => {
    const got = reader.push(chunk);
    if (!(got instanceof Error)) for (const m of got) inbox.push(...parseDown(m).messages);
  });
  await new Promise((r) => c.once('connect', r));
  const say = (...ms: UpMessage[]): void => {
    const body = encodeLink(...ms);
    const out = new Uint8Array(4 + body.byteLength);
    new DataView(out.buffer).setUint32(0, body.byteLength);
    out.set(body, 4);
    c.write(out);
  };
  return { say, inbox, close: () => c.destroy() };
}
