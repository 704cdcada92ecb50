import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Rng } from '../../../src/core/rng.js';
import type { OfMatch } from '../../../src/wire/openflow/match.js';
import { OXM_FIELDS } from '../../../src/wire/openflow/match.js';
import { encodeOf, KNOWN_TYPES, OfFramer, parseOf, typeName } from '../../../src/wire/openflow/codec.js';
import { OFPBAC, OFPBIC, OFPBMC, OFPBRC, OFPET, OFPFMFC, OFPHFC, OFPQT, OFPRRFC, OFPT, OFPTFFC } from '../../../src/wire/openflow/constants.js';
import { OfParseError } from '../../../src/wire/openflow/errors.js';
import { isMaskable, OXM_FIELD_SPECS, oxmHeader, prerequisiteProblem } from '../../../src/wire/openflow/oxm.js';
import type { OfMessage, TableFeatureProp } from '../../../src/wire/openflow/types.js';
import { mutate, refused } from '../../support/bytes.js';
import { sampleTableFeatures } from './fake-switch.js';
import { applyActions, big, concat, fixLength, flowModWith, oxm, rawMatch, refusedAs, roundTrip, u16be, u32be, zeros } from './helpers.js';
import { bytes, FLOW_MOD, FULL_MATCH_V4, hex, MAC_A, MESSAGES, PORT, QUEUES, REPLY_BODIES, REQUEST_BODIES, toHex, V6_A } from './samples.js';

const BRC_LEN: [number, number] = [OFPET.BAD_REQUEST, OFPBRC.BAD_LEN];
const BMC = (code: number): [number, number] => [OFPET.BAD_MATCH, code];
const BAC = (code: number): [number, number] => [OFPET.BAD_ACTION, code];
const BIC = (code: number): [number, number] => [OFPET.BAD_INSTRUCTION, code];
const TFFC = (code: number): [number, number] => [OFPET.TABLE_FEATURES_FAILED, code];

/**
 * Parses `rounds` seeded mutations of `sources` (`mutate`, then the header's
 * length set to the bytes' in `fixShare` of them; with `keepType` the
 * version and type bytes restored), failing on a throw. `check` sees each
 * outcome; returns how many parsed and the refusals' codes.
 */
function fuzzParse(
  sources: Uint8Array[],
  opts: { seed: number; rounds: number; fixShare: number; keepType?: boolean },
  check: (b: Uint8Array, r: ReturnType<typeof parseOf>) => void,
): { accepted: number; codes: Map<string, number> } {
  const rng = Rng.fromSeed(opts.seed);
  const codes = new Map<string, number>();
  let accepted = 0;
  for (let i = 0; i < opts.rounds; i++) {
    const src = sources[rng.int(0, sources.length - 1)]!;
    let { bytes: b } = mutate(src, rng);
    if (opts.keepType === true && b.length >= 2) b.set(src.subarray(0, 2));
    if (rng.next() < opts.fixShare && b.length >= 4) b = fixLength(b.slice());
    let r;
    try {
      r = parseOf(b);
    } catch (e) {
      assert.fail(`parseOf threw on ${toHex(b)}: ${String(e)}`);
    }
    if (r.ok) accepted++;
    else codes.set(r.error.code, (codes.get(r.error.code) ?? 0) + 1);
    check(b, r);
  }
  return { accepted, codes };
}

