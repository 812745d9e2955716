/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Framing: wire formats, MGIDs and the Ethernet emulation, checked against
 * byte arrays written out by hand from RFC 4391 and what Linux puts on the
 * wire. Checksums in the arrays were computed separately (one's complement
 * sum over the RFC 8200 pseudo-header), not by the code under test.
 */

#include <errno.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "ipoib_eth.h"
#include "ipoib_wire.h"
#include "test.h"
#include "test_pkt.h"

/*
 * Two ports on one subnet. A: GID fe80::2:c903:a1:b2c3, UD QPN 0x48;
 * B: GID fe80::2:c903:d4:e5f6, UD QPN 0xa1; both connected-mode capable.
 * Each application uses its own port MAC (A_MAC, B_MAC) and sees the other
 * port under the MAC derived from its hardware address (A_MAC_B is A as B
 * sees it). Those two derived MACs are pinned here: they are not on the
 * wire, but they must not change between versions.
 */
#define A_GID	0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, \
		0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0xc3
#define B_GID	0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, \
		0x00, 0x02, 0xc9, 0x03, 0x00, 0xd4, 0xe5, 0xf6
#define A_HW	0x80, 0x00, 0x00, 0x48, A_GID
#define B_HW	0x80, 0x00, 0x00, 0xa1, B_GID
#define A_MAC	0x02, 0xaa, 0x00, 0x00, 0x00, 0x01
#define B_MAC	0x02, 0xbb, 0x00, 0x00, 0x00, 0x02
#define A_MAC_B	0xe6, 0x98, 0xdd, 0x96, 0xb8, 0xbc
#define B_MAC_A	0x0e, 0xd5, 0x69, 0xc8, 0x2b, 0x42
#define A_IP4	0x0a, 0x00, 0x00, 0x01		/* 10.0.0.1 */
#define B_IP4	0x0a, 0x00, 0x00, 0x02		/* 10.0.0.2 */
#define BCAST	0xff, 0xff, 0xff, 0xff, 0xff, 0xff
#define ZERO4	0x00, 0x00, 0x00, 0x00
#define ZERO6	0x00, 0x00, 0x00, 0x00, 0x00, 0x00
#define ZERO20	ZERO4, ZERO4, ZERO4, ZERO4, ZERO4
#define FE80_1	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01
#define FE80_2	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02
/* ff02::1:ff00:2, the solicited-node group of fe80::2 */
#define SNM_2	0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff, 0, 0, 0x02

static const uint8_t a_hw[] = { A_HW };
static const uint8_t b_hw[] = { B_HW };

/* A port: its context and a small neighbour table filled by learning. */
struct node {
	struct ipoib_eth_ctx ctx;
	unsigned int n;
	struct ipoib_learn neigh[8];
};

static int
node_resolve(void *arg, const struct rte_ether_addr *mac,
	     struct ipoib_hwaddr *ha)
{
	struct node *nd = arg;
	unsigned int i;

	for (i = 0; i < nd->n; i++) {
		if (rte_is_same_ether_addr(mac, &nd->neigh[i].mac)) {
			*ha = nd->neigh[i].hw;
			return 0;
		}
	}
	return -ENOENT;
}

static void
node_learn(struct node *nd, const struct ipoib_learn *l)
{
	if (l->valid && nd->n < RTE_DIM(nd->neigh))
		nd->neigh[nd->n++] = *l;
}

static void
node_init(struct node *nd, const uint8_t *hw, const uint8_t *mac)
{
	memset(nd, 0, sizeof(*nd));
	memcpy(&nd->ctx.port_hw, hw, IPOIB_HWADDR_LEN);
	memcpy(&nd->ctx.port_mac, mac, RTE_ETHER_ADDR_LEN);
	nd->ctx.pkey = 0xffff;
	nd->ctx.resolve = node_resolve;
	nd->ctx.resolve_arg = nd;
}

/* The hardware address a UD receive reports: flags unknown (zero). */
static void
ud_src(struct ipoib_hwaddr *ha, const uint8_t *hw)
{
	memcpy(ha, hw, IPOIB_HWADDR_LEN);
	ha->bytes[0] = 0;
}

static void
nodes_init(struct node *a, struct node *b)
{
	static const uint8_t amac[] = { A_MAC }, bmac[] = { B_MAC };

	node_init(a, a_hw, amac);
	node_init(b, b_hw, bmac);
}

/* After a refused call: m still holds exactly these bytes. */
static int
frame_unchanged(const struct rte_mbuf *m, const void *want, uint32_t len)
{
	return test_frame_eq(m, want, len);
}

/* ---- wire formats ---- */

static int
test_wire_sizes(void)
{
	struct ipoib_cm_data cd;
	static const uint8_t cd_want[] = {
		0x00, 0x12, 0x34, 0x56,	/* UD QPN */
		0x00, 0x00, 0xff, 0xf4,	/* 65524: MTU + IPoIB header */
	};

	ipoib_wire_check_sizes();
	TEST_ASSERT_EQ(sizeof(struct ipoib_hdr), 4, "");
	TEST_ASSERT_EQ(sizeof(struct ipoib_hwaddr), 20, "");
	TEST_ASSERT_EQ(sizeof(struct ipoib_grh), 40, "");
	TEST_ASSERT_EQ(sizeof(struct ipoib_arp), 56, "");
	TEST_ASSERT_EQ(sizeof(struct ipoib_cm_data), 8, "");
	TEST_ASSERT_EQ(IPOIB_HDR_LEN, 4, "");
	TEST_ASSERT_EQ(IPOIB_HWADDR_LEN, 20, "");
	TEST_ASSERT_EQ(IPOIB_GRH_LEN, 40, "");
	TEST_ASSERT_EQ(IPOIB_GID_LEN, 16, "");
	TEST_ASSERT_EQ(IPOIB_QKEY_DEFAULT, 0xb1b, "");
	TEST_ASSERT_EQ(IPOIB_CM_MTU, 65520, "");
	TEST_ASSERT_EQ(IPOIB_CM_BUF_SIZE, 65524, "");
	TEST_ASSERT_EQ(IPOIB_MCAST_QPN, 0xffffff, "");
	TEST_ASSERT_EQ(IPOIB_ARPHRD_INFINIBAND, 32, "");
	TEST_ASSERT(IPOIB_CM_SID_OFED == 0x1000000000000000ULL, "");
	TEST_ASSERT(IPOIB_CM_SID_RFC == 0x0100000000000000ULL, "");
	cd.qpn = rte_cpu_to_be_32(0x123456);
	cd.mtu = rte_cpu_to_be_32(IPOIB_CM_BUF_SIZE);
	TEST_ASSERT(memcmp(&cd, cd_want, sizeof(cd_want)) == 0,
		    "CM private data bytes");
	return 0;
}
REGISTER_TEST(wire_sizes, test_wire_sizes,
		    "wire struct sizes and protocol constants");

