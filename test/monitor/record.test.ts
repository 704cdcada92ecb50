import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { WebSocket } from 'ws';
import { readSigmf } from '../../radio/file/sigmf.js';
import type { RecordingInfo } from '../../src/router/view.js';
import { launchChromium } from '../support/browser.js';
import { cogmesh, stopAll } from '../support/cli.js';
import { startNodeWithMonitor } from '../support/node-process.js';

/**
 * "Record the next N seconds" from the monitor (after gqrx's timed
 * recording), against a real `cogmesh node` process: the page's POST, the
 * `record` events on the stream, the list, and the SigMF files it serves,
 * read back with cogmesh's own SigMF reader (the one the `file` front-end
 * replays recordings with).
 */

const dir = mkdtempSync(join(tmpdir(), 'cogmesh-record-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const node = (recordDir: string): Record<string, unknown> => ({
  node: { id: 1, name: 'rec' },
  sensing: { durationMs: 44, periodMs: 250, backend: 'cpu' },
  monitor: { record: { dir: recordDir, maxS: 5 } },
});

const post = (url: string, body: string, headers: Record<string, string> = { 'Content-Type': 'application/json' }): Promise<Response> =>
  fetch(new URL('record', url), { method: 'POST', headers, body });

test('the monitor records the next N seconds of sensing IQ as SigMF, and serves the files', { timeout: 120_000 }, async () => {
  const recDir = join(dir, 'recordings');
  mkdirSync(recDir);
  const { proc, url } = await startNodeWithMonitor(join(dir), node(recDir));
  try {
    const events: RecordingInfo[] = [];
    const ws = new WebSocket(new URL('stream', url.replace(/^http/, 'ws')));
    ws.on('message', (data, binary) => {
      if (binary) return;
      const m = JSON.parse(String(data)) as { type: string; kind?: string; recording?: RecordingInfo };
      if (m.type === 'event' && m.kind === 'record') events.push(m.recording!);
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));

    // What is refused changes nothing.
    assert.equal((await post(url, '{"seconds": 1}', { 'Content-Type': 'text/plain' })).status, 415, 'a form or text body: no JSON, no recording');
    assert.equal((await post(url, '{"seconds": 0}')).status, 400);
    const tooLong = await post(url, '{"seconds": 6}');
    assert.equal(tooLong.status, 400);
    assert.match(await tooLong.text(), /monitor\.record\.maxS/);
    assert.equal((await post(url, 'seconds=1')).status, 400, 'not JSON');
    assert.equal((await post(url, '{"seconds": 1}', { 'Content-Type': 'application/json', Origin: 'http://evil.example' })).status, 403);
    assert.equal((await fetch(new URL('record', url))).status, 405, 'GET /record starts nothing');
    assert.deepEqual(((await (await fetch(new URL('recordings', url))).json()) as { recordings: unknown[] }).recordings, []);

    const started = await post(url, '{"seconds": 1.5}');
    assert.equal(started.status, 202);
    const info = (await started.json()) as RecordingInfo;
    assert.equal(info.state, 'recording');
    assert.equal(info.seconds, 1.5);
    assert.equal((await post(url, '{"seconds": 1}')).status, 409, 'one recording at a time');

    const deadline = Date.now() + 60_000;
    while (!events.some((e) => e.name === info.name && e.state !== 'recording') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    ws.close();
    const done = events.find((e) => e.name === info.name && e.state !== 'recording');
    assert.ok(done, `a record event ends it: ${JSON.stringify(events)}`);
    assert.equal(done.state, 'done', done.error ?? '');
    assert.equal(done.reason, 'time');
    assert.ok(done.samples > 0 && done.captures >= 11, `${done.samples} samples in ${done.captures} captures: several rounds of 11 visits`);
    assert.ok(done.endedAtUs! - done.startedAtUs >= 1.5e6, 'it lasted the asked-for time');

    const list = ((await (await fetch(new URL('recordings', url))).json()) as { recordings: RecordingInfo[] }).recordings;
    assert.deepEqual(
      list.map((r) => [r.name, r.state]),
      [[info.name, 'done']],
    );
    // The files, as the page's links fetch them, read back as a recording.
    const got = join(dir, 'got');
    mkdirSync(got);
    for (const ext of ['sigmf-meta', 'sigmf-data']) {
      const res = await fetch(new URL(`recordings/${info.name}.${ext}`, url));
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-disposition') ?? '', new RegExp(`attachment; filename="${info.name}\\.${ext}"`));
      writeFileSync(join(got, `${info.name}.${ext}`), new Uint8Array(await res.arrayBuffer()));
    }
    const rec = await readSigmf(join(got, info.name));
    assert.equal(rec.sampleCount, done.samples);
    assert.equal(rec.meta.captures.length, done.captures);
    const channelsMHz = new Set(rec.meta.captures.map((c) => c.frequencyHz / 1e6));
    assert.deepEqual(
      [...channelsMHz].sort((a, b) => a - b),
      Array.from({ length: 11 }, (_, i) => 2412 + 5 * i),
      'every channel of the plan',
    );
    assert.ok(
      rec.meta.captures.every((c) => c.datetime !== undefined),
      'each capture says when',
    );
    assert.ok(
      rec.meta.annotations.some((a) => /^round \d+ channel \d+$/.test(a.label ?? '')),
      'visits are annotated',
    );

    // cogmesh's own file front-end replays it: sensing the recording finds the channels it visited.
    const sensed = cogmesh('sense', '--frontend', 'file', '--input', join(got, `${info.name}.sigmf-meta`), '--seconds', '1', '--json');
    assert.equal(sensed.code, 0, sensed.err);
    assert.equal((JSON.parse(sensed.out) as { channels: unknown[] }).channels.length, 11);

    // Nothing else of the folder, or beyond it, is served.
    writeFileSync(join(recDir, 'other.sigmf-meta'), '{}');
    for (const p of ['recordings/other.sigmf-meta', 'recordings/..%2Fnode.json', `recordings/${info.name}.sigmf-meta%2F..`, 'recordings/']) {
      assert.equal((await fetch(new URL(p, url))).status, 404, p);
    }
  } finally {
    await stopAll([proc]);
  }
  assert.deepEqual(readdirSync(recDir).sort(), [...readdirSync(join(dir, 'got')).sort(), 'other.sigmf-meta'].sort());
});

test('with monitor.record.dir empty, recording from the monitor is refused and says which setting turns it on', { timeout: 60_000 }, async () => {
  const sub = join(dir, 'off');
  mkdirSync(sub);
  const { proc, url } = await startNodeWithMonitor(sub, node(''));
  try {
    const r = await post(url, '{"seconds": 1}');
    assert.equal(r.status, 403);
    assert.match(await r.text(), /monitor\.record\.dir is empty/);
  } finally {
    await stopAll([proc]);
  }
});

test('the monitor page records: Record asks for the next N seconds, and links the files once done', { timeout: 120_000 }, async () => {
  const sub = join(dir, 'page');
  const recDir = join(sub, 'recordings');
  mkdirSync(recDir, { recursive: true });
  const token = 'p'.repeat(22) + 'AbC-_0123456789';
  const { proc, url } = await startNodeWithMonitor(sub, { ...node(recDir), monitor: { token, record: { dir: recDir, maxS: 5 } } });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(`${url}?token=${token}`);
    const status = page.locator('#rec-status');
    // A length beyond monitor.record.maxS: the router's reason shows by the button.
    await page.fill('#rec-s', '9');
    await page.click('#rec-go');
    await status.filter({ hasText: 'monitor.record.maxS' }).waitFor({ timeout: 15_000 });
    await page.fill('#rec-s', '1');
    await page.click('#rec-go');
    const link = page.locator('#rec-status a', { hasText: 'sigmf-data' });
    await link.waitFor({ timeout: 60_000 });
    const href = (await link.getAttribute('href'))!;
    assert.match(href, new RegExp(`/recordings/cogmesh-rec-.*\\.sigmf-data\\?token=${token}$`), "the link carries the page's token");
    const res = await fetch(href);
    assert.equal(res.status, 200);
    assert.ok((await res.arrayBuffer()).byteLength > 0);
    assert.match((await page.locator('#events').textContent()) ?? '', /cogmesh-rec-.* samples in \d+ captures \(time\)/, 'the events list it');
  } finally {
    await browser.close();
    await stopAll([proc]);
  }
});