describe('OpenFlow codec: round trips', () => {
  test('every sample message encodes, parses back to the same value, and re-encodes to the same bytes', () => {
    const seen = new Set<string>();
    for (const m of MESSAGES) {
      const b = roundTrip(m);
      assert.equal(b[0], m.type === 'hello' ? m.version : 4, `version byte of ${m.type}`);
      assert.equal((b[2]! << 8) | b[3]!, b.length, `length field of ${m.type}`);
      assert.equal(Buffer.from(b).readUInt32BE(4), m.xid, `xid of ${m.type}`);
      seen.add(m.type);
    }
    const all: OfMessage['type'][] = [
      'hello',
      'error',
      'error-experimenter',
      'echo-request',
      'echo-reply',
      'experimenter',
      'features-request',
      'features-reply',
      'get-config-request',
      'get-config-reply',
      'set-config',
      'packet-in',
      'flow-removed',
      'port-status',
      'packet-out',
      'flow-mod',
      'barrier-request',
      'barrier-reply',
      'role-request',
      'role-reply',
      'get-async-request',
      'get-async-reply',
      'set-async',
      'multipart-request',
      'multipart-reply',
      'queue-get-config-request',
      'queue-get-config-reply',
      'unknown',
    ];
    assert.deepEqual([...seen].sort(), [...all].sort(), 'the samples cover every message type');
  });

  test('every multipart body type is covered in both directions', () => {
    const types = [
      'desc',
      'flow',
      'aggregate',
      'table',
      'port-stats',
      'queue',
      'group-desc',
      'meter-features',
      'table-features',
      'port-desc',
      'experimenter',
      'unsupported',
    ];
    assert.deepEqual([...new Set(REQUEST_BODIES.map((b) => b.type))].sort(), [...types].sort(), 'request bodies');
    assert.deepEqual([...new Set(REPLY_BODIES.map((b) => b.type))].sort(), [...types].sort(), 'reply bodies');
  });

  test('exact bytes: HELLO with a version bitmap, ECHO, FEATURES_REPLY, BARRIER', () => {
    assert.equal(
      toHex(encodeOf({ type: 'hello', version: 4, xid: 1, elements: [{ type: 'version-bitmap', bitmaps: [0x10] }] })),
      '04000010000000010001000800000010',
    );
    assert.equal(toHex(encodeOf({ type: 'echo-request', xid: 0x01020304, data: bytes(0xaa) })), '0402000901020304aa');
    assert.equal(
      toHex(encodeOf({ type: 'features-reply', xid: 2, datapathId: 0x0102030405060708n, nBuffers: 256, nTables: 254, auxiliaryId: 1, capabilities: 0x4f })),
      '0406002000000002010203040506070800000100fe0100000000004f00000000',
    );
    assert.equal(toHex(encodeOf({ type: 'barrier-reply', xid: 9 })), '0415000800000009');
    // An unknown hello element is padded to 8; its length field excludes the padding.
    assert.equal(
      toHex(encodeOf({ type: 'hello', version: 5, xid: 0, elements: [{ type: 'unknown', elemType: 7, data: bytes(1) }] })),
      '05000010000000000007000501000000',
    );
  });

  test('a PORT_STATUS is 80 bytes and an ofp_port 64, with the name NUL-padded', () => {
    const b = encodeOf({ type: 'port-status', xid: 0, reason: 'modify', port: PORT });
    assert.equal(b.length, 80, 'PORT_STATUS length');
    assert.equal(b[8], 2, 'reason modify');
    assert.equal(toHex(b.subarray(16, 20)), '00000001', 'port_no');
    assert.equal(toHex(b.subarray(24, 30)), toHex(MAC_A), 'hw_addr');
    assert.equal(Buffer.from(b.subarray(32, 48)).toString('latin1'), 'mesh0-n3\0\0\0\0\0\0\0\0', 'name');
    assert.equal(Buffer.from(b).readUInt32BE(72), 27_000, 'curr_speed');
    assert.equal(Buffer.from(b).readUInt32BE(76), 54_000, 'max_speed');
  });

  test('every OXM field round-trips alone (with its prerequisites), exact and, where maskable, masked', () => {
    const samples: Record<keyof OfMatch, { exact: unknown; masked?: unknown; prereq: OfMatch }> = {
      inPort: { exact: 0xfffffffe, prereq: {} },
      ethDst: { exact: { value: MAC_A }, masked: { value: hex('010000000000'), mask: hex('010000000000') }, prereq: {} },
      ethSrc: { exact: { value: MAC_A }, masked: { value: hex('020000000000'), mask: hex('ff0000000000') }, prereq: {} },
      ethType: { exact: 0x88cc, prereq: {} },
      vlanVid: { exact: { value: 0x1fff }, masked: { value: 0x1000, mask: 0x1000 }, prereq: {} },
      ipDscp: { exact: 63, prereq: { ethType: 0x86dd } },
      ipProto: { exact: 255, prereq: { ethType: 0x0800 } },
      ipv4Src: { exact: { value: 0xc0a80001 }, masked: { value: 0xc0a80000, mask: 0xffff0000 }, prereq: { ethType: 0x0800 } },
      ipv4Dst: { exact: { value: 0xffffffff }, masked: { value: 0, mask: 0 }, prereq: { ethType: 0x0800 } },
      tcpSrc: { exact: 0, prereq: { ethType: 0x0800, ipProto: 6 } },
      tcpDst: { exact: 65535, prereq: { ethType: 0x86dd, ipProto: 6 } },
      udpSrc: { exact: 68, prereq: { ethType: 0x0800, ipProto: 17 } },
      udpDst: { exact: 67, prereq: { ethType: 0x86dd, ipProto: 17 } },
      ipv6Src: {
        exact: { value: V6_A },
        masked: { value: hex('fe800000000000000000000000000000'), mask: hex('ffc00000000000000000000000000000') },
        prereq: { ethType: 0x86dd },
      },
      ipv6Dst: { exact: { value: V6_A }, masked: { value: V6_A, mask: hex('ffffffffffffffffffffffffffffffff') }, prereq: { ethType: 0x86dd } },
      ipv6Flabel: { exact: { value: 0xfffff }, masked: { value: 0x00045, mask: 0x000ff }, prereq: { ethType: 0x86dd } },
    };
    assert.deepEqual(Object.keys(samples).sort(), Object.keys(OXM_FIELDS).sort(), 'a sample for every OfMatch field');
    for (const s of OXM_FIELD_SPECS) {
      const sample = samples[s.key];
      assert.equal(OXM_FIELDS[s.key], s.field, `${s.key}: the codec's field number agrees with match.ts`);
      assert.equal(s.maskable, sample.masked !== undefined, `${s.key}: maskable as the spec says`);
      for (const [form, v] of [
        ['exact', sample.exact],
        ['masked', sample.masked],
      ] as const) {
        if (v === undefined) continue;
        const match = { ...sample.prereq, [s.key]: v } as OfMatch;
        const b = roundTrip({ type: 'flow-mod', xid: 1, mod: { ...FLOW_MOD, match, instructions: [] } });
        const header = oxmHeader(s.key, form === 'masked');
        assert.ok(toHex(b).includes(header.toString(16).padStart(8, '0')), `${s.key} ${form}: TLV header 0x${header.toString(16)} on the wire`);
        roundTrip({ type: 'packet-in', xid: 0, bufferId: 1, totalLen: 0, reason: 'action', tableId: 0, cookie: 0n, match, data: new Uint8Array(0) });
      }
      // set-field carries each field exact.
      const setField = { [s.key]: sample.exact } as OfMatch;
      roundTrip({ type: 'packet-out', xid: 2, bufferId: 0xffffffff, inPort: 1, actions: [{ type: 'set-field', field: setField }], data: new Uint8Array(0) });
    }
    assert.equal(isMaskable('ipv6Flabel'), true, 'flabel maskable');
    assert.equal(isMaskable('tcpDst'), false, 'tcp_dst not maskable');
  });

  test('OXM TLVs are written in the canonical (Open vSwitch) order, whatever the object order', () => {
    const scrambled: OfMatch = { tcpDst: 80, ipProto: 6, ethType: 0x0800, inPort: 1, ethDst: { value: MAC_A }, ethSrc: { value: MAC_A } };
    const b = encodeOf({ type: 'flow-mod', xid: 1, mod: { ...FLOW_MOD, match: scrambled, instructions: [] } });
    assert.equal(
      toHex(b.subarray(48, 48 + 4 + 8 + 10 + 10 + 6 + 5 + 6)),
      '00010031' + '8000000400000001' + '80000806' + toHex(MAC_A) + '80000606' + toHex(MAC_A) + '80000a020800' + '8000140106' + '80001c020050',
      'in_port, eth_src, eth_dst, eth_type, ip_proto, tcp_dst',
    );
  });

  test('a match from TLVs in another order is accepted and re-encoded in the canonical order', () => {
    const b = flowModWith(rawMatch([oxm(14, u16be(80)), oxm(10, bytes(6)), oxm(5, u16be(0x0800))]));
    const r = parseOf(b);
    assert.ok(r.ok, 'accepted');
    assert.ok(r.value.type === 'flow-mod', 'a flow-mod');
    assert.deepEqual(r.value.mod.match, { tcpDst: 80, ipProto: 6, ethType: 0x0800 }, 'the fields');
    const again = encodeOf(r.value);
    assert.equal(again.length, b.length, 'same length');
    assert.notDeepEqual(again, b, 'different order on the wire');
  });

  test('every table-feature property type round-trips, alone and all together', () => {
    const t = sampleTableFeatures(3);
    const kinds = new Set(t.properties.map((p) => p.type));
    assert.equal(kinds.size, 16, 'the sample table has all 16 property types');
    for (const p of t.properties) {
      roundTrip({ type: 'multipart-reply', xid: 1, flags: 0, body: { type: 'table-features', tables: [{ ...t, properties: [p] }] } });
      roundTrip({ type: 'multipart-request', xid: 1, flags: 0, body: { type: 'table-features', tables: [{ ...t, properties: [p] }] } });
    }
    const odd: TableFeatureProp[] = [
      {
        type: 'instructions',
        ids: [{ type: 1 }, { type: 0xffff, experimenter: 0x2320, data: new Uint8Array(0) }, { type: 0xffff, experimenter: 0x2320, data: bytes(0, 1) }],
      },
      { type: 'apply-actions-miss', ids: [{ type: 0xffff, experimenter: 0x2320, data: bytes(0, 7, 0, 0) }, { type: 0 }] },
      { type: 'next-tables', tableIds: [] },
      { type: 'next-tables-miss', tableIds: [1, 2, 3, 4, 5, 6, 7, 8, 9] },
      {
        type: 'match',
        oxmIds: [
          { oxmClass: 0xffff, field: 1, hasMask: false, length: 8, experimenter: 0x4f4e4600 },
          { oxmClass: 1, field: 3, hasMask: true, length: 12 },
        ],
      },
      { type: 'experimenter', experimenter: 1, expType: 2, data: bytes(1, 2, 3, 4, 5, 6, 7) },
    ];
    roundTrip({ type: 'multipart-reply', xid: 1, flags: 0, body: { type: 'table-features', tables: [{ ...t, properties: odd }, t] } });
    const b = encodeOf({ type: 'multipart-reply', xid: 1, flags: 0, body: { type: 'table-features', tables: [{ ...t, properties: [odd[3]!] }] } });
    // 16 header + 64 table + property (4 + 9 = 13, padded to 16).
    assert.equal(b.length, 16 + 64 + 16, 'a property is padded to 8');
    assert.equal(toHex(b.subarray(80 + 2, 80 + 4)), '000d', 'its length excludes the padding');
    assert.equal(toHex(b.subarray(16, 18)), '0050', 'the table-features length includes it');
  });

  test('unknown message types parse to a typed unknown value with their type, xid and body', () => {
    assert.ok(KNOWN_TYPES.has(OFPT.QUEUE_GET_CONFIG_REQUEST) && KNOWN_TYPES.has(OFPT.QUEUE_GET_CONFIG_REPLY), 'QUEUE_GET_CONFIG_* are read');
    for (const t of [15, 16, 17, 29, 30, 255]) {
      assert.ok(!KNOWN_TYPES.has(t), `type ${t} is not read by the codec`);
      const b = hex(`04${t.toString(16).padStart(2, '0')}000c0000abcd01020304`);
      const r = parseOf(b);
      assert.ok(r.ok, `type ${t} parses`);
      assert.deepEqual(r.value, { type: 'unknown', xid: 0xabcd, msgType: t, body: bytes(1, 2, 3, 4) }, `type ${t}`);
      assert.deepEqual(encodeOf(r.value), b, `type ${t} re-encodes`);
    }
    assert.equal(typeName(OFPT.METER_MOD), 'METER_MOD', 'a name for a known number');
    assert.equal(typeName(99), 'type 99', 'and for any other');
  });

  test('a HELLO may carry any version; everything else must be 0x04', () => {
    for (const v of [1, 2, 3, 5, 6, 0x7f]) {
      const r = parseOf(hex(`${v.toString(16).padStart(2, '0')}000008000000ff`));
      assert.ok(r.ok && r.value.type === 'hello' && r.value.version === v, `HELLO version ${v}`);
    }
    // ECHO_REQUEST v1, FLOW_MOD v5, an unknown type v3.
    for (const b of ['0102000800000005', '050e000800000005', '0363000800000005']) {
      refusedAs(hex(b), 'OF_BAD_VERSION', [OFPET.BAD_REQUEST, OFPBRC.BAD_VERSION], 5);
    }
  });
});

