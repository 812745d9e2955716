/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * A refused peer is told to use UD (ipoib_adv.c): after A's application
 * named its addresses in ARP and ND, a REQ A refuses for lack of room
 * makes A send that peer an ARP reply and an NA without the RC flag,
 * which the peer's receive path takes as well formed; and from then on
 * A's ARP to a group goes without the flag. A peer that asks again is
 * told again, once the gap since it was last told has passed.
 */

#include <netinet/in.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_pause.h>

#include "ipoib_adv.h"
#include "ipoib_compat.h"
#include "ipoib_wire.h"
#include "test.h"
#include "test_net.h"
#include "test_pkt.h"
#include "test_raw.h"
#include "test_util.h"

static const uint8_t adv_ip4[4] = { 10, 0, 0, 1 };
static const uint8_t adv_ip6[16] = { 0xfe, 0x80, [15] = 0x01 };

/* A's application sends frame f. */
static int
adv_tx(const struct test_net *net, const uint8_t *f, uint32_t len)
{
	struct rte_mbuf *m = test_mbuf(test_mempool(), f, len);

	TEST_ASSERT(m != NULL, "");
	TEST_ASSERT(test_tx_one(net->port[0], 0, m), "sent");
	return 0;
}

/* A's application: who has 10.0.0.99 (broadcast), as Linux writes it. */
static int
adv_send_arp(const struct test_net *net)
{
	uint8_t f[RTE_ETHER_HDR_LEN + sizeof(struct rte_arp_hdr)];
	struct rte_ether_hdr eh;
	struct rte_arp_hdr a;

	memset(eh.dst_addr.addr_bytes, 0xff, RTE_ETHER_ADDR_LEN);
	eh.src_addr = net->mac[0];
	eh.ether_type = RTE_BE16(RTE_ETHER_TYPE_ARP);
	memcpy(f, &eh, sizeof(eh));
	memset(&a, 0, sizeof(a));
	a.arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	a.arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	a.arp_hlen = RTE_ETHER_ADDR_LEN;
	a.arp_plen = 4;
	a.arp_opcode = RTE_BE16(RTE_ARP_OP_REQUEST);
	a.arp_data.arp_sha = net->mac[0];
	memcpy(&a.arp_data.arp_sip, adv_ip4, 4);
	a.arp_data.arp_tip = RTE_BE32(RTE_IPV4(10, 0, 0, 99));
	memcpy(f + RTE_ETHER_HDR_LEN, &a, sizeof(a));
	return adv_tx(net, f, sizeof(f));
}

/* A's application: NS for fe80::63 from fe80::1, with its SLLA. */
static int
adv_send_ns(const struct test_net *net)
{
	static const uint8_t snm[16] = { 0xff, 0x02, [11] = 0x01, 0xff,
					 [15] = 0x63 };
	uint8_t f[RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv6_hdr) + 32];
	uint8_t *icmp = f + RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv6_hdr);
	struct rte_ether_hdr eh = {
		.dst_addr = { { 0x33, 0x33, 0xff, 0x00, 0x00, 0x63 } },
		.ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV6),
	};
	struct rte_ipv6_hdr ip6;
	uint16_t ck;

	eh.src_addr = net->mac[0];
	memcpy(f, &eh, sizeof(eh));
	memset(&ip6, 0, sizeof(ip6));
	ip6.vtc_flow = RTE_BE32(6u << 28);
	ip6.payload_len = RTE_BE16(32);
	ip6.proto = IPPROTO_ICMPV6;
	ip6.hop_limits = 255;
	memcpy(IPOIB_IPV6_SRC(&ip6), adv_ip6, 16);
	memcpy(IPOIB_IPV6_DST(&ip6), snm, 16);
	memset(icmp, 0, 32);
	icmp[0] = IPOIB_ND_NEIGH_SOL;
	memcpy(icmp + 8, adv_ip6, 16);
	icmp[15 + 8] = 0x63;
	icmp[24] = IPOIB_ND_OPT_SLLA;
	icmp[25] = 1;
	memcpy(icmp + 26, &net->mac[0], RTE_ETHER_ADDR_LEN);
	ck = rte_ipv6_udptcp_cksum(&ip6, icmp);
	memcpy(icmp + 2, &ck, sizeof(ck));
	memcpy(f + RTE_ETHER_HDR_LEN, &ip6, sizeof(ip6));
	return adv_tx(net, f, sizeof(f));
}

