/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The driver's own API (rte_pmd_ipoib_cm.h).
 */

#include <errno.h>
#include <string.h>

#include <rte_compat.h>

#include "ipoib_cm.h"
#include "ipoib_conn.h"
#include "ipoib_telemetry.h"
#include "rte_pmd_ipoib_cm.h"

int
rte_pmd_ipoibcm_peer_get(uint16_t port_id, const struct rte_ether_addr *mac,
			 struct rte_pmd_ipoibcm_peer *info)
{
	struct ipoib_priv *priv = ipoib_priv_of_port(port_id);
	struct ipoib_peer_ctr c[IPOIB_PEER_CTR_KINDS];
	const struct ipoib_peer *p;

	if (priv == NULL)
		return -ENODEV;
	if (priv->hca == NULL)
		return -ENOENT;		/* a failed reset left no table */
	/* the control thread updates the peer in its rounds, under the lock */
	pthread_mutex_lock(&priv->ctrl_lock);
	p = ipoib_peer_by_mac(priv, mac);
	if (p == NULL) {
		pthread_mutex_unlock(&priv->ctrl_lock);
		return -ENOENT;
	}
	memset(info, 0, sizeof(*info));
	info->state = (enum rte_pmd_ipoibcm_peer_state)
		      __atomic_load_n(&p->state, __ATOMIC_RELAXED);
	info->rx_rc = p->rx != NULL;
	info->qpn = p->qpn;
	memcpy(info->gid, ipoib_hwaddr_gid(&p->hw), sizeof(info->gid));
	ipoib_peer_counts(&priv->pt, p, c);
	info->tx_rc_packets = c[IPOIB_PEER_CTR_TX_RC].pkts;
	info->tx_ud_packets = c[IPOIB_PEER_CTR_TX_UD].pkts;
	info->rx_packets = c[IPOIB_PEER_CTR_RX].pkts;
	info->idle_ms = (ipoib_now_ns() - p->last_active_ns) / 1000000;
	if (info->state == RTE_PMD_IPOIBCM_PEER_CONNECTED)
		info->tx_mtu = p->tx_mtu;
	pthread_mutex_unlock(&priv->ctrl_lock);
	return 0;
}

int
rte_pmd_ipoibcm_peer_disconnect(uint16_t port_id,
				const struct rte_ether_addr *mac)
{
	struct ipoib_priv *priv = ipoib_priv_of_port(port_id);
	struct ipoib_peer *p;
	int ret = -ENOENT;

	if (priv == NULL)
		return -ENODEV;
	/* the control thread holds ctrl_lock for each of its rounds */
	pthread_mutex_lock(&priv->ctrl_lock);
	if (!__atomic_load_n(&priv->started, __ATOMIC_ACQUIRE)) {
		ret = -EAGAIN;
	} else {
		p = ipoib_peer_by_mac(priv, mac);
		if (p != NULL)
			ret = ipoib_conn_disconnect_peer(priv, p);
	}
	pthread_mutex_unlock(&priv->ctrl_lock);
	return ret;
}

/*
 * The API's struct is the application's ABI; inside, the settings are one
 * struct ipoib_faults (devargs, HCA interface, fabric): converted here only.
 */
int
rte_pmd_ipoibcm_faults_set(uint16_t port_id,
			   const struct rte_pmd_ipoibcm_faults *f)
{
	struct ipoib_priv *priv = ipoib_priv_of_port(port_id);
	struct ipoib_faults hf = {
		.drop_ppm = f->drop_ppm,
		.cm_delay_ms = f->cm_delay_ms,
		.rej_after = f->rej_after,
		.cm_drop_mask = f->cm_drop_mask,
		.port_down = f->port_down,
		.ud_send_refuse = f->ud_send_refuse,
		.sa_drop_ppm = f->sa_drop_ppm,
		.ah_hold = f->ah_hold,
	};

	if (priv == NULL)
		return -ENODEV;
	if (priv->hca == NULL)
		return -EIO;
	if (priv->ops->test == NULL || priv->ops->test->faults_set == NULL)
		return -ENOTSUP;
	return priv->ops->test->faults_set(priv->hca, &hf);
}

int
rte_pmd_ipoibcm_faults_get(uint16_t port_id, struct rte_pmd_ipoibcm_faults *f)
{
	struct ipoib_priv *priv = ipoib_priv_of_port(port_id);
	struct ipoib_faults hf;
	int ret;

	if (priv == NULL)
		return -ENODEV;
	if (priv->hca == NULL)
		return -EIO;
	if (priv->ops->test == NULL || priv->ops->test->faults_get == NULL)
		return -ENOTSUP;
	ret = priv->ops->test->faults_get(priv->hca, &hf);
	if (ret < 0)
		return ret;
	f->drop_ppm = hf.drop_ppm;
	f->cm_delay_ms = hf.cm_delay_ms;
	f->rej_after = hf.rej_after;
	f->cm_drop_mask = hf.cm_drop_mask;
	f->port_down = hf.port_down;
	f->ud_send_refuse = hf.ud_send_refuse;
	f->sa_drop_ppm = hf.sa_drop_ppm;
	f->ah_hold = hf.ah_hold;
	return 0;
}
