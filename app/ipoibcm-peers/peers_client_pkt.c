/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * peers_client's packets: the requests it sends (ARP, ICMP and UDP over
 * IPv4 and IPv6, Neighbor Solicitation, IPv4 fragments) and the checks of
 * every reply, down to checksums and the echoed payload.
 */

#include <stdio.h>
#include <string.h>

#include "peers_client.h"

/* ---- requests ------------------------------------------------------------ */

static void
cl_tag(uint8_t *p, uint32_t len, uint32_t idx, uint32_t seq)
{
	uint32_t i;

	memcpy(p, "PEER", 4);
	pk_put32(p + 4, idx);
	pk_put32(p + 8, seq);
	for (i = CL_TAG_LEN; i < len; i++)
		p[i] = (uint8_t)(idx * 7 + seq * 13 + i);
}

/* The tag of an echoed payload, checked to its last byte. */
static bool
cl_tag_ok(const uint8_t *p, uint32_t len, uint32_t *idx, uint32_t *seq)
{
	uint32_t i;

	if (len < CL_TAG_LEN || memcmp(p, "PEER", 4) != 0)
		return false;
	*idx = pk_get32(p + 4);
	*seq = pk_get32(p + 8);
	for (i = CL_TAG_LEN; i < len; i++)
		if (p[i] != (uint8_t)(*idx * 7 + *seq * 13 + i))
			return false;
	return true;
}

uint32_t
cl_arp_req(struct cl *C, int port, uint32_t idx)
{
	struct ipoib_arp *a = (struct ipoib_arp *)C->tx;

	memset(a, 0, sizeof(*a));
	a->hw_type = rte_cpu_to_be_16(IPOIB_ARPHRD_INFINIBAND);
	a->proto = rte_cpu_to_be_16(PK_ETH_P_IPV4);
	a->hlen = IPOIB_HWADDR_LEN;
	a->plen = 4;
	a->op = rte_cpu_to_be_16(PK_ARP_OP_REQUEST);
	a->sender_hw = C->ports[port].hw;
	a->sender_ip = rte_cpu_to_be_32(C->ports[port].ip);
	a->target_ip = rte_cpu_to_be_32(C->first_ip + idx);
	return sizeof(*a);
}

/* ICMP echo request of len bytes of ICMP (header included). */
uint32_t
cl_echo4(struct cl *C, int port, uint32_t idx, uint32_t seq, uint32_t len)
{
	uint8_t *ip = C->tx, *l4 = ip + PK_IPV4_HLEN;

	pk_ipv4_hdr(ip, (uint16_t)(PK_IPV4_HLEN + len), (uint16_t)seq, 0,
		    PK_IPPROTO_ICMP, C->ports[port].ip, C->first_ip + idx);
	l4[0] = PK_ICMP_ECHO_REQUEST;
	l4[1] = 0;
	pk_put16(l4 + 2, 0);
	pk_put16(l4 + 4, CL_ICMP_ID);
	pk_put16(l4 + 6, (uint16_t)seq);
	cl_tag(l4 + PK_ICMP_HLEN, len - PK_ICMP_HLEN, idx, seq);
	pk_put16(l4 + 2, pk_cksum(l4, len));
	return PK_IPV4_HLEN + len;
}

uint32_t
cl_udp4(struct cl *C, int port, uint32_t idx, uint32_t seq, uint32_t len)
{
	uint8_t *ip = C->tx, *l4 = ip + PK_IPV4_HLEN;
	uint16_t ck;

	pk_ipv4_hdr(ip, (uint16_t)(PK_IPV4_HLEN + len), (uint16_t)seq, 0,
		    PK_IPPROTO_UDP, C->ports[port].ip, C->first_ip + idx);
	pk_put16(l4, CL_UDP_SRC);
	pk_put16(l4 + 2, CL_UDP_DST);
	pk_put16(l4 + 4, (uint16_t)len);
	pk_put16(l4 + 6, 0);
	cl_tag(l4 + PK_UDP_HLEN, len - PK_UDP_HLEN, idx, seq);
	ck = pk_fold(pk_sum(pk_sum_pseudo4(ip, PK_IPPROTO_UDP, len), l4, len));
	pk_put16(l4 + 6, ck == 0 ? 0xffff : ck);
	return PK_IPV4_HLEN + len;
}

