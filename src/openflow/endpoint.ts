import { isLoopbackHost, parseHostPort } from '../core/address.js';
import { err, ok, type Result } from '../core/result.js';

/**
 * Where an OpenFlow connection is made, in Open vSwitch's connection methods
 * (ovs-vswitchd.conf.db(5), "Controller connection methods"):
 *
 *   active   tcp:HOST[:PORT]   ssl:HOST[:PORT]    connect to HOST
 *   passive  ptcp:[PORT][:HOST] pssl:[PORT][:HOST] listen on HOST (every address when omitted)
 *
 * PORT defaults to 6653, the port IANA assigned to OpenFlow; an IPv6 HOST
 * is written in brackets (ssl:[fd00::1]:6653, pssl:6653:[::1]). `ssl` and
 * `pssl` run OpenFlow over TLS with mutual authentication: each side shows
 * a certificate that the other's CA certificate verifies (ovs-pki(8)). The
 * plain `HOST:PORT` of earlier configurations stays: it is tcp: (active) or
 * ptcp:PORT:HOST (passive).
 */
export interface OfEndpoint {
  /** active: connect to host:port; passive: listen on it. */
  role: 'active' | 'passive';
  tls: boolean;
  /** A passive endpoint's '' listens on every address. */
  host: string;
  port: number;
}

/** The port IANA assigned to OpenFlow, Open vSwitch's default. */
export const OFP_TCP_PORT = 6653;

const HOST = String.raw`\[[0-9a-fA-F:.]+\]|[^:[\]\s]+`;
const ACTIVE = new RegExp(`^(tcp|ssl):(${HOST})(?::(\\d{1,5}))?$`);
const PASSIVE = new RegExp(`^(ptcp|pssl):(\\d{1,5})?(?::(${HOST}))?$`);

const unbracket = (h: string): string => h.replace(/^\[|\]$/g, '');

/** The plain HOST:PORT form, unless the "host" is a connection method (pssl:6653 is no host named pssl). */
function plainHostPort(text: string): { host: string; port: number } | undefined {
  return /^p?(tcp|ssl|unix):/.test(text) ? undefined : parseHostPort(text);
}

/** What an active endpoint field takes, for errors. */
export const ACTIVE_FORMS = 'ssl:HOST:PORT (TLS), tcp:HOST:PORT or HOST:PORT (port 1-65535), e.g. ssl:10.0.0.254:6653';
/** What a passive endpoint field takes, for errors. */
export const PASSIVE_FORMS = 'pssl:PORT[:HOST] (TLS), ptcp:PORT[:HOST] or HOST:PORT (port 0-65535), e.g. pssl:6653 or 127.0.0.1:6634';

/** An endpoint to connect to (port 1-65535); the error says what the text should have been. */
export function parseActiveEndpoint(text: string): Result<OfEndpoint, string> {
  const m = ACTIVE.exec(text);
  if (m) {
    const port = m[3] === undefined ? OFP_TCP_PORT : Number(m[3]);
    if (port < 1 || port > 65535) return err(`port ${m[3]} is not 1-65535`);
    return ok({ role: 'active', tls: m[1] === 'ssl', host: unbracket(m[2]!), port });
  }
  const hp = plainHostPort(text);
  if (hp && hp.port >= 1) return ok({ role: 'active', tls: false, host: hp.host, port: hp.port });
  return err(`not an endpoint to connect to: ${ACTIVE_FORMS}`);
}

/** An endpoint to listen on (port 0-65535, 0: any free port); the error says what the text should have been. */
export function parsePassiveEndpoint(text: string): Result<OfEndpoint, string> {
  const m = PASSIVE.exec(text);
  if (m) {
    const port = m[2] === undefined ? OFP_TCP_PORT : Number(m[2]);
    if (port > 65535) return err(`port ${m[2]} is not 0-65535`);
    return ok({ role: 'passive', tls: m[1] === 'pssl', host: m[3] === undefined ? '' : unbracket(m[3]), port });
  }
  const hp = plainHostPort(text);
  if (hp) return ok({ role: 'passive', tls: false, host: hp.host, port: hp.port });
  return err(`not an endpoint to listen on: ${PASSIVE_FORMS}`);
}

/** The endpoint in Open vSwitch's words: ssl:HOST:PORT, tcp:HOST:PORT, pssl:PORT:HOST, ptcp:PORT[:HOST]. */
export function formatEndpoint(e: OfEndpoint): string {
  const host = e.host.includes(':') ? `[${e.host}]` : e.host;
  if (e.role === 'active') return `${e.tls ? 'ssl' : 'tcp'}:${host}:${e.port}`;
  return `${e.tls ? 'pssl' : 'ptcp'}:${e.port}${host === '' ? '' : `:${host}`}`;
}

/**
 * Whoever reaches a passive agent controls the router: without TLS it
 * listens on loopback only, where only this machine's users reach it.
 */
export function plainBeyondLoopback(e: OfEndpoint): boolean {
  return e.role === 'passive' && !e.tls && !isLoopbackHost(e.host);
}

/** Whether an active endpoint names what a passive one listens on (the same port and TLS; the host, unless it listens on every address). */
export function reaches(active: OfEndpoint, passive: OfEndpoint): boolean {
  return active.port === passive.port && active.tls === passive.tls && (passive.host === '' || passive.host === active.host);
}
