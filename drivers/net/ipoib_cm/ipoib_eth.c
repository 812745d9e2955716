/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "ipoib_compat.h"
#include "ipoib_eth.h"

/* The Ethernet header is 10 bytes longer than the IPoIB header. */
#define ETH_IPOIB_DELTA		(RTE_ETHER_HDR_LEN - IPOIB_HDR_LEN)
#define ETH_ARP_LEN		((unsigned int)sizeof(struct rte_arp_hdr))
#define IPV6_HDR_LEN		((unsigned int)sizeof(struct rte_ipv6_hdr))
#define ETH_TYPE_MIN		0x0600	/* IEEE 802.3: lower is a length */

/* IPv6 Neighbor Discovery (RFC 4861) messages and options. */
#define ND_ROUTER_SOL		133
#define ND_ROUTER_ADV		134
#define ND_REDIRECT		137
#define ND_OPT_ETH_LEN		8	/* type, length 1, 6-byte MAC */
/* an IPoIB option (IPOIB_ND_OPT_IB_LEN, ipoib_wire.h) is this longer */
#define ND_OPT_GROW		(IPOIB_ND_OPT_IB_LEN - ND_OPT_ETH_LEN)
#define ND_MAX_LLA		4	/* link-layer options per message */

/* A copy of the IPv4 or IPv6 header of a frame. */
union l3_hdr {
	struct rte_ipv4_hdr v4;
	struct rte_ipv6_hdr v6;
};

/*
 * The ND message of a frame: IPv6 header, ICMPv6 body, link-layer options.
 * The header is used through a copy: in the frame it may sit at an odd
 * address, and DPDK 24.11 aligns struct rte_ipv6_hdr to 2 bytes.
 */
struct nd_msg {
	struct rte_ipv6_hdr ip6;	/* copy of the frame's */
	uint8_t *l3;			/* the frame's IPv6 header */
	uint8_t *icmp;
	unsigned int plen;		/* IPv6 payload length */
	unsigned int n;			/* link-layer options found */
	unsigned int off[ND_MAX_LLA];	/* their offsets from icmp */
};

void
ipoib_mac_from_hwaddr(struct rte_ether_addr *mac,
		      const struct ipoib_hwaddr *ha)
{
	RTE_BUILD_BUG_ON(sizeof(mac->addr_bytes) != IPOIB_MAC_LEN);
	RTE_BUILD_BUG_ON(IPOIB_MAC_LOCAL_ADMIN != RTE_ETHER_LOCAL_ADMIN_ADDR);
	ipoib_hwaddr_to_mac(mac->addr_bytes, ha);
}

/* Hardware address for a MAC named in ARP/ND: our own, or a neighbour's. */
static int
mac_to_hwaddr(const struct ipoib_eth_ctx *ctx,
	      const struct rte_ether_addr *mac, struct ipoib_hwaddr *ha)
{
	if (rte_is_same_ether_addr(mac, &ctx->port_mac)) {
		*ha = ctx->port_hw;
		return 0;
	}
	if (!rte_is_unicast_ether_addr(mac) || ctx->resolve == NULL ||
	    ctx->resolve(ctx->resolve_arg, mac, ha) != 0)
		return -ENOENT;
	return 0;
}

static void
hwaddr_to_mac(const struct ipoib_eth_ctx *ctx, const struct ipoib_hwaddr *ha,
	      struct rte_ether_addr *mac)
{
	if (ipoib_hwaddr_eq_qpn_gid(ha, &ctx->port_hw))
		*mac = ctx->port_mac;
	else
		ipoib_mac_from_hwaddr(mac, ha);
}

static bool
hwaddr_is_zero(const struct ipoib_hwaddr *ha)
{
	static const struct ipoib_hwaddr zero;

	return ipoib_hwaddr_eq_qpn_gid(ha, &zero);
}

/*
 * Our own address goes into an ARP/ND message to dst (a group: NULL):
 * note the IP address it names for us (len 4 or 16; NULL: none), and
 * drop the connected-mode flag from ha where ctx->adv_rc says so.
 */
