import { createServer, type Socket } from 'node:net';
import { Command, Option } from 'commander';
import { UsageError } from '../core/errors.js';
import { RealClock } from '../core/time.js';
import { createLogger } from '../node/log.js';
import { CettController, type FlowSpec, type Send } from '../openflow/controller.js';
import { encodeOf, errorReplyFor, OfFramer, parseOf } from '../wire/openflow/index.js';
import { MAX_FOR_S } from './node.js';

interface ControllerOpts {
  listen: string;
  flow: string[];
  acc?: string;
  accMode: 'split' | 'e2e';
  hysteresis: string;
  for?: string;
  logFormat: 'pretty' | 'json';
}

const collect = (v: string, prev: string[]): string[] => [...prev, v];

/**
 * `tcp:SRC-DST:PORT` or `udp:SRC-DST[:PORT]` (mesh addresses) as a
 * controller flow, optionally followed by `,label=L` (its IPv6 flow label,
 * decimal or 0x hex) and `,queue=Q` (the QoS queue its entries set).
 */
export function parseFlowArg(text: string, id: number, acc: FlowSpec['acc']): FlowSpec {
  const [head = '', ...opts] = text.split(',');
  const m = /^(tcp|udp):(\d+)-(\d+)(?::(\d+))?$/.exec(head);
  if (!m) throw new UsageError(`--flow: "${text}" is not PROTO:SRC-DST[:PORT][,label=L][,queue=Q] (e.g. tcp:0-4:5001 or udp:0-4,label=0x100)`);
  const [, proto, src, dst, port] = m;
  const spec: FlowSpec = { id, proto: proto as 'tcp' | 'udp', srcAddr: Number(src), dstAddr: Number(dst), ...(port !== undefined ? { dstPort: Number(port) } : {}), ...(acc && proto === 'tcp' ? { acc } : {}) };
  const seen = new Set<string>();
  for (const o of opts) {
    const kv = /^(label|queue)=(0x[0-9a-fA-F]+|\d+)$/.exec(o);
    if (!kv) throw new UsageError(`--flow: "${o}" in "${text}" is not label=L or queue=Q (decimal or 0x hex)`);
    const key = kv[1] as 'label' | 'queue';
    if (seen.has(key)) throw new UsageError(`--flow: ${key} is given twice in "${text}"`);
    seen.add(key);
    // label=0 is no label, as in scenarios and traffic flows.
    if (key === 'label' && Number(kv[2]) === 0) continue;
    spec[key] = Number(kv[2]);
  }
  return spec;
}

/**
 * `cogmesh controller`: the CETT controller / VIM on TCP. Routers whose
 * agents are in active mode connect to it; it learns the links' RC from
 * their ports, installs each flow along its minimum-CETT path, moves it when
 * RC changes enough, and places TCP-ACC VNFs on the path's relays.
 */
