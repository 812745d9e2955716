/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_ip_frag.h>
#include <rte_mbuf.h>

#include "ipoib_compat.h"
#include "ipoib_frag.h"
#include "ipoib_wire.h"

#define IPV4_HDR_LEN		((unsigned int)sizeof(struct rte_ipv4_hdr))
#define IPV6_HDR_LEN		((unsigned int)sizeof(struct rte_ipv6_hdr))
#define ICMP_HDR_LEN		8	/* type, code, checksum, 4 more */
#define ICMP_ERR_TTL		64
/* Linux icmp_send: the error datagram is at most 576 bytes (RFC 1812). */
#define ICMP4_ERR_MAX		576
/* Linux icmp6_send: at most the IPv6 minimum MTU (RFC 4443 s2.4(c)). */
#define ICMP6_ERR_MAX		1280
#define ICMP4_DEST_UNREACH	3
#define ICMP4_FRAG_NEEDED	4
#define ICMP6_PKT_TOO_BIG	2
#define ICMP6_INFO_MASK		0x80	/* RFC 4443 s2.1: errors are 0-127 */
#define IPV6_MAX_EXT_HDRS	8	/* give up (do not answer) after these */

int
ipoib_frag_ipv4(struct rte_mbuf *m, uint16_t mtu, struct rte_mbuf **out,
		uint16_t nb_out, struct rte_mempool *direct,
		struct rte_mempool *indirect)
{
	struct rte_ipv4_hdr ip;	/* a copy: it may sit at an odd address */
	struct rte_ether_hdr eh;
	unsigned int hlen, len;
	int i, n;

	if (m->data_len < RTE_ETHER_HDR_LEN + IPV4_HDR_LEN ||
	    m->pkt_len < m->data_len)
		return -EBADMSG;
	memcpy(&eh, rte_pktmbuf_mtod(m, void *), sizeof(eh));
	if (eh.ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4))
		return -EPROTONOSUPPORT;
	memcpy(&ip, rte_pktmbuf_mtod_offset(m, void *, RTE_ETHER_HDR_LEN),
	       sizeof(ip));
	hlen = rte_ipv4_hdr_len(&ip);
	len = rte_be_to_cpu_16(ip.total_length);
	if ((ip.version_ihl >> 4) != 4 || hlen < IPV4_HDR_LEN ||
	    RTE_ETHER_HDR_LEN + hlen > m->data_len || len < hlen ||
	    RTE_ETHER_HDR_LEN + len > m->pkt_len)
		return -EBADMSG;
	if ((ip.fragment_offset & RTE_BE16(RTE_IPV4_HDR_DF_FLAG)) != 0)
		return -ENOTSUP;
	/*
	 * A fragment reaching past 65535 bytes of payload (RFC 791: no
	 * datagram is larger) is malformed, and cutting it again would wrap
	 * the 13-bit offsets of the pieces (found by fuzz/fuzz_frag.c).
	 */
	if ((rte_be_to_cpu_16(ip.fragment_offset) & RTE_IPV4_HDR_OFFSET_MASK) *
	    8u + len - hlen > UINT16_MAX)
		return -EBADMSG;
	/* librte_ip_frag takes every byte of the chain: drop the padding. */
	if (rte_pktmbuf_trim(m, m->pkt_len - RTE_ETHER_HDR_LEN - len) != 0)
		return -EBADMSG;
	rte_pktmbuf_adj(m, RTE_ETHER_HDR_LEN);
	n = rte_ipv4_fragment_packet(m, out, nb_out, mtu, direct, indirect);
	rte_pktmbuf_prepend(m, RTE_ETHER_HDR_LEN);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		struct rte_ipv4_hdr *fip;
		void *h;

		h = rte_pktmbuf_prepend(out[i], RTE_ETHER_HDR_LEN);
		if (h == NULL) {
			rte_pktmbuf_free_bulk(out, n);
			return -ENOSPC;
		}
		memcpy(h, &eh, sizeof(eh));
		out[i]->l2_len = RTE_ETHER_HDR_LEN;
		/* The library leaves the header checksum to its caller. */
		fip = rte_pktmbuf_mtod_offset(out[i], struct rte_ipv4_hdr *,
					      RTE_ETHER_HDR_LEN);
		fip->hdr_checksum = rte_ipv4_cksum(fip);
	}
	return n;
}

