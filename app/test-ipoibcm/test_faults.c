/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Faults on the shm fabric, ports of one process: each CM message of the
 * handshake lost, REJ storms, RNR on a full receive queue, the port going
 * down and up. In each, no frame the application handed over is lost
 * while a path exists, what the port held is freed, and the peer is served
 * over RC again once the fault is gone. Faults killing processes or the
 * fabric are in the blackbox suite.
 */

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_ip.h>

#include "rte_pmd_ipoib_cm.h"
#include "test.h"
#include "test_net.h"
#include "test_util.h"


/* Rounds between A and peer until xstat name of port reaches at least v. */
static int
rounds_until(struct test_net *net, unsigned int peer, uint16_t port,
	     const char *name, uint64_t v, uint32_t *seq)
{
	return test_net_until(net, &peer, 1, port, name, v, false, seq);
}

/* Clear every fault of a port. */
static int
faults_clear(uint16_t port)
{
	struct rte_pmd_ipoibcm_faults f = { .rej_after = -1 };

	TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_set(port, &f), 0, "faults");
	return 0;
}

/*
 * Connection state is freed: one slot per live connection. (The
 * driver's warnings of a teardown slower than 5 s, conn_drain_timeouts,
 * depend on the machine's speed: not judged.)
 */
static int
check_conn_memory(uint16_t port)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;
	uint64_t live;

	do {
		live = test_xstat(port, "conns_tx_connected") +
		       test_xstat(port, "conns_tx_connecting") +
		       test_xstat(port, "conns_rx");
		if (test_xstat(port, "conn_slots_used") == live)
			return 0;
	} while (test_now_ms() < deadline);
	printf("    conn_slots_used %" PRIu64 " for %" PRIu64
	       " connections\n", test_xstat(port, "conn_slots_used"), live);
	return -1;
}

/* Every REQ to B lost: A times out, serves B on UD, connects once healed. */
static int
test_fault_req_lost(void)
{
	struct test_net net;
	uint32_t seq = 0;

	TEST_RUN(test_net_open(&net, "t_f_req", "retry_min=50,retry_max=200",
			       "fault_cm_drop=req", 1));
	TEST_RUN(rounds_until(&net, 1, net.port[0], "cm_timeouts", 1, &seq));
	TEST_ASSERT(test_xstat(net.port[1], "hca_fault_drops") >= 16,
		    "the REQ and its 15 retries were all dropped");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "conns_tx_connected"), 0,
		       "not connected");
	TEST_ASSERT_EQ(test_xstat(net.port[1], "conn_established_passive"), 0,
		       "B never saw a REQ");
	TEST_ASSERT(test_xstat(net.port[0], "tx_ud_packets") >= seq,
		    "served over UD meanwhile");
	TEST_RUN(faults_clear(net.port[1]));
	TEST_RUN(rounds_until(&net, 1, net.port[0], "conns_tx_connected", 1,
			      &seq));
	TEST_RUN(test_net_rounds(&net, (unsigned int[]){ 1 }, 1, 10, seq));
	TEST_RUN(check_conn_memory(net.port[0]));
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(fault_req_lost, test_fault_req_lost,
		    "REQs lost: timeout, UD meanwhile, RC once healed");

