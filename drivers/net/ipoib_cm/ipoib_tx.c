/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Transmit: Ethernet frames in, IPoIB frames out, over RC to connected
 * peers and UD otherwise. Per packet: a peer lookup (ipoib_peer_hash.h,
 * with the last destination cached) and a path, both taken over from the
 * frame before when it went over RC to the same peer; frames go out in
 * runs, one post per run of frames for the same QP, in order. An RC
 * receiver without buffers (RNR) stops the burst: the frames it refused
 * are given back to the application unchanged, as a full NIC queue
 * would, and nothing after them is touched.
 */

#include <errno.h>
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_ip.h>

#include "ipoib_cm.h"
#include "ipoib_frag.h"
#include "ipoib_log.h"
#include "ipoib_ptype.h"
#include "ipoib_tx.h"
#include "ipoib_tx_held.h"

#define IPOIB_FRAG_MAX		64	/* fragments of one packet */

/* What becomes of a frame. */
enum ipoib_tx_action {
	IPOIB_TX_SEND,
	IPOIB_TX_MALFORMED,
	IPOIB_TX_NO_NEIGH,
	IPOIB_TX_TOO_LONG,	/* fragment or ICMP, per route.mtu/ud */
	IPOIB_TX_HOLD,		/* to the control thread (ipoib_tx_held.c) */
	IPOIB_TX_BUSY,		/* not taken: frames before it still held */
};

/* Where a frame goes. */
struct ipoib_tx_route {
	struct ipoib_hca_qp *qp;
	struct ipoib_peer *peer;	/* NULL: multicast */
	const struct ipoib_hca_ah *ah;	/* NULL: from the MGID */
	uint32_t qpn;
	uint16_t mtu;			/* IPOIB_TX_TOO_LONG */
	bool rc;
	uint64_t dst;			/* rc: the peer's MAC, 8 bytes' load */
};

/* The 6 bytes of a destination MAC in the 8 at a frame's start. */
#define IPOIB_TX_DST_MASK	RTE_BE64(UINT64_C(0xffffffffffff0000))

/*
 * Control thread: a unicast destination MAC we have no peer for, asked of
 * the subnet directory (a file on verbs) once in a while.
 */
static struct ipoib_peer *
ipoib_tx_resolve(struct ipoib_txq *txq, const struct rte_ether_addr *mac)
{
	struct ipoib_priv *priv = txq->priv;
	struct ipoib_hwaddr hw;

	if (!ipoib_tx_may_resolve(priv, mac))
		return NULL;
	if (priv->ops->test->addr_resolve(priv->hca, mac->addr_bytes,
					  hw.bytes) < 0) {
		ipoib_neg_set(priv, mac);
		return NULL;
	}
	return ipoib_peer_learn(priv, &hw);
}

static __rte_always_inline struct ipoib_peer *
ipoib_tx_peer(struct ipoib_txq *txq, const struct rte_ether_addr *dst)
{
	struct ipoib_peer *peer = txq->last_peer;

	if (likely(peer != NULL &&
		   !__atomic_load_n(&peer->dead, __ATOMIC_RELAXED) &&
		   rte_is_same_ether_addr(&peer->mac, dst)))
		return peer;
	peer = ipoib_peer_by_mac(txq->priv, dst);
	if (peer != NULL)
		txq->last_peer = peer;
	return peer;
}

/*
 * A destination not ready to send to: no peer, a peer without an address
 * handle, or one with frames held before. An lcore never waits on the
 * subnet: the frame goes to the control thread, which asks the directory
 * and makes the handle, then sends it and those held after it, in order.
 * The control thread's own queue does that here.
 */
static __rte_noinline struct ipoib_peer *
ipoib_tx_unready(struct ipoib_txq *txq, const struct rte_ether_addr *dst,
		 struct ipoib_peer *peer, enum ipoib_tx_action *act)
{
	struct ipoib_priv *priv = txq->priv;

