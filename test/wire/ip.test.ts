import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { RangeArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { WireError, type WireErrorCode } from '../../src/wire/codec.js';
import {
  clampMss,
  ipPacket,
  ICMPV4_ERROR_MAX_BYTES,
  IPV6_MIN_MTU,
  PrefixTable,
  decrementTtl,
  flowHash,
  formatIpAddress,
  formatPrefix,
  fragmentIpv4,
  icmpError,
  icmpErrorAllowed,
  ipChecksum,
  isIpv4,
  isIpv6,
  onesComplementSum,
  parseIp,
  parseIpAddress,
  parsePrefix,
  prefixContains,
  type IcmpErrorKind,
  type IpInfo,
  type Prefix,
} from '../../src/wire/ip.js';
import { parseTcp, tcpChecksum } from '../../src/wire/tcp.js';
import { mutate } from '../support/bytes.js';

// ---------------------------------------------------------------------------
// Helpers, written independently of the code under test

const hex = (s: string) => Uint8Array.from(Buffer.from(s.replace(/\s+/g, ''), 'hex'));
const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const cat = (...parts: Uint8Array[]) => Uint8Array.from(Buffer.concat(parts));
const addr = (text: string): Uint8Array => {
  const a = parseIpAddress(text);
  assert.ok(a, `address ${text}`);
  return a;
};
const u16 = (b: Uint8Array, o: number) => (b[o]! << 8) | b[o + 1]!;
const u32 = (b: Uint8Array, o: number) => u16(b, o) * 0x10000 + u16(b, o + 2);
const set16 = (b: Uint8Array, o: number, v: number) => {
  b[o] = v >>> 8;
  b[o + 1] = v & 0xff;
};

/** RFC 1071, the slow obvious way: one word at a time, carries folded as they come. */
function refChecksum(...parts: Uint8Array[]): number {
  const b = cat(...parts);
  let sum = 0;
  for (let i = 0; i < b.length; i += 2) {
    sum += (b[i]! << 8) + (b[i + 1] ?? 0);
    sum = (sum & 0xffff) + (sum >>> 16);
  }
  return ~sum & 0xffff;
}

/** A header's checksum computed afresh (field taken as zero). */
function headerChecksum(b: Uint8Array, hdr = (b[0]! & 0x0f) * 4): number {
  const h = Uint8Array.from(b.subarray(0, hdr));
  set16(h, 10, 0);
  return refChecksum(h);
}

function parsed(b: Uint8Array): IpInfo {
  const r = parseIp(b);
  if (!r.ok) assert.fail(`parseIp refused: ${r.error.message}`);
  return r.value;
}

function refusal(b: Uint8Array, code: WireErrorCode, what: 'IP' | 'IPv4' | 'IPv6'): string {
  const r = parseIp(b);
  if (r.ok) assert.fail(`expected ${code}, parsed ${JSON.stringify(r.value)}`);
  assert.ok(r.error instanceof WireError);
  assert.equal(r.error.code, code, r.error.message);
  assert.equal(r.error.what, what);
  return r.error.message;
}

interface V4 {
  tos?: number;
  id?: number;
  /** Flags and fragment offset word (DF 0x4000, MF 0x2000, offset in 8-byte units). */
  frag?: number;
  ttl?: number;
  proto?: number;
  src?: string;
  dst?: string;
  options?: Uint8Array;
  payload?: Uint8Array;
}

function ipv4Packet(o: V4 = {}): Uint8Array {
  const options = o.options ?? new Uint8Array(0);
  assert.equal(options.length % 4, 0);
  const hdr = 20 + options.length;
  const payload = o.payload ?? new Uint8Array(0);
  const b = new Uint8Array(hdr + payload.length);
  b[0] = 0x40 | (hdr / 4);
  b[1] = o.tos ?? 0;
  set16(b, 2, b.length);
  set16(b, 4, o.id ?? 0x1234);
  set16(b, 6, o.frag ?? 0);
  b[8] = o.ttl ?? 64;
  b[9] = o.proto ?? 17;
  b.set(addr(o.src ?? '10.0.1.2'), 12);
  b.set(addr(o.dst ?? '10.0.4.9'), 16);
  b.set(options, 20);
  b.set(payload, hdr);
  set16(b, 10, headerChecksum(b));
  return b;
}

interface V6 {
  tc?: number;
  flow?: number;
  next?: number;
  hop?: number;
  src?: string;
  dst?: string;
  /** Everything after the 40-byte header: extension headers and the upper layer. */
  payload?: Uint8Array;
}

function ipv6Packet(o: V6 = {}): Uint8Array {
  const payload = o.payload ?? Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0);
  const b = new Uint8Array(40 + payload.length);
  const tc = o.tc ?? 0;
  const flow = o.flow ?? 0;
  b[0] = 0x60 | (tc >>> 4);
  b[1] = ((tc & 0x0f) << 4) | (flow >>> 16);
  set16(b, 2, flow & 0xffff);
  set16(b, 4, payload.length);
  b[6] = o.next ?? 17;
  b[7] = o.hop ?? 64;
  b.set(addr(o.src ?? '2001:db8::1'), 8);
  b.set(addr(o.dst ?? '2001:db8::2'), 24);
  b.set(payload, 40);
  return b;
}

/** A generic IPv6 extension header (hop-by-hop, routing, destination options): `len8` 8-byte units after the first 8. */
function ext(next: number, len8 = 0): Uint8Array {
  const h = new Uint8Array((len8 + 1) * 8);
  h[0] = next;
  h[1] = len8;
  if (len8 === 0) h.set([1, 4, 0, 0, 0, 0], 2); // a PadN option filling the header
  return h;
}

function fragHeader(next: number, offset: number, more: boolean, id = 0xdeadbeef): Uint8Array {
  const h = new Uint8Array(8);
  h[0] = next;
  set16(h, 2, offset | (more ? 1 : 0));
  h.set([id >>> 24, (id >>> 16) & 0xff, (id >>> 8) & 0xff, id & 0xff], 4);
  return h;
}

function udp4(src: string, dst: string, sport: number, dport: number, data: Uint8Array): Uint8Array {
  const u = new Uint8Array(8 + data.length);
  set16(u, 0, sport);
  set16(u, 2, dport);
  set16(u, 4, u.length);
  u.set(data, 8);
  const c = refChecksum(addr(src), addr(dst), Uint8Array.of(0, 17, u.length >>> 8, u.length & 0xff), u);
  set16(u, 6, c === 0 ? 0xffff : c);
  return u;
}

const pattern = (n: number, seed = 0) => Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed) & 0xff);

// The IPv4 header of the checksum example in many textbooks (and Wikipedia's "IPv4 header checksum"):
// 192.168.0.1 -> 192.168.0.199, UDP, DF, TTL 64, total length 115, checksum 0xb861.
const TEXTBOOK_HEADER = hex('4500 0073 0000 4000 4011 b861 c0a8 0001 c0a8 00c7');
const TEXTBOOK_UDP = udp4('192.168.0.1', '192.168.0.199', 53, 54321, pattern(87));
const TEXTBOOK = cat(TEXTBOOK_HEADER, TEXTBOOK_UDP);

// A hand-written IPv6 TCP SYN: traffic class 0xb8 (EF), flow label 0x12345, hop limit 64,
// 2001:db8::1 port 50000 -> 2001:db8::2 port 80, seq 100, window 65535, MSS 1440.
const V6_HEADER = hex('6b812345 0018 06 40 20010db8000000000000000000000001 20010db8000000000000000000000002');
const V6_SYN = (() => {
  const seg = hex('c350 0050 00000064 00000000 6002 ffff 0000 0000 020405a0');
  const pseudo = cat(V6_HEADER.subarray(8, 40), hex('00000018 000000 06'));
  set16(seg, 16, refChecksum(pseudo, seg));
  return seg;
})();
const V6_TCP = cat(V6_HEADER, V6_SYN);

// ---------------------------------------------------------------------------

describe('ipChecksum and onesComplementSum', () => {
  test('the RFC 1071 section 3 example gives 0x220d', () => {
    const b = hex('0001 f203 f4f5 f6f7');
    assert.equal(onesComplementSum(b, 0, 8), 0xddf2);
    assert.equal(ipChecksum(b, 0, 8), 0x220d);
  });

  test('the textbook IPv4 header sums to 0 and, with the field zeroed, gives 0xb861', () => {
    assert.equal(ipChecksum(TEXTBOOK_HEADER, 0, 20), 0);
    const zeroed = Uint8Array.from(TEXTBOOK_HEADER);
    set16(zeroed, 10, 0);
    assert.equal(ipChecksum(zeroed, 0, 20), 0xb861);
  });

  test('a range, an odd end padded with zero, and a pseudo-header sum as `initial`', () => {
    const b = hex('ffff 0102 0304 05');
    assert.equal(ipChecksum(b, 2, 7), refChecksum(b.subarray(2, 7)));
    assert.equal(ipChecksum(b, 2, 7), ~(0x0102 + 0x0304 + 0x0500) & 0xffff);
    assert.equal(ipChecksum(b, 3, 3), 0xffff, 'nothing sums to 0, checksum 0xffff');
    const pseudo = hex('0a000001 0a000002 0011 0010');
    assert.equal(ipChecksum(b, 0, 7, onesComplementSum(pseudo, 0, pseudo.length)), refChecksum(pseudo, b));
  });

  test('agrees with the reference over random lengths and offsets (seeded)', () => {
    const rng = Rng.fromSeed(1071);
    for (let k = 0; k < 500; k++) {
      const b = Uint8Array.from({ length: rng.int(0, 300) }, () => rng.int(0, 255));
      const start = rng.int(0, b.length);
      const end = rng.int(start, b.length);
      assert.equal(ipChecksum(b, start, end), refChecksum(b.subarray(start, end)));
    }
  });
});