static void
adv_own(const struct ipoib_eth_ctx *ctx, const struct ipoib_tx_dst *dst,
	const uint8_t *ip, unsigned int len, struct ipoib_hwaddr *ha)
{
	if (ip != NULL && ctx->own_ip != NULL)
		ctx->own_ip(ctx->resolve_arg, ip, len);
	if ((ha->bytes[0] & IPOIB_HWADDR_F_RC) && ctx->adv_rc != NULL &&
	    !ctx->adv_rc(ctx->resolve_arg, dst->type == IPOIB_DST_UNICAST ?
			 &dst->mac : NULL))
		ha->bytes[0] &= ~IPOIB_HWADDR_F_RC;
}

/* A binding from a received ARP/ND message; never our own address. */
static void
learn_set(struct ipoib_learn *learn, const struct ipoib_eth_ctx *ctx,
	  const struct ipoib_hwaddr *ha)
{
	if (learn->valid || hwaddr_is_zero(ha) ||
	    ipoib_hwaddr_eq_qpn_gid(ha, &ctx->port_hw))
		return;
	learn->valid = true;
	learn->hw = *ha;
	ipoib_mac_from_hwaddr(&learn->mac, ha);
}

/* Make the frame the first len bytes of the first segment. */
static void
frame_truncate(struct rte_mbuf *m, uint16_t len)
{
	if (m->next != NULL) {
		rte_pktmbuf_free(m->next);
		m->next = NULL;
		m->nb_segs = 1;
	}
	m->data_len = len;
	m->pkt_len = len;
}

/* Do len bytes placed off bytes from the frame's start fit its buffer? */
static bool
frame_fits(const struct rte_mbuf *m, int off, uint16_t len)
{
	int start = m->data_off + off;

	return start >= 0 && start + len <= m->buf_len;
}

/* Replace the frame by len bytes of buf placed off bytes from its start. */
static int
frame_replace(struct rte_mbuf *m, int off, const void *buf, uint16_t len)
{
	int start = m->data_off + off;

	if (!frame_fits(m, off, len))
		return -ENOSPC;
	memcpy((uint8_t *)m->buf_addr + start, buf, len);
	m->data_off = (uint16_t)start;
	frame_truncate(m, len);
	return 0;
}

/*
 * Copy the IPv4/IPv6 header at off; it must fit in the frame, and so must
 * the packet its length field announces. Other types pass unread.
 */
static int
l3_get(const struct rte_mbuf *m, unsigned int off, uint16_t type,
       union l3_hdr *l3)
{
	unsigned int len, hlen;
	const void *p;

	if (type == RTE_ETHER_TYPE_IPV4) {
		p = rte_pktmbuf_read(m, off, sizeof(l3->v4), l3);
		if (p == NULL)
			return -EBADMSG;
		if (p != l3)
			memcpy(&l3->v4, p, sizeof(l3->v4));
		hlen = rte_ipv4_hdr_len(&l3->v4);
		len = rte_be_to_cpu_16(l3->v4.total_length);
		if ((l3->v4.version_ihl >> 4) != 4 ||
		    hlen < sizeof(l3->v4) || len < hlen)
			return -EBADMSG;
	} else if (type == RTE_ETHER_TYPE_IPV6) {
		p = rte_pktmbuf_read(m, off, sizeof(l3->v6), l3);
		if (p == NULL)
			return -EBADMSG;
		if (p != l3)
			memcpy(&l3->v6, p, sizeof(l3->v6));
		len = IPV6_HDR_LEN + rte_be_to_cpu_16(l3->v6.payload_len);
		if ((rte_be_to_cpu_32(l3->v6.vtc_flow) >> 28) != 6)
			return -EBADMSG;
	} else {
		return 0;
	}
	return off + len > m->pkt_len ? -EBADMSG : 0;
}

/* Length of an ND message before its options (RFC 4861 s4); 0: not ND. */
static unsigned int
nd_fixed_len(uint8_t type)
{
	switch (type) {
	case ND_ROUTER_SOL:
		return 8;
	case ND_ROUTER_ADV:
		return 16;
	case IPOIB_ND_NEIGH_SOL:
	case IPOIB_ND_NEIGH_ADV:
		return 24;
	case ND_REDIRECT:
		return 40;
	}
	return 0;
}

