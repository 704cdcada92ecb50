/** How the monitor page writes values: HTML-escaped, with units a reader expects. */

/** `v` as HTML text. */
export function esc(v: unknown): string {
  return String(v).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** `v` as HTML text, or a dash when it is absent. */
export function dash(v: unknown): string {
  return v === null || v === undefined ? '&ndash;' : esc(v);
}

export function fmtMbps(bps: number): string {
  return (bps / 1e6).toFixed(2);
}

/** A share of a whole (0-1), three decimals. */
export function fmtShare(x: number): string {
  return x.toFixed(3);
}

export function fmtBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(1)} kB`;
  if (n < 1e9) return `${(n / 1e6).toFixed(1)} MB`;
  return `${(n / 1e9).toFixed(2)} GB`;
}

/** A duration in microseconds as ms, s or min and s (HTML; a dash when unknown). */
export function fmtAge(us: number | null | undefined): string {
  if (us === null || us === undefined || !isFinite(us)) return '&ndash;';
  const neg = us < 0;
  const a = Math.abs(us);
  const s = a < 1e6 ? `${Math.round(a / 1e3)} ms` : a < 6e7 ? `${(a / 1e6).toFixed(1)} s` : `${Math.floor(a / 6e7)} min ${Math.round((a % 6e7) / 1e6)} s`;
  return neg ? `-${s}` : s;
}

const two = (x: number): string => `${x < 10 ? '0' : ''}${x}`;

export function fmtUptime(seconds: number): string {
  const s = Math.floor(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  return h > 0 ? `${h}h ${two(m)}m` : m > 0 ? `${m}m ${two(r)}s` : `${r}s`;
}

/** A router's time: wall-clock time of day for epoch microseconds, else seconds since the start. */
export function fmtClock(atUs: number): string {
  if (atUs > 1e15) {
    const d = new Date(atUs / 1000);
    return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
  }
  return `t=${(atUs / 1e6).toFixed(3)} s`;
}

/** A path cost (infinite costs travel as null). */
export function fmtCost(c: number | null | undefined): string {
  return c === null || c === undefined ? '&infin;' : (Math.round(c * 100) / 100).toString();
}

/** A VNF's flow pattern, `*` for any field. */
export function fmtFlow(p: { proto?: unknown; srcIp?: unknown; srcPort?: unknown; dstIp?: unknown; dstPort?: unknown } | null | undefined): string {
  if (!p) return '*';
  const or = (v: unknown): string => (v === undefined || v === null ? '*' : String(v));
  return `${or(p.proto)} ${or(p.srcIp)}:${or(p.srcPort)} > ${or(p.dstIp)}:${or(p.dstPort)}`;
}