static int
test_wire_hwaddr(void)
{
	static const uint8_t gid[] = { A_GID };
	static const uint8_t want[] = {
		0x80, 0x12, 0x34, 0x56, A_GID,
	};
	struct ipoib_hwaddr ha, hb;

	ipoib_hwaddr_set(&ha, IPOIB_HWADDR_F_RC, 0x123456, gid);
	TEST_ASSERT(memcmp(&ha, want, sizeof(want)) == 0, "hwaddr bytes");
	TEST_ASSERT_EQ(ipoib_hwaddr_qpn(&ha), 0x123456, "");
	TEST_ASSERT_EQ(ipoib_hwaddr_flags(&ha), 0x80, "");
	TEST_ASSERT(ipoib_hwaddr_gid(&ha) == &ha.bytes[4], "");
	TEST_ASSERT(memcmp(ipoib_hwaddr_gid(&ha), gid, 16) == 0, "");
	/* A QPN is 24 bits: the rest does not reach the flags byte. */
	ipoib_hwaddr_set(&hb, 0, 0xff123456, gid);
	TEST_ASSERT_EQ(hb.bytes[0], 0, "");
	TEST_ASSERT_EQ(ipoib_hwaddr_qpn(&hb), 0x123456, "");
	TEST_ASSERT(ipoib_hwaddr_eq_qpn_gid(&ha, &hb), "flags must not count");
	hb.bytes[3] ^= 1;
	TEST_ASSERT(!ipoib_hwaddr_eq_qpn_gid(&ha, &hb), "QPN differs");
	hb.bytes[3] ^= 1;
	hb.bytes[19] ^= 1;
	TEST_ASSERT(!ipoib_hwaddr_eq_qpn_gid(&ha, &hb), "GID differs");
	ipoib_hwaddr_set(&hb, IPOIB_HWADDR_F_UC, IPOIB_MCAST_QPN, gid);
	TEST_ASSERT_EQ(hb.bytes[0], 0x40, "");
	TEST_ASSERT_EQ(ipoib_hwaddr_qpn(&hb), 0xffffff, "");
	return 0;
}
REGISTER_TEST(wire_hwaddr, test_wire_hwaddr,
		    "hardware address layout and helpers");

struct mgid_case {
	const char *name;
	int kind;		/* 0 broadcast, 4 IPv4, 6 IPv6 */
	uint16_t pkey;
	uint8_t group[16];	/* IPv4: 4 bytes */
	uint8_t want[16];
};

/* ff12:401b:PPPP::ffff:ffff; ip_ib_mc_map; ipv6_ib_mc_map (Linux). */
static const struct mgid_case mgid_cases[] = {
	{ "broadcast pkey ffff", 0, 0xffff, { 0 },
	  { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff } },
	{ "broadcast pkey 8001", 0, 0x8001, { 0 },
	  { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff } },
	{ "broadcast pkey 0001 (full member bit added)", 0, 0x0001, { 0 },
	  { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff } },
	{ "239.1.2.3", 4, 0xffff, { 239, 1, 2, 3 },
	  { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0x0f, 0x01, 0x02, 0x03 } },
	{ "224.0.0.1", 4, 0xffff, { 224, 0, 0, 1 },
	  { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01 } },
	{ "239.129.2.3 pkey 8001", 4, 0x8001, { 239, 129, 2, 3 },
	  { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0x0f, 0x81, 0x02, 0x03 } },
	{ "ff02::1", 6, 0xffff,
	  { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01 },
	  { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01 } },
	{ "ff02::1:ff00:1234", 6, 0xffff,
	  { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff, 0, 0x12, 0x34 },
	  { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x01, 0xff, 0x00, 0x12, 0x34 } },
	{ "ff05::1:3 pkey 8001", 6, 0x8001,
	  { 0xff, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0x03 },
	  { 0xff, 0x12, 0x60, 0x1b, 0x80, 0x01, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x03 } },
};

static int
test_wire_mgid(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(mgid_cases); i++) {
		const struct mgid_case *c = &mgid_cases[i];
		uint8_t mgid[16];
		rte_be32_t g;

		memset(mgid, 0xa5, sizeof(mgid));
		printf("  %s\n", c->name);
		if (c->kind == 0) {
			ipoib_mgid_bcast(mgid, c->pkey);
		} else if (c->kind == 4) {
			memcpy(&g, c->group, sizeof(g));
			ipoib_mgid_ipv4(mgid, c->pkey, g);
		} else {
			ipoib_mgid_ipv6(mgid, c->pkey, c->group);
		}
		if (memcmp(mgid, c->want, sizeof(mgid)) != 0) {
			test_hexdump("got", mgid, 16);
			test_hexdump("want", c->want, 16);
			TEST_ASSERT(0, "MGID for %s", c->name);
		}
	}
	return 0;
}
REGISTER_TEST(wire_mgid, test_wire_mgid,
		    "multicast GIDs as Linux builds them");

static int
mac_cmp(const void *a, const void *b)
{
	return memcmp(a, b, RTE_ETHER_ADDR_LEN);
}

static int
test_eth_mac_derive(void)
{
	static const uint8_t a_want[] = { A_MAC_B }, b_want[] = { B_MAC_A };
	enum { N = 4096 };
	struct rte_ether_addr m1, m2, *all;
	struct ipoib_hwaddr ha;
	unsigned int i;

	memcpy(&ha, a_hw, sizeof(ha));
	ipoib_mac_from_hwaddr(&m1, &ha);
	TEST_ASSERT(memcmp(&m1, a_want, 6) == 0, "A's MAC changed");
	memcpy(&ha, b_hw, sizeof(ha));
	ipoib_mac_from_hwaddr(&m1, &ha);
	TEST_ASSERT(memcmp(&m1, b_want, 6) == 0, "B's MAC changed");
	/* The flags byte does not count: UD receives do not know it. */
	ha.bytes[0] = 0;
	ipoib_mac_from_hwaddr(&m2, &ha);
	TEST_ASSERT(rte_is_same_ether_addr(&m1, &m2), "flags changed the MAC");
	/* Distinct over QPNs of one GID and over one-bit GID changes. */
	all = calloc(2 * N, sizeof(*all));
	TEST_ASSERT(all != NULL, "");
	for (i = 0; i < N; i++) {
		ipoib_hwaddr_set(&ha, 0, i, ipoib_hwaddr_gid(
				 (const struct ipoib_hwaddr *)a_hw));
		ipoib_mac_from_hwaddr(&all[i], &ha);
		memcpy(&ha, a_hw, sizeof(ha));
		ha.bytes[4 + (i / 8) % 16] ^= (uint8_t)(1u << (i % 8));
		ha.bytes[1 + i % 3] ^= (uint8_t)(i >> 7);
		ipoib_mac_from_hwaddr(&all[N + i], &ha);
	}
	for (i = 0; i < 2 * N; i++) {
		if (!rte_is_unicast_ether_addr(&all[i]) ||
		    !(all[i].addr_bytes[0] & RTE_ETHER_LOCAL_ADMIN_ADDR)) {
			free(all);
			TEST_ASSERT(0, "MAC %u not locally administered unicast",
				    i);
		}
	}
	qsort(all, 2 * N, sizeof(*all), mac_cmp);
	for (i = 1; i < 2 * N; i++) {
		if (rte_is_same_ether_addr(&all[i - 1], &all[i])) {
			free(all);
			TEST_ASSERT(0, "MAC collision at %u", i);
		}
	}
	free(all);
	return 0;
}
REGISTER_TEST(eth_mac_derive, test_eth_mac_derive,
		    "MACs derived from hardware addresses");

/* ---- ARP ---- */

/* A asks who has 10.0.0.2, as the application writes it (padded to 60). */
static const uint8_t arp_req_eth[] = {
	BCAST, A_MAC, 0x08, 0x06,
	0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01,
	A_MAC, A_IP4, ZERO6, B_IP4,
	ZERO6, ZERO6, ZERO6,				/* padding */
};
#define ARP_ETH_LEN	42

/* The same on the wire (RFC 4391 s9.1, Linux arp_create): 60 bytes. */
static const uint8_t arp_req_ib[] = {
	0x08, 0x06, 0x00, 0x00,				/* IPoIB header */
	0x00, 0x20, 0x08, 0x00, 0x14, 0x04, 0x00, 0x01,	/* hw 32, hlen 20 */
	A_HW, A_IP4, ZERO20, B_IP4,
};

