/*
 * What native/sora-ring's programs share: dying with a message, parsing
 * numeric flags, clocks, and creating a ring file the way readers expect it
 * (sized and mapped under a temporary name, renamed into place by
 * ring_publish once its header is complete). Each program sets tool_name.
 */
#ifndef SORA_TOOL_H
#define SORA_TOOL_H

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Prefix of every message, e.g. "sora-producer". */
static const char *tool_name = "sora-ring";

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* SIGINT and SIGTERM set stop_requested: the program finishes its step, marks its ring stopped and exits. */
static void stop_on_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", tool_name);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

/* die() with the reason of the failed system call (errno) appended. */
static void die_sys(const char *what, const char *arg)
{
	int e = errno;
	fprintf(stderr, "%s: %s %s: %s\n", tool_name, what, arg, strerror(e));
	exit(2);
}

static double parse_double(const char *name, const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v)) die("bad number for --%s", name);
	return v;
}

static uint64_t parse_u64(const char *name, const char *s)
{
	double v = parse_double(name, s); /* accepts 2.412e9 */
	if (v < 0 || v > 1.8e19 || v != floor(v)) die("--%s must be a non-negative integer", name);
	return (uint64_t)v;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A ring file being made: mapped, all zero, under the name `tmp` until ring_publish. */
struct ring_file {
	void *map;
	size_t bytes;
	char tmp[4096];
};

static void ring_create(struct ring_file *f, const char *path, size_t bytes)
{
	if (snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof f->tmp) die("ring path too long: %s", path);
	f->bytes = bytes;
	int fd = open(f->tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) die_sys("cannot create", f->tmp);
	if (ftruncate(fd, (off_t)bytes) != 0) {
		int e = errno;
		unlink(f->tmp);
		errno = e;
		die_sys("cannot size", f->tmp);
	}
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int map_errno = errno;
	close(fd);
	if (m == MAP_FAILED) {
		unlink(f->tmp);
		errno = map_errno;
		die_sys("cannot map", f->tmp);
	}
	f->map = m;
}

/* Readers find the file complete or not at all. */
static void ring_publish(struct ring_file *f, const char *path)
{
	if (rename(f->tmp, path) != 0) {
		int e = errno;
		unlink(f->tmp);
		errno = e;
		die_sys("cannot rename the ring into place at", path);
	}
}

#endif
