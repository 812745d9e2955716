/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Groups the application's own frames name: IGMP and MLD reports (joins
 * and leaves), Neighbor Discovery (the solicited-node groups of the
 * addresses it uses), and IPv6 out of the box: ND between two ports.
 */

#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "ipoib_wire.h"
#include "test.h"
#include "test_frames.h"
#include "test_mcast.h"
#include "test_util.h"

/* How many UDP datagrams from port 0 to an IPv6 group port 1 receives. */
static int
ts_count6(struct tm_net *n, const uint8_t *group, unsigned int *seen)
{
	uint8_t udp[16] = { 0x12, 0x34, 0x12, 0x35, 0, 16 }, src[16];
	struct rte_ether_addr mac;
	uint8_t marker = ++n->marker;
	struct tf f;

	tf_addr6(src, 0xa);
	tf_group_mac6(&mac, group);
	tf_ipv6(&f, &n->mac[0], &mac, src, group, IPPROTO_UDP, udp,
		sizeof(udp), false);
	TEST_RUN(tf_send(n->port[0], &f));
	TEST_RUN(tm_send_group4(n, 0, UINT32_MAX, marker));
	return tm_until_marker(n, 1, marker, &mac, seen);
}

static int
ts_wait_groups(struct tm_net *n, unsigned int i, uint64_t groups)
{
	TEST_ASSERT(test_wait_xstat(n->port[i], "mcast_groups", groups, 5000),
		    "port %u in %" PRIu64 " groups", i, groups);
	return 0;
}

static int
test_mcast_snoop_igmp(void)
{
	const uint32_t g2 = TF_IPV4(239, 1, 1, 1), g3 = TF_IPV4(239, 1, 1, 2);
	struct tm_net n;
	struct tf f;

	TEST_RUN(tm_open(&n, 2));
	/* IGMPv2 report and leave (RFC 2236) */
	tf_igmp2(&f, &n.mac[1], TF_IP_B, 0x16, g2);
	TEST_RUN(tf_send(n.port[1], &f));
	TEST_RUN(ts_wait_groups(&n, 1, 3));
	TEST_RUN(tm_gets(&n, 0, 1, g2));
	TEST_ASSERT_EQ(test_xstat(n.port[1], "rx_mcast_ipv4_packets"), 1,
		       "counted");
	tf_igmp2(&f, &n.mac[1], TF_IP_B, 0x17, g2);
	TEST_RUN(tf_send(n.port[1], &f));
	TEST_RUN(ts_wait_groups(&n, 1, 2));
	TEST_RUN(tm_misses(&n, 0, 1, g2));
	/* IGMPv3 (RFC 3376): TO_EX({}) joins, TO_IN({}) leaves */
	tf_igmp3(&f, &n.mac[1], TF_IP_B, 4, g3);
	TEST_RUN(tf_send(n.port[1], &f));
	TEST_RUN(ts_wait_groups(&n, 1, 3));
	TEST_RUN(tm_gets(&n, 0, 1, g3));
	tf_igmp3(&f, &n.mac[1], TF_IP_B, 3, g3);
	TEST_RUN(tf_send(n.port[1], &f));
	TEST_RUN(ts_wait_groups(&n, 1, 2));
	TEST_RUN(tm_misses(&n, 0, 1, g3));
	TEST_ASSERT_EQ(test_xstat(n.port[1], "mcast_leaves"), 2,
		       "leaves counted");
	tm_close(&n);
	return 0;
}
REGISTER_TEST(mcast_snoop_igmp, test_mcast_snoop_igmp,
		    "IGMPv2/v3 reports on tx join and leave groups");

static int
test_mcast_snoop_mld(void)
{
	static const uint8_t g1[16] = { 0xff, 0x05, [13] = 1, [15] = 3 };
	static const uint8_t g2[16] = { 0xff, 0x0e, [13] = 2, [15] = 4 };
	uint8_t src[16];
	unsigned int seen;
	struct tm_net n;
	struct tf f;

	TEST_RUN(tm_open(&n, 2));
	tf_addr6(src, 0xb);
	/* MLDv1 report and done (RFC 2710) */
	TEST_RUN(ts_count6(&n, g1, &seen));
	TEST_ASSERT_EQ(seen, 0, "not joined yet");
	tf_mld1(&f, &n.mac[1], src, 131, g1);
	TEST_RUN(tf_send(n.port[1], &f));
	TEST_RUN(ts_wait_groups(&n, 1, 3));
	TEST_RUN(ts_count6(&n, g1, &seen));
	TEST_ASSERT_EQ(seen, 1, "received after the report");
	TEST_ASSERT_EQ(test_xstat(n.port[1], "rx_mcast_ipv6_packets"), 1,
		       "counted");
	tf_mld1(&f, &n.mac[1], src, 132, g1);
	TEST_RUN(tf_send(n.port[1], &f));
	TEST_RUN(ts_wait_groups(&n, 1, 2));
	TEST_RUN(ts_count6(&n, g1, &seen));
	TEST_ASSERT_EQ(seen, 0, "not received after done");
	/* MLDv2 (RFC 3810): CHANGE_TO_EXCLUDE({}), CHANGE_TO_INCLUDE({}) */
	tf_mld2(&f, &n.mac[1], src, 4, g2);
	TEST_RUN(tf_send(n.port[1], &f));
	TEST_RUN(ts_wait_groups(&n, 1, 3));
	TEST_RUN(ts_count6(&n, g2, &seen));
	TEST_ASSERT_EQ(seen, 1, "received after the MLDv2 report");
	tf_mld2(&f, &n.mac[1], src, 3, g2);
	TEST_RUN(tf_send(n.port[1], &f));
	TEST_RUN(ts_wait_groups(&n, 1, 2));
	TEST_RUN(ts_count6(&n, g2, &seen));
	TEST_ASSERT_EQ(seen, 0, "not received after leaving");
	tm_close(&n);
	return 0;
}
REGISTER_TEST(mcast_snoop_mld, test_mcast_snoop_mld,
		    "MLDv1/v2 reports on tx join and leave groups");

