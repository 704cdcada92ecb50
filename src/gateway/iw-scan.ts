import { UsageError } from '../core/errors.js';

/**
 * The APs in the text `iw dev IFACE scan` (or `scan dump`) prints, by BSSID,
 * with their signal in dBm: what a Linux client measures of the beacons it
 * hears. Each block starts `BSS 02:00:00:00:01:00(on wlan0)` and has a line
 * `signal: -47.00 dBm`; a block without a signal is left out. An AP heard
 * twice keeps its stronger signal. Text with no BSS block is refused.
 */
export function parseIwScan(text: string, source = 'iw scan'): Map<string, number> {
  const aps = new Map<string, number>();
  let bss: string | undefined;
  let blocks = 0;
  text.split('\n').forEach((line, i) => {
    const head = /^BSS ([0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5})/.exec(line);
    if (head) {
      bss = head[1]!.toLowerCase();
      blocks++;
      return;
    }
    const sig = /^\s+signal:\s*(\S+)\s*dBm/.exec(line);
    if (sig && bss !== undefined) {
      const dbm = Number(sig[1]);
      if (!Number.isFinite(dbm)) throw new UsageError(`${source}: line ${i + 1}: signal "${sig[1]}" is not a number of dBm`);
      const before = aps.get(bss);
      if (before === undefined || dbm > before) aps.set(bss, dbm);
    }
  });
  if (blocks === 0) throw new UsageError(`${source}: no "BSS xx:xx:xx:xx:xx:xx" block: not the output of \`iw dev IFACE scan\``);
  return aps;
}
