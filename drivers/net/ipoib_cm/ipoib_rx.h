/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_RX_H
#define IPOIB_RX_H

/*
 * The receive burst, written once. ipoib_rx_srq.c and ipoib_rx_nosrq.c
 * instantiate it with the mode as a compile-time constant: the two
 * functions share this text and nothing else, and neither tests the mode
 * at run time. Per burst: ICMP errors the transmit side made, the UD CQ
 * (queue 0), then the queue's RC CQ; replacement buffers are taken before
 * a packet is delivered, and all reposts of a receive queue go in one call.
 */

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "ipoib_cm.h"
#include "ipoib_eth.h"
#include "ipoib_rxq.h"

static __rte_always_inline uint32_t
ipoib_wr_slot(uint64_t wr_id)
{
	return (uint32_t)(wr_id & IPOIB_WR_SLOT_MASK);
}

static __rte_always_inline uint32_t
ipoib_wr_conn(uint64_t wr_id)
{
	return (uint32_t)((wr_id >> IPOIB_WR_CONN_SHIFT) & IPOIB_WR_CONN_MASK);
}

static __rte_always_inline unsigned int
ipoib_wr_kind(uint64_t wr_id)
{
	return (unsigned int)(wr_id >> IPOIB_WR_KIND_SHIFT);
}

/*
 * Turn a completed slot into an mbuf chain of len bytes, skip bytes in,
 * after putting fresh mbufs in the slot. NULL when no fresh mbufs: the
 * slot keeps its old ones and the packet is dropped.
 */
static __rte_always_inline struct rte_mbuf *
ipoib_rx_chain(struct ipoib_rxq *rxq, struct ipoib_rx_ring *ring,
	       uint32_t slot, uint32_t len, uint32_t skip)
{
	struct rte_mbuf **b = &ring->bufs[(size_t)slot * ring->segs];
	struct rte_mbuf *fresh[IPOIB_MAX_SGE];
	uint16_t nseg = (uint16_t)((len + ring->seg_len - 1) / ring->seg_len);
	struct rte_mbuf *head = b[0], *prev = NULL;
	uint32_t left = len;
	uint16_t j;

	if (unlikely(nseg == 0 || nseg > ring->segs || len <= skip))
		return NULL;
	if (unlikely(rte_pktmbuf_alloc_bulk(ring->pool->mp, fresh, nseg))) {
		rxq->stats.nombuf++;
		return NULL;
	}
	for (j = 0; j < nseg; j++) {
		struct rte_mbuf *m = b[j];

		m->data_len = (uint16_t)RTE_MIN(left, (uint32_t)ring->seg_len);
		left -= m->data_len;
		if (prev != NULL)
			prev->next = m;
		prev = m;
		b[j] = fresh[j];
	}
	head->nb_segs = nseg;
	head->pkt_len = len - skip;
	head->data_off += skip;
	head->data_len -= skip;
	head->port = rxq->port_id;
	return head;
}

/* Ethernet emulation and accounting of one received IPoIB frame. */
static __rte_always_inline bool
ipoib_rx_deliver(struct ipoib_rxq *rxq, struct rte_mbuf *m,
		 const struct ipoib_hwaddr *src, struct ipoib_peer *peer,
		 bool mcast)
{
	struct ipoib_priv *priv = rxq->priv;
	struct ipoib_learn learn;

	if (unlikely(ipoib_eth_decap(m, src, mcast, &priv->eth, &learn) < 0)) {
		rxq->stats.drop_malformed++;
		rte_pktmbuf_free(m);
		return false;
	}
	if (unlikely(learn.valid))
		ipoib_peer_learn(priv, &learn.hw);
	if (likely(peer != NULL)) {
		__atomic_fetch_add(&peer->rx_pkts, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&peer->rx_bytes, m->pkt_len,
				   __ATOMIC_RELAXED);
	}
	rxq->stats.packets++;
	rxq->stats.bytes += m->pkt_len;
	return true;
}

