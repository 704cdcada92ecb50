import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ism2g4 } from '../../radio/channels.js';
import { parseFlowArg } from '../../src/cli/controller.js';
import { UsageError } from '../../src/core/errors.js';
import { cogmesh } from '../support/cli.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const demo = join(root, 'config/examples/demo.json');

/** Runs the cogmesh CLI from source, as `cogmesh ARGS...`. */

test('every subcommand has --help', () => {
  for (const cmd of [
    [],
    ['node'],
    ['sense'],
    ['config'],
    ['config', 'check'],
    ['config', 'defaults'],
    ['config', 'schema'],
    ['scenario'],
    ['scenario', 'check'],
    ['testbed'],
    ['medium'],
    ['ctl'],
    ['keygen'],
    ['controller'],
    ['gateway'],
    ['gateway', 'plan'],
    ['gateway', 'rate'],
  ]) {
    const r = cogmesh(...cmd, '--help');
    assert.equal(r.code, 0, `${cmd.join(' ')} --help: ${r.err}`);
    assert.match(r.out, /^Usage: cogmesh/m, cmd.join(' '));
  }
});

test('cogmesh sense reports w near the PN loads, ~0 far from them, and an R1 clear of both', () => {
  const r = cogmesh('sense', '--pn', '1:0.3,6:0.8', '--seconds', '5', '--seed', '1', '--json');
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out) as { channels: Array<{ channel: number; w: number; rc: number }>; r1: number };
  const w = (c: number) => j.channels.find((x) => x.channel === c)!.w;
  assert.ok(Math.abs(w(1) - 0.3) < 0.05, `w(1) = ${w(1)}`);
  assert.ok(Math.abs(w(6) - 0.8) < 0.05, `w(6) = ${w(6)}`);
  assert.ok(w(11) < 0.02, `w(11) = ${w(11)}`);
  // w is printed to 4 decimals, RC to the bit per second.
  for (const c of j.channels) assert.ok(Math.abs(c.rc - (1 - c.w) * 2e6) <= 101, `RC = (1 - w) C, C = 2 Mbps: ${JSON.stringify(c)}`);
  const plan = ism2g4(11);
  assert.ok(j.r1 !== 1 && j.r1 !== 6 && !plan.overlaps(j.r1, 1) && !plan.overlaps(j.r1, 6), `r1 = ${j.r1}`);
  const again = cogmesh('sense', '--pn', '1:0.3,6:0.8', '--seconds', '5', '--seed', '1', '--json');
  assert.equal(again.out, r.out, 'same seed, same bytes');
});

test('cogmesh sense refuses a bad --pn, naming the item', () => {
  for (const [pn, what] of [
    ['1:1.5', /busy fraction 1.5/],
    ['14:0.3', /channel 14/],
    ['1-0.3', /"1-0.3" is not CH:BUSY/],
    ['3:0.2,3:0.4', /channel 3 is named twice/],
  ] as const) {
    const r = cogmesh('sense', '--pn', pn);
    assert.equal(r.code, 2, pn);
    assert.match(r.err, what);
    assert.equal(r.out, '');
  }
});

test('cogmesh node runs the demo in virtual time: a round a second, and R1 follows the PN load', () => {
  const r = cogmesh('node', '--config', demo, '--virtual', '--for', '46', '--log-format', 'json');
  assert.equal(r.code, 0, r.err);
  const lines = r.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(lines.filter((l) => l.event === 'sensing-round').length, 46, 'rounds at 0, 1, ... 45 s');
  const moves = lines.filter((l) => l.event === 'r1-decision' && l.changed === true);
  assert.deepEqual(moves.map((m) => m.channel).slice(0, 3), [11, 6, 1], 'the quiet channel R1 may take in each 15 s phase');
  for (const l of lines.filter((x) => x.event === 'r1-decision')) assert.equal(typeof l.reason, 'string');
  const again = cogmesh('node', '--config', demo, '--virtual', '--for', '46', '--log-format', 'json');
  assert.equal(again.out, r.out, 'virtual time is reproducible byte for byte');
});

test('cogmesh node refuses a bad configuration whole, naming field, value and expectation', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cogmesh-cli-'));
  try {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ node: { id: 1 }, sensing: { durationMs: 0, backend: 'fpga' } }));
    const r = cogmesh('node', '--config', bad, '--virtual', '--for', '1');
    assert.equal(r.code, 2);
    assert.match(r.err, /\/sensing\/durationMs: 0/);
    assert.match(r.err, /\/sensing\/backend: "fpga"/);
    assert.match(r.err, /CONFIG_INVALID/);
    assert.equal(r.out, '', 'nothing ran');
    const set = cogmesh('node', '--config', demo, '--set', 'sensing.periodMs=-5', '--virtual', '--for', '1');
    assert.equal(set.code, 2);
    assert.match(set.err, /periodMs/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('cogmesh node runs in real time and stops after --for', () => {
  const r = cogmesh('node', '--config', demo, '--for', '2.5', '--log-format', 'json', '--set', 'sensing.periodMs=500', '--set', 'channel.minDwellMs=500');
  assert.equal(r.code, 0, r.err);
  const lines = r.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const rounds = lines.filter((l) => l.event === 'sensing-round');
  assert.ok(rounds.length >= 3 && rounds.length <= 6, `${rounds.length} rounds in 2.5 s at 500 ms`);
  assert.ok(lines.some((l) => l.event === 'r1-decision' && l.channel === 11));
  assert.ok(lines.some((l) => l.event === 'node-stop'));
});

test('cogmesh config check validates a file and prints its version', () => {
  const r = cogmesh('config', 'check', demo);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /valid, version [0-9a-f]{16}/);
});

