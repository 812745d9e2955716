/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_TX_H
#define IPOIB_TX_H

#include "ipoib_cm.h"

#define IPOIB_TX_BURST		32	/* frames taken per call */

/* Drop a frame, counted; a frame ipoib_eth_encap() refused with err. */
void ipoib_tx_drop(struct rte_mbuf *m, uint64_t *counter);
void ipoib_tx_drop_encap(struct ipoib_txq *txq, struct rte_mbuf *m, int err);

#endif /* IPOIB_TX_H */
