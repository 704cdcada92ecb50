import { ism2g4 } from '../../radio/channels.js';
import type { NodeConfig, RadioConfig } from './types.js';
import { UsageError } from '../core/errors.js';
import { findHwProfile, loadHwProfiles, type HwProfile, type RetuneCost } from '../hw/profiles.js';

/**
 * A node configuration checked against the hardware it would run on. The
 * configuration schema does not name a device, so the profile is given
 * explicitly (`cogmesh config check FILE --hw PROFILE`). Findings are values,
 * not errors: a configuration that suits the emulated band may still be
 * valid and merely slow or impossible on a given radio.
 */

export type RadioName = 'R1' | 'R2' | 'R3';
export const RADIO_NAMES: readonly RadioName[] = ['R1', 'R2', 'R3'];

/** One profile for every radio of the router, or a profile per radio (radios left out are not checked). */
export type HwAssignment = HwProfile | Partial<Record<RadioName, HwProfile>>;

/**
 * A dwell (R2's switching interval, the sensing radio's visit to a channel)
 * should be at least this many retunes long, so that retuning costs at most
 * a tenth of it.
 */
export const RETUNE_MARGIN = 10;

export type HwWarningCode =
  | 'HW_SWITCH_INTERVAL'
  | 'HW_SENSING_VISIT'
  | 'HW_SWITCH_OVERHEAD'
  | 'HW_SAMPLE_RATE'
  | 'HW_GAIN'
  | 'HW_TUNE_RANGE'
  | 'HW_NO_TRANSMIT'
  | 'HW_NO_DRIVER'
  | 'HW_FRONTEND_KIND';

export interface HwWarning {
  readonly code: HwWarningCode;
  /** The radio concerned, when one is. */
  readonly radio?: RadioName;
  /** JSON-pointer-like path of the configuration field concerned, e.g. `/switching/intervalMs`. */
  readonly path: string;
  readonly value: unknown;
  /** The profile the finding is against. */
  readonly profile: string;
  readonly message: string;
}

/** Microseconds a retune keeps a receiver streaming at `sampleRateHz` deaf. */
export function retuneUs(cost: RetuneCost, sampleRateHz: number): number {
  return Math.round(cost.fixedUs + (cost.inFlightSamples * 1e6) / sampleRateHz);
}

/** The profile of each radio under an assignment. */
export function profilesByRadio(hw: HwAssignment): Partial<Record<RadioName, HwProfile>> {
  if (isProfile(hw)) return { R1: hw, R2: hw, R3: hw };
  return hw;
}

function isProfile(hw: HwAssignment): hw is HwProfile {
  return typeof (hw as { profile?: unknown }).profile === 'string';
}

/**
 * What would go wrong, or go slowly, if `cfg` ran on the given hardware:
 * R2's switching interval, the sensing visit per channel and the configured
 * switch overhead against the device's normal (untimed) retune, which is what
 * cogmesh's drivers do today; each radio's sample rate and gain against the
 * device's ranges; channels the device cannot tune to; R2 and R3 on a device
 * that cannot transmit; devices cogmesh has no driver for. An empty list means
 * nothing to report.
 */
