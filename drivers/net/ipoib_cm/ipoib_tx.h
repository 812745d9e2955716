/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_TX_H
#define IPOIB_TX_H

#include <rte_ip.h>

#include "ipoib_cm.h"

#define IPOIB_TX_BURST		32	/* frames taken per call */

/*
 * A run of frames for one QP (ipoib_tx.c): the burst takes the common
 * frame encapsulated, ipoib_tx_flush() the others just before it posts.
 */
struct ipoib_tx_run {
	struct ipoib_hca_qp *qp;
	bool rc;
	uint16_t n;
	uint32_t rewritten;	/* bit i: frame i cannot be given back */
	uint32_t encapped;	/* bit i: frame i taken, encapsulated */
	struct ipoib_send_wr wr[IPOIB_TX_BURST];
	struct ipoib_peer *peer[IPOIB_TX_BURST];
	uint32_t len[IPOIB_TX_BURST];	/* Ethernet frame bytes */
	uint8_t saved[IPOIB_TX_BURST][IPOIB_HDR_LEN];	/* for undo */
};

/* Drop a frame, counted; a frame ipoib_eth_encap() refused with err. */
void ipoib_tx_drop(struct rte_mbuf *m, uint64_t *counter);
void ipoib_tx_drop_encap(struct ipoib_txq *txq, struct rte_mbuf *m, int err);

/*
 * The common frame: unicast IPv4, or IPv6 that is not ICMPv6 (ND goes to
 * the full emulation). Its Ethernet header is in the first segment.
 */
static __rte_always_inline bool
ipoib_tx_fast_type(const struct rte_mbuf *m, const struct rte_ether_hdr *eth)
{
	return eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	       (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6) &&
		m->data_len >= sizeof(*eth) + sizeof(struct rte_ipv6_hdr) &&
		((const struct rte_ipv6_hdr *)(eth + 1))->proto !=
		IPPROTO_ICMPV6);
}

/*
 * A common frame in an mbuf of our own: its 14-byte Ethernet header
 * becomes the 4-byte IPoIB one, which only rewrites its last 4 bytes.
 */
static __rte_always_inline bool
ipoib_tx_fast_hdr(struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	/* where the new data starts: from eth, not data_off read again */
	struct ipoib_hdr *h = (struct ipoib_hdr *)(void *)
		((uint8_t *)eth + RTE_ETHER_HDR_LEN - IPOIB_HDR_LEN);
	rte_be16_t type = eth->ether_type;

	if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)
		return false;
	m->data_off += RTE_ETHER_HDR_LEN - IPOIB_HDR_LEN;
	m->data_len -= RTE_ETHER_HDR_LEN - IPOIB_HDR_LEN;
	m->pkt_len -= RTE_ETHER_HDR_LEN - IPOIB_HDR_LEN;
	h->proto = type;
	h->reserved = 0;
	return true;
}

static __rte_always_inline bool
ipoib_tx_fast_encap(struct rte_mbuf *m)
{
	return m->data_len >= RTE_ETHER_HDR_LEN &&
	       ipoib_tx_fast_type(m, rte_pktmbuf_mtod(m,
						const struct rte_ether_hdr *)) &&
	       ipoib_tx_fast_hdr(m);
}

#endif /* IPOIB_TX_H */