uint32_t
cl_echo6(struct cl *C, int port, uint32_t idx, uint32_t seq, uint32_t len,
	 bool udp)
{
	uint8_t *ip = C->tx, *l4 = ip + PK_IPV6_HLEN, src[16], dst[16];

	cl_host_ipv6(C, C->ports[port].ip, src);
	cl_host_ipv6(C, C->first_ip + idx, dst);
	pk_ipv6_hdr(ip, (uint16_t)len, udp ? PK_IPPROTO_UDP :
		    PK_IPPROTO_ICMPV6, PK_TTL, src, dst);
	if (udp) {
		pk_put16(l4, CL_UDP_SRC);
		pk_put16(l4 + 2, CL_UDP_DST);
		pk_put16(l4 + 4, (uint16_t)len);
	} else {
		l4[0] = PK_ICMP6_ECHO_REQUEST;
		l4[1] = 0;
		pk_put16(l4 + 4, CL_ICMP_ID);
		pk_put16(l4 + 6, (uint16_t)seq);
	}
	cl_tag(l4 + 8, len - 8, idx, seq);
	pk_l4_cksum6(ip, l4, len, udp ? 6 : 2);
	return PK_IPV6_HLEN + len;
}

/* A Neighbor Solicitation for host idx, with our link-layer address. */
uint32_t
cl_ns(struct cl *C, int port, uint32_t idx, bool to_group)
{
	uint8_t *ip = C->tx, *l4 = ip + PK_IPV6_HLEN, src[16], target[16];
	uint8_t dst[16];

	cl_host_ipv6(C, C->ports[port].ip, src);
	cl_host_ipv6(C, C->first_ip + idx, target);
	if (to_group)
		ipoib_ipv6_solicited(dst, target);
	else
		memcpy(dst, target, 16);
	pk_ipv6_hdr(ip, PK_ND_NS_LEN + IPOIB_ND_OPT_IB_LEN, PK_IPPROTO_ICMPV6,
		    PK_ND_HOP_LIMIT, src, dst);
	memset(l4, 0, PK_ND_NS_LEN + IPOIB_ND_OPT_IB_LEN);
	l4[0] = PK_ND_NEIGH_SOL;
	memcpy(l4 + 8, target, 16);
	l4[PK_ND_NS_LEN] = IPOIB_ND_OPT_SLLA;
	l4[PK_ND_NS_LEN + 1] = IPOIB_ND_OPT_IB_LEN / 8;
	memcpy(l4 + PK_ND_NS_LEN + 2 + IPOIB_ND_OPT_IB_PAD,
	       C->ports[port].hw.bytes, IPOIB_HWADDR_LEN);
	pk_l4_cksum6(ip, l4, PK_ND_NS_LEN + IPOIB_ND_OPT_IB_LEN, 2);
	return PK_IPV6_HLEN + PK_ND_NS_LEN + IPOIB_ND_OPT_IB_LEN;
}

/* An IPv4 packet in C->tx, sent in UD-sized fragments. */
void
cl_send_frags(struct cl *C, int port, const struct ipoib_hwaddr *to,
	      uint32_t len)
{
	uint32_t max = (C->ib_mtu - IPOIB_HDR_LEN - PK_IPV4_HLEN) & ~7u;
	uint32_t off, n, plen = len - PK_IPV4_HLEN;
	uint8_t frag[4096];

	for (off = 0; off < plen; off += n) {
		n = plen - off < max ? plen - off : max;
		memcpy(frag, C->tx, PK_IPV4_HLEN);
		pk_put16(frag + 2, (uint16_t)(PK_IPV4_HLEN + n));
		pk_put16(frag + 6, (uint16_t)(off / 8 |
				   (off + n < plen ? PK_IPV4_MF : 0)));
		pk_put16(frag + 10, 0);
		pk_put16(frag + 10, pk_cksum(frag, PK_IPV4_HLEN));
		memcpy(frag + PK_IPV4_HLEN, C->tx + PK_IPV4_HLEN + off, n);
		cl_send_ud(C, port, to, PK_ETH_P_IPV4, frag, PK_IPV4_HLEN + n);
	}
}

