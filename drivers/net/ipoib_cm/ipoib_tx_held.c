/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Frames an lcore cannot send yet, sent by the control thread (issue 14:
 * no path resolution, address handle creation or file I/O on an lcore).
 *
 * A tx queue that meets a unicast destination without a peer (the subnet
 * directory may know its MAC), or a peer whose address handle the control
 * thread has not made yet (ipoib_peer_new() only publishes it), or a
 * multicast group without one, puts the frame in priv->held and counts it
 * (xstat tx_held). The control thread, woken, makes the handles of the
 * peers learned since (ipoib_peers_resolve()), then sends the held frames
 * in order as a tx queue of its own, IPOIB_CTRL_TXQ, through the same
 * route, framing and fragmentation as tx_burst: its directory lookups and
 * handles are made there, synchronously. Its counters (sent, dropped, per
 * peer) are summed with the port's queues'; tx_held_done counts the held
 * frames it has taken. A peer's frames never overtake one another: while
 * some are held (ipoib_peer.held), a burst that meets the peer ready holds
 * up to IPOIB_HELD_LATE more behind them, then stops there and gives that
 * frame and the rest back untouched, as a full queue does (tx_held_busy),
 * and so it does when the ring is full. The application sends them again;
 * nothing is dropped. Frames to different destinations may be reordered,
 * as on Linux, whose held packets wait per neighbour. Frames held before
 * their destination was a peer are counted by a bucket of their MAC
 * (priv->held_anon_mac): a burst that meets a peer whose bucket counts any
 * holds the frame behind them (counted with the peer), for they may be
 * its.
 *
 * Linux holds at most 3 packets per path being resolved
 * (IPOIB_MAX_PATH_REC_QUEUE, ipoib_main.c) and drops the rest; we hold up
 * to IPOIB_HELD_RING frames for the whole port and give back the rest.
 */

#include <errno.h>
#include <stdio.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "ipoib_cm.h"
#include "ipoib_log.h"
#include "ipoib_mem.h"
#include "ipoib_tx.h"
#include "ipoib_tx_held.h"

