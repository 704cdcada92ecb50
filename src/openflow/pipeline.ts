import { RangeArgumentError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import { earlierOf, type Micros } from '../core/time.js';
import { OFPTT_ALL, type FlowMod } from '../wire/openflow/actions.js';
import type { PacketFields } from '../wire/openflow/match.js';
import type { FlowStatsRequest } from '../wire/openflow/types.js';
import { badRequest, flowModFailed, type OfError } from './errors.js';
import {
  checkFlowModFields,
  checkStatsFields,
  FLOW_MOD_COMMANDS,
  FlowTable,
  isDelete,
  type AggregateStats,
  type FlowEntry,
  type FlowModApplied,
  type FlowRemoved,
  type FlowStats,
  type TableStats,
} from './flow-table.js';

/**
 * The pipeline's n tables, ids 0..n-1 (the count the agent advertises in
 * FEATURES_REPLY). FLOW_MODs and stats requests go to the table they name;
 * a delete or stats request for OFPTT_ALL goes to every table. Pipeline
 * processing itself (GOTO_TABLE, the action set, metadata) is the agent's:
 * it looks packets up table by table.
 */
export class FlowTables {
  readonly tables: readonly FlowTable[];

  constructor(count: number, options: { capacity?: number } = {}) {
    if (!Number.isInteger(count) || count < 1 || count > 0xfe + 1) throw new RangeArgumentError('count', count, 'an integer in [1, 255]');
    this.tables = Array.from({ length: count }, (_, tableId) => new FlowTable({ tableId, tableCount: count, ...options }));
  }

  get count(): number {
    return this.tables.length;
  }

  table(tableId: number): FlowTable | undefined {
    return this.tables[tableId];
  }

  /** As `FlowTable.apply`; OFPFMFC_BAD_TABLE_ID for a table that does not exist. */
  apply(mod: FlowMod, now: Micros): Result<FlowModApplied, OfError> {
    checkFlowModFields(mod);
    if (mod.tableId === OFPTT_ALL && isDelete(mod.command)) {
      let deleted = 0;
      const flowRemoved: FlowRemoved[] = [];
      for (const t of this.tables) {
        const r = t.apply(mod, now);
        if (!r.ok) return r;
        if (r.value.command === 'delete' || r.value.command === 'delete-strict') {
          deleted += r.value.deleted;
          flowRemoved.push(...r.value.flowRemoved);
        }
      }
      return ok({ command: mod.command as 'delete' | 'delete-strict', deleted, flowRemoved });
    }
    const t = this.tables[mod.tableId];
    if (t === undefined) {
      if (!FLOW_MOD_COMMANDS.has(mod.command)) return err(flowModFailed('BAD_COMMAND', `unknown command ${String(mod.command)}`));
      return err(flowModFailed('BAD_TABLE_ID', `no table ${mod.tableId} (the pipeline has ${this.count})`));
    }
    return t.apply(mod, now);
  }

  /** As `FlowTable.lookup` in one table; undefined also for a table that does not exist. */
  lookup(tableId: number, fields: PacketFields, now: Micros, bytes: number): FlowEntry | undefined {
    return this.tables[tableId]?.lookup(fields, now, bytes);
  }

  nextDeadline(): Micros | undefined {
    let min: Micros | undefined;
    for (const t of this.tables) min = earlierOf(min, t.nextDeadline());
    return min;
  }

  /** Every table's FLOW_REMOVED records, table by table. */
  tick(now: Micros): FlowRemoved[] {
    return this.tables.flatMap((t) => t.tick(now));
  }

  flowStats(req: FlowStatsRequest, now: Micros): Result<FlowStats[], OfError> {
    const ts = this.selected(req);
    if (!ts.ok) return ts;
    const out: FlowStats[] = [];
    for (const t of ts.value) {
      const r = t.flowStats(req, now);
      if (!r.ok) return r;
      out.push(...r.value);
    }
    return ok(out);
  }

  aggregate(req: FlowStatsRequest, now: Micros): Result<AggregateStats, OfError> {
    const ts = this.selected(req);
    if (!ts.ok) return ts;
    const agg: AggregateStats = { packetCount: 0, byteCount: 0, flowCount: 0 };
    for (const t of ts.value) {
      const r = t.aggregate(req, now);
      if (!r.ok) return r;
      agg.packetCount += r.value.packetCount;
      agg.byteCount += r.value.byteCount;
      agg.flowCount += r.value.flowCount;
    }
    return ok(agg);
  }

  tableStats(): TableStats[] {
    return this.tables.map((t) => t.tableStats());
  }

  private selected(req: FlowStatsRequest): Result<readonly FlowTable[], OfError> {
    checkStatsFields(req);
    if (req.tableId === OFPTT_ALL) return ok(this.tables);
    const t = this.tables[req.tableId];
    return t === undefined ? err(badRequest('BAD_TABLE_ID', `no table ${req.tableId} (the pipeline has ${this.count})`)) : ok([t]);
  }
}
