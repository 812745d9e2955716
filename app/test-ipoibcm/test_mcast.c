/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Multicast the DPDK way: rte_eth_dev_set_mc_addr_list() and
 * allmulticast, the MGIDs an Ethernet MAC stands for, and what the port
 * does when it cannot join (too long a list, a full fabric, a full ring
 * between datapath and control thread). Snooping: test_mcast_snoop.c.
 *
 * Whether a frame was not received is seen without waiting: a marker
 * sent after it over the same path (UD, in order) arrives after it would
 * have.
 */

#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_ring.h>

#include "ipoib_cm.h"
#include "ipoib_telemetry.h"
#include "test.h"
#include "test_frames.h"
#include "test_mcast.h"
#include "test_util.h"

int
tm_open(struct tm_net *n, unsigned int nports)
{
	static const char *const names[] = {
		"net_ipoibcm_mca", "net_ipoibcm_mcb", "net_ipoibcm_mcc",
	};
	char args[128];
	unsigned int i;

	memset(n, 0, sizeof(*n));
	snprintf(args, sizeof(args), "fabric=%s", test_fabric("t_mc"));
	for (i = 0; i < nports && i < RTE_DIM(names); i++) {
		n->names[i] = names[i];
		TEST_RUN(test_port_create(names[i], args, 1, 1500,
					  &n->port[i]));
		rte_eth_macaddr_get(n->port[i], &n->mac[i]);
		n->n++;
	}
	return 0;
}

void
tm_close(struct tm_net *n)
{
	unsigned int i;

	for (i = 0; i < n->n; i++)
		test_port_destroy(n->names[i]);
}

/* A UDP datagram to an IPv4 group, from port i. */
int
tm_send_group4(struct tm_net *n, unsigned int i, uint32_t group, uint8_t tag)
{
	uint8_t udp[16] = { 0x12, 0x34, 0x12, 0x35, 0, 16, 0, 0, tag };
	struct rte_ether_addr dst;
	struct tf f;

	if (group == UINT32_MAX)
		memset(&dst, 0xff, sizeof(dst));
	else
		tf_group_mac4(&dst, group);
	tf_ipv4(&f, &n->mac[i], &dst, TF_IP_A + i, group, IPPROTO_UDP, udp,
		sizeof(udp), 0);
	TEST_RUN(tf_send(n->port[i], &f));
	/*
	 * A group's first frame waits for its address handle (the control
	 * thread's): a marker sent after it to another group could pass it.
	 */
	TEST_ASSERT(test_wait_held(n->port[i]), "held frames sent");
	return 0;
}

/* The tag of a UDP frame sent by tm_send_group4(). */
static int
tm_tag(const struct rte_mbuf *m)
{
	const size_t off = sizeof(struct rte_ether_hdr) +
			   sizeof(struct rte_ipv4_hdr) + 8;
	uint8_t copy;
	const uint8_t *p = rte_pktmbuf_read(m, off, 1, &copy);

	return p != NULL ? *p : -1;
}

/*
 * Receive on port i until the broadcast frame tagged marker came; count
 * the frames to mac before it.
 */
int
tm_until_marker(struct tm_net *n, unsigned int i, uint8_t marker,
		const struct rte_ether_addr *mac, unsigned int *seen)
{
	uint64_t deadline = test_now_ms() + 10000;
	struct rte_mbuf *m[32];
	bool found = false;

	*seen = 0;
	while (!found && test_now_ms() < deadline) {
		uint16_t k = rte_eth_rx_burst(n->port[i], 0, m, RTE_DIM(m)), j;

		for (j = 0; j < k; j++) {
			const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m[j],
				const struct rte_ether_hdr *);

			if (rte_is_broadcast_ether_addr(&eh->dst_addr) &&
			    tm_tag(m[j]) == marker)
				found = true;
			else if (mac != NULL &&
				 rte_is_same_ether_addr(&eh->dst_addr, mac))
				(*seen)++;
			rte_pktmbuf_free(m[j]);
		}
	}
	TEST_ASSERT(found, "the marker arrived");
	return 0;
}

/* How many frames port from sends to group port i receives: 1 or 0. */
static int
tm_count(struct tm_net *n, unsigned int from, unsigned int i, uint32_t group,
	 unsigned int *seen)
{
	struct rte_ether_addr mac;
	uint8_t marker = ++n->marker;

	tf_group_mac4(&mac, group);
	TEST_RUN(tm_send_group4(n, from, group, 0));
	TEST_RUN(tm_send_group4(n, from, UINT32_MAX, marker));
	return tm_until_marker(n, i, marker, &mac, seen);
}

