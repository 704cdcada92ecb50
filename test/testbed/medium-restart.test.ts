import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LocalTestbed } from '../support/local-testbed.js';

/**
 * The medium process of a running testbed dies (SIGKILL): the testbed
 * starts it again, the routers join it again by themselves, and traffic is
 * delivered again. Real processes; what is checked is what happens, never
 * how fast. The outage (SIGKILL to the first packet delivered after it) is
 * printed, for information.
 */
describe('a testbed whose medium dies', { timeout: 240_000 }, () => {
  let tb: LocalTestbed;
  before(async () => {
    // Two routers one hop apart, one UDP flow from the start.
    tb = await LocalTestbed.start('config/scenarios/testbed-chain.json', {
      hops: 1,
      set: ['flows=[{"kind":"udp-cbr","src":0,"dst":1,"rateMbps":0.1,"packetBytes":500,"startS":0}]'],
    });
  });
  after(async () => {
    await tb?.stop();
  });

  test('gets its medium back, its routers join it again, and packets are delivered again', async () => {
    const received = async (): Promise<number> => (await tb.flow(1, 0))?.received ?? 0;
    await tb.waitFor('20 packets at router 1', async () => ((await received()) >= 20 ? true : undefined), 120_000);
    const first = tb.sup.pid('medium');
    const linesBefore = tb.lines.length;
    const killedMs = Date.now();
    assert.ok(tb.sup.kill('medium', 'SIGKILL'));
    // What the dead medium delivered came before its end of the stream: once router 1 saw the link close,
    // its count holds every packet delivered before the kill.
    await tb.waitFor(
      'router 1 to see its link to the medium close',
      async () => (tb.lines.slice(linesBefore).some((l) => l.proc === 'r1' && l.event === 'medium-disconnected') ? true : undefined),
      30_000,
      20,
    );
    const atKill = await received();

    // The first delivery after the kill, polled closely for the figure printed below.
    const resumedMs = await tb.waitFor('a packet delivered after the kill', async () => ((await received()) > atKill ? Date.now() : undefined), 120_000, 50);
    await tb.waitFor('20 more packets at router 1', async () => ((await received()) >= atKill + 20 ? true : undefined), 120_000);

    const now = tb.sup.processes();
    const medium = now.find((p) => p.name === 'medium')!;
    assert.equal(medium.state, 'running');
    assert.ok(medium.restarts >= 1, 'the medium was started again');
    assert.notEqual(tb.sup.pid('medium'), first, 'a new medium process');
    assert.deepEqual(
      now.filter((p) => p.name !== 'medium').map((p) => [p.name, p.state, p.restarts]),
      [
        ['r0', 'running', 0],
        ['r1', 'running', 0],
      ],
      'the routers ran on: nobody restarted them',
    );
    const since = tb.lines.slice(linesBefore);
    const exit = since.find((l) => l.event === 'process-exit' && l.proc === 'medium');
    assert.ok(exit && typeof exit.restartInMs === 'number', `the testbed said it starts the medium again: ${JSON.stringify(exit)}`);
    for (const node of [0, 1]) {
      assert.ok(
        since.some((l) => l.proc === 'medium' && l.event === 'router-joined' && l.node === node),
        `router ${node} joined the new medium by itself\n${tb.tail()}`,
      );
    }
    // The new medium runs the PN bursts the routers sense: it has the same time origin.
    assert.ok(!since.some((l) => l.event === 'medium-restarted'), 'no router found a medium with another epoch');
    console.log(`# medium SIGKILLed: the first packet after it arrived ${((resumedMs - killedMs) / 1000).toFixed(2)} s later (polled every 50 ms)`);
  });
});
