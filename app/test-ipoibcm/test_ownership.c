/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Buffer ownership: the application holds received mbufs across the
 * teardown of their connection, a port stop and start, a reconfiguration
 * and the close of the port, then reads and frees them. They must be as
 * received (new traffic through new pools must not land in them), and
 * every pool kept for them is freed once they are back. Run under ASan
 * (devtools/test.sh does) a use after free is reported as well.
 *
 * Forwarding: the memory of every received mbuf is known to EAL, with the
 * mbuf's IOVA, as long as the pool lives, and forgotten once it is freed,
 * so that another port of the process can send (DMA) from it.
 */

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_memory.h>
#include <rte_mempool.h>

#include "test.h"
#include "test_net.h"
#include "test_util.h"

#define OWN_HELD	8

/* Frames B (peer 1) received from A and holds, with copies to check. */
struct own_held {
	struct rte_mbuf *m[OWN_HELD * 2];
	struct rte_mbuf *copy[OWN_HELD * 2];
	char pool[OWN_HELD * 2][RTE_MEMPOOL_NAMESIZE];
	void *buf[OWN_HELD * 2];		/* buf_addr of the first segment */
	unsigned int n;
};

/* A sends n frames of len bytes to B; B receives and keeps them all. */
static int
own_hold(struct test_net *net, struct own_held *h, unsigned int n,
	 uint32_t len, uint32_t seq)
{
	unsigned int i;
	uint16_t got;

	TEST_ASSERT(h->n + n <= RTE_DIM(h->m), "");
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = test_udp_frame(&net->mac[0], &net->mac[1],
						    len, seq + i, false);

		TEST_ASSERT(m != NULL, "");
		TEST_ASSERT(test_tx_one(net->port[0], 0, m), "A sends");
	}
	got = test_rx_until(net->port[1], &h->m[h->n], (uint16_t)n,
			    TEST_HANG_MS);
	TEST_ASSERT_EQ(got, n, "B receives");
	for (i = h->n; i < h->n + n; i++) {
		h->copy[i] = rte_pktmbuf_copy(h->m[i], test_mempool(), 0,
					      UINT32_MAX);
		TEST_ASSERT(h->copy[i] != NULL, "");
		snprintf(h->pool[i], sizeof(h->pool[i]), "%s",
			 h->m[i]->pool->name);
		h->buf[i] = h->m[i]->buf_addr;
	}
	h->n += n;
	return 0;
}

/* The application reads what it held, then frees it. */
static int
own_release(struct own_held *h)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < h->n; i++) {
		if (ret == 0 && !test_frames_equal(h->m[i], h->copy[i])) {
			printf("    held frame %u (pool %s) changed\n", i,
			       h->pool[i]);
			ret = -1;
		}
		rte_pktmbuf_free(h->m[i]);
		rte_pktmbuf_free(h->copy[i]);
	}
	h->n = 0;
	return ret;
}

/* Traffic both ways through new buffers, to land in any reused memory. */
static int
own_traffic(struct test_net *net, uint32_t seq)
{
	return test_net_rounds(net, (unsigned int[]){ 1 }, 1, 64, seq);
}

/*
 * Traffic flows through new buffers; then B reads and frees what it held,
 * and no pool of B waits any more.
 */
static int
own_give_back(struct test_net *net, struct own_held *h)
{
	TEST_RUN(own_traffic(net, 1000));
	TEST_RUN(own_release(h));
	TEST_ASSERT(test_wait_xstat(net->port[1], "mem_app_held_pools", 0,
				    TEST_HANG_MS), "no pool waits once all is back");
	return 0;
}

/*
 * The pools of held frames from..to are gone (the reaper freed them).
 * Each look also reads A's xstats, which take the reaper's lock: the
 * frees above are ordered before the reaper's own look, as ThreadSanitizer
 * sees it (it cannot see the order the mempool's ring and caches make;
 * nor EAL's lock over the list of mempools: ipoib_tsan.c).
 */
