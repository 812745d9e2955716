/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * What an emulated host answers: IPoIB ARP (RFC 4391 s9.1), IPv6 Neighbor
 * Solicitation (RFC 4861 s7.2.4, IPoIB link-layer option RFC 4391 s9.2.1),
 * ICMP and ICMPv6 echo, and UDP (echoed with the ports swapped). Replies
 * are built in P->tx_buf and sent by peers_send() (connection or UD).
 *
 * IPv4 fragments are echoed one by one, as they come: swapping addresses
 * and ports changes no transport checksum (one's complement sums commute)
 * and an echo request's type becomes a reply's with an incremental update
 * (RFC 1624), so the requester reassembles the reply.
 */

#include <stddef.h>
#include <string.h>

#include "peers.h"
#include "peers_pkt.h"

/* A received frame: who got it and where it came from. */
struct peers_rx {
	struct peers *P;
	uint32_t host;
	struct peers_host *h;
	uint32_t peer;		/* the sender, looked up on first need */
	const uint8_t *sgid;	/* UD: GRH source */
	uint32_t src_qp;
	bool mcast;
	bool rc;
	bool counted;
};

static void
rx_count(struct peers_rx *r)
{
	if (r->counted)
		return;
	r->counted = true;
	if (r->rc)
		r->h->st.rc_rx++;
	else
		r->h->st.ud_rx++;
}

/* A frame this host does not answer: multicast for others is no drop. */
static void
rx_other(struct peers_rx *r)
{
	if (r->mcast) {
		r->P->mcast_other++;
		return;
	}
	rx_count(r);
	r->h->st.dropped++;
}

static void
rx_drop(struct peers_rx *r)
{
	rx_count(r);
	r->h->st.dropped++;
}

/* The sender as a peer of this host (GRH source, or the connection's). */
static uint32_t
rx_peer(struct peers_rx *r)
{
	if (r->peer == UINT32_MAX)
		r->peer = peers_peer_get(r->P, r->host, r->src_qp, r->sgid);
	return r->peer;
}

static bool
rx_reply(struct peers_rx *r, uint32_t peer, uint16_t type, uint32_t len,
	 bool may_rc)
{
	if (peer == UINT32_MAX) {
		r->h->st.dropped++;
		return false;
	}
	return peers_send(r->P, peer, type, r->P->tx_buf, len, may_rc);
}

/* ---- ARP ----------------------------------------------------------------- */

static void
rx_arp(struct peers_rx *r, const uint8_t *a, uint32_t len)
{
	struct peers_host *h = r->h;
	struct ipoib_arp req, *rep = (struct ipoib_arp *)r->P->tx_buf;
	uint32_t peer;

	if (len < sizeof(req)) {
		rx_other(r);
		return;
	}
	memcpy(&req, a, sizeof(req));
	if (req.hw_type != rte_cpu_to_be_16(IPOIB_ARPHRD_INFINIBAND) ||
	    req.proto != rte_cpu_to_be_16(PK_ETH_P_IPV4) ||
	    req.hlen != IPOIB_HWADDR_LEN || req.plen != 4) {
		rx_other(r);
		return;
	}
	/* a reply to this host updates the sender's entry, if it has one */
	if (req.op == rte_cpu_to_be_16(PK_ARP_OP_REPLY) && !r->mcast) {
		rx_count(r);
		peers_persona_neigh_update(r->P, r->host, &req.sender_hw,
			req.sender_ip == req.target_ip &&
			memcmp(&req.sender_hw, &req.target_hw,
			       sizeof(req.sender_hw)) == 0);
		return;
	}
	if (req.op != rte_cpu_to_be_16(PK_ARP_OP_REQUEST) ||
	    rte_be_to_cpu_32(req.target_ip) != h->ipv4) {
		rx_other(r);
		return;
	}
	rx_count(r);
	if (r->P->idle) {
		h->st.dropped++;
		return;
	}
	/* the reply goes to the hardware address the request names */
	peer = peers_peer_get(r->P, r->host, ipoib_hwaddr_qpn(&req.sender_hw),
			      ipoib_hwaddr_gid(&req.sender_hw));
	if (peer != UINT32_MAX)
		peers_peer_set_flags(r->P, peer,
				     ipoib_hwaddr_flags(&req.sender_hw));
	rep->hw_type = rte_cpu_to_be_16(IPOIB_ARPHRD_INFINIBAND);
	rep->proto = rte_cpu_to_be_16(PK_ETH_P_IPV4);
	rep->hlen = IPOIB_HWADDR_LEN;
	rep->plen = 4;
	rep->op = rte_cpu_to_be_16(PK_ARP_OP_REPLY);
	rep->sender_hw = h->hw;
	rep->sender_ip = rte_cpu_to_be_32(h->ipv4);
	rep->target_hw = req.sender_hw;
	rep->target_ip = req.sender_ip;
	if (rx_reply(r, peer, PK_ETH_P_ARP, sizeof(*rep), false))
		h->st.arp++;
}

/* ---- IPv4 ---------------------------------------------------------------- */

/* Echo one fragment of an ICMP echo or UDP datagram (see the top). */
static void
rx_ipv4_frag(struct peers_rx *r, const uint8_t *ip, uint32_t ihl,
	     uint32_t tot)
{
	uint8_t *out = r->P->tx_buf;
	const uint8_t *l4 = ip + ihl;
	uint32_t flen = tot - ihl;
	uint16_t frag = pk_get16(ip + 6);
	uint8_t proto = ip[9];
	uint64_t *count = NULL;

	if (proto != PK_IPPROTO_ICMP && proto != PK_IPPROTO_UDP) {
		rx_drop(r);
		return;
	}
	pk_ipv4_hdr(out, (uint16_t)(PK_IPV4_HLEN + flen), pk_get16(ip + 4),
		    frag & (PK_IPV4_DF | PK_IPV4_MF | PK_IPV4_OFF_MASK), proto,
		    r->h->ipv4, pk_get32(ip + 12));
	memcpy(out + PK_IPV4_HLEN, l4, flen);
	if ((frag & PK_IPV4_OFF_MASK) == 0) {
		uint8_t *o4 = out + PK_IPV4_HLEN;

		if (flen < 8 ||
		    (proto == PK_IPPROTO_ICMP &&
		     (l4[0] != PK_ICMP_ECHO_REQUEST || l4[1] != 0))) {
			rx_drop(r);
			return;
		}
		if (proto == PK_IPPROTO_ICMP) {
			o4[0] = PK_ICMP_ECHO_REPLY;
			pk_put16(o4 + 2, pk_cksum_update(pk_get16(l4 + 2),
				 PK_ICMP_ECHO_REQUEST << 8,
				 PK_ICMP_ECHO_REPLY << 8));
			count = &r->h->st.echo;
		} else {
			memcpy(o4, l4 + 2, 2);
			memcpy(o4 + 2, l4, 2);
			count = &r->h->st.udp;
		}
	}
	if (rx_reply(r, rx_peer(r), PK_ETH_P_IPV4, PK_IPV4_HLEN + flen, true) &&
	    count != NULL)
		(*count)++;
}

static void
rx_icmp4(struct peers_rx *r, const uint8_t *ip, uint32_t ihl, uint32_t tot)
{
	uint8_t *out = r->P->tx_buf, *o4 = out + PK_IPV4_HLEN;
	const uint8_t *l4 = ip + ihl;
	uint32_t len = tot - ihl;

	if (len < PK_ICMP_HLEN || l4[0] != PK_ICMP_ECHO_REQUEST ||
	    l4[1] != 0 || pk_cksum(l4, len) != 0) {
		rx_drop(r);
		return;
	}
	pk_ipv4_hdr(out, (uint16_t)(PK_IPV4_HLEN + len), pk_get16(ip + 4),
		    pk_get16(ip + 6) & PK_IPV4_DF, PK_IPPROTO_ICMP, r->h->ipv4,
		    pk_get32(ip + 12));
	memcpy(o4, l4, len);
	o4[0] = PK_ICMP_ECHO_REPLY;
	pk_put16(o4 + 2, 0);
	pk_put16(o4 + 2, pk_cksum(o4, len));
	if (rx_reply(r, rx_peer(r), PK_ETH_P_IPV4, PK_IPV4_HLEN + len, true))
		r->h->st.echo++;
}

static void
rx_udp4(struct peers_rx *r, const uint8_t *ip, uint32_t ihl, uint32_t tot)
{
	uint8_t *out = r->P->tx_buf, *o4 = out + PK_IPV4_HLEN;
	const uint8_t *l4 = ip + ihl;
	uint32_t ulen = tot - ihl >= PK_UDP_HLEN ? pk_get16(l4 + 4) : 0;
	uint16_t ck;

	if (ulen < PK_UDP_HLEN || ulen > tot - ihl ||
	    (pk_get16(l4 + 6) != 0 &&
	     pk_fold(pk_sum(pk_sum_pseudo4(ip, PK_IPPROTO_UDP, ulen), l4,
			    ulen)) != 0)) {
		rx_drop(r);
		return;
	}
	pk_ipv4_hdr(out, (uint16_t)(PK_IPV4_HLEN + ulen), pk_get16(ip + 4),
		    pk_get16(ip + 6) & PK_IPV4_DF, PK_IPPROTO_UDP, r->h->ipv4,
		    pk_get32(ip + 12));
	memcpy(o4, l4 + 2, 2);
	memcpy(o4 + 2, l4, 2);
	memcpy(o4 + 4, l4 + 4, ulen - 4);
	if (pk_get16(l4 + 6) != 0) {	/* none stays none (RFC 768) */
		pk_put16(o4 + 6, 0);
		ck = pk_fold(pk_sum(pk_sum_pseudo4(out, PK_IPPROTO_UDP, ulen),
				    o4, ulen));
		pk_put16(o4 + 6, ck == 0 ? 0xffff : ck);
	}
	if (rx_reply(r, rx_peer(r), PK_ETH_P_IPV4, PK_IPV4_HLEN + ulen, true))
		r->h->st.udp++;
}

static void
rx_ipv4(struct peers_rx *r, const uint8_t *ip, uint32_t len)
{
	uint32_t ihl, tot;

	if (len < PK_IPV4_HLEN || (ip[0] >> 4) != 4) {
		rx_other(r);
		return;
	}
	ihl = (ip[0] & 0xfu) * 4;
	tot = pk_get16(ip + 2);
	if (ihl < PK_IPV4_HLEN || tot < ihl || tot > len ||
	    pk_cksum(ip, ihl) != 0 || pk_get32(ip + 16) != r->h->ipv4) {
		rx_other(r);
		return;
	}
	rx_count(r);
	if (r->P->idle) {
		r->h->st.dropped++;
		return;
	}
	if (pk_get16(ip + 6) & (PK_IPV4_MF | PK_IPV4_OFF_MASK))
		rx_ipv4_frag(r, ip, ihl, tot);
	else if (ip[9] == PK_IPPROTO_ICMP)
		rx_icmp4(r, ip, ihl, tot);
	else if (ip[9] == PK_IPPROTO_UDP)
		rx_udp4(r, ip, ihl, tot);
	else
		rx_drop(r);
}

/* ---- IPv6 ---------------------------------------------------------------- */

static bool
rx_zero16(const uint8_t *a)
{
	static const uint8_t zero[16];

	return memcmp(a, zero, sizeof(zero)) == 0;
}

/*
 * The hardware address in the last option of type (SLLA or TLLA) of the
 * ND message l4 (plen bytes, options after PK_ND_NS_LEN), or NULL; -1
 * if the options are malformed (RFC 4861 s7.1.1, s7.1.2: none of length
 * 0, none past the end).
 */
static int
rx_nd_lla(const uint8_t *l4, uint32_t plen, uint8_t type,
	  const uint8_t **lla)
{
	uint32_t off, olen;

	*lla = NULL;
	for (off = PK_ND_NS_LEN; off + 2 <= plen; off += olen) {
		olen = l4[off + 1] * 8u;
		if (olen == 0 || olen > plen - off)
			return -1;
		if (l4[off] == type && olen == IPOIB_ND_OPT_IB_LEN)
			*lla = l4 + off + 2 + IPOIB_ND_OPT_IB_PAD;
	}
	return 0;
}

/* A Neighbor Solicitation for our address: a Neighbor Advertisement. */
static void
rx_ns(struct peers_rx *r, const uint8_t *ip, const uint8_t *l4,
      uint32_t plen)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 0x01 };
	struct peers_host *h = r->h;
	uint8_t *out = r->P->tx_buf, *na = out + PK_IPV6_HLEN;
	const uint8_t *slla;
	bool dad = rx_zero16(ip + 8);
	uint32_t peer;
	uint8_t mgid[IPOIB_GID_LEN];

	if (ip[7] != PK_ND_HOP_LIMIT || l4[1] != 0 || plen < PK_ND_NS_LEN ||
	    memcmp(l4 + 8, h->ipv6, 16) != 0) {
		rx_other(r);
		return;
	}
	rx_count(r);
	/* RFC 4861 s7.1.1: options well formed; no SLLA from :: */
	if (rx_nd_lla(l4, plen, IPOIB_ND_OPT_SLLA, &slla) < 0) {
		h->st.dropped++;
		return;
	}
	if ((dad && slla != NULL) || r->P->idle) {
		h->st.dropped++;
		return;
	}
	pk_ipv6_hdr(out, PK_ND_NS_LEN + IPOIB_ND_OPT_IB_LEN, PK_IPPROTO_ICMPV6,
		    PK_ND_HOP_LIMIT, h->ipv6, dad ? all_nodes : ip + 8);
	memset(na, 0, PK_ND_NS_LEN);
	na[0] = PK_ND_NEIGH_ADV;
	na[4] = dad ? PK_NA_F_OVERRIDE : PK_NA_F_SOLICITED | PK_NA_F_OVERRIDE;
	memcpy(na + 8, h->ipv6, 16);
	na[PK_ND_NS_LEN] = IPOIB_ND_OPT_TLLA;
	na[PK_ND_NS_LEN + 1] = IPOIB_ND_OPT_IB_LEN / 8;
	memset(na + PK_ND_NS_LEN + 2, 0, IPOIB_ND_OPT_IB_PAD);
	memcpy(na + PK_ND_NS_LEN + 2 + IPOIB_ND_OPT_IB_PAD, h->hw.bytes,
	       IPOIB_HWADDR_LEN);
	pk_l4_cksum6(out, na, PK_ND_NS_LEN + IPOIB_ND_OPT_IB_LEN, 2);
	if (dad) {
		/* RFC 4861 s7.2.4: to all-nodes, S clear */
		ipoib_mgid_ipv6(mgid, r->P->conf.pkey, all_nodes);
		if (peers_send_mcast(r->P, r->host, mgid, PK_ETH_P_IPV6, out,
				     PK_IPV6_HLEN + PK_ND_NS_LEN +
				     IPOIB_ND_OPT_IB_LEN))
			h->st.nd++;
		return;
	}
	if (slla != NULL) {
		struct ipoib_hwaddr hw;

		memcpy(&hw, slla, sizeof(hw));
		peer = peers_peer_get(r->P, r->host, ipoib_hwaddr_qpn(&hw),
				      ipoib_hwaddr_gid(&hw));
		if (peer != UINT32_MAX)
			peers_peer_set_flags(r->P, peer,
					     ipoib_hwaddr_flags(&hw));
	} else {
		peer = rx_peer(r);
	}
	if (rx_reply(r, peer, PK_ETH_P_IPV6, PK_IPV6_HLEN + PK_ND_NS_LEN +
		     IPOIB_ND_OPT_IB_LEN, true))
		h->st.nd++;
}

