/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Start and stop: the receive mode is chosen here, once, and with it the
 * rx burst function; queues get their HCA resources; the control thread
 * runs between the two.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include "ipoib_cm.h"
#include "ipoib_conn.h"
#include "ipoib_link.h"
#include "ipoib_log.h"
#include "ipoib_lpbk.h"
#include "ipoib_queue_ctl.h"
#include "ipoib_rss.h"
#include "ipoib_rxq.h"
#include "ipoib_trigger.h"
#include "ipoib_tx.h"
#include "ipoib_tx_held.h"

#define IPOIB_LOOPBACK_RING	1024

static uint16_t
ipoib_rx_burst_stopped(void *q, struct rte_mbuf **pkts, uint16_t n)
{
	RTE_SET_USED(q);
	RTE_SET_USED(pkts);
	RTE_SET_USED(n);
	return 0;
}

static uint16_t
ipoib_tx_burst_stopped(void *q, struct rte_mbuf **pkts, uint16_t n)
{
	RTE_SET_USED(q);
	RTE_SET_USED(pkts);
	RTE_SET_USED(n);
	return 0;
}

void
ipoib_set_stopped_bursts(struct rte_eth_dev *dev)
{
	dev->rx_pkt_burst = ipoib_rx_burst_stopped;
	dev->tx_pkt_burst = ipoib_tx_burst_stopped;
}

/* srq=auto|on|off against what the HCA offers. */
static int
ipoib_choose_srq(struct ipoib_priv *priv)
{
	switch (priv->cfg.srq) {
	case IPOIB_SRQ_ON:
		if (!priv->attr.has_srq) {
			IPOIB_LOG(ERR, "srq=on but %s has no SRQ",
				  priv->attr.name);
			return -ENOTSUP;
		}
		priv->srq = true;
		return 0;
	case IPOIB_SRQ_OFF:
		priv->srq = false;
		return 0;
	default:
		priv->srq = priv->attr.has_srq;
		return 0;
	}
}

/* The connected-mode buffer follows the MTU; it may need scatter. */
static int
ipoib_check_buffers(struct rte_eth_dev *dev, struct ipoib_priv *priv)
{
	struct ipoib_rxq *rxq = dev->data->rx_queues[0];
	uint32_t seg = rte_pktmbuf_data_room_size(rxq->app_mp) -
		       RTE_PKTMBUF_HEADROOM;
	uint64_t offloads = dev->data->dev_conf.rxmode.offloads;
	uint32_t max_sge;

	priv->rc_buf = dev->data->mtu + IPOIB_HDR_LEN;
	if (priv->rc_buf > seg && !(offloads & RTE_ETH_RX_OFFLOAD_SCATTER)) {
		IPOIB_LOG(ERR, "MTU %u needs %u-byte receive buffers, more than "
			  "one %u-byte mbuf: enable RTE_ETH_RX_OFFLOAD_SCATTER "
			  "(testpmd: --enable-scatter)", dev->data->mtu,
			  priv->rc_buf, seg);
		return -EINVAL;
	}
	/* a receive WR scatters into no more than the HCA takes */
	max_sge = RTE_MIN((uint32_t)IPOIB_MAX_SGE, priv->srq ?
			  priv->attr.max_srq_sge : priv->attr.max_sge);
	if ((priv->rc_buf + seg - 1) / seg > max_sge) {
		IPOIB_LOG(ERR, "MTU %u in %u-byte mbufs needs more than %u "
			  "segments (what %s takes)", dev->data->mtu, seg,
			  max_sge, priv->attr.name);
		return -EINVAL;
	}
	return 0;
}

static int
ipoib_start_queues(struct rte_eth_dev *dev, struct ipoib_priv *priv)
{
	struct rte_eth_dev_data *data = dev->data;
	struct ipoib_rxq *rxq0 = data->rx_queues[0];
	uint16_t q;
	int ret;

	/* each queue's counters of each peer, kept until the port closes */
	for (q = 0; q < data->nb_rx_queues; q++)
		if (ipoib_peer_ctr_get(priv, IPOIB_PEER_CTR_RX, q) == NULL)
			return -ENOMEM;
	for (q = 0; q < data->nb_tx_queues; q++)
		if (ipoib_peer_ctr_get(priv, IPOIB_PEER_CTR_TX_RC, q) == NULL ||
		    ipoib_peer_ctr_get(priv, IPOIB_PEER_CTR_TX_UD, q) == NULL)
			return -ENOMEM;
	for (q = 0; q < data->nb_rx_queues; q++) {
		ret = ipoib_rxq_start(priv, data->rx_queues[q]);
		if (ret < 0)
			goto fail;
	}
	rxq0->ud_cq = priv->ud.cq;
	rxq0->ud_qp = priv->ud_qp;
	rxq0->ud = &priv->ud.ring;
	rxq0->loopback = priv->loopback;
	ret = ipoib_rss_start(dev, priv);
	if (ret < 0) {
		q = data->nb_rx_queues;
		goto fail;
	}
	for (q = 0; q < data->nb_tx_queues; q++) {
		struct ipoib_txq *txq = data->tx_queues[q];

		txq->post_send = priv->ops->post_send;
		txq->ud_qp = priv->ud_qp;
		txq->ud_qkey = priv->qkey;
		txq->last_peer = NULL;
		txq->peer_rc = priv->pt.ctr[IPOIB_PEER_CTR_TX_RC][q];
		txq->peer_ud = priv->pt.ctr[IPOIB_PEER_CTR_TX_UD][q];
	}
	ret = ipoib_tx_held_start(priv);
	if (ret < 0) {
		ipoib_rss_stop(dev, priv);
		q = data->nb_rx_queues;
		goto fail;
	}
	ipoib_rcu_readers_start(priv, data);
	return 0;
fail:
	while (q-- > 0)
		ipoib_rxq_stop(priv, data->rx_queues[q]);
	return ret;
}

