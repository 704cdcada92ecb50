import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import stableStringify from 'fast-json-stable-stringify';
import { ConfigError, type ConfigIssue } from '../../src/core/errors.js';
import { applyOverrides, ConfigVersions, configVersion, defaultNodeConfig, loadNodeConfig, parseNodeConfig, schemaPath } from '../../src/config/load.js';
import { changedPaths } from '../../src/config/live.js';
import type { NodeConfig } from '../../src/config/types.js';

/** Runs `f`, expects a ConfigError, and returns it. */
function refusal(f: () => unknown): ConfigError {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected a ConfigError, got ${String(e)}`);
    assert.equal(e.code, 'CONFIG_INVALID');
    return e;
  }
  assert.fail('expected the configuration to be refused');
}

async function refusalAsync(f: () => Promise<unknown>): Promise<ConfigError> {
  try {
    await f();
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected a ConfigError, got ${String(e)}`);
    assert.equal(e.code, 'CONFIG_INVALID');
    return e;
  }
  assert.fail('expected the configuration to be refused');
}

/**
 * Asserts that `err` lists an issue at `path` with `value` whose expectation
 * matches `expected`, and that the message names all three.
 */
function hasIssue(err: ConfigError, path: string, value: unknown, expected: RegExp): ConfigIssue {
  const issue = err.issues.find((i) => i.path === path);
  assert.ok(issue, `no issue at ${path}; issues: ${JSON.stringify(err.issues)}`);
  assert.deepEqual(issue.value, value);
  assert.match(issue.expected, expected);
  const line = err.message.split('\n').find((l) => l.trimStart().startsWith(`${path}:`));
  assert.ok(line, `message does not name ${path}:\n${err.message}`);
  assert.ok(line.includes(issue.expected), `message does not say what was expected:\n${err.message}`);
  if (value !== undefined) assert.ok(line.includes(JSON.stringify(value).slice(0, 20)), `message does not show the value:\n${err.message}`);
  return issue;
}

/** A minimal valid configuration with `patch` merged in at the top level sections. */
function cfg(patch: Record<string, unknown> = {}): Record<string, unknown> {
  return { node: { id: 1 }, ...patch };
}

const fraction = (channel: number, busy = 0.5) => ({ channel, powerDbm: -50, pattern: { kind: 'fraction' as const, busy, meanBurstMs: 2 } });

