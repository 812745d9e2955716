/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The connection manager, through the ethdev API and xstats, with many
 * ports of one process on one fabric: spilling beyond max_conns without
 * losing a frame, REJ on a full passive side, the memory budget, reaping
 * and promotion, a peer that goes away and comes back.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "test.h"
#include "test_net.h"
#include "test_util.h"


/* max_conns=4 and 16 peers: 4 on RC, 12 on UD, every reply arrives. */
static int
test_cm_spill(void)
{
	unsigned int all[TEST_NET_MAX_PEERS], i;
	struct test_net net;
	uint32_t seq = 20;

	for (i = 0; i < TEST_NET_MAX_PEERS; i++)
		all[i] = i + 1;
	TEST_RUN(test_net_open(&net, "t_cm_spill", "max_conns=4",
			       "max_conns=64", TEST_NET_MAX_PEERS));
	TEST_RUN(test_net_rounds(&net, all, TEST_NET_MAX_PEERS, 20, 0));
	TEST_ASSERT(test_net_until(&net, all, TEST_NET_MAX_PEERS, net.port[0],
				   "conns_tx_connected", 4, true, &seq) == 0,
		    "4 peers on RC");
	TEST_ASSERT(test_net_until(&net, all, TEST_NET_MAX_PEERS, net.port[0],
				   "peers_spilled", 12, true, &seq) == 0,
		    "12 peers spilled to UD");
	/* the peers connect to A too: A's passive side takes 4 */
	TEST_ASSERT(test_net_until(&net, all, TEST_NET_MAX_PEERS, net.port[0],
				   "conns_rx", 4, true, &seq) == 0,
		    "A accepted 4");
	TEST_RUN(test_net_rounds(&net, all, TEST_NET_MAX_PEERS, 50, seq));
	seq += 50;
	/* each of the 12 others has a REQ out or in backoff: REJ 1 for all */
	TEST_ASSERT(test_net_until(&net, all, TEST_NET_MAX_PEERS, net.port[0],
				   "rej_sent_reason_1", 12, false, &seq) == 0,
		    "the others got REJ reason 1 (no QP)");
	TEST_ASSERT(test_xstat(net.port[0], "tx_rc_packets") >= 4 * 50,
		    "RC carries the connected peers' frames");
	TEST_ASSERT(test_xstat(net.port[0], "tx_ud_packets") >= 12 * 50,
		    "UD carries the spilled peers' frames");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "tx_drop_no_neigh"), 0,
		       "no frame dropped");
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(cm_spill, test_cm_spill,
		    "max_conns=4, 16 peers: 4 on RC, 12 on UD, no loss");

