import type { PsdView, SpectrumView } from '../../router/view.js';
import { parseMonitorFrame } from '../frames.js';
import { MONITOR_PROTOCOL, type EventMessage, type HelloMessage, type MonitorMessage, type OnWire, type StateMessage } from '../protocol.js';
import { buildBars, drawWaterfall, hover, INFERNO, legend, POWER_LUT, POWER_MAX, POWER_MIN, updateBars, VIRIDIS, W_LUT } from './draw.js';
import { dash, esc, fmtAge, fmtBytes, fmtClock, fmtCost, fmtFlow, fmtUptime } from './format.js';
import { ROW_PX } from './axes.js';
import { BAND_LEFT, BAND_RIGHT, bandRow, dbRange, drawBand, drawSpectrum, hoverBand } from './spectrum.js';
import { renderGateway } from './gateway.js';
import { $, emptyState, setRows } from './state.js';

/**
 * The monitor page's script (bundled by esbuild into the page the monitor
 * serves): it opens `/stream` with the page's own `?token=`, parses the
 * binary frames with the server's own parser (frames.ts) and draws the
 * router: the band's spectrum (stitched from each channel's latest PSD) as a
 * line and a waterfall, power and w waterfalls, RC of the latest round,
 * R1/R2/R3, queues, neighbours, routes, VNFs, flows, the gateway role
 * (gateway.ts) and events. It reconnects with backoff.
 */

const MAX_ROWS = 600;
const MAX_EVENTS = 200;

const S = emptyState();
const token = new URLSearchParams(location.search).get('token');

function chBadge(ch: number | null | undefined): string {
  if (ch === null || ch === undefined) return '<span class="muted">&ndash;</span>';
  return `<span class="ch-badge${ch === S.r1 ? ' r1' : ''}">${esc(ch)}</span>`;
}

// ---- connection ------------------------------------------------------------

let ws: WebSocket | null = null;
let backoffMs = 500;

function setStatus(s: 'connecting' | 'connected' | 'disconnected', retry = ''): void {
  $('conn').dataset.state = s;
  $('status').textContent = s;
  $('retry').textContent = retry;
  document.body.classList.toggle('offline', s !== 'connected');
}

function connect(): void {
  setStatus('connecting');
  const u = new URL('stream', location.href);
  u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  u.search = token !== null ? `?token=${encodeURIComponent(token)}` : '';
  u.hash = '';
  let sock: WebSocket;
  try {
    sock = new WebSocket(u.href);
  } catch {
    scheduleReconnect();
    return;
  }
  ws = sock;
  sock.binaryType = 'arraybuffer';
  sock.onmessage = (e: MessageEvent<string | ArrayBuffer>) => {
    if (typeof e.data !== 'string') {
      onFrame(e.data);
      return;
    }
    let m: OnWire<MonitorMessage>;
    try {
      m = JSON.parse(e.data) as OnWire<MonitorMessage>;
    } catch {
      return;
    }
    onMessage(m);
  };
  sock.onclose = () => {
    if (ws !== sock) return;
    ws = null;
    scheduleReconnect();
  };
}

function scheduleReconnect(): void {
  // In the viewer's browser, not a router core: the jitter only keeps many open pages from
  // reconnecting in step after a router restarts, so nothing here needs to be reproducible.
  // eslint-disable-next-line no-restricted-properties -- the viewer's browser, not a core (see above)
  const delay = backoffMs * (1 + Math.random() * 0.2);
  backoffMs = Math.min(backoffMs * 2, 10000);
  setStatus('disconnected', ` · retrying in ${(delay / 1000).toFixed(1)} s`);
  setTimeout(connect, delay);
}

function onMessage(m: OnWire<MonitorMessage>): void {
  if (m.type === 'hello') onHello(m);
  else if (m.type === 'state') onState(m);
  else if (m.type === 'event') onEvent(m);
}

function onHello(m: OnWire<HelloMessage>): void {
  backoffMs = 500;
  S.hello = m;
  S.channels = m.channels.slice();
  S.rows = [];
  S.latest = null;
  S.psds.clear();
  S.centersHz.clear();
  S.r1 = null;
  S.configVersion = m.configVersion;
  $('node').innerHTML = `<b>${esc(m.node.name)}</b> &middot; node ${esc(m.node.id)}`;
  document.title = `${m.node.name} · cogmesh monitor`;
  $('proto').textContent = `protocol ${m.protocol}${m.protocol !== MONITOR_PROTOCOL ? ` (this page speaks ${MONITOR_PROTOCOL})` : ''}`;
  $('config-version').textContent = String(m.configVersion).slice(0, 12);
  buildBars(S);
  setStatus('connected');
  scheduleDraw();
}

