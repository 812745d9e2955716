/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * perf_loopback: two ports of one process, one lcore sending on one and
 * receiving on the other; prints packets per second per size. A figure,
 * not a check: it passes whenever every frame arrives.
 */

#include <stdio.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "test.h"
#include "test_util.h"

static int
perf_run(const char *mode)
{
	static const uint32_t sizes[] = { 64, 1500, 9000, 65000 };
	char args[128];
	struct rte_ether_addr am, bm;
	uint16_t a, b;
	unsigned int s;

	snprintf(args, sizeof(args), "fabric=t_perf_%s,srq=%s", mode, mode);
	TEST_RUN(test_port_create("net_ipoibcm_pa", args, 1, 65520, &a));
	TEST_RUN(test_port_create("net_ipoibcm_pb", args, 1, 65520, &b));
	rte_eth_macaddr_get(a, &am);
	rte_eth_macaddr_get(b, &bm);
	for (s = 0; s < RTE_DIM(sizes); s++) {
		struct rte_mbuf *tmpl = test_udp_frame(&am, &bm, sizes[s], 1,
						       false);
		struct rte_mbuf *tx[32], *rx[32];
		uint64_t sent = 0, got = 0, t0, t1, bytes;
		uint64_t dur = rte_get_timer_hz();
		int warm = 1;

		TEST_ASSERT(tmpl != NULL, "frame");
again:
		t0 = rte_get_timer_cycles();
		sent = got = 0;
		while (rte_get_timer_cycles() - t0 < (warm ? dur / 4 : dur)) {
			uint16_t i, n;

			for (i = 0; i < 32; i++)
				tx[i] = rte_pktmbuf_copy(tmpl, test_mempool(),
							 0, UINT32_MAX);
			n = rte_eth_tx_burst(a, 0, tx, 32);
			rte_pktmbuf_free_bulk(tx + n, 32 - n);
			sent += n;
			n = rte_eth_rx_burst(b, 0, rx, 32);
			rte_pktmbuf_free_bulk(rx, n);
			got += n;
		}
		got += test_rx_until(b, rx, 0, 0);
		t1 = rte_get_timer_cycles();
		if (warm--)
			goto again;
		bytes = got * sizes[s];
		printf("  srq=%s %6u B: %8.3f Mpps %8.2f Gbit/s (sent %lu, "
		       "received %lu, RC %lu)\n", mode, sizes[s],
		       got / ((double)(t1 - t0) / rte_get_timer_hz()) / 1e6,
		       bytes * 8 / ((double)(t1 - t0) / rte_get_timer_hz())
		       / 1e9, sent, got, test_xstat(b, "rx_rc_packets"));
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
REGISTER_IPOIB_TEST(perf_loopback, test_perf_loopback,
		    "figures: one lcore, two ports, per frame size");
