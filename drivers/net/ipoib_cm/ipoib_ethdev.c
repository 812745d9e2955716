/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The ethdev glue: probe and remove of the net_ipoibcm vdev, and the
 * eth_dev_ops. Start and stop are in ipoib_trigger.c.
 */

#include <errno.h>
#include <string.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <ethdev_vdev.h>
#include <rte_malloc.h>

#include "ipoib_cm.h"
#include "ipoib_compat.h"
#include "ipoib_info.h"
#include "ipoib_filter.h"
#include "ipoib_link.h"
#include "ipoib_log.h"
#include "ipoib_lpbk.h"
#include "ipoib_queue_ctl.h"
#include "ipoib_reaper.h"
#include "ipoib_rss.h"
#include "ipoib_rxq.h"
#include "ipoib_secondary.h"
#include "ipoib_telemetry.h"
#include "ipoib_trigger.h"
#include "ipoib_tx.h"
#include "ipoib_tx_held.h"
#include "ipoib_xstats.h"

RTE_LOG_REGISTER(ipoib_logtype, pmd.net.ipoibcm, NOTICE);

/*
 * rte_eth_dev_configure() allocates the port's arrays of queue pointers
 * (RTE_MAX_QUEUES_PER_PORT each) before it calls us, where we cannot
 * measure them: a new one is replaced by a copy allocated where it is
 * measured (ipoib_mem.h). ethdev frees it at release, or when the port is
 * configured with no queue of that kind.
 */
static void
ipoib_adopt_queue_array(struct ipoib_priv *priv, void ***arr, void ***ours,
			int64_t *bytes, const char *type)
{
	size_t sz = sizeof(void *) * RTE_MAX_QUEUES_PER_PORT;
	struct ipoib_mem_mark m;
	void **n;

	if (*arr == *ours)
		return;
	ipoib_mem_charge(&priv->acct, IPOIB_MEM_PORT, -*bytes);
	*ours = NULL;
	*bytes = 0;
	if (*arr == NULL)
		return;
	ipoib_mem_begin(&m);
	n = rte_zmalloc(type, sz, RTE_CACHE_LINE_SIZE);
	*bytes = ipoib_mem_end(&m, &priv->acct, IPOIB_MEM_PORT);
	if (n == NULL) {
		IPOIB_LOG(WARNING, "port %u: %s not counted: no memory",
			  priv->eth_dev->data->port_id, type);
		return;
	}
	memcpy(n, *arr, sz);
	rte_free(*arr);
	*arr = n;
	*ours = n;
}

static int
ipoib_dev_configure(struct rte_eth_dev *dev)
{
	const struct rte_eth_conf *conf = &dev->data->dev_conf;
	struct ipoib_priv *priv = dev->data->dev_private;
	int ret;

	ipoib_adopt_queue_array(priv, &dev->data->rx_queues,
				&priv->acct_rxq_arr, &priv->acct_rxq_arr_bytes,
				"ethdev->rx_queues");
	ipoib_adopt_queue_array(priv, &dev->data->tx_queues,
				&priv->acct_txq_arr, &priv->acct_txq_arr_bytes,
				"ethdev->tx_queues");

	if (conf->rxmode.mq_mode != RTE_ETH_MQ_RX_NONE &&
	    conf->rxmode.mq_mode != RTE_ETH_MQ_RX_RSS) {
		IPOIB_LOG(ERR, "rx multi-queue mode %d is not supported",
			  conf->rxmode.mq_mode);
		return -ENOTSUP;
	}
	ret = ipoib_rss_configure(dev);
	if (ret < 0)
		return ret;
	return ipoib_lpbk_check(dev);
}

static int
ipoib_rx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		     unsigned int socket, const struct rte_eth_rxconf *conf,
		     struct rte_mempool *mp)
{
	int ret = ipoib_rxq_setup(dev, qid, nb_desc, socket, mp);

	if (ret == 0)
		ipoib_rxq_set_deferred(dev, qid, conf->rx_deferred_start);
	return ret;
}

static int
ipoib_tx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		     unsigned int socket, const struct rte_eth_txconf *conf)
{
	int ret = ipoib_txq_setup(dev, qid, nb_desc, socket);

	if (ret == 0)
		ipoib_txq_set_deferred(dev, qid, conf->tx_deferred_start);
	return ret;
}