/* ---- replies ------------------------------------------------------------- */

/* Host index of an address of ours, or UINT32_MAX. */
static uint32_t
cl_host_of(const struct cl *C, uint32_t ip)
{
	return ip - C->first_ip < C->hosts ? ip - C->first_ip : UINT32_MAX;
}

static void
cl_rx_arp(struct cl *C, int port, const uint8_t *p, uint32_t len,
	  uint32_t src_qp, const uint8_t *sgid, bool mcast)
{
	struct ipoib_arp a;
	uint8_t mac[IPOIB_MAC_LEN], rec[IPOIB_HWADDR_LEN];
	uint32_t idx;

	if (len < sizeof(a))
		return;
	memcpy(&a, p, sizeof(a));
	idx = cl_host_of(C, rte_be_to_cpu_32(a.sender_ip));
	if (a.op != rte_cpu_to_be_16(PK_ARP_OP_REPLY) || idx == UINT32_MAX)
		return;
	if (a.hw_type != rte_cpu_to_be_16(IPOIB_ARPHRD_INFINIBAND) ||
	    a.proto != rte_cpu_to_be_16(PK_ETH_P_IPV4) ||
	    a.hlen != IPOIB_HWADDR_LEN || a.plen != 4 || mcast ||
	    rte_be_to_cpu_32(a.target_ip) != C->ports[port].ip ||
	    !ipoib_hwaddr_eq_qpn_gid(&a.target_hw, &C->ports[port].hw) ||
	    ipoib_hwaddr_qpn(&a.sender_hw) != src_qp ||
	    (sgid != NULL &&
	     memcmp(sgid, ipoib_hwaddr_gid(&a.sender_hw), 16) != 0)) {
		cl_bad(C, "host %u: malformed ARP reply", idx);
		return;
	}
	/* the driver resolves a MAC through the host's address record */
	ipoib_hwaddr_to_mac(mac, &a.sender_hw);
	if (shm_addr_resolve(C->ports[port].port, mac, rec) < 0 ||
	    memcmp(rec, a.sender_hw.bytes, sizeof(rec)) != 0) {
		cl_bad(C, "host %u: address record does not match its ARP "
		       "reply", idx);
		return;
	}
	C->h[idx].hw = a.sender_hw;
	C->h[idx].arp = true;
}

/* Checks of an echoed payload; which[]: the flag to set for the host. */
static void
cl_rx_tagged(struct cl *C, const uint8_t *payload, uint32_t len,
	     uint32_t src_ip, bool rc, int kind)
{
	uint32_t idx, seq;
	struct cl_host *h;

	if (!cl_tag_ok(payload, len, &idx, &seq) || idx >= C->hosts ||
	    (src_ip != UINT32_MAX && cl_host_of(C, src_ip) != idx)) {
		cl_bad(C, "echo payload damaged (%u bytes)", len);
		return;
	}
	h = &C->h[idx];
	if (rc)
		h->rc_replies++;
	else
		h->ud_replies++;
	if (len >= CL_RC_BIG - PK_ICMP_HLEN) {
		if (rc)
			h->big_rc++;
		else
			h->big_ud++;
	}
	switch (kind) {
	case 0:
		h->ping = true;
		break;
	case 1:
		h->udp = true;
		break;
	case 2:
		h->ping6 = true;
		break;
	case 3:
		h->udp6 = true;
		break;
	case 4:
		h->frag = true;
		break;
	}
}

