/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Several rx queues (ipoib_rss.c, ipoib_conn.c): with RSS, UD traffic is
 * spread by flow over every queue, each flow on one queue and in order;
 * without it UD stays on queue 0; RC traffic is spread by connection.
 * Every queue's traffic is counted, by the test and by the port.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "test.h"
#include "test_util.h"

#define RSS_NQ		2	/* the receiver's rx queues */
#define RSS_FLOWS	64	/* UDP source ports RSS_PORT0.. */
#define RSS_ROUNDS	8	/* frames per flow */
#define RSS_PORT0	2000
#define RSS_HF		(RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP)

/* What one rx queue got, by flow: its own lcore writes it. */
struct rss_seen {
	int last[RSS_FLOWS];	/* the flow's last frame here; -1: none */
	uint64_t total;		/* stored atomically: others sum it */
	unsigned int bad;	/* out of order, of no flow */
};

/*
 * The receiver's queues, each polled by its lcore: queue 0 by the main
 * one, which also sends; queue 1 by a worker lcore while one is running
 * (rss_rx_launch()), by the main one otherwise.
 */
struct rss_rx {
	uint16_t port;
	unsigned int worker;	/* RTE_MAX_LCORE: none */
	uint8_t stop;
	uint8_t stopped;	/* the worker's last store (see rss_rx_join) */
	struct rss_seen q[RSS_NQ];
};

static void
rss_rx_reset(struct rss_rx *rx, uint16_t port)
{
	unsigned int q, f;

	memset(rx, 0, sizeof(*rx));
	rx->port = port;
	rx->worker = RTE_MAX_LCORE;
	for (q = 0; q < RSS_NQ; q++)
		for (f = 0; f < RSS_FLOWS; f++)
			rx->q[q].last[f] = -1;
}

/* One burst from rx queue q, each frame checked by flow. */
static void
rss_drain(struct rss_rx *rx, uint16_t q)
{
	struct rss_seen *s = &rx->q[q];
	struct rte_mbuf *m[32];
	uint16_t n, i;

	n = rte_eth_rx_burst(rx->port, q, m, RTE_DIM(m));
	for (i = 0; i < n; i++) {
		const struct rte_ipv4_hdr *ip =
			rte_pktmbuf_mtod_offset(m[i],
				const struct rte_ipv4_hdr *,
				sizeof(struct rte_ether_hdr));
		const struct rte_udp_hdr *udp =
			(const struct rte_udp_hdr *)(ip + 1);
		unsigned int f = rte_be_to_cpu_16(udp->src_port) - RSS_PORT0;
		int seq = rte_be_to_cpu_16(ip->packet_id);

		if (f >= RSS_FLOWS) {
			printf("    queue %u: a frame of no flow\n", q);
			s->bad++;
			continue;
		}
		if (seq <= s->last[f]) {
			printf("    flow %u: frame %d on queue %u after %d\n",
			       f, seq, q, s->last[f]);
			s->bad++;
		}
		s->last[f] = seq;
	}
	rte_pktmbuf_free_bulk(m, n);
	__atomic_store_n(&s->total, s->total + n, __ATOMIC_RELEASE);
}

static int
rss_worker(void *arg)
{
	struct rss_rx *rx = arg;

	while (!__atomic_load_n(&rx->stop, __ATOMIC_ACQUIRE))
		rss_drain(rx, 1);
	__atomic_store_n(&rx->stopped, 1, __ATOMIC_RELEASE);
	return 0;
}

/* Queue 1 to a worker lcore, if there is one. */
static void
rss_rx_launch(struct rss_rx *rx)
{
	unsigned int lc = rte_get_next_lcore(-1, 1, 0);

	if (lc < RTE_MAX_LCORE &&
	    rte_eal_remote_launch(rss_worker, rx, lc) == 0)
		rx->worker = lc;
	printf("    rx queue 1 polled by %s\n", rx->worker < RTE_MAX_LCORE ?
	       "a worker lcore" : "the main lcore (no worker)");
}

