import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import { assertViewInto, mutate, refused } from '../support/bytes.js';
import {
  DATA_HEADER_BYTES,
  DATA_LABELLED_HEADER_BYTES,
  MAX_FLOW_LABEL,
  HELLO_ENTRY_BYTES,
  HELLO_FIXED_BYTES,
  HELLO_NEIGHBOUR_BYTES,
  RERR_ENTRY_BYTES,
  RERR_FIXED_BYTES,
  RREP_BYTES,
  RREQ_BYTES,
  WireError,
  controlLength,
  emitControl,
  emitDataHeader,
  encodeControl,
  encodeData,
  packetKind,
  parseControl,
  parseControlShared,
  parseData,
  type WireErrorCode,
} from '../../src/wire/codec.js';
import {
  BROADCAST,
  MAX_PATH_COST,
  type ControlMsg,
  type DataHeader,
  type Hello,
  type PrefixAnnouncement,
  type Rerr,
  type Rrep,
  type Rreq,
} from '../../src/wire/mesh.js';
import { RangeArgumentError } from '../../src/core/errors.js';
import { allocBytes } from '../../src/wire/bytes.js';

const U32 = 0xffff_ffff;
const CODES: readonly WireErrorCode[] = ['WIRE_TRUNCATED', 'WIRE_UNKNOWN_TYPE', 'WIRE_BAD_VERSION', 'WIRE_BAD_LENGTH', 'WIRE_BAD_FIELD', 'WIRE_TRAILING_BYTES'];

const hex = (s: string) => Uint8Array.from(Buffer.from(s.replace(/\s+/g, ''), 'hex'));
const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function rreq(over: Partial<Rreq> = {}): Rreq {
  return {
    type: 'rreq',
    join: false,
    repair: false,
    gratuitous: false,
    destinationOnly: false,
    unknownSeq: false,
    hopCount: 3,
    rreqId: 7,
    dst: 12,
    dstSeq: 40,
    orig: 1,
    origSeq: 5,
    ttl: 7,
    firstHop: 4,
    pathCost: 2.5,
    ...over,
  };
}

function rrep(over: Partial<Rrep> = {}): Rrep {
  return {
    type: 'rrep',
    repair: false,
    ackRequired: false,
    hopCount: 2,
    dst: 12,
    dstSeq: 41,
    orig: 1,
    lifetimeMs: 3000,
    lastHop: 9,
    pathCost: 1.25,
    ...over,
  };
}

function rerr(n = 1, over: Partial<Rerr> = {}): Rerr {
  return {
    type: 'rerr',
    noDelete: false,
    unreachable: Array.from({ length: n }, (_, i) => ({ dst: i + 1, dstSeq: 1000 + i })),
    ...over,
  };
}

function hello(n = 2, over: Partial<Hello> = {}): Hello {
  return {
    type: 'hello',
    src: 3,
    seq: 17,
    r1Channel: 6,
    // w = k/65535 is exact on the wire, so these round-trip to the same number.
    workload: Array.from({ length: n }, (_, i) => ({
      channel: (i % 255) + 1,
      w: (i * 257) / 0xffff,
      windows: i * 1000,
    })),
    neighbours: [
      { addr: 2, r1Channel: 11 },
      { addr: 0xfffe, r1Channel: 255 },
    ],
    ...over,
  };
}

function header(over: Partial<DataHeader> = {}): DataHeader {
  return { src: 1, dst: 12, ttl: 16, proto: 'udp', flow: 3, seq: 99, ...over };
}

function parsedOk(b: Uint8Array): ControlMsg {
  const r = parseControl(b);
  if (!r.ok) assert.fail(`parse failed: ${r.error.code} ${r.error.message}`);
  return r.value;
}

function parseFails(r: { ok: true } | { ok: false; error: WireError }, code: WireErrorCode, what?: string, message?: RegExp): WireError {
  if (r.ok) assert.fail(`expected ${code}, parsed`);
  const e = r.error;
  assert.ok(e instanceof WireError);
  assert.equal(e.code, code, e.message);
  assert.equal(e.name, 'WireError');
  if (what !== undefined) assert.equal(e.what, what);
  if (message !== undefined) assert.match(e.message, message);
  return e;
}

/** One sample of every kind, with the kind name its errors carry. */
const samples: Array<{ what: string; msg: ControlMsg }> = [
  { what: 'RREQ', msg: rreq({ join: true, unknownSeq: true }) },
  { what: 'RREP', msg: rrep({ ackRequired: true }) },
  { what: 'RERR', msg: rerr(1) },
  { what: 'RERR', msg: rerr(3, { noDelete: true }) },
  { what: 'RERR', msg: rerr(255) },
  { what: 'HELLO', msg: hello(0) },
  { what: 'HELLO', msg: hello(3) },
  { what: 'HELLO', msg: hello(255) },
];

