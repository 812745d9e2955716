/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_CM_H
#define IPOIB_CM_H

#include <stdint.h>

#include <ethdev_driver.h>
#include <rte_ether.h>
#include <rte_mempool.h>

#include "ipoib_devargs.h"

#define IPOIB_MAX_QUEUES	16
#define IPOIB_MIN_MTU		68
#define IPOIB_CM_MTU		65520	/* RFC 4755 connected-mode MTU */
#define IPOIB_MAX_DESC		4096
#define IPOIB_MIN_DESC		32

/* Per-queue counters: written only by the queue's lcore. */
struct ipoib_queue_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t errors;
	uint64_t nombuf;
};

struct ipoib_rxq {
	struct ipoib_priv *priv;
	struct rte_mempool *mp;
	uint16_t queue_id;
	uint16_t nb_desc;
	struct ipoib_queue_stats stats;
	struct ipoib_queue_stats stats_base;	/* snapshot at last reset */
} __rte_cache_aligned;

struct ipoib_txq {
	struct ipoib_priv *priv;
	uint16_t queue_id;
	uint16_t nb_desc;
	struct ipoib_queue_stats stats;
	struct ipoib_queue_stats stats_base;
} __rte_cache_aligned;

/* Port control state (dev_private). */
struct ipoib_priv {
	struct rte_eth_dev *eth_dev;
	struct ipoib_config cfg;
	struct rte_ether_addr mac;
	bool started;
};

#endif /* IPOIB_CM_H */