describe('parseNodeConfig: defaults', () => {
  test('a minimal configuration is completed by the schema defaults', () => {
    const c = parseNodeConfig({ node: { id: 7 } });
    assert.deepEqual(c.node, { id: 7, name: 'cogmesh', seed: 1 });
    assert.deepEqual(c.channelPlan, { band: 'ism2g4', channels: 11, allowed: [] });
    assert.deepEqual(c.radios.R1, {
      frontend: 'sim',
      sampleRateHz: 1_000_000,
      gainDb: 0,
      calibrationDb: -10,
      device: '',
      txGainDb: 0,
      txChannel: 0,
      txAntenna: '',
    });
    assert.deepEqual(c.radios.R2, c.radios.R1);
    assert.deepEqual(c.radios.R3, { ...c.radios.R1, channel: 1 });
    assert.equal(c.sensing.durationMs, 70);
    assert.equal(c.sensing.periodMs, 1000);
    assert.equal(c.sensing.channelsPerRound, 0);
    assert.equal(c.sensing.windowUs, 10);
    assert.equal(c.sensing.ccaThresholdDbm, -62);
    assert.equal(c.sensing.memory, 0.5);
    assert.equal(c.sensing.backend, 'auto');
    assert.deepEqual(c.sensing.cooperative, { enabled: true, halfLifeMs: 2000, maxAgeMs: 5000, neighbourWeight: 0.5 });
    assert.deepEqual(c.channel, {
      capacityMbps: 2,
      hysteresis: 0.1,
      minDwellMs: 3000,
      loadMbps: 0,
      cognitive: true,
      initialChannel: 0,
      controlGuard: 0.05,
      contendedMoveProbability: 0.5,
    });
    assert.deepEqual(c.switching, { intervalMs: 50, adaptive: false, workConserving: false, overheadUs: 1000, queuePackets: 50 });
    assert.deepEqual(c.qos, {
      classes: [
        { name: 'high', label: 0x00100, queue: 1, minKbps: 400 },
        { name: 'low', label: 0x00200, queue: 2, minKbps: 200 },
      ],
      burstMs: 100,
    });
    assert.equal(c.routing.helloIntervalMs, 1000);
    assert.equal(c.routing.maxPaths, 3);
    assert.deepEqual(c.sim, {
      band: { noiseFigureDb: 6, pn: [], phases: [], repeat: true, hub: '', readLatencyUs: 0 },
      medium: { endpoint: '', xM: 0, yM: 0, sendWindow: 8, curve: { serverKey: '', publicKey: '', secretKey: '' } },
    });
    assert.deepEqual(c.control, { endpoint: '', telemetry: '', telemetryPeriodMs: 1000, curve: { publicKey: '', secretKey: '', allow: [] } });
    assert.deepEqual(c.monitor, {
      listen: '',
      token: '',
      statePeriodMs: 500,
      maxConnections: 32,
      psd: { enabled: true, bins: 256, segments: 16, maxPerS: 100 },
      record: { dir: '', maxS: 60, maxMiB: 256 },
    });
    assert.deepEqual(c.traffic, { flows: [] });
    assert.deepEqual(c.controller, {
      listen: '',
      connect: [],
      flows: [],
      acc: 'none',
      accMode: 'split',
      hysteresis: 0.2,
      tls: { privateKey: '', certificate: '', caCert: '' },
    });
    assert.deepEqual(c.openflow, {
      mode: 'off',
      listen: '127.0.0.1:6634',
      controller: '127.0.0.1:6653',
      datapathId: 0,
      rcStepKbps: 100,
      tableCapacity: 4096,
      echoIntervalMs: 5000,
      reconnectMinMs: 500,
      reconnectMaxMs: 16000,
      tls: { privateKey: '', certificate: '', caCert: '' },
    });
    assert.deepEqual(c.vnf, { memoryMb: 64, callBudgetMs: 250, instances: [] });
    assert.deepEqual(c.log, { level: 'info', format: 'pretty' });
  });

  test('defaults fill the fields a partial section leaves out, and inside PN patterns', () => {
    const c = parseNodeConfig(
      cfg({
        sensing: { durationMs: 20, cooperative: { enabled: false } },
        sim: { band: { pn: [{ channel: 3, pattern: { kind: 'onoff', idleMs: 100, busyMs: 50 } }], phases: [{ durationS: 2 }] } },
      }),
    );
    assert.equal(c.sensing.durationMs, 20);
    assert.equal(c.sensing.periodMs, 1000);
    assert.deepEqual(c.sensing.cooperative, { enabled: false, halfLifeMs: 2000, maxAgeMs: 5000, neighbourWeight: 0.5 });
    assert.deepEqual(c.sim.band.pn[0], { channel: 3, powerDbm: -50, pattern: { kind: 'onoff', idleMs: 100, busyMs: 50, distribution: 'exponential' } });
    assert.deepEqual(c.sim.band.phases[0], { durationS: 2, pn: [] });
  });

  test('defaultNodeConfig gives the defaults for a node id', () => {
    assert.deepEqual(defaultNodeConfig(), parseNodeConfig({ node: { id: 1 } }));
    assert.equal(defaultNodeConfig(42).node.id, 42);
    assert.deepEqual({ ...defaultNodeConfig(42), node: null }, { ...defaultNodeConfig(1), node: null });
  });

  test('the input object is never mutated, and two results share nothing', () => {
    const input = cfg({ sensing: { durationMs: 20 } });
    const copy = structuredClone(input);
    const a = parseNodeConfig(input);
    assert.deepEqual(input, copy);
    const b = parseNodeConfig(input);
    a.sim.band.pn.push(fraction(1));
    a.channelPlan.allowed.push(3);
    assert.deepEqual(b.sim.band.pn, []);
    assert.deepEqual(b.channelPlan.allowed, []);
    // A refused input is not mutated either.
    const bad = { node: { id: 1 }, sensing: { durationMs: -1 } };
    refusal(() => parseNodeConfig(bad));
    assert.deepEqual(bad, { node: { id: 1 }, sensing: { durationMs: -1 } });
  });

  test('the schema file is where schemaPath says', () => {
    assert.ok(existsSync(schemaPath));
    const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as { title: string };
    assert.match(schema.title, /cogmesh/);
  });
});

