import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import { assertViewInto, mutate, refused } from '../support/bytes.js';
import { WireError, type WireErrorCode } from '../../src/wire/codec.js';
import {
  TCP_ACK,
  TCP_CWR,
  TCP_ECE,
  TCP_FIN,
  TCP_HEADER_BYTES,
  TCP_MAX_OPTION_BYTES,
  TCP_PSH,
  TCP_RST,
  TCP_SYN,
  TCP_URG,
  encodeTcp,
  formatSegment,
  internetChecksum,
  ipv4,
  optionBytes,
  parseTcp,
  tcpChecksum,
  type IpPair,
  type SackBlock,
  type TcpOptions,
  type TcpSegment,
} from '../../src/wire/tcp.js';

const U32 = 0xffff_ffff;
const TCP_CODES: readonly WireErrorCode[] = ['WIRE_TRUNCATED', 'WIRE_BAD_LENGTH', 'WIRE_BAD_FIELD', 'WIRE_BAD_CHECKSUM'];

const hex = (s: string) => Uint8Array.from(Buffer.from(s.replace(/\s+/g, ''), 'hex'));
const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');

const V4: IpPair = { src: ipv4(10, 0, 0, 1), dst: ipv4(10, 0, 0, 2) };
const V6: IpPair = {
  src: hex('20010db8 00000000 00000000 00000001'),
  dst: hex('20010db8 00000000 00000000 00000002'),
};

function seg(over: Partial<TcpSegment> = {}): TcpSegment {
  return {
    srcPort: 1000,
    dstPort: 80,
    seq: 1,
    ack: 2,
    flags: TCP_SYN | TCP_ACK,
    window: 65535,
    urgent: 0,
    options: {},
    payload: new Uint8Array(0),
    ...over,
  };
}

function blocks(n: number): SackBlock[] {
  return Array.from({ length: n }, (_, i) => ({ left: 1000 + 100 * i, right: 1050 + 100 * i }));
}

/**
 * RFC 1071 done the slow, obvious way, as the reference: concatenate, pad
 * to even, add the words, fold, complement.
 */
