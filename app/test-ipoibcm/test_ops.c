/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The ethdev operations applications call at start-up, with their IB
 * meaning: promiscuous mode, the port's own MAC, packet types on receive,
 * queues started and stopped one by one, loopback.
 */

#include <stdio.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_net.h>

#include "test.h"
#include "test_frames.h"
#include "test_mcast.h"
#include "test_util.h"

/* A unicast frame from port 0 to port 1 arrives; returned to the caller. */
static struct rte_mbuf *
to_ops_b(struct tm_net *n, const struct tf *f)
{
	struct rte_mbuf *m = NULL;

	if (tf_send(n->port[0], f) != 0 ||
	    test_rx_until(n->port[1], &m, 1, 5000) != 1)
		return NULL;
	return m;
}

static int
test_ops_promisc(void)
{
	struct tm_net n;

	TEST_RUN(tm_open(&n, 3));
	TEST_ASSERT_EQ(rte_eth_promiscuous_enable(n.port[2]), 0, "enable");
	TEST_ASSERT_EQ(rte_eth_promiscuous_get(n.port[2]), 1, "on");
	/* an IB port sees no other port's traffic: nothing changes */
	TEST_RUN(test_send_frames(n.port[0], &n.mac[0], &n.mac[1], 1));
	TEST_RUN(tm_misses(&n, 0, 2, TF_IPV4(224, 5, 5, 5)));
	TEST_ASSERT_EQ(rte_eth_promiscuous_disable(n.port[2]), 0, "disable");
	TEST_ASSERT_EQ(rte_eth_promiscuous_get(n.port[2]), 0, "off");
	tm_close(&n);
	return 0;
}
REGISTER_TEST(ops_promisc, test_ops_promisc,
		    "promiscuous mode accepted, as IB means it");

static int
test_ops_mac_set(void)
{
	struct rte_ether_addr mine, got, bad;
	uint8_t udp[8] = { 0, 1, 0, 2, 0, 8 };
	struct rte_mbuf *m;
	const char *log;
	struct tm_net n;
	struct tf f;

	TEST_RUN(tm_open(&n, 2));
	TEST_ASSERT(rte_ether_unformat_addr("02:11:22:33:44:55", &mine) == 0,
		    "mac");
	TEST_ASSERT_EQ(rte_eth_dev_default_mac_addr_set(n.port[1], &mine), 0,
		       "set");
	rte_eth_macaddr_get(n.port[1], &got);
	TEST_ASSERT(rte_is_same_ether_addr(&got, &mine), "reported");
	/* peers still reach B at the MAC they know; B sees its own */
	tf_ipv4(&f, &n.mac[0], &n.mac[1], TF_IP_A, TF_IP_B, IPPROTO_UDP, udp,
		sizeof(udp), 0);
	m = to_ops_b(&n, &f);
	TEST_ASSERT(m != NULL, "received");
	TEST_ASSERT(rte_is_same_ether_addr(&rte_pktmbuf_mtod(m,
		    struct rte_ether_hdr *)->dst_addr, &mine),
		    "addressed to the port's own MAC");
	rte_pktmbuf_free(m);
	/* ethdev refuses what is not a unicast MAC */
	TEST_ASSERT(rte_ether_unformat_addr("01:00:5e:00:00:01", &bad) == 0,
		    "mac");
	TEST_ASSERT_EQ(rte_eth_dev_default_mac_addr_set(n.port[1], &bad),
		       -EINVAL, "multicast refused");
	/* the driver refuses a MAC a peer stands for, and says why */
	test_log_capture_start();
	TEST_ASSERT_EQ(rte_eth_dev_default_mac_addr_set(n.port[1],
							&n.mac[0]),
		       -EADDRINUSE, "a peer's MAC refused");
	log = test_log_capture_stop();
	TEST_ASSERT(strstr(log, "a peer on the fabric") != NULL,
		    "the log says why");
	TEST_ASSERT_EQ(test_xstat(n.port[1], "mac_addr_set_refused"), 1,
		       "counted");
	rte_eth_macaddr_get(n.port[1], &got);
	TEST_ASSERT(rte_is_same_ether_addr(&got, &mine), "the MAC kept");
	m = to_ops_b(&n, &f);
	TEST_ASSERT(m != NULL, "still received");
	rte_pktmbuf_free(m);
	tm_close(&n);
	return 0;
}
REGISTER_TEST(ops_mac_set, test_ops_mac_set,
		    "mac_addr_set: the port's own MAC is local to it");

