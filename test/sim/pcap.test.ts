import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { simulate, type Captures } from '../../src/cli/sim.js';
import { hasTshark, MALFORMED, tsharkFields as fields } from '../support/tshark.js';

const SCENARIO = 'config/scenarios/qos-relay.json';
/** qos-relay for 10 s, its far end failing at 6 s: the relay loses its next hop and sends RERRs. */
const OVERRIDES = { durationS: 10, set: ['events=[{"atS":6,"node":2,"action":"fail"}]'] };

describe('sim --pcap', () => {
  test('a run captured gives the same result as one that is not', async () => {
    const captures: Captures = new Map();
    const captured = await simulate(SCENARIO, OVERRIDES, 1, undefined, captures);
    const plain = await simulate(SCENARIO, OVERRIDES, 1);
    assert.equal(JSON.stringify(captured.result), JSON.stringify(plain.result));
    assert.deepEqual([...captures.keys()].sort(), [0, 1, 2]);
  });

  test(
    'tshark with the dissector reads every message type, the radio fields, and nothing malformed',
    { skip: hasTshark ? false : 'tshark is not installed' },
    async () => {
      const captures: Captures = new Map();
      await simulate(SCENARIO, OVERRIDES, 1, undefined, captures);
      const dir = mkdtempSync(join(tmpdir(), 'cogmesh-pcap-'));
      try {
        const types = new Set<string>();
        for (const [i, chunks] of captures) {
          const file = join(dir, `r${i}.pcapng`);
          await writeFile(file, chunks);
          const rows = fields(file, [
            'frame.interface_id',
            'radiotap.channel.freq',
            'radiotap.datarate',
            'radiotap.channel.flags.cck',
            'wlan.sa',
            'radiotap.dbm_antsignal',
            'cogmesh.type',
          ]);
          assert.ok(rows.length > 0, `r${i}.pcapng has packets`);
          for (const [ifc, freq, rate, cck, sa, signal, type] of rows) {
            // The scenario's 802.11b at 2 Mbps in the 2.4 GHz band; R3 (interface 2) stays on channel 1.
            assert.equal(rate, '2');
            assert.equal(cck, '1');
            assert.ok(Number(freq) >= 2412 && Number(freq) <= 2472, `frequency ${freq}`);
            if (ifc === '2') assert.equal(freq, '2412');
            // What the router sent has no signal; what it heard has the medium's (chain neighbours 200 m apart).
            const own = sa === `02:00:00:00:00:0${i}`;
            if (own) assert.equal(signal, '');
            else assert.ok(Number(signal) < -30 && Number(signal) > -90, `signal ${signal}`);
            assert.ok(type, 'every frame is a cogmesh packet');
            types.add(type!);
          }
          assert.deepEqual(fields(file, ['frame.number'], MALFORMED), [], `r${i}.pcapng has no malformed packet`);
          // R3 authentication is on: every control message carries its trailer, tag 0xa8.
          const unsigned = fields(file, ['frame.number'], 'cogmesh.type < 0x20 && !cogmesh.auth');
          assert.deepEqual(unsigned, []);
        }
        assert.deepEqual([...types].sort(), ['0x01', '0x02', '0x03', '0x10', '0x20', '0x21']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
