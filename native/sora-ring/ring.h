/*
 * SORA-like sample ring: the memory a radio control board fills by DMA and
 * the host reads without copies. One producer (the board, or
 * native/sora-ring/producer.c standing in for it), one consumer (cogmesh's
 * radio/sora/ring.ts). The same table is in docs/sora-ring.md and its offsets
 * in radio/sora/layout.ts; a change here is a new SORA_RING_VERSION.
 *
 * File: a 4096-byte header, then `capacity` sample slots (capacity a power of
 * two). Sample n (n counts every sample ever written, from 0) lives in slot
 * n & (capacity - 1), at byte 4096 + (n & (capacity - 1)) * sample_bytes.
 * Little-endian throughout. Every header field has a 64-byte cache line to
 * itself, so the producer's stores to its fields and the consumer's stores
 * to its own never share a line.
 *
 *  off    field             type  writer    meaning
 *  0x000  magic             u64   producer  "SORARING" (bytes 53 4f 52 41 52 49 4e 47)
 *  0x040  version           u32   producer  layout version, 1
 *  0x080  format            u32   producer  1 = cf32 (I, Q float32), 2 = ci16 (I, Q int16, full scale 32768)
 *  0x0c0  sample_rate_hz    f64   producer  complex samples per second
 *  0x100  center_hz         u64   producer  centre frequency in Hz, valid while tune_generation is even
 *  0x140  tune_generation   u64   producer  +1 when a retune starts (odd), +1 when it ends (even)
 *  0x180  capacity          u64   producer  slots, a power of two, 16 to 2^30
 *  0x1c0  write_index       u64   producer  samples ever written; release store after the samples
 *  0x200  overruns          u64   producer  samples overwritten before the consumer read them
 *  0x240  producer_pid      u64   producer  process id of the producer
 *  0x280  heartbeat_ns      u64   producer  CLOCK_MONOTONIC ns, refreshed at every chunk and idle wait
 *  0x2c0  claim_index       u64   producer  end of the chunk being written (>= write_index)
 *  0x300  tune_index        u64   producer  first sample at the current centre
 *  0x340  tune_request_hz   u64   consumer  centre frequency the consumer asks for
 *  0x380  tune_request_seq  u64   consumer  +1 (release) after writing tune_request_hz
 *  0x3c0  tune_ack_seq      u64   producer  last request served (release, after the fields below)
 *  0x400  tune_status       u64   producer  outcome of that request: 0 tuned, 1 refused (out of range)
 *  0x440  read_index        u64   consumer  samples consumed, for the producer's overrun count
 *  0x480  consumer_pid      u64   consumer  0 when no consumer is attached
 *  0x4c0  producer_state    u64   producer  0 starting, 1 running, 2 stopped (source ended or signalled)
 *  0x500  start_time_us     u64   producer  CLOCK_REALTIME us of sample 0
 *  0x540  full_scale_dbm    f64   producer  dBm at the antenna port of a full-scale signal (mean |x|^2 = 1)
 *  0x580  tune_min_hz       u64   producer  lowest centre the producer accepts
 *  0x5c0  tune_max_hz       u64   producer  highest centre the producer accepts
 *  0x600  retune_us         u64   producer  deaf time of a retune, in samples' time
 *  0x640..0xfff             reserved, zero
 *
 * Ordering. The producer writes samples [w, w + n) as follows:
 *   claim_index = w + n (relaxed), then a full fence;
 *   the slots of those samples (overwriting samples [w - capacity, w + n - capacity));
 *   write_index = w + n (release).
 * A consumer at read index r loads write_index (acquire): samples below it
 * are complete. Samples below claim_index - capacity may already be
 * overwritten, so after copying [r, r + k) it stores read_index (a full
 * fence in practice) and loads claim_index again: if claim_index - capacity
 * > r, the copy may be torn and samples up to claim_index - capacity are
 * lost. An overrun (write_index - r > capacity) is the same test made before
 * the copy. The file is created under a temporary name and renamed into
 * place once the header is complete, so a reader never sees half a header.
 */
#ifndef SORA_RING_H
#define SORA_RING_H

#include <stddef.h>
#include <stdint.h>

#define SORA_RING_MAGIC UINT64_C(0x474e495241524f53) /* "SORARING" little-endian */
#define SORA_RING_VERSION 1u
#define SORA_RING_HEADER_BYTES 4096u
#define SORA_RING_LINE 64u

