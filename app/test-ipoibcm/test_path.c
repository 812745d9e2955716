/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Path records asked without waiting (issue 14 items 2, 4, 5): with
 * shm_sa_path=on a port needs a peer's path from the fabric's subnet
 * administrator before it can make the peer's address handle, as on
 * InfiniBand (ipoib_path.c). The query is posted by the control thread,
 * which goes on with its other work; frames to the peer wait for the
 * answer (ipoib_tx_held.c) and then go, in order. A query the SA never
 * answers (fault sa_drop) times out after path_timeout: the frames that
 * waited are dropped and counted, and a later frame asks again.
 */

#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "rte_pmd_ipoib_cm.h"
#include "test.h"
#include "test_util.h"

/* first frames: more than a burst the control thread takes at once */
#define PATH_FRAMES	300
#define PATH_REPLIES	100
/* how long one frame is given to arrive while B's path may be asked */
#define PATH_TRY_MS	300

struct path_pair {
	char an[32], bn[32];
	uint16_t a, b;
	struct rte_ether_addr amac, bmac;
};

/* A and B on one fabric, both asking the SA for paths; a_args: A's more. */
static int
path_open(struct path_pair *p, const char *tag, const char *a_args,
	  const char *srq)
{
	const char *fab = test_fabric(tag);
	char args[200];

	snprintf(p->an, sizeof(p->an), "net_ipoibcm_%sa", tag);
	snprintf(p->bn, sizeof(p->bn), "net_ipoibcm_%sb", tag);
	snprintf(args, sizeof(args), "fabric=%s,guid=0xa,shm_sa_path=on,"
		 "srq=%s%s", fab, srq, a_args);
	TEST_RUN(test_port_create(p->an, args, 1, 1500, &p->a));
	/* B refuses connections: A's frames go over UD, in posted order */
	snprintf(args, sizeof(args), "fabric=%s,guid=0xb,shm_sa_path=on,"
		 "srq=%s,shm_cm_listen=none", fab, srq);
	TEST_RUN(test_port_create(p->bn, args, 1, 1500, &p->b));
	rte_eth_macaddr_get(p->a, &p->amac);
	rte_eth_macaddr_get(p->b, &p->bmac);
	return 0;
}

static void
path_close(struct path_pair *p)
{
	test_port_destroy(p->bn);
	test_port_destroy(p->an);
}

static int
path_sa_drop(uint16_t port, uint32_t ppm)
{
	struct rte_pmd_ipoibcm_faults f;

	TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_get(port, &f), 0, "faults");
	f.sa_drop_ppm = ppm;
	TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_set(port, &f), 0, "sa_drop");
	return 0;
}

/*
 * Frames seq from..to-1 from src to dst in bursts back to back, what a
 * burst gives back sent again.
 */
static int
path_send(uint16_t port, const struct rte_ether_addr *src,
	  const struct rte_ether_addr *dst, uint32_t from, uint32_t to)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;
	struct rte_mbuf *m[32];
	uint16_t n, k, sent;

	for (; from < to; from += n) {
		n = (uint16_t)RTE_MIN(to - from, (uint32_t)RTE_DIM(m));
		for (k = 0; k < n; k++) {
			m[k] = test_udp_frame(src, dst, 200, from + k, false);
			if (m[k] == NULL) {
				rte_pktmbuf_free_bulk(m, k);
				TEST_ASSERT(false, "frame");
			}
		}
		for (sent = 0; sent < n && test_now_ms() < deadline;)
			sent += rte_eth_tx_burst(port, 0, m + sent, n - sent);
		if (sent < n) {
			rte_pktmbuf_free_bulk(m + sent, n - sent);
			TEST_ASSERT(false, "frame %u not taken", from + sent);
		}
	}
	return 0;
}

/*
 * First contact both ways: A sends to B's MAC, unknown to it; its frames
 * wait for B's path, then all arrive in order. B learns A from them and
 * answers: its handle for A needs a path too. Each side asked the SA.
 */
