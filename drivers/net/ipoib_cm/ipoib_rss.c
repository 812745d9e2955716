/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Receive-side scaling of UD traffic. RC traffic is spread over the rx
 * queues by connection (ipoib_conn.c); UD traffic, datagram-mode peers
 * and spilled ones, all comes to the port's one UD QP, whose QPN is part
 * of the port's address. With RSS, as an HCA spreads a UD QP's traffic
 * over receive work queues, rx queue q >= 1 gets a receive queue of its
 * own (a UD QP that only receives: its buffers, its CQ) and the UD QP
 * spreads what arrives by flow (ops->ud_rss_set()): the Toeplitz hash of
 * the configured key over IPv4/IPv6 addresses, and TCP/UDP ports when not
 * a fragment, as the configured hash functions ask. A flow's frames land
 * on one queue, in order; ARP, other non-IP frames and what the hash
 * functions do not cover on queue 0. Each
 * queue's lcore polls only its own CQ: nothing is shared on the datapath.
 *
 * Its buffers: the queue's nb_desc receive WRs of one IB MTU (the GRH
 * included), from a pool of nb_desc + IPOIB_UD_SPARE mbufs, counted in
 * the port's memory like queue 0's. A transport that cannot spread
 * (verbs: rdma-core has no RSS for UD QPs) leaves UD on queue 0.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ipoib_log.h"
#include "ipoib_rss.h"
#include "ipoib_rxq.h"

/*
 * The default key: that of Microsoft's RSS verification suite ("Verifying
 * the RSS Hash Calculation"), whose published hashes the fabric test
 * rss_toeplitz checks.
 */
static const uint8_t ipoib_rss_default_key[IPOIB_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

void
ipoib_rss_init(struct ipoib_priv *priv)
{
	priv->rss_offloads = priv->ops->ud_rss_set != NULL ? IPOIB_RSS_HF : 0;
	memcpy(priv->rss.key, ipoib_rss_default_key, IPOIB_RSS_KEY_LEN);
}

/* ethdev's hash functions as the transport's types. */
static uint32_t
ipoib_rss_types(uint64_t hf)
{
	uint32_t t = 0;

	if (hf & (RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_FRAG_IPV4 |
		  RTE_ETH_RSS_NONFRAG_IPV4_OTHER))
		t |= IPOIB_RSS_IPV4;
	if (hf & RTE_ETH_RSS_NONFRAG_IPV4_TCP)
		t |= IPOIB_RSS_IPV4_TCP;
	if (hf & RTE_ETH_RSS_NONFRAG_IPV4_UDP)
		t |= IPOIB_RSS_IPV4_UDP;
	if (hf & (RTE_ETH_RSS_IPV6 | RTE_ETH_RSS_FRAG_IPV6 |
		  RTE_ETH_RSS_NONFRAG_IPV6_OTHER | RTE_ETH_RSS_IPV6_EX))
		t |= IPOIB_RSS_IPV6;
	if (hf & (RTE_ETH_RSS_NONFRAG_IPV6_TCP | RTE_ETH_RSS_IPV6_TCP_EX))
		t |= IPOIB_RSS_IPV6_TCP;
	if (hf & (RTE_ETH_RSS_NONFRAG_IPV6_UDP | RTE_ETH_RSS_IPV6_UDP_EX))
		t |= IPOIB_RSS_IPV6_UDP;
	return t;
}

/*
 * The application's hash functions and key (NULL: the current one kept),
 * or -EINVAL (logged) for a key of another length, and nothing changed.
 */
static int
ipoib_rss_conf_set(struct ipoib_priv *priv, const struct rte_eth_dev *dev,
		   const struct rte_eth_rss_conf *rc)
{
	if (rc->rss_key != NULL && rc->rss_key_len != IPOIB_RSS_KEY_LEN) {
		IPOIB_LOG(ERR, "port %u: RSS key of %u bytes: the key is %u "
			  "bytes (Toeplitz)", dev->data->port_id,
			  rc->rss_key_len, IPOIB_RSS_KEY_LEN);
		return -EINVAL;
	}
	if (rc->rss_key != NULL)
		memcpy(priv->rss.key, rc->rss_key, IPOIB_RSS_KEY_LEN);
	priv->rss_hf = rc->rss_hf & priv->rss_offloads;
	priv->rss.types = ipoib_rss_types(priv->rss_hf);
	return 0;
}

int
ipoib_rss_configure(struct rte_eth_dev *dev)
{
	struct ipoib_priv *priv = dev->data->dev_private;

	if (!(dev->data->dev_conf.rxmode.mq_mode & RTE_ETH_MQ_RX_RSS_FLAG)) {
		priv->rss_hf = 0;
		return 0;
	}
	memcpy(priv->rss.key, ipoib_rss_default_key, IPOIB_RSS_KEY_LEN);
	return ipoib_rss_conf_set(priv, dev,
				  &dev->data->dev_conf.rx_adv_conf.rss_conf);
}

static bool
ipoib_rss_wanted(const struct rte_eth_dev *dev, const struct ipoib_priv *priv)
{
	return dev->data->nb_rx_queues > 1 &&
	       (dev->data->dev_conf.rxmode.mq_mode & RTE_ETH_MQ_RX_RSS_FLAG) &&
	       priv->rss_hf != 0;
}

/* The QPs UD is spread over now, in qps[]: how many (0: not spread). */
static uint16_t
ipoib_rss_qps(const struct rte_eth_dev *dev, const struct ipoib_priv *priv,
	      struct ipoib_hca_qp **qps)
{
	uint16_t n = RTE_MIN(dev->data->nb_rx_queues,
			     (uint16_t)IPOIB_MAX_QUEUES), q;

	qps[0] = priv->ud_qp;
	for (q = 1; q < n; q++) {
		const struct ipoib_rxq *rxq = dev->data->rx_queues[q];

		if (rxq == NULL || rxq->rss_qp == NULL)
			return 0;
		qps[q] = rxq->rss_qp;
	}
	return n > 1 ? n : 0;
}

int
ipoib_rss_hash_update(struct rte_eth_dev *dev, struct rte_eth_rss_conf *conf)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	struct ipoib_hca_qp *qps[IPOIB_MAX_QUEUES];
	uint16_t n;
	int ret;

	if (priv->rss_offloads == 0)
		return -ENOTSUP;
	ret = ipoib_rss_conf_set(priv, dev, conf);
	if (ret < 0)
		return ret;
	n = dev->data->dev_started ? ipoib_rss_qps(dev, priv, qps) : 0;
	return n > 0 ? priv->ops->ud_rss_set(priv->ud_qp, qps, n, &priv->rss) :
		       0;
}

