/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * dpdk-test-ipoibcm: named test commands in the style of dpdk-test.
 *   dpdk-test-ipoibcm [EAL options] -- list | all | <test>...
 */

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_log.h>

#include "test.h"

static TAILQ_HEAD(, ipoib_test) ipoib_tests =
	TAILQ_HEAD_INITIALIZER(ipoib_tests);

/* Keep the list sorted by name, so "list" and "all" are stable. */
void
ipoib_test_register(struct ipoib_test *t)
{
	struct ipoib_test *it;

	TAILQ_FOREACH(it, &ipoib_tests, next) {
		if (strcmp(t->name, it->name) < 0) {
			TAILQ_INSERT_BEFORE(it, t, next);
			return;
		}
	}
	TAILQ_INSERT_TAIL(&ipoib_tests, t, next);
}

static char *log_buf;
static size_t log_len;
static FILE *log_mem;
static FILE *log_prev;

void
test_log_capture_start(void)
{
	free(log_buf);
	log_buf = NULL;
	log_mem = open_memstream(&log_buf, &log_len);
	log_prev = rte_log_get_stream();
	rte_openlog_stream(log_mem);
}

/* The text logged since test_log_capture_start(), also echoed. */
const char *
test_log_capture_stop(void)
{
	rte_openlog_stream(log_prev == stderr ? NULL : log_prev);
	fclose(log_mem);
	log_mem = NULL;
	fputs(log_buf, stdout);
	return log_buf;
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
run_one(struct ipoib_test *t)
{
	double t0 = now_ms();
	int ret;

	printf("=== %s\n", t->name);
	fflush(stdout);
	ret = t->fn();
	printf("--- %s: %s (%.0f ms)\n", t->name, ret == 0 ? "PASS" : "FAIL",
	       now_ms() - t0);
	fflush(stdout);
	return ret;
}

static struct ipoib_test *
find_test(const char *name)
{
	struct ipoib_test *t;

	TAILQ_FOREACH(t, &ipoib_tests, next)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

static void
list_tests(void)
{
	struct ipoib_test *t;

	TAILQ_FOREACH(t, &ipoib_tests, next)
		printf("%-28s %s\n", t->name, t->help);
}

int
main(int argc, char **argv)
{
	unsigned int passed = 0, failed = 0;
	struct ipoib_test *t;
	int ret, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "EAL initialisation failed\n");
		return 2;
	}
	argc -= ret;
	argv += ret;
	if (argc > 1 && strcmp(argv[1], "--") == 0) {
		argc--;
		argv++;
	}
	if (argc < 2 || strcmp(argv[1], "list") == 0) {
		list_tests();
		rte_eal_cleanup();
		return 0;
	}
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "all") == 0) {
			TAILQ_FOREACH(t, &ipoib_tests, next) {
				if (run_one(t) == 0)
					passed++;
				else
					failed++;
			}
			continue;
		}
		t = find_test(argv[i]);
		if (t == NULL) {
			printf("unknown test \"%s\"; \"list\" names them\n",
			       argv[i]);
			failed++;
		} else if (run_one(t) == 0) {
			passed++;
		} else {
			failed++;
		}
	}
	rte_eal_cleanup();
	free(log_buf);
	printf("%u passed, %u failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
