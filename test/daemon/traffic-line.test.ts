import assert from 'node:assert/strict';
import { test } from 'node:test';
import { trafficLine, type TrafficView } from '../../src/daemon/mesh.js';

const tcp = (role: 'source' | 'sink', bytes: number, recentMbps: number): TrafficView => ({
  id: 1,
  kind: 'tcp-bulk',
  role,
  src: 4,
  dst: 0,
  sent: 238,
  received: 0,
  bytes,
  recentMbps,
  corruptBytes: 0,
  state: 'ESTABLISHED',
});

test('a TCP source says its rate is of acknowledged bytes, its sink that its rate is of received bytes', () => {
  assert.equal(
    trafficLine(tcp('source', 219000, 0.077)),
    'flow 1 (tcp-bulk 4 -> 0) source: 238 data segments sent, 219000 bytes acknowledged, 77 kbps acknowledged lately, ESTABLISHED',
  );
  assert.equal(trafficLine(tcp('sink', 220000, 0.103)), 'flow 1 (tcp-bulk 4 -> 0) sink: 220000 bytes received, 103 kbps received lately, ESTABLISHED');
});

test('a UDP source says its rate is of what it sent', () => {
  const t: TrafficView = { id: 0, kind: 'udp-cbr', role: 'source', src: 0, dst: 4, sent: 751, received: 0, bytes: 751000, recentMbps: 0.199 };
  assert.equal(trafficLine(t), 'flow 0 (udp-cbr 0 -> 4) source: 751 packets sent, 199 kbps sent lately');
  assert.equal(
    trafficLine({ ...t, role: 'sink', received: 733, bytes: 733000, recentMbps: 0.208 }),
    'flow 0 (udp-cbr 0 -> 4) sink: 733 packets, 733000 bytes received, 208 kbps received lately',
  );
});