/* The first frame port i receives within the deadline; NULL if none. */
static struct rte_mbuf *
ts_recv(struct tm_net *n, unsigned int i)
{
	struct rte_mbuf *m = NULL;

	return test_rx_until(n->port[i], &m, 1, 5000) == 1 ? m : NULL;
}

/* An ND message m of type carries the link-layer address mac. */
static int
ts_nd_lla(struct rte_mbuf *m, uint8_t type, const struct rte_ether_addr *mac)
{
	const size_t icmp = RTE_ETHER_HDR_LEN + 40;
	uint8_t buf[32];
	const uint8_t *p;

	TEST_ASSERT(m != NULL, "ND message received");
	p = rte_pktmbuf_read(m, icmp, sizeof(buf), buf);
	TEST_ASSERT(p != NULL && p[0] == type, "ICMPv6 type %u", type);
	TEST_ASSERT(p[24] == (type == 135 ? 1 : 2) && p[25] == 1,
		    "an Ethernet link-layer address option");
	TEST_ASSERT(memcmp(&p[26], mac, RTE_ETHER_ADDR_LEN) == 0,
		    "the sender's MAC in it");
	return 0;
}

/*
 * IPv6 out of the box: B's duplicate address detection names its address;
 * A's solicitation to its solicited-node group reaches B, whose answer
 * reaches A: Neighbor Discovery completes between two ports.
 */
static int
test_mcast_nd(void)
{
	static const uint8_t unspec[16], all_nodes[16] = { 0xff, 0x02,
							   [15] = 1 };
	uint8_t a_ip[16], b_ip[16], group[16];
	struct rte_ether_addr mac;
	struct rte_mbuf *m;
	unsigned int seen;
	struct tm_net n;
	struct tf f;

	TEST_RUN(tm_open(&n, 2));
	tf_addr6(a_ip, 0xa);
	tf_addr6(b_ip, 0xb);
	/* B's DAD: from ::, for its tentative address */
	tf_ns(&f, &n.mac[1], unspec, b_ip, false);
	TEST_RUN(tf_send(n.port[1], &f));
	TEST_RUN(ts_wait_groups(&n, 1, 3));
	/* A resolves B */
	tf_ns(&f, &n.mac[0], a_ip, b_ip, true);
	TEST_RUN(tf_send(n.port[0], &f));
	m = ts_recv(&n, 1);
	TEST_RUN(ts_nd_lla(m, 135, &n.mac[0]));
	ipoib_ipv6_solicited(group, b_ip);
	tf_group_mac6(&mac, group);
	TEST_ASSERT(rte_is_same_ether_addr(&rte_pktmbuf_mtod(m,
		    struct rte_ether_hdr *)->dst_addr, &mac),
		    "to B's solicited-node group");
	rte_pktmbuf_free(m);
	TEST_ASSERT_EQ(test_xstat(n.port[1], "rx_mcast_solicited_packets"), 1,
		       "counted");
	/* A's solicitation named A's address: A joined its group too */
	TEST_RUN(ts_wait_groups(&n, 0, 3));
	tf_na(&f, &n.mac[1], &n.mac[0], b_ip, a_ip);
	TEST_RUN(tf_send(n.port[1], &f));
	m = ts_recv(&n, 0);
	TEST_RUN(ts_nd_lla(m, 136, &n.mac[1]));
	rte_pktmbuf_free(m);
	/* all-nodes is joined out of the box */
	TEST_RUN(ts_count6(&n, all_nodes, &seen));
	TEST_ASSERT_EQ(seen, 1, "all-nodes received");
	TEST_ASSERT_EQ(test_xstat(n.port[1], "rx_mcast_allnodes_packets"), 1,
		       "counted");
	tm_close(&n);
	return 0;
}
REGISTER_TEST(mcast_nd, test_mcast_nd,
		    "IPv6 ND between two ports: solicited-node groups");