/* The UD source of a completion: cached for a busy sender. */
static __rte_always_inline struct ipoib_peer *
ipoib_rx_ud_source(struct ipoib_rxq *rxq, const struct ipoib_wc *wc,
		   const struct ipoib_grh *grh, struct ipoib_hwaddr *src)
{
	struct ipoib_peer *peer = rxq->last_src;

	ipoib_hwaddr_set(src, 0, wc->src_qp, grh->sgid);
	if (likely(peer != NULL && !peer->dead && peer->qpn == wc->src_qp &&
		   memcmp(ipoib_hwaddr_gid(&peer->hw), grh->sgid,
			  IPOIB_GID_LEN) == 0))
		return peer;
	peer = ipoib_peer_learn(rxq->priv, src);
	rxq->last_src = peer;
	return peer;
}

/* Queue 0: the datagram side, in both receive modes. */
static __rte_always_inline uint16_t
ipoib_rx_ud(struct ipoib_rxq *rxq, struct rte_mbuf **pkts, uint16_t n)
{
	struct ipoib_priv *priv = rxq->priv;
	struct ipoib_rx_ring *ring = rxq->ud;
	struct ipoib_recv_wr wr[IPOIB_BURST];
	struct ipoib_wc wc[IPOIB_BURST];
	uint16_t k, i, nb = 0, nwr = 0;

	k = rxq->poll_cq(rxq->ud_cq, wc, RTE_MIN(n, (uint16_t)IPOIB_BURST));
	for (i = 0; i < k; i++) {
		uint32_t slot = ipoib_wr_slot(wc[i].wr_id);
		const struct ipoib_grh *grh;
		struct ipoib_hwaddr src;
		struct ipoib_peer *peer;
		struct rte_mbuf *m;
		bool mcast;

		if (unlikely(wc[i].status != IPOIB_WC_SUCCESS ||
			     !(wc[i].wc_flags & IPOIB_WC_GRH) ||
			     slot >= ring->nb_slots)) {
			if (wc[i].status == IPOIB_WC_WR_FLUSH_ERR &&
			    slot < ring->nb_slots) {
				rxq->stats.flushed++;
				ipoib_rx_ring_drop_slot(ring, slot);
				continue;
			}
			rxq->stats.drop_len++;
			goto repost;
		}
		grh = rte_pktmbuf_mtod(ring->bufs[(size_t)slot * ring->segs],
				       const struct ipoib_grh *);
		if (unlikely(wc[i].src_qp == priv->ud_qpn &&
			     wc[i].slid == priv->attr.lid)) {
			rxq->stats.drop_mcast_loop++;
			goto repost;
		}
		mcast = grh->dgid[0] == 0xff;
		peer = ipoib_rx_ud_source(rxq, &wc[i], grh, &src);
		m = ipoib_rx_chain(rxq, ring, slot, wc[i].byte_len,
				   IPOIB_GRH_LEN);
		if (unlikely(m == NULL))
			goto repost;
		if (ipoib_rx_deliver(rxq, m, &src, peer, mcast)) {
			rxq->stats.ud_packets++;
			rxq->stats.ud_bytes += m->pkt_len;
			pkts[nb++] = m;
		}
repost:
		ipoib_rx_ring_fill_wr(ring, slot, wc[i].wr_id, &wr[nwr++]);
	}
	if (nwr > 0)
		priv->ops->post_recv(priv->ud_qp, wr, nwr);
	return nb;
}

/* Post the reposts of a burst: the SRQ at once, connections run by run. */
static __rte_always_inline void
ipoib_rx_repost(struct ipoib_rxq *rxq, struct ipoib_recv_wr *wr,
		struct ipoib_conn **conn, uint16_t nwr, const bool srq)
{
	const struct ipoib_hca_ops *ops = rxq->priv->ops;
	uint16_t i, start = 0;