int
tm_gets(struct tm_net *n, unsigned int from, unsigned int i, uint32_t group)
{
	unsigned int seen;

	TEST_RUN(tm_count(n, from, i, group, &seen));
	TEST_ASSERT_EQ(seen, 1, "port %u receives group %08x", i, group);
	return 0;
}

int
tm_misses(struct tm_net *n, unsigned int from, unsigned int i,
	  uint32_t group)
{
	unsigned int seen;

	TEST_RUN(tm_count(n, from, i, group, &seen));
	TEST_ASSERT_EQ(seen, 0, "port %u does not receive group %08x", i,
		       group);
	return 0;
}

static int
mac_mgid_is(struct ipoib_priv *priv, const char *mac_s, const uint8_t *want)
{
	uint8_t mgid[8][16];
	struct rte_ether_addr mac;
	int k;

	TEST_ASSERT(rte_ether_unformat_addr(mac_s, &mac) == 0, "%s", mac_s);
	pthread_mutex_lock(&priv->ctrl_lock);
	k = ipoib_mcast_mac_groups(priv, &mac, mgid, RTE_DIM(mgid));
	pthread_mutex_unlock(&priv->ctrl_lock);
	if (want == NULL) {
		TEST_ASSERT_EQ(k, -EINVAL, "%s has no group", mac_s);
		return 0;
	}
	TEST_ASSERT_EQ(k, 1, "%s stands for one group", mac_s);
	TEST_ASSERT(memcmp(mgid[0], want, 16) == 0, "MGID of %s", mac_s);
	return 0;
}