describe('exact bytes', () => {
  test('RREQ: RFC 3561 order, 16-bit addresses, then ttl, firstHop, pathCost', () => {
    const m = rreq({ join: true, destinationOnly: true, unknownSeq: true, hopCount: 3, rreqId: 0x01020304 });
    const b = encodeControl(m);
    assert.equal(toHex(b), '01' + '01' + '98' + '03' + '01020304' + '000c' + '00000028' + '0001' + '00000005' + '07' + '0004' + '000009c4');
    assert.deepEqual(parsedOk(b), m);
  });

  test('RREP', () => {
    const m = rrep({ repair: true, ackRequired: true });
    assert.equal(toHex(encodeControl(m)), '02' + '01' + 'c0' + '02' + '000c' + '00000029' + '0001' + '00000bb8' + '0009' + '000004e2');
  });

  test('RERR', () => {
    const m = rerr(2, { noDelete: true });
    assert.equal(toHex(encodeControl(m)), '03' + '01' + '80' + '02' + '0001000003e8' + '0002000003e9');
  });

  test('HELLO', () => {
    const m: Hello = {
      type: 'hello',
      src: 0x0102,
      seq: 0x0a0b0c0d,
      r1Channel: 11,
      workload: [
        { channel: 1, w: 1, windows: 5 },
        { channel: 6, w: 0, windows: U32 },
      ],
      neighbours: [{ addr: 0x0304, r1Channel: 9 }],
    };
    const b = encodeControl(m);
    assert.equal(toHex(b), '10' + '01' + '0102' + '0a0b0c0d' + '0b' + '02' + '01' + 'ffff' + '00000005' + '06' + '0000' + 'ffffffff' + '01' + '0304' + '09');
    assert.deepEqual(parsedOk(b), m);
  });

  test('DATA', () => {
    const b = encodeData(header({ proto: 'tcp', seq: 0x01020304 }), hex('cafe'));
    assert.equal(toHex(b), '20' + '01' + '10' + '06' + '0001' + '000c' + '0003' + '01020304' + 'cafe');
    assert.equal(DATA_HEADER_BYTES, 14);
  });

  test('DATA with a flow label (type 0x21)', () => {
    const b = encodeData(header({ proto: 'udp', seq: 7, label: 0x00100 }), hex('cafe'));
    assert.equal(toHex(b), '21' + '01' + '10' + '11' + '0001' + '000c' + '0003' + '00000007' + '000100' + 'cafe');
    assert.equal(DATA_LABELLED_HEADER_BYTES, 17);
    const top = encodeData(header({ label: MAX_FLOW_LABEL }), new Uint8Array(0));
    assert.equal(toHex(top.subarray(14)), '0fffff');
    const r = parseData(b);
    assert.ok(r.ok, 'a labelled packet parses');
    assert.equal(r.value.header.label, 0x00100);
    assert.equal(toHex(r.value.payload), 'cafe');
    // Label 0 is an unlabelled packet: type 0x20, 14 bytes, no label on parse.
    const plain = encodeData(header({ label: 0 }), hex('cafe'));
    assert.equal(plain[0], 0x20);
    assert.equal(plain.length, DATA_HEADER_BYTES + 2);
    const p = parseData(plain);
    assert.ok(p.ok && !('label' in p.value.header), 'an unlabelled packet parses without a label');
    assert.equal(packetKind(b), 'data');
    parseFails(parseControl(b), 'WIRE_UNKNOWN_TYPE', 'DATA', /^DATA \(type 0x21\) is not a control message$/);
  });

  test('DATA in front of a payload with room: the same bytes, the payload not copied; without room enough, a copy', () => {
    for (const label of [0, 0x00100]) {
      const h = header({ proto: 'tcp', seq: 9, label });
      const copied = encodeData(h, hex('cafe'));
      const payload = allocBytes(2, DATA_LABELLED_HEADER_BYTES);
      payload.set(hex('cafe'));
      const inPlace = encodeData(h, payload, DATA_LABELLED_HEADER_BYTES);
      assert.deepEqual(inPlace, copied, `label ${label}: the same packet`);
      assertViewInto(payload, inPlace, inPlace.length - 2, 2);
      const short = allocBytes(2, DATA_HEADER_BYTES - 1);
      short.set(hex('cafe'));
      const copy = encodeData(h, short, DATA_HEADER_BYTES - 1);
      assert.deepEqual(copy, copied);
      short[0] = 0;
      assert.equal(copy[copy.length - 2], 0xca, `label ${label}: room too small, a copy of its own`);
    }
    // A refused header writes nothing in front of the payload.
    const payload = allocBytes(2, DATA_LABELLED_HEADER_BYTES);
    assert.throws(() => encodeData(header({ ttl: 300 }), payload, DATA_LABELLED_HEADER_BYTES), RangeArgumentError);
    assert.ok(new Uint8Array(payload.buffer, payload.byteOffset - DATA_LABELLED_HEADER_BYTES, DATA_LABELLED_HEADER_BYTES).every((x) => x === 0));
  });

  test('DATA with a flow label: label 0, reserved bits and truncation are refused', () => {
    const b = encodeData(header({ label: 0x00200 }), hex('01'));
    const zero = b.slice();
    zero.set([0, 0, 0], 14);
    parseFails(parseData(zero), 'WIRE_BAD_FIELD', 'DATA', /label: 0 in a labelled packet/);
    for (const bit of [0x10, 0x20, 0x40, 0x80]) {
      const r = b.slice();
      r[14] = r[14]! | bit;
      parseFails(parseData(r), 'WIRE_BAD_FIELD', 'DATA', /label: reserved bits/);
    }
    for (let n = 1; n < DATA_LABELLED_HEADER_BYTES; n++) parseFails(parseData(b.subarray(0, n)), 'WIRE_TRUNCATED', 'DATA');
    for (const label of [-1, 0x100000, 1.5, NaN]) {
      assert.throws(() => encodeData(header({ label }), hex('01')), refused('data.label'), `label ${label}`);
    }
    assert.throws(() => emitDataHeader(header({ label: 1 }), new Uint8Array(DATA_LABELLED_HEADER_BYTES - 1)), refused('offset'));
  });

  test('sizes: fixed part and per entry', () => {
    assert.equal(encodeControl(rreq()).length, RREQ_BYTES);
    assert.equal(RREQ_BYTES, 27);
    assert.equal(encodeControl(rrep()).length, RREP_BYTES);
    assert.equal(RREP_BYTES, 22);
    for (const n of [1, 2, 255]) {
      assert.equal(encodeControl(rerr(n)).length, RERR_FIXED_BYTES + RERR_ENTRY_BYTES * n);
      assert.equal(controlLength(rerr(n)), RERR_FIXED_BYTES + RERR_ENTRY_BYTES * n);
    }
    for (const n of [0, 1, 255]) {
      assert.equal(encodeControl(hello(n)).length, HELLO_FIXED_BYTES + HELLO_ENTRY_BYTES * n + 2 * HELLO_NEIGHBOUR_BYTES);
      assert.equal(encodeControl(hello(n, { neighbours: [] })).length, HELLO_FIXED_BYTES + HELLO_ENTRY_BYTES * n);
    }
    assert.deepEqual([RERR_FIXED_BYTES, RERR_ENTRY_BYTES, HELLO_FIXED_BYTES, HELLO_ENTRY_BYTES, HELLO_NEIGHBOUR_BYTES], [4, 6, 11, 7, 3]);
  });
});