/*
 * Find the ND message at l3_off (ip6: a checked copy of its IPv6 header)
 * and its link-layer address options, which must all be lla_len bytes long
 * (8 Ethernet, 24 IPoIB). Returns 1 for an ND message (checksum verified
 * when it has such options), 0 for any other packet, -EBADMSG when
 * malformed. Options are checked as RFC 4861 s6.1 requires (no zero
 * length, none past the end); the message must be in the first segment.
 */
static int
nd_parse(struct rte_mbuf *m, unsigned int l3_off,
	 const struct rte_ipv6_hdr *ip6, unsigned int lla_len,
	 struct nd_msg *nd)
{
	unsigned int fixed, off, olen;
	uint8_t tc[2];
	const uint8_t *p;

	if (ip6->proto != IPPROTO_ICMPV6)
		return 0;
	/* ND has code 0; anything else is not ours to rewrite. */
	p = rte_pktmbuf_read(m, l3_off + IPV6_HDR_LEN, sizeof(tc), tc);
	if (p == NULL || p[1] != 0 || (fixed = nd_fixed_len(p[0])) == 0)
		return 0;
	nd->plen = rte_be_to_cpu_16(ip6->payload_len);
	if (nd->plen < fixed || m->data_len < l3_off + IPV6_HDR_LEN + nd->plen)
		return -EBADMSG;
	nd->ip6 = *ip6;
	nd->l3 = rte_pktmbuf_mtod_offset(m, uint8_t *, l3_off);
	nd->icmp = nd->l3 + IPV6_HDR_LEN;
	nd->n = 0;
	for (off = fixed; off < nd->plen; off += olen) {
		if (nd->plen - off < 2)
			return -EBADMSG;
		olen = nd->icmp[off + 1] * 8u;
		if (olen == 0 || olen > nd->plen - off)
			return -EBADMSG;
		if (nd->icmp[off] != IPOIB_ND_OPT_SLLA &&
		    nd->icmp[off] != IPOIB_ND_OPT_TLLA)
			continue;
		if (olen != lla_len || nd->n == ND_MAX_LLA)
			return -EBADMSG;
		nd->off[nd->n++] = off;
	}
	if (nd->n > 0 && rte_ipv6_udptcp_cksum_verify(&nd->ip6, nd->icmp) != 0)
		return -EBADMSG;
	return 1;
}

/* New payload length and ICMPv6 checksum after the options changed size. */
static void
nd_set_len(struct nd_msg *nd, unsigned int plen)
{
	uint16_t ck;

	nd->ip6.payload_len = rte_cpu_to_be_16((uint16_t)plen);
	memcpy(nd->l3 + offsetof(struct rte_ipv6_hdr, payload_len),
	       &nd->ip6.payload_len, sizeof(nd->ip6.payload_len));
	memset(nd->icmp + 2, 0, sizeof(ck));
	ck = rte_ipv6_udptcp_cksum(&nd->ip6, nd->icmp);
	memcpy(nd->icmp + 2, &ck, sizeof(ck));
}

/* Ethernet destination -> where the IPoIB frame goes (RFC 4391 s4). */
static int
encap_dst(const struct rte_mbuf *m, const struct ipoib_eth_ctx *ctx,
	  uint16_t type, const union l3_hdr *l3, struct ipoib_tx_dst *dst)
{
	const uint8_t *da = dst->mac.addr_bytes;

	memcpy(&dst->mac, rte_pktmbuf_mtod(m, void *), sizeof(dst->mac));
	dst->type = IPOIB_DST_MULTICAST;
	if (rte_is_unicast_ether_addr(&dst->mac)) {
		dst->type = IPOIB_DST_UNICAST;
	} else if (rte_is_broadcast_ether_addr(&dst->mac)) {
		ipoib_mgid_bcast(dst->mgid, ctx->pkey);
	} else if (da[0] == 0x01 && da[1] == 0x00 && da[2] == 0x5e &&
		   type == RTE_ETHER_TYPE_IPV4) {
		/* The MAC has 23 bits of the group, the MGID needs 28. */
		if (!ipoib_ipv4_is_mcast(rte_be_to_cpu_32(l3->v4.dst_addr)))
			return -EBADMSG;
		ipoib_mgid_ipv4(dst->mgid, ctx->pkey, l3->v4.dst_addr);
	} else if (da[0] == 0x33 && da[1] == 0x33 &&
		   type == RTE_ETHER_TYPE_IPV6) {
		if (IPOIB_IPV6_DST(&l3->v6)[0] != 0xff)
			return -EBADMSG;
		ipoib_mgid_ipv6(dst->mgid, ctx->pkey, IPOIB_IPV6_DST(&l3->v6));
	} else {
		return -EPROTONOSUPPORT;	/* no IPoIB group for it */
	}
	return 0;
}

