/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#include <errno.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <ethdev_vdev.h>
#include <rte_jhash.h>
#include <rte_malloc.h>

#include "ipoib_cm.h"
#include "ipoib_log.h"

RTE_LOG_REGISTER(ipoib_logtype, pmd.net.ipoibcm, NOTICE);

static uint16_t
ipoib_rx_burst_none(void *q, struct rte_mbuf **pkts, uint16_t n)
{
	RTE_SET_USED(q);
	RTE_SET_USED(pkts);
	RTE_SET_USED(n);
	return 0;
}

static uint16_t
ipoib_tx_burst_none(void *q, struct rte_mbuf **pkts, uint16_t n)
{
	RTE_SET_USED(q);
	RTE_SET_USED(pkts);
	RTE_SET_USED(n);
	return 0;
}

static int
ipoib_dev_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	RTE_SET_USED(dev);
	info->max_mac_addrs = 1;
	info->max_rx_queues = IPOIB_MAX_QUEUES;
	info->max_tx_queues = IPOIB_MAX_QUEUES;
	info->min_mtu = IPOIB_MIN_MTU;
	info->max_mtu = IPOIB_CM_MTU;
	info->max_rx_pktlen = IPOIB_CM_MTU + RTE_ETHER_HDR_LEN;
	info->min_rx_bufsize = RTE_ETHER_MIN_LEN;
	info->rx_offload_capa = RTE_ETH_RX_OFFLOAD_SCATTER;
	info->tx_offload_capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	info->rx_desc_lim = (struct rte_eth_desc_lim){
		.nb_max = IPOIB_MAX_DESC,
		.nb_min = IPOIB_MIN_DESC,
		.nb_align = 1,
	};
	info->tx_desc_lim = info->rx_desc_lim;
	info->default_rxportconf.ring_size = 512;
	info->default_txportconf.ring_size = 512;
	info->default_rxportconf.nb_queues = 1;
	info->default_txportconf.nb_queues = 1;
	info->dev_capa = 0;
	return 0;
}

static int
ipoib_dev_configure(struct rte_eth_dev *dev)
{
	RTE_SET_USED(dev);
	return 0;
}

static int
ipoib_dev_start(struct rte_eth_dev *dev)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	uint16_t i;

	for (i = 0; i < dev->data->nb_rx_queues; i++)
		dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STARTED;
	for (i = 0; i < dev->data->nb_tx_queues; i++)
		dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STARTED;
	priv->started = true;
	dev->data->dev_link.link_status = RTE_ETH_LINK_UP;
	return 0;
}

static int
ipoib_dev_stop(struct rte_eth_dev *dev)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	uint16_t i;

	priv->started = false;
	dev->data->dev_link.link_status = RTE_ETH_LINK_DOWN;
	for (i = 0; i < dev->data->nb_rx_queues; i++)
		dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
	for (i = 0; i < dev->data->nb_tx_queues; i++)
		dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
	return 0;
}

static int
ipoib_rx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		     unsigned int socket, const struct rte_eth_rxconf *conf,
		     struct rte_mempool *mp)
{
	struct ipoib_rxq *rxq;

	RTE_SET_USED(conf);
	rxq = rte_zmalloc_socket("ipoib_rxq", sizeof(*rxq),
				 RTE_CACHE_LINE_SIZE, socket);
	if (rxq == NULL)
		return -ENOMEM;
	rxq->priv = dev->data->dev_private;
	rxq->mp = mp;
	rxq->queue_id = qid;
	rxq->nb_desc = nb_desc;
	dev->data->rx_queues[qid] = rxq;
	return 0;
}

static int
ipoib_tx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		     unsigned int socket, const struct rte_eth_txconf *conf)
{
	struct ipoib_txq *txq;

	RTE_SET_USED(conf);
	txq = rte_zmalloc_socket("ipoib_txq", sizeof(*txq),
				 RTE_CACHE_LINE_SIZE, socket);
	if (txq == NULL)
		return -ENOMEM;
	txq->priv = dev->data->dev_private;
	txq->queue_id = qid;
	txq->nb_desc = nb_desc;
	dev->data->tx_queues[qid] = txq;
	return 0;
}

static void
ipoib_rx_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	rte_free(dev->data->rx_queues[qid]);
	dev->data->rx_queues[qid] = NULL;
}

static void
ipoib_tx_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	rte_free(dev->data->tx_queues[qid]);
	dev->data->tx_queues[qid] = NULL;
}

static int
ipoib_link_update(struct rte_eth_dev *dev, int wait)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	struct rte_eth_link link = {
		.link_speed = RTE_ETH_SPEED_NUM_100G,
		.link_duplex = RTE_ETH_LINK_FULL_DUPLEX,
		.link_autoneg = RTE_ETH_LINK_FIXED,
		.link_status = priv->started ? RTE_ETH_LINK_UP :
					       RTE_ETH_LINK_DOWN,
	};

	RTE_SET_USED(wait);
	return rte_eth_linkstatus_set(dev, &link);
}

static void
ipoib_stats_diff(struct ipoib_queue_stats *d, const struct ipoib_queue_stats *s,
		 const struct ipoib_queue_stats *base)
{
	d->packets = s->packets - base->packets;
	d->bytes = s->bytes - base->bytes;
	d->errors = s->errors - base->errors;
	d->nombuf = s->nombuf - base->nombuf;
}

