import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encodeOf, parseOf } from '../../../src/wire/openflow/codec.js';
import { OFPBMC, OFPBRC, OFPET, OFPMPF_REPLY_MORE } from '../../../src/wire/openflow/constants.js';
import { errorReply, errorReplyFor, splitMultipartReply } from '../../../src/wire/openflow/replies.js';
import type { FlowStats, MultipartReplyBody } from '../../../src/wire/openflow/types.js';
import { refused } from '../../support/bytes.js';
import { applyActions, flowModWith, oxm, rawMatch, u16be } from './helpers.js';
import { FLOW_MOD, PORT, REPLY_BODIES } from './samples.js';

describe('OpenFlow replies', () => {
  test('errorReplyFor: the answer, the xid, the offending message whole (at least the 64 bytes the spec asks for)', () => {
    const out = Uint8Array.of(0, 0, 0, 16, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0);
    const bad = flowModWith(rawMatch([oxm(14, u16be(80))]), applyActions(out));
    const r = parseOf(bad);
    assert.ok(!r.ok, 'refused');
    const m = errorReplyFor(r.error, bad);
    assert.deepEqual(m, { type: 'error', xid: 0x77, errType: OFPET.BAD_MATCH, code: OFPBMC.BAD_PREREQ, data: bad }, 'the ERROR');
    assert.equal(bad.length > 64, true, 'the offending message was longer than 64 bytes');
    const short = errorReply(Uint8Array.of(4, 0x63, 0, 8, 0, 0, 0, 1), { type: OFPET.BAD_REQUEST, code: OFPBRC.BAD_TYPE }, 1);
    assert.equal(short.type === 'error' && short.data.length, 8, 'a short message is carried whole');
    assert.equal(errorReply(Uint8Array.of(4), { type: 1, code: 6 }, undefined).xid, 0, 'xid 0 when unreadable');
    assert.ok(parseOf(encodeOf(m)).ok, 'the ERROR encodes and parses');
  });

  test('splitMultipartReply: one message when it fits, otherwise packed messages with REPLY_MORE on all but the last', () => {
    for (const body of REPLY_BODIES) {
      const ms = splitMultipartReply(9, body);
      assert.equal(ms.length, 1, `${body.type}: fits in one`);
      assert.deepEqual(ms[0], { type: 'multipart-reply', xid: 9, flags: 0, body }, `${body.type}: unchanged`);
    }
    const stat: FlowStats = {
      tableId: 0,
      durationSec: 1,
      durationNsec: 0,
      priority: 1,
      idleTimeout: 0,
      hardTimeout: 0,
      flags: 0,
      cookie: 0n,
      packetCount: 0n,
      byteCount: 0n,
      match: FLOW_MOD.match,
      instructions: FLOW_MOD.instructions,
    };
    const stats = Array.from({ length: 1500 }, (_, i) => ({ ...stat, priority: i }));
    const ms = splitMultipartReply(10, { type: 'flow', stats });
    assert.ok(ms.length > 1, `split into ${ms.length}`);
    const back: FlowStats[] = [];
    ms.forEach((m, i) => {
      const b = encodeOf(m);
      assert.ok(b.length <= 65535, `message ${i}: ${b.length} bytes`);
      assert.ok(m.type === 'multipart-reply' && m.xid === 10, 'same xid');
      assert.equal(m.flags, i < ms.length - 1 ? OFPMPF_REPLY_MORE : 0, `message ${i}: flags`);
      const p = parseOf(b);
      assert.ok(p.ok && p.value.type === 'multipart-reply' && p.value.body.type === 'flow', 'parses');
      back.push(...p.value.body.stats);
      if (i < ms.length - 1) assert.ok(b.length > 65535 - 400, `message ${i} is packed full (${b.length})`);
    });
    assert.deepStrictEqual(back, stats, 'every entry, in order');
    const ports = splitMultipartReply(11, { type: 'port-desc', ports: Array.from({ length: 10 }, (_, i) => ({ ...PORT, portNo: i + 1 })) }, 16 + 64 * 3);
    assert.deepEqual(
      ports.map((m) => (m.type === 'multipart-reply' && m.body.type === 'port-desc' ? m.body.ports.length : -1)),
      [3, 3, 3, 1],
      'three ports per message of 208 bytes',
    );
    const empty = splitMultipartReply(12, { type: 'table', stats: [] });
    assert.equal(empty.length, 1, 'an empty list is one message');
    assert.throws(() => splitMultipartReply(13, { type: 'port-desc', ports: [PORT] }, 70), refused('body.ports[0]'));
    assert.throws(() => splitMultipartReply(13, REPLY_BODIES[0] as MultipartReplyBody, 100), refused('body'));
    assert.throws(() => splitMultipartReply(13, { type: 'table', stats: [] }, 70000), refused('maxBytes'));
  });
});
