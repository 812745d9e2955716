/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef SHM_CQ_FILL_H
#define SHM_CQ_FILL_H

#include <string.h>

#include "shm_internal.h"

/*
 * Completions filled in place (an RC send, a UD delivery, a receive
 * queue's flush): n positions of a CQ of another (or this) process
 * reserved at once, each entry filled, then published by storing its
 * seq last (the release pairs with the acquire load in shm_cq_poll()).
 * Senders do this concurrently; the CQ is sized so that it never holds
 * more completions than receive WRs that may complete on it.
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

/*
 * What a sender's completions on one receive queue have in common: all
 * but the slot, the length and the status, which start at 0 (success).
 */
static inline void
shm_cqe_tmpl(struct shm_cqe *t, uint32_t rq_id, uint32_t qp_num,
	     uint32_t src_qp, uint32_t qp_context, uint16_t slid,
	     uint8_t wc_flags)
{
	memset(t, 0, sizeof(*t));
	t->rq_id = rq_id;
	t->qp_num = qp_num;
	t->src_qp = src_qp;
	t->qp_context = qp_context;
	t->slid = slid;
	t->wc_flags = wc_flags;
}

/* A taken entry filled from tmpl for the WR in slot; seq is published. */
static inline void
shm_cq_entry_fill(struct shm_cqe *e, const struct shm_cqe *tmpl,
		  uint32_t slot)
{
	/* the body, not seq nor the padding */
	memcpy(&e->rq_id, &tmpl->rq_id, SHM_CQE_BODY_LEN);
	e->slot = slot;
}

static inline void
shm_cq_publish(struct shm_cqe *e, uint64_t pos)
{
	shm_store(&e->seq, (uint32_t)(pos + 1));
	shm_tsan_buf_give(e);	/* read: a sender of the next lap may fill it */
}

#endif /* SHM_CQ_FILL_H */
