/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * UD traffic spread by flow over the rx queues (ipoib_rss.c).
 */

#ifndef IPOIB_RSS_H
#define IPOIB_RSS_H

#include <stdint.h>

#include <ethdev_driver.h>

#include "ipoib_cm.h"

/* The hash types UD receive is spread by. */
#define IPOIB_RSS_HF	(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP)
/*
 * Port open, in the primary: priv->rss_offloads, what dev_info reports
 * (0: the transport cannot spread UD).
 */
void ipoib_rss_init(struct ipoib_priv *priv);
/*
 * dev_configure: the hash types and key asked for (rx_adv_conf.rss_conf;
 * no key: the default one). -EINVAL: a key of another length than
 * IPOIB_RSS_KEY_LEN.
 */
int ipoib_rss_configure(struct rte_eth_dev *dev);
/*
 * rte_eth_dev_rss_hash_update(): new types, and key if one is given; in
 * force at once if UD is spread now, else from the next start.
 */
int ipoib_rss_hash_update(struct rte_eth_dev *dev,
			  struct rte_eth_rss_conf *conf);
int ipoib_rss_hash_conf_get(struct rte_eth_dev *dev,
			    struct rte_eth_rss_conf *conf);
/*
 * dev_start, the rx queues started: with RSS asked for (mq_mode RSS, a
 * hash type we spread by) on more than one rx queue, queues 1.. get a
 * UD receive queue of their own and the UD QP spreads over them. Nothing
 * (0) when the transport cannot: UD arrives on queue 0, RC anywhere.
 */
int ipoib_rss_start(struct rte_eth_dev *dev, struct ipoib_priv *priv);
/* dev_stop (no burst runs), or a failed start: UD back to queue 0. */
void ipoib_rss_stop(struct rte_eth_dev *dev, struct ipoib_priv *priv);

#endif /* IPOIB_RSS_H */
