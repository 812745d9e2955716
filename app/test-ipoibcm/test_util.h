/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIBCM_TEST_UTIL_H
#define IPOIBCM_TEST_UTIL_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

/*
 * How long a test waits for something that must happen (a frame, a
 * connection, a counter): it catches a hang and never judges how fast
 * the thing happened, so it is generous for a slow, shared or sanitized
 * machine. Waits that watch for something that must NOT happen use short
 * windows of their own.
 */
#define TEST_HANG_MS	60000

struct rte_mempool *test_mempool(void);
/* A fabric name of this process: tests never meet another run's. */
const char *test_fabric(const char *base);
int test_port_create(const char *name, const char *args, uint16_t nb_q,
		     uint16_t mtu, uint16_t *port);
/* The same with RSS asked for (test_port_setup_rss()). */
int test_port_create_rss(const char *name, const char *args, uint16_t nb_q,
			 uint16_t mtu, uint64_t rss_hf, uint16_t *port);
/* Configure nb_q queue pairs (LSC on), set the MTU, start. */
int test_port_setup(uint16_t port, uint16_t nb_q, uint16_t mtu);
/* The same with RSS (mq_mode RSS, these hash types) when rss_hf != 0. */
int test_port_setup_rss(uint16_t port, uint16_t nb_q, uint16_t mtu,
			uint64_t rss_hf);
void test_port_destroy(const char *name);
struct rte_mbuf *test_udp_frame(const struct rte_ether_addr *src,
				const struct rte_ether_addr *dst,
				uint32_t len, uint32_t seq, bool df);
int test_send_frames(uint16_t port, const struct rte_ether_addr *src,
		     const struct rte_ether_addr *dst, unsigned int n);
/* One frame, retried while pushed back; false (freed) when never taken. */
bool test_tx_one(uint16_t port, uint16_t queue, struct rte_mbuf *m);
bool test_frames_equal(const struct rte_mbuf *a, const struct rte_mbuf *b);
uint16_t test_rx_until(uint16_t port, struct rte_mbuf **pkts, uint16_t n,
		       uint64_t timeout_ms);
uint64_t test_xstat(uint16_t port, const char *name);
bool test_wait_xstat(uint16_t port, const char *name, uint64_t value,
		     uint64_t timeout_ms);
/* Print a port's non-zero xstats, one per line: what a failure left. */
void test_xstats_print(uint16_t port, const char *who);
/*
 * Wait until the frames port's tx bursts held for its control thread
 * (first frames to a peer or group without an address handle) have been
 * sent: tx_held_done reaches tx_held.
 */
bool test_wait_held(uint16_t port);
/*
 * Wait until port's peer table has freed the indexes it replaced (rebuilt
 * bigger or smaller as peers came and went) after their grace period:
 * the DPDK heap then holds what its peers need now.
 */
bool test_wait_peers_settled(uint16_t port);
/*
 * The first payload byte of test_udp_frame()'s frame seq (modulo 256);
 * test_expect_seq() receives frames from..to-1 at port, in that order.
 */
#define TEST_SEQ_OFF	(sizeof(struct rte_ether_hdr) + \
			 sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))
int test_expect_seq(uint16_t port, uint32_t from, uint32_t to);

#endif /* IPOIBCM_TEST_UTIL_H */