/* Every REP to A lost: both sides give up and free; RC once healed. */
static int
test_fault_rep_lost(void)
{
	struct test_net net;
	uint32_t seq = 0;

	TEST_RUN(test_net_open(&net, "t_f_rep",
			       "fault_cm_drop=rep,retry_min=50,retry_max=200",
			       "", 1));
	TEST_RUN(rounds_until(&net, 1, net.port[0], "cm_timeouts", 1, &seq));
	/* B resent its REP in vain and gave the connection up */
	TEST_RUN(rounds_until(&net, 1, net.port[1], "cm_timeouts", 1, &seq));
	TEST_ASSERT_EQ(test_xstat(net.port[0], "conns_tx_connected"), 0,
		       "A not connected");
	TEST_ASSERT(test_xstat(net.port[1], "conns_rx") <= 1,
		    "B holds at most the attempt in progress");
	TEST_RUN(faults_clear(net.port[0]));
	TEST_RUN(rounds_until(&net, 1, net.port[0], "conns_tx_connected", 1,
			      &seq));
	TEST_RUN(test_net_rounds(&net, (unsigned int[]){ 1 }, 1, 10, seq));
	TEST_ASSERT(test_wait_xstat(net.port[1], "conns_rx", 1, TEST_HANG_MS),
		    "B: the one connection of A, the attempts freed");
	TEST_RUN(check_conn_memory(net.port[0]));
	TEST_RUN(check_conn_memory(net.port[1]));
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(fault_rep_lost, test_fault_rep_lost,
		    "REPs lost: both sides time out and free; RC once healed");

/*
 * Every RTU to B lost: A sends over RC at once and nothing is lost; B
 * takes the connection as established when its REP retries run out and
 * the QP is seen in use (the COMM_EST of an HCA).
 */
static int
test_fault_rtu_lost(void)
{
	struct test_net net;
	uint32_t seq = 0;

	TEST_RUN(test_net_open(&net, "t_f_rtu", "", "fault_cm_drop=rtu", 1));
	TEST_RUN(rounds_until(&net, 1, net.port[0], "conns_tx_connected", 1,
			      &seq));
	TEST_RUN(rounds_until(&net, 1, net.port[1], "rx_rc_packets", 1,
			      &seq));
	TEST_RUN(rounds_until(&net, 1, net.port[1],
			      "conn_established_passive", 1, &seq));
	TEST_ASSERT(test_xstat(net.port[1], "hca_fault_drops") >= 1,
		    "RTUs were dropped");
	TEST_ASSERT_EQ(test_xstat(net.port[1], "cm_timeouts"), 0,
		       "B did not give the connection up");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "conn_failed"), 0,
		       "A's connection never failed");
	TEST_RUN(test_net_rounds(&net, (unsigned int[]){ 1 }, 1, 10, seq));
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(fault_rtu_lost, test_fault_rtu_lost,
		    "RTUs lost: RC at once, passive side established later");

/*
 * The most REQs one peer can be sent in elapsed_ms when every REQ is
 * refused: the first at once, each next one a backoff after the REJ, the
 * backoff doubling from retry_min to retry_max and never shorter than
 * three quarters of that (the jitter is +-25%). A slow machine only sends
 * fewer.
 */
static uint64_t
reqs_within(uint64_t elapsed_ms, uint32_t retry_min, uint32_t retry_max)
{
	uint64_t reqs = 1, wait_us = 0;
	uint32_t backoff = retry_min;

	for (;;) {
		wait_us += backoff * 750ULL;
		if (wait_us > elapsed_ms * 1000)
			return reqs;
		reqs++;
		backoff = RTE_MIN(backoff * 2, retry_max);
	}
}

/*
 * Eight peers REJ every REQ while A talks to all of them for a while (two
 * seconds at least, and until each was refused three times on average):
 * the backoff spaces the REQs, nothing is lost, nothing leaks.
 */