	if (srq) {
		if (nwr > 0)
			ops->post_srq_recv(rxq->srq, wr, nwr);
		return;
	}
	for (i = 1; i <= nwr; i++) {
		if (i < nwr && conn[i] == conn[start])
			continue;
		ops->post_recv(conn[start]->qp, &wr[start], i - start);
		start = i;
	}
}

/* A completion that is not ours to deliver: flush, error, stray. */
static __rte_always_inline bool
ipoib_rx_not_data(struct ipoib_rxq *rxq, struct ipoib_rx_ring *ring,
		  const struct ipoib_wc *wc, uint32_t slot)
{
	if (likely(wc->status == IPOIB_WC_SUCCESS))
		return false;
	if (wc->status == IPOIB_WC_WR_FLUSH_ERR) {
		rxq->stats.flushed++;
		ipoib_rx_ring_drop_slot(ring, slot);
		return true;
	}
	rxq->stats.drop_len++;
	return false;
}

static __rte_always_inline uint16_t
ipoib_rx_burst_tmpl(struct ipoib_rxq *rxq, struct rte_mbuf **pkts,
		    uint16_t n, const bool srq)
{
	struct ipoib_recv_wr wr[IPOIB_BURST];
	struct ipoib_conn *wr_conn[IPOIB_BURST];
	struct ipoib_wc wc[IPOIB_BURST];
	uint16_t nb = 0, nwr = 0, k, i;

	if (rxq->loopback != NULL)
		nb = (uint16_t)rte_ring_dequeue_burst(rxq->loopback,
						      (void **)pkts, n, NULL);
	if (rxq->ud_cq != NULL && nb < n)
		nb += ipoib_rx_ud(rxq, pkts + nb, n - nb);
	k = rxq->poll_cq(rxq->cq, wc,
			 RTE_MIN((uint16_t)(n - nb), (uint16_t)IPOIB_BURST));
	for (i = 0; i < k; i++) {
		uint32_t slot = ipoib_wr_slot(wc[i].wr_id);
		struct ipoib_conn *owner, *conn;
		struct ipoib_rx_ring *ring;
		struct rte_mbuf *m;

		/* in SRQ mode buffers are the queue's; else the connection's */
		if (srq) {
			if (unlikely(ipoib_wr_kind(wc[i].wr_id) != IPOIB_WR_SRQ))
				continue;	/* a send QP's empty RQ */
			ring = &rxq->srq_ring;
			owner = NULL;
		} else {
			if (unlikely(ipoib_wr_kind(wc[i].wr_id) != IPOIB_WR_CONN))
				continue;
			owner = rxq->conns[ipoib_wr_conn(wc[i].wr_id)];
			if (unlikely(owner == NULL))
				continue;	/* cannot be: drained first */
			ring = &owner->ring;
		}
		if (unlikely(ipoib_rx_not_data(rxq, ring, &wc[i], slot)))
			continue;
		conn = owner;
		if (srq)
			conn = likely(wc[i].qp_context < rxq->nr_conns) ?
			       rxq->conns[wc[i].qp_context] : NULL;
		m = NULL;
		if (likely(wc[i].status == IPOIB_WC_SUCCESS))
			m = ipoib_rx_chain(rxq, ring, slot, wc[i].byte_len, 0);
		wr_conn[nwr] = owner;
		ipoib_rx_ring_fill_wr(ring, slot, wc[i].wr_id, &wr[nwr++]);
		if (unlikely(m == NULL))
			continue;
		if (unlikely(conn == NULL || conn->peer == NULL)) {
			rxq->stats.drop_unknown_conn++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (ipoib_rx_deliver(rxq, m, &conn->peer->hw, conn->peer,
				     false)) {
			rxq->stats.rc_packets++;
			rxq->stats.rc_bytes += m->pkt_len;
			pkts[nb++] = m;
		}
	}
	ipoib_rx_repost(rxq, wr, wr_conn, nwr, srq);
	rte_rcu_qsbr_quiescent(rxq->priv->pt.qsbr, rxq->qsbr_id);
	return nb;
}

#endif /* IPOIB_RX_H */