/* The frame f sent A -> B arrives with packet_type want. */
static int
ptype_is(struct tm_net *n, const struct tf *f, uint32_t want,
	 const char *what)
{
	struct rte_mbuf *m = to_ops_b(n, f);
	uint32_t net;

	TEST_ASSERT(m != NULL, "%s received", what);
	net = rte_net_get_ptype(m, NULL, RTE_PTYPE_ALL_MASK);
	printf("    %-16s packet_type 0x%08x (rte_net_get_ptype 0x%08x)\n",
	       what, m->packet_type, net);
	TEST_ASSERT_EQ(m->packet_type, want, "%s", what);
	rte_pktmbuf_free(m);
	return 0;
}

static int
test_ops_ptypes(void)
{
	static const uint8_t a6[16] = { 0xfd, [15] = 0xa };
	static const uint8_t b6[16] = { 0xfd, [15] = 0xb };
	uint8_t udp[8] = { 0, 1, 0, 2, 0, 8 }, tcp[20] = { 0, 1, 0, 2 };
	uint8_t icmp[8] = { 8 }, arp[28];
	const uint32_t l2 = RTE_PTYPE_L2_ETHER;
	uint32_t set[16];
	struct tm_net n;
	struct tf f;
	int k;

	TEST_RUN(tm_open(&n, 2));
	k = rte_eth_dev_get_supported_ptypes(n.port[1], RTE_PTYPE_ALL_MASK,
					     set, RTE_DIM(set));
	TEST_ASSERT(k >= 10, "supported packet types listed (%d)", k);
	tcp[12] = 5 << 4;
	tf_ipv4(&f, &n.mac[0], &n.mac[1], TF_IP_A, TF_IP_B, IPPROTO_UDP, udp,
		sizeof(udp), 0);
	TEST_RUN(ptype_is(&n, &f, l2 | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_UDP,
			  "IPv4 UDP"));
	tf_ipv4(&f, &n.mac[0], &n.mac[1], TF_IP_A, TF_IP_B, IPPROTO_TCP, tcp,
		sizeof(tcp), 0);
	TEST_RUN(ptype_is(&n, &f, l2 | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP,
			  "IPv4 TCP"));
	tf_ipv4(&f, &n.mac[0], &n.mac[1], TF_IP_A, TF_IP_B, IPPROTO_ICMP, icmp,
		sizeof(icmp), 0);
	TEST_RUN(ptype_is(&n, &f, l2 | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_ICMP,
			  "IPv4 ICMP"));
	tf_ipv4(&f, &n.mac[0], &n.mac[1], TF_IP_A, TF_IP_B, IPPROTO_UDP, udp,
		sizeof(udp), RTE_IPV4_HDR_MF_FLAG);
	TEST_RUN(ptype_is(&n, &f, l2 | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_FRAG,
			  "IPv4 fragment"));
	tf_ipv6(&f, &n.mac[0], &n.mac[1], a6, b6, IPPROTO_UDP, udp,
		sizeof(udp), false);
	TEST_RUN(ptype_is(&n, &f, l2 | RTE_PTYPE_L3_IPV6 | RTE_PTYPE_L4_UDP,
			  "IPv6 UDP"));
	tf_ipv6(&f, &n.mac[0], &n.mac[1], a6, b6, IPPROTO_UDP, udp,
		sizeof(udp), true);
	TEST_RUN(ptype_is(&n, &f, l2 | RTE_PTYPE_L3_IPV6_EXT |
			  RTE_PTYPE_L4_UDP, "IPv6 ext UDP"));
	/* an ARP request for B, from A (slow path) */
	memset(arp, 0, sizeof(arp));
	arp[1] = 1;		/* Ethernet */
	arp[2] = 0x08;		/* IPv4 */
	arp[4] = 6;
	arp[5] = 4;
	arp[7] = 1;		/* request */
	memcpy(&arp[8], &n.mac[0], 6);
	arp[14] = 10;		/* sender 10.0.0.1, target 10.0.0.2 */
	arp[17] = 1;
	arp[24] = 10;
	arp[27] = 2;
	memcpy(f.b, &n.mac[1], 6);
	memcpy(f.b + 6, &n.mac[0], 6);
	f.b[12] = 0x08;
	f.b[13] = 0x06;
	memcpy(f.b + 14, arp, sizeof(arp));
	f.len = 14 + sizeof(arp);
	TEST_RUN(ptype_is(&n, &f, RTE_PTYPE_L2_ETHER_ARP, "ARP"));
	/* the application asks for L2 and L3 only, then for nothing */
	TEST_ASSERT(rte_eth_dev_set_ptypes(n.port[1], RTE_PTYPE_L2_MASK |
					   RTE_PTYPE_L3_MASK, NULL, 0) == 0,
		    "set ptypes");
	tf_ipv4(&f, &n.mac[0], &n.mac[1], TF_IP_A, TF_IP_B, IPPROTO_UDP, udp,
		sizeof(udp), 0);
	TEST_RUN(ptype_is(&n, &f, l2 | RTE_PTYPE_L3_IPV4, "L2+L3 only"));
	TEST_ASSERT(rte_eth_dev_set_ptypes(n.port[1], RTE_PTYPE_UNKNOWN, NULL,
					   0) == 0, "no ptypes");
	TEST_RUN(ptype_is(&n, &f, 0, "none asked"));
	tm_close(&n);
	return 0;
}
REGISTER_TEST(ops_ptypes, test_ops_ptypes,
		    "packet_type on receive, as rte_net_get_ptype() and more");

