/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Transmit: Ethernet frames in, IPoIB frames out, over RC to connected
 * peers and UD otherwise. Per packet: a peer lookup (rte_hash, with the
 * last destination cached), the path's MTU, the Ethernet emulation; per
 * burst: one UD post and one post per run of packets to the same RC QP.
 * RC sends the receiver cannot take yet (RNR) wait in a short per-queue
 * backlog, as they would in an HCA's send queue.
 */

#include <errno.h>
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "ipoib_cm.h"
#include "ipoib_frag.h"
#include "ipoib_log.h"
#include "ipoib_tx.h"

#define IPOIB_FRAG_MAX		64	/* fragments of one packet */
#define IPOIB_FRAG_POOL		2047
#define IPOIB_NEG_CACHE_MS	100

/* Frames on their way out in one burst. */
struct ipoib_tx_batch {
	struct ipoib_send_wr ud[IPOIB_TX_MAX];
	struct ipoib_send_wr rc[IPOIB_TX_MAX];
	struct ipoib_hca_qp *rc_qp[IPOIB_TX_MAX];
	struct ipoib_peer *rc_peer[IPOIB_TX_MAX];
	uint16_t nb_ud;
	uint16_t nb_rc;
};

/* A unicast destination MAC we have no peer for: ask the subnet once. */
static struct ipoib_peer *
ipoib_tx_resolve(struct ipoib_txq *txq, const struct rte_ether_addr *mac)
{
	struct ipoib_priv *priv = txq->priv;
	struct ipoib_hwaddr hw;
	uint64_t now = rte_get_timer_cycles();

	if (priv->ops->addr_resolve == NULL)
		return NULL;
	if (rte_is_same_ether_addr(mac, &txq->neg_mac) &&
	    now - txq->neg_tsc < txq->neg_cycles)
		return NULL;
	if (priv->ops->addr_resolve(priv->hca, mac->addr_bytes,
				    hw.bytes) < 0) {
		txq->neg_mac = *mac;
		txq->neg_tsc = now;
		return NULL;
	}
	return ipoib_peer_learn(priv, &hw);
}

static __rte_always_inline struct ipoib_peer *
ipoib_tx_peer(struct ipoib_txq *txq, const struct rte_ether_addr *dst)
{
	struct ipoib_peer *peer = txq->last_peer;

	if (likely(peer != NULL && !peer->dead &&
		   rte_is_same_ether_addr(&peer->mac, dst)))
		return peer;
	peer = ipoib_peer_by_mac(txq->priv, dst);
	if (unlikely(peer == NULL))
		peer = ipoib_tx_resolve(txq, dst);
	if (peer != NULL)
		txq->last_peer = peer;
	return peer;
}

static void
ipoib_tx_drop(struct rte_mbuf *m, uint64_t *counter)
{
	(*counter)++;
	rte_pktmbuf_free(m);
}

/* Encapsulate and queue for UD (the frame fits the UD MTU). */
static void
ipoib_tx_ud(struct ipoib_txq *txq, struct ipoib_tx_batch *b,
	    struct rte_mbuf *m, struct ipoib_peer *peer)
{
	struct ipoib_priv *priv = txq->priv;
	struct ipoib_send_wr *w;
	struct ipoib_tx_dst dst;
	struct ipoib_hca_ah *ah;
	uint32_t qpn, len = m->pkt_len;
	int ret;

	ret = ipoib_eth_encap(m, &priv->eth, &dst);
	if (unlikely(ret < 0)) {
		ipoib_tx_drop(m, ret == -ENOENT ? &txq->stats.drop_no_neigh :
			      ret == -EPROTONOSUPPORT ? &txq->stats.drop_vlan :
			      &txq->stats.drop_malformed);
		return;
	}
	if (dst.type == IPOIB_DST_MULTICAST) {
		ah = ipoib_mcast_ah(priv, dst.mgid);
		qpn = IPOIB_MCAST_QPN;
		if (unlikely(ah == NULL)) {
			ipoib_tx_drop(m, &txq->stats.drop_no_neigh);
			return;
		}
		txq->stats.mcast_packets++;
	} else {
		ah = peer->ah;
		qpn = peer->qpn;
		__atomic_fetch_add(&peer->tx_ud_pkts, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&peer->tx_ud_bytes, len, __ATOMIC_RELAXED);
	}
	w = &b->ud[b->nb_ud++];
	w->m = m;
	w->ah = ah;
	w->remote_qpn = qpn;
	w->remote_qkey = IPOIB_QKEY_DEFAULT;
	txq->stats.ud_packets++;
	txq->stats.ud_bytes += len;
}

