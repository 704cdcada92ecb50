import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encodeLink, LINK_VERSION, parseDown, parseUp, type LinkMessage } from '../../radio/medium/link.js';

const roundUp = (m: LinkMessage) => parseUp(encodeLink(m));
const roundDown = (m: LinkMessage) => parseDown(encodeLink(m));

describe('medium link codec', () => {
  test('router-to-medium messages round-trip, packets in their own frame', () => {
    const payload = Uint8Array.from([1, 2, 3, 250]);
    const msgs: LinkMessage[] = [
      { t: 'join', version: LINK_VERSION, node: 3, name: 'r3', position: { xM: 10.5, yM: -3 } },
      { t: 'station', spec: { id: 'r3/R1', acceptsUnicast: true, acceptsBroadcast: false, channel: 6, pnAffected: true, queueLimit: 1 } },
      { t: 'send', st: 'r3/R2', seq: 41, src: 3, dst: 4, payload },
      { t: 'retune', st: 'r3/R2', channel: null, overheadUs: 0 },
      { t: 'retune', st: 'r3/R2', channel: 11, overheadUs: 1000 },
      { t: 'detach', st: 'r3/R1' },
      { t: 'beat' },
      { t: 'leave' },
    ];
    for (const m of msgs) {
      const r = roundUp(m);
      assert.ok(r.ok, `${m.t}: ${r.ok ? '' : r.error.message}`);
      assert.deepEqual(r.value, m);
    }
    assert.equal(encodeLink(msgs[2]!).length, 2, 'a send carries its packet as a second frame');
  });

  test('medium-to-router messages round-trip', () => {
    const msgs: LinkMessage[] = [
      { t: 'rx', st: 'r1/R3', src: 0, dst: 0xffff, atUs: 1_700_000_000_000_000, payload: Uint8Array.from([9, 9]) },
      { t: 'sent', st: 'r1/R2', seq: 7, outcome: { ok: false, reason: 'retry-limit', attempts: 7, atUs: 5 } },
      { t: 'attempt', st: 'r1/R2', seq: 7, attempts: 2 },
      { t: 'refused', reason: 'not joined' },
    ];
    for (const m of msgs) {
      const r = roundDown(m);
      assert.ok(r.ok, `${m.t}: ${r.ok ? '' : r.error.message}`);
      assert.deepEqual(r.value, m);
    }
  });

  test('malformed messages are typed errors that name what was wrong, never exceptions', () => {
    const cases: Array<[Buffer[], string, RegExp]> = [
      [[], 'LINK_MALFORMED', /1 or 2 frames/],
      [[Buffer.from('{not json')], 'LINK_MALFORMED', /not JSON/],
      [[Buffer.from('[1,2]')], 'LINK_MALFORMED', /not a JSON object/],
      [[Buffer.from('{"t":"explode"}')], 'LINK_UNKNOWN_TYPE', /explode/],
      [[Buffer.from('{"t":"send","st":"a","seq":1,"src":1,"dst":2}')], 'LINK_MALFORMED', /two frames/],
      [[Buffer.from('{"t":"beat"}'), Buffer.from([1])], 'LINK_MALFORMED', /one frame/],
      [[Buffer.from('{"t":"send","st":"a","seq":1,"src":1,"dst":70000}'), Buffer.from([1])], 'LINK_BAD_FIELD', /dst is 70000/],
      [[Buffer.from('{"t":"send","st":"a","seq":1,"src":1,"dst":2}'), Buffer.alloc(0)], 'LINK_BAD_FIELD', /empty packet/],
      [[Buffer.from('{"t":"retune","st":"a","channel":99,"overheadUs":0}')], 'LINK_BAD_FIELD', /channel is 99/],
      [[Buffer.from(`{"t":"join","version":${LINK_VERSION + 1},"node":1,"name":"x","position":{"xM":0,"yM":0}}`)], 'LINK_BAD_FIELD', /version/],
      [[Buffer.from('{"t":"join","version":1,"node":1,"name":"x","position":{"xM":"far","yM":0}}')], 'LINK_BAD_FIELD', /position/],
      [[Buffer.from('{"t":"station","spec":{"id":"","acceptsUnicast":true,"acceptsBroadcast":true}}')], 'LINK_BAD_FIELD', /spec.id/],
    ];
    for (const [frames, code, re] of cases) {
      const r = parseUp(frames);
      assert.ok(!r.ok, `accepted ${frames.map((f) => f.toString()).join(' | ')}`);
      assert.equal(r.error.code, code, r.error.message);
      assert.match(r.error.message, re);
    }
    const down = parseDown([Buffer.from('{"t":"join"}')]);
    assert.ok(!down.ok && down.error.code === 'LINK_UNKNOWN_TYPE', 'a router does not take a router-to-medium message');
  });
});
