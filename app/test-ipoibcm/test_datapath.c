/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The datapath between two ports of one process on one fabric: UD first,
 * then RC once connected, in both receive modes; frames arrive intact.
 */

#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "rte_pmd_ipoib_cm.h"
#include "test.h"
#include "test_util.h"

struct dp_pair {
	const char *a_name, *b_name;
	uint16_t a, b;
	struct rte_ether_addr a_mac, b_mac;
};

static int
dp_open_q(struct dp_pair *p, const char *args, uint16_t mtu, uint16_t nb_q)
{
	char a_args[256], b_args[256];

	snprintf(a_args, sizeof(a_args), "fabric=%s,%s", test_fabric("t_dp"),
		 args);
	snprintf(b_args, sizeof(b_args), "fabric=%s,%s", test_fabric("t_dp"),
		 args);
	p->a_name = "net_ipoibcm_dpa";
	p->b_name = "net_ipoibcm_dpb";
	TEST_RUN(test_port_create(p->a_name, a_args, nb_q, mtu, &p->a));
	TEST_RUN(test_port_create(p->b_name, b_args, nb_q, mtu, &p->b));
	rte_eth_macaddr_get(p->a, &p->a_mac);
	rte_eth_macaddr_get(p->b, &p->b_mac);
	return 0;
}

static int
dp_open(struct dp_pair *p, const char *args, uint16_t mtu)
{
	return dp_open_q(p, args, mtu, 1);
}

static void
dp_close(struct dp_pair *p)
{
	test_port_destroy(p->a_name);
	test_port_destroy(p->b_name);
}

/*
 * A sends to B until its connection to B is up (a connection is made, or
 * retried, only while frames flow); B drops what it gets meanwhile, and
 * what is still in its queue after.
 */
static int
dp_connect(struct dp_pair *p)
{
	double deadline = test_now_ms() + TEST_HANG_MS;
	struct rte_mbuf *m, *rx[32];
	uint16_t n;

	while (test_xstat(p->a, "conns_tx_connected") != 1) {
		TEST_ASSERT(test_now_ms() < deadline, "A connected to B");
		m = test_udp_frame(&p->a_mac, &p->b_mac, 100, 0, false);
		TEST_ASSERT(m != NULL, "frame");
		if (rte_eth_tx_burst(p->a, 0, &m, 1) == 0)
			rte_pktmbuf_free(m);
		n = rte_eth_rx_burst(p->b, 0, rx, RTE_DIM(rx));
		rte_pktmbuf_free_bulk(rx, n);
	}
	/* a send is in B's queue when it returns: nothing more comes */
	while ((n = rte_eth_rx_burst(p->b, 0, rx, RTE_DIM(rx))) > 0)
		rte_pktmbuf_free_bulk(rx, n);
	return 0;
}

/* Send n frames of len bytes A -> B; B must receive the same frames. */
static int
dp_exchange(struct dp_pair *p, uint16_t n, uint32_t len, uint32_t seq0)
{
	struct rte_mbuf *tx[64], *copy[64], *rx[64];
	uint16_t i, sent = 0, got;

	TEST_ASSERT(n <= 64, "at most 64");
	for (i = 0; i < n; i++) {
		tx[i] = test_udp_frame(&p->a_mac, &p->b_mac, len, seq0 + i,
				       false);
		TEST_ASSERT(tx[i] != NULL, "frame");
		copy[i] = rte_pktmbuf_copy(tx[i], test_mempool(), 0,
					   UINT32_MAX);
		TEST_ASSERT(copy[i] != NULL, "copy");
	}
	while (sent < n)
		sent += rte_eth_tx_burst(p->a, 0, tx + sent, n - sent);
	got = test_rx_until(p->b, rx, n, TEST_HANG_MS);
	TEST_ASSERT_EQ(got, n, "frames received");
	for (i = 0; i < n; i++) {
		TEST_ASSERT(test_frames_equal(rx[i], copy[i]),
			    "frame %u differs (len %u vs %u)", i,
			    rx[i]->pkt_len, copy[i]->pkt_len);
		rte_pktmbuf_free(rx[i]);
		rte_pktmbuf_free(copy[i]);
	}
	return 0;
}

