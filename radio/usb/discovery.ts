import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadHwProfiles, usbIdText, type HwProfile, type UsbIdRole } from '../../src/hw/profiles.js';

/**
 * Finding USB SDRs: attached devices matched against the hardware profiles
 * (`hw/profiles/`). The matching is a pure function of device descriptors;
 * the boundary to the `usb` package (node-usb 3.x, a WebUSB-style API over
 * the Rust nusb crate) is the small `UsbBackend` below, which tests replace.
 */

/** What discovery needs to know of one attached USB device. */
export interface UsbDescriptor {
  readonly vendorId: number;
  readonly productId: number;
  /** Bus as the platform names it (node-usb 3.x gives a string, e.g. `1`). */
  readonly bus?: string | number;
  readonly address?: number;
  readonly serialNumber?: string | null;
}

/** One attached device that a hardware profile knows. */
export interface UsbSdr {
  /** The profile to check a configuration against (`cogmesh config check --hw`). */
  readonly profile: string;
  /** What this USB id is (e.g. `HackRF One`, `Cypress FX3 bootloader (no firmware)`). */
  readonly name: string;
  readonly vendorId: number;
  readonly productId: number;
  readonly bus?: number;
  readonly address?: number;
  readonly serial?: string;
  /** The cogmesh driver that serves it, or `none`. */
  readonly driver: string;
  /** `bootloader`: the device waits for firmware and is not usable as a radio yet. */
  readonly role: UsbIdRole;
  /** Every profile listing this USB id, when it is more than one (USB ids cannot tell them apart). */
  readonly candidates?: readonly string[];
  readonly note?: string;
}

export interface UsbSdrList {
  /** Whether USB could be enumerated at all; `devices` is empty when not. */
  readonly available: boolean;
  /** Why USB could not be enumerated, in plain words. */
  readonly reason?: string;
  readonly devices: readonly UsbSdr[];
}

/**
 * The attached devices the profiles know, in the order given; unknown devices
 * are left out. A USB id several profiles list (the B200 and B210 share
 * 2500:0020; USRP B2xx and bladeRFs share the Cypress FX3 bootloader id) is
 * reported once, under the first profile by name, with every candidate named.
 */
export function matchUsbSdrs(devices: readonly UsbDescriptor[], profiles: readonly HwProfile[]): UsbSdr[] {
  const sorted = [...profiles].sort((a, b) => (a.profile < b.profile ? -1 : a.profile > b.profile ? 1 : 0));
  const out: UsbSdr[] = [];
  for (const d of devices) {
    const hits = sorted.flatMap((p) => p.usb.filter((u) => u.vendorId === d.vendorId && u.productId === d.productId).map((u) => ({ p, u })));
    const first = hits[0];
    if (!first) continue;
    const { p, u } = first;
    const candidates = [...new Set(hits.map((h) => h.p.profile))];
    const notes: string[] = [];
    if (candidates.length > 1) notes.push(`USB id ${usbIdText(d.vendorId, d.productId)} is listed by ${candidates.join(', ')}: the id alone cannot tell which`);
    if (u.note) notes.push(u.note);
    if (p.driver.cogmesh === null) notes.push(p.driver.note);
    const bus = busNumber(d.bus);
    out.push({
      profile: p.profile,
      name: u.name,
      vendorId: d.vendorId,
      productId: d.productId,
      ...(bus !== undefined ? { bus } : {}),
      ...(d.address !== undefined ? { address: d.address } : {}),
      ...(d.serialNumber ? { serial: d.serialNumber } : {}),
      driver: p.driver.cogmesh ?? 'none',
      role: u.role,
      ...(candidates.length > 1 ? { candidates } : {}),
      ...(notes.length > 0 ? { note: notes.join(' ') } : {}),
    });
  }
  return out;
}

function busNumber(bus: string | number | undefined): number | undefined {
  if (typeof bus === 'number') return Number.isSafeInteger(bus) ? bus : undefined;
  const m = typeof bus === 'string' ? /^0*(\d+)/.exec(bus) : null;
  return m ? Number(m[1]) : undefined;
}

// ---------------------------------------------------------------------------
// The boundary to the host's USB

/** Enumeration and hot-plug, as discovery needs them. */
export interface UsbBackend {
  getDevices(): Promise<UsbDescriptor[]>;
  /** Calls `onChange` on every attach and detach; returns the unsubscribe. Absent where hot-plug is not supported. */
  watch?(onChange: () => void): () => void;
}

const SUBSYSTEM_PATH = '/dev/bus/usb';

/**
 * Why this machine has no USB to enumerate, or undefined. On Linux, libusb
 * and nusb need `/dev/bus/usb` (device nodes) and `/sys/bus/usb` (sysfs); a
 * container or VM without USB has neither. Other platforms are left to the
 * enumeration itself.
 */
export function usbSubsystemProblem(platform: NodeJS.Platform = process.platform, exists: (path: string) => boolean = existsSync): string | undefined {
  if (platform !== 'linux') return undefined;
  if (!exists(SUBSYSTEM_PATH)) return `no USB subsystem on this machine (${SUBSYSTEM_PATH} missing)`;
  return undefined;
}