static int
ipoib_mtu_set(struct rte_eth_dev *dev, uint16_t mtu)
{
	struct ipoib_priv *priv = dev->data->dev_private;

	if (priv->started) {
		IPOIB_LOG(ERR, "port %u: stop the port to change its MTU",
			  dev->data->port_id);
		return -EBUSY;
	}
	RTE_SET_USED(mtu);
	return 0;
}

static int
ipoib_rx_burst_mode_get(struct rte_eth_dev *dev, uint16_t qid,
			struct rte_eth_burst_mode *mode)
{
	struct ipoib_priv *priv = dev->data->dev_private;

	RTE_SET_USED(qid);
	if (dev->rx_pkt_burst == ipoib_rx_burst_srq)
		snprintf(mode->info, sizeof(mode->info), "SRQ (%s)",
			 priv->attr.name);
	else if (dev->rx_pkt_burst == ipoib_rx_burst_nosrq)
		snprintf(mode->info, sizeof(mode->info), "non-SRQ (%s)",
			 priv->attr.name);
	else
		snprintf(mode->info, sizeof(mode->info), "stopped");
	return 0;
}

static int
ipoib_tx_burst_mode_get(struct rte_eth_dev *dev, uint16_t qid,
			struct rte_eth_burst_mode *mode)
{
	RTE_SET_USED(qid);
	if (dev->tx_pkt_burst == ipoib_tx_burst_lpbk)
		snprintf(mode->info, sizeof(mode->info), "loopback: UD to the "
			 "port itself");
	else
		snprintf(mode->info, sizeof(mode->info), "RC to connected "
			 "peers, UD otherwise");
	return 0;
}

/*
 * Under the control lock: telemetry may ask while the port closes. The
 * per-queue counters go to qstats when the caller wants them.
 */
static int
ipoib_stats_fill(struct rte_eth_dev *dev, struct rte_eth_stats *stats,
		 ipoib_eth_qstats *qstats)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	uint16_t i;

	pthread_mutex_lock(&priv->ctrl_lock);
	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		const struct ipoib_rxq *rxq = dev->data->rx_queues[i];
		const struct ipoib_rxq_stats *b;
		struct ipoib_rxq_stats s;
		uint64_t pkts, bytes, errs;

		if (rxq == NULL)
			continue;
		IPOIB_STATS_LOAD(&s, &rxq->stats);
		b = &rxq->stats_base;
		pkts = s.packets - b->packets;
		bytes = s.bytes - b->bytes;
		errs = (s.drop_malformed + s.drop_len + s.drop_unknown_conn +
			s.drop_unknown_lid + s.bad_wr_id) -
		       (b->drop_malformed + b->drop_len +
			b->drop_unknown_conn + b->drop_unknown_lid +
			b->bad_wr_id);
		stats->ipackets += pkts;
		stats->ibytes += bytes;
		stats->ierrors += errs;
		stats->rx_nombuf += s.nombuf - b->nombuf;
		if (qstats != NULL && i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
			qstats->q_ipackets[i] = pkts;
			qstats->q_ibytes[i] = bytes;
			qstats->q_errors[i] = errs;
		}
	}
	/* the control thread's queue last: held frames count once sent */
	for (i = 0; i <= dev->data->nb_tx_queues; i++) {
		const struct ipoib_txq *txq = ipoib_txq_nth(dev, i);
		const struct ipoib_txq_stats *s, *b;
		struct ipoib_txq_stats now;
		uint64_t pkts, errs;

		if (txq == NULL)
			continue;
		IPOIB_STATS_LOAD(&now, &txq->stats);
		s = &now;
		b = &txq->stats_base;
		errs = (s->drop_no_neigh + s->drop_malformed +
			s->drop_too_long + s->drop_vlan + s->drop_refused) -
		       (b->drop_no_neigh + b->drop_malformed +
			b->drop_too_long + b->drop_vlan + b->drop_refused);
		pkts = s->packets - b->packets - errs;
		stats->opackets += pkts;
		stats->obytes += s->bytes - b->bytes;
		stats->oerrors += errs;
		if (qstats != NULL && i < RTE_ETHDEV_QUEUE_STAT_CNTRS &&
		    i < dev->data->nb_tx_queues) {
			qstats->q_opackets[i] = pkts;
			qstats->q_obytes[i] = s->bytes - b->bytes;
		}
	}
	pthread_mutex_unlock(&priv->ctrl_lock);
	return 0;
}

