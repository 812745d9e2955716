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
 * A connects to B (both queues of both ports have had bursts, so they
 * are online), then nobody calls a burst again: A disconnects, and both
 * teardowns end (every connection slot free) without another poll. The
 * teardowns' grace periods ended by finding the queues idle, which
 * rcu_idle_scans counts; without membarrier() the queues went offline
 * after each burst instead, and nothing is scanned.
 */
static int
test_rcu_idle_queues(void)
{
	uint64_t scans[2];
	struct test_net net;
	bool usable = membarrier_usable();
	unsigned int i;

	TEST_RUN(test_net_open(&net, "t_rcu_idle", "", "", 1));
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
	if (usable)
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
REGISTER_TEST(rcu_idle_queues, test_rcu_idle_queues,
	      "queues nobody polls any more hold no teardown back");
