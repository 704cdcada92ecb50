import { isUint } from '../wire/bytes.js';
import type { FlowStatsRequest } from '../wire/openflow/types.js';
import { RangeArgumentError } from '../core/errors.js';
import { Heap } from '../core/heap.js';
import { err, ok, type Result } from '../core/result.js';
import { assertMicros, US_PER_S, type Micros } from '../core/time.js';
import { OFPFF, OFPG_ANY, OFPP, OFPTT_ALL, type FlowMod, type FlowModCommand, type FlowRemovedReason, type OfInstruction } from '../wire/openflow/actions.js';
import { badInstruction, badRequest, flowModFailed, type OfError } from './errors.js';
import type { OfMatch, PacketFields } from '../wire/openflow/match.js';
import { compileMatch, covers, overlaps, type CompiledMatch } from './matching.js';
import { comesBefore, TupleClassifier } from './classifier.js';

/**
 * The OpenFlow 1.3 flow table as a sans-IO core (OpenFlow 1.3.5 sections 5,
 * 6.4, 7.3.4, 7.4.2, 7.3.5.2-7.3.5.4). It never reads a clock: FLOW_MODs,
 * lookups and stats requests carry `now`, and the table says when an entry
 * next times out (`nextDeadline()`); `tick(now)` removes what is due and
 * hands back the FLOW_REMOVED records to send. A FLOW_MOD the table refuses
 * is a value naming the OpenFlow ERROR to answer with.
 *
 * Choices where the specification leaves room:
 * - Entries of equal priority that both match a packet (possible only
 *   without CHECK_OVERLAP; 5.3 leaves the choice undefined): the one
 *   installed first wins. An ADD that replaces an identical entry keeps the
 *   replaced entry's place in that order.
 * - An ADD with CHECK_OVERLAP conflicts with an identical entry as with any
 *   other overlapping entry of its priority (a packet may match both).
 * - MODIFY and MODIFY_STRICT change only the instructions (and zero the
 *   counters with RESET_COUNTS); cookie, timeouts, flags, duration and the
 *   idle and hard timers stay (6.4). Open vSwitch restarts the hard timer
 *   here; the specification does not.
 * - NO_PKT_COUNTS and NO_BYT_COUNTS are accepted and ignored: the table
 *   always counts, as 7.3.4.1 allows.
 * - Both timeouts due at the same instant: the reason is hard-timeout. The
 *   duration in a timeout's FLOW_REMOVED runs to the instant the entry
 *   expired, not to the later `tick` that noticed it.
 * - Every call that carries `now` first expires what is due by then, so no
 *   expired entry matches a packet or a FLOW_MOD; records of entries expired
 *   that way wait for the next `tick` (`nextDeadline()` is then already due).
 * - Table stats count a hit on the table-miss entry as a match (it is a flow
 *   entry; Open vSwitch does the same).
 * - Header fields outside their wire widths (priority, timeouts, cookie,
 *   ports, table id) are caller bugs (RangeArgumentError): the codec cannot
 *   produce them. Every uint16 timeout is supported, so OFPFMFC_BAD_TIMEOUT
 *   is never returned.
 * - Instructions are checked here only for GOTO_TABLE (the target must be a
 *   later table of the pipeline; OFPBIC_BAD_TABLE_ID); the agent refuses
 *   instructions and actions cogmesh does not carry out.
 */

/** A flow entry as the table shows it (read-only: only FLOW_MODs and lookups change it). */
export interface FlowEntry {
  readonly tableId: number;
  readonly priority: number;
  /** The normalised match. */
  readonly match: OfMatch;
  readonly instructions: readonly OfInstruction[];
  readonly cookie: bigint;
  readonly flags: number;
  readonly idleTimeout: number;
  readonly hardTimeout: number;
  readonly installedAt: Micros;
  /** Install time or the last packet matched, whichever is later (the idle timer's origin). */
  readonly lastUsedAt: Micros;
  readonly packetCount: number;
  readonly byteCount: number;
  /** Priority 0 and an empty match (5.4): a hit is a table miss (packet-in reason OFPR_NO_MATCH). */
  readonly tableMiss: boolean;
}