static int
path_order(const char *tag, const char *srq)
{
	struct path_pair p;

	TEST_RUN(path_open(&p, tag, "", srq));
	TEST_RUN(path_send(p.a, &p.amac, &p.bmac, 0, PATH_FRAMES));
	TEST_RUN(test_expect_seq(p.b, 0, PATH_FRAMES));
	/* over RC (A takes connections): fewer than A's receive buffers */
	TEST_RUN(path_send(p.b, &p.bmac, &p.amac, 0, PATH_REPLIES));
	TEST_RUN(test_expect_seq(p.a, 0, PATH_REPLIES));
	TEST_ASSERT(test_wait_held(p.a), "A: every held frame sent");
	TEST_ASSERT(test_wait_held(p.b), "B: every held frame sent");
	printf("    srq=%s: A asked %" PRIu64 " paths, B %" PRIu64 "; A held "
	       "%" PRIu64 " frames\n", srq, test_xstat(p.a, "path_queries"),
	       test_xstat(p.b, "path_queries"), test_xstat(p.a, "tx_held"));
	TEST_ASSERT(test_xstat(p.a, "path_queries") >= 1, "A asked the SA");
	TEST_ASSERT(test_xstat(p.b, "path_queries") >= 1, "B asked the SA");
	TEST_ASSERT_EQ(test_xstat(p.a, "path_failures") +
		       test_xstat(p.a, "path_timeouts"), 0, "A: all answered");
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_drop_no_neigh"), 0, "none lost");
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_ud_packets"), PATH_FRAMES, "UD");
	path_close(&p);
	return 0;
}

static int
test_path_sa_order(void)
{
	TEST_RUN(path_order("pso", "on"));
	return path_order("psf", "off");
}
REGISTER_TEST(path_sa_order, test_path_sa_order,
	      "paths from the SA: first frames wait, all go in order");

/*
 * The SA loses A's query (fault sa_drop) and the timeout is far: A's
 * frames to B wait, and meanwhile A's control thread is not stuck on the
 * query: C connects to A over RC and its frames arrive. Stopping A ends
 * the wait: the frames are dropped and counted, none is left held.
 */
static int
test_path_sa_lost(void)
{
	struct rte_ether_addr cmac;
	struct rte_eth_stats st;
	struct path_pair p;
	struct rte_mbuf *rx[32];
	char args[160];
	uint16_t c, n;

	TEST_RUN(path_open(&p, "psl", ",path_timeout=600000", "on"));
	TEST_RUN(path_sa_drop(p.a, 1000000));
	TEST_RUN(path_send(p.a, &p.amac, &p.bmac, 0, 100));
	TEST_ASSERT(test_wait_xstat(p.a, "path_queries", 1, TEST_HANG_MS),
		    "A asked for B's path");
	snprintf(args, sizeof(args), "fabric=%s,guid=0xc", test_fabric("psl"));
	TEST_RUN(test_port_create("net_ipoibcm_pslc", args, 1, 1500, &c));
	rte_eth_macaddr_get(c, &cmac);
	TEST_RUN(path_send(c, &cmac, &p.amac, 0, 20));
	TEST_ASSERT(test_wait_xstat(p.a, "conn_established_passive", 1,
				    TEST_HANG_MS),
		    "A accepted C's connection while its query was out");
	for (n = 0; n < 20;) {
		uint16_t k = test_rx_until(p.a, rx, 20 - n, TEST_HANG_MS);

		TEST_ASSERT(k > 0, "C's frames reach A");
		rte_pktmbuf_free_bulk(rx, k);
		n += k;
	}
	TEST_ASSERT_EQ(test_xstat(p.a, "path_timeouts") +
		       test_xstat(p.a, "path_failures"), 0,
		       "B's query still out");
	TEST_ASSERT_EQ(rte_eth_rx_burst(p.b, 0, rx, RTE_DIM(rx)), 0,
		       "nothing reached B");
	TEST_ASSERT(test_xstat(p.a, "tx_held_done") <
		    test_xstat(p.a, "tx_held"), "A's frames to B wait");
	TEST_ASSERT_EQ(rte_eth_dev_stop(p.a), 0, "stop A");
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_held_done"),
		       test_xstat(p.a, "tx_held"), "nothing left held");
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_drop_no_neigh"), 100,
		       "the 100 frames to B dropped, counted");
	TEST_ASSERT_EQ(rte_eth_stats_get(p.a, &st), 0, "stats");
	printf("    stopped: %" PRIu64 " dropped, opackets %" PRIu64 "\n",
	       test_xstat(p.a, "tx_drop_no_neigh"), st.opackets);
	test_port_destroy("net_ipoibcm_pslc");
	path_close(&p);
	return 0;
}
REGISTER_TEST(path_sa_lost, test_path_sa_lost,
	      "a lost path query: the control thread goes on; stop drops what waits");

