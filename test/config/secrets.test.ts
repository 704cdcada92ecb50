import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import stableStringify from 'fast-json-stable-stringify';
import { applyOverrides, ConfigVersions, configVersion, defaultNodeConfig, loadNodeConfig, parseNodeConfig, SECRET_FIELDS } from '../../src/config/load.js';
import { changedPaths, liveChange, redactConfig, REDACTED } from '../../src/config/live.js';
import { parseScenario } from '../../src/config/scenario.js';
import { withoutFields } from '../../src/config/secrets.js';
import type { NodeConfig } from '../../src/config/types.js';
import { newMonitorToken } from '../../src/cli/keygen.js';
import { parseRequest } from '../../src/control/protocol.js';
import { ConfigError } from '../../src/core/errors.js';
import { curvePublicKey } from '../../src/wire/curve-key.js';
import { curveKeyPair } from 'zeromq';

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
  test('the secret fields are the CURVE secret keys, the monitor token and the gateway scan-report key, from the schema', () => {
    assert.deepEqual([...SECRET_FIELDS].sort(), ['control.curve.secretKey', 'gateway.scan.key', 'monitor.token', 'sim.medium.curve.secretKey']);
  });

  test('it is the SHA-256 of the canonical JSON without the secret fields', () => {
    for (const c of [defaultNodeConfig(5), withSecrets()]) {
      const bare = structuredClone(c) as unknown as {
        control: { curve: Record<string, unknown> };
        monitor: Record<string, unknown>;
        sim: { medium: { curve: Record<string, unknown> } };
        gateway: { scan: Record<string, unknown> };
      };
      delete bare.control.curve.secretKey;
      delete bare.monitor.token;
      delete bare.sim.medium.curve.secretKey;
      delete bare.gateway.scan.key;
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

/** Asserts that `text` holds neither `secret` nor any 8 characters of it in a row. */
function assertNoSecret(text: string, secret: string): void {
  for (let i = 0; i + 8 <= secret.length; i++) {
    const piece = secret.slice(i, i + 8);
    assert.ok(!text.includes(piece), `${JSON.stringify(piece)} of the secret is in: ${text}`);
  }
}

/** The ConfigError `f` throws. */
function refusal(f: () => unknown): ConfigError {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e;
  }
  assert.fail('expected a ConfigError');
}

/** Every way a refusal goes out: its message, and its issues as the control API sends them. */
const shown = (e: ConfigError): string => `${e.message}\n${JSON.stringify(e.issues)}`;

describe('no error shows a secret', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cogmesh-secrets-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The secret key with its character at `at` replaced by `c`. */
  const changed = (at: number, c: string): string => `${SERVER.secretKey.slice(0, at)}${c}${SERVER.secretKey.slice(at + 1)}`;

  test('a CURVE secret key with one wrong character: the field and what is wrong, not the key, and not "a string"', () => {
    const cases: Array<[string, RegExp]> = [
      [changed(17, '~'), /a character outside the Z85 alphabet/],
      [changed(17, '"'), /a character outside the Z85 alphabet/],
      [SERVER.secretKey.slice(0, 39), /39 characters, not 40/],
      [`${SERVER.secretKey}x`, /41 characters, not 40/],
      [`#####${SERVER.secretKey.slice(5)}`, /a group of 5 characters that decodes to more than 32 bits/],
    ];
    for (const [bad, why] of cases) {
      const e = refusal(() => parseNodeConfig({ node: { id: 1 }, control: { curve: { publicKey: SERVER.publicKey, secretKey: bad } } }));
      const issue = e.issues.find((i) => i.path === '/control/curve/secretKey');
      assert.ok(issue, shown(e));
      assert.equal(issue.value, REDACTED);
      assert.match(issue.expected, /^a CURVE secret key, 40 characters of Z85/);
      assert.match(issue.expected, why);
      assert.doesNotMatch(e.message, /expected a string/);
      assertNoSecret(shown(e), bad);
    }
  });

  test('a public key is no secret: its problems show it', () => {
    const bad = `${SERVER.publicKey.slice(0, 10)}~${SERVER.publicKey.slice(11)}`;
    const e = refusal(() => parseNodeConfig({ node: { id: 1 }, control: { curve: { publicKey: bad, secretKey: SERVER.secretKey, allow: [bad] } } }));
    for (const path of ['/control/curve/publicKey', '/control/curve/allow/0']) {
      const issue = e.issues.find((i) => i.path === path);
      assert.equal(issue?.value, bad, shown(e));
      assert.match(issue.expected, /a character outside the Z85 alphabet/);
    }
  });

  test('from a file, from an override, from a scenario: the same refusal without the secret', async () => {
    const bad = changed(3, '~');
    const file = join(dir, 'node.json');
    await writeFile(file, JSON.stringify({ node: { id: 1 }, control: { curve: { publicKey: SERVER.publicKey, secretKey: bad } } }));
    await assert.rejects(loadNodeConfig(file), (e: ConfigError) => {
      assert.match(e.message, /\/control\/curve\/secretKey: "\(redacted\)" — expected a CURVE secret key/);
      assertNoSecret(shown(e), bad);
      return true;
    });
    const o = refusal(() => applyOverrides(defaultNodeConfig(1), [`control.curve.publicKey=${SERVER.publicKey}`, `control.curve.secretKey=${bad}`]));
    assertNoSecret(shown(o), bad);
    const sc = refusal(() =>
      parseScenario({ name: 's', topology: { kind: 'chain', nodes: 2 }, node: { control: { curve: { publicKey: SERVER.publicKey, secretKey: bad } } } }),
    );
    assert.ok(
      sc.issues.some((i) => i.path.endsWith('/control/curve/secretKey')),
      shown(sc),
    );
    assertNoSecret(shown(sc), bad);
  });

  test('a secret too long for the schema, or not a string: withheld too', () => {
    const long = 'k'.repeat(300);
    const e = refusal(() => parseNodeConfig({ node: { id: 1 }, monitor: { token: long } }));
    assert.equal(e.issues.find((i) => i.path === '/monitor/token')?.value, REDACTED);
    assertNoSecret(shown(e), long);
    const n = refusal(() => parseNodeConfig({ node: { id: 1 }, monitor: { token: 123456789012345 } }));
    assert.equal(n.issues.find((i) => i.path === '/monitor/token')?.value, REDACTED);
  });

  test('a misspelt secret (an unknown field beside a secret) is withheld; unknown fields elsewhere are shown', () => {
    const e = refusal(() =>
      parseNodeConfig({ node: { id: 1 }, sensing: { durationMS: 20 }, control: { curve: { secret_key: SERVER.secretKey } }, monitor: { Token: TOKEN_A } }),
    );
    const at = (p: string): unknown => e.issues.find((i) => i.path === p)?.value;
    assert.equal(at('/control/curve/secret_key'), REDACTED, shown(e));
    assert.equal(at('/monitor/Token'), REDACTED);
    assert.equal(at('/sensing/durationMS'), 20, 'a typo elsewhere still shows its value');
    assertNoSecret(shown(e), SERVER.secretKey);
    assertNoSecret(shown(e), TOKEN_A);
    // The same through dotted paths (the control API's set, the command line's overrides).
    const o = refusal(() => applyOverrides(defaultNodeConfig(1), [`monitor.tokn=${TOKEN_A}`]));
    assert.equal(o.issues[0]?.path, '/monitor/tokn');
    assertNoSecret(shown(o), TOKEN_A);
  });

  test('a live change checked against a running router: its refusal carries no secret, running or new', () => {
    const running = withSecrets();
    const e = refusal(() =>
      liveChange(running, { ...running, control: { ...running.control, curve: { ...running.control.curve, secretKey: changed(9, ' ') } } }),
    );
    assertNoSecret(shown(e), running.control.curve.secretKey);
    assertNoSecret(shown(e), changed(9, ' '));
    const restart = liveChange(running, { ...running, monitor: { ...running.monitor, token: TOKEN_B } });
    assertNoSecret(JSON.stringify(restart.restartOnly), TOKEN_A);
    assertNoSecret(JSON.stringify(restart.restartOnly), TOKEN_B);
  });

  test('a JSON syntax error in a configuration file quotes no string: the secret stays out of the message', async () => {
    const key = SERVER.secretKey;
    const texts = [
      `{"node": {"id": 1}, "control": {"curve": {"secretKey": "${key}}}}`, // never closed
      `{"node": {"id": 1}, "control": {"curve": {"secretKey": "${key.slice(0, 20)}\\q${key.slice(20)}"}}}`, // a bad escape
      `{"node": {"id": 1}, "control": {"curve": {"secretKey" "${key}"}}}`, // no colon: the error is at the string
      `{"node": {"id": 1}, "control": {"curve": {"secretKey": "${key}" "publicKey": ""}}}`, // no comma
      `{"node": {"id": 1}, "control": {"curve": {"secretKey": "${key.slice(0, 20)}\n${key.slice(20)}"}}}`, // a line break in it
    ];
    const file = join(dir, 'broken.json');
    for (const text of texts) {
      await writeFile(file, text);
      await assert.rejects(loadNodeConfig(file), (e: ConfigError) => {
        assert.match(e.message, /valid JSON: .* at line \d+, column \d+/);
        assertNoSecret(shown(e), key);
        return true;
      });
    }
  });

  test('a control request that is not JSON: the reply names where, and quotes none of the request', () => {
    for (const text of [
      `{"cmd": "set", "values": {"monitor.token": "${TOKEN_B}}}`,
      `{"cmd": "set", "values": {"monitor.token": "${TOKEN_B}" x}}`,
      `{"cmd": tru, "x": "${TOKEN_B}"}`,
    ]) {
      const r = parseRequest(text);
      assert.ok(!r.ok);
      assert.equal(r.error.code, 'CONTROL_MALFORMED');
      assert.match(r.error.message, /^request is not JSON: .* at line 1, column \d+$/);
      assertNoSecret(r.error.message, TOKEN_B);
    }
  });
});

describe('the loader refuses weak monitor tokens and mismatched CURVE pairs', () => {
  const withToken = (token: string, listen = '') => parseNodeConfig({ node: { id: 1 }, monitor: { listen, token } });

  test('a token needs 128 bits: 22 base64url characters, or 32 hex digits', () => {
    const refused: Array<[string, RegExp]> = [
      ['a', /this one has 1 hex digit \(4 bits\), fewer than 32/],
      ['q', /this one has 1 character \(6 bits\), fewer than 22/],
      ['Zq8vXw4Ty6Rb1Nm0Lk2Jh', /21 characters \(126 bits\), fewer than 22/],
      ['0123456789abcdef0123456789abcde', /31 hex digits \(124 bits\), fewer than 32/],
      ['0123456789abcdef0123456789', /26 hex digits \(104 bits\)/],
      ['Zq8vXw4Ty6Rb1Nm0Lk2Jh+/=', /a character outside base64url/],
      ['correct horse battery staple', /a character outside base64url/],
    ];
    for (const [token, why] of refused) {
      const e = refusal(() => withToken(token));
      const issue = e.issues.find((i) => i.path === '/monitor/token');
      assert.ok(issue, shown(e));
      assert.equal(issue.value, REDACTED);
      assert.match(issue.expected, /^a token of at least 128 bits: 22 or more base64url characters \(A-Z a-z 0-9 - _\), or 32 or more hex digits/);
      assert.match(issue.expected, why);
      assert.match(issue.expected, /cogmesh keygen --token/);
      if (token.length >= 8) assertNoSecret(shown(e), token);
      else assert.ok(!e.message.includes(`"${token}"`), e.message);
    }
    for (const token of ['', TOKEN_A, TOKEN_B, 'Zq8vXw4Ty6Rb1Nm0Lk2Jh_', '0123456789ABCDEF0123456789abcdef', 'x'.repeat(256)]) {
      assert.equal(withToken(token).monitor.token, token, `${token.length} characters`);
    }
    // The schema's pattern says as much to tools that read only the schema; the loader's words replace its own.
    const e = refusal(() => withToken('short'));
    assert.equal(e.issues.filter((i) => i.path === '/monitor/token').length, 1);
  });

  test('beyond loopback a token is required, by the same rule', () => {
    const e = refusal(() => withToken('', '0.0.0.0:8080'));
    assert.match(
      e.issues.find((i) => i.path === '/monitor/token')?.expected ?? '',
      /^a token of at least 128 bits.*listens beyond loopback \(0\.0\.0\.0:8080\)/,
    );
    assert.equal(withToken(TOKEN_A, '0.0.0.0:8080').monitor.listen, '0.0.0.0:8080');
  });

  test('keygen --token makes a token of 256 bits that the loader takes', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const t = newMonitorToken();
      assert.match(t, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(withToken(t).monitor.token, t);
      seen.add(t);
    }
    assert.equal(seen.size, 20);
  });

  test("curvePublicKey: the public key of a secret key, as libzmq's pairs have it", () => {
    assert.equal(curvePublicKey(SERVER.secretKey), SERVER.publicKey);
    assert.equal(curvePublicKey(CLIENT.secretKey), CLIENT.publicKey);
    for (let i = 0; i < 20; i++) {
      const k = curveKeyPair();
      assert.equal(curvePublicKey(k.secretKey), k.publicKey);
    }
    assert.equal(curvePublicKey(SERVER.secretKey.slice(1)), undefined);
    assert.equal(curvePublicKey(`~${SERVER.secretKey.slice(1)}`), undefined);
  });

  test("a public key that is not the secret key's is refused at the public key, without the secret", () => {
    const e = refusal(() => parseNodeConfig({ node: { id: 1 }, control: { curve: { publicKey: SERVER.publicKey, secretKey: CLIENT.secretKey } } }));
    const issue = e.issues.find((i) => i.path === '/control/curve/publicKey');
    assert.ok(issue, shown(e));
    assert.equal(issue.value, SERVER.publicKey, 'the public key may be shown');
    assert.match(issue.expected, /the public key of control\.curve\.secretKey \(this one belongs to another secret key\)/);
    assertNoSecret(shown(e), CLIENT.secretKey);
    const ok = parseNodeConfig({ node: { id: 1 }, control: { curve: { ...CLIENT, allow: [SERVER.publicKey] } } });
    assert.equal(ok.control.curve.publicKey, CLIENT.publicKey);
  });
});