static int
ipoib_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats)
{
	struct ipoib_queue_stats q;
	uint16_t i;

	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		const struct ipoib_rxq *rxq = dev->data->rx_queues[i];

		if (rxq == NULL)
			continue;
		ipoib_stats_diff(&q, &rxq->stats, &rxq->stats_base);
		stats->ipackets += q.packets;
		stats->ibytes += q.bytes;
		stats->ierrors += q.errors;
		stats->rx_nombuf += q.nombuf;
		if (i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
			stats->q_ipackets[i] = q.packets;
			stats->q_ibytes[i] = q.bytes;
			stats->q_errors[i] = q.errors;
		}
	}
	for (i = 0; i < dev->data->nb_tx_queues; i++) {
		const struct ipoib_txq *txq = dev->data->tx_queues[i];

		if (txq == NULL)
			continue;
		ipoib_stats_diff(&q, &txq->stats, &txq->stats_base);
		stats->opackets += q.packets;
		stats->obytes += q.bytes;
		stats->oerrors += q.errors;
		if (i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
			stats->q_opackets[i] = q.packets;
			stats->q_obytes[i] = q.bytes;
		}
	}
	return 0;
}

/* Reset by snapshot: the lcores stay the only writers of the counters. */
static int
ipoib_stats_reset(struct rte_eth_dev *dev)
{
	uint16_t i;

	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		struct ipoib_rxq *rxq = dev->data->rx_queues[i];

		if (rxq != NULL)
			rxq->stats_base = rxq->stats;
	}
	for (i = 0; i < dev->data->nb_tx_queues; i++) {
		struct ipoib_txq *txq = dev->data->tx_queues[i];

		if (txq != NULL)
			txq->stats_base = txq->stats;
	}
	return 0;
}

static int
ipoib_dev_close(struct rte_eth_dev *dev)
{
	uint16_t i;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return 0;
	for (i = 0; i < dev->data->nb_rx_queues; i++)
		ipoib_rx_queue_release(dev, i);
	for (i = 0; i < dev->data->nb_tx_queues; i++)
		ipoib_tx_queue_release(dev, i);
	/* mac_addrs points into dev_private, freed with it */
	dev->data->mac_addrs = NULL;
	return 0;
}

static const struct eth_dev_ops ipoib_dev_ops = {
	.dev_configure = ipoib_dev_configure,
	.dev_start = ipoib_dev_start,
	.dev_stop = ipoib_dev_stop,
	.dev_close = ipoib_dev_close,
	.dev_infos_get = ipoib_dev_infos_get,
	.rx_queue_setup = ipoib_rx_queue_setup,
	.tx_queue_setup = ipoib_tx_queue_setup,
	.rx_queue_release = ipoib_rx_queue_release,
	.tx_queue_release = ipoib_tx_queue_release,
	.link_update = ipoib_link_update,
	.stats_get = ipoib_stats_get,
	.stats_reset = ipoib_stats_reset,
};

/* A locally administered unicast MAC, stable for a given port identity. */
static void
ipoib_port_mac(struct rte_ether_addr *mac, const struct ipoib_config *cfg,
	       const char *name)
{
	uint64_t id = cfg->guid;

	if (id == 0)
		id = rte_jhash(name, strlen(name), 0) |
		     (uint64_t)rte_jhash(cfg->fabric, strlen(cfg->fabric),
					    0x1b1b) << 32;
	mac->addr_bytes[0] = 0x02;
	mac->addr_bytes[1] = (uint8_t)(id >> 32);
	mac->addr_bytes[2] = (uint8_t)(id >> 24);
	mac->addr_bytes[3] = (uint8_t)(id >> 16);
	mac->addr_bytes[4] = (uint8_t)(id >> 8);
	mac->addr_bytes[5] = (uint8_t)id;
}

static int
ipoib_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct ipoib_config cfg;
	struct rte_eth_dev *dev;
	struct ipoib_priv *priv;
	int ret;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		IPOIB_LOG(ERR, "%s: secondary processes are not supported",
			  name);
		return -ENOTSUP;
	}
	ipoib_config_defaults(&cfg);
	ret = ipoib_config_parse(&cfg, name, rte_vdev_device_args(vdev));
	if (ret < 0)
		return ret;
	ipoib_config_log(&cfg, name);

	dev = rte_eth_vdev_allocate(vdev, sizeof(*priv));
	if (dev == NULL)
		return -ENOMEM;
	priv = dev->data->dev_private;
	priv->eth_dev = dev;
	priv->cfg = cfg;
	ipoib_port_mac(&priv->mac, &cfg, name);

	dev->dev_ops = &ipoib_dev_ops;
	dev->rx_pkt_burst = ipoib_rx_burst_none;
	dev->tx_pkt_burst = ipoib_tx_burst_none;
	dev->data->mac_addrs = &priv->mac;
	dev->data->dev_flags |= RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS;
	dev->data->dev_link.link_status = RTE_ETH_LINK_DOWN;
	rte_eth_dev_probing_finish(dev);
	IPOIB_LOG(INFO, "%s: port %u created", name, dev->data->port_id);
	return 0;
}

static int
ipoib_remove(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *dev;

	dev = rte_eth_dev_allocated(rte_vdev_device_name(vdev));
	if (dev == NULL)
		return 0;	/* already released */
	ipoib_dev_close(dev);
	return rte_eth_dev_release_port(dev);
}

static struct rte_vdev_driver ipoib_vdev_driver = {
	.probe = ipoib_probe,
	.remove = ipoib_remove,
};

RTE_PMD_REGISTER_VDEV(net_ipoibcm, ipoib_vdev_driver);
RTE_PMD_REGISTER_PARAM_STRING(net_ipoibcm, IPOIB_PARAM_STRING);
