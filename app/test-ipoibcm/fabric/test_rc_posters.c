/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Several threads posting on one RC QP at once, as ibv_post_send() allows
 * and the driver does (its tx queues, and its control thread sending held
 * frames): every message arrives once, each thread's in the order it
 * posted them, through RNR streaks the threads share (a receiver with few
 * buffers), and the QP stays connected.
 */

#include <inttypes.h>
#include <pthread.h>
#include <string.h>

#include "fabric_util.h"

#define PO_THREADS	2
#define PO_N		20000	/* messages per thread */
#define PO_NBUFS	8	/* the receiver's: RNR streaks are common */

struct po_msg {
	uint32_t thread;
	uint32_t seq;
};

struct poster {
	pthread_t tid;
	struct shm_qp *qp;
	uint32_t thread;
	uint32_t sent;
	bool failed;		/* the QP left RTS */
};

static void *
poster_main(void *arg)
{
	struct poster *p = arg;
	struct po_msg m = { .thread = p->thread };
	struct iovec iov = { &m, sizeof(m) };
	struct shm_send sw = { .iov = &iov, .iovcnt = 1 };
	double deadline = test_now_ms() + T_TIMEOUT;

	while (p->sent < PO_N && test_now_ms() < deadline) {
		m.seq = p->sent;
		if (shm_qp_post_send(p->qp, &sw, 1) == 1) {
			p->sent++;
			continue;
		}
		/* refused: an RNR NAK; retried for ever (budget 7) */
		if (shm_qp_state(p->qp) != SHM_QPS_RTS) {
			p->failed = true;
			break;
		}
	}
	return NULL;
}

/* Receive every thread's messages, each thread's in order. */
static int
po_receive(struct ep *b)
{
	uint32_t next[PO_THREADS] = { 0 }, got = 0, i;
	double deadline = test_now_ms() + T_TIMEOUT;
	struct ipoib_wc wc[PO_NBUFS];
	struct po_msg m;
	int k, j;

	while (got < PO_THREADS * PO_N) {
		CHECK(test_now_ms() < deadline, "received %u of %u", got,
		      PO_THREADS * PO_N);
		k = shm_cq_poll(b->cq, wc, PO_NBUFS);
		for (j = 0; j < k; j++, got++) {
			CHECK_EQ(wc[j].status, IPOIB_WC_SUCCESS);
			CHECK_EQ(wc[j].byte_len, sizeof(m));
			memcpy(&m, ep_buf(b, (uint32_t)wc[j].wr_id), sizeof(m));
			CHECK(m.thread < PO_THREADS, "thread %u", m.thread);
			CHECK(m.seq == next[m.thread],
			      "thread %u: message %u where %u was next",
			      m.thread, m.seq, next[m.thread]);
			next[m.thread]++;
			CHECK(ep_post(b, (uint32_t)wc[j].wr_id) == 0);
		}
	}
	for (i = 0; i < PO_THREADS; i++)
		CHECK_EQ(next[i], PO_N);
	return 0;
out:
	return -1;
}

static int
test_rc_posters(void)
{
	struct ep_conf cb = { "b", SHM_QPT_RC, PO_NBUFS, 64 };
	struct ep_conf ca = { "a", SHM_QPT_RC, PO_NBUFS, 64 };
	struct poster po[PO_THREADS];
	struct shm_port_counters cnt;
	struct shm_async_event ev;
	struct conn c = { 0 };
	int started = 0, ret, i;
	struct ep a, b;
	char fab[32];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(po, 0, sizeof(po));
	fabric_name(fab, sizeof(fab), "rc_posters");
	CHECK(ep_open(&a, fab, &ca) == 0);
	CHECK(ep_open(&b, fab, &cb) == 0);
	CHECK(conn_local(&c, &a, &b, 7) == 0);
	for (i = 0; i < PO_THREADS; i++) {
		po[i].qp = a.qp;
		po[i].thread = (uint32_t)i;
		CHECK(pthread_create(&po[i].tid, NULL, poster_main, &po[i]) ==
		      0);
		started++;
	}
	ret = po_receive(&b);
	for (i = 0; i < started; i++)
		pthread_join(po[i].tid, NULL);
	started = 0;
	CHECK(ret == 0, "every message, each thread's in order");
	for (i = 0; i < PO_THREADS; i++) {
		CHECK(!po[i].failed, "thread %d: the QP left RTS", i);
		CHECK_EQ(po[i].sent, PO_N);
	}
	CHECK_EQ(shm_qp_state(a.qp), SHM_QPS_RTS);
	CHECK_EQ(shm_async_poll(a.port, &ev, 1), 0);
	shm_port_counters(a.port, &cnt);
	ft_note("%u messages from %d threads, %" PRIu64 " RNR NAKs on the way",
		PO_THREADS * PO_N, PO_THREADS, cnt.rnr_naks);
out:
	for (i = 0; i < started; i++)
		pthread_join(po[i].tid, NULL);
	conn_destroy(&c);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(rc_posters, test_rc_posters,
	"two threads post on one RC QP through RNR: all arrive, each in order")