/** The body of a FLOW_REMOVED (7.4.2). */
export interface FlowRemoved {
  tableId: number;
  cookie: bigint;
  priority: number;
  reason: FlowRemovedReason;
  durationSec: number;
  durationNsec: number;
  idleTimeout: number;
  hardTimeout: number;
  packetCount: number;
  byteCount: number;
  match: OfMatch;
}

/** What an accepted FLOW_MOD did. */
export type FlowModApplied =
  | { command: 'add'; replaced: boolean }
  | { command: 'modify' | 'modify-strict'; modified: number }
  /** `flowRemoved`: the deleted entries whose SEND_FLOW_REM flag was set (reason delete). */
  | { command: 'delete' | 'delete-strict'; deleted: number; flowRemoved: FlowRemoved[] };

/** The body of a flow or aggregate stats request (7.3.5.2, 7.3.5.3), as the codec reads it. Matching is loose; priority plays no part. */
export type { FlowStatsRequest };

/** One ofp_flow_stats (7.3.5.2). */
export interface FlowStats {
  tableId: number;
  durationSec: number;
  durationNsec: number;
  priority: number;
  idleTimeout: number;
  hardTimeout: number;
  flags: number;
  cookie: bigint;
  packetCount: number;
  byteCount: number;
  match: OfMatch;
  instructions: readonly OfInstruction[];
}

/** ofp_aggregate_stats_reply (7.3.5.3). */
export interface AggregateStats {
  packetCount: number;
  byteCount: number;
  flowCount: number;
}

/** ofp_table_stats (7.3.5.4). */
export interface TableStats {
  tableId: number;
  activeCount: number;
  lookupCount: number;
  matchedCount: number;
}

export interface FlowTableOptions {
  /** This table's id (0 by default). */
  tableId?: number;
  /** Entries the table holds; an ADD of a new entry beyond is refused with OFPFMFC_TABLE_FULL. 4096 by default. */
  capacity?: number;
  /** Tables in the pipeline (GOTO_TABLE targets must be below it); tableId + 1 by default (no GOTO_TABLE). */
  tableCount?: number;
}

export const DEFAULT_TABLE_CAPACITY = 4096;

export const FLOW_MOD_COMMANDS: ReadonlySet<string> = new Set<FlowModCommand>(['add', 'modify', 'modify-strict', 'delete', 'delete-strict']);
const KNOWN_FLAGS = OFPFF.SEND_FLOW_REM | OFPFF.CHECK_OVERLAP | OFPFF.RESET_COUNTS | OFPFF.NO_PKT_COUNTS | OFPFF.NO_BYT_COUNTS;
const U64_MAX = (1n << 64n) - 1n;

class Entry implements FlowEntry {
  packetCount = 0;
  byteCount = 0;
  lastUsedAt: Micros;
  /** Out of the table (deleted, expired or replaced); its timer items are stale. */
  removed = false;
  readonly tableMiss: boolean;
  readonly hardAt: Micros;

  constructor(
    readonly tableId: number,
    /** Place among equal priorities (a replacement takes over the replaced entry's). */
    readonly seq: number,
    /** Unique per installation: orders simultaneous expiries. */
    readonly uid: number,
    readonly priority: number,
    readonly cm: CompiledMatch,
    public instructions: readonly OfInstruction[],
    readonly cookie: bigint,
    readonly flags: number,
    readonly idleTimeout: number,
    readonly hardTimeout: number,
    readonly installedAt: Micros,
  ) {
    this.lastUsedAt = installedAt;
    this.tableMiss = priority === 0 && cm.constraints.length === 0;
    this.hardAt = hardTimeout > 0 ? installedAt + hardTimeout * US_PER_S : Infinity;
  }

  get match(): OfMatch {
    return this.cm.match;
  }

  get identity(): string {
    return identity(this.priority, this.cm);
  }

  get idleAt(): Micros {
    return this.idleTimeout > 0 ? this.lastUsedAt + this.idleTimeout * US_PER_S : Infinity;
  }

  /** When the entry times out (Infinity: never). */
  get expiresAt(): Micros {
    return Math.min(this.hardAt, this.idleAt);
  }
}

const identity = (priority: number, cm: CompiledMatch): string => `${priority}#${cm.key}`;

/** Entry order in the table: priority high to low, then installation order. */
const before = comesBefore;

