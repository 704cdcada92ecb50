/**
 * The TUN interface's set-up with iproute2, once at start-up: `ip` run by
 * execFile (no shell), one command at a time, each failure an IpRouteError
 * that names the command line and carries iproute2's own stderr.
 */
import { execFile } from 'node:child_process';
import { isIP } from 'node:net';
import { CogmeshError, RangeArgumentError } from '../core/errors.js';

export type IpRouteErrorCode = 'IPROUTE_NOT_FOUND' | 'IPROUTE_FAILED';

/** An `ip` command that failed (or `ip` missing): the command line and what iproute2 said. */
export class IpRouteError extends CogmeshError {
  declare readonly code: IpRouteErrorCode;

  constructor(
    code: IpRouteErrorCode,
    /** The command line, e.g. `ip route replace 10.0.0.0/8 dev cm0`. */
    readonly command: string,
    /** iproute2's stderr, trimmed. */
    readonly stderr: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

export interface TunConfig {
  /** The interface MTU (68 to 65535; 1280 or more with an IPv6 address or route). */
  mtu: number;
  /** Host addresses in CIDR form: `10.0.4.1/32`, `fd00::a00:401/128`. */
  addresses: string[];
  /** Prefixes routed into the interface: `10.0.0.0/8`, `fd00::/8`. */
  routes: string[];
}

export interface IpRouteOptions {
  /** The `ip` program (default `ip`, found on PATH). */
  ip?: string;
  /** Time allowed each command (10000 ms). */
  timeoutMs?: number;
}

/**
 * Brings the TUN up: no IPv6 link-local address (so the kernel sends no router
 * solicitation or MLD into the mesh), MTU, up, the addresses (IPv6 without
 * DAD), then the routes. Idempotent: an address or route already there is
 * replaced by the same.
 */
export async function configureTun(name: string, cfg: TunConfig, opts: IpRouteOptions = {}): Promise<void> {
  const mtu = cfg.mtu;
  if (!Number.isInteger(mtu) || mtu < 68 || mtu > 65535) throw new RangeArgumentError('mtu', mtu, 'an integer from 68 to 65535');
  const addresses = cfg.addresses.map((a, i) => parseCidr(`addresses[${i}]`, a));
  const routes = cfg.routes.map((r, i) => parseCidr(`routes[${i}]`, r));
  if (mtu < 1280 && [...addresses, ...routes].some((c) => c.family === 6)) {
    throw new RangeArgumentError('mtu', mtu, '1280 or more: IPv6 is off on an interface with a smaller MTU');
  }
  const ip = (args: string[]): Promise<string> => runIp(args, opts);
  await ip(['link', 'set', 'dev', name, 'addrgenmode', 'none']);
  await ip(['link', 'set', 'dev', name, 'mtu', String(mtu), 'up']);
  for (const a of addresses) await ip(['address', 'replace', a.text, 'dev', name, ...(a.family === 6 ? ['nodad'] : [])]);
  for (const r of routes) await ip([`-${r.family}`, 'route', 'replace', r.text, 'dev', name]);
}

/** Whether `ip` (iproute2) runs here. */
export async function ipAvailable(opts: IpRouteOptions = {}): Promise<boolean> {
  try {
    await runIp(['-V'], opts);
    return true;
  } catch {
    return false;
  }
}

function parseCidr(field: string, text: string): { text: string; family: 4 | 6 } {
  const expected = 'an address with a prefix length, e.g. 10.0.4.1/32 or fd00::a00:401/128';
  const slash = text.indexOf('/');
  const family = slash < 0 ? 0 : isIP(text.slice(0, slash));
  const len = text.slice(slash + 1);
  if ((family !== 4 && family !== 6) || !/^\d{1,3}$/.test(len) || Number(len) > (family === 4 ? 32 : 128)) {
    throw new RangeArgumentError(field, text, expected);
  }
  return { text, family };
}

function runIp(args: string[], opts: IpRouteOptions): Promise<string> {
  const ip = opts.ip ?? 'ip';
  const line = [ip, ...args].join(' ');
  return new Promise((resolve, reject) => {
    execFile(ip, args, { encoding: 'utf8', timeout: opts.timeoutMs ?? 10_000 }, (err, stdout, stderr) => {
      if (err === null) {
        resolve(stdout);
        return;
      }
      const said = stderr.trim();
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new IpRouteError('IPROUTE_NOT_FOUND', line, said, `${line}: ${ip} not found; install iproute2`, { cause: err }));
        return;
      }
      const why = said !== '' ? said.replace(/\s*\n\s*/g, '; ') : err.killed ? `killed after ${opts.timeoutMs ?? 10_000} ms` : err.message;
      reject(new IpRouteError('IPROUTE_FAILED', line, said, `${line} failed: ${why}`, { cause: err }));
    });
  });
}
