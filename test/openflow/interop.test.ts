import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { spawnCogmesh, stopAll } from '../support/cli.js';

/**
 * The OpenFlow agent of a real `cogmesh node` process against Open vSwitch's
 * own tools: ovs-ofctl (passive mode) and ovs-testcontroller (active mode),
 * with tshark dissecting a capture of both.
 */

const PASSIVE = 16634;
const CONTROLLER = 16653;
const have = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const missing = ['ovs-ofctl', 'ovs-testcontroller', 'tshark'].filter((c) => !have(c));
const skip = missing.length > 0 ? `not installed here: ${missing.join(', ')} (.ci/run installs them)` : false;

const dir = mkdtempSync(join(tmpdir(), 'cogmesh-of-'));
const pcap = join(dir, 'of.pcap');
const procs: ChildProcess[] = [];

function node(...set: string[]): ChildProcess {
  const p = spawnCogmesh(
    ['node', '--config', 'config/examples/openflow-passive.json', '--log-format', 'json', '--for', '120', ...set.flatMap((s) => ['--set', s])],
    ['ignore', 'pipe', 'inherit'],
  );
  procs.push(p);
  return p;
}

function ofctl(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync('ovs-ofctl', ['-O', 'OpenFlow13', ...args], { encoding: 'utf8', timeout: 15_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

async function until<T>(what: string, f: () => T | undefined, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the OpenFlow 1.3 agent against Open vSwitch and tshark', { skip, timeout: 150_000 }, () => {
  let capture: ChildProcess;

  before(async () => {
    capture = spawn('tshark', ['-i', 'lo', '-f', `tcp port ${PASSIVE} or tcp port ${CONTROLLER}`, '-w', pcap, '-q'], { stdio: 'ignore' });
    procs.push(capture);
    await until('the capture file', () => (existsSync(pcap) ? true : undefined), 15_000);
    node(`openflow.listen=127.0.0.1:${PASSIVE}`);
    await until('the passive agent', () => (ofctl('probe', `tcp:127.0.0.1:${PASSIVE}`).code === 0 ? true : undefined), 30_000);
  });

  after(async () => {
    await stopAll(procs);
    if (process.env.KEEP_OF_PCAP === undefined) rmSync(dir, { recursive: true, force: true });
    else console.log('kept', dir);
  });

  const T = `tcp:127.0.0.1:${PASSIVE}`;

  test('show and dump-ports-desc: the datapath, its table, and the ports with RC as speed', () => {
    const show = ofctl('show', T);
    assert.equal(show.code, 0, show.err);
    assert.match(show.out, /dpid:0000020000000001/);
    assert.match(show.out, /n_tables:1/);
    const desc = ofctl('dump-ports-desc', T);
    assert.equal(desc.code, 0, desc.err);
    assert.match(desc.out, /LOCAL\(of-demo-local\)/);
    assert.match(desc.out, /speed: \d+ Mbps now, 2 Mbps max|speed: \d+ kbps now/, 'the LOCAL port carries RC as its speed');
  });

  test('add-flow, dump-flows, del-flows (loose), dump-aggregate, dump-tables', () => {
    for (const f of [
      'priority=100,tcp,nw_dst=10.0.4.1,tp_dst=5001,actions=output:5,set_queue:1',
      'priority=10,ipv6,ipv6_label=0x100/0xfff00,actions=controller',
      'idle_timeout=30,priority=5,in_port=LOCAL,actions=drop',
    ]) {
      const r = ofctl('add-flow', T, f);
      assert.equal(r.code, 0, `${f}: ${r.err}`);
    }
    const dump = ofctl('dump-flows', T);
    assert.equal(dump.code, 0, dump.err);
    assert.match(dump.out, /priority=100,tcp,nw_dst=10\.0\.4\.1,tp_dst=5001 actions=output:5,set_queue:1/);
    assert.match(dump.out, /ipv6_label=0x00100\/0xfff00 actions=CONTROLLER/);
    assert.match(dump.out, /idle_timeout=30, priority=5,in_port=LOCAL actions=drop/);
    assert.equal(ofctl('del-flows', T, 'tcp').code, 0);
    const after = ofctl('dump-flows', T).out;
    assert.doesNotMatch(after, /tp_dst=5001/, 'the tcp entry went');
    assert.match(after, /ipv6_label/, 'the others stayed');
    assert.match(ofctl('dump-aggregate', T).out, /flow_count=2/);
    assert.match(ofctl('dump-tables', T).out, /table 0:\s+active=2/);
  });

  test('dump-ports, queue-stats, queue-get-config, packet-out, probe', () => {
    const ports = ofctl('dump-ports', T);
    assert.equal(ports.code, 0, ports.err);
    assert.match(ports.out, /port LOCAL: rx pkts=\d+/);
    // A node without a medium has no links: LOCAL has no R2 queue, so there are no queues (qos-testbed.test.ts reads them on links).
    const q = ofctl('queue-stats', T);
    assert.equal(q.code, 0, q.err);
    assert.match(q.out, /OFPST_QUEUE reply \(OF1\.3\) \(xid=0x\w+\): 0 queues/);
    // ovs-ofctl prints an ERROR reply to a statistics request and exits 0.
    const noPort = ofctl('queue-stats', T, '7');
    assert.match(noPort.out, /OFPT_ERROR \(OF1\.3\) \(xid=0x\w+\): OFPQOFC_BAD_PORT/, 'a port that does not exist is refused');
    const conf = ofctl('queue-get-config', T);
    assert.equal(conf.code, 0, conf.err);
    assert.match(conf.out, /OFPT_QUEUE_GET_CONFIG_REPLY \(OF1\.3\)/);
    assert.doesNotMatch(conf.out, /queue \d+:/, 'no queues without links');
    const po = ofctl('packet-out', T, 'LOCAL', 'LOCAL', '0001020304050a0b0c0d0e0f08004500001c0000000040110000c0a80001c0a8000200350035000812ab');
    assert.equal(po.code, 0, po.err);
    assert.equal(ofctl('probe', T).code, 0);
  });

  test('what the agent does not support is refused with the ERROR the spec names', () => {
    const r = ofctl('add-flow', T, 'priority=3,ip,actions=dec_ttl');
    assert.notEqual(r.code, 0, 'refused');
    assert.match(r.err, /OFPBAC_BAD_TYPE|BAD_TYPE/, r.err);
    const prereq = ofctl('dump-flows', T);
    assert.doesNotMatch(prereq.out, /dec_ttl/, 'nothing was installed');
  });

  test('active mode: ovs-testcontroller takes the node as its switch', async () => {
    const log = join(dir, 'tc.log');
    const tc = spawn('sh', ['-c', `exec ovs-testcontroller -O OpenFlow13 -v --unixctl=${join(dir, 'tc.ctl')} ptcp:${CONTROLLER}:127.0.0.1 > ${log} 2>&1`], {
      stdio: 'ignore',
    });
    procs.push(tc);
    await new Promise((r) => setTimeout(r, 500));
    node(`openflow.mode=active`, `openflow.controller=127.0.0.1:${CONTROLLER}`, 'node.id=2', 'node.name=of-active');
    const text = await until(
      'the handshake',
      () => {
        const t = existsSync(log) ? readFileSync(log, 'utf8') : '';
        return /received: OFPT_FEATURES_REPLY/.test(t) && /sent \(Success\): OFPT_FLOW_MOD/.test(t) ? t : undefined;
      },
      30_000,
    );
    assert.match(text, /dpid:0000020000000002/);
    assert.doesNotMatch(text, /received: OFPT_ERROR/, 'the node answered nothing with an ERROR');
  });

  test('tshark dissects both sessions and flags nothing malformed', async () => {
    await new Promise((r) => setTimeout(r, 1000));
    capture.kill('SIGINT');
    await new Promise((r) => capture.once('exit', r));
    const dissect = (filter: string): string =>
      spawnSync(
        'tshark',
        ['-r', pcap, '-d', `tcp.port==${PASSIVE},openflow`, '-d', `tcp.port==${CONTROLLER},openflow`, '-Y', filter, '-T', 'fields', '-e', 'frame.number'],
        { encoding: 'utf8', timeout: 60_000 },
      ).stdout.trim();
    const of = dissect('openflow_v4');
    assert.ok(of.split('\n').length > 20, `tshark saw the OpenFlow messages (${of.split('\n').length})`);
    assert.equal(dissect('_ws.malformed'), '', 'no malformed frame');
    assert.equal(dissect('_ws.expert.severity >= 0x00800000'), '', 'no expert error');
  });
});
