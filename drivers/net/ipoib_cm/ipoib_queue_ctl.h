/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_QUEUE_CTL_H
#define IPOIB_QUEUE_CTL_H

#include <ethdev_driver.h>

/* Queues started and stopped one by one, the port running. */
int ipoib_rx_queue_start(struct rte_eth_dev *dev, uint16_t qid);
int ipoib_rx_queue_stop(struct rte_eth_dev *dev, uint16_t qid);
int ipoib_tx_queue_start(struct rte_eth_dev *dev, uint16_t qid);
int ipoib_tx_queue_stop(struct rte_eth_dev *dev, uint16_t qid);
/* rx/tx_deferred_start of a queue's configuration */
void ipoib_rxq_set_deferred(struct rte_eth_dev *dev, uint16_t qid,
			    bool deferred);
void ipoib_txq_set_deferred(struct rte_eth_dev *dev, uint16_t qid,
			    bool deferred);
/* dev_start: each queue started unless it was set up deferred. */
void ipoib_queues_start_state(struct rte_eth_dev *dev);

#endif /* IPOIB_QUEUE_CTL_H */
