/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * ARP through the Ethernet emulation, both ways, and the frames it
 * refuses (test_framing.h).
 */

#include <errno.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "test.h"
#include "test_framing.h"
#include "test_pkt.h"

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
