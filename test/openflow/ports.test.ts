import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OFPP } from '../../src/wire/openflow/actions.js';
import { meshPorts, neighbourOfPort, portOfNeighbour, PortTracker } from '../../src/openflow/ports.js';

const inputs = (
  w: Array<[number, number]>,
  neighbours = [
    { addr: 2, r1Channel: 6 },
    { addr: 0, r1Channel: 11 },
  ],
) => ({
  node: 1,
  name: 'r1',
  neighbours,
  w: new Map(w),
  capacityKbps: 2000,
});

test('a port per neighbour link, numbered by its address, with the link RC as speed; LOCAL first', () => {
  const ports = meshPorts(
    inputs([
      [6, 0.25],
      [11, 0],
    ]),
  );
  assert.deepEqual(
    ports.map((p) => [p.portNo, p.neighbour, p.channel, p.rcKbps, p.maxKbps]),
    [
      [OFPP.LOCAL, undefined, undefined, 2000, 2000],
      [1, 0, 11, 2000, 2000],
      [3, 2, 6, 1500, 2000],
    ],
  );
  assert.equal(portOfNeighbour(65534), 65535);
  assert.equal(neighbourOfPort(3), 2);
  assert.equal(neighbourOfPort(OFPP.LOCAL), undefined);
  assert.ok(
    ports.every((p) => p.name.length <= 15),
    'names fit ofp_port.name (16 bytes with the NUL)',
  );
});

test('PORT_STATUS: add for a new neighbour, delete for a lost one, modify only when RC moves by the step', () => {
  const t = new PortTracker(100);
  assert.deepEqual(
    t.update(meshPorts(inputs([[6, 0.25]]))).map((c) => [c.reason, c.port.portNo]),
    [
      ['add', OFPP.LOCAL],
      ['add', 1],
      ['add', 3],
    ],
  );
  assert.deepEqual(t.update(meshPorts(inputs([[6, 0.26]]))), [], 'a 20 kbps move is noise');
  assert.deepEqual(
    t.update(meshPorts(inputs([[6, 0.3]]))).map((c) => [c.reason, c.port.portNo, c.port.rcKbps]),
    [['modify', 3, 1400]],
    'a 100 kbps move (from what was told) is announced',
  );
  const lost = t.update(meshPorts(inputs([[6, 0.3]], [{ addr: 2, r1Channel: 6 }])));
  assert.deepEqual(
    lost.map((c) => [c.reason, c.port.portNo, c.port.up]),
    [['delete', 1, false]],
  );
  assert.deepEqual(
    t.update(meshPorts(inputs([[1, 0.9]], [{ addr: 2, r1Channel: 1 }]))).map((c) => [c.reason, c.port.portNo, c.port.rcKbps]),
    [['modify', 3, 200]],
    'a channel change is announced',
  );
  assert.deepEqual(
    t.known().map((p) => p.portNo),
    [OFPP.LOCAL, 3],
  );
});
