import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CogmeshError } from '../core/errors.js';
import type { RecordingControl } from '../router/view.js';

/** Largest body of `POST /record` ({"seconds": N} needs a few bytes). */
const MAX_BODY_BYTES = 1024;

/**
 * The monitor's recordings (docs/monitor-protocol.md, "Recording"):
 *
 * - `POST /record` with the JSON body `{"seconds": N}` starts recording the
 *   next N seconds of the IQ the detector reads; `202` with the recording.
 *   Only `Content-Type: application/json` is taken: a page of another site
 *   cannot send that without the browser asking first (a CORS preflight,
 *   which the monitor never grants), and a browser's `Origin` must be the
 *   monitor's own.
 * - `GET /recordings`: the recordings since the router started, JSON.
 * - `GET /recordings/NAME.sigmf-meta` and `.sigmf-data`: a finished
 *   recording's files.
 *
 * The caller has checked the host and the token.
 */
export async function serveRecordings(
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  control: RecordingControl | undefined,
  originOk: boolean,
): Promise<void> {
  const text = (status: number, body: string, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers }).end(`${body}\n`);
  };
  const json = (status: number, v: unknown): void => {
    res
      .writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
      .end(`${JSON.stringify(v, (_k, x: unknown) => (x === undefined ? null : x))}\n`);
  };
  if (!control) return text(501, 'this router records nothing: it runs no monitor taps (it does not sense, channel.cognitive false)');

  if (path === '/record') {
    if (req.method !== 'POST') return text(405, 'POST {"seconds": N} to /record', { Allow: 'POST' });
    if (!originOk) return text(403, 'a page of another origin may not start a recording');
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') return text(415, 'the body must be JSON (Content-Type: application/json): {"seconds": N}');
    const body = await readBody(req);
    if (body === undefined) return text(413, `the body is larger than ${MAX_BODY_BYTES} bytes`);
    let seconds: unknown;
    try {
      seconds = (JSON.parse(body) as { seconds?: unknown } | null)?.seconds;
    } catch (e) {
      return text(400, `the body is not JSON: ${(e as Error).message}`);
    }
    if (typeof seconds !== 'number') return text(400, 'the body must be {"seconds": N}, N a number of seconds');
    try {
      return json(202, control.start(seconds));
    } catch (e) {
      if (!(e instanceof CogmeshError)) throw e;
      const status = e.code === 'RECORD_BUSY' ? 409 : e.code === 'RECORD_OFF' ? 403 : 400;
      return text(status, e.message);
    }
  }

  if (req.method !== 'GET' && req.method !== 'HEAD') return text(405, 'method not allowed', { Allow: 'GET, HEAD' });
  if (path === '/recordings') return json(200, { recordings: control.list() });
  const file = decodeURIComponent(path.slice('/recordings/'.length));
  const at = control.path(file);
  if (at === undefined) return text(404, `no finished recording file ${JSON.stringify(file)} on this router`);
  let size: number;
  try {
    size = (await stat(at)).size;
  } catch (e) {
    return text(404, `${file}: ${(e as Error).message}`);
  }
  res.writeHead(200, {
    'Content-Type': file.endsWith('.sigmf-meta') ? 'application/json' : 'application/octet-stream',
    'Content-Length': String(size),
    'Content-Disposition': `attachment; filename="${file}"`,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  if (req.method === 'HEAD') return void res.end();
  const stream = createReadStream(at);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

/** Whether `path` is one of the recordings' paths. */
export function isRecordingsPath(path: string): boolean {
  return path === '/record' || path === '/recordings' || path.startsWith('/recordings/');
}

/** The request's body as text, or undefined beyond MAX_BODY_BYTES. */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const body = new Uint8Array(MAX_BODY_BYTES);
  let size = 0;
  for await (const c of req) {
    const b = c as Uint8Array;
    if (size + b.length > MAX_BODY_BYTES) return undefined;
    body.set(b, size);
    size += b.length;
  }
  return new TextDecoder().decode(body.subarray(0, size));
}