describe('round trips', () => {
  test('RREQ: every flag combination, zero and maximum fields', () => {
    for (let f = 0; f < 32; f++) {
      const flags = {
        join: (f & 1) !== 0,
        repair: (f & 2) !== 0,
        gratuitous: (f & 4) !== 0,
        destinationOnly: (f & 8) !== 0,
        unknownSeq: (f & 16) !== 0,
      };
      const zero = rreq({
        ...flags,
        hopCount: 0,
        rreqId: 0,
        dst: 0,
        dstSeq: 0,
        orig: 0,
        origSeq: 0,
        ttl: 0,
        firstHop: 0,
        pathCost: 0,
      });
      const max = rreq({
        ...flags,
        hopCount: 255,
        rreqId: U32,
        dst: BROADCAST,
        dstSeq: U32,
        orig: 0xffff,
        origSeq: U32,
        ttl: 255,
        firstHop: 0xffff,
        pathCost: MAX_PATH_COST,
      });
      assert.deepEqual(parsedOk(encodeControl(zero)), zero);
      assert.deepEqual(parsedOk(encodeControl(max)), max);
    }
  });

  test('RREP: every flag combination, zero and maximum fields', () => {
    for (let f = 0; f < 4; f++) {
      const flags = { repair: (f & 1) !== 0, ackRequired: (f & 2) !== 0 };
      const zero = rrep({ ...flags, hopCount: 0, dst: 0, dstSeq: 0, orig: 0, lifetimeMs: 0, lastHop: 0, pathCost: 0 });
      const max = rrep({
        ...flags,
        hopCount: 255,
        dst: 0xffff,
        dstSeq: U32,
        orig: 0xffff,
        lifetimeMs: U32,
        lastHop: 0xffff,
        pathCost: MAX_PATH_COST,
      });
      assert.deepEqual(parsedOk(encodeControl(zero)), zero);
      assert.deepEqual(parsedOk(encodeControl(max)), max);
    }
  });

  test('RERR: 1 and 255 destinations, N flag, boundary addresses and sequence numbers', () => {
    for (const n of [1, 2, 254, 255]) {
      for (const noDelete of [false, true]) {
        const m = rerr(n, { noDelete });
        assert.deepEqual(parsedOk(encodeControl(m)), m);
      }
    }
    const edges = rerr(1, {
      unreachable: [
        { dst: 0, dstSeq: 0 },
        { dst: 0xffff, dstSeq: U32 },
      ],
    });
    assert.deepEqual(parsedOk(encodeControl(edges)), edges);
  });

  test('HELLO: no entries, 255 entries, R1 channel 0 and 255, w 0 and 1', () => {
    for (const n of [0, 1, 254, 255]) {
      const m = hello(n);
      assert.deepEqual(parsedOk(encodeControl(m)), m);
    }
    const edges = hello(0, {
      src: 0xffff,
      seq: U32,
      r1Channel: 0,
      workload: [
        { channel: 1, w: 0, windows: 0 },
        { channel: 255, w: 1, windows: U32 },
      ],
    });
    assert.deepEqual(parsedOk(encodeControl(edges)), edges);
    const top = hello(0, { src: 0, seq: 0, r1Channel: 255 });
    assert.deepEqual(parsedOk(encodeControl(top)), top);
  });

  test('w is carried to within 1/131070; pathCost to the nearest thousandth', () => {
    const rng = Rng.fromSeed(11);
    for (let i = 0; i < 2000; i++) {
      const w = rng.next();
      const back = parsedOk(encodeControl(hello(0, { workload: [{ channel: 1, w, windows: 1 }] }))) as Hello;
      const got = back.workload[0]!.w;
      assert.ok(Math.abs(got - w) <= 0.5 / 0xffff + 1e-12, `${w} -> ${got}`);
      assert.ok(got >= 0 && got <= 1);
    }
    const cost = (c: number) => (parsedOk(encodeControl(rreq({ pathCost: c }))) as Rreq).pathCost;
    assert.equal(cost(0.0004), 0);
    assert.equal(cost(0.0006), 0.001);
    assert.equal(cost(12.3456), 12.346);
    assert.equal(cost(1e6), 1e6);
    const rc = (c: number) => (parsedOk(encodeControl(rrep({ pathCost: c }))) as Rrep).pathCost;
    assert.equal(rc(7.0001), 7);
  });

  test('DATA: every proto, zero and maximum fields, empty and large payloads', () => {
    for (const proto of ['udp', 'tcp', 'raw'] as const) {
      for (const h of [
        header({ proto, src: 0, dst: 0, ttl: 0, flow: 0, seq: 0 }),
        header({ proto, src: 0xffff, dst: BROADCAST, ttl: 255, flow: 0xffff, seq: U32 }),
      ]) {
        for (const payload of [new Uint8Array(0), hex('00ff'), new Uint8Array(4000).fill(0xa5)]) {
          const b = encodeData(h, payload);
          assert.equal(b.length, DATA_HEADER_BYTES + payload.length);
          const r = parseData(b);
          assert.ok(r.ok);
          assert.deepEqual(r.value.header, h);
          assert.deepEqual(r.value.payload, payload);
        }
      }
    }
  });

  test('parses from a view at a non-zero offset in a larger buffer', () => {
    const m = rreq({ rreqId: 0xdeadbeef });
    const enc = encodeControl(m);
    const big = new Uint8Array(enc.length + 10).fill(0xee);
    big.set(enc, 5);
    assert.deepEqual(parsedOk(big.subarray(5, 5 + enc.length)), m);

    const d = encodeData(header(), hex('0102'));
    const bigD = new Uint8Array(d.length + 3);
    bigD.set(d, 3);
    const r = parseData(bigD.subarray(3));
    assert.ok(r.ok);
    assert.deepEqual(r.value.header, header());
    assert.deepEqual([...r.value.payload], [1, 2]);
  });

  test('emitControl writes at an offset and returns the bytes written', () => {
    const m = rerr(2);
    const out = new Uint8Array(40).fill(0x55);
    assert.equal(emitControl(m, out, 7), 16);
    assert.deepEqual(out.subarray(7, 23), encodeControl(m));
    assert.ok(out.subarray(0, 7).every((x) => x === 0x55));
    assert.ok(out.subarray(23).every((x) => x === 0x55));
    assert.deepEqual(parsedOk(out.subarray(7, 23)), m);

    const d = new Uint8Array(DATA_HEADER_BYTES + 2);
    assert.equal(emitDataHeader(header(), d, 0), DATA_HEADER_BYTES);
    d.set(hex('abcd'), DATA_HEADER_BYTES);
    assert.deepEqual(d, encodeData(header(), hex('abcd')));
  });
});