/*
 * A Neighbor Advertisement (RFC 4861 s7.1.2, Linux ndisc_recv_na()): hop
 * limit 255, code 0, a target that is not multicast, S clear when sent
 * to a group. With O set, its TLLA replaces the address of the
 * neighbour it names (peers_persona_neigh_update()); without O, Linux
 * keeps a different address it has (NEIGH_UPDATE_F_WEAK_OVERRIDE).
 */
static void
rx_na(struct peers_rx *r, const uint8_t *ip, const uint8_t *l4,
      uint32_t plen)
{
	const uint8_t *tlla;
	struct ipoib_hwaddr hw;

	if (ip[7] != PK_ND_HOP_LIMIT || l4[1] != 0 || plen < PK_ND_NS_LEN ||
	    l4[8] == 0xff || (ip[24] == 0xff && (l4[4] & PK_NA_F_SOLICITED))) {
		rx_other(r);
		return;
	}
	rx_count(r);
	if (rx_nd_lla(l4, plen, IPOIB_ND_OPT_TLLA, &tlla) < 0) {
		r->h->st.dropped++;
		return;
	}
	if (tlla == NULL || !(l4[4] & PK_NA_F_OVERRIDE))
		return;
	memcpy(&hw, tlla, sizeof(hw));
	peers_persona_neigh_update(r->P, r->host, &hw, true);
}