static int
own_pools_gone(struct test_net *net, const struct own_held *h,
	       unsigned int from, unsigned int to)
{
	double deadline = test_now_ms() + TEST_HANG_MS;
	unsigned int i;

	for (i = from; i < to; i++)
		while (test_xstat(net->port[0], "mem_app_held_pools") !=
		       UINT64_MAX && rte_mempool_lookup(h->pool[i]) != NULL)
			TEST_ASSERT(test_now_ms() < deadline,
				    "pool %s freed once its mbufs are back",
				    h->pool[i]);
	return 0;
}

static int
own_open(struct test_net *net, const char *name, const char *args,
	 struct own_held *h)
{
	memset(h, 0, sizeof(*h));
	TEST_RUN(test_net_open(net, name, args, args, 1));
	/* the first frames come over UD, into the UD pool */
	TEST_RUN(own_hold(net, h, OWN_HELD, 1000, 0));
	TEST_RUN(test_net_connect(net, 1, 0, 100));
	/* then over RC: the SRQ's pool, or the connection's own */
	TEST_RUN(own_hold(net, h, OWN_HELD, 1400, 200));
	TEST_ASSERT(test_xstat(net->port[1], "rx_rc_packets") >= OWN_HELD,
		    "B received over RC");
	return 0;
}

/* B tears its connection with A down; its pool waits for what B holds. */
static int
own_teardown(struct test_net *net)
{
	double deadline = test_now_ms() + TEST_HANG_MS;

	TEST_ASSERT(rte_pmd_ipoibcm_peer_disconnect(net->port[1], &net->mac[0])
		    > 0, "B closes its connections with A");
	while (test_xstat(net->port[1], "mem_app_held_pools") == 0) {
		TEST_ASSERT(test_now_ms() < deadline,
			    "the torn-down connection's pool waits");
		test_net_poll(net);
	}
	return 0;
}