static int
dp_ud_then_rc(const char *args)
{
	struct dp_pair p;

	TEST_RUN(dp_open(&p, args, 1500));
	/* the first frames go over UD while A connects */
	TEST_RUN(dp_exchange(&p, 8, 128, 0));
	TEST_ASSERT(test_xstat(p.a, "tx_ud_packets") >= 1, "UD first");
	TEST_RUN(dp_connect(&p));
	TEST_RUN(dp_exchange(&p, 64, 1500, 100));
	TEST_RUN(dp_exchange(&p, 64, 60, 200));
	TEST_ASSERT(test_xstat(p.a, "tx_rc_packets") >= 128, "RC used");
	TEST_ASSERT(test_xstat(p.b, "rx_rc_packets") >= 128, "RC received");
	TEST_ASSERT_EQ(test_xstat(p.b, "conns_rx"), 1, "B accepted one");
	dp_close(&p);
	return 0;
}

static int
test_dp_srq(void)
{
	return dp_ud_then_rc("srq=on");
}
REGISTER_TEST(dp_ud_then_rc_srq, test_dp_srq,
		    "UD, then RC once connected, SRQ receive");

static int
test_dp_nosrq(void)
{
	return dp_ud_then_rc("srq=off");
}
REGISTER_TEST(dp_ud_then_rc_nosrq, test_dp_nosrq,
		    "UD, then RC once connected, non-SRQ receive");

/* 64 KiB-class frames: fragmented on UD, whole on RC (scatter). */
static int
dp_large(const char *args)
{
	struct dp_pair p;
	struct rte_mbuf *m, *rx[64];
	uint16_t got;

	TEST_RUN(dp_open(&p, args, 65520));
	m = test_udp_frame(&p.a_mac, &p.b_mac, 60000, 7, false);
	TEST_ASSERT(m != NULL, "frame");
	TEST_ASSERT(test_tx_one(p.a, 0, m), "sent");
	got = test_rx_until(p.b, rx, 30, TEST_HANG_MS);
	TEST_ASSERT_EQ(got, 30, "60000 bytes in fragments of 2044");
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_frags"), 30, "fragments counted");
	rte_pktmbuf_free_bulk(rx, got);
	TEST_RUN(dp_connect(&p));
	TEST_RUN(dp_exchange(&p, 16, 65534, 300));
	TEST_RUN(dp_exchange(&p, 16, 9014, 400));
	dp_close(&p);
	return 0;
}

static int
test_dp_large_srq(void)
{
	return dp_large("srq=on");
}
REGISTER_TEST(dp_large_srq, test_dp_large_srq,
		    "64 KiB frames: UD fragments, whole on RC, SRQ");

static int
test_dp_large_nosrq(void)
{
	return dp_large("srq=off");
}
REGISTER_TEST(dp_large_nosrq, test_dp_large_nosrq,
		    "64 KiB frames: UD fragments, whole on RC, non-SRQ");

/*
 * Per-peer counters are kept by each queue and summed when read: A sends
 * to B from two tx queues, B receives on both rx queues; each side's
 * count of the other is every frame, once (rte_pmd_ipoibcm_peer_get()).
 */
