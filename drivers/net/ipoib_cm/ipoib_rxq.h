/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_RXQ_H
#define IPOIB_RXQ_H

/*
 * Receive buffers: rings of posted WRs (a slot is one WR: segs mbufs
 * scattered into) on pools in HCA memory (ipoib_pool.h), and receive
 * queue setup.
 */

#include <rte_mbuf.h>

#include "ipoib_cm.h"
#include "ipoib_compat.h"
#include "ipoib_pool.h"

#define IPOIB_UD_SPARE		1024	/* UD mbufs the application may hold */

/* The ring's array, counted in acct (IPOIB_MEM_QUEUES). */
int ipoib_rx_ring_alloc(struct ipoib_mem *acct, struct ipoib_rx_ring *ring,
			struct ipoib_pool *pool, uint32_t nb_slots,
			uint32_t bytes);
/* Free the ring's array; its mbufs must have been released. */
void ipoib_rx_ring_free(struct ipoib_mem *acct, struct ipoib_rx_ring *ring);
/* The HCA writes there no more: free every mbuf, then the array. */
void ipoib_rx_ring_release(struct ipoib_mem *acct,
			   struct ipoib_rx_ring *ring);
/*
 * The WR that posts slot again, with the mbufs it holds now. Inline: the
 * receive bursts fill one per packet.
 */
static __rte_always_inline void
ipoib_rx_ring_fill_wr(const struct ipoib_rx_ring *ring, uint32_t slot,
		      uint64_t wr_id, struct ipoib_recv_wr *wr)
{
	/* read once: the stores below may alias them */
	uint16_t segs = ring->segs, seg_len = ring->seg_len, j;
	struct rte_mbuf *const *b = &ring->bufs[(size_t)slot * segs];
	uint32_t lkey = ring->pool->mem.lkey;

	wr->wr_id = wr_id;
	wr->num_sge = segs;
	/*
	 * A posted mbuf's data starts at the headroom of a buffer that
	 * follows it (IPOIB_POOL_DATA_OFS): its address, without a load.
	 * MTUs up to the mbuf's data room: one segment.
	 */
	if (likely(segs == 1)) {
		wr->sg_list[0].addr = (uint64_t)(uintptr_t)b[0] +
				      IPOIB_POOL_DATA_OFS;
		wr->sg_list[0].length = seg_len;
		wr->sg_list[0].lkey = lkey;
		return;
	}
	for (j = 0; j < segs; j++) {
		wr->sg_list[j].addr = (uint64_t)(uintptr_t)b[j] +
				      IPOIB_POOL_DATA_OFS;
		wr->sg_list[j].length = seg_len;
		wr->sg_list[j].lkey = lkey;
	}
}

/* Fill every slot with mbufs and post it to target (an SRQ or a QP). */
int ipoib_rx_ring_post_all(const struct ipoib_hca_ops *ops,
			   struct ipoib_rx_ring *ring, enum ipoib_wr_kind kind,
			   uint32_t conn, void *target);
/* Poll cq until every posted WR of ring completed (after a flush). */
void ipoib_rx_ring_drain(struct ipoib_priv *priv, struct ipoib_hca_cq *cq,
			 struct ipoib_rx_ring *ring, enum ipoib_wr_kind kind);
/*
 * A UD receive side gone (the port's, or an RSS share's): its QP flushed,
 * its buffers drained back and the QP destroyed, then its CQ, buffers and
 * pool.
 */
void ipoib_ud_release(struct ipoib_priv *priv, struct ipoib_hca_qp **qp,
		      struct ipoib_ud *ud);
/*
 * A completed slot: give its mbufs back to the pool, refill nothing; one
 * fewer posted (ring->outstanding, which a teardown waits to reach 0).
 */
void ipoib_rx_ring_drop_slot(struct ipoib_rx_ring *ring, uint32_t slot);

/* Receive queue life: setup at configure time, resources at start. */
int ipoib_rxq_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		    unsigned int socket, struct rte_mempool *mp);
void ipoib_rxq_release(struct rte_eth_dev *dev, uint16_t qid);
int ipoib_rxq_start(struct ipoib_priv *priv, struct ipoib_rxq *rxq);
/* rte_eth_rx_queue_count(): received, not yet taken by a burst. */
ipoib_queue_count_t ipoib_rx_queue_count(void *q);
void ipoib_rxq_stop(struct ipoib_priv *priv, struct ipoib_rxq *rxq);
/* Completion queue entries queue qid needs for its connections. */
uint32_t ipoib_rxq_cqe(const struct ipoib_priv *priv, uint16_t nb_desc);
/* The most descriptors an rx queue may have (dev_infos_get). */
uint16_t ipoib_rxq_desc_max(const struct ipoib_priv *priv);
/* Bytes of receive buffers one non-SRQ connection posts (its pool). */
uint64_t ipoib_conn_ring_bytes(const struct ipoib_priv *priv,
			       const struct ipoib_rxq *rxq);

#endif /* IPOIB_RXQ_H */
