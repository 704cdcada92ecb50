import { Command } from 'commander';
import { loadNodeConfig } from '../config/load.js';
import { LISTED } from './listed.js';

/** What `cogmesh devices` found, source by source. */
export interface DevicesReport {
  uhd: { available: boolean; version?: string; reason?: string; devices: Array<Record<string, string>> };
  usb: { available: boolean; reason?: string; devices: ReadonlyArray<Record<string, unknown>> };
  sora: Array<{ path: string; from: string; ok: boolean; info?: Record<string, unknown>; error?: string }>;
}

const reasonOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * Asks every source of radios on this machine: UHD's discovery (USRPs over
 * USB or the network), the USB bus against the hardware profiles, and the
 * SORA-like rings named on the command line or by configurations. A source
 * that cannot be asked says why; nothing here throws for a missing driver.
 */
export async function findDevices(rings: ReadonlyArray<{ path: string; from: string }>): Promise<DevicesReport> {
  const uhd: DevicesReport['uhd'] = await (async () => {
    try {
      const m = await import('../../radio/uhd/index.js');
      const info = m.uhdInfo();
      const found = await m.uhdDevices('');
      return { available: found.available, version: info.version, reason: found.reason ?? info.reason, devices: found.devices };
    } catch (e) {
      return { available: false, reason: `the UHD front-end could not load: ${reasonOf(e)}`, devices: [] };
    }
  })();
  const usb: DevicesReport['usb'] = await (async () => {
    try {
      const m = await import('../../radio/usb/discovery.js');
      const list = await m.listUsbSdrs();
      return { available: list.available, reason: list.reason, devices: list.devices.map((d) => ({ ...d })) };
    } catch (e) {
      return { available: false, reason: `USB discovery could not load: ${reasonOf(e)}`, devices: [] };
    }
  })();
  const sora: DevicesReport['sora'] = [];
  for (const r of rings) {
    try {
      const { SampleRing } = await import('../../radio/sora/index.js');
      const ring = await SampleRing.open(r.path);
      try {
        const i = ring.info;
        sora.push({
          path: r.path,
          from: r.from,
          ok: true,
          info: { format: i.format, sampleRateHz: i.sampleRateHz, capacity: i.capacity, access: i.access, retuneUs: i.retuneUs },
        });
      } finally {
        ring.close();
      }
    } catch (e) {
      sora.push({ path: r.path, from: r.from, ok: false, error: reasonOf(e) });
    }
  }
  return { uhd, usb, sora };
}

export function devicesText(d: DevicesReport): string {
  const out: string[] = [];
  if (!d.uhd.available) out.push(`UHD: not available (${d.uhd.reason ?? 'no reason given'})`);
  else if (d.uhd.devices.length === 0) out.push(`UHD ${d.uhd.version ?? ''}: no USRP found${d.uhd.reason ? ` (${d.uhd.reason})` : ''}`);
  else {
    out.push(`UHD ${d.uhd.version ?? ''}: ${d.uhd.devices.length} USRP(s)`);
    for (const dev of d.uhd.devices)
      out.push(
        `  ${Object.entries(dev)
          .map(([k, v]) => `${k}=${v}`)
          .join(',')}`,
      );
  }
  if (!d.usb.available) out.push(`USB: not available (${d.usb.reason ?? 'no reason given'})`);
  else if (d.usb.devices.length === 0) out.push('USB: no known SDR attached');
  else {
    out.push(`USB: ${d.usb.devices.length} known SDR(s)`);
    for (const dev of d.usb.devices) out.push(`  ${String(dev.name)} (profile ${String(dev.profile)}, driver ${String(dev.driver)})`);
  }
  if (d.sora.length === 0) out.push('SORA rings: none named (--ring PATH or a configuration with a sora radio)');
  for (const r of d.sora) {
    out.push(r.ok ? `SORA ring ${r.path} (${r.from}): ${JSON.stringify(r.info)}` : `SORA ring ${r.path} (${r.from}): ${r.error}`);
  }
  return `${out.join('\n')}\n`;
}

export function devicesCommand(): Command {
  return new Command('devices')
    .description(LISTED.devices.about)
    .option('--json', 'print one JSON object')
    .option('--ring <path>', 'a SORA-like ring to open (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option(
      '--config <file>',
      'also open the rings of the sora radios of this node configuration (repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .action(async (opts: { json?: boolean; ring: string[]; config: string[] }) => {
      const rings = opts.ring.map((path) => ({ path, from: '--ring' }));
      for (const file of opts.config) {
        const cfg = await loadNodeConfig(file);
        for (const name of ['R1', 'R2', 'R3'] as const) {
          const r = cfg.radios[name];
          if (r.frontend === 'sora') rings.push({ path: r.device, from: `${file} radios.${name}` });
        }
      }
      const report = await findDevices(rings);
      process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : devicesText(report));
    });
}
