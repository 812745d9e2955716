/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * A small network of ports in one process, shared by the connection
 * manager and fault tests.
 */

#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "test.h"
#include "test_net.h"
#include "test_util.h"

int
test_net_open(struct test_net *net, const char *fabric, const char *a_args,
	      const char *b_args, unsigned int n)
{
	char args[256];
	unsigned int i;

	memset(net, 0, sizeof(*net));
	for (i = 0; i <= n; i++) {
		snprintf(net->names[i], sizeof(net->names[i]),
			 "net_ipoibcm_cm%u", i);
		snprintf(args, sizeof(args), "fabric=%s,guid=0x%x,%s",
			 test_fabric(fabric), 0x1000 + i,
			 i == 0 ? a_args : b_args);
		TEST_RUN(test_port_create(net->names[i], args, 1, 1500,
					  &net->port[i]));
		rte_eth_macaddr_get(net->port[i], &net->mac[i]);
		net->n = i;
	}
	return 0;
}

void
test_net_close(struct test_net *net)
{
	unsigned int i;

	for (i = 0; i <= net->n; i++)
		test_port_destroy(net->names[i]);
}

int
test_net_round(struct test_net *net, const unsigned int *peers,
	       unsigned int np, uint32_t seq)
{
	struct rte_mbuf *m, *rx[TEST_NET_MAX_PEERS];
	unsigned int k;
	uint16_t got;

	for (k = 0; k < np; k++) {
		unsigned int i = peers[k];

		m = test_udp_frame(&net->mac[0], &net->mac[i], 200, seq, false);
		TEST_ASSERT(m != NULL, "frame");
		TEST_ASSERT(test_tx_one(net->port[0], 0, m),
			    "A sends to peer %u", i);
	}
	for (k = 0; k < np; k++) {
		unsigned int i = peers[k];

		got = test_rx_until(net->port[i], rx, 1, TEST_HANG_MS);
		TEST_ASSERT_EQ(got, 1, "peer %u receives round %u", i, seq);
		rte_pktmbuf_free(rx[0]);
		m = test_udp_frame(&net->mac[i], &net->mac[0], 200, seq, false);
		TEST_ASSERT(m != NULL, "reply");
		TEST_ASSERT(test_tx_one(net->port[i], 0, m),
			    "peer %u replies", i);
	}
	got = test_rx_until(net->port[0], rx, np, TEST_HANG_MS);
	TEST_ASSERT_EQ(got, np, "A receives every reply of round %u", seq);
	rte_pktmbuf_free_bulk(rx, got);
	return 0;
}

int
test_net_rounds(struct test_net *net, const unsigned int *peers,
		unsigned int np, unsigned int rounds, uint32_t seq0)
{
	unsigned int r;

	for (r = 0; r < rounds; r++)
		TEST_RUN(test_net_round(net, peers, np, seq0 + r));
	return 0;
}

int
test_net_until(struct test_net *net, const unsigned int *peers,
	       unsigned int np, uint16_t port, const char *name,
	       uint64_t value, bool exact, uint32_t *seq)
{
	double deadline = test_now_ms() + TEST_HANG_MS;
	uint64_t v;

	while (v = test_xstat(port, name), exact ? v != value : v < value) {
		TEST_ASSERT(test_now_ms() < deadline, "%s = %" PRIu64
			    ", waited for %s%" PRIu64, name, v,
			    exact ? "" : ">= ", value);
		TEST_RUN(test_net_round(net, peers, np, (*seq)++));
	}
	return 0;
}


void
test_net_poll(struct test_net *net)
{
	struct rte_mbuf *rx[32];
	unsigned int i;
	uint16_t n;

	for (i = 0; i <= net->n; i++) {
		n = rte_eth_rx_burst(net->port[i], 0, rx, RTE_DIM(rx));
		rte_pktmbuf_free_bulk(rx, n);
	}
}

uint64_t
test_net_conn_slots(struct test_net *net)
{
	uint64_t slots = 0;
	unsigned int i;

	for (i = 0; i <= net->n; i++)
		slots += test_xstat(net->port[i], "conn_slots_used");
	return slots;
}

enum rte_pmd_ipoibcm_peer_state
test_net_peer_state(uint16_t port, const struct rte_ether_addr *mac)
{
	struct rte_pmd_ipoibcm_peer info;

	if (rte_pmd_ipoibcm_peer_get(port, mac, &info) != 0)
		return RTE_PMD_IPOIBCM_PEER_UD_ONLY;
	return info.state;
}

int
test_net_connect(struct test_net *net, unsigned int p,
		 uint64_t passive_before, uint32_t seq)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;
	struct rte_mbuf *m;

	do {
		TEST_ASSERT(test_now_ms() < deadline, "%u: connected to %u",
			    seq, p);
		m = test_udp_frame(&net->mac[0], &net->mac[p], 100, seq,
				   false);
		TEST_ASSERT(m != NULL, "frame");
		if (rte_eth_tx_burst(net->port[0], 0, &m, 1) == 0)
			rte_pktmbuf_free(m);
		test_net_poll(net);
	} while (test_net_peer_state(net->port[0], &net->mac[p]) !=
		 RTE_PMD_IPOIBCM_PEER_CONNECTED);
	/* and p took the RTU: the connection is up at both ends */
	while (test_xstat(net->port[p], "conn_established_passive") <=
	       passive_before) {
		TEST_ASSERT(test_now_ms() < deadline, "%u: %u up", seq, p);
		test_net_poll(net);
	}
	return 0;
}
