/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_RX_ACCT_H
#define IPOIB_RX_ACCT_H

/* A receive burst's counting (ipoib_rx.h): the queue's and each peer's. */

#include <stdint.h>

#include <rte_common.h>

#include "ipoib_cm.h"
#include "ipoib_peer.h"

/*
 * What a burst delivered: the queue's counters, summed here and stored
 * once at the end of the burst (ipoib_rx_acct_store()), and the per-peer
 * counters of the current run of packets from the same peer, added once
 * per run. A burst delivers at most 2 x IPOIB_BURST packets of at most
 * 64 KiB: the byte sums fit in 32 bits. With them, the packet types the
 * burst reports: rte_eth_dev_set_ptypes() may change them at any time,
 * a burst reads them once.
 */
struct ipoib_rx_acct {
	uint32_t ptype_mask;	/* read once per burst */
	struct ipoib_peer_ctr *const *ctr;	/* the queue's */
	struct ipoib_peer *peer;
	uint32_t pkts;
	uint32_t bytes;
	uint32_t rc_pkts;
	uint32_t rc_bytes;
	uint32_t ud_pkts;
	uint32_t ud_bytes;
};

static __rte_always_inline void
ipoib_rx_acct_flush(struct ipoib_rx_acct *a)
{
	struct ipoib_peer_ctr *c;

	if (a->peer == NULL)
		return;
	c = ipoib_peer_ctr_at(a->ctr, a->peer->index);
	IPOIB_STAT_ADD(c->pkts, a->pkts);
	IPOIB_STAT_ADD(c->bytes, a->bytes);
	a->peer = NULL;
	a->pkts = a->bytes = 0;
}

static __rte_always_inline void
ipoib_rx_acct_add(struct ipoib_rx_acct *a, struct ipoib_peer *peer,
		  uint32_t len)
{
	if (unlikely(peer != a->peer)) {
		ipoib_rx_acct_flush(a);
		a->peer = peer;
	}
	a->pkts++;
	a->bytes += len;
}

/* The queue's counters of a burst: packets and bytes are RC + UD. */
static __rte_always_inline void
ipoib_rx_acct_store(struct ipoib_rxq *rxq, const struct ipoib_rx_acct *a)
{
	if (a->rc_pkts + a->ud_pkts == 0)
		return;
	IPOIB_STAT_ADD(rxq->stats.packets, a->rc_pkts + a->ud_pkts);
	IPOIB_STAT_ADD(rxq->stats.bytes, a->rc_bytes + a->ud_bytes);
	if (a->rc_pkts != 0) {
		IPOIB_STAT_ADD(rxq->stats.rc_packets, a->rc_pkts);
		IPOIB_STAT_ADD(rxq->stats.rc_bytes, a->rc_bytes);
	}
	if (a->ud_pkts != 0) {
		IPOIB_STAT_ADD(rxq->stats.ud_packets, a->ud_pkts);
		IPOIB_STAT_ADD(rxq->stats.ud_bytes, a->ud_bytes);
	}
}

#endif /* IPOIB_RX_ACCT_H */
