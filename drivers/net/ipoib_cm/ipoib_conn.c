/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The connection manager, run by the control thread only.
 *
 * As in Linux IPoIB-CM, a connection carries one direction: we send on the
 * connections we open (active) and receive on those peers open to us
 * (passive). Each table is bounded by max_conns; passive non-SRQ receive
 * rings are charged to mem_budget. A peer that cannot have a connection
 * is not denied service: it is SPILLED onto the UD QP and retried, after an
 * exponential backoff with jitter when it was refused, or as soon as a
 * slot frees (busiest first) when the table was full. Idle connections are
 * reaped; an idle one may be evicted for a busy spilled peer. This file
 * has the connections (slots, handshake, teardown); the timers' policy is
 * ipoib_spill.c, the receive-buffer pools ipoib_pool.c.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_random.h>

#include "ipoib_cm.h"
#include "ipoib_conn.h"
#include "ipoib_log.h"
#include "ipoib_rxq.h"

/* ---- slots and accounting ------------------------------------------------ */

int
ipoib_conns_init(struct ipoib_priv *priv)
{
	RTE_BUILD_BUG_ON(sizeof(struct ipoib_conn) > IPOIB_CONN_HOST_BYTES);
	priv->nr_conns_max = RTE_ALIGN_CEIL(2 * priv->cfg.max_conns +
					    IPOIB_CONN_SPARE,
					    IPOIB_CONN_CHUNK);
	priv->conns = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_CONNS,
					"ipoib_conns", priv->nr_conns_max *
					sizeof(*priv->conns),
					RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	/* the slots themselves come a chunk at a time (ipoib_conn_alloc()) */
	priv->conn_chunk = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_CONNS,
					     "ipoib_conn_chunks",
					     (priv->nr_conns_max /
					      IPOIB_CONN_CHUNK) *
					     sizeof(*priv->conn_chunk), 0,
					     SOCKET_ID_ANY);
	if (priv->conns == NULL || priv->conn_chunk == NULL) {
		ipoib_conns_fini(priv);
		return -ENOMEM;
	}
	return 0;
}

void
ipoib_conns_fini(struct ipoib_priv *priv)
{
	uint32_t c;

	for (c = 0; priv->conn_chunk != NULL &&
	     c < priv->nr_conn_slots / IPOIB_CONN_CHUNK; c++)
		ipoib_mem_free(&priv->acct, IPOIB_MEM_CONNS,
			       priv->conn_chunk[c]);
	ipoib_mem_free(&priv->acct, IPOIB_MEM_CONNS, priv->conns);
	ipoib_mem_free(&priv->acct, IPOIB_MEM_CONNS, priv->conn_chunk);
	priv->conns = NULL;
	priv->conn_chunk = NULL;
	priv->nr_conn_slots = 0;
}

static inline struct ipoib_conn *
ipoib_conn_slot(struct ipoib_priv *priv, uint32_t idx)
{
	return &priv->conn_chunk[idx >> IPOIB_CONN_CHUNK_SHIFT]
		[idx & (IPOIB_CONN_CHUNK - 1)];
}

/*
 * A free slot: one of those allocated, not in use and out of its grace
 * period, taken round-robin; when every one is busy, a new chunk.
 */
static int32_t
ipoib_conn_slot_free(struct ipoib_priv *priv)
{
	uint32_t n = priv->nr_conn_slots, i, idx;
	struct ipoib_conn *chunk;

	for (i = 0; i < n; i++) {
		idx = (priv->conn_cursor + i) % n;
		if (priv->conns[idx] == NULL &&
		    ipoib_grace_passed(priv, ipoib_conn_slot(priv, idx)->token))
			return (int32_t)idx;
	}
	if (n >= priv->nr_conns_max)
		return -1;
	chunk = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_CONNS,
				  "ipoib_conn_chunk",
				  IPOIB_CONN_CHUNK * sizeof(*chunk),
				  RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (chunk == NULL)
		return -1;
	priv->conn_chunk[n / IPOIB_CONN_CHUNK] = chunk;
	priv->nr_conn_slots = n + IPOIB_CONN_CHUNK;
	return (int32_t)n;
}