int
ipoib_rss_hash_conf_get(struct rte_eth_dev *dev, struct rte_eth_rss_conf *conf)
{
	const struct ipoib_priv *priv = dev->data->dev_private;

	if (priv->rss_offloads == 0)
		return -ENOTSUP;
	if (conf->rss_key != NULL) {
		if (conf->rss_key_len < IPOIB_RSS_KEY_LEN)
			return -EINVAL;
		memcpy(conf->rss_key, priv->rss.key, IPOIB_RSS_KEY_LEN);
	}
	conf->rss_key_len = IPOIB_RSS_KEY_LEN;
	conf->rss_hf = priv->rss_hf;
	return 0;
}

static void
ipoib_rss_queue_close(struct ipoib_priv *priv, struct ipoib_rxq *rxq)
{
	rxq->ud_cq = NULL;
	rxq->ud_qp = NULL;
	rxq->ud = NULL;
	ipoib_ud_release(priv, &rxq->rss_qp, &rxq->rss_ud);
}

static int
ipoib_rss_queue_open(struct ipoib_priv *priv, struct ipoib_rxq *rxq)
{
	const struct ipoib_hca_ops *ops = priv->ops;
	struct ipoib_ud *ud = &rxq->rss_ud;
	uint32_t bytes = IPOIB_GRH_LEN + priv->attr.ib_mtu;
	struct ipoib_qp_init qi = {
		.type = IPOIB_QPT_UD,
		.max_recv_wr = rxq->nb_desc,
		.max_send_wr = IPOIB_MIN_DESC,	/* never sends */
		.max_recv_sge = 1,
		.pkey_index = priv->pkey_index,
		.qkey = priv->qkey,
		.qp_context = UINT32_MAX,
	};
	int ret;

	ret = ipoib_pool_create(priv, &ud->pool, "rss", "ud",
				rxq->nb_desc + IPOIB_UD_SPARE,
				RTE_PKTMBUF_HEADROOM + bytes);
	if (ret == 0)
		ret = ipoib_rx_ring_alloc(&priv->acct, &ud->ring, &ud->pool,
					  rxq->nb_desc, bytes);
	if (ret < 0)
		goto fail;
	ud->cq = ops->cq_create(priv->hca, rxq->nb_desc);
	qi.recv_cq = ud->cq;
	rxq->rss_qp = ud->cq != NULL ? ops->qp_create(priv->hca, &qi) : NULL;
	if (rxq->rss_qp == NULL) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = ops->qp_modify(rxq->rss_qp, IPOIB_QPS_RTS);
	if (ret == 0)
		ret = ipoib_rx_ring_post_all(ops, &ud->ring, IPOIB_WR_UD, 0,
					     rxq->rss_qp);
	if (ret < 0)
		goto fail;
	rxq->ud_cq = ud->cq;
	rxq->ud_qp = rxq->rss_qp;
	rxq->ud = &ud->ring;
	return 0;
fail:
	ipoib_rss_queue_close(priv, rxq);
	return ret;
}

int
ipoib_rss_start(struct rte_eth_dev *dev, struct ipoib_priv *priv)
{
	struct ipoib_hca_qp *qps[IPOIB_MAX_QUEUES];
	uint16_t n = RTE_MIN(dev->data->nb_rx_queues,
			     (uint16_t)IPOIB_MAX_QUEUES), q;
	int ret = 0;

	if (!ipoib_rss_wanted(dev, priv))
		return 0;
	qps[0] = priv->ud_qp;
	for (q = 1; q < n && ret == 0; q++) {
		ret = ipoib_rss_queue_open(priv, dev->data->rx_queues[q]);
		qps[q] = ((struct ipoib_rxq *)dev->data->rx_queues[q])->rss_qp;
	}
	if (ret == 0)
		ret = priv->ops->ud_rss_set(priv->ud_qp, qps, n, &priv->rss);
	if (ret < 0) {
		IPOIB_LOG(ERR, "port %u: UD receive not spread over %u rx "
			  "queues: %s", dev->data->port_id, n, strerror(-ret));
		ipoib_rss_stop(dev, priv);
		return ret;
	}
	IPOIB_LOG(INFO, "port %u: UD receive spread by flow over %u rx queues",
		  dev->data->port_id, n);
	return 0;
}

void
ipoib_rss_stop(struct rte_eth_dev *dev, struct ipoib_priv *priv)
{
	uint16_t q;

	if (priv->ops->ud_rss_set == NULL)
		return;
	/* what a sender read before still lands there: drained below */
	priv->ops->ud_rss_set(priv->ud_qp, NULL, 0, NULL);
	/* a queue without a share has nothing to release */
	for (q = 1; q < dev->data->nb_rx_queues; q++)
		if (dev->data->rx_queues[q] != NULL)
			ipoib_rss_queue_close(priv, dev->data->rx_queues[q]);
}
