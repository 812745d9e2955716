/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Instruction-count harness: port 0 sends to port 1 in the same process
 * and the same thread, a burst at a time: a burst of --burst frames
 * (BENCH_BURST unless told) sent, then port 1 polled until all of them
 * are back. With --loopback, port 0 alone, in loopback mode, sends to
 * itself (net_ipoibcm: as datagrams to its own UD QP, the path
 * pmd_perf_autotest measures). Only the two wrappers below run the
 * drivers' burst functions during the measured part, so callgrind
 * --toggle-collect=bench_icount_rx (or _tx) counts the instructions of
 * one side's bursts and nothing else: building the frames and freeing
 * the received ones happen outside them. After each size the counts
 * are dumped (CALLGRIND_DUMP_STATS_AT, a no-op outside valgrind) and
 * this line printed, from which devtools/bench.py divides:
 *
 *   icount size=S packets=N tx_calls=T rx_calls=R rx_empty=E lost=L
 *          tx_cycles=C rx_cycles=C rx_empty_cycles=C
 *
 * The cycles (TSC, rte_rdtsc() around each call, its own cost included)
 * are what the same bursts take when run natively, in one thread: the
 * tx calls, the rx calls that received, the rx calls that found nothing.
 * Under valgrind they mean nothing. Last, natively only, IDLE_POLLS
 * polls of the receiving port with nothing to receive, and what they
 * took:
 *
 *   idle polls=N cycles=C
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <valgrind/callgrind.h>

#include "bench.h"

#define TX_PORT		0
/* the receiving port: 1, or port 0 itself with --loopback (bench_icount()) */
static uint16_t rx_port = 1;
/* Empty polls in a row after which the frames still out count as lost. */
#define LOST_POLLS	1000000
#define IDLE_POLLS	1000000

/*
 * The measured calls: out of line, not cloned, so callgrind finds them
 * (gcc's noipa; clang, which has no such attribute, neither clones nor
 * inlines a noinline function that is used).
 */
#ifdef __clang__
#define BENCH_MEASURED	__attribute__((noinline, used))
#else
#define BENCH_MEASURED	__attribute__((noipa))
#endif
uint16_t bench_icount_tx(uint16_t port, struct rte_mbuf **pkts, uint16_t n);
uint16_t bench_icount_rx(uint16_t port, struct rte_mbuf **pkts, uint16_t n);

BENCH_MEASURED uint16_t
bench_icount_tx(uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_tx_burst(port, 0, pkts, n);
}

BENCH_MEASURED uint16_t
bench_icount_rx(uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(port, 0, pkts, n);
}

typedef uint16_t (*burst_fn)(uint16_t port, struct rte_mbuf **pkts,
			     uint16_t n);

static uint16_t
plain_tx(uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_tx_burst(port, 0, pkts, n);
}

static uint16_t
plain_rx(uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(port, 0, pkts, n);
}

struct icount_run {
	uint64_t packets, tx_calls, rx_calls, rx_empty, lost;
	uint64_t tx_cycles, rx_cycles, rx_empty_cycles;
};

/* One burst out and back; the counts of calls go into run. */
static int
icount_burst(struct rte_mempool *mp, const struct rte_ether_addr *dst,
	     const struct rte_ether_addr *src, uint32_t size,
	     uint16_t burst, burst_fn tx, burst_fn rx, struct icount_run *run)
{
	struct rte_mbuf *pkts[BENCH_BURST], *rx_pkts[BENCH_BURST];
	uint16_t sent = 0, got = 0, i, n;
	uint64_t empty = 0, t0, t1;

	for (i = 0; i < burst; i++) {
		pkts[i] = bench_frame(mp, dst, src, size, run->packets + i);
		if (pkts[i] == NULL) {
			rte_pktmbuf_free_bulk(pkts, i);
			fprintf(stderr, "icount: out of mbufs\n");
			return -ENOMEM;
		}
	}
	/*
	 * Send what the queue takes, then poll the receiver once, until
	 * all are sent and back: a receiver that posts its buffers in its
	 * own burst (net_memif's client) takes nothing before it is polled.
	 */
	while ((sent < burst || got < sent) && empty < LOST_POLLS) {
		if (sent < burst) {
			t0 = rte_rdtsc();
			n = tx(TX_PORT, pkts + sent, burst - sent);
			run->tx_cycles += rte_rdtsc() - t0;
			run->tx_calls++;
			sent += n;
		}
		t0 = rte_rdtsc();
		n = rx(rx_port, rx_pkts, burst);
		t1 = rte_rdtsc();
		if (n == 0)
			run->rx_empty_cycles += t1 - t0;
		else
			run->rx_cycles += t1 - t0;
		run->rx_calls++;
		run->rx_empty += n == 0;
		empty = n == 0 ? empty + 1 : 0;
		got += n;
		rte_pktmbuf_free_bulk(rx_pkts, n);
	}
	rte_pktmbuf_free_bulk(pkts + sent, burst - sent);
	run->packets += got;
	run->lost += sent - RTE_MIN(got, sent);
	return 0;
}

