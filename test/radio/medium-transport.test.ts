import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { LinkOutbox } from '../../radio/medium/outbox.js';
import { RemoteMedium } from '../../radio/medium/remote.js';
import { PacedEngine } from '../../src/core/paced.js';
import { createLogger } from '../../src/core/log.js';
import { encodeLink, parseUp, type LinkMessage } from '../../radio/medium/link.js';
import { connectLink, linkEndpointText, listenLink, MAX_LINK_MESSAGE, MessageReader, parseLinkEndpoint } from '../../radio/medium/transport.js';
import { until } from '../support/until.js';

const lengthPrefixed = (...msgs: Uint8Array[]): Buffer => {
  const parts: number[] = [];
  for (const m of msgs) parts.push(m.byteLength >>> 24, (m.byteLength >>> 16) & 255, (m.byteLength >>> 8) & 255, m.byteLength & 255, ...m);
  return Buffer.from(parts);
};

describe('the medium link transport', () => {
  test('endpoints: ipc paths and tcp host:port read back; bad ones are refused with what is wrong', () => {
    for (const t of ['ipc:///run/cogmesh/medium', 'tcp://127.0.0.1:7600', 'tcp://[::1]:7600', 'tcp://medium.lan:1']) {
      assert.equal(linkEndpointText(parseLinkEndpoint(t)), t);
    }
    assert.deepEqual(parseLinkEndpoint('tcp://*:7600'), { kind: 'tcp', host: '0.0.0.0', port: 7600 });
    const bad: Array<[string, RegExp]> = [
      ['ipc://', /no socket path/],
      [`ipc:///${'x'.repeat(120)}`, /longer than a Unix socket allows/],
      ['tcp://127.0.0.1', /not tcp:\/\/HOST:PORT/],
      ['tcp://127.0.0.1:0', /port 0/],
      ['tcp://127.0.0.1:70000', /port 70000/],
      ['inproc://medium', /not tcp:\/\/HOST:PORT or ipc:\/\/PATH/],
    ];
    for (const [t, re] of bad) assert.throws(() => parseLinkEndpoint(t), re, t);
  });

  test('a reader cuts a stream into messages however it is split, and refuses an impossible length', () => {
    const msgs = [Uint8Array.of(1), new Uint8Array(3000).fill(9), Uint8Array.of(2, 3), new Uint8Array(0)];
    const stream = lengthPrefixed(...msgs);
    for (const size of [1, 2, 3, 5, 7, 4096, stream.byteLength]) {
      const r = new MessageReader();
      const got: Buffer[] = [];
      for (let o = 0; o < stream.byteLength; o += size) {
        const out = r.push(stream.subarray(o, o + size));
        assert.ok(!(out instanceof Error));
        got.push(...out);
      }
      assert.deepEqual(
        got.map((b) => [...b]),
        msgs.map((m) => [...m]),
        `chunks of ${size}`,
      );
    }
    const r = new MessageReader();
    const bad = Buffer.alloc(4);
    bad.writeUInt32BE(MAX_LINK_MESSAGE + 1);
    const e = r.push(bad);
    assert.ok(e instanceof Error && /not a cogmesh link/.test(e.message));
  });

  test('over a Unix socket: what is posted in one turn leaves in one write; a stale socket file is replaced', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cm-link-'));
    const path = join(dir, 'm');
    writeFileSync(path, ''); // left behind by a process that died
    const got: LinkMessage[] = [];
    let chunks = 0;
    const server = await listenLink({ kind: 'ipc', path }, (c) => {
      const r = new MessageReader();
      c.on('data', (chunk: Buffer) => {
        chunks++;
        const out = r.push(chunk);
        if (!(out instanceof Error)) for (const m of out) got.push(...parseUp(m).messages);
      });
    });
    const c = connectLink(parseLinkEndpoint(`ipc://${path}`));
    await new Promise((r) => c.once('connect', r));
    const box = new LinkOutbox();
    const sends: LinkMessage[] = Array.from({ length: 50 }, (_, i) => ({ t: 'send', st: 'r0/R2', seq: i, src: 0, dst: 1, payload: Uint8Array.of(i + 1) }));
    for (const m of sends) assert.ok(box.post(c, m));
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(got, sends);
    assert.equal(box.counters.batches, 1, 'one write');
    assert.equal(box.counters.messages, 50);
    assert.equal(chunks, 1);
    // A live server's socket is not taken over.
    await assert.rejects(
      listenLink({ kind: 'ipc', path }, () => undefined),
      (e: NodeJS.ErrnoException) => e.code === 'EADDRINUSE',
    );
    c.destroy();
    assert.equal(box.post(c, { t: 'beat' }), false, 'a closed socket takes nothing');
    assert.equal(box.counters.dropped, 1);
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
    assert.equal(parseUp(encodeLink({ t: 'beat' })).messages.length, 1);
  });

  test('what is posted inside a hold leaves at its outermost release, in one write, not at the end of the turn', async () => {
    const writes: Uint8Array[] = [];
    const peer = { writableLength: 0, destroyed: false, write: (d: Uint8Array) => writes.push(d) > 0 };
    const box = new LinkOutbox();
    box.hold();
    box.hold();
    box.post(peer, { t: 'beat' });
    box.post(peer, { t: 'beat' });
    box.release();
    assert.equal(writes.length, 0, 'an inner release writes nothing');
    box.release();
    assert.equal(writes.length, 1, 'the outer release writes at once');
    assert.equal(parseUp(writes[0]!.subarray(4)).messages.length, 2);
    box.release(); // unbalanced: nothing staged, nothing written
    await new Promise((r) => setImmediate(r));
    assert.equal(writes.length, 1, 'no write of its own at the end of the turn');
    box.post(peer, { t: 'beat' });
    await new Promise((r) => setImmediate(r));
    assert.equal(writes.length, 2, 'outside a hold, the end of the turn flushes');
    assert.deepEqual(box.counters, { messages: 3, batches: 2, dropped: 0 });
  });

  test('with onData, each read comes as a copy of its own (the read buffer is reused), and the end still closes the socket', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cm-link-'));
    const path = join(dir, 'm');
    let peer: net.Socket | undefined;
    const server = await listenLink({ kind: 'ipc', path }, (c) => (peer = c));
    const chunks: Buffer[] = [];
    const c = connectLink({ kind: 'ipc', path }, (chunk) => chunks.push(chunk));
    let data = 0;
    c.on('data', () => data++);
    await new Promise((r) => c.once('connect', r));
    await until('the medium to take the connection', async () => peer, 5000, 5);
    const first = new Uint8Array(3000).fill(1);
    const second = new Uint8Array(70_000).fill(2); // more than one read takes
    peer!.write(first);
    await until('the first read', async () => (chunks.length === 1 ? true : undefined), 5000, 5);
    peer!.write(second);
    await until(
      'both writes read',
      async () => (chunks.reduce((n, b) => n + b.byteLength, 0) === first.byteLength + second.byteLength ? true : undefined),
      5000,
      5,
    );
    assert.ok(chunks[0]!.byteLength === first.byteLength && chunks[0]!.every((x) => x === 1), 'the first read, untouched by the later ones');
    assert.ok(chunks.length > 2, 'the second write took more than one read');
    assert.ok(
      chunks.slice(1).every((b) => b.every((x) => x === 2)),
      'the later reads',
    );
    assert.equal(data, 0, 'no data events');
    const closed = new Promise((r) => c.once('close', r));
    peer!.end();
    await closed;
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  test('over TCP on a port of its own', async () => {
    const server = await listenLink({ kind: 'tcp', host: '127.0.0.1', port: await freePort() }, (c) => c.pipe(c));
    const port = (server.address() as net.AddressInfo).port;
    const c = connectLink({ kind: 'tcp', host: '127.0.0.1', port });
    const r = new MessageReader();
    const back = new Promise<Buffer[]>((resolve) => c.on('data', (chunk: Buffer) => resolve(r.push(chunk) as Buffer[])));
    const box = new LinkOutbox();
    box.post(c, { t: 'beat' });
    const [m] = await back;
    assert.deepEqual(parseUp(m!).messages, [{ t: 'beat' }]);
    c.destroy();
    await new Promise<void>((res) => server.close(() => res()));
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

test('a router that finds no medium is refused with a clear error, and leaves nothing pending behind', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cm-nomedium-'));
  const log = createLogger({ level: 'warn', format: 'json', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
  try {
    await assert.rejects(
      RemoteMedium.connect({
        endpoint: `ipc://${join(dir, 'nobody')}`,
        node: 1,
        name: 'r1',
        position: { xM: 0, yM: 0 },
        paced: new PacedEngine(),
        log,
        joinTimeoutMs: 800,
      }),
      (e: Error & { code?: string }) => e.code === 'RADIO_NO_MEDIUM' && /no air medium answered at ipc:\/\/.*nobody within 800 ms/.test(e.message),
    );
    await assert.rejects(
      RemoteMedium.connect({ endpoint: 'udp://127.0.0.1:7600', node: 1, name: 'r1', position: { xM: 0, yM: 0 }, paced: new PacedEngine(), log }),
      /sim.medium.endpoint: "udp:\/\/127.0.0.1:7600" is not tcp:\/\/HOST:PORT or ipc:\/\/PATH/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