describe('refused bytes', () => {
  test('every proper prefix of every message is WIRE_TRUNCATED', () => {
    for (const { what, msg } of samples) {
      const b = encodeControl(msg);
      for (let n = 0; n < b.length; n++) {
        const e = parseFails(parseControl(b.subarray(0, n)), 'WIRE_TRUNCATED');
        assert.equal(e.what, n === 0 ? 'packet' : what, `${what} prefix ${n}`);
        assert.match(e.message, new RegExp(`truncated: ${n} bytes, needs \\d+`));
      }
      assert.deepEqual(parsedOk(b), msg);
    }
    const d = encodeData(header(), hex('0102030405'));
    for (let n = 0; n < DATA_HEADER_BYTES; n++) {
      parseFails(parseData(d.subarray(0, n)), 'WIRE_TRUNCATED', n === 0 ? 'packet' : 'DATA');
    }
    for (let n = DATA_HEADER_BYTES; n <= d.length; n++) {
      const r = parseData(d.subarray(0, n));
      assert.ok(r.ok);
      assert.equal(r.value.payload.length, n - DATA_HEADER_BYTES);
    }
  });

  test('truncation messages name the kind and both lengths', () => {
    const b = encodeControl(rrep());
    parseFails(parseControl(b.subarray(0, 12)), 'WIRE_TRUNCATED', 'RREP', /^RREP truncated: 12 bytes, needs 22$/);
    const h = encodeControl(hello(2));
    const needs24 = /^HELLO truncated: 20 bytes, needs 25 for 2 workload entries$/;
    parseFails(parseControl(h.subarray(0, 20)), 'WIRE_TRUNCATED', 'HELLO', needs24);
    parseFails(parseControl(new Uint8Array(0)), 'WIRE_TRUNCATED', 'packet', /^packet truncated: 0 bytes, needs 1$/);
  });

  test('unknown type codes', () => {
    for (const t of [0x00, 0x04, 0x0f, 0x12, 0x22, 0x7f, 0xff]) {
      const b = new Uint8Array(40);
      b[0] = t;
      b[1] = 1;
      const unknown = /^packet type: 0x[0-9a-f]{2} is not a known message type$/;
      parseFails(parseControl(b), 'WIRE_UNKNOWN_TYPE', 'packet', unknown);
      parseFails(parseData(b), 'WIRE_UNKNOWN_TYPE', 'packet');
      parseFails(parseControl(b.subarray(0, 1)), 'WIRE_UNKNOWN_TYPE');
      assert.equal(packetKind(b), undefined);
    }
  });

  test('a data packet is not a control message, and the other way round', () => {
    parseFails(parseControl(encodeData(header(), hex('01'))), 'WIRE_UNKNOWN_TYPE', 'DATA', /not a control message/);
    for (const { what, msg } of samples) {
      parseFails(parseData(encodeControl(msg)), 'WIRE_UNKNOWN_TYPE', what, /not a data packet/);
    }
  });

  test('packetKind looks at the first byte only', () => {
    assert.equal(packetKind(new Uint8Array(0)), undefined);
    for (const { msg } of samples) assert.equal(packetKind(encodeControl(msg).subarray(0, 1)), 'control');
    assert.equal(packetKind(hex('20')), 'data');
    assert.equal(packetKind(encodeData(header(), new Uint8Array(0))), 'data');
  });

  test('any version but 1 is WIRE_BAD_VERSION, even in a packet too short for that kind', () => {
    const all = [...samples.map((s) => ({ what: s.what, b: encodeControl(s.msg) })), { what: 'DATA', b: encodeData(header(), hex('01')) }];
    for (const { what, b } of all) {
      for (const version of [0, 2, 0xff]) {
        const bad = Uint8Array.from(b);
        bad[1] = version;
        const parse = what === 'DATA' ? parseData : parseControl;
        const message = new RegExp(`^${what} version: ${version}, this stack speaks version 1$`);
        parseFails(parse(bad), 'WIRE_BAD_VERSION', what, message);
        parseFails(parse(bad.subarray(0, 2)), 'WIRE_BAD_VERSION', what);
      }
    }
  });

  test('trailing bytes after a complete control message', () => {
    for (const { what, msg } of samples) {
      const b = encodeControl(msg);
      for (const extra of [1, 6, 7, 100]) {
        const longer = new Uint8Array(b.length + extra);
        longer.set(b);
        const message = new RegExp(`^${what} has ${extra} trailing bytes`);
        parseFails(parseControl(longer), 'WIRE_TRAILING_BYTES', what, message);
      }
    }
  });

  test('a data protocol number that is not udp, tcp or raw', () => {
    for (const p of [1, 5, 7, 16, 18, 132, 255]) {
      const b = encodeData(header(), hex('01'));
      b[3] = p;
      parseFails(parseData(b), 'WIRE_BAD_FIELD', 'DATA', new RegExp(`^DATA proto: ${p}, `));
    }
  });

  test('a HELLO workload entry for channel 0', () => {
    const b = encodeControl(hello(3));
    b[HELLO_FIXED_BYTES - 1 + 2 * HELLO_ENTRY_BYTES] = 0;
    parseFails(parseControl(b), 'WIRE_BAD_FIELD', 'HELLO', /^HELLO workload\[2\]\.channel: 0, needs 1-255$/);
  });

  test('a HELLO neighbour on channel 0', () => {
    const b = encodeControl(hello(1));
    b[b.length - 1] = 0;
    parseFails(parseControl(b), 'WIRE_BAD_FIELD', 'HELLO', /^HELLO neighbours\[1\]\.r1Channel: 0, needs 1-255$/);
  });

  test('a RERR with no destination', () => {
    parseFails(parseControl(hex('03010000')), 'WIRE_BAD_LENGTH', 'RERR', /destCount: 0/);
    parseFails(parseControl(hex('03010000 0001 00000001')), 'WIRE_BAD_LENGTH', 'RERR');
  });

  test('reserved flag bits set', () => {
    const cases: Array<[string, Uint8Array, number[]]> = [
      ['RREQ', encodeControl(rreq()), [0x01, 0x02, 0x04]],
      ['RREP', encodeControl(rrep()), [0x01, 0x02, 0x04, 0x08, 0x10, 0x20]],
      ['RERR', encodeControl(rerr(1)), [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40]],
    ];
    for (const [what, b, bits] of cases) {
      for (const bit of bits) {
        const bad = Uint8Array.from(b);
        bad[2]! |= bit;
        parseFails(parseControl(bad), 'WIRE_BAD_FIELD', what, /flags: reserved bits 0x[0-9a-f]{2} set/);
      }
    }
  });
});

