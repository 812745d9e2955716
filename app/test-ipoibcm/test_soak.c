/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Soak: connections made and torn down 10,000 times, and traffic while
 * peers come and go. At the end the driver's accounting is back where it
 * started and the process holds what it held after the warm-up: the same
 * DPDK heap, shm segments and mappings of them, and C heap (where it can
 * be told: C_HEAP_CACHED). IPOIBCM_SOAK_CYCLES shortens the runs (the
 * valgrind suite sets it).
 */

#include <dirent.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "ipoib_mem.h"
#include "rte_pmd_ipoib_cm.h"
#include "test.h"
#include "test_net.h"
#include "test_util.h"

/*
 * The C heap in use. The sanitizers' allocators count what is allocated
 * and not freed (allocator_interface.h). glibc's mallinfo2() also counts
 * the chunks each thread keeps in its cache (tcache) for reuse: that
 * settles when the same cycle repeats thousands of times, not in the
 * soak_churn's few hundred varied steps, where it is printed only.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
size_t __sanitizer_get_current_allocated_bytes(void);
#define C_HEAP_CACHED	false
#else
#define C_HEAP_CACHED	true
#endif

static unsigned int
soak_cycles(unsigned int dflt)
{
	const char *s = getenv("IPOIBCM_SOAK_CYCLES");

	return s != NULL && atoi(s) > 0 ? (unsigned int)atoi(s) : dflt;
}

struct heap_elem {
	uintptr_t addr;
	uint64_t len;			/* less the pad */
};

struct heap_busy {
	struct heap_elem *e;		/* by address */
	unsigned int n;
	uint64_t sum;			/* of len */
	bool overflow;			/* more than HEAP_ELEMS_MAX */
};

/*
 * What the process holds. All but the resident set are counts the code
 * alone decides, the same on any machine: a leak makes them grow with the
 * cycles. The resident set is printed, not judged: pages are touched as
 * the pools' objects first are, ASan's quarantine and TSan's shadow keep
 * freed memory resident, and the figures differ between machines.
 */
struct footprint {
	uint64_t rss;
	uint64_t heap;			/* DPDK heap, allocated bytes */
	struct heap_busy busy;		/* its elements: heap_busy_take() */
	uint64_t libc;			/* malloc()ed and not freed */
	unsigned int maps;		/* of the fabric's shm objects */
	unsigned int shm_objects;
};

static uint64_t
libc_in_use(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
#endif
}

/*
 * EAL's heap, element by element: the busy elements' addresses and their
 * length less their pad, read from rte_malloc_dump_heaps(). Where an
 * allocation lands decides its element's length: the pad in front
 * (alignment) is printed apart, but a free remainder behind it too small
 * to split off is not (malloc_elem_alloc() in DPDK's
 * lib/eal/common/malloc_elem.c keeps it in the element when it is at
 * most the element overhead, a 128-byte header, plus MIN_DATA_SIZE, a
 * cache line). So after churn the same allocations can take up to
 * HEAP_REMAINDER_MAX bytes more or less each, in the elements that moved;
 * a leaked allocation is one more busy element.
 */
#define HEAP_REMAINDER_MAX	(128 + RTE_CACHE_LINE_SIZE)
#define HEAP_ELEMS_MAX		65536u

