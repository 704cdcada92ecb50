/**
 * The reference network of bench/ip.ts: three namespaces in a line, client
 * -- relay -- server, joined by two veth pairs, named `cmb-<random>-c`,
 * `-r` and `-s` so that nothing else on the machine meets them. The relay
 * forwards IPv4 (for the kernel-forwarding reference) and has an address on
 * each side (for a userspace relay such as socat to listen on and connect
 * from).
 */
import { randomBytes } from 'node:crypto';
import { must, onCleanup, removeNetns } from './sys.js';

export interface RefNet {
  client: string;
  relay: string;
  server: string;
  /** The relay's address on the client's side, and the server's own. */
  relayAddr: string;
  serverAddr: string;
  /** The server's veth end (its received packets are the forwarding rate). */
  serverDev: string;
  /** The client's veth end. */
  clientDev: string;
  /** The commands that made it, for the report. */
  commands: string[];
  remove(): Promise<void>;
}

export async function createRefNet(): Promise<RefNet> {
  const id = randomBytes(3).toString('hex');
  const ns = { c: `cmb-${id}-c`, r: `cmb-${id}-r`, s: `cmb-${id}-s` };
  const dev = { c: `cmb${id}c`, rc: `cmb${id}rc`, rs: `cmb${id}rs`, s: `cmb${id}s` };
  const commands: string[][] = [
    ['netns', 'add', ns.c],
    ['netns', 'add', ns.r],
    ['netns', 'add', ns.s],
    ['link', 'add', dev.c, 'netns', ns.c, 'type', 'veth', 'peer', 'name', dev.rc, 'netns', ns.r],
    ['link', 'add', dev.s, 'netns', ns.s, 'type', 'veth', 'peer', 'name', dev.rs, 'netns', ns.r],
    ['-n', ns.c, 'addr', 'add', '10.201.1.2/24', 'dev', dev.c],
    ['-n', ns.r, 'addr', 'add', '10.201.1.1/24', 'dev', dev.rc],
    ['-n', ns.r, 'addr', 'add', '10.201.2.1/24', 'dev', dev.rs],
    ['-n', ns.s, 'addr', 'add', '10.201.2.2/24', 'dev', dev.s],
    ...[ns.c, ns.r, ns.s].map((n) => ['-n', n, 'link', 'set', 'lo', 'up']),
    ['-n', ns.c, 'link', 'set', dev.c, 'up'],
    ['-n', ns.r, 'link', 'set', dev.rc, 'up'],
    ['-n', ns.r, 'link', 'set', dev.rs, 'up'],
    ['-n', ns.s, 'link', 'set', dev.s, 'up'],
    ['-n', ns.c, 'route', 'add', 'default', 'via', '10.201.1.1'],
    ['-n', ns.s, 'route', 'add', 'default', 'via', '10.201.2.1'],
    ['netns', 'exec', ns.r, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1'],
  ];
  // Registered before the first namespace exists: whatever fails or interrupts, all three go.
  const remove = onCleanup(async () => {
    for (const n of [ns.c, ns.r, ns.s]) await removeNetns(n);
  });
  try {
    for (const args of commands) await must('ip', args);
  } catch (e) {
    await remove();
    throw e;
  }
  return {
    client: ns.c,
    relay: ns.r,
    server: ns.s,
    relayAddr: '10.201.1.1',
    serverAddr: '10.201.2.2',
    serverDev: dev.s,
    clientDev: dev.c,
    commands: commands.map((a) => `ip ${a.join(' ')}`),
    remove,
  };
}