/** The structural part of node-usb 3.x's `usb` export (a WebUSB object) that discovery uses. */
interface NodeUsb {
  getDevices(): Promise<Array<{ vendorId: number; productId: number; bus?: string; address?: number; serialNumber?: string | null }>>;
  addEventListener(type: 'connect' | 'disconnect', listener: () => void): void;
  removeEventListener(type: 'connect' | 'disconnect', listener: () => void): void;
}

/**
 * The `usb` package (an optional dependency) as a UsbBackend, or why it cannot
 * be had. Loaded synchronously (the package is CommonJS) so that a watcher can
 * answer at once.
 */
export function loadUsbBackend(): { backend: UsbBackend } | { reason: string } {
  let mod: { usb?: NodeUsb };
  try {
    mod = createRequire(import.meta.url)('usb') as { usb?: NodeUsb };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'MODULE_NOT_FOUND' && /'usb'/.test(err.message)) return { reason: 'the optional usb package is not installed (npm install usb@3)' };
    return { reason: `the usb package cannot load its native part: ${firstLine(err.message)}` };
  }
  const usb = mod.usb;
  if (!usb || typeof usb.getDevices !== 'function') return { reason: 'the installed usb package is not node-usb 3.x (no usb.getDevices())' };
  return {
    backend: {
      async getDevices() {
        const list = await usb.getDevices();
        return list.map((d) => ({ vendorId: d.vendorId, productId: d.productId, bus: d.bus, address: d.address, serialNumber: safeSerial(d) }));
      },
      watch(onChange) {
        const listener = (): void => onChange();
        usb.addEventListener('connect', listener);
        usb.addEventListener('disconnect', listener);
        return () => {
          usb.removeEventListener('connect', listener);
          usb.removeEventListener('disconnect', listener);
        };
      },
    },
  };
}

function safeSerial(d: { serialNumber?: string | null }): string | null {
  try {
    return d.serialNumber ?? null;
  } catch {
    return null; // a string descriptor the OS cannot read without opening the device
  }
}

function firstLine(s: string): string {
  return s.split('\n', 1)[0] ?? s;
}

export interface DiscoveryOptions {
  /** Profiles to match against (default: `hw/profiles/`). */
  readonly profiles?: readonly HwProfile[];
  /** The USB to enumerate (default: the `usb` package, after checking that the machine has USB at all). */
  readonly backend?: UsbBackend;
}

/**
 * The USB SDRs attached to this machine. `available` is false, with a plain
 * reason, when the machine has no USB subsystem, the `usb` package is missing
 * or enumeration fails; the promise itself does not reject for those.
 */
export async function listUsbSdrs(opts: DiscoveryOptions = {}): Promise<UsbSdrList> {
  const source = resolveBackend(opts);
  if ('reason' in source) return { available: false, reason: source.reason, devices: [] };
  return enumerate(source.backend, opts.profiles ?? loadHwProfiles());
}

function resolveBackend(opts: DiscoveryOptions): { backend: UsbBackend } | { reason: string } {
  if (opts.backend) return { backend: opts.backend };
  const problem = usbSubsystemProblem();
  if (problem) return { reason: problem };
  return loadUsbBackend();
}

async function enumerate(backend: UsbBackend, profiles: readonly HwProfile[]): Promise<UsbSdrList> {
  let devices: UsbDescriptor[];
  try {
    devices = await backend.getDevices();
  } catch (e) {
    return { available: false, reason: `USB enumeration failed: ${firstLine(e instanceof Error ? e.message : String(e))}`, devices: [] };
  }
  return { available: true, devices: matchUsbSdrs(devices, profiles) };
}

/**
 * Reports the attached USB SDRs now and again whenever the list changes
 * (hot-plug: the usb package's connect and disconnect events). Without USB it
 * reports the unavailability once and does nothing more. Reports come
 * asynchronously, never after the returned stop function has been called.
 */
export function watchUsbSdrs(onChange: (list: UsbSdrList) => void, opts: DiscoveryOptions = {}): () => void {
  let stopped = false;
  let unsubscribe: (() => void) | undefined;
  const source = resolveBackend(opts);
  if ('reason' in source) {
    queueMicrotask(() => {
      if (!stopped) onChange({ available: false, reason: source.reason, devices: [] });
    });
    return () => {
      stopped = true;
    };
  }
  const { backend } = source;
  const profiles = opts.profiles ?? loadHwProfiles();
  let last: string | undefined;
  let chain: Promise<void> = Promise.resolve();
  const update = async (): Promise<void> => {
    if (stopped) return;
    const list = await enumerate(backend, profiles);
    const key = JSON.stringify(list);
    if (stopped || key === last) return;
    last = key;
    // Subscribe only once enumeration has worked: node-usb enumerates again when
    // its first listener is added, and a failure there would go unhandled.
    if (list.available && !unsubscribe && backend.watch) unsubscribe = backend.watch(refresh);
    onChange(list);
  };
  // Refreshes run one at a time, in order; a throwing onChange surfaces as an
  // uncaught exception, as it would from an event emitter, and later refreshes still run.
  function refresh(): void {
    chain = chain.then(update).catch((e: unknown) => {
      setImmediate(() => {
        throw e;
      });
    });
  }
  refresh();
  return () => {
    stopped = true;
    unsubscribe?.();
    unsubscribe = undefined;
  };
}