static struct ipoib_conn *
ipoib_conn_alloc(struct ipoib_priv *priv, struct ipoib_peer *peer,
		 bool active)
{
	struct ipoib_conn *c;
	int32_t idx = ipoib_conn_slot_free(priv);

	if (idx < 0)
		return NULL;
	c = ipoib_conn_slot(priv, (uint32_t)idx);
	memset(c, 0, sizeof(*c));
	priv->conn_cursor = (uint32_t)idx + 1;
	c->index = (uint32_t)idx;
	c->peer = peer;
	c->active = active;
	c->state = IPOIB_CONN_CONNECTING;
	c->since_ns = ipoib_now_ns();
	if (active)
		priv->nr_active++;
	else
		priv->nr_passive++;
	priv->nr_conns++;
	return c;
}

/*
 * The connection is gone; its slot is unpublished. A burst that loaded it
 * just before may still read it: the slot is reused only a grace period
 * later (ipoib_conn_alloc()).
 */
static void
ipoib_conn_free(struct ipoib_priv *priv, struct ipoib_conn *c)
{
	if (priv->conns[c->index] == c)
		__atomic_store_n(&priv->conns[c->index], NULL, __ATOMIC_RELEASE);
	priv->nr_conns--;
	c->token = rte_rcu_qsbr_start(priv->pt.qsbr);
}

static struct ipoib_rxq *
ipoib_conn_rxq(struct ipoib_priv *priv, const struct ipoib_conn *c)
{
	struct rte_eth_dev_data *data = priv->eth_dev->data;

	return data->rx_queues[c->index % data->nb_rx_queues];
}

/* ---- spilling ------------------------------------------------------------ */

/* Backoff doubling from retry_min to retry_max, with +-25% jitter. */
static uint64_t
ipoib_backoff_ns(struct ipoib_priv *priv, struct ipoib_peer *peer)
{
	uint32_t ms = peer->backoff_ms == 0 ? priv->cfg.retry_min :
		      RTE_MIN(peer->backoff_ms * 2, priv->cfg.retry_max);
	uint64_t ns;

	peer->backoff_ms = ms;
	ns = (uint64_t)ms * IPOIB_NS_PER_MS;
	return ns - ns / 4 + (uint64_t)rte_rand_max(ns / 2 + 1);
}

/*
 * The peer goes (or stays) on UD. refused: a REJ or a timeout, retried
 * after the backoff; otherwise our table was full, and the peer is
 * promoted as soon as a slot frees.
 */
static void
ipoib_spill(struct ipoib_priv *priv, struct ipoib_peer *peer, bool refused)
{
	uint64_t now = ipoib_now_ns();

	peer->refused = refused;
	peer->next_retry_ns = refused ? now + ipoib_backoff_ns(priv, peer) :
					now;
	if (__atomic_load_n(&peer->state, __ATOMIC_RELAXED) !=
	    IPOIB_PEER_SPILLED)
		priv->nr_spilled++;
	/* peer->tx stays: an lcore that saw CONNECTED may still read it */
	__atomic_store_n(&peer->state, IPOIB_PEER_SPILLED, __ATOMIC_RELEASE);
	priv->cstats.spills++;
}

/* ---- teardown ------------------------------------------------------------ */

/* Sending to the peer starts a connection again, on its next frame. */
static void
ipoib_peer_renew(struct ipoib_peer *peer)
{
	__atomic_store_n(&peer->state, IPOIB_PEER_NEW, __ATOMIC_RELEASE);
}

/*
 * Take a connection down: the datapath stops using it now; its QP is
 * flushed, and destroyed once the flushes are polled and every burst that
 * could see it has left (ipoib_conn_reap_drained()). The peer of an
 * active connection is spilled with a backoff if it refused or failed us,
 * and otherwise connects again when next sent to.
 */