describe('refused values', () => {
  test('RREQ fields out of range are refused by name', () => {
    const cases: Array<[keyof Rreq, number]> = [
      ['hopCount', 256],
      ['hopCount', -1],
      ['hopCount', 1.5],
      ['rreqId', U32 + 1],
      ['rreqId', -1],
      ['dst', 0x10000],
      ['dst', -1],
      ['dst', 2.5],
      ['dstSeq', 2 ** 32],
      ['dstSeq', Number.NaN],
      ['orig', 70000],
      ['origSeq', 0.5],
      ['ttl', 256],
      ['firstHop', 0x10000],
      ['pathCost', -0.001],
      ['pathCost', Number.NaN],
      ['pathCost', Number.POSITIVE_INFINITY],
      ['pathCost', MAX_PATH_COST + 0.001],
    ];
    for (const [field, value] of cases) {
      assert.throws(() => encodeControl(rreq({ [field]: value })), refused(`rreq.${field}`), `${field}=${value}`);
    }
  });

  test('RREP fields out of range are refused by name', () => {
    const cases: Array<[keyof Rrep, number]> = [
      ['hopCount', 256],
      ['dst', 0x10000],
      ['dstSeq', -1],
      ['orig', -1],
      ['lifetimeMs', 2 ** 32],
      ['lifetimeMs', 1.5],
      ['lastHop', 0x10000],
      ['pathCost', -1],
      ['pathCost', Number.NaN],
    ];
    for (const [field, value] of cases) {
      assert.throws(() => encodeControl(rrep({ [field]: value })), refused(`rrep.${field}`), `${field}=${value}`);
    }
  });

  test('RERR with no or too many destinations, or a bad entry', () => {
    assert.throws(() => encodeControl(rerr(0)), refused('rerr.unreachable.length'));
    assert.throws(() => encodeControl(rerr(256)), refused('rerr.unreachable.length'));
    const m = rerr(3);
    m.unreachable[1]!.dst = 0x10000;
    assert.throws(() => encodeControl(m), refused('rerr.unreachable[1].dst'));
    const s = rerr(3);
    s.unreachable[2]!.dstSeq = -1;
    assert.throws(() => encodeControl(s), refused('rerr.unreachable[2].dstSeq'));
  });

  test('HELLO fields out of range are refused by name', () => {
    assert.throws(() => encodeControl(hello(256)), refused('hello.workload.length'));
    const many = Array.from({ length: 256 }, (_, i) => ({ addr: i, r1Channel: 1 }));
    assert.throws(() => encodeControl(hello(0, { neighbours: many })), refused('hello.neighbours.length'));
    assert.throws(() => encodeControl(hello(0, { neighbours: [{ addr: 0x10000, r1Channel: 1 }] })), refused('hello.neighbours[0].addr'));
    assert.throws(() => encodeControl(hello(0, { neighbours: [{ addr: 1, r1Channel: 0 }] })), refused('hello.neighbours[0].r1Channel'));
    assert.throws(() => encodeControl(hello(1, { src: 0x10000 })), refused('hello.src'));
    assert.throws(() => encodeControl(hello(1, { seq: 2 ** 32 })), refused('hello.seq'));
    assert.throws(() => encodeControl(hello(1, { r1Channel: 256 })), refused('hello.r1Channel'));
    assert.throws(() => encodeControl(hello(1, { r1Channel: -1 })), refused('hello.r1Channel'));
    const entry = (over: object) =>
      hello(0, {
        workload: [
          { channel: 1, w: 0.5, windows: 1 },
          { channel: 2, w: 0.5, windows: 1, ...over },
        ],
      });
    assert.throws(() => encodeControl(entry({ channel: 0 })), refused('hello.workload[1].channel'));
    assert.throws(() => encodeControl(entry({ channel: 256 })), refused('hello.workload[1].channel'));
    assert.throws(() => encodeControl(entry({ channel: 1.5 })), refused('hello.workload[1].channel'));
    for (const w of [-0.01, 1.01, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => encodeControl(entry({ w })), refused('hello.workload[1].w'), `w=${w}`);
    }
    assert.throws(() => encodeControl(entry({ windows: 2 ** 32 })), refused('hello.workload[1].windows'));
    assert.throws(() => encodeControl(entry({ windows: -1 })), refused('hello.workload[1].windows'));
  });

  test('DATA header fields out of range are refused by name', () => {
    const cases: Array<[keyof DataHeader, unknown]> = [
      ['src', 0x10000],
      ['dst', -1],
      ['ttl', 256],
      ['ttl', 0.5],
      ['proto', 'sctp'],
      ['proto', 'toString'],
      ['flow', 0x10000],
      ['flow', -1],
      ['seq', 2 ** 32],
    ];
    for (const [field, value] of cases) {
      assert.throws(
        () => encodeData(header({ [field]: value } as Partial<DataHeader>), new Uint8Array(1)),
        refused(`data.${field}`),
        `${field}=${String(value)}`,
      );
    }
  });

  test('an unknown message type is refused', () => {
    assert.throws(() => encodeControl({ type: 'ping' } as unknown as ControlMsg), refused('type'));
  });

  test('a refused message leaves the output buffer untouched; no room is refused', () => {
    const out = new Uint8Array(64).fill(0x33);
    assert.throws(() => emitControl(rreq({ pathCost: -1 }), out, 0), refused('rreq.pathCost'));
    assert.throws(
      () =>
        emitControl(
          hello(0, {
            workload: [
              { channel: 1, w: 0, windows: 0 },
              { channel: 0, w: 0, windows: 0 },
            ],
          }),
          out,
          0,
        ),
      refused('hello.workload[1].channel'),
    );
    assert.throws(() => emitDataHeader(header({ flow: -1 }), out, 0), refused('data.flow'));
    assert.ok(out.every((x) => x === 0x33));
    assert.throws(() => emitControl(rreq(), out, 64 - RREQ_BYTES + 1), refused('offset'));
    assert.throws(() => emitDataHeader(header(), new Uint8Array(DATA_HEADER_BYTES - 1)), refused('offset'));
    assert.ok(out.every((x) => x === 0x33));
  });
});