static int
dp_peer_counts(const char *args)
{
	const uint16_t per_q[2] = { 40, 24 }, total = 40 + 24;
	double deadline;
	struct rte_pmd_ipoibcm_peer info;
	struct rte_mbuf *m, *rx[32];
	struct dp_pair p;
	uint16_t q, i, n, got = 0;

	TEST_RUN(dp_open_q(&p, args, 1500, 2));
	for (q = 0; q < 2; q++)
		for (i = 0; i < per_q[q]; i++) {
			m = test_udp_frame(&p.a_mac, &p.b_mac, 200, i, false);
			TEST_ASSERT(m != NULL, "frame");
			deadline = test_now_ms() + TEST_HANG_MS;
			while (rte_eth_tx_burst(p.a, q, &m, 1) == 0)
				TEST_ASSERT(test_now_ms() < deadline,
					    "queue %u takes a frame", q);
		}
	deadline = test_now_ms() + TEST_HANG_MS;
	while (got < total) {
		TEST_ASSERT(test_now_ms() < deadline, "B received %u of %u",
			    got, total);
		for (q = 0; q < 2; q++) {
			n = rte_eth_rx_burst(p.b, q, rx, RTE_DIM(rx));
			got += n;
			rte_pktmbuf_free_bulk(rx, n);
		}
	}
	TEST_ASSERT_EQ(rte_pmd_ipoibcm_peer_get(p.a, &p.b_mac, &info), 0,
		       "A knows B");
	TEST_ASSERT_EQ(info.tx_rc_packets + info.tx_ud_packets, total,
		       "A sent B %" PRIu64 " + %" PRIu64, info.tx_rc_packets,
		       info.tx_ud_packets);
	TEST_ASSERT_EQ(rte_pmd_ipoibcm_peer_get(p.b, &p.a_mac, &info), 0,
		       "B knows A");
	TEST_ASSERT_EQ(info.rx_packets, got, "B received from A");
	dp_close(&p);
	return 0;
}

static int
test_dp_peer_counts_srq(void)
{
	return dp_peer_counts("srq=on");
}
REGISTER_TEST(dp_peer_counts_srq, test_dp_peer_counts_srq,
		    "per-peer counters summed over two queue pairs, SRQ");

static int
test_dp_peer_counts_nosrq(void)
{
	return dp_peer_counts("srq=off");
}
REGISTER_TEST(dp_peer_counts_nosrq, test_dp_peer_counts_nosrq,
		    "per-peer counters summed over two queue pairs, non-SRQ");

/*
 * B's receive ring at its smallest, frames one at a time, each taken by
 * a burst of one: many laps of the ring, so no repost may be lost (in
 * SRQ mode reposts wait until several are due). Then B restarts with
 * some waiting: its ring is posted anew, and those must not go again.
 * Bursts of 16 frames between: what a ring of the smallest size holds
 * with some reposts waiting (a sender to a full ring is refused).
 */
static int
dp_one_by_one(const char *args)
{
	struct rte_eth_dev_info info;
	struct dp_pair p;
	uint32_t i, k, n;

	TEST_RUN(dp_open(&p, args, 1500));
	TEST_ASSERT_EQ(rte_eth_dev_info_get(p.b, &info), 0, "B's info");
	TEST_ASSERT_EQ(rte_eth_dev_stop(p.b), 0, "B stopped");
	TEST_ASSERT_EQ(rte_eth_rx_queue_setup(p.b, 0,
					      info.rx_desc_lim.nb_min,
					      rte_socket_id(), NULL,
					      test_mempool()), 0,
		       "B's ring of %u", info.rx_desc_lim.nb_min);
	TEST_ASSERT_EQ(rte_eth_dev_start(p.b), 0, "B started");
	n = 8 * info.rx_desc_lim.nb_min + 3;	/* 8 laps, 3 more */
	for (i = 0; i < 2; i++) {
		uint32_t seq = i * 100000;

		TEST_RUN(dp_connect(&p));
		for (k = 0; k < n; k++)
			TEST_RUN(dp_exchange(&p, 1, 100 + k % 64, seq++));
		for (k = 0; k < 4; k++, seq += 16)
			TEST_RUN(dp_exchange(&p, 16, 1500, seq));
		for (k = 0; k < 3; k++)
			TEST_RUN(dp_exchange(&p, 1, 200, seq++));
		TEST_ASSERT_EQ(rte_eth_dev_stop(p.b), 0, "B stopped");
		TEST_ASSERT_EQ(rte_eth_dev_start(p.b), 0, "B started");
	}
	dp_close(&p);
	return 0;
}

static int
test_dp_one_by_one_srq(void)
{
	return dp_one_by_one("srq=on");
}
REGISTER_TEST(dp_one_by_one_srq, test_dp_one_by_one_srq,
		    "the smallest ring, bursts of one, a restart; SRQ");

static int
test_dp_one_by_one_nosrq(void)
{
	return dp_one_by_one("srq=off");
}
REGISTER_TEST(dp_one_by_one_nosrq, test_dp_one_by_one_nosrq,
		    "the smallest ring, bursts of one, a restart; non-SRQ");
