/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Receive rings and receive queues. Buffers come from pools built on
 * memory the transport allocated (ipoib_pool.c); a ring slot is one posted
 * WR, segs mbufs long, identified in wr_id by kind, connection and slot
 * (ipoib_wr_id.h).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_ring.h>

#include "ipoib_cm.h"
#include "ipoib_log.h"
#include "ipoib_rxq.h"

#define IPOIB_DRAIN_NS		(2ULL * 1000000000ULL)

/* ---- rings --------------------------------------------------------------- */

int
ipoib_rx_ring_alloc(struct ipoib_mem *acct, struct ipoib_rx_ring *ring,
		    struct ipoib_pool *pool, uint32_t nb_slots, uint32_t bytes)
{
	uint32_t segs = (bytes + pool->seg_len - 1) / pool->seg_len;

	if (segs == 0 || segs > IPOIB_MAX_SGE)
		return -EINVAL;
	ring->bufs = ipoib_mem_zmalloc(acct, IPOIB_MEM_QUEUES, "ipoib_ring",
				       (size_t)nb_slots * segs *
				       sizeof(*ring->bufs),
				       RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (ring->bufs == NULL)
		return -ENOMEM;
	ring->pool = pool;
	ring->nb_slots = nb_slots;
	ring->segs = (uint16_t)segs;
	ring->seg_len = pool->seg_len;
	ring->outstanding = 0;
	return 0;
}

void
ipoib_rx_ring_free(struct ipoib_mem *acct, struct ipoib_rx_ring *ring)
{
	ipoib_mem_free(acct, IPOIB_MEM_QUEUES, ring->bufs);
	ring->bufs = NULL;
}

void
ipoib_rx_ring_drop_slot(struct ipoib_rx_ring *ring, uint32_t slot)
{
	struct rte_mbuf **b = &ring->bufs[(size_t)slot * ring->segs];
	uint16_t j;

	for (j = 0; j < ring->segs; j++) {
		rte_pktmbuf_free(b[j]);
		b[j] = NULL;
	}
	/* the control thread waits for it to reach 0 */
	__atomic_fetch_sub(&ring->outstanding, 1, __ATOMIC_RELEASE);
}

/* Once the HCA no longer writes to them, every buffer goes back. */
void
ipoib_rx_ring_release(struct ipoib_mem *acct, struct ipoib_rx_ring *ring)
{
	size_t i;

	if (ring->bufs == NULL)
		return;
	/* a drained ring's slots are all empty (ipoib_rx_ring_drop_slot()) */
	for (i = 0; i < (size_t)ring->nb_slots * ring->segs; i++)
		if (ring->bufs[i] != NULL)
			rte_pktmbuf_free(ring->bufs[i]);
	ring->outstanding = 0;
	ipoib_rx_ring_free(acct, ring);
}

static uint16_t
ipoib_ring_post(const struct ipoib_hca_ops *ops, enum ipoib_wr_kind kind,
		void *target, const struct ipoib_recv_wr *wr, uint16_t n)
{
	if (kind == IPOIB_WR_SRQ)
		return ops->post_srq_recv(target, wr, n);
	return ops->post_recv(target, wr, n);
}

int
ipoib_rx_ring_post_all(const struct ipoib_hca_ops *ops,
		       struct ipoib_rx_ring *ring, enum ipoib_wr_kind kind,
		       uint32_t conn, void *target)
{
	struct ipoib_recv_wr wr[16];
	uint32_t slot = 0, i;
	int ret;

	ret = rte_pktmbuf_alloc_bulk(ring->pool->mp, ring->bufs,
				     ring->nb_slots * ring->segs);
	if (ret < 0)
		return -ENOMEM;
	/* the port too: the burst delivers them as they are (ipoib_rx.h) */
	for (i = 0; i < ring->nb_slots * ring->segs; i++)
		ipoib_pool_rearm(ring->bufs[i], ring->pool->rearm);
	while (slot < ring->nb_slots) {
		uint16_t k = (uint16_t)RTE_MIN(ring->nb_slots - slot,
					       RTE_DIM(wr));
		uint16_t posted;

		for (i = 0; i < k; i++)
			ipoib_rx_ring_fill_wr(ring, slot + i,
					      ipoib_wr_id(kind, conn, slot + i),
					      &wr[i]);
		posted = ipoib_ring_post(ops, kind, target, wr, k);
		ring->outstanding += posted;
		slot += posted;
		if (posted < k)
			break;
	}
	if (slot < ring->nb_slots) {	/* never posted: give them back */
		rte_pktmbuf_free_bulk(&ring->bufs[(size_t)slot * ring->segs],
				      (ring->nb_slots - slot) * ring->segs);
		memset(&ring->bufs[(size_t)slot * ring->segs], 0,
		       (size_t)(ring->nb_slots - slot) * ring->segs *
		       sizeof(*ring->bufs));
		IPOIB_LOG(ERR, "only %u of %u receive WRs posted", slot,
			  ring->nb_slots);
		return -ENOSPC;
	}
	return 0;
}

void
ipoib_rx_ring_drain(struct ipoib_priv *priv, struct ipoib_hca_cq *cq,
		    struct ipoib_rx_ring *ring, enum ipoib_wr_kind kind)
{
	uint64_t deadline = ipoib_now_ns() + IPOIB_DRAIN_NS;
	struct ipoib_wc wc[32];