static void
rx_echo6(struct peers_rx *r, const uint8_t *ip, const uint8_t *l4,
	 uint32_t plen)
{
	uint8_t *out = r->P->tx_buf, *o6 = out + PK_IPV6_HLEN;

	if (plen < PK_ICMP_HLEN || l4[1] != 0) {
		rx_drop(r);
		return;
	}
	pk_ipv6_hdr(out, (uint16_t)plen, PK_IPPROTO_ICMPV6, PK_TTL, r->h->ipv6,
		    ip + 8);
	memcpy(o6, l4, plen);
	o6[0] = PK_ICMP6_ECHO_REPLY;
	pk_l4_cksum6(out, o6, plen, 2);
	if (rx_reply(r, rx_peer(r), PK_ETH_P_IPV6, PK_IPV6_HLEN + plen, true))
		r->h->st.echo++;
}

static void
rx_udp6(struct peers_rx *r, const uint8_t *ip, const uint8_t *l4,
	uint32_t plen)
{
	uint8_t *out = r->P->tx_buf, *o6 = out + PK_IPV6_HLEN;
	uint32_t ulen = plen >= PK_UDP_HLEN ? pk_get16(l4 + 4) : 0;

	/* RFC 8200 s8.1: a zero UDP checksum is not allowed on IPv6 */
	if (ulen < PK_UDP_HLEN || ulen > plen || pk_get16(l4 + 6) == 0 ||
	    !pk_l4_cksum6_ok(ip, l4, ulen)) {
		rx_drop(r);
		return;
	}
	pk_ipv6_hdr(out, (uint16_t)ulen, PK_IPPROTO_UDP, PK_TTL, r->h->ipv6,
		    ip + 8);
	memcpy(o6, l4 + 2, 2);
	memcpy(o6 + 2, l4, 2);
	memcpy(o6 + 4, l4 + 4, ulen - 4);
	pk_l4_cksum6(out, o6, ulen, 6);
	if (rx_reply(r, rx_peer(r), PK_ETH_P_IPV6, PK_IPV6_HLEN + ulen, true))
		r->h->st.udp++;
}