static void
rss_rx_join(struct rss_rx *rx)
{
	if (rx->worker == RTE_MAX_LCORE)
		return;
	__atomic_store_n(&rx->stop, 1, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(rx->worker);
	/*
	 * EAL's wait orders the worker's writes before ours in code TSan
	 * does not see; this acquire says so where it looks
	 */
	while (!__atomic_load_n(&rx->stopped, __ATOMIC_ACQUIRE))
		;
	rx->worker = RTE_MAX_LCORE;
}

static uint64_t
rss_total(const struct rss_rx *rx)
{
	uint64_t t = 0;
	unsigned int q;

	for (q = 0; q < RSS_NQ; q++)
		t += __atomic_load_n(&rx->q[q].total, __ATOMIC_ACQUIRE);
	return t;
}

/* One burst from each queue the main lcore polls (all, without a worker). */
static void
rss_poll(struct rss_rx *rx)
{
	uint16_t q;

	for (q = 0; q < RSS_NQ; q++)
		if (q == 0 || rx->worker == RTE_MAX_LCORE)
			rss_drain(rx, q);
}

/* Receive until every queue together got total frames; false on a hang. */
static bool
rss_wait(struct rss_rx *rx, uint64_t total)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;

	while (rss_total(rx) < total && test_now_ms() < deadline)
		rss_poll(rx);
	if (rss_total(rx) != total)
		printf("    received %" PRIu64 " of %" PRIu64 "\n",
		       rss_total(rx), total);
	return rss_total(rx) == total;
}

/*
 * First contact: frames sent before the receiver knows the sender may be
 * dropped by design (a GRH-less UD frame from a LID and QPN no ARP, ND
 * or REQ has bound yet: rx_drop_unknown_lid), so a warm-up counts nothing.
 * Once the sender's held frames are out, every frame is in the
 * receiver's rings: receive until they have been empty for 100 ms.
 */
static int
rss_settle(struct rss_rx *rx, const uint16_t *senders, unsigned int n)
{
	uint64_t quiet, total;
	unsigned int i;

	for (i = 0; i < n; i++)
		TEST_ASSERT(test_wait_held(senders[i]),
			    "sender %u's held frames sent", i);
	do {
		total = rss_total(rx);
		quiet = test_now_ms() + 100;
		while (test_now_ms() < quiet)
			rss_poll(rx);
	} while (rss_total(rx) != total);
	return 0;
}

/*
 * After rss_rx_join(): no frame out of order, no flow on two queues (the
 * queue of flow f in *fq, -1 if none), and each queue's packets as the
 * port counts them (since base) what the test got there.
 */
static int
rss_check(const struct rss_rx *rx, const uint64_t *base, int *fq)
{
	struct rte_eth_stats st;
	unsigned int f, q;

	TEST_ASSERT(rte_eth_stats_get(rx->port, &st) == 0, "stats");
	for (f = 0; f < RSS_FLOWS; f++) {
		fq[f] = -1;
		for (q = 0; q < RSS_NQ; q++) {
			if (rx->q[q].last[f] < 0)
				continue;
			TEST_ASSERT(fq[f] < 0, "flow %u on queues %d and %u",
				    f, fq[f], q);
			fq[f] = (int)q;
		}
	}
	for (q = 0; q < RSS_NQ; q++) {
		printf("    rx queue %u: %" PRIu64 " frames\n", q,
		       rx->q[q].total);
		TEST_ASSERT(rx->q[q].bad == 0, "queue %u: %u frames out of "
			    "their flow's order", q, rx->q[q].bad);
		TEST_ASSERT(st.q_ipackets[q] - base[q] == rx->q[q].total,
			    "queue %u counts %" PRIu64 ", %" PRIu64 " came",
			    q, st.q_ipackets[q] - base[q], rx->q[q].total);
	}
	return 0;
}

static void
rss_queue_stats(uint16_t port, uint64_t *base)
{
	struct rte_eth_stats st;
	uint16_t q;

	memset(&st, 0, sizeof(st));
	rte_eth_stats_get(port, &st);
	for (q = 0; q < RSS_NQ; q++)
		base[q] = st.q_ipackets[q];
}

/* Frame seq of flow f (UDP source port RSS_PORT0 + f), sent from port. */
static int
rss_send(uint16_t port, const struct rte_ether_addr *src,
	 const struct rte_ether_addr *dst, unsigned int f, uint32_t seq)
{
	struct rte_mbuf *m = test_udp_frame(src, dst, 128, seq, false);
	struct rte_udp_hdr *udp;

	TEST_ASSERT(m != NULL, "frame");
	udp = rte_pktmbuf_mtod_offset(m, struct rte_udp_hdr *,
				      sizeof(struct rte_ether_hdr) +
				      sizeof(struct rte_ipv4_hdr));
	udp->src_port = rte_cpu_to_be_16((uint16_t)(RSS_PORT0 + f));
	TEST_ASSERT(test_tx_one(port, 0, m), "flow %u frame %u sent", f, seq);
	return 0;
}