static int
test_cm_adv_refused(void)
{
	unsigned int peer = 1;
	struct test_net net;
	uint32_t seq = 5;

	/* A accepts one connection */
	TEST_RUN(test_net_open(&net, "t_cm_adv", "max_conns=1", "", 2));
	TEST_RUN(adv_send_arp(&net));
	TEST_RUN(adv_send_ns(&net));
	TEST_ASSERT_EQ(test_xstat(net.port[0], "tx_adv_no_rc"), 0,
		       "room: the flag goes to the group");
	TEST_RUN(test_net_rounds(&net, &peer, 1, 5, 0));
	TEST_ASSERT(test_net_until(&net, &peer, 1, net.port[1],
				   "conns_tx_connected", 1, true, &seq) == 0,
		    "peer 1 connected to A");
	peer = 2;
	TEST_ASSERT(test_net_until(&net, &peer, 1, net.port[2],
				   "rej_rcvd_reason_1", 1, false, &seq) == 0,
		    "peer 2 got REJ reason 1");
	/* one ARP reply and one NA, as soon as A refused */
	TEST_ASSERT(test_wait_xstat(net.port[0], "cm_adv_no_rc", 2,
				    TEST_HANG_MS), "peer 2 told: ARP and NA");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "cm_adv_untold"), 0, "");
	TEST_RUN(test_net_rounds(&net, &peer, 1, 20, seq));	/* still served */
	TEST_ASSERT_EQ(test_xstat(net.port[2], "rx_drop_malformed"), 0,
		       "peer 2 took both as well formed (NA checksum)");
	/* a peer was refused: the group hears no flag any more */
	TEST_RUN(adv_send_arp(&net));
	TEST_ASSERT_EQ(test_xstat(net.port[0], "tx_adv_no_rc"), 1,
		       "the broadcast ARP without the flag");
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(cm_adv_refused, test_cm_adv_refused,
		    "a REQ refused for lack of room: the peer told to use UD");

/*
 * Non-SRQ with a mem_budget below one connection's receive ring: every REQ
 * would be refused (REJ 3), so the port never offers connected mode: its
 * application's first broadcast ARP already goes without the flag, and a
 * peer sends to it over UD from the start (no REQ at all).
 */
static int
test_cm_adv_budget(void)
{
	unsigned int peer = 1;
	struct test_net net;

	TEST_RUN(test_net_open(&net, "t_cm_adv_b", "srq=off,mem_budget=64K",
			       "", 1));
	TEST_RUN(adv_send_arp(&net));
	TEST_ASSERT_EQ(test_xstat(net.port[0], "tx_adv_no_rc"), 1,
		       "no room for a ring: the flag not offered");
	TEST_RUN(test_net_rounds(&net, &peer, 1, 5, 0));
	TEST_ASSERT_EQ(test_xstat(net.port[0], "conns_rx"), 0, "");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "mem_used_bytes"), 0,
		       "within the budget");
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(cm_adv_budget, test_cm_adv_budget,
	      "no ring fits mem_budget: connected mode not offered");

/*
 * A REQ from raw port R (the connection's private data naming R's UD QP
 * udqpn) to A; R's answer: REJ (its reason in *reason) or REP.
 */
static int
adv_raw_req(struct raw *r, const uint8_t *a_hw, uint32_t udqpn,
	    uint16_t *reason)
{
	struct ipoib_cm_data d = {
		.qpn = rte_cpu_to_be_32(udqpn),
		.mtu = rte_cpu_to_be_32(IPOIB_CM_MTU),
	};

	return raw_req_reason(r, a_hw, &d, sizeof(d), reason);
}

/*
 * The same peer refused twice: told each time, the second time because
 * the gap since the first (IPOIB_ADV_GAP_NS, 200 ms) has passed. R is a
 * raw port: unlike a driver port, it ignores what it is told and asks
 * again, as a Linux host whose neighbour entry is locked may.
 */
static int
test_cm_adv_again(void)
{
	uint8_t a_hw[IPOIB_HWADDR_LEN];
	unsigned int peer = 1;
	struct test_net net;
	uint16_t reason = 0;
	uint32_t seq = 5;
	double told;
	struct raw r;

	TEST_RUN(test_net_open(&net, "t_cm_adv2", "max_conns=1,pkey=0x8001",
			       "pkey=0x8001", 1));
	TEST_RUN(adv_send_arp(&net));
	TEST_ASSERT(test_net_until(&net, &peer, 1, net.port[1],
				   "conns_tx_connected", 1, true, &seq) == 0,
		    "peer 1 connected to A: A is full");
	TEST_RUN(raw_open(&r, test_fabric("t_cm_adv2")));
	TEST_ASSERT_EQ(shm_addr_resolve(r.port, net.mac[0].addr_bytes, a_hw),
		       0, "A's address, seen from R");
	TEST_RUN(adv_raw_req(&r, a_hw, shm_qp_num(r.ud[0]), &reason));
	TEST_ASSERT_EQ(reason, IPOIB_REJ_NO_QP, "R refused: no room");
	TEST_ASSERT(test_wait_xstat(net.port[0], "cm_adv_no_rc", 1,
				    TEST_HANG_MS), "R told: the ARP reply");
	told = test_now_ms();
	/* the gap is what is tested: let it pass (a slow machine: longer) */
	while (test_now_ms() - told < 2.0 * IPOIB_ADV_GAP_NS / 1e6)
		rte_pause();
	TEST_RUN(adv_raw_req(&r, a_hw, shm_qp_num(r.ud[0]), &reason));
	TEST_ASSERT_EQ(reason, IPOIB_REJ_NO_QP, "R refused again");
	TEST_ASSERT(test_wait_xstat(net.port[0], "cm_adv_no_rc", 2,
				    TEST_HANG_MS), "R told again after the gap");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "rej_sent_reason_1"), 2, "");
	raw_close(&r);
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(cm_adv_again, test_cm_adv_again,
		    "a peer refused again after the gap is told again");
