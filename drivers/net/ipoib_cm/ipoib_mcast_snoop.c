/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Snooping on transmit (datapath): what the application's own frames say
 * about the groups it wants, as an IGMP/MLD snooping switch reads it.
 *
 * - IGMPv1/v2 reports and v2 leaves (RFC 2236), IGMPv3 reports
 *   (RFC 3376 s4.2): a group in EXCLUDE mode, or INCLUDE with sources, is
 *   joined; TO_IN({}) and IS_IN({}) (no source wanted) leave it.
 * - MLDv1 reports and done (RFC 2710), MLDv2 reports (RFC 3810 s5.2), the
 *   same way.
 * - Neighbor Discovery (RFC 4861): the source of an RS, NS or NA is an
 *   address the application uses, and the target of a DAD NS (from ::)
 *   one it is about to: their solicited-node groups are joined, so that
 *   ND reaches it (RFC 4861 s7.2.1).
 * - With allmulticast, every IPv4/IPv6 group the application sends to.
 *
 * Only frames that take the slow path are read (to a group, or ICMPv6);
 * a request goes to the control context through a ring, and a request
 * the ring cannot take is counted (tx_mcast_requests_lost).
 */

#include <netinet/in.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_ring_elem.h>

#include "ipoib_cm.h"

#define IGMP_V1_REPORT		0x12
#define IGMP_V2_REPORT		0x16
#define IGMP_V2_LEAVE		0x17
#define IGMP_V3_REPORT		0x22
#define MLD_V1_REPORT		131
#define MLD_V1_DONE		132
#define MLD_V2_REPORT		143
#define ND_ROUTER_SOL		133
#define ND_NEIGH_SOL		135
#define ND_NEIGH_ADV		136
/* Group record types, RFC 3376 s4.2.12 and RFC 3810 s5.2.12. */
#define REC_IS_IN		1
#define REC_IS_EX		2
#define REC_TO_IN		3
#define REC_TO_EX		4
#define REC_ALLOW		5
#define SNOOP_MAX_RECORDS	64	/* records read from one report */
#define SNOOP_MAX_EXT		4	/* IPv6 extension headers skipped */

/* What to read from a frame: where the L4 message is, how long. */
struct snoop_ctx {
	struct ipoib_txq *txq;
	const struct rte_mbuf *m;
	uint32_t off;		/* of the message */
	uint32_t end;		/* of the IP packet */
};

/*
 * The len bytes at the message's offset, copied into buf (a header in the
 * frame may sit at any address); false if the frame is shorter.
 */
static bool
snoop_hdr(const struct snoop_ctx *c, void *buf, uint32_t len)
{
	const void *p = rte_pktmbuf_read(c->m, c->off, len, buf);

	if (p == NULL)
		return false;
	if (p != buf)
		memcpy(buf, p, len);
	return true;
}

static void
snoop_req(struct ipoib_txq *txq, uint8_t op, uint8_t reason, bool v6,
	  const uint8_t *group)
{
	struct ipoib_priv *priv = txq->priv;
	struct ipoib_mc *mc = priv->mc;
	struct ipoib_mc_last *last = &txq->mc_last;
	struct ipoib_mc_req r = { .op = op, .reason = reason, .v6 = v6 };
	uint8_t mgid[IPOIB_GID_LEN];
	uint32_t gen;

	memcpy(r.group, group, v6 ? 16 : 4);
	/* a join already made (or asked for) is not asked again */
	if (op == IPOIB_MC_JOIN && reason != IPOIB_MC_R_REPORT) {
		if (v6) {
			ipoib_mgid_ipv6(mgid, priv->pkey, group);
		} else {
			rte_be32_t a;

			memcpy(&a, group, sizeof(a));
			ipoib_mgid_ipv4(mgid, priv->pkey, a);
		}
		gen = __atomic_load_n(&mc->pub.gen, __ATOMIC_RELAXED);
		if (last->gen == gen && last->reason == reason &&
		    memcmp(last->key, mgid, sizeof(last->key)) == 0)
			return;
		if (ipoib_mcast_known(mc, mgid, reason))
			return;
		if (rte_ring_mp_enqueue_elem(mc->req, &r, sizeof(r)) != 0) {
			IPOIB_STAT_INC(txq->stats.mc_req_lost);
			return;
		}
		memcpy(last->key, mgid, sizeof(last->key));
		last->gen = gen;
		last->reason = reason;
	} else if (rte_ring_mp_enqueue_elem(mc->req, &r, sizeof(r)) != 0) {
		IPOIB_STAT_INC(txq->stats.mc_req_lost);
		return;
	}
	priv->ops->ctrl_wake(priv->hca);
}

