import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/core/errors.js';
import { parseRateTrace, replayRateTrace } from '../../src/gateway/trace.js';

describe('rate trace replay', () => {
  test('each interval runs on the last sample before its end, or at it', () => {
    const trace = parseRateTrace(
      JSON.stringify({
        samples: [
          [1, 5000],
          [3, 20000],
          [7, 20000],
        ],
        untilS: 9,
      }),
    );
    const { decisions } = replayRateTrace(trace);
    assert.deepEqual(
      decisions.map((d) => [d.atUs, d.queueBytes, d.reason]),
      [
        [3_000_000, 20000, 'increase'], // the sample at 3 s counts in the run at 3 s
        [6_000_000, 20000, 'increase'],
        [9_000_000, 20000, 'increase'],
      ],
    );
  });

  test('params in the file: t_interval in seconds, the rest as RateAdapter takes them', () => {
    const trace = parseRateTrace(JSON.stringify({ params: { intervalS: 1, lambda: 0.5, initialRateMbps: 8 }, samples: [[0, 0]], untilS: 2 }));
    assert.deepEqual(
      replayRateTrace(trace).decisions.map((d) => d.rateMbps),
      [4, 2],
    );
  });

  test('bad files are refused with the path of each problem', () => {
    const refused = (doc: unknown, path: string): void =>
      assert.throws(
        () => parseRateTrace(JSON.stringify(doc)),
        (e: unknown) => e instanceof ConfigError && e.issues.some((i) => i.path === path),
        path,
      );
    refused({}, '/samples');
    refused({ samples: [[1, -5]] }, '/samples/0');
    refused(
      {
        samples: [
          [2, 5],
          [1, 5],
        ],
      },
      '/samples/1',
    );
    refused({ samples: [[2, 5]], untilS: 1 }, '/untilS');
    refused({ samples: [[2, 5]], params: { gamma: 1 } }, '/params/gamma');
    refused({ samples: [[2, 5]], extra: 1 }, '/extra');
  });
});