	*act = IPOIB_TX_NO_NEIGH;
	if (txq->queue_id != IPOIB_CTRL_TXQ) {
		if (peer == NULL) {
			if (ipoib_tx_may_resolve(priv, dst))
				*act = IPOIB_TX_HOLD;
		} else if (__atomic_load_n(&peer->ah, __ATOMIC_ACQUIRE) !=
			   NULL) {
			/*
			 * Ready (acquire: it may have just become so, and the
			 * frame may go). Frames held before the peer existed
			 * may be its: held behind them, counted with it (they
			 * go within a round of the control thread); frames
			 * held for it: a few held behind them, then not
			 * taken until they have gone (IPOIB_HELD_LATE).
			 */
			if (__atomic_load_n(&priv->held_anon_mac[
			    ipoib_held_anon_bucket(dst)], __ATOMIC_ACQUIRE) !=
			    0)
				*act = IPOIB_TX_HOLD;
			else if (__atomic_load_n(&peer->held,
						 __ATOMIC_ACQUIRE) != 0)
				*act = ipoib_held_late_take(peer) ?
				       IPOIB_TX_HOLD : IPOIB_TX_BUSY;
			else
				*act = IPOIB_TX_SEND;	/* others' held */
		} else if (!ipoib_neg_hit(priv, dst)) {
			*act = IPOIB_TX_HOLD;	/* else: no path just now */
		}
		return peer;
	}
	if (peer == NULL)
		peer = ipoib_tx_resolve(txq, dst);
	/* a handle that just failed is not tried again for each frame */
	if (peer == NULL ||
	    (__atomic_load_n(&peer->ah, __ATOMIC_RELAXED) == NULL &&
	     ipoib_neg_hit(priv, dst)))
		return peer;
	if (ipoib_peer_ah(priv, peer) == NULL) {
		/* its path is being asked: the frame waits for the answer */
		if (ipoib_path_waiting(priv, peer))
			*act = IPOIB_TX_HOLD;
		return peer;
	}
	txq->last_peer = peer;
	*act = IPOIB_TX_SEND;
	return peer;
}

void
ipoib_tx_drop(struct rte_mbuf *m, uint64_t *counter)
{
	IPOIB_STAT_INC(*counter);
	rte_pktmbuf_free(m);
}

void
ipoib_tx_drop_encap(struct ipoib_txq *txq, struct rte_mbuf *m, int err)
{
	ipoib_tx_drop(m, err == -ENOENT ? &txq->stats.drop_no_neigh :
		      err == -EPROTONOSUPPORT ? &txq->stats.drop_vlan :
		      &txq->stats.drop_malformed);
}

/*
 * ARP and Neighbor Discovery are rewritten to another length by the
 * Ethernet emulation and cannot be given back unchanged: they go over UD
 * (RFC 4391 allows either path). A full UD send queue (verbs) can refuse
 * them: they are then freed and counted, never given back rewritten.
 */
static __rte_always_inline bool
ipoib_tx_ud_only(const struct rte_mbuf *m, const struct rte_ether_hdr *eth)
{
	const struct rte_ipv6_hdr *ip6;

	if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_ARP))
		return true;
	if (eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV6) ||
	    m->data_len < sizeof(*eth) + sizeof(*ip6))
		return false;
	ip6 = (const struct rte_ipv6_hdr *)(eth + 1);
	return ip6->proto == IPPROTO_ICMPV6;
}

/* Undo ipoib_eth_encap() of a data frame: the refused go back intact. */
static void
ipoib_tx_unencap(struct rte_mbuf *m, const uint8_t *saved)
{
	uint8_t *p = (uint8_t *)rte_pktmbuf_prepend(m, RTE_ETHER_HDR_LEN -
						    IPOIB_HDR_LEN);

	/* the IPoIB header overwrote the last 4 bytes of the Ethernet one */
	memcpy(p + RTE_ETHER_HDR_LEN - IPOIB_HDR_LEN, saved, IPOIB_HDR_LEN);
}

