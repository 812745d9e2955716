/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * perf_connect: connection setups per second on the shm fabric. One at a
 * time (A connects to B, disconnects, again: the latency of REQ, REP and
 * RTU through two control threads) and sixteen at once (A connects to 16
 * peers, disconnects them all, again). A figure, not a check: it passes
 * whenever each round makes exactly one connection per peer. Devargs in
 * IPOIBCM_PERF_CONN_DEVARGS are added to every port's (the bench's
 * layouts, devtools/benchlib/setups.py).
 */

#include <stdio.h>
#include <stdlib.h>

#include <rte_ethdev.h>

#include "test.h"
#include "test_net.h"
#include "test_util.h"

#define PERF_CONN_WINDOWS	5
#define PERF_CONN_WINDOW_MS	1000

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One round: connect to peers 1..np at once, then disconnect them. */
static int
perf_conn_round(struct test_net *net, uint32_t seq)
{
	uint64_t before[TEST_NET_MAX_PEERS + 1];
	struct rte_mbuf *m;
	unsigned int p;

	/* a frame to each starts every connect before waiting for one */
	for (p = 1; p <= net->n; p++) {
		before[p] = test_xstat(net->port[p],
				       "conn_established_passive");
		m = test_udp_frame(&net->mac[0], &net->mac[p], 100, seq,
				   false);
		TEST_ASSERT(m != NULL, "frame");
		if (rte_eth_tx_burst(net->port[0], 0, &m, 1) == 0)
			rte_pktmbuf_free(m);
	}
	for (p = 1; p <= net->n; p++)
		TEST_RUN(test_net_connect(net, p, before[p], seq));
	for (p = 1; p <= net->n; p++)
		TEST_ASSERT(rte_pmd_ipoibcm_peer_disconnect(net->port[0],
							    &net->mac[p]) >= 1,
			    "round %u: %u disconnected", seq, p);
	return 0;
}

static int
perf_conn_run(const char *srq, unsigned int np)
{
	double rate[PERF_CONN_WINDOWS];
	uint64_t rounds = 0, reuses = 0, t0, ms;
	const char *extra = getenv("IPOIBCM_PERF_CONN_DEVARGS");
	struct test_net net;
	char args[128];
	unsigned int w;

	snprintf(args, sizeof(args), "srq=%s%s%s", srq,
		 extra != NULL ? "," : "", extra != NULL ? extra : "");
	TEST_RUN(test_net_open(&net, "t_perf_conn", args, args, np));
	TEST_RUN(perf_conn_round(&net, 0));	/* warm-up */
	rounds++;
	for (w = 0; w < PERF_CONN_WINDOWS; w++) {
		uint64_t r0 = rounds;

		t0 = test_now_ms();
		do {
			TEST_RUN(perf_conn_round(&net, (uint32_t)rounds));
			rounds++;
		} while ((ms = test_now_ms() - t0) < PERF_CONN_WINDOW_MS);
		rate[w] = (double)((rounds - r0) * np) * 1000.0 / (double)ms;
	}
	TEST_ASSERT_EQ(test_xstat(net.port[0], "conn_established_active"),
		       rounds * np, "one connection per peer per round");
	for (w = 1; w <= np; w++)
		reuses += test_xstat(net.port[w], "conn_pool_reuses");
	qsort(rate, PERF_CONN_WINDOWS, sizeof(rate[0]), cmp_double);
	printf("    srq=%-3s %2u peer(s) at once: median %.0f setups/s "
	       "(windows %.0f..%.0f), %" PRIu64 " connections, %" PRIu64
	       " on a kept pool\n", srq, np,
	       rate[PERF_CONN_WINDOWS / 2], rate[0],
	       rate[PERF_CONN_WINDOWS - 1], rounds * np, reuses);
	test_net_close(&net);
	return 0;
}

static int
test_perf_connect(void)
{
	TEST_RUN(perf_conn_run("on", 1));
	TEST_RUN(perf_conn_run("on", TEST_NET_MAX_PEERS));
	TEST_RUN(perf_conn_run("off", 1));
	return perf_conn_run("off", TEST_NET_MAX_PEERS);
}
REGISTER_TEST(perf_connect, test_perf_connect,
		    "figures: connection setups per second, 1 and 16 at once");
