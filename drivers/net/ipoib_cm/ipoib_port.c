/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The port's life with its HCA: open at probe, the UD QP (whose QPN is
 * part of the port's address, hence created once), multicast groups, the
 * UD receive buffers, close.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include "ipoib_cm.h"
#include "ipoib_log.h"
#include "ipoib_reaper.h"
#include "ipoib_rss.h"
#include "ipoib_rxq.h"

/* The index of our P_Key in the port's table, or -1. */
static int
ipoib_pkey_index(const struct ipoib_port_attr *attr, uint16_t pkey)
{
	uint16_t i;

	for (i = 0; i < attr->npkeys; i++)
		if ((attr->pkeys[i] & 0x7fff) == (pkey & 0x7fff))
			return i;
	return -1;
}

/* The UD QP, its CQ and its receive buffers: the port's datagram side. */
static int
ipoib_ud_open(struct ipoib_priv *priv, const char *name, int pkey_index)
{
	const struct ipoib_hca_ops *ops = priv->ops;
	struct ipoib_ud *ud = &priv->ud;
	uint32_t bytes = IPOIB_GRH_LEN + priv->attr.ib_mtu;
	struct ipoib_qp_init qi = {
		.type = IPOIB_QPT_UD,
		.max_recv_wr = IPOIB_UD_RING,
		.max_send_wr = IPOIB_MAX_DESC,
		.max_recv_sge = 1,
		.pkey_index = (uint16_t)pkey_index,
		.qkey = priv->qkey,
		.qp_context = UINT32_MAX,
	};
	int ret;

	ret = ipoib_pool_create(priv, &ud->pool, name, "ud",
				IPOIB_UD_RING + IPOIB_UD_SPARE,
				RTE_PKTMBUF_HEADROOM + bytes);
	if (ret < 0)
		return ret;
	ret = ipoib_rx_ring_alloc(&priv->acct, &ud->ring, &ud->pool, IPOIB_UD_RING, bytes);
	if (ret < 0)
		goto fail_pool;
	ud->cq = ops->cq_create(priv->hca, IPOIB_UD_RING);
	if (ud->cq == NULL) {
		ret = -ENOMEM;
		goto fail_ring;
	}
	qi.recv_cq = ud->cq;
	priv->ud_qp = ops->qp_create(priv->hca, &qi);
	if (priv->ud_qp == NULL) {
		ret = -ENOMEM;
		goto fail_cq;
	}
	ret = ops->qp_modify(priv->ud_qp, IPOIB_QPS_RTS);
	if (ret < 0)
		goto fail_qp;
	priv->ud_qpn = ops->qp_num(priv->ud_qp);
	return 0;
fail_qp:
	ops->qp_destroy(priv->ud_qp);
	priv->ud_qp = NULL;
fail_cq:
	ops->cq_destroy(ud->cq);
	ud->cq = NULL;
fail_ring:
	ipoib_rx_ring_free(&priv->acct, &ud->ring);
fail_pool:
	ipoib_pool_free(priv, &ud->pool);
	return ret;
}

/* Flush the UD QP and take back its buffers before destroying it. */
static void
ipoib_ud_close(struct ipoib_priv *priv)
{
	unsigned int i;

	ipoib_ud_release(priv, &priv->ud_qp, &priv->ud);
	for (i = 0; i < priv->nr_mcast; i++)
		if (priv->mcast[i].ah != NULL)
			priv->ops->ah_destroy(priv->mcast[i].ah);
	priv->nr_mcast = 0;
}

static void
ipoib_port_log(const struct ipoib_priv *priv, const char *name)
{
	const uint8_t *g = priv->attr.gid;

	IPOIB_LOG(INFO, "%s: %s LID %u GID %02x%02x:%02x%02x:%02x%02x:%02x%02x:"
		  "%02x%02x:%02x%02x:%02x%02x:%02x%02x UD QPN 0x%06x MAC "
		  RTE_ETHER_ADDR_PRT_FMT " IB MTU %u%s", name, priv->attr.name,
		  priv->attr.lid, g[0], g[1], g[2], g[3], g[4], g[5], g[6],
		  g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15],
		  priv->ud_qpn, RTE_ETHER_ADDR_BYTES(&priv->mac),
		  priv->attr.ib_mtu, priv->attr.cm_reachable ? "" :
		  "; connected mode not offered (peers' REQs cannot reach "
		  "this port's CM): peers send to it over UD");
}

