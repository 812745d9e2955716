/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_UTIL_H
#define IPOIB_UTIL_H

/*
 * Small helpers without EAL, one of each for the driver, the shm fabric
 * and the applications built on the fabric (the peer emulator).
 */

#include <stdint.h>
#include <time.h>

#define IPOIB_NS_PER_MS		1000000ULL
#define IPOIB_NS_PER_S		1000000000ULL

/* CLOCK_MONOTONIC in nanoseconds: what every timer and deadline uses. */
static inline uint64_t
ipoib_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * IPOIB_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* The smallest power of 2 not below v (1 for 0); v at most 2^31. */
static inline uint32_t
ipoib_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

#endif /* IPOIB_UTIL_H */