/* Account frames sent over RC: a run there is one peer's (one QP). */
static __rte_always_inline void
ipoib_tx_account_rc(struct ipoib_txq *txq, const struct ipoib_tx_run *r,
		    uint16_t from, uint16_t to)
{
	struct ipoib_peer_ctr *ctr =
		ipoib_peer_ctr_at(txq->peer_rc, r->peer[from]->index);
	uint32_t total = 0;
	uint16_t i;

	for (i = from; i < to; i++)
		total += r->len[i];
	IPOIB_STAT_ADD(ctr->pkts, to - from);
	IPOIB_STAT_ADD(ctr->bytes, total);
	IPOIB_STAT_ADD(txq->stats.rc_packets, to - from);
	IPOIB_STAT_ADD(txq->stats.rc_bytes, total);
	IPOIB_STAT_ADD(txq->stats.bytes, total);
}

/*
 * Account frames sent over UD: per peer run by run (a run there mixes
 * peers). Out of line: an RC run, the common one, is counted inline.
 */
static void
ipoib_tx_account_ud(struct ipoib_txq *txq, const struct ipoib_tx_run *r,
		    uint16_t from, uint16_t to)
{
	struct ipoib_peer_ctr *const *ctr = txq->peer_ud;
	uint32_t pkts = 0, bytes = 0, total = 0;
	uint16_t i;

	for (i = from; i < to; i++) {
		struct ipoib_peer *p = r->peer[i];

		pkts++;
		bytes += r->len[i];
		total += r->len[i];
		if (p == NULL) {
			pkts = bytes = 0;
			continue;
		}
		if (i + 1 < to && r->peer[i + 1] == p)
			continue;
		IPOIB_STAT_ADD(ipoib_peer_ctr_at(ctr, p->index)->pkts, pkts);
		IPOIB_STAT_ADD(ipoib_peer_ctr_at(ctr, p->index)->bytes, bytes);
		pkts = bytes = 0;
	}
	IPOIB_STAT_ADD(txq->stats.ud_packets, to - from);
	IPOIB_STAT_ADD(txq->stats.ud_bytes, total);
	IPOIB_STAT_ADD(txq->stats.bytes, total);
}

/*
 * The frames of wr[from..to) after the sent ones, which the send queue
 * refused: a refused frame is given back intact, or, if it was rewritten
 * (ARP, ND) and so cannot be, freed and counted with every refused frame
 * before it: what is given back is the tail of the run, untouched. How
 * many were consumed, the sent ones included.
 */
static __rte_noinline uint16_t
ipoib_tx_refused(struct ipoib_txq *txq, struct ipoib_tx_run *r,
		 uint16_t from, uint16_t sent, uint16_t to)
{
	uint16_t lost, i;
	uint32_t bad;

	/* the last frame of the refused that cannot go back, if any */
	bad = r->rewritten & (uint32_t)(((UINT64_C(1) << to) - 1) &
					~((UINT64_C(1) << (from + sent)) - 1));
	lost = bad == 0 ? 0 :
	       (uint16_t)(rte_fls_u32(bad) - (from + sent));
	for (i = from + sent; i < from + sent + lost; i++)
		ipoib_tx_drop(r->wr[i].m, &txq->stats.drop_refused);
	for (; i < to; i++)
		ipoib_tx_unencap(r->wr[i].m, r->saved[i]);
	return sent + lost;
}

/*
 * Post wr[from..to), all encapsulated. Returns how many frames were
 * consumed: sent, or refused and freed (ipoib_tx_refused()).
 */