/* Probe time: open the HCA port, make the UD QP, join broadcast. */
int
ipoib_port_open(struct ipoib_priv *priv, const char *name)
{
	int ret, pkey_index;

	/* ipoib_config_parse() refused a transport this build lacks */
	priv->ops = ipoib_transport_ops(priv->cfg.transport);
	ipoib_rss_init(priv);
	rte_spinlock_init(&priv->mcast_lock);
	ret = priv->ops->open(&priv->cfg, name, &priv->hca);
	if (ret < 0) {
		IPOIB_LOG(ERR, "%s: cannot open the %s transport: %s", name,
			  priv->ops->name, strerror(-ret));
		return ret;
	}
	priv->ops->query_port(priv->hca, &priv->attr);
	pkey_index = ipoib_pkey_index(&priv->attr, priv->cfg.pkey);
	if (pkey_index < 0) {
		IPOIB_LOG(ERR, "%s: P_Key 0x%04x is not in the port's table",
			  name, priv->cfg.pkey);
		ret = -EINVAL;
		goto fail_hca;
	}
	priv->pkey = priv->cfg.pkey | IPOIB_PKEY_FULL;
	/* Q_Key and UD MTU, before the UD QP that uses them */
	ipoib_mcast_bcast_join(priv);
	ret = ipoib_peers_init(priv, name);
	if (ret < 0)
		goto fail_hca;
	priv->pkey_index = (uint16_t)pkey_index;
	ret = ipoib_ud_open(priv, name, pkey_index);
	if (ret < 0) {
		IPOIB_LOG(ERR, "%s: cannot create the UD QP: %s", name,
			  strerror(-ret));
		goto fail_peers;
	}
	/* connected mode is offered where peers' REQs can reach us */
	ipoib_hwaddr_set(&priv->eth.port_hw,
			 priv->attr.cm_reachable ? IPOIB_HWADDR_F_RC : 0,
			 priv->ud_qpn, priv->attr.gid);
	ipoib_mac_from_hwaddr(&priv->mac, &priv->eth.port_hw);
	priv->eth.port_mac = priv->mac;
	priv->eth.pkey = priv->pkey;
	priv->eth.resolve = ipoib_peer_resolve;
	priv->eth.resolve_arg = priv;
	priv->eth.adv_rc = ipoib_adv_rc;
	priv->eth.own_ip = ipoib_adv_own_ip;
	/* the broadcast group, and IPv6's all-nodes */
	ret = ipoib_mcast_open(priv);
	if (ret < 0)
		goto fail_ud;
	if (priv->ops->test != NULL && priv->ops->test->addr_publish != NULL)
		priv->ops->test->addr_publish(priv->hca, priv->mac.addr_bytes,
					      priv->ud_qpn,
					      priv->eth.port_hw.bytes[0]);
	ipoib_port_log(priv, name);
	return 0;
fail_ud:
	ipoib_ud_close(priv);
fail_peers:
	ipoib_peers_fini(priv);
fail_hca:
	priv->ops->close(priv->hca);
	priv->hca = NULL;
	return ret;
}

void
ipoib_port_close(struct ipoib_priv *priv)
{
	if (priv->hca == NULL)
		return;
	ipoib_mcast_close(priv);
	ipoib_ud_close(priv);
	/* telemetry reads the peer table under the lock */
	pthread_mutex_lock(&priv->ctrl_lock);
	ipoib_peers_fini(priv);
	pthread_mutex_unlock(&priv->ctrl_lock);
	/* open while pools of its memory wait for the application */
	ipoib_reaper_close_hca(priv->ops, priv->hca);
	priv->hca = NULL;
}
