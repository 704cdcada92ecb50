/*
 * Native baseline for the energy detector (src/sensing/detector.ts,
 * detectEnergy): the same fused loop in C, to put the TypeScript figure of
 * bench/sensing.ts next to what gcc -O3 makes of it.
 *
 * Build (bench/sensing.ts does it): gcc -O3 -ffp-contract=off -o energy energy.c
 * No -ffast-math: the sums must be rounded as in the TypeScript loop (same
 * order, double accumulators, no fused multiply-add), so that both find the
 * same busy count.
 *
 * Usage: energy FILE COUNT WINDOW_SAMPLES THRESHOLD_SUM RUNS
 *   FILE holds at least 2*COUNT native float32 values, interleaved I,Q (fc32).
 * Prints key=value lines: msps (best of RUNS, complex megasamples per second),
 * busy, windows, leftover, sum_power.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct counts {
  long windows;
  long busy;
  double sum_power;
  double busy_sum_power;
  long leftover;
};

/*
 * Mirrors detectEnergy: four accumulators per window (complex samples 0,4,8..
 * into s0, 1,5,9.. into s1, ...; a tail of 1-3 samples into s0), summed as
 * (s0 + s1) + (s2 + s3); the busy test as arithmetic, not a branch.
 * noipa keeps gcc from folding repeated calls on the same data into one.
 */
__attribute__((noipa)) static struct counts detect(const float *data, long count, long window, double threshold) {
  struct counts c;
  const long windows = count / window;
  const long step = 2 * window;
  const long body = step - (step & 7);
  const long tail = step - body;
  long busy = 0;
  double sum_power = 0;
  double busy_sum_power = 0;
  long i = 0;
  for (long w = 0; w < windows; w++) {
    const long end4 = i + body;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    while (i < end4) {
      const double a = data[i++];
      const double b = data[i++];
      const double cc = data[i++];
      const double d = data[i++];
      const double e = data[i++];
      const double f = data[i++];
      const double g = data[i++];
      const double h = data[i++];
      s0 += a * a + b * b;
      s1 += cc * cc + d * d;
      s2 += e * e + f * f;
      s3 += g * g + h * h;
    }
    const long end = end4 + tail;
    while (i < end) {
      const double a = data[i++];
      const double b = data[i++];
      s0 += a * a + b * b;
    }
    const double s = (s0 + s1) + (s2 + s3);
    sum_power += s;
    const int m = s > threshold;
    busy += m;
    busy_sum_power += m * s;
  }
  c.windows = windows;
  c.busy = busy;
  c.sum_power = sum_power;
  c.busy_sum_power = busy_sum_power;
  c.leftover = count - windows * window;
  return c;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long parse_long(const char *what, const char *s, long min) {
  char *end;
  errno = 0;
  const long v = strtol(s, &end, 10);
  if (errno != 0 || *s == '\0' || *end != '\0' || v < min) {
    fprintf(stderr, "energy: %s must be an integer >= %ld, got '%s'\n", what, min, s);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: energy FILE COUNT WINDOW_SAMPLES THRESHOLD_SUM RUNS\n");
    return 2;
  }
  const long count = parse_long("COUNT", argv[2], 0);
  const long window = parse_long("WINDOW_SAMPLES", argv[3], 1);
  char *end;
  const double threshold = strtod(argv[4], &end);
  if (*argv[4] == '\0' || *end != '\0') {
    fprintf(stderr, "energy: THRESHOLD_SUM must be a number, got '%s'\n", argv[4]);
    return 2;
  }
  const long runs = parse_long("RUNS", argv[5], 1);

  float *data = malloc((size_t)(2 * count > 0 ? 2 * count : 1) * sizeof(float));
  if (data == NULL) {
    fprintf(stderr, "energy: cannot allocate %ld samples\n", count);
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (f == NULL) {
    fprintf(stderr, "energy: cannot open %s: %s\n", argv[1], strerror(errno));
    return 2;
  }
  const size_t got = fread(data, sizeof(float), (size_t)(2 * count), f);
  fclose(f);
  if (got != (size_t)(2 * count)) {
    fprintf(stderr, "energy: %s holds %zu floats, %ld needed\n", argv[1], got, 2 * count);
    return 2;
  }

  struct counts c = detect(data, count, window, threshold); /* warm-up: pages and caches */
  double best = 1e300;
  for (long r = 0; r < runs; r++) {
    const double t0 = now_s();
    c = detect(data, count, window, threshold);
    const double dt = now_s() - t0;
    if (dt < best) best = dt;
    __asm__ __volatile__("" ::: "memory");
  }
  printf("msps=%.1f\n", best > 0 ? (double)count / best / 1e6 : 0.0);
  printf("busy=%ld\n", c.busy);
  printf("windows=%ld\n", c.windows);
  printf("leftover=%ld\n", c.leftover);
  printf("sum_power=%.17g\n", c.sum_power);
  free(data);
  return 0;
}