/* What B's application receives. */
static const uint8_t arp_req_eth_at_b[] = {
	BCAST, A_MAC_B, 0x08, 0x06,
	0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01,
	A_MAC_B, A_IP4, ZERO6, B_IP4,
};

/* B's answer, to A as B knows it. */
static const uint8_t arp_rep_eth[] = {
	A_MAC_B, B_MAC, 0x08, 0x06,
	0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x02,
	B_MAC, B_IP4, A_MAC_B, A_IP4,
};

static const uint8_t arp_rep_ib[] = {
	0x08, 0x06, 0x00, 0x00,
	0x00, 0x20, 0x08, 0x00, 0x14, 0x04, 0x00, 0x02,
	B_HW, B_IP4, A_HW, A_IP4,
};

static const uint8_t arp_rep_eth_at_a[] = {
	A_MAC, B_MAC_A, 0x08, 0x06,
	0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x02,
	B_MAC_A, B_IP4, A_MAC, A_IP4,
};

static const uint8_t bcast_mgid[] = {
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
};

static int
check_learn(const struct ipoib_learn *l, const uint8_t *mac,
	    const uint8_t *hw)
{
	TEST_ASSERT(l->valid, "nothing learned");
	TEST_ASSERT(memcmp(&l->mac, mac, 6) == 0, "learned MAC");
	TEST_ASSERT(memcmp(&l->hw, hw, 20) == 0, "learned hwaddr (flags too)");
	return 0;
}

static int
arp_exchange(struct rte_mempool *mp)
{
	static const uint8_t amac_b[] = { A_MAC_B }, bmac_a[] = { B_MAC_A };
	struct ipoib_hwaddr src;
	struct ipoib_learn l;
	struct ipoib_tx_dst dst;
	struct node a, b;
	struct rte_mbuf *m;
	int ret;

	nodes_init(&a, &b);
	/* A -> broadcast group: request. */
	m = test_mbuf(mp, arp_req_eth, sizeof(arp_req_eth));
	TEST_ASSERT(m != NULL, "");
	ret = ipoib_eth_encap(m, &a.ctx, &dst);
	TEST_ASSERT_EQ(ret, 0, "request encap");
	TEST_ASSERT_EQ(dst.type, IPOIB_DST_MULTICAST, "");
	TEST_ASSERT(memcmp(dst.mgid, bcast_mgid, 16) == 0, "broadcast MGID");
	TEST_RUN(test_frame_eq(m, arp_req_ib, sizeof(arp_req_ib)));
	/* B receives it on the broadcast group over UD. */
	ud_src(&src, a_hw);
	ret = ipoib_eth_decap(m, &src, true, &b.ctx, &l);
	TEST_ASSERT_EQ(ret, 0, "request decap");
	TEST_RUN(test_frame_eq(m, arp_req_eth_at_b, sizeof(arp_req_eth_at_b)));
	TEST_RUN(check_learn(&l, amac_b, a_hw));
	node_learn(&b, &l);
	rte_pktmbuf_free(m);

	/* The reply with A hidden from B's table: refused, frame untouched. */
	m = test_mbuf(mp, arp_rep_eth, sizeof(arp_rep_eth));
	TEST_ASSERT(m != NULL, "");
	b.n = 0;
	TEST_ASSERT_EQ(ipoib_eth_encap(m, &b.ctx, &dst), -ENOENT, "");
	TEST_RUN(frame_unchanged(m, arp_rep_eth, sizeof(arp_rep_eth)));
	b.n = 1;	/* A, as learned above */
	/* B -> A: reply, unicast. */
	ret = ipoib_eth_encap(m, &b.ctx, &dst);
	TEST_ASSERT_EQ(ret, 0, "reply encap");
	TEST_ASSERT_EQ(dst.type, IPOIB_DST_UNICAST, "");
	TEST_ASSERT(memcmp(&dst.mac, amac_b, 6) == 0, "unicast destination");
	TEST_RUN(test_frame_eq(m, arp_rep_ib, sizeof(arp_rep_ib)));
	ud_src(&src, b_hw);
	ret = ipoib_eth_decap(m, &src, false, &a.ctx, &l);
	TEST_ASSERT_EQ(ret, 0, "reply decap");
	TEST_RUN(test_frame_eq(m, arp_rep_eth_at_a, sizeof(arp_rep_eth_at_a)));
	TEST_RUN(check_learn(&l, bmac_a, b_hw));
	rte_pktmbuf_free(m);
	return 0;
}

/* ARP split over segments, or with no room to grow, or shared: refused. */
static int
arp_refusals(struct rte_mempool *mp)
{
	static const uint16_t segs[] = { 30 };
	struct ipoib_tx_dst dst;
	struct node a, b;
	struct rte_mbuf *m;
	uint8_t bad[sizeof(arp_req_ib)];

	nodes_init(&a, &b);
	m = test_mbuf_segs(mp, arp_req_eth, sizeof(arp_req_eth), segs, 1);
	TEST_ASSERT(m != NULL && m->nb_segs == 2, "");
	TEST_ASSERT_EQ(ipoib_eth_encap(m, &a.ctx, &dst), -EBADMSG, "split");
	TEST_RUN(frame_unchanged(m, arp_req_eth, sizeof(arp_req_eth)));
	rte_pktmbuf_free(m);

	m = rte_pktmbuf_alloc(mp);
	TEST_ASSERT(m != NULL, "");
	m->data_off = m->buf_len - ARP_ETH_LEN;
	memcpy(rte_pktmbuf_append(m, ARP_ETH_LEN), arp_req_eth, ARP_ETH_LEN);
	TEST_ASSERT_EQ(ipoib_eth_encap(m, &a.ctx, &dst), -ENOSPC, "tailroom");
	TEST_RUN(frame_unchanged(m, arp_req_eth, ARP_ETH_LEN));
	rte_mbuf_refcnt_update(m, 1);
	m->data_off = RTE_PKTMBUF_HEADROOM;
	memcpy(rte_pktmbuf_mtod(m, void *), arp_req_eth, ARP_ETH_LEN);
	TEST_ASSERT_EQ(ipoib_eth_encap(m, &a.ctx, &dst), -EPERM, "shared");
	rte_mbuf_refcnt_update(m, -1);
	rte_pktmbuf_free(m);

	/* Ethernet hardware type, or hlen 6, on the IB side: refused. */
	memcpy(bad, arp_req_ib, sizeof(bad));
	bad[5] = 0x01;
	m = test_mbuf(mp, bad, sizeof(bad));
	TEST_ASSERT(m != NULL, "");
	{
		struct ipoib_hwaddr src;
		struct ipoib_learn l;

		ud_src(&src, a_hw);
		TEST_ASSERT_EQ(ipoib_eth_decap(m, &src, true, &b.ctx, &l),
			       -EBADMSG, "hw type 1 over IB");
		TEST_ASSERT(!l.valid, "");
		rte_pktmbuf_mtod(m, uint8_t *)[5] = 0x20;
		rte_pktmbuf_mtod(m, uint8_t *)[8] = 6;
		TEST_ASSERT_EQ(ipoib_eth_decap(m, &src, true, &b.ctx, &l),
			       -EBADMSG, "hlen 6 over IB");
	}
	rte_pktmbuf_free(m);
	return 0;
}

static int
test_eth_arp(void)
{
	struct rte_mempool *mp = test_pool("t_eth_arp");
	int ret;

	TEST_ASSERT(mp != NULL, "no pool");
	ret = arp_exchange(mp);
	if (ret == 0)
		ret = arp_refusals(mp);
	TEST_RUN(test_pool_free(mp));
	return ret;
}
REGISTER_TEST(eth_arp, test_eth_arp,
		    "ARP request and reply, Ethernet <-> IPoIB, both ways");

