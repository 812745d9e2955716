/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_PTYPE_H
#define IPOIB_PTYPE_H

/*
 * mbuf packet_type on receive. The common frame (unicast IPv4, or IPv6
 * that is not ICMPv6) gets it from the IP header the receive path has
 * already checked: what rte_net_get_ptype() would say, and L4_ICMP for
 * ICMP. Every other frame (ARP, ND, multicast, IPv6 behind extension
 * headers) is read again by ipoib_ptype_slow() once it is an Ethernet
 * frame. rte_eth_dev_set_ptypes() masks the layers the application asked
 * for (ptype_mask); the list is ipoib_ptypes[] (ipoib_filter.c).
 */

#include <netinet/in.h>

#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mbuf_ptype.h>
#include <rte_net.h>

#include "ipoib_wire.h"

/*
 * The L4 packet type of each IP protocol number, shifted right by 8 (the
 * RTE_PTYPE_L4_* values lie in bits 8 to 11): one load per packet where a
 * switch took a chain of compares. In ipoib_filter.c, beside the list.
 */
extern const uint8_t ipoib_ptype_l4_by_proto[256];

static __rte_always_inline uint32_t
ipoib_ptype_l4(uint8_t proto)
{
	return (uint32_t)ipoib_ptype_l4_by_proto[proto] << 8;
}

/* The packet type of an IPv4 header checked by ipoib_rx_ipv4_whole(). */
static __rte_always_inline uint32_t
ipoib_ptype_ipv4(const struct rte_ipv4_hdr *ip)
{
	uint32_t pt = RTE_PTYPE_L2_ETHER |
		      (ip->version_ihl == RTE_IPV4_VHL_DEF ? RTE_PTYPE_L3_IPV4 :
		       RTE_PTYPE_L3_IPV4_EXT);

	if (ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_OFFSET_MASK |
					   RTE_IPV4_HDR_MF_FLAG))
		return pt | RTE_PTYPE_L4_FRAG;
	return pt | ipoib_ptype_l4(ip->next_proto_id);
}

/* IPv6 protocols rte_net_get_ptype() counts as extension headers. */
static __rte_always_inline bool
ipoib_ptype_ip6_ext(uint8_t proto)
{
	return proto == IPPROTO_HOPOPTS || proto == IPPROTO_ROUTING ||
	       proto == IPPROTO_FRAGMENT || proto == IPPROTO_ESP ||
	       proto == IPPROTO_AH || proto == IPPROTO_DSTOPTS;
}

/* Any Ethernet frame: ARP, IP behind extension headers, ICMP. */
static inline uint32_t
ipoib_ptype_slow(const struct rte_mbuf *m)
{
	struct rte_net_hdr_lens hl;
	uint32_t pt = rte_net_get_ptype(m, &hl, RTE_PTYPE_ALL_MASK);
	const struct rte_ether_hdr *eh =
		rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint8_t proto, copy;
	const uint8_t *p;

	if (eh->ether_type == RTE_BE16(RTE_ETHER_TYPE_ARP))
		return RTE_PTYPE_L2_ETHER_ARP;
	if ((pt & RTE_PTYPE_L4_MASK) != 0 || (pt & RTE_PTYPE_L3_MASK) == 0)
		return pt;
	/* the last next-header or protocol field: ICMP is L4 too */
	if ((pt & RTE_PTYPE_L3_MASK) == RTE_PTYPE_L3_IPV4 ||
	    (pt & RTE_PTYPE_L3_MASK) == RTE_PTYPE_L3_IPV4_EXT) {
		p = rte_pktmbuf_read(m, hl.l2_len + offsetof(struct rte_ipv4_hdr,
				     next_proto_id), 1, &copy);
		proto = p != NULL ? *p : 0;
		return pt | (proto == IPPROTO_ICMP ? RTE_PTYPE_L4_ICMP : 0);
	}
	if ((pt & RTE_PTYPE_L3_MASK) == RTE_PTYPE_L3_IPV6) {
		p = rte_pktmbuf_read(m, hl.l2_len + offsetof(struct rte_ipv6_hdr,
				     proto), 1, &copy);
		proto = p != NULL ? *p : 0;
		return pt | (proto == IPPROTO_ICMPV6 ? RTE_PTYPE_L4_ICMP : 0);
	}
	return pt;
}

#endif /* IPOIB_PTYPE_H */