static int
test_ops_queue_stop(void)
{
	struct rte_mbuf *m[8];
	struct tm_net n;
	uint16_t k;

	TEST_RUN(tm_open(&n, 2));
	TEST_ASSERT_EQ(rte_eth_dev_rx_queue_stop(n.port[1], 0), 0, "rx stop");
	TEST_RUN(test_send_frames(n.port[0], &n.mac[0], &n.mac[1], 4));
	/* the first frames to a new peer go when its AH exists */
	TEST_ASSERT(test_wait_held(n.port[0]), "held frames sent");
	TEST_ASSERT_EQ(rte_eth_rx_burst(n.port[1], 0, m, RTE_DIM(m)), 0,
		       "a stopped queue delivers nothing");
	TEST_ASSERT_EQ(rte_eth_rx_queue_count(n.port[1], 0), 4,
		       "the frames wait");
	TEST_ASSERT_EQ(rte_eth_dev_rx_queue_start(n.port[1], 0), 0,
		       "rx start");
	k = test_rx_until(n.port[1], m, 4, 5000);
	TEST_ASSERT_EQ(k, 4, "what waited is delivered");
	rte_pktmbuf_free_bulk(m, k);
	/* a stopped tx queue takes nothing; the frame stays the caller's */
	TEST_ASSERT_EQ(rte_eth_dev_tx_queue_stop(n.port[0], 0), 0, "tx stop");
	m[0] = test_udp_frame(&n.mac[0], &n.mac[1], 100, 7, false);
	TEST_ASSERT(m[0] != NULL, "frame");
	TEST_ASSERT_EQ(rte_eth_tx_burst(n.port[0], 0, m, 1), 0,
		       "a stopped queue sends nothing");
	TEST_ASSERT_EQ(rte_eth_dev_tx_queue_start(n.port[0], 0), 0,
		       "tx start");
	TEST_ASSERT_EQ(rte_eth_tx_burst(n.port[0], 0, m, 1), 1, "sent");
	TEST_ASSERT_EQ(test_rx_until(n.port[1], m, 1, 5000), 1, "received");
	rte_pktmbuf_free(m[0]);
	tm_close(&n);
	return 0;
}
REGISTER_TEST(ops_queue_stop, test_ops_queue_stop,
		    "rx/tx queues stopped and started while the port runs");

