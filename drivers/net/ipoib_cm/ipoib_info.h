/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_INFO_H
#define IPOIB_INFO_H

#include <ethdev_driver.h>

/*
 * ipoib_info.c: operations that read only the port's shared data,
 * which secondary processes use too (ipoib_secondary.c).
 */
int ipoib_dev_infos_get(struct rte_eth_dev *dev,
			struct rte_eth_dev_info *info);
void ipoib_rxq_info_get(struct rte_eth_dev *dev, uint16_t qid,
			struct rte_eth_rxq_info *qinfo);
void ipoib_txq_info_get(struct rte_eth_dev *dev, uint16_t qid,
			struct rte_eth_txq_info *qinfo);

#endif /* IPOIB_INFO_H */
