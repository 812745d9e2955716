/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_XSTATS_H
#define IPOIB_XSTATS_H

#include "ipoib_cm.h"

/* The connection table at a glance (xstats, telemetry). */
struct ipoib_gauges {
	uint64_t tx_connected;	/* peers we send to over RC */
	uint64_t tx_connecting;
	uint64_t rx;		/* passive connections */
	uint64_t peers;
	uint64_t spilled;
	uint64_t ud_only;
	uint64_t conns;		/* all connections, any state */
};

/* Called with ctrl_lock held. */
void ipoib_gauges(struct ipoib_priv *priv, struct ipoib_gauges *g);

int ipoib_xstats_get_names(struct rte_eth_dev *dev,
			   struct rte_eth_xstat_name *names, unsigned int n);
int ipoib_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xs,
		     unsigned int n);
int ipoib_xstats_get_by_id(struct rte_eth_dev *dev, const uint64_t *ids,
			   uint64_t *values, unsigned int n);
int ipoib_xstats_reset(struct rte_eth_dev *dev);

#endif /* IPOIB_XSTATS_H */
