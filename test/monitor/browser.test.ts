import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { after, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM, launchChromium } from '../support/browser.js';
import { MonitorServer } from '../../src/monitor/server.js';
import { startMonitor, testLogger } from './stream-client.js';

const SCREENSHOT = 'test-artifacts/monitor.png';
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

const rounds = (page: Page): Promise<number> => page.locator('#power').getAttribute('data-rounds').then(Number);

test(
  'the page in headless Chromium: live waterfall rows, R1, RC, tables; it reconnects when the stream comes back',
  { skip: !existsSync(CHROMIUM) && `no ${CHROMIUM}` },
  async () => {
    const { view, server, url } = await startMonitor({ token: TOKEN, statePeriodMs: 200 });
    cleanup.push(() => server.stop());
    for (let i = 0; i < 100; i++) view.pushRound();

    const browser: Browser = await launchChromium();
    cleanup.push(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 }, deviceScaleFactor: 1 });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });

    await page.goto(`${url}?token=${TOKEN}`);
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

    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    assert.ok(existsSync(SCREENSHOT), `the screenshot is at ${SCREENSHOT}`);

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
