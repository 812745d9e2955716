/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef SHM_CQ_FILL_H
#define SHM_CQ_FILL_H

#include "shm_internal.h"

/*
 * Completions filled in place (shm_cq_push(), an RC send, a UD
 * delivery): n positions of a CQ of another (or this) process reserved
 * at once, each entry filled, then published by storing its seq last
 * (the release pairs with the acquire load in shm_cq_poll()). Senders do
 * this concurrently; the CQ is sized so that it never holds more
 * completions than receive WRs that may complete on it.
 */
static inline uint64_t
shm_cq_reserve(struct shm_cq_ring *c, uint32_t n)
{
	return __atomic_fetch_add(&c->tail, n, __ATOMIC_RELAXED);
}

static inline struct shm_cqe *
shm_cq_entry_take(struct shm_cq_ring *c, uint64_t pos)
{
	struct shm_cqe *e = &c->cqe[pos & c->mask];

	shm_tsan_buf_take(e);	/* a reused entry: see there */
	return e;
}

static inline void
shm_cq_publish(struct shm_cqe *e, uint64_t pos)
{
	shm_store(&e->seq, (uint32_t)(pos + 1));
	shm_tsan_buf_give(e);	/* read: a sender of the next lap may fill it */
}

#endif /* SHM_CQ_FILL_H */
