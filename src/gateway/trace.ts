import { ConfigError, type ConfigIssue } from '../core/errors.js';
import { parseJsonText } from '../core/json.js';
import { seconds } from '../core/time.js';
import { RateAdapter, type RateAdaptParams, type RateDecision } from './rate.js';

/**
 * Algorithm 2 over a recorded queue: a trace of one client's queue length
 * after service, at times in seconds, replayed through a RateAdapter in
 * virtual time. What `cogmesh gateway rate` runs; docs/gateway.md shows the
 * file.
 */

export interface RateTrace {
  params: Partial<RateAdaptParams>;
  samples: { atUs: number; queueBytes: number }[];
  /** Runs up to this time (µs): the last sample's, or the file's `untilS`. */
  untilUs: number;
}

/** The parameters a trace may set, with the unit each takes in the file. */
const PARAM_KEYS: Record<string, keyof RateAdaptParams> = {
  intervalS: 'intervalUs',
  queueLowBytes: 'queueLowBytes',
  epsMbps: 'epsMbps',
  lambda: 'lambda',
  beta: 'beta',
  initialRateMbps: 'initialRateMbps',
  minRateMbps: 'minRateMbps',
  maxRateMbps: 'maxRateMbps',
};

/** A trace file's text, every problem named with its path (ConfigError). */
export function parseRateTrace(text: string, source = 'rate trace'): RateTrace {
  const parsed = parseJsonText(text);
  if (!parsed.ok) throw new ConfigError([{ path: '/', value: undefined, expected: `JSON (${parsed.error.message})` }], source);
  const doc = parsed.value;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new ConfigError([{ path: '/', value: doc, expected: 'an object with "samples"' }], source);
  const d = doc as Record<string, unknown>;
  const issues: ConfigIssue[] = [];
  for (const k of Object.keys(d))
    if (!['params', 'samples', 'untilS'].includes(k)) issues.push({ path: `/${k}`, value: d[k], expected: 'no such field (known: params, samples, untilS)' });
  const params: Partial<RateAdaptParams> = {};
  if (d.params !== undefined) {
    if (typeof d.params !== 'object' || d.params === null || Array.isArray(d.params)) issues.push({ path: '/params', value: d.params, expected: 'an object' });
    else
      for (const [k, v] of Object.entries(d.params)) {
        const field = PARAM_KEYS[k];
        if (field === undefined) issues.push({ path: `/params/${k}`, value: v, expected: `one of ${Object.keys(PARAM_KEYS).join(', ')}` });
        else if (typeof v !== 'number' || Number.isNaN(v)) issues.push({ path: `/params/${k}`, value: v, expected: 'a number' });
        else params[field] = field === 'intervalUs' ? seconds(v) : v;
      }
  }
  const samples: RateTrace['samples'] = [];
  if (!Array.isArray(d.samples) || d.samples.length === 0)
    issues.push({ path: '/samples', value: d.samples, expected: 'a non-empty array of [seconds, queue bytes]' });
  else
    d.samples.forEach((s: unknown, i) => {
      const ok = Array.isArray(s) && s.length === 2 && s.every((v) => typeof v === 'number' && Number.isFinite(v) && v >= 0);
      if (!ok) return issues.push({ path: `/samples/${i}`, value: s, expected: '[seconds >= 0, queue bytes >= 0]' });
      const atUs = seconds(s[0] as number);
      if (samples.length > 0 && atUs < samples[samples.length - 1]!.atUs)
        return issues.push({ path: `/samples/${i}`, value: s, expected: 'a time not before the previous sample' });
      samples.push({ atUs, queueBytes: s[1] as number });
    });
  const last = samples.length > 0 ? samples[samples.length - 1]!.atUs : 0;
  let untilUs = last;
  if (d.untilS !== undefined) {
    if (!(typeof d.untilS === 'number' && Number.isFinite(d.untilS) && seconds(d.untilS) >= last))
      issues.push({ path: '/untilS', value: d.untilS, expected: 'a time in seconds not before the last sample' });
    else untilUs = seconds(d.untilS);
  }
  if (issues.length > 0) throw new ConfigError(issues, source);
  return { params, samples, untilUs };
}

/** Replays a trace from time 0: each sample observed at its time, each interval's run in order. */
export function replayRateTrace(trace: RateTrace): { params: Readonly<RateAdaptParams>; decisions: RateDecision[] } {
  const r = new RateAdapter(0, trace.params);
  const decisions: RateDecision[] = [];
  for (const s of trace.samples) {
    // The runs of intervals that ended before the sample first; a sample at an interval's end counts in that interval's run.
    if (s.atUs > 0) decisions.push(...r.advance(s.atUs - 1));
    r.observe(s.atUs, s.queueBytes);
  }
  decisions.push(...r.advance(trace.untilUs));
  return { params: r.params, decisions };
}