static int
heap_elem_cmp(const void *a, const void *b)
{
	const struct heap_elem *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static int
u64_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

/*
 * The list is mapped, not malloc()ed: it is taken while the C heap is
 * judged, and a's is still there when b's C heap is measured.
 */
static void
heap_busy_take(struct heap_busy *hb)
{
	unsigned long addr = 0, len, pad;
	char *buf = NULL, *line;
	size_t sz = 0;
	bool busy = false;
	FILE *f;

	memset(hb, 0, sizeof(*hb));
	hb->e = mmap(NULL, HEAP_ELEMS_MAX * sizeof(*hb->e),
		     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hb->e == MAP_FAILED) {
		hb->e = NULL;
		return;
	}
	f = open_memstream(&buf, &sz);
	if (f == NULL)
		return;
	rte_malloc_dump_heaps(f);
	fclose(f);
	for (line = strtok(buf, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		if (sscanf(line, "Malloc element at %lx", &addr) == 1) {
			busy = strstr(line, "(BUSY)") != NULL;
		} else if (busy && sscanf(line, " len: %lx pad: %lx", &len,
					  &pad) == 2) {
			if (hb->n == HEAP_ELEMS_MAX) {
				hb->overflow = true;
				break;
			}
			hb->e[hb->n].addr = addr;
			hb->e[hb->n++].len = len - pad;
			hb->sum += len - pad;
			busy = false;
		}
	}
	free(buf);
	if (hb->n > 0)
		qsort(hb->e, hb->n, sizeof(*hb->e), heap_elem_cmp);
}

/*
 * The lengths of x's elements not in y at the same address with the
 * same length, sorted, into len (x->n of them at most); their number.
 */
static unsigned int
heap_busy_moved(const struct heap_busy *x, const struct heap_busy *y,
		uint64_t *len)
{
	unsigned int i = 0, j, moved = 0;

	for (j = 0; j < x->n; j++) {
		while (i < y->n && y->e[i].addr < x->e[j].addr)
			i++;
		if (i == y->n || y->e[i].addr != x->e[j].addr ||
		    y->e[i].len != x->e[j].len)
			len[moved++] = x->e[j].len;
	}
	qsort(len, moved, sizeof(*len), u64_cmp);
	return moved;
}

/* Mappings of the fabric's shm objects (a leaked one may be unlinked). */
static unsigned int
shm_mappings(const char *prefix)
{
	char line[512], needle[80];
	unsigned int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (f == NULL)
		return 0;
	snprintf(needle, sizeof(needle), "/%s", prefix);
	while (fgets(line, sizeof(line), f) != NULL)
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/* Every port's peer table settled (test_wait_peers_settled()). */
static int
peers_settle(const struct test_net *net)
{
	unsigned int i;

	for (i = 0; i <= net->n; i++)
		TEST_ASSERT(test_wait_peers_settled(net->port[i]), "port %u's "
			    "replaced indexes freed", net->port[i]);
	return 0;
}

static void
footprint_take(struct footprint *fp, const char *fabric)
{
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
	fp->heap = ipoib_mem_heap_allocated();
	heap_busy_take(&fp->busy);
	snprintf(prefix, sizeof(prefix), "ipoibcm.%s", fabric);
	fp->maps = shm_mappings(prefix);
	d = opendir("/dev/shm");
	while (d != NULL && (de = readdir(d)) != NULL)
		fp->shm_objects += strncmp(de->d_name, prefix,
					   strlen(prefix)) == 0;
	if (d != NULL)
		closedir(d);
	fp->libc = libc_in_use();
}

/*
 * b's busy elements as many as a's, and those that moved (freed and made
 * again elsewhere) as long as the ones they replace, give or take what
 * an element can hold behind its data: paired by length, in order.
 * moved: how many. A leak is one more element, or a longer one.
 */
static bool
heap_back(const struct footprint *a, const struct footprint *b,
	  unsigned int *moved)
{
	uint64_t *la, *lb;
	unsigned int na, nb, i;
	bool ok;

	*moved = 0;
	if (a->busy.e == NULL || b->busy.e == NULL || a->busy.overflow ||
	    b->busy.overflow)
		return false;
	la = malloc((a->busy.n + 1) * sizeof(*la));
	lb = malloc((b->busy.n + 1) * sizeof(*lb));
	ok = la != NULL && lb != NULL && b->busy.n == a->busy.n;
	if (ok) {
		na = heap_busy_moved(&a->busy, &b->busy, la);
		nb = heap_busy_moved(&b->busy, &a->busy, lb);
		ok = na == nb;
		for (i = 0; ok && i < nb; i++)
			ok = lb[i] <= la[i] + HEAP_REMAINDER_MAX &&
			     la[i] <= lb[i] + HEAP_REMAINDER_MAX;
		*moved = nb;
	}
	free(la);
	free(lb);
	return ok;
}

static void
footprint_release(struct footprint *fp)
{
	if (fp->busy.e != NULL)
		munmap(fp->busy.e, HEAP_ELEMS_MAX * sizeof(*fp->busy.e));
	fp->busy.e = NULL;
}

/*
 * At the end of a run (net quiet, as after the warm-up), b: the footprint
 * back where a was. The heaps may hold what the control thread has yet
 * to free (a CM id of the last teardown, a pool the reaper has not had
 * back, a slow machine's backlog): they are taken again, the queues
 * polled meanwhile, until they are back; a leak never gets there.
 * judge_c_heap: see C_HEAP_CACHED. Frees a's and b's element lists.
 */
static int
footprint_back(struct test_net *net, const char *fabric,
	       struct footprint *a, struct footprint *b, bool judge_c_heap)
{
	double deadline = test_now_ms() + TEST_HANG_MS;
	unsigned int moved;
	bool heap_ok;

	if (peers_settle(net) != 0) {
		footprint_release(a);
		return -1;
	}
	footprint_take(b, fabric);
	while (!(heap_ok = heap_back(a, b, &moved)) ||
	       (judge_c_heap && b->libc > a->libc)) {
		if (test_now_ms() >= deadline)
			break;
		test_net_poll(net);
		footprint_release(b);
		footprint_take(b, fabric);
	}
	printf("    RSS %" PRIu64 " -> %" PRIu64 " KiB (not judged), DPDK "
	       "heap %" PRIu64 " -> %" PRIu64 " (%u -> %u elements, %" PRIu64
	       " -> %" PRIu64 " bytes without pads, %u moved), C heap %"
	       PRIu64 " -> %" PRIu64 " bytes%s, shm objects %u -> %u mapped "
	       "%u -> %u times\n",
	       a->rss >> 10, b->rss >> 10, a->heap, b->heap, a->busy.n,
	       b->busy.n, a->busy.sum, b->busy.sum, moved, a->libc, b->libc,
	       judge_c_heap ? "" : " (not judged: tcache)", a->shm_objects,
	       b->shm_objects, a->maps, b->maps);
	footprint_release(a);
	footprint_release(b);
	TEST_ASSERT(heap_ok, "DPDK heap back where it was: as many busy "
		    "elements, each that moved within %u bytes of one it "
		    "replaced", HEAP_REMAINDER_MAX);
	if (judge_c_heap)
		TEST_ASSERT(b->libc <= a->libc, "C heap back where it was");
	TEST_ASSERT_EQ(b->shm_objects, a->shm_objects, "no new segment");
	TEST_ASSERT_EQ(b->maps, a->maps, "no new mapping of them");
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
	uint64_t deadline = test_now_ms() + TEST_HANG_MS, left;
	unsigned int i;

	do {
		test_net_poll(net);
		left = test_net_conn_slots(net);
	} while (left > 0 && test_now_ms() < deadline);
	TEST_ASSERT_EQ(left, 0, "connections freed");
	for (i = 0; i <= net->n; i++)
		TEST_ASSERT_EQ(test_xstat(net->port[i], "mem_used_bytes"), 0,
			       "port %u: receive buffers uncharged", i);
	return 0;
}

/*
 * Teardowns the driver warned about for taking more than 5 s to drain (a
 * queue polled too seldom): a figure, since a slow machine makes them.
 * That every teardown completes is what wait_no_conns() checks.
 */
static void
print_slow_teardowns(const struct test_net *net)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i <= net->n; i++)
		n += test_xstat(net->port[i], "conn_drain_timeouts");
	printf("    teardowns slower than the driver's 5 s warning: %" PRIu64
	       "\n", n);
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
	uint64_t est;
	double t0;
	char args[32];

	snprintf(args, sizeof(args), "srq=%s", srq);
	TEST_RUN(test_net_open(&net, "t_soak_cyc", args, args, 1));
	t0 = test_now_ms();
	for (i = 0; i < cycles; i++) {
		if (i == warm) {
			TEST_RUN(peers_settle(&net));
			footprint_take(&f0, test_fabric("t_soak_cyc"));
		}
		TEST_RUN(soak_cycle(&net, i));
	}
	TEST_RUN(footprint_back(&net, test_fabric("t_soak_cyc"), &f0, &f1,
				true));
	est = test_xstat(net.port[0], "conn_established_active");
	printf("    srq=%s: %u cycles in %.0f ms, %" PRIu64
	       " connections established\n", srq, cycles,
	       test_now_ms() - t0, est);
	TEST_ASSERT_EQ(est, cycles, "one connection per cycle");
	TEST_ASSERT_EQ(test_xstat(net.port[1], "conn_established_passive"),
		       cycles, "B accepted each");
	print_slow_teardowns(&net);
	test_net_close(&net);
	return 0;
}

static int
test_soak_cycles_srq(void)
{
	return soak_cycles_run("on");
}
REGISTER_TEST(soak_cycles_srq, test_soak_cycles_srq,
		    "10,000 connect/disconnect cycles (SRQ): nothing grows");

static int
test_soak_cycles_nosrq(void)
{
	return soak_cycles_run("off");
}
REGISTER_TEST(soak_cycles_nosrq, test_soak_cycles_nosrq,
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
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;
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
	double t0 = test_now_ms();

	TEST_RUN(test_net_open(&net, "t_soak_churn", "reap_idle=1",
			       "reap_idle=1", 6));
	for (k = 0; k < churns; k++) {
		if (k == warm) {
			TEST_RUN(wait_peers(&net));
			TEST_RUN(peers_settle(&net));
			footprint_take(&f0, fab);
		}
		TEST_RUN(test_net_rounds(&net, all, 6, 10, seq));
		seq += 10;
		TEST_RUN(churn_one(&net, 1 + k % 6, k, k % 3 == 2));
	}
	TEST_RUN(test_net_rounds(&net, all, 6, 10, seq));
	TEST_RUN(wait_peers(&net));
	TEST_RUN(footprint_back(&net, fab, &f0, &f1, !C_HEAP_CACHED));
	printf("    %u peers left and joined in %.0f ms, %" PRIu64
	       " forgotten by A\n", churns, test_now_ms() - t0,
	       test_xstat(net.port[0], "peers_forgotten"));
	TEST_ASSERT(test_xstat(net.port[0], "peers_forgotten") >= churns,
		    "every departed peer expired");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "peer_learn_failures"), 0,
		       "the table never filled");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "tx_drop_no_neigh"), 0,
		       "every new host reached");
	print_slow_teardowns(&net);
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(soak_churn, test_soak_churn,
		    "traffic while 400 peers leave and join: no loss, no growth");
