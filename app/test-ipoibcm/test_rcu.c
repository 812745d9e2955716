/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The queues' RCU (ipoib_rcu.h): a queue stays online between its bursts,
 * and one the application stops using must not hold the control thread's
 * grace periods, and so teardowns, back.
 */

#include <inttypes.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "ipoib_cm.h"
#include "test.h"
#include "test_net.h"
#include "test_util.h"

/* What the driver asks of the kernel for its idle detection. */
static bool
membarrier_usable(void)
{
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0;
}

/*
 * As a process where membarrier() is refused: the port's queues go
 * offline after every burst (ipoib_rcu_init() found no membarrier).
 */
static int
restart_without_membarrier(uint16_t port)
{
	struct ipoib_priv *priv = rte_eth_devices[port].data->dev_private;

	TEST_ASSERT(rte_eth_dev_stop(port) == 0, "port %u stopped", port);
	priv->pt.rcu.membarrier = false;
	TEST_ASSERT(rte_eth_dev_start(port) == 0, "port %u started", port);
	return 0;
}

/*
 * A connects to B (both queues of both ports have had bursts), then
 * nobody calls a burst again: A disconnects, and both teardowns end
 * (every connection slot free) without another poll. With membarrier()
 * the queues stayed online and the grace periods ended by finding them
 * idle, which rcu_idle_scans counts; without it they went offline after
 * each burst, and nothing is scanned.
 */
static int
rcu_idle_run(const char *fabric, bool fallback)
{
	bool scanning = membarrier_usable() && !fallback;
	struct test_net net;
	uint64_t scans[2];
	unsigned int i;

	TEST_RUN(test_net_open(&net, fabric, "", "", 1));
	for (i = 0; fallback && i < 2; i++)
		TEST_RUN(restart_without_membarrier(net.port[i]));
	TEST_RUN(test_net_connect(&net, 1, 0, 0));
	for (i = 0; i < 2; i++)
		scans[i] = test_xstat(net.port[i], "rcu_idle_scans");
	TEST_ASSERT(rte_pmd_ipoibcm_peer_disconnect(net.port[0],
						    &net.mac[1]) >= 1,
		    "disconnected");
	/* no burst from here on: the xstats are not bursts */
	for (i = 0; i < 2; i++)
		TEST_ASSERT(test_wait_xstat(net.port[i], "conn_slots_used", 0,
					    TEST_HANG_MS),
			    "port %u: the teardown ended with no burst called",
			    i);
	if (scanning)
		TEST_ASSERT(test_xstat(net.port[0], "rcu_idle_scans") >
			    scans[0],
			    "A's grace period ended by finding its queues idle");
	else
		TEST_ASSERT_EQ(test_xstat(net.port[0], "rcu_idle_scans"),
			       scans[0], "no scan without membarrier()");
	/* and the queues serve a new connection as before */
	TEST_RUN(test_net_connect(&net, 1, 1, 1));
	test_net_close(&net);
	return 0;
}

static int
test_rcu_idle_queues(void)
{
	return rcu_idle_run("t_rcu_idle", false);
}
REGISTER_TEST(rcu_idle_queues, test_rcu_idle_queues,
	      "queues nobody polls any more hold no teardown back");

static int
test_rcu_no_membarrier(void)
{
	return rcu_idle_run("t_rcu_nomb", true);
}
REGISTER_TEST(rcu_no_membarrier, test_rcu_no_membarrier,
	      "without membarrier(): queues offline after each burst");
