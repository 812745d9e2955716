/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Transmit queues: their memory (the run scratch of ipoib_tx.c, the
 * fragment pools), made at setup and freed at release. The control
 * thread's own queue (ipoib_tx_held.c) is made the same way.
 */

#include <errno.h>
#include <stdio.h>

#include <rte_mbuf.h>

#include "ipoib_cm.h"
#include "ipoib_mem.h"
#include "ipoib_tx.h"
#include "ipoib_tx_held.h"

#define IPOIB_FRAG_POOL		1023	/* mbufs of each fragment pool */

void
ipoib_txq_free(struct ipoib_priv *priv, struct ipoib_txq *txq)
{
	struct ipoib_mem_mark m;

	ipoib_mem_begin(&m);
	rte_mempool_free(txq->frag_direct);
	rte_mempool_free(txq->frag_indirect);
	ipoib_mem_end(&m, &priv->acct, IPOIB_MEM_MEMPOOLS);
	ipoib_mem_free(&priv->acct, IPOIB_MEM_QUEUES, txq->frag_run);
	ipoib_mem_free(&priv->acct, IPOIB_MEM_QUEUES, txq->run);
	ipoib_mem_free(&priv->acct, IPOIB_MEM_QUEUES, txq);
}

struct ipoib_txq *
ipoib_txq_new(struct ipoib_priv *priv, uint16_t qid, int socket)
{
	struct ipoib_txq *txq;

	/* read with every UD send: in the burst's first cache line */
	RTE_BUILD_BUG_ON(offsetof(struct ipoib_txq, ud_qkey) +
			 sizeof(txq->ud_qkey) > RTE_CACHE_LINE_SIZE);
	txq = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_QUEUES, "ipoib_txq",
				sizeof(*txq), RTE_CACHE_LINE_SIZE, socket);
	if (txq == NULL)
		return NULL;
	txq->run = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_QUEUES, "ipoib_txr",
				     sizeof(*txq->run), RTE_CACHE_LINE_SIZE,
				     socket);
	txq->frag_run = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_QUEUES,
					  "ipoib_txf", sizeof(*txq->run),
					  RTE_CACHE_LINE_SIZE, socket);
	if (txq->run == NULL || txq->frag_run == NULL) {
		ipoib_txq_free(priv, txq);
		return NULL;
	}
	txq->priv = priv;
	txq->queue_id = qid;
	txq->rcu.id = IPOIB_MAX_QUEUES + qid;
	return txq;
}

int
ipoib_txq_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		unsigned int socket)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	char name[RTE_MEMPOOL_NAMESIZE];
	struct ipoib_mem_mark m;
	struct ipoib_txq *txq;

	ipoib_txq_release(dev, qid);
	txq = ipoib_txq_new(priv, qid, (int)socket);
	if (txq == NULL)
		return -ENOMEM;
	txq->nb_desc = nb_desc;
	ipoib_mem_begin(&m);
	snprintf(name, sizeof(name), "ipfd_%u_%u", dev->data->port_id, qid);
	txq->frag_direct = rte_pktmbuf_pool_create(name, IPOIB_FRAG_POOL, 32,
						   0, RTE_MBUF_DEFAULT_BUF_SIZE,
						   (int)socket);
	snprintf(name, sizeof(name), "ipfi_%u_%u", dev->data->port_id, qid);
	txq->frag_indirect = rte_pktmbuf_pool_create(name, IPOIB_FRAG_POOL,
						     32, 0, 0, (int)socket);
	ipoib_mem_end(&m, &priv->acct, IPOIB_MEM_MEMPOOLS);
	if (txq->frag_direct == NULL || txq->frag_indirect == NULL) {
		ipoib_txq_free(priv, txq);
		return -ENOMEM;
	}
	dev->data->tx_queues[qid] = txq;
	return 0;
}

void
ipoib_txq_release(struct rte_eth_dev *dev, uint16_t qid)
{
	struct ipoib_txq *txq = dev->data->tx_queues[qid];

	if (txq == NULL)
		return;
	ipoib_txq_free(txq->priv, txq);
	dev->data->tx_queues[qid] = NULL;
}
