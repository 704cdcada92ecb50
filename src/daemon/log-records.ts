import type { Decision } from '../channel/decision.js';
import type { ChannelReport, NodeEvent } from '../router/node-core.js';

const r2 = (x: number): number => Math.round(x * 100) / 100;
const r3 = (x: number): number => Math.round(x * 1000) / 1000;
const mbps = (bps: number): string => (bps / 1e6).toFixed(2);

/** A sensing round as a log record: compact fields for machines, one line for people. */
export function roundRecord(e: Extract<NodeEvent, { kind: 'sensing-round' }>): { fields: Record<string, unknown>; msg: string } {
  const channels = e.channels.map((c: ChannelReport) => ({
    channel: c.channel,
    w: r3(c.w),
    ...(c.ownW !== undefined && c.ownW !== c.w ? { ownW: r3(c.ownW) } : {}),
    rcMbps: r3(c.rc / 1e6),
    ...(c.meanPowerDbm !== undefined && Number.isFinite(c.meanPowerDbm) ? { powerDbm: r2(c.meanPowerDbm) } : {}),
  }));
  const ws = e.channels.map((c) => `${c.channel}:${c.w.toFixed(2)}`).join(' ');
  return {
    fields: { event: 'sensing-round', round: e.round, visited: e.visited, durationUs: e.endUs - e.startUs, channels },
    msg: `sensing round ${e.round} (${e.visited.length} ch, ${((e.endUs - e.startUs) / 1000).toFixed(1)} ms): w ${ws}`,
  };
}

const REASONS: Record<Decision['reason'], string> = {
  initial: 'first decision',
  'not-allowed': 'current channel no longer allowed',
  best: 'already on the best channel',
  'min-dwell': 'minimum dwell not over',
  'load-unmet': 'current channel cannot carry the load',
  better: 'gain above the hysteresis margin',
  'within-hysteresis': 'gain within the hysteresis margin',
  yielded: 'channel shared: leaving it to the other routers this round',
  'no-measurement': 'no channel measured yet',
  'incomplete-round': 'a channel of the round went unsensed: the first choice waits for a complete round',
};

/** A channel decision as a log record, naming its reason. */
export function decisionRecord(d: Decision): { fields: Record<string, unknown>; msg: string } {
  const best = d.scores[0];
  const cur = d.scores.find((s) => s.channel === d.previous);
  const fields = {
    event: 'r1-decision',
    channel: d.channel,
    previous: d.previous,
    changed: d.changed,
    reason: d.reason,
    scores: d.scores.slice(0, 4).map((s) => ({ channel: s.channel, w: r3(s.w), rcMbps: r3(s.rc / 1e6), scoreMbps: r3(s.score / 1e6) })),
  };
  const about = best ? ` best ${best.channel} ${mbps(best.score)} Mbps` + (cur && cur !== best ? `, current ${cur.channel} ${mbps(cur.score)} Mbps` : '') : '';
  const msg = d.changed
    ? `R1 ${d.previous === undefined ? 'takes' : `moves ${d.previous} ->`} channel ${d.channel} (${REASONS[d.reason]};${about})`
    : `R1 stays on ${d.channel ?? 'no channel'} (${REASONS[d.reason]};${about})`;
  return { fields, msg };
}