export function controllerCommand(): Command {
  return new Command('controller')
    .description('run the CETT controller: routers in openflow active mode connect; each --flow goes along its minimum-CETT path, with TCP-ACC VNFs on its relays when asked')
    .option('--listen <host:port>', 'where routers connect', '127.0.0.1:6653')
    .option('--flow <proto:src-dst[:port][,label=L][,queue=Q]>', 'a flow to place, e.g. tcp:0-4:5001 or udp:0-4,label=0x100 (repeatable)', collect, [])
    .option('--acc <every|every-K>', 'TCP-ACC on the relays of TCP flows')
    .addOption(new Option('--acc-mode <mode>', 'TCP-ACC mode').choices(['split', 'e2e']).default('split'))
    .option('--hysteresis <fraction>', 'move a flow when its CETT is this much above the best', '0.2')
    .option('--for <seconds>', 'stop after this many seconds')
    .addOption(new Option('--log-format <format>', 'log lines for people or one JSON object a line').choices(['pretty', 'json']).default('pretty'))
    .action(async (o: ControllerOpts) => {
      const m = /^(\[[0-9a-fA-F:]+\]|[^:]+):(\d{1,5})$/.exec(o.listen);
      if (!m) throw new UsageError(`--listen: "${o.listen}" is not host:port`);
      const hysteresis = Number(o.hysteresis);
      if (!(hysteresis >= 0 && hysteresis <= 10)) throw new UsageError(`--hysteresis: "${o.hysteresis}" is not a fraction in [0, 10]`);
      const forS = o.for === undefined ? undefined : Number(o.for);
      if (forS !== undefined && !(forS > 0 && forS <= MAX_FOR_S)) throw new UsageError(`--for: "${o.for}" is not a number of seconds in (0, ${MAX_FOR_S}]`);
      let acc: FlowSpec['acc'];
      if (o.acc !== undefined) {
        const k = o.acc === 'every' ? 1 : /^every-(\d+)$/.exec(o.acc)?.[1];
        if (k === undefined || Number(k) < 1) throw new UsageError(`--acc: "${o.acc}" is not every or every-K`);
        acc = { mode: o.accMode, everyHops: Number(k) };
      }
      const flows = o.flow.map((f, i) => parseFlowArg(f, i + 1, acc));
      const log = createLogger({ level: 'info', format: o.logFormat });
      const clock = new RealClock();
      const ctl = new CettController<number>({ hysteresis });
      const sockets = new Map<number, Socket>();
      let next = 1;
      const deliver = (out: readonly Send<number>[]): void => {
        for (const s of out) sockets.get(s.to)?.write(encodeOf(s.msg));
      };
      let lastPaths = '';
      const report = (): void => {
        const paths = ctl.paths();
        const text = JSON.stringify(paths.map((p) => [p.id, p.state, p.routers]));
        if (text === lastPaths) return;
        lastPaths = text;
        for (const p of paths) {
          log.info({ event: 'flow-path', flow: p.id, state: p.state, routers: p.routers, cett: p.cett, vnfs: p.vnfs }, `flow ${p.id}: ${p.state === 'installed' ? `${p.routers.join(' -> ')} (CETT ${(p.cett * 1000).toFixed(2)} ms${p.vnfs.length > 0 ? `, TCP-ACC on ${p.vnfs.join(', ')}` : ''})` : 'pending: no path yet'}`);
        }
      };
      for (const f of flows) {
        const r = ctl.addFlow(f, clock.now());
        if (!r.ok) throw new UsageError(`--flow ${f.id}: ${r.error.detail}`);
        deliver(r.value.out);
      }
      const server = createServer((sock) => {
        const key = next++;
        sockets.set(key, sock);
        const framer = new OfFramer();
        log.info({ event: 'switch-connected', session: key, remote: `${sock.remoteAddress}:${sock.remotePort}` }, `a router connected (session ${key})`);
        for (const msg of ctl.open(key)) sock.write(encodeOf(msg));
        sock.on('data', (chunk: Buffer) => {
          framer.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          for (let r = framer.next(); r !== undefined; r = framer.next()) {
            if (!r.ok) {
              sock.destroy();
              return;
            }
            const parsed = parseOf(r.value);
            if (!parsed.ok) {
              sock.write(encodeOf(errorReplyFor(parsed.error, r.value)));
              continue;
            }
            deliver(ctl.receive(key, parsed.value, clock.now()));
          }
          report();
        });
        sock.on('error', () => undefined);
        sock.once('close', () => {
          sockets.delete(key);
          log.info({ event: 'switch-gone', session: key }, `a router's connection closed (session ${key})`);
          deliver(ctl.close(key, clock.now()));
          report();
        });
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', (e: NodeJS.ErrnoException) => reject(new UsageError(`--listen: cannot listen on ${o.listen} (${e.code ?? e.message})`)));
        server.listen(Number(m[2]), m[1]!.replace(/^\[|\]$/g, ''), () => resolve());
      });
      log.info({ event: 'controller-start', listen: o.listen, flows: flows.length }, `CETT controller on ${o.listen}: ${flows.length} flow(s)`);
      const why = await new Promise<string>((resolve) => {
        process.once('SIGINT', () => resolve('SIGINT'));
        process.once('SIGTERM', () => resolve('SIGTERM'));
        if (forS !== undefined) setTimeout(() => resolve(`--for ${forS} s elapsed`), forS * 1000);
      });
      log.info({ event: 'controller-stop', why, paths: ctl.paths() }, `controller stopping (${why})`);
      for (const s of sockets.values()) s.destroy();
      server.close();
      process.exit(0);
    });
}
