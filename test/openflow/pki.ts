import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** Whether a command is on the PATH. */
export const have = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

/** One side's files, as openflow.tls and controller.tls name them. */
export interface TlsFiles {
  privateKey: string;
  certificate: string;
  caCert: string;
}

/** An ovs-pki hierarchy: a switch and a controller, each with its key, its certificate and the other side's CA certificate. */
export interface Pki {
  switch: TlsFiles;
  controller: TlsFiles;
}

function ovsPki(cwd: string, dir: string, ...args: string[]): void {
  const r = spawnSync('ovs-pki', ['-b', `--dir=${dir}`, `--log=${dir}.log`, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `ovs-pki ${args.join(' ')}: ${r.stderr}`);
}

/**
 * Makes a PKI as the Open vSwitch manual does (ovs-pki(8)) in `dir`, named
 * `name`: `init` (a CA for the controllers and one for the switches), then
 * `req+sign NAME-switch switch` and `req+sign NAME-controller controller`.
 * A switch verifies controllers with controllerca's certificate, a
 * controller verifies switches with switchca's.
 */
export function makePki(dir: string, name: string): Pki {
  const pki = join(dir, name);
  ovsPki(dir, pki, 'init');
  ovsPki(dir, pki, 'req+sign', `${name}-switch`, 'switch');
  ovsPki(dir, pki, 'req+sign', `${name}-controller`, 'controller');
  const own = (who: string): Omit<TlsFiles, 'caCert'> => ({
    privateKey: join(dir, `${name}-${who}-privkey.pem`),
    certificate: join(dir, `${name}-${who}-cert.pem`),
  });
  return {
    switch: { ...own('switch'), caCert: join(pki, 'controllerca', 'cacert.pem') },
    controller: { ...own('controller'), caCert: join(pki, 'switchca', 'cacert.pem') },
  };
}

/** A TCP port free on 127.0.0.1 now (the system's pick for port 0). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const a = s.address();
  await new Promise((r) => s.close(r));
  assert.ok(a && typeof a === 'object');
  return a.port;
}