void
ipoib_conn_close(struct ipoib_priv *priv, struct ipoib_conn *c,
		 bool send_dreq, bool refused)
{
	const struct ipoib_hca_ops *ops = priv->ops;
	struct ipoib_peer *peer = c->peer;

	if (c->state == IPOIB_CONN_DRAINING)
		return;
	if (c->active) {
		if (peer->txc == c) {
			peer->txc = NULL;
			if (refused)
				ipoib_spill(priv, peer, true);
			else
				ipoib_peer_renew(peer);
		}
		priv->nr_active--;
	} else {
		if (peer->rx == c)	/* tx lcores read it: ipoib_adv.c */
			__atomic_store_n(&peer->rx, NULL, __ATOMIC_RELAXED);
		priv->nr_passive--;
	}
	/*
	 * As ib_destroy_cm_id() in Linux: the DREQ goes out and the id goes
	 * with it; the DREP is not waited for. A peer that never hears the
	 * DREQ finds its QP in error (retries exhausted) instead.
	 */
	if (c->cm_id != NULL) {
		if (send_dreq)
			ops->cm_disconnect(c->cm_id);
		ops->cm_destroy(c->cm_id);
		c->cm_id = NULL;
	}
	if (c->qp != NULL)
		ops->qp_modify(c->qp, IPOIB_QPS_ERR);
	c->state = IPOIB_CONN_DRAINING;
	priv->nr_draining++;
	c->drain_next = priv->draining;
	priv->draining = c;
	c->token = rte_rcu_qsbr_start(priv->pt.qsbr);
	c->drain_deadline_ns = ipoib_now_ns() + IPOIB_DRAIN_TIMEOUT_NS;
}

/* Release a connection's receive buffers and its charge to the budget. */
static void
ipoib_conn_release_buffers(struct ipoib_priv *priv, struct ipoib_conn *c)
{
	if (c->ring.bufs != NULL)
		ipoib_rx_ring_release(&priv->acct, &c->ring);
	priv->mem_used -= c->charged;
	c->charged = 0;
	if (c->pool != NULL) {
		/* one the application holds mbufs of goes to the reaper */
		if (!ipoib_pool_idle(c->pool) || !ipoib_pools_keep(priv, c->pool))
			ipoib_pool_free(priv, c->pool);
		ipoib_mem_free(&priv->acct, IPOIB_MEM_CONNS, c->pool);
		c->pool = NULL;
	}
}

/*
 * Drained and past a grace period: destroy QP and connection. Its flushed
 * receives come back through the rx queue's CQ, so a queue nobody polls
 * holds the teardown (and the slot) until it is polled again, or until
 * the port stops, which polls them itself; that is counted and logged
 * once. Giving up instead would let a late completion land in a ring
 * that is gone.
 */
static bool
ipoib_conn_try_destroy(struct ipoib_priv *priv, struct ipoib_conn *c)
{
	if (ipoib_now_ns() > c->drain_deadline_ns) {
		c->drain_deadline_ns = UINT64_MAX;
		priv->cstats.drain_timeouts++;
		IPOIB_LOG(WARNING, "connection %u: not drained after %" PRIu64
			  " ms: is its rx queue polled?", c->index,
			  (uint64_t)(IPOIB_DRAIN_TIMEOUT_NS / IPOIB_NS_PER_MS));
	}
	if (!ipoib_grace_passed(priv, c->token))
		return false;
	/*
	 * Every burst that could post to the QP unaware of its move to
	 * error (the token was taken after it) has left: what such a post
	 * left is flushed now, and the ring drains.
	 */
	if (c->qp != NULL)
		priv->ops->qp_flush_settle(c->qp);
	if (__atomic_load_n(&c->ring.outstanding, __ATOMIC_ACQUIRE) != 0)
		return false;
	if (c->qp != NULL && priv->ops->qp_destroy(c->qp) == -EBUSY)
		return false;
	if (c->cm_id != NULL)
		priv->ops->cm_destroy(c->cm_id);
	ipoib_conn_release_buffers(priv, c);
	ipoib_conn_free(priv, c);
	priv->nr_draining--;
	return true;
}

