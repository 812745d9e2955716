/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Soak: connections made and torn down 10,000 times, and traffic while
 * peers come and go. At the end the driver's accounting is back where it
 * started and the process did not grow (RSS, DPDK heap, shm segments).
 * IPOIBCM_SOAK_CYCLES shortens the runs (the valgrind suite sets it).
 */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "rte_pmd_ipoib_cm.h"
#include "test.h"
#include "test_net.h"
#include "test_util.h"

#define TIMEOUT_MS	TEST_NET_TIMEOUT_MS
/*
 * RSS grows while the pools' objects are first touched (rings hand them out
 * in turn), then stays within about 1.5 MiB: it is compared from a quarter
 * of the run, with this margin, and only on runs long enough to say.
 */
#define RSS_SLACK	(4u << 20)
#define RSS_MIN_CYCLES	4000
/*
 * ASan holds freed memory in its quarantine, TSan grows its shadow and
 * history: RSS says nothing there
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RSS_JUDGED	false
#else
#define RSS_JUDGED	true
#endif

static unsigned int
soak_cycles(unsigned int dflt)
{
	const char *s = getenv("IPOIBCM_SOAK_CYCLES");

	return s != NULL && atoi(s) > 0 ? (unsigned int)atoi(s) : dflt;
}

/* What the process holds: resident set, DPDK heap, shm segments. */
struct footprint {
	uint64_t rss;
	uint64_t heap;
	unsigned int shm_objects;
};

static void
footprint_take(struct footprint *fp, const char *fabric)
{
	struct rte_malloc_socket_stats st;
	char prefix[64];
	struct dirent *de;
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	DIR *d;

	memset(fp, 0, sizeof(*fp));
	if (f != NULL) {
		if (fscanf(f, "%*u %lu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	fp->rss = (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
	if (rte_malloc_get_socket_stats(rte_socket_id(), &st) == 0)
		fp->heap = st.heap_allocsz_bytes;
	snprintf(prefix, sizeof(prefix), "ipoibcm.%s", fabric);
	d = opendir("/dev/shm");
	while (d != NULL && (de = readdir(d)) != NULL)
		fp->shm_objects += strncmp(de->d_name, prefix,
					   strlen(prefix)) == 0;
	if (d != NULL)
		closedir(d);
}

static int
footprint_flat(const struct footprint *a, const struct footprint *b,
	       bool check_rss)
{
	printf("    RSS %" PRIu64 " -> %" PRIu64 " KiB, DPDK heap %" PRIu64
	       " -> %" PRIu64 " bytes, shm objects %u -> %u\n",
	       a->rss >> 10, b->rss >> 10, a->heap, b->heap, a->shm_objects,
	       b->shm_objects);
	if (check_rss && RSS_JUDGED)
		TEST_ASSERT(b->rss <= a->rss + RSS_SLACK, "RSS flat");
	else
		printf("    (RSS not judged: run too short, or sanitized)\n");
	TEST_ASSERT_EQ(b->heap, a->heap, "DPDK heap back where it was");
	TEST_ASSERT_EQ(b->shm_objects, a->shm_objects, "no new segment");
	return 0;
}

/*
 * Wait until no port holds a connection and all memory is back, polling
 * the receive queues meanwhile as an application does: flushed receives
 * of torn down connections come back through them.
 */
static int
wait_no_conns(struct test_net *net)
{
	uint64_t deadline = test_now_ms() + TIMEOUT_MS, left;
	unsigned int i;

	do {
		test_net_poll(net);
		left = test_net_conn_bytes(net);
	} while (left > 0 && test_now_ms() < deadline);
	TEST_ASSERT_EQ(left, 0, "connections freed");
	for (i = 0; i <= net->n; i++) {
		TEST_ASSERT_EQ(test_xstat(net->port[i], "mem_used_bytes"), 0,
			       "port %u: receive buffers uncharged", i);
		TEST_ASSERT_EQ(test_xstat(net->port[i],
					  "conn_drain_timeouts"), 0,
			       "port %u: every teardown prompt", i);
	}
	return 0;
}

/*
 * One cycle: A connects to B, disconnects, and both ends free the
 * connection, so that what the footprint shows after the warm-up is a
 * leak, never a larger pile of teardowns in flight.
 */
static int
soak_cycle(struct test_net *net, uint32_t seq)
{
	TEST_RUN(test_net_connect(net, 1, seq, seq));
	TEST_ASSERT(rte_pmd_ipoibcm_peer_disconnect(net->port[0],
						    &net->mac[1]) >= 1,
		    "cycle %u: disconnected", seq);
	return wait_no_conns(net);
}

static int
soak_cycles_run(const char *srq)
{
	unsigned int cycles = soak_cycles(10000), warm = cycles / 4, i;
	struct footprint f0, f1;
	struct test_net net;
	uint64_t t0, est;
	char args[32];

	snprintf(args, sizeof(args), "srq=%s", srq);
	TEST_RUN(test_net_open(&net, "t_soak_cyc", args, args, 1));
	t0 = test_now_ms();
	for (i = 0; i < cycles; i++) {
		if (i == warm)
			footprint_take(&f0, test_fabric("t_soak_cyc"));
		TEST_RUN(soak_cycle(&net, i));
	}
	footprint_take(&f1, test_fabric("t_soak_cyc"));
	est = test_xstat(net.port[0], "conn_established_active");
	printf("    srq=%s: %u cycles in %" PRIu64 " ms, %" PRIu64
	       " connections established\n", srq, cycles,
	       test_now_ms() - t0, est);
	TEST_ASSERT_EQ(est, cycles, "one connection per cycle");
	TEST_ASSERT_EQ(test_xstat(net.port[1], "conn_established_passive"),
		       cycles, "B accepted each");
	TEST_RUN(footprint_flat(&f0, &f1, cycles >= RSS_MIN_CYCLES));
	test_net_close(&net);
	return 0;
}

static int
test_soak_cycles_srq(void)
{
	return soak_cycles_run("on");
}
REGISTER_IPOIB_TEST(soak_cycles_srq, test_soak_cycles_srq,
		    "10,000 connect/disconnect cycles (SRQ): nothing grows");

static int
test_soak_cycles_nosrq(void)
{
	return soak_cycles_run("off");
}
REGISTER_IPOIB_TEST(soak_cycles_nosrq, test_soak_cycles_nosrq,
		    "10,000 connect/disconnect cycles (non-SRQ): nothing grows");

/* Peer slot i leaves (closing its port) and a new host takes its place. */
static int
churn_one(struct test_net *net, unsigned int i, unsigned int gen,
	  bool abrupt)
{
	struct rte_pmd_ipoibcm_faults f;
	char args[128];

	if (abrupt) {
		/* A never hears its DREQs: as if the process had died */
		TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_get(net->port[0], &f),
			       0, "faults");
		f.cm_drop_mask = 1u << 5;	/* DREQ */
		TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_set(net->port[0], &f),
			       0, "drop DREQs");
	}
	test_port_destroy(net->names[i]);
	if (abrupt) {
		f.cm_drop_mask = 0;
		TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_set(net->port[0], &f),
			       0, "DREQs again");
	}
	snprintf(args, sizeof(args), "fabric=%s,guid=0x%x,reap_idle=1",
		 test_fabric("t_soak_churn"), 0x10000 + gen);
	TEST_RUN(test_port_create(net->names[i], args, 1, 1500,
				  &net->port[i]));
	rte_eth_macaddr_get(net->port[i], &net->mac[i]);
	return 0;
}