export function hardwareWarnings(cfg: NodeConfig, hw: HwAssignment): HwWarning[] {
  const byRadio = profilesByRadio(hw);
  const out: HwWarning[] = [];
  const warn = (code: HwWarningCode, radio: RadioName | undefined, path: string, value: unknown, p: HwProfile, message: string): void => {
    out.push({ code, ...(radio ? { radio } : {}), path, value, profile: p.profile, message });
  };
  const plan = ism2g4(cfg.channelPlan.channels);
  const usable = cfg.channelPlan.allowed.length > 0 ? cfg.channelPlan.allowed.filter((c) => plan.has(c)) : plan.numbers;

  const driverless = new Map<string, { p: HwProfile; radios: RadioName[] }>();
  for (const radio of RADIO_NAMES) {
    const p = byRadio[radio];
    if (p && p.driver.cogmesh === null) {
      const entry = driverless.get(p.profile) ?? { p, radios: [] };
      entry.radios.push(radio);
      driverless.set(p.profile, entry);
    }
  }
  for (const { p, radios } of driverless.values()) {
    const path = radios.length === 1 ? `/radios/${radios[0]}/frontend` : '/radios';
    const message = `cogmesh has no driver for the ${p.name} yet (${p.driver.nativeLibrary} would serve it): ${radios.join(', ')} cannot run on it`;
    warn('HW_NO_DRIVER', radios.length === 1 ? radios[0] : undefined, path, radios, p, message);
  }

  for (const radio of RADIO_NAMES) {
    const p = byRadio[radio];
    if (!p) continue;
    const r = radioConfig(cfg, radio);
    const at = `/radios/${radio}`;

    if (r.frontend !== 'sim' && r.frontend !== 'file' && r.frontend !== p.driver.frontend) {
      warn(
        'HW_FRONTEND_KIND',
        radio,
        `${at}/frontend`,
        r.frontend,
        p,
        `${radio} names the "${r.frontend}" front-end, but a radio on ${p.profile} is a "${p.driver.frontend}" front-end`,
      );
    }

    const rate = r.sampleRateHz;
    const excluded = p.sampleRateHz.excluded.find(([lo, hi]) => rate >= lo && rate <= hi);
    if (rate < p.sampleRateHz.min || rate > p.sampleRateHz.max) {
      const range = `${sps(p.sampleRateHz.min)} - ${sps(p.sampleRateHz.max)}`;
      warn('HW_SAMPLE_RATE', radio, `${at}/sampleRateHz`, rate, p, `${radio} samples at ${sps(rate)}, outside ${p.profile}'s range ${range}`);
    } else if (excluded) {
      const gap = `${sps(excluded[0])} - ${sps(excluded[1])}`;
      warn('HW_SAMPLE_RATE', radio, `${at}/sampleRateHz`, rate, p, `${radio} samples at ${sps(rate)}, which ${p.profile} refuses (${gap})`);
    }

    if (r.gainDb < p.rxGainDb.min || r.gainDb > p.rxGainDb.max) {
      const range = `${p.rxGainDb.min} - ${p.rxGainDb.max} dB`;
      warn('HW_GAIN', radio, `${at}/gainDb`, r.gainDb, p, `${radio}'s gain ${r.gainDb} dB is outside ${p.profile}'s receive gain range ${range}`);
    }

    const channels = radio === 'R3' ? [cfg.radios.R3.channel] : usable;
    const unreachable = channels.filter((c) => plan.has(c) && !inRange(plan.get(c).centerHz, p.tuneRangeHz));
    if (unreachable.length > 0) {
      const path = radio === 'R3' ? `${at}/channel` : '/channelPlan';
      const which = unreachable.map((c) => `${c} (${plan.get(c).centerHz / 1e6} MHz)`).join(', ');
      const value = radio === 'R3' ? cfg.radios.R3.channel : unreachable;
      const tunes = `${hz(p.tuneRangeHz.min)} - ${hz(p.tuneRangeHz.max)}`;
      warn(
        'HW_TUNE_RANGE',
        radio,
        path,
        value,
        p,
        `${p.profile} tunes ${tunes}: ${radio} cannot reach channel${unreachable.length === 1 ? '' : 's'} ${which} of ${plan.name}`,
      );
    }

    if ((radio === 'R2' || radio === 'R3') && !p.canTransmit) {
      const what = radio === 'R2' ? "data to the neighbours' R1 channels" : 'HELLOs and route discovery';
      warn('HW_NO_TRANSMIT', radio, `${at}/frontend`, r.frontend, p, `${radio} transmits (${what}), but ${p.profile} is receive-only`);
    }
  }

  const r2 = byRadio.R2;
  if (r2) {
    const rate = cfg.radios.R2.sampleRateHz;
    const normal = retuneUs(r2.retune.normal, rate);
    const dwellUs = cfg.switching.intervalMs * 1000;
    if (dwellUs < RETUNE_MARGIN * normal) {
      warn(
        'HW_SWITCH_INTERVAL',
        'R2',
        '/switching/intervalMs',
        cfg.switching.intervalMs,
        r2,
        `switching.intervalMs ${cfg.switching.intervalMs} ms is not much larger than a normal retune of R2 on ${r2.profile} (${us(normal)} at ${sps(rate)}): each switch would cost ${percent(normal, dwellUs)} of the dwell; a dwell should be at least ${RETUNE_MARGIN} retunes (${us(RETUNE_MARGIN * normal)}). ${quickAdvice(r2, rate, dwellUs)}`,
      );
    }
    if (cfg.switching.overheadUs < normal) {
      warn(
        'HW_SWITCH_OVERHEAD',
        'R2',
        '/switching/overheadUs',
        cfg.switching.overheadUs,
        r2,
        `switching.overheadUs ${cfg.switching.overheadUs} us is less than a normal retune of R2 on ${r2.profile} (${us(normal)} at ${sps(rate)}): the scheduler would plan with less deaf time per switch than the radio has; set it to at least ${normal}`,
      );
    }
  }

  const sensing = cfg.sensing.radio;
  const ps = byRadio[sensing];
  if (ps) {
    const rate = radioConfig(cfg, sensing).sampleRateHz;
    const normal = retuneUs(ps.retune.normal, rate);
    const visited = cfg.sensing.channelsPerRound > 0 ? cfg.sensing.channelsPerRound : usable.length;
    const visitUs = (cfg.sensing.durationMs * 1000) / visited;
    if (visitUs < RETUNE_MARGIN * normal) {
      warn(
        'HW_SENSING_VISIT',
        sensing,
        '/sensing/durationMs',
        cfg.sensing.durationMs,
        ps,
        `a sensing round visits ${visited} channel${visited === 1 ? '' : 's'} in ${cfg.sensing.durationMs} ms on ${sensing}, ${us(visitUs)} each, which is not much larger than a normal retune on ${ps.profile} (${us(normal)} at ${sps(rate)}): retuning would eat ${percent(normal, visitUs)} of each visit; a visit should be at least ${us(RETUNE_MARGIN * normal)}: visit fewer channels per round (sensing.channelsPerRound) or lengthen sensing.durationMs. ${quickAdvice(ps, rate, visitUs)}`,
      );
    }
  }

  return out;
}

