/**
 * UHD device addresses as `uhd_usrp_find` returns them
 * (`uhd::device_addr_t::to_string()`): `key=value` pairs joined by commas,
 * e.g. `type=b200,name=,serial=30F1A2B,product=B210`.
 */
export function parseDeviceAddr(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of s.split(',')) {
    const pair = part.trim();
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    // a bare key is a flag, as in UHD's own parser
    if (eq < 0) out[pair] = '';
    else out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return out;
}

/** A name that tells a device apart: `type:serial` when UHD gave both. */
export function deviceId(addr: Readonly<Record<string, string>>, fallback: string): string {
  const type = addr['type'];
  const serial = addr['serial'];
  if (type !== undefined && type !== '' && serial !== undefined && serial !== '') return `${type}:${serial}`;
  if (serial !== undefined && serial !== '') return serial;
  return fallback;
}
