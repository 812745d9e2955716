/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef SHM_BELL_H
#define SHM_BELL_H

#include <limits.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/futex.h>

#include "shm_internal.h"

/*
 * A mailbox's doorbell: a futex word in the fabric's shared memory, so a
 * process wakes another's control thread. It counts, so a wait that read
 * it before a ring returns at once (FUTEX_WAIT compares first). The wake
 * is a system call only while a thread sleeps on it: a waiter counts
 * itself in sleepers before FUTEX_WAIT reads the bell, a ringer adds to
 * the bell before it reads sleepers (both sequentially consistent), so a
 * ringer that reads no sleeper rang before that waiter's FUTEX_WAIT
 * compared, which then returns at once (shm_cm_wait()).
 */
static inline bool
shm_bell_add(struct shm_cm_ring *ring)
{
	__atomic_fetch_add(&ring->bell, 1, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&ring->sleepers, __ATOMIC_SEQ_CST) != 0;
}

/* Harmless on a bell since freed: its segment stays mapped (detach). */
static inline void
shm_bell_wake(uint32_t *bell)
{
	syscall(SYS_futex, bell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static inline void
shm_bell_ring(struct shm_cm_ring *ring)
{
	if (shm_bell_add(ring))
		shm_bell_wake(&ring->bell);
}

#endif /* SHM_BELL_H */