function duration(from: Micros, to: Micros): { durationSec: number; durationNsec: number } {
  const d = Math.max(0, to - from);
  return { durationSec: Math.floor(d / US_PER_S), durationNsec: (d % US_PER_S) * 1000 };
}

function actionsOf(instructions: readonly OfInstruction[]) {
  return instructions.flatMap((i) => (i.type === 'apply-actions' || i.type === 'write-actions' ? i.actions : []));
}

/** 6.4: an entry matches out_port if an output action among its own instructions targets it (groups are not followed). */
export function outputsToPort(instructions: readonly OfInstruction[], port: number): boolean {
  return actionsOf(instructions).some((a) => a.type === 'output' && a.port === port);
}

/** 6.4: likewise for out_group and group actions. */
export function outputsToGroup(instructions: readonly OfInstruction[], group: number): boolean {
  return actionsOf(instructions).some((a) => a.type === 'group' && a.groupId === group);
}

const cookieMatches = (entryCookie: bigint, cookie: bigint, mask: bigint): boolean => (entryCookie & mask) === (cookie & mask);

function checkUint(field: string, v: unknown, max: number): void {
  if (typeof v !== 'number' || !isUint(v, max)) throw new RangeArgumentError(field, v, `an integer in [0, ${max}]`);
}

function checkU64(field: string, v: unknown): void {
  if (typeof v !== 'bigint' || v < 0n || v > U64_MAX)
    throw new RangeArgumentError(field, typeof v === 'bigint' ? v.toString() : v, 'a bigint in [0, 2^64 - 1]');
}

/** Header fields outside their wire widths are caller bugs (the codec cannot produce them). */
export function checkFlowModFields(mod: FlowMod): void {
  checkU64('cookie', mod.cookie);
  checkU64('cookieMask', mod.cookieMask);
  checkUint('tableId', mod.tableId, 0xff);
  checkUint('idleTimeout', mod.idleTimeout, 0xffff);
  checkUint('hardTimeout', mod.hardTimeout, 0xffff);
  checkUint('priority', mod.priority, 0xffff);
  checkUint('bufferId', mod.bufferId, 0xffff_ffff);
  checkUint('outPort', mod.outPort, 0xffff_ffff);
  checkUint('outGroup', mod.outGroup, 0xffff_ffff);
  checkUint('flags', mod.flags, 0xffff);
}

export function checkStatsFields(req: FlowStatsRequest): void {
  checkUint('tableId', req.tableId, 0xff);
  checkUint('outPort', req.outPort, 0xffff_ffff);
  checkUint('outGroup', req.outGroup, 0xffff_ffff);
  checkU64('cookie', req.cookie);
  checkU64('cookieMask', req.cookieMask);
}

export const isDelete = (c: FlowModCommand): boolean => c === 'delete' || c === 'delete-strict';

interface TimerItem {
  at: Micros;
  entry: Entry;
}

/** One OpenFlow flow table. */
export class FlowTable {
  readonly tableId: number;
  readonly capacity: number;
  readonly tableCount: number;
  /** Priority high to low, then installation order: a lookup takes the first match. */
  private entries: Entry[] = [];
  /** The same entries, for lookups: tuple space search instead of a scan. */
  private readonly classifier = new TupleClassifier<Entry>();
  private readonly byIdentity = new Map<string, Entry>();
  /** One item per entry with a timeout, at the expiry it had when pushed; refreshed lazily (idle timers only move later). */
  private readonly timers = new Heap<TimerItem>((x, y) => x.at < y.at || (x.at === y.at && x.entry.uid < y.entry.uid));
  private pending: FlowRemoved[] = [];
  private pendingSince: Micros | undefined;
  private nextSeq = 0;
  private nextUid = 0;
  private lookupCount = 0;
  private matchedCount = 0;

  constructor(options: FlowTableOptions = {}) {
    this.tableId = options.tableId ?? 0;
    this.capacity = options.capacity ?? DEFAULT_TABLE_CAPACITY;
    this.tableCount = options.tableCount ?? this.tableId + 1;
    checkUint('tableId', this.tableId, 0xfe);
    checkUint('capacity', this.capacity, Number.MAX_SAFE_INTEGER);
    if (!Number.isInteger(this.tableCount) || this.tableCount <= this.tableId || this.tableCount > 0xff) {
      throw new RangeArgumentError('tableCount', this.tableCount, `an integer in [${this.tableId + 1}, 255]`);
    }
  }