function onFrame(buf: ArrayBuffer): void {
  const r = parseMonitorFrame(new Uint8Array(buf));
  if (!r.ok) {
    S.badFrames++;
    $('bad-frames').textContent = `${S.badFrames} bad frames (last: ${r.error.code})`;
    return;
  }
  if (r.value.kind === 'psd') onPsd(r.value.psd);
  else onRound(r.value.spectrum);
}

/** A channel's PSD: the latest of each channel makes the band's next row. */
function onPsd(p: PsdView): void {
  S.psds.set(p.channel, p);
  S.psdFrames++;
}

/** A round: a row of every waterfall, the band's stitched from the latest PSDs about as finely as the canvas is wide. */
function onRound(f: SpectrumView): void {
  for (const c of f.channels) S.centersHz.set(c.channel, c.centerMHz * 1e6);
  if (S.channels.length === 0) {
    S.channels = f.channels.map((c) => c.channel);
    buildBars(S);
  }
  const points = Math.max(64, $('band').clientWidth - BAND_LEFT - BAND_RIGHT);
  S.rows.push({
    round: f.round,
    startUs: f.startUs,
    endUs: f.endUs,
    cells: new Map(f.channels.map((c) => [c.channel, c])),
    r1: S.state ? S.r1 : null,
    band: bandRow(S, points),
  });
  if (S.rows.length > MAX_ROWS) S.rows.splice(0, S.rows.length - MAX_ROWS);
  S.latest = f;
  S.frames++;
  scheduleDraw();
}

function onEvent(m: OnWire<EventMessage>): void {
  let text: string | null = null;
  switch (m.kind) {
    case 'r1': {
      S.r1 = m.channel;
      S.r1Reason = m.reason;
      const last = S.rows[S.rows.length - 1];
      if (last && S.state) last.r1 = m.channel;
      if (m.changed) text = `R1 moved to channel <b>${dash(m.channel)}</b> (${esc(m.reason)})`;
      renderTiles();
      scheduleDraw();
      break;
    }
    case 'r2':
      S.r2 = m.channel;
      $('r2').innerHTML = dash(m.channel);
      break;
    case 'config':
      S.configVersion = m.version;
      $('config-version').textContent = String(m.version).slice(0, 12);
      text = `configuration ${esc(String(m.version).slice(0, 12))}: ${esc(m.changed.join(', ') || 'no change')}`;
      break;
    case 'vnf': {
      const v = m.event;
      const why = v.kind === 'stopped' && v.reason ? `: ${esc(v.reason)}` : v.kind === 'failed' && v.error ? `: ${esc(v.error)}` : '';
      text = `VNF ${esc(v.id)} (${esc(v.type)}) ${esc(v.kind)}${why}`;
      break;
    }
    case 'neighbour':
      text = `neighbour ${esc(m.addr)} <span class="pill ${m.up ? 'up">up' : 'down">down'}</span>`;
      break;
    case 'record':
      text = showRecording(m.recording);
      break;
  }
  if (text === null) return;
  S.events.unshift(`<li><span class="t">${esc(fmtClock(m.atUs))}</span><span class="k ${esc(m.kind)}">${esc(m.kind)}</span><span>${text}</span></li>`);
  if (S.events.length > MAX_EVENTS) S.events.length = MAX_EVENTS;
  $('events').innerHTML = S.events.join('');
  $('events-empty').hidden = true;
  $('event-count').textContent = String(S.events.length);
}

// ---- recording -------------------------------------------------------------

/** A path of the monitor's, with the page's own token. */
function withToken(path: string): string {
  const u = new URL(path, location.href);
  u.search = token !== null ? `?token=${encodeURIComponent(token)}` : '';
  return u.href;
}

/** Shows a recording's state by the Record button (links to its files once done); its line for the events. */
function showRecording(r: OnWire<EventMessage & { kind: 'record' }>['recording']): string {
  const name = esc(r.name);
  let line: string;
  if (r.state === 'recording') line = `recording ${name} (${esc(r.seconds)} s)`;
  else if (r.state === 'done') {
    const link = (ext: string): string => `<a href="${esc(withToken(`recordings/${encodeURIComponent(`${r.name}.${ext}`)}`))}" download>${ext}</a>`;
    line = `${name}: ${esc(r.samples)} samples in ${esc(r.captures)} captures (${esc(r.reason ?? '')}) &middot; ${link('sigmf-meta')} ${link('sigmf-data')}`;
  } else line = `${name} failed: ${esc(r.error ?? r.reason ?? '')}`;
  $('rec-status').innerHTML = line;
  ($('rec-go') as HTMLButtonElement).disabled = r.state === 'recording';
  return line;
}