static void
cl_rx_ipv4_whole(struct cl *C, int port, const uint8_t *ip, uint32_t tot,
		 bool rc, int frag_kind)
{
	const uint8_t *l4 = ip + PK_IPV4_HLEN;
	uint32_t len = tot - PK_IPV4_HLEN, src = pk_get32(ip + 12);

	if (pk_get32(ip + 16) != C->ports[port].ip || ip[8] == 0) {
		cl_bad(C, "IPv4 reply: wrong destination or TTL");
		return;
	}
	if (ip[9] == PK_IPPROTO_ICMP) {
		if (len < PK_ICMP_HLEN || l4[0] != PK_ICMP_ECHO_REPLY ||
		    l4[1] != 0 || pk_cksum(l4, len) != 0 ||
		    pk_get16(l4 + 4) != CL_ICMP_ID) {
			cl_bad(C, "ICMP reply malformed or bad checksum");
			return;
		}
		cl_rx_tagged(C, l4 + PK_ICMP_HLEN, len - PK_ICMP_HLEN, src, rc,
			     frag_kind ? frag_kind : 0);
	} else if (ip[9] == PK_IPPROTO_UDP) {
		if (len < PK_UDP_HLEN || pk_get16(l4) != CL_UDP_DST ||
		    pk_get16(l4 + 2) != CL_UDP_SRC ||
		    pk_get16(l4 + 4) != len || pk_get16(l4 + 6) == 0 ||
		    pk_fold(pk_sum(pk_sum_pseudo4(ip, PK_IPPROTO_UDP, len),
				   l4, len)) != 0) {
			cl_bad(C, "UDP reply: ports, length or checksum wrong");
			return;
		}
		cl_rx_tagged(C, l4 + PK_UDP_HLEN, len - PK_UDP_HLEN, src, rc,
			     1);
	}
}

/* Fragments of one datagram at a time (the big echo). */
static void
cl_rx_frag(struct cl *C, int port, const uint8_t *ip, uint32_t tot, bool rc)
{
	uint16_t frag = pk_get16(ip + 6);
	uint32_t off = (frag & PK_IPV4_OFF_MASK) * 8u;
	uint32_t n = tot - PK_IPV4_HLEN, b;
	uint8_t whole[PK_IPV4_HLEN];

	if (pk_get16(ip + 4) != C->ra_id || pk_get32(ip + 12) != C->ra_src) {
		C->ra_id = pk_get16(ip + 4);
		C->ra_src = pk_get32(ip + 12);
		C->ra_total = 0;
		C->ra_have = 0;
		memset(C->ra_map, 0, sizeof(C->ra_map));
	}
	if (off + n > sizeof(C->ra_buf) || (n % 8 && (frag & PK_IPV4_MF))) {
		cl_bad(C, "fragment out of range");
		return;
	}
	if (off == 0)
		memcpy(C->ra_hdr, ip, PK_IPV4_HLEN);
	if (!(frag & PK_IPV4_MF))
		C->ra_total = off + n;
	memcpy(C->ra_buf + off, ip + PK_IPV4_HLEN, n);
	for (b = off / 8; b < (off + n + 7) / 8; b++) {
		if (!(C->ra_map[b / 8] & (1u << (b % 8))))
			C->ra_have += 8;
		C->ra_map[b / 8] |= (uint8_t)(1u << (b % 8));
	}
	if (C->ra_total == 0 || C->ra_have < C->ra_total)
		return;
	/* whole: one header for all of it, then checked like any reply */
	memcpy(whole, C->ra_hdr, PK_IPV4_HLEN);
	memmove(C->ra_buf + PK_IPV4_HLEN, C->ra_buf, C->ra_total);
	memcpy(C->ra_buf, whole, PK_IPV4_HLEN);
	pk_put16(C->ra_buf + 2, (uint16_t)(PK_IPV4_HLEN + C->ra_total));
	pk_put16(C->ra_buf + 6, 0);
	cl_rx_ipv4_whole(C, port, C->ra_buf, PK_IPV4_HLEN + C->ra_total, rc, 4);
	C->ra_id = 0;
	C->ra_src = 0;
}

