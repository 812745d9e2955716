/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The link: up while the port is started and its HCA port is ACTIVE.
 *
 * A port that goes down takes its connections with it: nothing reaches
 * the peers any more, not even a DREQ, so they are closed without one and
 * their peers connect again when next sent to. Peers see their own
 * connections to us fail (QP error) and do the same. When the port comes
 * back, spilled peers are retried at once instead of after their backoff.
 * Applications hear of both through RTE_ETH_EVENT_INTR_LSC.
 *
 * A transport that fails for good (the shm fabric's objects removed, an
 * HCA's fatal error) takes the link down the same way and asks the
 * application for a reset with RTE_ETH_EVENT_INTR_RESET: rte_eth_dev_reset()
 * then opens the transport again (ipoib_dev_reset()).
 */

#include <rte_ethdev.h>

#include "ipoib_conn.h"
#include "ipoib_link.h"
#include "ipoib_log.h"

static void
ipoib_link_fill(const struct ipoib_priv *priv, struct rte_eth_link *link)
{
	bool up = __atomic_load_n(&priv->started, __ATOMIC_ACQUIRE) &&
		  priv->port_active && !priv->fatal;

	memset(link, 0, sizeof(*link));
	link->link_speed = up ? priv->attr.link_speed : RTE_ETH_SPEED_NUM_NONE;
	link->link_duplex = RTE_ETH_LINK_FULL_DUPLEX;
	link->link_autoneg = RTE_ETH_LINK_FIXED;
	link->link_status = up ? RTE_ETH_LINK_UP : RTE_ETH_LINK_DOWN;
}

int
ipoib_link_update(struct rte_eth_dev *dev, int wait)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	struct rte_eth_link link;

	RTE_SET_USED(wait);
	ipoib_link_fill(priv, &link);
	return rte_eth_linkstatus_set(dev, &link);
}

void
ipoib_link_report(struct ipoib_priv *priv, bool notify)
{
	struct rte_eth_dev *dev = priv->eth_dev;
	struct rte_eth_link link;

	ipoib_link_fill(priv, &link);
	/* rte_eth_linkstatus_set() returns 0 when the status changed */
	if (rte_eth_linkstatus_set(dev, &link) == 0 && notify &&
	    dev->data->dev_conf.intr_conf.lsc)
		rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_LSC,
					     NULL);
}

void
ipoib_link_event(struct ipoib_priv *priv, bool active)
{
	uint16_t port = priv->eth_dev->data->port_id;

	if (active == priv->port_active)
		return;
	priv->port_active = active;
	if (active) {
		IPOIB_LOG(NOTICE, "port %u: link up", port);
		ipoib_peers_retry_now(priv);
	} else {
		IPOIB_LOG(NOTICE, "port %u: link down: connections closed",
			  port);
		priv->port_down_events++;
		ipoib_conns_close_all(priv, false);
	}
	ipoib_link_report(priv, true);
}

void
ipoib_link_fatal(struct ipoib_priv *priv)
{
	struct rte_eth_dev *dev = priv->eth_dev;

	if (priv->fatal)
		return;
	IPOIB_LOG(ERR, "port %u: the %s transport failed: reset the port "
		  "(rte_eth_dev_reset) to attach again", dev->data->port_id,
		  priv->ops->name);
	ipoib_link_event(priv, false);
	priv->fatal = true;
	ipoib_link_report(priv, true);
	rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_RESET, NULL);
}