static void
rx_ipv6(struct peers_rx *r, const uint8_t *ip, uint32_t len)
{
	const uint8_t *l4 = ip + PK_IPV6_HLEN;
	bool mine;
	uint32_t plen;

	if (len < PK_IPV6_HLEN || (ip[0] >> 4) != 6 ||
	    PK_IPV6_HLEN + (plen = pk_get16(ip + 4)) > len) {
		rx_other(r);
		return;
	}
	mine = memcmp(ip + 24, r->h->ipv6, 16) == 0;
	if (ip[6] == PK_IPPROTO_ICMPV6 && plen >= 4 &&
	    pk_l4_cksum6_ok(ip, l4, plen)) {
		if (l4[0] == PK_ND_NEIGH_SOL) {
			rx_ns(r, ip, l4, plen);
			return;
		}
		if (l4[0] == PK_ND_NEIGH_ADV && !r->mcast) {
			rx_na(r, ip, l4, plen);
			return;
		}
		if (l4[0] == PK_ICMP6_ECHO_REQUEST && mine) {
			rx_count(r);
			if (r->P->idle)
				r->h->st.dropped++;
			else
				rx_echo6(r, ip, l4, plen);
			return;
		}
	} else if (ip[6] == PK_IPPROTO_UDP && mine) {
		rx_count(r);
		if (r->P->idle)
			r->h->st.dropped++;
		else
			rx_udp6(r, ip, l4, plen);
		return;
	}
	rx_other(r);
}