describe('OpenFlow codec: truncated and inconsistent input', () => {
  test('every proper prefix of every sample is OF_TRUNCATED (never a throw)', () => {
    for (const m of MESSAGES) {
      const b = encodeOf(m);
      for (let n = 0; n < b.length; n++) {
        const e = refusedAs(b.subarray(0, n), 'OF_TRUNCATED', BRC_LEN);
        assert.equal(e.xid, n >= 8 ? m.xid : undefined, `${m.type} cut at ${n}: the xid once the header is there`);
      }
    }
  });

  test('every sample cut short with a consistent header length: refused or accepted, never thrown, and an accepted cut re-encodes to itself', () => {
    let accepted = 0;
    let refusedCount = 0;
    for (const m of MESSAGES) {
      const b = encodeOf(m);
      for (let n = 8; n < b.length; n++) {
        const cut = fixLength(b.slice(0, n));
        const r = parseOf(cut);
        if (r.ok) {
          accepted++;
          assert.deepEqual(encodeOf(r.value), cut, `${m.type} cut at ${n} re-encodes to itself`);
        } else {
          refusedCount++;
          assert.ok(r.error instanceof OfParseError, 'typed error');
          assert.notEqual(r.error.code, 'OF_TRUNCATED', `${m.type} cut at ${n}: the header is consistent, so not OF_TRUNCATED`);
          assert.equal(r.error.xid, m.xid, `${m.type} cut at ${n}: error carries the xid`);
          if (m.type === 'queue-get-config-request' || m.type === 'queue-get-config-reply') {
            // Only lengths can be wrong in a cut QUEUE_GET_CONFIG (a reply cut between queues is accepted).
            assert.equal(r.error.code, 'OF_BAD_LENGTH', `${m.type} cut at ${n}: ${r.error.message}`);
            assert.deepEqual([r.error.answer.type, r.error.answer.code], BRC_LEN, `${m.type} cut at ${n}: the answer`);
          }
        }
      }
    }
    assert.ok(accepted > 0 && refusedCount > 1000, `both outcomes seen (${accepted} accepted, ${refusedCount} refused)`);
  });

  test('header length: below 8, more bytes than it says, fewer bytes than it says', () => {
    refusedAs(hex('0402000400000009'), 'OF_BAD_LENGTH', BRC_LEN, 9);
    refusedAs(hex('040200080000000900'), 'OF_BAD_LENGTH', BRC_LEN, 9);
    refusedAs(hex('04020009000000'), 'OF_TRUNCATED', BRC_LEN);
    refusedAs(hex('0402000a0000000900'), 'OF_TRUNCATED', BRC_LEN, 9);
  });

  test('fixed-size messages with a body of the wrong size are OFPBRC_BAD_LEN', () => {
    const cases: OfMessage[] = [
      { type: 'features-request', xid: 3 },
      { type: 'barrier-request', xid: 3 },
      { type: 'get-config-request', xid: 3 },
      { type: 'get-async-request', xid: 3 },
      { type: 'set-config', xid: 3, flags: 0, missSendLen: 128 },
      { type: 'role-request', xid: 3, role: 'equal', generationId: 0n },
      { type: 'set-async', xid: 3, config: { packetInMask: [0, 0], portStatusMask: [0, 0], flowRemovedMask: [0, 0] } },
      { type: 'features-reply', xid: 3, datapathId: 1n, nBuffers: 0, nTables: 1, auxiliaryId: 0, capabilities: 0 },
      { type: 'port-status', xid: 3, reason: 'add', port: PORT },
      { type: 'multipart-request', xid: 3, flags: 0, body: { type: 'desc' } },
      { type: 'multipart-request', xid: 3, flags: 0, body: { type: 'port-stats', portNo: 1 } },
      { type: 'multipart-request', xid: 3, flags: 0, body: { type: 'queue', portNo: 1, queueId: 1 } },
      { type: 'multipart-reply', xid: 3, flags: 0, body: { type: 'aggregate', stats: { packetCount: 0n, byteCount: 0n, flowCount: 0 } } },
      { type: 'queue-get-config-request', xid: 3, portNo: 1 },
    ];
    for (const m of cases) {
      const longer = fixLength(concat(encodeOf(m), zeros(8)));
      refusedAs(longer, 'OF_BAD_LENGTH', BRC_LEN, 3);
    }
  });

  test('multipart lists must be whole entries', () => {
    const table = encodeOf({ type: 'multipart-reply', xid: 1, flags: 0, body: REPLY_BODIES.find((b) => b.type === 'table')! });
    refusedAs(fixLength(table.slice(0, table.length - 8)), 'OF_BAD_LENGTH', BRC_LEN);
    const ports = encodeOf({ type: 'multipart-reply', xid: 1, flags: 0, body: { type: 'port-desc', ports: [PORT] } });
    refusedAs(fixLength(concat(ports, zeros(8))), 'OF_BAD_LENGTH', BRC_LEN);
    const flows = encodeOf({ type: 'multipart-reply', xid: 1, flags: 0, body: REPLY_BODIES.find((b) => b.type === 'flow')! });
    const bad = flows.slice();
    bad[16] = 0x10; // first flow_stats length 4096: past the body
    refusedAs(bad, 'OF_BAD_LENGTH', BRC_LEN);
    const odd = flows.slice();
    odd[17]! += 4; // not a multiple of 8
    refusedAs(odd, 'OF_BAD_LENGTH', BRC_LEN);
  });

  test('padding must be zero: header-level, match, action, instruction, property, hello element, strings', () => {
    const fm = encodeOf({ type: 'flow-mod', xid: 4, mod: FLOW_MOD });
    const at = (b: Uint8Array, i: number): Uint8Array => {
      const c = b.slice();
      c[i] = 1;
      return c;
    };
    refusedAs(at(fm, 46), 'OF_BAD_PADDING', BRC_LEN, 4); // FLOW_MOD pad[2]
    const fr = encodeOf({ type: 'features-reply', xid: 4, datapathId: 1n, nBuffers: 0, nTables: 1, auxiliaryId: 0, capabilities: 0 });
    refusedAs(at(fr, 28), 'OF_BAD_PADDING', BRC_LEN, 4); // reserved
    refusedAs(flowModWith(rawMatch([oxm(0, u32be(1))], { pad: bytes(0, 0, 0, 9) })), 'OF_BAD_PADDING', BMC(OFPBMC.BAD_LEN));
    const out = concat(u16be(0), u16be(16), u32be(1), u16be(0), bytes(0, 0, 0, 0, 0, 1));
    refusedAs(flowModWith(rawMatch([]), applyActions(out)), 'OF_BAD_PADDING', BAC(OFPBAC.BAD_ARGUMENT));
    refusedAs(flowModWith(rawMatch([]), concat(u16be(1), u16be(8), bytes(1, 0, 0, 1))), 'OF_BAD_PADDING', BIC(OFPBIC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([]), concat(u16be(4), u16be(8), bytes(0, 0, 1, 0))), 'OF_BAD_PADDING', BIC(OFPBIC.BAD_LEN));
    const hello = encodeOf({ type: 'hello', version: 4, xid: 1, elements: [{ type: 'unknown', elemType: 7, data: bytes(1) }] });
    refusedAs(at(hello, 15), 'OF_BAD_PADDING', [OFPET.HELLO_FAILED, OFPHFC.INCOMPATIBLE]);
    const tf = encodeOf({
      type: 'multipart-request',
      xid: 1,
      flags: 0,
      body: { type: 'table-features', tables: [{ ...sampleTableFeatures(), properties: [{ type: 'next-tables', tableIds: [1] }] }] },
    });
    refusedAs(at(tf, tf.length - 1), 'OF_BAD_PADDING', TFFC(OFPTFFC.BAD_LEN));
    const ps = encodeOf({ type: 'port-status', xid: 1, reason: 'add', port: PORT });
    refusedAs(at(ps, 32 + 15), 'OF_BAD_PADDING', BRC_LEN); // a byte after the name's NUL
    const noNul = ps.slice();
    noNul.fill(0x41, 32, 48);
    refusedAs(noNul, 'OF_BAD_FIELD', BRC_LEN);
  });

  test('match lengths: below 4, past the message, an OXM past the match, a payload of the wrong size', () => {
    refusedAs(flowModWith(rawMatch([], { length: 2 })), 'OF_BAD_LENGTH', BMC(OFPBMC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([oxm(0, u32be(1))], { length: 40 })), 'OF_BAD_LENGTH', BMC(OFPBMC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([oxm(0, u32be(1), false, 0x8000, 8)], {})), 'OF_BAD_LENGTH', BMC(OFPBMC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([oxm(0, u16be(1))])), 'OF_BAD_LENGTH', BMC(OFPBMC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([oxm(26, V6_A, true)])), 'OF_BAD_LENGTH', BMC(OFPBMC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([bytes(0x80, 0)])), 'OF_BAD_LENGTH', BMC(OFPBMC.BAD_LEN));
    // The FLOW_MOD ends inside the match's fixed part.
    refusedAs(flowModWith(bytes(0, 1)), 'OF_BAD_LENGTH', BRC_LEN);
  });

  test('match contents: duplicate, unknown classes and fields, masks, values, prerequisites', () => {
    const inPort = oxm(0, u32be(1));
    refusedAs(flowModWith(rawMatch([inPort, inPort])), 'OF_DUP_FIELD', BMC(OFPBMC.DUP_FIELD), 0x77);
    refusedAs(flowModWith(rawMatch([oxm(5, u16be(0x800)), oxm(5, u16be(0x800))])), 'OF_DUP_FIELD', BMC(OFPBMC.DUP_FIELD));
    refusedAs(flowModWith(rawMatch([oxm(3, MAC_A), oxm(3, concat(MAC_A, hex('ffffffffffff')), true)])), 'OF_DUP_FIELD', BMC(OFPBMC.DUP_FIELD));
    refusedAs(flowModWith(rawMatch([oxm(1, u32be(1), false, 0x0001)])), 'OF_UNSUPPORTED', BMC(OFPBMC.BAD_FIELD)); // NXM_1
    refusedAs(flowModWith(rawMatch([oxm(0, u32be(1), false, 0x0000)])), 'OF_UNSUPPORTED', BMC(OFPBMC.BAD_FIELD)); // NXM_0
    refusedAs(flowModWith(rawMatch([oxm(1, concat(u32be(0x4f4e4600), u32be(1)), false, 0xffff)])), 'OF_UNSUPPORTED', BMC(OFPBMC.BAD_FIELD));
    refusedAs(flowModWith(rawMatch([oxm(2, zeros(8))])), 'OF_UNSUPPORTED', BMC(OFPBMC.BAD_FIELD)); // METADATA
    refusedAs(flowModWith(rawMatch([oxm(1, u32be(1))])), 'OF_UNSUPPORTED', BMC(OFPBMC.BAD_FIELD)); // IN_PHY_PORT
    refusedAs(flowModWith(rawMatch([oxm(39, zeros(4))])), 'OF_UNSUPPORTED', BMC(OFPBMC.BAD_FIELD));
    refusedAs(flowModWith(rawMatch([], { type: 0 })), 'OF_UNSUPPORTED', BMC(OFPBMC.BAD_TYPE));
    refusedAs(flowModWith(rawMatch([oxm(0, concat(u32be(1), u32be(0xffffffff)), true)])), 'OF_BAD_FIELD', BMC(OFPBMC.BAD_MASK));
    refusedAs(flowModWith(rawMatch([oxm(5, u32be(0x0800ffff), true)])), 'OF_BAD_FIELD', BMC(OFPBMC.BAD_MASK));
    refusedAs(flowModWith(rawMatch([oxm(6, u16be(0x2000))])), 'OF_BAD_FIELD', BMC(OFPBMC.BAD_VALUE));
    refusedAs(flowModWith(rawMatch([oxm(6, concat(u16be(0x1000), u16be(0xffff)), true)])), 'OF_BAD_FIELD', BMC(OFPBMC.BAD_MASK));
    refusedAs(flowModWith(rawMatch([oxm(5, u16be(0x86dd)), oxm(8, bytes(64))])), 'OF_BAD_FIELD', BMC(OFPBMC.BAD_VALUE));
    refusedAs(flowModWith(rawMatch([oxm(5, u16be(0x86dd)), oxm(28, u32be(0x100000))])), 'OF_BAD_FIELD', BMC(OFPBMC.BAD_VALUE));
    refusedAs(
      flowModWith(rawMatch([oxm(5, u16be(0x800)), oxm(11, concat(u32be(0x0a000001), u32be(0xff000000)), true)])),
      'OF_BAD_FIELD',
      BMC(OFPBMC.BAD_WILDCARDS),
    );
    refusedAs(flowModWith(rawMatch([oxm(3, concat(hex('010000000001'), hex('010000000000')), true)])), 'OF_BAD_FIELD', BMC(OFPBMC.BAD_WILDCARDS));
    refusedAs(flowModWith(rawMatch([oxm(14, u16be(80))])), 'OF_BAD_PREREQ', BMC(OFPBMC.BAD_PREREQ));
    refusedAs(flowModWith(rawMatch([oxm(5, u16be(0x800)), oxm(14, u16be(80))])), 'OF_BAD_PREREQ', BMC(OFPBMC.BAD_PREREQ));
    refusedAs(flowModWith(rawMatch([oxm(5, u16be(0x800)), oxm(10, bytes(17)), oxm(14, u16be(80))])), 'OF_BAD_PREREQ', BMC(OFPBMC.BAD_PREREQ));
    refusedAs(flowModWith(rawMatch([oxm(5, u16be(0x800)), oxm(28, u32be(1))])), 'OF_BAD_PREREQ', BMC(OFPBMC.BAD_PREREQ));
    refusedAs(flowModWith(rawMatch([oxm(5, u16be(0x86dd)), oxm(12, u32be(1))])), 'OF_BAD_PREREQ', BMC(OFPBMC.BAD_PREREQ));
    refusedAs(flowModWith(rawMatch([oxm(10, bytes(6))])), 'OF_BAD_PREREQ', BMC(OFPBMC.BAD_PREREQ));
    assert.equal(prerequisiteProblem(FULL_MATCH_V4), undefined, 'the full IPv4 match has its prerequisites');
  });

  test('action lengths: not a multiple of 8, below 8, past the list, wrong for the type', () => {
    const out = (len: number, extra = zeros(0)): Uint8Array => concat(u16be(0), u16be(len), u32be(1), u16be(0), zeros(6), extra);
    refusedAs(flowModWith(rawMatch([]), applyActions(concat(u16be(21), u16be(12), u32be(1), zeros(8)))), 'OF_BAD_LENGTH', BAC(OFPBAC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([]), applyActions(concat(u16be(21), u16be(0), u32be(1)))), 'OF_BAD_LENGTH', BAC(OFPBAC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([]), applyActions(concat(u16be(21), u16be(4), u32be(1)))), 'OF_BAD_LENGTH', BAC(OFPBAC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([]), applyActions(out(24), 24)), 'OF_BAD_LENGTH', BAC(OFPBAC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([]), applyActions(out(24, zeros(8)))), 'OF_BAD_LENGTH', BAC(OFPBAC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([]), applyActions(concat(u16be(21), u16be(16), u32be(1), zeros(8)))), 'OF_BAD_LENGTH', BAC(OFPBAC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([]), applyActions(concat(u16be(24), u16be(16), zeros(4)))), 'OF_BAD_LENGTH', BAC(OFPBAC.BAD_LEN));
    // A leftover of fewer than 4 bytes.
    const po = encodeOf({ type: 'packet-out', xid: 5, bufferId: 1, inPort: 1, actions: [], data: new Uint8Array(0) });
    const withActions = (actionsLen: number, actions: Uint8Array): Uint8Array => {
      const b = fixLength(concat(po, actions));
      b[16] = actionsLen >>> 8;
      b[17] = actionsLen & 0xff;
      return b;
    };
    refusedAs(withActions(12, concat(u16be(21), u16be(8), u32be(1), zeros(4))), 'OF_BAD_LENGTH', BRC_LEN, 5);
    refusedAs(withActions(16, concat(u16be(21), u16be(8), u32be(1))), 'OF_BAD_LENGTH', BRC_LEN, 5);
    refusedAs(withActions(8, concat(u16be(21), u16be(16), u32be(1))), 'OF_BAD_LENGTH', BAC(OFPBAC.BAD_LEN), 5);
    const ok8 = parseOf(withActions(8, concat(u16be(21), u16be(8), u32be(1), bytes(0xee))));
    assert.ok(ok8.ok && ok8.value.type === 'packet-out', 'actions_len 8 with one SET_QUEUE and a data byte');
    assert.deepEqual(ok8.value.actions, [{ type: 'set-queue', queueId: 1 }], 'the action');
    assert.deepEqual(ok8.value.data, bytes(0xee), 'the data after the actions');
  });

  test('set-field: its OXM must fill the action exactly, be a known field, exact, in range', () => {
    const sf = (tlv: Uint8Array, len = (4 + tlv.length + 7) & ~7): Uint8Array => concat(u16be(25), u16be(len), tlv, zeros(len - 4 - tlv.length));
    const ok1 = parseOf(flowModWith(rawMatch([]), applyActions(sf(oxm(8, bytes(10))))));
    assert.ok(ok1.ok && ok1.value.type === 'flow-mod', 'a set-field of ip_dscp');
    refusedAs(flowModWith(rawMatch([]), applyActions(sf(oxm(8, bytes(10)), 24))), 'OF_BAD_LENGTH', BAC(OFPBAC.BAD_SET_LEN));
    refusedAs(flowModWith(rawMatch([]), applyActions(sf(oxm(8, bytes(10), false, 0x8000, 2), 16))), 'OF_BAD_LENGTH', BAC(OFPBAC.BAD_SET_LEN));
    refusedAs(flowModWith(rawMatch([]), applyActions(sf(oxm(0, u16be(1))))), 'OF_BAD_LENGTH', BAC(OFPBAC.BAD_SET_LEN));
    refusedAs(flowModWith(rawMatch([]), applyActions(sf(oxm(2, zeros(8))))), 'OF_UNSUPPORTED', BAC(OFPBAC.BAD_SET_TYPE));
    refusedAs(flowModWith(rawMatch([]), applyActions(sf(oxm(1, u32be(1), false, 1)))), 'OF_UNSUPPORTED', BAC(OFPBAC.BAD_SET_TYPE));
    refusedAs(flowModWith(rawMatch([]), applyActions(sf(oxm(11, concat(u32be(1), u32be(0xffffffff)), true)))), 'OF_BAD_FIELD', BAC(OFPBAC.BAD_SET_ARGUMENT));
    refusedAs(flowModWith(rawMatch([]), applyActions(sf(oxm(8, bytes(64))))), 'OF_BAD_FIELD', BAC(OFPBAC.BAD_SET_ARGUMENT));
    refusedAs(flowModWith(rawMatch([]), applyActions(concat(u16be(25), u16be(8), bytes(0x80, 0, 0x10, 0x01)))), 'OF_BAD_LENGTH', BAC(OFPBAC.BAD_SET_LEN));
    refusedAs(flowModWith(rawMatch([]), applyActions(concat(u16be(25), u16be(8), bytes(0x80, 0, 0x10, 0x00)))), 'OF_BAD_LENGTH', BAC(OFPBAC.BAD_SET_LEN));
  });

  test('instruction lengths: not a multiple of 8, past the list, wrong for the type', () => {
    refusedAs(flowModWith(rawMatch([]), concat(u16be(1), u16be(12), bytes(1, 0, 0, 0), zeros(4))), 'OF_BAD_LENGTH', BIC(OFPBIC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([]), concat(u16be(1), u16be(16), bytes(1, 0, 0, 0))), 'OF_BAD_LENGTH', BIC(OFPBIC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([]), concat(u16be(1), u16be(16), bytes(1, 0, 0, 0), zeros(8))), 'OF_BAD_LENGTH', BIC(OFPBIC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([]), concat(u16be(2), u16be(16), zeros(12))), 'OF_BAD_LENGTH', BIC(OFPBIC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([]), concat(u16be(5), u16be(0), zeros(4))), 'OF_BAD_LENGTH', BIC(OFPBIC.BAD_LEN));
    refusedAs(flowModWith(rawMatch([]), bytes(0, 1)), 'OF_BAD_LENGTH', BIC(OFPBIC.BAD_LEN));
    // apply-actions whose len stops inside an action.
    const act = concat(u16be(0), u16be(16), u32be(1), u16be(0), zeros(6));
    refusedAs(flowModWith(rawMatch([]), applyActions(act, 16)), 'OF_BAD_LENGTH', BAC(OFPBAC.BAD_LEN));
    // Unknown instruction and action types are kept, for the agent to refuse.
    const r = parseOf(
      flowModWith(rawMatch([]), concat(u16be(0x99), u16be(8), bytes(1, 2, 3, 4), applyActions(concat(u16be(0x55), u16be(8), bytes(5, 6, 7, 8))))),
    );
    assert.ok(r.ok && r.value.type === 'flow-mod', 'kept');
    assert.deepEqual(
      r.value.mod.instructions,
      [
        { type: 'unsupported', instructionType: 0x99, body: bytes(1, 2, 3, 4) },
        { type: 'apply-actions', actions: [{ type: 'unsupported', actionType: 0x55, body: bytes(5, 6, 7, 8) }] },
      ],
      'unsupported instruction and action',
    );
    assert.equal(OFPBIC.UNKNOWN_INST, 0, 'the code the agent answers with');
  });

  test('table features: entry length, property lengths, id lengths, unknown property types', () => {
    const req = (tables: Uint8Array): Uint8Array => fixLength(concat(hex('0412000000000009000c000000000000'), tables));
    const base = encodeOf({
      type: 'multipart-request',
      xid: 9,
      flags: 0,
      body: { type: 'table-features', tables: [{ ...sampleTableFeatures(), properties: [] }] },
    }).subarray(16);
    const withProps = (props: Uint8Array): Uint8Array => {
      const t = concat(base, props);
      t[0] = t.length >>> 8;
      t[1] = t.length & 0xff;
      return req(t);
    };
    assert.ok(parseOf(withProps(new Uint8Array(0))).ok, 'no properties is fine');
    const short = base.slice();
    short[1] = 56;
    refusedAs(req(short), 'OF_BAD_LENGTH', TFFC(OFPTFFC.BAD_LEN), 9);
    const odd = concat(base, zeros(4));
    odd[1] = 68;
    refusedAs(req(odd), 'OF_BAD_LENGTH', TFFC(OFPTFFC.BAD_LEN));
    const long = base.slice();
    long[1] = 72;
    refusedAs(req(long), 'OF_BAD_LENGTH', TFFC(OFPTFFC.BAD_LEN));
    refusedAs(withProps(concat(u16be(2), u16be(3), zeros(4))), 'OF_BAD_LENGTH', TFFC(OFPTFFC.BAD_LEN));
    refusedAs(withProps(concat(u16be(2), u16be(13), zeros(11))), 'OF_BAD_LENGTH', TFFC(OFPTFFC.BAD_LEN));
    refusedAs(withProps(concat(u16be(9), u16be(4), zeros(4))), 'OF_UNSUPPORTED', TFFC(OFPTFFC.BAD_TYPE));
    refusedAs(withProps(concat(u16be(0x20), u16be(4), zeros(4))), 'OF_UNSUPPORTED', TFFC(OFPTFFC.BAD_TYPE));
    refusedAs(withProps(concat(u16be(0), u16be(12), u16be(1), u16be(8), zeros(4))), 'OF_BAD_LENGTH', TFFC(OFPTFFC.BAD_LEN));
    refusedAs(withProps(concat(u16be(0), u16be(6), u16be(1), zeros(2))), 'OF_BAD_LENGTH', TFFC(OFPTFFC.BAD_LEN));
    refusedAs(withProps(concat(u16be(4), u16be(12), u16be(0xffff), u16be(4), zeros(4))), 'OF_BAD_LENGTH', TFFC(OFPTFFC.BAD_LEN));
    refusedAs(withProps(concat(u16be(8), u16be(10), u32be(0x80000004), zeros(6))), 'OF_BAD_LENGTH', TFFC(OFPTFFC.BAD_LEN));
    refusedAs(withProps(concat(u16be(8), u16be(8), u32be(0xffff0208))), 'OF_BAD_LENGTH', TFFC(OFPTFFC.BAD_LEN));
    refusedAs(withProps(concat(u16be(0xfffe), u16be(8), u32be(0x2320))), 'OF_BAD_LENGTH', TFFC(OFPTFFC.BAD_LEN));
    const name = base.slice();
    name.fill(0x61, 8, 40);
    refusedAs(req(name), 'OF_BAD_FIELD', TFFC(OFPTFFC.BAD_ARGUMENT));
  });

  test('HELLO elements: lengths and bitmaps', () => {
    const hello = (els: Uint8Array): Uint8Array => fixLength(concat(hex('0400000000000001'), els));
    assert.ok(parseOf(hello(concat(u16be(1), u16be(8), u32be(0x10)))).ok, 'a bitmap');
    refusedAs(hello(concat(u16be(1), u16be(6), u16be(0x10), zeros(2))), 'OF_BAD_LENGTH', [OFPET.HELLO_FAILED, OFPHFC.INCOMPATIBLE], 1);
    refusedAs(hello(concat(u16be(1), u16be(2), zeros(6))), 'OF_BAD_LENGTH', [OFPET.HELLO_FAILED, OFPHFC.INCOMPATIBLE]);
    refusedAs(hello(concat(u16be(1), u16be(12), u32be(0x10))), 'OF_BAD_LENGTH', [OFPET.HELLO_FAILED, OFPHFC.INCOMPATIBLE]);
    refusedAs(hello(concat(u16be(1), u16be(8), u32be(0x10), u16be(1))), 'OF_BAD_LENGTH', [OFPET.HELLO_FAILED, OFPHFC.INCOMPATIBLE]);
    refusedAs(hello(concat(u16be(9), u16be(5), bytes(1))), 'OF_BAD_LENGTH', [OFPET.HELLO_FAILED, OFPHFC.INCOMPATIBLE]);
  });

  test('values outside their enumerations: flow-mod command, role, reasons', () => {
    const fm = encodeOf({ type: 'flow-mod', xid: 6, mod: FLOW_MOD });
    fm[25] = 5;
    refusedAs(fm, 'OF_BAD_FIELD', [OFPET.FLOW_MOD_FAILED, OFPFMFC.BAD_COMMAND], 6);
    const role = encodeOf({ type: 'role-request', xid: 6, role: 'master', generationId: 1n });
    role[11] = 4;
    refusedAs(role, 'OF_BAD_FIELD', [OFPET.ROLE_REQUEST_FAILED, OFPRRFC.BAD_ROLE], 6);
    const pi = encodeOf(MESSAGES.find((m) => m.type === 'packet-in')!);
    pi[14] = 3;
    refusedAs(pi, 'OF_BAD_FIELD');
    const fr = encodeOf(MESSAGES.find((m) => m.type === 'flow-removed')!);
    fr[18] = 4;
    refusedAs(fr, 'OF_BAD_FIELD');
    const ps = encodeOf({ type: 'port-status', xid: 0, reason: 'add', port: PORT });
    ps[8] = 3;
    refusedAs(ps, 'OF_BAD_FIELD');
  });
});

