import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, CogmeshError, type ConfigIssue } from '../core/errors.js';
import { cloneJson, schemaChecker, type Schema } from '../core/schema.js';

/**
 * Hardware profiles: one JSON file per radio device family under
 * `hw/profiles/`, validated by `hw/profile.schema.json`. A profile tells how
 * the device shows up on USB, which driver serves it, what it can tune,
 * sample and amplify, and what a retune costs. The checks of a node
 * configuration against a profile (`hardwareWarnings`) live in `./checks.ts`
 * and are re-exported here.
 */

export type UsbIdRole = 'normal' | 'bootloader';

/** One USB vendor:product pair of a device family. */
export interface UsbId {
  readonly vendorId: number;
  readonly productId: number;
  readonly role: UsbIdRole;
  readonly name: string;
  /** Other profiles listing the same pair: USB ids alone cannot tell these apart. */
  readonly sharedWith: readonly string[];
  readonly note?: string;
  readonly source: string;
}

export interface HwRange {
  readonly min: number;
  readonly max: number;
  readonly note?: string;
}

export type RetuneBasis = 'vendor-measurement' | 'source-code' | 'estimate';

/**
 * What a retune costs a streaming receiver: `fixedUs` until the new frequency
 * is valid at the antenna, plus `inFlightSamples` of the old frequency that
 * were already queued towards the application and must be discarded.
 */
export interface RetuneCost {
  readonly fixedUs: number;
  readonly inFlightSamples: number;
  readonly basis: RetuneBasis;
  readonly source: string;
}

export interface QuickRetune extends RetuneCost {
  /** A short name, e.g. `UHD timed commands`. */
  readonly label: string;
  readonly method: string;
  /** Whether a cogmesh driver uses it today. */
  readonly cogmeshUses: boolean;
}

export interface HwProfile {
  readonly profile: string;
  readonly name: string;
  readonly models: readonly string[];
  readonly usb: readonly UsbId[];
  readonly driver: {
    /** The cogmesh driver that serves the device; null when there is none yet. */
    readonly cogmesh: 'uhd' | null;
    /** The `radios.*.frontend` kind a radio on this device takes. */
    readonly frontend: 'uhd' | 'usb';
    readonly nativeLibrary: string;
    readonly note: string;
  };
  readonly channels: { readonly rx: number; readonly tx: number };
  readonly sampleRateHz: HwRange & { readonly excluded: ReadonlyArray<readonly [number, number]> };
  readonly rxGainDb: HwRange;
  readonly tuneRangeHz: HwRange;
  readonly canTransmit: boolean;
  readonly duplex: 'full' | 'half' | 'receive-only';
  readonly retune: { readonly normal: RetuneCost; readonly quick: QuickRetune | null };
  readonly notes: readonly string[];
  readonly sources: readonly string[];
}

/** A hardware profile that does not exist, or a set of profiles that contradict each other. */
export class HwProfileError extends CogmeshError {
  constructor(code: 'HW_PROFILE_UNKNOWN' | 'HW_PROFILE_CONFLICT', message: string) {
    super(code, message);
  }
}

/**
 * Where a file shipped under `hw/` lives: at the repository (or package)
 * root. This file runs from `src/hw/` under tsx and from `dist/src/hw/` once
 * built, so both depths are tried.
 */
export function hwFilePath(name: string): string {
  const candidates = [`../../hw/${name}`, `../../../hw/${name}`].map((rel) => fileURLToPath(new URL(rel, import.meta.url)));
  return candidates.find((p) => existsSync(p)) ?? candidates[0]!;
}

export const hwProfileSchemaPath: string = hwFilePath('profile.schema.json');
export const hwProfilesDir: string = hwFilePath('profiles');

/** The profile schema as parsed from hwProfileSchemaPath. */
export const hwProfileSchema: Readonly<Schema> = JSON.parse(readFileSync(hwProfileSchemaPath, 'utf8')) as Schema;

const checker = schemaChecker(hwProfileSchema);

/** Validates a profile document against the schema (defaults filled into `data`); the problems found. */
export function checkHwProfileDocument(data: unknown): ConfigIssue[] {
  return checker(data);
}

/** `2500:0020`, as lsusb and udev print a USB id. */
export function usbIdText(vendorId: number, productId: number): string {
  return `${hex4(vendorId)}:${hex4(productId)}`;
}

function hex4(n: number): string {
  return n.toString(16).padStart(4, '0');
}

interface ProfileDocument {
  profile: string;
  usb: Array<{ vendorId: string; productId: string; sharedWith: string[] }>;
  sampleRateHz: { min: number; max: number; excluded?: Array<[number, number]> };
  rxGainDb: HwRange;
  tuneRangeHz: HwRange;
  notes?: string[];
}

/**
 * A validated profile from its JSON document: hex ids become numbers, and
 * what the schema cannot say (ranges in order) is checked too. Throws
 * ConfigError naming every problem, with `source` as the document's name.
 */