/* The host an address names: its low 32 bits are host 0's IPv4 plus i. */
static uint32_t
mcast_host_of(const struct peers *P, uint32_t low32)
{
	uint32_t i = low32 - P->conf.ipv4;

	return i < P->nr_hosts ? i : UINT32_MAX;
}

/*
 * The one host a frame sent to a group concerns: an ARP request's target,
 * a Neighbor Solicitation's target, else the IP destination. Hosts answer
 * nothing else that comes to a group, so one member can take the groups'
 * frames for all of them. UINT32_MAX: none of ours.
 */
uint32_t
peers_rx_mcast_host(const struct peers *P, const uint8_t *frame,
		    uint32_t len)
{
	const uint8_t *pkt = frame + IPOIB_HDR_LEN;

	if (len < IPOIB_HDR_LEN)
		return UINT32_MAX;
	len -= IPOIB_HDR_LEN;
	switch (pk_get16(frame)) {
	case PK_ETH_P_ARP:
		if (len < sizeof(struct ipoib_arp))
			break;
		return mcast_host_of(P, pk_get32(pkt +
				offsetof(struct ipoib_arp, target_ip)));
	case PK_ETH_P_IPV4:
		if (len < PK_IPV4_HLEN)
			break;
		return mcast_host_of(P, pk_get32(pkt + 16));
	case PK_ETH_P_IPV6:
		if (len >= PK_IPV6_HLEN + 24 &&
		    pkt[6] == PK_IPPROTO_ICMPV6 &&
		    pkt[PK_IPV6_HLEN] == PK_ND_NEIGH_SOL)
			return mcast_host_of(P, pk_get32(pkt + PK_IPV6_HLEN +
							 8 + 12));
		if (len < PK_IPV6_HLEN)
			break;
		return mcast_host_of(P, pk_get32(pkt + 24 + 12));
	default:
		break;
	}
	return UINT32_MAX;
}

/*
 * A frame (IPoIB header first) received by host. UD: sgid and src_qp
 * name the sender, mcast says it came to a group. RC: peer is the sender.
 */
void
peers_rx_frame(struct peers *P, uint32_t host, uint32_t peer,
	       const uint8_t *sgid, uint32_t src_qp, bool mcast, bool rc,
	       const uint8_t *frame, uint32_t len)
{
	struct peers_rx r = {
		.P = P,
		.host = host,
		.h = &P->hosts[host],
		.peer = peer,
		.sgid = sgid,
		.src_qp = src_qp,
		.mcast = mcast,
		.rc = rc,
	};
	const uint8_t *pkt = frame + IPOIB_HDR_LEN;

	len -= IPOIB_HDR_LEN;
	switch (pk_get16(frame)) {
	case PK_ETH_P_ARP:
		rx_arp(&r, pkt, len);
		break;
	case PK_ETH_P_IPV4:
		rx_ipv4(&r, pkt, len);
		break;
	case PK_ETH_P_IPV6:
		rx_ipv6(&r, pkt, len);
		break;
	default:
		rx_other(&r);
		break;
	}
}