describe('OpenFlow codec: QUEUE_GET_CONFIG', () => {
  const isQueueMessage = (m: OfMessage): boolean => m.type === 'queue-get-config-request' || m.type === 'queue-get-config-reply';
  const QUEUE_MESSAGES = MESSAGES.filter(isQueueMessage);
  /** A QUEUE_GET_CONFIG_REPLY (xid 5, port 3) around raw queue bytes. */
  const reply = (queues: Uint8Array): Uint8Array => fixLength(concat(hex('0417000000000005 00000003 00000000'), queues));
  /** An ofp_packet_queue (queue 9 on port 3) around raw property bytes; len counts them unless given. */
  const queue = (props: Uint8Array, len = 16 + props.length, pad = zeros(6)): Uint8Array => concat(u32be(9), u32be(3), u16be(len), pad, props);
  /** A rate property (16 bytes on the wire whatever `len` says). */
  const rate = (type: number, value: number, len = 16): Uint8Array => concat(u16be(type), u16be(len), zeros(4), u16be(value), zeros(6));
  const experimenter = (len: number, data: Uint8Array = zeros(0)): Uint8Array =>
    concat(u16be(OFPQT.EXPERIMENTER), u16be(len), zeros(4), u32be(0x2320), zeros(4), data);

  test('the samples cover both messages, several queues, and every property type', () => {
    assert.ok(
      QUEUE_MESSAGES.some((m) => m.type === 'queue-get-config-request'),
      'a request',
    );
    assert.ok(
      QUEUE_MESSAGES.some((m) => m.type === 'queue-get-config-reply' && m.queues.length > 2),
      'a reply with several queues',
    );
    assert.ok(
      QUEUE_MESSAGES.some((m) => m.type === 'queue-get-config-reply' && m.queues.length === 0),
      'a reply without queues',
    );
    const props = new Set(QUEUES.flatMap((q) => q.properties.map((p) => p.type)));
    assert.deepEqual([...props].sort(), ['experimenter', 'max-rate', 'min-rate'], 'every property type');
  });

  test('every property type round-trips alone, and mixed in several queues', () => {
    for (const m of QUEUE_MESSAGES) roundTrip(m);
    for (const q of QUEUES) {
      for (const p of q.properties) roundTrip({ type: 'queue-get-config-reply', xid: 7, portNo: q.portNo, queues: [{ ...q, properties: [p] }] });
    }
    roundTrip({
      type: 'queue-get-config-reply',
      xid: 0xffffffff,
      portNo: 0xffffff00,
      queues: [...QUEUES, ...QUEUES.map((q) => ({ ...q, queueId: (q.queueId + 100) % 2 ** 32, properties: [...q.properties].reverse() }))],
    });
    roundTrip({ type: 'queue-get-config-request', xid: 0, portNo: 0 });
  });

  test('exact bytes: a request, and a reply with a min-rate and an experimenter property', () => {
    assert.equal(toHex(encodeOf({ type: 'queue-get-config-request', xid: 5, portNo: 3 })), '04160010000000050000000300000000');
    const wire = hex(
      '04170048 00000005 00000003 00000000' + // header, port 3, pad
        '00000009 00000003 0038 000000000000' + // queue 9 on port 3, len 56
        '0001 0010 00000000 00c8 000000000000' + // MIN_RATE 20.0 %
        'ffff 0018 00000000 00002320 00000000 aabbccddeeff0011', // EXPERIMENTER 0x2320, 8 bytes of data
    );
    const value: OfMessage = {
      type: 'queue-get-config-reply',
      xid: 5,
      portNo: 3,
      queues: [
        {
          queueId: 9,
          portNo: 3,
          properties: [
            { type: 'min-rate', rate: 200 },
            { type: 'experimenter', experimenter: 0x2320, data: hex('aabbccddeeff0011') },
          ],
        },
      ],
    };
    assert.equal(toHex(encodeOf(value)), toHex(wire), 'encoded');
    assert.deepStrictEqual(parseOf(wire), { ok: true, value }, 'parsed');
  });

  test('request: a body other than port and 4 zeros is refused', () => {
    refusedAs(hex('0416000c0000000500000003'), 'OF_BAD_LENGTH', BRC_LEN, 5);
    refusedAs(hex('041600180000000500000003000000000000000000000000'), 'OF_BAD_LENGTH', BRC_LEN, 5);
    refusedAs(hex('04160010000000050000000300000100'), 'OF_BAD_PADDING', BRC_LEN, 5);
    refusedAs(hex('0416000e000000050000000300000000'), 'OF_BAD_LENGTH', BRC_LEN, 5);
  });

  test('reply: inconsistent queue and property lengths are OFPBRC_BAD_LEN, unknown property types OF_UNSUPPORTED', () => {
    assert.ok(parseOf(reply(queue(rate(OFPQT.MIN_RATE, 1)))).ok, 'the builders make a valid reply');
    // The reply's own fixed part.
    refusedAs(fixLength(hex('0417000000000005 00000003')), 'OF_BAD_LENGTH', BRC_LEN, 5);
    refusedAs(fixLength(hex('0417000000000005 00000003 000000')), 'OF_BAD_LENGTH', BRC_LEN, 5);
    refusedAs(fixLength(hex('0417000000000005 00000003 00000001')), 'OF_BAD_PADDING', BRC_LEN, 5);
    // Queue lengths: below 16, not a multiple of 8, past the message; a partial queue after a whole one.
    for (const len of [0, 8, 15]) refusedAs(reply(queue(zeros(0), len)), 'OF_BAD_LENGTH', BRC_LEN, 5);
    refusedAs(reply(queue(zeros(4), 20)), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(queue(zeros(0), 24)), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(queue(rate(OFPQT.MIN_RATE, 1), 0x1000)), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(concat(queue(zeros(0)), zeros(8))), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(concat(queue(zeros(0)), queue(zeros(0)).subarray(0, 12))), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(queue(zeros(0), 16, bytes(0, 0, 0, 0, 0, 1))), 'OF_BAD_PADDING', BRC_LEN);
    // A queue whose len stops inside its property.
    refusedAs(reply(queue(rate(OFPQT.MIN_RATE, 1), 24)), 'OF_BAD_LENGTH', BRC_LEN);
    // Property lengths: below 8, not a multiple of 8, past the queue, wrong for the type.
    refusedAs(reply(queue(concat(u16be(OFPQT.MIN_RATE), u16be(4), zeros(4)))), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(queue(concat(u16be(OFPQT.MIN_RATE), u16be(0), zeros(4)))), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(queue(rate(OFPQT.MIN_RATE, 1, 12))), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(queue(rate(OFPQT.MAX_RATE, 1, 24))), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(queue(concat(rate(OFPQT.MAX_RATE, 1, 24), zeros(8)))), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(queue(concat(u16be(OFPQT.MAX_RATE), u16be(8), zeros(4)))), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(queue(concat(u16be(OFPQT.MIN_RATE), u16be(8), zeros(4), rate(OFPQT.MAX_RATE, 1)))), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(queue(zeros(4))), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(queue(experimenter(8).subarray(0, 8))), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(queue(experimenter(20, zeros(8)))), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(queue(experimenter(32, zeros(8)))), 'OF_BAD_LENGTH', BRC_LEN);
    refusedAs(reply(queue(experimenter(24, zeros(8)), 32)), 'OF_BAD_LENGTH', BRC_LEN);
    assert.ok(parseOf(reply(queue(experimenter(24, zeros(8))))).ok, 'an experimenter property with 8 bytes of data');
    // Padding inside properties.
    const pad = (b: Uint8Array, i: number): Uint8Array => {
      const c = b.slice();
      c[i] = 1;
      return c;
    };
    refusedAs(reply(queue(pad(rate(OFPQT.MIN_RATE, 1), 7))), 'OF_BAD_PADDING', BRC_LEN);
    refusedAs(reply(queue(pad(rate(OFPQT.MAX_RATE, 1), 15))), 'OF_BAD_PADDING', BRC_LEN);
    refusedAs(reply(queue(pad(experimenter(16), 12))), 'OF_BAD_PADDING', BRC_LEN);
    // Unknown property types are refused, like unknown table-feature properties.
    for (const type of [0, 3, 0xfffe]) {
      refusedAs(reply(queue(rate(type, 1))), 'OF_UNSUPPORTED', [OFPET.BAD_REQUEST, OFPBRC.EPERM], 5);
    }
    // Rates above 1000 (disabled) are kept as they are.
    const r = parseOf(reply(queue(concat(rate(OFPQT.MIN_RATE, 1001), rate(OFPQT.MAX_RATE, 0xffff)))));
    assert.ok(r.ok && r.value.type === 'queue-get-config-reply', 'disabled rates parse');
    assert.deepEqual(
      r.value.queues[0]?.properties,
      [
        { type: 'min-rate', rate: 1001 },
        { type: 'max-rate', rate: 0xffff },
      ],
      'and keep their values',
    );
  });

  test('seeded fuzz: mutated queue messages never throw; what parses re-encodes to the same bytes', { timeout: 60_000 }, () => {
    const sources = QUEUE_MESSAGES.map((m) => encodeOf(m));
    const { accepted, codes } = fuzzParse(sources, { seed: 0x1617, rounds: 20_000, fixShare: 0.7, keepType: true }, (b, r) => {
      if (!r.ok) {
        const answer: [number, number] = [r.error.answer.type, r.error.answer.code];
        assert.ok(
          answer[0] === OFPET.BAD_REQUEST && (answer[1] === OFPBRC.BAD_LEN || answer[1] === OFPBRC.EPERM),
          `answer ${answer.join('/')} for ${r.error.message}`,
        );
        return;
      }
      assert.ok(isQueueMessage(r.value), `still a queue message: ${r.value.type}`);
      assert.equal(toHex(encodeOf(r.value)), toHex(b), `re-encodes to the same bytes: ${JSON.stringify(r.value, big)}`);
    });
    assert.ok(accepted > 1000, `some mutations are still valid (${accepted})`);
    for (const c of ['OF_TRUNCATED', 'OF_BAD_LENGTH', 'OF_BAD_PADDING', 'OF_UNSUPPORTED']) {
      assert.ok((codes.get(c) ?? 0) > 0, `fuzzing reached ${c} (${JSON.stringify([...codes])})`);
    }
  });

  test('encode refusals name the field', () => {
    const q = QUEUES[0]!;
    const withProps = (properties: unknown[]): OfMessage => ({
      type: 'queue-get-config-reply',
      xid: 1,
      portNo: 1,
      queues: [{ ...q, properties: properties as never }],
    });
    assert.throws(() => encodeOf({ type: 'queue-get-config-request', xid: 1, portNo: -1 }), refused('portNo'));
    assert.throws(() => encodeOf({ type: 'queue-get-config-reply', xid: 1, portNo: 2 ** 32, queues: [] }), refused('portNo'));
    assert.throws(() => encodeOf({ type: 'queue-get-config-reply', xid: 1, portNo: 1, queues: {} as never }), refused('queues'));
    assert.throws(() => encodeOf({ type: 'queue-get-config-reply', xid: 1, portNo: 1, queues: [null as never] }), refused('queues[0]'));
    assert.throws(() => encodeOf({ type: 'queue-get-config-reply', xid: 1, portNo: 1, queues: [{ ...q, queueId: 1.5 }] }), refused('queues[0].queueId'));
    assert.throws(
      () => encodeOf({ type: 'queue-get-config-reply', xid: 1, portNo: 1, queues: [{ ...q, properties: undefined as never }] }),
      refused('queues[0].properties'),
    );
    assert.throws(() => encodeOf(withProps([{ type: 'min-rate', rate: 0x10000 }])), refused('queues[0].properties[0].rate'));
    assert.throws(
      () =>
        encodeOf(
          withProps([
            { type: 'max-rate', rate: 1 },
            { type: 'max-rate', rate: -1 },
          ]),
        ),
      refused('queues[0].properties[1].rate'),
    );
    assert.throws(() => encodeOf(withProps([{ type: 'burst', rate: 1 }])), refused('queues[0].properties[0].type'));
    assert.throws(() => encodeOf(withProps([{ type: 'experimenter', experimenter: 1, data: bytes(1, 2, 3) }])), refused('queues[0].properties[0].data'));
    assert.throws(
      () => encodeOf(withProps([{ type: 'experimenter', experimenter: 2 ** 32, data: new Uint8Array(0) }])),
      refused('queues[0].properties[0].experimenter'),
    );
    assert.throws(() => encodeOf({ type: 'unknown', xid: 1, msgType: OFPT.QUEUE_GET_CONFIG_REPLY, body: new Uint8Array(0) }), refused('msgType'));
    const many = Array.from({ length: 1500 }, (_, i) => ({ ...q, queueId: i }));
    assert.throws(() => encodeOf({ type: 'queue-get-config-reply', xid: 1, portNo: 1, queues: many }), refused('length'));
  });
});