/*
 * The SA loses A's query; after path_timeout A gives up: the frames that
 * waited are dropped and counted. The SA heals: a later frame asks again,
 * and what follows arrives, in order.
 */
static int
test_path_sa_timeout(void)
{
	struct rte_mbuf *m;
	struct path_pair p;
	uint32_t seq = 50;

	TEST_RUN(path_open(&p, "pst", ",path_timeout=100", "on"));
	TEST_RUN(path_sa_drop(p.a, 1000000));
	TEST_RUN(path_send(p.a, &p.amac, &p.bmac, 0, 50));
	TEST_ASSERT(test_wait_xstat(p.a, "path_timeouts", 1, TEST_HANG_MS),
		    "A's query timed out");
	TEST_ASSERT(test_wait_xstat(p.a, "tx_drop_no_neigh", 50,
				    TEST_HANG_MS), "the 50 dropped, counted");
	TEST_ASSERT(test_wait_held(p.a), "nothing left held");
	TEST_ASSERT_EQ(rte_eth_rx_burst(p.b, 0, &m, 1), 0, "none reached B");
	TEST_RUN(path_sa_drop(p.a, 0));
	/* one frame at a time until one arrives: then the path is there */
	for (;;) {
		TEST_RUN(path_send(p.a, &p.amac, &p.bmac, seq, seq + 1));
		seq++;
		if (test_rx_until(p.b, &m, 1, PATH_TRY_MS) == 1)
			break;
		TEST_ASSERT(seq < 50 + TEST_HANG_MS / PATH_TRY_MS,
			    "B's path never came");
	}
	/* the frames sent after the first to arrive follow it, in order */
	while (*rte_pktmbuf_mtod_offset(m, uint8_t *, TEST_SEQ_OFF) !=
	       (uint8_t)(seq - 1 + TEST_SEQ_OFF)) {
		rte_pktmbuf_free(m);
		TEST_ASSERT_EQ(test_rx_until(p.b, &m, 1, TEST_HANG_MS), 1,
			       "frame %u, the last sent, never came", seq - 1);
	}
	rte_pktmbuf_free(m);
	TEST_RUN(path_send(p.a, &p.amac, &p.bmac, seq, seq + 100));
	TEST_RUN(test_expect_seq(p.b, seq, seq + 100));
	printf("    %" PRIu64 " timeouts, %" PRIu64 " queries, %" PRIu64
	       " frames dropped\n", test_xstat(p.a, "path_timeouts"),
	       test_xstat(p.a, "path_queries"),
	       test_xstat(p.a, "tx_drop_no_neigh"));
	TEST_ASSERT(test_xstat(p.a, "path_queries") >= 2, "asked again");
	path_close(&p);
	return 0;
}
REGISTER_TEST(path_sa_timeout, test_path_sa_timeout,
	      "a path query never answered: dropped and counted, then asked again");
