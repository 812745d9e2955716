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
 * (queue 0, or the queue's RSS share), then the queue's RC CQ.
 * Replacement buffers are taken in one call before any packet is
 * delivered, all reposts of a receive queue go in one call, the queue's
 * counters are stored once per burst and per-peer counters added once per
 * run of packets from the same peer.
 */

#include <rte_branch_prediction.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "ipoib_cm.h"
#include "ipoib_eth.h"
#include "ipoib_ptype.h"
#include "ipoib_rx_acct.h"
#include "ipoib_rx_fresh.h"
#include "ipoib_rxq.h"

/*
 * The slow path of a UD frame without a GRH from an SLID and source QPN
 * no peer is bound to (ipoib_rx_learn.c): delivered, as an Ethernet frame
 * from the peer it teaches, only when it is ARP or ND whose sender
 * address names that QPN; else freed and counted. The peer, or NULL.
 */
struct ipoib_peer *ipoib_rx_ud_stranger(struct ipoib_rxq *rxq,
					struct rte_mbuf *m,
					const struct ipoib_wc *wc,
					uint32_t ptype_mask);

/*
 * What a burst reads of a ring, copied into a local (ipoib_rx_burst_poll()):
 * set before its first WR was posted. Not the count of posted WRs, which
 * the control thread adds to while it posts a new connection's ring.
 */
static __rte_always_inline void
ipoib_rx_ring_view(struct ipoib_rx_ring *v, const struct ipoib_rx_ring *r)
{
	v->bufs = r->bufs;
	v->pool = r->pool;
	v->nb_slots = r->nb_slots;
	v->segs = r->segs;
	v->seg_len = r->seg_len;
	v->outstanding = 0;	/* never read */
}

/*
 * mbufs that len received bytes fill in ring's slots: one, without a
 * division, for every frame up to an mbuf's data room.
 */
static __rte_always_inline uint16_t
ipoib_rx_nseg(const struct ipoib_rx_ring *ring, uint32_t len)
{
	if (likely(len - 1 < ring->seg_len))
		return 1;
	return (uint16_t)((len + ring->seg_len - 1) / ring->seg_len);
}

/*
 * Turn a completed slot into an mbuf chain of len bytes, skip bytes in,
 * after putting fresh mbufs in the slot (from f, else from the ring's
 * pool). NULL when there are none: the slot keeps its old ones and the
 * packet is dropped.
 */
static __rte_always_inline struct rte_mbuf *
ipoib_rx_chain(struct ipoib_rxq *rxq, struct ipoib_rx_ring *ring,
	       uint32_t slot, uint32_t len, uint32_t skip,
	       struct ipoib_rx_fresh *f)
{
	struct rte_mbuf **b = &ring->bufs[(size_t)slot * ring->segs];
	uint16_t nseg = ipoib_rx_nseg(ring, len);
	struct rte_mbuf *fresh[IPOIB_MAX_SGE], **fr;
	struct rte_mbuf *head = b[0], *prev = NULL;
	uint32_t left = len;
	uint16_t j;

	/*
	 * The common frame: one mbuf, its replacement at hand. A posted
	 * mbuf has nb_segs 1 and next NULL (a pool's, never chained since),
	 * and its port (the pool's rearm word).
	 */
	if (likely(nseg == 1 && len > skip && f != NULL && f->next < f->n)) {
		b[0] = f->m[f->next++];
		head->data_len = (uint16_t)(len - skip);
		head->pkt_len = len - skip;
		head->data_off += skip;
		return head;
	}
	if (unlikely(nseg == 0 || nseg > ring->segs || len <= skip))
		return NULL;
	if (likely(f != NULL && f->n - f->next >= nseg)) {
		fr = &f->m[f->next];
		f->next += nseg;
	} else if (ipoib_rx_mbufs_get(ring->pool, fresh, nseg) == 0) {
		fr = fresh;
	} else {
		IPOIB_STAT_INC(rxq->stats.nombuf);
		return NULL;
	}
	for (j = 0; j < nseg; j++) {
		struct rte_mbuf *m = b[j];

		m->data_len = (uint16_t)RTE_MIN(left, (uint32_t)ring->seg_len);
		left -= m->data_len;
		if (prev != NULL)
			prev->next = m;
		prev = m;
		b[j] = fr[j];
	}
	head->nb_segs = nseg;
	head->pkt_len = len - skip;
	head->data_off += skip;
	head->data_len -= skip;
	return head;
}

/*
 * The checks ipoib_eth_decap() makes of an IP header, for one that lies in
 * the first segment: a header of its version and length, and the whole
 * packet its length field announces. What fails them takes the slow path,
 * which counts it malformed.
 */
static __rte_always_inline bool
ipoib_rx_ipv4_whole(const struct rte_mbuf *m, const struct rte_ipv4_hdr *ip)
{
	uint8_t vhl = ip->version_ihl;
	uint32_t hlen, len;

	if (unlikely(m->data_len < IPOIB_HDR_LEN + sizeof(*ip)))
		return false;
	hlen = (uint32_t)(vhl & RTE_IPV4_HDR_IHL_MASK) * 4;
	len = rte_be_to_cpu_16(ip->total_length);
	/* version 4 and a header of 5 words or more: 0x45 to 0x4f */
	return likely((uint8_t)(vhl - RTE_IPV4_VHL_DEF) <=
		      RTE_IPV4_HDR_IHL_MASK - RTE_IPV4_MIN_IHL &&
		      len >= hlen && IPOIB_HDR_LEN + len <= m->pkt_len);
}

/* The same for IPv6; ICMPv6 (ND) always takes the slow path. */
static __rte_always_inline bool
ipoib_rx_ipv6_whole(const struct rte_mbuf *m, const struct rte_ipv6_hdr *ip)
{
	if (unlikely(m->data_len < IPOIB_HDR_LEN + sizeof(*ip)))
		return false;
	return likely((rte_be_to_cpu_32(ip->vtc_flow) >> 28) == 6 &&
		      ip->proto != IPPROTO_ICMPV6 &&
		      IPOIB_HDR_LEN + sizeof(*ip) +
		      rte_be_to_cpu_16(ip->payload_len) <= m->pkt_len);
}

/* The packet type of an IPv6 frame checked by ipoib_rx_ipv6_whole(). */
static __rte_always_inline uint32_t
ipoib_rx_ptype_ipv6(const struct rte_mbuf *m, const struct rte_ipv6_hdr *ip)
{
	if (unlikely(ipoib_ptype_ip6_ext(ip->proto)))
		return ipoib_ptype_slow(m);
	return RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6 |
	       ipoib_ptype_l4(ip->proto);
}

/*
 * The common frame: unicast IPv4, or IPv6 that is not ICMPv6 (ND goes to
 * the full emulation). Its 4-byte IPoIB header becomes the 14-byte
 * Ethernet one, from MACs already known; no other byte changes. The
 * packet type comes from the IP header just checked.
 */
static __rte_always_inline bool
ipoib_rx_fast_decap(struct rte_mbuf *m, const struct rte_ether_addr *dst,
		    const struct rte_ether_addr *src, uint32_t ptype_mask)
{
	const struct ipoib_hdr *h = rte_pktmbuf_mtod(m, const struct ipoib_hdr *);
	rte_be16_t proto = h->proto;
	const void *ip = h + 1;
	struct rte_ether_hdr *eth;

	if (proto == RTE_BE16(RTE_ETHER_TYPE_IPV4)) {
		if (!ipoib_rx_ipv4_whole(m, (const void *)(h + 1)))
			return false;
	} else if (proto != RTE_BE16(RTE_ETHER_TYPE_IPV6) ||
		   !ipoib_rx_ipv6_whole(m, (const void *)(h + 1))) {
		return false;
	}
	/*
	 * rte_pktmbuf_prepend() without its test: a posted buffer's data
	 * starts RTE_PKTMBUF_HEADROOM in (ipoib_pool_rearm_word()), or
	 * further on a datagram's GRH.
	 */
	RTE_BUILD_BUG_ON(RTE_PKTMBUF_HEADROOM <
			 RTE_ETHER_HDR_LEN - IPOIB_HDR_LEN);
	m->data_off -= RTE_ETHER_HDR_LEN - IPOIB_HDR_LEN;
	m->data_len += RTE_ETHER_HDR_LEN - IPOIB_HDR_LEN;
	m->pkt_len += RTE_ETHER_HDR_LEN - IPOIB_HDR_LEN;
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	rte_ether_addr_copy(dst, &eth->dst_addr);
	rte_ether_addr_copy(src, &eth->src_addr);
	eth->ether_type = proto;
	m->packet_type = ptype_mask &
		(proto == RTE_BE16(RTE_ETHER_TYPE_IPV4) ? ipoib_ptype_ipv4(ip) :
		 ipoib_rx_ptype_ipv6(m, ip));
	return true;
}

/*
 * Ethernet emulation of one received IPoIB frame, and its peer's
 * accounting; the caller counts it for the queue. wc is the UD
 * completion (NULL on RC): an ARP/ND sender address it carries binds the
 * peer to the completion's SLID and source QPN. src NULL: a UD frame
 * without a GRH from a sender nothing named yet.
 */
static __rte_always_inline bool
ipoib_rx_deliver(struct ipoib_rxq *rxq, struct rte_mbuf *m,
		 const struct ipoib_hwaddr *src, struct ipoib_peer *peer,
		 const struct ipoib_wc *wc, bool mcast,
		 struct ipoib_rx_acct *acct)
{
	struct ipoib_priv *priv = rxq->priv;
	uint32_t ptype_mask = acct->ptype_mask;
	struct ipoib_learn learn;

	if (likely(peer != NULL && !mcast &&
		   ipoib_rx_fast_decap(m, &priv->mac, &peer->mac, ptype_mask)))
		goto done;
	if (unlikely(src == NULL)) {
		peer = ipoib_rx_ud_stranger(rxq, m, wc, ptype_mask);
		if (peer == NULL)
			return false;
		goto done;
	}
	if (unlikely(ipoib_eth_decap(m, src, mcast, &priv->eth, &learn) < 0)) {
		IPOIB_STAT_INC(rxq->stats.drop_malformed);
		rte_pktmbuf_free(m);
		return false;
	}
	m->packet_type = ptype_mask != 0 ? ipoib_ptype_slow(m) & ptype_mask : 0;
	if (unlikely(learn.valid))
		ipoib_peer_learn_at(priv, &learn.hw, wc != NULL ? wc->slid : 0,
				    wc != NULL ? wc->src_qp : 0);
done:
	if (likely(peer != NULL))
		ipoib_rx_acct_add(acct, peer, m->pkt_len);
	return true;
}

/*
 * The UD source of a completion: cached for a busy sender. *srcp: its
 * hardware address, the cached peer's (the same QPN and GID, hence the
 * same MAC) or else built in src.
 */
static __rte_always_inline struct ipoib_peer *
ipoib_rx_ud_source(struct ipoib_rxq *rxq, const struct ipoib_wc *wc,
		   const struct ipoib_grh *grh, struct ipoib_hwaddr *src,
		   const struct ipoib_hwaddr **srcp)
{
	struct ipoib_peer *peer = rxq->last_src;

	if (likely(peer != NULL &&
		   !__atomic_load_n(&peer->dead, __ATOMIC_RELAXED) &&
		   peer->qpn == wc->src_qp &&
		   memcmp(ipoib_hwaddr_gid(&peer->hw), grh->sgid,
			  IPOIB_GID_LEN) == 0)) {
		*srcp = &peer->hw;
		return peer;
	}
	ipoib_hwaddr_set(src, 0, wc->src_qp, grh->sgid);
	*srcp = src;
	peer = ipoib_peer_learn(rxq->priv, src);
	rxq->last_src = peer;
	return peer;
}

/*
 * The UD source of a completion without a GRH: unicast within the
 * subnet, as Linux sends its ARP replies and datagram IP (the LRH
 * routes; its LNH field says whether a GRH follows). The sender is its
 * SLID and source QPN, bound to a peer by the ARP/ND that named it; NULL
 * when none did.
 */
static __rte_always_inline struct ipoib_peer *
ipoib_rx_ud_lid_source(struct ipoib_rxq *rxq, const struct ipoib_wc *wc)
{
	struct ipoib_peer *peer = rxq->last_src;

	if (likely(peer != NULL &&
		   !__atomic_load_n(&peer->dead, __ATOMIC_RELAXED) &&
		   peer->qpn == wc->src_qp &&
		   __atomic_load_n(&peer->lid, __ATOMIC_RELAXED) == wc->slid))
		return peer;
	peer = ipoib_peer_by_lid(rxq->priv, wc->slid, wc->src_qp);
	if (peer != NULL)
		rxq->last_src = peer;
	return peer;
}

/* Connection i, as published by the control thread (ipoib_conn.c). */
static __rte_always_inline struct ipoib_conn *
ipoib_rx_conn(const struct ipoib_rxq *rxq, uint32_t i)
{
	return __atomic_load_n(&rxq->conns[i], __ATOMIC_ACQUIRE);
}

/*
 * mbufs the completions of a burst need, to take them in one call: one
 * each when a slot is one mbuf (what does not fit is dropped).
 */
static __rte_always_inline uint16_t
ipoib_rx_need(const struct ipoib_rx_ring *ring, const struct ipoib_wc *wc,
	      uint16_t k)
{
	uint16_t i, need = 0;

	if (likely(ring->segs == 1))
		return k;
	for (i = 0; i < k; i++)
		need += ipoib_rx_nseg(ring, wc[i].byte_len);
	return need;
}

/*
 * Non-SRQ: mbufs the run of completions of one connection that starts
 * wc (its first, valid) needs: each connection's buffers come from its
 * own pool.
 */
static __rte_always_inline uint16_t
ipoib_rx_run_need(const struct ipoib_rx_ring *ring, const struct ipoib_wc *wc,
		  uint16_t k)
{
	uint64_t run = ipoib_wr_ring(wc[0].wr_id);
	uint16_t i;

	for (i = 1; i < k && ipoib_wr_ring(wc[i].wr_id) == run; i++)
		;
	return ipoib_rx_need(ring, wc, i);
}

/*
 * A completion whose wr_id names no slot of the ring it came to: counted
 * and skipped, nothing indexed with it; the drain id is expected.
 */
static __rte_always_inline void
ipoib_rx_stray(struct ipoib_rxq *rxq, uint64_t wr_id)
{
	if (wr_id != IPOIB_WR_ID_DRAIN)
		IPOIB_STAT_INC(rxq->stats.bad_wr_id);
}

/*
 * Ask for the first line of every buffer a burst's completions name
 * before the first is read. The sender wrote them from another core:
 * read one after the other, each packet waited for its own miss, about
 * half of the receive side's time at 64 bytes (perf annotate of the
 * rxonly testpmd, all on the load of the IPoIB header). A prefetch reads
 * nothing: completions that name no valid slot are only skipped here;
 * the loop that delivers checks them again. ring: the SRQ's or the UD
 * one; with conns (ring NULL), each completion's connection's, and the
 * return is how many completions from the first are of the first one's
 * connection, to take the mbufs of that run without walking it again
 * (ipoib_rx_run_need()): a stray among them counts, which only takes an
 * mbuf more than needed (given back at the run's end).
 */
static __rte_always_inline uint16_t
ipoib_rx_prefetch(const struct ipoib_rxq *rxq, const struct ipoib_rx_ring *ring,
		  const struct ipoib_wc *wc, uint16_t k, const bool conns)
{
	uint32_t last = UINT32_MAX;
	uint16_t i, run1 = k;

	for (i = 0; i < k; i++) {
		uint64_t id = wc[i].wr_id;
		uint32_t slot = ipoib_wr_slot(id);

		/*
		 * The kind is left to the loop that delivers: slot and
		 * connection index are bounded, so a stray id prefetches at
		 * worst another buffer of this queue's rings.
		 */
		if (conns) {
			uint32_t ci = ipoib_wr_conn(id);
			const struct ipoib_conn *c;

			if (unlikely(ci >= rxq->nr_conns))
				continue;
			if (ci != last) {
				if (last != UINT32_MAX && run1 == k)
					run1 = i;
				c = ipoib_rx_conn(rxq, ci);
				if (unlikely(c == NULL)) {
					last = UINT32_MAX;
					continue;
				}
				ring = &c->ring;
				last = ci;
			}
		}
		/*
		 * The mbuf's line (the burst writes its lengths) and its
		 * data's, whose address follows from the mbuf's: reading
		 * buf_addr would wait for the first before asking for the
		 * second. An emptied slot (NULL) prefetches a low address,
		 * which does not fault.
		 */
		if (likely(slot < ring->nb_slots)) {
			uintptr_t m = (uintptr_t)
				ring->bufs[(size_t)slot * ring->segs];

			rte_prefetch0((const void *)m);
			rte_prefetch0((const void *)(m + IPOIB_POOL_DATA_OFS));
		}
	}
	return run1;
}

/* The datagram side: queue 0's, or with RSS the queue's share. */
static __rte_always_inline uint16_t
ipoib_rx_ud(struct ipoib_rxq *rxq, struct rte_mbuf **pkts, uint16_t n,
	    struct ipoib_rx_acct *acct)
{
	struct ipoib_priv *priv = rxq->priv;
	struct ipoib_recv_wr wr[IPOIB_BURST];
	struct ipoib_wc wc[IPOIB_BURST];
	struct rte_mbuf *fresh_m[IPOIB_RX_FRESH];
	struct ipoib_rx_fresh fresh = { .m = fresh_m };
	/* the ring's geometry in a local, as ipoib_rx_burst_poll() has it */
	struct ipoib_rx_ring view, *ring = &view;
	uint16_t k, i, nb = 0, nwr = 0;

	k = rxq->poll_cq(rxq->ud_cq, wc, RTE_MIN(n, (uint16_t)IPOIB_BURST));
	if (k == 0)
		return 0;
	ipoib_rx_ring_view(&view, rxq->ud);
	ipoib_rx_prefetch(rxq, ring, wc, k, false);
	ipoib_rx_fresh_take(&fresh, ring->pool, ipoib_rx_need(ring, wc, k));
	for (i = 0; i < k; i++) {
		uint32_t slot = ipoib_wr_slot(wc[i].wr_id);
		const struct ipoib_hwaddr *srcp;
		const struct ipoib_grh *grh;
		struct ipoib_hwaddr src;
		struct ipoib_peer *peer;
		struct rte_mbuf *m;
		unsigned int kind;
		bool mcast;

		/* never index the ring with what it did not post */
		if (unlikely(ipoib_wr_kind(wc[i].wr_id) != IPOIB_WR_UD ||
			     slot >= ring->nb_slots)) {
			ipoib_rx_stray(rxq, wc[i].wr_id);
			continue;
		}
		if (unlikely(wc[i].status != IPOIB_WC_SUCCESS)) {
			if (wc[i].status == IPOIB_WC_WR_FLUSH_ERR) {
				IPOIB_STAT_INC(rxq->stats.flushed);
				/* the ring itself, not the view */
				ipoib_rx_ring_drop_slot(rxq->ud, slot);
				continue;
			}
			IPOIB_STAT_INC(rxq->stats.drop_len);
			goto repost;
		}
		/* multicast always has a GRH; unicast has one if routed */
		if (likely(wc[i].wc_flags & IPOIB_WC_GRH)) {
			grh = rte_pktmbuf_mtod(ring->bufs[(size_t)slot *
							  ring->segs],
					       const struct ipoib_grh *);
			mcast = grh->dgid[0] == 0xff;
			/*
			 * Our own multicast; to ourselves (lpbk_mode) is
			 * delivered.
			 */
			if (unlikely(mcast && wc[i].src_qp == priv->ud_qpn &&
				     wc[i].slid == priv->attr.lid)) {
				IPOIB_STAT_INC(rxq->stats.drop_mcast_loop);
				goto repost;
			}
			/* the GRH is overwritten by the Ethernet header */
			kind = unlikely(mcast) ? ipoib_mcast_kind(grh->dgid) : 0;
			peer = ipoib_rx_ud_source(rxq, &wc[i], grh, &src,
						  &srcp);
		} else {
			mcast = false;
			kind = 0;
			peer = ipoib_rx_ud_lid_source(rxq, &wc[i]);
			srcp = peer != NULL ? &peer->hw : NULL;
		}
		m = ipoib_rx_chain(rxq, ring, slot, wc[i].byte_len,
				   IPOIB_GRH_LEN, &fresh);
		if (unlikely(m == NULL))
			goto repost;
		if (ipoib_rx_deliver(rxq, m, srcp, peer, &wc[i], mcast,
				     acct)) {
			acct->ud_pkts++;
			acct->ud_bytes += m->pkt_len;
			if (unlikely(mcast))
				IPOIB_STAT_INC(rxq->stats.mc_rx[kind]);
			pkts[nb++] = m;
		}
repost:
		ipoib_rx_ring_fill_wr(ring, slot, wc[i].wr_id, &wr[nwr++]);
	}
	ipoib_rx_fresh_return(&fresh);
	if (nwr > 0)
		rxq->post_recv(rxq->ud_qp, wr, nwr);
	return nb;
}

/*
 * Non-SRQ mode: post the reposts gathered since *start, those of a run of
 * one connection's completions, to its QP when the run ends, so no WR
 * needs its owner beside it. (SRQ mode: ipoib_rx_srq_repost().)
 */
static __rte_always_inline void
ipoib_rx_repost(struct ipoib_rxq *rxq, struct ipoib_recv_wr *wr,
		const struct ipoib_conn *run, uint16_t *start, uint16_t nwr)
{
	if (nwr == *start)
		return;
	rxq->post_recv(run->qp, &wr[*start], nwr - *start);
	*start = nwr;
}

/*
 * SRQ mode: a burst's reposts wait in the queue until IPOIB_RX_SRQ_BATCH
 * of them are due, then go in one post with the burst's. A post's fixed
 * cost was most of what a burst of one frame (a ping-pong's) paid to
 * repost. The slots keep their new mbufs meanwhile (ipoib_rx_chain()),
 * and an SRQ holds at least IPOIB_MIN_DESC WRs: a few fewer posted for a
 * while change nothing; a queue stopped with some waiting releases them
 * with the ring (ipoib_rxq_stop()). wr has room for the waiting ones.
 */
static __rte_always_inline void
ipoib_rx_srq_repost(struct ipoib_rxq *rxq, struct ipoib_recv_wr *wr,
		    uint16_t nwr)
{
	uint16_t w = rxq->srq_wait_n, j;

	if (likely(w == 0 && nwr >= IPOIB_RX_SRQ_BATCH)) {
		rxq->post_srq_recv(rxq->srq, wr, nwr);
		return;
	}
	if (w + nwr < IPOIB_RX_SRQ_BATCH) {
		for (j = 0; j < nwr; j++)
			rxq->srq_wait[w + j] = wr[j].wr_id;
		rxq->srq_wait_n = w + nwr;
		return;
	}
	for (j = 0; j < w; j++)
		ipoib_rx_ring_fill_wr(&rxq->srq_ring,
				      ipoib_wr_slot(rxq->srq_wait[j]),
				      rxq->srq_wait[j], &wr[nwr + j]);
	rxq->srq_wait_n = 0;
	rxq->post_srq_recv(rxq->srq, wr, nwr + w);
}

/* A completion that is not ours to deliver: flush, error, stray. */
static __rte_always_inline bool
ipoib_rx_not_data(struct ipoib_rxq *rxq, struct ipoib_rx_ring *ring,
		  const struct ipoib_wc *wc, uint32_t slot)
{
	if (likely(wc->status == IPOIB_WC_SUCCESS))
		return false;
	if (wc->status == IPOIB_WC_WR_FLUSH_ERR) {
		IPOIB_STAT_INC(rxq->stats.flushed);
		/*
		 * The control thread, in 1 ms rounds while a connection
		 * drains, sees the last: a wake from here was a system call
		 * on the lcore (and its core, when the thread shares it).
		 */
		ipoib_rx_ring_drop_slot(ring, slot);
		return true;
	}
	IPOIB_STAT_INC(rxq->stats.drop_len);
	return false;
}

static __rte_always_inline uint16_t
ipoib_rx_burst_poll(struct ipoib_rxq *rxq, struct rte_mbuf **pkts,
		    uint16_t n, const bool srq)
{
	/* and, in SRQ mode, the reposts that waited (ipoib_rx_srq_repost()) */
	struct ipoib_recv_wr wr[IPOIB_BURST + IPOIB_RX_SRQ_BATCH - 1];
	struct ipoib_wc wc[IPOIB_BURST];
	struct ipoib_rx_acct acct = {
		.ptype_mask = __atomic_load_n(&rxq->priv->ptype_mask,
					      __ATOMIC_RELAXED),
		.ctr = rxq->peer_ctr,
	};
	struct rte_mbuf *fresh_m[IPOIB_RX_FRESH];
	struct ipoib_rx_fresh fresh = { .m = fresh_m };
	struct ipoib_conn *run = NULL;	/* non-SRQ: whose pool fresh is of */
	/*
	 * The ring's geometry, read once per burst (SRQ) or run of one
	 * connection's completions (non-SRQ): through the ring itself,
	 * every store to an mbuf or a header could have changed it, so it
	 * was loaded again for each packet; these copies' addresses go to
	 * no call that is not inlined. What changes a ring goes to the
	 * ring itself (ipoib_rx_not_data()).
	 */
	struct ipoib_rx_ring srq_ring, run_ring = { 0 };
	uint16_t nb = 0, nwr = 0, posted = 0, k, i, run1;

	/* frames in it are rare: one look at its two tails, no dequeue */
	if (rxq->loopback != NULL && unlikely(!rte_ring_empty(rxq->loopback))) {
		nb = (uint16_t)rte_ring_dequeue_burst(rxq->loopback,
						      (void **)pkts, n, NULL);
		/* made by another thread (ipoib_tx_too_long()) */
		if (unlikely(nb > 0))
			ipoib_ring_take(&rxq->priv->loopback_gen);
	}
	if (rxq->ud_cq != NULL && nb < n)
		nb += ipoib_rx_ud(rxq, pkts + nb, n - nb, &acct);
	k = rxq->poll_cq(rxq->cq, wc,
			 RTE_MIN((uint16_t)(n - nb), (uint16_t)IPOIB_BURST));
	run1 = ipoib_rx_prefetch(rxq, srq ? &rxq->srq_ring : NULL, wc, k, !srq);
	/* SRQ buffers come from one pool: take the burst's at once */
	if (srq && k > 0) {
		ipoib_rx_ring_view(&srq_ring, &rxq->srq_ring);
		ipoib_rx_stash_take(&fresh, rxq,
				    ipoib_rx_need(&srq_ring, wc, k));
	}
	for (i = 0; i < k; i++) {
		uint32_t slot = ipoib_wr_slot(wc[i].wr_id);
		struct ipoib_conn *owner, *conn;
		struct ipoib_rx_ring *ring;
		struct rte_mbuf *m;

		/*
		 * In SRQ mode buffers are the queue's; else the connection's.
		 * Kind, connection and slot are checked before they index.
		 */
		if (srq) {
			if (unlikely(ipoib_wr_kind(wc[i].wr_id) !=
				     IPOIB_WR_SRQ)) {
				ipoib_rx_stray(rxq, wc[i].wr_id);
				continue;
			}
			ring = &srq_ring;
			owner = NULL;
		} else {
			uint32_t ci = ipoib_wr_conn(wc[i].wr_id);

			if (unlikely(ipoib_wr_kind(wc[i].wr_id) !=
				     IPOIB_WR_CONN || ci >= rxq->nr_conns)) {
				ipoib_rx_stray(rxq, wc[i].wr_id);
				continue;
			}
			owner = ipoib_rx_conn(rxq, ci);
			/* drained before it goes: cannot be, but never trust */
			if (unlikely(owner == NULL ||
				     ipoib_conn_qpn(owner) != wc[i].qp_num)) {
				IPOIB_STAT_INC(rxq->stats.bad_wr_id);
				continue;
			}
			/* a run of its completions: their mbufs at once */
			if (owner != run) {
				ipoib_rx_repost(rxq, wr, run, &posted, nwr);
				ipoib_rx_fresh_return(&fresh);
				ipoib_rx_ring_view(&run_ring, &owner->ring);
				ipoib_rx_fresh_take(&fresh, run_ring.pool, i == 0 ?
					ipoib_rx_need(&run_ring, wc, run1) :
					ipoib_rx_run_need(&run_ring, &wc[i],
							  k - i));
				run = owner;
			}
			ring = &run_ring;
		}
		if (unlikely(slot >= ring->nb_slots)) {
			IPOIB_STAT_INC(rxq->stats.bad_wr_id);
			continue;
		}
		if (unlikely(ipoib_rx_not_data(rxq, srq ? &rxq->srq_ring :
					       &owner->ring, &wc[i], slot)))
			continue;
		conn = owner;
		if (srq) {
			conn = likely(wc[i].qp_context < rxq->nr_conns) ?
			       ipoib_rx_conn(rxq, wc[i].qp_context) : NULL;
			/* received before its QP went, its slot reused since */
			if (unlikely(conn != NULL &&
				     ipoib_conn_qpn(conn) != wc[i].qp_num))
				conn = NULL;
		}
		m = NULL;
		if (likely(wc[i].status == IPOIB_WC_SUCCESS))
			m = ipoib_rx_chain(rxq, ring, slot, wc[i].byte_len, 0,
					   &fresh);
		ipoib_rx_ring_fill_wr(ring, slot, wc[i].wr_id, &wr[nwr++]);
		if (unlikely(m == NULL))
			continue;
		if (unlikely(conn == NULL || conn->peer == NULL)) {
			IPOIB_STAT_INC(rxq->stats.drop_unknown_conn);
			rte_pktmbuf_free(m);
			continue;
		}
		if (ipoib_rx_deliver(rxq, m, &conn->peer->hw, conn->peer,
				     NULL, false, &acct)) {
			acct.rc_pkts++;
			acct.rc_bytes += m->pkt_len;
			pkts[nb++] = m;
		}
	}
	if (srq)
		ipoib_rx_stash_return(&fresh, rxq);
	else
		ipoib_rx_fresh_return(&fresh);
	if (srq) {
		if (nwr > 0)
			ipoib_rx_srq_repost(rxq, wr, nwr);
	} else {
		ipoib_rx_repost(rxq, wr, run, &posted, nwr);
	}
	ipoib_rx_acct_flush(&acct);
	ipoib_rx_acct_store(rxq, &acct);
	return nb;
}

/*
 * The queue reads connections and peers only inside a burst, which
 * reports a quiescent state to the control thread's RCU as it leaves; a
 * queue nobody polls any more is found idle (ipoib_rcu.h), so it never
 * holds a teardown back.
 *
 * A torn-down connection's posted buffers come back as flush completions,
 * a ring's worth at once, which give the application nothing: a burst
 * that found some and has room polls again, up to IPOIB_RX_FLUSH_POLLS
 * times in all, so that a teardown (and the pool it frees for the next
 * connection) does not wait a ring's worth of the application's polls.
 */
#define IPOIB_RX_FLUSH_POLLS	64

static __rte_always_inline uint16_t
ipoib_rx_burst_tmpl(struct ipoib_rxq *rxq, struct rte_mbuf **pkts,
		    uint16_t n, const bool srq)
{
	struct rte_rcu_qsbr *qsbr = rxq->qsbr;
	uint64_t flushed = rxq->stats.flushed;
	unsigned int polls = 1;
	uint16_t nb;

	/* rte_eth_dev_rx_queue_stop(): what arrives waits */
	if (unlikely(__atomic_load_n(&rxq->stopped, __ATOMIC_RELAXED)))
		return 0;
	ipoib_rcu_enter(qsbr, &rxq->rcu);
	nb = ipoib_rx_burst_poll(rxq, pkts, n, srq);
	while (unlikely(rxq->stats.flushed != flushed) && nb < n &&
	       polls++ < IPOIB_RX_FLUSH_POLLS) {
		flushed = rxq->stats.flushed;
		nb += ipoib_rx_burst_poll(rxq, pkts + nb, n - nb, srq);
	}
	ipoib_rcu_leave(qsbr, &rxq->rcu);
	return nb;
}

#endif /* IPOIB_RX_H */