/* A full passive side refuses with REJ reason 1; the requester spills. */
static int
test_cm_passive_full(void)
{
	unsigned int peer = 1;
	struct test_net net;
	uint32_t seq = 5;

	/* A is the passive one here: it allows one connection */
	TEST_RUN(test_net_open(&net, "t_cm_full", "max_conns=1", "", 2));
	/* peers 1 and 2 send to A (their replies in cm_round) */
	TEST_RUN(test_net_rounds(&net, &peer, 1, 5, 0));
	TEST_ASSERT(test_net_until(&net, &peer, 1, net.port[1],
				   "conns_tx_connected", 1, true, &seq) == 0,
		    "peer 1 connected to A");
	peer = 2;
	TEST_RUN(test_net_rounds(&net, &peer, 1, 5, seq));
	seq += 5;
	TEST_ASSERT(test_net_until(&net, &peer, 1, net.port[2],
				   "rej_rcvd_reason_1", 1, false, &seq) == 0,
		    "peer 2 got REJ reason 1");
	TEST_ASSERT(test_wait_xstat(net.port[2], "peers_spilled", 1,
				    TEST_HANG_MS), "peer 2 spilled A");
	TEST_ASSERT(test_xstat(net.port[0], "rej_sent_reason_1") >= 1,
		    "A counted the REJ it sent");
	TEST_RUN(test_net_rounds(&net, &peer, 1, 20, seq));	/* still served */
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(cm_passive_full, test_cm_passive_full,
		    "a full passive side sends REJ 1; the requester spills");

/* REJ every REQ (fault): retried with backoff, served over UD meanwhile. */
static int
test_cm_rejected(void)
{
	unsigned int peer = 1;
	struct test_net net;
	uint32_t seq = 10;

	TEST_RUN(test_net_open(&net, "t_cm_rej",
			       "retry_min=20,retry_max=80", "fault_rej=all", 1));
	TEST_RUN(test_net_rounds(&net, &peer, 1, 10, 0));
	TEST_ASSERT(test_net_until(&net, &peer, 1, net.port[0],
				   "rej_rcvd_reason_3", 1, false, &seq) == 0,
		    "REJ reason 3 received");
	TEST_ASSERT(test_wait_xstat(net.port[0], "peers_spilled", 1,
				    TEST_HANG_MS), "spilled");
	/* keep talking: the backoff expires, A retries, is refused again */
	TEST_ASSERT(test_net_until(&net, &peer, 1, net.port[0], "conn_retries",
				   2, false, &seq) == 0, "retried");
	TEST_ASSERT(test_xstat(net.port[0], "rej_rcvd_reason_3") >= 2,
		    "refused again");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "conns_tx_connected"), 0,
		       "never connected");
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(cm_rejected, test_cm_rejected,
		    "REJ on every REQ: backoff retries, no frame lost");

/* Non-SRQ: a budget that fits 3 connections makes the 4th spill. */
static int
test_cm_budget(void)
{
	unsigned int peers[4] = { 1, 2, 3, 4 }, i;
	char a_args[128];
	struct test_net net;
	uint64_t per_conn;
	uint32_t seq = 3;

	/* one connection first, to learn what one costs */
	TEST_RUN(test_net_open(&net, "t_cm_budget1", "srq=off", "", 1));
	TEST_RUN(test_net_rounds(&net, peers, 1, 3, 0));
	TEST_ASSERT(test_net_until(&net, peers, 1, net.port[0], "conns_rx", 1,
				   true, &seq) == 0, "A accepted one");
	per_conn = test_xstat(net.port[0], "mem_used_bytes");
	TEST_ASSERT(per_conn > 0 && per_conn < UINT64_MAX, "charged");
	printf("    one non-SRQ connection charges %" PRIu64 " bytes\n",
	       per_conn);
	test_net_close(&net);

	snprintf(a_args, sizeof(a_args), "srq=off,mem_budget=%" PRIu64,
		 per_conn * 7 / 2);
	TEST_RUN(test_net_open(&net, "t_cm_budget", a_args, "", 4));
	for (i = 0; i < 4; i++) {
		TEST_RUN(test_net_rounds(&net, &peers[i], 1, 3, seq));
		seq += 3;
		TEST_ASSERT(test_net_until(&net, &peers[i], 1,
					   net.port[peers[i]],
					   i < 3 ? "conns_tx_connected" :
					   "rej_rcvd_reason_3", 1, false,
					   &seq) == 0,
			    "peer %u %s", peers[i],
			    i < 3 ? "connected" : "refused: no resources");
	}
	TEST_ASSERT_EQ(test_xstat(net.port[0], "conns_rx"), 3, "3 accepted");
	TEST_ASSERT(test_xstat(net.port[0], "mem_used_bytes") +
		    test_xstat(net.port[0], "mem_spare_bytes") <=
		    test_xstat(net.port[0], "mem_budget_bytes"),
		    "budget never exceeded, spare pools included");
	TEST_RUN(test_net_rounds(&net, peers, 4, 10, seq));	/* all served */
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(cm_budget, test_cm_budget,
		    "non-SRQ mem_budget fits 3: the 4th is refused, served");

/*
 * A disconnects from B; poll until neither holds a connection any more
 * and B's spare pools come to spare bytes.
 */
static int
close_and_wait(struct test_net *net, uint64_t spare)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS, left;

	TEST_ASSERT(rte_pmd_ipoibcm_peer_disconnect(net->port[0],
						    &net->mac[1]) >= 1,
		    "disconnected");
	do {
		test_net_poll(net);
		left = (test_xstat(net->port[1], "mem_spare_bytes") != spare) +
		       test_net_conn_slots(net);
	} while (left > 0 && test_now_ms() < deadline);
	TEST_ASSERT_EQ(left, 0, "connections freed, spare pools as expected");
	TEST_ASSERT_EQ(test_xstat(net->port[1], "mem_used_bytes"), 0,
		       "nothing charged");
	return 0;
}

