/**
 * The daemon's TUN device against the real kernel: packets routed into a TUN
 * are read back in batches, packets written to it are answered by the host's
 * stack, close() removes it and lets the process exit, and without
 * CAP_NET_ADMIN the error says so. Needs root and /dev/net/tun (CI has both);
 * skipped with the reason otherwise. Each interface is named after this
 * process (`cmt<pid><letter>`) and gets a /24 of 10.253/16 and a /64 of a ULA
 * that nothing else here routes.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { refused } from '../support/bytes.js';
import { runScript } from '../support/script.js';
import { configureTun, IpRouteError, ipAvailable } from '../../src/daemon/iproute.js';
import { hasNetAdmin, TunDevice, TunError, type TunBatch } from '../../src/daemon/tun.js';

const TUN_MODULE = new URL('../../src/daemon/tun.ts', import.meta.url).href;

const skipReason = (() => {
  if (process.platform !== 'linux') return 'TUN devices are Linux only';
  if (process.getuid?.() !== 0 || !hasNetAdmin()) return 'needs root with CAP_NET_ADMIN to create TUN devices';
  if (!existsSync('/dev/net/tun')) return '/dev/net/tun is missing (no tun module)';
  return undefined;
})();
const ipReady = skipReason === undefined ? await ipAvailable() : false;
const skipIp = skipReason ?? (ipReady ? undefined : 'iproute2 (ip) is not installed');

const ifname = (letter: string): string => `cmt${process.pid}${letter}`;
const open: TunDevice[] = [];
after(async () => {
  await Promise.all(open.map((t) => t.close()));
});

function openTun(letter: string): TunDevice {
  const t = TunDevice.open(ifname(letter));
  open.push(t);
  return t;
}

/** A third octet X such that nothing here routes or holds 10.253.X.0/24 yet. */
function freeSubnet(from: number): number {
  const taken = execFileSync('ip', ['-4', 'route', 'show', 'table', 'all'], { encoding: 'utf8' }) + execFileSync('ip', ['-4', 'address'], { encoding: 'utf8' });
  for (let k = 0; k < 250; k++) {
    const x = (from + k) % 250;
    if (!taken.includes(`10.253.${x}.`)) return x;
  }
  throw new Error('no free /24 in 10.253/16');
}

function v4(text: string): Uint8Array {
  return Uint8Array.from(text.split('.').map(Number));
}

/** fdcf:6d65:7368:00XX::iid as bytes and text. */
function ula(x: number, iid: number): { bytes: Uint8Array; text: string } {
  const bytes = Uint8Array.from([0xfd, 0xcf, 0x6d, 0x65, 0x73, 0x68, 0, x, 0, 0, 0, 0, 0, 0, iid >> 8, iid & 0xff]);
  return { bytes, text: `fdcf:6d65:7368:${x.toString(16)}::${iid.toString(16)}` };
}