/* Join, leave or nothing, for a group record with nsrc sources. */
static uint8_t
snoop_record_op(uint8_t type, uint16_t nsrc)
{
	switch (type) {
	case REC_IS_EX:
	case REC_TO_EX:
		return IPOIB_MC_JOIN;
	case REC_IS_IN:
	case REC_TO_IN:
		return nsrc > 0 ? IPOIB_MC_JOIN : IPOIB_MC_LEAVE;
	case REC_ALLOW:
		return nsrc > 0 ? IPOIB_MC_JOIN : 0;
	}
	return 0;	/* BLOCK_OLD: sources only */
}

static bool
snoop_group_ok(bool v6, const uint8_t *g)
{
	return v6 ? g[0] == 0xff : (g[0] >> 4) == 0xe;
}

/*
 * IGMPv3 and MLDv2 reports: records of type, aux length (32-bit words),
 * source count, group, sources; glen is 4 or 16.
 */
static void
snoop_records(struct snoop_ctx *c, uint32_t off, uint16_t nrec, bool v6)
{
	uint32_t glen = v6 ? 16 : 4;
	uint8_t buf[4 + 16];
	uint16_t i;

	for (i = 0; i < nrec && i < SNOOP_MAX_RECORDS; i++) {
		const uint8_t *rec;
		uint16_t nsrc;
		uint8_t op;

		if (off + 4 + glen > c->end)
			return;
		rec = rte_pktmbuf_read(c->m, off, 4 + glen, buf);
		if (rec == NULL)
			return;
		nsrc = (uint16_t)(rec[2] << 8 | rec[3]);
		op = snoop_record_op(rec[0], nsrc);
		if (op != 0 && snoop_group_ok(v6, rec + 4))
			snoop_req(c->txq, op, IPOIB_MC_R_REPORT, v6, rec + 4);
		off += 4 + glen + nsrc * glen + rec[1] * 4u;
	}
}

static void
snoop_igmp(struct snoop_ctx *c)
{
	uint8_t buf[8];
	const uint8_t *p;

	if (c->off + sizeof(buf) > c->end)
		return;
	p = rte_pktmbuf_read(c->m, c->off, sizeof(buf), buf);
	if (p == NULL)
		return;
	switch (p[0]) {
	case IGMP_V1_REPORT:
	case IGMP_V2_REPORT:
	case IGMP_V2_LEAVE:
		if (snoop_group_ok(false, p + 4))
			snoop_req(c->txq, p[0] == IGMP_V2_LEAVE ?
				  IPOIB_MC_LEAVE : IPOIB_MC_JOIN,
				  IPOIB_MC_R_REPORT, false, p + 4);
		break;
	case IGMP_V3_REPORT:
		snoop_records(c, c->off + 8, (uint16_t)(p[6] << 8 | p[7]),
			      false);
		break;
	}
}

static void
snoop_ipv4(struct snoop_ctx *c, bool mcast_dst)
{
	struct rte_ipv4_hdr copy;
	const struct rte_ipv4_hdr *ip = &copy;
	uint32_t hlen;

	if (!mcast_dst)
		return;		/* reports go to groups */
	if (!snoop_hdr(c, &copy, sizeof(copy)) ||
	    (ip->version_ihl >> 4) != 4)
		return;
	hlen = rte_ipv4_hdr_len(ip);
	c->end = RTE_MIN(c->off + rte_be_to_cpu_16(ip->total_length),
			 c->m->pkt_len);
	c->off += hlen;
	if (!ipoib_ipv4_is_mcast(rte_be_to_cpu_32(ip->dst_addr)))
		return;
	if (ip->next_proto_id == IPPROTO_IGMP)
		snoop_igmp(c);
	if (__atomic_load_n(&c->txq->priv->mc->allmulti, __ATOMIC_ACQUIRE))
		snoop_req(c->txq, IPOIB_MC_JOIN, IPOIB_MC_R_TX, false,
			  (const uint8_t *)&ip->dst_addr);
}

static bool
ipv6_unicast(const uint8_t *a)
{
	static const uint8_t unspec[16];

	return a[0] != 0xff && memcmp(a, unspec, sizeof(unspec)) != 0;
}