	while (ring->outstanding > 0 && ipoib_now_ns() < deadline) {
		uint16_t n = priv->ops->poll_cq(cq, wc, RTE_DIM(wc)), i;

		for (i = 0; i < n; i++) {
			if (ipoib_wr_kind(wc[i].wr_id) != kind ||
			    ipoib_wr_slot(wc[i].wr_id) >= ring->nb_slots) {
				IPOIB_LOG(ERR, "stray completion 0x%" PRIx64
					  " while draining", wc[i].wr_id);
				continue;
			}
			ipoib_rx_ring_drop_slot(ring,
						ipoib_wr_slot(wc[i].wr_id));
		}
	}
	if (ring->outstanding > 0)
		IPOIB_LOG(ERR, "%u receive WRs never completed",
			  ring->outstanding);
}

void
ipoib_ud_release(struct ipoib_priv *priv, struct ipoib_hca_qp **qp,
		 struct ipoib_ud *ud)
{
	const struct ipoib_hca_ops *ops = priv->ops;

	if (*qp != NULL) {
		uint32_t qpn = ops->qp_num(*qp);

		ops->qp_modify(*qp, IPOIB_QPS_ERR);
		/* the port is stopping: no burst posts to it any more */
		ops->qp_flush_settle(*qp);
		ipoib_rx_ring_drain(priv, ud->cq, &ud->ring, IPOIB_WR_UD);
		if (ops->qp_destroy(*qp) < 0)
			IPOIB_LOG(ERR, "UD QP 0x%06x not destroyed", qpn);
		*qp = NULL;
	}
	if (ud->cq != NULL)
		ops->cq_destroy(ud->cq);
	ud->cq = NULL;
	ipoib_rx_ring_release(&priv->acct, &ud->ring);
	ipoib_pool_free(priv, &ud->pool);
}

/* ---- receive queues ------------------------------------------------------ */

/* CQ entries a queue needs besides its receive descriptors. */
static uint32_t
ipoib_rxq_cqe_fixed(const struct ipoib_priv *priv)
{
	/* every active QP has a 1-WR receive queue on some CQ */
	return priv->cfg.max_conns + 64;
}

uint32_t
ipoib_rxq_cqe(const struct ipoib_priv *priv, uint16_t nb_desc)
{
	const struct rte_eth_dev_data *data = priv->eth_dev->data;
	uint32_t per_q, fit;
	uint64_t ring;

	if (priv->srq)
		return nb_desc + ipoib_rxq_cqe_fixed(priv);
	per_q = (priv->cfg.max_conns + data->nb_rx_queues - 1) /
		data->nb_rx_queues;
	ring = ipoib_conn_ring_bytes(priv, data->rx_queues[0]);
	fit = (uint32_t)RTE_MIN((uint64_t)per_q,
				priv->cfg.mem_budget / ring + 1);
	return fit * nb_desc + ipoib_rxq_cqe_fixed(priv);
}

/*
 * The most descriptors an rx queue may have on this HCA: what its SRQ
 * holds, or a connection's own receive queue (the mode dev_start will
 * choose), leaving room in the queue's CQ for its connections.
 */
uint16_t
ipoib_rxq_desc_max(const struct ipoib_priv *priv)
{
	const struct ipoib_port_attr *a = &priv->attr;
	bool srq = priv->cfg.srq == IPOIB_SRQ_ON ||
		   (priv->cfg.srq == IPOIB_SRQ_AUTO && a->has_srq);
	uint32_t n = srq ? a->max_srq_wr : a->max_qp_wr;
	uint32_t fixed = ipoib_rxq_cqe_fixed(priv);

	n = RTE_MIN(n, a->max_cqe > fixed ? a->max_cqe - fixed : 0);
	return (uint16_t)RTE_MIN(n, (uint32_t)UINT16_MAX);
}

uint64_t
ipoib_conn_ring_bytes(const struct ipoib_priv *priv,
		      const struct ipoib_rxq *rxq)
{
	uint32_t room = rte_pktmbuf_data_room_size(rxq->app_mp);
	uint32_t seg = room - RTE_PKTMBUF_HEADROOM;
	uint32_t segs = (priv->rc_buf + seg - 1) / seg;

	return ipoib_pool_bytes(ipoib_conn_pool_size(rxq->nb_desc, segs),
				room);
}

int
ipoib_rxq_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		unsigned int socket, struct rte_mempool *mp)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	struct ipoib_rxq *rxq;

	if (rte_pktmbuf_data_room_size(mp) <= RTE_PKTMBUF_HEADROOM + 64) {
		IPOIB_LOG(ERR, "rx queue %u: mbufs of %u bytes are too small",
			  qid, rte_pktmbuf_data_room_size(mp));
		return -EINVAL;
	}
	ipoib_rxq_release(dev, qid);
	rxq = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_QUEUES, "ipoib_rxq",
				sizeof(*rxq), RTE_CACHE_LINE_SIZE, (int)socket);
	if (rxq == NULL)
		return -ENOMEM;
	rxq->priv = priv;
	rxq->app_mp = mp;
	rxq->nb_desc = nb_desc;
	rxq->queue_id = qid;
	rxq->port_id = dev->data->port_id;
	rxq->rcu.id = qid;
	dev->data->rx_queues[qid] = rxq;
	return 0;
}

