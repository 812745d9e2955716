/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Bad input to the non-SRQ memory budget: a budget smaller than one
 * connection's ring, a reconfiguration that makes each ring larger than
 * the budget, an application that never gives mbufs back. The port (A,
 * port 0 of test_net) keeps serving its peer over UD, counts what it
 * refused (REJ 3), and never holds more than its budget.
 */

#include <inttypes.h>
#include <stdio.h>

#include <rte_ethdev.h>

#include "test.h"
#include "test_net.h"
#include "test_util.h"

#define BG_HELD		8

static const unsigned int bg_peer[] = { 1 };

/* What A holds of its budget: connections, and pools the app keeps. */
static int
bg_within_budget(uint16_t port)
{
	uint64_t used = test_xstat(port, "mem_used_bytes");
	uint64_t held = test_xstat(port, "mem_app_held_bytes");
	uint64_t budget = test_xstat(port, "mem_budget_bytes");

	printf("    used %" PRIu64 " + held by the application %" PRIu64
	       " of %" PRIu64 "\n", used, held, budget);
	TEST_ASSERT(used + held <= budget, "budget exceeded");
	return 0;
}

/* The peer connects to A and is refused; it is served over UD. */
static int
bg_refused_served(struct test_net *net, uint32_t *seq)
{
	uint64_t rej = test_xstat(net->port[0], "rej_sent_reason_3");

	TEST_ASSERT(test_net_until(net, bg_peer, 1, net->port[0],
				   "rej_sent_reason_3", rej + 1, false,
				   seq) == 0, "A refused a connection (REJ 3)");
	TEST_RUN(test_net_rounds(net, bg_peer, 1, 10, *seq));
	*seq += 10;
	TEST_ASSERT(test_xstat(net->port[1], "tx_ud_packets") > 0,
		    "the peer sends over UD");
	return bg_within_budget(net->port[0]);
}

/* The bytes one non-SRQ connection of A charges at MTU 1500. */
static int
bg_per_conn(uint64_t *per_conn)
{
	struct test_net net;
	uint32_t seq = 0;

	TEST_RUN(test_net_open(&net, "t_bg_one", "srq=off", "", 1));
	TEST_ASSERT(test_net_until(&net, bg_peer, 1, net.port[0], "conns_rx",
				   1, true, &seq) == 0, "A accepted one");
	*per_conn = test_xstat(net.port[0], "mem_used_bytes");
	test_net_close(&net);
	TEST_ASSERT(*per_conn > 0, "charged");
	return 0;
}

/* A budget that fits one connection's ring (and a half), not two. */
static int
bg_open_one(struct test_net *net, const char *name, uint32_t *seq)
{
	char args[128];
	uint64_t per_conn;

	TEST_RUN(bg_per_conn(&per_conn));
	snprintf(args, sizeof(args), "srq=off,mem_budget=%" PRIu64,
		 per_conn * 3 / 2);
	TEST_RUN(test_net_open(net, name, args, "", 1));
	TEST_ASSERT(test_net_until(net, bg_peer, 1, net->port[0], "conns_rx",
				   1, true, seq) == 0, "A accepted one");
	TEST_ASSERT(test_net_until(net, bg_peer, 1, net->port[1],
				   "conns_tx_connected", 1, true, seq) == 0,
		    "the peer connected to A");
	return bg_within_budget(net->port[0]);
}

static int
test_budget_below_ring(void)
{
	struct test_net net;
	uint32_t seq = 0;

	TEST_RUN(test_net_open(&net, "t_bg_below", "srq=off,mem_budget=64K",
			       "", 1));
	TEST_RUN(bg_refused_served(&net, &seq));
	TEST_ASSERT_EQ(test_xstat(net.port[0], "conns_rx"), 0, "");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "mem_used_bytes"), 0, "");
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(budget_below_ring, test_budget_below_ring,
	      "mem_budget below one connection's ring: served over UD");

static int
test_budget_reconfigure(void)
{
	struct test_net net;
	uint32_t seq = 0;

	TEST_RUN(bg_open_one(&net, "t_bg_reconf", &seq));
	/* a 9000-byte MTU: one ring is now more than the budget */
	TEST_ASSERT_EQ(rte_eth_dev_stop(net.port[0]), 0, "");
	TEST_RUN(test_port_setup(net.port[0], 1, 9000));
	TEST_RUN(bg_refused_served(&net, &seq));
	TEST_ASSERT_EQ(test_xstat(net.port[0], "conns_rx"), 0, "");
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(budget_reconfigure, test_budget_reconfigure,
	      "a reconfiguration past mem_budget: refused, served over UD");

static int
test_budget_app_holds(void)
{
	struct rte_mbuf *held[BG_HELD];
	struct test_net net;
	uint32_t seq = 0;
	double deadline;
	unsigned int i;

	TEST_RUN(bg_open_one(&net, "t_bg_holds", &seq));
	/* the peer sends over its connection; A's application keeps it all */
	for (i = 0; i < BG_HELD; i++) {
		struct rte_mbuf *m = test_udp_frame(&net.mac[1], &net.mac[0],
						    1000, i, false);

		TEST_ASSERT(m != NULL, "");
		TEST_ASSERT(test_tx_one(net.port[1], 0, m), "");
	}
	TEST_ASSERT_EQ(test_rx_until(net.port[0], held, BG_HELD, TEST_HANG_MS),
		       BG_HELD, "A receives");
	TEST_ASSERT(test_xstat(net.port[0], "rx_rc_packets") >= BG_HELD, "");
	/* the connection goes; its pool stays, for the mbufs A holds */
	TEST_ASSERT(rte_pmd_ipoibcm_peer_disconnect(net.port[0], &net.mac[1])
		    > 0, "");
	deadline = test_now_ms() + TEST_HANG_MS;
	while (test_xstat(net.port[0], "mem_app_held_pools") == 0) {
		TEST_ASSERT(test_now_ms() < deadline, "the pool waits");
		test_net_poll(&net);
	}
	TEST_RUN(bg_refused_served(&net, &seq));
	/* given back: the pool goes, and the peer connects again */
	rte_pktmbuf_free_bulk(held, BG_HELD);
	TEST_ASSERT(test_net_until(&net, bg_peer, 1, net.port[0], "conns_rx",
				   1, true, &seq) == 0, "A accepts again");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "mem_app_held_pools"), 0, "");
	TEST_RUN(bg_within_budget(net.port[0]));
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(budget_app_holds, test_budget_app_holds,
	      "an application that keeps its mbufs: budget held, UD served");