IPOIB_ETH_STATS_GET(ipoib_stats_get, ipoib_stats_fill)

/* Stopped: the queues and everything on the transport go. */
static void
ipoib_dev_release(struct rte_eth_dev *dev)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	uint16_t i;

	ipoib_dev_stop(dev);
	pthread_mutex_lock(&priv->ctrl_lock);	/* against stats readers */
	for (i = 0; i < dev->data->nb_rx_queues; i++)
		ipoib_rxq_release(dev, i);
	for (i = 0; i < dev->data->nb_tx_queues; i++)
		ipoib_txq_release(dev, i);
	pthread_mutex_unlock(&priv->ctrl_lock);
	ipoib_pools_reap_all(priv);
	ipoib_port_close(priv);
}

/*
 * rte_eth_dev_reset(), after RTE_ETH_EVENT_INTR_RESET: the port opens its
 * transport again as at probe; on the shm fabric it may be a new one, and
 * a new UD QPN makes a new MAC. The queues are released: the application
 * configures and sets them up again, as after any reset.
 */
static int
ipoib_dev_reset(struct rte_eth_dev *dev)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	const char *name = dev->device->name;
	int ret;

	ipoib_dev_release(dev);
	priv->fatal = false;
	ret = ipoib_port_open(priv, name);
	if (ret < 0) {
		IPOIB_LOG(ERR, "%s: reset: cannot open the transport again: "
			  "%s", name, strerror(-ret));
		return ret;
	}
	IPOIB_LOG(NOTICE, "%s: reset: attached again as " RTE_ETHER_ADDR_PRT_FMT,
		  name, RTE_ETHER_ADDR_BYTES(&priv->mac));
	return 0;
}

static int
ipoib_dev_close(struct rte_eth_dev *dev)
{
	struct ipoib_priv *priv = dev->data->dev_private;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return 0;
	ipoib_secondary_closing(priv);
	ipoib_dev_release(dev);
	ipoib_conns_fini(priv);
	ipoib_tx_held_fini(priv);
	ipoib_ring_free(&priv->acct, IPOIB_MEM_RINGS, priv->loopback);
	ipoib_ring_free(&priv->acct, IPOIB_MEM_RINGS, priv->connect_req);
	priv->loopback = NULL;
	priv->connect_req = NULL;
	pthread_mutex_destroy(&priv->ctrl_lock);
	/* mac_addrs points into dev_private, freed with it */
	dev->data->mac_addrs = NULL;
	return 0;
}

static const struct eth_dev_ops ipoib_dev_ops = {
	.dev_configure = ipoib_dev_configure,
	.dev_start = ipoib_dev_start,
	.dev_stop = ipoib_dev_stop,
	.dev_close = ipoib_dev_close,
	.dev_reset = ipoib_dev_reset,
	.dev_infos_get = ipoib_dev_infos_get,
	.rx_queue_setup = ipoib_rx_queue_setup,
	.tx_queue_setup = ipoib_tx_queue_setup,
	.rx_queue_release = ipoib_rxq_release,
	.tx_queue_release = ipoib_txq_release,
	.link_update = ipoib_link_update,
	.mtu_set = ipoib_mtu_set,
	.stats_get = ipoib_stats_get,
	.stats_reset = ipoib_xstats_reset,
	.xstats_get = ipoib_xstats_get,
	.xstats_get_names = ipoib_xstats_get_names,
	.xstats_get_by_id = ipoib_xstats_get_by_id,
	.xstats_reset = ipoib_xstats_reset,
	.rxq_info_get = ipoib_rxq_info_get,
	.txq_info_get = ipoib_txq_info_get,
	.rx_burst_mode_get = ipoib_rx_burst_mode_get,
	.tx_burst_mode_get = ipoib_tx_burst_mode_get,
	.promiscuous_enable = ipoib_promiscuous_enable,
	.promiscuous_disable = ipoib_promiscuous_disable,
	.allmulticast_enable = ipoib_allmulticast_enable,
	.allmulticast_disable = ipoib_allmulticast_disable,
	.set_mc_addr_list = ipoib_set_mc_addr_list,
	.mac_addr_set = ipoib_mac_addr_set,
	.dev_supported_ptypes_get = ipoib_supported_ptypes,
	.dev_ptypes_set = ipoib_ptypes_set,
	.rx_queue_start = ipoib_rx_queue_start,
	.rx_queue_stop = ipoib_rx_queue_stop,
	.tx_queue_start = ipoib_tx_queue_start,
	.tx_queue_stop = ipoib_tx_queue_stop,
	.rss_hash_update = ipoib_rss_hash_update,
	.rss_hash_conf_get = ipoib_rss_hash_conf_get,
};

