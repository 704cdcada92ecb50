import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/core/errors.js';
import { parsePlanText, planGateway } from '../../src/gateway/plan.js';

const base = {
  clients: [
    { id: 'a', ap: 'x' },
    { id: 'b', ap: 'y' },
  ],
};
const refused = (doc: unknown, path: string): void =>
  assert.throws(
    () => parsePlanText(typeof doc === 'string' ? doc : JSON.stringify(doc)),
    (e: unknown) => e instanceof ConfigError && e.issues.some((i) => i.path === path),
    path,
  );

describe('gateway plan file', () => {
  test('each problem is refused with its path', () => {
    refused('[1, 2', '/');
    refused([], '/');
    refused({}, '/clients');
    refused({ clients: [{ id: 'a' }] }, '/clients/0/ap');
    refused(
      {
        clients: [
          { id: 'a', ap: 'x' },
          { id: 'a', ap: 'y' },
        ],
      },
      '/clients/1/id',
    );
    refused({ clients: [{ id: 'a', ap: 'x', weight: -1 }] }, '/clients/0/weight');
    refused({ clients: [{ id: 'a', ap: 'x', rateMbps: 0 }] }, '/clients/0/rateMbps');
    refused({ ...base, extra: 1 }, '/extra');
    refused({ ...base, interferingAps: [['x', 'x']] }, '/interferingAps/0');
    refused({ ...base, apPositions: [{ ap: 'x', x: 0, y: 0 }] }, '/interferenceRangeM');
    refused({ ...base, apPositions: [{ ap: 'q', x: 0, y: 0 }], interferenceRangeM: 5 }, '/apPositions/0/ap');
    refused({ ...base, interferenceRangeM: 5 }, '/interferenceRangeM');
    refused({ ...base, pTh: 0 }, '/pTh');
    refused({ ...base, reports: [{ client: 'zz', beacons: {} }] }, '/reports/0/client');
    refused({ ...base, reports: [{ client: 'a', beacons: { x: 99 } }] }, '/reports/0/beacons/x');
    refused({ ...base, reports: [{ client: 'a', beacons: { w: -50 } }] }, '/reports/0/beacons/w');
  });

  test('positions give Type II; reports in file order give Type III; rates give the utility of throughput', () => {
    const plan = planGateway(
      parsePlanText(
        JSON.stringify({
          clients: [
            { id: 'a', ap: 'x', rateMbps: 10 },
            { id: 'b', ap: 'y', rateMbps: 20 },
            { id: 'c', ap: 'z', rateMbps: 5 },
          ],
          apPositions: [
            { ap: 'x', x: 0, y: 0 },
            { ap: 'y', x: 10, y: 0 },
            { ap: 'z', x: 100, y: 0 },
          ],
          interferenceRangeM: 20,
          reports: [
            { client: 'c', beacons: { z: -80, y: -60 } },
            { client: 'c', beacons: { z: -40, y: -90 } }, // the latest wins: no Type III
          ],
        }),
      ),
    );
    assert.deepEqual(plan.graph.edges, [{ a: 0, b: 1, kind: 'type-ii' }]);
    const x = plan.schedule.clientShares;
    assert.ok(Math.abs(x[0]! - 0.5) < 1e-6 && Math.abs(x[1]! - 0.5) < 1e-6 && x[2] === 1);
    assert.ok(Math.abs(plan.rateUtility! - (Math.log(5) + Math.log(10) + Math.log(5))) < 1e-6);
  });
});