/** Asks the router to record the next N seconds (POST /record); its answer, or why not, by the button. */
async function startRecording(): Promise<void> {
  const seconds = Number(($('rec-s') as HTMLInputElement).value);
  const status = $('rec-status');
  try {
    const res = await fetch(withToken('record'), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ seconds }) });
    if (res.status !== 202) status.textContent = `not recording: ${(await res.text()).trim()}`;
  } catch (e) {
    status.textContent = `not recording: ${(e as Error).message}`;
  }
}

$('rec-go').addEventListener('click', () => void startRecording());

// ---- state -----------------------------------------------------------------

function onState(m: OnWire<StateMessage>): void {
  S.state = m;
  S.r1 = m.status.r1.channel;
  S.r1Reason = m.status.r1.reason;
  S.r2 = m.status.r2.channel;
  S.r3 = m.status.r3.channel;
  if (m.status.configVersion) {
    S.configVersion = m.status.configVersion;
    $('config-version').textContent = String(S.configVersion).slice(0, 12);
  }
  renderTiles();
  renderTables(m);
  renderGateway(m.gateway);
  scheduleDraw();
}

function renderTiles(): void {
  const st = S.state?.status;
  $('r1').innerHTML = dash(S.r1);
  $('r3').innerHTML = dash(S.r3);
  if (!st) return;
  const since = st.r1.since !== null ? fmtAge(st.atUs - st.r1.since) : '&ndash;';
  $('r1-info').innerHTML = `for ${since} &middot; ${dash(S.r1Reason)}`;
  $('r2').innerHTML = dash(S.r2);
  $('r2-dwell').innerHTML = st.r2.dwellEndUs !== null && st.r2.dwellEndUs > st.atUs ? `${fmtAge(st.r2.dwellEndUs - st.atUs)} left` : '&ndash;';
  $('r2-switches').textContent = String(st.r2.switches);
  const sn = st.sensing;
  $('sensing-info').innerHTML =
    `${esc(sn.durationMs)} / ${esc(sn.periodMs)} ms &middot; CCA ${esc(sn.ccaThresholdDbm)} dBm${sn.transmitPaused ? ' &middot; <b>TX paused</b>' : ''}`;
  $('uptime').textContent = fmtUptime(st.uptimeS);
  $('r3-info').textContent = st.mesh ? 'common control channel' : 'no air medium: sensing only';
}

function renderTables(m: OnWire<StateMessage>): void {
  const now = m.atUs;
  $('nbr-count').textContent = String(m.neighbours.length);
  $('route-count').textContent = String(m.routes.length);
  $('flow-count').textContent = String(m.flows.length);
  $('vnf-count').textContent = String(m.vnfs.length);

  setRows(
    'neighbours',
    m.neighbours
      .slice()
      .sort((a, b) => a.addr - b.addr)
      .map(
        (n) =>
          `<tr data-addr="${esc(n.addr)}"><td class="mono">${esc(n.addr)}</td><td>${chBadge(n.r1Channel)}</td><td class="num">${fmtAge(now - n.lastHeardUs)} ago</td><td class="num">${fmtAge(n.lostAtUs - now)}</td></tr>`,
      ),
  );

  setRows(
    'routes',
    m.routes
      .slice()
      .sort((a, b) => a.dst - b.dst)
      .map((r) => {
        const paths = r.paths
          .map(
            (p) =>
              `<span class="path${p.chosen ? ' chosen' : ''}" title="last hop ${esc(p.lastHop)}">via <b>${esc(p.nextHop)}</b> &middot; ${esc(p.hopCount)} hop${p.hopCount === 1 ? '' : 's'} &middot; ${fmtCost(p.pathCost)}</span>`,
          )
          .join('');
        return `<tr data-dst="${esc(r.dst)}"><td class="mono">${esc(r.dst)}</td><td><span class="pill ${esc(r.state)}">${esc(r.state)}</span></td><td class="mono">${dash(r.chosen)}</td><td class="num">${dash(r.seq)}</td><td><div class="paths">${paths || '<span class="muted">no valid path</span>'}</div></td></tr>`;
      }),
  );

  setRows(
    'flows',
    m.flows
      .slice()
      .sort((a, b) => a.flow - b.flow)
      .map(
        (f) =>
          `<tr><td>${esc(f.proto)}</td><td class="mono">${esc(f.src)} &rarr; ${esc(f.dst)}</td><td class="num">${esc(f.flow)}</td><td>${esc(f.role)}</td><td class="num">${esc(f.packets)}</td><td class="num">${fmtBytes(f.bytes)}</td><td class="mono">${dash(f.nextHop)}</td><td class="num">${fmtAge(now - f.lastUs)} ago</td></tr>`,
      ),
  );

  setRows(
    'vnfs',
    m.vnfs
      .slice()
      .sort((a, b) => a.id - b.id)
      .map((v) => {
        const counters = Object.keys(v.counters)
          .map((k) => `${esc(k)} ${esc(v.counters[k])}`)
          .join(' &middot; ');
        return `<tr data-id="${esc(v.id)}"><td class="num">${esc(v.id)}</td><td>${esc(v.type)}</td><td class="mono">${esc(fmtFlow(v.flow))}${counters ? `<div class="muted">${counters}</div>` : ''}</td><td><span class="pill ${esc(v.state)}" title="${esc(v.reason ?? '')}">${esc(v.state)}</span></td><td class="num">${esc(v.packetsTaken)} / ${esc(v.packetsForwarded)} / ${esc(v.packetsSent)}</td></tr>`;
      }),
  );

  const cap = S.hello?.queuePackets || 1;
  let total = 0;
  setRows(
    'queues',
    m.queues
      .slice()
      .sort((a, b) => a.channel - b.channel)
      .map((q) => {
        total += q.packets;
        const pct = Math.min(100, (q.packets / cap) * 100);
        return `<tr data-channel="${esc(q.channel)}"${q.channel === S.r2 ? ' class="serving" title="R2 serves this queue"' : ''}><td>${chBadge(q.channel)}</td><td class="num">${esc(q.packets)}</td><td class="num">${fmtBytes(q.bytes)}</td><td><div class="qbar"><i style="width:${pct.toFixed(1)}%"></i></div></td></tr>`;
      }),
  );
  $('queue-total').textContent = `${total} packets queued`;

  const st = m.status;
  const kv: string[] = [];
  for (const k of Object.keys(st.counters).sort()) kv.push(`<div><span title="${esc(k)}">${esc(k)}</span><span>${esc(st.counters[k])}</span></div>`);
  for (const k of Object.keys(st.drops).sort()) {
    const n = st.drops[k] ?? 0;
    kv.push(`<div class="${n > 0 ? 'drop' : ''}"><span title="drops: ${esc(k)}">drop: ${esc(k)}</span><span>${esc(n)}</span></div>`);
  }
  $('counters').innerHTML = kv.join('') || '<span class="empty">no counters</span>';
}

