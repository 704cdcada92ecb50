import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RangeArgumentError } from '../../src/core/errors.js';
import { encodeScanReport, parseScanReport, SCAN_REPORT_MAC_BYTES, SCAN_REPORT_MAX_APS, SCAN_REPORT_MAX_BYTES } from '../../src/wire/scan-report.js';

const KEY = new Uint8Array(32).map((_, i) => i * 7 + 1);
const report = {
  client: 'laptop-3',
  boot: 1_796_000_000,
  seq: 42,
  aps: new Map([
    ['r1', -47.25],
    ['r2', -81],
    ['02:00:00:00:01:00', -90.5],
  ]),
};

describe('scan reports on the wire (docs/gateway.md)', () => {
  test('a report comes back as sent, plain and sealed', () => {
    for (const key of [undefined, KEY]) {
      const b = encodeScanReport(report, key);
      const r = parseScanReport(b, key);
      assert.ok(r.ok, r.ok ? '' : r.error.message);
      assert.equal(r.value.client, report.client);
      assert.equal(r.value.boot, report.boot);
      assert.equal(r.value.seq, report.seq);
      assert.deepEqual([...r.value.aps], [...report.aps]);
      assert.equal(r.value.authenticated, key !== undefined);
    }
  });

  test('the largest report fits the size a receiver reads', () => {
    const aps = new Map(Array.from({ length: SCAN_REPORT_MAX_APS }, (_, i) => [`${'a'.repeat(29)}${String(i).padStart(3, '0')}`, -100 + i / 100]));
    const b = encodeScanReport({ client: 'c'.repeat(64), boot: 0xffffffff, seq: 0xffffffff, aps }, KEY);
    assert.equal(b.length, SCAN_REPORT_MAX_BYTES);
    assert.ok(parseScanReport(b, KEY).ok);
  });

  test('a report that cannot be sent is refused, naming the field', () => {
    assert.throws(
      () => encodeScanReport({ ...report, client: '' }),
      (e) => e instanceof RangeArgumentError && /client/.test(e.message),
    );
    assert.throws(() => encodeScanReport({ ...report, seq: -1 }), /seq/);
    assert.throws(() => encodeScanReport({ ...report, aps: new Map([['r1', -200]]) }), /AP r1/);
    assert.throws(() => encodeScanReport({ ...report, aps: new Map([['x'.repeat(33), -50]]) }), /scan report AP/);
  });

  test('with a key, a report without a MAC or with any bit changed is refused as WIRE_BAD_CHECKSUM', () => {
    const plain = encodeScanReport(report);
    const r = parseScanReport(plain, KEY);
    assert.ok(!r.ok && r.error.code === 'WIRE_BAD_CHECKSUM' && /no MAC/.test(r.error.message));
    const sealed = encodeScanReport(report, KEY);
    for (let bit = 0; bit < sealed.length * 8; bit++) {
      const b = sealed.slice();
      b[bit >> 3]! ^= 1 << (bit & 7);
      const p = parseScanReport(b, KEY);
      assert.ok(!p.ok, `bit ${bit} flipped and taken`);
    }
    const other = parseScanReport(sealed, new Uint8Array(32));
    assert.ok(!other.ok && other.error.code === 'WIRE_BAD_CHECKSUM');
  });

  test('malformed bytes are named, never thrown, whatever their length', () => {
    const b = encodeScanReport(report);
    const causes = new Set<string>();
    for (let n = 0; n < b.length; n++) {
      const r = parseScanReport(b.subarray(0, n));
      assert.ok(!r.ok, `${n} bytes taken`);
      causes.add(r.error.code);
    }
    assert.ok(causes.has('WIRE_TRUNCATED'));
    const cases: Array<[(x: Uint8Array) => void, RegExp]> = [
      [(x) => (x[0] = 0x58), /magic/],
      [(x) => (x[4] = 2), /version 2/],
      [(x) => (x[5] = 0x80), /flags/],
      [(x) => (x[14] = 0), /client name of 0 bytes/],
      [(x) => (x[15] = 0xff), /not UTF-8/],
    ];
    for (const [change, why] of cases) {
      const x = b.slice();
      change(x);
      const r = parseScanReport(x);
      assert.ok(!r.ok && why.test(r.error.message), r.ok ? 'taken' : r.error.message);
    }
    const longer = new Uint8Array(b.length + 1);
    longer.set(b);
    const t = parseScanReport(longer);
    assert.ok(!t.ok && t.error.code === 'WIRE_TRAILING_BYTES');
    const twice = encodeScanReport({
      ...report,
      aps: new Map([
        ['r1', -50],
        ['r2', -60],
      ]),
    });
    twice[31] = 0x31; // the second AP's name, r2, made r1
    const d = parseScanReport(twice);
    assert.ok(!d.ok && /listed twice/.test(d.error.message), d.ok ? 'taken' : d.error.message);
    assert.equal(SCAN_REPORT_MAC_BYTES, 16);
  });
});
