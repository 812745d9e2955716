/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIBCM_TEST_RUNNER_H
#define IPOIBCM_TEST_RUNNER_H

/*
 * The test runner of dpdk-test-ipoibcm and shm-fabric-test, in the style
 * of dpdk-test's commands: named tests registered from any file, run by
 * name. It needs no EAL (the fabric tests have none).
 *
 *   <harness> list | all | <test>...
 *
 * Each test prints "=== <name>", what it has to say, and "--- <name>: PASS"
 * or FAIL with its duration (a figure); the run ends with "N passed, N
 * failed" and exits 0 only when none failed. meson registers each name
 * on its own (list-tests.py finds them in the sources).
 */

#include <stdint.h>

#include "ipoib_util.h"

struct test_case {
	const char *name;
	const char *help;		/* one line for "list" */
	int (*fn)(void);		/* 0: passed; <0: failed */
	struct test_case *next;
};

void test_register(struct test_case *t);

/* Register fn as test nm (a C identifier; list-tests.py finds it). */
#define REGISTER_TEST(nm, func, text) \
static struct test_case test_case_ ## nm = { #nm, text, func, NULL }; \
static void __attribute__((constructor)) test_case_init_ ## nm(void) \
{ \
	test_register(&test_case_ ## nm); \
}

/* What a harness does around each test: both optional. */
struct test_hooks {
	void (*before)(const struct test_case *t);
	/* the verdict, given the test's return value */
	int (*after)(const struct test_case *t, int ret);
};

/*
 * Run what argv names (argv[0] is the program): "list" (or nothing), "all"
 * or test names. Returns the exit status: 0 when every test passed.
 */
int test_main(int argc, char **argv, const struct test_hooks *hooks);

/* Milliseconds on the monotonic clock: for hang guards and figures. */
static inline double
test_now_ms(void)
{
	return (double)ipoib_now_ns() / 1e6;
}

#endif /* IPOIBCM_TEST_RUNNER_H */
