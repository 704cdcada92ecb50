import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Result } from '../../src/core/result.js';
import { formatEndpoint, parseActiveEndpoint, parsePassiveEndpoint, plainBeyondLoopback, reaches, type OfEndpoint } from '../../src/openflow/endpoint.js';

/** The endpoint a parse gave; fails the test with the parser's error otherwise. */
function value(text: string, r: Result<OfEndpoint, string>): OfEndpoint {
  assert.ok(r.ok, `${text}: ${r.ok ? '' : r.error}`);
  return r.value;
}
const active = (text: string): OfEndpoint => value(text, parseActiveEndpoint(text));
const passive = (text: string): OfEndpoint => value(text, parsePassiveEndpoint(text));

test("active endpoints in Open vSwitch's words: ssl:, tcp:, the plain HOST:PORT; port 6653 when omitted; IPv6 in brackets", () => {
  assert.deepEqual(active('ssl:10.0.0.254:6653'), { role: 'active', tls: true, host: '10.0.0.254', port: 6653 });
  assert.deepEqual(active('tcp:ctl.example:7000'), { role: 'active', tls: false, host: 'ctl.example', port: 7000 });
  assert.deepEqual(active('ssl:[fd00::1]'), { role: 'active', tls: true, host: 'fd00::1', port: 6653 });
  assert.deepEqual(active('127.0.0.1:6653'), { role: 'active', tls: false, host: '127.0.0.1', port: 6653 });
  assert.deepEqual(active('[::1]:6653'), { role: 'active', tls: false, host: '::1', port: 6653 });
  for (const bad of ['pssl:6653', 'ptcp:6653:127.0.0.1', 'ssl:', 'ssl:host:0', 'tcp:host:65536', 'host', 'ssl:fd00::1:6653', '', 'unix:/run/x']) {
    const r = parseActiveEndpoint(bad);
    assert.ok(!r.ok, `${bad} is refused`);
  }
  const r = parseActiveEndpoint('tcp:host:65536');
  assert.ok(!r.ok && /port 65536 is not 1-65535/.test(r.error), JSON.stringify(r));
});

test('passive endpoints: pssl:PORT[:HOST], ptcp:PORT[:HOST] (every address without HOST), the plain HOST:PORT; port 0 is any free port', () => {
  assert.deepEqual(passive('pssl:6634'), { role: 'passive', tls: true, host: '', port: 6634 });
  assert.deepEqual(passive('pssl:6634:127.0.0.1'), { role: 'passive', tls: true, host: '127.0.0.1', port: 6634 });
  assert.deepEqual(passive('ptcp:0:[::1]'), { role: 'passive', tls: false, host: '::1', port: 0 });
  assert.deepEqual(passive('pssl:'), { role: 'passive', tls: true, host: '', port: 6653 });
  assert.deepEqual(passive('127.0.0.1:6634'), { role: 'passive', tls: false, host: '127.0.0.1', port: 6634 });
  for (const bad of ['ssl:1.2.3.4:6653', 'tcp:1.2.3.4:6653', 'pssl:host', 'pssl:70000', 'pssl:6634:fd00::1', 'ptcp:6634:', '6634']) {
    assert.ok(!parsePassiveEndpoint(bad).ok, `${bad} is refused`);
  }
});

test('formatEndpoint writes what the parsers read back', () => {
  for (const t of ['ssl:10.0.0.254:6653', 'tcp:[fd00::1]:6653', 'pssl:6634:127.0.0.1', 'ptcp:6634', 'pssl:0:[::1]']) {
    const e = t.startsWith('p') ? passive(t) : active(t);
    assert.equal(formatEndpoint(e), t);
  }
  assert.equal(formatEndpoint(active('127.0.0.1:6653')), 'tcp:127.0.0.1:6653', 'the plain form is tcp:');
});

test('only a plain passive endpoint beyond loopback is refused; an active agent reaches a passive endpoint on its port, TLS and host', () => {
  assert.equal(plainBeyondLoopback(passive('ptcp:6634')), true, 'every address');
  assert.equal(plainBeyondLoopback(passive('0.0.0.0:6634')), true);
  assert.equal(plainBeyondLoopback(passive('ptcp:6634:10.0.0.1')), true);
  assert.equal(plainBeyondLoopback(passive('pssl:6634')), false, 'TLS may listen anywhere');
  for (const t of ['127.0.0.1:6634', '127.1.2.3:6634', 'ptcp:6634:[::1]', 'ptcp:6634:localhost']) assert.equal(plainBeyondLoopback(passive(t)), false, t);
  assert.equal(plainBeyondLoopback(active('tcp:10.0.0.1:6653')), false, 'an active endpoint listens nowhere');
  assert.equal(reaches(active('ssl:127.0.0.1:6653'), passive('pssl:6653')), true);
  assert.equal(reaches(active('ssl:127.0.0.1:6653'), passive('pssl:6653:127.0.0.1')), true);
  assert.equal(reaches(active('tcp:127.0.0.1:6653'), passive('pssl:6653')), false, 'plain to a TLS port');
  assert.equal(reaches(active('ssl:127.0.0.2:6653'), passive('pssl:6653:127.0.0.1')), false);
});