/* ---- active side --------------------------------------------------------- */

static int
ipoib_conn_send_req(struct ipoib_priv *priv, struct ipoib_conn *c)
{
	struct ipoib_peer *peer = c->peer;
	struct ipoib_cm_data data = {
		.qpn = rte_cpu_to_be_32(priv->ud_qpn),
		.mtu = rte_cpu_to_be_32(priv->rc_buf),
	};
	struct ipoib_cm_connect cc = {
		.service_id = (peer->sid_try == 0 ? IPOIB_CM_SID_OFED :
			       IPOIB_CM_SID_RFC) | peer->qpn,
		.qp = c->qp,
		.context = c,
		/*
		 * As Linux: retry_count 0 and 15 CM retries. Unlike Linux
		 * (rnr_retry_count 0), RNR is retried for ever: a receiver
		 * out of buffers pushes back, the send queue fills and
		 * tx_burst returns short; the connection never fails of it.
		 */
		.retry_count = 0,
		.rnr_retry_count = IPOIB_RNR_RETRY_FOREVER,
		.max_cm_retries = IPOIB_CM_RETRIES,
		.cm_response_timeout = IPOIB_CM_RESPONSE_TIMEOUT,
		.responder_resources = 4,
		.priv_len = sizeof(data),
		.priv = (const uint8_t *)&data,
	};

	memcpy(cc.dest.dgid, ipoib_hwaddr_gid(&peer->hw), IPOIB_GID_LEN);
	return priv->ops->cm_connect(priv->hca, &cc, &c->cm_id);
}

/* Open a send connection to peer, or spill it. */
void
ipoib_conn_connect(struct ipoib_priv *priv, struct ipoib_peer *peer)
{
	struct ipoib_qp_init qi = {
		.type = IPOIB_QPT_RC,
		.max_recv_wr = IPOIB_TX_QP_WR,
		.max_send_wr = IPOIB_MAX_DESC,
		.max_recv_sge = 1,
	};
	struct ipoib_conn *c;

	if (!priv->port_active) {
		ipoib_spill(priv, peer, true);	/* retried when it is up */
		return;
	}
	if (priv->nr_active >= priv->cfg.max_conns || priv->stopping) {
		ipoib_spill(priv, peer, false);
		return;
	}
	c = ipoib_conn_alloc(priv, peer, true);
	if (c == NULL) {
		ipoib_spill(priv, peer, false);
		return;
	}
	qi.recv_cq = ipoib_conn_rxq(priv, c)->cq;
	qi.qp_context = c->index;
	c->qp = priv->ops->qp_create(priv->hca, &qi);
	if (c->qp != NULL)
		ipoib_conn_set_qpn(c, priv->ops->qp_num(c->qp));
	if (c->qp == NULL || ipoib_conn_send_req(priv, c) < 0) {
		IPOIB_LOG(DEBUG, "peer %u: no RC QP or REQ: spilled",
			  peer->index);
		if (c->qp != NULL)
			priv->ops->qp_destroy(c->qp);
		priv->nr_active--;
		ipoib_conn_free(priv, c);
		ipoib_spill(priv, peer, true);
		return;
	}
	__atomic_store_n(&priv->conns[c->index], c, __ATOMIC_RELEASE);
	peer->txc = c;
	if (__atomic_load_n(&peer->state, __ATOMIC_RELAXED) ==
	    IPOIB_PEER_SPILLED)
		priv->nr_spilled--;
	__atomic_store_n(&peer->state, IPOIB_PEER_CONNECTING,
			 __ATOMIC_RELEASE);
}