static int
test_ops_deferred(void)
{
	struct rte_eth_rxconf rxc = { .rx_deferred_start = 1 };
	struct rte_eth_conf conf = { 0 };
	struct rte_ether_addr a_mac, b_mac;
	struct rte_eth_rxq_info qi;
	struct rte_mbuf *m[4];
	char args[64];
	uint16_t a, b;

	snprintf(args, sizeof(args), "fabric=%s", test_fabric("t_def"));
	TEST_RUN(test_port_create("net_ipoibcm_defa", args, 1, 1500, &a));
	TEST_ASSERT(rte_vdev_init("net_ipoibcm_defb", args) == 0, "probe");
	TEST_ASSERT(rte_eth_dev_get_port_by_name("net_ipoibcm_defb", &b) == 0,
		    "port");
	TEST_ASSERT(rte_eth_dev_configure(b, 1, 1, &conf) == 0, "configure");
	TEST_ASSERT(rte_eth_rx_queue_setup(b, 0, 256, rte_socket_id(), &rxc,
					   test_mempool()) == 0, "rxq");
	TEST_ASSERT(rte_eth_tx_queue_setup(b, 0, 256, rte_socket_id(),
					   NULL) == 0, "txq");
	TEST_ASSERT(rte_eth_dev_start(b) == 0, "start");
	TEST_ASSERT(rte_eth_rx_queue_info_get(b, 0, &qi) == 0, "rxq info");
	TEST_ASSERT_EQ(qi.queue_state, RTE_ETH_QUEUE_STATE_STOPPED,
		       "deferred: not started");
	rte_eth_macaddr_get(a, &a_mac);
	rte_eth_macaddr_get(b, &b_mac);
	TEST_RUN(test_send_frames(a, &a_mac, &b_mac, 2));
	TEST_ASSERT_EQ(rte_eth_rx_burst(b, 0, m, RTE_DIM(m)), 0,
		       "nothing before the queue starts");
	TEST_ASSERT_EQ(rte_eth_dev_rx_queue_start(b, 0), 0, "start queue");
	TEST_ASSERT_EQ(test_rx_until(b, m, 2, 5000), 2, "then delivered");
	rte_pktmbuf_free_bulk(m, 2);
	test_port_destroy("net_ipoibcm_defb");
	test_port_destroy("net_ipoibcm_defa");
	return 0;
}
REGISTER_TEST(ops_deferred, test_ops_deferred,
		    "rx_deferred_start: the queue starts when asked");