/* Too long for the path: fragment IPv4 without DF, else an ICMP error. */
static void
ipoib_tx_too_long(struct ipoib_txq *txq, struct ipoib_tx_batch *b,
		  struct rte_mbuf *m, struct ipoib_peer *peer, uint16_t mtu,
		  bool ud)
{
	struct ipoib_priv *priv = txq->priv;
	struct rte_mbuf *frags[IPOIB_FRAG_MAX], *icmp;
	int n, i;

	if (ud && b->nb_ud + IPOIB_FRAG_MAX <= IPOIB_TX_MAX) {
		n = ipoib_frag_ipv4(m, mtu, frags, IPOIB_FRAG_MAX,
				    txq->frag_direct, txq->frag_indirect);
		if (n > 0) {
			txq->stats.frag_packets++;
			txq->stats.frags += n;
			rte_pktmbuf_free(m);
			for (i = 0; i < n; i++)
				ipoib_tx_ud(txq, b, frags[i], peer);
			return;
		}
	}
	icmp = ipoib_icmp_too_big(m, mtu, txq->frag_direct);
	if (icmp != NULL) {
		icmp->port = priv->eth_dev->data->port_id;
		if (rte_ring_enqueue(priv->loopback, icmp) == 0)
			txq->stats.icmp_too_big++;
		else
			rte_pktmbuf_free(icmp);
	}
	ipoib_tx_drop(m, &txq->stats.drop_too_long);
}

/* Queue one RC frame; the encapsulation cannot fail past the checks. */
static void
ipoib_tx_rc(struct ipoib_txq *txq, struct ipoib_tx_batch *b,
	    struct rte_mbuf *m, struct ipoib_peer *peer, struct ipoib_conn *c)
{
	struct ipoib_tx_dst dst;
	uint32_t len = m->pkt_len;
	int ret;

	ret = ipoib_eth_encap(m, &txq->priv->eth, &dst);
	if (unlikely(ret < 0)) {
		ipoib_tx_drop(m, ret == -ENOENT ? &txq->stats.drop_no_neigh :
			      ret == -EPROTONOSUPPORT ? &txq->stats.drop_vlan :
			      &txq->stats.drop_malformed);
		return;
	}
	b->rc[b->nb_rc].m = m;
	b->rc_qp[b->nb_rc] = c->qp;
	b->rc_peer[b->nb_rc] = peer;
	b->nb_rc++;
	txq->stats.rc_packets++;
	txq->stats.rc_bytes += len;
	__atomic_fetch_add(&peer->tx_rc_pkts, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&peer->tx_rc_bytes, len, __ATOMIC_RELAXED);
}

/* Classify one Ethernet frame and queue it, or consume it. */
static void
ipoib_tx_one(struct ipoib_txq *txq, struct ipoib_tx_batch *b,
	     struct rte_mbuf *m)
{
	struct ipoib_priv *priv = txq->priv;
	const struct rte_ether_hdr *eth;
	struct ipoib_peer *peer = NULL;
	uint32_t ip_len;

