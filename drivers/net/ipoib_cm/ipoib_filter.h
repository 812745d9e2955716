/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_FILTER_H
#define IPOIB_FILTER_H

#include <ethdev_driver.h>

#include "ipoib_compat.h"

/* ipoib_filter.c: what the port receives, and as what */
int ipoib_promiscuous_enable(struct rte_eth_dev *dev);
int ipoib_promiscuous_disable(struct rte_eth_dev *dev);
int ipoib_mac_addr_set(struct rte_eth_dev *dev, struct rte_ether_addr *mac);
const uint32_t *ipoib_supported_ptypes(IPOIB_PTYPES_GET_PARAMS);
int ipoib_ptypes_set(struct rte_eth_dev *dev, uint32_t mask);

#endif /* IPOIB_FILTER_H */