// ---- drawing ---------------------------------------------------------------

let drawPending = false;

function scheduleDraw(): void {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(() => {
    drawPending = false;
    draw();
  });
}

let bandLegend = '';

function draw(): void {
  const band = $<HTMLCanvasElement>('band');
  const { lo, hi } = dbRange(S, Math.ceil(band.clientHeight / ROW_PX));
  drawSpectrum(S, $<HTMLCanvasElement>('spectrum'), lo, hi);
  drawBand(S, band, lo, hi);
  if (bandLegend !== `${lo} ${hi}`) {
    bandLegend = `${lo} ${hi}`;
    const step = hi - lo > 60 ? 20 : 10;
    legend(
      $('band-legend'),
      VIRIDIS,
      Array.from({ length: Math.floor((hi - lo) / step) + 1 }, (_, i) => lo + i * step),
      lo,
      hi,
      'dBm/Hz',
    );
  }
  $('psd-info').textContent = S.hello?.psd ? `${S.psds.size} channels · ${S.hello.psd.bins} bins · ${S.hello.psd.segments} segments` : '';
  drawWaterfall(S, $<HTMLCanvasElement>('power'), (c) => c.powerDbm, POWER_LUT, POWER_MIN, POWER_MAX, false);
  drawWaterfall(S, $<HTMLCanvasElement>('wfall'), (c) => c.w, W_LUT, 0, 1, true);
  updateBars(S);
  const f = S.latest;
  $('round').innerHTML = f ? `#${esc(f.round)}<small>${esc(Math.round((f.endUs - f.startUs) / 1000))} ms sensed</small>` : '&ndash;';
  $('frames').textContent = `${S.frames} frames${S.psdFrames > 0 ? ` · ${S.psdFrames} PSD frames` : ''}`;
}

for (const id of ['power', 'wfall']) {
  const cv = $<HTMLCanvasElement>(id);
  cv.addEventListener('mousemove', (e) => hover(S, cv, e));
}
for (const id of ['spectrum', 'band']) {
  const cv = $<HTMLCanvasElement>(id);
  cv.addEventListener('mousemove', (e) => hoverBand(S, cv, e, id === 'band'));
}
legend($('power-legend'), VIRIDIS, [-100, -80, -60, -40], POWER_MIN, POWER_MAX, 'dBm');
legend($('w-legend'), INFERNO, [0, 0.25, 0.5, 0.75, 1], 0, 1, 'w');
const resized = new ResizeObserver(() => scheduleDraw());
for (const id of ['spectrum', 'band', 'power', 'wfall']) resized.observe($(id));
connect();
