/**
 * The monitor's web page: one self-contained HTML document (inline CSS and
 * plain JavaScript, nothing fetched but the stream) that the monitor serves
 * at `/`. It opens `/stream` with the page's own `?token=`, parses the binary
 * frames with FRAME_PARSER_JS (the twin of frames.ts) and draws the router:
 * power and w waterfalls, RC of the latest round, R1/R2/R3, queues,
 * neighbours, routes, VNFs, flows and events. It reconnects with backoff.
 *
 * Marked for tests: `#power` and `#wfall` carry `data-rounds` (rows drawn)
 * and `data-last-round`; `#status` reads connected, connecting or
 * disconnected; `#r1`, `#r2`, `#r3` the channels; `#rc .bar[data-channel]`
 * one bar a channel (`.r1` on R1's); `#routes tbody tr[data-dst]`,
 * `#neighbours tbody tr[data-addr]`, `#vnfs tbody tr[data-id]`,
 * `#flows tbody tr`, `#queues tbody tr[data-channel]`.
 *
 * The script is written without template literals or backslashes, so this
 * TypeScript string holds it verbatim.
 */

/**
 * `parseFrame(bytes)` in plain JavaScript: the same checks in the same order
 * as frames.ts's parser, over an ArrayBuffer or a typed array. Returns
 * `{ ok: true, value }` or `{ ok: false, code, at, message }`.
 */
export const FRAME_PARSER_JS = `function parseFrame(buf) {
  var u8 = ArrayBuffer.isView(buf) ? new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength) : new Uint8Array(buf);
  var HEADER = 24, CH = 24, TWO32 = 4294967296, MAXT = 9007199254740991;
  function fail(code, at, message) { return { ok: false, code: code, at: at, message: message }; }
  function bad(at, what) { return fail('FRAME_BAD_FIELD', at, 'bad frame field at byte ' + at + ': ' + what); }
  function trunc(have, need) { return fail('FRAME_TRUNCATED', have, 'frame truncated: ' + have + ' bytes, need ' + need); }
  if (u8.length < 1) return trunc(0, 1);
  if (u8[0] !== 0x53) return fail('FRAME_UNKNOWN_TYPE', 0, 'frame type ' + u8[0] + ' is not a spectrum frame (0x53)');
  if (u8.length < 2) return trunc(u8.length, HEADER);
  if (u8[1] !== 1) return fail('FRAME_BAD_VERSION', 1, 'frame version ' + u8[1] + ' is not 1');
  if (u8.length < HEADER) return trunc(u8.length, HEADER);
  var dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  var n = dv.getUint16(2, true);
  var want = HEADER + CH * n;
  if (u8.length < want) return trunc(u8.length, want);
  if (u8.length > want) return fail('FRAME_BAD_LENGTH', want, u8.length + ' bytes, but a frame of ' + n + ' channels is ' + want);
  var round = dv.getUint32(4, true);
  var startUs = dv.getUint32(12, true) * TWO32 + dv.getUint32(8, true);
  var endUs = dv.getUint32(20, true) * TWO32 + dv.getUint32(16, true);
  if (startUs > MAXT) return bad(8, 'startUs is beyond 2^53 us');
  if (endUs > MAXT) return bad(16, 'endUs is beyond 2^53 us');
  if (endUs < startUs) return bad(16, 'endUs ' + endUs + ' is before startUs ' + startUs);
  var channels = [], seen = {};
  for (var i = 0; i < n; i++) {
    var o = HEADER + CH * i;
    var channel = dv.getUint16(o, true);
    if (channel === 0) return bad(o, 'channel ' + i + ': number 0');
    if (seen[channel]) return bad(o, 'channel ' + i + ': ' + channel + ' is already in the frame');
    seen[channel] = true;
    if (dv.getUint16(o + 2, true) !== 0) return bad(o + 2, 'channel ' + channel + ': reserved field is not 0');
    var centerMHz = dv.getFloat32(o + 4, true);
    if (!(centerMHz > 0 && isFinite(centerMHz))) return bad(o + 4, 'channel ' + channel + ': centre ' + centerMHz + ' MHz');
    var w = dv.getFloat32(o + 8, true);
    if (!(w >= 0 && w <= 1)) return bad(o + 8, 'channel ' + channel + ': w ' + w + ' is not in [0, 1]');
    var ownW = dv.getFloat32(o + 12, true);
    if (ownW === ownW && !(ownW >= 0 && ownW <= 1)) return bad(o + 12, 'channel ' + channel + ': own w ' + ownW + ' is not in [0, 1] or NaN');
    var rcBps = dv.getFloat32(o + 16, true);
    if (!(rcBps >= 0 && isFinite(rcBps))) return bad(o + 16, 'channel ' + channel + ': RC ' + rcBps + ' bps');
    var powerDbm = dv.getFloat32(o + 20, true);
    if (powerDbm === powerDbm && !isFinite(powerDbm)) return bad(o + 20, 'channel ' + channel + ': power ' + powerDbm + ' dBm');
    channels.push({ channel: channel, centerMHz: centerMHz, w: w, ownW: ownW === ownW ? ownW : undefined, rcBps: rcBps, powerDbm: powerDbm === powerDbm ? powerDbm : undefined });
  }
  return { ok: true, value: { round: round, startUs: startUs, endUs: endUs, channels: channels } };
}`;

