/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Receive: what the bursts learn from a sender they do not know yet, out
 * of the inline template (ipoib_rx.h). On a real subnet unicast UD within
 * the subnet carries no GRH (Linux sends its ARP replies, unicast NA and
 * datagram-mode IP that way): the completion names the sender by SLID and
 * source QPN only, and its GID is learned from the ARP/ND message whose
 * sender address carries that QPN (RFC 4391 s9.1.1, the 20-byte address).
 */

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "ipoib_cm.h"
#include "ipoib_eth.h"
#include "ipoib_peer.h"
#include "ipoib_ptype.h"
#include "ipoib_rx.h"

struct ipoib_peer *
ipoib_rx_ud_stranger(struct ipoib_rxq *rxq, struct rte_mbuf *m,
		     const struct ipoib_wc *wc, uint32_t ptype_mask)
{
	static const uint8_t no_gid[IPOIB_GID_LEN];
	struct ipoib_priv *priv = rxq->priv;
	struct ipoib_peer *peer = NULL;
	struct ipoib_hwaddr unknown;
	struct ipoib_learn learn;
	struct rte_ether_hdr *eth;

	/* the Ethernet source is the taught peer's, set below */
	ipoib_hwaddr_set(&unknown, 0, wc->src_qp, no_gid);
	if (ipoib_eth_decap(m, &unknown, false, &priv->eth, &learn) < 0) {
		IPOIB_STAT_INC(rxq->stats.drop_malformed);
		rte_pktmbuf_free(m);
		return NULL;
	}
	if (learn.valid && ipoib_hwaddr_qpn(&learn.hw) == wc->src_qp)
		peer = ipoib_peer_learn_at(priv, &learn.hw, wc->slid,
					   wc->src_qp);
	if (peer == NULL) {
		IPOIB_STAT_INC(rxq->stats.drop_unknown_lid);
		rte_pktmbuf_free(m);
		return NULL;
	}
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	rte_ether_addr_copy(&peer->mac, &eth->src_addr);
	m->packet_type = ptype_mask != 0 ? ipoib_ptype_slow(m) & ptype_mask : 0;
	return peer;
}