static void
cl_rx_ipv4(struct cl *C, int port, const uint8_t *ip, uint32_t len, bool rc)
{
	uint32_t tot;

	if (len < PK_IPV4_HLEN || ip[0] != 0x45 ||
	    (tot = pk_get16(ip + 2)) > len || tot < PK_IPV4_HLEN ||
	    pk_cksum(ip, PK_IPV4_HLEN) != 0) {
		cl_bad(C, "IPv4 reply: bad header");
		return;
	}
	if (pk_get16(ip + 6) & (PK_IPV4_MF | PK_IPV4_OFF_MASK))
		cl_rx_frag(C, port, ip, tot, rc);
	else
		cl_rx_ipv4_whole(C, port, ip, tot, rc, 0);
}

static void
cl_rx_na(struct cl *C, int port, const uint8_t *ip, const uint8_t *l4,
	 uint32_t plen)
{
	uint8_t mine[16];
	uint32_t idx = cl_host_of(C, pk_get32(l4 + 8 + 12));
	const uint8_t *o = l4 + PK_ND_NS_LEN;

	cl_host_ipv6(C, C->ports[port].ip, mine);
	if (idx == UINT32_MAX)
		return;
	if (ip[7] != PK_ND_HOP_LIMIT || plen != PK_ND_NS_LEN +
	    IPOIB_ND_OPT_IB_LEN || l4[4] != (PK_NA_F_SOLICITED |
	    PK_NA_F_OVERRIDE) || memcmp(ip + 24, mine, 16) != 0 ||
	    memcmp(ip + 8, l4 + 8, 16) != 0 || o[0] != IPOIB_ND_OPT_TLLA ||
	    o[1] != 3 || o[2] != 0 || o[3] != 0 || !C->h[idx].arp ||
	    memcmp(o + 4, C->h[idx].hw.bytes, IPOIB_HWADDR_LEN) != 0) {
		cl_bad(C, "host %u: NA malformed (flags 0x%02x)", idx, l4[4]);
		return;
	}
	C->h[idx].nas++;
	C->h[idx].nd = true;
}

static void
cl_rx_ipv6(struct cl *C, int port, const uint8_t *ip, uint32_t len, bool rc)
{
	const uint8_t *l4 = ip + PK_IPV6_HLEN;
	uint32_t plen;

	if (len < PK_IPV6_HLEN || (ip[0] >> 4) != 6 ||
	    PK_IPV6_HLEN + (plen = pk_get16(ip + 4)) > len ||
	    plen < 8 || !pk_l4_cksum6_ok(ip, l4, plen)) {
		cl_bad(C, "IPv6 reply: bad header or checksum");
		return;
	}
	if (ip[6] == PK_IPPROTO_ICMPV6 && l4[0] == PK_ND_NEIGH_ADV)
		cl_rx_na(C, port, ip, l4, plen);
	else if (ip[6] == PK_IPPROTO_ICMPV6 && l4[0] == PK_ICMP6_ECHO_REPLY)
		cl_rx_tagged(C, l4 + 8, plen - 8,
			     pk_get32(ip + 8 + 12), rc, 2);
	else if (ip[6] == PK_IPPROTO_UDP && pk_get16(l4) == CL_UDP_DST &&
		 pk_get16(l4 + 2) == CL_UDP_SRC && pk_get16(l4 + 4) == plen)
		cl_rx_tagged(C, l4 + 8, plen - 8, pk_get32(ip + 8 + 12), rc,
			     3);
	else
		cl_bad(C, "IPv6 reply: unexpected (next header %u)", ip[6]);
}

void
cl_rx(struct cl *C, int port, bool rc, uint32_t src_qp, const uint8_t *sgid,
      bool mcast, const uint8_t *frame, uint32_t len)
{
	uint16_t type = pk_get16(frame);

	if (mcast)
		return;
	frame += IPOIB_HDR_LEN;
	len -= IPOIB_HDR_LEN;
	if (type == PK_ETH_P_ARP)
		cl_rx_arp(C, port, frame, len, src_qp, sgid, mcast);
	else if (type == PK_ETH_P_IPV4)
		cl_rx_ipv4(C, port, frame, len, rc);
	else if (type == PK_ETH_P_IPV6)
		cl_rx_ipv6(C, port, frame, len, rc);
}