/*
 * First contact of sender s with R (rx's port): frames of flow 0 until
 * one arrives (held frames, the refused REQ), then rss_settle(). Nothing
 * it sent is counted.
 */
static int
rss_first_contact(struct rss_rx *rx, uint16_t s,
		  const struct rte_ether_addr *sm,
		  const struct rte_ether_addr *rm)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;

	rss_rx_reset(rx, rx->port);
	while (rss_total(rx) == 0 && test_now_ms() < deadline) {
		TEST_RUN(rss_send(s, sm, rm, 0, 0));
		rss_poll(rx);
		rte_delay_ms(1);	/* paces the retries; the loop waits */
	}
	TEST_ASSERT(rss_total(rx) > 0, "a first frame arrived");
	return rss_settle(rx, &s, 1);
}

/*
 * UD: R refuses every connection (a budget below one receive ring), so S
 * sends to it over UD; RSS_FLOWS flows, RSS_ROUNDS frames each.
 */
static int
rss_ud(uint64_t rss_hf)
{
	struct rte_ether_addr sm, rm;
	uint64_t base[RSS_NQ];
	int fq[RSS_FLOWS];
	struct rss_rx rx;
	char args[96];
	uint16_t s, r;
	unsigned int f, k;

	snprintf(args, sizeof(args), "fabric=%s", test_fabric("t_rss_ud"));
	TEST_RUN(test_port_create("net_ipoibcm_rs", args, 1, 1500, &s));
	snprintf(args, sizeof(args), "fabric=%s,srq=off,mem_budget=64K",
		 test_fabric("t_rss_ud"));
	TEST_RUN(test_port_create_rss("net_ipoibcm_rr", args, RSS_NQ, 1500,
				      rss_hf, &r));
	rte_eth_macaddr_get(s, &sm);
	rte_eth_macaddr_get(r, &rm);
	rx.port = r;
	TEST_RUN(rss_first_contact(&rx, s, &sm, &rm));
	rss_rx_reset(&rx, r);
	rss_queue_stats(r, base);
	rss_rx_launch(&rx);
	for (k = 1; k <= RSS_ROUNDS; k++) {
		for (f = 0; f < RSS_FLOWS; f++)
			TEST_RUN(rss_send(s, &sm, &rm, f, k));
		if (!rss_wait(&rx, (uint64_t)k * RSS_FLOWS))
			break;
	}
	rss_rx_join(&rx);
	TEST_ASSERT(rss_total(&rx) == RSS_ROUNDS * RSS_FLOWS, "received");
	TEST_RUN(rss_check(&rx, base, fq));
	TEST_ASSERT(test_xstat(r, "rx_rc_packets") == 0, "all over UD");
	for (k = 0; k < RSS_NQ; k++)
		TEST_ASSERT(rss_hf == 0 ? rx.q[k].total == (k == 0 ?
			    rss_total(&rx) : 0) : rx.q[k].total > 0,
			    "UD traffic on rx queue %u: %" PRIu64
			    " frames (RSS %s)", k, rx.q[k].total,
			    rss_hf != 0 ? "on" : "off: queue 0 only");
	/* stopped and started: the queues' shares go and come back */
	TEST_ASSERT(rte_eth_dev_stop(r) == 0 && rte_eth_dev_start(r) == 0,
		    "R restarted");
	rss_rx_reset(&rx, r);
	for (f = 0; f < RSS_FLOWS; f++)
		TEST_RUN(rss_send(s, &sm, &rm, f, RSS_ROUNDS + 1));
	TEST_ASSERT(rss_wait(&rx, RSS_FLOWS), "a round after the restart");
	for (k = 0; k < RSS_NQ; k++)
		TEST_ASSERT(rss_hf == 0 ? rx.q[k].total == (k == 0 ?
			    RSS_FLOWS : 0) : rx.q[k].total > 0,
			    "after the restart, rx queue %u: %" PRIu64
			    " frames", k, rx.q[k].total);
	test_port_destroy("net_ipoibcm_rs");
	test_port_destroy("net_ipoibcm_rr");
	return 0;
}

static int
test_rss_ud_spread(void)
{
	return rss_ud(RSS_HF);
}
REGISTER_TEST(rss_ud_spread, test_rss_ud_spread,
	      "RSS: UD flows spread over every rx queue, each on one, in "
	      "order, each queue on its own lcore; counted per queue");

