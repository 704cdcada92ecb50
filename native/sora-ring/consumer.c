/*
 * sora-consumer: stands in for a SORA radio control board's transmit DMA.
 * Creates a TX ring (layout in ring.h, struct sora_tx_header) and takes the
 * bursts the node queues in it, in order: a timed burst waits for its time
 * (CLOCK_REALTIME, the receive ring's clock) and is dropped as late when it
 * is seen more than --late-us after it; each burst sent is appended to the
 * output file with its times, and its record gets the outcome. Nothing is
 * radiated: the output file is the antenna. Prints nothing but errors.
 *
 *   sora-consumer --ring /dev/shm/sora0.tx --out bursts.bin [options]; --help lists them.
 *
 * Output file, per burst sent (little-endian): u64 burst number, u64 at_us
 * (UINT64_MAX when not timed), u64 start_us, u64 count, then count cf32 samples.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ring.h"
#include "tool.h"

struct options {
	const char *ring;
	const char *out;
	double rate_hz;
	uint64_t capacity;
	uint64_t burst_slots;
	uint64_t late_slack_us;
	uint64_t bursts; /* bursts to take before exiting; 0 = until stopped */
	uint64_t poll_us;
	bool unlink_at_exit;
};

static void usage(FILE *out)
{
	fputs("usage: sora-consumer --ring PATH --out FILE [options]\n"
	      "  --rate HZ               complex samples per second (1e6)\n"
	      "  --capacity N            sample slots, a power of two (65536)\n"
	      "  --burst-slots N         burst records, a power of two, 64 to 65536 (64)\n"
	      "  --late-us US            a timed burst first seen more than this after its time is dropped (1000)\n"
	      "  --bursts N              exit after N bursts (default: until SIGINT/SIGTERM)\n"
	      "  --poll-us US            wait between looks at an idle ring (50)\n"
	      "  --unlink                remove the ring file at exit\n",
	      out);
}

static bool power_of_two(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static void parse(int argc, char **argv, struct options *o)
{
	*o = (struct options){ .rate_hz = 1e6, .capacity = 65536, .burst_slots = 64, .late_slack_us = 1000, .poll_us = 50 };
	static const struct option longs[] = {
		{ "ring", required_argument, NULL, 'r' },      { "out", required_argument, NULL, 'o' },
		{ "rate", required_argument, NULL, 'R' },      { "capacity", required_argument, NULL, 'c' },
		{ "burst-slots", required_argument, NULL, 's' }, { "late-us", required_argument, NULL, 'l' },
		{ "bursts", required_argument, NULL, 'b' },    { "poll-us", required_argument, NULL, 'p' },
		{ "unlink", no_argument, NULL, 'u' },          { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'r': o->ring = optarg; break;
		case 'o': o->out = optarg; break;
		case 'R':
			o->rate_hz = parse_double("rate", optarg);
			if (!(o->rate_hz > 0)) die("--%s must be > 0", "rate");
			break;
		case 'c': o->capacity = parse_u64("capacity", optarg); break;
		case 's': o->burst_slots = parse_u64("burst-slots", optarg); break;
		case 'l': o->late_slack_us = parse_u64("late-us", optarg); break;
		case 'b': o->bursts = parse_u64("bursts", optarg); break;
		case 'p': o->poll_us = parse_u64("poll-us", optarg); break;
		case 'u': o->unlink_at_exit = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (o->ring == NULL) die("%s", "--ring is required");
	if (o->out == NULL) die("%s", "--out is required");
	if (!power_of_two(o->capacity) || o->capacity < 16 || o->capacity > (UINT64_C(1) << 30)) die("%s", "--capacity must be a power of two from 16 to 2^30");
	if (!power_of_two(o->burst_slots) || o->burst_slots < 64 || o->burst_slots > 65536) die("%s", "--burst-slots must be a power of two from 64 to 65536");
}

struct tx_ring {
	struct sora_tx_header *h;
	struct sora_tx_burst *bursts;
	float *slots;
	size_t bytes;
};

/* Creates the ring under a temporary name and renames it into place once its header is complete. */
static void create_ring(const struct options *o, struct tx_ring *r)
{
	r->bytes = SORA_RING_HEADER_BYTES + o->burst_slots * sizeof(struct sora_tx_burst) + o->capacity * 8;
	struct ring_file f;
	ring_create(&f, o->ring, r->bytes);
	void *m = f.map;
	r->h = m;
	r->bursts = (struct sora_tx_burst *)((uint8_t *)m + SORA_RING_HEADER_BYTES);
	r->slots = (float *)((uint8_t *)m + SORA_RING_HEADER_BYTES + o->burst_slots * sizeof(struct sora_tx_burst));

	struct sora_tx_header *h = r->h; /* fresh file: every field is zero */
	h->version = SORA_TX_VERSION;
	h->format = SORA_FORMAT_CF32;
	h->sample_rate_hz = o->rate_hz;
	h->capacity = o->capacity;
	h->burst_slots = o->burst_slots;
	h->consumer_pid = (uint64_t)getpid();
	h->heartbeat_ns = now_ns(CLOCK_MONOTONIC);
	h->late_slack_us = o->late_slack_us;
	__atomic_store_n(&h->magic, SORA_TX_MAGIC, __ATOMIC_RELEASE);
	ring_publish(&f, o->ring);
}

static void heartbeat(struct sora_tx_header *h)
{
	__atomic_store_n(&h->heartbeat_ns, now_ns(CLOCK_MONOTONIC), __ATOMIC_RELAXED);
}

static void sleep_us(uint64_t us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1000000u), .tv_nsec = (long)(us % 1000000u) * 1000 };
	nanosleep(&ts, NULL);
}

/* Waits until CLOCK_REALTIME reaches at_us, in steps of at most 10 ms (heartbeats); false when stopped meanwhile. */
static bool wait_until(struct sora_tx_header *h, uint64_t at_us)
{
	for (;;) {
		if (stop_requested) return false;
		uint64_t now = now_ns(CLOCK_REALTIME) / 1000u;
		if (now >= at_us) return true;
		heartbeat(h);
		sleep_us(at_us - now < 10000 ? at_us - now : 10000);
	}
}

static void put_u64(FILE *f, uint64_t v, const char *path)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
	if (fwrite(b, 1, 8, f) != 8) die_sys("cannot write", path);
}

