/*
 * sora-producer: stands in for a SORA radio control board's DMA. Creates a
 * sample ring (layout in ring.h) and fills it with complex samples at a given
 * rate, from a synthetic source (Gaussian noise with ON/OFF bursts, or a
 * counter pattern for loss tests) or from a cf32 file, paced in real time or
 * as fast as it can. It serves the consumer's tune requests (see ring.h:
 * tune_request_seq) after a simulated deaf time. Prints nothing but errors.
 *
 *   sora-producer --ring /dev/shm/sora0 [options]; --help lists them.
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

enum source { SRC_NOISE, SRC_COUNTER, SRC_FILE };

struct options {
	const char *ring;
	uint32_t format;
	double rate_hz;
	uint64_t capacity;
	enum source source;
	const char *file;
	bool loop;
	double noise_dbfs;
	double burst_dbfs;
	double busy;
	double burst_us;
	uint64_t seed;
	uint64_t center_hz;
	uint64_t tune_min_hz;
	uint64_t tune_max_hz;
	uint64_t retune_us;
	double full_scale_dbm;
	bool fast;
	uint64_t total; /* samples to write; 0 = until stopped */
	uint64_t chunk;
	bool unlink_at_exit;
};

static void usage(FILE *out)
{
	fputs("usage: sora-producer --ring PATH [options]\n"
	      "  --format cf32|ci16      sample format (cf32)\n"
	      "  --rate HZ               complex samples per second (1e6)\n"
	      "  --capacity N            ring slots, a power of two (1048576)\n"
	      "  --source noise|counter|file   (noise)\n"
	      "  --file PATH             cf32 input for --source file (e.g. a .sigmf-data)\n"
	      "  --loop                  start the file again at its end\n"
	      "  --noise-dbfs X          noise power, dB full scale (-40)\n"
	      "  --burst-dbfs X          power added during ON bursts, dB full scale (-10)\n"
	      "  --busy F                fraction of time ON, 0..1 (0)\n"
	      "  --burst-us U            mean ON burst length in us (1000)\n"
	      "  --seed N                seed of the synthetic source (1)\n"
	      "  --center HZ             initial centre frequency (2412000000)\n"
	      "  --tune-min HZ, --tune-max HZ   accepted tune range (0, 6000000000)\n"
	      "  --retune-us US          deaf time of a retune (1000)\n"
	      "  --full-scale-dbm D      dBm of a full-scale signal (-10)\n"
	      "  --fast                  as fast as possible instead of real time\n"
	      "  --duration S | --samples N   stop after that much (default: until SIGINT/SIGTERM)\n"
	      "  --chunk N               samples per publication (rate/1000, at most capacity/4)\n"
	      "  --unlink                remove the ring file at exit\n",
	      out);
}

/* ---- synthetic source: splitmix64, Box-Muller, exponential ON/OFF lengths ---- */