describe('parseIp: IPv4', () => {
  test('the textbook UDP packet: every field, ports, views, and a UDP checksum that verifies', () => {
    const info = parsed(TEXTBOOK);
    assert.deepEqual(
      { ...info, src: [...info.src], dst: [...info.dst] },
      {
        version: 4,
        headerBytes: 20,
        totalBytes: 115,
        ttl: 64,
        proto: 17,
        src: [192, 168, 0, 1],
        dst: [192, 168, 0, 199],
        dontFragment: true,
        firstFragment: true,
        moreFragments: false,
        fragmentOffset: 0,
        flowLabel: 0,
        transportOffset: 20,
        srcPort: 53,
        dstPort: 54321,
      },
    );
    assert.equal(info.src.buffer, TEXTBOOK.buffer, 'src is a view');
    assert.equal(info.src.byteOffset, TEXTBOOK.byteOffset + 12);
    assert.equal(info.dst.byteOffset, TEXTBOOK.byteOffset + 16);
    const pseudo = cat(info.src, info.dst, Uint8Array.of(0, 17, 0, 95));
    assert.equal(ipChecksum(TEXTBOOK, 20, 115, onesComplementSum(pseudo, 0, pseudo.length)), 0, 'UDP checksum over the pseudo-header');
    assert.ok(isIpv4(TEXTBOOK) && !isIpv6(TEXTBOOK));
  });

  test('bytes after the total length (link padding) are ignored', () => {
    const small = ipv4Packet({ proto: 6, payload: hex('0400 0050') });
    const padded = cat(small, new Uint8Array(22));
    const info = parsed(padded);
    assert.equal(info.totalBytes, 24);
    assert.equal(info.srcPort, 1024);
    assert.equal(info.dstPort, 80);
  });

  test('options: IHL 6 puts the transport header at 24', () => {
    const b = ipv4Packet({ options: hex('94040000'), payload: udp4('10.0.1.2', '10.0.4.9', 7, 9, pattern(4)) });
    const info = parsed(b);
    assert.equal(info.headerBytes, 24);
    assert.equal(info.transportOffset, 24);
    assert.equal(info.srcPort, 7);
    assert.equal(info.dstPort, 9);
  });

  test('fragments: offset, MF, DF; ports only in the first', () => {
    const udp = udp4('10.0.1.2', '10.0.4.9', 1000, 2000, pattern(40));
    const first = parsed(ipv4Packet({ frag: 0x2000, payload: udp.subarray(0, 24) }));
    assert.equal(first.firstFragment, true);
    assert.equal(first.moreFragments, true);
    assert.equal(first.dontFragment, false);
    assert.equal(first.srcPort, 1000);
    const middle = parsed(ipv4Packet({ frag: 0x2000 | 3, payload: udp.subarray(24) }));
    assert.equal(middle.firstFragment, false);
    assert.equal(middle.moreFragments, true);
    assert.equal(middle.fragmentOffset, 24);
    assert.equal(middle.srcPort, undefined);
    assert.equal(middle.dstPort, undefined);
    const df = parsed(ipv4Packet({ frag: 0x4000 }));
    assert.equal(df.dontFragment, true);
    assert.equal(df.moreFragments, false);
  });

  test('ports for TCP, UDP, SCTP and UDP-Lite only, and only when 4 bytes are there', () => {
    for (const proto of [6, 17, 132, 136]) {
      const info = parsed(ipv4Packet({ proto, payload: hex('1f90 0035 0000') }));
      assert.deepEqual([info.srcPort, info.dstPort], [8080, 53], `proto ${proto}`);
    }
    for (const proto of [1, 47, 50, 58]) {
      const info = parsed(ipv4Packet({ proto, payload: hex('1f90 0035 0000') }));
      assert.equal(info.srcPort, undefined, `proto ${proto}`);
    }
    const short = parsed(ipv4Packet({ proto: 17, payload: hex('1f90 00') }));
    assert.equal(short.srcPort, undefined);
    assert.equal(short.dstPort, undefined);
  });
});

describe('parseIp: IPv6', () => {
  test('the hand-written TCP SYN: every field, ports, and a TCP checksum parseTcp accepts', () => {
    const info = parsed(V6_TCP);
    assert.equal(info.version, 6);
    assert.equal(info.headerBytes, 40);
    assert.equal(info.totalBytes, 64);
    assert.equal(info.ttl, 64);
    assert.equal(info.proto, 6);
    assert.equal(formatIpAddress(info.src), '2001:db8::1');
    assert.equal(formatIpAddress(info.dst), '2001:db8::2');
    assert.equal(info.src.buffer, V6_TCP.buffer, 'src is a view');
    assert.equal(info.dontFragment, true);
    assert.equal(info.firstFragment, true);
    assert.equal(info.moreFragments, false);
    assert.equal(info.flowLabel, 0x12345);
    assert.equal(info.transportOffset, 40);
    assert.equal(info.srcPort, 50000);
    assert.equal(info.dstPort, 80);
    const tcp = parseTcp(V6_TCP.subarray(40), { src: info.src, dst: info.dst });
    assert.ok(tcp.ok, 'TCP checksum verifies with the IPv6 pseudo-header');
    assert.equal(tcp.value.options.mss, 1440);
    const pseudo = cat(info.src, info.dst, hex('00000018 00000006'));
    assert.equal(ipChecksum(V6_TCP, 40, 64, onesComplementSum(pseudo, 0, pseudo.length)), 0);
    assert.ok(isIpv6(V6_TCP) && !isIpv4(V6_TCP));
  });

  test('walks hop-by-hop, routing, destination options, AH and an atomic fragment header to UDP', () => {
    const ah = new Uint8Array(24); // AH: length field 4 -> (4 + 2) * 4 = 24 bytes
    ah[0] = 44;
    ah[1] = 4;
    const payload = cat(ext(43), ext(60, 1), ext(51), ah, fragHeader(17, 0, true), hex('3039 d431 000c 0000 61626364'));
    const b = ipv6Packet({ next: 0, payload });
    const info = parsed(b);
    assert.equal(info.proto, 17);
    assert.equal(info.headerBytes, 40 + 8 + 16 + 8 + 24 + 8);
    assert.equal(info.transportOffset, info.headerBytes);
    assert.equal(info.firstFragment, true);
    assert.equal(info.moreFragments, true);
    assert.equal(info.srcPort, 12345);
    assert.equal(info.dstPort, 54321);
  });

  test('a non-first fragment: proto from the fragment header, no ports, data offset after it', () => {
    const b = ipv6Packet({ next: 60, payload: cat(ext(44), fragHeader(6, 1448, false), pattern(64)) });
    const info = parsed(b);
    assert.equal(info.proto, 6);
    assert.equal(info.firstFragment, false);
    assert.equal(info.moreFragments, false);
    assert.equal(info.fragmentOffset, 1448);
    assert.equal(info.headerBytes, 56);
    assert.equal(info.srcPort, undefined);
  });

  test('no next header (59) and ESP (50) end the walk', () => {
    assert.equal(parsed(ipv6Packet({ next: 0, payload: ext(59) })).proto, 59);
    const esp = parsed(ipv6Packet({ next: 60, payload: cat(ext(50), pattern(16)) }));
    assert.equal(esp.proto, 50);
    assert.equal(esp.transportOffset, 48);
    assert.equal(esp.srcPort, undefined);
  });

  test('padding after the payload is ignored', () => {
    const info = parsed(cat(V6_TCP, new Uint8Array(9)));
    assert.equal(info.totalBytes, 64);
  });
});