describe('OpenFlow codec: encode refusals name the field', () => {
  test('out-of-range and ill-typed fields throw RangeArgumentError', () => {
    const fm = (over: object): OfMessage => ({ type: 'flow-mod', xid: 1, mod: { ...FLOW_MOD, ...over } });
    assert.throws(() => encodeOf({ type: 'barrier-request', xid: -1 }), refused('xid'));
    assert.throws(() => encodeOf({ type: 'barrier-request', xid: 2 ** 32 }), refused('xid'));
    assert.throws(() => encodeOf(fm({ priority: 70000 })), refused('mod.priority'));
    assert.throws(() => encodeOf(fm({ cookie: -1n })), refused('mod.cookie'));
    assert.throws(() => encodeOf(fm({ cookie: 1n << 64n })), refused('mod.cookie'));
    assert.throws(() => encodeOf(fm({ command: 'replace' })), refused('mod.command'));
    assert.throws(() => encodeOf(fm({ match: { tcpPort: 1 } })), refused('mod.match.tcpPort'));
    assert.throws(() => encodeOf(fm({ match: { vlanVid: { value: 0x2000 } } })), refused('mod.match.vlanVid.value'));
    assert.throws(() => encodeOf(fm({ match: { ipDscp: 64 } })), refused('mod.match.ipDscp'));
    assert.throws(() => encodeOf(fm({ match: { ethDst: { value: bytes(1, 2) } } })), refused('mod.match.ethDst.value'));
    assert.throws(() => encodeOf(fm({ match: { ethDst: MAC_A } })), refused('mod.match.ethDst'));
    assert.throws(() => encodeOf(fm({ match: { ipv4Src: { value: 0x0a000001, mask: 0xff000000 } } })), refused('mod.match.ipv4Src.value'));
    assert.throws(() => encodeOf(fm({ match: { ipv6Flabel: { value: 1, mask: 0x100000 } } })), refused('mod.match.ipv6Flabel.mask'));
    assert.throws(
      () => encodeOf(fm({ instructions: [{ type: 'apply-actions', actions: [{ type: 'set-field', field: { ipDscp: 1, ipProto: 6 } }] }] })),
      refused('mod.instructions[0].actions[0].field'),
    );
    assert.throws(
      () => encodeOf(fm({ instructions: [{ type: 'apply-actions', actions: [{ type: 'set-field', field: { ipv4Src: { value: 1, mask: 1 } } }] }] })),
      refused('mod.instructions[0].actions[0].field.ipv4Src.mask'),
    );
    assert.throws(
      () => encodeOf(fm({ instructions: [{ type: 'write-actions', actions: [{ type: 'unsupported', actionType: 17, body: bytes(1, 2) }] }] })),
      refused('mod.instructions[0].actions[0].body'),
    );
    assert.throws(() => encodeOf(fm({ instructions: [{ type: 'goto-table', tableId: 256 }] })), refused('mod.instructions[0].tableId'));
    assert.throws(() => encodeOf({ type: 'port-status', xid: 0, reason: 'add', port: { ...PORT, name: 'a-name-of-16-chr' } }), refused('port.name'));
    assert.throws(() => encodeOf({ type: 'port-status', xid: 0, reason: 'add', port: { ...PORT, hwAddr: bytes(1) } }), refused('port.hwAddr'));
    assert.throws(() => encodeOf({ type: 'port-status', xid: 0, reason: 'up' as never, port: PORT }), refused('reason'));
    assert.throws(() => encodeOf({ type: 'echo-request', xid: 1, data: new Uint8Array(65536 - 8) }), refused('length'));
    assert.doesNotThrow(() => encodeOf({ type: 'echo-request', xid: 1, data: new Uint8Array(65535 - 8) }), 'the largest message');
    assert.throws(() => encodeOf({ type: 'unknown', xid: 1, msgType: OFPT.FLOW_MOD, body: new Uint8Array(0) }), refused('msgType'));
    assert.throws(() => encodeOf({ type: 'error', xid: 1, errType: 0xffff, code: 0, data: new Uint8Array(0) }), refused('errType'));
    assert.throws(() => encodeOf({ type: 'hello', version: 256, xid: 1, elements: [] }), refused('version'));
    assert.throws(
      () => encodeOf({ type: 'multipart-request', xid: 1, flags: 0, body: { type: 'unsupported', mpType: 1, data: new Uint8Array(0) } }),
      refused('body.mpType'),
    );
    assert.throws(
      () =>
        encodeOf({
          type: 'multipart-reply',
          xid: 1,
          flags: 0,
          body: { type: 'desc', desc: { mfrDesc: 'x'.repeat(256), hwDesc: '', swDesc: '', serialNum: '', dpDesc: '' } },
        }),
      refused('body.desc.mfrDesc'),
    );
    assert.throws(
      () =>
        encodeOf({
          type: 'multipart-reply',
          xid: 1,
          flags: 0,
          body: { type: 'table-features', tables: [{ ...sampleTableFeatures(), properties: [{ type: 'instructions', ids: [{ type: 0xffff }] }] }] },
        }),
      refused('body.tables[0].properties[0].ids[0].experimenter'),
    );
    assert.throws(
      () => encodeOf({ type: 'set-async', xid: 1, config: { packetInMask: [1] as never, portStatusMask: [0, 0], flowRemovedMask: [0, 0] } }),
      refused('config.packetInMask'),
    );
  });
});

