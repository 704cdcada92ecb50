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
});
