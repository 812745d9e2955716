/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIBCM_TEST_NET_H
#define IPOIBCM_TEST_NET_H

/*
 * A small network in one process: port A (index 0) and n peers on one
 * fabric, and rounds of traffic in which nothing may be lost.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

#include "rte_pmd_ipoib_cm.h"

#define TEST_NET_MAX_PEERS	16

struct test_net {
	char names[TEST_NET_MAX_PEERS + 1][32];
	uint16_t port[TEST_NET_MAX_PEERS + 1];	/* [0] is A */
	struct rte_ether_addr mac[TEST_NET_MAX_PEERS + 1];
	unsigned int n;				/* peers, A excluded */
};

/* A with devargs a_args, n peers with b_args (fabric and guid added). */
int test_net_open(struct test_net *net, const char *fabric,
		  const char *a_args, const char *b_args, unsigned int n);
void test_net_close(struct test_net *net);
/*
 * One round: A sends a frame to each listed peer, each peer receives it
 * and replies, A receives every reply. Nothing may be lost.
 */
int test_net_round(struct test_net *net, const unsigned int *peers,
		   unsigned int np, uint32_t seq);
int test_net_rounds(struct test_net *net, const unsigned int *peers,
		    unsigned int np, unsigned int rounds, uint32_t seq0);
/*
 * Rounds until port's xstat name reaches value (exact: equals it), *seq
 * the round number: connections are made, and spilled peers retried,
 * only while frames flow, so a wait for them keeps sending. TEST_HANG_MS
 * catches a hang.
 */
int test_net_until(struct test_net *net, const unsigned int *peers,
		   unsigned int np, uint16_t port, const char *name,
		   uint64_t value, bool exact, uint32_t *seq);

/*
 * One burst from every port's queue 0, dropped: as an application polls,
 * so that flushed receives of torn down connections come back.
 */
void test_net_poll(struct test_net *net);
/* Connection slots every port still holds (xstats). */
uint64_t test_net_conn_slots(struct test_net *net);
/* The state of port's peer mac (UD-only when it has none). */
enum rte_pmd_ipoibcm_peer_state test_net_peer_state(uint16_t port,
		const struct rte_ether_addr *mac);
/*
 * A sends to peer p until its connection to p is up at both ends: p has
 * established more than passive_before passive connections.
 */
int test_net_connect(struct test_net *net, unsigned int p,
		     uint64_t passive_before, uint32_t seq);

#endif /* IPOIBCM_TEST_NET_H */