/* ICMPv6 behind the IPv6 header ip: MLD, or ND naming our addresses. */
static void
snoop_icmp6(struct snoop_ctx *c, const struct rte_ipv6_hdr *ip,
	    bool mcast_dst)
{
	uint8_t buf[8 + 16], group[16];
	const uint8_t *p;

	if (c->off + 8 > c->end)
		return;
	p = rte_pktmbuf_read(c->m, c->off, RTE_MIN(sizeof(buf),
			     c->end - c->off), buf);
	if (p == NULL)
		return;
	switch (p[0]) {
	case MLD_V1_REPORT:
	case MLD_V1_DONE:
		if (mcast_dst && c->end - c->off >= 24 &&
		    snoop_group_ok(true, p + 8))
			snoop_req(c->txq, p[0] == MLD_V1_DONE ?
				  IPOIB_MC_LEAVE : IPOIB_MC_JOIN,
				  IPOIB_MC_R_REPORT, true, p + 8);
		break;
	case MLD_V2_REPORT:
		if (mcast_dst)
			snoop_records(c, c->off + 8,
				      (uint16_t)(p[6] << 8 | p[7]), true);
		break;
	case ND_NEIGH_SOL:
		/* duplicate address detection: the target is ours to be */
		if (!ipv6_unicast(IPOIB_IPV6_SRC(ip)) && c->end - c->off >= 24 &&
		    ipv6_unicast(p + 8)) {
			ipoib_ipv6_solicited(group, p + 8);
			snoop_req(c->txq, IPOIB_MC_JOIN, IPOIB_MC_R_ND, true,
				  group);
			break;
		}
		/* fall through */
	case ND_ROUTER_SOL:
	case ND_NEIGH_ADV:
		if (ipv6_unicast(IPOIB_IPV6_SRC(ip))) {
			ipoib_ipv6_solicited(group, IPOIB_IPV6_SRC(ip));
			snoop_req(c->txq, IPOIB_MC_JOIN, IPOIB_MC_R_ND, true,
				  group);
		}
		break;
	}
}

static void
snoop_ipv6(struct snoop_ctx *c, bool mcast_dst)
{
	struct rte_ipv6_hdr copy;
	const struct rte_ipv6_hdr *ip = &copy;
	uint8_t next, ext[2];
	unsigned int i;

	if (!snoop_hdr(c, &copy, sizeof(copy)) ||
	    (rte_be_to_cpu_32(ip->vtc_flow) >> 28) != 6)
		return;
	c->end = RTE_MIN(c->off + (uint32_t)sizeof(*ip) +
			 rte_be_to_cpu_16(ip->payload_len), c->m->pkt_len);
	c->off += sizeof(*ip);
	next = ip->proto;
	/* MLD comes behind a hop-by-hop header (router alert) */
	for (i = 0; i < SNOOP_MAX_EXT && (next == IPPROTO_HOPOPTS ||
	     next == IPPROTO_DSTOPTS); i++) {
		const uint8_t *e = rte_pktmbuf_read(c->m, c->off, sizeof(ext),
						    ext);

		if (e == NULL)
			return;
		next = e[0];
		c->off += (e[1] + 1u) * 8;
	}
	if (next == IPPROTO_ICMPV6)
		snoop_icmp6(c, ip, mcast_dst);
	if (mcast_dst && IPOIB_IPV6_DST(ip)[0] == 0xff &&
	    __atomic_load_n(&c->txq->priv->mc->allmulti, __ATOMIC_ACQUIRE))
		snoop_req(c->txq, IPOIB_MC_JOIN, IPOIB_MC_R_TX, true,
			  IPOIB_IPV6_DST(ip));
}

void
ipoib_mcast_snoop(struct ipoib_txq *txq, const struct rte_mbuf *m,
		  bool mcast_dst)
{
	struct snoop_ctx c = { .txq = txq, .m = m, .off = RTE_ETHER_HDR_LEN };
	struct rte_ether_hdr copy;
	const struct rte_ether_hdr *eh;

	if (txq->priv->mc == NULL)
		return;
	eh = rte_pktmbuf_read(m, 0, sizeof(*eh), &copy);
	if (eh == NULL)
		return;
	if (eh->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV4))
		snoop_ipv4(&c, mcast_dst);
	else if (eh->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6))
		snoop_ipv6(&c, mcast_dst);
}
