import type { NodeConfig } from '../config/types.js';
import type { Logger } from '../core/log.js';
import type { Micros } from '../core/time.js';
import type { Telemetry } from '../router/view.js';
import { PsdTap, teeTaps, type IqTap } from '../sensing/iq-tap.js';
import { IqRecorder } from './iq-recorder.js';

/** What reads a daemon's sensing IQ for its monitor: the PSD and the recordings. */
export interface MonitorTaps {
  /** The one tap the sensing path calls, undefined when nothing reads. */
  tap: IqTap | undefined;
  psd: PsdTap | undefined;
  recorder: IqRecorder | undefined;
}

/**
 * The monitor's taps on a router's sensing IQ, when it runs a monitor
 * (monitor.listen) and senses (channel.cognitive): the PSD (monitor.psd,
 * its estimates on the next turn of the event loop) and the recorder
 * (monitor.record, which refuses while its folder is unset).
 */
export function monitorTaps(cfg: NodeConfig, o: { now: () => Micros; epochUs: number | undefined; log: Logger; emit: (t: Telemetry) => void }): MonitorTaps {
  if (cfg.monitor.listen === '' || !cfg.channel.cognitive) return { tap: undefined, psd: undefined, recorder: undefined };
  const p = cfg.monitor.psd;
  const psd = p.enabled
    ? new PsdTap(
        { bins: p.bins, maxSegments: p.segments, maxPerS: p.maxPerS },
        { now: o.now(), defer: (fn) => setImmediate(fn), emit: (v) => o.emit({ kind: 'psd', atUs: v.startUs + v.durationUs, psd: v }) },
      )
    : undefined;
  const r = cfg.monitor.record;
  const recorder = new IqRecorder({
    dir: r.dir,
    maxS: r.maxS,
    maxBytes: Math.floor(r.maxMiB * 1024 * 1024),
    now: o.now,
    epochUs: o.epochUs,
    node: cfg.node,
    log: o.log,
    onChange: (info) => o.emit({ kind: 'record', atUs: o.now(), recording: info }),
  });
  return { tap: teeTaps(psd ? [psd, recorder] : [recorder]), psd, recorder };
}
