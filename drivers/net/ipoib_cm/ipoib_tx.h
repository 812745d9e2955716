/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_TX_H
#define IPOIB_TX_H

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

#endif /* IPOIB_TX_H */
