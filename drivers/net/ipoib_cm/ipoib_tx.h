/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_TX_H
#define IPOIB_TX_H

#include "ipoib_cm.h"

#define IPOIB_TX_BURST		32	/* frames taken per call */
#define IPOIB_TX_MAX		(IPOIB_TX_BURST + 64)	/* with fragments */
#define IPOIB_TX_PENDING	128	/* RC frames waiting on RNR */

struct ipoib_tx_pending {
	struct ipoib_peer *peer;
	struct ipoib_hca_qp *qp;
	struct rte_mbuf *m;
};

void ipoib_tx_backlog_add(struct ipoib_txq *txq, struct ipoib_peer *peer,
			  struct ipoib_hca_qp *qp, struct rte_mbuf *m);
void ipoib_tx_backlog_flush(struct ipoib_txq *txq);
uint16_t ipoib_tx_backlog_room(const struct ipoib_txq *txq);
void ipoib_tx_backlog_purge(struct ipoib_txq *txq);

#endif /* IPOIB_TX_H */