static int
test_fault_rej_storm(void)
{
	unsigned int all[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint64_t rejs, elapsed;
	double t0, hang;
	struct test_net net;
	uint32_t seq = 0;

	TEST_RUN(test_net_open(&net, "t_f_rejs", "retry_min=10,retry_max=100",
			       "fault_rej=all", 8));
	t0 = test_now_ms();
	hang = t0 + TEST_HANG_MS;
	do {
		TEST_RUN(test_net_round(&net, all, 8, seq++));
		rejs = test_xstat(net.port[0], "rej_rcvd_reason_3");
		TEST_ASSERT(test_now_ms() < hang, "%" PRIu64 " REJs", rejs);
	} while (test_now_ms() - t0 < 2000 || rejs < 8 * 3);
	elapsed = (uint64_t)(test_now_ms() - t0);
	printf("    %u rounds, %" PRIu64 " REJs in %" PRIu64 " ms (the "
	       "backoff allows %" PRIu64 ")\n", seq, rejs, elapsed,
	       8 * reqs_within(elapsed, 10, 100));
	TEST_ASSERT(rejs <= 8 * reqs_within(elapsed, 10, 100),
		    "the backoff spaces the REQs");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "conns_tx_connected"), 0,
		       "never connected");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "tx_drop_no_neigh"), 0,
		       "no frame dropped");
	TEST_RUN(check_conn_memory(net.port[0]));
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(fault_rej_storm, test_fault_rej_storm,
		    "REJ storm: REQs spaced by the backoff, no loss, no leak");

/*
 * Send to B until it pushes back: a frame refused once B has answered with
 * RNR NAKs (B does not poll, so no buffer comes back meanwhile). The
 * frames accepted are counted.
 */
static int
rnr_fill(struct test_net *net, uint32_t seq0, uint32_t *sent)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;
	uint32_t seq = seq0;
	bool full = false;

	while (!full) {
		struct rte_mbuf *m = test_udp_frame(&net->mac[0],
						    &net->mac[1], 1000, seq,
						    false);

		TEST_ASSERT(m != NULL, "frame");
		TEST_ASSERT(test_now_ms() < deadline,
			    "B's queue never filled: %u frames taken",
			    seq - seq0);
		if (rte_eth_tx_burst(net->port[0], 0, &m, 1) == 1) {
			seq++;
			continue;
		}
		rte_pktmbuf_free(m);
		full = test_xstat(net->port[0], "hca_rnr_naks") > 0;
	}
	*sent = seq - seq0;
	return 0;
}

/*
 * B receives the n frames A sent from sequence number expect on, in
 * order, and nothing more.
 */
static int
rnr_drain(struct test_net *net, uint32_t expect, uint32_t sent)
{
	struct rte_mbuf *rx[32];
	uint32_t got = 0;
	uint16_t n, i;

	while (got < sent) {
		n = test_rx_until(net->port[1], rx, RTE_MIN(32u, sent - got),
				  TEST_HANG_MS);
		TEST_ASSERT(n > 0, "B received %u of %u", got, sent);
		for (i = 0; i < n; i++) {
			const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(
				rx[i], const struct rte_ipv4_hdr *,
				sizeof(struct rte_ether_hdr));

			TEST_ASSERT_EQ(rte_be_to_cpu_16(ip->packet_id),
				       (uint16_t)expect, "in order");
			expect++;
		}
		rte_pktmbuf_free_bulk(rx, n);
		got += n;
	}
	TEST_ASSERT_EQ(test_rx_until(net->port[1], rx, 1, 100), 0,
		       "nothing more than was sent");
	return 0;
}

/* B's receive queue full: RNR NAKs hold A's frames back, none is lost. */
static int
fault_rnr(const char *srq)
{
	struct test_net net;
	uint32_t seq = 0, sent;
	char args[32];

	snprintf(args, sizeof(args), "srq=%s", srq);
	TEST_RUN(test_net_open(&net, "t_f_rnr", args, args, 1));
	TEST_RUN(rounds_until(&net, 1, net.port[0], "conns_tx_connected", 1,
			      &seq));
	TEST_RUN(rnr_fill(&net, 1000, &sent));
	printf("    srq=%s: %u frames taken before B's queue was full\n",
	       srq, sent);
	TEST_ASSERT(test_xstat(net.port[0], "hca_rnr_naks") > 0, "RNR NAKs");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "qp_errors"), 0,
		       "no QP error: RNR retries for ever");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "conns_tx_connected"), 1,
		       "still connected");
	TEST_RUN(rnr_drain(&net, 1000, sent));
	TEST_RUN(test_net_rounds(&net, (unsigned int[]){ 1 }, 1, 10, 5000));
	test_net_close(&net);
	return 0;
}

