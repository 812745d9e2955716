/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * A port's Q_Key and UD MTU come from the broadcast group's
 * MCMemberRecord, as on Linux (ipoib_mcast_join_finish()): on a subnet
 * whose IPoIB partition has Q_Key QK_QKEY and MTU 1024 (shm_sa_set_ipoib(),
 * what opensm's partitions.conf sets), two driver ports A and B, each
 * refusing the other's REQs (B is a spilled, UD peer of A and A of B),
 * exchange unicast and broadcast UD; a raw port R is heard when it sends
 * with the group's Q_Key and refused (hca_qkey_drops) with the old constant
 * 0x0b1b; frames longer than the group's UD MTU (1020) are fragmented
 * (IPv4) or answered with ICMP "fragmentation needed" (DF). In both
 * receive modes. And a port the SA refuses, or never answers, keeps the
 * defaults and still serves.
 */

#include <netinet/ip_icmp.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_ethdev.h>
#include <rte_ip.h>

#include "ipoib_cm.h"
#include "ipoib_telemetry.h"
#include "ipoib_wire.h"
#include "shm_fabric.h"
#include "test.h"
#include "test_net.h"
#include "test_raw.h"
#include "test_util.h"

#define QK_QKEY		0x00c0ffeeU	/* the partition's (not 0x0b1b) */
#define QK_MTU		1024		/* the group's; the ports have 2048 */
#define QK_UD_MTU	(QK_MTU - IPOIB_HDR_LEN)
#define QK_ROUNDS	8
#define QK_BIG		1400		/* Ethernet frame: over 1020, under 2044 */

static const struct rte_ether_addr qk_bcast = {
	.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };

/* The port took the group's Q_Key and UD MTU. */
static int
qk_check_port(uint16_t port)
{
	const struct ipoib_priv *priv = ipoib_priv_of_port(port);

	TEST_ASSERT(priv != NULL, "port %u is ours", port);
	TEST_ASSERT_EQ(priv->qkey, QK_QKEY, "port %u: the group's Q_Key",
		       port);
	TEST_ASSERT_EQ(priv->ud_mtu, QK_UD_MTU,
		       "port %u: UD MTU from the group's MTU", port);
	return 0;
}

/* A broadcast frame from A reaches B, once, as sent. */
static int
qk_broadcast(struct test_net *net)
{
	struct rte_mbuf *m, *want, *rx[2];
	bool same;

	m = test_udp_frame(&net->mac[0], &qk_bcast, 300, 77, false);
	want = test_udp_frame(&net->mac[0], &qk_bcast, 300, 77, false);
	TEST_ASSERT(m != NULL && want != NULL, "frames");
	TEST_ASSERT(test_tx_one(net->port[0], 0, m), "sent");
	TEST_ASSERT_EQ(test_rx_until(net->port[1], rx, 1, TEST_HANG_MS), 1,
		       "B receives A's broadcast");
	same = test_frames_equal(want, rx[0]);
	rte_pktmbuf_free(want);
	rte_pktmbuf_free(rx[0]);
	TEST_ASSERT(same, "the broadcast frame as sent");
	return 0;
}

/* An ARP request from R with a GRH (as broadcast has one), Q_Key qkey. */
static int
qk_raw_arp(struct raw *r, const uint8_t *a_hw, uint32_t qkey)
{
	struct shm_port_info info;
	struct ipoib_arp arp = {
		.hw_type = RTE_BE16(IPOIB_ARPHRD_INFINIBAND),
		.proto = RTE_BE16(RTE_ETHER_TYPE_IPV4),
		.hlen = IPOIB_HWADDR_LEN,
		.plen = 4,
		.op = RTE_BE16(RTE_ARP_OP_REQUEST),
		.sender_ip = RTE_BE32(RTE_IPV4(10, 7, 0, 2)),
		.target_ip = RTE_BE32(RTE_IPV4(10, 7, 0, 1)),
	};

	shm_port_query(r->port, &info);
	ipoib_hwaddr_set(&arp.sender_hw, 0, shm_qp_num(r->ud[0]), info.gid);
	memcpy(&arp.target_hw, a_hw, IPOIB_HWADDR_LEN);
	return raw_post(r, 0, qkey, a_hw, true, RTE_ETHER_TYPE_ARP, &arp,
			sizeof(arp));
}

/*
 * R sends with the group's Q_Key: A takes it. R sends with the old
 * constant: the fabric refuses it at A's QP (hca_qkey_drops), nothing
 * is delivered.
 */
static int
qk_raw(struct test_net *net, struct raw *r)
{
	uint8_t a_hw[IPOIB_HWADDR_LEN];
	struct rte_mbuf *rx[2];

	TEST_ASSERT_EQ(shm_addr_resolve(r->port, net->mac[0].addr_bytes,
					a_hw), 0, "A's address, from R");
	TEST_RUN(qk_raw_arp(r, a_hw, QK_QKEY));
	TEST_ASSERT_EQ(test_rx_until(net->port[0], rx, 1, TEST_HANG_MS), 1,
		       "R's ARP with the group's Q_Key is delivered");
	rte_pktmbuf_free(rx[0]);
	TEST_ASSERT_EQ(test_xstat(net->port[0], "hca_qkey_drops"), 0,
		       "nothing refused");
	TEST_RUN(qk_raw_arp(r, a_hw, IPOIB_QKEY_DEFAULT));
	TEST_ASSERT(test_wait_xstat(net->port[0], "hca_qkey_drops", 1,
				    TEST_HANG_MS),
		    "R's ARP with Q_Key 0x0b1b is refused and counted");
	TEST_ASSERT_EQ(rte_eth_rx_burst(net->port[0], 0, rx, 2), 0,
		       "and not delivered");
	return 0;
}

/*
 * Over the group's UD MTU to the UD peer B: IPv4 without DF goes in two
 * fragments (1020 + 386 IP bytes); with DF, A's application gets an ICMP
 * "fragmentation needed" naming MTU 1020 and B gets nothing.
 */
static int
qk_big(struct test_net *net)
{
	struct rte_mbuf *m, *rx[4];
	const struct rte_ipv4_hdr *ip;
	const uint8_t *icmp;	/* RFC 792: type, code, sum, 0, MTU */
	uint16_t n;
	bool ok;

	m = test_udp_frame(&net->mac[0], &net->mac[1], QK_BIG, 5, false);
	TEST_ASSERT(m != NULL, "frame");
	TEST_ASSERT(test_tx_one(net->port[0], 0, m), "sent");
	n = test_rx_until(net->port[1], rx, 2, TEST_HANG_MS);
	TEST_ASSERT_EQ(n, 2, "B receives the two fragments");
	ok = rx[0]->pkt_len == RTE_ETHER_HDR_LEN + QK_UD_MTU &&
	     rx[1]->pkt_len == QK_BIG - QK_UD_MTU + sizeof(*ip);
	rte_pktmbuf_free_bulk(rx, n);
	TEST_ASSERT(ok, "fragments of the group's UD MTU");
	TEST_ASSERT_EQ(test_xstat(net->port[0], "tx_frag_packets"), 1,
		       "one packet fragmented");
	TEST_ASSERT_EQ(test_xstat(net->port[0], "tx_frags"), 2,
		       "into two fragments");

	m = test_udp_frame(&net->mac[0], &net->mac[1], QK_BIG, 6, true);
	TEST_ASSERT(m != NULL, "frame");
	TEST_ASSERT(test_tx_one(net->port[0], 0, m), "sent");
	TEST_ASSERT_EQ(test_rx_until(net->port[0], rx, 1, TEST_HANG_MS), 1,
		       "A's application gets the ICMP error");
	ip = rte_pktmbuf_mtod_offset(rx[0], const struct rte_ipv4_hdr *,
				     RTE_ETHER_HDR_LEN);
	icmp = (const uint8_t *)(ip + 1);
	ok = ip->next_proto_id == IPPROTO_ICMP &&
	     icmp[0] == ICMP_DEST_UNREACH && icmp[1] == ICMP_FRAG_NEEDED &&
	     (icmp[6] << 8 | icmp[7]) == QK_UD_MTU;
	rte_pktmbuf_free(rx[0]);
	TEST_ASSERT(ok, "ICMP fragmentation needed, next-hop MTU %u",
		    QK_UD_MTU);
	TEST_ASSERT_EQ(test_xstat(net->port[0], "tx_icmp_too_big"), 1,
		       "counted");
	TEST_ASSERT_EQ(rte_eth_rx_burst(net->port[1], 0, rx, 4), 0,
		       "B gets nothing of it");
	return 0;
}

static int
qk_run(const char *srq)
{
	char fab[32], args[96];
	struct test_net net;
	struct raw r;
	unsigned int i;

	snprintf(fab, sizeof(fab), "t_qkey_%s", srq);
	TEST_RUN(raw_open(&r, test_fabric(fab)));
	/* before the first port joins: the SA makes the group so */
	TEST_ASSERT_EQ(shm_sa_set_ipoib(r.f, QK_QKEY, QK_MTU), 0, "SA");
	snprintf(args, sizeof(args), "pkey=0x8001,srq=%s,fault_rej=all", srq);
	TEST_RUN(test_net_open(&net, fab, args, args, 1));
	TEST_RUN(qk_check_port(net.port[0]));
	TEST_RUN(qk_check_port(net.port[1]));

	TEST_RUN(test_net_rounds(&net, (unsigned int[]){ 1 }, 1, QK_ROUNDS,
				 0));
	for (i = 0; i < 2; i++) {
		TEST_ASSERT_EQ(test_xstat(net.port[i], "tx_rc_packets"), 0,
			       "port %u: every REQ refused: nothing on RC", i);
		TEST_ASSERT(test_xstat(net.port[i], "tx_ud_packets") >=
			    QK_ROUNDS, "port %u: unicast went on UD", i);
	}
	TEST_RUN(qk_broadcast(&net));
	for (i = 0; i < 2; i++)
		TEST_ASSERT_EQ(test_xstat(net.port[i], "hca_qkey_drops"), 0,
			       "port %u: A and B agree on the Q_Key", i);
	TEST_RUN(qk_big(&net));
	test_net_poll(&net);
	TEST_RUN(qk_raw(&net, &r));
	test_net_close(&net);
	raw_close(&r);
	return 0;
}

static int
test_qkey_from_join(void)
{
	TEST_RUN(qk_run("on"));
	return qk_run("off");
}
REGISTER_TEST(qkey_from_join, test_qkey_from_join,
	      "Q_Key and UD MTU from the broadcast group's record");

/*
 * A port whose IB MTU (1024) is below the group's (2048, the SA's
 * default) may not join (opensm refuses it too): it keeps the defaults,
 * Q_Key 0x0b1b and UD MTU 1020, and counts the refusal.
 */
static int
test_qkey_join_refused(void)
{
	const char *name = "net_ipoibcm_qkr";
	const struct ipoib_priv *priv;
	char args[96];
	uint16_t port;

	snprintf(args, sizeof(args), "fabric=%s,ib_mtu=1024",
		 test_fabric("t_qkey_ref"));
	TEST_RUN(test_port_create(name, args, 1, 1500, &port));
	priv = ipoib_priv_of_port(port);
	TEST_ASSERT(priv != NULL, "port %u is ours", port);
	TEST_ASSERT_EQ(priv->qkey, IPOIB_QKEY_DEFAULT, "the default Q_Key");
	TEST_ASSERT_EQ(priv->ud_mtu, 1024 - IPOIB_HDR_LEN,
		       "the port's UD MTU");
	TEST_ASSERT_EQ(test_xstat(port, "mcast_joins_refused"), 1,
		       "the refused join counted");
	test_port_destroy(name);
	return 0;
}
REGISTER_TEST(qkey_join_refused, test_qkey_join_refused,
	      "broadcast join refused: default Q_Key and MTU, counted");

/*
 * The SA never answers the port's join (fault_sa_drop: every request
 * lost): after its 3 s wait the port comes up with the defaults, counts
 * the failure, and exchanges traffic with a port that joined (the
 * fabric's IPoIB group has the default Q_Key 0x0b1b here).
 */
static int
test_qkey_join_lost(void)
{
	const struct ipoib_priv *priv;
	unsigned int peer = 1;
	struct test_net net;

	TEST_RUN(test_net_open(&net, "t_qkey_lost", "fault_sa_drop=1000000",
			       "", 1));
	priv = ipoib_priv_of_port(net.port[0]);
	TEST_ASSERT(priv != NULL, "port %u is ours", net.port[0]);
	TEST_ASSERT_EQ(priv->qkey, IPOIB_QKEY_DEFAULT, "the default Q_Key");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "mcast_joins_refused"), 1,
		       "the unanswered join counted");
	TEST_ASSERT_EQ(test_xstat(net.port[1], "mcast_joins_refused"), 0,
		       "the other port joined");
	TEST_RUN(test_net_rounds(&net, &peer, 1, QK_ROUNDS, 0));
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(qkey_join_lost, test_qkey_join_lost,
	      "broadcast join never answered: defaults, counted, serves");