static __rte_always_inline uint16_t
ipoib_tx_post_range(struct ipoib_txq *txq, struct ipoib_tx_run *r,
		    uint16_t from, uint16_t to)
{
	uint16_t sent;

	if (from == to)
		return 0;
	sent = txq->post_send(r->qp, &r->wr[from], to - from);
	if (!r->rc)
		ipoib_tx_account_ud(txq, r, from, from + sent);
	else if (likely(sent > 0))
		ipoib_tx_account_rc(txq, r, from, from + sent);
	if (likely(sent == to - from))
		return sent;
	return ipoib_tx_refused(txq, r, from, sent, to);
}

/*
 * What the application's IGMP/MLD/ND asks of the control thread, read
 * once per frame: by the lcore, at encapsulation or when it holds the
 * frame (ipoib_tx_hold()); never again by the control thread's queue.
 */
static inline void
ipoib_tx_snoop(struct ipoib_txq *txq, const struct rte_mbuf *m, bool mcast)
{
	if (txq->queue_id != IPOIB_CTRL_TXQ)
		ipoib_mcast_snoop(txq, m, mcast);
}

/*
 * Encapsulate one frame of the run: 0, or a negative errno with the frame
 * unchanged (it is dropped once what precedes it has gone).
 */
static int
ipoib_tx_encap(struct ipoib_txq *txq, struct ipoib_tx_run *r, uint16_t i)
{
	struct ipoib_priv *priv = txq->priv;
	struct rte_mbuf *m = r->wr[i].m;
	struct ipoib_tx_dst dst;
	struct ipoib_hca_ah *ah;
	int ret;

	if (likely(r->peer[i] != NULL && ipoib_tx_fast_encap(m)))
		return 0;
	if (ipoib_tx_ud_only(m, rte_pktmbuf_mtod(m,
						const struct rte_ether_hdr *)))
		r->rewritten |= UINT32_C(1) << i;

	if (!r->rc && r->peer[i] == NULL) {
		/* multicast: the group is known once the frame is read */
		ipoib_tx_snoop(txq, m, true);
		ret = ipoib_eth_encap(m, &priv->eth, &dst);
		if (ret < 0)
			return ret;
		/* an lcore's route checked it exists (ipoib_tx_mcast_held()) */
		ah = dst.type != IPOIB_DST_MULTICAST ? NULL :
		     txq->queue_id == IPOIB_CTRL_TXQ ?
		     ipoib_mcast_ah(priv, dst.mgid) :
		     ipoib_mcast_ah_find(priv, dst.mgid);
		if (unlikely(ah == NULL)) {
			ipoib_tx_unencap(m, r->saved[i]);
			return -ENOENT;
		}
		r->wr[i].ah = ah;
		IPOIB_STAT_INC(txq->stats.mcast_packets);
		return 0;
	}
	ipoib_tx_snoop(txq, m, false);	/* ND names our addresses */
	return ipoib_eth_encap(m, &priv->eth, &dst);
}

/* Take frame i into the run: what accounting and undo need of it. */
static __rte_always_inline void
ipoib_tx_take(struct ipoib_tx_run *r, uint16_t i, const struct rte_mbuf *m)
{
	r->len[i] = m->pkt_len;
	memcpy(r->saved[i], rte_pktmbuf_mtod_offset(m, const uint8_t *,
		RTE_ETHER_HDR_LEN - IPOIB_HDR_LEN), IPOIB_HDR_LEN);
}

/*
 * Encapsulate and post the run, in order. Frames the burst took already
 * encapsulated (r->encapped, the common frame) are only posted. Returns
 * how many frames were consumed (sent or dropped) from its start; fewer
 * than r->n means the receiver refused the rest, which are given back
 * unchanged.
 */