/* Copy len bytes of the chain m from off (which the caller checked). */
static void
copy_out(const struct rte_mbuf *m, uint32_t off, uint32_t len, void *dst)
{
	const void *p = rte_pktmbuf_read(m, off, len, dst);

	if (p != NULL && p != dst)
		memcpy(dst, p, len);
}

static bool
read_hdr(const struct rte_mbuf *m, uint32_t off, uint32_t len, void *dst)
{
	if (off + len > m->pkt_len)
		return false;
	copy_out(m, off, len, dst);
	return true;
}

/* ICMP types that are not errors (Linux icmp_pointers[].error == 0). */
static bool
icmp4_is_info(uint8_t type)
{
	switch (type) {
	case 3:		/* destination unreachable */
	case 4:		/* source quench */
	case 5:		/* redirect */
	case 11:	/* time exceeded */
	case 12:	/* parameter problem */
		return false;
	}
	return type <= 18;	/* NR_ICMP_TYPES; unknown types count as errors */
}

/* RFC 1122 s3.2.2, Linux __icmp_send: which IPv4 packets get an error. */
static bool
ipv4_may_answer(const struct rte_mbuf *m, const struct rte_ipv4_hdr *ip,
		unsigned int hlen, unsigned int ip_len)
{
	uint32_t src = rte_be_to_cpu_32(ip->src_addr);
	uint32_t dst = rte_be_to_cpu_32(ip->dst_addr);
	uint8_t type;

	if ((ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_OFFSET_MASK)) != 0)
		return false;		/* only the first fragment */
	if (ipoib_ipv4_is_mcast(dst) || dst == UINT32_MAX)
		return false;
	if (src == 0 || ipoib_ipv4_is_mcast(src) || src == UINT32_MAX)
		return false;		/* no single host to answer */
	if (ip->next_proto_id != IPPROTO_ICMP)
		return true;
	if (ip_len <= hlen ||
	    !read_hdr(m, RTE_ETHER_HDR_LEN + hlen, sizeof(type), &type))
		return false;
	return icmp4_is_info(type);
}

/* Ethernet header of the answer: from m's destination, unless a group. */
static void
put_eth(uint8_t *p, const struct rte_ether_hdr *eh)
{
	struct rte_ether_hdr r;

	r.dst_addr = eh->src_addr;
	r.src_addr = rte_is_unicast_ether_addr(&eh->dst_addr) ?
		     eh->dst_addr : eh->src_addr;
	r.ether_type = eh->ether_type;
	memcpy(p, &r, sizeof(r));
}