describe('data payload', () => {
  test('is a view into the packet, not a copy', () => {
    const b = encodeData(header(), hex('01020304'));
    const r = parseData(b);
    assert.ok(r.ok);
    assertViewInto(r.value.payload, b, DATA_HEADER_BYTES, 4);
  });

  test('encodeData copies the payload into a new buffer', () => {
    const payload = hex('0a0b');
    const b = encodeData(header(), payload);
    assert.notEqual(b.buffer, payload.buffer);
    payload[0] = 0;
    assert.equal(b[DATA_HEADER_BYTES], 0x0a);
  });
});

describe('seeded fuzz', () => {
  /** Parse never throws; a refusal has a known code; an accepted packet re-encodes to the same bytes. */
  function check(b: Uint8Array, tally: Map<string, number>): void {
    let rc: ReturnType<typeof parseControl>;
    let rd: ReturnType<typeof parseData>;
    try {
      rc = parseControl(b);
      rd = parseData(b);
      packetKind(b);
    } catch (e) {
      assert.fail(`parse threw on ${toHex(b)}: ${String(e)}`);
    }
    for (const r of [rc, rd]) {
      if (!r.ok) {
        assert.ok(r.error instanceof WireError);
        assert.ok(CODES.includes(r.error.code), r.error.code);
        assert.equal(typeof r.error.what, 'string');
        tally.set(r.error.code, (tally.get(r.error.code) ?? 0) + 1);
      }
    }
    if (rc.ok) {
      tally.set('ok-control', (tally.get('ok-control') ?? 0) + 1);
      assert.equal(packetKind(b), 'control');
      assert.equal(toHex(encodeControl(rc.value)), toHex(b), 'control re-encodes to the same bytes');
    }
    if (rd.ok) {
      tally.set('ok-data', (tally.get('ok-data') ?? 0) + 1);
      assert.equal(packetKind(b), 'data');
      assert.equal(toHex(encodeData(rd.value.header, rd.value.payload)), toHex(b), 'data re-encodes to the same bytes');
    }
  }

  const TYPES = [1, 2, 3, 0x10, 0x11, 0x20, 0x21];

  test('random byte strings never make parse throw', () => {
    const rng = Rng.fromSeed(20240607);
    const tally = new Map<string, number>();
    for (let i = 0; i < 20_000; i++) {
      const n = rng.int(0, 80);
      const b = new Uint8Array(n);
      for (let j = 0; j < n; j++) b[j] = rng.int(0, 255);
      // Mostly a known type and the right version, so the fuzz reaches the field checks.
      if (n > 0 && rng.next() < 0.8) b[0] = TYPES[rng.int(0, TYPES.length - 1)]!;
      if (n > 1 && rng.next() < 0.8) b[1] = 1;
      if (n > 3 && b[0] === 3 && rng.next() < 0.7) b[3] = rng.int(0, 12);
      if (n > 9 && b[0] === 0x10 && rng.next() < 0.7) b[9] = rng.int(0, 10);
      if (n > 2 && rng.next() < 0.5) b[2] = 0;
      check(b, tally);
    }
    const reached = ['WIRE_TRUNCATED', 'WIRE_UNKNOWN_TYPE', 'WIRE_BAD_VERSION', 'WIRE_BAD_FIELD', 'WIRE_TRAILING_BYTES', 'ok-data'];
    for (const code of reached) {
      assert.ok((tally.get(code) ?? 0) > 0, `fuzz never reached ${code}: ${JSON.stringify([...tally])}`);
    }
  });

  test('mutated, cut and extended valid packets never make parse throw', () => {
    const rng = Rng.fromSeed(7);
    const tally = new Map<string, number>();
    const valid = [...samples.map((s) => encodeControl(s.msg)), encodeData(header(), hex('0102030405'))];
    for (let i = 0; i < 20_000; i++) {
      const base = valid[rng.int(0, valid.length - 1)]!;
      check(mutate(base, rng).bytes, tally);
    }
    const reached = ['WIRE_TRUNCATED', 'WIRE_BAD_VERSION', 'WIRE_BAD_LENGTH', 'WIRE_BAD_FIELD', 'WIRE_TRAILING_BYTES', 'ok-control', 'ok-data'];
    for (const code of reached) {
      assert.ok((tally.get(code) ?? 0) > 0, `fuzz never reached ${code}: ${JSON.stringify([...tally])}`);
    }
  });
});