/* ---- IPv6 Neighbor Discovery ---- */

/* A solicits fe80::2 with its source link-layer address. */
static const uint8_t ns_eth[] = {
	0x33, 0x33, 0xff, 0x00, 0x00, 0x02, A_MAC, 0x86, 0xdd,
	0x60, 0x00, 0x00, 0x00, 0x00, 0x20, 0x3a, 0xff,	/* plen 32 */
	FE80_1, SNM_2,
	0x87, 0x00, 0x79, 0xed, ZERO4,			/* NS, checksum */
	FE80_2,						/* target */
	0x01, 0x01, A_MAC,				/* SLLA */
};

/* RFC 4391 s9.2.1: the option is 24 bytes, 2 pad bytes first. */
static const uint8_t ns_ib[] = {
	0x86, 0xdd, 0x00, 0x00,
	0x60, 0x00, 0x00, 0x00, 0x00, 0x30, 0x3a, 0xff,	/* plen 48 */
	FE80_1, SNM_2,
	0x87, 0x00, 0x81, 0x52, ZERO4,
	FE80_2,
	0x01, 0x03, 0x00, 0x00, A_HW,
};

static const uint8_t ns_eth_at_b[] = {
	0x33, 0x33, 0xff, 0x00, 0x00, 0x02, A_MAC_B, 0x86, 0xdd,
	0x60, 0x00, 0x00, 0x00, 0x00, 0x20, 0x3a, 0xff,
	FE80_1, SNM_2,
	0x87, 0x00, 0xff, 0xab, ZERO4,
	FE80_2,
	0x01, 0x01, A_MAC_B,
};

/* B answers: solicited, override, with its target link-layer address. */
static const uint8_t na_eth[] = {
	A_MAC_B, B_MAC, 0x86, 0xdd,
	0x60, 0x00, 0x00, 0x00, 0x00, 0x20, 0x3a, 0xff,
	FE80_2, FE80_1,
	0x88, 0x00, 0x17, 0x5f, 0x60, 0x00, 0x00, 0x00,
	FE80_2,
	0x02, 0x01, B_MAC,				/* TLLA */
};

static const uint8_t na_ib[] = {
	0x86, 0xdd, 0x00, 0x00,
	0x60, 0x00, 0x00, 0x00, 0x00, 0x30, 0x3a, 0xff,
	FE80_2, FE80_1,
	0x88, 0x00, 0xeb, 0x16, 0x60, 0x00, 0x00, 0x00,
	FE80_2,
	0x02, 0x03, 0x00, 0x00, B_HW,
};

static const uint8_t na_eth_at_a[] = {
	A_MAC, B_MAC_A, 0x86, 0xdd,
	0x60, 0x00, 0x00, 0x00, 0x00, 0x20, 0x3a, 0xff,
	FE80_2, FE80_1,
	0x88, 0x00, 0x76, 0x3c, 0x60, 0x00, 0x00, 0x00,
	FE80_2,
	0x02, 0x01, B_MAC_A,
};

/* The ICMPv6 checksum of the IPv6 packet at off in m verifies. */
static int
icmp6_ok(const struct rte_mbuf *m, uint32_t off)
{
	const struct rte_ipv6_hdr *ip6;

	ip6 = rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, off);
	return rte_ipv6_udptcp_cksum_verify(ip6, ip6 + 1) == 0 ? 0 : -1;
}

static int
nd_exchange(struct rte_mempool *mp)
{
	static const uint8_t amac_b[] = { A_MAC_B }, bmac_a[] = { B_MAC_A };
	static const uint8_t snm_mgid[] = {
		0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x01, 0xff, 0x00, 0x00, 0x02,
	};
	struct ipoib_hwaddr src;
	struct ipoib_tx_dst dst;
	struct ipoib_learn l;
	struct node a, b;
	struct rte_mbuf *m;

	nodes_init(&a, &b);
	m = test_mbuf(mp, ns_eth, sizeof(ns_eth));
	TEST_ASSERT(m != NULL, "");
	TEST_RUN(icmp6_ok(m, RTE_ETHER_HDR_LEN));
	TEST_ASSERT_EQ(ipoib_eth_encap(m, &a.ctx, &dst), 0, "NS encap");
	TEST_ASSERT_EQ(dst.type, IPOIB_DST_MULTICAST, "");
	TEST_ASSERT(memcmp(dst.mgid, snm_mgid, 16) == 0, "solicited-node MGID");
	TEST_RUN(test_frame_eq(m, ns_ib, sizeof(ns_ib)));
	TEST_RUN(icmp6_ok(m, IPOIB_HDR_LEN));
	ud_src(&src, a_hw);
	TEST_ASSERT_EQ(ipoib_eth_decap(m, &src, true, &b.ctx, &l), 0,
		       "NS decap");
	TEST_RUN(test_frame_eq(m, ns_eth_at_b, sizeof(ns_eth_at_b)));
	TEST_RUN(icmp6_ok(m, RTE_ETHER_HDR_LEN));
	TEST_RUN(check_learn(&l, amac_b, a_hw));
	node_learn(&b, &l);
	rte_pktmbuf_free(m);

	m = test_mbuf(mp, na_eth, sizeof(na_eth));
	TEST_ASSERT(m != NULL, "");
	TEST_ASSERT_EQ(ipoib_eth_encap(m, &b.ctx, &dst), 0, "NA encap");
	TEST_ASSERT_EQ(dst.type, IPOIB_DST_UNICAST, "");
	TEST_ASSERT(memcmp(&dst.mac, amac_b, 6) == 0, "");
	TEST_RUN(test_frame_eq(m, na_ib, sizeof(na_ib)));
	ud_src(&src, b_hw);
	TEST_ASSERT_EQ(ipoib_eth_decap(m, &src, false, &a.ctx, &l), 0,
		       "NA decap");
	TEST_RUN(test_frame_eq(m, na_eth_at_a, sizeof(na_eth_at_a)));
	TEST_RUN(check_learn(&l, bmac_a, b_hw));
	rte_pktmbuf_free(m);
	return 0;
}

/* Set the ICMPv6 checksum of the single-segment Ethernet frame m. */
static void
icmp6_fix(struct rte_mbuf *m)
{
	struct rte_ipv6_hdr *ip6;
	uint8_t *icmp;
	uint16_t ck;

	ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *,
				      RTE_ETHER_HDR_LEN);
	icmp = (uint8_t *)(ip6 + 1);
	memset(icmp + 2, 0, 2);
	ck = rte_ipv6_udptcp_cksum(ip6, icmp);
	memcpy(icmp + 2, &ck, 2);
}

/*
 * A redirect with two link-layer options around a redirected-header
 * option: every option and the data between must come back unchanged after
 * encap then decap at the same port (own hwaddr -> own MAC).
 */
static const uint8_t redirect_eth[] = {
	0x33, 0x33, 0x00, 0x00, 0x00, 0x01, A_MAC, 0x86, 0xdd,
	0x60, 0x00, 0x00, 0x00, 0x00, 0x48, 0x3a, 0xff,	/* plen 72 */
	FE80_1, 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
	0x89, 0x00, 0x00, 0x00, ZERO4,			/* redirect */
	FE80_2, FE80_2,					/* target, dest */
	0x02, 0x01, B_MAC_A,				/* TLLA */
	0x04, 0x02, ZERO6, 0xde, 0xad, 0xbe, 0xef,	/* redirected hdr */
	0x01, 0x02, 0x03, 0x04,
	0x01, 0x01, A_MAC,				/* SLLA */
};