/* Ethernet ARP (28 bytes) -> IPoIB ARP (56 bytes), RFC 4391 s9.1. */
static int
encap_arp(struct rte_mbuf *m, const struct ipoib_eth_ctx *ctx,
	  const struct ipoib_tx_dst *dst)
{
	struct __rte_packed_begin {
		struct ipoib_hdr h;
		struct ipoib_arp a;
	} __rte_packed_end out;
	struct rte_ether_addr sha, tha;
	struct rte_arp_hdr ea;
	int ret;

	RTE_BUILD_BUG_ON(sizeof(out) != IPOIB_HDR_LEN + IPOIB_ARP_LEN);
	if (m->data_len < RTE_ETHER_HDR_LEN + ETH_ARP_LEN)
		return -EBADMSG;
	/* A copy: the frame may sit at any alignment. */
	memcpy(&ea, rte_pktmbuf_mtod_offset(m, void *, RTE_ETHER_HDR_LEN),
	       sizeof(ea));
	if (ea.arp_hardware != RTE_BE16(RTE_ARP_HRD_ETHER) ||
	    ea.arp_protocol != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	    ea.arp_hlen != RTE_ETHER_ADDR_LEN || ea.arp_plen != 4)
		return -EBADMSG;
	sha = ea.arp_data.arp_sha;
	tha = ea.arp_data.arp_tha;
	ret = mac_to_hwaddr(ctx, &sha, &out.a.sender_hw);
	if (ret < 0)
		return ret;
	/* A request names no target (Linux arp_create: zeros). */
	if (ea.arp_opcode == RTE_BE16(RTE_ARP_OP_REQUEST) &&
	    (rte_is_zero_ether_addr(&tha) || rte_is_broadcast_ether_addr(&tha)))
		memset(&out.a.target_hw, 0, sizeof(out.a.target_hw));
	else
		ret = mac_to_hwaddr(ctx, &tha, &out.a.target_hw);
	if (ret < 0)
		return ret;
	out.h.proto = RTE_BE16(RTE_ETHER_TYPE_ARP);
	out.h.reserved = 0;
	out.a.hw_type = RTE_BE16(IPOIB_ARPHRD_INFINIBAND);
	out.a.proto = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	out.a.hlen = IPOIB_HWADDR_LEN;
	out.a.plen = 4;
	out.a.op = ea.arp_opcode;
	out.a.sender_ip = ea.arp_data.arp_sip;
	out.a.target_ip = ea.arp_data.arp_tip;
	if (!frame_fits(m, ETH_IPOIB_DELTA, sizeof(out)))
		return -ENOSPC;
	if (rte_is_same_ether_addr(&sha, &ctx->port_mac))
		adv_own(ctx, dst, ea.arp_data.arp_sip != 0 ?
			(const uint8_t *)&ea.arp_data.arp_sip : NULL,
			sizeof(ea.arp_data.arp_sip), &out.a.sender_hw);
	/* In place of the Ethernet ARP: grows into the tailroom. */
	return frame_replace(m, ETH_IPOIB_DELTA, &out, sizeof(out));
}

