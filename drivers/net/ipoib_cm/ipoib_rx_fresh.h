/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_RX_FRESH_H
#define IPOIB_RX_FRESH_H

/* A receive burst's replacement mbufs (ipoib_rx.h). */

#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "ipoib_cm.h"
#include "ipoib_pool.h"

/*
 * Replacement mbufs taken from one pool: a burst's (SRQ: from the queue's
 * stash, ipoib_rx_stash_take()), or in one call those of a run of one
 * connection's completions (non-SRQ: its own pool) or of the datagrams.
 * The array is the caller's own local or the queue's stash: only its
 * address goes to the mempool's (out of line) dequeue, so n and next,
 * whose address goes nowhere, stay in registers across the burst's
 * stores to mbufs (with the array inside, every store could have changed
 * next: it was loaded and stored again for each packet).
 */
struct ipoib_rx_fresh {
	struct rte_mbuf **m;	/* IPOIB_RX_FRESH of them */
	uint16_t n;
	uint16_t next;
};

/*
 * n mbufs of pool for a receive ring, in one call: rte_pktmbuf_alloc_bulk()
 * without what the burst sets again when it delivers one (lengths,
 * segments: ipoib_rx_chain(); the packet type), data_off to port in one
 * store (ipoib_pool_rearm()). A mempool's mbufs already have next NULL,
 * nb_segs and refcnt 1; every pool a ring takes from is ipoib_pool.c's,
 * whose buffers are longer than the headroom and never pinned external
 * memory (no RTE_MBUF_F_EXTERNAL to keep).
 */
static __rte_always_inline int
ipoib_rx_mbufs_get(const struct ipoib_pool *pool, struct rte_mbuf **m,
		   uint16_t n)
{
	uint64_t rearm = pool->rearm;
	uint16_t i;

	if (unlikely(rte_mempool_get_bulk(pool->mp, (void **)m, n) != 0))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *mb = m[i];

		ipoib_pool_rearm(mb, rearm);
		mb->ol_flags = 0;
		mb->tx_offload = 0;
		mb->vlan_tci = 0;
		mb->vlan_tci_outer = 0;
	}
	return 0;
}

static __rte_always_inline void
ipoib_rx_fresh_take(struct ipoib_rx_fresh *f, const struct ipoib_pool *pool,
		    uint16_t want)
{
	f->next = 0;
	f->n = 0;
	want = RTE_MIN(want, (uint16_t)IPOIB_RX_FRESH);
	if (likely(ipoib_rx_mbufs_get(pool, f->m, want) == 0))
		f->n = want;
}

static __rte_always_inline void
ipoib_rx_fresh_return(struct ipoib_rx_fresh *f)
{
	if (f->next < f->n)
		rte_mempool_put_bulk(f->m[0]->pool, (void **)&f->m[f->next],
				     f->n - f->next);
	f->n = f->next = 0;
}

/*
 * SRQ mode: the replacements come from the queue's stash, refilled when
 * it holds fewer than the burst wants, with at least IPOIB_BURST (what a
 * full burst took before: more at once can miss the lcore's mempool
 * cache and go to its ring), so that bursts of a few frames (a
 * ping-pong's) make no mempool call each. f takes the top of the stash;
 * what it did not use goes back there (ipoib_rx_stash_return()). Out of
 * mbufs, it takes what there is.
 */
static __rte_always_inline void
ipoib_rx_stash_take(struct ipoib_rx_fresh *f, struct ipoib_rxq *rxq,
		    uint16_t want)
{
	uint16_t have = rxq->stash_n, add;

	want = RTE_MIN(want, (uint16_t)IPOIB_RX_FRESH);
	if (unlikely(have < want)) {
		add = want - have;
		if (add < IPOIB_BURST)
			add = RTE_MIN((uint16_t)IPOIB_BURST,
				      (uint16_t)(IPOIB_RX_FRESH - have));
		if (ipoib_rx_mbufs_get(&rxq->pool, &rxq->stash[have],
				       add) == 0)
			have += add;
		else if (add > want - have &&
			 ipoib_rx_mbufs_get(&rxq->pool, &rxq->stash[have],
					    want - have) == 0)
			have = want;
	}
	f->n = RTE_MIN(have, want);
	f->next = 0;
	rxq->stash_n = have - f->n;
	f->m = &rxq->stash[rxq->stash_n];
}

static __rte_always_inline void
ipoib_rx_stash_return(struct ipoib_rx_fresh *f, struct ipoib_rxq *rxq)
{
	uint16_t left = f->n - f->next;

	if (unlikely(left > 0)) {
		memmove(&rxq->stash[rxq->stash_n], &f->m[f->next],
			left * sizeof(f->m[0]));
		rxq->stash_n += left;
	}
	f->n = f->next = 0;
}

#endif /* IPOIB_RX_FRESH_H */
