/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * What the port receives and how it presents it, as the ethdev operations
 * applications call at start-up ask, with their meaning on InfiniBand:
 *
 * - promiscuous mode: accepted, changes nothing. An IB port receives what
 *   the fabric addresses to its QPs (its own address) and the groups it
 *   joined; it cannot see the unicast of other ports, and every frame it
 *   gets is already for it. (allmulticast: ipoib_mcast.c.)
 * - mac_addr_set: the port's own MAC is local to it. Received frames are
 *   addressed to it and ARP/ND naming it stand for the port's hardware
 *   address; the fabric and the peers keep knowing the port by its
 *   hardware address (and the MAC derived from it), so nothing is
 *   announced. A MAC a peer already stands for is refused.
 * - packet types: ipoib_ptype.h.
 */

#include <errno.h>

#include <rte_ether.h>
#include <rte_mbuf_ptype.h>

#include "ipoib_cm.h"
#include "ipoib_filter.h"
#include "ipoib_log.h"
#include "ipoib_ptype.h"

/* What ipoib_ptype.h sets; rte_eth_dev_get_supported_ptypes(). */
static const uint32_t ipoib_ptypes[] = {
	RTE_PTYPE_L2_ETHER,
	RTE_PTYPE_L2_ETHER_ARP,
	RTE_PTYPE_L3_IPV4,
	RTE_PTYPE_L3_IPV4_EXT,
	RTE_PTYPE_L3_IPV6,
	RTE_PTYPE_L3_IPV6_EXT,
	RTE_PTYPE_L4_TCP,
	RTE_PTYPE_L4_UDP,
	RTE_PTYPE_L4_SCTP,
	RTE_PTYPE_L4_ICMP,
	RTE_PTYPE_L4_FRAG,
	RTE_PTYPE_UNKNOWN,
};

#define IPOIB_L4(pt)	((uint8_t)((pt) >> 8))

const uint8_t ipoib_ptype_l4_by_proto[256] = {
	[IPPROTO_TCP] = IPOIB_L4(RTE_PTYPE_L4_TCP),
	[IPPROTO_UDP] = IPOIB_L4(RTE_PTYPE_L4_UDP),
	[IPPROTO_SCTP] = IPOIB_L4(RTE_PTYPE_L4_SCTP),
	[IPPROTO_ICMP] = IPOIB_L4(RTE_PTYPE_L4_ICMP),
	[IPPROTO_ICMPV6] = IPOIB_L4(RTE_PTYPE_L4_ICMP),
};

int
ipoib_promiscuous_enable(struct rte_eth_dev *dev)
{
	RTE_SET_USED(dev);
	return 0;
}

int
ipoib_promiscuous_disable(struct rte_eth_dev *dev)
{
	RTE_SET_USED(dev);
	return 0;
}

int
ipoib_mac_addr_set(struct rte_eth_dev *dev, struct rte_ether_addr *mac)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	const char *why = NULL;
	int ret = 0;

	pthread_mutex_lock(&priv->ctrl_lock);
	/* ethdev sets the MAC in use again at every start */
	if (rte_is_same_ether_addr(mac, &priv->eth.port_mac)) {
		pthread_mutex_unlock(&priv->ctrl_lock);
		return 0;
	}
	if (!rte_is_valid_assigned_ether_addr(mac)) {
		why = "not a unicast MAC";
		ret = -EINVAL;
	} else if (priv->hca == NULL) {
		why = "the transport failed: reset the port first";
		ret = -EIO;
	} else if (ipoib_peer_by_mac(priv, mac) != NULL) {
		why = "a peer on the fabric stands for it";
		ret = -EADDRINUSE;
	}
	if (ret < 0) {
		priv->cstats.mac_set_refused++;
		pthread_mutex_unlock(&priv->ctrl_lock);
		IPOIB_LOG(ERR, "port %u: MAC " RTE_ETHER_ADDR_PRT_FMT " refused: "
			  "%s; the port keeps " RTE_ETHER_ADDR_PRT_FMT,
			  dev->data->port_id, RTE_ETHER_ADDR_BYTES(mac), why,
			  RTE_ETHER_ADDR_BYTES(&priv->mac));
		return ret;
	}
	/* ethdev copies it into priv->mac (data->mac_addrs) after us */
	priv->eth.port_mac = *mac;
	pthread_mutex_unlock(&priv->ctrl_lock);
	IPOIB_LOG(INFO, "port %u: local MAC " RTE_ETHER_ADDR_PRT_FMT,
		  dev->data->port_id, RTE_ETHER_ADDR_BYTES(mac));
	return 0;
}

const uint32_t *
ipoib_supported_ptypes(IPOIB_PTYPES_GET_PARAMS)
{
	RTE_SET_USED(dev);
	IPOIB_PTYPES_RETURN(ipoib_ptypes);
}

/* mask: layers (RTE_PTYPE_*_MASK) the application wants, or 0 for none. */
int
ipoib_ptypes_set(struct rte_eth_dev *dev, uint32_t mask)
{
	struct ipoib_priv *priv = dev->data->dev_private;

	__atomic_store_n(&priv->ptype_mask, mask, __ATOMIC_RELAXED);
	return 0;
}
