import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM, launchChromium } from '../support/browser.js';
import { ism2g4 } from '../../radio/channels.js';
import { liveChange } from '../../src/config/live.js';
import { MonitorServer } from '../../src/monitor/server.js';
import { memoryLogger } from '../support/control-view.js';
import { startGatewayRouter } from '../support/gateway-router.js';
import { MonitorTestView, testGatewayConfig } from '../support/monitor-view.js';
import { startMonitor, testLogger } from './stream-client.js';

const SCREENSHOT = 'test-artifacts/monitor.png';
/** The band spectrum's panel alone, at the page's scale. */
const BAND_SHOT = 'test-artifacts/monitor-band.png';
const TOKEN = 'tok-3f9a';

const cleanup: Array<() => Promise<void>> = [];
after(async () => {
  for (const f of cleanup.reverse()) await f().catch(() => undefined);
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until a page expression (a string: the test's TypeScript has no DOM
 * types) is truthy. Polls with page.evaluate, which the page's CSP (no
 * 'unsafe-eval') allows, unlike waitForFunction's in-page polling.
 */
async function until(page: Page, what: string, expr: string, timeout = 15_000): Promise<void> {
  const deadline = Date.now() + timeout;
  let last: unknown;
  while (Date.now() < deadline) {
    last = await page.evaluate(expr).catch((e: unknown) => `(error: ${(e as Error).message.split('\n')[0]})`);
    if (last === true) return;
    await sleep(50);
  }
  throw new Error(`the page never showed ${what} within ${timeout} ms (${expr} was ${JSON.stringify(last)})`);
}

/** Chromium on the page at `url`, with the page's errors (uncaught, console) collected. */
async function openPage(url: string): Promise<{ page: Page; problems: string[] }> {
  const browser: Browser = await launchChromium();
  cleanup.push(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 }, deviceScaleFactor: 1 });
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  await page.goto(url);
  return { page, problems };
}

const rounds = (page: Page): Promise<number> => page.locator('#power').getAttribute('data-rounds').then(Number);

/** Luminance of an sRGB colour, 0-255: viridis, the band waterfall's scale, grows in it from cold to hot. */
const luma = ([r, g, b]: number[]): number => 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;

/**
 * Reads the band plots' pixels at these frequencies (MHz): the colour of the
 * band waterfall's second row, and the height of the spectrum line (the
 * topmost near-white pixel of its column, CSS pixels from the plot's top;
 * null where there is none). In the page, as a string (no DOM types here).
 */
function bandPixels(mhz: number[]): string {
  return `(() => {
    const read = (id) => {
      const cv = document.querySelector(id);
      const [ax, ay, aw, ah] = cv.dataset.plot.split(' ').map(Number);
      const from = Number(cv.dataset.fromHz), to = Number(cv.dataset.toHz);
      const dpr = cv.width / cv.clientWidth;
      const g = cv.getContext('2d');
      const xOf = (m) => Math.round((ax + ((m * 1e6 - from) / (to - from)) * aw) * dpr);
      return { ax, ay, aw, ah, dpr, g, xOf };
    };
    const w = read('#band');
    const s = read('#spectrum');
    return ${JSON.stringify(mhz)}.map((m) => {
      const c = w.g.getImageData(w.xOf(m), Math.round((w.ay + 3) * w.dpr), 1, 1).data;
      const col = s.g.getImageData(s.xOf(m), Math.round(s.ay * s.dpr), 1, Math.round(s.ah * s.dpr)).data;
      let top = null;
      for (let y = 0; y * 4 < col.length; y++) {
        if (col[4 * y] > 200 && col[4 * y + 1] > 200 && col[4 * y + 2] > 200) { top = y / s.dpr; break; }
      }
      return { rgb: [c[0], c[1], c[2]], lineY: top };
    });
  })()`;
}

