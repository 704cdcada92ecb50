import { execFileSync } from 'node:child_process';

/** The Wireshark dissector the captures are read with. */
export const DISSECTOR = 'tools/wireshark/cogmesh.lua';

/** Packets Wireshark found malformed, or on which a dissector raised an error (expert severity Error and up). */
export const MALFORMED = '_ws.malformed || _ws.expert.severity >= 8388608';

/** Whether tshark runs here (the tests that read captures skip without it). */
export const hasTshark = ((): boolean => {
  try {
    execFileSync('tshark', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * The rows of `tshark -T fields` over a capture with the dissector loaded
 * (optionally only those `filter` keeps, with Wireshark preferences `prefs`
 * such as `wlan.check_fcs:TRUE`), split on tabs.
 */
export function tsharkFields(file: string, names: readonly string[], filter?: string, prefs: readonly string[] = []): string[][] {
  const args = [
    '-X',
    `lua_script:${DISSECTOR}`,
    ...prefs.flatMap((p) => ['-o', p]),
    '-r',
    file,
    '-T',
    'fields',
    ...names.flatMap((n) => ['-e', n]),
    ...(filter ? ['-Y', filter] : []),
  ];
  const out = execFileSync('tshark', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return out
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => l.split('\t'));
}
