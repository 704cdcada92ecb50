import { usbIdText, type HwProfile } from './profiles.js';

/** The group the udev rules give USB SDRs to. */
export const UDEV_GROUP = 'plugdev';

/**
 * `hw/udev/99-cogmesh-sdr.rules` as generated from the profiles: every USB id
 * of every profile (normal and bootloader ids alike, since firmware loaders
 * need the device too) readable and writable by group plugdev. An id several
 * profiles share gets one rule. Regenerate the file after changing a profile
 * (hw/README.md says how); a test checks that it is up to date.
 */
export function udevRules(profiles: readonly HwProfile[]): string {
  const lines = [
    '# cogmesh: USB software radios readable and writable by group plugdev.',
    '# Generated from hw/profiles/*.json by udevRules() in src/hw/udev.ts: edit the profiles, not this file.',
    '# Install: sudo cp hw/udev/99-cogmesh-sdr.rules /etc/udev/rules.d/ && sudo udevadm control --reload && sudo udevadm trigger',
    '',
    'ACTION!="add|change", GOTO="cogmesh_sdr_end"',
    'SUBSYSTEM!="usb", GOTO="cogmesh_sdr_end"',
    'ENV{DEVTYPE}!="usb_device", GOTO="cogmesh_sdr_end"',
  ];
  const done = new Set<string>();
  for (const p of [...profiles].sort((a, b) => (a.profile < b.profile ? -1 : 1))) {
    lines.push('', `# ${p.profile}: ${p.name}`);
    for (const u of p.usb) {
      const id = usbIdText(u.vendorId, u.productId);
      if (done.has(id)) {
        lines.push(`# ${id} ${u.name}: see above`);
        continue;
      }
      done.add(id);
      const also = u.sharedWith.length > 0 ? `, also ${u.sharedWith.join(', ')}` : '';
      lines.push(`# ${id} ${u.name} (${u.role}${also})`);
      const [vendor, product] = id.split(':');
      lines.push(`ATTR{idVendor}=="${vendor}", ATTR{idProduct}=="${product}", MODE="0660", GROUP="${UDEV_GROUP}"`);
    }
  }
  lines.push('', 'LABEL="cogmesh_sdr_end"');
  return `${lines.join('\n')}\n`;
}
