/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_LPBK_H
#define IPOIB_LPBK_H

#include <ethdev_driver.h>

/* dev_configure: lpbk_mode 0 or 1. */
int ipoib_lpbk_check(struct rte_eth_dev *dev);
/* dev_start and dev_stop (bursts stopped): the address of the port. */
int ipoib_lpbk_start(struct rte_eth_dev *dev);
void ipoib_lpbk_stop(struct rte_eth_dev *dev);
/* The transmit burst of a port in loopback. */
uint16_t ipoib_tx_burst_lpbk(void *q, struct rte_mbuf **pkts, uint16_t n);

#endif /* IPOIB_LPBK_H */