static int
test_fault_rnr_srq(void)
{
	return fault_rnr("on");
}
REGISTER_TEST(fault_rnr_srq, test_fault_rnr_srq,
		    "SRQ full: RNR holds the sender back, nothing lost");

static int
test_fault_rnr_nosrq(void)
{
	return fault_rnr("off");
}
REGISTER_TEST(fault_rnr_nosrq, test_fault_rnr_nosrq,
		    "connection ring full: RNR holds back, nothing lost");

#define RNR_BURST	6
#define RNR_VLAN	2	/* the frame of the burst that cannot go */

/*
 * A burst refused by RNR comes back as it was given, whatever the driver
 * had done to it: the frames it encapsulated while it took them (before
 * and after one it cannot send, a VLAN-tagged frame) have their Ethernet
 * headers back. Once B has room the same mbufs go, in order, and the
 * VLAN-tagged one is dropped, counted.
 */
static int
test_fault_rnr_burst(void)
{
	struct rte_mbuf *m[RNR_BURST];
	uint8_t copy[RNR_BURST][1000];
	uint32_t seq = 0, sent, len[RNR_BURST], i, id = 5000;
	struct test_net net;

	TEST_RUN(test_net_open(&net, "t_f_rnrb", "", "", 1));
	TEST_RUN(rounds_until(&net, 1, net.port[0], "conns_tx_connected", 1,
			      &seq));
	TEST_RUN(rnr_fill(&net, 1000, &sent));
	for (i = 0; i < RNR_BURST; i++) {
		m[i] = test_udp_frame(&net.mac[0], &net.mac[1], 1000,
				      i == RNR_VLAN ? 0 : id++, false);
		TEST_ASSERT(m[i] != NULL, "frame");
		if (i == RNR_VLAN)
			rte_pktmbuf_mtod(m[i], struct rte_ether_hdr *)->
				ether_type = RTE_BE16(RTE_ETHER_TYPE_VLAN);
		len[i] = m[i]->pkt_len;
		memcpy(copy[i], rte_pktmbuf_mtod(m[i], void *), len[i]);
	}
	TEST_ASSERT_EQ(rte_eth_tx_burst(net.port[0], 0, m, RNR_BURST), 0,
		       "B's queue is full: nothing taken");
	for (i = 0; i < RNR_BURST; i++) {
		TEST_ASSERT(m[i]->pkt_len == len[i] &&
			    m[i]->data_len == len[i] &&
			    memcmp(copy[i], rte_pktmbuf_mtod(m[i], void *),
				   len[i]) == 0,
			    "frame %u given back as it was", i);
	}
	TEST_RUN(rnr_drain(&net, 1000, sent));
	TEST_ASSERT_EQ(rte_eth_tx_burst(net.port[0], 0, m, RNR_BURST),
		       RNR_BURST, "B has room: all taken");
	TEST_RUN(rnr_drain(&net, 5000, RNR_BURST - 1));
	TEST_ASSERT_EQ(test_xstat(net.port[0], "tx_drop_vlan"), 1,
		       "the VLAN-tagged frame dropped, counted");
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(fault_rnr_burst, test_fault_rnr_burst,
		    "a burst refused by RNR is given back as it was");

static unsigned int lsc_events;

/* Event callback: count into *arg. */
static int
lsc_count(uint16_t port, enum rte_eth_event_type type, void *arg, void *ret)
{
	RTE_SET_USED(port);
	RTE_SET_USED(type);
	RTE_SET_USED(ret);
	__atomic_add_fetch((unsigned int *)arg, 1, __ATOMIC_RELAXED);
	return 0;
}

static bool
link_is(uint16_t port, uint16_t status)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;
	struct rte_eth_link link;

	while (test_now_ms() < deadline) {
		if (rte_eth_link_get_nowait(port, &link) == 0 &&
		    link.link_status == status)
			return true;
	}
	return false;
}