static int
nd_redirect_round_trip(struct rte_mempool *mp)
{
	static const uint8_t ib_opts[] = {
		0x02, 0x03, 0x00, 0x00, B_HW,
		0x04, 0x02, ZERO6, 0xde, 0xad, 0xbe, 0xef,
		0x01, 0x02, 0x03, 0x04,
		0x01, 0x03, 0x00, 0x00, A_HW,
	};
	static const uint8_t mcast_all[] = { 0x33, 0x33, 0, 0, 0, 0x01 };
	struct ipoib_hwaddr src;
	struct ipoib_tx_dst dst;
	struct ipoib_learn l;
	struct node a, b;
	struct rte_mbuf *m;
	uint8_t want[sizeof(redirect_eth)];
	const uint8_t *p;

	nodes_init(&a, &b);
	memcpy(&a.neigh[0].mac, (const uint8_t[]){ B_MAC_A }, 6);
	memcpy(&a.neigh[0].hw, b_hw, 20);
	a.n = 1;
	m = test_mbuf(mp, redirect_eth, sizeof(redirect_eth));
	TEST_ASSERT(m != NULL, "");
	icmp6_fix(m);
	memcpy(want, rte_pktmbuf_mtod(m, void *), sizeof(want));
	TEST_ASSERT_EQ(ipoib_eth_encap(m, &a.ctx, &dst), 0, "redirect encap");
	TEST_ASSERT_EQ(m->pkt_len, sizeof(redirect_eth) - 10 + 32, "");
	p = rte_pktmbuf_mtod(m, const uint8_t *);
	TEST_ASSERT(p[8] == 0x00 && p[9] == 0x68, "payload length 104");
	TEST_ASSERT(memcmp(p + 4 + 40 + 40, ib_opts, sizeof(ib_opts)) == 0,
		    "options on the wire");
	TEST_RUN(icmp6_ok(m, IPOIB_HDR_LEN));
	ud_src(&src, a_hw);
	TEST_ASSERT_EQ(ipoib_eth_decap(m, &src, true, &a.ctx, &l), 0, "decap");
	TEST_ASSERT(l.valid, "B's TLLA learned");
	TEST_ASSERT(memcmp(&l.hw, b_hw, 20) == 0, "");
	memcpy(want, mcast_all, 6);
	memcpy(want + 6, (const uint8_t[]){ A_MAC_B }, 6);
	TEST_RUN(test_frame_eq(m, want, sizeof(want)));
	rte_pktmbuf_free(m);
	return 0;
}

/* Encap of a modified NS: the expected error, and the frame untouched. */
static int
nd_encap_bad(struct rte_mempool *mp, struct node *a, unsigned int off,
	     const uint8_t *patch, unsigned int n, bool fix, int want,
	     const char *what)
{
	uint8_t buf[sizeof(ns_eth)];
	struct ipoib_tx_dst dst;
	struct rte_mbuf *m;
	int ret;

	memcpy(buf, ns_eth, sizeof(buf));
	memcpy(buf + off, patch, n);
	m = test_mbuf(mp, buf, sizeof(buf));
	TEST_ASSERT(m != NULL, "");
	if (fix)
		icmp6_fix(m);
	memcpy(buf, rte_pktmbuf_mtod(m, void *), sizeof(buf));
	ret = ipoib_eth_encap(m, &a->ctx, &dst);
	printf("  %s: %d\n", what, ret);
	if (ret != want || frame_unchanged(m, buf, sizeof(buf)) != 0) {
		rte_pktmbuf_free(m);
		TEST_ASSERT_EQ(ret, want, "%s", what);
		TEST_ASSERT(0, "%s: frame changed", what);
	}
	rte_pktmbuf_free(m);
	return 0;
}

static int
nd_decap_bad(struct rte_mempool *mp, struct node *b, unsigned int off,
	     uint8_t val, const char *what)
{
	uint8_t buf[sizeof(ns_ib)];
	struct ipoib_hwaddr src;
	struct ipoib_learn l;
	struct rte_mbuf *m;
	int ret;

	memcpy(buf, ns_ib, sizeof(buf));
	buf[off] = val;
	m = test_mbuf(mp, buf, sizeof(buf));
	TEST_ASSERT(m != NULL, "");
	ud_src(&src, a_hw);
	ret = ipoib_eth_decap(m, &src, true, &b->ctx, &l);
	printf("  %s: %d\n", what, ret);
	if (ret != -EBADMSG || l.valid ||
	    frame_unchanged(m, buf, sizeof(buf)) != 0) {
		rte_pktmbuf_free(m);
		TEST_ASSERT(0, "%s: got %d", what, ret);
	}
	rte_pktmbuf_free(m);
	return 0;
}

/* Offsets in ns_eth / ns_ib: the option starts after 14/4 + 40 + 24. */
#define NS_ETH_OPT	(14 + 40 + 24)
#define NS_IB_OPT	(4 + 40 + 24)

static int
nd_refusals(struct rte_mempool *mp)
{
	struct node a, b;
	struct rte_mbuf *m;
	struct ipoib_tx_dst dst;

	nodes_init(&a, &b);
	TEST_RUN(nd_encap_bad(mp, &a, NS_ETH_OPT + 1, (const uint8_t[]){ 0 },
			      1, true, -EBADMSG, "SLLA length 0"));
	TEST_RUN(nd_encap_bad(mp, &a, NS_ETH_OPT, (const uint8_t[]){ 14, 0 },
			      2, true, -EBADMSG, "nonce option length 0"));
	TEST_RUN(nd_encap_bad(mp, &a, NS_ETH_OPT + 1, (const uint8_t[]){ 2 },
			      1, true, -EBADMSG, "option past the end"));
	TEST_RUN(nd_encap_bad(mp, &a, NS_ETH_OPT + 2, (const uint8_t[]){ 10 },
			      1, false, -EBADMSG, "bad checksum"));
	TEST_RUN(nd_encap_bad(mp, &a, NS_ETH_OPT + 7, (const uint8_t[]){ 7 },
			      1, true, -ENOENT, "unknown SLLA"));
	TEST_RUN(nd_encap_bad(mp, &a, 19, (const uint8_t[]){ 0x21 }, 1, false,
			      -EBADMSG, "payload length past the frame"));
	TEST_RUN(nd_decap_bad(mp, &b, NS_IB_OPT + 1, 1,
			      "Ethernet-sized option over IB"));
	TEST_RUN(nd_decap_bad(mp, &b, NS_IB_OPT + 1, 0, "option length 0"));
	TEST_RUN(nd_decap_bad(mp, &b, NS_IB_OPT + 1, 4, "option past the end"));
	TEST_RUN(nd_decap_bad(mp, &b, NS_IB_OPT + 10, 0x11, "bad checksum"));

	/* No tailroom for the 16 more bytes. */
	m = rte_pktmbuf_alloc(mp);
	TEST_ASSERT(m != NULL, "");
	m->data_off = m->buf_len - sizeof(ns_eth);
	memcpy(rte_pktmbuf_append(m, sizeof(ns_eth)), ns_eth, sizeof(ns_eth));
	TEST_ASSERT_EQ(ipoib_eth_encap(m, &a.ctx, &dst), -ENOSPC, "");
	TEST_RUN(frame_unchanged(m, ns_eth, sizeof(ns_eth)));
	rte_pktmbuf_free(m);
	return 0;
}

static int
test_eth_nd(void)
{
	struct rte_mempool *mp = test_pool("t_eth_nd");
	int ret;

	TEST_ASSERT(mp != NULL, "no pool");
	ret = nd_exchange(mp);
	if (ret == 0)
		ret = nd_redirect_round_trip(mp);
	if (ret == 0)
		ret = nd_refusals(mp);
	TEST_RUN(test_pool_free(mp));
	return ret;
}
REGISTER_TEST(eth_nd, test_eth_nd,
		    "IPv6 ND link-layer options, Ethernet <-> IPoIB");