/* A port can start once its transport is there and its queues are set up. */
static int
ipoib_check_ready(struct rte_eth_dev *dev, struct ipoib_priv *priv)
{
	uint16_t q;

	if (priv->hca == NULL || priv->fatal) {
		IPOIB_LOG(ERR, "port %u: the transport failed: reset the port "
			  "(rte_eth_dev_reset) first", dev->data->port_id);
		return -EIO;
	}
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		if (dev->data->rx_queues[q] == NULL)
			goto unset;
	for (q = 0; q < dev->data->nb_tx_queues; q++)
		if (dev->data->tx_queues[q] == NULL)
			goto unset;
	return 0;
unset:
	IPOIB_LOG(ERR, "port %u: queue %u is not set up", dev->data->port_id,
		  q);
	return -EINVAL;
}

int
ipoib_dev_start(struct rte_eth_dev *dev)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	uint16_t q;
	int ret;

	ret = ipoib_check_ready(dev, priv);
	if (ret == 0)
		ret = ipoib_choose_srq(priv);
	if (ret == 0)
		ret = ipoib_check_buffers(dev, priv);
	if (ret < 0)
		return ret;
	if (priv->loopback == NULL) {
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "iplb_%u", dev->data->port_id);
		priv->loopback = ipoib_ring_create(&priv->acct,
						   IPOIB_MEM_RINGS, name,
						   sizeof(void *),
						   IPOIB_LOOPBACK_RING,
						   RING_F_SC_DEQ);
		if (priv->loopback == NULL)
			return -ENOMEM;
	}
	if (priv->ud.ring.outstanding == 0) {
		ret = ipoib_rx_ring_post_all(priv->ops, &priv->ud.ring,
					     IPOIB_WR_UD, 0, priv->ud_qp);
		if (ret < 0)
			return ret;
	}
	ret = ipoib_start_queues(dev, priv);
	if (ret < 0)
		return ret;
	ret = ipoib_lpbk_start(dev);
	if (ret < 0)
		goto fail_queues;
	/* before the control thread, which reads and updates it */
	priv->ops->query_port(priv->hca, &priv->attr);
	priv->port_active = priv->attr.active;
	ret = ipoib_ctrl_start(priv);
	if (ret < 0)
		goto fail_lpbk;
	dev->rx_pkt_burst = priv->srq ? ipoib_rx_burst_srq :
					ipoib_rx_burst_nosrq;
	dev->rx_queue_count = priv->ops->cq_count != NULL ?
			      ipoib_rx_queue_count : NULL;
	dev->tx_pkt_burst = priv->lpbk_ah != NULL ? ipoib_tx_burst_lpbk :
						     ipoib_tx_burst;
	ipoib_queues_start_state(dev);
	/* the control thread reads it (link status) */
	__atomic_store_n(&priv->started, true, __ATOMIC_RELEASE);
	ipoib_link_report(priv, false);
	IPOIB_LOG(INFO, "port %u started: %s receive, MTU %u, %u rx / %u tx "
		  "queues, max_conns %u", dev->data->port_id,
		  priv->srq ? "SRQ" : "non-SRQ", dev->data->mtu,
		  dev->data->nb_rx_queues, dev->data->nb_tx_queues,
		  priv->cfg.max_conns);
	if (!priv->srq && ipoib_conn_ring_bytes(priv, dev->data->rx_queues[0]) >
	    priv->cfg.mem_budget)
		IPOIB_LOG(WARNING, "port %u: mem_budget %" PRIu64 " is less than "
			  "one connection's receive ring (%" PRIu64 " bytes): "
			  "every connection request is refused (REJ 3) and "
			  "peers are served over UD", dev->data->port_id,
			  priv->cfg.mem_budget,
			  ipoib_conn_ring_bytes(priv, dev->data->rx_queues[0]));
	return 0;
fail_lpbk:
	ipoib_lpbk_stop(dev);
fail_queues:
	ipoib_rss_stop(dev, priv);
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		ipoib_rxq_stop(priv, dev->data->rx_queues[q]);
	return ret;
}

int
ipoib_dev_stop(struct rte_eth_dev *dev)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	uint16_t q;

	if (!priv->started)
		return 0;
	__atomic_store_n(&priv->started, false, __ATOMIC_RELEASE);
	ipoib_link_report(priv, false);
	ipoib_set_stopped_bursts(dev);
	/* no burst runs any more: nothing holds peers or connections */
	ipoib_queues_enter(dev->data);
	ipoib_rcu_readers_stop(priv, dev->data);
	ipoib_lpbk_stop(dev);
	for (q = 0; q < dev->data->nb_tx_queues; q++)
		dev->data->tx_queue_state[q] = RTE_ETH_QUEUE_STATE_STOPPED;
	ipoib_ctrl_stop(priv);
	ipoib_peers_reset_pending(priv);
	ipoib_rss_stop(dev, priv);
	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		ipoib_rxq_stop(priv, dev->data->rx_queues[q]);
		dev->data->rx_queue_state[q] = RTE_ETH_QUEUE_STATE_STOPPED;
	}
	if (priv->loopback != NULL) {
		struct rte_mbuf *m;

		while (rte_ring_dequeue(priv->loopback, (void **)&m) == 0)
			rte_pktmbuf_free(m);
	}
	return 0;
}