/* No burst running: the SRQ stash (ipoib_rx_stash_take()) to the pool. */
static void
ipoib_rxq_stash_release(struct ipoib_rxq *rxq)
{
	if (rxq->stash_n > 0)
		rte_mempool_put_bulk(rxq->pool.mp, (void **)rxq->stash,
				     rxq->stash_n);
	rxq->stash_n = 0;
}

void
ipoib_rxq_release(struct rte_eth_dev *dev, uint16_t qid)
{
	struct ipoib_rxq *rxq = dev->data->rx_queues[qid];

	if (rxq == NULL)
		return;
	ipoib_rxq_stash_release(rxq);
	ipoib_pool_free(rxq->priv, &rxq->pool);
	ipoib_mem_free(&rxq->priv->acct, IPOIB_MEM_QUEUES, rxq);
	dev->data->rx_queues[qid] = NULL;
}

/* Start: the CQ, and in SRQ mode the SRQ with all its buffers posted. */
int
ipoib_rxq_start(struct ipoib_priv *priv, struct ipoib_rxq *rxq)
{
	const struct ipoib_hca_ops *ops = priv->ops;
	uint32_t room = rte_pktmbuf_data_room_size(rxq->app_mp);
	uint32_t seg = room - RTE_PKTMBUF_HEADROOM;
	uint32_t segs = (priv->rc_buf + seg - 1) / seg;
	int ret;

	rxq->poll_cq = ops->poll_cq;
	rxq->post_recv = ops->post_recv;
	rxq->post_srq_recv = ops->post_srq_recv;
	rxq->qsbr = priv->pt.qsbr;
	rxq->peer_ctr = priv->pt.ctr[IPOIB_PEER_CTR_RX][rxq->queue_id];
	rxq->conns = priv->conns;
	rxq->nr_conns = priv->nr_conns_max;
	rxq->cq = ops->cq_create(priv->hca, ipoib_rxq_cqe(priv, rxq->nb_desc));
	if (rxq->cq == NULL) {
		IPOIB_LOG(ERR, "rx queue %u: no CQ of %u entries", rxq->queue_id,
			  ipoib_rxq_cqe(priv, rxq->nb_desc));
		return -ENOMEM;
	}
	if (!priv->srq)
		return 0;
	if (rxq->pool.mp != NULL &&
	    rxq->pool.mp->size < (uint32_t)rxq->nb_desc * segs * 2)
		ipoib_pool_free(priv, &rxq->pool);	/* MTU grew */
	if (rxq->pool.mp == NULL) {
		ret = ipoib_pool_create(priv, &rxq->pool, "rxq", "srq",
					rxq->nb_desc * segs * 2 +
					IPOIB_UD_SPARE, room);
		if (ret < 0)
			goto fail_cq;
	}
	ret = ipoib_rx_ring_alloc(&priv->acct, &rxq->srq_ring, &rxq->pool, rxq->nb_desc,
				  priv->rc_buf);
	if (ret < 0)
		goto fail_cq;
	rxq->srq = ops->srq_create(priv->hca, rxq->nb_desc, segs,
				   rxq->nb_desc / 4);
	if (rxq->srq == NULL) {
		ret = -ENOMEM;
		goto fail_ring;
	}
	ret = ipoib_rx_ring_post_all(ops, &rxq->srq_ring, IPOIB_WR_SRQ, 0,
				     rxq->srq);
	if (ret < 0)
		goto fail_srq;
	return 0;
fail_srq:
	ops->srq_destroy(rxq->srq);
	rxq->srq = NULL;
fail_ring:
	ipoib_rx_ring_release(&priv->acct, &rxq->srq_ring);
fail_cq:
	ops->cq_destroy(rxq->cq);
	rxq->cq = NULL;
	return ret;
}