  /** Entries in the table now. */
  get size(): number {
    return this.entries.length;
  }

  /** The entries in lookup order (priority high to low, then installation order). */
  list(): readonly FlowEntry[] {
    return this.entries.slice();
  }

  /**
   * Carries out a FLOW_MOD (6.4, 7.3.4). Refusals, in the order checked:
   * OFPFMFC_BAD_COMMAND; OFPFMFC_BAD_TABLE_ID (another table, or OFPTT_ALL
   * for other than a delete); OFPFMFC_BAD_FLAGS (bits 1.3 does not define);
   * OFPET_BAD_MATCH (see `compileMatch`); for ADD and MODIFY,
   * OFPBIC_BAD_TABLE_ID for a GOTO_TABLE not to a later table; then
   * OFPFMFC_OVERLAP (ADD with CHECK_OVERLAP) and OFPFMFC_TABLE_FULL.
   * A MODIFY or DELETE that matches nothing succeeds and changes nothing.
   */
  apply(mod: FlowMod, now: Micros): Result<FlowModApplied, OfError> {
    assertMicros('now', now);
    checkFlowModFields(mod);
    this.expire(now);
    const command = mod.command;
    if (!FLOW_MOD_COMMANDS.has(command)) return err(flowModFailed('BAD_COMMAND', `unknown command ${String(command)}`));
    if (mod.tableId !== this.tableId && !(isDelete(command) && mod.tableId === OFPTT_ALL)) {
      return err(
        flowModFailed(
          'BAD_TABLE_ID',
          `table ${mod.tableId} is not table ${this.tableId}${mod.tableId === OFPTT_ALL ? ' (OFPTT_ALL is for deletes only)' : ''}`,
        ),
      );
    }
    if ((mod.flags & ~KNOWN_FLAGS) !== 0) return err(flowModFailed('BAD_FLAGS', `unknown flags 0x${(mod.flags & ~KNOWN_FLAGS).toString(16)}`));
    const compiled = compileMatch(mod.match);
    if (!compiled.ok) return compiled;
    const cm = compiled.value;
    if (!isDelete(command)) {
      const bad = this.checkInstructions(mod.instructions);
      if (bad !== undefined) return err(bad);
    }
    switch (command) {
      case 'add':
        return this.add(mod, cm, now);
      case 'modify':
      case 'modify-strict': {
        const targets = this.select(mod, cm, command === 'modify-strict', false);
        for (const e of targets) {
          e.instructions = structuredClone(mod.instructions);
          if (mod.flags & OFPFF.RESET_COUNTS) {
            e.packetCount = 0;
            e.byteCount = 0;
          }
        }
        return ok({ command, modified: targets.length });
      }
      case 'delete':
      case 'delete-strict': {
        const targets = this.select(mod, cm, command === 'delete-strict', true);
        const flowRemoved: FlowRemoved[] = [];
        for (const e of targets) {
          if (e.flags & OFPFF.SEND_FLOW_REM) flowRemoved.push(this.removedRecord(e, 'delete', now));
        }
        this.removeAll(targets);
        return ok({ command, deleted: targets.length, flowRemoved });
      }
    }
  }

  /**
   * The entry a packet hits (5.3): the highest priority match, or the
   * table-miss entry when it is installed; undefined when nothing matches
   * (OpenFlow 1.3 then drops the packet). A hit counts the packet and its
   * bytes and restarts the entry's idle timer.
   */
  lookup(fields: PacketFields, now: Micros, bytes: number): FlowEntry | undefined {
    assertMicros('now', now);
    this.expire(now);
    this.lookupCount++;
    const e = this.classifier.lookup(fields);
    if (e === undefined) return undefined;
    this.matchedCount++;
    e.packetCount++;
    e.byteCount += bytes;
    if (now > e.lastUsedAt) e.lastUsedAt = now;
    return e;
  }

  /** When an entry next times out, or when records already waiting for `tick` became due; undefined: nothing to time. */
  nextDeadline(): Micros | undefined {
    if (this.pending.length > 0) return this.pendingSince;
    return this.timerTop()?.at;
  }

