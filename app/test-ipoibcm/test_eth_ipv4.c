/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * IPv4 and the rest through the Ethernet emulation: a segmented
 * chain, multicast MACs, VLAN tags and truncated frames (test_framing.h).
 */

#include <errno.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "test.h"
#include "test_framing.h"
#include "test_pkt.h"

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