describe('PREFIX and IP data', () => {
  const v4 = { version: 4 as const, bytes: Uint8Array.of(10, 0, 4, 0), length: 24 };
  const v6 = { version: 6 as const, bytes: hex('fd000001000000040000000000000000'), length: 64 };
  const prefix = (over: Partial<PrefixAnnouncement> = {}): PrefixAnnouncement => ({
    type: 'prefix',
    orig: 4,
    seq: 0x01020304,
    hopCount: 2,
    ttl: 33,
    lifetimeS: 15,
    prefixes: [v4, v6],
    ...over,
  });

  test('PREFIX: exact bytes, and back', () => {
    const b = encodeControl(prefix());
    assert.equal(
      toHex(b),
      '11' + '01' + '0004' + '01020304' + '02' + '21' + '000f' + '02' + '04' + '18' + '0a000400' + '06' + '40' + 'fd000001000000040000000000000000',
    );
    assert.equal(b.length, controlLength(prefix()));
    assert.equal(packetKind(b), 'control');
    assert.deepEqual(parsedOk(b), prefix());
    assert.deepEqual(parsedOk(encodeControl(prefix({ prefixes: [] }))), prefix({ prefixes: [] }));
  });

  test('PREFIX: refused bytes name the field', () => {
    const good = encodeControl(prefix());
    const badVersion = good.slice();
    badVersion[13] = 5;
    assert.match(refusedControl(badVersion, 'WIRE_BAD_FIELD'), /prefixes\[0\]\.version: 5/);
    const badLength = good.slice();
    badLength[14] = 33;
    assert.match(refusedControl(badLength, 'WIRE_BAD_FIELD'), /prefixes\[0\]\.length: 33/);
    const hostBits = good.slice();
    hostBits[18] = 1;
    assert.match(refusedControl(hostBits, 'WIRE_BAD_FIELD'), /host bits/);
    for (let n = 0; n < good.length; n++) refusedControl(good.subarray(0, n), 'WIRE_TRUNCATED');
    refusedControl(Uint8Array.from([...good, 0]), 'WIRE_TRAILING_BYTES');
  });

  test('PREFIX: values that cannot be encoded are refused before a byte is written', () => {
    assert.throws(() => encodeControl(prefix({ prefixes: [{ ...v4, length: 17, bytes: Uint8Array.of(10, 0, 0x40, 0) }] })), /bits set beyond/);
    assert.throws(() => encodeControl(prefix({ prefixes: [{ ...v4, bytes: Uint8Array.of(10, 0, 4) }] })), /4 bytes/);
    assert.throws(() => encodeControl(prefix({ lifetimeS: 70000 })), RangeArgumentError);
  });

  test('DATA protos ip4 (4) and ip6 (41) carry a whole IP packet', () => {
    const h: DataHeader = { src: 0, dst: 4, ttl: 35, proto: 'ip6', flow: 0xbeef, seq: 9, label: 0x12345 };
    const b = encodeData(h, Uint8Array.of(0x60, 1, 2));
    assert.equal(b[3], 41);
    assert.deepEqual(parseData(b), { ok: true, value: { header: h, payload: Uint8Array.of(0x60, 1, 2) } });
    const b4 = encodeData({ ...h, proto: 'ip4', label: undefined }, Uint8Array.of(0x45));
    assert.equal(b4[3], 4);
    const bad = b4.slice();
    bad[3] = 5;
    const r = parseData(bad);
    assert.ok(!r.ok && /needs 17 \(udp\), 6 \(tcp\), 0 \(raw\), 4 \(ip4\) or 41 \(ip6\)/.test(r.error.message));
  });
});