/* Ethernet SLLA/TLLA options (8 bytes) -> IPoIB ones (24 bytes). */
static int
encap_nd(struct rte_mbuf *m, const struct ipoib_eth_ctx *ctx,
	 const struct rte_ipv6_hdr *ip6, const struct ipoib_tx_dst *dst)
{
	static const uint8_t unspec[16];
	struct ipoib_hwaddr hw[ND_MAX_LLA];
	unsigned int i, end, grow;
	const uint8_t *own;
	struct nd_msg nd;
	int ret;

	ret = nd_parse(m, RTE_ETHER_HDR_LEN, ip6, ND_OPT_ETH_LEN, &nd);
	if (ret <= 0 || nd.n == 0)
		return ret;
	for (i = 0; i < nd.n; i++) {
		struct rte_ether_addr mac;

		memcpy(&mac, nd.icmp + nd.off[i] + 2, sizeof(mac));
		ret = mac_to_hwaddr(ctx, &mac, &hw[i]);
		if (ret < 0)
			return ret;
	}
	grow = nd.n * ND_OPT_GROW;
	if (nd.plen + grow > UINT16_MAX)
		return -EBADMSG;
	if (m->data_off + RTE_ETHER_HDR_LEN + IPV6_HDR_LEN + nd.plen + grow >
	    m->buf_len)
		return -ENOSPC;
	/*
	 * Our address: an NA names the address it answers for as its
	 * target, an NS ours as its source (not :: during DAD).
	 */
	for (i = 0; i < nd.n; i++) {
		if (!ipoib_hwaddr_eq_qpn_gid(&hw[i], &ctx->port_hw))
			continue;
		own = nd.icmp[0] == IPOIB_ND_NEIGH_ADV ? nd.icmp + 8 :
		      nd.icmp[0] == IPOIB_ND_NEIGH_SOL &&
		      memcmp(IPOIB_IPV6_SRC(&nd.ip6), unspec, 16) != 0 ?
		      IPOIB_IPV6_SRC(&nd.ip6) : NULL;
		adv_own(ctx, dst, own, 16, &hw[i]);
	}
	/* From the last option back: each tail moves up by what precedes it. */
	end = nd.plen;
	for (i = nd.n; i-- > 0;) {
		unsigned int from = nd.off[i] + ND_OPT_ETH_LEN;
		uint8_t *opt = nd.icmp + nd.off[i] + i * ND_OPT_GROW;
		uint8_t type = nd.icmp[nd.off[i]];

		memmove(nd.icmp + from + (i + 1) * ND_OPT_GROW, nd.icmp + from,
			end - from);
		opt[0] = type;
		opt[1] = IPOIB_ND_OPT_IB_LEN / 8;
		memset(opt + 2, 0, IPOIB_ND_OPT_IB_PAD);
		memcpy(opt + 2 + IPOIB_ND_OPT_IB_PAD, &hw[i], IPOIB_HWADDR_LEN);
		end = nd.off[i];
	}
	nd_set_len(&nd, nd.plen + grow);
	frame_truncate(m, RTE_ETHER_HDR_LEN + IPV6_HDR_LEN + nd.plen + grow);
	return 0;
}

/* Swap the Ethernet header for the IPoIB header. */
static void
encap_put_hdr(struct rte_mbuf *m, uint16_t type)
{
	struct ipoib_hdr *h;

	h = (struct ipoib_hdr *)rte_pktmbuf_adj(m, ETH_IPOIB_DELTA);
	h->proto = rte_cpu_to_be_16(type);
	h->reserved = 0;
}

/*
 * Where an Ethernet frame goes, read from it; its type and L3 header. The
 * caller checked it holds an Ethernet header (ipoib_eth_frame_ok()).
 */
static int
eth_dst(const struct rte_mbuf *m, const struct ipoib_eth_ctx *ctx,
	uint16_t *type, union l3_hdr *l3, struct ipoib_tx_dst *dst)
{
	rte_be16_t be_type;
	int ret;

	memcpy(&be_type, rte_pktmbuf_mtod_offset(m, void *,
		2 * RTE_ETHER_ADDR_LEN), sizeof(be_type));
	*type = rte_be_to_cpu_16(be_type);
	/*
	 * IPoIB partitions with P_Keys; there is no VLAN tag to carry. Below
	 * 0x600 is an 802.3 length (LLC frames), not an EtherType.
	 */
	if (*type == RTE_ETHER_TYPE_VLAN || *type == RTE_ETHER_TYPE_QINQ ||
	    *type == RTE_ETHER_TYPE_QINQ1 || *type < ETH_TYPE_MIN)
		return -EPROTONOSUPPORT;
	ret = l3_get(m, RTE_ETHER_HDR_LEN, *type, l3);
	if (ret < 0)
		return ret;
	return encap_dst(m, ctx, *type, l3, dst);
}

static inline bool
ipoib_eth_frame_ok(const struct rte_mbuf *m)
{
	return m->data_len >= RTE_ETHER_HDR_LEN && m->pkt_len >= m->data_len;
}