int main(int argc, char **argv)
{
	struct options o;
	tool_name = "sora-consumer";
	parse(argc, argv, &o);
	FILE *out = fopen(o.out, "wb");
	if (out == NULL) die_sys("cannot create", o.out);
	stop_on_signals();

	struct tx_ring ring;
	create_ring(&o, &ring);
	struct sora_tx_header *h = ring.h;
	__atomic_store_n(&h->consumer_state, SORA_STATE_RUNNING, __ATOMIC_RELEASE);

	const uint64_t mask = o.capacity - 1;
	uint64_t b = 0; /* next burst */
	uint64_t r = 0; /* next sample */
	int status = 0;
	while (!stop_requested && (o.bursts == 0 || b < o.bursts)) {
		heartbeat(h);
		if (__atomic_load_n(&h->burst_write, __ATOMIC_ACQUIRE) == b) {
			sleep_us(o.poll_us);
			continue;
		}
		struct sora_tx_burst *rec = &ring.bursts[b & (o.burst_slots - 1)];
		const uint64_t index = rec->index, count = rec->count, flags = rec->flags, at_us = rec->at_us;
		if (index != r) {
			fprintf(stderr, "sora-consumer: burst %llu starts at sample %llu, but the samples before it end at %llu\n", (unsigned long long)b,
				(unsigned long long)index, (unsigned long long)r);
			status = 1;
			break;
		}
		const bool timed = (flags & SORA_TX_TIMED) != 0;
		uint64_t now_us = now_ns(CLOCK_REALTIME) / 1000u;
		const bool late = timed && now_us > at_us + o.late_slack_us;
		if (timed && !late && !wait_until(h, at_us)) break;
		const uint64_t start_us = late ? now_us : now_ns(CLOCK_REALTIME) / 1000u;
		if (!late) {
			put_u64(out, b, o.out);
			put_u64(out, timed ? at_us : UINT64_MAX, o.out);
			put_u64(out, start_us, o.out);
			put_u64(out, count, o.out);
		}
		/* Take the burst's samples as the node writes them (a late burst's are taken and dropped). */
		uint64_t done = 0;
		while (done < count && !stop_requested) {
			uint64_t w = __atomic_load_n(&h->write_index, __ATOMIC_ACQUIRE);
			if (w == r) {
				heartbeat(h);
				sleep_us(o.poll_us);
				continue;
			}
			uint64_t n = w - r < count - done ? w - r : count - done;
			while (n > 0) {
				uint64_t slot = r & mask;
				uint64_t run = n < o.capacity - slot ? n : o.capacity - slot;
				if (!late && fwrite(ring.slots + 2 * slot, 8, run, out) != run) die_sys("cannot write", o.out);
				r += run;
				done += run;
				n -= run;
			}
			__atomic_store_n(&h->read_index, r, __ATOMIC_RELEASE);
		}
		if (done < count) break;
		if (fflush(out) != 0) die_sys("cannot write", o.out);
		rec->status = late ? SORA_TX_LATE : SORA_TX_SENT;
		rec->start_us = start_us;
		rec->end_us = late ? start_us : start_us + (uint64_t)llround((double)count * 1e6 / o.rate_hz);
		rec->sent = late ? 0 : count;
		if (late) __atomic_add_fetch(&h->late_bursts, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&h->burst_read, ++b, __ATOMIC_RELEASE);
	}
	heartbeat(h);
	__atomic_store_n(&h->consumer_state, SORA_STATE_STOPPED, __ATOMIC_RELEASE);
	if (fclose(out) != 0) die_sys("cannot write", o.out);
	if (o.unlink_at_exit) unlink(o.ring);
	return status;
}
