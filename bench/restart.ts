/**
 * How long the shipped 5-router chain's traffic stops when a process dies:
 * the medium SIGKILLed (the testbed starts it again and the routers rejoin
 * it by themselves), and a relay SIGKILLed and started again. Real
 * processes from the sources, as `cogmesh testbed` runs them, with the
 * scenario as shipped (R3 authenticated, UDP from router 0 to 4, TCP Reno
 * from 4 to 0).
 *
 *   node --import tsx bench/restart.ts [--kills 3] [--relay 2]
 *
 * For each kill it prints the time from the SIGKILL to the first UDP packet
 * the sink counts after it and to the first TCP bytes; for a relay, also
 * when the new process was on the air. Figures, not limits: they depend on
 * the machine's load (start-up under tsx is most of them).
 */
import { parseArgs } from 'node:util';
import { LocalTestbed } from '../test/support/local-testbed.js';

const { values } = parseArgs({
  options: { kills: { type: 'string', default: '3' }, relay: { type: 'string', default: '2' } },
});
const kills = Number(values.kills);
const relay = Number(values.relay);
if (!(Number.isSafeInteger(kills) && kills >= 1 && kills <= 20)) throw new Error(`--kills: "${values.kills}" is not 1..20`);
if (!(Number.isSafeInteger(relay) && relay >= 1 && relay <= 3)) throw new Error(`--relay: "${values.relay}" is not a relay of the 5-router chain (1..3)`);

const s = (ms: number): string => (ms / 1000).toFixed(2);
const tb = await LocalTestbed.start('config/scenarios/testbed-chain.json', {});
const udp = async (): Promise<number> => (await tb.flow(4, 0))?.received ?? 0;
const tcp = async (): Promise<number> => (await tb.status(0)).traffic.find((t) => t.id === 1 && t.role === 'sink')?.bytes ?? 0;
/** When both flows have delivered something past `at` (polled every 50 ms). */
const resumed = async (at: { udp: number; tcp: number }): Promise<{ udp: number; tcp: number }> => ({
  udp: await tb.waitFor('UDP after the kill', async () => ((await udp()) > at.udp ? Date.now() : undefined), 180_000, 50),
  tcp: await tb.waitFor('TCP after the kill', async () => ((await tcp()) > at.tcp ? Date.now() : undefined), 180_000, 50),
});
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 10_000));

try {
  await tb.waitFor('UDP through the chain', async () => ((await udp()) >= 50 ? true : undefined), 180_000);
  await tb.waitFor('TCP through the chain', async () => ((await tcp()) >= 20_000 ? true : undefined), 180_000);
  console.log(`| kill | process | on the air again (s) | first UDP packet (s) | first TCP bytes (s) |`);
  console.log(`| ---: | :--- | ---: | ---: | ---: |`);
  for (let i = 1; i <= kills; i++) {
    const seen = tb.lines.length;
    const killed = Date.now();
    tb.sup.kill('medium', 'SIGKILL');
    // What the dead medium delivered came before its end of the stream: wait for the sink's router to see it close.
    await tb.waitFor(
      'router 4 to see the medium go',
      async () => (tb.lines.slice(seen).some((l) => l.proc === 'r4' && l.event === 'medium-disconnected') ? true : undefined),
      30_000,
      20,
    );
    const back = await resumed({ udp: await udp(), tcp: await tcp() });
    console.log(`| ${i} | medium | | ${s(back.udp - killed)} | ${s(back.tcp - killed)} |`);
    await settle();
  }
  for (let i = 1; i <= kills; i++) {
    const seen = tb.lines.length;
    tb.dropClients(relay);
    const killed = Date.now();
    await tb.sup.restart(`r${relay}`);
    const up = await tb.waitFor(
      `router ${relay} on the air`,
      async () => tb.lines.slice(seen).find((l) => l.proc === `r${relay}` && l.event === 'node-start'),
      60_000,
      20,
    );
    const back = await resumed({ udp: await udp(), tcp: await tcp() });
    console.log(`| ${i} | relay ${relay} | ${s(up.seenMs - killed)} | ${s(back.udp - killed)} | ${s(back.tcp - killed)} |`);
    await settle();
  }
  console.log(`\n(times from the SIGKILL; 5-router chain, ${kills} kill(s) of each, 10 s apart)`);
} finally {
  await tb.stop();
}
