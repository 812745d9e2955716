/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * What a port reports of itself and its queues: the operations that read
 * only the port's shared data, which the primary's and the secondaries'
 * operation tables (ipoib_ethdev.c, ipoib_secondary.c) both use, and the
 * driver state of a port number.
 */

#include <stdio.h>

#include <ethdev_driver.h>
#include <rte_eal.h>

#include "ipoib_cm.h"
#include "ipoib_info.h"
#include "ipoib_rxq.h"
#include "ipoib_telemetry.h"
#include "ipoib_tx.h"

int
ipoib_dev_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	struct ipoib_priv *priv = dev->data->dev_private;

	info->max_mac_addrs = 1;
	info->max_rx_queues = IPOIB_MAX_QUEUES;
	info->max_tx_queues = IPOIB_MAX_QUEUES;
	info->min_mtu = IPOIB_MIN_MTU;
	info->max_mtu = IPOIB_CM_MTU;
	info->max_rx_pktlen = IPOIB_CM_MTU + RTE_ETHER_HDR_LEN;
	info->min_rx_bufsize = RTE_ETHER_MIN_LEN;
	info->rx_offload_capa = RTE_ETH_RX_OFFLOAD_SCATTER;
	info->tx_offload_capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	/* what the transport allows (ethdev checks queue setups with it) */
	info->rx_desc_lim = (struct rte_eth_desc_lim){
		.nb_max = ipoib_rxq_desc_max(priv),
		.nb_min = IPOIB_MIN_DESC,
		.nb_align = 1,
	};
	/* a transmit queue sends on QPs of IPOIB_MAX_DESC send WRs at most */
	info->tx_desc_lim = info->rx_desc_lim;
	info->tx_desc_lim.nb_max = (uint16_t)RTE_MIN((uint32_t)IPOIB_MAX_DESC,
						     priv->attr.max_qp_wr);
	info->default_rxportconf.ring_size = 512;
	info->default_txportconf.ring_size = 512;
	info->default_rxportconf.nb_queues = 1;
	info->default_txportconf.nb_queues = 1;
	/* UD by flow (RC by connection, whatever the configuration) */
	info->flow_type_rss_offloads = priv->rss_offloads;
	info->hash_key_size = priv->rss_offloads != 0 ? IPOIB_RSS_KEY_LEN : 0;
	info->speed_capa = RTE_ETH_LINK_SPEED_FIXED;
	info->dev_capa = 0;
	return 0;
}

void
ipoib_rxq_info_get(struct rte_eth_dev *dev, uint16_t qid,
		   struct rte_eth_rxq_info *qinfo)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	struct ipoib_rxq *rxq = dev->data->rx_queues[qid];

	qinfo->mp = rxq->app_mp;
	qinfo->nb_desc = rxq->nb_desc;
	qinfo->scattered_rx = priv->rc_buf + RTE_PKTMBUF_HEADROOM >
			      rte_pktmbuf_data_room_size(rxq->app_mp);
	qinfo->conf.offloads = dev->data->dev_conf.rxmode.offloads;
	qinfo->rx_buf_size = rte_pktmbuf_data_room_size(rxq->app_mp) -
			     RTE_PKTMBUF_HEADROOM;
}

void
ipoib_txq_info_get(struct rte_eth_dev *dev, uint16_t qid,
		   struct rte_eth_txq_info *qinfo)
{
	struct ipoib_txq *txq = dev->data->tx_queues[qid];

	qinfo->nb_desc = txq->nb_desc;
	qinfo->conf.offloads = dev->data->dev_conf.txmode.offloads;
}

/*
 * Ours when the port's operations report its information here; in the
 * primary only (a secondary's port has no driver state of its own).
 */
struct ipoib_priv *
ipoib_priv_of_port(uint16_t port)
{
	struct rte_eth_dev *dev;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY ||
	    !rte_eth_dev_is_valid_port(port))
		return NULL;
	dev = &rte_eth_devices[port];
	return dev->dev_ops != NULL &&
	       dev->dev_ops->dev_infos_get == ipoib_dev_infos_get ?
	       dev->data->dev_private : NULL;
}
