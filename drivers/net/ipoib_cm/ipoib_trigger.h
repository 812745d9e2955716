/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_TRIGGER_H
#define IPOIB_TRIGGER_H

#include <ethdev_driver.h>

int ipoib_dev_start(struct rte_eth_dev *dev);
int ipoib_dev_stop(struct rte_eth_dev *dev);
void ipoib_set_stopped_bursts(struct rte_eth_dev *dev);

#endif /* IPOIB_TRIGGER_H */