/*
 * Non-SRQ: a torn-down connection's pool serves the next, then goes. A
 * (SRQ) connects to B (non-SRQ), frames one way: B's passive connections
 * are the only ones with a pool.
 */
static int
test_cm_spare_pool(void)
{
	struct test_net net;
	uint64_t per_conn;

	TEST_RUN(test_net_open(&net, "t_cm_spare", "", "srq=off", 1));
	TEST_RUN(test_net_connect(&net, 1, 0, 0));
	per_conn = test_xstat(net.port[1], "mem_used_bytes");
	TEST_ASSERT(per_conn > 0 && per_conn < UINT64_MAX, "charged");
	TEST_ASSERT_EQ(test_xstat(net.port[1], "mem_spare_bytes"), 0,
		       "no spare yet");
	/* the pool, idle once the connection is gone, is kept */
	TEST_RUN(close_and_wait(&net, per_conn));
	/* A connects again: the same pool, no new one */
	TEST_RUN(test_net_connect(&net, 1, 1, 1));
	TEST_ASSERT_EQ(test_xstat(net.port[1], "conn_pool_reuses"), 1,
		       "the spare pool reused");
	TEST_ASSERT_EQ(test_xstat(net.port[1], "mem_used_bytes"), per_conn,
		       "charged as before");
	TEST_ASSERT_EQ(test_xstat(net.port[1], "mem_spare_bytes"), 0,
		       "the spare taken");
	/* closed again: kept, then freed after a second unused */
	TEST_RUN(close_and_wait(&net, 0));
	TEST_ASSERT_EQ(test_xstat(net.port[1], "conn_pool_reuses"), 1,
		       "no other reuse");
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(cm_spare_pool, test_cm_spare_pool,
		    "non-SRQ: an idle pool serves the next connection, then goes");

/*
 * Non-SRQ: a teardown gives its ring back as flush completions, which one
 * burst of the application takes all of (they fill none of its mbufs),
 * and the control thread then keeps the pool with no further poll.
 */
static int
test_cm_flush_burst(void)
{
	struct rte_mbuf *rx[32];
	struct rte_eth_rxq_info qi;
	uint64_t per_conn, flushed;
	struct test_net net;
	uint16_t n;

	TEST_RUN(test_net_open(&net, "t_cm_flush", "", "srq=off", 1));
	TEST_RUN(test_net_connect(&net, 1, 0, 0));
	/*
	 * The frames that made the connection, over UD or held and sent
	 * over it, are taken first: left queued, they filled the burst
	 * below instead of the flushes (3 runs in 20).
	 */
	TEST_ASSERT(test_wait_held(net.port[0]), "held frames sent");
	while ((n = rte_eth_rx_burst(net.port[1], 0, rx, RTE_DIM(rx))) > 0)
		rte_pktmbuf_free_bulk(rx, n);
	per_conn = test_xstat(net.port[1], "mem_used_bytes");
	flushed = test_xstat(net.port[1], "rx_flushed_wrs");
	TEST_ASSERT(rte_pmd_ipoibcm_peer_disconnect(net.port[0],
						    &net.mac[1]) >= 1,
		    "disconnected");
	/* B has taken the DREQ: its QP is in error, its ring flushed */
	TEST_ASSERT(test_wait_xstat(net.port[1], "conns_rx", 0, TEST_HANG_MS),
		    "B closed its side");
	TEST_ASSERT(rte_eth_rx_queue_info_get(net.port[1], 0, &qi) == 0, "");
	n = rte_eth_rx_burst(net.port[1], 0, rx, RTE_DIM(rx));
	rte_pktmbuf_free_bulk(rx, n);
	/* a connection's ring is the queue's size */
	TEST_ASSERT(test_xstat(net.port[1], "rx_flushed_wrs") - flushed >=
		    qi.nb_desc,
		    "one burst took the whole ring (%" PRIu64 " flushed)",
		    test_xstat(net.port[1], "rx_flushed_wrs") - flushed);
	/* no poll from here on */
	TEST_ASSERT(test_wait_xstat(net.port[1], "mem_spare_bytes", per_conn,
				    TEST_HANG_MS),
		    "the pool kept without another poll");
	TEST_ASSERT_EQ(test_xstat(net.port[1], "conn_slots_used"), 0,
		       "the connection gone");
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(cm_flush_burst, test_cm_flush_burst,
	      "non-SRQ: one burst takes a torn-down ring; the pool is kept");

/*
 * xstats by id, as an application polling a few counters asks them, give
 * what the whole set gives; an id past the end is an error.
 */
static int
test_cm_xstats_by_id(void)
{
	static const char *const names[] = {
		"conn_established_active", "rx_good_packets", "peers",
		"conns_tx_connected", "mem_budget_bytes", "mem_heap_bytes",
	};
	uint64_t ids[RTE_DIM(names)], one[RTE_DIM(names)];
	uint64_t all[RTE_DIM(names)], bad;
	struct rte_eth_xstat *xs;
	struct test_net net;
	unsigned int i;
	int nb;

	TEST_RUN(test_net_open(&net, "t_cm_xid", "", "", 1));
	TEST_RUN(test_net_rounds(&net, (const unsigned int[]){ 1 }, 1, 3, 0));
	TEST_ASSERT(test_wait_xstat(net.port[0], "conns_tx_connected", 1,
				    TEST_HANG_MS), "connected");
	nb = rte_eth_xstats_get(net.port[0], NULL, 0);
	TEST_ASSERT(nb > 0, "xstats");
	xs = calloc((size_t)nb, sizeof(*xs));
	TEST_ASSERT(xs != NULL, "");
	for (i = 0; i < RTE_DIM(names); i++) {
		TEST_ASSERT(rte_eth_xstats_get_id_by_name(net.port[0],
			    names[i], &ids[i]) == 0, "%s", names[i]);
		TEST_ASSERT(rte_eth_xstats_get_by_id(net.port[0], &ids[i],
						     &one[i], 1) == 1, "");
	}
	TEST_ASSERT(rte_eth_xstats_get_by_id(net.port[0], ids, all,
					     RTE_DIM(ids)) ==
		    (int)RTE_DIM(ids), "by ids");
	TEST_ASSERT(rte_eth_xstats_get(net.port[0], xs, nb) == nb, "all");
	for (i = 0; i < RTE_DIM(names); i++) {
		/* nothing moves meanwhile but the heap (telemetry, logs) */
		if (strcmp(names[i], "mem_heap_bytes") == 0) {
			TEST_ASSERT(one[i] > 0 && all[i] > 0, "%s", names[i]);
			continue;
		}
		TEST_ASSERT(one[i] == xs[ids[i]].value &&
			    all[i] == xs[ids[i]].value,
			    "%s: %" PRIu64 " / %" PRIu64 " by id, %" PRIu64,
			    names[i], one[i], all[i], xs[ids[i]].value);
	}
	TEST_ASSERT(one[2] >= 1 && one[3] == 1, "gauges by id");
	bad = (uint64_t)nb;
	TEST_ASSERT(rte_eth_xstats_get_by_id(net.port[0], &bad, &one[0],
					     1) < 0, "an id past the end");
	free(xs);
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(cm_xstats_by_id, test_cm_xstats_by_id,
	      "xstats by id equal the whole set's; gauges too");

/* Idle connections are reaped; a busy spilled peer is then promoted. */
static int
test_cm_reap_promote(void)
{
	unsigned int first[2] = { 1, 2 }, third = 3;
	struct test_net net;
	uint32_t seq = 5;

	TEST_RUN(test_net_open(&net, "t_cm_reap", "max_conns=2,reap_idle=1",
			       "", 3));
	TEST_RUN(test_net_rounds(&net, first, 2, 5, 0));
	TEST_ASSERT(test_net_until(&net, first, 2, net.port[0],
				   "conns_tx_connected", 2, true, &seq) == 0,
		    "peers 1 and 2 on RC");
	/* peer 3 is busy but the table is full: spilled */
	TEST_RUN(test_net_round(&net, &third, 1, seq++));
	TEST_ASSERT(test_wait_xstat(net.port[0], "peers_spilled", 1,
				    TEST_HANG_MS), "peer 3 spilled");
	/* only peer 3 talks now: 1 and 2 go idle, get reaped (or evicted) */
	TEST_ASSERT(test_net_until(&net, &third, 1, net.port[0],
				   "conn_promotions", 1, false, &seq) == 0,
		    "peer 3 promoted");
	TEST_ASSERT(test_xstat(net.port[0], "conn_reaped") +
		    test_xstat(net.port[0], "conn_evictions") >= 1,
		    "an idle connection made room");
	TEST_ASSERT(test_net_until(&net, &third, 1, net.port[0],
				   "peers_spilled", 0, true, &seq) == 0,
		    "peer 3 on RC");
	TEST_RUN(test_net_rounds(&net, &third, 1, 5, seq));
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(cm_reap_promote, test_cm_reap_promote,
		    "idle connections reaped, the busy spilled peer promoted");

/* A connection whose peer goes away is torn down; it comes back later. */
static int
test_cm_peer_gone(void)
{
	unsigned int peer = 1;
	struct test_net net;
	uint32_t seq = 5;
	char args[128];

	TEST_RUN(test_net_open(&net, "t_cm_gone", "", "", 1));
	TEST_RUN(test_net_rounds(&net, &peer, 1, 5, 0));
	TEST_ASSERT(test_net_until(&net, &peer, 1, net.port[0],
				   "conns_tx_connected", 1, true, &seq) == 0,
		    "connected");
	test_port_destroy(net.names[1]);
	TEST_ASSERT(test_wait_xstat(net.port[0], "conns_tx_connected", 0,
				    TEST_HANG_MS), "connection torn down");
	TEST_ASSERT(test_wait_xstat(net.port[0], "conns_rx", 0, TEST_HANG_MS),
		    "its passive connection too");
	/* the peer returns (same GUID, a new UD QPN: a new address) */
	snprintf(args, sizeof(args), "fabric=%s,guid=0x%x",
		 test_fabric("t_cm_gone"), 0x1001);
	TEST_RUN(test_port_create(net.names[1], args, 1, 1500,
				  &net.port[1]));
	rte_eth_macaddr_get(net.port[1], &net.mac[1]);
	TEST_RUN(test_net_rounds(&net, &peer, 1, 5, seq));
	seq += 5;
	TEST_ASSERT(test_net_until(&net, &peer, 1, net.port[0],
				   "conns_tx_connected", 1, true, &seq) == 0,
		    "connected again");
	TEST_RUN(test_net_rounds(&net, &peer, 1, 5, seq));
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(cm_peer_gone, test_cm_peer_gone,
		    "peer gone: torn down; it returns and connects again");