/** The Internet checksum of the concatenated parts. */
function checksum(...parts: Uint8Array[]): number {
  let sum = 0;
  let odd = false;
  for (const p of parts) {
    for (const b of p) {
      sum += odd ? b : b << 8;
      odd = !odd;
    }
  }
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

const be16 = (b: Uint8Array, at: number): number => (b[at]! << 8) | b[at + 1]!;

function icmpEcho(type: number, id: number, seq: number, payload: Uint8Array): Uint8Array {
  const m = new Uint8Array(8 + payload.length);
  m.set([type, 0, 0, 0, id >> 8, id & 0xff, seq >> 8, seq & 0xff]);
  m.set(payload, 8);
  return m;
}

function ipv4Packet(src: Uint8Array, dst: Uint8Array, proto: number, body: Uint8Array): Uint8Array {
  const p = new Uint8Array(20 + body.length);
  p.set([0x45, 0, (p.length >> 8) & 0xff, p.length & 0xff, 0x12, 0x34, 0x40, 0, 64, proto, 0, 0]);
  p.set(src, 12);
  p.set(dst, 16);
  const c = checksum(p.subarray(0, 20));
  p[10] = c >> 8;
  p[11] = c & 0xff;
  p.set(body, 20);
  return p;
}

function icmpv6EchoPacket(src: Uint8Array, dst: Uint8Array, id: number, seq: number, payload: Uint8Array): Uint8Array {
  const m = icmpEcho(128, id, seq, payload);
  const pseudo = new Uint8Array(40);
  pseudo.set(src, 0);
  pseudo.set(dst, 16);
  pseudo.set([(m.length >>> 24) & 0xff, (m.length >> 16) & 0xff, (m.length >> 8) & 0xff, m.length & 0xff, 0, 0, 0, 58], 32);
  const c = checksum(pseudo, m);
  m[2] = c >> 8;
  m[3] = c & 0xff;
  const p = new Uint8Array(40 + m.length);
  p.set([0x60, 0, 0, 0, m.length >> 8, m.length & 0xff, 58, 64]);
  p.set(src, 8);
  p.set(dst, 24);
  p.set(m, 40);
  return p;
}

/** Keeps a copy of every packet read and the size of every batch; waits for a packet that matches. */
class Collector {
  readonly packets: Uint8Array[] = [];
  readonly batches: number[] = [];
  private wake: (() => void) | undefined;

  readonly onBatch = (b: TunBatch): void => {
    this.batches.push(b.count);
    for (let i = 0; i < b.count; i++) this.packets.push(b.data.slice(b.offsets[i]!, b.offsets[i]! + b.lengths[i]!));
    this.wake?.();
  };

  async until(what: string, done: () => boolean, ms = 5000): Promise<void> {
    const end = Date.now() + ms;
    while (!done()) {
      const left = end - Date.now();
      if (left <= 0) assert.fail(`timed out after ${ms} ms waiting for ${what} (${this.packets.length} packets read)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 100));
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  async find(what: string, match: (p: Uint8Array) => boolean, ms = 5000): Promise<Uint8Array> {
    let found: Uint8Array | undefined;
    await this.until(what, () => (found = this.packets.find(match)) !== undefined, ms);
    return found!;
  }
}

function sendUdp(family: 'udp4' | 'udp6', to: string, port: number, payloads: Uint8Array[]): Promise<void> {
  const s = dgram.createSocket(family);
  let left = payloads.length;
  return new Promise((resolve, reject) => {
    for (const p of payloads)
      s.send(p, port, to, (err) => {
        if (err) {
          s.close();
          reject(err);
        } else if (--left === 0) {
          s.close();
          resolve();
        }
      });
  });
}

test('refuses a bad interface name or option before touching the system', () => {
  assert.throws(() => TunDevice.open('x'.repeat(16)), refused('name'));
  assert.throws(() => TunDevice.open(''), refused('name'));
  assert.throws(() => TunDevice.open('a/b'), refused('name'));
  assert.throws(() => TunDevice.open('cm0', { batchSize: 0 }), refused('batchSize'));
  assert.throws(() => TunDevice.open('cm0', { maxPacketBytes: 100 }), refused('maxPacketBytes'));
});

test('configureTun reports the failed ip command line with iproute2 stderr', async (t) => {
  if (!(await ipAvailable())) return t.skip('iproute2 (ip) is not installed');
  const name = ifname('z');
  await assert.rejects(configureTun(name, { mtu: 1400, addresses: [], routes: [] }), (e: unknown) => {
    assert.ok(e instanceof IpRouteError, String(e));
    assert.equal(e.code, 'IPROUTE_FAILED');
    assert.equal(e.command, `ip link set dev ${name} addrgenmode none`);
    assert.match(e.stderr, /Cannot find device/);
    assert.ok(e.message.startsWith(`ip link set dev ${name} addrgenmode none failed: `), e.message);
    assert.ok(!e.message.includes('\n'), 'one line');
    return true;
  });
  await assert.rejects(configureTun(name, { mtu: 1400, addresses: ['10.0.0.1'], routes: [] }), refused('addresses[0]'));
  await assert.rejects(configureTun(name, { mtu: 1000, addresses: [], routes: ['fd00::/8'] }), refused('mtu'));
  await assert.rejects(configureTun(name, { mtu: 1400, addresses: [], routes: [] }, { ip: '/nonexistent/ip' }), { code: 'IPROUTE_NOT_FOUND' });
});

/** Device A, shared by the packet tests: IPv4 and IPv6, read from the start. */
let shared: { tun: TunDevice; rx: Collector; x: number } | undefined;
async function deviceA(): Promise<{ tun: TunDevice; rx: Collector; x: number }> {
  if (shared !== undefined) return shared;
  const tun = openTun('a');
  const x = freeSubnet(process.pid % 250);
  await configureTun(tun.name, {
    mtu: 1400,
    addresses: [`10.253.${x}.1/32`, `${ula(x, 1).text}/128`],
    routes: [`10.253.${x}.0/24`, `${ula(x, 0).text}/64`],
  });
  // Configuring twice is harmless (the daemon restarts on the same interface).
  await configureTun(tun.name, { mtu: 1400, addresses: [`10.253.${x}.1/32`], routes: [`10.253.${x}.0/24`] });
  const rx = new Collector();
  tun.start(rx.onBatch);
  shared = { tun, rx, x };
  return shared;
}

test('a UDP datagram routed into the TUN is read back whole, in a batch', async (t) => {
  if (skipIp !== undefined) return t.skip(skipIp);
  const { tun, rx, x } = await deviceA();
  assert.equal(tun.name, ifname('a'), 'the kernel kept the name');
  assert.ok(existsSync(`/sys/class/net/${tun.name}`));
  assert.equal(readFileSync(`/sys/class/net/${tun.name}/mtu`, 'utf8').trim(), '1400');
  const payload = new TextEncoder().encode(`cogmesh tun test ${process.pid}`);
  await sendUdp('udp4', `10.253.${x}.7`, 40_000, [payload]);
  const dst = v4(`10.253.${x}.7`);
  const p = await rx.find(
    'the UDP datagram',
    (p) => p[0] === 0x45 && p[9] === 17 && be16(p, 22) === 40_000 && p.subarray(16, 20).every((b, i) => b === dst[i]),
  );
  assert.equal(be16(p, 2), p.length, 'IPv4 total length = bytes read (no packet information header)');
  assert.deepEqual(p.subarray(12, 16), v4(`10.253.${x}.1`), 'sent from the TUN address');
  assert.equal(be16(p, 24), 8 + payload.length, 'UDP length');
  assert.deepEqual(p.subarray(28), payload);
  assert.ok(tun.counters.rxPackets >= 1 && tun.counters.rxBatches >= 1 && tun.counters.rxBytes >= p.length);
  assert.equal(tun.counters.rxErrors, 0);
});

test('an ICMP echo request written to the TUN gets the kernel echo reply back out of it', async (t) => {
  if (skipIp !== undefined) return t.skip(skipIp);
  const { tun, rx, x } = await deviceA();
  const local = v4(`10.253.${x}.1`);
  const remote = v4(`10.253.${x}.9`);
  const payload = new TextEncoder().encode('ping through the mesh');
  const id = process.pid & 0xffff;
  const echo = icmpEcho(8, id, 1, payload);
  const c = checksum(echo);
  echo[2] = c >> 8;
  echo[3] = c & 0xff;
  const txBefore = tun.counters.txPackets;
  assert.equal(tun.write(ipv4Packet(remote, local, 1, echo)), true);
  assert.equal(tun.counters.txPackets, txBefore + 1);
  const reply = await rx.find('the ICMP echo reply', (p) => p[0] === 0x45 && p[9] === 1 && p[20] === 0 && be16(p, 24) === id && be16(p, 26) === 1);
  assert.deepEqual(reply.subarray(12, 16), local);
  assert.deepEqual(reply.subarray(16, 20), remote);
  assert.deepEqual(reply.subarray(28), payload);
  assert.equal(checksum(reply.subarray(20)), 0, 'the reply checksum is valid');
});

test('an ICMPv6 echo request written to the TUN gets the kernel echo reply back out of it', async (t) => {
  if (skipIp !== undefined) return t.skip(skipIp);
  const { tun, rx, x } = await deviceA();
  if (readFileSync(`/proc/sys/net/ipv6/conf/${tun.name}/disable_ipv6`, 'utf8').trim() !== '0') return t.skip('IPv6 is disabled here');
  assert.ok(
    !existsSync(`/proc/sys/net/ipv6/conf/${tun.name}/addr_gen_mode`) ||
      readFileSync(`/proc/sys/net/ipv6/conf/${tun.name}/addr_gen_mode`, 'utf8').trim() === '1',
  );
  const addrs = execFileSync('ip', ['-6', 'address', 'show', 'dev', tun.name], { encoding: 'utf8' });
  assert.ok(!/inet6 fe80:/.test(addrs), `no link-local address: ${addrs}`);
  const local = ula(x, 1).bytes;
  const remote = ula(x, 9).bytes;
  const payload = new TextEncoder().encode('ping6 through the mesh');
  const id = (process.pid + 1) & 0xffff;
  assert.equal(tun.write(icmpv6EchoPacket(remote, local, id, 7, payload)), true);
  const reply = await rx.find('the ICMPv6 echo reply', (p) => p[0]! >> 4 === 6 && p[6] === 58 && p[40] === 129 && be16(p, 44) === id && be16(p, 46) === 7);
  assert.deepEqual(reply.subarray(8, 24), local);
  assert.deepEqual(reply.subarray(24, 40), remote);
  assert.deepEqual(reply.subarray(48), payload);
  const pseudo = new Uint8Array(40);
  pseudo.set(reply.subarray(8, 40), 0);
  const len = reply.length - 40;
  pseudo.set([0, 0, len >> 8, len & 0xff, 0, 0, 0, 58], 32);
  assert.equal(checksum(pseudo, reply.subarray(40)), 0, 'the reply checksum is valid');
});

test('a write the kernel refuses returns false and is counted', async (t) => {
  if (skipIp !== undefined) return t.skip(skipIp);
  const { tun } = await deviceA();
  const before = { ...tun.counters };
  assert.equal(tun.write(new Uint8Array(0)), false);
  assert.equal(tun.counters.txErrors + tun.counters.txDropped, before.txErrors + before.txDropped + 1);
  assert.equal(tun.counters.txPackets, before.txPackets);
});

test('a burst queued in the TUN before reading arrives complete, several packets a batch', async (t) => {
  if (skipIp !== undefined) return t.skip(skipIp);
  const tun = openTun('b');
  const x = freeSubnet((process.pid + 125) % 250);
  await configureTun(tun.name, { mtu: 1400, addresses: [`10.253.${x}.1/32`], routes: [`10.253.${x}.0/24`] });
  const n = 200;
  assert.ok(Number(readFileSync(`/sys/class/net/${tun.name}/tx_queue_len`, 'utf8')) >= n, 'the TUN queue holds the burst');
  const payloads = Array.from({ length: n }, (_, i) => Uint8Array.from([i >> 8, i & 0xff, 0xc0, 0x6d]));
  await sendUdp('udp4', `10.253.${x}.5`, 40_001, payloads); // sent, so queued in the TUN: nobody reads yet
  const rx = new Collector();
  tun.start(rx.onBatch);
  const seen = new Set<number>();
  const isOurs = (p: Uint8Array): boolean => p[0] === 0x45 && p[9] === 17 && be16(p, 22) === 40_001 && p.length === 32;
  await rx.until(`${n} datagrams`, () => {
    for (const p of rx.packets.splice(0)) if (isOurs(p)) seen.add(be16(p, 28));
    return seen.size === n;
  });
  assert.deepEqual(
    [...seen].sort((a, b) => a - b),
    [...Array(n).keys()],
    'every datagram, none twice',
  );
  assert.ok(rx.batches[0]! > 1, `the first batch took what was queued (${rx.batches[0]} packets)`);
  assert.ok(
    rx.batches.every((c) => c >= 1 && c <= 64),
    `batches of 1 to 64: ${rx.batches.join(' ')}`,
  );
  assert.ok(tun.counters.rxBatches < tun.counters.rxPackets, `${tun.counters.rxBatches} batches for ${tun.counters.rxPackets} packets`);
  assert.equal(
    rx.batches.reduce((a, b) => a + b, 0),
    tun.counters.rxPackets,
  );
  await tun.close();
});

test('close() from inside the batch callback stops reading at once, with more queued', async (t) => {
  if (skipIp !== undefined) return t.skip(skipIp);
  const tun = TunDevice.open(ifname('h'), { batchSize: 16 });
  open.push(tun);
  const x = freeSubnet((process.pid + 190) % 250);
  await configureTun(tun.name, { mtu: 1400, addresses: [`10.253.${x}.1/32`], routes: [`10.253.${x}.0/24`] });
  await sendUdp(
    'udp4',
    `10.253.${x}.5`,
    40_003,
    Array.from({ length: 50 }, () => new Uint8Array(8)),
  );
  const batches: number[] = [];
  let closing: Promise<void> | undefined;
  tun.start((b) => {
    batches.push(b.count);
    closing ??= tun.close();
  });
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(closing !== undefined, 'a batch came');
  await closing;
  assert.deepEqual(batches, [16], 'one full batch, then nothing');
  assert.equal(existsSync(`/sys/class/net/${tun.name}`), false);
});

test('a packet longer than maxPacketBytes is dropped and counted, not truncated', async (t) => {
  if (skipIp !== undefined) return t.skip(skipIp);
  const tun = TunDevice.open(ifname('g'), { maxPacketBytes: 576 });
  open.push(tun);
  const x = freeSubnet((process.pid + 60) % 250);
  await configureTun(tun.name, { mtu: 1400, addresses: [`10.253.${x}.1/32`], routes: [`10.253.${x}.0/24`] });
  await sendUdp('udp4', `10.253.${x}.5`, 40_002, [new Uint8Array(576 - 28 + 1), new Uint8Array(576 - 28)]);
  const rx = new Collector();
  tun.start(rx.onBatch);
  const ours = (p: Uint8Array): boolean => p[9] === 17 && be16(p, 22) === 40_002;
  await rx.find('the datagram that fits', (p) => ours(p) && p.length === 576);
  assert.equal(tun.counters.rxErrors, 1, 'the one a byte too long');
  assert.ok(!rx.packets.some((p) => ours(p) && p.length !== 576), 'no truncated packet delivered');
  await tun.close();
});

test('a name already open is refused with TUN_BUSY; close() removes the device and is final', async (t) => {
  if (skipReason !== undefined) return t.skip(skipReason);
  const tun = openTun('c');
  assert.ok(existsSync(`/sys/class/net/${tun.name}`));
  assert.throws(
    () => TunDevice.open(tun.name),
    (e: unknown) => {
      assert.ok(e instanceof TunError, String(e));
      assert.equal(e.code, 'TUN_BUSY');
      assert.equal(e.errno, 'EBUSY');
      assert.ok(e.message.includes(`"${tun.name}"`) && e.message.includes('EBUSY'), e.message);
      return true;
    },
  );
  tun.start(() => {});
  assert.throws(() => tun.start(() => {}), { code: 'TUN_STATE' });
  const closing = tun.close();
  assert.equal(tun.close(), closing, 'close() twice is one close');
  assert.equal(tun.isClosed, true);
  await closing;
  assert.equal(existsSync(`/sys/class/net/${tun.name}`), false, 'the non-persistent TUN is gone');
  assert.throws(() => tun.write(new Uint8Array(20)), { code: 'TUN_CLOSED' });
  assert.throws(() => tun.start(() => {}), { code: 'TUN_CLOSED' });
  // The name is free again.
  const again = TunDevice.open(tun.name);
  await again.close();
  assert.equal(existsSync(`/sys/class/net/${tun.name}`), false);
});

test('an interface deleted under the reader stops it with TUN_DETACHED, once', async (t) => {
  if (skipIp !== undefined) return t.skip(skipIp);
  const tun = openTun('f');
  const errors: TunError[] = [];
  tun.start(
    () => {},
    (e) => errors.push(e),
  );
  execFileSync('ip', ['link', 'del', 'dev', tun.name]);
  const end = Date.now() + 5000;
  while (errors.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 100)); // time for a second report, were the reader spinning
  assert.deepEqual(
    errors.map((e) => e.code),
    ['TUN_DETACHED'],
  );
  assert.ok(errors[0]!.message.includes(`"${tun.name}"`), errors[0]!.message);
  assert.equal(tun.isReading, false);
  await tun.close();
});

test('after close() a process reading a TUN exits by itself', async (t) => {
  if (skipReason !== undefined) return t.skip(skipReason);
  const name = ifname('d');
  const script = `
    import { existsSync } from 'node:fs';
    const { TunDevice } = await import(${JSON.stringify(TUN_MODULE)});
    const tun = TunDevice.open(${JSON.stringify(name)});
    tun.start(() => {});
    console.log(existsSync('/sys/class/net/${name}') ? 'present' : 'absent');
    setTimeout(async () => {
      await tun.close();
      console.log(existsSync('/sys/class/net/${name}') ? 'still there' : 'gone');
    }, 200);
  `;
  const r = await runScript(script);
  assert.equal(r.signal, null, `killed: ${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), ['present', 'gone']);
  assert.equal(existsSync(`/sys/class/net/${name}`), false);
});

test('a process reading a TUN that ends without close() (process.exit, an uncaught exception) exits, and the device goes with it', async (t) => {
  if (skipReason !== undefined) return t.skip(skipReason);
  // Before the fix the pending poll() held libuv's thread, which exit joins: the child hung until runChild killed it.
  for (const [letter, end, code] of [
    ['f', 'process.exit(0)', 0],
    ['g', "throw new Error('an uncaught exception')", 1],
  ] as const) {
    const name = ifname(letter);
    const script = `
      const { TunDevice } = await import(${JSON.stringify(TUN_MODULE)});
      const tun = TunDevice.open(${JSON.stringify(name)});
      tun.start(() => {});
      setTimeout(() => { ${end}; }, 200);
    `;
    const r = await runScript(script, { ms: 15_000 });
    assert.equal(r.signal, null, `killed: ${r.stderr}`);
    assert.equal(r.code, code, r.stderr);
    assert.equal(existsSync(`/sys/class/net/${name}`), false);
  }
});

test('without CAP_NET_ADMIN opening fails with a message that names it', async (t) => {
  if (skipReason !== undefined) return t.skip(skipReason);
  const setpriv = await new Promise<boolean>((resolve) => execFile('setpriv', ['--version'], (err) => resolve(err === null)));
  if (!setpriv) return t.skip('setpriv (util-linux) is not installed');
  const name = ifname('e');
  const script = `
    const { TunDevice, hasNetAdmin } = await import(${JSON.stringify(TUN_MODULE)});
    let error;
    try { await TunDevice.open(${JSON.stringify(name)}).close(); } catch (e) { error = { code: e.code, errno: e.errno, message: e.message }; }
    console.log(JSON.stringify({ hasNetAdmin: hasNetAdmin(), error }));
  `;
  const r = await runScript(script, { wrapper: ['setpriv', '--bounding-set=-net_admin', '--inh-caps=-net_admin'] });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { hasNetAdmin: boolean; error?: { code: string; errno: string; message: string } };
  assert.equal(out.hasNetAdmin, false);
  assert.ok(out.error !== undefined, 'the open failed');
  assert.equal(out.error.code, 'TUN_PERMISSION');
  assert.ok(out.error.errno === 'EPERM' || out.error.errno === 'EACCES', out.error.errno);
  assert.ok(out.error.message.startsWith(`opening TUN device "${name}" needs CAP_NET_ADMIN: run as root or grant the capability`), out.error.message);
  assert.ok(!out.error.message.includes('\n'), 'one line');
  assert.equal(existsSync(`/sys/class/net/${name}`), false);
});
