import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import stableStringify from 'fast-json-stable-stringify';
import { applyOverrides, ConfigVersions, configVersion, defaultNodeConfig, SECRET_FIELDS } from '../../src/config/load.js';
import { changedPaths, redactConfig, REDACTED } from '../../src/config/live.js';
import { withoutFields } from '../../src/config/secrets.js';
import type { NodeConfig } from '../../src/config/types.js';

/** The key pairs of the ZeroMQ guide's Ironhouse example (server, client): a pair made by libzmq, known from outside cogmesh. */
const SERVER = { publicKey: 'rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7', secretKey: 'JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6' };
const CLIENT = { publicKey: 'Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID', secretKey: 'D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs' };
/** Monitor tokens of 128 bits and more. */
const TOKEN_A = 'q3Vb0oS9yUe4n7ZcJx2LwA';
const TOKEN_B = '4f1c2b8e9d7a6b5c4d3e2f1a0b9c8d7e';

/** A node with a CURVE key pair and a monitor token. */
function withSecrets(token = TOKEN_A, pair = SERVER): NodeConfig {
  return applyOverrides(defaultNodeConfig(4), [
    `control.curve.publicKey=${pair.publicKey}`,
    `control.curve.secretKey=${pair.secretKey}`,
    `monitor.token=${token}`,
  ]);
}

describe('the configuration version leaves the secrets out', () => {
  test('the secret fields are the CURVE secret key and the monitor token, from the schema', () => {
    assert.deepEqual([...SECRET_FIELDS].sort(), ['control.curve.secretKey', 'monitor.token']);
  });

  test('it is the SHA-256 of the canonical JSON without the secret fields', () => {
    for (const c of [defaultNodeConfig(5), withSecrets()]) {
      const bare = structuredClone(c) as unknown as { control: { curve: Record<string, unknown> }; monitor: Record<string, unknown> };
      delete bare.control.curve.secretKey;
      delete bare.monitor.token;
      assert.equal(configVersion(c), createHash('sha256').update(stableStringify(bare)).digest('hex').slice(0, 16));
    }
  });

  test('changing a secret alone leaves the version as it was; any other field changes it', () => {
    const a = withSecrets(TOKEN_A, SERVER);
    const b = withSecrets(TOKEN_B, SERVER);
    const unset = applyOverrides(a, ['monitor.token=""']);
    assert.equal(configVersion(a), configVersion(b));
    assert.equal(configVersion(a), configVersion(unset), 'whether a token is set does not show either');
    // The public key is no secret: a new pair is a new version.
    assert.notEqual(configVersion(a), configVersion(withSecrets(TOKEN_A, CLIENT)));
    assert.notEqual(configVersion(a), configVersion(applyOverrides(a, ['monitor.statePeriodMs=600'])));
  });

  test('ConfigVersions keeps to the same rule across changes of secrets and of other fields', () => {
    let cfg = withSecrets();
    const versions = new ConfigVersions(cfg);
    for (const overrides of [[`monitor.token=${TOKEN_B}`], ['monitor.statePeriodMs=700', `monitor.token=${TOKEN_A}`], ['sensing.periodMs=900']]) {
      const next = applyOverrides(cfg, overrides);
      assert.equal(versions.update(next, changedPaths(cfg, next)), configVersion(next), overrides.join(' '));
      cfg = next;
    }
    const before = versions.version;
    const next = applyOverrides(cfg, [`monitor.token=${TOKEN_B}`]);
    assert.equal(versions.update(next, changedPaths(cfg, next)), before);
  });

  test('the version does not depend on the secrets: two routers that differ only there cannot be told apart by get', () => {
    const a = withSecrets(TOKEN_A);
    const b = withSecrets(TOKEN_B);
    assert.deepEqual(redactConfig(a), redactConfig(b));
    assert.equal(redactConfig(a).monitor.token, REDACTED);
    assert.equal(configVersion(a), configVersion(b));
  });

  test('withoutFields copies only what it must and never changes its input', () => {
    const doc = { a: { b: 1, c: { d: 2 } }, e: [1] };
    const before = structuredClone(doc);
    const out = withoutFields(doc, ['a.c.d', 'x.y', 'e.0']);
    assert.deepEqual(out, { a: { b: 1, c: {} }, e: [1] });
    assert.deepEqual(doc, before);
    assert.equal(out.e, doc.e, 'a member on no path is shared, not copied');
  });
});
