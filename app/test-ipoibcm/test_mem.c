/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Memory truth: what the ports say they allocated (the mem_* xstats by
 * category) is what EAL's heap and the shm fabric's arena say they gave.
 * The application's mempool is made first; the heap (EAL's allocated
 * bytes, every socket) and the arena (this process's, shm_arena_used())
 * are read before the ports exist, then with the ports started and no
 * connection, then with connections up, in each receive mode. Each time,
 * exactly:
 *   - the EAL heap categories of all ports sum to the heap's growth;
 *   - their receive buffers and HCA queues (mem_rx_buffer_bytes,
 *     mem_hca_bytes) sum to the arena's growth.
 * The figures are read between two measured regions of the driver
 * (ipoib_mem_generation()), so a control thread that allocates meanwhile
 * makes the reader read again rather than compare half a change.
 * Then the ports are closed: everything goes back, heap and arena, to
 * what they were before the ports. That is checked in a second round:
 * in the first, 6 KiB allocated while the process's first receive pool
 * is made (counted to that port's mempools) stay after close, once per
 * process.
 */

#include <inttypes.h>
#include <stdio.h>

#include <rte_ethdev.h>

#include "ipoib_mem.h"
#include "shm_fabric.h"
#include "test.h"
#include "test_net.h"
#include "test_util.h"

#define MEM_PEERS	3

struct mem_snap {
	uint64_t heap;		/* EAL: allocated bytes */
	uint64_t arena;		/* fabric: this process's arena in use */
	uint64_t cats;		/* the ports' heap categories, summed */
	uint64_t heap_total;	/* the ports' mem_heap_bytes, summed */
	uint64_t fabric;	/* the ports' buffers and HCA queues */
};

static int
mem_read(struct test_net *net, unsigned int nports, struct shm_fabric *f,
	 struct mem_snap *s)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;
	unsigned int i, k;
	uint32_t gen;

	do {
		TEST_ASSERT(test_now_ms() < deadline, "a quiet moment");
		gen = ipoib_mem_generation();
		memset(s, 0, sizeof(*s));
		s->heap = ipoib_mem_heap_allocated();
		s->arena = shm_arena_used(f);
		for (i = 0; i < nports; i++) {
			for (k = 0; k < IPOIB_MEM_HEAP_NB; k++)
				s->cats += test_xstat(net->port[i],
						      ipoib_mem_names[k]);
			s->heap_total += test_xstat(net->port[i],
						    "mem_heap_bytes");
			s->fabric += test_xstat(net->port[i],
						"mem_rx_buffer_bytes") +
				     test_xstat(net->port[i], "mem_hca_bytes");
		}
	} while ((gen & 1) != 0 || gen != ipoib_mem_generation());
	return 0;
}

static int
mem_check(struct test_net *net, unsigned int nports, struct shm_fabric *f,
	  const struct mem_snap *s0, const char *when)
{
	struct mem_snap s;

	TEST_RUN(mem_read(net, nports, f, &s));
	printf("    %s: heap +%" PRIu64 ", categories %" PRIu64
	       "; arena +%" PRIu64 ", buffers and HCA queues %" PRIu64 "\n",
	       when, s.heap - s0->heap, s.cats, s.arena - s0->arena,
	       s.fabric);
	TEST_ASSERT_EQ(s.heap_total, s.cats, "%s: mem_heap_bytes is the sum "
		       "of the categories", when);
	TEST_ASSERT_EQ(s.cats, s.heap - s0->heap, "%s: the categories are "
		       "what EAL's heap gave", when);
	TEST_ASSERT_EQ(s.fabric, s.arena - s0->arena, "%s: buffers and HCA "
		       "queues are what the arena gave", when);
	return 0;
}

static int
mem_round(const char *args, bool closed_check)
{
	const char *fabric = test_fabric("t_mem");
	struct mem_snap s0;
	struct shm_fabric *f;
	struct test_net net;
	uint64_t owner;
	uint32_t seq = 0;
	unsigned int p;

	TEST_ASSERT(test_mempool() != NULL, "the application's mempool");
	/* ethdev's data of all ports, made on first use, is no port's */
	TEST_ASSERT_EQ(rte_eth_dev_owner_new(&owner), 0, "ethdev ready");
	TEST_ASSERT_EQ(shm_fabric_attach(fabric, &f), 0, "fabric %s", fabric);
	s0.heap = ipoib_mem_heap_allocated();
	s0.arena = shm_arena_used(f);
	/* test_net_open() names the fabric as test_fabric("t_mem") did */
	TEST_RUN(test_net_open(&net, "t_mem", args, args, MEM_PEERS));
	TEST_RUN(mem_check(&net, MEM_PEERS + 1, f, &s0, "no connection"));
	for (p = 1; p <= MEM_PEERS; p++)
		TEST_RUN(test_net_connect(&net, p, 0, seq++));
	TEST_ASSERT_EQ(test_xstat(net.port[0], "conns_tx_connected"),
		       MEM_PEERS, "A is connected to every peer");
	TEST_RUN(mem_check(&net, MEM_PEERS + 1, f, &s0, "connected"));
	test_net_close(&net);
	if (closed_check) {
		TEST_ASSERT_EQ(ipoib_mem_heap_allocated(), s0.heap, "closed: EAL's heap as "
			       "before the ports");
		TEST_ASSERT_EQ(shm_arena_used(f), s0.arena, "closed: the "
			       "arena as before the ports");
	}
	shm_fabric_detach(f);
	return 0;
}

static int
mem_categories(const char *args)
{
	TEST_RUN(mem_round(args, false));
	return mem_round(args, true);
}

static int
test_mem_categories_srq(void)
{
	return mem_categories("srq=on");
}
REGISTER_TEST(mem_categories_srq, test_mem_categories_srq,
	      "SRQ: the memory categories are what EAL and the fabric gave");

static int
test_mem_categories_nosrq(void)
{
	return mem_categories("srq=off");
}
REGISTER_TEST(mem_categories_nosrq, test_mem_categories_nosrq,
	      "non-SRQ: the memory categories are what EAL and the fabric "
	      "gave");