  /**
   * Removes the entries timed out by `now` (idle or hard, 5.5) and returns
   * the FLOW_REMOVED records of those with SEND_FLOW_REM (others go
   * silently), in order of expiry (then of installation), with any waiting
   * from earlier calls.
   */
  tick(now: Micros): FlowRemoved[] {
    assertMicros('now', now);
    this.expire(now);
    const out = this.pending;
    this.pending = [];
    this.pendingSince = undefined;
    return out;
  }

  /** Flow stats (7.3.5.2): the entries the request covers loosely, in lookup order. */
  flowStats(req: FlowStatsRequest, now: Micros): Result<FlowStats[], OfError> {
    const sel = this.statsSelect(req, now);
    if (!sel.ok) return sel;
    return ok(
      sel.value.map((e) => ({
        tableId: this.tableId,
        ...duration(e.installedAt, now),
        priority: e.priority,
        idleTimeout: e.idleTimeout,
        hardTimeout: e.hardTimeout,
        flags: e.flags,
        cookie: e.cookie,
        packetCount: e.packetCount,
        byteCount: e.byteCount,
        match: e.match,
        instructions: e.instructions,
      })),
    );
  }

  /** Aggregate stats (7.3.5.3) over the same selection as `flowStats`. */
  aggregate(req: FlowStatsRequest, now: Micros): Result<AggregateStats, OfError> {
    const sel = this.statsSelect(req, now);
    if (!sel.ok) return sel;
    const agg: AggregateStats = { packetCount: 0, byteCount: 0, flowCount: 0 };
    for (const e of sel.value) {
      agg.packetCount += e.packetCount;
      agg.byteCount += e.byteCount;
      agg.flowCount++;
    }
    return ok(agg);
  }

  /** Table stats (7.3.5.4). */
  tableStats(): TableStats {
    return { tableId: this.tableId, activeCount: this.entries.length, lookupCount: this.lookupCount, matchedCount: this.matchedCount };
  }

  // --- internals ---

  private checkInstructions(instructions: readonly OfInstruction[]): OfError | undefined {
    for (const i of instructions) {
      if (i.type === 'goto-table' && (i.tableId <= this.tableId || i.tableId >= this.tableCount)) {
        return badInstruction('BAD_TABLE_ID', `goto-table ${i.tableId} from table ${this.tableId}: the target must be a later table below ${this.tableCount}`);
      }
    }
    return undefined;
  }

  private add(mod: FlowMod, cm: CompiledMatch, now: Micros): Result<FlowModApplied, OfError> {
    if (mod.flags & OFPFF.CHECK_OVERLAP) {
      for (const e of this.entries) {
        if (e.priority === mod.priority && overlaps(e.cm, cm)) {
          return err(flowModFailed('OVERLAP', `overlaps an entry of priority ${mod.priority} (cookie 0x${e.cookie.toString(16)})`));
        }
      }
    }
    const id = identity(mod.priority, cm);
    const old = this.byIdentity.get(id);
    if (old === undefined && this.entries.length >= this.capacity)
      return err(flowModFailed('TABLE_FULL', `table ${this.tableId} holds ${this.capacity} entries`));
    const e = new Entry(
      this.tableId,
      old?.seq ?? this.nextSeq++,
      this.nextUid++,
      mod.priority,
      cm,
      structuredClone(mod.instructions),
      mod.cookie,
      mod.flags,
      mod.idleTimeout,
      mod.hardTimeout,
      now,
    );
    if (old !== undefined) {
      // 6.4: the old entry goes, duration and all, without FLOW_REMOVED; its counters stay unless RESET_COUNTS.
      if (!(mod.flags & OFPFF.RESET_COUNTS)) {
        e.packetCount = old.packetCount;
        e.byteCount = old.byteCount;
      }
      old.removed = true;
      this.entries[this.indexOf(old)] = e;
      this.classifier.remove(old);
    } else {
      this.entries.splice(this.insertionIndex(e), 0, e);
    }
    this.classifier.insert(e);
    this.byIdentity.set(id, e);
    if (e.expiresAt !== Infinity) this.timers.push({ at: e.expiresAt, entry: e });
    return ok({ command: 'add', replaced: old !== undefined });
  }