struct rng {
	uint64_t s;
	bool has_spare;
	double spare;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in (0, 1]. */
static double rng_unit(struct rng *r)
{
	return ((double)(rng_next(r) >> 11) + 1.0) * 0x1.0p-53;
}

static double rng_normal(struct rng *r)
{
	if (r->has_spare) {
		r->has_spare = false;
		return r->spare;
	}
	double m = sqrt(-2.0 * log(rng_unit(r)));
	double a = 2.0 * M_PI * rng_unit(r);
	r->spare = m * sin(a);
	r->has_spare = true;
	return m * cos(a);
}

struct synth {
	struct rng rng;
	double sigma_off; /* per component */
	double sigma_on;
	double on_mean; /* samples */
	double off_mean;
	bool on;
	uint64_t left; /* samples left in the current ON or OFF period */
};

static uint64_t draw_length(struct rng *r, double mean)
{
	double v = -mean * log(rng_unit(r));
	return v < 1.0 ? 1 : (uint64_t)llround(v);
}

static void synth_init(struct synth *s, const struct options *o)
{
	s->rng = (struct rng){ .s = o->seed };
	double pn = pow(10.0, o->noise_dbfs / 10.0);
	double pb = pow(10.0, o->burst_dbfs / 10.0);
	s->sigma_off = sqrt(pn / 2.0);
	s->sigma_on = sqrt((pn + pb) / 2.0);
	s->on_mean = fmax(1.0, o->burst_us * o->rate_hz / 1e6);
	s->off_mean = o->busy > 0 ? s->on_mean * (1.0 - o->busy) / o->busy : 0;
	s->on = o->busy >= 1.0;
	s->left = 0;
}

static void synth_next(struct synth *s, float *iq)
{
	if (s->left == 0) {
		if (s->off_mean <= 0) { /* busy 0 or 1: one state forever */
			s->left = UINT64_MAX;
		} else {
			s->on = !s->on;
			s->left = draw_length(&s->rng, s->on ? s->on_mean : s->off_mean);
		}
	}
	s->left--;
	double sigma = s->on ? s->sigma_on : s->sigma_off;
	iq[0] = (float)(sigma * rng_normal(&s->rng));
	iq[1] = (float)(sigma * rng_normal(&s->rng));
}

/* ---- the ring ---- */

struct ring {
	struct sora_ring_header *h;
	uint8_t *slots;
	size_t bytes;
	uint64_t mask;
	size_t sample_bytes;
};

static void create_ring(struct ring *r, const struct options *o)
{
	r->sample_bytes = sora_sample_bytes(o->format);
	r->bytes = SORA_RING_HEADER_BYTES + o->capacity * r->sample_bytes;
	r->mask = o->capacity - 1;
	struct ring_file f;
	ring_create(&f, o->ring, r->bytes);
	void *m = f.map;
	r->h = m;
	r->slots = (uint8_t *)m + SORA_RING_HEADER_BYTES;

	struct sora_ring_header *h = r->h; /* fresh file: every field is zero */
	h->version = SORA_RING_VERSION;
	h->format = o->format;
	h->sample_rate_hz = o->rate_hz;
	h->center_hz = o->center_hz;
	h->capacity = o->capacity;
	h->producer_pid = (uint64_t)getpid();
	h->heartbeat_ns = now_ns(CLOCK_MONOTONIC);
	h->start_time_us = now_ns(CLOCK_REALTIME) / 1000u;
	h->full_scale_dbm = o->full_scale_dbm;
	h->tune_min_hz = o->tune_min_hz;
	h->tune_max_hz = o->tune_max_hz;
	h->retune_us = o->retune_us;
	__atomic_store_n(&h->magic, SORA_RING_MAGIC, __ATOMIC_RELEASE);
	ring_publish(&f, o->ring);
}

/* Writes sample `n` (the n-th ever written) into its slot. */
struct source_state {
	enum source kind;
	uint32_t format;
	struct synth synth;
	FILE *file;
	bool loop;
	bool ended;
	float buf[2 * 4096];
	size_t buf_len, buf_pos; /* complex samples */
};

static bool next_from_file(struct source_state *s, float *iq)
{
	if (s->buf_pos == s->buf_len) {
		s->buf_len = fread(s->buf, 8, sizeof s->buf / 8, s->file);
		s->buf_pos = 0;
		if (s->buf_len == 0 && s->loop && !ferror(s->file)) {
			rewind(s->file);
			s->buf_len = fread(s->buf, 8, sizeof s->buf / 8, s->file);
		}
		if (s->buf_len == 0) return false;
	}
	iq[0] = s->buf[2 * s->buf_pos];
	iq[1] = s->buf[2 * s->buf_pos + 1];
	s->buf_pos++;
	return true;
}

/* Full scale 1.0 -> 32768, rounded to nearest (ties to even), saturated. */
static int16_t to_i16(float v)
{
	float x = v * 32768.0f;
	if (!(x > -32768.0f)) return INT16_MIN; /* NaN too */
	if (x >= 32767.0f) return INT16_MAX;
	return (int16_t)lrintf(x);
}

/* Writes samples [w, w + n) into their slots; returns how many the source gave. */
static uint64_t fill(struct ring *r, struct source_state *s, uint64_t w, uint64_t n)
{
	for (uint64_t k = 0; k < n; k++) {
		uint64_t idx = w + k;
		uint8_t *slot = r->slots + (idx & r->mask) * r->sample_bytes;
		if (s->kind == SRC_COUNTER) {
			if (s->format == SORA_FORMAT_CF32) {
				float *f = (float *)slot;
				f[0] = (float)(idx & 0xffffff);
				f[1] = (float)((idx >> 24) & 0xffffff);
			} else {
				uint16_t *u = (uint16_t *)slot;
				u[0] = (uint16_t)(idx & 0xffff);
				u[1] = (uint16_t)((idx >> 16) & 0xffff);
			}
			continue;
		}
		float iq[2];
		if (s->kind == SRC_NOISE) {
			synth_next(&s->synth, iq);
		} else if (!next_from_file(s, iq)) {
			s->ended = true;
			return k;
		}
		if (s->format == SORA_FORMAT_CF32) {
			memcpy(slot, iq, 8);
		} else {
			int16_t *q = (int16_t *)slot;
			q[0] = to_i16(iq[0]);
			q[1] = to_i16(iq[1]);
		}
	}
	return n;
}

/* Sleeps until CLOCK_MONOTONIC reaches `deadline_ns` or a stop is requested, beating the heart. */
static void sleep_until(struct sora_ring_header *h, uint64_t deadline_ns)
{
	while (!stop_requested) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		__atomic_store_n(&h->heartbeat_ns, now, __ATOMIC_RELAXED);
		if (now >= deadline_ns) return;
		uint64_t wake = deadline_ns - now > 10000000u ? now + 10000000u : deadline_ns;
		struct timespec ts = { .tv_sec = (time_t)(wake / 1000000000u), .tv_nsec = (long)(wake % 1000000000u) };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

static void parse(int argc, char **argv, struct options *o)
{
	*o = (struct options){
		.format = SORA_FORMAT_CF32,
		.rate_hz = 1e6,
		.capacity = 1u << 20,
		.source = SRC_NOISE,
		.noise_dbfs = -40,
		.burst_dbfs = -10,
		.busy = 0,
		.burst_us = 1000,
		.seed = 1,
		.center_hz = 2412000000u,
		.tune_min_hz = 0,
		.tune_max_hz = 6000000000u,
		.retune_us = 1000,
		.full_scale_dbm = -10,
	};
	static const struct option longs[] = {
		{ "ring", required_argument, 0, 'r' },      { "format", required_argument, 0, 'F' },
		{ "rate", required_argument, 0, 'R' },      { "capacity", required_argument, 0, 'C' },
		{ "source", required_argument, 0, 'S' },    { "file", required_argument, 0, 'f' },
		{ "loop", no_argument, 0, 'L' },            { "noise-dbfs", required_argument, 0, 'n' },
		{ "burst-dbfs", required_argument, 0, 'b' }, { "busy", required_argument, 0, 'B' },
		{ "burst-us", required_argument, 0, 'u' },  { "seed", required_argument, 0, 's' },
		{ "center", required_argument, 0, 'c' },    { "tune-min", required_argument, 0, 'm' },
		{ "tune-max", required_argument, 0, 'M' },  { "retune-us", required_argument, 0, 't' },
		{ "full-scale-dbm", required_argument, 0, 'd' }, { "fast", no_argument, 0, 'x' },
		{ "duration", required_argument, 0, 'D' },  { "samples", required_argument, 0, 'N' },
		{ "chunk", required_argument, 0, 'k' },     { "unlink", no_argument, 0, 'U' },
		{ "help", no_argument, 0, 'h' },            { 0, 0, 0, 0 },
	};
	double duration = -1;
	int c;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'r': o->ring = optarg; break;
		case 'F':
			if (!strcmp(optarg, "cf32")) o->format = SORA_FORMAT_CF32;
			else if (!strcmp(optarg, "ci16")) o->format = SORA_FORMAT_CI16;
			else die("--format must be cf32 or ci16, got %s", optarg);
			break;
		case 'R': o->rate_hz = parse_double("rate", optarg); break;
		case 'C': o->capacity = parse_u64("capacity", optarg); break;
		case 'S':
			if (!strcmp(optarg, "noise")) o->source = SRC_NOISE;
			else if (!strcmp(optarg, "counter")) o->source = SRC_COUNTER;
			else if (!strcmp(optarg, "file")) o->source = SRC_FILE;
			else die("--source must be noise, counter or file, got %s", optarg);
			break;
		case 'f': o->file = optarg; break;
		case 'L': o->loop = true; break;
		case 'n': o->noise_dbfs = parse_double("noise-dbfs", optarg); break;
		case 'b': o->burst_dbfs = parse_double("burst-dbfs", optarg); break;
		case 'B': o->busy = parse_double("busy", optarg); break;
		case 'u': o->burst_us = parse_double("burst-us", optarg); break;
		case 's': o->seed = parse_u64("seed", optarg); break;
		case 'c': o->center_hz = parse_u64("center", optarg); break;
		case 'm': o->tune_min_hz = parse_u64("tune-min", optarg); break;
		case 'M': o->tune_max_hz = parse_u64("tune-max", optarg); break;
		case 't': o->retune_us = parse_u64("retune-us", optarg); break;
		case 'd': o->full_scale_dbm = parse_double("full-scale-dbm", optarg); break;
		case 'x': o->fast = true; break;
		case 'D': duration = parse_double("duration", optarg); break;
		case 'N': o->total = parse_u64("samples", optarg); break;
		case 'k': o->chunk = parse_u64("chunk", optarg); break;
		case 'U': o->unlink_at_exit = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc) die("unexpected argument %s", argv[optind]);
	if (!o->ring) die("%s", "--ring PATH is required");
	if (!(o->rate_hz > 0)) die("%s", "--rate must be > 0");
	if (o->capacity < 16 || (o->capacity & (o->capacity - 1))) die("%s", "--capacity must be a power of two >= 16");
	if (o->capacity > (UINT64_C(1) << 30)) die("%s", "--capacity is too large (at most 2^30 slots)");
	if (!(o->busy >= 0 && o->busy <= 1)) die("%s", "--busy must be in [0, 1]");
	if (!(o->burst_us > 0)) die("%s", "--burst-us must be > 0");
	if (o->source == SRC_FILE && !o->file) die("%s", "--source file needs --file PATH");
	if (o->tune_min_hz > o->tune_max_hz) die("%s", "--tune-min must not exceed --tune-max");
	if (o->center_hz < o->tune_min_hz || o->center_hz > o->tune_max_hz) die("%s", "--center is outside the tune range");
	if (duration >= 0) {
		if (o->total) die("%s", "give --duration or --samples, not both");
		o->total = (uint64_t)llround(duration * o->rate_hz);
		if (o->total == 0) die("%s", "--duration is shorter than one sample");
	}
	if (o->chunk == 0) o->chunk = (uint64_t)fmax(1.0, round(o->rate_hz / 1000.0));
	if (o->chunk > o->capacity / 4) o->chunk = o->capacity / 4;
}

int main(int argc, char **argv)
{
	struct options o;
	tool_name = "sora-producer";
	parse(argc, argv, &o);

	struct source_state src = { .kind = o.source, .format = o.format, .loop = o.loop };
	if (o.source == SRC_NOISE) synth_init(&src.synth, &o);
	if (o.source == SRC_FILE) {
		src.file = fopen(o.file, "rb");
		if (!src.file) die_sys("cannot open", o.file);
	}

	stop_on_signals();

	struct ring r;
	create_ring(&r, &o);
	struct sora_ring_header *h = r.h;

	uint64_t w = 0;
	uint64_t served_seq = 0;
	uint64_t retune_left = 0; /* deaf samples still to write before the pending tune takes effect */
	uint64_t pending_hz = 0;
	uint64_t pending_seq = 0;
	uint64_t overruns = 0;
	const uint64_t cap = o.capacity;
	const uint64_t retune_samples = (uint64_t)llround((double)o.retune_us * o.rate_hz / 1e6);
	const uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	__atomic_store_n(&h->producer_state, SORA_STATE_RUNNING, __ATOMIC_RELEASE);

	while (!stop_requested && (o.total == 0 || w < o.total) && !src.ended) {
		/* A new tune request: refuse it, or start a retune (odd generation) and go deaf. */
		uint64_t seq = __atomic_load_n(&h->tune_request_seq, __ATOMIC_ACQUIRE);
		if (seq != served_seq && seq != pending_seq) {
			uint64_t hz = __atomic_load_n(&h->tune_request_hz, __ATOMIC_RELAXED);
			if (hz < o.tune_min_hz || hz > o.tune_max_hz) {
				__atomic_store_n(&h->tune_status, SORA_TUNE_REFUSED, __ATOMIC_RELAXED);
				__atomic_store_n(&h->tune_ack_seq, seq, __ATOMIC_RELEASE);
				served_seq = seq;
			} else {
				if (pending_seq == 0) __atomic_add_fetch(&h->tune_generation, 1, __ATOMIC_RELEASE);
				pending_seq = seq;
				pending_hz = hz;
				retune_left = retune_samples;
			}
		}
		if (pending_seq != 0 && retune_left == 0) {
			__atomic_store_n(&h->center_hz, pending_hz, __ATOMIC_RELAXED);
			__atomic_store_n(&h->tune_index, w, __ATOMIC_RELAXED);
			__atomic_store_n(&h->tune_status, SORA_TUNE_OK, __ATOMIC_RELAXED);
			__atomic_add_fetch(&h->tune_generation, 1, __ATOMIC_RELEASE);
			__atomic_store_n(&h->tune_ack_seq, pending_seq, __ATOMIC_RELEASE);
			served_seq = pending_seq;
			pending_seq = 0;
		}

		uint64_t n = o.chunk;
		if (o.total && o.total - w < n) n = o.total - w;
		if (pending_seq != 0 && retune_left < n) n = retune_left;
		if (!o.fast) sleep_until(h, t0 + (uint64_t)((double)(w + n) * 1e9 / o.rate_hz));
		if (stop_requested) break;

		/* Claim, then (after a full fence) overwrite the oldest samples. */
		__atomic_store_n(&h->claim_index, w + n, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (w + n > cap && __atomic_load_n(&h->consumer_pid, __ATOMIC_RELAXED) != 0) {
			uint64_t read = __atomic_load_n(&h->read_index, __ATOMIC_RELAXED);
			uint64_t lo = w > cap ? w - cap : 0;
			uint64_t hi = w + n - cap;
			if (read > lo) lo = read;
			if (hi > lo) {
				overruns += hi - lo;
				__atomic_store_n(&h->overruns, overruns, __ATOMIC_RELAXED);
			}
		}
		uint64_t got = fill(&r, &src, w, n);
		w += got;
		if (got < n) __atomic_store_n(&h->claim_index, w, __ATOMIC_RELAXED);
		__atomic_store_n(&h->write_index, w, __ATOMIC_RELEASE);
		__atomic_store_n(&h->heartbeat_ns, now_ns(CLOCK_MONOTONIC), __ATOMIC_RELAXED);
		if (pending_seq != 0) retune_left -= got < retune_left ? got : retune_left;
	}

	__atomic_store_n(&h->heartbeat_ns, now_ns(CLOCK_MONOTONIC), __ATOMIC_RELAXED);
	__atomic_store_n(&h->producer_state, SORA_STATE_STOPPED, __ATOMIC_RELEASE);
	munmap(r.h, r.bytes);
	if (src.file) fclose(src.file);
	if (o.unlink_at_exit) unlink(o.ring);
	return 0;
}