static int
test_rss_ud_off(void)
{
	return rss_ud(0);
}
REGISTER_TEST(rss_ud_off, test_rss_ud_off,
	      "no RSS asked for: UD on rx queue 0 only");

/* One frame of every flow; true: each queue's count of them in got[]. */
static int
rss_round(struct rss_rx *rx, uint16_t s, const struct rte_ether_addr *sm,
	  const struct rte_ether_addr *rm, uint32_t seq, uint64_t *got)
{
	unsigned int f, q;

	rss_rx_reset(rx, rx->port);
	for (f = 0; f < RSS_FLOWS; f++)
		TEST_RUN(rss_send(s, sm, rm, f, seq));
	TEST_ASSERT(rss_wait(rx, RSS_FLOWS), "round %u received", seq);
	for (q = 0; q < RSS_NQ; q++)
		got[q] = rx->q[q].total;
	printf("    round %u: %" PRIu64 " and %" PRIu64 " frames on queues 0 "
	       "and 1\n", seq, got[0], got[1]);
	return 0;
}

/*
 * The hash functions and the key are what the application set: with
 * RTE_ETH_RSS_IP only, the flows of one address pair (UDP ports apart)
 * hash alike and share a queue; updated to UDP too, at run time, they
 * spread; with a key of zeros every Toeplitz hash is 0: queue 0. The
 * key and functions read back as set; a key of another length is
 * refused and changes nothing.
 */
static int
test_rss_ud_conf(void)
{
	static const uint8_t zeros[40];
	uint8_t key[64], bad[39] = { 0 };
	struct rte_eth_rss_conf rc = { 0 };
	struct rte_ether_addr sm, rm;
	struct rte_eth_dev_info di;
	uint64_t got[RSS_NQ];
	struct rss_rx rx;
	char args[96];
	uint16_t s, r;

	snprintf(args, sizeof(args), "fabric=%s", test_fabric("t_rss_cf"));
	TEST_RUN(test_port_create("net_ipoibcm_cs", args, 1, 1500, &s));
	snprintf(args, sizeof(args), "fabric=%s,srq=off,mem_budget=64K",
		 test_fabric("t_rss_cf"));
	TEST_RUN(test_port_create_rss("net_ipoibcm_cr", args, RSS_NQ, 1500,
				      RTE_ETH_RSS_IP, &r));
	TEST_ASSERT(rte_eth_dev_info_get(r, &di) == 0 &&
		    di.hash_key_size == 40, "a 40-byte key");
	rc.rss_key = key;
	rc.rss_key_len = sizeof(key);
	TEST_ASSERT_EQ(rte_eth_dev_rss_hash_conf_get(r, &rc), 0, "conf_get");
	TEST_ASSERT(rc.rss_hf == RTE_ETH_RSS_IP && rc.rss_key_len == 40,
		    "hf 0x%" PRIx64 ", key of %u", rc.rss_hf, rc.rss_key_len);
	TEST_ASSERT(key[0] == 0x6d && key[39] == 0xfa, "the default key");
	rte_eth_macaddr_get(s, &sm);
	rte_eth_macaddr_get(r, &rm);
	rx.port = r;
	TEST_RUN(rss_first_contact(&rx, s, &sm, &rm));

	TEST_RUN(rss_round(&rx, s, &sm, &rm, 1, got));
	TEST_ASSERT(got[0] == RSS_FLOWS || got[1] == RSS_FLOWS,
		    "addresses only: one address pair, one queue");
	rc.rss_key = NULL;
	rc.rss_hf = RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP;
	TEST_ASSERT_EQ(rte_eth_dev_rss_hash_update(r, &rc), 0, "UDP too");
	TEST_RUN(rss_round(&rx, s, &sm, &rm, 2, got));
	TEST_ASSERT(got[0] > 0 && got[1] > 0, "UDP ports too: spread");

	rc.rss_key = bad;
	rc.rss_key_len = sizeof(bad);
	TEST_ASSERT(rte_eth_dev_rss_hash_update(r, &rc) < 0,
		    "a key of 39 bytes is refused");
	rc.rss_key = (uint8_t *)(uintptr_t)zeros;
	rc.rss_key_len = sizeof(zeros);
	TEST_ASSERT_EQ(rte_eth_dev_rss_hash_update(r, &rc), 0, "zero key");
	TEST_RUN(rss_round(&rx, s, &sm, &rm, 3, got));
	TEST_ASSERT_EQ(got[0], RSS_FLOWS, "a key of zeros: every hash 0");
	rc.rss_key = key;
	rc.rss_key_len = sizeof(key);
	TEST_ASSERT_EQ(rte_eth_dev_rss_hash_conf_get(r, &rc), 0, "conf_get");
	TEST_ASSERT(memcmp(key, zeros, sizeof(zeros)) == 0 &&
		    rc.rss_hf == (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP),
		    "read back as set");
	test_port_destroy("net_ipoibcm_cs");
	test_port_destroy("net_ipoibcm_cr");
	return 0;
}
REGISTER_TEST(rss_ud_conf, test_rss_ud_conf,
	      "RSS: hash functions and key as set, at run time too");