static struct rte_mbuf *
too_big_ipv4(const struct rte_mbuf *m, const struct rte_ether_hdr *eh,
	     uint16_t mtu, struct rte_mempool *mp)
{
	unsigned int hlen, ip_len, quote;
	struct rte_icmp_hdr *icmp;
	struct rte_ipv4_hdr ip, *rip;
	struct rte_mbuf *r;
	uint8_t *p;

	if (!read_hdr(m, RTE_ETHER_HDR_LEN, sizeof(ip), &ip))
		return NULL;
	hlen = rte_ipv4_hdr_len(&ip);
	ip_len = RTE_MIN((unsigned int)rte_be_to_cpu_16(ip.total_length),
			 m->pkt_len - RTE_ETHER_HDR_LEN);
	if ((ip.version_ihl >> 4) != 4 || hlen < IPV4_HDR_LEN || ip_len < hlen ||
	    !ipv4_may_answer(m, &ip, hlen, ip_len))
		return NULL;
	quote = RTE_MIN(ip_len, ICMP4_ERR_MAX - IPV4_HDR_LEN - ICMP_HDR_LEN);
	r = rte_pktmbuf_alloc(mp);
	if (r == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(r, RTE_ETHER_HDR_LEN + IPV4_HDR_LEN +
					  ICMP_HDR_LEN + quote);
	if (p == NULL) {
		rte_pktmbuf_free(r);
		return NULL;
	}
	put_eth(p, eh);
	rip = (struct rte_ipv4_hdr *)(p + RTE_ETHER_HDR_LEN);
	memset(rip, 0, sizeof(*rip));
	rip->version_ihl = RTE_IPV4_VHL_DEF;
	/* Linux: errors go with precedence "internetwork control". */
	rip->type_of_service = (ip.type_of_service & IPTOS_TOS_MASK) |
			       IPTOS_PREC_INTERNETCONTROL;
	rip->total_length = rte_cpu_to_be_16(IPV4_HDR_LEN + ICMP_HDR_LEN +
					     quote);
	rip->time_to_live = ICMP_ERR_TTL;
	rip->next_proto_id = IPPROTO_ICMP;
	rip->src_addr = ip.dst_addr;
	rip->dst_addr = ip.src_addr;
	rip->hdr_checksum = rte_ipv4_cksum(rip);
	icmp = (struct rte_icmp_hdr *)(rip + 1);
	icmp->icmp_type = ICMP4_DEST_UNREACH;
	icmp->icmp_code = ICMP4_FRAG_NEEDED;
	icmp->icmp_cksum = 0;
	icmp->icmp_ident = 0;				/* unused */
	icmp->icmp_seq_nb = rte_cpu_to_be_16(mtu);	/* RFC 1191 s4 */
	copy_out(m, RTE_ETHER_HDR_LEN, quote, icmp + 1);
	icmp->icmp_cksum = (uint16_t)~rte_raw_cksum(icmp, ICMP_HDR_LEN + quote);
	r->l2_len = RTE_ETHER_HDR_LEN;
	r->l3_len = IPV4_HDR_LEN;
	r->packet_type = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 |
			 RTE_PTYPE_L4_ICMP;
	return r;
}

/*
 * Is the upper layer of this IPv6 packet an ICMPv6 error, or can it not be
 * told? Walks the extension headers (RFC 8200 s4) as Linux is_ineligible.
 */
static bool
ipv6_is_icmp_error(const struct rte_mbuf *m, uint8_t nh, unsigned int ip_len)
{
	unsigned int off = IPV6_HDR_LEN, i;
	uint8_t h[4];

	for (i = 0; i < IPV6_MAX_EXT_HDRS; i++) {
		if (nh != IPPROTO_HOPOPTS && nh != IPPROTO_ROUTING &&
		    nh != IPPROTO_DSTOPTS && nh != IPPROTO_FRAGMENT &&
		    nh != IPPROTO_AH && nh != IPPROTO_ICMPV6)
			return false;
		if (off + sizeof(h) > ip_len ||
		    !read_hdr(m, RTE_ETHER_HDR_LEN + off, sizeof(h), h))
			return true;
		switch (nh) {
		case IPPROTO_ICMPV6:
			return (h[0] & ICMP6_INFO_MASK) == 0;
		case IPPROTO_FRAGMENT:
			/* A later fragment has no upper-layer header. */
			if (((h[2] << 8 | h[3]) & 0xfff8) != 0)
				return h[0] == IPPROTO_ICMPV6;
			off += 8;
			break;
		case IPPROTO_AH:
			off += (h[1] + 2u) * 4;
			break;
		default:
			off += (h[1] + 1u) * 8;
			break;
		}
		nh = h[0];
	}
	return true;
}

static struct rte_mbuf *
too_big_ipv6(const struct rte_mbuf *m, const struct rte_ether_hdr *eh,
	     uint16_t mtu, struct rte_mempool *mp)
{
	static const uint8_t unspec[16];
	struct rte_ipv6_hdr ip6, *rip6;
	unsigned int ip_len, quote;
	rte_be32_t be_mtu;
	uint8_t *p, *icmp;
	struct rte_mbuf *r;
	bool to_self;
	uint16_t ck;

	if (!read_hdr(m, RTE_ETHER_HDR_LEN, sizeof(ip6), &ip6) ||
	    (rte_be_to_cpu_32(ip6.vtc_flow) >> 28) != 6)
		return NULL;
	ip_len = RTE_MIN(IPV6_HDR_LEN + rte_be_to_cpu_16(ip6.payload_len),
			 m->pkt_len - RTE_ETHER_HDR_LEN);
	/* RFC 4443 s2.4(e): not to a source that is no single node. */
	if (IPOIB_IPV6_SRC(&ip6)[0] == 0xff ||
	    memcmp(IPOIB_IPV6_SRC(&ip6), unspec, sizeof(unspec)) == 0 ||
	    ipv6_is_icmp_error(m, ip6.proto, ip_len))
		return NULL;
	quote = RTE_MIN(ip_len, ICMP6_ERR_MAX - IPV6_HDR_LEN - ICMP_HDR_LEN);
	r = rte_pktmbuf_alloc(mp);
	if (r == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(r, RTE_ETHER_HDR_LEN + IPV6_HDR_LEN +
					  ICMP_HDR_LEN + quote);
	if (p == NULL) {
		rte_pktmbuf_free(r);
		return NULL;
	}
	/* Too big for a group (RFC 4443 s2.4(e.3)): the host answers itself. */
	to_self = IPOIB_IPV6_DST(&ip6)[0] == 0xff;
	put_eth(p, eh);
	rip6 = (struct rte_ipv6_hdr *)(p + RTE_ETHER_HDR_LEN);
	rip6->vtc_flow = RTE_BE32(6u << 28);
	rip6->payload_len = rte_cpu_to_be_16(ICMP_HDR_LEN + quote);
	rip6->proto = IPPROTO_ICMPV6;
	rip6->hop_limits = ICMP_ERR_TTL;
	memcpy(IPOIB_IPV6_SRC(rip6),
	       to_self ? IPOIB_IPV6_SRC(&ip6) : IPOIB_IPV6_DST(&ip6), 16);
	memcpy(IPOIB_IPV6_DST(rip6), IPOIB_IPV6_SRC(&ip6), 16);
	icmp = (uint8_t *)(rip6 + 1);
	icmp[0] = ICMP6_PKT_TOO_BIG;
	icmp[1] = 0;
	memset(icmp + 2, 0, 2);
	be_mtu = rte_cpu_to_be_32(mtu);
	memcpy(icmp + 4, &be_mtu, sizeof(be_mtu));
	copy_out(m, RTE_ETHER_HDR_LEN, quote, icmp + ICMP_HDR_LEN);
	ck = rte_ipv6_udptcp_cksum(rip6, icmp);
	memcpy(icmp + 2, &ck, sizeof(ck));
	r->l2_len = RTE_ETHER_HDR_LEN;
	r->l3_len = IPV6_HDR_LEN;
	r->packet_type = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6 |
			 RTE_PTYPE_L4_ICMP;
	return r;
}

struct rte_mbuf *
ipoib_icmp_too_big(const struct rte_mbuf *m, uint16_t mtu,
		   struct rte_mempool *mp)
{
	struct rte_ether_hdr eh;

	if (!read_hdr(m, 0, sizeof(eh), &eh))
		return NULL;
	if (eh.ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV4))
		return too_big_ipv4(m, &eh, mtu, mp);
	if (eh.ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6))
		return too_big_ipv6(m, &eh, mtu, mp);
	return NULL;
}