describe('parseNodeConfig: schema errors', () => {
  test('unknown field at the root', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sensin: { durationMs: 20 } })));
    hasIssue(
      e,
      '/sensin',
      { durationMs: 20 },
      /^no such field \(allowed: node, channelPlan, radios, sensing, channel, switching, qos, routing, sim, log, control, monitor, ip, gateway, traffic, vnf, openflow, controller, phy\)$/,
    );
  });

  test('a band hub beyond this machine, or not an endpoint', () => {
    const far = refusal(() => parseNodeConfig(cfg({ sim: { band: { hub: 'tcp://10.0.0.1:7700' } } })));
    hasIssue(far, '/sim/band/hub', 'tcp://10.0.0.1:7700', /^a loopback or ipc endpoint/);
    const odd = refusal(() => parseNodeConfig(cfg({ sim: { band: { hub: 'udp://x' } } })));
    hasIssue(odd, '/sim/band/hub', 'udp://x', /^the band hub endpoint: tcp:\/\/HOST:PORT or ipc:\/\/PATH$/);
    assert.equal(parseNodeConfig(cfg({ sim: { band: { hub: 'tcp://127.0.0.1:7700' } } })).sim.band.hub, 'tcp://127.0.0.1:7700');
  });

  test('unknown nested field', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sensing: { durationMS: 20 } })));
    hasIssue(e, '/sensing/durationMS', 20, /^no such field \(allowed: radio, durationMs, periodMs, .*backend, cooperative\)$/);
    const e2 = refusal(() => parseNodeConfig(cfg({ sensing: { cooperative: { halfLife: 1 } } })));
    hasIssue(e2, '/sensing/cooperative/halfLife', 1, /no such field \(allowed: enabled, halfLifeMs, maxAgeMs, neighbourWeight\)/);
  });

  test('wrong type', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sensing: { durationMs: '70' }, switching: { adaptive: 'yes' }, node: { id: 1, name: 5 } })));
    hasIssue(e, '/sensing/durationMs', '70', /^an integer >= 1 and <= 10000$/);
    hasIssue(e, '/switching/adaptive', 'yes', /^true or false$/);
    hasIssue(e, '/node/name', 5, /^a non-empty string/);
  });

  test('an integer field refuses a fraction', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sensing: { periodMs: 1000.5 } })));
    hasIssue(e, '/sensing/periodMs', 1000.5, /^an integer >= 1 and <= \d+$/);
  });

  test('below minimum', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sensing: { durationMs: 0 } })));
    hasIssue(e, '/sensing/durationMs', 0, /^an integer >= 1 and <= 10000$/);
    const e2 = refusal(() => parseNodeConfig(cfg({ channel: { capacityMbps: 0 } })));
    hasIssue(e2, '/channel/capacityMbps', 0, /^a number > 0 and <= \d+$/);
  });

  test('above maximum', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sensing: { memory: 0.995 }, node: { id: 65536 } })));
    hasIssue(e, '/sensing/memory', 0.995, /^a number >= 0 and <= 0.99$/);
    hasIssue(e, '/node/id', 65536, /^an integer >= 0 and <= 65535$/);
  });

  test('transmit options of a radio', () => {
    const e = refusal(() => parseNodeConfig(cfg({ radios: { R2: { frontend: 'uhd', txGainDb: -1, txChannel: 1.5 }, R3: { txAntenna: 'x'.repeat(65) } } })));
    hasIssue(e, '/radios/R2/txGainDb', -1, /^a number >= 0 and <= 100$/);
    hasIssue(e, '/radios/R2/txChannel', 1.5, /^an integer >= 0 and <= 31$/);
    hasIssue(e, '/radios/R3/txAntenna', 'x'.repeat(65), /at most 64/);
    const c = parseNodeConfig(cfg({ radios: { R2: { frontend: 'uhd', txGainDb: 12.5, txChannel: 1, txAntenna: 'TX/RX' } } }));
    assert.deepEqual([c.radios.R2.txGainDb, c.radios.R2.txChannel, c.radios.R2.txAntenna], [12.5, 1, 'TX/RX']);
  });

  test('bad enum value', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sensing: { backend: 'fpga' }, channelPlan: { channels: 12 } })));
    hasIssue(e, '/sensing/backend', 'fpga', /^one of "auto", "cpu", "wasm", "gpu"$/);
    hasIssue(e, '/channelPlan/channels', 12, /^one of 11, 13$/);
  });

  test('missing node.id', () => {
    const e = refusal(() => parseNodeConfig({}));
    hasIssue(e, '/node/id', undefined, /^a value \(required\)/);
    assert.match(e.message, /\/node\/id: \(missing\) — expected a value \(required\)/);
    const e2 = refusal(() => parseNodeConfig({ node: { name: 'x' } }));
    hasIssue(e2, '/node/id', undefined, /^a value \(required\)/);
  });

  test('a document that is not an object', () => {
    for (const input of [42, null, [], 'node']) {
      const e = refusal(() => parseNodeConfig(input));
      hasIssue(e, '/', input, /^an object with fields node, /);
    }
  });

  test('bad PN kind: one message naming the kinds, no noise from every branch', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sim: { band: { pn: [{ channel: 1, pattern: { kind: 'burst', busy: 0.5 } }] } } })));
    hasIssue(e, '/sim/band/pn/0/pattern/kind', 'burst', /^one of "off", "onoff", "fraction"$/);
    assert.equal(e.issues.length, 1, JSON.stringify(e.issues));
  });

  test('PN without a kind', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sim: { band: { pn: [{ channel: 1, pattern: { busy: 0.5 } }] } } })));
    hasIssue(e, '/sim/band/pn/0/pattern/kind', undefined, /^a value \(required\): one of "off", "onoff", "fraction"$/);
    assert.equal(e.issues.length, 1, JSON.stringify(e.issues));
  });

  test('PN fraction busy > 1: reported against the fraction kind only', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sim: { band: { pn: [fraction(3, 1.5)] } } })));
    hasIssue(e, '/sim/band/pn/0/pattern/busy', 1.5, /^a number >= 0 and <= 1$/);
    assert.equal(e.issues.length, 1, JSON.stringify(e.issues));
  });

  test('PN fields of another kind are unknown fields; a missing busy is required', () => {
    const e = refusal(() =>
      parseNodeConfig(
        cfg({
          sim: {
            band: {
              pn: [
                { channel: 2, pattern: { kind: 'onoff', busy: 0.5 } },
                { channel: 2, pattern: { kind: 'fraction' } },
              ],
            },
          },
        }),
      ),
    );
    hasIssue(e, '/sim/band/pn/0/pattern/busy', 0.5, /^no such field \(allowed: kind, idleMs, busyMs, distribution\)$/);
    hasIssue(e, '/sim/band/pn/1/pattern/busy', undefined, /^a value \(required\): a number >= 0 and <= 1$/);
  });

  test('PN power out of range, missing channel, wrong pattern type', () => {
    const e = refusal(() =>
      parseNodeConfig(
        cfg({
          sim: {
            band: {
              phases: [
                { durationS: 5, pn: [{ channel: 1, powerDbm: 31, pattern: { kind: 'off' } }, { pattern: { kind: 'off' } }, { channel: 1, pattern: 'on' }] },
              ],
            },
          },
        }),
      ),
    );
    hasIssue(e, '/sim/band/phases/0/pn/0/powerDbm', 31, /^a number >= -130 and <= 30$/);
    hasIssue(e, '/sim/band/phases/0/pn/1/channel', undefined, /^a value \(required\): an integer >= 1 and <= 13$/);
    hasIssue(e, '/sim/band/phases/0/pn/2/pattern', 'on', /"kind" is one of "off", "onoff", "fraction"/);
  });

  test('a phase needs a positive duration', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sim: { band: { phases: [{ durationS: 0 }, { pn: [] }] } } })));
    hasIssue(e, '/sim/band/phases/0/durationS', 0, /^a number > 0 and <= \d+$/);
    hasIssue(e, '/sim/band/phases/1/durationS', undefined, /^a value \(required\)/);
  });

  test('several problems are reported at once, schema and semantic alike', () => {
    const e = refusal(() =>
      parseNodeConfig({
        node: { id: -1, colour: 'red' },
        sensing: { backend: 'tpu', durationMs: 900, periodMs: 500 },
        radios: { R3: { channel: 12 } },
        log: { format: 'xml' },
      }),
    );
    hasIssue(e, '/node/id', -1, /^an integer >= 0 and <= 65535$/);
    hasIssue(e, '/node/colour', 'red', /^no such field/);
    hasIssue(e, '/sensing/backend', 'tpu', /^one of "auto", "cpu", "wasm", "gpu"$/);
    hasIssue(e, '/sensing/durationMs', 900, /at most sensing\.periodMs \(500 ms\)/);
    hasIssue(e, '/radios/R3/channel', 12, /a channel of the plan .*11 channels/);
    hasIssue(e, '/log/format', 'xml', /^one of "pretty", "json"$/);
    assert.equal(e.issues.length, 6, JSON.stringify(e.issues));
    assert.match(e.message, /^configuration refused \(6 problems\):/);
  });

  test('one issue per field even when it breaks several rules', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sensing: { durationMs: -2.5 } })));
    assert.equal(e.issues.length, 1, JSON.stringify(e.issues));
    hasIssue(e, '/sensing/durationMs', -2.5, /^an integer >= 1 and <= 10000$/);
  });

  test('the source names the document', () => {
    const e = refusal(() => parseNodeConfig({}, 'remote set from operator'));
    assert.equal(e.source, 'remote set from operator');
    assert.match(e.message, /^remote set from operator refused/);
  });
});