	if (unlikely(m->data_len < RTE_ETHER_HDR_LEN)) {
		ipoib_tx_drop(m, &txq->stats.drop_malformed);
		return;
	}
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	ip_len = m->pkt_len - RTE_ETHER_HDR_LEN;
	if (!rte_is_multicast_ether_addr(&eth->dst_addr)) {
		peer = ipoib_tx_peer(txq, &eth->dst_addr);
		if (unlikely(peer == NULL)) {
			ipoib_tx_drop(m, &txq->stats.drop_no_neigh);
			return;
		}
		if (__atomic_load_n(&peer->state, __ATOMIC_ACQUIRE) ==
		    IPOIB_PEER_CONNECTED) {
			struct ipoib_conn *c = peer->tx;

			if (unlikely(ip_len + IPOIB_HDR_LEN > peer->tx_mtu))
				ipoib_tx_too_long(txq, b, m, peer,
					(uint16_t)(peer->tx_mtu - IPOIB_HDR_LEN),
					false);
			else
				ipoib_tx_rc(txq, b, m, peer, c);
			return;
		}
		if (unlikely(peer->state == IPOIB_PEER_NEW))
			ipoib_conn_request(priv, peer);
	}
	if (unlikely(ip_len > priv->ud_mtu)) {
		ipoib_tx_too_long(txq, b, m, peer, priv->ud_mtu, true);
		return;
	}
	ipoib_tx_ud(txq, b, m, peer);
}

/* Post RC frames run by run; what a receiver refuses waits in backlog. */
static void
ipoib_tx_post_rc(struct ipoib_txq *txq, struct ipoib_tx_batch *b)
{
	uint16_t start = 0, i;

	for (i = 1; i <= b->nb_rc; i++) {
		uint16_t run, sent, j;

		if (i < b->nb_rc && b->rc_qp[i] == b->rc_qp[start])
			continue;
		run = i - start;
		sent = txq->post_send(b->rc_qp[start], &b->rc[start], run);
		for (j = start + sent; j < i; j++)
			ipoib_tx_backlog_add(txq, b->rc_peer[j], b->rc_qp[j],
					     b->rc[j].m);
		start = i;
	}
	b->nb_rc = 0;
}

uint16_t
ipoib_tx_burst(void *q, struct rte_mbuf **pkts, uint16_t n)
{
	struct ipoib_txq *txq = q;
	struct ipoib_tx_batch *b = txq->batch;
	uint16_t i, room;

	ipoib_tx_backlog_flush(txq);
	room = ipoib_tx_backlog_room(txq);
	n = RTE_MIN(n, room);
	n = RTE_MIN(n, (uint16_t)IPOIB_TX_BURST);
	b->nb_ud = 0;
	b->nb_rc = 0;
	for (i = 0; i < n; i++) {
		txq->stats.packets++;
		txq->stats.bytes += pkts[i]->pkt_len;
		ipoib_tx_one(txq, b, pkts[i]);
	}
	if (b->nb_ud > 0)
		txq->post_send(txq->ud_qp, b->ud, b->nb_ud);
	if (b->nb_rc > 0)
		ipoib_tx_post_rc(txq, b);
	rte_rcu_qsbr_quiescent(txq->priv->pt.qsbr, txq->qsbr_id);
	return n;
}

/* ---- backlog: RC frames waiting for the receiver ---------------------- */

void
ipoib_tx_backlog_add(struct ipoib_txq *txq, struct ipoib_peer *peer,
		     struct ipoib_hca_qp *qp, struct rte_mbuf *m)
{
	struct ipoib_tx_pending *p;

	if (txq->nb_pending == IPOIB_TX_PENDING) {	/* cannot be: room */
		ipoib_tx_drop(m, &txq->stats.drop_qp_error);
		return;
	}
	p = &txq->pending[txq->nb_pending++];
	p->peer = peer;
	p->qp = qp;
	p->m = m;
}

/*
 * Retry the backlog in order. A frame whose connection went away since
 * (the peer is no longer connected on that QP) is dropped and counted.
 */