test(
  'the page in headless Chromium: live waterfall rows, R1, RC, tables; it reconnects when the stream comes back',
  { skip: !existsSync(CHROMIUM) && `no ${CHROMIUM}` },
  async () => {
    const { view, server, url } = await startMonitor({ token: TOKEN, statePeriodMs: 200 }, {}, new MonitorTestView({ psd: true }));
    cleanup.push(() => server.stop());
    for (let i = 0; i < 100; i++) view.pushRound();

    const { page, problems } = await openPage(`${url}?token=${TOKEN}`);
    await until(page, 'connected', 'document.querySelector("#status").textContent === "connected"');
    await until(page, 'the history of 100 rounds', 'Number(document.querySelector("#power").dataset.rounds) >= 100');
    assert.equal(await page.locator('#power').getAttribute('data-last-round'), '100', 'the newest round of the history on top');
    assert.equal(await page.locator('#wfall').getAttribute('data-rounds'), '100', 'the w waterfall has the same rows');

    // Live rounds: the waterfall grows row by row.
    const before = await rounds(page);
    for (let i = 0; i < 24; i++) {
      view.pushRound();
      await sleep(25);
    }
    await view.startVnf('dns-cache', { proto: 'udp', dstPort: 53 }, { entries: 512 });
    await until(page, 'the live rounds', 'document.querySelector("#power").dataset.lastRound === "124"');
    const live = await rounds(page);
    assert.ok(live > before, `data-rounds grew with live rounds (${before} -> ${live})`);
    assert.equal(live, 124, 'one row a round');

    // The tables and R1 from the state messages.
    await until(page, 'the routes table', 'document.querySelectorAll("#routes tbody tr").length === 4');
    await until(page, 'both VNFs', 'document.querySelectorAll("#vnfs tbody tr").length === 2');
    const r1 = view.status().r1.channel;
    assert.equal(typeof r1, 'number', 'the test router has an R1 channel');
    await until(page, `R1 on ${r1}`, `document.querySelector("#r1").textContent === "${r1}"`);
    assert.equal(await page.locator('#r3').textContent(), '3');
    assert.deepEqual(await page.locator('#routes tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-dst'))), ['2', '4', '5', '9']);
    const route4 = (await page.locator('#routes tbody tr[data-dst="4"]').textContent()) ?? '';
    assert.ok(/via 2 · 2 hops · 2\.31/.test(route4) && /via 5 · 3 hops · 3\.47/.test(route4), `route 4 shows both paths: ${route4}`);
    assert.equal(await page.locator('#neighbours tbody tr').count(), 3, 'three neighbours');
    assert.equal(await page.locator('#flows tbody tr').count(), 2, 'two flows');
    assert.equal(await page.locator('#queues tbody tr').count(), 3, 'three queues');
    assert.equal(await page.locator('#p-gateway').isHidden(), true, 'no gateway role: no gateway panel');
    assert.equal(await page.locator('#rc .bar').count(), 11, 'an RC bar a channel');
    assert.equal(await page.locator('#rc .bar.r1').getAttribute('data-channel'), String(r1), 'the R1 bar highlighted');
    await until(page, 'events', 'document.querySelectorAll("#events li").length >= 2');
    assert.match((await page.locator('#events').textContent()) ?? '', /VNF 2 \(dns-cache\) started/);

    // A cell of the waterfall tells what it holds under the pointer.
    const box = await page.locator('#power').boundingBox();
    assert.ok(box, 'the power waterfall is on the page');
    await page.mouse.move(box.x + box.width - 20, box.y + 30);
    assert.match(
      (await page.locator('#power').getAttribute('title')) ?? '',
      /^channel 11 · round 12\d · w 0\.\d{3} · RC \d\.\d\d Mbps · /,
      'the tooltip of a cell',
    );
    await page.mouse.move(0, 0);

    // The band: the spectrum line and the waterfall, stitched from the PSDs, on a MHz axis.
    await until(page, 'the band waterfall', 'document.querySelector("#band").dataset.lastRound === "124"');
    assert.equal(await page.locator('#spectrum').getAttribute('data-drawn'), 'line', 'the spectrum line is drawn');
    assert.ok(Number(await page.locator('#band').getAttribute('data-rows')) >= 100, 'a band row a round');
    const plan = ism2g4(11);
    const from = Number(await page.locator('#band').getAttribute('data-from-hz'));
    const to = Number(await page.locator('#band').getAttribute('data-to-hz'));
    const halfBin = 20e6 / 256 / 2;
    assert.equal(from, plan.get(1).centerHz - 10e6 - halfBin, "the band starts at the lower edge of channel 1's lowest bin");
    assert.equal(to, plan.get(11).centerHz + 10e6 - halfBin, "and ends at the upper edge of channel 11's highest");
    const ticks = ((await page.locator('#spectrum').getAttribute('data-mhz-ticks')) ?? '').split(' ').map(Number);
    assert.ok(
      ticks.length >= 5 && ticks.includes(2440) && ticks.every((t) => t % 5 === 0 && t * 1e6 >= from && t * 1e6 <= to),
      `MHz labels at round values: ${ticks.join(' ')}`,
    );
    const pns = view.primaries(124);
    const hot = pns.reduce((a, b) => (b.powerDbm > a.powerDbm ? b : a));
    // The channel farthest from every primary node: only the noise floor there.
    const cold = plan.channels.reduce((a, b) =>
      Math.min(...pns.map((p) => Math.abs(b.centerHz - plan.get(p.channel).centerHz))) >
      Math.min(...pns.map((p) => Math.abs(a.centerHz - plan.get(p.channel).centerHz)))
        ? b
        : a,
    );
    const [atHot, atCold] = (await page.evaluate(bandPixels([plan.get(hot.channel).centerHz / 1e6, cold.centerHz / 1e6]))) as Array<{
      rgb: number[];
      lineY: number | null;
    }>;
    assert.ok(
      luma(atHot!.rgb) > luma(atCold!.rgb) + 60,
      `the waterfall is hotter on channel ${hot.channel} (${atHot!.rgb}) than on ${cold.number} (${atCold!.rgb})`,
    );
    assert.ok(atHot!.lineY !== null && atCold!.lineY !== null, 'the line crosses both columns');
    assert.ok(
      atHot!.lineY! + 40 < atCold!.lineY!,
      `the line stands higher on channel ${hot.channel} (${atHot!.lineY} px) than on ${cold.number} (${atCold!.lineY} px)`,
    );
    const bandBox = await page.locator('#band').boundingBox();
    assert.ok(bandBox);
    await page.mouse.move(bandBox.x + 120, bandBox.y + 6);
    assert.match((await page.locator('#band').getAttribute('title')) ?? '', /^24\d\d\.\d\d MHz · round 12\d · -1\d\d\.\d dBm\/Hz$/, 'the tooltip of the band');
    await page.mouse.move(0, 0);

    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    assert.ok(existsSync(SCREENSHOT), `the screenshot is at ${SCREENSHOT}`);
    await page.locator('#p-band').screenshot({ path: BAND_SHOT });

    // The stream drops: the page says so, retries, and comes back with the new server's history.
    await server.stop();
    await until(page, 'disconnected', 'document.querySelector("#status").textContent === "disconnected"');
    const again = new MonitorServer(view, { listen: new URL(url).host, token: TOKEN, statePeriodMs: 200, maxConnections: 32 }, testLogger().log, {
      historyRounds: 30,
    });
    cleanup.push(() => again.stop());
    await again.start();
    for (let i = 0; i < 30; i++) view.pushRound(); // before the page is back: it gets them as history
    await until(page, 'connected again', 'document.querySelector("#status").textContent === "connected"', 20_000);
    await until(page, "the new server's history", 'document.querySelector("#power").dataset.lastRound === "154"');
    assert.equal(await rounds(page), 30, 'the history the new server keeps (30 rounds), from scratch');

    assert.deepEqual(problems, [], 'no errors in the page');
  },
);