describe('parseNodeConfig: rules beyond the schema', () => {
  test('sensing duration longer than its period', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sensing: { durationMs: 1001 } })));
    hasIssue(e, '/sensing/durationMs', 1001, /^at most sensing\.periodMs \(1000 ms\)/);
    assert.equal(parseNodeConfig(cfg({ sensing: { durationMs: 1000 } })).sensing.durationMs, 1000);
  });

  test('an allowed channel outside the plan', () => {
    const e = refusal(() => parseNodeConfig(cfg({ channelPlan: { allowed: [1, 12] } })));
    hasIssue(e, '/channelPlan/allowed/1', 12, /^a channel of the plan ism2g4 with 11 channels \(1\.\.11\)$/);
    assert.deepEqual(parseNodeConfig(cfg({ channelPlan: { channels: 13, allowed: [1, 12, 13] } })).channelPlan.allowed, [1, 12, 13]);
  });

  test('the schema refuses channel numbers beyond any plan', () => {
    const e = refusal(() => parseNodeConfig(cfg({ channelPlan: { allowed: [0, 14] } })));
    hasIssue(e, '/channelPlan/allowed/0', 0, /^an integer >= 1 and <= 13$/);
    hasIssue(e, '/channelPlan/allowed/1', 14, /^an integer >= 1 and <= 13$/);
  });

  test('R3 control channel outside the plan', () => {
    const e = refusal(() => parseNodeConfig(cfg({ radios: { R3: { channel: 13 } } })));
    hasIssue(e, '/radios/R3/channel', 13, /^a channel of the plan ism2g4 with 11 channels/);
    assert.equal(parseNodeConfig(cfg({ channelPlan: { channels: 13 }, radios: { R3: { channel: 13 } } })).radios.R3.channel, 13);
  });

  test('initial channel outside the plan, or outside allowed; 0 is always fine', () => {
    const e = refusal(() => parseNodeConfig(cfg({ channel: { initialChannel: 12 } })));
    hasIssue(e, '/channel/initialChannel', 12, /^0 \(let the first decision pick\) or a channel of the plan/);
    const e2 = refusal(() => parseNodeConfig(cfg({ channelPlan: { allowed: [1, 6] }, channel: { initialChannel: 11 } })));
    hasIssue(e2, '/channel/initialChannel', 11, /one of channelPlan\.allowed \(1, 6\)/);
    assert.equal(parseNodeConfig(cfg({ channelPlan: { allowed: [1, 6] }, channel: { initialChannel: 0 } })).channel.initialChannel, 0);
    assert.equal(parseNodeConfig(cfg({ channelPlan: { allowed: [1, 6] }, channel: { initialChannel: 6 } })).channel.initialChannel, 6);
  });

  test('PN channel outside the plan, whole-run and in phases', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sim: { band: { pn: [fraction(1), fraction(12)], phases: [{ durationS: 1, pn: [fraction(13)] }] } } })));
    hasIssue(e, '/sim/band/pn/1/channel', 12, /^a channel of the plan ism2g4 with 11 channels/);
    hasIssue(e, '/sim/band/phases/0/pn/0/channel', 13, /^a channel of the plan ism2g4 with 11 channels/);
    assert.equal(e.issues.length, 2, JSON.stringify(e.issues));
  });

  test('QoS classes: a name, label or queue given twice; a label or queue out of range', () => {
    const c = (over: object) => ({ name: 'a', label: 1, queue: 1, minKbps: 0, ...over });
    const e = refusal(() =>
      parseNodeConfig(
        cfg({ qos: { classes: [c({}), c({ name: 'b', queue: 2 }), c({ name: 'a', label: 3, queue: 3 }), c({ name: 'd', label: 4, queue: 2 })] } }),
      ),
    );
    hasIssue(e, '/qos/classes/1/label', 1, /^a label no other class has \(class 0 has it\)$/);
    hasIssue(e, '/qos/classes/2/name', 'a', /^a name no other class has \(class 0 has it\)$/);
    hasIssue(e, '/qos/classes/3/queue', 2, /^a queue no other class has \(class 1 has it\)$/);
    const range = refusal(() => parseNodeConfig(cfg({ qos: { classes: [c({ label: 0x100000, queue: 0 })] } })));
    hasIssue(range, '/qos/classes/0/label', 0x100000, /1048575/);
    hasIssue(range, '/qos/classes/0/queue', 0, /1/);
    assert.deepEqual(parseNodeConfig(cfg({ qos: { classes: [] } })).qos.classes, [], 'no classes: best effort only');
  });

  test('the controller role: a listen address that is not host:port, flows that do not parse, an acc that is not every-K', () => {
    const e = refusal(() =>
      parseNodeConfig(cfg({ controller: { listen: 'localhost', flows: ['tcp:0-4:5001', 'udp:0-4,label=1,label=2', 'ping 0 4'], acc: 'every-0' } })),
    );
    hasIssue(e, '/controller/listen', 'localhost', /^not an endpoint to listen on: pssl:PORT\[:HOST\] \(TLS\), ptcp:PORT\[:HOST\] or HOST:PORT/);
    hasIssue(e, '/controller/flows/1', 'udp:0-4,label=1,label=2', /label is given twice/);
    hasIssue(e, '/controller/flows/2', 'ping 0 4', /is not PROTO:SRC-DST/);
    hasIssue(e, '/controller/acc', 'every-0', /every/);
    assert.equal(e.issues.length, 4, JSON.stringify(e.issues));
    const place = refusal(() =>
      parseNodeConfig(cfg({ controller: { listen: '127.0.0.1:99999', flows: ['udp:3-3', 'tcp:0-4:5001', 'tcp:0-4:5001,queue=2', 'udp:0-4,label=0x100000'] } })),
    );
    hasIssue(place, '/controller/listen', '127.0.0.1:99999', /port 0-65535/);
    hasIssue(place, '/controller/flows/0', 'udp:3-3', /a flow the controller can place: srcAddr and dstAddr are the same router/);
    hasIssue(place, '/controller/flows/2', 'tcp:0-4:5001,queue=2', /a flow not listed already \(it is at \/controller\/flows\/1\)/);
    hasIssue(place, '/controller/flows/3', 'udp:0-4,label=0x100000', /label 1048576/);
    const c = parseNodeConfig(cfg({ controller: { listen: '0.0.0.0:6653', flows: ['tcp:4-0:5001'], acc: 'every-2' } }));
    assert.equal(c.controller.listen, '0.0.0.0:6653');
  });

  test('OpenFlow endpoints: a plain passive agent stays on loopback, pssl: may listen anywhere, and a TLS endpoint needs its three files', () => {
    const files = { privateKey: 'sw-privkey.pem', certificate: 'sw-cert.pem', caCert: 'controllerca/cacert.pem' };
    for (const listen of ['0.0.0.0:6634', 'ptcp:6634', 'ptcp:6634:10.0.0.1', '[fd00::1]:6634']) {
      const e = refusal(() => parseNodeConfig(cfg({ openflow: { mode: 'passive', listen } })));
      hasIssue(
        e,
        '/openflow/listen',
        listen,
        /^a loopback address, or pssl:PORT\[:HOST\] with openflow\.tls: whoever reaches a passive agent without TLS controls the router$/,
      );
    }
    for (const listen of ['127.0.0.1:6634', 'ptcp:6634:127.0.0.1', 'ptcp:0:[::1]', 'ptcp::localhost']) {
      assert.equal(parseNodeConfig(cfg({ openflow: { mode: 'passive', listen } })).openflow.listen, listen, `${listen} is loopback`);
    }
    const noFiles = refusal(() => parseNodeConfig(cfg({ openflow: { mode: 'passive', listen: 'pssl:6634' } })));
    for (const k of ['privateKey', 'certificate', 'caCert'])
      hasIssue(noFiles, `/openflow/tls/${k}`, '', /^the path of a PEM file, .*: openflow\.listen is pssl:6634 \(TLS\)$/);
    assert.equal(noFiles.issues.length, 3, JSON.stringify(noFiles.issues));
    const one = refusal(() => parseNodeConfig(cfg({ openflow: { mode: 'active', controller: 'ssl:10.0.0.254:6653', tls: { ...files, caCert: '' } } })));
    hasIssue(one, '/openflow/tls/caCert', '', /openflow\.controller is ssl:10\.0\.0\.254:6653/);
    assert.equal(one.issues.length, 1, JSON.stringify(one.issues));
    const c = parseNodeConfig(cfg({ openflow: { mode: 'passive', listen: 'pssl:6634', tls: files } }));
    assert.deepEqual(c.openflow.tls, files, 'the files are read when the agent starts, not here');
    // An endpoint of the wrong kind for its field, and a TLS endpoint the mode does not use.
    const kinds = refusal(() => parseNodeConfig(cfg({ openflow: { mode: 'active', listen: 'ssl:1.2.3.4:1', controller: 'pssl:6653' } })));
    hasIssue(
      kinds,
      '/openflow/listen',
      'ssl:1.2.3.4:1',
      /^not an endpoint to listen on: pssl:PORT\[:HOST\] \(TLS\), ptcp:PORT\[:HOST\] or HOST:PORT \(port 0-65535\)/,
    );
    hasIssue(kinds, '/openflow/controller', 'pssl:6653', /^not an endpoint to connect to: ssl:HOST:PORT \(TLS\), tcp:HOST:PORT or HOST:PORT \(port 1-65535\)/);
    assert.equal(
      parseNodeConfig(cfg({ openflow: { mode: 'active', listen: 'pssl:6634' } })).openflow.tls.privateKey,
      '',
      'a passive endpoint an active agent does not use needs no files',
    );
    // The controller role: TLS by where it listens or by any router it connects to.
    const role = refusal(() => parseNodeConfig(cfg({ controller: { connect: ['tcp:10.0.0.2:6634', 'ssl:10.0.0.3:6634', 'ptcp:1'] } })));
    hasIssue(role, '/controller/connect/2', 'ptcp:1', /^not an endpoint to connect to/);
    for (const k of ['privateKey', 'certificate', 'caCert'])
      hasIssue(role, `/controller/tls/${k}`, '', /controller\.connect\.1 is ssl:10\.0\.0\.3:6634 \(TLS\)$/);
    const tlsRole = parseNodeConfig(cfg({ controller: { listen: 'pssl:6653', connect: ['ssl:10.0.0.3:6634'], tls: files } }));
    assert.deepEqual([tlsRole.controller.listen, tlsRole.controller.connect], ['pssl:6653', ['ssl:10.0.0.3:6634']]);
  });

  test('a channel listed twice in allowed', () => {
    const e = refusal(() => parseNodeConfig(cfg({ channelPlan: { allowed: [1, 6, 11, 6] } })));
    hasIssue(e, '/channelPlan/allowed/3', 6, /^a channel not listed already \(it is at \/channelPlan\/allowed\/1\)$/);
    assert.equal(e.issues.length, 1);
  });

  test('more channels per round than there are usable channels', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sensing: { channelsPerRound: 12 } })));
    hasIssue(e, '/sensing/channelsPerRound', 12, /^0 \(every channel\) or at most 11/);
    const e2 = refusal(() => parseNodeConfig(cfg({ channelPlan: { allowed: [1, 6, 11] }, sensing: { channelsPerRound: 4 } })));
    hasIssue(e2, '/sensing/channelsPerRound', 4, /at most 3, the number of usable channels/);
    assert.equal(parseNodeConfig(cfg({ channelPlan: { allowed: [1, 6, 11] }, sensing: { channelsPerRound: 3 } })).sensing.channelsPerRound, 3);
    assert.equal(parseNodeConfig(cfg({ channelPlan: { channels: 13 }, sensing: { channelsPerRound: 13 } })).sensing.channelsPerRound, 13);
  });

  test('a field the schema refused is not reported again by the semantic rules', () => {
    const e = refusal(() => parseNodeConfig(cfg({ sensing: { durationMs: 20000 } })));
    assert.equal(e.issues.length, 1, JSON.stringify(e.issues));
    hasIssue(e, '/sensing/durationMs', 20000, /^an integer >= 1 and <= 10000$/);
  });
});

