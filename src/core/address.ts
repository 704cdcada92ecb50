/**
 * `host:port` or `[v6]:port` split into its host (brackets removed) and port
 * (0-65535); undefined for anything else. The one parser of the listen and
 * connect addresses in the configuration (monitor, OpenFlow, controller).
 */
export function parseHostPort(text: string): { host: string; port: number } | undefined {
  const m = /^\[([0-9a-fA-F:.]+)\]:(\d{1,5})$/.exec(text) ?? /^([^:[\]\s]+):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[2]) : NaN;
  return m && port <= 65535 ? { host: m[1]!, port } : undefined;
}

/** Whether a host (brackets removed) is this machine's loopback: localhost, ::1 or 127.0.0.0/8. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
