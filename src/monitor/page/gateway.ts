import type { GatewayState } from '../../gateway/role.js';
import type { OnWire } from '../protocol.js';
import { esc, fmtBytes, fmtShare } from './format.js';
import { $, setRows } from './state.js';

/**
 * The page's Gateway panel, from `state.gateway`: the clients' virtual
 * queues, rates and shares; the frame's slices as a bar over the period;
 * the dependence graph's edges. Hidden when the router does not have the
 * role. Read-only: the role is set through the control API.
 */

/** Why two clients are dependent, by the edge's kind (docs/gateway.md). */
const KIND_TITLE: Record<string, string> = {
  'same-ap': 'behind the same router',
  'type-ii': 'behind routers that interfere',
  'type-iii': "one hears the other's router above its own (scan report)",
  given: 'a dependence graph set whole',
};

/** Slices' colours, in turn. */
const SLICE_COLOURS = 5;

export function renderGateway(g: OnWire<GatewayState> | null): void {
  const panel = $('p-gateway');
  panel.hidden = g === null;
  if (g === null) return;
  const changes = `${g.sliceChanges} computation${g.sliceChanges === 1 ? '' : 's'}`;
  $('gw-info').textContent = `${g.mode}${g.mode === 'computed' ? ` · ${changes}` : ''} · ${g.unshaped} unshaped`;

  setRows(
    'gateway',
    g.clients.map(
      (c) =>
        `<tr data-client="${esc(c.id)}"><td class="mono">${esc(c.id)}</td><td class="mono">${esc(c.prefix)}</td><td class="num">${esc(c.router)}</td>` +
        `<td class="num">${fmtBytes(c.queueBytes)}</td><td class="num">${esc(c.queuePackets)}</td>` +
        `<td class="num">${c.rateMbps > 0 ? esc(c.rateMbps.toFixed(3)) : '<span class="muted" title="v = 0: line rate">line</span>'}</td>` +
        `<td class="num share">${fmtShare(c.share)}</td><td class="num">${esc(c.sent)}</td><td class="num${c.dropped > 0 ? ' drop' : ''}">${esc(c.dropped)}</td></tr>`,
    ),
  );

  const period = g.periodMs;
  let used = 0;
  const segs = g.slices.map((s, i) => {
    used += s.share;
    const who = s.clients.join(', ');
    return (
      `<div class="gw-slice s${i % SLICE_COLOURS}" data-clients="${esc(s.clients.join(' '))}" data-share="${esc(s.share)}" style="flex-basis:${(s.share * 100).toFixed(3)}%"` +
      ` title="${esc(`{${who}}: ${fmtShare(s.share)} of the frame, ${(s.share * period).toFixed(1)} ms`)}">` +
      `<span class="who">${esc(s.clients.join(' · '))}</span><span class="pct">${esc((s.share * 100).toFixed(1))}%</span></div>`
    );
  });
  const idle = 1 - used;
  if (idle > 1e-6) {
    segs.push(
      `<div class="gw-slice idle" data-share="${esc(idle)}" style="flex-basis:${(idle * 100).toFixed(3)}%" title="${esc(`no client served: ${(idle * period).toFixed(1)} ms`)}"><span class="who">idle</span><span class="pct">${esc((idle * 100).toFixed(1))}%</span></div>`,
    );
  }
  $('gw-slices').innerHTML = segs.join('') || '<span class="empty">no slices</span>';
  $('gw-period').textContent = `${period} ms`;
  $('gw-period-end').textContent = `${period} ms`;

  $('gw-edge-count').textContent = `${g.graph.length} edge${g.graph.length === 1 ? '' : 's'}`;
  $('gw-graph').innerHTML = g.graph
    .map(
      (e) =>
        `<li data-a="${esc(e.a)}" data-b="${esc(e.b)}" data-kind="${esc(e.kind)}"><span class="mono">${esc(e.a)}</span><span class="muted">&mdash;</span><span class="mono">${esc(e.b)}</span>` +
        `<span class="pill kind ${esc(e.kind)}" title="${esc(KIND_TITLE[e.kind] ?? e.kind)}">${esc(e.kind)}</span></li>`,
    )
    .join('');
  $('gw-graph-empty').hidden = g.graph.length > 0;
}