enum sora_format { SORA_FORMAT_CF32 = 1, SORA_FORMAT_CI16 = 2 };
enum sora_state { SORA_STATE_STARTING = 0, SORA_STATE_RUNNING = 1, SORA_STATE_STOPPED = 2 };
enum sora_tune_status { SORA_TUNE_OK = 0, SORA_TUNE_REFUSED = 1 };

#define SORA_LINE_FIELD(type, name) _Alignas(SORA_RING_LINE) type name

struct sora_ring_header {
	SORA_LINE_FIELD(uint64_t, magic);
	SORA_LINE_FIELD(uint32_t, version);
	SORA_LINE_FIELD(uint32_t, format);
	SORA_LINE_FIELD(double, sample_rate_hz);
	SORA_LINE_FIELD(uint64_t, center_hz);
	SORA_LINE_FIELD(uint64_t, tune_generation);
	SORA_LINE_FIELD(uint64_t, capacity);
	SORA_LINE_FIELD(uint64_t, write_index);
	SORA_LINE_FIELD(uint64_t, overruns);
	SORA_LINE_FIELD(uint64_t, producer_pid);
	SORA_LINE_FIELD(uint64_t, heartbeat_ns);
	SORA_LINE_FIELD(uint64_t, claim_index);
	SORA_LINE_FIELD(uint64_t, tune_index);
	SORA_LINE_FIELD(uint64_t, tune_request_hz);
	SORA_LINE_FIELD(uint64_t, tune_request_seq);
	SORA_LINE_FIELD(uint64_t, tune_ack_seq);
	SORA_LINE_FIELD(uint64_t, tune_status);
	SORA_LINE_FIELD(uint64_t, read_index);
	SORA_LINE_FIELD(uint64_t, consumer_pid);
	SORA_LINE_FIELD(uint64_t, producer_state);
	SORA_LINE_FIELD(uint64_t, start_time_us);
	SORA_LINE_FIELD(double, full_scale_dbm);
	SORA_LINE_FIELD(uint64_t, tune_min_hz);
	SORA_LINE_FIELD(uint64_t, tune_max_hz);
	SORA_LINE_FIELD(uint64_t, retune_us);
};

_Static_assert(sizeof(struct sora_ring_header) <= SORA_RING_HEADER_BYTES, "header fits in its page");
_Static_assert(offsetof(struct sora_ring_header, version) == 0x040, "layout");
_Static_assert(offsetof(struct sora_ring_header, sample_rate_hz) == 0x0c0, "layout");
_Static_assert(offsetof(struct sora_ring_header, center_hz) == 0x100, "layout");
_Static_assert(offsetof(struct sora_ring_header, capacity) == 0x180, "layout");
_Static_assert(offsetof(struct sora_ring_header, write_index) == 0x1c0, "layout");
_Static_assert(offsetof(struct sora_ring_header, overruns) == 0x200, "layout");
_Static_assert(offsetof(struct sora_ring_header, heartbeat_ns) == 0x280, "layout");
_Static_assert(offsetof(struct sora_ring_header, claim_index) == 0x2c0, "layout");
_Static_assert(offsetof(struct sora_ring_header, tune_request_hz) == 0x340, "layout");
_Static_assert(offsetof(struct sora_ring_header, read_index) == 0x440, "layout");
_Static_assert(offsetof(struct sora_ring_header, producer_state) == 0x4c0, "layout");
_Static_assert(offsetof(struct sora_ring_header, retune_us) == 0x600, "layout");

static inline size_t sora_sample_bytes(uint32_t format)
{
	return format == SORA_FORMAT_CI16 ? 4 : 8;
}