test('the page in headless Chromium: without PSDs, the band plots say why', { skip: !existsSync(CHROMIUM) && `no ${CHROMIUM}` }, async () => {
  const view = new MonitorTestView();
  const cfg = view.config();
  cfg.monitor.psd.enabled = false;
  view.reconfigure(liveChange(view.config(), cfg));
  const { server, url } = await startMonitor({}, {}, view);
  cleanup.push(() => server.stop());
  for (let i = 0; i < 10; i++) view.pushRound();
  const browser: Browser = await launchChromium();
  cleanup.push(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  await page.goto(url);
  await until(page, 'the history', 'document.querySelector("#power").dataset.lastRound === "10"');
  const note = 'no PSD: monitor.psd.enabled is false or the router does not sense';
  await until(page, 'the note', `document.querySelector("#spectrum").dataset.note === ${JSON.stringify(note)}`);
  assert.equal(await page.locator('#band').getAttribute('data-note'), note);
  assert.equal(await page.locator('#band').getAttribute('data-rows'), '0');
});

test(
  "the page in headless Chromium: the gateway panel shows the role's clients, their queues and shares, the frame's slices and the dependence graph, live",
  { skip: !existsSync(CHROMIUM) && `no ${CHROMIUM}` },
  async () => {
    const view = new MonitorTestView({ gateway: testGatewayConfig() });
    const role = view.gatewayRole!;
    const t0 = view.now();
    // sta1 gets 4 packets and its slice sends them; then 3 more for sta1 and 2 for sta3 wait.
    for (let i = 0; i < 4; i++) role.offer(0, i, 1200, t0);
    let sent = 0;
    role.poll(t0 + 20_000, () => sent++);
    assert.equal(sent, 4, "sta1's slice (the frame's first) sends its 4 packets");
    for (let i = 0; i < 3; i++) role.offer(0, i, 1000, t0 + 20_000);
    for (let i = 0; i < 2; i++) role.offer(2, i, 700, t0 + 20_000);
    const { server, url } = await startMonitor({ statePeriodMs: 100 }, {}, view);
    cleanup.push(() => server.stop());

    const { page, problems } = await openPage(url);
    await until(page, 'the gateway panel', '!document.querySelector("#p-gateway").hidden && document.querySelectorAll("#gateway tbody tr").length === 3');

    const cells = (id: string): Promise<string[]> =>
      page.locator(`#gateway tbody tr[data-client="${id}"] td`).evaluateAll((tds) => tds.map((td) => (td.textContent ?? '').trim()));
    assert.deepEqual(await cells('sta1'), ['sta1', '10.0.2.0/25', '2', '3.0 kB', '3', 'line', '0.500', '4', '0']);
    assert.deepEqual(await cells('sta2'), ['sta2', '10.0.2.128/25', '2', '0 B', '0', 'line', '0.500', '0', '0']);
    assert.deepEqual(await cells('sta3'), ['sta3', '10.0.4.0/24', '4', '1.4 kB', '2', 'line', '1.000', '0', '0']);
    assert.match((await page.locator('#gw-info').textContent()) ?? '', /^computed · 1 computation · 0 unshaped$/);

    const slices = (): Promise<Array<{ clients: string | null; share: number; width: number }>> =>
      page.locator('#gw-slices .gw-slice').evaluateAll((els) =>
        els.map((el) => ({
          clients: el.getAttribute('data-clients'),
          share: Number(el.getAttribute('data-share')),
          width: el.getBoundingClientRect().width,
        })),
      );
    let bar = await slices();
    assert.deepEqual(
      bar.map((b) => [b.clients, b.share]),
      [
        ['sta1 sta3', 0.5],
        ['sta2 sta3', 0.5],
      ],
      'two independent sets, half the frame each, in order',
    );
    assert.ok(Math.abs(bar[0]!.width - bar[1]!.width) <= 1, `drawn as equal halves (${bar[0]!.width} px, ${bar[1]!.width} px)`);
    assert.match((await page.locator('#gw-slices').textContent()) ?? '', /sta1 · sta3\s*50\.0%/);
    assert.equal(await page.locator('#gw-period-end').textContent(), '100 ms');
    const edges = (): Promise<string[]> =>
      page
        .locator('#gw-graph li')
        .evaluateAll((lis) => lis.map((li) => `${li.getAttribute('data-a')}-${li.getAttribute('data-b')} ${li.getAttribute('data-kind')}`));
    assert.deepEqual(await edges(), ['sta1-sta2 same-ap']);
    assert.match((await page.locator('#gw-graph li').textContent()) ?? '', /sta1\s*—\s*sta2\s*same-ap/);

    // sta3 hears router 2 10 dB above its own: Type III with both of router 2's clients, a third of the frame each.
    assert.equal(
      role.report(
        'sta3',
        new Map([
          [4, -70],
          [2, -60],
        ]),
        t0 + 30_000,
      ),
      true,
    );
    await until(page, 'the new graph', 'document.querySelectorAll("#gw-graph li").length === 3');
    assert.deepEqual(await edges(), ['sta1-sta2 same-ap', 'sta1-sta3 type-iii', 'sta2-sta3 type-iii']);
    await until(page, 'three slices', 'document.querySelectorAll("#gw-slices .gw-slice").length === 3');
    bar = await slices();
    assert.deepEqual(
      bar.map((b) => [b.clients, Number(b.share.toFixed(3))]),
      [
        ['sta1', 0.333],
        ['sta2', 0.333],
        ['sta3', 0.333],
      ],
    );
    assert.deepEqual(await page.locator('#gateway tbody td.share').allTextContents(), ['0.333', '0.333', '0.333'], 'the shares follow');
    mkdirSync('test-artifacts', { recursive: true });
    await page.locator('#p-gateway').screenshot({ path: 'test-artifacts/monitor-gateway.png' });
    assert.deepEqual(problems, [], 'no errors in the page');
  },
);

test(
  'the page in headless Chromium: a running router with the gateway role; the control API sets static slices and then turns the role off, and the page follows',
  { skip: !existsSync(CHROMIUM) && `no ${CHROMIUM}`, timeout: 90_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cm-gw-page-'));
    cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
    const { log } = memoryLogger();
    const router = await startGatewayRouter(
      dir,
      [
        { id: 'sta1', prefix: '10.0.1.0/24', router: 1 },
        { id: 'sta3', prefix: '10.0.3.0/24', router: 3 },
      ],
      log,
    );
    cleanup.push(() => router.stop());
    const { node, client } = router;
    const monitor = new MonitorServer(node, { listen: '127.0.0.1:0', token: '', statePeriodMs: 100, maxConnections: 8 }, log);
    const { url } = await monitor.start();
    cleanup.push(() => monitor.stop());

    const { page, problems } = await openPage(url);
    // Two clients behind different routers, nothing between them: one slice of the whole frame, both served in it.
    await until(page, 'the gateway panel', 'document.querySelectorAll("#gateway tbody tr").length === 2');
    const slices = (): Promise<string[]> =>
      page
        .locator('#gw-slices .gw-slice')
        .evaluateAll((els) => els.map((el) => `${el.getAttribute('data-clients') ?? '(idle)'} ${el.getAttribute('data-share')}`));
    assert.deepEqual(await slices(), ['sta1 sta3 1']);
    assert.deepEqual(await page.locator('#gateway tbody td.share').allTextContents(), ['1.000', '1.000']);
    assert.equal(await page.locator('#gw-graph li').count(), 0);
    assert.equal(await page.locator('#gw-graph-empty').isVisible(), true, 'no dependent pairs, said so');

    // Static slices set live: sta3 alone for the first quarter, the rest of the frame idle.
    const set = await client.request(
      'set',
      { values: { 'gateway.slicing.mode': 'static', 'gateway.slicing.static': [{ clients: ['sta3'], share: 0.25 }], 'gateway.rate.rateMbps': 5 } },
      5000,
    );
    assert.ok(set.ok, JSON.stringify(set));
    await until(page, 'the static slice', 'document.querySelectorAll("#gw-slices .gw-slice").length === 2');
    assert.deepEqual(await slices(), ['sta3 0.25', '(idle) 0.75']);
    assert.match((await page.locator('#gw-slices .gw-slice.idle').textContent()) ?? '', /idle\s*75\.0%/);
    assert.deepEqual(await page.locator('#gateway tbody td.share').allTextContents(), ['0.000', '0.250']);
    assert.match((await page.locator('#gateway tbody tr[data-client="sta3"]').textContent()) ?? '', /5\.000/, 'the rate set');
    assert.match((await page.locator('#gw-info').textContent()) ?? '', /^static · 0 unshaped$/);

    // The role off: the panel goes.
    const off = await client.request('set', { values: { 'gateway.enabled': false } }, 5000);
    assert.ok(off.ok, JSON.stringify(off));
    await until(page, 'the panel gone', 'document.querySelector("#p-gateway").hidden === true');
    assert.deepEqual(problems, [], 'no errors in the page');
  },
);
