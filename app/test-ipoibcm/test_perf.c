/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * perf_loopback: two ports of one process, one lcore sending on one and
 * receiving on the other; prints packets per second per size. A figure,
 * not a check: it passes whenever every frame arrives.
 */

#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_memcpy.h>
#include <rte_malloc.h>

#include "test.h"
#include "test_util.h"

/*
 * One lcore sends on port A and receives on port B, as testpmd's txonly
 * and rxonly would: frames from the pool, headers copied from a template,
 * payload left as it is.
 */
static int
perf_run(const char *mode)
{
	static const uint32_t sizes[] = { 64, 1500 };
	char args[128];
	struct rte_ether_addr am, bm;
	uint16_t a, b;
	unsigned int s;

	snprintf(args, sizeof(args), "fabric=%s,srq=%s",
		 test_fabric("t_perf"), mode);
	TEST_RUN(test_port_create("net_ipoibcm_pa", args, 1, 1500, &a));
	TEST_RUN(test_port_create("net_ipoibcm_pb", args, 1, 1500, &b));
	rte_eth_macaddr_get(a, &am);
	rte_eth_macaddr_get(b, &bm);
	for (s = 0; s < RTE_DIM(sizes); s++) {
		struct rte_mbuf *tmpl = test_udp_frame(&am, &bm, sizes[s], 1,
						       false);
		const void *hdr = rte_pktmbuf_mtod(tmpl, const void *);
		struct rte_mbuf *tx[32], *rx[32];
		uint64_t sent, got, t0, t1, hz = rte_get_timer_hz();
		int warm = 1;
		uint16_t i, n;

		TEST_ASSERT(tmpl != NULL, "frame");
again:
		t0 = rte_get_timer_cycles();
		sent = got = 0;
		while (rte_get_timer_cycles() - t0 < (warm ? hz / 4 : hz)) {
			if (rte_pktmbuf_alloc_bulk(test_mempool(), tx, 32))
				break;
			for (i = 0; i < 32; i++) {
				tx[i]->data_len = (uint16_t)sizes[s];
				tx[i]->pkt_len = sizes[s];
				rte_memcpy(rte_pktmbuf_mtod(tx[i], void *),
					   hdr, 42);
			}
			n = rte_eth_tx_burst(a, 0, tx, 32);
			rte_pktmbuf_free_bulk(tx + n, 32 - n);
			sent += n;
			n = rte_eth_rx_burst(b, 0, rx, 32);
			rte_pktmbuf_free_bulk(rx, n);
			got += n;
		}
		t1 = rte_get_timer_cycles();
		/*
		 * The first frames to B wait for its address handle, made by
		 * A's control thread, which then sends them: none may arrive
		 * in the next window. Receive until B has been quiet 100 ms.
		 */
		TEST_ASSERT(test_wait_held(a), "A's held frames sent");
		do {
			n = test_rx_until(b, rx, 32, 100);
			rte_pktmbuf_free_bulk(rx, n);
			got += n;
		} while (n > 0);
		if (warm--)
			goto again;
		printf("  srq=%s %6u B: %8.3f Mpps (tx and rx on one lcore; "
		       "sent %" PRIu64 ", received %" PRIu64 ")\n", mode,
		       sizes[s], sent / ((double)(t1 - t0) / hz) / 1e6, sent,
		       got);
		if (got < sent - 32 || got > sent) {
			test_xstats_print(a, "A");
			test_xstats_print(b, "B");
		}
		TEST_ASSERT(got >= sent - 32 && got <= sent,
			    "every frame arrived");
		rte_pktmbuf_free(tmpl);
	}
	test_port_destroy("net_ipoibcm_pa");
	test_port_destroy("net_ipoibcm_pb");
	return 0;
}

static int
test_perf_loopback(void)
{
	TEST_RUN(perf_run("on"));
	return perf_run("off");
}
REGISTER_TEST(perf_loopback, test_perf_loopback,
		    "figures: one lcore, two ports, per frame size");

/*
 * perf_memcpy: the single-core copy bandwidth a software fabric can hope
 * for, 64000-byte blocks, with three working sets: source and destination
 * in cache (4 blocks each); a hot source and destinations from a 64 MB ring
 * (what the fabric does: the sender's mbufs come back from the mempool
 * cache, posted receive buffers are reused a ring later); both from 64 MB
 * rings.
 */
static double
perf_copy(uint8_t *src, uint8_t *dst, size_t blk, size_t nsrc, size_t ndst)
{
	uint64_t t0, t1, bytes = 0, hz = rte_get_timer_hz();
	size_t i = 0;
	int round;

	for (round = 0; round < 2; round++) {	/* the first warms up */
		bytes = 0;
		t0 = rte_get_timer_cycles();
		while ((t1 = rte_get_timer_cycles()) - t0 < hz) {
			memcpy(dst + (i % ndst) * blk,
			       src + ((i * 7) % nsrc) * blk, blk);
			bytes += blk;
			i++;
		}
	}
	return bytes * 8.0 / ((double)(t1 - t0) / hz) / 1e9;
}

static int
test_perf_memcpy(void)
{
	const size_t blk = 64000, nb = 1024;
	uint8_t *src = rte_malloc(NULL, blk * nb, 64);
	uint8_t *dst = rte_malloc(NULL, blk * nb, 64);

	TEST_ASSERT(src != NULL && dst != NULL, "buffers");
	memset(src, 0x5a, blk * nb);
	memset(dst, 0xa5, blk * nb);
	printf("memcpy %zu B blocks, cached: %.2f Gbit/s\n", blk,
	       perf_copy(src, dst, blk, 4, 4));
	printf("memcpy %zu B blocks, hot source, 64 MB destination ring: "
	       "%.2f Gbit/s\n", blk, perf_copy(src, dst, blk, 4, nb));
	printf("memcpy %zu B blocks, 64 MB rings: %.2f Gbit/s\n", blk,
	       perf_copy(src, dst, blk, nb, nb));
	TEST_ASSERT(dst[0] == 0x5a, "copied");
	rte_free(src);
	rte_free(dst);
	return 0;
}
REGISTER_TEST(perf_memcpy, test_perf_memcpy,
		    "figures: single-core memcpy bandwidth, 64000 B blocks");