static __rte_noinline uint16_t
ipoib_tx_flush(struct ipoib_txq *txq, struct ipoib_tx_run *r)
{
	uint32_t todo = ~r->encapped & (uint32_t)((UINT64_C(1) << r->n) - 1);
	uint16_t start = 0, done = 0, i, j, sent;

	r->rewritten = 0;
	for (; todo != 0; todo &= todo - 1) {
		struct rte_mbuf *m;
		int ret;

		i = (uint16_t)rte_bsf32(todo);
		m = r->wr[i].m;
		ipoib_tx_take(r, i, m);
		ret = ipoib_tx_encap(txq, r, i);
		if (likely(ret == 0))
			continue;
		/* what precedes the bad frame goes first */
		sent = ipoib_tx_post_range(txq, r, start, i);
		done += sent;
		if (sent < i - start) {
			/* the bad one goes back too, intact, and those after */
			for (j = i + 1; j < r->n; j++)
				if (r->encapped & (UINT32_C(1) << j))
					ipoib_tx_unencap(r->wr[j].m,
							 r->saved[j]);
			r->n = 0;
			r->encapped = 0;
			return done;
		}
		ipoib_tx_drop_encap(txq, m, ret);
		done++;
		start = i + 1;
	}
	done += ipoib_tx_post_range(txq, r, start, r->n);
	r->n = 0;
	r->encapped = 0;
	return done;
}

/*
 * ipoib_tx_flush() of a burst's run; the common one, every frame
 * encapsulated as the burst took it, is posted here, without the calls
 * that a run with frames to encapsulate needs.
 */
static __rte_always_inline uint16_t
ipoib_tx_flush_run(struct ipoib_txq *txq, struct ipoib_tx_run *r)
{
	uint16_t done;

	if (unlikely(r->encapped != (uint32_t)((UINT64_C(1) << r->n) - 1)))
		return ipoib_tx_flush(txq, r);
	r->rewritten = 0;
	done = ipoib_tx_post_range(txq, r, 0, r->n);
	r->n = 0;
	r->encapped = 0;
	return done;
}

/*
 * Post a run of frames the driver made (fragments): what the send queue
 * refuses is ours to free, counted. False when something was refused.
 */
static bool
ipoib_tx_flush_own(struct ipoib_txq *txq, struct ipoib_tx_run *r)
{
	uint16_t n = r->n, done = ipoib_tx_flush(txq, r), i;

	for (i = done; i < n; i++)
		ipoib_tx_drop(r->wr[i].m, &txq->stats.frags_refused);
	return done == n;
}

/*
 * Too long for the path: IPv4 without DF is fragmented over UD (to a
 * peer, or a multicast group when peer is NULL), else answered with an
 * ICMP error. Once the send queue refuses a fragment the packet is lost:
 * the fragments not yet posted are freed with it.
 */
static void
ipoib_tx_too_long(struct ipoib_txq *txq, struct rte_mbuf *m,
		  const struct ipoib_tx_route *rt)
{
	struct ipoib_priv *priv = txq->priv;
	struct rte_mbuf *frags[IPOIB_FRAG_MAX], *icmp;
	struct ipoib_tx_run *r = txq->frag_run;
	bool ok = true;
	int n, i;

	if (!rt->rc) {
		n = ipoib_frag_ipv4(m, rt->mtu, frags, IPOIB_FRAG_MAX,
				    txq->frag_direct, txq->frag_indirect);
		if (n > 0) {
			IPOIB_STAT_INC(txq->stats.frag_packets);
			IPOIB_STAT_ADD(txq->stats.frags, n);
			rte_pktmbuf_free(m);
			r->qp = txq->ud_qp;
			r->rc = false;
			r->n = 0;
			r->encapped = 0;
			for (i = 0; i < n; i++) {
				if (!ok) {
					ipoib_tx_drop(frags[i],
						      &txq->stats.frags_refused);
					continue;
				}
				r->wr[r->n].m = frags[i];
				r->wr[r->n].ah = rt->ah;
				r->wr[r->n].remote_qpn = rt->qpn;
				r->wr[r->n].remote_qkey = txq->ud_qkey;
				r->peer[r->n++] = rt->peer;
				if (r->n == IPOIB_TX_BURST)
					ok = ipoib_tx_flush_own(txq, r);
			}
			if (ok)
				ok = ipoib_tx_flush_own(txq, r);
			if (!ok)	/* the packet is lost */
				IPOIB_STAT_INC(txq->stats.drop_refused);
			return;
		}
	}
	icmp = ipoib_icmp_too_big(m, rt->mtu, txq->frag_direct);
	if (icmp != NULL) {
		icmp->port = priv->eth_dev->data->port_id;
		icmp->packet_type = ipoib_ptype_slow(icmp) &
			__atomic_load_n(&priv->ptype_mask, __ATOMIC_RELAXED);
		/* the rx queue may be another thread's; so is the control's */
		ipoib_ring_give(&priv->loopback_gen);
		if (rte_ring_enqueue(priv->loopback, icmp) == 0)
			IPOIB_STAT_INC(txq->stats.icmp_too_big);
		else
			rte_pktmbuf_free(icmp);
	}
	ipoib_tx_drop(m, &txq->stats.drop_too_long);
}

