import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RangeArgumentError } from '../../src/core/errors.js';
import { seconds } from '../../src/core/time.js';
import { OFPFF, OFPTT_ALL } from '../../src/wire/openflow/actions.js';
import { ofErrorNumbers } from '../../src/openflow/errors.js';
import { FlowTable, type FlowEntry } from '../../src/openflow/flow-table.js';
import { FlowTables } from '../../src/openflow/pipeline.js';
import type { OfMatch, PacketFields } from '../../src/wire/openflow/match.js';
import { apply, assertRefused, ipv6, mod, okValue, output, statsReq, write } from './support.js';

const IPV4 = 0x0800;
const IPV6 = 0x86dd;
const ip = (a: number, b: number, c: number, d: number): number => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

const tcpTo = (port: number): OfMatch => ({ ethType: IPV4, ipProto: 6, tcpDst: port });
const tcpPkt = (port: number, extra: PacketFields = {}): PacketFields => ({
  inPort: 1,
  ethType: IPV4,
  ipProto: 6,
  ipv4Src: ip(10, 0, 0, 1),
  ipv4Dst: ip(10, 0, 0, 2),
  tcpSrc: 40000,
  tcpDst: port,
  ...extra,
});

function add(t: FlowTable, over: Parameters<typeof mod>[0], now = 0): void {
  okValue(t.apply(mod(over), now), `add ${JSON.stringify(over, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
}

const cookieOf = (e: FlowEntry | undefined): bigint | undefined => e?.cookie;

test('the highest priority match wins whatever the order of installation', () => {
  const t = new FlowTable();
  add(t, { priority: 10, match: { ethType: IPV4 }, cookie: 1n });
  add(t, { priority: 30, match: tcpTo(80), cookie: 2n });
  add(t, { priority: 20, match: { ethType: IPV4, ipProto: 6 }, cookie: 3n });
  assert.equal(cookieOf(t.lookup(tcpPkt(80), 0, 100)), 2n, 'TCP to 80 takes the priority-30 entry');
  assert.equal(cookieOf(t.lookup(tcpPkt(22), 0, 100)), 3n, 'other TCP takes the priority-20 entry');
  assert.equal(cookieOf(t.lookup({ ethType: IPV4, ipProto: 17, udpDst: 53 }, 0, 100)), 1n, 'UDP falls to priority 10');
  assert.equal(t.lookup({ ethType: IPV6 }, 0, 100), undefined, 'no match and no table-miss entry: undefined (drop)');
  assert.deepEqual(
    t.list().map((e) => e.priority),
    [30, 20, 10],
    'entries listed in lookup order',
  );
});

test('equal priorities that both match: the entry installed first wins, also after it is replaced by an ADD', () => {
  const t = new FlowTable();
  add(t, { priority: 5, match: { inPort: 1 }, cookie: 1n });
  add(t, { priority: 5, match: { ethType: IPV4 }, cookie: 2n });
  assert.equal(cookieOf(t.lookup(tcpPkt(80), 0, 1)), 1n, 'first installed wins the tie');
  add(t, { priority: 5, match: { inPort: 1 }, cookie: 3n });
  assert.equal(cookieOf(t.lookup(tcpPkt(80), 0, 1)), 3n, 'the replacement keeps the replaced entry place');
  okValue(t.apply(mod({ command: 'delete-strict', priority: 5, match: { inPort: 1 } }), 0), 'delete-strict');
  assert.equal(cookieOf(t.lookup(tcpPkt(80), 0, 1)), 2n, 'with it gone the other wins');
});

test('CHECK_OVERLAP refuses an entry a packet could share with one of the same priority', () => {
  const t = new FlowTable();
  add(t, { priority: 10, match: { ethType: IPV4, ipv4Dst: { value: ip(10, 0, 0, 0), mask: 0xff000000 } } });
  const overlap = (priority: number, match: OfMatch) => t.apply(mod({ priority, match, flags: OFPFF.CHECK_OVERLAP }), 0);
  assertRefused(overlap(10, { ethType: IPV4, ipv4Dst: { value: ip(10, 1, 0, 0), mask: 0xffff0000 } }), 'FLOW_MOD_FAILED', 'OVERLAP', '10.1/16 inside 10/8');
  assertRefused(overlap(10, { inPort: 3 }), 'FLOW_MOD_FAILED', 'OVERLAP', 'a field the other does not constrain overlaps');
  assertRefused(
    overlap(10, { ethType: IPV4, ipv4Dst: { value: ip(10, 0, 0, 0), mask: 0xff000000 } }),
    'FLOW_MOD_FAILED',
    'OVERLAP',
    'an identical entry overlaps',
  );
  const r = overlap(10, { ethType: IPV4, ipv4Dst: { value: ip(10, 1, 0, 0), mask: 0xffff0000 } });
  assert.ok(!r.ok && ofErrorNumbers(r.error).type === 5 && ofErrorNumbers(r.error).code === 3, 'OFPET_FLOW_MOD_FAILED (5) / OFPFMFC_OVERLAP (3) on the wire');
  okValue(overlap(11, { ethType: IPV4, ipv4Dst: { value: ip(10, 1, 0, 0), mask: 0xffff0000 } }), 'another priority does not conflict');
  okValue(overlap(10, { ethType: IPV4, ipv4Dst: { value: ip(11, 0, 0, 0), mask: 0xff000000 } }), '11/8 and 10/8 are disjoint');
  okValue(overlap(10, { ethType: IPV6 }), 'another EtherType is disjoint');
  okValue(t.apply(mod({ priority: 10, match: { inPort: 3 } }), 0), 'without the flag an overlapping entry goes in');
  assert.equal(t.size, 5, 'five accepted, the refused adds changed nothing');
});

test('ADD over an identical entry replaces it: new cookie, instructions, timeouts and duration; counters kept unless RESET_COUNTS; no FLOW_REMOVED', () => {
  const t = new FlowTable();
  add(t, { priority: 7, match: tcpTo(80), cookie: 1n, instructions: [apply(output(1))], flags: OFPFF.SEND_FLOW_REM }, 0);
  t.lookup(tcpPkt(80), seconds(1), 100);
  t.lookup(tcpPkt(80), seconds(2), 50);
  const r = okValue(t.apply(mod({ priority: 7, match: tcpTo(80), cookie: 2n, instructions: [apply(output(2))], hardTimeout: 30 }), seconds(5)), 'replace');
  assert.deepEqual(r, { command: 'add', replaced: true });
  assert.equal(t.size, 1, 'one entry');
  const [s] = okValue(t.flowStats(statsReq(), seconds(6)), 'stats');
  assert.ok(s, 'the entry is listed');
  assert.deepEqual(
    [s.cookie, s.packetCount, s.byteCount, s.durationSec, s.hardTimeout, s.flags, s.instructions],
    [2n, 2, 150, 1, 30, 0, [apply(output(2))]],
    'the new entry with the old counters; its duration starts at the ADD',
  );
  assert.deepEqual(t.tick(seconds(6)), [], 'no FLOW_REMOVED for the replaced entry');
  okValue(t.apply(mod({ priority: 7, match: tcpTo(80), cookie: 3n, flags: OFPFF.RESET_COUNTS }), seconds(7)), 'replace with RESET_COUNTS');
  const [s2] = okValue(t.flowStats(statsReq(), seconds(7)), 'stats');
  assert.deepEqual([s2?.packetCount, s2?.byteCount, s2?.cookie], [0, 0, 3n], 'RESET_COUNTS clears the counters');
  add(t, { priority: 8, match: tcpTo(80) });
  assert.equal(t.size, 2, 'the same match at another priority is another entry');
});

test('MODIFY (loose) changes the instructions of every entry at least as specific as its match, whatever their priority; nothing else', () => {
  const t = new FlowTable();
  add(t, { priority: 1, match: { ethType: IPV4 }, cookie: 1n, idleTimeout: 50, flags: OFPFF.SEND_FLOW_REM });
  add(t, { priority: 2, match: { ethType: IPV4, ipProto: 6 }, cookie: 2n, idleTimeout: 50 });
  add(t, { priority: 3, match: tcpTo(80), cookie: 3n, hardTimeout: 60 });
  add(t, { priority: 4, match: { ethType: IPV6 }, cookie: 4n });
  t.lookup(tcpPkt(80), seconds(1), 40);
  const r = okValue(
    t.apply(
      mod({
        command: 'modify',
        priority: 999,
        match: { ethType: IPV4, ipProto: 6 },
        cookie: 77n,
        instructions: [apply(output(9))],
        idleTimeout: 1,
        hardTimeout: 1,
      }),
      seconds(2),
    ),
    'modify',
  );
  assert.deepEqual(r, { command: 'modify', modified: 2 }, 'the ipProto 6 entry and the TCP/80 entry; not the wider IPv4 one nor IPv6');
  const byCookie = new Map(t.list().map((e) => [e.cookie, e]));
  assert.deepEqual(byCookie.get(3n)?.instructions, [apply(output(9))], 'instructions replaced');
  assert.deepEqual(
    [byCookie.get(3n)?.hardTimeout, byCookie.get(3n)?.idleTimeout, byCookie.get(3n)?.packetCount, byCookie.get(3n)?.installedAt],
    [60, 0, 1, 0],
    'cookie, timeouts, counters and duration stay',
  );
  assert.deepEqual(byCookie.get(1n)?.instructions, [], 'the less specific entry is untouched');
  assert.equal(byCookie.size, 4, 'cookies unchanged (77 was not applied)');
  okValue(t.apply(mod({ command: 'modify', match: tcpTo(80), flags: OFPFF.RESET_COUNTS }), seconds(3)), 'modify with RESET_COUNTS');
  assert.equal(byCookie.get(3n)?.packetCount, 0, 'RESET_COUNTS clears the counters on modify');
  const none = okValue(t.apply(mod({ command: 'modify', match: { inPort: 42 }, instructions: [apply(output(1))] }), seconds(3)), 'modify nothing');
  assert.deepEqual(none, { command: 'modify', modified: 0 }, 'a MODIFY that matches nothing succeeds');
  assert.equal(t.size, 4, 'and does not add an entry (OpenFlow 1.2+)');
  const all = okValue(t.apply(mod({ command: 'modify', match: {}, instructions: [write(output(5))] }), seconds(3)), 'modify all');
  assert.deepEqual(all, { command: 'modify', modified: 4 }, 'an empty match covers every entry');
});

test('MODIFY_STRICT and DELETE_STRICT act on the entry with the same match and priority only', () => {
  const t = new FlowTable();
  add(t, { priority: 1, match: tcpTo(80), cookie: 1n });
  add(t, { priority: 2, match: tcpTo(80), cookie: 2n });
  add(t, { priority: 2, match: { ...tcpTo(80), inPort: 1 }, cookie: 3n });
  const m = okValue(t.apply(mod({ command: 'modify-strict', priority: 2, match: tcpTo(80), instructions: [apply(output(4))] }), 0), 'modify-strict');
  assert.deepEqual(m, { command: 'modify-strict', modified: 1 });
  assert.deepEqual(
    t.list().map((e) => [e.cookie, e.instructions.length]),
    [
      [2n, 1],
      [3n, 0],
      [1n, 0],
    ],
    'only cookie 2 changed',
  );
  const d0 = okValue(t.apply(mod({ command: 'delete-strict', priority: 3, match: tcpTo(80) }), 0), 'delete-strict, no such priority');
  assert.deepEqual(d0, { command: 'delete-strict', deleted: 0, flowRemoved: [] }, 'nothing at priority 3');
  const d = okValue(t.apply(mod({ command: 'delete-strict', priority: 1, match: tcpTo(80) }), 0), 'delete-strict');
  assert.equal(d.command === 'delete-strict' && d.deleted, 1, 'one entry deleted');
  assert.deepEqual(
    t.list().map((e) => e.cookie),
    [2n, 3n],
    'the other two stay',
  );
});

test('DELETE (loose) removes every covered entry of any priority; FLOW_REMOVED (reason delete) for those with SEND_FLOW_REM', () => {
  const t = new FlowTable();
  add(t, { priority: 1, match: { ethType: IPV4 }, cookie: 1n, flags: OFPFF.SEND_FLOW_REM });
  add(t, { priority: 9, match: tcpTo(80), cookie: 2n, flags: OFPFF.SEND_FLOW_REM, idleTimeout: 10, hardTimeout: 20 }, seconds(1));
  add(t, { priority: 5, match: tcpTo(22), cookie: 3n });
  add(t, { priority: 5, match: { ethType: IPV6 }, cookie: 4n, flags: OFPFF.SEND_FLOW_REM });
  t.lookup(tcpPkt(80), seconds(2), 1500);
  const r = okValue(t.apply(mod({ command: 'delete', priority: 12345, match: { ethType: IPV4, ipProto: 6 } }), seconds(3) + 250), 'delete');
  assert.ok(r.command === 'delete', 'a delete result');
  if (r.command !== 'delete') return;
  assert.equal(r.deleted, 2, 'both TCP entries, whatever their priority; not the wider IPv4 entry');
  assert.deepEqual(
    r.flowRemoved,
    [
      {
        tableId: 0,
        cookie: 2n,
        priority: 9,
        reason: 'delete',
        durationSec: 2,
        durationNsec: 250_000,
        idleTimeout: 10,
        hardTimeout: 20,
        packetCount: 1,
        byteCount: 1500,
        match: tcpTo(80),
      },
    ],
    'one FLOW_REMOVED: the TCP/22 entry had no SEND_FLOW_REM',
  );
  assert.deepEqual(
    t.list().map((e) => e.cookie),
    [4n, 1n],
    'the others stay',
  );
  assert.equal(t.nextDeadline(), undefined, 'the deleted entry timers went with it');
  const all = okValue(t.apply(mod({ command: 'delete', tableId: OFPTT_ALL }), seconds(4)), 'delete all');
  assert.ok(all.command === 'delete' && all.deleted === 2 && all.flowRemoved.length === 2, 'an empty match with OFPTT_ALL empties the table');
  assert.equal(t.size, 0, 'empty');
});

test('cookie and cookie_mask restrict MODIFY, DELETE and stats; ADD ignores cookie_mask', () => {
  const t = new FlowTable();
  add(t, { priority: 1, match: { inPort: 1 }, cookie: 0x1_0001n, cookieMask: 0xffffn });
  add(t, { priority: 1, match: { inPort: 2 }, cookie: 0x1_0002n });
  add(t, { priority: 1, match: { inPort: 3 }, cookie: 0x2_0001n });
  const sel = (cookie: bigint, cookieMask: bigint) => okValue(t.flowStats(statsReq({ cookie, cookieMask }), 0), 'stats').map((s) => s.cookie);
  assert.deepEqual(sel(0x1_0000n, 0xf_0000n), [0x1_0001n, 0x1_0002n], 'the upper group 1');
  assert.deepEqual(sel(0x0001n, 0xffffn), [0x1_0001n, 0x2_0001n], 'the lower half 1');
  assert.deepEqual(sel(0xdeadn, 0n), [0x1_0001n, 0x1_0002n, 0x2_0001n], 'mask 0: no restriction');
  const m = okValue(t.apply(mod({ command: 'modify', cookie: 0x2_0000n, cookieMask: 0xf_0000n, instructions: [apply(output(7))] }), 0), 'modify by cookie');
  assert.deepEqual(m, { command: 'modify', modified: 1 }, 'only group 2');
  const d = okValue(t.apply(mod({ command: 'delete', cookie: 0x1_0000n, cookieMask: 0xf_0000n }), 0), 'delete by cookie');
  assert.ok(d.command === 'delete' && d.deleted === 2, 'group 1 deleted');
  assert.deepEqual(
    t.list().map((e) => e.cookie),
    [0x2_0001n],
    'group 2 stays',
  );
  const ds = okValue(
    t.apply(mod({ command: 'delete-strict', priority: 1, match: { inPort: 3 }, cookie: 0x9n, cookieMask: 0xfn }), 0),
    'strict delete, wrong cookie',
  );
  assert.ok(ds.command === 'delete-strict' && ds.deleted === 0, 'the cookie filter applies to strict deletes too');
});

test('out_port and out_group restrict deletes and stats (apply and write actions, not groups followed); modifies ignore them', () => {
  const t = new FlowTable();
  add(t, { priority: 1, match: { inPort: 1 }, cookie: 1n, instructions: [apply(output(5))] });
  add(t, { priority: 1, match: { inPort: 2 }, cookie: 2n, instructions: [write(output(6), output(5))] });
  add(t, { priority: 1, match: { inPort: 3 }, cookie: 3n, instructions: [apply({ type: 'group', groupId: 9 })] });
  add(t, { priority: 1, match: { inPort: 4 }, cookie: 4n, instructions: [apply({ type: 'set-queue', queueId: 5 })] });
  const sel = (over: Parameters<typeof statsReq>[0]) => okValue(t.flowStats(statsReq(over), 0), 'stats').map((s) => s.cookie);
  assert.deepEqual(sel({ outPort: 5 }), [1n, 2n], 'apply-actions and write-actions outputs to 5; a queue id 5 is no port');
  assert.deepEqual(sel({ outPort: 6 }), [2n], 'port 6');
  assert.deepEqual(sel({ outGroup: 9 }), [3n], 'group 9');
  assert.deepEqual(sel({ outPort: 5, outGroup: 9 }), [], 'both filters at once');
  const agg = okValue(t.aggregate(statsReq({ outPort: 5 }), 0), 'aggregate');
  assert.equal(agg.flowCount, 2, 'aggregate over the same selection');
  const m = okValue(t.apply(mod({ command: 'modify', outPort: 77, instructions: [apply(output(8))] }), 0), 'modify');
  assert.deepEqual(m, { command: 'modify', modified: 4 }, 'out_port is ignored by MODIFY');
  add(t, { priority: 1, match: { inPort: 1 }, cookie: 1n, instructions: [apply(output(5))] });
  const d = okValue(t.apply(mod({ command: 'delete', outPort: 5 }), 0), 'delete to port 5');
  assert.ok(d.command === 'delete' && d.deleted === 1, 'only the entry that outputs to 5 now');
  const dg = okValue(t.apply(mod({ command: 'delete-strict', priority: 1, match: { inPort: 2 }, outPort: 5 }), 0), 'strict delete to port 5');
  assert.ok(dg.command === 'delete-strict' && dg.deleted === 0, 'entry 2 outputs to 8 since the modify');
});

test('a match without its prerequisites is refused with OFPBMC_BAD_PREREQ', () => {
  const t = new FlowTable();
  const refused: Array<[OfMatch, string]> = [
    [{ tcpDst: 80 }, 'tcpDst without ipProto'],
    [{ ethType: IPV4, tcpDst: 80 }, 'tcpDst without ipProto, even with ethType'],
    [{ ethType: IPV4, ipProto: 17, tcpDst: 80 }, 'tcpDst with ipProto 17'],
    [{ ethType: IPV4, ipProto: 6, udpSrc: 53 }, 'udpSrc with ipProto 6'],
    [{ ipProto: 6 }, 'ipProto without ethType'],
    [{ ethType: 0x0806, ipProto: 6 }, 'ipProto with ARP'],
    [{ ipDscp: 46 }, 'ipDscp without ethType'],
    [{ ipv4Src: { value: ip(10, 0, 0, 1) } }, 'ipv4Src without ethType'],
    [{ ethType: IPV6, ipv4Dst: { value: ip(10, 0, 0, 1) } }, 'ipv4Dst with ethType IPv6'],
    [{ ipv6Flabel: { value: 0x100 } }, 'ipv6Flabel without ethType'],
    [{ ethType: IPV4, ipv6Flabel: { value: 0x100 } }, 'ipv6Flabel with ethType IPv4'],
    [{ ethType: IPV4, ipv6Src: { value: ipv6(1) } }, 'ipv6Src with ethType IPv4'],
  ];
  for (const [match, what] of refused) {
    assertRefused(t.apply(mod({ match }), 0), 'BAD_MATCH', 'BAD_PREREQ', what);
    assertRefused(t.apply(mod({ command: 'delete', match }), 0), 'BAD_MATCH', 'BAD_PREREQ', `${what} (delete)`);
    assertRefused(t.flowStats(statsReq({ match }), 0), 'BAD_MATCH', 'BAD_PREREQ', `${what} (stats)`);
  }
  for (const match of [
    tcpTo(80),
    { ethType: IPV6, ipProto: 17, udpDst: 53 },
    { ethType: IPV6, ipDscp: 46 },
    { ethType: IPV6, ipv6Flabel: { value: 0x100 } },
  ] as OfMatch[]) {
    okValue(t.apply(mod({ match }), 0), `prerequisites met: ${Object.keys(match).join(',')}`);
  }
  assert.equal(t.size, 4, 'only the valid entries went in');
});

test('values and masks are checked: bits outside the mask, widths, lengths, unknown fields', () => {
  const t = new FlowTable();
  const cases: Array<[OfMatch, string, string]> = [
    [{ ethType: IPV4, ipv4Src: { value: ip(10, 0, 0, 1), mask: 0xffffff00 } }, 'BAD_WILDCARDS', 'ipv4Src value with host bits outside a /24 mask'],
    [{ ethType: IPV6, ipv6Flabel: { value: 0x00101, mask: 0xfff00 } }, 'BAD_WILDCARDS', 'flow label bits outside the mask'],
    [{ ethDst: { value: Uint8Array.of(1, 2, 3, 4, 5, 6), mask: Uint8Array.of(0xff, 0xff, 0xff, 0, 0, 0) } }, 'BAD_WILDCARDS', 'ethDst bytes outside the mask'],
    [{ vlanVid: { value: 0x1005, mask: 0x1000 } }, 'BAD_WILDCARDS', 'vlan vid bits outside the mask'],
    [{ ethType: IPV4, ipDscp: 64 }, 'BAD_VALUE', 'ipDscp of 7 bits'],
    [{ ethType: IPV6, ipv6Flabel: { value: 0x100000 } }, 'BAD_VALUE', 'flow label of 21 bits'],
    [{ vlanVid: { value: 0x2000 } }, 'BAD_VALUE', 'vlan vid of 14 bits'],
    [{ ethType: 0x10000 }, 'BAD_VALUE', 'ethType of 17 bits'],
    [{ inPort: -1 }, 'BAD_VALUE', 'negative port'],
    [{ ethType: IPV4, ipProto: 6, tcpDst: 80.5 }, 'BAD_VALUE', 'non-integer port'],
    [{ ethType: IPV6, ipv6Flabel: { value: 0x100, mask: 0x100000 } }, 'BAD_MASK', 'flow label mask of 21 bits'],
    [{ ethSrc: { value: Uint8Array.of(1, 2, 3, 4, 5) } }, 'BAD_LEN', 'a 5-byte MAC'],
    [{ ethType: IPV6, ipv6Dst: { value: ipv6(1), mask: new Uint8Array(4) } }, 'BAD_LEN', 'a 4-byte IPv6 mask'],
    [{ mplsLabel: 5 } as unknown as OfMatch, 'BAD_FIELD', 'a field cogmesh does not match on'],
  ];
  for (const [match, code, what] of cases) {
    assertRefused(t.apply(mod({ match }), 0), 'BAD_MATCH', code, what);
  }
  assert.equal(t.size, 0, 'nothing went in');
});

test('an all-ones mask is exact and an all-zeros mask omits the field (7.2.3.5), for identity too', () => {
  const t = new FlowTable();
  add(t, { priority: 3, match: { ethType: IPV4, ipv4Dst: { value: ip(10, 0, 0, 1), mask: 0xffffffff } }, cookie: 1n });
  const r = okValue(t.apply(mod({ priority: 3, match: { ethType: IPV4, ipv4Dst: { value: ip(10, 0, 0, 1) } }, cookie: 2n }), 0), 'same match without mask');
  assert.deepEqual(r, { command: 'add', replaced: true }, 'an all-ones mask is the exact match: the ADD replaces');
  assert.deepEqual(t.list()[0]?.match, { ethType: IPV4, ipv4Dst: { value: ip(10, 0, 0, 1) } }, 'stored without the mask');
  okValue(
    t.apply(mod({ priority: 0, match: { ipv4Src: { value: 0, mask: 0 }, ethDst: { value: new Uint8Array(6), mask: new Uint8Array(6) } } }), 0),
    'all-zero masks: no fields, so no prerequisites',
  );
  const miss = t.list().find((e) => e.priority === 0);
  assert.ok(miss?.tableMiss === true, 'priority 0 with only all-zero masks is the table-miss entry');
  assert.deepEqual(miss.match, {}, 'an empty match');
});

test('VLAN_VID: exact OFPVID_NONE matches untagged packets, OFPVID_PRESENT/OFPVID_PRESENT any tagged one', () => {
  const t = new FlowTable();
  add(t, { priority: 3, match: { vlanVid: { value: 0x1000 | 10 } }, cookie: 10n });
  add(t, { priority: 2, match: { vlanVid: { value: 0x1000, mask: 0x1000 } }, cookie: 1n });
  add(t, { priority: 1, match: { vlanVid: { value: 0 } }, cookie: 0n });
  assert.equal(cookieOf(t.lookup({ vlanVid: 0x1000 | 10 }, 0, 1)), 10n, 'vid 10');
  assert.equal(cookieOf(t.lookup({ vlanVid: 0x1000 | 11 }, 0, 1)), 1n, 'another tagged packet');
  assert.equal(cookieOf(t.lookup({ inPort: 1 }, 0, 1)), 0n, 'an untagged packet');
});

test('idle and hard timeouts: removal at the deadline, FLOW_REMOVED only with SEND_FLOW_REM, durations from install time', () => {
  const t = new FlowTable();
  assert.equal(t.nextDeadline(), undefined, 'nothing to time');
  add(t, { priority: 1, match: { inPort: 1 }, cookie: 1n, idleTimeout: 10, flags: OFPFF.SEND_FLOW_REM }, 500);
  add(t, { priority: 1, match: { inPort: 2 }, cookie: 2n, hardTimeout: 5, flags: OFPFF.SEND_FLOW_REM }, 500);
  add(t, { priority: 1, match: { inPort: 3 }, cookie: 3n, idleTimeout: 3 }, 500);
  add(t, { priority: 1, match: { inPort: 4 }, cookie: 4n }, 500);
  assert.equal(t.nextDeadline(), seconds(3) + 500, 'the silent idle entry first');
  assert.deepEqual(t.tick(seconds(3) + 499), [], 'nothing due a microsecond before');
  assert.equal(t.size, 4, 'all still there');
  assert.deepEqual(t.tick(seconds(3) + 500), [], 'the entry without SEND_FLOW_REM goes silently');
  assert.equal(t.size, 3, 'but it is gone');
  assert.equal(t.nextDeadline(), seconds(5) + 500, 'then the hard timeout');
  t.lookup({ inPort: 2 }, seconds(4), 64);
  assert.equal(t.nextDeadline(), seconds(5) + 500, 'a hit does not move a hard timeout');
  const hard = t.tick(seconds(7));
  assert.deepEqual(
    hard,
    [
      {
        tableId: 0,
        cookie: 2n,
        priority: 1,
        reason: 'hard-timeout',
        durationSec: 5,
        durationNsec: 0,
        idleTimeout: 0,
        hardTimeout: 5,
        packetCount: 1,
        byteCount: 64,
        match: { inPort: 2 },
      },
    ],
    'hard timeout; the duration runs to the expiry, not to the late tick',
  );
  assert.equal(t.nextDeadline(), seconds(10) + 500, 'then the idle timeout');
  const idle = t.tick(seconds(10) + 500);
  assert.deepEqual(
    idle.map((r) => [r.cookie, r.reason, r.durationSec, r.durationNsec]),
    [[1n, 'idle-timeout', 10, 0]],
    'idle timeout',
  );
  assert.deepEqual(
    t.list().map((e) => e.cookie),
    [4n],
    'the permanent entry stays',
  );
  assert.equal(t.nextDeadline(), undefined, 'nothing left to time');
});

test('lookups restart the idle timer; an entry with both timeouts goes at the earlier; a tie is a hard timeout', () => {
  const t = new FlowTable();
  add(t, { priority: 1, match: { inPort: 1 }, cookie: 1n, idleTimeout: 10, flags: OFPFF.SEND_FLOW_REM }, 0);
  for (let s = 5; s <= 40; s += 5) {
    assert.deepEqual(t.tick(seconds(s)), [], `still alive at ${s} s`);
    assert.ok(t.lookup({ inPort: 1 }, seconds(s), 100) !== undefined, `hit at ${s} s`);
    assert.equal(t.nextDeadline(), seconds(s + 10), `idle deadline moved to ${s + 10} s`);
  }
  const r = t.tick(seconds(50));
  assert.deepEqual(
    r.map((x) => [x.reason, x.durationSec, x.packetCount, x.byteCount]),
    [['idle-timeout', 50, 8, 800]],
    'expired 10 s after the last hit',
  );

  add(t, { priority: 1, match: { inPort: 2 }, cookie: 2n, idleTimeout: 10, hardTimeout: 15, flags: OFPFF.SEND_FLOW_REM }, seconds(100));
  t.lookup({ inPort: 2 }, seconds(108), 1);
  assert.equal(t.nextDeadline(), seconds(115), 'the hard timeout is earlier than the refreshed idle one');
  assert.deepEqual(
    t.tick(seconds(120)).map((x) => x.reason),
    ['hard-timeout'],
    'hard',
  );
  add(t, { priority: 1, match: { inPort: 3 }, cookie: 3n, idleTimeout: 10, hardTimeout: 10, flags: OFPFF.SEND_FLOW_REM }, seconds(200));
  assert.deepEqual(
    t.tick(seconds(210)).map((x) => x.reason),
    ['hard-timeout'],
    'both due at once: hard',
  );
});

test('an expired entry matches nothing even before tick; its FLOW_REMOVED waits for the next tick, which is due at once', () => {
  const t = new FlowTable();
  add(t, { priority: 9, match: { inPort: 1 }, cookie: 1n, hardTimeout: 2, flags: OFPFF.SEND_FLOW_REM }, 0);
  add(t, { priority: 0, match: {}, cookie: 0n }, 0);
  assert.equal(cookieOf(t.lookup({ inPort: 1 }, seconds(1), 1)), 1n, 'live at 1 s');
  const e = t.lookup({ inPort: 1 }, seconds(3), 1);
  assert.ok(e?.tableMiss === true, 'at 3 s the expired entry is skipped: table miss');
  assert.equal(t.nextDeadline(), seconds(2), 'the record waits, due since the expiry');
  const d = okValue(t.apply(mod({ command: 'delete', match: { inPort: 1 } }), seconds(3)), 'delete');
  assert.ok(d.command === 'delete' && d.deleted === 0, 'a delete no longer finds it');
  const r = t.tick(seconds(3));
  assert.deepEqual(
    r.map((x) => [x.cookie, x.reason, x.durationSec, x.packetCount]),
    [[1n, 'hard-timeout', 2, 1]],
    'reported as a timeout',
  );
  assert.equal(t.nextDeadline(), undefined, 'nothing more');
});

test('counters: packets and bytes per entry, lookups and matches per table, flow and aggregate stats', () => {
  const t = new FlowTable();
  add(t, { priority: 5, match: tcpTo(80), cookie: 1n }, 0);
  add(t, { priority: 5, match: tcpTo(443), cookie: 2n }, seconds(1));
  for (let i = 0; i < 3; i++) t.lookup(tcpPkt(80), seconds(2), 1000);
  t.lookup(tcpPkt(443), seconds(2), 40);
  t.lookup(tcpPkt(22), seconds(2), 40);
  t.lookup({ ethType: IPV6 }, seconds(2), 40);
  assert.deepEqual(t.tableStats(), { tableId: 0, activeCount: 2, lookupCount: 6, matchedCount: 4 }, 'table stats');
  const stats = okValue(t.flowStats(statsReq(), seconds(3) + 1), 'flow stats');
  assert.deepEqual(
    stats.map((s) => [s.cookie, s.packetCount, s.byteCount, s.durationSec, s.durationNsec]),
    [
      [1n, 3, 3000, 3, 1000],
      [2n, 1, 40, 2, 1000],
    ],
    'per-entry counters and durations (nanoseconds from microseconds)',
  );
  const only443 = okValue(t.flowStats(statsReq({ match: { ethType: IPV4, ipProto: 6, tcpDst: 443 } }), 0), 'stats by match');
  assert.deepEqual(
    only443.map((s) => s.cookie),
    [2n],
    'loose match in stats',
  );
  assert.deepEqual(
    okValue(t.aggregate(statsReq({ match: { ethType: IPV4 } }), 0), 'aggregate'),
    { packetCount: 4, byteCount: 3040, flowCount: 2 },
    'aggregate',
  );
  assertRefused(t.flowStats(statsReq({ tableId: 3 }), 0), 'BAD_REQUEST', 'BAD_TABLE_ID', 'stats for a table that does not exist');
  okValue(t.flowStats(statsReq({ tableId: OFPTT_ALL }), 0), 'stats for all tables');
});

test('table-miss: without it unmatched packets find nothing; with it they hit it, counted like any entry', () => {
  const t = new FlowTable();
  add(t, { priority: 10, match: tcpTo(80), cookie: 1n });
  assert.equal(t.lookup(tcpPkt(22), 0, 60), undefined, 'no table-miss entry: undefined (dropped)');
  add(t, { priority: 0, match: {}, cookie: 99n, instructions: [apply({ type: 'output', port: 0xfffffffd, maxLen: 0xffff })] });
  const miss = t.lookup(tcpPkt(22), 0, 60);
  assert.ok(miss?.tableMiss === true && miss.cookie === 99n, 'the table-miss entry');
  const hit = t.lookup(tcpPkt(80), 0, 60);
  assert.ok(hit?.tableMiss === false && hit.cookie === 1n, 'a real entry still wins');
  assert.deepEqual([t.tableStats().lookupCount, t.tableStats().matchedCount], [3, 2], 'a table-miss hit counts as matched');
  add(t, { priority: 0, match: { inPort: 1 }, cookie: 5n });
  assert.ok(t.list().find((e) => e.cookie === 5n)?.tableMiss === false, 'priority 0 with a match is not the table-miss entry');
  const d = okValue(t.apply(mod({ command: 'delete-strict', priority: 0, match: {} }), 0), 'delete the table-miss entry');
  assert.ok(d.command === 'delete-strict' && d.deleted === 1, 'removed like any entry');
  assert.equal(t.lookup({ inPort: 2 }, 0, 60), undefined, 'misses drop again');
});

test('capacity: a new entry beyond it is OFPFMFC_TABLE_FULL; replacing one is not; a delete makes room', () => {
  const t = new FlowTable({ capacity: 3 });
  for (let i = 1; i <= 3; i++) add(t, { match: { inPort: i } });
  assertRefused(t.apply(mod({ match: { inPort: 4 } }), 0), 'FLOW_MOD_FAILED', 'TABLE_FULL', 'fourth entry');
  okValue(t.apply(mod({ match: { inPort: 2 }, cookie: 7n }), 0), 'replacing an entry in a full table');
  okValue(t.apply(mod({ command: 'delete-strict', match: { inPort: 1 } }), 0), 'delete');
  okValue(t.apply(mod({ match: { inPort: 4 } }), 0), 'room again');
  assert.equal(t.size, 3, 'three entries');
});

test('refused FLOW_MODs: bad table, OFPTT_ALL for an add, unknown command and flags, GOTO_TABLE backwards; out-of-width header fields throw', () => {
  const t = new FlowTable();
  assertRefused(t.apply(mod({ tableId: 1 }), 0), 'FLOW_MOD_FAILED', 'BAD_TABLE_ID', 'table 1 of a one-table pipeline');
  assertRefused(t.apply(mod({ tableId: OFPTT_ALL }), 0), 'FLOW_MOD_FAILED', 'BAD_TABLE_ID', 'OFPTT_ALL for an add');
  assertRefused(t.apply(mod({ command: 'modify', tableId: OFPTT_ALL }), 0), 'FLOW_MOD_FAILED', 'BAD_TABLE_ID', 'OFPTT_ALL for a modify');
  assertRefused(t.apply(mod({ command: 'replace' as never }), 0), 'FLOW_MOD_FAILED', 'BAD_COMMAND', 'an unknown command');
  assertRefused(t.apply(mod({ flags: 1 << 5 }), 0), 'FLOW_MOD_FAILED', 'BAD_FLAGS', 'a flag 1.3 does not define');
  assertRefused(t.apply(mod({ instructions: [{ type: 'goto-table', tableId: 1 }] }), 0), 'BAD_INSTRUCTION', 'BAD_TABLE_ID', 'goto-table past the last table');
  assert.throws(
    () => t.apply(mod({ priority: 70000 }), 0),
    (e: unknown) => e instanceof RangeArgumentError && e.code === 'CORE_OUT_OF_RANGE',
    'a priority beyond 16 bits is a caller bug',
  );
  assert.throws(() => t.apply(mod({ cookie: -1n }), 0), RangeArgumentError, 'a negative cookie');
  assert.throws(
    () => t.apply(mod(), -1),
    (e: unknown) => e instanceof Error && (e as { code?: string }).code === 'CORE_INVALID_TIME',
    'a negative time',
  );
  assert.equal(t.size, 0, 'nothing went in');
});

test('FlowTables: n tables with ids 0..n-1, GOTO_TABLE forward only, delete and stats across OFPTT_ALL', () => {
  const p = new FlowTables(3, { capacity: 10 });
  assert.equal(p.count, 3, 'three tables');
  okValue(
    p.apply(mod({ tableId: 0, priority: 0, instructions: [{ type: 'goto-table', tableId: 2 }], flags: OFPFF.SEND_FLOW_REM, cookie: 1n }), 0),
    'goto forward',
  );
  assertRefused(p.apply(mod({ tableId: 2, instructions: [{ type: 'goto-table', tableId: 1 }] }), 0), 'BAD_INSTRUCTION', 'BAD_TABLE_ID', 'goto backwards');
  assertRefused(p.apply(mod({ tableId: 1, instructions: [{ type: 'goto-table', tableId: 1 }] }), 0), 'BAD_INSTRUCTION', 'BAD_TABLE_ID', 'goto itself');
  assertRefused(p.apply(mod({ tableId: 3 }), 0), 'FLOW_MOD_FAILED', 'BAD_TABLE_ID', 'table 3 of 3');
  okValue(p.apply(mod({ tableId: 1, match: { inPort: 1 }, hardTimeout: 4, cookie: 2n, flags: OFPFF.SEND_FLOW_REM }), 0), 'table 1');
  okValue(p.apply(mod({ tableId: 2, match: { inPort: 1 }, cookie: 3n, flags: OFPFF.SEND_FLOW_REM, instructions: [apply(output(3))] }), 0), 'table 2');
  assert.equal(p.lookup(0, { inPort: 1 }, 0, 10)?.cookie, 1n, 'table 0');
  assert.equal(p.lookup(2, { inPort: 1 }, 0, 10)?.cookie, 3n, 'table 2');
  assert.equal(p.lookup(7, { inPort: 1 }, 0, 10), undefined, 'no table 7');
  assert.deepEqual(
    okValue(p.flowStats(statsReq({ tableId: OFPTT_ALL }), 0), 'all stats').map((s) => [s.tableId, s.cookie]),
    [
      [0, 1n],
      [1, 2n],
      [2, 3n],
    ],
    'stats from every table',
  );
  assert.deepEqual(
    okValue(p.aggregate(statsReq({ tableId: OFPTT_ALL, outPort: 3 }), 0), 'aggregate'),
    { packetCount: 1, byteCount: 10, flowCount: 1 },
    'aggregate with out_port',
  );
  assertRefused(p.flowStats(statsReq({ tableId: 5 }), 0), 'BAD_REQUEST', 'BAD_TABLE_ID', 'stats of table 5');
  assert.equal(p.nextDeadline(), seconds(4), 'the earliest deadline of any table');
  assert.deepEqual(
    p.tick(seconds(4)).map((r) => [r.tableId, r.cookie, r.reason]),
    [[1, 2n, 'hard-timeout']],
    'table 1 entry expired',
  );
  const d = okValue(p.apply(mod({ command: 'delete', tableId: OFPTT_ALL, match: { inPort: 1 } }), seconds(5)), 'delete across tables');
  assert.ok(d.command === 'delete', 'a delete');
  assert.deepEqual(
    d.command === 'delete' ? d.flowRemoved.map((r) => [r.tableId, r.cookie]) : [],
    [[2, 3n]],
    'loose delete in every table: only table 2 has an entry covered by inPort 1',
  );
  assert.deepEqual(
    p.tableStats().map((s) => [s.tableId, s.activeCount, s.lookupCount]),
    [
      [0, 1, 1],
      [1, 0, 0],
      [2, 0, 1],
    ],
    'table stats of every table',
  );
});

test('seeds/002 QoS tags in the IPv6 flow label: 0x00100 to the high queue, 0x00200 to the low one, the rest best effort', () => {
  const t = new FlowTable();
  const tag = 0xfff00; // the tag bits; the low byte of the label is left to the flow
  const queue = (q: number) => [apply({ type: 'set-queue', queueId: q }, output(2))];
  add(t, { priority: 200, match: { ethType: IPV6, ipv6Flabel: { value: 0x00100, mask: tag } }, cookie: 1n, instructions: queue(1) });
  add(t, { priority: 100, match: { ethType: IPV6, ipv6Flabel: { value: 0x00200, mask: tag } }, cookie: 2n, instructions: queue(2) });
  add(t, { priority: 0, match: {}, cookie: 0n, instructions: queue(0) });
  const pkt = (flabel: number): PacketFields => ({ ethType: IPV6, ipProto: 17, ipv6Src: ipv6(1), ipv6Dst: ipv6(2), ipv6Flabel: flabel, udpDst: 5683 });
  assert.equal(cookieOf(t.lookup(pkt(0x00100), 0, 80)), 1n, 'tag 0x00100: high priority');
  assert.equal(cookieOf(t.lookup(pkt(0x001a7), 0, 80)), 1n, 'tag 0x00100 with flow bits below the mask: still high');
  assert.equal(cookieOf(t.lookup(pkt(0x00200), 0, 80)), 2n, 'tag 0x00200: low priority');
  assert.equal(cookieOf(t.lookup(pkt(0x00000), 0, 80)), 0n, 'tag 0: best effort');
  assert.equal(cookieOf(t.lookup(pkt(0x00300), 0, 80)), 0n, 'tag 0x00300 is neither');
  assert.equal(cookieOf(t.lookup(pkt(0x10100), 0, 80)), 0n, 'bits above the tag count as the mask says');
  assert.equal(cookieOf(t.lookup({ ethType: IPV4, ipProto: 17 }, 0, 80)), 0n, 'IPv4 has no flow label: best effort');
  const high = okValue(t.flowStats(statsReq({ match: { ethType: IPV6, ipv6Flabel: { value: 0x00100, mask: 0x00f00 } } }), 0), 'stats by tag nibble');
  assert.deepEqual(
    high.map((s) => [s.cookie, s.packetCount]),
    [[1n, 2]],
    'a looser flow-label mask covers the high entry only',
  );
  assertRefused(
    t.apply(mod({ match: { ethType: IPV6, ipv6Flabel: { value: 0x00101, mask: tag } } }), 0),
    'BAD_MATCH',
    'BAD_WILDCARDS',
    'a tag with bits outside its mask',
  );
});
