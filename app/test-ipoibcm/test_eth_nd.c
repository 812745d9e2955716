/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * IPv6 Neighbor Discovery through the Ethernet emulation: NS, NA and
 * redirect options rewritten both ways, and the frames it refuses
 * (test_framing.h).
 */

#include <errno.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "test.h"
#include "test_framing.h"
#include "test_pkt.h"

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