/* ---- IPv4 and the rest ---- */

/* An IPv4/UDP frame of len bytes from src to dst, payload a pattern. */
static void
ipv4_frame(uint8_t *f, uint32_t len, const uint8_t *dmac, const uint8_t *smac,
	   uint32_t src, uint32_t dst)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + 14);
	uint32_t i;

	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(len - 14);
	ip->packet_id = rte_cpu_to_be_16(0x1234);
	ip->time_to_live = 64;
	ip->next_proto_id = 17;
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	for (i = 34; i < len; i++)
		f[i] = (uint8_t)(i * 7 + 3);
	f[34] = 0x30;	/* UDP ports 12345 -> 12346, no checksum */
	f[35] = 0x39;
	f[36] = 0x30;
	f[37] = 0x3a;
	f[38] = (uint8_t)((len - 34) >> 8);
	f[39] = (uint8_t)(len - 34);
	f[40] = 0;
	f[41] = 0;
}

static int
ipv4_chain(struct rte_mempool *mp)
{
	static const uint8_t amac[] = { A_MAC }, bmac[] = { B_MAC };
	static const uint8_t bmac_a[] = { B_MAC_A }, amac_b[] = { A_MAC_B };
	static const uint16_t segs[] = { 42, 1000, 700 };
	enum { LEN = 1534 };
	uint8_t f[LEN], want[LEN];
	struct ipoib_hwaddr src;
	struct ipoib_tx_dst dst;
	struct ipoib_learn l;
	struct node a, b;
	struct rte_mbuf *m;

	nodes_init(&a, &b);
	ipv4_frame(f, LEN, bmac_a, amac, 0x0a000001, 0x0a000002);
	m = test_mbuf_segs(mp, f, LEN, segs, RTE_DIM(segs));
	TEST_ASSERT(m != NULL && m->nb_segs == 3, "");
	TEST_ASSERT_EQ(ipoib_eth_encap(m, &a.ctx, &dst), 0, "encap");
	TEST_ASSERT_EQ(dst.type, IPOIB_DST_UNICAST, "");
	TEST_ASSERT(memcmp(&dst.mac, bmac_a, 6) == 0, "");
	TEST_ASSERT_EQ(m->nb_segs, 3, "");
	TEST_ASSERT_EQ(m->data_len, 42 - 10, "");
	want[0] = 0x08;
	want[1] = 0x00;
	want[2] = 0x00;
	want[3] = 0x00;
	memcpy(want + 4, f + 14, LEN - 14);
	TEST_RUN(test_frame_eq(m, want, LEN - 10));
	/* B: unicast to its port; the reserved field is ignored. */
	rte_pktmbuf_mtod(m, uint8_t *)[3] = 0x5a;
	ud_src(&src, a_hw);
	TEST_ASSERT_EQ(ipoib_eth_decap(m, &src, false, &b.ctx, &l), 0, "decap");
	TEST_ASSERT(!l.valid, "learned from a non-ARP/ND frame");
	memcpy(want, bmac, 6);
	memcpy(want + 6, amac_b, 6);
	want[12] = 0x08;
	want[13] = 0x00;
	memcpy(want + 14, f + 14, LEN - 14);
	TEST_RUN(test_frame_eq(m, want, LEN));
	TEST_ASSERT_EQ(m->nb_segs, 3, "");
	rte_pktmbuf_free(m);
	return 0;
}

static int
test_eth_ipv4_chain(void)
{
	struct rte_mempool *mp = test_pool("t_eth_ipv4");
	int ret;

	TEST_ASSERT(mp != NULL, "no pool");
	ret = ipv4_chain(mp);
	TEST_RUN(test_pool_free(mp));
	return ret;
}
REGISTER_TEST(eth_ipv4_chain, test_eth_ipv4_chain,
		    "IPv4 unicast over a 3-segment chain, both ways");

struct mcast_case {
	const char *name;
	uint16_t type;
	uint8_t dst[16];	/* IPv4: 4 bytes */
	uint8_t mac[6];
};

/* RFC 1112 s6.4 (01:00:5e + 23 bits), RFC 2464 s7 (33:33 + 32 bits). */
static const struct mcast_case mcast_cases[] = {
	{ "255.255.255.255", 0x0800, { 255, 255, 255, 255 }, { BCAST } },
	{ "10.0.0.255 (subnet broadcast)", 0x0800, { 10, 0, 0, 255 },
	  { BCAST } },
	{ "239.1.2.3", 0x0800, { 239, 1, 2, 3 },
	  { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 } },
	{ "239.129.2.3", 0x0800, { 239, 129, 2, 3 },
	  { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 } },
	{ "224.0.0.251", 0x0800, { 224, 0, 0, 251 },
	  { 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb } },
	{ "ff02::1", 0x86dd,
	  { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01 },
	  { 0x33, 0x33, 0x00, 0x00, 0x00, 0x01 } },
	{ "ff02::1:ff00:1234", 0x86dd,
	  { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff, 0, 0x12, 0x34 },
	  { 0x33, 0x33, 0xff, 0x00, 0x12, 0x34 } },
};

/* An IPoIB frame: IPv4 (28 bytes) or IPv6 (48 bytes), UDP-ish payload. */
static uint32_t
ib_ip_frame(uint8_t *f, uint16_t type, const uint8_t *dst)
{
	memset(f, 0, 64);
	f[0] = (uint8_t)(type >> 8);
	f[1] = (uint8_t)type;
	if (type == 0x0800) {
		f[4] = 0x45;
		f[7] = 28;
		f[12] = 1;
		f[13] = 17;
		memcpy(f + 16, (const uint8_t[]){ A_IP4 }, 4);
		memcpy(f + 20, dst, 4);
		return 4 + 28;
	}
	f[4] = 0x60;
	f[9] = 8;
	f[10] = 17;
	f[11] = 1;
	memcpy(f + 12, (const uint8_t[]){ FE80_1 }, 16);
	memcpy(f + 28, dst, 16);
	return 4 + 48;
}

static int
mcast_macs(struct rte_mempool *mp)
{
	static const uint8_t amac_b[] = { A_MAC_B }, bmac[] = { B_MAC };
	struct ipoib_hwaddr src;
	struct ipoib_learn l;
	struct node a, b;
	unsigned int i;

	nodes_init(&a, &b);
	ud_src(&src, a_hw);
	for (i = 0; i < RTE_DIM(mcast_cases) * 2; i++) {
		const struct mcast_case *c = &mcast_cases[i / 2];
		bool mcast = i % 2 == 0;
		struct rte_mbuf *m;
		uint8_t f[64];
		uint32_t len;
		const uint8_t *e;

		len = ib_ip_frame(f, c->type, c->dst);
		m = test_mbuf(mp, f, len);
		TEST_ASSERT(m != NULL, "");
		TEST_ASSERT_EQ(ipoib_eth_decap(m, &src, mcast, &b.ctx, &l), 0,
			       "%s", c->name);
		e = rte_pktmbuf_mtod(m, const uint8_t *);
		printf("  %s%s -> %02x:%02x:%02x:%02x:%02x:%02x\n", c->name,
		       mcast ? "" : " (unicast)", e[0], e[1], e[2], e[3],
		       e[4], e[5]);
		TEST_ASSERT(memcmp(e, mcast ? c->mac : bmac, 6) == 0,
			    "destination MAC for %s", c->name);
		TEST_ASSERT(memcmp(e + 6, amac_b, 6) == 0, "source MAC");
		TEST_ASSERT(e[12] == f[0] && e[13] == f[1], "EtherType");
		TEST_ASSERT(memcmp(e + 14, f + 4, len - 4) == 0, "payload");
		rte_pktmbuf_free(m);
	}
	return 0;
}