const CSS = `
:root {
  --bg: #0d1015; --panel: #151a21; --panel2: #1b212a; --line: #262d38; --text: #d8dee7; --muted: #8793a3; --dim: #5d6877;
  --r1: #2dd4bf; --r2: #f5b942; --r3: #a78bfa; --bad: #f87171; --good: #4ade80; --bar: #3b82f6;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace;
}
* { box-sizing: border-box; }
html, body { margin: 0; background: var(--bg); color: var(--text); font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
.muted { color: var(--muted); }
.mono { font-family: var(--mono); font-size: 12px; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
header.top { display: flex; align-items: center; gap: 18px; padding: 10px 18px; background: var(--panel); border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 2; }
.brand { font-size: 15px; font-weight: 600; letter-spacing: .2px; display: flex; align-items: center; gap: 8px; }
.brand b { color: var(--r1); font-weight: 600; }
.logo { width: 14px; height: 14px; border-radius: 3px; background: linear-gradient(135deg, #440154, #21908d 55%, #fde725); }
#node { color: var(--muted); }
#node b { color: var(--text); font-weight: 600; }
.spacer { flex: 1; }
.conn { display: flex; align-items: center; gap: 8px; padding: 3px 10px; border: 1px solid var(--line); border-radius: 999px; background: var(--panel2); }
.conn .dot { width: 8px; height: 8px; border-radius: 50%; background: var(--dim); }
.conn[data-state="connected"] .dot { background: var(--good); box-shadow: 0 0 6px var(--good); }
.conn[data-state="disconnected"] .dot { background: var(--bad); }
.conn[data-state="connecting"] .dot { background: var(--r2); }
main { padding: 14px 18px 8px; }
body.offline main { opacity: .55; }
.tiles { display: grid; grid-template-columns: repeat(6, minmax(0, 1fr)); gap: 12px; margin-bottom: 12px; }
.tile { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; border-top: 3px solid var(--line); min-width: 0; }
.tile.r1 { border-top-color: var(--r1); } .tile.r2 { border-top-color: var(--r2); } .tile.r3 { border-top-color: var(--r3); }
.tile .k { color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .6px; }
.tile .v { font-size: 26px; font-weight: 600; font-variant-numeric: tabular-nums; line-height: 1.25; }
.tile .v small { font-size: 13px; font-weight: 400; color: var(--muted); margin-left: 4px; }
.tile.r1 .v { color: var(--r1); } .tile.r2 .v { color: var(--r2); } .tile.r3 .v { color: var(--r3); }
.tile .s { color: var(--muted); font-size: 12px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
#vnfs td:nth-child(2) { white-space: nowrap; }
.grid { display: grid; grid-template-columns: repeat(12, minmax(0, 1fr)); gap: 12px; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px 12px; min-width: 0; }
.panel h2 { margin: 0 0 8px; font-size: 12px; font-weight: 600; text-transform: uppercase; letter-spacing: .6px; color: var(--text); display: flex; align-items: baseline; gap: 8px; }
.panel h2 small { text-transform: none; letter-spacing: 0; font-weight: 400; color: var(--muted); font-size: 12px; }
.panel h2 .count { margin-left: auto; color: var(--muted); font-weight: 400; }
#p-power, #p-w { grid-column: span 4; }
#p-rc { grid-column: span 4; }
#p-routes, #p-flows, #p-events { grid-column: span 7; }
#p-nbrs, #p-vnfs, #p-counters { grid-column: span 5; }
@media (max-width: 1180px) {
  .tiles { grid-template-columns: repeat(3, minmax(0, 1fr)); }
  #p-power, #p-w { grid-column: span 6; }
  #p-rc, #p-routes, #p-flows, #p-events, #p-nbrs, #p-vnfs, #p-counters { grid-column: span 12; }
}
canvas.wf { display: block; width: 100%; height: 330px; border-radius: 4px; background: #0a0d11; }
.legend { display: flex; align-items: center; gap: 10px; margin-top: 8px; font-size: 11px; color: var(--muted); }
.legend .scale { position: relative; flex: 1; height: 10px; border-radius: 2px; }
.legend .ticks { position: absolute; left: 0; right: 0; top: 12px; height: 12px; }
.legend .ticks span { position: absolute; transform: translateX(-50%); white-space: nowrap; font-variant-numeric: tabular-nums; }
.legend .ticks span:first-child { transform: none; } .legend .ticks span:last-child { transform: translateX(-100%); }
.legend .unit { min-width: 28px; }
.legend .na { display: flex; align-items: center; gap: 4px; white-space: nowrap; }
.legend .na i { width: 10px; height: 10px; border-radius: 2px; background: #262b33; display: inline-block; }
.legend-wrap { padding-bottom: 14px; }
.bars { display: flex; align-items: flex-end; gap: 5px; height: 190px; padding: 4px 0 0; }
.bar { flex: 1; display: flex; flex-direction: column; align-items: center; gap: 3px; min-width: 0; height: 100%; }
.bar .val { font-size: 10px; color: var(--muted); font-variant-numeric: tabular-nums; height: 14px; }
.bar .track { flex: 1; width: 100%; background: var(--panel2); border-radius: 3px; display: flex; align-items: flex-end; overflow: hidden; }
.bar .fill { width: 100%; background: #35506f; border-radius: 3px 3px 0 0; transition: height .25s; }
.bar .ch { font-size: 12px; font-weight: 600; font-variant-numeric: tabular-nums; }
.bar .tags { height: 14px; display: flex; gap: 2px; }
.tag { font-size: 9px; font-weight: 700; padding: 0 3px; border-radius: 3px; line-height: 14px; color: #0d1015; }
.tag.r1 { background: var(--r1); } .tag.r2 { background: var(--r2); } .tag.r3 { background: var(--r3); }
.bar.r1 .fill { background: var(--r1); } .bar.r1 .val, .bar.r1 .ch { color: var(--r1); }
.bar.r3 .fill { background: #4c3f73; }
.bar.best .val { color: var(--text); }
h2.sub { margin-top: 14px !important; }
table { width: 100%; border-collapse: collapse; }
th { text-align: left; font-weight: 500; color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .4px; padding: 4px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
th.num { text-align: right; }
td { padding: 5px 8px; border-bottom: 1px solid #1e242d; vertical-align: top; }
tbody tr:hover { background: var(--panel2); }
.empty { color: var(--dim); padding: 10px 8px; font-style: italic; }
.ch-badge { display: inline-block; min-width: 22px; text-align: center; padding: 0 5px; border-radius: 4px; background: var(--panel2); border: 1px solid var(--line); font-variant-numeric: tabular-nums; }
.ch-badge.r1 { border-color: var(--r1); color: var(--r1); }
.pill { display: inline-block; padding: 0 7px; border-radius: 999px; font-size: 11px; line-height: 18px; border: 1px solid var(--line); }
.pill.valid, .pill.running, .pill.up { color: var(--good); border-color: #1f5136; background: #10241a; }
.pill.invalid, .pill.failed, .pill.down { color: var(--bad); border-color: #5b2323; background: #2a1414; }
.pill.stopped { color: var(--muted); }
.paths { display: flex; flex-wrap: wrap; gap: 4px; }
.path { font-size: 11px; padding: 1px 6px; border-radius: 4px; background: var(--panel2); border: 1px solid var(--line); color: var(--muted); white-space: nowrap; font-variant-numeric: tabular-nums; }
.path.chosen { color: var(--text); border-color: var(--r1); }
.path b { color: var(--text); font-weight: 600; }
.qbar { height: 6px; background: var(--panel2); border-radius: 3px; overflow: hidden; min-width: 80px; margin-top: 5px; }
.qbar i { display: block; height: 100%; background: var(--bar); }
tr.serving td:first-child .ch-badge { border-color: var(--r2); color: var(--r2); }
.kv { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 2px 18px; font-size: 12px; }
.kv div { display: flex; justify-content: space-between; gap: 8px; border-bottom: 1px solid #1e242d; padding: 2px 0; min-width: 0; }
.kv span:first-child { color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.kv span:last-child { font-variant-numeric: tabular-nums; }
.kv .drop span:last-child { color: var(--bad); }
#events { list-style: none; margin: 0; padding: 0; max-height: 220px; overflow: auto; font-size: 12px; }
#events li { display: grid; grid-template-columns: 92px 84px 1fr; gap: 8px; padding: 3px 2px; border-bottom: 1px solid #1e242d; }
#events .t { color: var(--dim); font-variant-numeric: tabular-nums; }
#events .k { font-size: 10px; font-weight: 700; text-transform: uppercase; letter-spacing: .5px; }
#events .k.r1 { color: var(--r1); } #events .k.config { color: var(--r3); } #events .k.vnf { color: var(--r2); } #events .k.neighbour { color: var(--bar); }
.scroll { max-height: 260px; overflow: auto; }
footer { color: var(--dim); font-size: 11px; padding: 4px 18px 14px; display: flex; gap: 16px; }
`;

