import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LocalTestbed } from '../support/local-testbed.js';

/**
 * The relay of a two-hop chain dies (SIGKILL), its neighbours notice, and
 * it is started again (a router PC that reboots): UDP and TCP flow through
 * it again. Real processes; what is checked is what happens, never how
 * fast. The time from the relay being back on the air (its `node-start`)
 * to the first UDP packet and the first TCP bytes delivered after it is
 * printed, for information.
 */
describe('a chain whose relay restarts', { timeout: 300_000 }, () => {
  let tb: LocalTestbed;
  before(async () => {
    // r0 - r1 - r2: UDP from 0 to 2 and bulk TCP from 2 to 0, both through r1, from the start.
    tb = await LocalTestbed.start('config/scenarios/testbed-chain.json', {
      hops: 2,
      set: [
        'flows=[{"kind":"udp-cbr","src":0,"dst":2,"rateMbps":0.1,"packetBytes":500,"startS":0},' +
          '{"kind":"tcp-bulk","src":2,"dst":0,"variant":"reno","port":5001,"startS":0}]',
      ],
    });
  });
  after(async () => {
    await tb?.stop();
  });

  test('UDP and TCP flow through the relay again once it is back', async () => {
    const udp = async (): Promise<number> => (await tb.flow(2, 0))?.received ?? 0;
    // The TCP sink is router 0: the bytes it read in order.
    const tcp = async (): Promise<number> => (await tb.status(0)).traffic.find((t) => t.id === 1 && t.role === 'sink')?.bytes ?? 0;
    await tb.waitFor('UDP and TCP through the relay', async () => ((await udp()) >= 20 && (await tcp()) >= 20_000 ? true : undefined), 120_000);

    const linesBefore = tb.lines.length;
    const seen = (proc: string, event: string, from = linesBefore) => tb.lines.slice(from).find((l) => l.proc === proc && l.event === event);
    const killedMs = Date.now();
    assert.ok(tb.sup.kill('r1', 'SIGKILL'));
    // Both neighbours find it gone (a MAC failure or missed HELLOs), then it is started again.
    await tb.waitFor('r0 and r2 to lose r1', async () => (seen('r0', 'neighbour-lost') && seen('r2', 'neighbour-lost') ? true : undefined), 30_000, 50);
    await new Promise((r) => setTimeout(r, 3000));
    const udpBefore = await udp();
    const tcpBefore = await tcp();
    tb.dropClients(1);
    const restartLines = tb.lines.length;
    await tb.sup.restart('r1');
    const up = await tb.waitFor('r1 back on the air', async () => seen('r1', 'node-start', restartLines), 60_000, 20);

    let udpAt: number | undefined;
    let tcpAt: number | undefined;
    await tb.waitFor(
      'UDP and TCP through the restarted relay',
      async () => {
        if (udpAt === undefined && (await udp()) > udpBefore) udpAt = Date.now();
        if (tcpAt === undefined && (await tcp()) > tcpBefore) tcpAt = Date.now();
        return udpAt !== undefined && tcpAt !== undefined ? true : undefined;
      },
      120_000,
      50,
    );
    console.log(
      `# relay back on the air (node-start ${((up.seenMs - killedMs) / 1000).toFixed(1)} s after its kill): first UDP packet after ${((udpAt! - up.seenMs) / 1000).toFixed(2)} s, first TCP bytes after ${((tcpAt! - up.seenMs) / 1000).toFixed(2)} s (polled every 50 ms)`,
    );
    assert.ok((await udp()) > udpBefore && (await tcp()) > tcpBefore);
  });
});
