import assert from 'node:assert/strict';
import { test } from 'node:test';
import { driftSampleClock, turnCarrier } from '../../radio/phy/dsss/channel.js';
import { appendFcs, fcsMatches } from '../../radio/phy/dsss/crc.js';
import { modulateFrame, type SamplesPerChip } from '../../radio/phy/dsss/modem.js';
import type { DsssRate } from '../../radio/phy/dsss/plcp.js';
import { DsssReceiver } from '../../radio/phy/dsss/receiver.js';
import { Rng } from '../../src/core/rng.js';
import { encodeControl, encodeData, parseControl, parseData } from '../../src/wire/codec.js';
import { BROADCAST, type ControlMsg, type DataHeader } from '../../src/wire/mesh.js';
import { R3Auth, keysFromSeed } from '../../src/wire/r3-auth.js';
import { dot11DataFrame } from '../../src/wire/radiotap.js';

/**
 * The mesh's own messages over the DSSS PHY: every R3 control message type,
 * as the codec and R3's authentication make them, and mesh DATA packets up to
 * the 802.11 MSDU's 2304 bytes, each in an 802.11 data frame, through the
 * transmitter, a channel with noise, a carrier offset and a drifting sample
 * clock, and the receiver, back byte for byte and parsed to what was sent.
 */

/** 802.11 data header (24) and LLC/SNAP (8) that dot11DataFrame puts before a packet. */
const MAC_AND_SNAP = 32;
/** The largest 802.11 MSDU (IEEE 802.11-2016 9.2.4.7): LLC/SNAP and the packet. */
const MSDU_MAX = 2304;

const CONTROL: ControlMsg[] = [
  {
    type: 'rreq',
    join: false,
    repair: true,
    gratuitous: false,
    destinationOnly: true,
    unknownSeq: false,
    hopCount: 3,
    rreqId: 0xdeadbeef,
    dst: 12,
    dstSeq: 40,
    orig: 1,
    origSeq: 5,
    ttl: 7,
    firstHop: 4,
    pathCost: 2.5,
  },
  { type: 'rrep', repair: false, ackRequired: true, hopCount: 2, dst: 12, dstSeq: 41, orig: 1, lifetimeMs: 3000, lastHop: 9, pathCost: 1.25 },
  { type: 'rerr', noDelete: true, unreachable: [{ dst: 7, dstSeq: 1000 }] },
  { type: 'rerr', noDelete: false, unreachable: Array.from({ length: 255 }, (_, i) => ({ dst: i + 1, dstSeq: 1000 + i })) },
  {
    type: 'hello',
    src: 3,
    seq: 17,
    r1Channel: 6,
    workload: Array.from({ length: 13 }, (_, i) => ({ channel: i + 1, w: (i * 257) / 0xffff, windows: i * 1000 })),
    neighbours: [
      { addr: 2, r1Channel: 11 },
      { addr: 0xfffe, r1Channel: 255 },
    ],
  },
  { type: 'hello', src: 9, seq: 0, r1Channel: 0, workload: [], neighbours: [] },
  {
    type: 'prefix',
    orig: 4,
    seq: 77,
    hopCount: 1,
    ttl: 30,
    lifetimeS: 600,
    prefixes: [
      { version: 4, bytes: Uint8Array.of(10, 4, 0, 0), length: 16 },
      { version: 6, bytes: Uint8Array.of(0xfd, 0, 0, 4, ...new Array<number>(12).fill(0)), length: 64 },
    ],
  },
];

const DATA: Array<{ header: DataHeader; payloadBytes: number }> = [
  { header: { src: 1, dst: 12, ttl: 16, proto: 'udp', flow: 3, seq: 99 }, payloadBytes: 0 },
  { header: { src: 1, dst: 12, ttl: 16, proto: 'tcp', flow: 4, seq: 1 }, payloadBytes: 1 },
  { header: { src: 5, dst: 2, ttl: 1, proto: 'ip6', flow: 0, seq: 7, label: 0x00100 }, payloadBytes: 500 },
  { header: { src: 5, dst: 2, ttl: 9, proto: 'ip4', flow: 0, seq: 8 }, payloadBytes: 1472 },
  // The largest packet an MSDU carries after LLC/SNAP, unlabelled and labelled.
  { header: { src: 2, dst: 3, ttl: 4, proto: 'raw', flow: 65535, seq: 0xffffffff }, payloadBytes: MSDU_MAX - 8 - 14 },
  { header: { src: 2, dst: 3, ttl: 4, proto: 'udp', flow: 1, seq: 2, label: 0xfffff }, payloadBytes: MSDU_MAX - 8 - 17 },
];

interface Sent {
  frame: Uint8Array;
  /** Checks the packet the received frame carries. */
  check(packet: Uint8Array): void;
}

