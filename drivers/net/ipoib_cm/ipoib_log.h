/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_LOG_H
#define IPOIB_LOG_H

#include <rte_log.h>

extern int ipoib_logtype;

/* One log type for the whole driver; every message names its function. */
#define IPOIB_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, ipoib_logtype, "%s(): " fmt "\n", \
		__func__, ##__VA_ARGS__)

/* Datapath and fabric warnings: at most one per second per call site. */
#define IPOIB_LOG_RATELIMIT(level, fmt, ...) do { \
	static uint64_t ipoib_log_last_; \
	uint64_t ipoib_log_now_ = rte_get_timer_cycles(); \
	if (ipoib_log_now_ - ipoib_log_last_ > rte_get_timer_hz()) { \
		ipoib_log_last_ = ipoib_log_now_; \
		IPOIB_LOG(level, fmt, ##__VA_ARGS__); \
	} \
} while (0)

#endif /* IPOIB_LOG_H */