describe('parseIp refusals', () => {
  test('empty and unknown versions are IP', () => {
    assert.match(refusal(new Uint8Array(0), 'WIRE_TRUNCATED', 'IP'), /0 bytes/);
    for (const v of [0, 1, 5, 7, 15]) {
      const b = Uint8Array.from(TEXTBOOK);
      b[0] = (v << 4) | 5;
      assert.equal(refusal(b, 'WIRE_BAD_VERSION', 'IP'), `IP version ${v} is neither 4 nor 6`);
    }
  });

  test('IPv4: IHL under 5, header cut, bad checksum, total under the header or past the bytes', () => {
    const ihl4 = Uint8Array.from(TEXTBOOK);
    ihl4[0] = 0x44;
    assert.match(refusal(ihl4, 'WIRE_BAD_LENGTH', 'IPv4'), /IHL\) 4 words/);
    assert.match(refusal(TEXTBOOK.subarray(0, 19), 'WIRE_TRUNCATED', 'IPv4'), /19 bytes/);
    const withOptions = ipv4Packet({ options: hex('01010100') });
    assert.match(refusal(withOptions.subarray(0, 22), 'WIRE_TRUNCATED', 'IPv4'), /22 bytes, the header alone is 24/);

    const damaged = Uint8Array.from(TEXTBOOK);
    damaged[8] = 0x3f; // TTL changed, checksum not
    assert.equal(refusal(damaged, 'WIRE_BAD_CHECKSUM', 'IPv4'), 'IPv4 header checksum 0xb861 is wrong: the header sums to 0xb961');

    const short = Uint8Array.from(TEXTBOOK);
    set16(short, 2, 16);
    set16(short, 10, headerChecksum(short));
    assert.equal(refusal(short, 'WIRE_BAD_LENGTH', 'IPv4'), 'IPv4 total length 16 is less than its 20-byte header');

    const big = cat(ipv4Packet({ payload: pattern(1480) }));
    set16(big, 2, 1600);
    set16(big, 10, headerChecksum(big));
    assert.equal(refusal(big, 'WIRE_TRUNCATED', 'IPv4'), "IPv4 total length 1600 exceeds the packet's 1500 bytes");
  });

  test('IPv4: a fragment that would reassemble past 65535 bytes', () => {
    const pod = ipv4Packet({ frag: 8189, payload: pattern(100) });
    assert.match(refusal(pod, 'WIRE_BAD_LENGTH', 'IPv4'), /offset 65512 with 100 data bytes/);
    parsed(ipv4Packet({ frag: 8189, payload: pattern(3) }));
  });

  test('IPv6: under 40 bytes, payload length 0, payload past the bytes', () => {
    assert.equal(refusal(V6_TCP.subarray(0, 39), 'WIRE_TRUNCATED', 'IPv6'), 'IPv6 truncated: 39 bytes, needs 40');
    const jumbo = Uint8Array.from(V6_TCP);
    set16(jumbo, 4, 0);
    assert.match(refusal(jumbo, 'WIRE_BAD_LENGTH', 'IPv6'), /payload length 0 \(a jumbogram/);
    const long = Uint8Array.from(V6_TCP);
    set16(long, 4, 25);
    assert.equal(refusal(long, 'WIRE_TRUNCATED', 'IPv6'), "IPv6 payload length 25 (65 bytes with the header) exceeds the packet's 64 bytes");
  });

  test('IPv6: truncated extension headers (generic, AH, fragment), each named', () => {
    const hbh = ipv6Packet({ next: 0, payload: cat(ext(6, 2).subarray(0, 16)) }); // claims 24 bytes, has 16
    assert.equal(refusal(hbh, 'WIRE_TRUNCATED', 'IPv6'), 'IPv6 hop-by-hop options header at byte 40 needs 24 bytes, but the payload ends at byte 56');
    const lone = ipv6Packet({ next: 0, payload: cat(ext(43), Uint8Array.of(6)) }); // routing header missing its length byte
    assert.match(refusal(lone, 'WIRE_TRUNCATED', 'IPv6'), /routing header at byte 48 needs 2 bytes/);
    const ah = new Uint8Array(16);
    ah[0] = 17;
    ah[1] = 4; // 24 bytes
    assert.match(refusal(ipv6Packet({ next: 51, payload: ah }), 'WIRE_TRUNCATED', 'IPv6'), /authentication header at byte 40 needs 24 bytes/);
    const frag = ipv6Packet({ next: 60, payload: cat(ext(44), fragHeader(17, 0, false).subarray(0, 6)) });
    assert.match(refusal(frag, 'WIRE_TRUNCATED', 'IPv6'), /fragment header at byte 48 needs 8 bytes/);
  });

  test('IPv6: a fragment that would reassemble past 65535 bytes of payload', () => {
    const b = ipv6Packet({ next: 44, payload: cat(fragHeader(17, 65528, false), pattern(16)) });
    assert.match(refusal(b, 'WIRE_BAD_LENGTH', 'IPv6'), /offset 65528 with 16 data bytes/);
  });

  test('every proper prefix of a valid packet is WIRE_TRUNCATED', () => {
    const withExt = ipv6Packet({ next: 0, payload: cat(ext(44), fragHeader(17, 0, false), udp4('10.0.0.1', '10.0.0.2', 1, 2, pattern(5))) });
    for (const b of [TEXTBOOK, V6_TCP, withExt, ipv4Packet({ options: hex('07070400000000 00'), payload: pattern(9) })]) {
      for (let n = 0; n < b.length; n++) {
        const r = parseIp(b.subarray(0, n));
        assert.ok(!r.ok && r.error.code === 'WIRE_TRUNCATED', `prefix of ${n} bytes: ${r.ok ? 'accepted' : r.error.message}`);
      }
    }
  });

  test('fuzz: never throws; refusals are WireErrors of a known code; accepted packets are consistent (seeded)', () => {
    const rng = Rng.fromSeed(791);
    const codes = new Set<string>();
    const seeds = [TEXTBOOK, V6_TCP, ipv6Packet({ next: 0, payload: cat(ext(60), ext(17), pattern(12)) })];
    for (let k = 0; k < 5000; k++) {
      const { bytes } = mutate(seeds[k % seeds.length]!, rng);
      const r = parseIp(bytes);
      if (r.ok) {
        const i = r.value;
        assert.ok(i.totalBytes <= bytes.length && i.headerBytes <= i.totalBytes && i.transportOffset === i.headerBytes);
        assert.equal(i.src.length, i.version === 4 ? 4 : 16);
        if (i.version === 4) assert.equal(ipChecksum(bytes, 0, i.headerBytes), 0);
      } else {
        assert.ok(r.error instanceof WireError);
        assert.ok(['IP', 'IPv4', 'IPv6'].includes(r.error.what));
        codes.add(r.error.code);
      }
    }
    for (const c of ['WIRE_TRUNCATED', 'WIRE_BAD_CHECKSUM', 'WIRE_BAD_VERSION']) assert.ok(codes.has(c), `fuzz reached ${c}`);
  });
});

describe('decrementTtl', () => {
  test('the textbook header: TTL 64 -> 63 and checksum 0xb861 -> 0xb961 (RFC 1624)', () => {
    const b = Uint8Array.from(TEXTBOOK);
    const info = parsed(b);
    assert.equal(decrementTtl(b, info), 63);
    assert.equal(b[8], 63);
    assert.equal(u16(b, 10), 0xb961);
    assert.equal(u16(b, 10), headerChecksum(b));
    assert.equal(info.ttl, 64, 'info is left as parsed');
    assert.equal(decrementTtl(b, info), 62, 'reads the bytes, not info');
    assert.equal(parsed(b).ttl, 62);
    assert.deepEqual(b.subarray(20), TEXTBOOK.subarray(20), 'payload untouched');
  });

  test('equals full recomputation over many random headers, options included (seeded)', () => {
    const rng = Rng.fromSeed(1624);
    for (let k = 0; k < 20_000; k++) {
      const ihl = rng.int(5, 15);
      const b = Uint8Array.from({ length: ihl * 4 }, () => rng.int(0, 255));
      b[0] = 0x40 | ihl;
      set16(b, 2, ihl * 4);
      set16(b, 6, rng.int(0, 0xffff) & 0xe3ff); // keep the offset small enough to parse
      b[8] = rng.int(1, 255);
      set16(b, 10, headerChecksum(b));
      const before = b[8]!;
      const info = parsed(b);
      assert.equal(decrementTtl(b, info), before - 1);
      assert.equal(u16(b, 10), headerChecksum(b), `header ${toHex(b)}`);
    }
  });

  test('the edge where the new checksum is 0x0000 (not 0xffff)', () => {
    // Choose the ID so that the header with TTL 1 sums to exactly 0xffff: its checksum is then 0x0000.
    const b = ipv4Packet({ ttl: 2, id: 0 });
    const after = Uint8Array.from(b);
    after[8] = 1;
    const sum = ~headerChecksum(after) & 0xffff;
    set16(b, 4, 0xffff - sum);
    set16(b, 10, headerChecksum(b));
    decrementTtl(b, parsed(b));
    assert.equal(u16(b, 10), 0x0000);
    assert.equal(headerChecksum(b), 0x0000);
    assert.equal(parsed(b).ttl, 1);
  });

  test('IPv6: only the hop limit changes; 0 throws rather than wrapping', () => {
    const b = Uint8Array.from(V6_TCP);
    assert.equal(decrementTtl(b, parsed(b)), 63);
    assert.equal(b[7], 63);
    const expected = Uint8Array.from(V6_TCP);
    expected[7] = 63;
    assert.deepEqual(b, expected);
    const zero = Uint8Array.from(V6_TCP);
    zero[7] = 0;
    assert.throws(() => decrementTtl(zero, parsed(zero)), RangeArgumentError);
    const zero4 = ipv4Packet({ ttl: 0 });
    assert.throws(() => decrementTtl(zero4, parsed(zero4)), RangeArgumentError);
  });
});

// ---------------------------------------------------------------------------
// ICMP

const ROUTER4 = addr('10.0.4.1');
const ROUTER6 = addr('fd00::a00:401');

function must(b: Uint8Array | undefined): Uint8Array {
  assert.ok(b, 'an ICMP error');
  return b;
}

/** Checks an ICMPv4 error's IP header and checksum; returns its parse. */
function checkIcmp4(e: Uint8Array, offending: Uint8Array, type: number, code: number): IpInfo {
  const info = parsed(e);
  const off = parsed(offending);
  assert.equal(e[0], 0x45);
  assert.equal(e[1], 0xc0, 'precedence 6 (RFC 1812 4.3.2.5)');
  assert.equal(u16(e, 2), e.length);
  assert.equal(u16(e, 4), 0, 'ID 0');
  assert.equal(u16(e, 6), 0, 'DF 0, offset 0');
  assert.equal(info.proto, 1);
  assert.deepEqual(info.src, ROUTER4);
  assert.deepEqual(info.dst, off.src);
  assert.equal(u16(e, 10), headerChecksum(e));
  assert.equal(e[20], type);
  assert.equal(e[21], code);
  const zeroed = Uint8Array.from(e.subarray(20));
  set16(zeroed, 2, 0);
  assert.equal(u16(e, 22), refChecksum(zeroed), 'ICMP checksum');
  const quote = Math.min(off.totalBytes, ICMPV4_ERROR_MAX_BYTES - 28);
  assert.equal(e.length, 28 + quote);
  assert.deepEqual(e.subarray(28), offending.subarray(0, quote));
  return info;
}

function checkIcmp6(e: Uint8Array, offending: Uint8Array, type: number, code: number): IpInfo {
  const info = parsed(e);
  const off = parsed(offending);
  assert.equal(e[0], 0x60);
  assert.equal(info.flowLabel, 0);
  assert.equal(info.proto, 58);
  assert.equal(info.headerBytes, 40);
  assert.deepEqual(info.src, ROUTER6);
  assert.deepEqual(info.dst, off.src);
  assert.equal(e[40], type);
  assert.equal(e[41], code);
  const upper = e.length - 40;
  const pseudo = cat(e.subarray(8, 40), Uint8Array.of(upper >>> 24, (upper >>> 16) & 0xff, upper >>> 8, upper & 0xff, 0, 0, 0, 58));
  const zeroed = Uint8Array.from(e.subarray(40));
  set16(zeroed, 2, 0);
  assert.equal(u16(e, 42), refChecksum(pseudo, zeroed), 'ICMPv6 checksum with the pseudo-header');
  const quote = Math.min(off.totalBytes, IPV6_MIN_MTU - 48);
  assert.equal(e.length, 48 + quote);
  assert.deepEqual(e.subarray(48), offending.subarray(0, quote));
  return info;
}