test('cogmesh scenario check validates a scenario as sim loads it, with --set, and summarises it', () => {
  const chain = join(root, 'config/scenarios/testbed-chain.json');
  const r = cogmesh('scenario', 'check', chain);
  assert.equal(r.code, 0, r.err);
  const [head, summary] = r.out.trimEnd().split('\n');
  assert.match(head!, /testbed-chain\.json: valid, version [0-9a-f]{16}$/);
  assert.equal(
    summary,
    'scenario testbed-chain: 5 routers, a chain 200 m apart; 2 flow(s): udp-cbr 0.2 Mbps 0 -> 4 from 5 s; tcp-bulk reno 4 -> 0 from 8 s; 100 s a run, seed 1; R3 authentication on.',
  );
  const set = cogmesh('scenario', 'check', chain, '--set', 'seeds=5', '--set', 'topology.nodes=3', '--set', 'flows=[]');
  assert.equal(set.code, 0, set.err);
  assert.match(set.out, /scenario testbed-chain: 3 routers, a chain 200 m apart; no flows; 100 s a run, seeds 1-5;/);
  assert.notEqual(set.out.split('\n')[0], head, 'a different scenario, a different version');
  const bad = cogmesh('scenario', 'check', chain, '--set', 'durationS=-1');
  assert.equal(bad.code, 2);
  assert.match(bad.err, /durationS/);
  assert.equal(bad.out, '');
});

test('controller --flow: PROTO:SRC-DST[:PORT] then label=L and queue=Q (decimal or 0x hex), in any order', () => {
  assert.deepEqual(
    parseFlowArg('udp:0-4,label=0x100,queue=1', 3, undefined),
    { id: 3, proto: 'udp', srcAddr: 0, dstAddr: 4, label: 256, queue: 1 },
    'hex label, decimal queue',
  );
  assert.deepEqual(
    parseFlowArg('tcp:2-7:5001,queue=0x2,label=512', 1, { mode: 'split', everyHops: 1 }),
    { id: 1, proto: 'tcp', srcAddr: 2, dstAddr: 7, dstPort: 5001, acc: { mode: 'split', everyHops: 1 }, queue: 2, label: 512 },
    'a TCP flow with a port and TCP-ACC, options in the other order',
  );
  assert.deepEqual(
    parseFlowArg('udp:1-3,label=1048575', 2, { mode: 'split' }),
    { id: 2, proto: 'udp', srcAddr: 1, dstAddr: 3, label: 0xfffff },
    'no TCP-ACC on UDP; the largest label',
  );
  assert.deepEqual(
    parseFlowArg('tcp:0-4:5001', 1, undefined),
    { id: 1, proto: 'tcp', srcAddr: 0, dstAddr: 4, dstPort: 5001 },
    'without options: no label, no queue',
  );
  assert.deepEqual(parseFlowArg('udp:0-4,label=0', 1, undefined), { id: 1, proto: 'udp', srcAddr: 0, dstAddr: 4 }, 'label 0 is no label');
  assert.deepEqual(
    parseFlowArg('tcp:10.0.0.1-10.1.4.1:5001', 1, undefined),
    { id: 1, proto: 'tcp', srcAddr: 0, dstAddr: 260, dstPort: 5001 },
    "routers by mesh address, as a VNF pattern names them (ctl vnf start's form)",
  );
  assert.throws(() => parseFlowArg('tcp:10.0.0.1-10.0.300.1:5001', 1, undefined), /10\.0\.300\.1 is not a router's mesh address/);
  for (const [text, what] of [
    ['udp:0-4,', /"" in "udp:0-4,"/],
    ['udp:0-4,label=', /"label=" in/],
    ['udp:0-4,label=0x', /"label=0x" in/],
    ['udp:0-4,label=-1', /"label=-1" in/],
    ['udp:0-4,label=0x1g', /"label=0x1g" in/],
    ['udp:0-4,prio=1', /"prio=1" in .* is not label=L or queue=Q/],
    ['udp:0-4;label=1', /is not PROTO:SRC-DST\[:PORT\]\[,label=L\]\[,queue=Q\]/],
    ['label=1,udp:0-4', /is not PROTO:SRC-DST/],
    ['udp:0-4,label=1,label=2', /label is given twice in "udp:0-4,label=1,label=2"/],
    ['udp:1-3:9000', /a UDP flow takes no port/],
  ] as const) {
    assert.throws(
      () => parseFlowArg(text, 1, undefined),
      (e: unknown) => e instanceof UsageError && what.test(e.message),
      `"${text}" refused, naming it`,
    );
  }
});

test('cogmesh controller refuses a --flow whose label or queue is out of range before it listens, naming the flow', () => {
  for (const [flow, what] of [
    ['udp:0-4,label=0x100000', /--flow 1: label 1048576/],
    ['udp:0-4,queue=4294967295', /--flow 1: queue 4294967295/],
    ['udp:0-4,lable=3', /"lable=3"/],
  ] as const) {
    const r = cogmesh('controller', '--listen', '127.0.0.1:1', '--flow', flow, '--for', '1');
    assert.equal(r.code, 2, `${flow}: usage error exit code (${r.err})`);
    assert.match(r.err, what, `${flow}: the message names what is wrong`);
  }
});