const BODY = `
<header class="top">
  <div class="brand"><span class="logo"></span>cogmesh <b>monitor</b></div>
  <div id="node">waiting for the router</div>
  <div class="spacer"></div>
  <div class="conn" id="conn" data-state="connecting"><span class="dot"></span><span id="status">connecting</span><span id="retry" class="muted"></span></div>
</header>
<main>
  <section class="tiles">
    <div class="tile r1"><div class="k">R1 &middot; receive</div><div class="v"><span id="r1">&ndash;</span></div><div class="s" id="r1-info">&nbsp;</div></div>
    <div class="tile r2"><div class="k">R2 &middot; switching</div><div class="v"><span id="r2">&ndash;</span></div><div class="s">dwell <span id="r2-dwell">&ndash;</span> &middot; <span id="r2-switches">0</span> switches</div></div>
    <div class="tile r3"><div class="k">R3 &middot; control</div><div class="v"><span id="r3">&ndash;</span></div><div class="s" id="r3-info">common control channel</div></div>
    <div class="tile"><div class="k">Sensing round</div><div class="v" id="round">&ndash;</div><div class="s" id="sensing-info">&nbsp;</div></div>
    <div class="tile"><div class="k">Mesh</div><div class="v"><span id="nbr-count">0</span><small>neighbours</small></div><div class="s"><span id="route-count">0</span> routes &middot; <span id="flow-count">0</span> flows &middot; <span id="vnf-count">0</span> VNFs</div></div>
    <div class="tile"><div class="k">Uptime</div><div class="v" id="uptime">&ndash;</div><div class="s">config <span id="config-version" class="mono">&ndash;</span></div></div>
  </section>
  <section class="grid">
    <div class="panel" id="p-power">
      <h2>Power per channel <small>dBm &middot; newest round on top</small></h2>
      <canvas id="power" class="wf" data-rounds="0"></canvas>
      <div class="legend-wrap"><div class="legend" id="power-legend"></div></div>
    </div>
    <div class="panel" id="p-w">
      <h2>Workload w per channel <small>merged &middot; white tick: R1</small></h2>
      <canvas id="wfall" class="wf" data-rounds="0"></canvas>
      <div class="legend-wrap"><div class="legend" id="w-legend"></div></div>
    </div>
    <div class="panel" id="p-rc">
      <h2>Remaining capacity <small>latest round &middot; Mbps</small><span class="count" id="rc-round"></span></h2>
      <div id="rc" class="bars"></div>
      <h2 class="sub">Queues <small>R2, per channel</small><span class="count" id="queue-total"></span></h2>
      <div class="scroll"><table id="queues"><thead><tr><th>Channel</th><th class="num">Packets</th><th class="num">Bytes</th><th>Fill</th></tr></thead><tbody></tbody></table>
      <div class="empty" id="queues-empty">no queues</div></div>
    </div>
    <div class="panel" id="p-routes">
      <h2>Routes <small>multipath AODV &middot; chosen path outlined</small></h2>
      <div class="scroll"><table id="routes"><thead><tr><th>Destination</th><th>State</th><th>Next hop</th><th class="num">Seq</th><th>Paths (next hop &middot; hops &middot; cost)</th></tr></thead><tbody></tbody></table>
      <div class="empty" id="routes-empty">no routes</div></div>
    </div>
    <div class="panel" id="p-nbrs">
      <h2>Neighbours</h2>
      <div class="scroll"><table id="neighbours"><thead><tr><th>Address</th><th>R1 channel</th><th class="num">Last heard</th><th class="num">Lost in</th></tr></thead><tbody></tbody></table>
      <div class="empty" id="neighbours-empty">no neighbours heard</div></div>
    </div>
    <div class="panel" id="p-flows">
      <h2>Flows</h2>
      <div class="scroll"><table id="flows"><thead><tr><th>Proto</th><th>Source &rarr; destination</th><th class="num">Flow</th><th>Role</th><th class="num">Packets</th><th class="num">Bytes</th><th>Next hop</th><th class="num">Last</th></tr></thead><tbody></tbody></table>
      <div class="empty" id="flows-empty">no traffic</div></div>
    </div>
    <div class="panel" id="p-vnfs">
      <h2>VNFs</h2>
      <div class="scroll"><table id="vnfs"><thead><tr><th class="num">Id</th><th>Type</th><th>Flow</th><th>State</th><th class="num">Taken / fwd / sent</th></tr></thead><tbody></tbody></table>
      <div class="empty" id="vnfs-empty">no VNFs</div></div>
    </div>
    <div class="panel" id="p-events">
      <h2>Events <small>R1 moves, neighbours, VNFs, configuration</small><span class="count" id="event-count"></span></h2>
      <ol id="events"></ol>
      <div class="empty" id="events-empty">no events yet</div>
    </div>
    <div class="panel" id="p-counters">
      <h2>Counters <small>drops in red</small></h2>
      <div class="kv" id="counters"></div>
    </div>
  </section>
</main>
<footer><span id="proto">protocol &ndash;</span><span id="frames">0 frames</span><span id="bad-frames"></span></footer>
`;

