/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Receive buffers and receive queues. Buffers live in pools built on
 * memory the transport allocated (the HCA writes there); a ring slot is one
 * posted WR, segs mbufs long, identified in wr_id by kind, connection and
 * slot.
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

/* ---- pools --------------------------------------------------------------- */

int
ipoib_pool_create(struct ipoib_priv *priv, struct ipoib_pool *pool,
		  const char *port, const char *what, uint32_t n,
		  uint32_t data_room)
{
	static uint32_t seq;
	struct rte_pktmbuf_pool_private pp = {
		.mbuf_data_room_size = (uint16_t)data_room,
	};
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool_objsz osz;
	struct rte_mempool *mp;
	size_t sz;
	void *addr;
	int ret;

	if (data_room > UINT16_MAX || data_room <= RTE_PKTMBUF_HEADROOM)
		return -EINVAL;
	snprintf(name, sizeof(name), "ipb_%s_%u", what,
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	/* the HCA reads virtual addresses: objects may cross pages */
	mp = rte_mempool_create_empty(name, n, sizeof(struct rte_mbuf) +
				      data_room, RTE_MIN(256U, n / 8),
				      sizeof(pp), (int)rte_socket_id(),
				      RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (mp == NULL)
		return -rte_errno;
	ret = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(),
					 NULL);
	if (ret < 0)
		goto fail_mp;
	rte_pktmbuf_pool_init(mp, &pp);
	/* one virtually contiguous chunk: objects back to back */
	sz = (size_t)n * rte_mempool_calc_obj_size(mp->elt_size, mp->flags,
						   &osz);
	ret = priv->ops->mem_alloc(priv->hca, ipoib_pool_bytes(n, data_room),
				   &pool->mem);
	if (ret < 0)
		goto fail_mp;
	addr = RTE_PTR_ALIGN_CEIL(pool->mem.addr, RTE_MEMPOOL_ALIGN);
	ret = rte_mempool_populate_iova(mp, addr, (rte_iova_t)(uintptr_t)addr,
					sz, NULL, NULL);
	if (ret < (int)n) {
		ret = ret < 0 ? ret : -ENOMEM;
		goto fail_mem;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	pool->mp = mp;
	pool->seg_len = (uint16_t)(data_room - RTE_PKTMBUF_HEADROOM);
	IPOIB_LOG(DEBUG, "%s: pool %s: %u mbufs of %u bytes, %zu bytes", port,
		  name, n, data_room, pool->mem.len);
	return 0;
fail_mem:
	rte_mempool_free(mp);
	priv->ops->mem_free(priv->hca, &pool->mem);
	return ret;
fail_mp:
	rte_mempool_free(mp);
	return ret;
}

bool
ipoib_pool_idle(const struct ipoib_pool *pool)
{
	return pool->mp == NULL || rte_mempool_full(pool->mp);
}

void
ipoib_pool_free(struct ipoib_priv *priv, struct ipoib_pool *pool)
{
	if (pool->mp == NULL)
		return;
	if (!rte_mempool_full(pool->mp))
		IPOIB_LOG(WARNING, "pool %s freed with %u mbufs still out",
			  pool->mp->name, rte_mempool_in_use_count(pool->mp));
	rte_mempool_free(pool->mp);
	priv->ops->mem_free(priv->hca, &pool->mem);
	pool->mp = NULL;
}

/* ---- rings --------------------------------------------------------------- */

int
ipoib_rx_ring_alloc(struct ipoib_rx_ring *ring, struct ipoib_pool *pool,
		    uint32_t nb_slots, uint32_t bytes)
{
	uint32_t segs = (bytes + pool->seg_len - 1) / pool->seg_len;

	if (segs == 0 || segs > IPOIB_MAX_SGE)
		return -EINVAL;
	ring->bufs = rte_zmalloc("ipoib_ring", (size_t)nb_slots * segs *
				 sizeof(*ring->bufs), RTE_CACHE_LINE_SIZE);
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
ipoib_rx_ring_free(struct ipoib_rx_ring *ring)
{
	rte_free(ring->bufs);
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
ipoib_rx_ring_release(struct ipoib_rx_ring *ring)
{
	size_t i;

	if (ring->bufs == NULL)
		return;
	for (i = 0; i < (size_t)ring->nb_slots * ring->segs; i++)
		rte_pktmbuf_free(ring->bufs[i]);
	ring->outstanding = 0;
	ipoib_rx_ring_free(ring);
}

void
ipoib_rx_ring_fill_wr(const struct ipoib_rx_ring *ring, uint32_t slot,
		      uint64_t wr_id, struct ipoib_recv_wr *wr)
{
	struct rte_mbuf *const *b = &ring->bufs[(size_t)slot * ring->segs];
	uint16_t j;

	wr->wr_id = wr_id;
	wr->num_sge = ring->segs;
	for (j = 0; j < ring->segs; j++) {
		wr->sg_list[j].addr = (uint64_t)(uintptr_t)
				      rte_pktmbuf_mtod(b[j], void *);
		wr->sg_list[j].length = ring->seg_len;
		wr->sg_list[j].lkey = ring->pool->mem.lkey;
	}
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
	uint32_t slot = 0;
	int ret;

	ret = rte_pktmbuf_alloc_bulk(ring->pool->mp, ring->bufs,
				     ring->nb_slots * ring->segs);
	if (ret < 0)
		return -ENOMEM;
	while (slot < ring->nb_slots) {
		uint16_t k = (uint16_t)RTE_MIN(ring->nb_slots - slot,
					       RTE_DIM(wr));
		uint16_t i, posted;

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
			if ((wc[i].wr_id >> IPOIB_WR_KIND_SHIFT) != kind) {
				IPOIB_LOG(ERR, "stray completion 0x%" PRIx64
					  " while draining", wc[i].wr_id);
				continue;
			}
			ipoib_rx_ring_drop_slot(ring, (uint32_t)
				(wc[i].wr_id & IPOIB_WR_SLOT_MASK));
		}
	}
	if (ring->outstanding > 0)
		IPOIB_LOG(ERR, "%u receive WRs never completed",
			  ring->outstanding);
}

/* ---- receive queues ------------------------------------------------------ */

uint32_t
ipoib_rxq_cqe(const struct ipoib_priv *priv, uint16_t nb_desc)
{
	const struct rte_eth_dev_data *data = priv->eth_dev->data;
	uint32_t per_q, fit;
	uint64_t ring;

	/* every active QP has a 1-WR receive queue on some CQ */
	if (priv->srq)
		return nb_desc + priv->cfg.max_conns + 64;
	per_q = (priv->cfg.max_conns + data->nb_rx_queues - 1) /
		data->nb_rx_queues;
	ring = ipoib_conn_ring_bytes(priv, data->rx_queues[0]);
	fit = (uint32_t)RTE_MIN((uint64_t)per_q,
				priv->cfg.mem_budget / ring + 1);
	return fit * nb_desc + priv->cfg.max_conns + 64;
}

/* The HCA memory a pool of n mbufs of data_room bytes takes. */
uint64_t
ipoib_pool_bytes(uint32_t n, uint32_t data_room)
{
	struct rte_mempool_objsz osz;

	return (uint64_t)n * rte_mempool_calc_obj_size(
		sizeof(struct rte_mbuf) + data_room,
		RTE_MEMPOOL_F_NO_IOVA_CONTIG, &osz) + RTE_MEMPOOL_ALIGN;
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
	rxq = rte_zmalloc_socket("ipoib_rxq", sizeof(*rxq),
				 RTE_CACHE_LINE_SIZE, (int)socket);
	if (rxq == NULL)
		return -ENOMEM;
	rxq->priv = priv;
	rxq->app_mp = mp;
	rxq->nb_desc = nb_desc;
	rxq->queue_id = qid;
	rxq->port_id = dev->data->port_id;
	rxq->qsbr_id = qid;
	dev->data->rx_queues[qid] = rxq;
	return 0;
}

void
ipoib_rxq_release(struct rte_eth_dev *dev, uint16_t qid)
{
	struct ipoib_rxq *rxq = dev->data->rx_queues[qid];

	if (rxq == NULL)
		return;
	ipoib_pool_free(rxq->priv, &rxq->pool);
	rte_free(rxq);
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
	ret = ipoib_rx_ring_alloc(&rxq->srq_ring, &rxq->pool, rxq->nb_desc,
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
	ipoib_rx_ring_release(&rxq->srq_ring);
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

	if (rxq->srq != NULL) {
		/* no QP uses it any more: what is posted comes back to us */
		if (ops->srq_destroy(rxq->srq) < 0)
			IPOIB_LOG(ERR, "rx queue %u: SRQ still in use",
				  rxq->queue_id);
		rxq->srq = NULL;
		ipoib_rx_ring_release(&rxq->srq_ring);
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