int
ipoib_eth_dst(const struct rte_mbuf *m, const struct ipoib_eth_ctx *ctx,
	      struct ipoib_tx_dst *dst)
{
	union l3_hdr l3;
	uint16_t type;

	if (!ipoib_eth_frame_ok(m))
		return -EBADMSG;
	return eth_dst(m, ctx, &type, &l3, dst);
}

int
ipoib_eth_encap(struct rte_mbuf *m, const struct ipoib_eth_ctx *ctx,
		struct ipoib_tx_dst *dst)
{
	union l3_hdr l3;
	uint16_t type;
	int ret;

	if (!ipoib_eth_frame_ok(m))
		return -EBADMSG;
	if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)
		return -EPERM;
	ret = eth_dst(m, ctx, &type, &l3, dst);
	if (ret < 0)
		return ret;
	if (type == RTE_ETHER_TYPE_ARP)
		return encap_arp(m, ctx, dst);
	if (type == RTE_ETHER_TYPE_IPV6) {
		ret = encap_nd(m, ctx, &l3.v6, dst);
		if (ret < 0)
			return ret;
	}
	encap_put_hdr(m, type);
	return 0;
}

/* Ethernet destination of a received frame (RFC 1112 s6.4, RFC 2464 s7). */
static void
decap_dst(const struct ipoib_eth_ctx *ctx, uint16_t type,
	  const union l3_hdr *l3, bool mcast, struct rte_ether_addr *da)
{
	if (!mcast) {
		*da = ctx->port_mac;
		return;
	}
	memset(da, 0xff, sizeof(*da));	/* broadcast unless a group is named */
	if (type == RTE_ETHER_TYPE_IPV4) {
		uint32_t group = rte_be_to_cpu_32(l3->v4.dst_addr);

		if (ipoib_ipv4_is_mcast(group)) {
			da->addr_bytes[0] = 0x01;
			da->addr_bytes[1] = 0x00;
			da->addr_bytes[2] = 0x5e;
			da->addr_bytes[3] = (uint8_t)(group >> 16) & 0x7f;
			da->addr_bytes[4] = (uint8_t)(group >> 8);
			da->addr_bytes[5] = (uint8_t)group;
		}
	} else if (type == RTE_ETHER_TYPE_IPV6) {
		if (IPOIB_IPV6_DST(&l3->v6)[0] == 0xff) {
			da->addr_bytes[0] = 0x33;
			da->addr_bytes[1] = 0x33;
			memcpy(&da->addr_bytes[2],
			       &IPOIB_IPV6_DST(&l3->v6)[12], 4);
		}
	}
}

/* IPoIB ARP (56 bytes) -> Ethernet ARP (28 bytes) behind the header eh. */
static int
decap_arp(struct rte_mbuf *m, const struct ipoib_eth_ctx *ctx,
	  const struct rte_ether_hdr *eh, struct ipoib_learn *learn)
{
	struct {
		struct rte_ether_hdr eh;
		struct rte_arp_hdr ea;
	} out;
	struct ipoib_hwaddr sha, tha;
	struct rte_ether_addr mac;
	const struct ipoib_arp *ia;

	RTE_BUILD_BUG_ON(sizeof(out) != RTE_ETHER_HDR_LEN + ETH_ARP_LEN);
	if (m->data_len < IPOIB_HDR_LEN + sizeof(*ia))
		return -EBADMSG;
	ia = rte_pktmbuf_mtod_offset(m, const struct ipoib_arp *,
				     IPOIB_HDR_LEN);
	/* Linux arp_process drops any other hardware type on an IB port. */
	if (ia->hw_type != RTE_BE16(IPOIB_ARPHRD_INFINIBAND) ||
	    ia->proto != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	    ia->hlen != IPOIB_HWADDR_LEN || ia->plen != 4)
		return -EBADMSG;
	sha = ia->sender_hw;
	tha = ia->target_hw;
	out.eh = *eh;
	out.ea.arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	out.ea.arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	out.ea.arp_hlen = RTE_ETHER_ADDR_LEN;
	out.ea.arp_plen = 4;
	out.ea.arp_opcode = ia->op;
	hwaddr_to_mac(ctx, &sha, &mac);
	memcpy(&out.ea.arp_data.arp_sha, &mac, sizeof(mac));
	out.ea.arp_data.arp_sip = ia->sender_ip;
	if (hwaddr_is_zero(&tha))
		memset(&mac, 0, sizeof(mac));
	else
		hwaddr_to_mac(ctx, &tha, &mac);
	memcpy(&out.ea.arp_data.arp_tha, &mac, sizeof(mac));
	out.ea.arp_data.arp_tip = ia->target_ip;
	learn_set(learn, ctx, &sha);
	return frame_replace(m, -ETH_IPOIB_DELTA, &out, sizeof(out));
}

