import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { ms, seconds } from '../../src/core/time.js';
import { lanPrefix4 } from '../../src/wire/addresses.js';
import { ipChecksum, parseIpAddress } from '../../src/wire/ip.js';
import { routersAt } from '../support/star.js';

/**
 * The gateway role in the router's IP plane, in virtual time: three routers
 * in a line, router 0 the gateway with one client, router 1's LAN, served
 * in the first 30 ms of every 100 ms frame at line rate. A host-side packet
 * for the client waits for the slice; one for router 2's LAN (no client)
 * goes at once.
 */
const ip4 = (t: string): Uint8Array => parseIpAddress(t)!;

function udp(src: string, dst: string): Uint8Array {
  const b = new Uint8Array(40);
  b.set([0x45, 0, 0, 40, 0, 1, 0x40, 0, 64, 17]);
  b.set(ip4(src), 12);
  b.set(ip4(dst), 16);
  const ck = ipChecksum(b, 0, 20);
  b[10] = ck >> 8;
  b[11] = ck & 0xff;
  b.set([0x13, 0x88, 0x13, 0x88, 0, 20, 0, 0], 20);
  return b;
}

describe('a gateway router holds a client’s host-side packets until its slice', () => {
  const toHost: Array<Array<{ at: number }>> = [[], [], []];
  const { engine, routers } = routersAt(
    toHost.map((_, i) => ({ xM: 200 * i, yM: 0 })),
    {
      seed: 5,
      config: (c, i) => ({
        ...c,
        ip: { ...c.ip, enabled: true, prefixes: [lanPrefix4(i)], announceIntervalMs: 1000 },
        ...(i === 0
          ? {
              gateway: {
                ...c.gateway,
                enabled: true,
                clients: [{ id: 'lan1', prefix: '10.0.1.0/24', router: 1 }],
                slicing: { periodMs: 100, mode: 'static' as const, static: [{ clients: ['lan1'], share: 0.3 }] },
                rate: { ...c.gateway.rate, rateMbps: 0 },
              },
            }
          : {}),
      }),
      extra: (i) => ({ toHost: () => void toHost[i]!.push({ at: engine.now() }) }),
    },
  );
  const gw = routers[0]!;
  const lan1 = () => gw.gateway.state()!.clients[0]!;

  before(() => engine.run(seconds(8)));

  test('a packet sent outside the slice leaves at the next frame’s start; one for no client at once', () => {
    // 8.05 s: 50 ms into a frame, past the client's 30 ms.
    engine.run(seconds(8) + ms(50));
    const sentAt = engine.now();
    gw.fromHost(udp('10.0.0.2', '10.0.1.2'), sentAt);
    gw.fromHost(udp('10.0.0.2', '10.0.2.2'), sentAt);
    assert.equal(lan1().queuePackets, 1);
    assert.equal(gw.gateway.state()!.unshaped, 1);
    engine.run(seconds(8) + ms(99));
    assert.equal(lan1().sent, 0, 'held through the rest of the frame');
    engine.run(seconds(8) + ms(100));
    assert.equal(lan1().sent, 1, 'sent at the frame’s start');
    engine.run(seconds(10));
    assert.equal(toHost[1]!.length, 1);
    assert.equal(toHost[2]!.length, 1);
    assert.ok(toHost[1]![0]!.at >= seconds(8) + ms(100), `the client's packet arrived at ${toHost[1]![0]!.at}`);
  });

  test('a graph given whole and scan reports reach the role through the router; static slices stand', () => {
    gw.gatewaySetGraph({ edges: [] }, engine.now());
    // Static mode: the configuration's slices stand whatever the graph.
    assert.equal(lan1().share, 0.3);
    assert.equal(gw.gatewayReport('lan1', new Map([[1, -50]]), engine.now()), false);
  });

  test('a live change keeps the counters of a client that keeps its id; the packet it held is counted once', () => {
    const cfg = gw.config;
    const live = (clients: Array<{ id: string; prefix: string; router: number }>, slices: Array<{ clients: string[]; share: number }>): void =>
      gw.reconfigure(
        { ...cfg, gateway: { ...cfg.gateway, clients, slicing: { ...cfg.gateway.slicing, static: slices } } },
        ['gateway.clients', 'gateway.slicing'],
        engine.now(),
      );
    const lan2 = { id: 'lan2', prefix: '10.0.2.0/24', router: 2 };
    // 10.06 s: 60 ms into a frame, past the client's slice before and after the change.
    engine.run(seconds(10) + ms(60));
    gw.fromHost(udp('10.0.0.2', '10.0.1.2'), engine.now());
    const before = { ...lan1() };
    const { unshaped, sliceChanges } = gw.gateway.state()!;
    assert.equal(before.queuePackets, 1);
    live(cfg.gateway.clients, [{ clients: ['lan1'], share: 0.5 }]);
    live(
      [...cfg.gateway.clients, lan2],
      [
        { clients: ['lan1'], share: 0.5 },
        { clients: ['lan2'], share: 0.3 },
      ],
    );
    const after = gw.gateway.state()!;
    const [l1, l2] = after.clients;
    assert.deepEqual(
      { enqueued: l1!.enqueued, sent: l1!.sent, dropped: l1!.dropped, bytes: l1!.bytes, queuePackets: l1!.queuePackets, share: l1!.share },
      { enqueued: before.enqueued, sent: before.sent, dropped: before.dropped, bytes: before.bytes, queuePackets: 1, share: 0.5 },
    );
    assert.deepEqual([l2!.id, l2!.enqueued, l2!.sent, l2!.queuePackets], ['lan2', 0, 0, 0]);
    assert.equal(after.unshaped, unshaped, 'the held packet went back to its client, not unshaped');
    assert.equal(after.sliceChanges, sliceChanges + 2);
    engine.run(seconds(10) + ms(100));
    assert.equal(lan1().sent, before.sent + 1, 'sent at the frame’s start, once');
    assert.equal(lan1().enqueued, before.enqueued);
    // A change that drops the client: its held packet goes on unshaped, lan2 keeps its counters.
    engine.run(seconds(10) + ms(160));
    gw.fromHost(udp('10.0.0.2', '10.0.2.2'), engine.now());
    gw.fromHost(udp('10.0.0.2', '10.0.1.2'), engine.now());
    const lan2Before = { ...gw.gateway.state()!.clients[1]! };
    assert.equal(lan2Before.enqueued, 1);
    live([lan2], [{ clients: ['lan2'], share: 0.3 }]);
    const dropped = gw.gateway.state()!;
    assert.deepEqual(
      dropped.clients.map((c) => [c.id, c.enqueued, c.queuePackets]),
      [['lan2', lan2Before.enqueued, lan2Before.queuePackets]],
    );
    assert.equal(dropped.unshaped, unshaped + 1);
  });
});