const SCRIPT = `
'use strict';
${FRAME_PARSER_JS}

var ROW_PX = 2, MAX_ROWS = 600, MAX_EVENTS = 200;
var POWER_MIN = -100, POWER_MAX = -40;
var VIRIDIS = ['#440154', '#482878', '#3e4989', '#31688e', '#26828e', '#1f9e89', '#35b779', '#6ece58', '#b5de2b', '#fde725'];
var INFERNO = ['#000004', '#1b0c41', '#4a0c6b', '#781c6d', '#a52c60', '#cf4446', '#ed6925', '#fb9b06', '#f7d13d', '#fcffa4'];
var NA_FILL = '#262b33';

function hexRgb(h) { return [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)]; }
function makeLut(stops) {
  var rgb = stops.map(hexRgb), out = [];
  for (var i = 0; i < 256; i++) {
    var x = i / 255 * (rgb.length - 1), k = Math.min(rgb.length - 2, Math.floor(x)), f = x - k;
    var c = [0, 1, 2].map(function (j) { return Math.round(rgb[k][j] + (rgb[k + 1][j] - rgb[k][j]) * f); });
    out.push('rgb(' + c.join(',') + ')');
  }
  return out;
}
var POWER_LUT = makeLut(VIRIDIS), W_LUT = makeLut(INFERNO);
function colourOf(lut, v, lo, hi) {
  var i = Math.round((v - lo) / (hi - lo) * 255);
  return lut[i < 0 ? 0 : i > 255 ? 255 : i];
}

var S = { hello: null, channels: [], rows: [], latest: null, state: null, r1: null, r2: null, r3: null, r1Reason: null, events: [], frames: 0, badFrames: 0, configVersion: null };
var token = new URLSearchParams(location.search).get('token');
function $(id) { return document.getElementById(id); }
function esc(v) {
  return String(v).replace(/[&<>"']/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]; });
}
function dash(v) { return v === null || v === undefined ? '&ndash;' : esc(v); }
function fmtMbps(bps) { return (bps / 1e6).toFixed(2); }
function fmtBytes(n) {
  if (n < 1000) return n + ' B';
  if (n < 1e6) return (n / 1e3).toFixed(1) + ' kB';
  if (n < 1e9) return (n / 1e6).toFixed(1) + ' MB';
  return (n / 1e9).toFixed(2) + ' GB';
}
function fmtAge(us) {
  if (us === null || us === undefined || !isFinite(us)) return '&ndash;';
  var neg = us < 0; us = Math.abs(us);
  var s = us < 1e6 ? Math.round(us / 1e3) + ' ms' : us < 6e7 ? (us / 1e6).toFixed(1) + ' s' : Math.floor(us / 6e7) + ' min ' + Math.round(us % 6e7 / 1e6) + ' s';
  return neg ? '-' + s : s;
}
function fmtUptime(s) {
  s = Math.floor(s);
  var h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), r = s % 60;
  function two(x) { return (x < 10 ? '0' : '') + x; }
  return h > 0 ? h + 'h ' + two(m) + 'm' : m > 0 ? m + 'm ' + two(r) + 's' : r + 's';
}
function fmtClock(atUs) {
  if (atUs > 1e15) {
    var d = new Date(atUs / 1000);
    function two(x) { return (x < 10 ? '0' : '') + x; }
    return two(d.getHours()) + ':' + two(d.getMinutes()) + ':' + two(d.getSeconds()) + '.' + String(d.getMilliseconds()).padStart(3, '0');
  }
  return 't=' + (atUs / 1e6).toFixed(3) + ' s';
}
function fmtCost(c) { return c === null || c === undefined ? '&infin;' : (Math.round(c * 100) / 100).toString(); }
function fmtFlow(p) {
  if (!p) return '*';
  function or(v) { return v === undefined || v === null ? '*' : v; }
  return or(p.proto) + ' ' + or(p.srcIp) + ':' + or(p.srcPort) + ' > ' + or(p.dstIp) + ':' + or(p.dstPort);
}
function chBadge(ch) {
  if (ch === null || ch === undefined) return '<span class="muted">&ndash;</span>';
  return '<span class="ch-badge' + (ch === S.r1 ? ' r1' : '') + '">' + esc(ch) + '</span>';
}
function setRows(id, html) {
  var t = $(id);
  t.tBodies[0].innerHTML = html.join('');
  $(id + '-empty').hidden = html.length > 0;
}

// ---- connection ----------------------------------------------------------
var ws = null, backoffMs = 500, retryTimer = null;
function setStatus(s, retry) {
  $('conn').dataset.state = s;
  $('status').textContent = s;
  $('retry').textContent = retry || '';
  document.body.classList.toggle('offline', s !== 'connected');
}
function connect() {
  retryTimer = null;
  setStatus('connecting');
  var u = new URL('stream', location.href);
  u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  u.search = token !== null ? '?token=' + encodeURIComponent(token) : '';
  u.hash = '';
  var sock;
  try { sock = new WebSocket(u.href); } catch (e) { scheduleReconnect(); return; }
  ws = sock;
  sock.binaryType = 'arraybuffer';
  sock.onmessage = function (e) {
    if (typeof e.data === 'string') {
      var m;
      try { m = JSON.parse(e.data); } catch (err) { return; }
      onMessage(m);
    } else onFrame(e.data);
  };
  sock.onclose = function () {
    if (ws !== sock) return;
    ws = null;
    scheduleReconnect();
  };
}
function scheduleReconnect() {
  // In the viewer's browser, not a router core: the jitter only keeps many open pages from
  // reconnecting in step after a router restarts, so nothing here needs to be reproducible.
  var delay = backoffMs * (1 + Math.random() * 0.2);
  backoffMs = Math.min(backoffMs * 2, 10000);
  setStatus('disconnected', ' · retrying in ' + (delay / 1000).toFixed(1) + ' s');
  retryTimer = setTimeout(connect, delay);
}

function onMessage(m) {
  if (m.type === 'hello') onHello(m);
  else if (m.type === 'state') onState(m);
  else if (m.type === 'event') onEvent(m);
}

function onHello(m) {
  backoffMs = 500;
  S.hello = m;
  S.channels = m.channels.slice();
  S.rows = [];
  S.latest = null;
  S.r1 = null;
  S.configVersion = m.configVersion;
  $('node').innerHTML = '<b>' + esc(m.node.name) + '</b> &middot; node ' + esc(m.node.id);
  document.title = m.node.name + ' · cogmesh monitor';
  $('proto').textContent = 'protocol ' + m.protocol + (m.protocol !== 1 ? ' (this page speaks 1)' : '');
  $('config-version').textContent = String(m.configVersion).slice(0, 12);
  buildBars();
  setStatus('connected');
  scheduleDraw();
}

function onFrame(buf) {
  var r = parseFrame(buf);
  if (!r.ok) {
    S.badFrames++;
    $('bad-frames').textContent = S.badFrames + ' bad frames (last: ' + r.code + ')';
    return;
  }
  var f = r.value, cells = {};
  for (var i = 0; i < f.channels.length; i++) cells[f.channels[i].channel] = f.channels[i];
  if (S.channels.length === 0) { S.channels = f.channels.map(function (c) { return c.channel; }); buildBars(); }
  S.rows.push({ round: f.round, startUs: f.startUs, endUs: f.endUs, cells: cells, r1: S.state ? S.r1 : null });
  if (S.rows.length > MAX_ROWS) S.rows.splice(0, S.rows.length - MAX_ROWS);
  S.latest = f;
  S.frames++;
  scheduleDraw();
}

function onEvent(m) {
  var text = null;
  if (m.kind === 'r1') {
    S.r1 = m.channel;
    S.r1Reason = m.reason;
    var last = S.rows[S.rows.length - 1];
    if (last && S.state) last.r1 = m.channel;
    if (m.changed) text = 'R1 moved to channel <b>' + dash(m.channel) + '</b> (' + esc(m.reason) + ')';
    renderTiles();
    scheduleDraw();
  } else if (m.kind === 'r2') {
    S.r2 = m.channel;
    $('r2').innerHTML = dash(m.channel);
  } else if (m.kind === 'config') {
    S.configVersion = m.version;
    $('config-version').textContent = String(m.version).slice(0, 12);
    text = 'configuration ' + esc(String(m.version).slice(0, 12)) + ': ' + esc(m.changed.join(', ') || 'no change');
  } else if (m.kind === 'vnf') {
    var v = m.event;
    text = 'VNF ' + esc(v.id) + ' (' + esc(v.type) + ') ' + esc(v.kind) + (v.reason ? ': ' + esc(v.reason) : '') + (v.error ? ': ' + esc(v.error) : '');
  } else if (m.kind === 'neighbour') {
    text = 'neighbour ' + esc(m.addr) + ' <span class="pill ' + (m.up ? 'up">up' : 'down">down') + '</span>';
  }
  if (text === null) return;
  S.events.unshift('<li><span class="t">' + esc(fmtClock(m.atUs)) + '</span><span class="k ' + esc(m.kind) + '">' + esc(m.kind) + '</span><span>' + text + '</span></li>');
  if (S.events.length > MAX_EVENTS) S.events.length = MAX_EVENTS;
  $('events').innerHTML = S.events.join('');
  $('events-empty').hidden = true;
  $('event-count').textContent = String(S.events.length);
}

// ---- state ---------------------------------------------------------------
function onState(m) {
  S.state = m;
  S.r1 = m.status.r1.channel;
  S.r1Reason = m.status.r1.reason;
  S.r2 = m.status.r2.channel;
  S.r3 = m.status.r3.channel;
  if (m.status.configVersion) { S.configVersion = m.status.configVersion; $('config-version').textContent = String(S.configVersion).slice(0, 12); }
  renderTiles();
  renderTables();
  scheduleDraw();
}

function renderTiles() {
  var st = S.state && S.state.status;
  $('r1').innerHTML = dash(S.r1);
  $('r3').innerHTML = dash(S.r3);
  if (!st) return;
  var since = st.r1.since !== null ? fmtAge(st.atUs - st.r1.since) : '&ndash;';
  $('r1-info').innerHTML = 'for ' + since + ' &middot; ' + dash(S.r1Reason);
  $('r2').innerHTML = dash(S.r2);
  $('r2-dwell').innerHTML = st.r2.dwellEndUs !== null && st.r2.dwellEndUs > st.atUs ? fmtAge(st.r2.dwellEndUs - st.atUs) + ' left' : '&ndash;';
  $('r2-switches').textContent = String(st.r2.switches);
  var sn = st.sensing;
  $('sensing-info').innerHTML = esc(sn.durationMs) + ' / ' + esc(sn.periodMs) + ' ms &middot; CCA ' + esc(sn.ccaThresholdDbm) + ' dBm' + (sn.transmitPaused ? ' &middot; <b>TX paused</b>' : '');
  $('uptime').textContent = fmtUptime(st.uptimeS);
  $('r3-info').textContent = st.mesh ? 'common control channel' : 'no air medium: sensing only';
}

function renderTables() {
  var m = S.state, now = m.atUs;
  $('nbr-count').textContent = String(m.neighbours.length);
  $('route-count').textContent = String(m.routes.length);
  $('flow-count').textContent = String(m.flows.length);
  $('vnf-count').textContent = String(m.vnfs.length);

  setRows('neighbours', m.neighbours.slice().sort(function (a, b) { return a.addr - b.addr; }).map(function (n) {
    return '<tr data-addr="' + esc(n.addr) + '"><td class="mono">' + esc(n.addr) + '</td><td>' + chBadge(n.r1Channel) + '</td><td class="num">' + fmtAge(now - n.lastHeardUs) + ' ago</td><td class="num">' + fmtAge(n.lostAtUs - now) + '</td></tr>';
  }));

  setRows('routes', m.routes.slice().sort(function (a, b) { return a.dst - b.dst; }).map(function (r) {
    var paths = r.paths.map(function (p) {
      return '<span class="path' + (p.chosen ? ' chosen' : '') + '" title="last hop ' + esc(p.lastHop) + '">via <b>' + esc(p.nextHop) + '</b> &middot; ' + esc(p.hopCount) + ' hop' + (p.hopCount === 1 ? '' : 's') + ' &middot; ' + fmtCost(p.pathCost) + '</span>';
    }).join('');
    return '<tr data-dst="' + esc(r.dst) + '"><td class="mono">' + esc(r.dst) + '</td><td><span class="pill ' + esc(r.state) + '">' + esc(r.state) + '</span></td><td class="mono">' + dash(r.chosen) + '</td><td class="num">' + dash(r.seq) + '</td><td><div class="paths">' + (paths || '<span class="muted">no valid path</span>') + '</div></td></tr>';
  }));

  setRows('flows', m.flows.slice().sort(function (a, b) { return a.flow - b.flow; }).map(function (f) {
    return '<tr><td>' + esc(f.proto) + '</td><td class="mono">' + esc(f.src) + ' &rarr; ' + esc(f.dst) + '</td><td class="num">' + esc(f.flow) + '</td><td>' + esc(f.role) + '</td><td class="num">' + esc(f.packets) + '</td><td class="num">' + fmtBytes(f.bytes) + '</td><td class="mono">' + dash(f.nextHop) + '</td><td class="num">' + fmtAge(now - f.lastUs) + ' ago</td></tr>';
  }));

  setRows('vnfs', m.vnfs.slice().sort(function (a, b) { return a.id - b.id; }).map(function (v) {
    var counters = Object.keys(v.counters || {}).map(function (k) { return esc(k) + ' ' + esc(v.counters[k]); }).join(' &middot; ');
    return '<tr data-id="' + esc(v.id) + '"><td class="num">' + esc(v.id) + '</td><td>' + esc(v.type) + '</td><td class="mono">' + esc(fmtFlow(v.flow)) + (counters ? '<div class="muted">' + counters + '</div>' : '') + '</td><td><span class="pill ' + esc(v.state) + '" title="' + esc(v.reason || '') + '">' + esc(v.state) + '</span></td><td class="num">' + esc(v.packetsTaken) + ' / ' + esc(v.packetsForwarded) + ' / ' + esc(v.packetsSent) + '</td></tr>';
  }));

  var cap = (S.hello && S.hello.queuePackets) || 1, total = 0;
  setRows('queues', m.queues.slice().sort(function (a, b) { return a.channel - b.channel; }).map(function (q) {
    total += q.packets;
    var pct = Math.min(100, q.packets / cap * 100);
    return '<tr data-channel="' + esc(q.channel) + '"' + (q.channel === S.r2 ? ' class="serving" title="R2 serves this queue"' : '') + '><td>' + chBadge(q.channel) + '</td><td class="num">' + esc(q.packets) + '</td><td class="num">' + fmtBytes(q.bytes) + '</td><td><div class="qbar"><i style="width:' + pct.toFixed(1) + '%"></i></div></td></tr>';
  }));
  $('queue-total').textContent = total + ' packets queued';

  var st = m.status, kv = [];
  Object.keys(st.counters).sort().forEach(function (k) { kv.push('<div><span title="' + esc(k) + '">' + esc(k) + '</span><span>' + esc(st.counters[k]) + '</span></div>'); });
  Object.keys(st.drops).sort().forEach(function (k) { kv.push('<div class="' + (st.drops[k] > 0 ? 'drop' : '') + '"><span title="drops: ' + esc(k) + '">drop: ' + esc(k) + '</span><span>' + esc(st.drops[k]) + '</span></div>'); });
  $('counters').innerHTML = kv.join('') || '<span class="empty">no counters</span>';
}

// ---- drawing -------------------------------------------------------------
var drawPending = false;
function scheduleDraw() {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(function () { drawPending = false; draw(); });
}
function draw() {
  drawWaterfall($('power'), function (c) { return c.powerDbm; }, POWER_LUT, POWER_MIN, POWER_MAX, false);
  drawWaterfall($('wfall'), function (c) { return c.w; }, W_LUT, 0, 1, true);
  updateBars();
  var f = S.latest;
  $('round').innerHTML = f ? '#' + esc(f.round) + '<small>' + esc(Math.round((f.endUs - f.startUs) / 1000)) + ' ms sensed</small>' : '&ndash;';
  $('frames').textContent = S.frames + ' frames';
}

function drawWaterfall(cv, valueOf, lut, lo, hi, markR1) {
  var dpr = window.devicePixelRatio || 1, W = cv.clientWidth, H = cv.clientHeight;
  if (W === 0 || H === 0) return;
  if (cv.width !== Math.round(W * dpr) || cv.height !== Math.round(H * dpr)) { cv.width = Math.round(W * dpr); cv.height = Math.round(H * dpr); }
  var g = cv.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.fillStyle = '#0a0d11';
  g.fillRect(0, 0, W, H);
  var ax = 46, ay = 22, aw = W - ax - 6, ah = H - ay - 4;
  var cols = S.channels, nc = cols.length;
  g.font = '11px system-ui, sans-serif';
  g.textBaseline = 'middle';
  g.textAlign = 'center';
  var colX = [];
  for (var c = 0; c <= nc; c++) colX.push(Math.round(ax + aw * c / Math.max(1, nc)));
  for (c = 0; c < nc; c++) {
    var ch = cols[c], cx = (colX[c] + colX[c + 1]) / 2;
    if (ch === S.r1) {
      g.fillStyle = '#2dd4bf';
      g.fillRect(colX[c] + 1, 3, colX[c + 1] - colX[c] - 2, 15);
      g.fillStyle = '#0d1015';
    } else g.fillStyle = ch === S.r3 ? '#a78bfa' : '#8793a3';
    g.fillText(String(ch), cx, 11);
    if (ch === S.r2) { g.fillStyle = '#f5b942'; g.fillRect(colX[c] + 3, 19, colX[c + 1] - colX[c] - 6, 2); }
  }
  var cap = Math.max(1, Math.floor(ah / ROW_PX)), n = Math.min(cap, S.rows.length);
  for (var i = 0; i < n; i++) {
    var row = S.rows[S.rows.length - 1 - i], y = ay + i * ROW_PX;
    for (c = 0; c < nc; c++) {
      var cell = row.cells[cols[c]], v = cell ? valueOf(cell) : undefined;
      g.fillStyle = v === undefined || v === null ? '#262b33' : colourOf(lut, v, lo, hi);
      g.fillRect(colX[c], y, colX[c + 1] - colX[c] - 1, ROW_PX);
    }
    if (markR1 && row.r1 !== null && row.r1 !== undefined) {
      var k = cols.indexOf(row.r1);
      if (k >= 0) { g.fillStyle = 'rgba(255,255,255,0.9)'; g.fillRect(Math.round((colX[k] + colX[k + 1]) / 2) - 1, y, 2, ROW_PX); }
    }
  }
  // time gutter: the age of the row at each label
  g.textAlign = 'right';
  g.fillStyle = '#5d6877';
  if (n > 0) {
    var newest = S.rows[S.rows.length - 1].endUs;
    for (var yy = 0; yy < n * ROW_PX; yy += 50) {
      var r = S.rows[S.rows.length - 1 - Math.floor(yy / ROW_PX)];
      var age = (newest - r.endUs) / 1e6;
      g.fillText(yy === 0 ? 'now' : '-' + (age < 100 ? age.toFixed(age < 10 ? 1 : 0) : Math.round(age)) + ' s', ax - 6, ay + yy + 5);
      g.fillRect(ax - 3, ay + yy, 3, 1);
    }
  } else {
    g.textAlign = 'center';
    g.fillText('waiting for the first sensing round', ax + aw / 2, ay + ah / 2);
  }
  cv.geo = { ax: ax, ay: ay, colX: colX, n: n };
  cv.dataset.rounds = String(n);
  cv.dataset.lastRound = n > 0 ? String(S.rows[S.rows.length - 1].round) : '';
}

function legend(el, stops, ticks, lo, hi, unit) {
  var grad = 'linear-gradient(90deg, ' + stops.join(', ') + ')';
  var t = ticks.map(function (v) { return '<span style="left:' + ((v - lo) / (hi - lo) * 100).toFixed(2) + '%">' + v + '</span>'; }).join('');
  el.innerHTML = '<span class="unit">' + unit + '</span><div class="scale" style="background:' + grad + '"><div class="ticks">' + t + '</div></div><span class="na"><i></i>not sensed</span>';
}

function buildBars() {
  $('rc').innerHTML = S.channels.map(function (ch) {
    return '<div class="bar" data-channel="' + esc(ch) + '"><span class="val"></span><div class="track"><div class="fill" style="height:0%"></div></div><span class="ch">' + esc(ch) + '</span><span class="tags"></span></div>';
  }).join('');
}

function updateBars() {
  var f = S.latest, cap = (S.hello && S.hello.capacityBps) || 0, best = -1;
  var cells = {};
  if (f) f.channels.forEach(function (c) { cells[c.channel] = c; if (c.rcBps > best) best = c.rcBps; if (c.rcBps > cap) cap = c.rcBps; });
  $('rc-round').textContent = f ? 'round ' + f.round : '';
  var bars = $('rc').children;
  for (var i = 0; i < bars.length; i++) {
    var b = bars[i], ch = Number(b.dataset.channel), c = cells[ch];
    b.classList.toggle('r1', ch === S.r1);
    b.classList.toggle('r3', ch === S.r3);
    b.classList.toggle('best', !!c && c.rcBps === best);
    b.querySelector('.fill').style.height = c && cap > 0 ? (c.rcBps / cap * 100).toFixed(1) + '%' : '0%';
    b.querySelector('.val').textContent = c ? fmtMbps(c.rcBps) : '';
    b.title = c ? 'channel ' + ch + ' · ' + c.centerMHz + ' MHz · w ' + c.w.toFixed(3) + (c.ownW !== undefined ? ' (own ' + c.ownW.toFixed(3) + ')' : '') + ' · RC ' + fmtMbps(c.rcBps) + ' Mbps' + (c.powerDbm !== undefined ? ' · ' + c.powerDbm.toFixed(1) + ' dBm' : '') : 'channel ' + ch;
    var tags = '';
    if (ch === S.r1) tags += '<span class="tag r1">R1</span>';
    if (ch === S.r2) tags += '<span class="tag r2">R2</span>';
    if (ch === S.r3) tags += '<span class="tag r3">R3</span>';
    b.querySelector('.tags').innerHTML = tags;
  }
}

/** What the cell under the pointer holds, as the canvas's tooltip. */
function hover(cv, e) {
  var g = cv.geo, r = cv.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
  var text = '';
  if (g && y >= g.ay && x >= g.ax) {
    var i = Math.floor((y - g.ay) / ROW_PX), c = 0;
    while (c < S.channels.length && g.colX[c + 1] <= x) c++;
    var row = i < g.n ? S.rows[S.rows.length - 1 - i] : null, ch = S.channels[c];
    var cell = row && row.cells[ch];
    if (row && ch !== undefined) {
      text = 'channel ' + ch + ' · round ' + row.round + ' · ';
      text += !cell ? 'not in this round' : 'w ' + cell.w.toFixed(3) + ' · RC ' + fmtMbps(cell.rcBps) + ' Mbps · ' + (cell.powerDbm === undefined ? 'not visited' : cell.powerDbm.toFixed(1) + ' dBm');
      if (row.r1 === ch) text += ' · R1';
    }
  }
  if (cv.title !== text) cv.title = text;
}
['power', 'wfall'].forEach(function (id) { $(id).addEventListener('mousemove', function (e) { hover($(id), e); }); });
legend($('power-legend'), VIRIDIS, [-100, -90, -80, -70, -60, -50, -40], POWER_MIN, POWER_MAX, 'dBm');
legend($('w-legend'), INFERNO, [0, 0.25, 0.5, 0.75, 1], 0, 1, 'w');
new ResizeObserver(function () { scheduleDraw(); }).observe($('power'));
connect();
`;

/** The monitor's page, served at `/`. */
export const MONITOR_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cogmesh monitor</title>
<link rel="icon" href="data:,">
<style>${CSS}</style>
</head>
<body class="offline">
${BODY}
<script>${SCRIPT}</script>
</body>
</html>
`;