/* Until port 0 sends on a connection, if its driver has connections. */
static int
icount_warmup(struct rte_mempool *mp, const struct rte_ether_addr *dst,
	      const struct rte_ether_addr *src, const struct bench_cfg *cfg)
{
	struct icount_run run = { 0 };
	uint64_t end = rte_get_timer_cycles() +
		(uint64_t)(cfg->timeout_s * rte_get_timer_hz());
	uint64_t id;
	/* in loopback a port sends datagrams to itself: no connection */
	bool conn = !cfg->loopback &&
		bench_xstat_id(TX_PORT, "conns_tx_connected", &id) == 0;

	while (run.packets < cfg->warmup ||
	       (conn && bench_xstat(TX_PORT, id) == 0)) {
		if (rte_get_timer_cycles() > end || bench_quit()) {
			fprintf(stderr, "icount: no connection after %.0f s\n",
				cfg->timeout_s);
			return -ETIMEDOUT;
		}
		if (icount_burst(mp, dst, src, BENCH_MIN_FRAME, cfg->burst,
				 plain_tx, plain_rx, &run) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int
icount_sizes(struct rte_mempool *mp, const struct rte_ether_addr *dst,
	     const struct rte_ether_addr *src, const struct bench_cfg *cfg)
{
	uint64_t rc_id = 0;
	bool rc = bench_xstat_id(rx_port, "rx_rc_packets", &rc_id) == 0;
	unsigned int s;
	int ret;

	for (s = 0; s < cfg->nb_sizes; s++) {
		struct icount_run run = { 0 };
		uint64_t rc0 = rc ? bench_xstat(rx_port, rc_id) : 0;
		char what[64];

		CALLGRIND_ZERO_STATS;
		while (run.packets + run.lost < cfg->packets) {
			ret = icount_burst(mp, dst, src, cfg->sizes[s],
					   cfg->burst, bench_icount_tx,
					   bench_icount_rx, &run);
			if (ret != 0)
				return ret;
		}
		snprintf(what, sizeof(what), "icount size=%u", cfg->sizes[s]);
		CALLGRIND_DUMP_STATS_AT(what);
		printf("icount size=%u packets=%" PRIu64 " tx_calls=%" PRIu64
		       " rx_calls=%" PRIu64 " rx_empty=%" PRIu64 " lost=%"
		       PRIu64 " tx_cycles=%" PRIu64 " rx_cycles=%" PRIu64
		       " rx_empty_cycles=%" PRIu64, cfg->sizes[s], run.packets,
		       run.tx_calls, run.rx_calls, run.rx_empty, run.lost,
		       run.tx_cycles, run.rx_cycles, run.rx_empty_cycles);
		if (rc)
			printf(" rc_packets=%" PRIu64,
			       bench_xstat(rx_port, rc_id) - rc0);
		printf("\n");
		fflush(stdout);
	}
	return 0;
}

/* The cycles of polls of the receiver that find nothing (not counted). */
static void
icount_idle(void)
{
	struct rte_mbuf *pkts[BENCH_BURST];
	uint64_t t0;
	unsigned int i;
	uint16_t n;

	if (RUNNING_ON_VALGRIND)
		return;
	t0 = rte_rdtsc();
	for (i = 0; i < IDLE_POLLS; i++) {
		n = plain_rx(rx_port, pkts, BENCH_BURST);
		rte_pktmbuf_free_bulk(pkts, n);
	}
	printf("idle polls=%u cycles=%" PRIu64 "\n", IDLE_POLLS,
	       rte_rdtsc() - t0);
}

int
bench_icount(const struct bench_cfg *cfg)
{
	struct rte_ether_addr dst, src;
	struct rte_mempool *mp;
	int ret;

	mp = bench_pool("icount_mp", 8191);
	if (mp == NULL)
		return -ENOMEM;
	if (cfg->loopback) {
		rx_port = TX_PORT;
	} else {
		ret = bench_port_start(rx_port, mp, false);
		if (ret != 0)
			return ret;
	}
	ret = bench_port_start(TX_PORT, mp, cfg->loopback);
	if (ret != 0)
		goto close_rx;
	ret = bench_link_wait(TX_PORT, cfg->timeout_s);
	if (ret == 0)
		ret = bench_link_wait(rx_port, cfg->timeout_s);
	if (ret != 0)
		goto close_tx;
	rte_eth_macaddr_get(TX_PORT, &src);
	rte_eth_macaddr_get(rx_port, &dst);
	ret = icount_warmup(mp, &dst, &src, cfg);
	if (ret == 0)
		ret = icount_sizes(mp, &dst, &src, cfg);
	if (ret == 0)
		icount_idle();
close_tx:
	bench_port_close(TX_PORT);
close_rx:
	if (!cfg->loopback)
		bench_port_close(rx_port);
	return ret;
}