/** Every message as an 802.11 frame, with how to check what comes back: control messages plain and sealed, then data. */
function messages(rng: Rng): Sent[] {
  const out: Sent[] = [];
  const sender = new R3Auth(keysFromSeed(3), 1000);
  for (const msg of CONTROL) {
    const body = encodeControl(msg);
    out.push({ frame: dot11DataFrame(3, BROADCAST, body), check: (p) => assert.deepEqual(parseControl(p), { ok: true, value: msg }) });
    const sealed = sender.seal(body, 3, BROADCAST);
    out.push({
      frame: dot11DataFrame(3, BROADCAST, sealed),
      check: (p) => {
        // A receiver of its own each time: the same message again would be a replay to one receiver.
        const opened = new R3Auth(keysFromSeed(3), 2000).open(p, 3, BROADCAST);
        assert.ok(opened.ok, `${msg.type}: the trailer verifies`);
        assert.deepEqual(parseControl(opened.value), { ok: true, value: msg });
      },
    });
  }
  for (const { header, payloadBytes } of DATA) {
    const payload = Uint8Array.from({ length: payloadBytes }, () => rng.int(0, 255));
    const packet = encodeData(header, payload);
    const frame = dot11DataFrame(header.src, header.dst, packet);
    assert.ok(frame.length - 24 <= MSDU_MAX);
    out.push({
      frame,
      check: (p) => {
        const r = parseData(p);
        assert.ok(r.ok);
        assert.deepEqual(r.value.header, header);
        assert.deepEqual(r.value.payload, payload);
      },
    });
  }
  return out;
}

test('every R3 message type and DATA up to a 2304-byte MSDU: TX, noise, +-50 kHz, +-20 ppm, RX, byte for byte and parsed back', () => {
  const rng = Rng.fromSeed(41);
  const sent = messages(rng);
  assert.ok(sent.some((s) => s.frame.length - 24 === MSDU_MAX));
  for (const samplesPerChip of [1, 2] as SamplesPerChip[]) {
    for (const [rateMbps, cfoHz, ppm] of [
      [1, 50e3, 20],
      [2, -50e3, -20],
    ] as Array<[DsssRate, number, number]>) {
      const gap = 300 * samplesPerChip;
      const signals = sent.map((s) => modulateFrame(s.frame, { rateMbps, samplesPerChip }));
      const clean = new Float32Array(signals.reduce((n, iq) => n + iq.length + 2 * gap, 2 * gap));
      let at = 2 * gap;
      for (const iq of signals) {
        clean.set(iq, at);
        at += iq.length + 2 * gap;
      }
      const stream = driftSampleClock(clean, ppm, rng.next());
      const noise = new Float32Array(stream.length);
      rng.fillNormal(noise, 0.1);
      for (let i = 0; i < stream.length; i++) stream[i]! += noise[i]!;
      turnCarrier(stream, cfoHz, 11e6 * samplesPerChip);
      const rx = new DsssReceiver({ samplesPerChip });
      // In buffers of 100000 values, as a front-end hands them over.
      const got = [];
      for (let i = 0; i < stream.length; i += 100_000) got.push(...rx.receive(stream.subarray(i, i + 100_000)));
      got.push(...rx.flush());
      const what = `${rateMbps} Mb/s, ${samplesPerChip} samples per chip, ${cfoHz / 1e3} kHz, ${ppm} ppm`;
      assert.equal(got.length, sent.length, what);
      got.forEach((f, k) => {
        assert.ok(f.fcsOk, `${what}: frame ${k}`);
        assert.deepEqual(f.frame, sent[k]!.frame, `${what}: frame ${k}`);
        sent[k]!.check(f.frame.subarray(MAC_AND_SNAP));
      });
      assert.equal(rx.counters.frames, sent.length);
      assert.equal(rx.counters.noSfd + rx.counters.headerCrc + rx.counters.fcs + rx.counters.truncated, 0, what);
    }
  }
});

test('the FCS catches every single bit flipped in an R3 message PSDU', () => {
  const auth = new R3Auth(keysFromSeed(5), 1);
  for (const msg of CONTROL.slice(0, 3)) {
    const psdu = appendFcs(dot11DataFrame(3, BROADCAST, auth.seal(encodeControl(msg), 3, BROADCAST)));
    assert.ok(fcsMatches(psdu));
    for (let bit = 0; bit < 8 * psdu.length; bit++) {
      psdu[bit >>> 3]! ^= 1 << (bit & 7);
      assert.ok(!fcsMatches(psdu), `${msg.type}: bit ${bit}`);
      psdu[bit >>> 3]! ^= 1 << (bit & 7);
    }
  }
});
