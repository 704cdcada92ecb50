import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encodeLink, LINK_VERSION, LinkWriter, MAX_LINK_SEQ, parseDown, parseUp, type LinkMessage } from '../../radio/medium/link.js';

const one = (b: ReturnType<typeof parseUp> | ReturnType<typeof parseDown>): LinkMessage => {
  assert.deepEqual(b.errors, []);
  assert.equal(b.messages.length, 1);
  return b.messages[0]!;
};

/** A frame made by hand: the header, then records of [type, body]. */
const frame = (...records: Array<[number, ArrayLike<number>]>): Buffer => {
  const parts: number[] = [0xcb, LINK_VERSION];
  for (const [type, body] of records)
    parts.push(type, body.length >>> 24, (body.length >>> 16) & 255, (body.length >>> 8) & 255, body.length & 255, ...Array.from(body));
  return Buffer.from(parts);
};
const cat = (...parts: Array<ArrayLike<number>>): Buffer => Buffer.from(parts.flatMap((p) => Array.from(p)));
const json = (o: unknown): [number, Buffer] => [0, Buffer.from(JSON.stringify(o))];

describe('medium link codec', () => {
  test('router-to-medium messages round-trip, one at a time and batched in one frame', () => {
    const payload = Uint8Array.from([1, 2, 3, 250]);
    const msgs: LinkMessage[] = [
      { t: 'join', version: LINK_VERSION, node: 3, name: 'r3', position: { xM: 10.5, yM: -3 } },
      { t: 'station', spec: { id: 'r3/R1', acceptsUnicast: true, acceptsBroadcast: false, channel: 6, pnAffected: true, queueLimit: 1 } },
      { t: 'send', st: 'r3/R2', seq: 41, src: 3, dst: 4, payload },
      { t: 'send', st: 'r3/R2', seq: MAX_LINK_SEQ, src: 0, dst: 0xffff, payload: new Uint8Array(1500).fill(7) },
      { t: 'retune', st: 'r3/R2', channel: null, overheadUs: 0 },
      { t: 'retune', st: 'r3/R2', channel: 11, overheadUs: 1000 },
      { t: 'detach', st: 'r3/R1' },
      { t: 'beat' },
      { t: 'leave' },
    ];
    for (const m of msgs) assert.deepEqual(one(parseUp(encodeLink(m))), m, m.t);
    const all = parseUp(encodeLink(...msgs));
    assert.deepEqual(all.errors, []);
    assert.deepEqual(all.messages, msgs, 'a batch keeps its order');
  });

  test('medium-to-router messages round-trip, times of the epoch included', () => {
    const msgs: LinkMessage[] = [
      { t: 'rx', st: 'r1/R3', src: 0, dst: 0xffff, atUs: 1_700_000_000_123_457, payload: Uint8Array.from([9, 9]) },
      { t: 'sent', st: 'r1/R2', seq: 7, outcome: { ok: false, reason: 'retry-limit', attempts: 7, atUs: 5 } },
      { t: 'sent', st: 'r1/R2', seq: 8, outcome: { ok: false, reason: 'aborted', attempts: 0, atUs: Number.MAX_SAFE_INTEGER } },
      { t: 'sent', st: 'é/R2', seq: 9, outcome: { ok: true, attempts: 1, atUs: 1_700_000_000_000_001 } },
      { t: 'attempt', st: 'r1/R2', seq: 7, attempts: 2 },
      { t: 'refused', reason: 'not joined' },
    ];
    for (const m of msgs) assert.deepEqual(one(parseDown(encodeLink(m))), m, m.t);
    assert.deepEqual(parseDown(encodeLink(...msgs)).messages, msgs);
  });

  test('an attempt directly followed by the outcome of the same frame is left out of the batch; any other stays', () => {
    const attempt = (st: string, seq: number): LinkMessage => ({ t: 'attempt', st, seq, attempts: 1 });
    const sent = (st: string, seq: number): LinkMessage => ({ t: 'sent', st, seq, outcome: { ok: true, attempts: 1, atUs: 5 } });
    const rx: LinkMessage = { t: 'rx', st: 'r1/R1', src: 0, dst: 1, atUs: 5, payload: Uint8Array.of(1) };
    assert.deepEqual(parseDown(encodeLink(attempt('r1/R2', 3), sent('r1/R2', 3))).messages, [sent('r1/R2', 3)]);
    for (const kept of [
      [attempt('r1/R2', 3), sent('r1/R2', 4)],
      [attempt('r1/R2', 3), sent('r2/R2', 3)],
      [attempt('r1/R2', 3), rx, sent('r1/R2', 3)],
      [sent('r1/R2', 3), attempt('r1/R2', 3)],
    ])
      assert.deepEqual(parseDown(encodeLink(...kept)).messages, kept);
    // The batch's length stays right when a record goes.
    const w = new LinkWriter();
    w.add(rx);
    w.add(attempt('r1/R2', 3));
    w.add(sent('r1/R2', 3));
    assert.equal(w.size, 2);
    const buf = w.take()!;
    assert.equal(new DataView(buf.buffer, buf.byteOffset).getUint32(0), buf.byteLength - 4);
    assert.deepEqual(parseDown(buf.subarray(4)), { messages: [rx, sent('r1/R2', 3)], errors: [] });
  });

  test('a received packet is a view into the message it came in, not a copy (a read buffer is never written again)', () => {
    const f = encodeLink({ t: 'rx', st: 'a', src: 1, dst: 2, atUs: 5, payload: Uint8Array.from([1, 2, 3]) });
    const m = one(parseDown(f)) as Extract<LinkMessage, { t: 'rx' }>;
    assert.deepEqual([...m.payload], [1, 2, 3]);
    assert.equal(m.payload.buffer, f.buffer);
    assert.equal(m.payload.byteOffset, f.byteOffset + f.byteLength - 3);
  });

  test('station ids survive the caches: many ids, ids of the same length, non-ASCII ids', () => {
    const ids = [...Array.from({ length: 40 }, (_, i) => `r${i}/R2`), 'r1/R1', 'r1/R3', 'rø/R2', 'r1/R2'];
    const f = encodeLink(...ids.map((st, i) => ({ t: 'attempt' as const, st, seq: i, attempts: 1 })));
    const back = parseDown(f).messages.map((m) => (m as { st: string }).st);
    assert.deepEqual(back, ids);
    assert.deepEqual(
      parseDown(f).messages.map((m) => (m as { st: string }).st),
      ids,
      'and again, from the caches',
    );
  });

  test('a writer refuses what the link cannot carry, at once', () => {
    const w = new LinkWriter();
    assert.throws(() => w.add({ t: 'send', st: 'x'.repeat(81), seq: 1, src: 1, dst: 2, payload: Uint8Array.of(1) }), /station id/);
    assert.throws(() => w.add({ t: 'send', st: 'a', seq: 2 ** 48, src: 1, dst: 2, payload: Uint8Array.of(1) }), /seq/);
    assert.equal(w.size, 0);
    assert.equal(w.take(), undefined, 'nothing staged, nothing to send');
  });

  test('malformed records are typed errors that name what was wrong, never exceptions; the good ones around them are kept', () => {
    const send = (body: number[]): [number, Buffer] => [1, Buffer.from(body)];
    const cases: Array<[ArrayBufferView, string, RegExp]> = [
      [new Uint8Array(0), 'LINK_MALFORMED', /first byte nothing/],
      [Buffer.from('{"t":"beat"}'), 'LINK_MALFORMED', /first byte 0x7b.*version 1/],
      [Buffer.from([0xcb, LINK_VERSION + 1]), 'LINK_MALFORMED', /link version/],
      [frame([0, Buffer.from('{not json')]), 'LINK_MALFORMED', /not JSON/],
      [frame([0, Buffer.from('[1,2]')]), 'LINK_MALFORMED', /not a JSON object/],
      [frame(json({ t: 'explode' })), 'LINK_UNKNOWN_TYPE', /explode/],
      [frame(json({ t: 'send', st: 'a', seq: 1, src: 1, dst: 2 })), 'LINK_UNKNOWN_TYPE', /"send"/],
      [frame([9, Buffer.from([1, 2])]), 'LINK_UNKNOWN_TYPE', /record type 9/],
      [frame(send([1, 0x61, 0, 0, 0, 0, 0, 1, 0, 1, 0, 2])), 'LINK_BAD_FIELD', /empty packet/],
      [frame(send([0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 2, 5])), 'LINK_BAD_FIELD', /station id of 0 bytes/],
      [frame(send([1, 0x61, 0, 0])), 'LINK_MALFORMED', /too short/],
      [cat(frame(json({ t: 'beat' })), Buffer.from([1, 0, 0, 0, 200, 1])), 'LINK_MALFORMED', /200 bytes .* only 1 left/],
      [cat(frame(json({ t: 'beat' })), Buffer.from([1, 0])), 'LINK_MALFORMED', /cut short/],
      [frame(json({ t: 'retune', st: 'a', channel: 99, overheadUs: 0 })), 'LINK_BAD_FIELD', /channel is 99/],
      [frame(json({ t: 'join', version: LINK_VERSION + 1, node: 1, name: 'x', position: { xM: 0, yM: 0 } })), 'LINK_BAD_FIELD', /version/],
      [frame(json({ t: 'join', version: LINK_VERSION, node: 1, name: 'x', position: { xM: 'far', yM: 0 } })), 'LINK_BAD_FIELD', /position/],
      [frame(json({ t: 'station', spec: { id: '', acceptsUnicast: true, acceptsBroadcast: true } })), 'LINK_BAD_FIELD', /spec.id/],
    ];
    for (const [message, code, re] of cases) {
      const r = parseUp(message);
      assert.equal(r.errors.length, 1, `one error for ${Buffer.from(message.buffer, message.byteOffset, message.byteLength).toString('hex')}`);
      assert.equal(r.errors[0]!.code, code, r.errors[0]!.message);
      assert.match(r.errors[0]!.message, re);
    }
    // A bad record between good ones: the good ones are read.
    const mixed = parseUp(frame(json({ t: 'beat' }), [9, Buffer.from([0])], json({ t: 'leave' })));
    assert.deepEqual(
      mixed.messages.map((m) => m.t),
      ['beat', 'leave'],
    );
    assert.equal(mixed.errors.length, 1);
    const sent = Uint8Array.from(encodeLink({ t: 'sent', st: 'a', seq: 1, outcome: { ok: true, attempts: 1, atUs: 5 } }));
    sent[2 + 5 + 2 + 6] = 7;
    assert.match(parseDown(sent).errors[0]?.message ?? '', /result 7/);
    const down = parseDown(encodeLink({ t: 'join', version: LINK_VERSION, node: 1, name: 'x', position: { xM: 0, yM: 0 } }));
    assert.ok(down.messages.length === 0 && down.errors[0]?.code === 'LINK_UNKNOWN_TYPE', 'a router does not take a router-to-medium message');
  });
});
