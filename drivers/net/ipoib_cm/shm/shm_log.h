/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef SHM_LOG_H
#define SHM_LOG_H

/*
 * The fabric logs through a hook, so that it needs no EAL: the driver routes
 * it to rte_log, the peer emulator to stderr. Levels are syslog's.
 */

#define SHM_LOG_ERR	3
#define SHM_LOG_WARNING	4
#define SHM_LOG_NOTICE	5
#define SHM_LOG_INFO	6
#define SHM_LOG_DEBUG	7

typedef void (*shm_log_fn)(int level, const char *msg);

void shm_set_logger(shm_log_fn fn, int max_level);
void shm_log(int level, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define SHM_LOG(level, fmt, ...) \
	shm_log(SHM_LOG_ ## level, __func__, fmt, ##__VA_ARGS__)

#endif /* SHM_LOG_H */
