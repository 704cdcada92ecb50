import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { OfTlsConfig } from '../config/types.js';
import { ConfigError, type ConfigIssue } from '../core/errors.js';

/** The PEM texts of one side's TLS material, read and checked (`loadOfTls`). */
export interface OfTls {
  key: string;
  cert: string;
  ca: string;
  /** The certificate's subject, for the log. */
  subject: string;
}

/**
 * Reads and checks an OpenFlow side's TLS files (`openflow.tls` or
 * `controller.tls`; `at` is that section's path, e.g. /openflow/tls): each
 * is readable, the key is a private key, the certificate and the CA
 * certificate are X.509 certificates, and the certificate is the key's.
 * Throws a ConfigError naming every file that is not, so a router never
 * opens a TLS endpoint it would then fail every handshake on.
 */
export function loadOfTls(files: OfTlsConfig, at: string): OfTls {
  const issues: ConfigIssue[] = [];
  const read = (k: keyof OfTlsConfig, what: string): string | undefined => {
    const path = files[k];
    if (path === '') return void issues.push({ path: `${at}/${k}`, value: path, expected: `the path of a PEM file, ${what}` });
    try {
      return readFileSync(path, 'utf8');
    } catch (e) {
      return void issues.push({
        path: `${at}/${k}`,
        value: path,
        expected: `a readable PEM file, ${what} (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
      });
    }
  };
  const parse = <T>(k: keyof OfTlsConfig, text: string | undefined, what: string, f: (t: string) => T): T | undefined => {
    if (text === undefined) return undefined;
    try {
      return f(text);
    } catch (e) {
      return void issues.push({ path: `${at}/${k}`, value: files[k], expected: `${what} (${(e as Error).message})` });
    }
  };
  const keyText = read('privateKey', "this side's private key");
  const certText = read('certificate', "this side's certificate");
  const caText = read('caCert', "the CA certificate of the peers' certificates");
  const key = parse<KeyObject>('privateKey', keyText, 'a PEM private key (ovs-pki: NAME-privkey.pem)', (t) => createPrivateKey(t));
  const cert = parse('certificate', certText, 'a PEM certificate (ovs-pki: NAME-cert.pem)', (t) => new X509Certificate(t));
  parse('caCert', caText, 'a PEM CA certificate (ovs-pki: controllerca/cacert.pem or switchca/cacert.pem)', (t) => new X509Certificate(t));
  if (key && cert && !cert.checkPrivateKey(key))
    issues.push({
      path: `${at}/certificate`,
      value: files.certificate,
      expected: `the certificate of the private key in ${at}/privateKey (it is another key's)`,
    });
  if (issues.length > 0) throw new ConfigError(issues);
  const tls: OfTls = { key: keyText!, cert: certText!, ca: caText!, subject: cert!.subject.replace(/\n/g, ', ') };
  // What OpenSSL itself refuses (a key type it does not take for TLS) is named too.
  parse('certificate', certText, 'material OpenSSL takes for TLS', () => createSecureContext({ key: tls.key, cert: tls.cert, ca: tls.ca }));
  if (issues.length > 0) throw new ConfigError(issues);
  return tls;
}
