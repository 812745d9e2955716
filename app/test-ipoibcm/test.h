/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIBCM_TEST_H
#define IPOIBCM_TEST_H

#include <stdio.h>

#include "test_runner.h"

/*
 * Checks of the unit tests: on failure, say where and why, and return -1
 * from the test (or helper) at once. Helpers return 0 or -1; TEST_RUN
 * propagates. (The fabric tests' CHECK jumps to a cleanup label instead.)
 */
#define TEST_ASSERT(cond, fmt, ...) do { \
	if (!(cond)) { \
		printf("    FAIL %s:%d: %s: " fmt "\n", __FILE__, __LINE__, \
		       #cond, ##__VA_ARGS__); \
		return -1; \
	} \
} while (0)

#define TEST_ASSERT_EQ(a, b, fmt, ...) do { \
	long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) { \
		printf("    FAIL %s:%d: %s == %s: %lld != %lld: " fmt "\n", \
		       __FILE__, __LINE__, #a, #b, a_, b_, ##__VA_ARGS__); \
		return -1; \
	} \
} while (0)

/* Run a sub-check; propagate its failure. */
#define TEST_RUN(expr) do { \
	if ((expr) < 0) { \
		printf("    FAIL %s:%d: %s\n", __FILE__, __LINE__, #expr); \
		return -1; \
	} \
} while (0)

/* Log capture: collect what the driver logs while a check runs. */
void test_log_capture_start(void);
const char *test_log_capture_stop(void);

#endif /* IPOIBCM_TEST_H */
