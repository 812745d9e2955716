/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIBCM_APP_TIME_H
#define IPOIBCM_APP_TIME_H

/*
 * The monotonic clock of the applications and tests (no EAL): the peer
 * emulator, its client and both test harnesses read time here only. The
 * driver and the shm fabric have their own.
 */

#include <stdint.h>
#include <time.h>

static inline uint64_t
app_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* IPOIBCM_APP_TIME_H */