/* Devices probed by this (primary) process and not yet removed. */
static unsigned int ipoib_nr_devs;

static int
ipoib_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct ipoib_mem probe = { { 0 } };
	struct ipoib_mem_mark m;
	struct ipoib_config cfg;
	struct rte_eth_dev *dev;
	struct ipoib_priv *priv;
	int ret;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return ipoib_secondary_probe(vdev);
	ipoib_config_defaults(&cfg);
	ret = ipoib_config_parse(&cfg, name, rte_vdev_device_args(vdev));
	if (ret < 0)
		return ret;
	ipoib_config_log(&cfg, name);

	/* ethdev's shared data, made once for all ports, is not this port's */
	rte_eth_dev_allocated(name);
	ipoib_mem_begin(&m);
	dev = rte_eth_vdev_allocate(vdev, sizeof(*priv));
	ipoib_mem_end(&m, &probe, IPOIB_MEM_PORT);
	if (dev == NULL)
		return -ENOMEM;
	priv = dev->data->dev_private;
	priv->acct = probe;	/* priv did not exist before */
	priv->eth_dev = dev;
	priv->cfg = cfg;
	priv->ptype_mask = RTE_PTYPE_ALL_MASK;
	pthread_mutex_init(&priv->ctrl_lock, NULL);
	ret = ipoib_conns_init(priv);
	if (ret == 0)
		ret = ipoib_port_open(priv, name);
	if (ret < 0) {
		ipoib_conns_fini(priv);
		pthread_mutex_destroy(&priv->ctrl_lock);
		rte_eth_dev_release_port(dev);
		return ret;
	}
	dev->dev_ops = &ipoib_dev_ops;
	ipoib_set_stopped_bursts(dev);
	dev->data->mac_addrs = &priv->mac;
	dev->data->dev_flags |= RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS |
				RTE_ETH_DEV_INTR_LSC;
	dev->data->dev_link.link_status = RTE_ETH_LINK_DOWN;
	rte_eth_dev_probing_finish(dev);
	__atomic_fetch_add(&ipoib_nr_devs, 1, __ATOMIC_RELAXED);
	ipoib_secondary_serve();
	IPOIB_LOG(INFO, "%s: port %u created", name, dev->data->port_id);
	return 0;
}

static int
ipoib_remove(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *dev;
	int ret = 0;

	dev = rte_eth_dev_allocated(rte_vdev_device_name(vdev));
	if (dev != NULL) {	/* else already closed and released */
		ipoib_dev_close(dev);
		ret = rte_eth_dev_release_port(dev);
	}
	/*
	 * The last device goes (rte_eal_cleanup(), or the application
	 * removed them all): pools still held by the application are freed
	 * now, as EAL's memory will be.
	 */
	if (rte_eal_process_type() == RTE_PROC_PRIMARY &&
	    __atomic_sub_fetch(&ipoib_nr_devs, 1, __ATOMIC_RELAXED) == 0)
		ipoib_reaper_fini();
	return ret;
}

static struct rte_vdev_driver ipoib_vdev_driver = {
	.probe = ipoib_probe,
	.remove = ipoib_remove,
};

RTE_PMD_REGISTER_VDEV(net_ipoibcm, ipoib_vdev_driver);
RTE_PMD_REGISTER_PARAM_STRING(net_ipoibcm, IPOIB_PARAM_STRING);