/* A's table holds exactly the live peers once the departed expire. */
static int
wait_peers(struct test_net *net)
{
	uint64_t deadline = test_now_ms() + 3 * TIMEOUT_MS;
	unsigned int all[TEST_NET_MAX_PEERS], i;
	uint32_t seq = 1u << 30;

	for (i = 0; i < net->n; i++)
		all[i] = i + 1;
	/* the live peers stay busy; the departed go idle and expire */
	while (test_xstat(net->port[0], "peers") != net->n) {
		TEST_ASSERT(test_now_ms() < deadline, "A has %" PRIu64
			    " peers for %u live", test_xstat(net->port[0],
			    "peers"), net->n);
		TEST_RUN(test_net_round(net, all, net->n, seq++));
	}
	return 0;
}

/*
 * Traffic to six peers while they leave and new hosts join in their place,
 * one in three leaving abruptly (A never hears its DREQs). Every frame of
 * every round arrives; departed peers expire from A's table; connections,
 * the DPDK heap and the shm segments end where they were.
 */
static int
test_soak_churn(void)
{
	unsigned int churns = soak_cycles(10000) / 25, warm = churns / 4;
	unsigned int all[6] = { 1, 2, 3, 4, 5, 6 }, k;
	const char *fab = test_fabric("t_soak_churn");
	struct footprint f0, f1;
	struct test_net net;
	uint32_t seq = 0;
	uint64_t t0 = test_now_ms();

	TEST_RUN(test_net_open(&net, "t_soak_churn", "reap_idle=1",
			       "reap_idle=1", 6));
	for (k = 0; k < churns; k++) {
		if (k == warm) {
			TEST_RUN(wait_peers(&net));
			footprint_take(&f0, fab);
		}
		TEST_RUN(test_net_rounds(&net, all, 6, 10, seq));
		seq += 10;
		TEST_RUN(churn_one(&net, 1 + k % 6, k, k % 3 == 2));
	}
	TEST_RUN(test_net_rounds(&net, all, 6, 10, seq));
	TEST_RUN(wait_peers(&net));
	footprint_take(&f1, fab);
	printf("    %u peers left and joined in %" PRIu64 " ms, %" PRIu64
	       " forgotten by A\n", churns, test_now_ms() - t0,
	       test_xstat(net.port[0], "peers_forgotten"));
	TEST_ASSERT(test_xstat(net.port[0], "peers_forgotten") >= churns,
		    "every departed peer expired");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "peer_learn_failures"), 0,
		       "the table never filled");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "tx_drop_no_neigh"), 0,
		       "every new host reached");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "conn_drain_timeouts"), 0,
		       "teardowns prompt");
	TEST_RUN(footprint_flat(&f0, &f1, churns * 25 >= RSS_MIN_CYCLES));
	test_net_close(&net);
	return 0;
}
REGISTER_IPOIB_TEST(soak_churn, test_soak_churn,
		    "traffic while 400 peers leave and join: no loss, no growth");