const bigV4 = (o: V4 = {}) => ipv4Packet({ proto: 17, payload: udp4('10.0.1.2', '10.0.4.9', 4000, 5000, pattern(1472)), ...o });
const bigV6 = (o: V6 = {}) => ipv6Packet({ next: 17, payload: cat(hex('0fa0 1388 05b4 0000'), pattern(1452)), ...o });

describe('icmpError: IPv4', () => {
  test('time exceeded: exact header bytes and the whole offending packet quoted', () => {
    const e = must(icmpError('time-exceeded', TEXTBOOK, parsed(TEXTBOOK), ROUTER4));
    checkIcmp4(e, TEXTBOOK, 11, 0);
    assert.equal(e.length, 28 + 115);
    const head = Uint8Array.from(e.subarray(0, 28));
    set16(head, 10, 0);
    set16(head, 22, 0);
    assert.equal(toHex(head), '45c0008f' + '00000000' + '40010000' + '0a000401' + 'c0a80001' + '0b000000' + '00000000');
  });

  test('unreachable (net 0, host 1), frag-needed (4) with the MTU in bytes 6-7; packet-too-big maps to it', () => {
    const info = parsed(TEXTBOOK);
    checkIcmp4(must(icmpError('net-unreachable', TEXTBOOK, info, ROUTER4)), TEXTBOOK, 3, 0);
    checkIcmp4(must(icmpError('host-unreachable', TEXTBOOK, info, ROUTER4)), TEXTBOOK, 3, 1);
    for (const kind of ['frag-needed', 'packet-too-big'] as const) {
      const e = must(icmpError(kind, TEXTBOOK, info, ROUTER4, { mtu: 1400 }));
      checkIcmp4(e, TEXTBOOK, 3, 4);
      assert.equal(u16(e, 24), 0, 'unused');
      assert.equal(u16(e, 26), 1400, 'next-hop MTU (RFC 1191)');
    }
  });

  test('quotes as much as keeps the error within 576 bytes, and no link padding', () => {
    const big = bigV4();
    const e = must(icmpError('time-exceeded', big, parsed(big), ROUTER4, { ttl: 255 }));
    assert.equal(e.length, 576);
    assert.equal(e[8], 255, 'ttl option');
    checkIcmp4(e, big, 11, 0);
    const padded = cat(ipv4Packet({ payload: pattern(30) }), new Uint8Array(12));
    const p = must(icmpError('host-unreachable', padded, parsed(padded), ROUTER4));
    assert.equal(p.length, 28 + 50);
    const exact = ipv4Packet({ payload: pattern(576 - 28 - 20) });
    assert.equal(must(icmpError('net-unreachable', exact, parsed(exact), ROUTER4)).length, 576);
    const over = ipv4Packet({ payload: pattern(576 - 28 - 20 + 1) });
    assert.equal(must(icmpError('net-unreachable', over, parsed(over), ROUTER4)).length, 576);
  });

  test('about an ICMP echo request: sent; about ICMP errors 3, 4, 5, 11, 12: not', () => {
    const echo = ipv4Packet({ proto: 1, payload: hex('0800 f7ff 0000 0000') });
    assert.ok(icmpError('time-exceeded', echo, parsed(echo), ROUTER4));
    for (const t of [0, 8, 13, 14]) {
      const p = ipv4Packet({ proto: 1, payload: Uint8Array.of(t, 0, 0, 0, 0, 0, 0, 0) });
      assert.ok(icmpError('net-unreachable', p, parsed(p), ROUTER4), `informational type ${t}`);
    }
    for (const t of [3, 4, 5, 11, 12]) {
      const p = ipv4Packet({ proto: 1, payload: Uint8Array.of(t, 0, 0, 0, 0, 0, 0, 0) });
      for (const kind of ['time-exceeded', 'net-unreachable', 'host-unreachable'] as const) {
        assert.equal(icmpError(kind, p, parsed(p), ROUTER4), undefined, `${kind} about ICMP type ${t}`);
      }
      assert.equal(icmpError('frag-needed', p, parsed(p), ROUTER4, { mtu: 576 }), undefined);
    }
  });

  test('not about a non-first fragment, multicast or broadcast destinations, or sources that are not one host', () => {
    const cases: Array<[string, V4]> = [
      ['non-first fragment', { frag: 0x2000 | 10 }],
      ['last fragment', { frag: 5 }],
      ['dst 224.0.0.5', { dst: '224.0.0.5' }],
      ['dst 239.255.255.250', { dst: '239.255.255.250' }],
      ['dst 255.255.255.255', { dst: '255.255.255.255' }],
      ['src 0.0.0.0', { src: '0.0.0.0' }],
      ['src 127.0.0.1', { src: '127.0.0.1' }],
      ['src 127.255.0.9', { src: '127.255.0.9' }],
      ['src 224.1.2.3', { src: '224.1.2.3' }],
      ['src 240.0.0.1 (class E)', { src: '240.0.0.1' }],
      ['src 255.255.255.255', { src: '255.255.255.255' }],
    ];
    for (const [name, o] of cases) {
      const p = ipv4Packet({ payload: pattern(16), ...o });
      const info = parsed(p);
      for (const kind of ['time-exceeded', 'net-unreachable', 'host-unreachable', 'frag-needed'] as const) {
        assert.equal(icmpError(kind, p, info, ROUTER4, { mtu: 1280 }), undefined, `${kind}: ${name}`);
        assert.equal(icmpErrorAllowed(kind, p, info), false);
      }
    }
    for (const ok of [{ dst: '223.255.255.255' }, { src: '1.0.0.1' }, { frag: 0x2000 }]) {
      const p = ipv4Packet({ payload: pattern(16), ...ok });
      assert.ok(icmpError('time-exceeded', p, parsed(p), ROUTER4), JSON.stringify(ok));
    }
  });

  test('refuses a router address of the other family, a missing or bad MTU, a bad ttl', () => {
    const info = parsed(TEXTBOOK);
    assert.throws(() => icmpError('time-exceeded', TEXTBOOK, info, ROUTER6), RangeArgumentError);
    assert.throws(() => icmpError('frag-needed', TEXTBOOK, info, ROUTER4), RangeArgumentError);
    assert.throws(() => icmpError('frag-needed', TEXTBOOK, info, ROUTER4, { mtu: 67 }), RangeArgumentError);
    assert.throws(() => icmpError('frag-needed', TEXTBOOK, info, ROUTER4, { mtu: 65536 }), RangeArgumentError);
    assert.throws(() => icmpError('time-exceeded', TEXTBOOK, info, ROUTER4, { ttl: 0 }), RangeArgumentError);
    assert.throws(() => icmpError('time-exceeded', TEXTBOOK, info, ROUTER4, { ttl: 256 }), RangeArgumentError);
  });
});

describe('icmpError: IPv6', () => {
  test('time exceeded (3/0), unreachable net (1/0) and host (1/3), with the pseudo-header checksum', () => {
    const info = parsed(V6_TCP);
    const te = must(icmpError('time-exceeded', V6_TCP, info, ROUTER6, { ttl: 255 }));
    checkIcmp6(te, V6_TCP, 3, 0);
    assert.equal(te[7], 255);
    assert.equal(te.length, 48 + 64);
    assert.equal(toHex(te.subarray(0, 8)), '60000000' + '0048' + '3a' + 'ff');
    assert.equal(u32(te, 44), 0, 'unused');
    checkIcmp6(must(icmpError('net-unreachable', V6_TCP, info, ROUTER6)), V6_TCP, 1, 0);
    checkIcmp6(must(icmpError('host-unreachable', V6_TCP, info, ROUTER6)), V6_TCP, 1, 3);
  });

  test('packet too big (2/0) with the MTU as u32; frag-needed maps to it; quotes up to 1280 bytes', () => {
    const big = bigV6();
    const info = parsed(big);
    for (const kind of ['packet-too-big', 'frag-needed'] as const) {
      const e = must(icmpError(kind, big, info, ROUTER6, { mtu: 1400 }));
      checkIcmp6(e, big, 2, 0);
      assert.equal(e.length, 1280);
      assert.equal(u32(e, 44), 1400);
      assert.equal(parsed(e).ttl, 64, 'default hop limit');
    }
    const huge = must(icmpError('packet-too-big', big, info, ROUTER6, { mtu: 0xffff_ffff }));
    assert.equal(u32(huge, 44), 0xffff_ffff);
    assert.throws(() => icmpError('packet-too-big', big, info, ROUTER6, { mtu: 1279 }), RangeArgumentError);
    assert.throws(() => icmpError('packet-too-big', big, info, ROUTER4, { mtu: 1280 }), RangeArgumentError);
  });

  test('not about ICMPv6 errors (types < 128) or Redirect, even behind extension headers; about echo, yes', () => {
    for (const t of [1, 2, 3, 4, 100, 127, 137]) {
      const direct = ipv6Packet({ next: 58, payload: Uint8Array.of(t, 0, 0, 0, 0, 0, 0, 0) });
      const behind = ipv6Packet({ next: 0, payload: cat(ext(60), ext(58), Uint8Array.of(t, 0, 0, 0, 0, 0, 0, 0)) });
      for (const p of [direct, behind]) {
        assert.equal(icmpError('time-exceeded', p, parsed(p), ROUTER6), undefined, `type ${t}`);
        assert.equal(icmpError('packet-too-big', p, parsed(p), ROUTER6, { mtu: 1280 }), undefined, `type ${t}`);
      }
    }
    for (const t of [128, 129, 133, 135, 200]) {
      const p = ipv6Packet({ next: 0, payload: cat(ext(58), Uint8Array.of(t, 0, 0, 0, 0, 0, 0, 0)) });
      assert.ok(icmpError('host-unreachable', p, parsed(p), ROUTER6), `informational type ${t}`);
    }
  });

  test('multicast destinations: packet too big only (RFC 4443 2.4(e.3)); bad sources: nothing', () => {
    const mc = bigV6({ dst: 'ff02::1' });
    const info = parsed(mc);
    assert.equal(icmpError('time-exceeded', mc, info, ROUTER6), undefined);
    assert.equal(icmpError('net-unreachable', mc, info, ROUTER6), undefined);
    assert.equal(icmpError('host-unreachable', mc, info, ROUTER6), undefined);
    checkIcmp6(must(icmpError('packet-too-big', mc, info, ROUTER6, { mtu: 1280 })), mc, 2, 0);
    for (const src of ['::', '::1', 'ff02::1', 'ff0e::101']) {
      const p = bigV6({ src });
      for (const kind of ['time-exceeded', 'net-unreachable', 'host-unreachable', 'packet-too-big'] as const) {
        assert.equal(icmpError(kind, p, parsed(p), ROUTER6, { mtu: 1280 }), undefined, `${kind} from ${src}`);
      }
    }
    for (const src of ['::2', '::1:0:0:1', 'fe80::1', '2001:db8::1']) {
      const p = bigV6({ src });
      assert.ok(icmpError('time-exceeded', p, parsed(p), ROUTER6), `from ${src}`);
    }
  });

  test('a non-first fragment: no time exceeded or unreachable, but packet too big', () => {
    const p = ipv6Packet({ next: 44, payload: cat(fragHeader(17, 1232, true), pattern(1300)) });
    const info = parsed(p);
    assert.equal(icmpError('time-exceeded', p, info, ROUTER6), undefined);
    assert.equal(icmpError('host-unreachable', p, info, ROUTER6), undefined);
    checkIcmp6(must(icmpError('packet-too-big', p, info, ROUTER6, { mtu: 1280 })), p, 2, 0);
    const first = ipv6Packet({ next: 44, payload: cat(fragHeader(17, 0, true), pattern(1300)) });
    assert.ok(icmpError('time-exceeded', first, parsed(first), ROUTER6));
  });
});