/** What a quick retune would change for a dwell of `dwellUs`. */
function quickAdvice(p: HwProfile, rate: number, dwellUs: number): string {
  const q = p.retune.quick;
  if (!q) return `${p.profile} has no timed or quick retune.`;
  const quick = retuneUs(q, rate);
  const use = q.cogmeshUses ? 'cogmesh uses it' : 'cogmesh does not use it yet';
  if (dwellUs >= RETUNE_MARGIN * quick) return `This needs a timed/quick retune: the ${q.label} one takes about ${us(quick)} and would fit (${use}).`;
  return `Even a timed/quick retune (${q.label}, about ${us(quick)}) needs a dwell of at least ${us(RETUNE_MARGIN * quick)} (${use}).`;
}

function radioConfig(cfg: NodeConfig, radio: RadioName): RadioConfig {
  return cfg.radios[radio];
}

function inRange(x: number, r: { min: number; max: number }): boolean {
  return x >= r.min && x <= r.max;
}

function hz(v: number): string {
  if (v >= 1e9) return `${trim(v / 1e9)} GHz`;
  if (v >= 1e6) return `${trim(v / 1e6)} MHz`;
  if (v >= 1e3) return `${trim(v / 1e3)} kHz`;
  return `${trim(v)} Hz`;
}

function sps(v: number): string {
  if (v >= 1e6) return `${trim(v / 1e6)} MS/s`;
  if (v >= 1e3) return `${trim(v / 1e3)} kS/s`;
  return `${trim(v)} S/s`;
}

function us(v: number): string {
  return v >= 1000 ? `${trim(v / 1000)} ms` : `${Math.round(v)} us`;
}

function trim(v: number): string {
  return String(Number(v.toFixed(3)));
}

function percent(part: number, whole: number): string {
  return part >= whole ? 'all' : `${Math.round((100 * part) / whole)}%`;
}

/**
 * Reads `--hw`: a profile name for every radio (`usrp-b210`), or one per
 * radio (`R1=usrp-b210,R2=usrp-b210,R3=usrp-b200`).
 */
export function parseHwOption(text: string, profiles: readonly HwProfile[] = loadHwProfiles()): HwAssignment {
  const s = text.trim();
  if (!s.includes('=')) return findHwProfile(s, profiles);
  const out: Partial<Record<RadioName, HwProfile>> = {};
  for (const part of s.split(',')) {
    const [radio, name, ...rest] = part.split('=').map((x) => x.trim());
    if (rest.length > 0 || radio === undefined || name === undefined || name === '' || !RADIO_NAMES.includes(radio as RadioName)) {
      throw new UsageError(`--hw: "${part}" is not RADIO=PROFILE with RADIO one of R1, R2, R3`);
    }
    if (out[radio as RadioName]) throw new UsageError(`--hw: ${radio} is named twice`);
    out[radio as RadioName] = findHwProfile(name, profiles);
  }
  return out;
}
