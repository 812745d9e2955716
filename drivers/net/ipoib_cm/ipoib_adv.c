/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The connected-mode flag we advertise, peer by peer (ipoib_adv.h).
 *
 * - The application's ARP and ND carry our address with the flag to a
 *   peer that has a passive connection with us, or while the table has
 *   room; never to a peer we refused for lack of room. A group hears
 *   the flag only while there is room and no peer has been refused.
 * - A peer whose REQ we refuse for lack of room (REJ 1: table full, REJ
 *   3: mem_budget) is told at once, from here: an unsolicited ARP reply
 *   and an unsolicited NA with the override flag, to its UD QPN, naming
 *   our address without the flag. The ARP reply is in the gratuitous
 *   form (sender IP = target IP = ours, target address = sender's),
 *   which Linux's arp_process() takes whatever the neighbour's locktime
 *   (arp_is_garp(); other ARP within locktime, 1 s by default, of the
 *   last update is ignored); the NA is taken at once (ndisc_recv_na()
 *   has no locktime). The peer's next REQ, if any comes, gets the same
 *   again, at most once per IPOIB_ADV_GAP_NS.
 * - A refused peer keeps hearing no flag while it is in the peer table,
 *   even when room comes back: re-offering it would start the refuse,
 *   drop and retry cycle again whenever the room goes (each REQ Linux
 *   makes costs it up to 3 held packets and the rest until the REJ).
 *   It gets full service over UD; our own sends to it still move to RC
 *   when its turn comes (ipoib_spill.c).
 */

#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "ipoib_adv.h"
#include "ipoib_cm.h"
#include "ipoib_compat.h"
#include "ipoib_log.h"
#include "ipoib_peer.h"

bool
ipoib_adv_rc(void *arg, const struct rte_ether_addr *dst)
{
	struct ipoib_priv *priv = arg;
	struct ipoib_peer *peer = NULL;
	bool rc;

	if (dst != NULL)
		peer = ipoib_peer_by_mac(priv, dst);
	if (peer != NULL && __atomic_load_n(&peer->adv_ud, __ATOMIC_RELAXED))
		rc = false;
	else if (peer != NULL &&
		 __atomic_load_n(&peer->rx, __ATOMIC_RELAXED) != NULL)
		rc = true;
	else
		rc = !__atomic_load_n(&priv->adv.full, __ATOMIC_RELAXED) &&
		     (dst != NULL ||
		      !__atomic_load_n(&priv->adv.withdrawn, __ATOMIC_RELAXED));
	if (!rc)
		__atomic_fetch_add(&priv->adv.tx_no_rc, 1, __ATOMIC_RELAXED);
	return rc;
}

void
ipoib_adv_own_ip(void *arg, const uint8_t *ip, unsigned int len)
{
	struct ipoib_priv *priv = arg;
	uint32_t w[4];
	unsigned int i;

	if (len == sizeof(w[0])) {
		memcpy(&w[0], ip, sizeof(w[0]));
		__atomic_store_n(&priv->adv.ipv4, w[0], __ATOMIC_RELAXED);
		return;
	}
	if (len != sizeof(w))
		return;
	/* words apart: an address changing meanwhile may be seen torn */
	memcpy(w, ip, sizeof(w));
	for (i = 0; i < RTE_DIM(w); i++)
		__atomic_store_n(&priv->adv.ipv6[i], w[i], __ATOMIC_RELAXED);
	__atomic_store_n(&priv->adv.has_ipv6, 1, __ATOMIC_RELEASE);
}

void
ipoib_adv_room(struct ipoib_priv *priv, bool room)
{
	__atomic_store_n(&priv->adv.full, priv->stopping || !room,
			 __ATOMIC_RELAXED);
}

/* Send msg (len bytes of EtherType type) to peer's UD QPN. */
static int
adv_send(struct ipoib_priv *priv, struct ipoib_peer *peer,
	 uint16_t type, const void *msg, uint16_t len)
{
	struct rte_eth_dev_data *data = priv->eth_dev->data;
	struct ipoib_txq *txq = data->nb_tx_queues > 0 ?
				data->tx_queues[0] : NULL;
	struct ipoib_hdr h = {
		.proto = rte_cpu_to_be_16(type),
	};
	struct ipoib_send_wr wr;
	struct rte_mbuf *m;
	uint8_t *p;

	if (txq == NULL)
		return -ENODEV;
	/* a peer a REQ just taught has none yet: we are where it is made */
	if (ipoib_peer_ah(priv, peer) == NULL)
		return -EHOSTUNREACH;
	/* a control thread has no mempool cache: the pool's ring serves */
	m = rte_pktmbuf_alloc(txq->frag_direct);
	if (m == NULL)
		return -ENOBUFS;
	p = (uint8_t *)rte_pktmbuf_append(m, sizeof(h) + len);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return -ENOSPC;
	}
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), msg, len);
	wr.m = m;
	wr.ah = peer->ah;
	wr.remote_qpn = peer->qpn;
	wr.remote_qkey = priv->qkey;
	/* post_send may be called from several threads on one QP */
	if (priv->ops->post_send(txq->ud_qp, &wr, 1) != 1) {
		rte_pktmbuf_free(m);
		return -EAGAIN;
	}
	return 0;
}