/*
 * The transmit direction: a second file, the TX ring, in which cogmesh is
 * the producer and the board (or native/sora-ring/consumer.c standing in for
 * it) the consumer. The board creates it (temporary name, renamed into
 * place), as the producer creates the receive ring. The same table is in
 * docs/sora-ring.md and its offsets in radio/sora/layout.ts.
 *
 * File: the 4096-byte header below, then `burst_slots` burst records of 64
 * bytes, then `capacity` cf32 sample slots. Sample n (n counts every sample
 * ever written) is at byte 4096 + burst_slots * 64 + (n & (capacity - 1)) * 8;
 * burst b (b counts every burst ever queued) is record b & (burst_slots - 1).
 *
 *  off    field           type  writer  meaning
 *  0x000  magic           u64   board   "SORATXRG" (bytes 53 4f 52 41 54 58 52 47)
 *  0x040  version         u32   board   layout version, 1
 *  0x080  format          u32   board   1 = cf32 (the only one)
 *  0x0c0  sample_rate_hz  f64   board   complex samples per second
 *  0x100  capacity        u64   board   sample slots, a power of two, 16 to 2^30
 *  0x140  burst_slots     u64   board   burst records, a power of two, 64 to 65536
 *  0x180  write_index     u64   node    samples ever written; release store after the samples
 *  0x1c0  burst_write     u64   node    bursts ever queued; release store after the record
 *  0x200  producer_pid    u64   node    process id of the node, 0 when none is attached
 *  0x240  read_index      u64   board   samples consumed: their slots may be written again (release)
 *  0x280  burst_read      u64   board   bursts finished; release store after the record's results
 *  0x2c0  consumer_pid    u64   board   process id of the board's driver
 *  0x300  consumer_state  u64   board   0 starting, 1 running, 2 stopped
 *  0x340  heartbeat_ns    u64   board   CLOCK_MONOTONIC ns, refreshed at every poll
 *  0x380  late_bursts     u64   board   bursts dropped because their time had passed
 *  0x3c0  late_slack_us   u64   board   a timed burst is late when first seen more than this after its time
 *  0x400..0xfff           reserved, zero
 *
 * Burst record: index, count, flags, at_us are the node's, written before
 * burst_write moves past the record; status, start_us, end_us, sent are the
 * board's, written before burst_read moves past it. index is write_index
 * when the burst was queued: a burst's samples follow the previous burst's.
 * Times are CLOCK_REALTIME microseconds, the receive ring's start_time_us
 * clock. A burst may be longer than the ring: the node writes its samples as
 * slots free up (it waits while write_index - read_index == capacity) and the
 * board takes them as they come.
 */
#define SORA_TX_MAGIC UINT64_C(0x4752585441524f53) /* "SORATXRG" little-endian */
#define SORA_TX_VERSION 1u
#define SORA_TX_TIMED UINT64_C(1) /* flags: at_us is the time of the first sample */

enum sora_tx_status { SORA_TX_QUEUED = 0, SORA_TX_SENT = 1, SORA_TX_LATE = 2 };

struct sora_tx_header {
	SORA_LINE_FIELD(uint64_t, magic);
	SORA_LINE_FIELD(uint32_t, version);
	SORA_LINE_FIELD(uint32_t, format);
	SORA_LINE_FIELD(double, sample_rate_hz);
	SORA_LINE_FIELD(uint64_t, capacity);
	SORA_LINE_FIELD(uint64_t, burst_slots);
	SORA_LINE_FIELD(uint64_t, write_index);
	SORA_LINE_FIELD(uint64_t, burst_write);
	SORA_LINE_FIELD(uint64_t, producer_pid);
	SORA_LINE_FIELD(uint64_t, read_index);
	SORA_LINE_FIELD(uint64_t, burst_read);
	SORA_LINE_FIELD(uint64_t, consumer_pid);
	SORA_LINE_FIELD(uint64_t, consumer_state);
	SORA_LINE_FIELD(uint64_t, heartbeat_ns);
	SORA_LINE_FIELD(uint64_t, late_bursts);
	SORA_LINE_FIELD(uint64_t, late_slack_us);
};

struct sora_tx_burst {
	uint64_t index;
	uint64_t count;
	uint64_t flags;
	uint64_t at_us;
	uint64_t status;
	uint64_t start_us;
	uint64_t end_us;
	uint64_t sent;
};

_Static_assert(sizeof(struct sora_tx_header) <= SORA_RING_HEADER_BYTES, "TX header fits in its page");
_Static_assert(offsetof(struct sora_tx_header, capacity) == 0x100, "TX layout");
_Static_assert(offsetof(struct sora_tx_header, write_index) == 0x180, "TX layout");
_Static_assert(offsetof(struct sora_tx_header, read_index) == 0x240, "TX layout");
_Static_assert(offsetof(struct sora_tx_header, late_slack_us) == 0x3c0, "TX layout");
_Static_assert(sizeof(struct sora_tx_burst) == 64, "one burst record per cache line");

#endif