export function parseHwProfile(input: unknown, source = 'hardware profile'): HwProfile {
  const data = cloneJson(input, source);
  const issues = checkHwProfileDocument(data);
  if (issues.length === 0) {
    const doc = data as ProfileDocument;
    for (const key of ['sampleRateHz', 'rxGainDb', 'tuneRangeHz'] as const) {
      const r = doc[key];
      if (r.min > r.max) issues.push({ path: `/${key}/max`, value: r.max, expected: `at least min (${r.min})` });
    }
    (doc.sampleRateHz.excluded ?? []).forEach(([lo, hi], i) => {
      if (lo > hi) issues.push({ path: `/sampleRateHz/excluded/${i}`, value: [lo, hi], expected: 'an interval [low, high] with low <= high' });
    });
    if (doc.usb.some((u) => u.sharedWith.includes(doc.profile))) {
      issues.push({ path: '/usb', value: doc.profile, expected: 'sharedWith naming other profiles, not this one' });
    }
  }
  if (issues.length > 0) throw new ConfigError(issues, source);
  const doc = data as ProfileDocument & Omit<HwProfile, 'usb' | 'sampleRateHz' | 'notes'>;
  return {
    ...doc,
    usb: doc.usb.map((u) => ({ ...(u as unknown as UsbId), vendorId: parseInt(u.vendorId.slice(2), 16), productId: parseInt(u.productId.slice(2), 16) })),
    sampleRateHz: { ...doc.sampleRateHz, excluded: doc.sampleRateHz.excluded ?? [] },
    notes: doc.notes ?? [],
  };
}

/**
 * Every profile in `dir` (default `hw/profiles/`), sorted by name. Each file
 * must be named after its profile, and an id listed by several profiles must
 * say so (`sharedWith`) in each of them; anything else is refused.
 */
export function loadHwProfiles(dir: string = hwProfilesDir): HwProfile[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  const profiles = files.map((f) => {
    const path = join(dir, f);
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    } catch (e) {
      throw new ConfigError([{ path: '/', value: path, expected: `a readable JSON hardware profile (${(e as Error).message})` }], path);
    }
    const p = parseHwProfile(raw, path);
    if (p.profile !== basename(f, '.json')) {
      throw new ConfigError([{ path: '/profile', value: p.profile, expected: `"${basename(f, '.json')}", the file's name` }], path);
    }
    return p;
  });
  const conflicts = usbIdConflicts(profiles);
  if (conflicts.length > 0) throw new HwProfileError('HW_PROFILE_CONFLICT', `hardware profiles in ${dir} disagree:\n  ${conflicts.join('\n  ')}`);
  return profiles.sort((a, b) => (a.profile < b.profile ? -1 : a.profile > b.profile ? 1 : 0));
}

/**
 * USB ids listed by more than one profile without every one of them naming
 * all the others in `sharedWith` (or naming a profile that does not list the
 * id): an id is unique across profiles unless its sharing is declared.
 */
export function usbIdConflicts(profiles: readonly HwProfile[]): string[] {
  const owners = new Map<string, Array<{ profile: string; sharedWith: readonly string[] }>>();
  for (const p of profiles) {
    const seen = new Set<string>();
    for (const u of p.usb) {
      const id = usbIdText(u.vendorId, u.productId);
      if (seen.has(id)) continue;
      seen.add(id);
      const list = owners.get(id) ?? [];
      list.push({ profile: p.profile, sharedWith: u.sharedWith });
      owners.set(id, list);
    }
  }
  const problems: string[] = [];
  for (const [id, list] of owners) {
    const all = list.map((o) => o.profile).sort();
    for (const o of list) {
      const expected = all.filter((n) => n !== o.profile);
      const declared = [...o.sharedWith].sort();
      if (expected.join(',') !== declared.join(',')) {
        problems.push(`${id} in ${o.profile}: sharedWith is [${declared.join(', ')}], but the profiles listing it are [${all.join(', ')}]`);
      }
    }
  }
  for (const p of profiles) {
    for (const u of p.usb) {
      if (p.usb.filter((v) => v.vendorId === u.vendorId && v.productId === u.productId).length > 1) {
        problems.push(`${usbIdText(u.vendorId, u.productId)} is listed twice in ${p.profile}`);
      }
    }
  }
  return [...new Set(problems)];
}

/** The profile named `name`, or HwProfileError naming the ones there are. */
export function findHwProfile(name: string, profiles: readonly HwProfile[] = loadHwProfiles()): HwProfile {
  const p = profiles.find((q) => q.profile === name);
  if (!p) throw new HwProfileError('HW_PROFILE_UNKNOWN', `no hardware profile "${name}" (known: ${profiles.map((q) => q.profile).join(', ')})`);
  return p;
}