/* IPoIB SLLA/TLLA options (24 bytes) -> Ethernet ones (8 bytes). */
static int
decap_nd(struct rte_mbuf *m, const struct ipoib_eth_ctx *ctx,
	 const struct rte_ipv6_hdr *ip6, struct ipoib_learn *learn)
{
	struct rte_ether_addr mac[ND_MAX_LLA];
	unsigned int i, to, end, shrink;
	struct nd_msg nd;
	int ret;

	ret = nd_parse(m, IPOIB_HDR_LEN, ip6, IPOIB_ND_OPT_IB_LEN, &nd);
	if (ret <= 0 || nd.n == 0)
		return ret;
	for (i = 0; i < nd.n; i++) {
		struct ipoib_hwaddr hw;

		memcpy(&hw, nd.icmp + nd.off[i] + 2 + IPOIB_ND_OPT_IB_PAD,
		       sizeof(hw));
		hwaddr_to_mac(ctx, &hw, &mac[i]);
		learn_set(learn, ctx, &hw);
	}
	/* From the first option on: each tail moves down by what precedes. */
	to = nd.off[0];
	for (i = 0; i < nd.n; i++) {
		unsigned int from = nd.off[i] + IPOIB_ND_OPT_IB_LEN;
		uint8_t *opt = nd.icmp + to;

		end = i + 1 < nd.n ? nd.off[i + 1] : nd.plen;
		opt[0] = nd.icmp[nd.off[i]];
		opt[1] = ND_OPT_ETH_LEN / 8;
		memcpy(opt + 2, &mac[i], RTE_ETHER_ADDR_LEN);
		memmove(opt + ND_OPT_ETH_LEN, nd.icmp + from, end - from);
		to += ND_OPT_ETH_LEN + end - from;
	}
	shrink = nd.n * ND_OPT_GROW;
	nd_set_len(&nd, nd.plen - shrink);
	frame_truncate(m, IPOIB_HDR_LEN + IPV6_HDR_LEN + nd.plen - shrink);
	return 0;
}

int
ipoib_eth_decap(struct rte_mbuf *m, const struct ipoib_hwaddr *src,
		bool mcast, const struct ipoib_eth_ctx *ctx,
		struct ipoib_learn *learn)
{
	struct rte_ether_hdr eh;
	union l3_hdr l3;
	uint16_t type;
	int ret;

	learn->valid = false;
	if (m->data_len < IPOIB_HDR_LEN || m->pkt_len < m->data_len)
		return -EBADMSG;
	if (rte_pktmbuf_headroom(m) < ETH_IPOIB_DELTA)
		return -ENOSPC;
	/* The reserved field is ignored on receive (RFC 4391 s6). */
	type = rte_be_to_cpu_16(rte_pktmbuf_mtod(m,
				struct ipoib_hdr *)->proto);
	ret = l3_get(m, IPOIB_HDR_LEN, type, &l3);
	if (ret < 0)
		return ret;
	decap_dst(ctx, type, &l3, mcast, &eh.dst_addr);
	ipoib_mac_from_hwaddr(&eh.src_addr, src);
	eh.ether_type = rte_cpu_to_be_16(type);
	if (type == RTE_ETHER_TYPE_ARP)
		ret = decap_arp(m, ctx, &eh, learn);
	else if (type == RTE_ETHER_TYPE_IPV6)
		ret = decap_nd(m, ctx, &l3.v6, learn);
	if (ret < 0) {
		learn->valid = false;
		return ret;
	}
	if (type != RTE_ETHER_TYPE_ARP)
		memcpy(rte_pktmbuf_prepend(m, ETH_IPOIB_DELTA), &eh, sizeof(eh));
	return 0;
}