/* Non-SRQ: the connection goes, and its pool with the frames B holds. */
static int
test_own_conn_teardown(void)
{
	struct test_net net;
	struct own_held h;

	TEST_RUN(own_open(&net, "t_own_td", "srq=off", &h));
	TEST_ASSERT(strncmp(h.pool[OWN_HELD], "ipb_c", 5) == 0,
		    "RC frames in a connection's pool (%s)", h.pool[OWN_HELD]);
	TEST_RUN(own_teardown(&net));
	TEST_ASSERT(test_xstat(net.port[1], "mem_app_held_bytes") > 0, "");
	TEST_RUN(own_give_back(&net, &h));
	TEST_RUN(own_pools_gone(&net, &h, OWN_HELD, 2 * OWN_HELD));
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(own_conn_teardown, test_own_conn_teardown,
	      "received mbufs held across their connection's teardown");

/* Stop and start: the frames B holds stay as they were. */
static int
test_own_stop_start(void)
{
	struct test_net net;
	struct own_held h;

	TEST_RUN(own_open(&net, "t_own_ss", "srq=on", &h));
	TEST_ASSERT_EQ(rte_eth_dev_stop(net.port[1]), 0, "");
	TEST_ASSERT_EQ(rte_eth_dev_start(net.port[1]), 0, "");
	TEST_RUN(own_give_back(&net, &h));
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(own_stop_start, test_own_stop_start,
	      "received mbufs held across a port stop and start");

/* Reconfigured: the rx queue and its SRQ pool are set up anew. */
static int
test_own_reconfigure(void)
{
	struct test_net net;
	struct own_held h;

	TEST_RUN(own_open(&net, "t_own_rc", "srq=on", &h));
	TEST_ASSERT_EQ(rte_eth_dev_stop(net.port[1]), 0, "");
	TEST_RUN(test_port_setup(net.port[1], 1, 1500));
	TEST_ASSERT(test_xstat(net.port[1], "mem_app_held_pools") >= 1,
		    "the old queue's pool waits for its mbufs");
	TEST_RUN(own_give_back(&net, &h));
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(own_reconfigure, test_own_reconfigure,
	      "received mbufs held across a reconfiguration of the port");

/*
 * Closed: B's pools outlive the port while B's frames are held; a new
 * port C on the same fabric carries traffic meanwhile.
 */
static int
test_own_close(void)
{
	struct test_net net, c;
	struct own_held h;
	char args[64];

	TEST_RUN(own_open(&net, "t_own_cl", "srq=on", &h));
	TEST_ASSERT_EQ(rte_eth_dev_stop(net.port[1]), 0, "");
	TEST_ASSERT_EQ(rte_eth_dev_close(net.port[1]), 0, "");
	/* C takes B's place on the fabric: new pools, new traffic */
	memset(&c, 0, sizeof(c));
	snprintf(c.names[0], sizeof(c.names[0]), "%s", net.names[0]);
	c.port[0] = net.port[0];
	c.mac[0] = net.mac[0];
	snprintf(c.names[1], sizeof(c.names[1]), "net_ipoibcm_ownc");
	snprintf(args, sizeof(args), "fabric=%s,guid=0x2001",
		 test_fabric("t_own_cl"));
	TEST_RUN(test_port_create(c.names[1], args, 1, 1500, &c.port[1]));
	rte_eth_macaddr_get(c.port[1], &c.mac[1]);
	c.n = 1;
	TEST_RUN(own_traffic(&c, 1000));
	TEST_RUN(own_release(&h));
	TEST_RUN(own_pools_gone(&net, &h, 0, 2 * OWN_HELD));
	test_port_destroy(c.names[1]);
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(own_close, test_own_close,
	      "received mbufs held across the close of the port");

/* ---- forwarding: the pools' memory known to EAL ------------------------ */

/* EAL knows the bytes at va (external memory) with IOVA iova. */
static int
own_eal_iova(const void *va, rte_iova_t iova, const char *pool)
{
	const struct rte_memseg_list *msl = rte_mem_virt2memseg_list(va);
	const struct rte_memseg *ms;

	TEST_ASSERT(msl != NULL && msl->external,
		    "EAL knows %p, in a buffer of pool %s", va, pool);
	ms = rte_mem_virt2memseg(va, msl);
	TEST_ASSERT(ms != NULL, "a memseg holds %p", va);
	TEST_ASSERT_EQ(ms->iova + RTE_PTR_DIFF(va, ms->addr), iova,
		       "EAL's IOVA of %p (pool %s) is the mbuf's", va, pool);
	TEST_ASSERT_EQ(rte_mem_virt2iova(va), iova,
		       "rte_mem_virt2iova(%p) (pool %s) is the mbuf's", va,
		       pool);
	return 0;
}

/* Every segment of the held frames from..to: first and last byte known. */
static int
own_known(const struct own_held *h, unsigned int from, unsigned int to)
{
	const struct rte_mbuf *s;
	unsigned int i;

	for (i = from; i < to; i++)
		for (s = h->m[i]; s != NULL; s = s->next) {
			TEST_RUN(own_eal_iova(s->buf_addr, s->buf_iova,
					      s->pool->name));
			TEST_RUN(own_eal_iova(RTE_PTR_ADD(s->buf_addr,
							  s->buf_len - 1),
					      s->buf_iova + s->buf_len - 1,
					      s->pool->name));
		}
	return 0;
}

/* The pools of the held frames from..to are freed: EAL forgot them. */
static int
own_forgotten(const struct own_held *h, unsigned int from, unsigned int to)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned int i;

	for (i = from; i < to; i++) {
		void *page = RTE_PTR_ALIGN_FLOOR(h->buf[i], pg);

		TEST_ASSERT(rte_mem_virt2memseg_list(h->buf[i]) == NULL,
			    "EAL forgot %p once pool %s was freed", h->buf[i],
			    h->pool[i]);
		TEST_ASSERT_EQ(rte_extmem_register(page, pg, NULL, 0, pg), 0,
			       "the page at %p registers again", page);
		TEST_ASSERT_EQ(rte_extmem_unregister(page, pg), 0, "");
	}
	return 0;
}

/* SRQ: the UD pool's and the SRQ pool's mbufs, until the port closes. */
static int
test_own_eal_srq(void)
{
	unsigned int i, ud = 0;
	struct test_net net;
	struct own_held h;

	TEST_RUN(own_open(&net, "t_own_es", "srq=on", &h));
	/*
	 * A's first frame to B goes over UD (routing it asks for the
	 * connection); the next may too, or over RC if it came up already.
	 * B's receive order need not be A's send order across the two.
	 */
	for (i = 0; i < OWN_HELD; i++)
		ud += strncmp(h.pool[i], "ipb_ud", 6) == 0;
	TEST_ASSERT(ud >= 1 && strncmp(h.pool[OWN_HELD], "ipb_srq", 7) == 0,
		    "frames in the UD pool (%u of the first %u) and the "
		    "SRQ's (%s)", ud, OWN_HELD, h.pool[OWN_HELD]);
	TEST_RUN(own_known(&h, 0, 2 * OWN_HELD));
	TEST_RUN(own_release(&h));
	test_net_close(&net);
	TEST_RUN(own_forgotten(&h, 0, 2 * OWN_HELD));
	return 0;
}
REGISTER_TEST(own_eal_srq, test_own_eal_srq,
	      "received mbufs of the UD and SRQ pools known to EAL, "
	      "forgotten at close");

/*
 * Non-SRQ: a connection's pool stays known while the application holds
 * its mbufs after the teardown, and is forgotten when the reaper frees it.
 */
static int
test_own_eal_conn(void)
{
	struct test_net net;
	struct own_held h;

	TEST_RUN(own_open(&net, "t_own_ec", "srq=off", &h));
	TEST_ASSERT(strncmp(h.pool[OWN_HELD], "ipb_c", 5) == 0,
		    "RC frames in a connection's pool (%s)", h.pool[OWN_HELD]);
	TEST_RUN(own_known(&h, 0, 2 * OWN_HELD));
	TEST_RUN(own_teardown(&net));
	TEST_RUN(own_known(&h, OWN_HELD, 2 * OWN_HELD));
	TEST_RUN(own_release(&h));
	TEST_RUN(own_pools_gone(&net, &h, OWN_HELD, 2 * OWN_HELD));
	TEST_RUN(own_forgotten(&h, OWN_HELD, 2 * OWN_HELD));
	test_net_close(&net);
	TEST_RUN(own_forgotten(&h, 0, OWN_HELD));
	return 0;
}
REGISTER_TEST(own_eal_conn, test_own_eal_conn,
	      "a connection's received mbufs known to EAL while held, "
	      "forgotten when the reaper frees their pool");

/* Every memseg list EAL has left taken by pages of area; how many. */
static unsigned int
own_eal_fill(void *area, size_t pg)
{
	unsigned int n = 0;

	while (n < RTE_MAX_MEMSEG_LISTS &&
	       rte_extmem_register(RTE_PTR_ADD(area, n * pg), pg, NULL, 0,
				   pg) == 0)
		n++;
	return n;
}

/* With EAL's memseg lists all taken: pools EAL refused, traffic flows. */
static int
own_eal_refused(void)
{
	struct test_net net;
	struct own_held h;
	unsigned int i;

	TEST_RUN(own_open(&net, "t_own_ef", "srq=off", &h));
	TEST_ASSERT(test_xstat(net.port[1], "mem_pools_unknown_to_eal") >= 2,
		    "B's UD pool and connection pool counted as refused");
	for (i = 0; i < h.n; i++)
		TEST_ASSERT(rte_mem_virt2memseg_list(h.buf[i]) == NULL,
			    "a refused pool's mbuf is not EAL's memory");
	TEST_RUN(own_release(&h));
	test_net_close(&net);
	return 0;
}

static int
test_own_eal_full(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned int n, i;
	void *area;
	int ret;

	area = mmap(NULL, RTE_MAX_MEMSEG_LISTS * pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TEST_ASSERT(area != MAP_FAILED, "");
	n = own_eal_fill(area, pg);
	ret = n < RTE_MAX_MEMSEG_LISTS && rte_errno == ENOSPC ? 0 : -1;
	if (ret < 0)
		printf("    EAL took %u pages, then: %s\n", n,
		       rte_strerror(rte_errno));
	else
		ret = own_eal_refused();
	for (i = 0; i < n; i++)
		rte_extmem_unregister(RTE_PTR_ADD(area, i * pg), pg);
	munmap(area, RTE_MAX_MEMSEG_LISTS * pg);
	return ret;
}
REGISTER_TEST(own_eal_full, test_own_eal_full,
	      "EAL without a memseg list left: pools it refuses still "
	      "receive, counted");
