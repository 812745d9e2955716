/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_ETH_H
#define IPOIB_ETH_H

/*
 * Ethernet emulation: stateless transforms between the Ethernet frames the
 * application sees and IPoIB frames (RFC 4391). ARP and IPv6 Neighbor
 * Discovery carry link-layer addresses and are rewritten (6 <-> 20 bytes);
 * everything else only swaps the 14-byte Ethernet header for the 4-byte
 * IPoIB header. The neighbour table lives elsewhere (ctx->resolve).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "ipoib_wire.h"

struct ipoib_eth_ctx {
	struct rte_ether_addr port_mac;	/* the port's own MAC */
	struct ipoib_hwaddr port_hw;	/* own hardware address, flags included */
	uint16_t pkey;			/* full-member bit set */
	/* resolve a unicast MAC to a peer hardware address; 0 or -ENOENT */
	int (*resolve)(void *arg, const struct rte_ether_addr *mac,
		       struct ipoib_hwaddr *ha);
	void *resolve_arg;
	/*
	 * Optional, with resolve_arg. adv_rc: may an ARP/ND message about
	 * to go to dst (NULL: a group) carry the connected-mode flag in our
	 * address? Called once per such message that will go out; false
	 * sends it without the flag (ipoib_adv.c). own_ip: the application
	 * sent ARP/ND naming one of its addresses (len 4 or 16, network
	 * order) with our MAC.
	 */
	bool (*adv_rc)(void *arg, const struct rte_ether_addr *dst);
	void (*own_ip)(void *arg, const uint8_t *ip, unsigned int len);
};

enum ipoib_dst_type {
	IPOIB_DST_UNICAST,	/* look the MAC up in the neighbour table */
	IPOIB_DST_MULTICAST,	/* send on UD to the MGID */
};

struct ipoib_tx_dst {
	enum ipoib_dst_type type;
	struct rte_ether_addr mac;	/* the Ethernet destination */
	uint8_t mgid[IPOIB_GID_LEN];	/* multicast only */
};

/* A MAC -> hardware address binding found in a received ARP/ND message. */
struct ipoib_learn {
	bool valid;
	struct rte_ether_addr mac;
	struct ipoib_hwaddr hw;		/* flags included: RC capability */
};

/*
 * The MAC that stands for a hardware address: a locally administered
 * unicast MAC hashed from the QPN and the GID only (the flags byte is not
 * known for UD receives), so every receiver derives the same one.
 */
void ipoib_mac_from_hwaddr(struct rte_ether_addr *mac,
			   const struct ipoib_hwaddr *ha);

/*
 * Transmit: turn the Ethernet frame in m into an IPoIB frame, in place, and
 * say where it goes. The Ethernet header and any ARP/ND message must be in
 * the first segment, which must not be shared (direct, refcnt 1). ARP and
 * ND frames become one segment (trailing padding is dropped) and may grow
 * into the first segment's tailroom.
 *
 * Returns 0, or -EBADMSG (malformed: truncated headers, lengths that do
 * not add up), -ENOENT (an ARP/ND link-layer address is not in the
 * neighbour table), -ENOSPC (no tailroom), -EPROTONOSUPPORT (VLAN tag,
 * 802.3 length, multicast MAC with no IPoIB group), -EPERM (first segment
 * shared). On error m is unchanged; *dst is undefined.
 */
/*
 * Where the Ethernet frame m goes (its destination MAC and, for
 * multicast, the group's MGID), without changing it: 0 or an error of
 * ipoib_eth_encap()'s but -EPERM.
 */
int ipoib_eth_dst(const struct rte_mbuf *m, const struct ipoib_eth_ctx *ctx,
		  struct ipoib_tx_dst *dst);
int ipoib_eth_encap(struct rte_mbuf *m, const struct ipoib_eth_ctx *ctx,
		    struct ipoib_tx_dst *dst);

/*
 * Receive: turn the IPoIB frame in m (4-byte header first, at least 10
 * bytes of headroom) into an Ethernet frame, in place. src is the sender's
 * hardware address as the receiver knows it; mcast says the frame came on a
 * multicast group. ARP/ND messages must be in the first segment; they are
 * rewritten and their sender binding returned in *learn (learn->valid is
 * false for other frames).
 *
 * Returns 0, or -EBADMSG (malformed), -ENOSPC (no headroom). On error m is
 * unchanged and learn->valid is false.
 */
int ipoib_eth_decap(struct rte_mbuf *m, const struct ipoib_hwaddr *src,
		    bool mcast, const struct ipoib_eth_ctx *ctx,
		    struct ipoib_learn *learn);

#endif /* IPOIB_ETH_H */