describe('OfFramer', () => {
  const stream = concat(...MESSAGES.map((m) => encodeOf(m)));

  test('splits a stream cut at random points into the same messages', () => {
    const rng = Rng.fromSeed(6653);
    for (let round = 0; round < 20; round++) {
      const f = new OfFramer();
      const out: Uint8Array[] = [];
      for (let at = 0; at < stream.length;) {
        const n = round === 0 ? 1 : rng.int(1, 3000);
        f.push(stream.subarray(at, at + n));
        at += n;
        for (let r = f.next(); r !== undefined; r = f.next()) {
          assert.ok(r.ok, 'no framing error');
          out.push(r.value);
        }
      }
      assert.equal(f.buffered, 0, 'nothing left over');
      assert.equal(out.length, MESSAGES.length, `round ${round}: every message`);
      out.forEach((b, i) => assert.deepEqual(parseOf(b), { ok: true, value: MESSAGES[i] }, `round ${round}: message ${i}`));
    }
  });

  test('hands out copies, not views of its buffer', () => {
    const f = new OfFramer();
    const chunk = encodeOf({ type: 'echo-request', xid: 1, data: bytes(1, 2, 3) });
    f.push(chunk);
    const r = f.next();
    assert.ok(r?.ok, 'a frame');
    chunk[8] = 9;
    f.push(encodeOf({ type: 'echo-request', xid: 2, data: bytes(7, 7, 7) }));
    assert.deepEqual(r.value, encodeOf({ type: 'echo-request', xid: 1, data: bytes(1, 2, 3) }), 'unchanged by later pushes');
  });

  test('waits for the whole header and the whole message', () => {
    const f = new OfFramer();
    f.push(hex('04020010'));
    assert.equal(f.next(), undefined, 'half a header');
    f.push(hex('00000001aabb'));
    assert.equal(f.next(), undefined, '10 of 16 bytes');
    assert.equal(f.buffered, 10, 'buffered');
    f.push(hex('ccddeeff0011'));
    const r = f.next();
    assert.ok(r?.ok && r.value.length === 16, 'the message');
    assert.equal(f.next(), undefined, 'nothing more');
  });

  test('a length field below 8 is a fatal framing error, with the xid and BAD_LEN, repeated on every later call', () => {
    const f = new OfFramer();
    f.push(concat(encodeOf({ type: 'barrier-request', xid: 1 }), hex('0414000400000042'), encodeOf({ type: 'barrier-request', xid: 3 })));
    const first = f.next();
    assert.ok(first?.ok, 'the good message before it');
    for (let i = 0; i < 3; i++) {
      const r = f.next();
      assert.ok(r !== undefined && !r.ok, 'fatal');
      assert.equal(r.error.code, 'OF_BAD_LENGTH', 'code');
      assert.equal(r.error.xid, 0x42, 'xid of the bad header');
      assert.deepEqual(r.error.answer, { type: OFPET.BAD_REQUEST, code: OFPBRC.BAD_LEN }, 'answer');
    }
    f.push(encodeOf({ type: 'barrier-request', xid: 4 }));
    assert.ok(f.failed !== undefined, 'still failed');
  });
});