/*
 * A multicast frame an lcore holds for the control thread: its group has
 * no address handle yet (made on first use, ipoib_mcast_ah()). A frame
 * with no group at all is left to encapsulation, which drops it, counted.
 */
static bool
ipoib_tx_mcast_held(struct ipoib_txq *txq, const struct rte_mbuf *m)
{
	struct ipoib_tx_dst dst;

	return txq->queue_id != IPOIB_CTRL_TXQ &&
	       ipoib_eth_dst(m, &txq->priv->eth, &dst) == 0 &&
	       dst.type == IPOIB_DST_MULTICAST &&
	       ipoib_mcast_ah_find(txq->priv, dst.mgid) == NULL;
}

/* Where one frame goes; nothing is done to it yet. */
static __rte_always_inline enum ipoib_tx_action
ipoib_tx_route(struct ipoib_txq *txq, struct rte_mbuf *m,
	       struct ipoib_tx_route *rt)
{
	struct ipoib_priv *priv = txq->priv;
	const struct rte_ether_hdr *eth;
	struct ipoib_peer *peer;
	uint32_t ip_len;

	if (unlikely(m->data_len < RTE_ETHER_HDR_LEN))
		return IPOIB_TX_MALFORMED;
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	ip_len = m->pkt_len - RTE_ETHER_HDR_LEN;
	rt->qp = txq->ud_qp;
	rt->rc = false;
	rt->peer = NULL;
	rt->ah = NULL;	/* multicast: from the MGID, at encapsulation */
	rt->qpn = IPOIB_MCAST_QPN;
	rt->mtu = priv->ud_mtu;
	if (!rte_is_multicast_ether_addr(&eth->dst_addr)) {
		peer = ipoib_tx_peer(txq, &eth->dst_addr);
		if (unlikely(peer == NULL ||
			     __atomic_load_n(&peer->ah, __ATOMIC_ACQUIRE) ==
			     NULL ||
			     (__atomic_load_n(&peer->held, __ATOMIC_ACQUIRE) |
			      __atomic_load_n(&priv->held_anon,
					      __ATOMIC_ACQUIRE)))) {
			enum ipoib_tx_action act;

			peer = ipoib_tx_unready(txq, &eth->dst_addr, peer,
						&act);
			if (act != IPOIB_TX_SEND) {
				rt->peer = peer;	/* HOLD: counted with it */
				return act;
			}
		}
		rt->peer = peer;
		rt->ah = peer->ah;
		rt->qpn = peer->qpn;
		if (__atomic_load_n(&peer->state, __ATOMIC_ACQUIRE) ==
		    IPOIB_PEER_CONNECTED && !ipoib_tx_ud_only(m, eth)) {
			rt->qp = peer->tx->qp;
			rt->rc = true;
			rt->dst = 0;
			memcpy(&rt->dst, &peer->mac, RTE_ETHER_ADDR_LEN);
			rt->mtu = (uint16_t)RTE_MIN(peer->tx_mtu - IPOIB_HDR_LEN,
						    (uint32_t)UINT16_MAX);
		} else if (unlikely(__atomic_load_n(&peer->state,
				    __ATOMIC_RELAXED) == IPOIB_PEER_NEW)) {
			ipoib_conn_request(priv, peer);
		}
	} else if (unlikely(ipoib_tx_mcast_held(txq, m))) {
		return IPOIB_TX_HOLD;
	}
	if (unlikely(ip_len > rt->mtu))
		return IPOIB_TX_TOO_LONG;
	return IPOIB_TX_SEND;
}