/* Stop, after the connections are gone: flush the SRQ, free the CQ. */
void
ipoib_rxq_stop(struct ipoib_priv *priv, struct ipoib_rxq *rxq)
{
	const struct ipoib_hca_ops *ops = priv->ops;

	ipoib_rxq_stash_release(rxq);
	rxq->srq_wait_n = 0;	/* their mbufs are the ring's, released below */
	if (rxq->srq != NULL) {
		/* no QP uses it any more: what is posted comes back to us */
		if (ops->srq_destroy(rxq->srq) < 0)
			IPOIB_LOG(ERR, "rx queue %u: SRQ still in use",
				  rxq->queue_id);
		rxq->srq = NULL;
		ipoib_rx_ring_release(&priv->acct, &rxq->srq_ring);
	}
	if (rxq->cq != NULL)
		ops->cq_destroy(rxq->cq);
	rxq->cq = NULL;
}

ipoib_queue_count_t
ipoib_rx_queue_count(void *q)
{
	const struct ipoib_rxq *rxq = q;
	const struct ipoib_hca_ops *ops = rxq->priv->ops;
	uint32_t n = ops->cq_count(rxq->cq);

	if (rxq->ud_cq != NULL)
		n += ops->cq_count(rxq->ud_cq);
	if (rxq->loopback != NULL)
		n += rte_ring_count(rxq->loopback);
	return n;
}