/* Datapath (any lcore): a peer offering connected mode was sent to. */
void
ipoib_conn_request(struct ipoib_priv *priv, struct ipoib_peer *peer)
{
	uint32_t st = IPOIB_PEER_NEW;

	if (!__atomic_compare_exchange_n(&peer->state, &st,
					 IPOIB_PEER_CONNECTING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	if (rte_ring_enqueue(priv->connect_req,
			     (void *)(uintptr_t)peer->index) != 0) {
		__atomic_store_n(&peer->state, IPOIB_PEER_NEW,
				 __ATOMIC_RELEASE);
		return;
	}
	/* once per connection attempt: the control thread need not poll */
	priv->ops->ctrl_wake(priv->hca);
}

static void
ipoib_conn_rep(struct ipoib_priv *priv, const struct ipoib_cm_event *ev)
{
	struct ipoib_conn *c = ev->context;
	struct ipoib_peer *peer = c->peer;
	struct ipoib_cm_data data;
	uint32_t mtu;

	if (ev->priv_len < sizeof(data)) {
		priv->cstats.cm_malformed++;
		priv->cstats.cm_short_priv++;
		goto refuse;
	}
	memcpy(&data, ev->priv, sizeof(data));
	mtu = rte_be_to_cpu_32(data.mtu);
	if (mtu <= IPOIB_HDR_LEN) {	/* Linux refuses these too */
		priv->cstats.cm_malformed++;
		priv->cstats.cm_bad_mtu++;
		goto refuse;
	}
	if (priv->ops->cm_rtu(c->cm_id) < 0)
		goto refuse;
	peer->tx_mtu = RTE_MIN(mtu, (uint32_t)IPOIB_CM_BUF_SIZE);
	peer->tx = c;
	peer->backoff_ms = 0;
	c->state = IPOIB_CONN_CONNECTED;
	c->since_ns = ipoib_now_ns();
	/* tx lcores read state, then tx: publish tx first */
	__atomic_store_n(&peer->state, IPOIB_PEER_CONNECTED, __ATOMIC_RELEASE);
	priv->cstats.conn_established_active++;
	return;
refuse:
	priv->ops->cm_reject(c->cm_id, IPOIB_REJ_CONSUMER, NULL, 0);
	ipoib_count_rej(priv->cstats.rej_sent, IPOIB_REJ_CONSUMER);
	ipoib_conn_close(priv, c, false, true);
}

/* A REJ or a timeout of our REQ. */
static void
ipoib_conn_refused(struct ipoib_priv *priv, const struct ipoib_cm_event *ev)
{
	struct ipoib_conn *c = ev->context;
	struct ipoib_peer *peer = c->peer;

	if (ev->type == IPOIB_CM_REJ_RCVD) {
		ipoib_count_rej(priv->cstats.rej_rcvd, ev->reason);
		/* OFED service ID unknown there: try the RFC 4755 one */
		if (ev->reason == IPOIB_REJ_INVALID_SERVICE_ID &&
		    peer->sid_try == 0) {
			peer->sid_try = 1;
			priv->ops->cm_destroy(c->cm_id);
			c->cm_id = NULL;
			if (ipoib_conn_send_req(priv, c) == 0)
				return;
		}
	} else {
		priv->cstats.cm_timeouts++;
	}
	priv->cstats.conn_failed++;
	ipoib_conn_close(priv, c, false, true);
}

/* ---- passive side -------------------------------------------------------- */

static void
ipoib_conn_reject(struct ipoib_priv *priv, const struct ipoib_cm_event *ev,
		  uint16_t reason)
{
	priv->ops->cm_reject(ev->id, reason, NULL, 0);
	priv->ops->cm_destroy(ev->id);
	ipoib_count_rej(priv->cstats.rej_sent, reason);
}

bool
ipoib_conn_room(struct ipoib_priv *priv, uint16_t *reason)
{
	uint16_t r = 0;

	if (priv->nr_passive >= priv->cfg.max_conns)
		r = IPOIB_REJ_NO_QP;
	else if (!priv->srq &&
		 !ipoib_pools_fit(priv, ipoib_conn_ring_bytes(priv,
				  priv->eth_dev->data->rx_queues[0])))
		r = IPOIB_REJ_NO_RESOURCES;
	if (reason != NULL)
		*reason = r;
	return r == 0;
}

/* Non-SRQ: the connection's own pool and ring, charged to the budget. */
static int
ipoib_conn_buffers(struct ipoib_priv *priv, struct ipoib_conn *c,
		   struct ipoib_rxq *rxq)
{
	uint32_t room = rte_pktmbuf_data_room_size(rxq->app_mp);
	uint32_t segs = (priv->rc_buf + room - RTE_PKTMBUF_HEADROOM - 1) /
			(room - RTE_PKTMBUF_HEADROOM);
	uint32_t n = ipoib_conn_pool_size(rxq->nb_desc, segs);
	int ret;

	c->pool = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_CONNS,
				    "ipoib_conn_pool", sizeof(*c->pool), 0,
				    SOCKET_ID_ANY);
	if (c->pool == NULL)
		return -ENOMEM;
	if (!ipoib_pools_take(priv, c->pool, n, room)) {
		ipoib_pools_spare_free(priv);	/* another geometry */
		ret = ipoib_pool_create(priv, c->pool, "conn", "c", n, room);
		if (ret < 0)
			return ret;
	}
	c->charged = c->pool->mem.len;
	priv->mem_used += c->charged;
	return ipoib_rx_ring_alloc(&priv->acct, &c->ring, c->pool, rxq->nb_desc,
				   priv->rc_buf);
}

static int
ipoib_conn_accept_qp(struct ipoib_priv *priv, struct ipoib_conn *c)
{
	struct ipoib_rxq *rxq = ipoib_conn_rxq(priv, c);
	struct ipoib_qp_init qi = {
		.type = IPOIB_QPT_RC,
		.recv_cq = rxq->cq,
		.srq = rxq->srq,
		.max_recv_wr = priv->srq ? 0 : rxq->nb_desc,
		.max_send_wr = 1,
		.max_recv_sge = priv->srq ? 1 : IPOIB_MAX_SGE,
		.qp_context = c->index,
	};
	int ret;

	if (!priv->srq) {
		ret = ipoib_conn_buffers(priv, c, rxq);
		if (ret < 0)
			return ret;
		qi.max_recv_sge = c->ring.segs;
	}
	c->qp = priv->ops->qp_create(priv->hca, &qi);
	if (c->qp == NULL)
		return -ENOMEM;
	ipoib_conn_set_qpn(c, priv->ops->qp_num(c->qp));
	if (!priv->srq)
		return ipoib_rx_ring_post_all(priv->ops, &c->ring,
					      IPOIB_WR_CONN, c->index, c->qp);
	return 0;
}

static void
ipoib_conn_req(struct ipoib_priv *priv, const struct ipoib_cm_event *ev)
{
	struct ipoib_cm_data data = {
		.qpn = rte_cpu_to_be_32(priv->ud_qpn),
		.mtu = rte_cpu_to_be_32(priv->rc_buf),
	}, req;
	struct ipoib_hwaddr hw;
	struct ipoib_peer *peer;
	struct ipoib_conn *c;
	uint16_t reason;

	if (ev->priv_len < sizeof(req)) {
		priv->cstats.cm_malformed++;
		priv->cstats.cm_short_priv++;
		ipoib_conn_reject(priv, ev, IPOIB_REJ_CONSUMER);
		return;
	}
	/*
	 * Of the private data only the QPN is used: the passive side never
	 * sends, so the REQ's MTU (any value, 0 too) is not read, as Linux
	 * does not read it. A REQ says nothing of whether its sender can
	 * be connected to (its CM may be unreachable: a librdmacm process
	 * on InfiniBand): the flags stay unknown, taken from its ARP/ND.
	 */
	memcpy(&req, ev->priv, sizeof(req));
	ipoib_hwaddr_set(&hw, 0, rte_be_to_cpu_32(req.qpn) & IPOIB_QPN_MASK,
			 ev->remote_gid);
	peer = ipoib_peer_learn(priv, &hw);
	if (peer == NULL) {
		ipoib_conn_reject(priv, ev, IPOIB_REJ_NO_RESOURCES);
		return;
	}
	if (peer->rx != NULL)	/* the peer came back: the old one is stale */
		ipoib_conn_close(priv, peer->rx, false, false);
	if (priv->stopping) {
		ipoib_conn_reject(priv, ev, IPOIB_REJ_NO_QP);
		return;
	}
	/*
	 * Teardowns that have drained give back their slot, budget and pool
	 * first: the lcores do not wake this thread for them, and its next
	 * round may be a millisecond away.
	 */
	if (priv->nr_draining > 0)
		ipoib_conn_reap_drained(priv);
	/* no room: the peer is told to send to us over UD (ipoib_adv.c) */
	if (!ipoib_conn_room(priv, &reason)) {
		ipoib_conn_reject(priv, ev, reason);
		ipoib_adv_refused(priv, peer);
		return;
	}
	c = ipoib_conn_alloc(priv, peer, false);
	if (c == NULL) {
		ipoib_conn_reject(priv, ev, IPOIB_REJ_NO_QP);
		ipoib_adv_refused(priv, peer);
		return;
	}
	c->cm_id = ev->id;
	/* the rx lcore may see completions as soon as the REP is out */
	__atomic_store_n(&priv->conns[c->index], c, __ATOMIC_RELEASE);
	if (ipoib_conn_accept_qp(priv, c) < 0 ||
	    priv->ops->cm_accept(ev->id, c->qp, c, (const uint8_t *)&data,
				 sizeof(data)) < 0) {
		ipoib_conn_reject(priv, ev, IPOIB_REJ_NO_RESOURCES);
		c->cm_id = NULL;
		__atomic_store_n(&peer->rx, c, __ATOMIC_RELAXED);
		ipoib_conn_close(priv, c, false, false);
		return;
	}
	__atomic_store_n(&peer->rx, c, __ATOMIC_RELAXED);
}

static void
ipoib_conn_established(struct ipoib_priv *priv,
		       const struct ipoib_cm_event *ev)
{
	struct ipoib_conn *c = ev->context;

	c->state = IPOIB_CONN_CONNECTED;
	c->since_ns = ipoib_now_ns();
	priv->cstats.conn_established_passive++;
}

/* ---- events -------------------------------------------------------------- */

void
ipoib_conn_handle_cm(struct ipoib_priv *priv, const struct ipoib_cm_event *ev)
{
	struct ipoib_conn *c = ev->context;

	switch (ev->type) {
	case IPOIB_CM_REQ_RCVD:
		ipoib_conn_req(priv, ev);
		break;
	case IPOIB_CM_REP_RCVD:
		ipoib_conn_rep(priv, ev);
		break;
	case IPOIB_CM_ESTABLISHED:
		ipoib_conn_established(priv, ev);
		break;
	case IPOIB_CM_REJ_RCVD:
	case IPOIB_CM_TIMEOUT:
		if (c == NULL)
			break;
		if (c->active && c->state == IPOIB_CONN_CONNECTING) {
			ipoib_conn_refused(priv, ev);
			break;
		}
		/* passive: REP unanswered, or a REJ instead of the RTU */
		if (ev->type == IPOIB_CM_TIMEOUT)
			priv->cstats.cm_timeouts++;
		else
			ipoib_count_rej(priv->cstats.rej_rcvd, ev->reason);
		ipoib_conn_close(priv, c, false, true);
		break;
	case IPOIB_CM_DREQ_RCVD:
		/* the peer is done with it: reconnect when next sent to */
		if (c != NULL)
			ipoib_conn_close(priv, c, false, false);
		break;
	case IPOIB_CM_DISCONNECTED:
		break;		/* the id is gone with its DREQ: not seen */
	}
}

/*
 * Destroy what has drained; true when nothing is left draining. A walk of
 * the draining list, not of the table: the thread does it every round
 * while a connection drains, and the table has 2 x max_conns slots.
 */
bool
ipoib_conn_reap_drained(struct ipoib_priv *priv)
{
	struct ipoib_conn **pp = &priv->draining, *c;

	while ((c = *pp) != NULL) {
		/* a destroyed slot's memory stays until a grace period */
		if (ipoib_conn_try_destroy(priv, c))
			*pp = c->drain_next;
		else
			pp = &c->drain_next;
	}
	return priv->draining == NULL;
}

int
ipoib_conn_listen(struct ipoib_priv *priv)
{
	int ret;

	/* Linux/OFED and RFC 4755 service IDs: peers use either */
	ret = priv->ops->cm_listen(priv->hca, IPOIB_CM_SID_OFED | priv->ud_qpn);
	if (ret == 0 || ret == -EADDRINUSE)
		ret = priv->ops->cm_listen(priv->hca,
					   IPOIB_CM_SID_RFC | priv->ud_qpn);
	return ret == -EADDRINUSE ? 0 : ret;
}

void
ipoib_conns_close_all(struct ipoib_priv *priv, bool send_dreq)
{
	uint32_t i;

	for (i = 0; i < priv->nr_conns_max; i++)
		if (priv->conns[i] != NULL)
			ipoib_conn_close(priv, priv->conns[i], send_dreq,
					 false);
}

int
ipoib_conn_disconnect_peer(struct ipoib_priv *priv, struct ipoib_peer *peer)
{
	int n = 0;

	if (peer->txc != NULL) {
		ipoib_conn_close(priv, peer->txc, true, false);
		n++;
	}
	if (peer->rx != NULL) {
		ipoib_conn_close(priv, peer->rx, true, false);
		n++;
	}
	return n;
}

/* A completion taken while stopped: its buffer is dropped. */
static void
ipoib_conn_drop_wc(struct ipoib_priv *priv, struct ipoib_rxq *rxq,
		   const struct ipoib_wc *wc)
{
	uint32_t slot = ipoib_wr_slot(wc->wr_id);
	uint32_t ci = ipoib_wr_conn(wc->wr_id);
	struct ipoib_conn *c;

	switch (ipoib_wr_kind(wc->wr_id)) {
	case IPOIB_WR_SRQ:
		if (slot < rxq->srq_ring.nb_slots)
			ipoib_rx_ring_drop_slot(&rxq->srq_ring, slot);
		break;
	case IPOIB_WR_CONN:
		c = ci < priv->nr_conns_max ? priv->conns[ci] : NULL;
		if (c != NULL && c->qpn == wc->qp_num &&
		    slot < c->ring.nb_slots)
			ipoib_rx_ring_drop_slot(&c->ring, slot);
		break;
	}
}

/* Flush completions of a stopped port, taken without an rx lcore. */
void
ipoib_conns_poll_stopped(struct ipoib_priv *priv)
{
	struct rte_eth_dev_data *data = priv->eth_dev->data;
	struct ipoib_wc wc[32];
	uint16_t q, n, i;

	for (q = 0; q < data->nb_rx_queues; q++) {
		struct ipoib_rxq *rxq = data->rx_queues[q];

		if (rxq == NULL || rxq->cq == NULL)
			continue;
		while ((n = priv->ops->poll_cq(rxq->cq, wc, RTE_DIM(wc))) > 0)
			for (i = 0; i < n; i++)
				ipoib_conn_drop_wc(priv, rxq, &wc[i]);
	}
}