/* lpbk_mode: frames to any MAC come back to the port, none leave it. */
static int
test_ops_lpbk(void)
{
	struct rte_eth_conf conf = { .lpbk_mode = 1 };
	struct rte_ether_addr far, mac;
	struct rte_mbuf *tx[8], *copy[8], *rx[8];
	struct tm_net n;
	uint16_t k, i;

	TEST_RUN(tm_open(&n, 2));
	TEST_ASSERT(rte_eth_dev_stop(n.port[0]) == 0, "stop");
	conf.lpbk_mode = 2;
	TEST_ASSERT_EQ(rte_eth_dev_configure(n.port[0], 1, 1, &conf), -EINVAL,
		       "lpbk_mode 2 refused");
	conf.lpbk_mode = 1;
	TEST_ASSERT(rte_eth_dev_configure(n.port[0], 1, 1, &conf) == 0,
		    "lpbk_mode 1");
	TEST_ASSERT(rte_eth_rx_queue_setup(n.port[0], 0, 256, rte_socket_id(),
					   NULL, test_mempool()) == 0, "rxq");
	TEST_ASSERT(rte_eth_tx_queue_setup(n.port[0], 0, 256, rte_socket_id(),
					   NULL) == 0, "txq");
	TEST_ASSERT(rte_eth_dev_start(n.port[0]) == 0, "start");
	rte_eth_macaddr_get(n.port[0], &mac);
	TEST_ASSERT(rte_ether_unformat_addr("00:aa:ff:aa:ff:aa", &far) == 0,
		    "mac");
	for (i = 0; i < RTE_DIM(tx); i++) {
		tx[i] = test_udp_frame(&mac, i & 1 ? &far : &n.mac[1], 128, i,
				       false);
		copy[i] = rte_pktmbuf_copy(tx[i], test_mempool(), 0,
					   UINT32_MAX);
		TEST_ASSERT(tx[i] != NULL && copy[i] != NULL, "frame");
	}
	TEST_ASSERT_EQ(rte_eth_tx_burst(n.port[0], 0, tx, RTE_DIM(tx)),
		       RTE_DIM(tx), "sent");
	k = test_rx_until(n.port[0], rx, RTE_DIM(rx), 5000);
	TEST_ASSERT_EQ(k, RTE_DIM(rx), "all came back to the sender");
	for (i = 0; i < k; i++) {
		/* addressed to the port now; IP and payload unchanged */
		TEST_ASSERT(rte_is_same_ether_addr(&rte_pktmbuf_mtod(rx[i],
			    struct rte_ether_hdr *)->dst_addr, &mac),
			    "to the port");
		TEST_ASSERT(rx[i]->pkt_len == copy[i]->pkt_len &&
			    memcmp(rte_pktmbuf_mtod_offset(rx[i], void *, 12),
				   rte_pktmbuf_mtod_offset(copy[i], void *, 12),
				   copy[i]->pkt_len - 12) == 0,
			    "frame %u intact", i);
	}
	rte_pktmbuf_free_bulk(rx, k);
	rte_pktmbuf_free_bulk(copy, RTE_DIM(copy));
	/*
	 * Unicast IPv4 went the fast way (ipoib_tx_fast_encap()); the rest
	 * through the whole emulation: broadcast comes back, a multicast MAC
	 * with no IPoIB group (802.1 slow protocols) is dropped and counted.
	 */
	TEST_ASSERT(rte_ether_unformat_addr("ff:ff:ff:ff:ff:ff", &far) == 0 &&
		    (tx[0] = test_udp_frame(&mac, &far, 128, 0, false)) != NULL,
		    "broadcast frame");
	TEST_ASSERT(rte_ether_unformat_addr("01:80:c2:00:00:0e", &far) == 0 &&
		    (tx[1] = test_udp_frame(&mac, &far, 128, 1, false)) != NULL,
		    "group frame");
	TEST_ASSERT_EQ(rte_eth_tx_burst(n.port[0], 0, tx, 2), 2, "sent");
	TEST_ASSERT_EQ(test_xstat(n.port[0], "tx_drop_vlan"), 1,
		       "no IPoIB group: dropped, counted");
	k = test_rx_until(n.port[0], rx, 1, 5000);
	TEST_ASSERT_EQ(k, 1, "broadcast came back");
	TEST_ASSERT(rte_is_same_ether_addr(&rte_pktmbuf_mtod(rx[0],
		    struct rte_ether_hdr *)->dst_addr, &mac) &&
		    rx[0]->pkt_len == 128, "broadcast: to the port, whole");
	rte_pktmbuf_free(rx[0]);
	TEST_ASSERT_EQ(rte_eth_rx_queue_count(n.port[0], 0), 0,
		       "nothing else came back");
	/* nothing reached B, even what was addressed to it (on shm a
	 * frame sent is in the receiver's completion queue already)
	 */
	TEST_ASSERT_EQ(rte_eth_rx_queue_count(n.port[1], 0), 0,
		       "B received nothing");
	tm_close(&n);
	return 0;
}
REGISTER_TEST(ops_lpbk, test_ops_lpbk,
		    "lpbk_mode: the port receives what it sends");
