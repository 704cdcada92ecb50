import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { EventEngine } from '../../src/core/engine.js';
import { seconds } from '../../src/core/time.js';
import type { MeshRouter } from '../../src/router/router.js';
import { lanPrefix4, lanPrefix6 } from '../../src/wire/addresses.js';
import { ipChecksum, parseIp, parseIpAddress } from '../../src/wire/ip.js';
import { tcpChecksum } from '../../src/wire/tcp.js';
import { routersAt } from '../support/star.js';

/**
 * The IP plane in virtual time: four routers in a line 200 m apart (no
 * PNs), each serving its LAN; packets enter at router 0's host side and the
 * host sides record what comes out.
 */
function line(): { engine: EventEngine; routers: MeshRouter[]; toHost: Uint8Array[][] } {
  const toHost: Uint8Array[][] = [[], [], [], []];
  const { engine, routers } = routersAt(
    toHost.map((_, i) => ({ xM: 200 * i, yM: 0 })),
    {
      seed: 3,
      config: (c, i) => ({ ...c, ip: { ...c.ip, enabled: true, prefixes: [lanPrefix4(i), lanPrefix6(i)], announceIntervalMs: 1000 } }),
      extra: (i) => ({ toHost: (p) => toHost[i]!.push(p.slice()) }),
    },
  );
  return { engine, routers, toHost };
}

const ip4 = (t: string): Uint8Array => parseIpAddress(t)!;

/** An IPv4 packet: `proto`, `payload`, TTL, DF. */
function ipv4(src: string, dst: string, proto: number, payload: Uint8Array, o: { ttl?: number; df?: boolean } = {}): Uint8Array {
  const total = 20 + payload.length;
  const b = new Uint8Array(total);
  b.set([0x45, 0, total >> 8, total & 0xff, 0x12, 0x34, o.df === false ? 0 : 0x40, 0, o.ttl ?? 64, proto, 0, 0]);
  b.set(ip4(src), 12);
  b.set(ip4(dst), 16);
  const ck = ipChecksum(b, 0, 20);
  b[10] = ck >> 8;
  b[11] = ck & 0xff;
  b.set(payload, 20);
  return b;
}

function echo(bytes = 56): Uint8Array {
  const m = new Uint8Array(8 + bytes);
  m.set([8, 0, 0, 0, 0, 1, 0, 1]);
  for (let i = 0; i < bytes; i++) m[8 + i] = i & 0xff;
  const ck = ipChecksum(m, 0, m.length);
  m[2] = ck >> 8;
  m[3] = ck & 0xff;
  return m;
}

/** A TCP SYN offering MSS `mss`, its checksum set. */
function syn(src: string, dst: string, mss: number): Uint8Array {
  const seg = new Uint8Array(24);
  seg.set([0x9c, 0x40, 0x1f, 0x40, 0, 0, 0, 1, 0, 0, 0, 0, 0x60, 0x02, 0xff, 0xff, 0, 0, 0, 0, 2, 4, mss >> 8, mss & 0xff]);
  const p = ipv4(src, dst, 6, seg);
  const ck = tcpChecksum(p.subarray(20), { src: p.subarray(12, 16), dst: p.subarray(16, 20) });
  p[36] = ck >> 8;
  p[37] = ck & 0xff;
  return p;
}

describe('the IP plane over a line of routers (virtual time)', () => {
  const net = line();
  const { engine, routers, toHost } = net;
  const send = (p: Uint8Array): void => routers[0]!.fromHost(p, engine.now());
  const settle = (s: number): void => engine.run(engine.now() + seconds(s));
  const take = (i: number): Uint8Array[] => toHost[i]!.splice(0);

  before(() => {
    settle(8);
    for (const r of routers) assert.equal(r.prefixes.lookup(ip4('10.0.3.9')), 3, `router ${r.addr} knows who serves 10.0.3.0/24`);
  });

  test("a host's packet crosses the mesh whole, its TTL one less at each relay", () => {
    send(ipv4('10.0.0.2', '10.0.3.2', 1, echo()));
    settle(2);
    const got = take(3);
    assert.equal(got.length, 1);
    const info = parseIp(got[0]!);
    assert.ok(info.ok, 'a well-formed packet, header checksum and all');
    assert.equal(info.value.ttl, 62, 'relays 1 and 2 each took one');
    assert.deepEqual(got[0]!.subarray(20), echo());
  });

  test('a TTL that runs out at a relay brings Time Exceeded from that relay back to the host side', () => {
    send(ipv4('10.0.0.2', '10.0.3.2', 17, new Uint8Array(12), { ttl: 2 }));
    settle(2);
    assert.equal(take(3).length, 0);
    const back = take(0);
    assert.equal(back.length, 1);
    const info = parseIp(back[0]!);
    assert.ok(info.ok);
    assert.deepEqual([...info.value.src], [10, 0, 2, 1], 'from router 2, where it ran out');
    assert.deepEqual([...info.value.dst], [10, 0, 0, 2]);
    assert.deepEqual([back[0]![20], back[0]![21]], [11, 0], 'ICMP Time Exceeded, in transit');
    assert.equal(routers[2]!.ip.counters.ttlExpired, 1);
  });

  test('a destination no router announced gets Destination Unreachable (net) at once', () => {
    send(ipv4('10.0.0.2', '192.168.9.9', 17, new Uint8Array(12)));
    const back = take(0);
    assert.equal(back.length, 1);
    assert.deepEqual([back[0]![20], back[0]![21]], [3, 0]);
    assert.deepEqual([...back[0]!.subarray(12, 16)], [10, 0, 0, 1], 'from router 0 itself');
  });

  test('a packet over the mesh MTU: Fragmentation Needed with DF, fragments without', () => {
    const mtu = routers[0]!.config.ip.mtu;
    send(ipv4('10.0.0.2', '10.0.3.2', 17, new Uint8Array(mtu), { df: true }));
    const back = take(0);
    assert.equal(back.length, 1);
    assert.deepEqual([back[0]![20], back[0]![21]], [3, 4], 'ICMP fragmentation needed');
    assert.equal((back[0]![26]! << 8) | back[0]![27]!, mtu, 'with the next-hop MTU');
    send(ipv4('10.0.0.2', '10.0.3.2', 17, new Uint8Array(mtu), { df: false }));
    settle(2);
    const frags = take(3);
    assert.equal(frags.length, 2);
    assert.ok(frags.every((f) => f.length <= mtu && parseIp(f).ok));
  });

  test("a SYN's MSS is clamped to the mesh MTU, its checksum kept right", () => {
    send(syn('10.0.0.2', '10.0.3.2', 1460));
    settle(2);
    const [got] = take(3);
    assert.ok(got);
    const info = parseIp(got);
    assert.ok(info.ok);
    assert.equal((got[42]! << 8) | got[43]!, routers[0]!.config.ip.mtu - 40);
    assert.equal(tcpChecksum(got.subarray(20), { src: info.value.src, dst: info.value.dst }), 0, 'the segment with its checksum sums to zero');
  });

  test('malformed packets are counted and dropped', () => {
    const bad = ipv4('10.0.0.2', '10.0.3.2', 17, new Uint8Array(8));
    bad[10] = bad[10]! ^ 0xff;
    const before = routers[0]!.ip.counters.malformed;
    send(bad);
    send(Uint8Array.of(0x45, 0));
    send(new Uint8Array(0));
    assert.equal(routers[0]!.ip.counters.malformed, before + 3);
    settle(1);
    assert.equal(take(3).length, 0);
  });
});