describe('OpenFlow codec: seeded fuzz', () => {
  test('mutated samples never throw; whatever parses encodes back to a value that parses the same', { timeout: 120_000 }, () => {
    const total = 40_000;
    const { accepted, codes } = fuzzParse(
      MESSAGES.map((m) => encodeOf(m)),
      { seed: 0x0f13, rounds: total, fixShare: 0.5 },
      (b, r) => {
        if (!r.ok) {
          assert.ok(r.error instanceof OfParseError, 'typed');
          assert.ok(Number.isInteger(r.error.answer.type) && Number.isInteger(r.error.answer.code), 'an answer');
          return;
        }
        const again = encodeOf(r.value);
        assert.equal(again.length, b.length, `same length for ${toHex(b)}`);
        assert.deepStrictEqual(parseOf(again), r, `stable value for ${JSON.stringify(r.value, big)}`);
      },
    );
    assert.ok(accepted > 1000, `some mutations are still valid messages (${accepted} of ${total})`);
    for (const c of ['OF_TRUNCATED', 'OF_BAD_LENGTH', 'OF_BAD_VERSION', 'OF_BAD_PADDING', 'OF_BAD_FIELD', 'OF_UNSUPPORTED']) {
      assert.ok((codes.get(c) ?? 0) > 0, `fuzzing reached ${c} (${JSON.stringify([...codes])})`);
    }
  });

  test('random bytes with a plausible header never throw', { timeout: 60_000 }, () => {
    const rng = Rng.fromSeed(4242);
    for (let i = 0; i < 20_000; i++) {
      const n = rng.int(8, 200);
      const b = new Uint8Array(n);
      for (let k = 0; k < n; k++) b[k] = rng.int(0, 255);
      b[0] = 4;
      b[1] = rng.int(0, 30);
      fixLength(b);
      if (b[1] === OFPT.MULTIPART_REQUEST || b[1] === OFPT.MULTIPART_REPLY) {
        b[8] = 0;
        b[9] = rng.int(0, 14);
      }
      const r = parseOf(b);
      if (r.ok) assert.equal(encodeOf(r.value).length, n, `re-encodes to the same length: ${toHex(b)}`);
    }
  });
});