/*
 * The frame after one routed over RC, to the same peer: the same route
 * (what ipoib_tx_route() read of the peer, once per burst, holds for the
 * burst as it would have for one frame), once the frame itself is known
 * to go that way: long enough, the same destination, a common frame
 * (ipoib_tx_fast_type(): not ARP or ND), within the connection's MTU.
 */
static __rte_always_inline bool
ipoib_tx_same_rc(const struct rte_mbuf *m, const struct ipoib_tx_route *rt)
{
	const struct rte_ether_hdr *eth =
		rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint64_t w;

	if (m->data_len < RTE_ETHER_HDR_LEN)
		return false;
	/* the destination and the source's first 2 bytes, in one load */
	memcpy(&w, eth, sizeof(w));
	return ((w ^ rt->dst) & IPOIB_TX_DST_MASK) == 0 &&
	       ipoib_tx_fast_type(m, eth) &&
	       m->pkt_len - RTE_ETHER_HDR_LEN <= rt->mtu;
}

/*
 * Hand a frame to the control thread (ipoib_tx_held.c), counted; false
 * when its ring is full: the frame is not taken (given back untouched).
 * The peer's count goes up first, so that the control thread, which
 * brings it down once it has sent the frame, never sees it lower than
 * what it holds. The control thread's own queue holds a frame whose
 * peer's path is being asked in priv->held_wait, counted again with the
 * peer (its count of the frame's first hold goes when it is taken back).
 */
static bool
ipoib_tx_hold(struct ipoib_txq *txq, struct rte_mbuf *m,
	      struct ipoib_peer *peer)
{
	const struct rte_ether_addr *dst =
		&rte_pktmbuf_mtod(m, const struct rte_ether_hdr *)->dst_addr;
	struct ipoib_held h = {
		.m = m,
		.peer = peer != NULL ? peer->index + 1 : 0,
		.anon = peer == NULL && !rte_is_multicast_ether_addr(dst) ?
			ipoib_held_anon_bucket(dst) + 1 : 0,
	};

	ipoib_tx_snoop(txq, m, peer == NULL);
	ipoib_ring_give(&txq->priv->held_gen);
	if (peer != NULL)
		__atomic_fetch_add(&peer->held, 1, __ATOMIC_RELAXED);
	else if (h.anon != 0)
		ipoib_held_anon_add(txq->priv, h.anon - 1);
	if (rte_ring_enqueue_elem(txq->queue_id == IPOIB_CTRL_TXQ ?
				  txq->priv->held_wait : txq->priv->held,
				  &h, sizeof(h)) != 0) {
		if (peer != NULL)
			ipoib_held_done(peer);
		else if (h.anon != 0)
			ipoib_held_anon_done(txq->priv, h.anon - 1);
		return false;
	}
	IPOIB_STAT_INC(txq->stats.held);
	return true;
}

/* A frame that does not go as it is: dropped, fragmented, or answered. */
static void
ipoib_tx_consume(struct ipoib_txq *txq, struct rte_mbuf *m,
		 enum ipoib_tx_action act, const struct ipoib_tx_route *rt)
{
	switch (act) {
	case IPOIB_TX_NO_NEIGH:
		ipoib_tx_drop(m, &txq->stats.drop_no_neigh);
		break;
	case IPOIB_TX_TOO_LONG:
		ipoib_tx_too_long(txq, m, rt);
		break;
	default:
		ipoib_tx_drop(m, &txq->stats.drop_malformed);
		break;
	}
}

