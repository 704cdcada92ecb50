import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { MonitorError, MonitorServer, parseListen, REFUSAL_LOG_LINES } from '../../src/monitor/server.js';
import { MonitorTestView, testGatewayConfig } from '../support/monitor-view.js';
import { StreamClient, startMonitor, testLogger } from './stream-client.js';

/** Everything a test started, stopped at the end whatever happened. */
const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});

async function monitor(...args: Parameters<typeof startMonitor>): ReturnType<typeof startMonitor> {
  const m = await startMonitor(...args);
  cleanup.push(() => m.server.stop());
  return m;
}

async function client(url: string, opts: Parameters<typeof StreamClient.open>[1] = {}): Promise<StreamClient> {
  const c = await StreamClient.open(url, opts);
  cleanup.push(() => c.close());
  return c;
}

describe('monitor server: the stream', () => {
  test('hello, then the history as binary frames, then a state, then live frames and events', async () => {
    const { view, server, url } = await monitor({ statePeriodMs: 60_000 });
    for (let i = 0; i < 5; i++) view.pushRound();
    const c = await client(url);
    await c.until('hello, 5 frames and a state', () => c.messages.length >= 7);

    const [first, ...rest] = c.messages;
    assert.ok(first?.kind === 'json' && first.msg.type === 'hello', `the first message is the hello (got ${JSON.stringify(first)})`);
    const hello = first.msg;
    assert.equal(hello.protocol, 1);
    assert.deepEqual(hello.node, { id: 1, name: 'rooftop-1' });
    assert.deepEqual(hello.channels, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    assert.equal(hello.configVersion, view.configVersion());
    assert.equal(hello.history, 5);
    assert.equal(hello.capacityBps, 2e6);
    assert.equal(hello.statePeriodMs, 60_000);
    assert.deepEqual(
      rest.slice(0, 5).map((m) => (m.kind === 'frame' ? m.frame.round : m.msg.type)),
      [1, 2, 3, 4, 5],
      'the history, oldest first',
    );
    const state = rest[5];
    assert.ok(state?.kind === 'json' && state.msg.type === 'state', 'a state right after the history');

    const s = view.pushRound();
    await c.until('round 6 and its R1 event', () => c.json('event').some((e) => e.kind === 'r1'));
    const afterState = c.messages.slice(7);
    assert.ok(afterState[0]?.kind === 'frame' && afterState[0].frame.round === 6, 'the live frame first');
    assert.equal(afterState[0].bytes, 24 + 11 * 24);
    assert.equal(afterState[0].frame.channels.length, 11);
    assert.equal(afterState[0].frame.channels[5]!.rcBps, Math.fround(s.channels[5]!.rcBps));
    const r1 = afterState[1];
    assert.ok(r1?.kind === 'json' && r1.msg.type === 'event' && r1.msg.kind === 'r1', 'then the R1 decision as an event');
    assert.equal(typeof r1.msg.atUs, 'number');
    assert.equal(typeof r1.msg.reason, 'string');
    assert.ok(
      c.json().every((m) => m.type !== 'spectrum' && m.kind !== 'spectrum'),
      'spectra never go as JSON',
    );
    assert.deepEqual(c.badFrames, [], 'every binary message parses');
    assert.equal(server.counters.framesSent, 6);
  });

  test('the history keeps the last 120 rounds; a round told twice is framed once', async () => {
    const { view, url, server } = await monitor({ statePeriodMs: 60_000 });
    for (let i = 0; i < 130; i++) view.pushRound();
    view.emit({ kind: 'spectrum', atUs: view.now(), spectrum: view.spectrum()! });
    const c = await client(url);
    await c.until('hello and 120 frames', () => c.frames.length >= 120);
    assert.equal(c.json('hello')[0]?.history, 120);
    assert.equal(c.frames[0]!.round, 11, 'the oldest kept');
    assert.equal(c.frames.at(-1)!.round, 130, 'the newest');
    assert.equal(server.counters.history, 120);
  });

  test('a router that already sensed: its latest round is in the history from the start', async () => {
    const view = new MonitorTestView();
    view.pushRound();
    view.pushRound();
    const { url } = await monitor({ statePeriodMs: 60_000 }, {}, view);
    const c = await client(url);
    await c.until('one frame', () => c.frames.length >= 1);
    assert.equal(c.json('hello')[0]?.history, 1);
    assert.equal(c.frames[0]!.round, 2);
  });

  test('state every statePeriodMs, with status, queues, neighbours, routes, VNFs and flows; unknowns as null', async () => {
    const { view, url } = await monitor({ statePeriodMs: 50 });
    view.pushRound();
    const c = await client(url);
    const t0 = Date.now();
    await c.until('4 states', () => c.json('state').length >= 4);
    assert.ok(Date.now() - t0 >= 100, 'periodic, not a burst');
    const st = c.json('state').at(-1)!;
    for (const k of ['atUs', 'status', 'queues', 'neighbours', 'routes', 'vnfs', 'flows', 'gateway']) assert.ok(k in st, `state has ${k}`);
    const status = st.status as { node: unknown; r1: { channel: unknown }; r3: { channel: unknown } };
    assert.deepEqual(status.node, { id: 1, name: 'rooftop-1' });
    assert.equal(status.r3.channel, 3);
    assert.equal(typeof status.r1.channel, 'number');
    const routes = st.routes as Array<{
      dst: number;
      chosen: number | null;
      paths: Array<{ hopCount: number; pathCost: number; chosen: boolean }>;
      deleteAtUs: unknown;
    }>;
    assert.equal(routes.length, 4);
    assert.deepEqual(
      routes.find((r) => r.dst === 4)!.paths.map((p) => [p.hopCount, p.pathCost]),
      [
        [2, 2.31],
        [3, 3.47],
      ],
    );
    const lost = routes.find((r) => r.dst === 9)!;
    assert.equal(lost.chosen, null, 'an undefined field is sent as null');
    assert.ok('chosen' in lost, 'and is present');
    assert.equal((st.vnfs as Array<{ type: string }>)[0]?.type, 'tcp-acc');
    assert.equal((st.neighbours as unknown[]).length, 3);
    assert.equal((st.queues as unknown[]).length, 3);
    assert.equal((st.flows as unknown[]).length, 2);
  });

  test("state carries the gateway role's clients, slices and graph; null when the router does not have the role", async () => {
    const { url } = await monitor({ statePeriodMs: 60_000 });
    const off = await client(url);
    await off.until('a state', () => off.json('state').length >= 1);
    const st = off.json('state')[0]!;
    assert.ok('gateway' in st && st.gateway === null, 'no role: gateway is null');

    const view = new MonitorTestView({ gateway: testGatewayConfig() });
    const role = view.gatewayRole!;
    for (let i = 0; i < 4; i++) assert.ok(role.offer(0, i, 1200, view.now()));
    role.offer(2, 9, 800, view.now());
    const gw = await monitor({ statePeriodMs: 60_000 }, {}, view);
    const c = await client(gw.url);
    await c.until('a state', () => c.json('state').length >= 1);
    const g = c.json('state')[0]!.gateway as {
      periodMs: number;
      mode: string;
      clients: Array<{ id: string; prefix: string; router: number; queuePackets: number; queueBytes: number; share: number; lastDecision: unknown }>;
      slices: Array<{ clients: string[]; share: number }>;
      graph: Array<{ a: string; b: string; kind: string }>;
    };
    assert.equal(g.periodMs, 100);
    assert.equal(g.mode, 'computed');
    assert.deepEqual(
      g.clients.map((x) => [x.id, x.prefix, x.router, x.queuePackets, x.queueBytes, x.share]),
      [
        ['sta1', '10.0.2.0/25', 2, 4, 4800, 0.5],
        ['sta2', '10.0.2.128/25', 2, 0, 0, 0.5],
        ['sta3', '10.0.4.0/24', 4, 1, 800, 1],
      ],
    );
    assert.equal(g.clients[0]!.lastDecision, null, 'no decision yet: null, and present');
    assert.deepEqual(g.slices, [
      { clients: ['sta1', 'sta3'], share: 0.5 },
      { clients: ['sta2', 'sta3'], share: 0.5 },
    ]);
    assert.deepEqual(g.graph, [{ a: 'sta1', b: 'sta2', kind: 'same-ap' }]);
    assert.deepEqual(g, JSON.parse(JSON.stringify(view.gateway(), (_k, x: unknown) => (x === undefined ? null : x))), "the role's state as it is");
  });

  test('r1, r2, config, VNF and neighbour telemetry go out as events', async () => {
    const { view, url, server } = await monitor({ statePeriodMs: 60_000 });
    const c = await client(url);
    await c.until('hello', () => c.json('hello').length === 1);
    view.emit({ kind: 'r1', atUs: 1, channel: 11, changed: true, reason: 'better' });
    view.emit({ kind: 'r2', atUs: 2, channel: undefined });
    view.emit({ kind: 'config', atUs: 3, version: 'abc', changed: ['sensing.periodMs'] });
    await view.startVnf('tcp-acc', { proto: 'tcp' }, {});
    view.emit({ kind: 'neighbour', atUs: 5, addr: 7, up: false });
    await c.until('5 events', () => c.json('event').length >= 5);
    assert.deepEqual(c.json('event'), [
      { type: 'event', kind: 'r1', atUs: 1, channel: 11, changed: true, reason: 'better' },
      { type: 'event', kind: 'r2', atUs: 2, channel: null },
      { type: 'event', kind: 'config', atUs: 3, version: 'abc', changed: ['sensing.periodMs'] },
      { type: 'event', kind: 'vnf', atUs: view.now(), event: { kind: 'started', id: 2, type: 'tcp-acc', atUs: view.now() } },
      { type: 'event', kind: 'neighbour', atUs: 5, addr: 7, up: false },
    ]);
    assert.equal(server.counters.eventsSent, 5);
  });

  test('several clients at once each get every frame; a closed one leaves the rest going', async () => {
    const { view, url, server } = await monitor({ statePeriodMs: 60_000 });
    view.pushRound();
    const cs = await Promise.all([client(url), client(url), client(url)]);
    await Promise.all(cs.map((c) => c.until('history', () => c.frames.length >= 1)));
    assert.equal(server.counters.clients, 3);
    for (let i = 0; i < 10; i++) view.pushRound();
    await Promise.all(cs.map((c) => c.until('11 frames', () => c.frames.length >= 11)));
    for (const c of cs)
      assert.deepEqual(
        c.frames.map((f) => f.round),
        Array.from({ length: 11 }, (_, i) => i + 1),
        'every round, in order',
      );
    await cs[0]!.close();
    await cs[1]!.until('the server sees the close', () => server.counters.clients === 2);
    view.pushRound();
    await Promise.all(cs.slice(1).map((c) => c.until('round 12', () => c.frames.length >= 12)));
    assert.equal(server.counters.connections, 3);
    assert.equal(server.counters.framesSkipped, 0);
  });

  test('messages from clients are ignored and counted', async () => {
    const { view, url, server } = await monitor({ statePeriodMs: 60_000 });
    const c = await client(url);
    await c.until('hello', () => c.json('hello').length === 1);
    c.ws.send('{"type":"subscribe"}');
    c.ws.send(Buffer.from([1, 2, 3]));
    c.ws.send('hello?');
    await c.until('the server counts them', () => server.counters.clientMessages === 3);
    view.pushRound();
    await c.until('still streaming', () => c.frames.length === 1);
    assert.equal(c.closed, undefined, 'the connection stays up');
  });

  test('a slow client skips frames instead of growing memory; a fast one misses nothing', async () => {
    const max = 64 * 1024;
    const { view, url, server } = await monitor({ statePeriodMs: 60_000 }, { maxBufferedBytes: max });
    const fast = await client(url);
    // A raw client that completes the handshake and then stops reading.
    const { port } = new URL(url);
    const slow: Socket = connect(Number(port), '127.0.0.1');
    cleanup.push(() => void slow.destroy());
    await once(slow, 'connect');
    slow.write(
      `GET /stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    const [head] = (await once(slow, 'data')) as [Buffer];
    assert.ok(head.toString('latin1').startsWith('HTTP/1.1 101'), `the slow client is upgraded: ${head.toString('latin1').split('\r\n')[0]}`);
    slow.pause();
    await fast.until('both connected', () => server.counters.clients === 2);

    let pushed = 0;
    while (server.counters.framesSkipped === 0 && pushed < 200_000) {
      for (let i = 0; i < 200; i++) view.pushRound();
      pushed += 200;
      await new Promise((r) => setImmediate(r));
    }
    assert.ok(server.counters.framesSkipped > 0, `frames were skipped after ${pushed} rounds`);
    for (let i = 0; i < 2000; i++) view.pushRound();
    pushed += 2000;
    const info = server.clients();
    const slowInfo = info.find((c) => c.skipped > 0);
    assert.ok(slowInfo, `one client skipped: ${JSON.stringify(info)}`);
    assert.ok(slowInfo.bufferedAmount <= max + 4096, `its queue stays bounded (${slowInfo.bufferedAmount} bytes)`);
    assert.equal(info.filter((c) => c.skipped > 0).length, 1, 'only the slow one');
    await fast.until('the fast client has every round', () => fast.frames.length === pushed, 20_000);
    assert.equal(fast.frames.at(-1)!.round, pushed);
  });
});

/** Sends a raw HTTP request and returns the status code of the answer. */
function rawStatus(port: number, request: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(request));
    s.once('data', (d) => {
      s.destroy();
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(d.toString())?.[1] ?? 0));
    });
    s.once('error', reject);
  });
}

describe('monitor server: access', () => {
  test('with a token: the stream and the page need ?token=', async () => {
    const { view, url, server } = await monitor({ token: 's3cret token', statePeriodMs: 60_000 });
    view.pushRound();
    assert.equal(await StreamClient.refusal(url), 401, 'no token');
    assert.equal(await StreamClient.refusal(url, { token: 'guess' }), 401, 'a wrong token');
    assert.equal(await StreamClient.refusal(url, { token: 's3cret' }), 401, 'a prefix of the token');
    const c = await client(url, { token: 's3cret token' });
    await c.until('hello and the history', () => c.frames.length === 1);

    const page = await fetch(url);
    assert.equal(page.status, 401, 'the page without the token');
    await page.text();
    const ok = await fetch(`${url}?token=${encodeURIComponent('s3cret token')}`);
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(ok.headers.get('referrer-policy'), 'no-referrer', 'the token stays out of Referer');
    const html = await ok.text();
    assert.ok(html.includes('<canvas id="power"'), 'the page');
    assert.equal(server.counters.refused, 4);
    assert.equal(server.counters.pagesServed, 1);
  });

  test('refused streams: every one counted, a few lines logged, the last saying the rest are not', async () => {
    const { url, server, lines } = await monitor({ token: 'Zq8vXw4Ty6Rb1Nm0Lk2Jh_', statePeriodMs: 60_000 });
    for (let i = 0; i < 12; i++) assert.equal(await StreamClient.refusal(url, { token: `guess-${i}` }), 401);
    assert.equal(server.counters.refused, 12);
    const logged = lines().filter((l) => l.event === 'monitor-refused');
    assert.equal(logged.length, REFUSAL_LOG_LINES);
    assert.match(String(logged.at(-1)!.msg), /further connections closed or streams refused in the next \d+ s are counted, not logged\)$/);
  });

  test('at most monitor.maxConnections connections: one more is closed as it arrives and counted; once one leaves, another gets in', async () => {
    const { url, server, lines } = await monitor({ maxConnections: 2, statePeriodMs: 60_000 });
    const a = await client(url);
    const b = await client(url);
    await a.until('hello', () => a.json('hello').length === 1);
    await b.until('hello', () => b.json('hello').length === 1);
    // A third connection, even one that sends nothing, is closed at once.
    const { port } = new URL(url);
    const extra = connect(Number(port), '127.0.0.1');
    cleanup.push(() => void extra.destroy());
    await once(extra, 'close');
    assert.equal(server.counters.connectionsDropped, 1);
    assert.equal(server.counters.clients, 2, 'the streams in place are kept');
    assert.ok(lines().some((l) => l.event === 'monitor-connection-dropped' && l.maxConnections === 2));
    await a.close();
    // The server counts the connection gone once its socket has closed: try until it has.
    let c: StreamClient | undefined;
    for (let i = 0; i < 100 && c === undefined; i++)
      c = await StreamClient.open(url).catch(() => new Promise<undefined>((r) => setTimeout(() => r(undefined), 20)));
    assert.ok(c, 'a new stream once one left');
    cleanup.push(() => c.close());
    await c.until('hello', () => c.json('hello').length === 1);
  });

  test('without a token the page and stream are open on loopback; a foreign Origin is refused', async () => {
    const { url } = await monitor({ statePeriodMs: 60_000 });
    const page = await fetch(url);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /^<!doctype html>/);
    const host = new URL(url).host;
    assert.equal(await StreamClient.refusal(url, { headers: { Origin: 'http://evil.example' } }), 403, 'another site cannot read the router through a browser');
    const c = await client(url, { headers: { Origin: `http://${host}` } });
    await c.until('hello', () => c.json('hello').length === 1);
  });

  test('without a token, a request naming another host (a DNS-rebound name) is refused, page and stream', async () => {
    const { url } = await monitor({ statePeriodMs: 60_000 });
    const port = new URL(url).port;
    const rebound = `rebind.evil.example:${port}`;
    assert.equal(await rawStatus(Number(port), `GET / HTTP/1.1\r\nHost: ${rebound}\r\n\r\n`), 421);
    assert.equal(
      await StreamClient.refusal(url, { headers: { Host: rebound, Origin: `http://${rebound}` } }),
      421,
      'Origin and Host agree, but the host is not this monitor',
    );
    assert.equal(await rawStatus(Number(port), `GET / HTTP/1.1\r\nHost: localhost:${port}\r\n\r\n`), 200);
  });

  test('a request line that is no URL gets 400, and the router goes on', async () => {
    const { url, server } = await monitor({ statePeriodMs: 60_000 });
    const port = Number(new URL(url).port);
    assert.equal(await rawStatus(port, `GET http://[/ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`), 400);
    assert.equal(
      await rawStatus(
        port,
        `GET http://[/ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      ),
      400,
    );
    assert.equal((await fetch(url)).status, 200, 'still serving');
    assert.ok(server.counters.refused >= 2, 'counted');
  });

  test('other paths and methods', async () => {
    const { url } = await monitor({ statePeriodMs: 60_000 });
    const get = async (path: string, init?: RequestInit): Promise<number> => {
      const r = await fetch(new URL(path, url), init);
      await r.text();
      return r.status;
    };
    assert.equal(await get('/stream'), 426, '/stream without an upgrade');
    assert.equal(await get('/nope'), 404);
    assert.equal(await get('/', { method: 'POST', body: 'x' }), 405);
    assert.equal(await StreamClient.refusal(new URL('/other/', url).href), 404, 'an upgrade elsewhere than /stream');
  });
});

describe('monitor server: lifecycle', () => {
  test('start reports the real URL; stop closes every client (1001) and unsubscribes', async () => {
    const { view, server, url, lines } = await startMonitor({ statePeriodMs: 60_000 });
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    assert.notEqual(new URL(url).port, '0');
    assert.ok(
      lines().some((l) => l.msg === `monitor on ${url}`),
      'the URL is logged',
    );
    assert.equal(view.subscribers, 1);
    const c = await StreamClient.open(url);
    await c.until('hello', () => c.json('hello').length === 1);
    await server.stop();
    await c.until('closed', () => c.closed !== undefined);
    assert.equal(c.closed?.code, 1001);
    assert.equal(view.subscribers, 0, 'no longer subscribed');
    await server.stop();
    await assert.rejects(fetch(url), 'nothing listens any more');
    await assert.rejects(server.start(), (e: unknown) => e instanceof MonitorError && e.code === 'MONITOR_STATE');
  });

  test('a port already in use: MONITOR_ADDRESS_IN_USE naming the monitor.listen setting and the address', async () => {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    cleanup.push(() => new Promise<void>((r) => taken.close(() => r())));
    const listen = `127.0.0.1:${(taken.address() as AddressInfo).port}`;
    const view = new MonitorTestView();
    const server = new MonitorServer(view, { listen, token: '', statePeriodMs: 500, maxConnections: 32 }, testLogger().log);
    await assert.rejects(server.start(), (e: unknown) => {
      assert.ok(e instanceof MonitorError, String(e));
      assert.equal(e.code, 'MONITOR_ADDRESS_IN_USE');
      assert.ok(e.message.includes(listen), e.message);
      assert.ok(e.message.startsWith('monitor.listen: '), `names the setting: ${e.message}`);
      return true;
    });
    assert.equal(view.subscribers, 0, 'a monitor that did not start follows nothing');
    await server.stop();
  });

  test('stop() while start() waits for the socket: start fails, nothing is left listening', async () => {
    const view = new MonitorTestView();
    const server = new MonitorServer(view, { listen: '127.0.0.1:0', token: '', statePeriodMs: 500, maxConnections: 32 }, testLogger().log);
    const refused = assert.rejects(server.start(), (e: unknown) => e instanceof MonitorError && e.code === 'MONITOR_STATE');
    await server.stop();
    await refused;
    assert.equal(view.subscribers, 0);
  });

  test('beyond loopback without a token: it starts, with a warning', async () => {
    const { url, lines } = await monitor({ listen: '0.0.0.0:0', statePeriodMs: 60_000 });
    assert.match(url, /^http:\/\/0\.0\.0\.0:\d+\/$/);
    assert.ok(
      lines().some((l) => l.level === 40 && String(l.msg).includes('no monitor.token')),
      'a warning',
    );
  });

  test('off, or a listen address that is not host:port', async () => {
    const log = testLogger().log;
    await assert.rejects(
      new MonitorServer(new MonitorTestView(), { listen: '', token: '', statePeriodMs: 500, maxConnections: 32 }, log).start(),
      (e: unknown) => e instanceof MonitorError && e.code === 'MONITOR_OFF',
    );
    await assert.rejects(
      new MonitorServer(new MonitorTestView(), { listen: 'localhost', token: '', statePeriodMs: 500, maxConnections: 32 }, log).start(),
      (e: unknown) => e instanceof MonitorError && e.code === 'MONITOR_BAD_LISTEN',
    );
    assert.deepEqual(parseListen('[::1]:8080'), { host: '::1', port: 8080 });
    assert.deepEqual(parseListen('0.0.0.0:0'), { host: '0.0.0.0', port: 0 });
    assert.throws(
      () => parseListen('127.0.0.1:70000'),
      (e: unknown) => e instanceof MonitorError && e.code === 'MONITOR_BAD_LISTEN',
    );
  });

  test('a router whose state cannot be read: the stream goes on, one warning', async () => {
    const view = new MonitorTestView();
    const { url, lines } = await monitor({ statePeriodMs: 50 }, {}, view);
    view.status = () => {
      throw new Error('router stopping');
    };
    const c = await client(url);
    await c.until('hello', () => c.json('hello').length === 1);
    await new Promise((r) => setTimeout(r, 200));
    view.pushRound();
    await c.until('a frame', () => c.frames.length === 1);
    assert.equal(c.json('state').length, 0);
    assert.equal(lines().filter((l) => String(l.msg).includes('state cannot be read')).length, 1, 'warned once');
  });
});