describe('loadNodeConfig', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cogmesh-config-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('reads and completes a valid file', async () => {
    const file = join(dir, 'ok.json');
    await writeFile(file, '{ "node": { "id": 9 }, "log": { "format": "json" } }\n');
    const c = await loadNodeConfig(file);
    assert.equal(c.node.id, 9);
    assert.equal(c.log.format, 'json');
    assert.equal(c.sensing.durationMs, 70);
  });

  test('a missing file is a ConfigError naming the path', async () => {
    const file = join(dir, 'absent.json');
    const e = await refusalAsync(() => loadNodeConfig(file));
    assert.equal(e.source, file);
    hasIssue(e, '/', file, /no such file/);
    assert.ok(e.message.startsWith(`${file} refused`), e.message);
  });

  test('invalid JSON is a ConfigError naming the path, line and column', async () => {
    const cases: Array<[string, number, number, RegExp]> = [
      ['{\n  "node": { "id": 1, }\n}\n', 2, 22, /field name/],
      ['{\n  "node": { "id": 1 }\n  "log": {}\n}\n', 3, 3, /expected ',' or '}'/],
      ['{ "node": { "id": 1 } ', 1, 23, /end of input/],
      ['{ "node": { "id": 1 } } trailing', 1, 25, /after the end/],
      ['{ "node": { "id": 01 } }', 1, 20, /expected ',' or '}'/],
      ['{ "node": { "name": "a\nb", "id": 1 } }', 1, 23, /control character/],
      ['{\r\n  "node" { "id": 1 }\r\n}', 2, 10, /expected ':'/],
      ['{ "node": [1, 2,] }', 1, 17, /where a value was expected/],
      ['', 1, 1, /end of input/],
    ];
    for (const [text, line, column, why] of cases) {
      const file = join(dir, 'bad.json');
      await writeFile(file, text);
      assert.throws(() => JSON.parse(text));
      const e = await refusalAsync(() => loadNodeConfig(file));
      assert.equal(e.source, file);
      assert.equal(e.issues.length, 1);
      const issue = e.issues[0]!;
      assert.match(issue.expected, new RegExp(`^valid JSON: .* at line ${line}, column ${column}$`), `${JSON.stringify(text)}: ${issue.expected}`);
      assert.match(issue.expected, why, `${JSON.stringify(text)}: ${issue.expected}`);
      assert.ok(e.message.includes(file) && e.message.includes(`line ${line}, column ${column}`), e.message);
    }
  });

  test('deeply nested JSON is located without overflowing the stack', async () => {
    const file = join(dir, 'deep.json');
    await writeFile(file, `${'['.repeat(200_000)}x`);
    const e = await refusalAsync(() => loadNodeConfig(file));
    assert.match(e.issues[0]!.expected, /at line 1, column 200001$/);
  });

  test('a valid JSON file with invalid fields is refused with the file as source', async () => {
    const file = join(dir, 'fields.json');
    await writeFile(file, JSON.stringify({ node: { id: 1 }, sensing: { durationMs: 0 } }));
    const e = await refusalAsync(() => loadNodeConfig(file));
    assert.equal(e.source, file);
    hasIssue(e, '/sensing/durationMs', 0, /^an integer >= 1 and <= 10000$/);
  });

  test('a byte-order mark is tolerated', async () => {
    const file = join(dir, 'bom.json');
    await writeFile(file, '\ufeff{ "node": { "id": 2 } }');
    assert.equal((await loadNodeConfig(file)).node.id, 2);
  });
});

