/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The port's life cycle through the ethdev API, and close releasing all.
 */

#include <ethdev_driver.h>
#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "ipoib_mem.h"
#include "test.h"
#include "test_util.h"

#define NB_QUEUES 2

static int
test_ethdev_lifecycle(void)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	struct rte_eth_stats stats;
	struct rte_eth_link link;
	struct rte_mempool *mp;
	char args[64];
	uint64_t before;
	uint16_t port, q;
	int round;

	mp = rte_pktmbuf_pool_create("t_lifecycle", 2047, 64, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE,
				     rte_socket_id());
	TEST_ASSERT(mp != NULL, "mempool");
	/*
	 * ethdev allocates its shared port data (memzone rte_eth_dev_data)
	 * on the first probe ever; DPDK 24.11 frees it again with the last
	 * port, and a driver's lookup by name (rte_eth_dev_allocated(), as
	 * every vdev remove does) allocates it again. Every measurement is
	 * taken right after such a lookup of the removed port: it is in all
	 * or in none.
	 */
	snprintf(args, sizeof(args), "fabric=%s", test_fabric("t_lifecycle"));
	TEST_ASSERT(rte_vdev_init("net_ipoibcm_lc", args) == 0,
		    "warm-up probe");
	TEST_ASSERT(rte_vdev_uninit("net_ipoibcm_lc") == 0, "warm-up remove");
	TEST_ASSERT(rte_eth_dev_allocated("net_ipoibcm_lc") == NULL,
		    "warm-up port gone");
	before = ipoib_mem_heap_allocated();
	for (round = 0; round < 3; round++) {
		TEST_ASSERT(rte_vdev_init("net_ipoibcm_lc", args) == 0,
			    "probe");
		TEST_ASSERT(rte_eth_dev_get_port_by_name("net_ipoibcm_lc",
							  &port) == 0, "port");
		TEST_ASSERT(rte_eth_dev_info_get(port, &info) == 0, "info");
		TEST_ASSERT(info.max_rx_queues >= NB_QUEUES, "queues");
		TEST_ASSERT(info.max_mtu == 65520, "CM MTU");
		TEST_ASSERT(rte_eth_dev_configure(port, NB_QUEUES, NB_QUEUES,
						  &conf) == 0, "configure");
		for (q = 0; q < NB_QUEUES; q++) {
			TEST_ASSERT(rte_eth_rx_queue_setup(port, q, 256,
					rte_socket_id(), NULL, mp) == 0, "rxq");
			TEST_ASSERT(rte_eth_tx_queue_setup(port, q, 256,
					rte_socket_id(), NULL) == 0, "txq");
		}
		TEST_ASSERT(rte_eth_dev_start(port) == 0, "start");
		TEST_ASSERT(rte_eth_link_get_nowait(port, &link) == 0, "link");
		TEST_ASSERT(link.link_status == RTE_ETH_LINK_UP, "link up");
		TEST_ASSERT(rte_eth_stats_get(port, &stats) == 0, "stats");
		TEST_ASSERT(rte_eth_stats_reset(port) == 0, "stats reset");
		TEST_ASSERT(rte_eth_dev_stop(port) == 0, "stop");
		TEST_ASSERT(rte_eth_link_get_nowait(port, &link) == 0, "link");
		TEST_ASSERT(link.link_status == RTE_ETH_LINK_DOWN, "link down");
		/* close in even rounds, vdev removal alone in odd ones */
		if (round % 2 == 0)
			TEST_ASSERT(rte_eth_dev_close(port) == 0, "close");
		TEST_ASSERT(rte_vdev_uninit("net_ipoibcm_lc") == 0, "remove");
		TEST_ASSERT(rte_eth_dev_allocated("net_ipoibcm_lc") == NULL,
			    "port gone");
		TEST_ASSERT_EQ(ipoib_mem_heap_allocated(), before,
			       "DPDK heap not returned after round %d", round);
	}
	rte_mempool_free(mp);
	return 0;
}
REGISTER_TEST(ethdev_lifecycle, test_ethdev_lifecycle,
		    "configure, start, stop, close; close frees everything");