/* Multicast destinations on transmit: the MGID from the IP header. */
static int
mcast_encap(struct rte_mempool *mp)
{
	static const uint8_t amac[] = { A_MAC };
	static const uint8_t mac4[] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 };
	static const uint8_t mac6[] = { 0x33, 0x33, 0x00, 0x00, 0x00, 0x01 };
	static const uint8_t lldp[] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e };
	static const uint8_t mgid4[] = {
		0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
		0, 0, 0, 0, 0x0f, 0x81, 0x02, 0x03,
	};
	static const uint8_t mgid6[] = {
		0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0x01,
	};
	struct ipoib_tx_dst dst;
	struct node a, b;
	struct rte_mbuf *m;
	uint8_t f[128];

	nodes_init(&a, &b);
	/* 239.129.2.3 has the MAC of 239.1.2.3: the MGID tells them apart. */
	ipv4_frame(f, 60, mac4, amac, 0x0a000001, 0xef810203);
	m = test_mbuf(mp, f, 60);
	TEST_ASSERT(m != NULL, "");
	TEST_ASSERT_EQ(ipoib_eth_encap(m, &a.ctx, &dst), 0, "");
	TEST_ASSERT_EQ(dst.type, IPOIB_DST_MULTICAST, "");
	TEST_ASSERT(memcmp(dst.mgid, mgid4, 16) == 0, "IPv4 group MGID");
	rte_pktmbuf_free(m);
	/* The same MAC with a unicast IPv4 destination: inconsistent. */
	ipv4_frame(f, 60, mac4, amac, 0x0a000001, 0x0a000002);
	m = test_mbuf(mp, f, 60);
	TEST_ASSERT(m != NULL, "");
	TEST_ASSERT_EQ(ipoib_eth_encap(m, &a.ctx, &dst), -EBADMSG, "");
	rte_pktmbuf_free(m);
	/* IPv6 all-nodes: the IPoIB test frame behind an Ethernet header. */
	ib_ip_frame(f + 64, 0x86dd,
		    (const uint8_t[]){ 0xff, 0x02, 0, 0, 0, 0, 0, 0,
				       0, 0, 0, 0, 0, 0, 0, 0x01 });
	memcpy(f, mac6, 6);
	memcpy(f + 6, amac, 6);
	memcpy(f + 12, f + 64, 2);
	memcpy(f + 14, f + 68, 48);
	m = test_mbuf(mp, f, 14 + 48);
	TEST_ASSERT(m != NULL, "");
	TEST_ASSERT_EQ(ipoib_eth_encap(m, &a.ctx, &dst), 0, "");
	TEST_ASSERT_EQ(dst.type, IPOIB_DST_MULTICAST, "");
	TEST_ASSERT(memcmp(dst.mgid, mgid6, 16) == 0, "IPv6 group MGID");
	TEST_ASSERT_EQ(m->pkt_len, 4 + 48, "");
	rte_pktmbuf_free(m);
	/* A multicast MAC with no IPoIB group (LLDP). */
	memset(f, 0, 64);
	memcpy(f, lldp, 6);
	memcpy(f + 6, amac, 6);
	f[12] = 0x88;
	f[13] = 0xcc;
	m = test_mbuf(mp, f, 60);
	TEST_ASSERT(m != NULL, "");
	TEST_ASSERT_EQ(ipoib_eth_encap(m, &a.ctx, &dst), -EPROTONOSUPPORT, "");
	rte_pktmbuf_free(m);
	return 0;
}

static int
test_eth_mcast(void)
{
	struct rte_mempool *mp = test_pool("t_eth_mcast");
	int ret;

	TEST_ASSERT(mp != NULL, "no pool");
	ret = mcast_macs(mp);
	if (ret == 0)
		ret = mcast_encap(mp);
	TEST_RUN(test_pool_free(mp));
	return ret;
}
REGISTER_TEST(eth_mcast, test_eth_mcast,
		    "multicast MACs on receive, MGIDs on transmit");

static int
vlan_refused(struct rte_mempool *mp)
{
	/* VLAN and QinQ TPIDs, and an 802.3 length (STP over LLC). */
	static const uint16_t tpids[] = { 0x8100, 0x88a8, 0x9100, 0x0026 };
	struct ipoib_tx_dst dst;
	struct node a, b;
	unsigned int i;

	nodes_init(&a, &b);
	for (i = 0; i < RTE_DIM(tpids); i++) {
		uint8_t f[64] = { B_MAC_A, A_MAC };
		struct rte_mbuf *m;

		f[12] = (uint8_t)(tpids[i] >> 8);
		f[13] = (uint8_t)tpids[i];
		f[15] = 5;		/* VLAN 5 */
		f[16] = 0x08;		/* then IPv4 */
		m = test_mbuf(mp, f, sizeof(f));
		TEST_ASSERT(m != NULL, "");
		TEST_ASSERT_EQ(ipoib_eth_encap(m, &a.ctx, &dst),
			       -EPROTONOSUPPORT, "TPID %04x", tpids[i]);
		TEST_RUN(frame_unchanged(m, f, sizeof(f)));
		rte_pktmbuf_free(m);
	}
	return 0;
}

static int
test_eth_vlan(void)
{
	struct rte_mempool *mp = test_pool("t_eth_vlan");
	int ret;

	TEST_ASSERT(mp != NULL, "no pool");
	ret = vlan_refused(mp);
	TEST_RUN(test_pool_free(mp));
	return ret;
}
REGISTER_TEST(eth_vlan, test_eth_vlan,
		    "VLAN-tagged frames refused: IPoIB has P_Keys");

/*
 * Every length below the valid one is refused as malformed and the frame
 * is left as it was; seg > 0 also splits the frame into seg-byte segments.
 */
static int
truncated(struct rte_mempool *mp, const struct node *nd, bool encap,
	  const uint8_t *f, uint32_t valid, const uint16_t *segs,
	  const char *what)
{
	struct ipoib_hwaddr src;
	struct ipoib_tx_dst dst;
	struct ipoib_learn l;
	uint32_t len;

	ud_src(&src, a_hw);
	for (len = 0; len <= valid; len++) {
		int want = len < valid ? -EBADMSG : 0;
		struct rte_mbuf *m;
		int ret;

		m = test_mbuf_segs(mp, f, len, segs, segs == NULL ? 0 : 2);
		TEST_ASSERT(m != NULL, "");
		if (encap)
			ret = ipoib_eth_encap(m, &nd->ctx, &dst);
		else
			ret = ipoib_eth_decap(m, &src, true, &nd->ctx, &l);
		if (ret != want ||
		    (want != 0 && frame_unchanged(m, f, len) != 0)) {
			rte_pktmbuf_free(m);
			TEST_ASSERT_EQ(ret, want, "%s, %u of %u bytes",
				       what, len, valid);
			TEST_ASSERT(0, "%s changed at %u bytes", what, len);
		}
		rte_pktmbuf_free(m);
	}
	printf("  %s: every length below %u refused\n", what, valid);
	return 0;
}