describe('applyOverrides', () => {
  test('sets fields, parsing values as JSON when they parse and as strings otherwise', () => {
    const base = defaultNodeConfig(3);
    const before = structuredClone(base);
    const c = applyOverrides(base, [
      'sensing.durationMs=20',
      'log.format=json',
      'node.name=roof top',
      'channelPlan.allowed=[1,6,11]',
      'sensing.cooperative.enabled=false',
      'radios.R1.device=type=b200',
    ]);
    assert.equal(c.sensing.durationMs, 20);
    assert.equal(c.log.format, 'json');
    assert.equal(c.node.name, 'roof top');
    assert.deepEqual(c.channelPlan.allowed, [1, 6, 11]);
    assert.equal(c.sensing.cooperative.enabled, false);
    assert.equal(c.radios.R1.device, 'type=b200');
    assert.deepEqual(base, before, 'the input configuration must be unchanged');
  });

  test('sets an item of an array by index, and whole objects', () => {
    const base = parseNodeConfig(cfg({ sim: { band: { pn: [fraction(1)] } } }));
    const c = applyOverrides(base, ['sim.band.pn.0.powerDbm=-40', 'sim.band.pn.0.pattern={"kind":"off"}']);
    assert.deepEqual(c.sim.band.pn[0], { channel: 1, powerDbm: -40, pattern: { kind: 'off' } });
    assert.equal(base.sim.band.pn[0]!.powerDbm, -50);
  });

  test('defaults fill a section set as a whole', () => {
    const c = applyOverrides(defaultNodeConfig(), ['sensing.cooperative={"enabled":false}']);
    assert.deepEqual(c.sensing.cooperative, { enabled: false, halfLifeMs: 2000, maxAgeMs: 5000, neighbourWeight: 0.5 });
  });

  test('unknown paths are refused, all of them, and nothing is applied', () => {
    const base = defaultNodeConfig();
    const before = structuredClone(base);
    const e = refusal(() => applyOverrides(base, ['sensing.durationMs=20', 'sensing.durationMz=20', 'radios.R4.gainDb=3', 'sim.band.pn.0.channel=3']));
    hasIssue(e, '/sensing/durationMz', 20, /^no such field \(allowed: radio, durationMs, /);
    hasIssue(e, '/radios/R4', 3, /^no such field \(allowed: R1, R2, R3\)$/);
    hasIssue(e, '/sim/band/pn/0', 3, /index of an existing item/);
    assert.equal(e.issues.length, 3);
    assert.equal(e.source, 'overrides');
    assert.deepEqual(base, before);
  });

  test('a path into a value that is not an object is unknown', () => {
    const e = refusal(() => applyOverrides(defaultNodeConfig(), ['sensing.durationMs.x=1', 'constructor=1', '__proto__.x=1']));
    hasIssue(e, '/sensing/durationMs/x', 1, /no such field/);
    hasIssue(e, '/constructor', 1, /no such field/);
    hasIssue(e, '/__proto__', 1, /no such field/);
  });

  test('malformed overrides are refused', () => {
    const e = refusal(() => applyOverrides(defaultNodeConfig(), ['sensing.durationMs', '=5', 'sensing..durationMs=5']));
    assert.equal(e.issues.length, 3);
    for (const i of e.issues) assert.match(i.expected, /path=value/);
  });

  test('an invalid value refuses the whole set, original unchanged', () => {
    const base = defaultNodeConfig();
    const before = structuredClone(base);
    const e = refusal(() => applyOverrides(base, ['log.format=json', 'sensing.durationMs=0']));
    hasIssue(e, '/sensing/durationMs', 0, /^an integer >= 1 and <= 10000$/);
    assert.deepEqual(base, before);
    const e2 = refusal(() => applyOverrides(base, ['sensing.periodMs=50']));
    hasIssue(e2, '/sensing/durationMs', 70, /at most sensing\.periodMs \(50 ms\)/);
    const e3 = refusal(() => applyOverrides(base, ['sensing.durationMs="20"']));
    hasIssue(e3, '/sensing/durationMs', '20', /^an integer/);
    assert.deepEqual(base, before);
  });
});

describe('configVersion', () => {
  test('is 16 hex digits and stable under key order', () => {
    const a = defaultNodeConfig(5);
    const reversed = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reversed)
        : v && typeof v === 'object'
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reversed(x)]),
            )
          : v;
    const b = reversed(a) as NodeConfig;
    assert.notEqual(JSON.stringify(a), JSON.stringify(b));
    assert.match(configVersion(a), /^[0-9a-f]{16}$/);
    assert.equal(configVersion(a), configVersion(b));
    assert.equal(configVersion(a), configVersion(defaultNodeConfig(5)));
  });

  test('changes when any value changes', () => {
    const a = defaultNodeConfig(5);
    const seen = new Set([configVersion(a)]);
    for (const o of ['sensing.durationMs=71', 'node.id=6', 'log.format=json', 'channelPlan.allowed=[1]', 'channel.hysteresis=0.11']) {
      const v = configVersion(applyOverrides(a, [o]));
      assert.ok(!seen.has(v), `${o} did not change the version`);
      seen.add(v);
    }
  });

  test('array order matters', () => {
    const a = applyOverrides(defaultNodeConfig(), ['channelPlan.allowed=[1,6]']);
    const b = applyOverrides(defaultNodeConfig(), ['channelPlan.allowed=[6,1]']);
    assert.notEqual(configVersion(a), configVersion(b));
  });

  test('is the first 16 hex digits of the SHA-256 of the canonical JSON without the secrets, as documented', () => {
    for (const c of [defaultNodeConfig(5), applyOverrides(defaultNodeConfig(2), ['channelPlan.allowed=[6,1]', 'qos.classes=[]', 'log.format=json'])]) {
      const { secretKey: _s, ...curve } = c.control.curve;
      const { token: _t, ...monitor } = c.monitor;
      const { secretKey: _m, ...mediumCurve } = c.sim.medium.curve;
      const { key: _k, ...scan } = c.gateway.scan;
      const bare = {
        ...c,
        control: { ...c.control, curve },
        monitor,
        sim: { ...c.sim, medium: { ...c.sim.medium, curve: mediumCurve } },
        gateway: { ...c.gateway, scan },
      };
      assert.equal(configVersion(c), createHash('sha256').update(stableStringify(bare)).digest('hex').slice(0, 16));
    }
  });

  test('ConfigVersions: after each change, serialising again only the sections that changed, the same version as configVersion', () => {
    let cfg = defaultNodeConfig(5);
    const versions = new ConfigVersions(cfg);
    assert.equal(versions.version, configVersion(cfg));
    const steps = [
      ['sensing.periodMs=900'],
      ['sensing.periodMs=1000', 'channel.hysteresis=0.2'],
      ['channelPlan.allowed=[1,6,11]'],
      ['channelPlan.allowed=[]', 'log.level=debug', 'qos.classes=[]'],
      ['node.name=renamed'],
      // A section whose name starts another's (control, controller): only the one named is serialised again.
      ['controller.hysteresis=0.3'],
    ];
    for (const overrides of steps) {
      const next = applyOverrides(cfg, overrides);
      assert.equal(versions.update(next, changedPaths(cfg, next)), configVersion(next), overrides.join(' '));
      assert.equal(versions.version, configVersion(next));
      cfg = next;
    }
    // The sections a change does not name are taken as they were: `changed` must be the whole difference.
    const stale = applyOverrides(cfg, ['sensing.periodMs=1234']);
    assert.notEqual(versions.update(stale, []), configVersion(stale));
  });
});