/* ARP reply, gratuitous form: sender IP = target IP = ours. */
static int
adv_send_arp(struct ipoib_priv *priv, struct ipoib_peer *peer,
	     const struct ipoib_hwaddr *hw, rte_be32_t ip)
{
	struct ipoib_arp a = {
		.hw_type = RTE_BE16(IPOIB_ARPHRD_INFINIBAND),
		.proto = RTE_BE16(RTE_ETHER_TYPE_IPV4),
		.hlen = IPOIB_HWADDR_LEN,
		.plen = 4,
		.op = RTE_BE16(RTE_ARP_OP_REPLY),
	};

	a.sender_hw = *hw;
	a.sender_ip = ip;
	a.target_hw = *hw;	/* arp_is_garp(): a reply names itself */
	a.target_ip = ip;
	return adv_send(priv, peer, RTE_ETHER_TYPE_ARP, &a, sizeof(a));
}

/* Unsolicited NA to all-nodes, override set (RFC 4861 s7.2.6). */
static int
adv_send_na(struct ipoib_priv *priv, struct ipoib_peer *peer,
	    const struct ipoib_hwaddr *hw, const uint8_t *ip)
{
	static const uint8_t all_nodes[16] = IPOIB_IPV6_ALL_NODES;
	uint8_t msg[sizeof(struct rte_ipv6_hdr) + IPOIB_ND_NA_LEN +
		    IPOIB_ND_OPT_IB_LEN];
	uint8_t *na = msg + sizeof(struct rte_ipv6_hdr);
	uint8_t *opt = na + IPOIB_ND_NA_LEN;
	struct rte_ipv6_hdr ip6;
	uint16_t ck;

	memset(&ip6, 0, sizeof(ip6));
	ip6.vtc_flow = RTE_BE32(6u << 28);
	ip6.payload_len = rte_cpu_to_be_16(IPOIB_ND_NA_LEN +
					   IPOIB_ND_OPT_IB_LEN);
	ip6.proto = IPPROTO_ICMPV6;
	ip6.hop_limits = IPOIB_ND_HOP_LIMIT;
	memcpy(IPOIB_IPV6_SRC(&ip6), ip, 16);
	memcpy(IPOIB_IPV6_DST(&ip6), all_nodes, 16);
	memset(na, 0, IPOIB_ND_NA_LEN + IPOIB_ND_OPT_IB_LEN);
	na[0] = IPOIB_ND_NEIGH_ADV;
	na[4] = IPOIB_ND_NA_F_OVERRIDE;
	memcpy(na + 8, ip, 16);
	opt[0] = IPOIB_ND_OPT_TLLA;
	opt[1] = IPOIB_ND_OPT_IB_LEN / 8;
	memcpy(opt + 2 + IPOIB_ND_OPT_IB_PAD, hw, IPOIB_HWADDR_LEN);
	ck = rte_ipv6_udptcp_cksum(&ip6, na);
	memcpy(na + 2, &ck, sizeof(ck));
	memcpy(msg, &ip6, sizeof(ip6));
	return adv_send(priv, peer, RTE_ETHER_TYPE_IPV6, msg, sizeof(msg));
}

void
ipoib_adv_refused(struct ipoib_priv *priv, struct ipoib_peer *peer)
{
	struct ipoib_hwaddr hw = priv->eth.port_hw;
	uint64_t now = ipoib_now_ns();
	rte_be32_t ip4;
	uint32_t w[4];
	unsigned int i;
	int told = 0;

	if (!(hw.bytes[0] & IPOIB_HWADDR_F_RC))
		return;		/* the flag is never offered */
	__atomic_store_n(&peer->adv_ud, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&priv->adv.withdrawn, 1, __ATOMIC_RELAXED);
	if (peer->adv_ns != 0 && now - peer->adv_ns < IPOIB_ADV_GAP_NS)
		return;
	peer->adv_ns = now;
	hw.bytes[0] &= ~IPOIB_HWADDR_F_RC;
	ip4 = __atomic_load_n(&priv->adv.ipv4, __ATOMIC_RELAXED);
	if (ip4 != 0 && adv_send_arp(priv, peer, &hw, ip4) == 0) {
		priv->cstats.adv_no_rc++;
		told++;
	}
	if (__atomic_load_n(&priv->adv.has_ipv6, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < RTE_DIM(w); i++)
			w[i] = __atomic_load_n(&priv->adv.ipv6[i],
					       __ATOMIC_RELAXED);
		if (adv_send_na(priv, peer, &hw, (const uint8_t *)w) == 0) {
			priv->cstats.adv_no_rc++;
			told++;
		}
	}
	if (told == 0) {
		/* it learns when it next resolves us (ipoib_cm.rst) */
		priv->cstats.adv_untold++;
		IPOIB_LOG(DEBUG, "peer %u refused: no address of ours known "
			  "yet to tell it, or no buffer", peer->index);
	}
}