/*
 * A's port goes down: link down with an LSC event, its connections
 * closed, what it sends dropped and counted. Up again: link up, served,
 * and on RC again.
 */
static int
test_fault_port_down(void)
{
	struct rte_pmd_ipoibcm_faults f;
	struct rte_mbuf *rx[1];
	struct test_net net;
	uint32_t seq = 0;

	lsc_events = 0;
	TEST_RUN(test_net_open(&net, "t_f_down", "", "retry_min=50", 1));
	TEST_ASSERT(rte_eth_dev_callback_register(net.port[0],
						  RTE_ETH_EVENT_INTR_LSC,
						  lsc_count, &lsc_events) == 0,
		    "LSC callback");
	TEST_RUN(rounds_until(&net, 1, net.port[0], "conns_tx_connected", 1,
			      &seq));
	TEST_RUN(rounds_until(&net, 1, net.port[1], "conns_tx_connected", 1,
			      &seq));
	TEST_ASSERT(link_is(net.port[0], RTE_ETH_LINK_UP), "link up");

	TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_get(net.port[0], &f), 0, "get");
	f.port_down = true;
	TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_set(net.port[0], &f), 0, "set");
	TEST_ASSERT(link_is(net.port[0], RTE_ETH_LINK_DOWN), "link down");
	TEST_ASSERT_EQ(__atomic_load_n(&lsc_events, __ATOMIC_RELAXED), 1,
		       "one LSC event");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "port_down_events"), 1,
		       "counted");
	TEST_ASSERT(test_wait_xstat(net.port[0], "conns_tx_connected", 0,
				    TEST_HANG_MS), "A's connection closed");
	TEST_ASSERT(test_wait_xstat(net.port[0], "conns_rx", 0, TEST_HANG_MS),
		    "B's connection to A closed on A's side");
	TEST_RUN(test_send_frames(net.port[0], &net.mac[0], &net.mac[1], 10));
	TEST_ASSERT(test_xstat(net.port[0], "hca_link_down_drops") >= 10,
		    "what A sent while down was dropped and counted");
	TEST_ASSERT_EQ(test_rx_until(net.port[1], rx, 1, 200), 0,
		       "B received nothing");
	/* B's connection to A fails at its next send */
	TEST_RUN(test_send_frames(net.port[1], &net.mac[1], &net.mac[0], 10));
	TEST_ASSERT(test_wait_xstat(net.port[1], "conns_tx_connected", 0,
				    TEST_HANG_MS), "B's connection failed");
	TEST_RUN(check_conn_memory(net.port[0]));

	f.port_down = false;
	TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_set(net.port[0], &f), 0, "set");
	TEST_ASSERT(link_is(net.port[0], RTE_ETH_LINK_UP), "link up again");
	TEST_ASSERT_EQ(__atomic_load_n(&lsc_events, __ATOMIC_RELAXED), 2,
		       "a second LSC event");
	TEST_RUN(rounds_until(&net, 1, net.port[0], "conns_tx_connected", 1,
			      &seq));
	TEST_RUN(rounds_until(&net, 1, net.port[1], "conns_tx_connected", 1,
			      &seq));
	TEST_RUN(test_net_rounds(&net, (unsigned int[]){ 1 }, 1, 10, seq));
	rte_eth_dev_callback_unregister(net.port[0], RTE_ETH_EVENT_INTR_LSC,
					lsc_count, &lsc_events);
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(fault_port_down, test_fault_port_down,
		    "port down: link down, LSC, connections closed; back up");