describe('ICMP errors dissected by tshark', () => {
  const have = spawnSync('sh', ['-c', 'command -v tshark']).status === 0;

  test('Time-to-live exceeded, Destination unreachable, Packet too big; good checksums', (t) => {
    if (!have) {
      t.skip('tshark is not installed here (apt-get install tshark)');
      return;
    }
    const big4 = bigV4();
    const big6 = bigV6();
    const cases: Array<{ pkt: Uint8Array; info: RegExp; type: string; code: string; mtu?: string; v6: boolean }> = [
      { pkt: must(icmpError('time-exceeded', TEXTBOOK, parsed(TEXTBOOK), ROUTER4)), info: /Time-to-live exceeded/, type: '11', code: '0', v6: false },
      {
        pkt: must(icmpError('net-unreachable', big4, parsed(big4), ROUTER4)),
        info: /Destination unreachable \(Network unreachable\)/,
        type: '3',
        code: '0',
        v6: false,
      },
      {
        pkt: must(icmpError('host-unreachable', big4, parsed(big4), ROUTER4)),
        info: /Destination unreachable \(Host unreachable\)/,
        type: '3',
        code: '1',
        v6: false,
      },
      {
        pkt: must(icmpError('frag-needed', big4, parsed(big4), ROUTER4, { mtu: 1400 })),
        info: /Destination unreachable \(Fragmentation needed\)/,
        type: '3',
        code: '4',
        mtu: '1400',
        v6: false,
      },
      { pkt: must(icmpError('time-exceeded', V6_TCP, parsed(V6_TCP), ROUTER6)), info: /Time Exceeded/i, type: '3', code: '0', v6: true },
      { pkt: must(icmpError('net-unreachable', big6, parsed(big6), ROUTER6)), info: /Destination Unreachable/i, type: '1', code: '0', v6: true },
      { pkt: must(icmpError('host-unreachable', big6, parsed(big6), ROUTER6)), info: /Destination Unreachable/i, type: '1', code: '3', v6: true },
      {
        pkt: must(icmpError('packet-too-big', big6, parsed(big6), ROUTER6, { mtu: 1280 })),
        info: /Packet Too Big/i,
        type: '2',
        code: '0',
        mtu: '1280',
        v6: true,
      },
    ];
    const dir = mkdtempSync(join(tmpdir(), 'cogmesh-icmp-'));
    try {
      const file = join(dir, 'icmp.pcap');
      writeFileSync(file, pcap(cases.map((c) => c.pkt)));
      const fields = ['ip.checksum.status', 'icmp.type', 'icmp.code', 'icmp.checksum.status', 'icmp.mtu'];
      const fields6 = ['icmpv6.type', 'icmpv6.code', 'icmpv6.checksum.status', 'icmpv6.mtu', '_ws.malformed', '_ws.col.Info'];
      const r = spawnSync(
        'tshark',
        [
          '-r',
          file,
          '-o',
          'ip.check_checksum:TRUE',
          '-T',
          'fields',
          '-E',
          'separator=|',
          '-E',
          'occurrence=f',
          ...[...fields, ...fields6].flatMap((f) => ['-e', f]),
        ],
        { encoding: 'utf8', timeout: 60_000 },
      );
      assert.equal(r.status, 0, r.stderr);
      const lines = r.stdout.trimEnd().split('\n');
      assert.equal(lines.length, cases.length, r.stdout);
      lines.forEach((line, i) => {
        const c = cases[i]!;
        const [ipSum, type4, code4, sum4, mtu4, type6, code6, sum6, mtu6, malformed, info] = line.split('|');
        const where = `frame ${i + 1}: ${line}`;
        assert.match(info!, c.info, where);
        assert.equal(malformed, '', where);
        if (c.v6) {
          assert.deepEqual([type6, code6, sum6, mtu6], [c.type, c.code, '1', c.mtu ?? ''], where);
        } else {
          assert.deepEqual([ipSum, type4, code4, sum4, mtu4], ['1', c.type, c.code, '1', c.mtu ?? ''], where);
        }
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('fragments reassembled by tshark', () => {
  const have = spawnSync('sh', ['-c', 'command -v tshark']).status === 0;

  test('good header checksums, and the reassembled datagram is the original payload', (t) => {
    if (!have) {
      t.skip('tshark is not installed here (apt-get install tshark)');
      return;
    }
    const options = cat(hex('82 0b 0102 0304 0506 070809'), hex('07 07 04 00000000'), Uint8Array.of(0, 0)); // security (copied), record route
    const b = bigV4({ options, payload: udp4('10.0.1.2', '10.0.4.9', 4000, 5000, pattern(1452)) });
    const pieces = fragmentIpv4(b, parsed(b), 576);
    assert.equal(pieces.length, 3);
    const dir = mkdtempSync(join(tmpdir(), 'cogmesh-frag-'));
    try {
      const file = join(dir, 'frag.pcap');
      writeFileSync(file, pcap(pieces));
      const fields = ['ip.checksum.status', 'ip.hdr_len', 'ip.reassembled.length', 'ip.reassembled.data', 'udp.srcport', '_ws.malformed'];
      const r = spawnSync(
        'tshark',
        ['-r', file, '-o', 'ip.check_checksum:TRUE', '-T', 'fields', '-E', 'separator=|', '-E', 'occurrence=f', ...fields.flatMap((f) => ['-e', f])],
        { encoding: 'utf8', timeout: 60_000 },
      );
      assert.equal(r.status, 0, r.stderr);
      const rows = r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split('|'));
      assert.deepEqual(
        rows.map((row) => [row[0], row[1], row[5]]),
        [
          ['1', '40', ''],
          ['1', '32', ''],
          ['1', '32', ''],
        ],
        r.stdout,
      );
      const last = rows[2]!;
      assert.equal(last[2], String(b.length - 40));
      assert.equal(last[3]!.replace(/:/g, ''), toHex(b.subarray(40)));
      assert.equal(last[4], '4000');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A classic pcap file (microsecond timestamps, little-endian) of raw IP packets: LINKTYPE_RAW = 101. */
function pcap(packets: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(24 + packets.reduce((n, p) => n + 16 + p.length, 0));
  const v = new DataView(out.buffer);
  v.setUint32(0, 0xa1b2c3d4, true); // magic: microsecond timestamps
  v.setUint16(4, 2, true); // version 2.4
  v.setUint16(6, 4, true);
  v.setUint32(16, 65535, true); // snaplen
  v.setUint32(20, 101, true); // LINKTYPE_RAW
  let at = 24;
  packets.forEach((p, i) => {
    v.setUint32(at, 1_700_000_000 + i, true);
    v.setUint32(at + 8, p.length, true);
    v.setUint32(at + 12, p.length, true);
    out.set(p, at + 16);
    at += 16 + p.length;
  });
  return out;
}

// ---------------------------------------------------------------------------
// Fragmentation

/** Puts fragments back together: the data by offset, checking coverage has no gap or overlap, and that the last has MF clear. */
function reassemble(pieces: Uint8Array[]): { data: Uint8Array; base: number; lastMf: boolean } {
  const infos = pieces.map((p) => ({ p, i: parsed(p) })).sort((a, b) => a.i.fragmentOffset - b.i.fragmentOffset);
  const base = infos[0]!.i.fragmentOffset;
  let at = base;
  const parts: Uint8Array[] = [];
  for (const { p, i } of infos) {
    assert.equal(i.fragmentOffset, at, 'no gap, no overlap');
    parts.push(p.subarray(i.headerBytes, i.totalBytes));
    at += i.totalBytes - i.headerBytes;
  }
  return { data: cat(...parts), base, lastMf: infos[infos.length - 1]!.i.moreFragments };
}

function checkPieces(pieces: Uint8Array[], original: Uint8Array, mtu: number): void {
  const orig = parsed(original);
  pieces.forEach((p, k) => {
    const i = parsed(p); // header checksum right, lengths consistent
    assert.ok(p.length <= mtu, `piece ${k}: ${p.length} > ${mtu}`);
    assert.equal(i.totalBytes, p.length);
    assert.equal(i.dontFragment, false);
    assert.equal(p[6]! & 0x80, 0, 'reserved bit clear');
    assert.equal(u16(p, 4), u16(original, 4), 'same ID');
    assert.equal(p[1], original[1], 'same TOS');
    assert.equal(i.ttl, orig.ttl);
    assert.equal(i.proto, orig.proto);
    assert.deepEqual(i.src, orig.src);
    assert.deepEqual(i.dst, orig.dst);
    if (k < pieces.length - 1) {
      assert.equal((i.totalBytes - i.headerBytes) % 8, 0, `piece ${k} carries a multiple of 8`);
      assert.equal(i.moreFragments, true);
    }
  });
  const { data, base, lastMf } = reassemble(pieces);
  assert.equal(base, orig.fragmentOffset);
  assert.equal(lastMf, orig.moreFragments);
  assert.deepEqual(data, original.subarray(orig.headerBytes, orig.totalBytes));
}

describe('fragmentIpv4', () => {
  test('a 1500-byte UDP packet at MTU 576: 3 pieces of 572, 572, 396; reassembles to the payload', () => {
    const b = bigV4();
    const pieces = fragmentIpv4(b, parsed(b), 576);
    assert.deepEqual(
      pieces.map((p) => p.length),
      [572, 572, 396],
    );
    assert.deepEqual(
      pieces.map((p) => u16(p, 6)),
      [0x2000 | 0, 0x2000 | 69, 138],
    );
    checkPieces(pieces, b, 576);
    assert.equal(parsed(pieces[0]!).srcPort, 4000);
    assert.equal(parsed(pieces[1]!).srcPort, undefined);
  });

  test('options: the first piece keeps all; later ones only those with the copied flag, padded to 4', () => {
    // NOP, record route (7, not copied, 7 bytes), security (130, copied, 11 bytes), EOL: 20 bytes of options.
    const rr = hex('07 07 04 00000000');
    const sec = hex('82 0b 0102 0304 0506 070809');
    const options = cat(Uint8Array.of(1), rr, sec, Uint8Array.of(0));
    const b = ipv4Packet({ options, payload: pattern(200) });
    const pieces = fragmentIpv4(b, parsed(b), 100);
    assert.deepEqual(pieces[0]!.subarray(0, 40).subarray(20), options);
    assert.equal(parsed(pieces[0]!).headerBytes, 40);
    for (const p of pieces.slice(1)) {
      const i = parsed(p);
      assert.equal(i.headerBytes, 32);
      assert.deepEqual(p.subarray(20, 32), cat(sec, Uint8Array.of(0)));
    }
    checkPieces(pieces, b, 100);
  });

  test('a fragment fragmented again keeps its offset, and its MF on the last piece', () => {
    for (const mf of [true, false]) {
      const b = ipv4Packet({ frag: (mf ? 0x2000 : 0) | 100, payload: pattern(1000) });
      const pieces = fragmentIpv4(b, parsed(b), 300);
      assert.equal(parsed(pieces[0]!).fragmentOffset, 800);
      assert.equal(parsed(pieces[pieces.length - 1]!).moreFragments, mf);
      checkPieces(pieces, b, 300);
    }
  });

  test('MTU 68, the minimum, with a full 60-byte header: 8 bytes in the first piece, 40 in the others', () => {
    const b = ipv4Packet({ options: hex('94040000' + '01010101'.repeat(9)), payload: pattern(100) });
    const pieces = fragmentIpv4(b, parsed(b), 68);
    assert.equal(pieces[0]!.length, 68);
    assert.equal(parsed(pieces[1]!).headerBytes, 24, 'router alert (148) is copied, the NOPs are not');
    assert.deepEqual(
      pieces.map((p) => p.length - parsed(p).headerBytes),
      [8, 40, 40, 12],
    );
    checkPieces(pieces, b, 68);
  });

  test('a packet that fits comes back as one view; link padding is dropped', () => {
    const b = cat(TEXTBOOK, new Uint8Array(5));
    const info = parsed(b);
    const dfCleared = Uint8Array.from(b);
    set16(dfCleared, 6, 0);
    set16(dfCleared, 10, headerChecksum(dfCleared));
    const one = fragmentIpv4(dfCleared, parsed(dfCleared), 1500);
    assert.equal(one.length, 1);
    assert.equal(one[0]!.buffer, dfCleared.buffer);
    assert.equal(one[0]!.length, 115);
    assert.equal(info.totalBytes, 115);
  });

  test('refuses an MTU under 68, a DF packet, and IPv6', () => {
    const b = bigV4();
    assert.throws(() => fragmentIpv4(b, parsed(b), 67), RangeArgumentError);
    assert.throws(() => fragmentIpv4(b, parsed(b), 576.5), RangeArgumentError);
    assert.throws(() => fragmentIpv4(TEXTBOOK, parsed(TEXTBOOK), 576), RangeArgumentError, 'DF');
    assert.throws(() => fragmentIpv4(V6_TCP, parsed(V6_TCP), 1280), RangeArgumentError);
  });

  test('random sizes, MTUs, options and offsets all reassemble (seeded)', () => {
    const rng = Rng.fromSeed(791_5);
    for (let k = 0; k < 300; k++) {
      const optWords = rng.int(0, 10);
      const options = new Uint8Array(optWords * 4).fill(1); // NOPs
      if (optWords >= 2 && rng.next() < 0.5) options.set(hex('8206 00000000'), 0); // a copied option
      const b = ipv4Packet({ options, frag: rng.next() < 0.3 ? (rng.next() < 0.5 ? 0x2000 : 0) | rng.int(1, 500) : 0, payload: pattern(rng.int(1, 4000), k) });
      const mtu = rng.int(68, 1600);
      const pieces = fragmentIpv4(b, parsed(b), mtu);
      checkPieces(pieces, b, mtu);
    }
  });
});

// ---------------------------------------------------------------------------
// Addresses and prefixes

describe('parseIpAddress and formatIpAddress', () => {
  test('accepts dotted quads and RFC 4291 2.2 forms', () => {
    const cases: Array<[string, string]> = [
      ['0.0.0.0', '00000000'],
      ['255.255.255.255', 'ffffffff'],
      ['10.0.4.1', '0a000401'],
      ['::', '0'.repeat(32)],
      ['::1', '0'.repeat(31) + '1'],
      ['1::', '0001' + '0'.repeat(28)],
      ['fd00:1:0:4::', 'fd00000100000004' + '0'.repeat(16)],
      ['2001:DB8::Ab:1', '20010db8' + '0'.repeat(16) + '00ab0001'],
      ['1:2:3:4:5:6:7:8', '00010002000300040005000600070008'],
      ['1::2:3:4:5:6:7', '00010000000200030004000500060007'],
      ['::ffff:192.0.2.1', '00000000000000000000ffffc0000201'],
      ['64:ff9b::192.0.2.33', '0064ff9b0000000000000000c0000221'],
      ['1:2:3:4:5:6:1.2.3.4', '00010002000300040005000601020304'],
      ['::1.2.3.4', '00000000000000000000000001020304'],
      ['0000:0000:0000:0000:0000:0000:0000:0001', '0'.repeat(31) + '1'],
    ];
    for (const [text, bytes] of cases) assert.equal(toHex(addr(text)), bytes, text);
  });

  test('refuses everything else', () => {
    for (const text of [
      '',
      '1.2.3',
      '1.2.3.4.5',
      '256.0.0.1',
      '01.2.3.4',
      '1.2.3.-1',
      '1.2.3.4 ',
      ' 1.2.3.4',
      '1.2.3.4/32',
      '0x1.2.3.4',
      '1:2:3:4:5:6:7',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7::8',
      '1::2::3',
      ':::',
      ':1::',
      '1::2:',
      ':1:2:3:4:5:6:7',
      '12345::',
      'g::1',
      'fe80::1%eth0',
      '[::1]',
      '::1.2.3',
      '1.2.3.4::',
      '::1.2.3.4:5',
      '::ffff:256.1.1.1',
      '::ffff:01.1.1.1',
      '1:2:3:4:5:6:7:1.2.3.4',
      '1:2:3:4:5:6:7:8:1.2.3.4',
    ]) {
      assert.equal(parseIpAddress(text), undefined, JSON.stringify(text));
    }
  });

  test('formats IPv6 as RFC 5952 section 4 says', () => {
    const cases: Array<[string, string]> = [
      ['2001:0db8:0000:0000:0000:0000:0002:0001', '2001:db8::2:1'],
      ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'], // one zero group is not compressed (4.2.2)
      ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'], // the longest run (4.2.3)
      ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], // a tie: the first (4.2.3)
      ['2001:DB8::AAAA', '2001:db8::aaaa'], // lower case (4.3)
      ['0:0:0:0:0:0:0:0', '::'],
      ['0:0:0:0:0:0:0:1', '::1'],
      ['1:0:0:0:0:0:0:0', '1::'],
      ['fe80:0:0:0:0:0:0:0', 'fe80::'],
      ['0:0:1:0:0:0:0:0', '0:0:1::'],
      ['1:0:0:2:0:0:0:0', '1:0:0:2::'],
      ['0:0:0:1:2:3:4:5', '::1:2:3:4:5'],
      ['1:2:3:4:5:6:7:0', '1:2:3:4:5:6:7:0'],
      ['::ffff:192.0.2.1', '::ffff:c000:201'],
      ['fd00:1:0:4::1', 'fd00:1:0:4::1'],
    ];
    for (const [input, want] of cases) assert.equal(formatIpAddress(addr(input)), want, input);
    assert.equal(formatIpAddress(Uint8Array.of(10, 0, 4, 1)), '10.0.4.1');
    assert.throws(() => formatIpAddress(new Uint8Array(5)), RangeArgumentError);
  });

  /** Whether `text` compresses a run of >= 2 zero groups that no run left before it equals and none after it exceeds. */
  function rfc5952Runs(text: string): boolean {
    const [left, right] = text.includes('::') ? text.split('::') : [text, undefined];
    const runs = (part: string) =>
      part === ''
        ? []
        : (
            part
              .split(':')
              .join(',')
              .match(/(^|,)0(,0)*(?=,|$)/g) ?? []
          ).map((m) => m.split('0').length - 1);
    const leftRuns = runs(left!);
    if (right === undefined) return leftRuns.every((r) => r < 2);
    const rightRuns = runs(right);
    const explicit = (left === '' ? 0 : left!.split(':').length) + (right === '' ? 0 : right.split(':').length);
    const compressed = 8 - explicit;
    return compressed >= 2 && leftRuns.every((r) => r < compressed) && rightRuns.every((r) => r <= compressed);
  }

  test('round trips over random addresses with zero runs (seeded)', () => {
    const rng = Rng.fromSeed(5952);
    for (let k = 0; k < 2000; k++) {
      const b = new Uint8Array(16);
      for (let g = 0; g < 8; g++) {
        const r = rng.next();
        const w = r < 0.5 ? 0 : r < 0.7 ? rng.int(1, 15) : rng.int(0, 0xffff);
        b[2 * g] = w >>> 8;
        b[2 * g + 1] = w & 0xff;
      }
      const text = formatIpAddress(b);
      assert.deepEqual(parseIpAddress(text), b, text);
      assert.equal(text, text.toLowerCase());
      assert.ok(!/(^|:)0[0-9a-f]/.test(text), `no leading zeros: ${text}`);
      assert.ok(rfc5952Runs(text), `the longest zero run, first on ties, is the one compressed: ${text}`);
      const v4 = Uint8Array.from({ length: 4 }, () => rng.int(0, 255));
      assert.deepEqual(parseIpAddress(formatIpAddress(v4)), v4);
    }
  });
});

describe('prefixes', () => {
  const prefix = (text: string): Prefix => {
    const r = parsePrefix(text);
    if (!r.ok) assert.fail(r.error);
    return r.value;
  };

  test('parses IPv4 and IPv6 prefixes; a bare address is a host prefix', () => {
    const p = prefix('10.0.4.0/24');
    assert.deepEqual(p, { version: 4, bytes: Uint8Array.of(10, 0, 4, 0), length: 24 });
    const q = prefix('fd00:1:0:4::/64');
    assert.equal(q.version, 6);
    assert.equal(toHex(q.bytes), 'fd00000100000004' + '0'.repeat(16));
    assert.equal(q.length, 64);
    assert.equal(prefix('10.0.4.1').length, 32);
    assert.equal(prefix('::1').length, 128);
    assert.equal(prefix('0.0.0.0/0').length, 0);
    assert.equal(prefix('::/0').length, 0);
    assert.equal(prefix('10.128.0.0/9').length, 9);
  });

  test('format round trips', () => {
    for (const t of ['10.0.4.0/24', 'fd00:1:0:4::/64', '0.0.0.0/0', '::/0', '10.0.4.1/32', '2001:db8::/32', 'fe80::/10', '10.128.0.0/9', '::1/128']) {
      assert.equal(formatPrefix(prefix(t)), t);
    }
    assert.equal(formatPrefix(prefix('FD00:0001:0000:0004:0000::/64')), 'fd00:1:0:4::/64');
  });

  test('refuses host bits with the prefix probably meant, and bad text naming it', () => {
    assert.deepEqual(parsePrefix('10.0.4.1/24'), { ok: false, error: '10.0.4.1/24 has host bits set (did you mean 10.0.4.0/24?)' });
    assert.deepEqual(parsePrefix('10.192.0.0/9'), { ok: false, error: '10.192.0.0/9 has host bits set (did you mean 10.128.0.0/9?)' });
    assert.deepEqual(parsePrefix('fd00:1:0:4::1/64'), { ok: false, error: 'fd00:1:0:4::1/64 has host bits set (did you mean fd00:1:0:4::/64?)' });
    const bad: Array<[string, RegExp]> = [
      ['', /empty/],
      ['10.0.4.0/33', /^10\.0\.4\.0\/33: .*33 .*0-32/],
      ['fd00::/129', /^fd00::\/129: .*129 .*0-128/],
      ['10.0.4.0/', /^10\.0\.4\.0\/: .*missing/],
      ['/24', /^\/24: .*address is missing/],
      ['10.0.4.0/024', /^10\.0\.4\.0\/024: /],
      ['10.0.4.0/24/1', /^10\.0\.4\.0\/24\/1: /],
      ['10.0.4.0/-1', /^10\.0\.4\.0\/-1: /],
      ['10.0.4.300/24', /^10\.0\.4\.300\/24: 10\.0\.4\.300 is not an IPv4 or IPv6 address$/],
      ['router/24', /router is not/],
    ];
    for (const [text, re] of bad) {
      const r = parsePrefix(text);
      assert.ok(!r.ok, text);
      assert.match(r.error, re);
    }
  });

  test('prefixContains: inside, outside, partial bytes, /0, /32 and /128, and never across families', () => {
    const p = prefix('10.0.4.0/24');
    assert.ok(prefixContains(p, addr('10.0.4.0')));
    assert.ok(prefixContains(p, addr('10.0.4.255')));
    assert.ok(!prefixContains(p, addr('10.0.5.1')));
    const nine = prefix('10.128.0.0/9');
    assert.ok(prefixContains(nine, addr('10.255.1.1')));
    assert.ok(!prefixContains(nine, addr('10.127.1.1')));
    assert.ok(prefixContains(prefix('0.0.0.0/0'), addr('203.0.113.7')));
    assert.ok(!prefixContains(prefix('0.0.0.0/0'), addr('::1')), 'not across families');
    assert.ok(!prefixContains(prefix('::/0'), addr('10.0.0.1')));
    assert.ok(prefixContains(prefix('::/0'), addr('2001:db8::1')));
    assert.ok(prefixContains(prefix('10.0.4.1'), addr('10.0.4.1')));
    assert.ok(!prefixContains(prefix('10.0.4.1'), addr('10.0.4.2')));
    const ula = prefix('fd00:1:0:4::/64');
    assert.ok(prefixContains(ula, addr('fd00:1:0:4::1')));
    assert.ok(!prefixContains(ula, addr('fd00:1:0:5::1')));
    assert.ok(prefixContains(prefix('fe80::/10'), addr('febf::1')));
    assert.ok(!prefixContains(prefix('fe80::/10'), addr('fec0::1')));
  });
});

describe('PrefixTable', () => {
  const prefix = (text: string): Prefix => {
    const r = parsePrefix(text);
    if (!r.ok) assert.fail(r.error);
    return r.value;
  };
  const hit = (t: PrefixTable<string>, a: string) => t.lookup(addr(a))?.value;

  test('longest prefix match, IPv4 and IPv6 kept apart', () => {
    const t = new PrefixTable<string>();
    for (const [p, v] of [
      ['0.0.0.0/0', 'default'],
      ['10.0.0.0/8', 'ten'],
      ['10.0.4.0/24', 'lan4'],
      ['10.0.4.128/25', 'upper'],
      ['10.0.4.1/32', 'router'],
      ['fd00::/8', 'ula'],
      ['fd00:1:0:4::/64', 'lan6'],
      ['fd00:1:0:4::1/128', 'router6'],
      ['fd00:1:8000::/33', 'odd'],
    ] as const) {
      t.set(prefix(p), v);
    }
    assert.equal(t.size, 9);
    assert.equal(hit(t, '10.0.4.1'), 'router');
    assert.equal(hit(t, '10.0.4.2'), 'lan4');
    assert.equal(hit(t, '10.0.4.200'), 'upper');
    assert.equal(hit(t, '10.9.9.9'), 'ten');
    assert.equal(hit(t, '192.0.2.1'), 'default');
    assert.equal(hit(t, 'fd00:1:0:4::1'), 'router6');
    assert.equal(hit(t, 'fd00:1:0:4::2'), 'lan6');
    assert.equal(hit(t, 'fd00:1:ffff::1'), 'odd');
    assert.equal(hit(t, 'fd00:1:7fff::1'), 'ula');
    assert.equal(hit(t, '2001:db8::1'), undefined, 'no IPv6 default: the IPv4 one does not apply');
    assert.equal(t.lookup(new Uint8Array(5)), undefined);
    const e = t.lookup(addr('10.0.4.77'))!;
    assert.equal(formatPrefix(e.prefix), '10.0.4.0/24');
  });

  test('set replaces, delete removes (and the lookup falls back), clear empties; entries in order', () => {
    const t = new PrefixTable<number>();
    const p24 = prefix('10.0.4.0/24');
    t.set(prefix('10.0.0.0/8'), 8);
    t.set(p24, 1);
    t.set(p24, 24);
    t.set(prefix('::/0'), 0);
    t.set(prefix('10.0.0.0/16'), 16);
    assert.equal(t.size, 4);
    assert.equal(t.lookup(addr('10.0.4.1'))?.value, 24);
    assert.deepEqual(
      t.entries().map((e) => `${formatPrefix(e.prefix)}=${e.value}`),
      ['10.0.0.0/8=8', '10.0.0.0/16=16', '10.0.4.0/24=24', '::/0=0'],
    );
    assert.equal(t.delete(p24), true);
    assert.equal(t.delete(p24), false);
    assert.equal(t.delete(prefix('10.0.5.0/24')), false);
    assert.equal(t.size, 3);
    assert.equal(t.lookup(addr('10.0.4.1'))?.value, 16);
    t.clear();
    assert.equal(t.size, 0);
    assert.equal(t.lookup(addr('10.0.4.1')), undefined);
    assert.deepEqual(t.entries(), []);
  });

  test('keeps its own copy of the prefix; refuses malformed prefixes', () => {
    const t = new PrefixTable<string>();
    const p = prefix('10.0.4.0/24');
    t.set(p, 'x');
    p.bytes[2] = 9;
    assert.equal(hit(t, '10.0.4.1'), 'x');
    assert.throws(() => t.set({ version: 4, bytes: Uint8Array.of(10, 0, 4, 1), length: 24 }, 'h'), RangeArgumentError);
    assert.throws(() => t.set({ version: 4, bytes: new Uint8Array(16), length: 24 }, 'h'), RangeArgumentError);
    assert.throws(() => t.set({ version: 6, bytes: new Uint8Array(16), length: 129 }, 'h'), RangeArgumentError);
    assert.throws(() => t.set({ version: 4, bytes: new Uint8Array(4), length: 1.5 }, 'h'), RangeArgumentError);
    assert.equal(t.delete({ version: 4, bytes: new Uint8Array(16), length: 8 }), false);
  });

  test('agrees with a brute-force longest match over random routes and addresses (seeded)', () => {
    const rng = Rng.fromSeed(1812);
    const bits = (b: Uint8Array) => [...b].map((x) => x.toString(2).padStart(8, '0')).join('');
    const fromBits = (s: string, size: number) => {
      const out = new Uint8Array(size);
      for (let i = 0; i < s.length; i++) if (s[i] === '1') out[i >> 3]! |= 0x80 >> (i & 7);
      return out;
    };
    for (const family of [4, 6] as const) {
      const size = family === 4 ? 4 : 16;
      const t = new PrefixTable<number>();
      const routes: Array<{ bits: string; len: number; id: number }> = [];
      const lens = family === 4 ? [0, 8, 12, 16, 20, 23, 24, 25, 28, 32] : [0, 16, 29, 32, 48, 56, 63, 64, 65, 96, 127, 128];
      const base = Uint8Array.from({ length: size }, () => rng.int(0, 255));
      const near = () => {
        // Addresses sharing leading bits with `base`, so that routes nest.
        const a = Uint8Array.from(base);
        for (let i = rng.int(0, size - 1); i < size; i++) a[i] = rng.int(0, 255);
        return a;
      };
      for (let k = 0; k < 400; k++) {
        const len = lens[rng.int(0, lens.length - 1)]!;
        const b = bits(near()).slice(0, len);
        const p: Prefix = { version: family, bytes: fromBits(b, size), length: len };
        const id = k;
        t.set(p, id);
        const same = routes.findIndex((x) => x.bits === b && x.len === len);
        if (same >= 0) routes.splice(same, 1);
        routes.push({ bits: b, len, id });
        if (rng.next() < 0.1) {
          const victim = routes.splice(rng.int(0, routes.length - 1), 1)[0]!;
          assert.equal(t.delete({ version: family, bytes: fromBits(victim.bits, size), length: victim.len }), true);
        }
      }
      assert.equal(t.size, routes.length);
      for (let k = 0; k < 3000; k++) {
        const a = near();
        const ab = bits(a);
        let best: { len: number; id: number } | undefined;
        for (const r of routes) if (ab.startsWith(r.bits) && (best === undefined || r.len > best.len)) best = r;
        assert.equal(t.lookup(a)?.value, best?.id, `IPv${family} ${formatIpAddress(a)}`);
      }
    }
  });
});

// ---------------------------------------------------------------------------
// Flow hash

describe('flowHash', () => {
  /** FNV-1a 32 with BigInt arithmetic, folded to 16 bits: an independent reference. */
  function refHash(bytes: number[]): number {
    let h = 0x811c9dc5n;
    for (const x of bytes) h = ((h ^ BigInt(x)) * 0x01000193n) & 0xffffffffn;
    const n = Number(h);
    return (n >>> 16) ^ (n & 0xffff);
  }

  test('is FNV-1a over version, proto, addresses and ports, folded to 16 bits', () => {
    const i = parsed(TEXTBOOK);
    assert.equal(flowHash(i), refHash([4, 17, 192, 168, 0, 1, 192, 168, 0, 199, 0, 53, 0xd4, 0x31]));
    const j = parsed(V6_TCP);
    assert.equal(flowHash(j), refHash([6, 6, ...j.src, ...j.dst, 0xc3, 0x50, 0, 80]));
    const frag = parsed(ipv4Packet({ frag: 9, proto: 17, payload: pattern(16) }));
    assert.equal(flowHash(frag), refHash([4, 17, 10, 0, 1, 2, 10, 0, 4, 9, 0, 0, 0, 0]), 'absent ports count as 0');
  });

  test('same flow, same hash; packets of a flow differing only in payload or TTL agree; values spread', () => {
    const a = parsed(ipv4Packet({ proto: 17, payload: udp4('10.0.1.2', '10.0.4.9', 1000, 2000, pattern(10)) }));
    const b = parsed(ipv4Packet({ proto: 17, ttl: 3, payload: udp4('10.0.1.2', '10.0.4.9', 1000, 2000, pattern(99, 5)) }));
    assert.equal(flowHash(a), flowHash(b));
    const counts = new Array<number>(16).fill(0);
    for (let port = 0; port < 4096; port++) {
      const h = flowHash({ ...a, srcPort: 10000 + port });
      assert.ok(Number.isInteger(h) && h >= 0 && h <= 0xffff);
      counts[h & 15]!++;
    }
    for (const c of counts) assert.ok(c > 256 * 0.75 && c < 256 * 1.25, `buckets: ${counts.join(',')}`);
  });
});

describe('icmpErrorAllowed and kinds', () => {
  test('every kind maps to a message in both families', () => {
    const kinds: IcmpErrorKind[] = ['time-exceeded', 'net-unreachable', 'host-unreachable', 'frag-needed', 'packet-too-big'];
    const want4 = [
      [11, 0],
      [3, 0],
      [3, 1],
      [3, 4],
      [3, 4],
    ];
    const want6 = [
      [3, 0],
      [1, 0],
      [1, 3],
      [2, 0],
      [2, 0],
    ];
    kinds.forEach((k, i) => {
      const e4 = must(icmpError(k, TEXTBOOK, parsed(TEXTBOOK), ROUTER4, { mtu: 1400 }));
      assert.deepEqual([e4[20], e4[21]], want4[i], k);
      const e6 = must(icmpError(k, V6_TCP, parsed(V6_TCP), ROUTER6, { mtu: 1400 }));
      assert.deepEqual([e6[40], e6[41]], want6[i], k);
    });
  });
});

describe('ipPacket and clampMss', () => {
  const v4 = (t: string) => Uint8Array.from(t.split('.').map(Number));

  /** A SYN with `pad` NOPs before its MSS option (an odd offset for 1), its checksum right over 10.0.0.2 > 10.0.3.2. */
  function syn(mss: number, pad: number): { seg: Uint8Array; ip: { src: Uint8Array; dst: Uint8Array } } {
    const opts = [...Array<number>(pad).fill(1), 2, 4, mss >> 8, mss & 0xff];
    while (opts.length % 4) opts.push(0);
    const seg = new Uint8Array(20 + opts.length);
    seg.set([0x9c, 0x40, 0x1f, 0x40, 0, 0, 0, 1, 0, 0, 0, 0, ((20 + opts.length) / 4) << 4, 0x02, 0xff, 0xff]);
    seg.set(opts, 20);
    const ip = { src: v4('10.0.0.2'), dst: v4('10.0.3.2') };
    const ck = tcpChecksum(seg, ip);
    seg[16] = ck >> 8;
    seg[17] = ck & 0xff;
    return { seg, ip };
  }

  for (const pad of [0, 1, 2, 3]) {
    test(`a SYN's MSS is lowered with its checksum kept right (option ${pad} bytes in)`, () => {
      const { seg, ip } = syn(1460, pad);
      assert.equal(clampMss(seg, 1360), true);
      assert.equal((seg[20 + pad + 2]! << 8) | seg[20 + pad + 3]!, 1360);
      assert.equal(tcpChecksum(seg, ip), 0);
      assert.equal(clampMss(seg, 1400), false, 'an MSS already small enough stays');
    });
  }

  test('a segment that is no SYN keeps its MSS', () => {
    const { seg } = syn(1460, 0);
    seg[13] = 0x10;
    assert.equal(clampMss(seg, 1360), false);
  });

  test('ipPacket: IPv4 with DF and a right header checksum, IPv6 with its payload length', () => {
    const p4 = ipPacket(6, v4('10.0.0.2'), v4('10.0.3.2'), new Uint8Array(20), { df: true, id: 7 });
    const r4 = parseIp(p4);
    assert.ok(r4.ok);
    assert.equal(r4.value.dontFragment, true);
    assert.equal(r4.value.ttl, 64);
    assert.equal(r4.value.totalBytes, 40);
    const a6 = new Uint8Array(16);
    a6[0] = 0xfd;
    const p6 = ipPacket(17, a6, a6, new Uint8Array(9), { ttl: 3 });
    const r6 = parseIp(p6);
    assert.ok(r6.ok);
    assert.equal(r6.value.totalBytes, 49);
    assert.equal(r6.value.ttl, 3);
    assert.throws(() => ipPacket(6, v4('10.0.0.2'), a6, new Uint8Array(0)), RangeArgumentError);
  });
});
