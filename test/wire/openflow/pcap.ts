import { encodeTcp, internetChecksum, ipv4, TCP_ACK, TCP_PSH, TCP_SYN, type IpPair } from '../../../src/wire/tcp.js';
import { concat, u16be } from './helpers.js';

/** A classic pcap of one TCP connection to port 6653 carrying OpenFlow messages, for tshark. */

const CLIENT: IpPair = { src: ipv4(10, 0, 0, 1), dst: ipv4(10, 0, 0, 2) };
const SERVER: IpPair = { src: CLIENT.dst, dst: CLIENT.src };
const CPORT = 40_001;
const SPORT = 6653;

function ipv4Packet(ip: IpPair, id: number, tcp: Uint8Array): Uint8Array {
  const h = concat(Uint8Array.of(0x45, 0), u16be(20 + tcp.length), u16be(id), u16be(0x4000), Uint8Array.of(64, 6, 0, 0), ip.src, ip.dst);
  const sum = internetChecksum(h);
  h[10] = sum >>> 8;
  h[11] = sum & 0xff;
  return concat(h, tcp);
}

function frame(ip: IpPair, id: number, tcp: Uint8Array): Uint8Array {
  const macs = ip === CLIENT ? '020000000001020000000002' : '020000000002020000000001';
  return concat(Uint8Array.from(Buffer.from(macs, 'hex')), u16be(0x0800), ipv4Packet(ip, id, tcp));
}

/** A classic little-endian pcap (Ethernet) of the frames, one millisecond apart. */
function pcap(frames: Uint8Array[]): Uint8Array {
  const le32 = (v: number): Uint8Array => Uint8Array.of(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24);
  const le16 = (v: number): Uint8Array => Uint8Array.of(v & 0xff, v >>> 8);
  const parts: Uint8Array[] = [le32(0xa1b2c3d4), le16(2), le16(4), le32(0), le32(0), le32(262_144), le32(1)];
  frames.forEach((f, i) => parts.push(le32(1_700_000_000), le32(i * 1000), le32(f.length), le32(f.length), f));
  return concat(...parts);
}

/** Handshake, then each message in its own PSH/ACK segment client -> server. */
export function capture(messages: Uint8Array[]): Uint8Array {
  const base = { urgent: 0, options: {}, window: 65535 };
  let cseq = 1000;
  const sseq = 5000;
  const frames: Uint8Array[] = [
    frame(CLIENT, 1, encodeTcp({ ...base, srcPort: CPORT, dstPort: SPORT, seq: cseq, ack: 0, flags: TCP_SYN, payload: new Uint8Array(0) }, CLIENT)),
    frame(
      SERVER,
      1,
      encodeTcp({ ...base, srcPort: SPORT, dstPort: CPORT, seq: sseq, ack: cseq + 1, flags: TCP_SYN | TCP_ACK, payload: new Uint8Array(0) }, SERVER),
    ),
  ];
  cseq += 1;
  frames.push(
    frame(CLIENT, 2, encodeTcp({ ...base, srcPort: CPORT, dstPort: SPORT, seq: cseq, ack: sseq + 1, flags: TCP_ACK, payload: new Uint8Array(0) }, CLIENT)),
  );
  messages.forEach((m, i) => {
    frames.push(
      frame(CLIENT, 3 + i, encodeTcp({ ...base, srcPort: CPORT, dstPort: SPORT, seq: cseq, ack: sseq + 1, flags: TCP_PSH | TCP_ACK, payload: m }, CLIENT)),
    );
    cseq += m.length;
  });
  return pcap(frames);
}