function referenceChecksum(...parts: Uint8Array[]): number {
  const all = concat(...parts);
  const even = all.length % 2 === 0 ? all : concat(all, Uint8Array.of(0));
  let sum = 0;
  for (let i = 0; i < even.length; i += 2) sum += even[i]! * 256 + even[i + 1]!;
  while (sum > 0xffff) sum = (sum & 0xffff) + Math.floor(sum / 0x10000);
  return ~sum & 0xffff;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** RFC 9293 3.1 (zero, protocol, u16 length) or RFC 8200 8.1 (u32 length, three zeros, next header). */
function pseudoHeader(ip: IpPair, length: number): Uint8Array {
  const tail = new DataView(new ArrayBuffer(ip.src.length === 4 ? 4 : 8));
  if (ip.src.length === 4) {
    tail.setUint8(1, 6);
    tail.setUint16(2, length);
  } else {
    tail.setUint32(0, length);
    tail.setUint8(7, 6);
  }
  return concat(ip.src, ip.dst, new Uint8Array(tail.buffer));
}

/** Puts the right checksum into hand-built segment bytes. */
function withChecksum(b: Uint8Array, ip: IpPair): Uint8Array {
  const out = Uint8Array.from(b);
  out[16] = 0;
  out[17] = 0;
  const c = tcpChecksum(out, ip);
  out[16] = c >>> 8;
  out[17] = c & 0xff;
  return out;
}

/** A 20-byte header (no checksum) with `options` appended and the data offset set to cover them. */
function rawSegment(options: string, payload = ''): Uint8Array {
  const opts = hex(options);
  assert.equal(opts.length % 4, 0, 'test bug: options must fill whole words');
  const words = 5 + opts.length / 4;
  const head = hex(`03e8 0050 00000001 00000002 ${(words << 4).toString(16).padStart(2, '0')} 12 ffff 0000 0000`);
  return Uint8Array.from([...head, ...opts, ...hex(payload)]);
}

function parsedOk(b: Uint8Array, ip?: IpPair): TcpSegment {
  const r = parseTcp(b, ip);
  if (!r.ok) assert.fail(`parse failed: ${r.error.code} ${r.error.message}`);
  return r.value;
}

function parseFails(r: ReturnType<typeof parseTcp>, code: WireErrorCode, message?: RegExp): WireError {
  if (r.ok) assert.fail(`expected ${code}, parsed ${formatSegment(r.value)}`);
  const e = r.error;
  assert.ok(e instanceof WireError, `not a WireError: ${String(e)}`);
  assert.equal(e.code, code, e.message);
  assert.equal(e.what, 'TCP');
  if (message !== undefined) assert.match(e.message, message);
  return e;
}

/** Every subset of the five options, SACK with the most blocks that still fit. */
function optionCombinations(): TcpOptions[] {
  const out: TcpOptions[] = [];
  for (let m = 0; m < 32; m++) {
    const o: TcpOptions = {};
    if (m & 1) o.mss = 1460;
    if (m & 2) o.windowScale = 7;
    if (m & 4) o.sackPermitted = true;
    if (m & 8) o.timestamp = { value: 0x01020304, echo: 0xa0b0c0d0 };
    if (m & 16) {
      let n = 4;
      while (n > 1 && optionBytes({ ...o, sack: blocks(n) }) > TCP_MAX_OPTION_BYTES) n--;
      o.sack = blocks(n);
      if (optionBytes(o) > TCP_MAX_OPTION_BYTES) continue; // nothing of SACK fits with these
    }
    out.push(o);
  }
  return out;
}

describe('constants', () => {
  test('flag bits, header and option sizes', () => {
    assert.deepEqual([TCP_FIN, TCP_SYN, TCP_RST, TCP_PSH, TCP_ACK, TCP_URG, TCP_ECE, TCP_CWR], [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80]);
    assert.equal(TCP_HEADER_BYTES, 20);
    assert.equal(TCP_MAX_OPTION_BYTES, 40);
  });
});

describe('checksum', () => {
  test('RFC 1071 section 3 example: 0001 f203 f4f5 f6f7 sums to 0xddf2, checksum 0x220d', () => {
    const b = hex('0001 f203 f4f5 f6f7');
    assert.equal(internetChecksum(b), ~0xddf2 & 0xffff);
    assert.equal(internetChecksum(b), 0x220d);
    assert.equal(referenceChecksum(b), 0x220d);
    // The checksum appended makes the whole sum 0xffff, so checking it gives 0.
    assert.equal(internetChecksum(b, hex('220d')), 0);
  });

  test('the parts are one byte string: every split, odd lengths anywhere, empty parts', () => {
    const b = hex('0001 f203 f4f5 f6f7 ab');
    const whole = referenceChecksum(b);
    assert.equal(internetChecksum(b), whole);
    for (let i = 0; i <= b.length; i++) {
      for (let j = i; j <= b.length; j++) {
        const got = internetChecksum(b.subarray(0, i), b.subarray(i, j), new Uint8Array(0), b.subarray(j));
        assert.equal(got, whole, `split at ${i} and ${j}`);
      }
    }
    assert.equal(internetChecksum(), 0xffff);
    assert.equal(internetChecksum(new Uint8Array(0)), 0xffff);
    // 01 02 03 is the words 0x0102 and 0x0300, whichever part each byte is in.
    assert.equal(internetChecksum(hex('01'), hex('02'), hex('03')), ~0x0402 & 0xffff);
  });

  test('matches the reference on random parts of random lengths', () => {
    const rng = Rng.fromSeed(1071);
    for (let i = 0; i < 500; i++) {
      const parts = Array.from({ length: rng.int(0, 5) }, () => {
        const p = new Uint8Array(rng.int(0, 70));
        for (let j = 0; j < p.length; j++) p[j] = rng.int(0, 255);
        return p;
      });
      assert.equal(internetChecksum(...parts), referenceChecksum(...parts), `case ${i}`);
    }
    const ones = new Uint8Array(100_001).fill(0xff);
    assert.equal(internetChecksum(ones), referenceChecksum(ones));
  });

  test('known answer, IPv4: a real SYN-ACK (Suricata decode-tcp.c TCPCalculateValidChecksumtest01)', () => {
    // 64.142.126.178:80 > 192.168.1.3:36374, options as Linux lays them out:
    // MSS 1460, SACK-permitted + TS, NOP + window scale 2. Checksum 0xfa03 on the wire.
    const ip = { src: ipv4(64, 142, 126, 178), dst: ipv4(192, 168, 1, 3) };
    const wire = hex('0050 8e16 0d59cd3c cf0d2180 a0 12 16a0 fa03 0000' + '020405b4' + '0402080a 6e187873 017174de' + '01030302');
    assert.equal(tcpChecksum(wire, ip), 0, 'a captured segment checks');
    assert.equal(referenceChecksum(pseudoHeader(ip, wire.length), wire), 0, 'and the reference agrees');
    const zeroed = Uint8Array.from(wire);
    zeroed[16] = 0;
    zeroed[17] = 0;
    assert.equal(tcpChecksum(zeroed, ip), 0xfa03);

    const s = parsedOk(wire, ip);
    assert.deepEqual(s, {
      srcPort: 80,
      dstPort: 36374,
      seq: 0x0d59cd3c,
      ack: 0xcf0d2180,
      flags: TCP_SYN | TCP_ACK,
      window: 5792,
      urgent: 0,
      options: { mss: 1460, sackPermitted: true, timestamp: { value: 0x6e187873, echo: 0x017174de }, windowScale: 2 },
      payload: new Uint8Array(0),
    });
    assert.equal(formatSegment(s), '80 > 36374 [S.] seq 223989052 ack 3473744256 win 5792 <mss 1460,nop,ws 2,sackOK,TS 1847097459 24212702> len 0');
    // encodeTcp moves window scale up front. The groups are whole 16-bit
    // words, so moving them does not change the sum: same checksum, 0xfa03.
    assert.equal(
      toHex(encodeTcp(s, ip)),
      '00508e16' + '0d59cd3c' + 'cf0d2180' + 'a012' + '16a0' + 'fa03' + '0000' + '020405b4' + '01030302' + '0402080a6e187873017174de',
    );
  });

  test('known answer, IPv6: a real ACK (Wireshark dissection, Dec 2014, checksum 0x0ca8)', () => {
    // 2001:470:e5bf:dead:4957:2174:e82c:4887 port 63943 > 2607:f8b0:400c:c03::1a port 25,
    // seq 60852279, ack 2506332305, ACK, window 64, no options. From
    // juraj-juraj/IPK_projekt_2 testovanie/ipv6/tcp/tcp3.res; recomputed independently.
    const ip = {
      src: hex('20010470 e5bfdead 49572174 e82c4887'),
      dst: hex('2607f8b0 400c0c03 00000000 0000001a'),
    };
    const s = seg({ srcPort: 63943, dstPort: 25, seq: 60852279, ack: 2506332305, flags: TCP_ACK, window: 64 });
    const b = encodeTcp(s, ip);
    assert.equal(toHex(b), 'f9c7' + '0019' + '03a08837' + '95639891' + '5010' + '0040' + '0ca8' + '0000');
    assert.deepEqual(parsedOk(b, ip), s);
    assert.equal(referenceChecksum(pseudoHeader(ip, b.length), b), 0, 'the reference agrees');
  });

  test('odd-length payloads: the last byte is padded with zero', () => {
    for (const ip of [V4, V6]) {
      for (const n of [1, 3, 5, 7, 9, 1461]) {
        const payload = new Uint8Array(n);
        for (let i = 0; i < n; i++) payload[i] = (i * 37 + 11) & 0xff;
        const b = encodeTcp(seg({ payload, options: { timestamp: { value: 5, echo: 6 } } }), ip);
        assert.equal(b.length % 2, 1);
        assert.equal(tcpChecksum(b, ip), 0, `${ip.src.length}-byte addresses, ${n}-byte payload`);
        assert.equal(referenceChecksum(pseudoHeader(ip, b.length), b), 0, `reference, ${n} bytes`);
        assert.deepEqual(parsedOk(b, ip).payload, payload);
      }
    }
  });

  test('IPv4 and IPv6 pseudo-headers differ, and each checks only with its own addresses', () => {
    const s = seg({ payload: hex('68656c6c6f') });
    const b4 = encodeTcp(s, V4);
    const b6 = encodeTcp(s, V6);
    assert.notEqual(toHex(b4.subarray(16, 18)), toHex(b6.subarray(16, 18)));
    assert.equal(toHex(b4.subarray(18)), toHex(b6.subarray(18)));
    assert.equal(tcpChecksum(b4, V4), 0);
    assert.equal(tcpChecksum(b6, V6), 0);
    parseFails(parseTcp(b4, V6), 'WIRE_BAD_CHECKSUM');
    parseFails(parseTcp(b6, V4), 'WIRE_BAD_CHECKSUM');
    const swapped = { src: V4.dst, dst: V4.src };
    // Swapping source and destination does not change a sum: the checksum cannot tell direction.
    assert.equal(tcpChecksum(b4, swapped), 0);
    parseFails(parseTcp(b4, { src: V4.src, dst: ipv4(10, 0, 0, 3) }), 'WIRE_BAD_CHECKSUM');
  });

  test('IPv6 carries a 32-bit length: a jumbogram-sized segment encodes and checks; IPv4 refuses it', () => {
    const payload = new Uint8Array(70_000).fill(0x5a);
    const b = encodeTcp(seg({ payload }), V6);
    assert.equal(tcpChecksum(b, V6), 0);
    assert.equal(referenceChecksum(pseudoHeader(V6, b.length), b), 0, 'the reference agrees');
    assert.equal(parsedOk(b, V6).payload.length, 70_000);
    assert.throws(() => encodeTcp(seg({ payload }), V4), refused('tcp.length'));
    assert.throws(() => tcpChecksum(b, V4), refused('tcp.length'));
    parseFails(parseTcp(b, V4), 'WIRE_BAD_LENGTH', /^TCP segment of 70020 bytes does not fit an IPv4 packet/);
    assert.equal(parsedOk(b).payload.length, 70_000);
    // The largest IPv4 segment is fine.
    const max = encodeTcp(seg({ payload: new Uint8Array(0xffff - TCP_HEADER_BYTES) }), V4);
    assert.equal(max.length, 0xffff);
    assert.equal(tcpChecksum(max, V4), 0);
  });

  test('a flipped payload bit fails the checksum, and the message names both values', () => {
    const payload = new Uint8Array(64).map((_, i) => i);
    const good = encodeTcp(seg({ payload, options: { timestamp: { value: 1, echo: 2 } } }), V4);
    for (let bit = 0; bit < payload.length * 8; bit++) {
      const bad = Uint8Array.from(good);
      bad[good.length - payload.length + (bit >> 3)]! ^= 0x80 >> (bit & 7);
      const both = /^TCP checksum: 0x[0-9a-f]{4} on the wire, 0x[0-9a-f]{4} computed$/;
      const e = parseFails(parseTcp(bad, V4), 'WIRE_BAD_CHECKSUM', both);
      const sent = good[16]! * 256 + good[17]!;
      bad[16] = 0;
      bad[17] = 0;
      const right = tcpChecksum(bad, V4);
      assert.match(e.message, new RegExp(`0x${sent.toString(16).padStart(4, '0')} on the wire`));
      assert.match(e.message, new RegExp(`0x${right.toString(16).padStart(4, '0')} computed$`));
      // Without the addresses the checksum is not checked.
      assert.ok(parseTcp(bad).ok, 'no ip, no check');
    }
  });

  test('any single flipped bit anywhere is refused when the addresses are given', () => {
    const good = encodeTcp(seg({ payload: hex('0102030405'), options: { mss: 1460, sack: blocks(2) } }), V4);
    for (let bit = 0; bit < good.length * 8; bit++) {
      const bad = Uint8Array.from(good);
      bad[bit >> 3]! ^= 0x80 >> (bit & 7);
      const r = parseTcp(bad, V4);
      assert.ok(!r.ok, `bit ${bit} flipped and still accepted`);
      // A flip in the data offset can make the header run past the bytes first.
      const expected = bit >= 96 && bit < 100 ? ['WIRE_BAD_LENGTH', 'WIRE_BAD_CHECKSUM'] : ['WIRE_BAD_CHECKSUM'];
      assert.ok(expected.includes(r.error.code), `bit ${bit}: ${r.error.code}`);
    }
  });

  test('addresses that are not a pair of IPv4 or IPv6 addresses are a programming error', () => {
    const b = encodeTcp(seg(), V4);
    const bad: IpPair[] = [
      { src: V4.src, dst: V6.dst },
      { src: new Uint8Array(5), dst: new Uint8Array(5) },
      { src: new Uint8Array(0), dst: new Uint8Array(0) },
      { src: [10, 0, 0, 1] as unknown as Uint8Array, dst: V4.dst },
    ];
    for (const ip of bad) {
      assert.throws(() => tcpChecksum(b, ip), refused('ip'));
      assert.throws(() => encodeTcp(seg(), ip), refused('ip'));
      assert.throws(() => parseTcp(b, ip), refused('ip'));
    }
    assert.throws(() => encodeTcp(seg(), undefined as unknown as IpPair), refused('ip'));
  });
});

describe('exact bytes', () => {
  test('the fixed header: field order, data offset nibble, reserved bits zero', () => {
    const s = seg({
      srcPort: 0x1234,
      dstPort: 0xabcd,
      seq: 0x01020304,
      ack: 0xf0e0d0c0,
      flags: TCP_PSH | TCP_ACK | TCP_CWR,
      window: 0x0102,
      urgent: 0x0304,
      payload: hex('cafe'),
    });
    const b = encodeTcp(s, V4);
    assert.equal(b.length, TCP_HEADER_BYTES + 2);
    assert.equal(toHex(b.subarray(0, 16)), '1234' + 'abcd' + '01020304' + 'f0e0d0c0' + '50' + '98' + '0102');
    assert.equal(toHex(b.subarray(18)), '0304' + 'cafe');
  });

  test('the brief example SYN-ACK: MSS, NOP + WS, SACK-permitted + TS', () => {
    const o: TcpOptions = { mss: 1460, windowScale: 7, sackPermitted: true, timestamp: { value: 1, echo: 0 } };
    const b = encodeTcp(seg({ options: o }), V4);
    assert.equal(b[12], 10 << 4, 'data offset 10 words');
    assert.equal(toHex(b.subarray(20)), '020405b4' + '01030307' + '0402080a' + '00000001' + '00000000');
  });

  test('each option group alone, and with its neighbours, keeps TS and SACK values 4-byte aligned', () => {
    const cases: Array<[TcpOptions, string]> = [
      [{}, ''],
      [{ mss: 536 }, '02040218'],
      [{ windowScale: 0 }, '01030300'],
      [{ windowScale: 14 }, '0103030e'],
      [{ sackPermitted: true }, '01010402'],
      [{ sackPermitted: false }, ''],
      [{ timestamp: { value: 0xdeadbeef, echo: 7 } }, '0101080a deadbeef 00000007'],
      [{ sack: [{ left: 1, right: 2 }] }, '0101050a 00000001 00000002'],
      [{ sack: [] }, ''],
      [{ sackPermitted: true, timestamp: { value: 1, echo: 2 } }, '0402080a 00000001 00000002'],
      [
        { timestamp: { value: 1, echo: 2 }, sack: blocks(3) },
        '0101080a 00000001 00000002' + '0101051a' + '000003e8 0000041a' + '0000044c 0000047e' + '000004b0 000004e2',
      ],
      [{ sack: blocks(4) }, '01010522' + '000003e8 0000041a 0000044c 0000047e 000004b0 000004e2 00000514 00000546'],
      [{ mss: 1460, windowScale: 3, sackPermitted: true }, '020405b4 01030303 01010402'],
      [{ mss: 1460, timestamp: { value: 9, echo: 8 }, sack: blocks(1) }, '020405b4 0101080a 00000009 00000008 0101050a 000003e8 0000041a'],
    ];
    for (const [o, want] of cases) {
      const b = encodeTcp(seg({ options: o }), V4);
      const opts = b.subarray(TCP_HEADER_BYTES);
      assert.equal(toHex(opts), want.replace(/\s+/g, ''), JSON.stringify(o));
      assert.equal(opts.length, optionBytes(o), `optionBytes ${JSON.stringify(o)}`);
      assert.equal(b[12]! >>> 4, 5 + opts.length / 4);
      assert.equal(opts.length % 4, 0);
      for (let p = 0; p < opts.length; p += opts[p] === 1 ? 1 : opts[p + 1]!) {
        if (opts[p] === 8 || opts[p] === 5) {
          assert.equal((p + 2) % 4, 0, `values of kind ${opts[p]} aligned in ${JSON.stringify(o)}`);
        }
      }
    }
  });

  test('optionBytes: a multiple of 4 for every combination, past 40 when too many SACK blocks', () => {
    for (const o of optionCombinations()) {
      const n = optionBytes(o);
      assert.equal(n % 4, 0, JSON.stringify(o));
      assert.ok(n <= TCP_MAX_OPTION_BYTES, `${n} for ${JSON.stringify(o)}`);
    }
    assert.equal(optionBytes({ timestamp: { value: 0, echo: 0 }, sack: blocks(3) }), 40);
    assert.equal(optionBytes({ timestamp: { value: 0, echo: 0 }, sack: blocks(4) }), 48);
    assert.equal(optionBytes({ sack: blocks(4) }), 36);
    assert.equal(optionBytes({ mss: 1, windowScale: 1, sackPermitted: true, timestamp: { value: 0, echo: 0 } }), 20);
    assert.equal(optionBytes({ sack: blocks(5) }), 44);
  });
});

describe('round trips', () => {
  test('every combination of options, over IPv4 and IPv6, with and without payload', () => {
    const combos = optionCombinations();
    assert.equal(combos.length, 32, 'every subset fits with at least one SACK block');
    for (const ip of [V4, V6]) {
      for (const options of combos) {
        for (const payload of [new Uint8Array(0), hex('01'), new Uint8Array(1460).fill(0xa5)]) {
          const s = seg({ options, payload });
          const b = encodeTcp(s, ip);
          assert.equal(b.length, TCP_HEADER_BYTES + optionBytes(options) + payload.length);
          assert.equal(tcpChecksum(b, ip), 0, JSON.stringify(options));
          const back = parsedOk(b, ip);
          assert.deepEqual(back, s);
          assert.equal(toHex(encodeTcp(back, ip)), toHex(b), 're-encodes to the same bytes');
        }
      }
    }
  });

  test('every SACK block count that fits, with and without timestamps', () => {
    for (let n = 1; n <= 4; n++) {
      for (const timestamp of [undefined, { value: 3, echo: 4 }]) {
        const options: TcpOptions = { sack: blocks(n) };
        if (timestamp !== undefined) options.timestamp = timestamp;
        if (optionBytes(options) > TCP_MAX_OPTION_BYTES) {
          assert.ok(n === 4 && timestamp !== undefined, `only 4 blocks with TS overflow, not ${n}`);
          continue;
        }
        const s = seg({ flags: TCP_ACK, options });
        assert.deepEqual(parsedOk(encodeTcp(s, V4), V4), s);
      }
    }
  });

  test('zero and maximum fields, every flag byte', () => {
    const zero = seg({ srcPort: 0, dstPort: 0, seq: 0, ack: 0, flags: 0, window: 0, urgent: 0 });
    const max = seg({
      srcPort: 0xffff,
      dstPort: 0xffff,
      seq: U32,
      ack: U32,
      flags: 0xff,
      window: 0xffff,
      urgent: 0xffff,
      options: {
        mss: 0xffff,
        windowScale: 14,
        sackPermitted: true,
        timestamp: { value: U32, echo: U32 },
        sack: [
          { left: U32, right: 0 },
          { left: 0, right: U32 },
        ],
      },
    });
    const zeroOpts = seg({
      options: { mss: 0, windowScale: 0, timestamp: { value: 0, echo: 0 }, sack: [{ left: 0, right: 0 }] },
    });
    for (const s of [zero, max, zeroOpts]) {
      for (const ip of [V4, V6]) assert.deepEqual(parsedOk(encodeTcp(s, ip), ip), s);
    }
    for (let flags = 0; flags <= 0xff; flags++) {
      const s = seg({ flags });
      const b = encodeTcp(s, V4);
      assert.equal(b[13], flags);
      assert.equal(parsedOk(b, V4).flags, flags);
    }
  });

  test('sequence numbers come back unsigned', () => {
    const options = { sack: [{ left: 0x80000001, right: U32 }] };
    const b = encodeTcp(seg({ seq: 0x80000000, ack: 0xfffffffe, options }), V4);
    const s = parsedOk(b, V4);
    assert.equal(s.seq, 2147483648);
    assert.equal(s.ack, 4294967294);
    assert.deepEqual(s.options.sack, [{ left: 2147483649, right: U32 }]);
  });

  test('parses from a view at an odd offset in a larger buffer', () => {
    const s = seg({ options: { timestamp: { value: 10, echo: 20 } }, payload: hex('aabbcc') });
    const b = encodeTcp(s, V6);
    const big = new Uint8Array(b.length + 10).fill(0xee);
    big.set(b, 3);
    const view = big.subarray(3, 3 + b.length);
    assert.equal(tcpChecksum(view, V6), 0);
    assert.deepEqual(parsedOk(view, V6), s);
  });
});

describe('payload', () => {
  test('parseTcp returns a view into the bytes, not a copy', () => {
    const b = encodeTcp(seg({ payload: hex('01020304'), options: { mss: 1200 } }), V4);
    assertViewInto(parsedOk(b, V4).payload, b, TCP_HEADER_BYTES + 4, 4);
  });

  test('encodeTcp copies the payload into new bytes of its own', () => {
    const payload = hex('0a0b');
    const b = encodeTcp(seg({ payload }), V4);
    const other = encodeTcp(seg({ payload }), V4);
    assert.notEqual(b.buffer, payload.buffer);
    payload[0] = 0;
    assert.equal(b[TCP_HEADER_BYTES], 0x0a);
    // Two segments may share a slab (wire/bytes.ts), never bytes.
    const before = Uint8Array.from(other);
    b.fill(0xff);
    assert.deepEqual(other, before);
  });
});

describe('refused bytes', () => {
  test('every proper prefix of a valid segment is refused with the addresses, and never throws', () => {
    const options: TcpOptions = { mss: 1460, windowScale: 7, sackPermitted: true, timestamp: { value: 1, echo: 0 } };
    for (const ip of [V4, V6]) {
      const b = encodeTcp(seg({ options, payload: hex('0102030405060708090a0b') }), ip);
      const hdr = TCP_HEADER_BYTES + optionBytes(options);
      for (let n = 0; n < b.length; n++) {
        const cut = b.subarray(0, n);
        let r: ReturnType<typeof parseTcp>;
        let bare: ReturnType<typeof parseTcp>;
        try {
          r = parseTcp(cut, ip);
          bare = parseTcp(cut);
        } catch (e) {
          assert.fail(`prefix ${n} threw: ${String(e)}`);
        }
        if (n < TCP_HEADER_BYTES) {
          parseFails(r, 'WIRE_TRUNCATED', new RegExp(`^TCP truncated: ${n} bytes, needs 20$`));
          parseFails(bare, 'WIRE_TRUNCATED');
        } else if (n < hdr) {
          const past = new RegExp(`^TCP data offset: 10 words \\(40 bytes\\), past the end of the ${n}-byte segment$`);
          parseFails(r, 'WIRE_BAD_LENGTH', past);
          parseFails(bare, 'WIRE_BAD_LENGTH');
        } else {
          // TCP has no length field: only the checksum (over the length
          // from the IP header) can tell a cut payload.
          parseFails(r, 'WIRE_BAD_CHECKSUM');
          assert.ok(bare.ok, `prefix ${n} without addresses parses`);
          assert.equal(bare.value.payload.length, n - hdr);
        }
      }
      assert.ok(parseTcp(b, ip).ok, 'the whole segment parses');
    }
  });

  test('a data offset under 5 words', () => {
    for (let words = 0; words < 5; words++) {
      const b = encodeTcp(seg({ payload: new Uint8Array(8) }), V4);
      b[12] = words << 4;
      const message = new RegExp(`^TCP data offset: ${words} words \\(${words * 4} bytes\\), needs at least 5 \\(20 bytes\\)$`);
      parseFails(parseTcp(b), 'WIRE_BAD_LENGTH', message);
      parseFails(parseTcp(withChecksum(b, V4), V4), 'WIRE_BAD_LENGTH', message);
    }
  });

  test('a data offset past the end of the bytes', () => {
    const b = encodeTcp(seg({ payload: new Uint8Array(3) }), V4);
    b[12] = 6 << 4;
    const past = /^TCP data offset: 6 words \(24 bytes\), past the end of the 23-byte segment$/;
    parseFails(parseTcp(b), 'WIRE_BAD_LENGTH', past);
    b[12] = 15 << 4;
    parseFails(parseTcp(b), 'WIRE_BAD_LENGTH', /15 words \(60 bytes\)/);
    b[12] = 5 << 4;
    assert.ok(parseTcp(b).ok, 'offset 5 fits');
  });

  test('malformed options are WIRE_BAD_FIELD and say what and where', () => {
    const cases: Array<[string, RegExp]> = [
      ['010101 02', /^TCP option MSS \(kind 2\) at byte 23: no length byte before the end of the 24-byte header$/],
      ['010101 08', /^TCP option timestamps \(kind 8\) at byte 23: no length byte/],
      ['0200 0000', /^TCP option MSS \(kind 2\) at byte 20: length 0, needs at least 2$/],
      ['1e01 0000', /^TCP option kind 30 at byte 20: length 1, needs at least 2$/],
      ['0205 0000', /^TCP option MSS \(kind 2\) at byte 20: length 5 runs past the end of the 24-byte header$/],
      ['0101 fe09 0000 0000', /^TCP option kind 254 at byte 22: length 9 runs past the end of the 28-byte header$/],
      ['0203 0001', /^TCP option MSS \(kind 2\) at byte 20: length 3, needs 4$/],
      ['0206 0000 0000 0000', /MSS \(kind 2\) at byte 20: length 6, needs 4$/],
      ['0304 0700', /^TCP option window scale \(kind 3\) at byte 20: length 4, needs 3$/],
      ['0302 0000', /window scale \(kind 3\) at byte 20: length 2, needs 3$/],
      ['0403 0000', /^TCP option SACK-permitted \(kind 4\) at byte 20: length 3, needs 2$/],
      ['0802 0000', /^TCP option timestamps \(kind 8\) at byte 20: length 2, needs 10$/],
      ['080c 0000 0000 0000 0000 0000', /timestamps \(kind 8\) at byte 20: length 12, needs 10$/],
      ['0502 0000', /^TCP option SACK \(kind 5\) at byte 20: length 2, needs 2 \+ 8 per block, 1-4 blocks \(10, 18, 26 or 34\)$/],
      ['0506 0000 0000 0000', /SACK \(kind 5\) at byte 20: length 6, needs 2 \+ 8 per block/],
      ['050b 0000 0000 0000 0000 0000', /SACK \(kind 5\) at byte 20: length 11, needs/],
      ['0204 05b4 0101 0303', /^TCP option window scale \(kind 3\) at byte 26: length 3 runs past the end of the 28-byte/],
      ['0204 05b4 0101 0103', /^TCP option window scale \(kind 3\) at byte 27: no length byte/],
    ];
    for (const [opts, message] of cases) {
      const b = rawSegment(opts);
      parseFails(parseTcp(b), 'WIRE_BAD_FIELD', message);
      // With a good checksum, the option is still what is wrong.
      parseFails(parseTcp(withChecksum(b, V4), V4), 'WIRE_BAD_FIELD', message);
      // With a bad one, the checksum is reported first.
      const bad = withChecksum(b, V4);
      bad[17]! ^= 1;
      parseFails(parseTcp(bad, V4), 'WIRE_BAD_CHECKSUM');
    }
  });

  test('a SACK option with 5 blocks cannot fit, so it always runs past the header', () => {
    const b = rawSegment('0101' + '052a' + '00'.repeat(36));
    const past = /SACK \(kind 5\) at byte 22: length 42 runs past the end of the 60-byte header/;
    parseFails(parseTcp(b), 'WIRE_BAD_FIELD', past);
  });
});

describe('lenient parsing', () => {
  test('EOL ends the option list; what follows is ignored', () => {
    const s = parsedOk(rawSegment('020405b4 00 0201 ff 0303 0700'));
    assert.deepEqual(s.options, { mss: 1460 });
    assert.deepEqual(parsedOk(rawSegment('00000000')).options, {});
    assert.deepEqual(parsedOk(rawSegment('01010100')).options, {});
  });

  test('unknown option kinds are skipped by their length (RFC 9293 3.1)', () => {
    // MPTCP (30), TFO cookie (34), an experimental kind (254), the obsolete echo (6).
    const s = parsedOk(withChecksum(rawSegment('1e04 0000' + '220a 0102030405060708' + 'fe02' + '0204 0578' + '0606 00000000 0103 0306 0101'), V4), V4);
    assert.deepEqual(s.options, { mss: 1400, windowScale: 6 });
  });

  test('options in any order and any padding, as other stacks send them', () => {
    // Linux SYN: MSS, SACKOK, TS, NOP, WS.
    const linux = parsedOk(rawSegment('020405b4 0402080a 0000000a 00000000 01030307'));
    assert.deepEqual(linux.options, { mss: 1460, sackPermitted: true, timestamp: { value: 10, echo: 0 }, windowScale: 7 });
    // Windows-style SYN: MSS, NOP, WS, NOP, NOP, SACKOK.
    const windows = parsedOk(rawSegment('020405b4 01030308 01010402'));
    assert.deepEqual(windows.options, { mss: 1460, windowScale: 8, sackPermitted: true });
    // Packed with no padding, ending in EOL padding.
    const packed = parsedOk(rawSegment('0303 0e05 0a00 0000 0100 0000 0200 0000'));
    assert.deepEqual(packed.options, { windowScale: 14, sack: [{ left: 1, right: 2 }] });
  });

  test('a repeated option: the last one counts', () => {
    assert.deepEqual(parsedOk(rawSegment('02040001 02040002')).options, { mss: 2 });
  });

  test('a window scale above 14 is kept as sent, for the connection to clamp', () => {
    const s = parsedOk(rawSegment('010303ff'));
    assert.equal(s.options.windowScale, 255);
    assert.throws(() => encodeTcp(s, V4), refused('tcp.options.windowScale'));
  });

  test('reserved bits and the historic NS bit are ignored', () => {
    const s = seg({ payload: hex('01') });
    const b = encodeTcp(s, V4);
    for (const low of [0x01, 0x02, 0x04, 0x08, 0x0f]) {
      const odd = Uint8Array.from(b);
      odd[12]! |= low;
      assert.deepEqual(parsedOk(withChecksum(odd, V4), V4), s);
    }
  });

  test('options the connection would not expect in this segment are still returned', () => {
    // MSS on a pure ACK, SACK on a SYN: the codec reports; the connection decides.
    const s = parsedOk(rawSegment('020405b4 0101050a 00000001 00000002'));
    assert.deepEqual(s.options, { mss: 1460, sack: [{ left: 1, right: 2 }] });
  });
});

describe('refused values', () => {
  test('header fields out of range are refused by name', () => {
    const cases: Array<[keyof TcpSegment, unknown]> = [
      ['srcPort', 0x10000],
      ['srcPort', -1],
      ['dstPort', 1.5],
      ['dstPort', Number.NaN],
      ['seq', 2 ** 32],
      ['seq', -1],
      ['ack', 0.5],
      ['ack', -1],
      ['flags', 0x100],
      ['flags', -1],
      ['window', 0x10000],
      ['urgent', 0x10000],
      ['urgent', '1'],
      ['payload', [1, 2]],
      ['options', null],
    ];
    for (const [field, value] of cases) {
      const s = seg({ [field]: value } as Partial<TcpSegment>);
      assert.throws(() => encodeTcp(s, V4), refused(`tcp.${field}`), `${field}=${String(value)}`);
    }
  });

  test('option values out of range are refused by name', () => {
    const cases: Array<[TcpOptions, string]> = [
      [{ mss: 0x10000 }, 'tcp.options.mss'],
      [{ mss: -1 }, 'tcp.options.mss'],
      [{ windowScale: 15 }, 'tcp.options.windowScale'],
      [{ windowScale: -1 }, 'tcp.options.windowScale'],
      [{ windowScale: 1.5 }, 'tcp.options.windowScale'],
      [{ sackPermitted: 1 as unknown as boolean }, 'tcp.options.sackPermitted'],
      [{ sack: blocks(5) }, 'tcp.options.sack.length'],
      [{ sack: {} as unknown as SackBlock[] }, 'tcp.options.sack.length'],
      [{ sack: [{ left: 1, right: 2 }, null as unknown as SackBlock] }, 'tcp.options.sack[1]'],
      [{ sack: [{ left: 2 ** 32, right: 2 }] }, 'tcp.options.sack[0].left'],
      [
        {
          sack: [
            { left: 1, right: 2 },
            { left: 1, right: -2 },
          ],
        },
        'tcp.options.sack[1].right',
      ],
      [{ timestamp: { value: 2 ** 32, echo: 0 } }, 'tcp.options.timestamp.value'],
      [{ timestamp: { value: 0, echo: 0.5 } }, 'tcp.options.timestamp.echo'],
      [{ timestamp: 5 as unknown as { value: number; echo: number } }, 'tcp.options.timestamp'],
    ];
    for (const [options, field] of cases) {
      assert.throws(() => encodeTcp(seg({ options }), V4), refused(field), JSON.stringify(options));
    }
  });

  test('options over 40 bytes are refused, naming them and their size', () => {
    const over: TcpOptions[] = [
      { timestamp: { value: 1, echo: 2 }, sack: blocks(4) },
      { mss: 1460, windowScale: 1, timestamp: { value: 1, echo: 2 }, sack: blocks(3) },
      { mss: 1460, sack: blocks(4), sackPermitted: true },
    ];
    for (const options of over) {
      assert.throws(
        () => encodeTcp(seg({ options }), V4),
        (e: unknown) => {
          refused('tcp.options')(e);
          const m = (e as Error).message;
          assert.match(m, new RegExp(`at most 40 bytes of options, these take ${optionBytes(options)}`));
          assert.match(m, /sack \d \{/);
          return true;
        },
        JSON.stringify(options),
      );
    }
  });

  test('ipv4 builds four bytes and refuses parts outside 0-255', () => {
    assert.deepEqual(ipv4(192, 168, 1, 254), Uint8Array.of(192, 168, 1, 254));
    assert.throws(() => ipv4(256, 0, 0, 0), refused('ipv4[0]'));
    assert.throws(() => ipv4(0, 0, 0, -1), refused('ipv4[3]'));
    assert.throws(() => ipv4(0, 1.5, 0, 0), refused('ipv4[1]'));
  });
});

describe('formatSegment', () => {
  test('the tcpdump-like line of the brief', () => {
    const s = seg({ options: { mss: 1460, windowScale: 7, sackPermitted: true, timestamp: { value: 1, echo: 0 } } });
    assert.equal(formatSegment(s), '1000 > 80 [S.] seq 1 ack 2 win 65535 <mss 1460,nop,ws 7,sackOK,TS 1 0> len 0');
    assert.equal(formatSegment(parsedOk(encodeTcp(s, V4), V4)), formatSegment(s));
  });

  test('ack only with ACK, urg only with URG, no options no brackets', () => {
    assert.equal(formatSegment(seg({ flags: TCP_SYN, ack: 0 })), '1000 > 80 [S] seq 1 win 65535 len 0');
    assert.equal(
      formatSegment(seg({ flags: TCP_PSH | TCP_ACK | TCP_URG, urgent: 3, payload: new Uint8Array(5) })),
      '1000 > 80 [P.U] seq 1 ack 2 win 65535 urg 3 len 5',
    );
    assert.equal(formatSegment(seg({ flags: 0 })), '1000 > 80 [none] seq 1 win 65535 len 0');
  });

  test('flag letters in tcpdump order', () => {
    assert.equal(formatSegment(seg({ flags: 0xff })).split(' ')[3], '[FSRP.UEW]');
    assert.equal(formatSegment(seg({ flags: TCP_SYN | TCP_ECE | TCP_CWR })).split(' ')[3], '[SEW]');
    assert.equal(formatSegment(seg({ flags: TCP_FIN | TCP_ACK })).split(' ')[3], '[F.]');
    assert.equal(formatSegment(seg({ flags: TCP_RST })).split(' ')[3], '[R]');
  });

  test('options show as encodeTcp lays them out', () => {
    const cases: Array<[TcpOptions, string]> = [
      [{ timestamp: { value: 5, echo: 4 } }, '<nop,nop,TS 5 4>'],
      [{ sackPermitted: true }, '<nop,nop,sackOK>'],
      [
        {
          sack: [
            { left: 1, right: 2 },
            { left: 5, right: 9 },
          ],
        },
        '<nop,nop,sack 2 {1:2}{5:9}>',
      ],
      [{ windowScale: 200 }, '<nop,ws 200>'],
      [{ sack: [], sackPermitted: false }, ''],
    ];
    for (const [options, want] of cases) {
      const line = formatSegment(seg({ flags: TCP_ACK, options }));
      const got = /<[^>]*>/.exec(line)?.[0] ?? '';
      assert.equal(got, want, line);
    }
  });
});

describe('seeded fuzz', () => {
  /**
   * Never throws; a refusal has a TCP code; an accepted segment formats, and
   * re-encodes to a segment that parses back equal.
   */
  function check(b: Uint8Array, ip: IpPair | undefined, tally: Map<string, number>): void {
    let r: ReturnType<typeof parseTcp>;
    try {
      r = parseTcp(b, ip);
    } catch (e) {
      assert.fail(`parse threw on ${toHex(b)}: ${String(e)}`);
    }
    if (!r.ok) {
      assert.ok(r.error instanceof WireError, 'a WireError');
      assert.ok(TCP_CODES.includes(r.error.code), r.error.code);
      assert.equal(r.error.what, 'TCP');
      tally.set(r.error.code, (tally.get(r.error.code) ?? 0) + 1);
      return;
    }
    tally.set('ok', (tally.get('ok') ?? 0) + 1);
    const s = r.value;
    assert.equal(typeof formatSegment(s), 'string');
    const o = s.options;
    // Not every accepted segment can be sent back as is: a window scale over
    // 14, or options that fit packed but not in encodeTcp's aligned layout.
    if ((o.windowScale ?? 0) > 14 || optionBytes(o) > TCP_MAX_OPTION_BYTES) {
      tally.set('not re-encodable', (tally.get('not re-encodable') ?? 0) + 1);
      return;
    }
    const again = encodeTcp(s, ip ?? V4);
    assert.deepEqual(parsedOk(again, ip ?? V4), s);
  }

  const KINDS = [0, 1, 1, 2, 3, 4, 5, 8, 30, 254];
  const FIXED_LEN: Record<number, number[]> = { 2: [4], 3: [3], 4: [2], 5: [10, 18, 26, 34], 8: [10] };

  /** A random option area: mostly well-formed options, sometimes a wrong length. */
  function randomOptions(rng: Rng, room: number): number[] {
    const out: number[] = [];
    while (out.length < room) {
      const kind = KINDS[rng.int(0, KINDS.length - 1)]!;
      if (kind <= 1) {
        out.push(kind);
        continue;
      }
      const lens = FIXED_LEN[kind] ?? [2, 4, 6];
      const len = rng.next() < 0.9 ? lens[rng.int(0, lens.length - 1)]! : rng.int(0, 12);
      out.push(kind, len);
      for (let i = 2; i < len; i++) out.push(rng.int(0, 255));
    }
    return out.slice(0, room);
  }

  test('random headers with random options never make parse throw', () => {
    const rng = Rng.fromSeed(9293);
    const tally = new Map<string, number>();
    for (let i = 0; i < 20_000; i++) {
      const n = rng.next() < 0.1 ? rng.int(0, 24) : rng.int(20, 90);
      const b = new Uint8Array(n);
      for (let j = 0; j < n; j++) b[j] = rng.int(0, 255);
      if (n >= 20 && rng.next() < 0.9) {
        // Mostly a data offset that fits, so the fuzz reaches the options.
        const words = rng.next() < 0.8 ? rng.int(5, Math.max(5, Math.min(15, n >> 2))) : rng.int(0, 15);
        b[12] = (words << 4) | (b[12]! & 0x0f);
        b.set(randomOptions(rng, Math.max(0, Math.min(words * 4, n) - 20)), 20);
      }
      const ip = rng.next() < 0.5 ? undefined : rng.next() < 0.5 ? V4 : V6;
      // Half the time with addresses, fix the checksum so the fuzz reaches the options.
      check(ip !== undefined && n >= 20 && rng.next() < 0.7 ? withChecksum(b, ip) : b, ip, tally);
    }
    for (const code of ['WIRE_TRUNCATED', 'WIRE_BAD_LENGTH', 'WIRE_BAD_FIELD', 'WIRE_BAD_CHECKSUM', 'ok']) {
      assert.ok((tally.get(code) ?? 0) > 0, `fuzz never reached ${code}: ${JSON.stringify([...tally])}`);
    }
  });

  test('mutated, cut and extended valid segments never make parse throw', () => {
    const rng = Rng.fromSeed(7323);
    const tally = new Map<string, number>();
    const valid = optionCombinations().map((options, i) => ({
      ip: i % 2 === 0 ? V4 : V6,
      b: encodeTcp(seg({ options, payload: new Uint8Array(i).fill(i) }), i % 2 === 0 ? V4 : V6),
    }));
    for (let i = 0; i < 20_000; i++) {
      const base = valid[rng.int(0, valid.length - 1)]!;
      const { bytes: b, flips } = mutate(base.b, rng);
      const ip = rng.next() < 0.5 ? base.ip : undefined;
      check(ip !== undefined && flips > 0 && b.length >= 20 && rng.next() < 0.5 ? withChecksum(b, ip) : b, ip, tally);
    }
    for (const code of ['WIRE_TRUNCATED', 'WIRE_BAD_LENGTH', 'WIRE_BAD_FIELD', 'WIRE_BAD_CHECKSUM', 'ok']) {
      assert.ok((tally.get(code) ?? 0) > 0, `fuzz never reached ${code}: ${JSON.stringify([...tally])}`);
    }
  });
});