static int
truncations(struct rte_mempool *mp)
{
	static const uint8_t amac[] = { A_MAC }, bmac_a[] = { B_MAC_A };
	static const uint16_t eth_segs[] = { 14, 7 }, ib_segs[] = { 4, 5 };
	uint8_t f4[100], f4ib[100];
	struct node a, b;

	nodes_init(&a, &b);
	ipv4_frame(f4, sizeof(f4), bmac_a, amac, 0x0a000001, 0x0a000002);
	memcpy(f4ib, (const uint8_t[]){ 0x08, 0x00, 0x00, 0x00 }, 4);
	memcpy(f4ib + 4, f4 + 14, sizeof(f4) - 14);
	TEST_RUN(truncated(mp, &a, true, arp_req_eth, ARP_ETH_LEN, NULL,
			   "ARP encap"));
	TEST_RUN(truncated(mp, &a, true, ns_eth, sizeof(ns_eth), NULL,
			   "NS encap"));
	TEST_RUN(truncated(mp, &a, true, f4, sizeof(f4), NULL, "IPv4 encap"));
	TEST_RUN(truncated(mp, &a, true, f4, sizeof(f4), eth_segs,
			   "IPv4 encap, 7-byte segments"));
	TEST_RUN(truncated(mp, &b, false, arp_req_ib, sizeof(arp_req_ib), NULL,
			   "ARP decap"));
	TEST_RUN(truncated(mp, &b, false, ns_ib, sizeof(ns_ib), NULL,
			   "NS decap"));
	TEST_RUN(truncated(mp, &b, false, f4ib, sizeof(f4) - 10, NULL,
			   "IPv4 decap"));
	TEST_RUN(truncated(mp, &b, false, f4ib, sizeof(f4) - 10, ib_segs,
			   "IPv4 decap, 5-byte segments"));
	return 0;
}

static int
test_eth_truncated(void)
{
	struct rte_mempool *mp = test_pool("t_eth_trunc");
	int ret;

	TEST_ASSERT(mp != NULL, "no pool");
	ret = truncations(mp);
	TEST_RUN(test_pool_free(mp));
	return ret;
}
REGISTER_TEST(eth_truncated, test_eth_truncated,
		    "truncated frames refused at every length, untouched");

/* ---- robustness ---- */

/* xorshift64*: a fixed sequence, so a failure can be replayed. */
static uint64_t
fuzz_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* Resolves about half the MACs there are, to reach both outcomes. */
static int
fuzz_resolve(void *arg, const struct rte_ether_addr *mac,
	     struct ipoib_hwaddr *ha)
{
	RTE_SET_USED(arg);
	if (mac->addr_bytes[5] & 1)
		return -ENOENT;
	memcpy(ha, b_hw, sizeof(*ha));
	return 0;
}

struct fuzz_seed {
	const uint8_t *f;
	uint32_t len;
	bool encap;
};

/* A frame from sd with random changes: bytes, length, segments, room. */
static struct rte_mbuf *
fuzz_frame(struct rte_mempool *mp, const struct fuzz_seed *sd, uint64_t *s,
	   uint8_t *buf, uint32_t *len)
{
	uint16_t segs[2];
	struct rte_mbuf *m;
	unsigned int i, n;

	*len = sd->len;
	memcpy(buf, sd->f, sd->len);
	n = fuzz_rand(s) % 4;
	for (i = 0; i < n; i++)
		buf[fuzz_rand(s) % sd->len] = (uint8_t)fuzz_rand(s);
	if (fuzz_rand(s) % 4 == 0)
		*len = fuzz_rand(s) % (sd->len + 1);
	else if (fuzz_rand(s) % 4 == 0)
		for (n = fuzz_rand(s) % 64; n > 0; n--)
			buf[(*len)++] = (uint8_t)fuzz_rand(s);
	segs[0] = (uint16_t)(1 + fuzz_rand(s) % (*len + 1));
	segs[1] = (uint16_t)(1 + fuzz_rand(s) % 64);
	m = test_mbuf_segs(mp, buf, *len, segs, fuzz_rand(s) % 2 ? 2 : 0);
	if (m != NULL && m->nb_segs == 1 && fuzz_rand(s) % 4 == 0) {
		/*
		 * Against the end of the buffer (no tailroom) or near its
		 * start (headroom 10 or 11 bytes), at either alignment.
		 */
		uint16_t off = sd->encap ? m->buf_len - m->data_len :
			IPOIB_GRH_LEN - IPOIB_HDR_LEN - 26;

		off -= (uint16_t)(sd->encap && off > 0 ? fuzz_rand(s) % 2 : 0);
		off += (uint16_t)(sd->encap ? 0 : fuzz_rand(s) % 2);

		memmove((uint8_t *)m->buf_addr + off, rte_pktmbuf_mtod(m, void *),
			m->data_len);
		m->data_off = off;
	}
	return m;
}

static int
fuzz_run(struct rte_mempool *mp, unsigned int iters)
{
	static const uint8_t amac[] = { A_MAC }, bmac_a[] = { B_MAC_A };
	static uint8_t f4[90], f4ib[80], buf[256];
	const struct fuzz_seed seeds[] = {
		{ arp_req_eth, sizeof(arp_req_eth), true },
		{ arp_rep_eth, sizeof(arp_rep_eth), true },
		{ ns_eth, sizeof(ns_eth), true },
		{ na_eth, sizeof(na_eth), true },
		{ redirect_eth, sizeof(redirect_eth), true },
		{ f4, sizeof(f4), true },
		{ arp_req_ib, sizeof(arp_req_ib), false },
		{ arp_rep_ib, sizeof(arp_rep_ib), false },
		{ ns_ib, sizeof(ns_ib), false },
		{ na_ib, sizeof(na_ib), false },
		{ f4ib, sizeof(f4ib), false },
	};
	unsigned int it, ok = 0;
	struct node a, b;
	uint64_t s = 0x1b1b2b2b3c3c4d4dULL;

	nodes_init(&a, &b);
	a.ctx.resolve = fuzz_resolve;
	ipv4_frame(f4, sizeof(f4), bmac_a, amac, 0x0a000001, 0xe0000001);
	memcpy(f4ib, (const uint8_t[]){ 0x08, 0x00, 0x00, 0x00 }, 4);
	memcpy(f4ib + 4, f4 + 14, sizeof(f4) - 14);
	for (it = 0; it < iters; it++) {
		const struct fuzz_seed *sd = &seeds[fuzz_rand(&s) % RTE_DIM(seeds)];
		struct ipoib_hwaddr src;
		struct ipoib_tx_dst dst;
		struct ipoib_learn l;
		struct rte_mbuf *m;
		uint32_t len;
		int ret;

		m = fuzz_frame(mp, sd, &s, buf, &len);
		TEST_ASSERT(m != NULL, "no mbufs at %u", it);
		ud_src(&src, a_hw);
		if (sd->encap)
			ret = ipoib_eth_encap(m, &a.ctx, &dst);
		else
			ret = ipoib_eth_decap(m, &src, fuzz_rand(&s) % 2, &b.ctx,
					      &l);
		if (ret == 0) {
			ok++;
			ret = test_chain_ok(m);
		} else if (test_frame_eq(m, buf, len) != 0 ||
			   (!sd->encap && l.valid)) {
			ret = -1;
		} else {
			ret = 0;
		}
		rte_pktmbuf_free(m);
		TEST_ASSERT(ret == 0, "iteration %u", it);
	}
	printf("  %u frames, %u accepted\n", iters, ok);
	return 0;
}

static int
test_eth_fuzz_smoke(void)
{
	struct rte_mempool *mp = test_pool("t_eth_fuzz");
	int ret;

	TEST_ASSERT(mp != NULL, "no pool");
	ret = fuzz_run(mp, 50000);
	TEST_RUN(test_pool_free(mp));
	return ret;
}
REGISTER_TEST(eth_fuzz_smoke, test_eth_fuzz_smoke,
		    "mutated frames: no stray access, refusals leave m as it was");