/* RFC 4391 s4 MGIDs of Ethernet MACs; ambiguity resolved by reports. */
static int
test_mcast_mac_map(void)
{
	static const uint8_t v4[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff,
		0, 0, 0, 0, 0, 0, 0x00, 0x01, 0x02, 0x03 };
	static const uint8_t v4_239[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff,
		0, 0, 0, 0, 0, 0, 0x0f, 0x81, 0x02, 0x03 };
	static const uint8_t bcast[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff,
		0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t allnodes[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff,
		0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01 };
	static const uint8_t sol[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff,
		0, 0, 0, 0, 0, 0x01, 0xff, 0x12, 0x34, 0x56 };
	struct ipoib_priv *priv;
	struct tm_net n;
	struct tf f;

	TEST_RUN(tm_open(&n, 1));
	priv = ipoib_priv_of_port(n.port[0]);
	TEST_RUN(mac_mgid_is(priv, "01:00:5e:01:02:03", v4));
	TEST_RUN(mac_mgid_is(priv, "ff:ff:ff:ff:ff:ff", bcast));
	TEST_RUN(mac_mgid_is(priv, "33:33:00:00:00:01", allnodes));
	TEST_RUN(mac_mgid_is(priv, "33:33:ff:12:34:56", sol));
	TEST_RUN(mac_mgid_is(priv, "01:80:c2:00:00:0e", NULL));
	TEST_RUN(mac_mgid_is(priv, "01:00:5e:81:02:03", NULL));
	/* a report names 239.129.2.3: the MAC means that group from now */
	tf_igmp2(&f, &n.mac[0], TF_IP_A, 0x16, TF_IPV4(239, 129, 2, 3));
	TEST_RUN(tf_send(n.port[0], &f));
	TEST_ASSERT(test_wait_xstat(n.port[0], "mcast_groups", 3, 5000),
		    "the reported group is joined");
	TEST_RUN(mac_mgid_is(priv, "01:00:5e:01:02:03", v4_239));
	tm_close(&n);
	return 0;
}
REGISTER_TEST(mcast_mac_map, test_mcast_mac_map,
		    "MGIDs of multicast MACs (RFC 4391), ambiguity resolved");

static int
test_mcast_list(void)
{
	const uint32_t g = TF_IPV4(224, 1, 2, 3);
	struct rte_ether_addr mac;
	struct tm_net n;

	TEST_RUN(tm_open(&n, 2));
	TEST_ASSERT_EQ(test_xstat(n.port[1], "mcast_groups"), 2,
		       "broadcast and all-nodes out of the box");
	TEST_RUN(tm_misses(&n, 0, 1, g));
	tf_group_mac4(&mac, g);
	TEST_ASSERT_EQ(rte_eth_dev_set_mc_addr_list(n.port[1], &mac, 1), 0,
		       "list");
	TEST_ASSERT_EQ(test_xstat(n.port[1], "mcast_groups"), 3, "joined");
	TEST_RUN(tm_gets(&n, 0, 1, g));
	TEST_ASSERT_EQ(test_xstat(n.port[1], "rx_mcast_ipv4_packets"), 1,
		       "counted by kind");
	TEST_ASSERT_EQ(test_xstat(n.port[1], "rx_mcast_bcast_packets"), 2,
		       "markers counted");
	/* the same list again changes nothing */
	TEST_ASSERT_EQ(rte_eth_dev_set_mc_addr_list(n.port[1], &mac, 1), 0,
		       "list again");
	TEST_ASSERT_EQ(test_xstat(n.port[1], "mcast_joins"), 3, "no rejoin");
	TEST_ASSERT_EQ(rte_eth_dev_set_mc_addr_list(n.port[1], NULL, 0), 0,
		       "empty list");
	TEST_ASSERT_EQ(test_xstat(n.port[1], "mcast_groups"), 2, "left");
	TEST_ASSERT_EQ(test_xstat(n.port[1], "mcast_leaves"), 1, "counted");
	TEST_RUN(tm_misses(&n, 0, 1, g));
	tm_close(&n);
	return 0;
}
REGISTER_TEST(mcast_list, test_mcast_list,
		    "set_mc_addr_list joins, receives, leaves");

static int
test_mcast_list_refused(void)
{
	struct rte_ether_addr list[IPOIB_MC_LIST_MAX + 1];
	const uint32_t g = TF_IPV4(224, 1, 2, 3);
	const char *log;
	struct tm_net n;
	unsigned int i;

	TEST_RUN(tm_open(&n, 2));
	tf_group_mac4(&list[0], g);
	TEST_ASSERT_EQ(rte_eth_dev_set_mc_addr_list(n.port[1], list, 1), 0,
		       "list of one");
	for (i = 0; i < RTE_DIM(list); i++)
		tf_group_mac4(&list[i], TF_IPV4(224, 3, 0, i));
	test_log_capture_start();
	TEST_ASSERT_EQ(rte_eth_dev_set_mc_addr_list(n.port[1], list,
						    RTE_DIM(list)), -ENOSPC,
		       "too long a list");
	log = test_log_capture_stop();
	TEST_ASSERT(strstr(log, "33 addresses") != NULL, "the log says why");
	TEST_ASSERT(rte_ether_unformat_addr("01:80:c2:00:00:0e", &list[1]) ==
		    0, "mac");
	test_log_capture_start();
	TEST_ASSERT_EQ(rte_eth_dev_set_mc_addr_list(n.port[1], list, 2),
		       -EINVAL, "a MAC with no IPoIB group");
	log = test_log_capture_stop();
	TEST_ASSERT(strstr(log, "01:80:C2:00:00:0E") != NULL,
		    "the log names it");
	TEST_ASSERT_EQ(test_xstat(n.port[1], "mcast_list_refused"), 2,
		       "counted");
	/* nothing lost: the list in use still is */
	TEST_ASSERT_EQ(test_xstat(n.port[1], "mcast_groups"), 3, "kept");
	TEST_RUN(tm_gets(&n, 0, 1, g));
	tm_close(&n);
	return 0;
}
REGISTER_TEST(mcast_list_refused, test_mcast_list_refused,
		    "a list too long or invalid is refused, the old one kept");

/* The fabric has 64 groups: B takes 32, C cannot take 32 more. */
static int
test_mcast_fabric_full(void)
{
	struct rte_ether_addr lb[32], lc[32];
	struct tm_net n;
	unsigned int i;

	TEST_RUN(tm_open(&n, 3));
	for (i = 0; i < 32; i++) {
		tf_group_mac4(&lb[i], TF_IPV4(224, 1, 0, i));
		tf_group_mac4(&lc[i], TF_IPV4(224, 2, 0, i));
	}
	TEST_ASSERT_EQ(rte_eth_dev_set_mc_addr_list(n.port[1], lb, 32), 0,
		       "B's list");
	TEST_ASSERT_EQ(rte_eth_dev_set_mc_addr_list(n.port[2], lc, 32),
		       -ENOSPC, "C's list does not fit the fabric");
	TEST_ASSERT(test_xstat(n.port[2], "mcast_joins_refused") >= 1,
		    "refusal counted");
	TEST_ASSERT_EQ(test_xstat(n.port[2], "mcast_list_refused"), 1,
		       "list refusal counted");
	TEST_ASSERT_EQ(test_xstat(n.port[2], "mcast_groups"), 2,
		       "C's partial joins undone");
	TEST_RUN(tm_gets(&n, 0, 1, TF_IPV4(224, 1, 0, 31)));
	TEST_RUN(tm_misses(&n, 0, 2, TF_IPV4(224, 2, 0, 0)));
	/* undone for real: the fabric has room for a shorter list */
	TEST_ASSERT_EQ(rte_eth_dev_set_mc_addr_list(n.port[2], lc, 16), 0,
		       "C's shorter list");
	TEST_RUN(tm_gets(&n, 0, 2, TF_IPV4(224, 2, 0, 15)));
	tm_close(&n);
	return 0;
}
REGISTER_TEST(mcast_fabric_full, test_mcast_fabric_full,
		    "joins the fabric refuses are undone and counted");

static int
test_mcast_allmulti(void)
{
	const uint32_t g = TF_IPV4(224, 9, 9, 9), h = TF_IPV4(224, 9, 9, 8);
	struct tm_net n;
	struct tf f;

	TEST_RUN(tm_open(&n, 2));
	/* without allmulticast, sending to a group joins nothing */
	TEST_RUN(tm_send_group4(&n, 1, h, 0));
	tf_igmp2(&f, &n.mac[1], TF_IP_B, 0x16, TF_IPV4(239, 0, 0, 1));
	TEST_RUN(tf_send(n.port[1], &f));
	/* the report was applied after the frame: it joined nothing */
	TEST_ASSERT(test_wait_xstat(n.port[1], "mcast_groups", 3, 5000),
		    "the report's group only");
	TEST_RUN(tm_misses(&n, 0, 1, h));
	TEST_ASSERT_EQ(rte_eth_allmulticast_enable(n.port[1]), 0, "enable");
	TEST_ASSERT_EQ(rte_eth_allmulticast_get(n.port[1]), 1, "reported");
	TEST_RUN(tm_send_group4(&n, 1, g, 0));
	TEST_ASSERT(test_wait_xstat(n.port[1], "mcast_groups", 4, 5000),
		    "a group sent to is joined");
	TEST_RUN(tm_gets(&n, 0, 1, g));
	TEST_ASSERT_EQ(rte_eth_allmulticast_disable(n.port[1]), 0, "disable");
	TEST_ASSERT_EQ(test_xstat(n.port[1], "mcast_groups"), 3,
		       "left at once");
	TEST_RUN(tm_misses(&n, 0, 1, g));
	TEST_RUN(tm_gets(&n, 0, 1, TF_IPV4(239, 0, 0, 1)));
	tm_close(&n);
	return 0;
}
REGISTER_TEST(mcast_allmulti, test_mcast_allmulti,
		    "allmulticast joins the groups the port sends to");

/* The control thread held back: the ring fills, the rest is counted. */
static int
test_mcast_ring_full(void)
{
	char name[RTE_RING_NAMESIZE];
	struct ipoib_priv *priv;
	struct rte_ring *r;
	unsigned int i, cap, sent = 0;
	struct tm_net n;
	struct tf f;

	TEST_RUN(tm_open(&n, 1));
	priv = ipoib_priv_of_port(n.port[0]);
	snprintf(name, sizeof(name), "ipmc_%u", n.port[0]);
	r = rte_ring_lookup(name);
	TEST_ASSERT(r != NULL, "the port's request ring");
	cap = rte_ring_get_capacity(r);
	pthread_mutex_lock(&priv->ctrl_lock);
	for (i = 0; i < cap + 8; i++) {
		/* leaves of groups never joined: requests with no effect */
		tf_igmp2(&f, &n.mac[0], TF_IP_A, 0x17,
			 TF_IPV4(239, 2, i >> 8, i & 0xff));
		if (tf_send(n.port[0], &f) == 0)
			sent++;
	}
	pthread_mutex_unlock(&priv->ctrl_lock);
	TEST_ASSERT_EQ(sent, cap + 8, "every report sent");
	TEST_ASSERT_EQ(test_xstat(n.port[0], "tx_mcast_requests_lost"), 8,
		       "what the ring could not take is counted");
	TEST_ASSERT_EQ(test_xstat(n.port[0], "mcast_groups"), 2,
		       "nothing joined");
	tm_close(&n);
	return 0;
}
REGISTER_TEST(mcast_ring_full, test_mcast_ring_full,
		    "requests the control thread cannot take are counted");
