import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CogmeshError } from '../core/errors.js';

/**
 * The monitor's web page: one self-contained HTML document (inline CSS and
 * the page's script, nothing fetched but the stream) that the monitor serves
 * at `/`. The script is `page/main.ts`, bundled for the browser by esbuild
 * (`npm run build:page`, part of `npm run build`) with the very frame parser
 * the server uses; this module inlines the bundle.
 *
 * Marked for tests: `#power` and `#wfall` carry `data-rounds` (rows drawn)
 * and `data-last-round`; `#band` (the band waterfall) `data-rows` and
 * `data-last-round`, `#spectrum` `data-drawn` ("line" once drawn); both
 * `data-plot` ("x y width height" of the plot, CSS pixels), `data-from-hz`,
 * `data-to-hz` (its frequency span), `data-mhz-ticks` (the MHz axis's
 * values) and `data-note` (why the plot is empty, or nothing); `#status` reads connected, connecting or
 * disconnected; `#r1`, `#r2`, `#r3` the channels; `#rc .bar[data-channel]`
 * one bar a channel (`.r1` on R1's); `#routes tbody tr[data-dst]`,
 * `#neighbours tbody tr[data-addr]`, `#vnfs tbody tr[data-id]`,
 * `#flows tbody tr`, `#queues tbody tr[data-channel]`; the gateway panel
 * `#p-gateway` (hidden without the role) has `#gateway tbody
 * tr[data-client]`, `#gw-slices .gw-slice[data-clients][data-share]` (and
 * `.idle` for the part of the frame no client has) and `#gw-graph
 * li[data-a][data-b][data-kind]`.
 */

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
#p-band { grid-column: span 12; }
#p-power, #p-w { grid-column: span 4; }
#p-rc { grid-column: span 4; }
#p-routes, #p-flows, #p-events { grid-column: span 7; }
#p-nbrs, #p-vnfs, #p-counters { grid-column: span 5; }
#p-gateway { grid-column: span 12; }
.gw-lower { display: grid; grid-template-columns: minmax(0, 7fr) minmax(0, 5fr); gap: 18px; }
.gw-frame { display: flex; height: 38px; background: var(--panel2); border: 1px solid var(--line); border-radius: 4px; overflow: hidden; }
.gw-slice { flex: 0 0 auto; min-width: 0; display: flex; flex-direction: column; justify-content: center; padding: 0 6px; border-right: 1px solid var(--bg); color: #0d1015; font-size: 11px; line-height: 1.3; overflow: hidden; }
.gw-slice span { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.gw-slice .who { font-weight: 600; } .gw-slice .pct { font-variant-numeric: tabular-nums; }
.gw-slice.s0 { background: var(--r1); } .gw-slice.s1 { background: var(--r2); } .gw-slice.s2 { background: var(--r3); } .gw-slice.s3 { background: #60a5fa; } .gw-slice.s4 { background: #f472b6; }
.gw-slice.idle { background: transparent; color: var(--dim); font-style: italic; }
.gw-axis { display: flex; justify-content: space-between; color: var(--dim); font-size: 11px; font-variant-numeric: tabular-nums; margin-top: 2px; }
.gw-edges { list-style: none; margin: 0; padding: 0; max-height: 160px; overflow: auto; font-size: 12px; }
.gw-edges li { display: flex; align-items: center; gap: 8px; padding: 3px 2px; border-bottom: 1px solid #1e242d; }
.gw-edges .pill { margin-left: auto; }
.pill.kind.same-ap { color: var(--r1); } .pill.kind.type-ii { color: var(--r2); } .pill.kind.type-iii { color: var(--r3); } .pill.kind.given { color: var(--muted); }
#gateway td.drop { color: var(--bad); }
@media (max-width: 1180px) {
  .tiles { grid-template-columns: repeat(3, minmax(0, 1fr)); }
  #p-power, #p-w { grid-column: span 6; }
  #spectrum { height: 220px; } #band { height: 240px; }
  #p-rc, #p-routes, #p-flows, #p-events, #p-nbrs, #p-vnfs, #p-counters { grid-column: span 12; }
  .gw-lower { grid-template-columns: minmax(0, 1fr); }
}
canvas.wf { display: block; width: 100%; height: 0; flex: 1 1 0; min-height: 330px; border-radius: 4px; background: #0a0d11; }
#p-power, #p-w, #p-band { display: flex; flex-direction: column; }
#spectrum { height: clamp(220px, 28vh, 340px); flex: none; min-height: 0; border-radius: 4px 4px 0 0; }
#band { height: clamp(240px, 30vh, 440px); flex: none; min-height: 0; border-radius: 0 0 4px 4px; }
.key { display: inline-flex; align-items: center; gap: 5px; margin-left: 10px; }
.key i { display: inline-block; width: 14px; height: 2px; border-radius: 1px; }
.legend { display: flex; align-items: center; gap: 10px; margin-top: 8px; font-size: 12px; color: var(--muted); }
.legend .scale { position: relative; flex: 1; height: 10px; border-radius: 2px; }
.legend .ticks { position: absolute; left: 0; right: 0; top: 12px; height: 14px; }
.legend .ticks span { position: absolute; transform: translateX(-50%); white-space: nowrap; font-variant-numeric: tabular-nums; }
.legend .ticks span:first-child { transform: none; } .legend .ticks span:last-child { transform: translateX(-100%); }
.legend .unit { min-width: 28px; white-space: nowrap; }
.legend .na { display: flex; align-items: center; gap: 4px; white-space: nowrap; }
.legend .na i { width: 10px; height: 10px; border-radius: 2px; background: #262b33; display: inline-block; }
.legend-wrap { padding-bottom: 16px; }
.record { display: flex; align-items: center; gap: 10px; font-size: 12px; color: var(--muted); flex-wrap: wrap; }
.record input { width: 64px; background: var(--panel2); color: var(--text); border: 1px solid var(--line); border-radius: 4px; padding: 2px 6px; font: inherit; }
.record button { background: var(--panel2); color: var(--text); border: 1px solid var(--line); border-radius: 4px; padding: 3px 12px; font: inherit; cursor: pointer; }
.record button:disabled { opacity: .5; cursor: default; }
.record a { color: var(--r1); }
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
    <div class="panel" id="p-band">
      <h2 title="the latest PSD of each channel, stitched over the band: each frequency from the channel whose centre is nearest">Band spectrum <small>dBm/Hz <span class="key"><i style="background:#e6edf3"></i>latest</span><span class="key"><i style="background:#f472b6"></i>peak, last 30 rounds</span> &middot; newest round on top</small><span class="count" id="psd-info"></span></h2>
      <canvas id="spectrum" class="wf" data-drawn=""></canvas>
      <canvas id="band" class="wf" data-rows="0"></canvas>
      <div class="legend-wrap"><div class="legend" id="band-legend"></div></div>
      <div class="record" title="the IQ the energy detector reads on every visit, as SigMF on the router (monitor.record.dir)">
        <label>Record the next <input id="rec-s" type="number" min="0.1" step="any" value="10"> s of sensing IQ</label>
        <button id="rec-go" type="button">Record</button>
        <span id="rec-status" class="muted"></span>
      </div>
    </div>
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
    <div class="panel" id="p-gateway" hidden>
      <h2>Gateway <small>virtual queues and time slices &middot; read-only: set through the control API, <span class="mono">cogmesh ctl set gateway.KEY=VALUE</span></small><span class="count" id="gw-info"></span></h2>
      <div class="scroll"><table id="gateway"><thead><tr><th>Client</th><th>Prefix</th><th class="num">Router</th><th class="num">Queue</th><th class="num">Packets</th><th class="num">Rate Mbps</th><th class="num">Share</th><th class="num">Sent</th><th class="num">Dropped</th></tr></thead><tbody></tbody></table>
      <div class="empty" id="gateway-empty">no clients</div></div>
      <div class="gw-lower">
        <div>
          <h2 class="sub">Slices <small>one frame of <span id="gw-period">&ndash;</span>, from its start</small></h2>
          <div id="gw-slices" class="gw-frame"></div>
          <div class="gw-axis"><span>0</span><span id="gw-period-end"></span></div>
        </div>
        <div>
          <h2 class="sub">Dependence graph <small>clients never served together</small><span class="count" id="gw-edge-count"></span></h2>
          <ul id="gw-graph" class="gw-edges"></ul>
          <div class="empty" id="gw-graph-empty">no dependent pairs</div>
        </div>
      </div>
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

/**
 * Where the page's script bundle is: `dist/monitor/page.js` at the package
 * root. This file runs from `src/monitor/` under tsx and from
 * `dist/src/monitor/` once built, so both depths are tried.
 */
export function pageScriptPath(): string {
  const candidates = ['../../dist/monitor/page.js', '../../monitor/page.js'].map((rel) => fileURLToPath(new URL(rel, import.meta.url)));
  return candidates.find((p) => existsSync(p)) ?? candidates[0]!;
}

/** The page and the hash of its script, for the Content-Security-Policy that lets only that script run. */
export interface MonitorPage {
  html: string;
  /** `sha256-...` of the inline script. */
  scriptHash: string;
}

let built: MonitorPage | undefined;

/** The monitor's page, with its script bundle inlined; a CogmeshError when the bundle was never built. */
export function monitorPage(): MonitorPage {
  if (built) return built;
  const path = pageScriptPath();
  if (!existsSync(path)) throw new CogmeshError('MONITOR_PAGE_NOT_BUILT', `the monitor page's script is not built (${path} is missing): run \`npm run build\``);
  const script = readFileSync(path, 'utf8');
  // An inline script ends at the first "</script": the bundle must not hold one.
  if (/<\/script/i.test(script)) throw new CogmeshError('MONITOR_PAGE_NOT_BUILT', `the monitor page's script ${path} holds "</script" and cannot be inlined`);
  const html = `<!doctype html>
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
<script>${script}</script>
</body>
</html>
`;
  built = { html, scriptHash: `sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}` };
  return built;
}