int
ipoib_tx_held_start(struct ipoib_priv *priv)
{
	struct rte_eth_dev_data *data = priv->eth_dev->data;
	struct ipoib_txq *txq0, *cq;
	char name[RTE_RING_NAMESIZE];

	if (data->nb_tx_queues == 0)
		return 0;
	txq0 = data->tx_queues[0];
	if (priv->held == NULL) {
		snprintf(name, sizeof(name), "iphd_%u", data->port_id);
		priv->held = ipoib_ring_create(&priv->acct, IPOIB_MEM_RINGS,
					       name, sizeof(struct ipoib_held),
					       IPOIB_HELD_RING,
					       RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (priv->held == NULL)
			return -ENOMEM;
	}
	if (priv->held_wait == NULL) {
		snprintf(name, sizeof(name), "iphw_%u", data->port_id);
		priv->held_wait = ipoib_ring_create(&priv->acct,
						    IPOIB_MEM_RINGS, name,
						    sizeof(struct ipoib_held),
						    IPOIB_HELD_RING,
						    RING_F_SP_ENQ |
						    RING_F_SC_DEQ |
						    RING_F_EXACT_SZ);
		if (priv->held_wait == NULL)
			return -ENOMEM;
	}
	if (priv->ctrl_txq == NULL) {
		priv->ctrl_txq = ipoib_txq_new(priv, IPOIB_CTRL_TXQ,
					       SOCKET_ID_ANY);
		if (priv->ctrl_txq == NULL)
			return -ENOMEM;
	}
	cq = priv->ctrl_txq;
	cq->peer_rc = ipoib_peer_ctr_get(priv, IPOIB_PEER_CTR_TX_RC,
					 IPOIB_CTRL_TXQ);
	cq->peer_ud = ipoib_peer_ctr_get(priv, IPOIB_PEER_CTR_TX_UD,
					 IPOIB_CTRL_TXQ);
	if (cq->peer_rc == NULL || cq->peer_ud == NULL)
		return -ENOMEM;
	cq->post_send = priv->ops->post_send;	/* several threads may */
	cq->ud_qp = priv->ud_qp;
	cq->ud_qkey = priv->qkey;
	cq->last_peer = NULL;
	/* the fragments' pools are queue 0's (a thread without a cache) */
	cq->frag_direct = txq0->frag_direct;
	cq->frag_indirect = txq0->frag_indirect;
	cq->nb_desc = txq0->nb_desc;
	return 0;
}

/*
 * Send up to max frames of ring, in order; those whose peer's path is
 * still asked go (back) to priv->held_wait, behind what waits there.
 */
static bool
ipoib_tx_held_send(struct ipoib_priv *priv, struct rte_ring *ring,
		   unsigned int max)
{
	struct ipoib_txq *cq = priv->ctrl_txq;
	struct ipoib_held h[IPOIB_TX_BURST];
	struct rte_mbuf *m[IPOIB_TX_BURST];
	unsigned int n, i;
	uint16_t sent;
	bool work = false;

	do {
		n = rte_ring_dequeue_burst_elem(ring, h, sizeof(h[0]),
						RTE_MIN(RTE_DIM(h), max),
						NULL);
		max -= n;
		ipoib_ring_take(&priv->held_gen);
		for (i = 0; i < n; i++)
			m[i] = h[i].m;
		sent = n > 0 ? ipoib_tx_send(cq, m, (uint16_t)n) : 0;
		/* what a full send queue gave back is ours to drop */
		for (i = sent; i < n; i++)
			ipoib_tx_drop(m[i], &cq->stats.drop_refused);
		IPOIB_STAT_ADD(cq->stats.packets, n - sent);
		/* only now may the lcores send to these peers themselves */
		for (i = 0; i < n; i++) {
			if (h[i].peer != 0)
				ipoib_held_done(ipoib_peer_at(&priv->pt,
							      h[i].peer - 1));
			else if (h[i].anon != 0)
				ipoib_held_anon_done(priv, h[i].anon - 1);
		}
		/*
		 * Sent or dropped; counted last, so that one who reads
		 * tx_held_done equal to tx_held finds no peer's frames held
		 */
		__atomic_store_n(&cq->stats.held_done,
				 cq->stats.held_done + n, __ATOMIC_RELEASE);
		work |= n > 0;
	} while (n == RTE_DIM(h) && max > 0);
	return work;
}

bool
ipoib_tx_held_drain(struct ipoib_priv *priv)
{
	bool work = false;

	if (priv->held == NULL || priv->ctrl_txq == NULL)
		return false;
	/* first what waited on paths, once one was answered or gave up */
	if (priv->paths.changed) {
		priv->paths.changed = false;
		work |= ipoib_tx_held_send(priv, priv->held_wait,
					   rte_ring_count(priv->held_wait));
	}
	return ipoib_tx_held_send(priv, priv->held, UINT_MAX) || work;
}

void
ipoib_tx_held_fini(struct ipoib_priv *priv)
{
	struct ipoib_held h;

	while (priv->held != NULL &&
	       rte_ring_dequeue_elem(priv->held, &h, sizeof(h)) == 0) {
		rte_pktmbuf_free(h.m);	/* none: dev_stop drained them */
		if (h.anon != 0)
			ipoib_held_anon_done(priv, h.anon - 1);
	}
	/* none either: dev_stop failed their paths, and dropped them */
	while (priv->held_wait != NULL &&
	       rte_ring_dequeue_elem(priv->held_wait, &h, sizeof(h)) == 0)
		rte_pktmbuf_free(h.m);
	ipoib_ring_free(&priv->acct, IPOIB_MEM_RINGS, priv->held);
	ipoib_ring_free(&priv->acct, IPOIB_MEM_RINGS, priv->held_wait);
	priv->held = NULL;
	priv->held_wait = NULL;
	if (priv->ctrl_txq != NULL) {
		/* queue 0's pools: not ours to free */
		priv->ctrl_txq->frag_direct = NULL;
		priv->ctrl_txq->frag_indirect = NULL;
		ipoib_txq_free(priv, priv->ctrl_txq);
		priv->ctrl_txq = NULL;
	}
}