describe('the schema', () => {
  type S = Record<string, unknown>;
  const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as S;
  const defs = schema.$defs as Record<string, S>;
  const deref = (s: S): S => (typeof s.$ref === 'string' ? defs[s.$ref.replace('#/$defs/', '')]! : s);

  /** Calls `visit` on every subschema with its path and whether its parent requires it. */
  function walk(s: S, path: string, required: boolean, visit: (s: S, path: string, required: boolean) => void): void {
    const r = deref(s);
    visit(s, path, required);
    const props = r.properties as Record<string, S> | undefined;
    const req = (r.required ?? []) as string[];
    for (const [k, v] of Object.entries(props ?? {})) walk(v, `${path}/${k}`, req.includes(k), visit);
    if (r.items) walk(r.items as S, `${path}/[]`, true, visit);
    for (const [i, b] of ((r.oneOf ?? []) as S[]).entries()) walk(b, `${path}<${i}>`, true, visit);
  }

  test('every object refuses unknown fields; every leaf has a description, and a default unless required', () => {
    const problems: string[] = [];
    walk(schema, '', true, (s, path, required) => {
      const r = deref(s);
      if (typeof s.description !== 'string' && typeof r.description !== 'string') problems.push(`${path}: no description`);
      if (r.type === 'object' && !r.discriminator && r.additionalProperties !== false) problems.push(`${path}: additionalProperties is not false`);
      const leaf = r.type !== 'object' && r.type !== 'array';
      if (leaf && !required && s.default === undefined) problems.push(`${path}: optional leaf without a default`);
      if (!leaf && !required && path !== '' && s.default === undefined) problems.push(`${path}: optional section without a default`);
    });
    assert.deepEqual(problems, []);
  });

  test('every default in the schema is itself valid', () => {
    const c = defaultNodeConfig();
    assert.equal(configVersion(parseNodeConfig(c)), configVersion(c));
  });
});