void
ipoib_tx_backlog_flush(struct ipoib_txq *txq)
{
	struct ipoib_send_wr wr[IPOIB_TX_PENDING];
	uint16_t i, k = 0, start = 0, kept = 0;

	if (likely(txq->nb_pending == 0))
		return;
	for (i = 0; i < txq->nb_pending; i++) {
		struct ipoib_tx_pending *p = &txq->pending[i];

		if (p->peer->dead ||
		    __atomic_load_n(&p->peer->state, __ATOMIC_ACQUIRE) !=
		    IPOIB_PEER_CONNECTED || p->peer->tx == NULL ||
		    p->peer->tx->qp != p->qp) {
			ipoib_tx_drop(p->m, &txq->stats.drop_qp_error);
			continue;
		}
		txq->pending[k++] = *p;
	}
	txq->nb_pending = k;
	for (i = 1; i <= k; i++) {
		uint16_t run, sent, j;

		if (i < k && txq->pending[i].qp == txq->pending[start].qp)
			continue;
		run = i - start;
		for (j = 0; j < run; j++)
			wr[j].m = txq->pending[start + j].m;
		sent = txq->post_send(txq->pending[start].qp, wr, run);
		for (j = start + sent; j < i; j++)
			txq->pending[kept++] = txq->pending[j];
		start = i;
	}
	txq->nb_pending = kept;
}

uint16_t
ipoib_tx_backlog_room(const struct ipoib_txq *txq)
{
	return (uint16_t)(IPOIB_TX_PENDING - txq->nb_pending);
}

/* Drop what still waits (stop, close). */
void
ipoib_tx_backlog_purge(struct ipoib_txq *txq)
{
	uint16_t i;

	for (i = 0; i < txq->nb_pending; i++)
		ipoib_tx_drop(txq->pending[i].m, &txq->stats.drop_qp_error);
	txq->nb_pending = 0;
}

/* ---- queue setup ---------------------------------------------------------- */

int
ipoib_txq_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		unsigned int socket)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	char name[RTE_MEMPOOL_NAMESIZE];
	struct ipoib_txq *txq;

	ipoib_txq_release(dev, qid);
	txq = rte_zmalloc_socket("ipoib_txq", sizeof(*txq),
				 RTE_CACHE_LINE_SIZE, (int)socket);
	if (txq == NULL)
		return -ENOMEM;
	txq->batch = rte_zmalloc_socket("ipoib_txb", sizeof(*txq->batch),
					RTE_CACHE_LINE_SIZE, (int)socket);
	txq->pending = rte_zmalloc_socket("ipoib_txp", IPOIB_TX_PENDING *
					  sizeof(*txq->pending),
					  RTE_CACHE_LINE_SIZE, (int)socket);
	if (txq->batch == NULL || txq->pending == NULL)
		goto fail;
	txq->priv = priv;
	txq->queue_id = qid;
	txq->nb_desc = nb_desc;
	txq->qsbr_id = IPOIB_MAX_QUEUES + qid;
	txq->neg_cycles = rte_get_timer_hz() / 1000 * IPOIB_NEG_CACHE_MS;
	snprintf(name, sizeof(name), "ipfd_%u_%u", dev->data->port_id, qid);
	txq->frag_direct = rte_pktmbuf_pool_create(name, IPOIB_FRAG_POOL, 32,
						   0, RTE_MBUF_DEFAULT_BUF_SIZE,
						   (int)socket);
	snprintf(name, sizeof(name), "ipfi_%u_%u", dev->data->port_id, qid);
	txq->frag_indirect = rte_pktmbuf_pool_create(name, IPOIB_FRAG_POOL,
						     32, 0, 0, (int)socket);
	if (txq->frag_direct == NULL || txq->frag_indirect == NULL)
		goto fail;
	dev->data->tx_queues[qid] = txq;
	return 0;
fail:
	rte_mempool_free(txq->frag_direct);
	rte_mempool_free(txq->frag_indirect);
	rte_free(txq->pending);
	rte_free(txq->batch);
	rte_free(txq);
	return -ENOMEM;
}

void
ipoib_txq_release(struct rte_eth_dev *dev, uint16_t qid)
{
	struct ipoib_txq *txq = dev->data->tx_queues[qid];

	if (txq == NULL)
		return;
	ipoib_tx_backlog_purge(txq);
	rte_mempool_free(txq->frag_direct);
	rte_mempool_free(txq->frag_indirect);
	rte_free(txq->pending);
	rte_free(txq->batch);
	rte_free(txq);
	dev->data->tx_queues[qid] = NULL;
}