function refusedControl(b: Uint8Array, code: WireErrorCode): string {
  const r = parseControl(b);
  assert.ok(!r.ok, `accepted ${toHex(b)}`);
  assert.equal(r.error.code, code, r.error.message);
  return r.error.message;
}

describe('parseControlShared', () => {
  const sample = hello(2, { src: 300 });

  test('gives what parseControl gives, the same frozen HELLO for the same bytes, and parses other bytes anew', () => {
    const b = encodeControl(sample);
    const first = parseControlShared(b);
    assert.deepEqual(first, parseControl(b));
    assert.equal(parseControlShared(b.slice()), first, 'a copy of the bytes');
    assert.ok(Object.isFrozen(first) && first.ok && Object.isFrozen(first.value));
    const later = encodeControl({ ...sample, seq: 10 });
    const second = parseControlShared(later);
    assert.notEqual(second, first);
    assert.deepEqual(second, parseControl(later));
    const fromOther = encodeControl({ ...sample, src: 300 + 256 });
    assert.deepEqual(parseControlShared(fromOther), parseControl(fromOther), 'another sender in the same slot');
    const rrep = encodeControl({
      type: 'rrep',
      repair: false,
      ackRequired: false,
      hopCount: 1,
      dst: 3,
      dstSeq: 9,
      orig: 0,
      lifetimeMs: 3000,
      lastHop: 3,
      pathCost: 1,
    });
    assert.deepEqual(parseControlShared(rrep), parseControl(rrep), 'not a HELLO');
    const cut = b.subarray(0, b.length - 1);
    assert.deepEqual(parseControlShared(cut), parseControl(cut), 'a truncated HELLO');
    assert.equal(parseControlShared(Uint8Array.of()).ok, false);
  });
});