/* Remove the fabric's objects as "rm -f /dev/shm/ipoibcm.<fabric>*" would. */
static int
fabric_remove(const char *fabric)
{
	char prefix[64], path[320];
	struct dirent *de;
	int removed = 0;
	DIR *d;

	snprintf(prefix, sizeof(prefix), "ipoibcm.%s", fabric);
	d = opendir("/dev/shm");
	TEST_ASSERT(d != NULL, "/dev/shm");
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, prefix) != 0 &&
		    (strncmp(de->d_name, prefix, strlen(prefix)) != 0 ||
		     de->d_name[strlen(prefix)] != '.'))
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", de->d_name);
		if (unlink(path) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

/* Mappings of objects of this fabric that were removed. */
static int
removed_mappings(const char *fabric)
{
	char line[512], needle[64];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (f == NULL)
		return -1;
	snprintf(needle, sizeof(needle), "/ipoibcm.%s", fabric);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, needle) != NULL &&
		    strstr(line, "(deleted)") != NULL)
			n++;
	fclose(f);
	return n;
}

static unsigned int reset_events;

/*
 * The fabric's objects removed under two running ports: both see it,
 * take their link down and ask for a reset; rte_eth_dev_reset() attaches
 * them to a new fabric of the same name where they reach each other
 * again, and nothing of the old one stays mapped.
 */
static int
test_fault_fabric_removed(void)
{
	const char *fabric = test_fabric("t_f_gone");
	uint64_t deadline;
	struct test_net net;
	uint32_t seq = 0;
	unsigned int i;

	reset_events = 0;
	TEST_RUN(test_net_open(&net, "t_f_gone", "", "", 1));
	for (i = 0; i <= 1; i++)
		TEST_ASSERT(rte_eth_dev_callback_register(net.port[i],
			    RTE_ETH_EVENT_INTR_RESET, lsc_count,
			    &reset_events) == 0, "reset callback");
	TEST_RUN(rounds_until(&net, 1, net.port[0], "conns_tx_connected", 1,
			      &seq));
	TEST_ASSERT(fabric_remove(fabric) >= 2, "header and segments removed");

	deadline = test_now_ms() + TEST_HANG_MS;
	while (__atomic_load_n(&reset_events, __ATOMIC_RELAXED) < 2)
		TEST_ASSERT(test_now_ms() < deadline, "reset events: %u",
			    reset_events);
	for (i = 0; i <= 1; i++)
		TEST_ASSERT(link_is(net.port[i], RTE_ETH_LINK_DOWN),
			    "port %u: link down", i);
	/* the datapath goes on safely on what is still mapped */
	TEST_RUN(test_send_frames(net.port[0], &net.mac[0], &net.mac[1], 10));

	for (i = 0; i <= 1; i++) {
		TEST_ASSERT_EQ(rte_eth_dev_reset(net.port[i]), 0, "reset %u",
			       i);
		TEST_RUN(test_port_setup(net.port[i], 1, 1500));
		rte_eth_macaddr_get(net.port[i], &net.mac[i]);
		TEST_ASSERT(link_is(net.port[i], RTE_ETH_LINK_UP),
			    "port %u: link up", i);
	}
	TEST_ASSERT_EQ(removed_mappings(fabric), 0,
		       "nothing of the removed fabric stays mapped");
	TEST_RUN(rounds_until(&net, 1, net.port[0], "conns_tx_connected", 1,
			      &seq));
	TEST_RUN(test_net_rounds(&net, (unsigned int[]){ 1 }, 1, 10, seq));
	for (i = 0; i <= 1; i++)
		rte_eth_dev_callback_unregister(net.port[i],
						RTE_ETH_EVENT_INTR_RESET,
						lsc_count, &reset_events);
	test_net_close(&net);
	TEST_ASSERT_EQ(fabric_remove(fabric), 0, "nothing left in /dev/shm");
	return 0;
}
REGISTER_TEST(fault_fabric_removed, test_fault_fabric_removed,
		    "fabric objects removed: reset event, reset, served again");
