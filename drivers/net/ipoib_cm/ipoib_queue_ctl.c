/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Queues started and stopped one by one while the port runs
 * (rte_eth_dev_rx/tx_queue_start/stop, rx/tx_deferred_start). A stopped
 * queue's bursts return 0 and touch nothing:
 *
 * - rx: what arrives for the queue waits in its completion queues, in
 *   the receive buffers already posted; once they are used, RC senders
 *   are refused (RNR) and UD frames for the queue are dropped by the
 *   fabric (hca_ud_no_wr_drops), as on an HCA whose receive queue is not
 *   replenished. Started again, the queue delivers what waited.
 * - tx: frames stay with the application (tx_burst returns 0).
 *
 * ethdev checks that the port is started and the queue exists.
 */

#include "ipoib_cm.h"
#include "ipoib_log.h"
#include "ipoib_queue_ctl.h"

static void
ipoib_rxq_set(struct rte_eth_dev *dev, uint16_t qid, bool stopped)
{
	struct ipoib_rxq *rxq = dev->data->rx_queues[qid];

	__atomic_store_n(&rxq->stopped, stopped, __ATOMIC_RELEASE);
	dev->data->rx_queue_state[qid] = stopped ?
		RTE_ETH_QUEUE_STATE_STOPPED : RTE_ETH_QUEUE_STATE_STARTED;
}

static void
ipoib_txq_set(struct rte_eth_dev *dev, uint16_t qid, bool stopped)
{
	struct ipoib_txq *txq = dev->data->tx_queues[qid];

	__atomic_store_n(&txq->stopped, stopped, __ATOMIC_RELEASE);
	dev->data->tx_queue_state[qid] = stopped ?
		RTE_ETH_QUEUE_STATE_STOPPED : RTE_ETH_QUEUE_STATE_STARTED;
}

int
ipoib_rx_queue_start(struct rte_eth_dev *dev, uint16_t qid)
{
	ipoib_rxq_set(dev, qid, false);
	IPOIB_LOG(DEBUG, "port %u: rx queue %u started", dev->data->port_id,
		  qid);
	return 0;
}

int
ipoib_rx_queue_stop(struct rte_eth_dev *dev, uint16_t qid)
{
	ipoib_rxq_set(dev, qid, true);
	IPOIB_LOG(DEBUG, "port %u: rx queue %u stopped", dev->data->port_id,
		  qid);
	return 0;
}

int
ipoib_tx_queue_start(struct rte_eth_dev *dev, uint16_t qid)
{
	ipoib_txq_set(dev, qid, false);
	return 0;
}

int
ipoib_tx_queue_stop(struct rte_eth_dev *dev, uint16_t qid)
{
	ipoib_txq_set(dev, qid, true);
	return 0;
}

void
ipoib_rxq_set_deferred(struct rte_eth_dev *dev, uint16_t qid, bool deferred)
{
	struct ipoib_rxq *rxq = dev->data->rx_queues[qid];

	rxq->deferred = deferred;
}

void
ipoib_txq_set_deferred(struct rte_eth_dev *dev, uint16_t qid, bool deferred)
{
	struct ipoib_txq *txq = dev->data->tx_queues[qid];

	txq->deferred = deferred;
}

void
ipoib_queues_start_state(struct rte_eth_dev *dev)
{
	uint16_t q;

	for (q = 0; q < dev->data->nb_rx_queues; q++)
		ipoib_rxq_set(dev, q, ((struct ipoib_rxq *)
				       dev->data->rx_queues[q])->deferred);
	for (q = 0; q < dev->data->nb_tx_queues; q++)
		ipoib_txq_set(dev, q, ((struct ipoib_txq *)
				       dev->data->tx_queues[q])->deferred);
}
