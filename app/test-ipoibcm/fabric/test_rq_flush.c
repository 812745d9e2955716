/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * A receive queue moved to error while its owner's lcore posts to it, as
 * a connection torn down by the control thread while the datapath refills
 * its ring: every WR posted, before or after the flush, completes exactly
 * once with a flush error. Neither the post nor the flush fences
 * (shm_queue.c): a post racing with the move is completed by
 * shm_qp_flush_settle(), which the main thread calls once the poster has
 * acknowledged the move (the grace period a driver waits for); posts
 * after that see the queue's flag and flush themselves. A WR nobody
 * flushed would never complete and this test would wait for it until its
 * deadline. Reliably it catches a WR that no flush takes (the poster's own
 * flush left out: posts after the settle lost); a post the settle must
 * take it can only make when the store buffer's window is hit, which on
 * x86 it seldom is. Queues of one WR (an active RC QP's) run it too.
 */

#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "fabric_util.h"

#define FL_ROUNDS	2000
#define FL_NWR		64

struct fl_poster {
	struct shm_qp *qp;
	struct shm_cq *cq;
	const struct shm_mem *mem;
	uint32_t buf_len;	/* of each buffer in mem */
	uint32_t nwr;
	uint32_t posted;	/* read by the main thread while it runs */
	uint32_t moved;		/* main: the QP is in error */
	uint32_t acked;		/* poster: it has seen moved (a grace period) */
	uint32_t completed;
	uint32_t bad;		/* completions not a flush of an owed WR */
	uint8_t owed[FL_NWR];	/* 1: posted, not completed */
};

/*
 * The lcore's part: post every free slot and poll, as a datapath refills
 * its ring. Posting goes on after the error, into the slots the flush
 * completions free (WRs posted to a queue in error complete at once,
 * from the poster's own flush), until 2 x nwr have completed; then it
 * polls until nothing posted is owed (or the deadline: a WR lost).
 */
static void *
fl_poster_main(void *arg)
{
	struct fl_poster *p = arg;
	double deadline = test_now_ms() + T_TIMEOUT;
	struct ipoib_wc wc[16];
	uint32_t i;
	uint16_t n;

	while (test_now_ms() < deadline) {
		/* a quiescent state, as a burst's end reports one */
		if (__atomic_load_n(&p->moved, __ATOMIC_ACQUIRE))
			__atomic_store_n(&p->acked, 1, __ATOMIC_RELEASE);
		for (i = 0; p->completed < 2 * p->nwr && i < p->nwr; i++) {
			if (p->owed[i] ||
			    post_buf(shm_qp_rq(p->qp), p->mem, p->buf_len,
				     i) < 0)
				continue;
			p->owed[i] = 1;
			__atomic_fetch_add(&p->posted, 1, __ATOMIC_RELEASE);
		}
		n = shm_cq_poll(p->cq, wc, (uint16_t)(sizeof(wc) /
						      sizeof(wc[0])));
		for (i = 0; i < n; i++) {
			uint64_t id = wc[i].wr_id;

			if (wc[i].status != IPOIB_WC_WR_FLUSH_ERR ||
			    id >= p->nwr || !p->owed[id]) {
				p->bad++;
				continue;
			}
			p->owed[id] = 0;
			p->completed++;
		}
		if (p->completed >= 2 * p->nwr && p->completed ==
		    __atomic_load_n(&p->posted, __ATOMIC_RELAXED))
			break;
		if (n == 0)	/* the main thread may share this core */
			sched_yield();
	}
	/* it posts no more: the main thread's settle need not wait */
	__atomic_store_n(&p->acked, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * One round: the QP goes to error once the poster has posted spin WRs
 * (at most nwr: nothing completes before the error) and the main thread
 * has counted to delay, which moves the flush over the poster's loop.
 */
static int
fl_round(struct ep *e, struct shm_cq *cq, uint32_t nwr, uint32_t spin,
	 uint32_t delay)
{
	volatile uint32_t d;
	struct fl_poster p = {
		.cq = cq, .mem = &e->mem, .buf_len = e->buf_len, .nwr = nwr,
	};
	bool started = false;
	pthread_t tid;

	p.qp = qp_new(e->port, SHM_QPT_RC, cq, NULL, nwr, 0);
	CHECK(p.qp != NULL);
	CHECK(pthread_create(&tid, NULL, fl_poster_main, &p) == 0);
	started = true;
	/* the poster may share this core */
	while (__atomic_load_n(&p.posted, __ATOMIC_ACQUIRE) < spin)
		sched_yield();
	for (d = 0; d < delay; d++)
		;
	CHECK(shm_qp_modify(p.qp, SHM_QPS_ERR) == 0);
	__atomic_store_n(&p.moved, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&p.acked, __ATOMIC_ACQUIRE))
		sched_yield();
	shm_qp_flush_settle(p.qp);
	CHECK(pthread_join(tid, NULL) == 0);
	started = false;
	CHECK_EQ(p.bad, 0);
	CHECK(p.posted >= spin, "posted %u", p.posted);
	CHECK(p.posted >= 2 * nwr, "posted %u", p.posted);
	CHECK_EQ(p.completed, p.posted);	/* none lost */
	/* the destroy's flush finds nothing: every WR was polled */
	CHECK_EQ(shm_qp_destroy(p.qp), 0);
	return 0;
out:
	if (started)
		pthread_join(tid, NULL);
	if (p.qp != NULL)
		qp_destroy_drain(p.qp, cq);
	return -1;
}

static int
test_rq_flush_race(void)
{
	struct ep_conf c = { "f", SHM_QPT_RC, FL_NWR, 64, .no_post = true };
	struct shm_cq *cq = NULL;	/* the rounds' QPs' */
	struct ep e;
	char fab[32];
	uint32_t r;

	memset(&e, 0, sizeof(e));
	fabric_name(fab, sizeof(fab), "rq_flush_race");
	CHECK(ep_open(&e, fab, &c) == 0);
	cq = shm_cq_create(e.port, FL_NWR);
	CHECK(cq != NULL);
	for (r = 0; r < FL_ROUNDS; r++)
		CHECK(fl_round(&e, cq, FL_NWR, 1 + r % FL_NWR,
			       r * 37 % 1000) == 0, "round %u", r);
	/* a queue of one WR, as an active RC QP's */
	for (r = 0; r < FL_ROUNDS; r++)
		CHECK(fl_round(&e, cq, 1, 1, r * 37 % 1000) == 0,
		      "one-WR round %u", r);
out:
	if (cq != NULL)
		shm_cq_destroy(cq);
	ep_close(&e);
	return ft_end(fab);
}
REGISTER_TEST(rq_flush_race, test_rq_flush_race,
	"RQ to error while its lcore posts: every WR completes once, flushed")