uint16_t
ipoib_tx_send(struct ipoib_txq *txq, struct rte_mbuf **pkts, uint16_t n)
{
	struct ipoib_tx_run *r = txq->run;
	uint64_t held = txq->stats.held;
	struct ipoib_tx_route rt;
	bool same = false;	/* rt routes the last frame over RC */
	bool fast;		/* this one too, and it is a common frame */
	uint16_t i, k = 0, consumed = 0;
	uint32_t enc = 0;

	n = RTE_MIN(n, (uint16_t)IPOIB_TX_BURST);
	/* the run's length and encapsulated frames in locals, stored to flush */
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		enum ipoib_tx_action act;

		if (same && ipoib_tx_same_rc(m, &rt)) {
			act = IPOIB_TX_SEND;
			fast = true;
		} else {
			act = ipoib_tx_route(txq, m, &rt);
			same = act == IPOIB_TX_SEND && rt.rc;
			fast = false;
		}

		/* a run ends at a new QP, or at a frame not sent as it is */
		if (k > 0 && (act != IPOIB_TX_SEND || rt.qp != r->qp)) {
			r->n = k;
			r->encapped = enc;
			consumed += ipoib_tx_flush_run(txq, r);
			k = 0;
			enc = 0;
			if (consumed < i)
				goto out;	/* refused: frames i.. untouched */
		}
		if (unlikely(act != IPOIB_TX_SEND)) {
			if (act == IPOIB_TX_BUSY ||
			    (act == IPOIB_TX_HOLD &&
			     !ipoib_tx_hold(txq, m, rt.peer))) {
				/* frames i.. untouched, as by a full queue */
				IPOIB_STAT_INC(txq->stats.held_busy);
				goto out;
			}
			if (act != IPOIB_TX_HOLD)
				ipoib_tx_consume(txq, m, act, &rt);
			consumed++;
			continue;
		}
		if (k == 0) {
			r->qp = rt.qp;
			r->rc = rt.rc;
		}
		r->wr[k].m = m;
		/* an RC send reads none of these (struct ipoib_send_wr) */
		if (!rt.rc) {
			r->wr[k].ah = rt.ah;
			r->wr[k].remote_qpn = rt.qpn;
			r->wr[k].remote_qkey = txq->ud_qkey;
		}
		r->peer[k] = rt.peer;
		/* the common frame is encapsulated while it is at hand */
		if (likely(rt.peer != NULL)) {
			ipoib_tx_take(r, k, m);
			if (likely(fast ? ipoib_tx_fast_hdr(m) :
				   ipoib_tx_fast_encap(m)))
				enc |= UINT32_C(1) << k;
		}
		k++;
	}
	r->n = k;
	r->encapped = enc;
	consumed += ipoib_tx_flush_run(txq, r);
out:
	/* held frames count as sent when the control thread sent them */
	held = txq->stats.held - held;
	IPOIB_STAT_ADD(txq->stats.packets, consumed - held);
	if (unlikely(held != 0))
		txq->priv->ops->ctrl_wake(txq->priv->hca);
	return consumed;
}

/* Reads peers: a reader of the control thread's RCU (ipoib_rcu.h). */
uint16_t
ipoib_tx_burst(void *q, struct rte_mbuf **pkts, uint16_t n)
{
	struct ipoib_txq *txq = q;
	struct rte_rcu_qsbr *qsbr = txq->priv->pt.qsbr;
	uint16_t sent;

	/* rte_eth_dev_tx_queue_stop(): the frames stay with the caller */
	if (unlikely(__atomic_load_n(&txq->stopped, __ATOMIC_RELAXED)))
		return 0;
	ipoib_rcu_enter(qsbr, &txq->rcu);
	sent = ipoib_tx_send(txq, pkts, n);
	ipoib_rcu_leave(qsbr, &txq->rcu);
	return sent;
}