  /** The entries a MODIFY or DELETE acts on: strict (same match and priority) or loose; cookie filter; out_port/out_group for deletes only. */
  private select(mod: FlowMod, cm: CompiledMatch, strict: boolean, portFilters: boolean): Entry[] {
    let targets: Entry[];
    if (strict) {
      const e = this.byIdentity.get(identity(mod.priority, cm));
      targets = e === undefined ? [] : [e];
    } else {
      targets = this.entries.filter((e) => covers(cm, e.cm));
    }
    return targets.filter(
      (e) =>
        cookieMatches(e.cookie, mod.cookie, mod.cookieMask) &&
        (!portFilters || mod.outPort === OFPP.ANY || outputsToPort(e.instructions, mod.outPort)) &&
        (!portFilters || mod.outGroup === OFPG_ANY || outputsToGroup(e.instructions, mod.outGroup)),
    );
  }

  private statsSelect(req: FlowStatsRequest, now: Micros): Result<Entry[], OfError> {
    assertMicros('now', now);
    checkStatsFields(req);
    this.expire(now);
    if (req.tableId !== this.tableId && req.tableId !== OFPTT_ALL) return err(badRequest('BAD_TABLE_ID', `table ${req.tableId} is not table ${this.tableId}`));
    const compiled = compileMatch(req.match);
    if (!compiled.ok) return compiled;
    const cm = compiled.value;
    return ok(
      this.entries.filter(
        (e) =>
          covers(cm, e.cm) &&
          cookieMatches(e.cookie, req.cookie, req.cookieMask) &&
          (req.outPort === OFPP.ANY || outputsToPort(e.instructions, req.outPort)) &&
          (req.outGroup === OFPG_ANY || outputsToGroup(e.instructions, req.outGroup)),
      ),
    );
  }

  private removedRecord(e: Entry, reason: FlowRemovedReason, at: Micros): FlowRemoved {
    return {
      tableId: this.tableId,
      cookie: e.cookie,
      priority: e.priority,
      reason,
      ...duration(e.installedAt, at),
      idleTimeout: e.idleTimeout,
      hardTimeout: e.hardTimeout,
      packetCount: e.packetCount,
      byteCount: e.byteCount,
      match: e.match,
    };
  }

  /** The timer heap's top with stale items dropped and refreshed idle timers moved to their real expiry. */
  private timerTop(): TimerItem | undefined {
    for (;;) {
      const top = this.timers.peek();
      if (top === undefined) return undefined;
      if (top.entry.removed) {
        this.timers.pop();
        continue;
      }
      const at = top.entry.expiresAt;
      if (at === top.at) return top;
      this.timers.pop();
      this.timers.push({ at, entry: top.entry });
    }
  }

  private expire(now: Micros): void {
    for (;;) {
      const top = this.timerTop();
      if (top === undefined || top.at > now) return;
      this.timers.pop();
      const e = top.entry;
      const reason: FlowRemovedReason = e.hardAt <= top.at ? 'hard-timeout' : 'idle-timeout';
      this.removeAll([e]);
      if (e.flags & OFPFF.SEND_FLOW_REM) {
        this.pending.push(this.removedRecord(e, reason, top.at));
        this.pendingSince ??= top.at;
      }
    }
  }

  private removeAll(gone: readonly Entry[]): void {
    if (gone.length === 0) return;
    for (const e of gone) {
      e.removed = true;
      this.byIdentity.delete(e.identity);
      this.classifier.remove(e);
    }
    if (gone.length === 1) this.entries.splice(this.indexOf(gone[0]!), 1);
    else this.entries = this.entries.filter((e) => !e.removed);
  }

  /** The index of an entry in the table (binary search on priority, then installation order). */
  private indexOf(e: Entry): number {
    const i = this.insertionIndex(e);
    if (this.entries[i] !== undefined && this.entries[i]!.seq === e.seq && this.entries[i]!.priority === e.priority) return i;
    throw new Error(`flow table ${this.tableId}: entry not found`);
  }

  /** The first index whose entry does not come before `e`. */
  private insertionIndex(e: Entry): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(this.entries[mid]!, e)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