/*
 * RC: two senders connect to R (two rx queues, RSS): their connections
 * land on different queues, and each sender's traffic (one flow each)
 * on its connection's.
 */
static int
test_rss_rc_spread(void)
{
	static const char *const names[] = {
		"net_ipoibcm_rc0", "net_ipoibcm_rc1",
	};
	struct rte_ether_addr sm[2], rm;
	uint64_t base[RSS_NQ], rc0, deadline;
	int fq[RSS_FLOWS];
	struct rss_rx rx;
	uint16_t sp[2], r;
	char args[96];
	unsigned int i, k;
	uint32_t seq = 0;

	snprintf(args, sizeof(args), "fabric=%s", test_fabric("t_rss_rc"));
	for (i = 0; i < 2; i++) {
		TEST_RUN(test_port_create(names[i], args, 1, 1500, &sp[i]));
		rte_eth_macaddr_get(sp[i], &sm[i]);
	}
	TEST_RUN(test_port_create_rss("net_ipoibcm_rcr", args, RSS_NQ, 1500,
				      RSS_HF, &r));
	rte_eth_macaddr_get(r, &rm);
	/* connections are made while frames flow */
	rss_rx_reset(&rx, r);
	deadline = test_now_ms() + TEST_HANG_MS;
	while ((test_xstat(sp[0], "conns_tx_connected") != 1 ||
		test_xstat(sp[1], "conns_tx_connected") != 1) &&
	       test_now_ms() < deadline) {
		for (i = 0; i < 2; i++)
			TEST_RUN(rss_send(sp[i], &sm[i], &rm, i, seq));
		seq++;
		rss_poll(&rx);
	}
	TEST_ASSERT(test_xstat(r, "conns_rx") == 2, "two connections to R");
	TEST_RUN(rss_settle(&rx, sp, 2));
	printf("    connected after %u rounds; R received %" PRIu64 " of "
	       "their %u frames (R's rx_drop_unknown_lid %" PRIu64 ")\n",
	       seq, rss_total(&rx), 2 * seq,
	       test_xstat(r, "rx_drop_unknown_lid"));
	rss_rx_reset(&rx, r);
	rss_queue_stats(r, base);
	rc0 = test_xstat(r, "rx_rc_packets");
	rss_rx_launch(&rx);
	for (k = 0; k < RSS_ROUNDS * 8; k++)
		for (i = 0; i < 2; i++)
			TEST_RUN(rss_send(sp[i], &sm[i], &rm, i, seq + k));
	rss_wait(&rx, 2 * RSS_ROUNDS * 8);
	rss_rx_join(&rx);
	TEST_ASSERT(rss_total(&rx) == 2 * RSS_ROUNDS * 8, "received");
	TEST_RUN(rss_check(&rx, base, fq));
	TEST_ASSERT(test_xstat(r, "rx_rc_packets") - rc0 == rss_total(&rx),
		    "all over RC");
	TEST_ASSERT(fq[0] != fq[1], "the two connections on different rx "
		    "queues (%d, %d)", fq[0], fq[1]);
	for (k = 0; k < RSS_NQ; k++)
		TEST_ASSERT(rx.q[k].total > 0, "RC traffic on rx queue %u", k);
	for (i = 0; i < 2; i++)
		test_port_destroy(names[i]);
	test_port_destroy("net_ipoibcm_rcr");
	return 0;
}
REGISTER_TEST(rss_rc_spread, test_rss_rc_spread,
	      "RC: connections spread over the rx queues, each queue on its "
	      "own lcore; counted per queue");
