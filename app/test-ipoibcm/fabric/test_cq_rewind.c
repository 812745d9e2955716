/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * A CQ found empty past its first page starts its next lap
 * (shm_cq_rewind()): a ping-pong keeps its completions in that page
 * instead of walking the ring. Checked here: every message arrives, in
 * order, whatever the rewinds; a CQ that never empties walks on; a
 * position a sender has reserved and not yet published is never
 * skipped; and an entry a rewind leaves behind never comes within
 * reach of a later position's seq (the bound that makes the 32-bit seq
 * safe), while rewinds go on.
 */

#include <stdlib.h>
#include <string.h>

#include "fabric_util.h"
#include "shm_cq_fill.h"

#define RW_CQE		1024	/* a power of 2: the CQ's size exactly */
#define RW_LEN		64

static const struct ep_conf rw_conf_a = { "a", SHM_QPT_RC, 8, RW_LEN };
static const struct ep_conf rw_conf_b = { "b", SHM_QPT_RC, RW_CQE, RW_LEN };

/* The position the consumer will read next. */
static uint64_t
rw_head(const struct shm_cq *cq)
{
	return cq->head;
}

/*
 * Send message seq from a, receive it at b (reposting its buffer), and
 * note the position it completed at in last[] (if not NULL).
 */
static int
rw_one(struct ep *a, struct ep *b, uint32_t seq, uint64_t *last)
{
	uint8_t msg[RW_LEN];
	struct ipoib_wc wc;
	uint64_t h = rw_head(b->cq);

	fill_pattern(msg, sizeof(msg), seq);
	CHECK(rc_send_wait(a->qp, msg, sizeof(msg), T_TIMEOUT) == 0);
	CHECK_EQ(poll_wc(b->cq, &wc, 1, T_TIMEOUT), 1);
	CHECK_EQ(wc.status, IPOIB_WC_SUCCESS);
	CHECK_EQ(wc.byte_len, RW_LEN);
	CHECK(check_pattern(ep_buf(b, (uint32_t)wc.wr_id), RW_LEN, seq),
	      "message %u", seq);
	CHECK_EQ(rw_head(b->cq), h + 1);
	if (last != NULL)
		last[h & b->cq->ring->mask] = h;
	CHECK(ep_post(b, (uint32_t)wc.wr_id) == 0);
	return 0;
out:
	return -1;
}

/* A poll that finds nothing: where a rewind happens. */
static int
rw_idle(struct ep *b)
{
	struct ipoib_wc wc;

	CHECK_EQ(shm_cq_poll(b->cq, &wc, 1), 0);
	return 0;
out:
	return -1;
}

static int
rw_open(struct ep *a, struct ep *b, struct conn *c, const char *fab)
{
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	CHECK(ep_open(a, fab, &rw_conf_a) == 0);
	CHECK(ep_open(b, fab, &rw_conf_b) == 0);
	CHECK_EQ(b->cq->ring->size, RW_CQE);
	CHECK(conn_local(c, a, b, 7) == 0);
	return 0;
out:
	return -1;
}

#define RW_PINGS	1000
#define RW_STREAM	300

static int
test_cq_rewind(void)
{
	struct ipoib_wc wc[RW_STREAM];
	struct conn c = { 0 };
	struct shm_cq_ring *r;
	struct shm_cqe *e;
	struct ep a, b;
	uint64_t h, t, rw;
	uint32_t i, seq = 0;
	char fab[32];

	fabric_name(fab, sizeof(fab), "cq_rewind");
	CHECK(rw_open(&a, &b, &c, fab) == 0);
	r = b.cq->ring;
	/*
	 * A ping-pong: the head never gets past the first page; each time it
	 * reaches SHM_CQ_REWIND_AT the next idle poll starts the next lap.
	 */
	for (i = 0; i < RW_PINGS; i++, seq++) {
		CHECK(rw_one(&a, &b, seq, NULL) == 0);
		CHECK(rw_idle(&b) == 0);
		CHECK((rw_head(b.cq) & r->mask) < SHM_CQ_REWIND_AT,
		      "message %u: head %llu", i,
		      (unsigned long long)rw_head(b.cq));
		CHECK_EQ(shm_load(&r->tail), rw_head(b.cq));
		CHECK_EQ(shm_load(&r->head), rw_head(b.cq));
	}
	CHECK_EQ(b.cq->rewinds, RW_PINGS / SHM_CQ_REWIND_AT);
	CHECK_EQ(rw_head(b.cq), RW_PINGS / SHM_CQ_REWIND_AT * RW_CQE +
		 RW_PINGS % SHM_CQ_REWIND_AT);

	/* a CQ that does not empty walks on: nothing skipped */
	h = rw_head(b.cq);
	rw = b.cq->rewinds;
	for (i = 0; i < RW_STREAM; i++) {
		uint8_t msg[RW_LEN];

		fill_pattern(msg, sizeof(msg), seq + i);
		CHECK(rc_send_wait(a.qp, msg, sizeof(msg), T_TIMEOUT) == 0);
	}
	CHECK_EQ(shm_cq_poll(b.cq, wc, RW_STREAM), RW_STREAM);
	for (i = 0; i < RW_STREAM; i++) {
		CHECK_EQ(wc[i].status, IPOIB_WC_SUCCESS);
		CHECK(check_pattern(ep_buf(&b, (uint32_t)wc[i].wr_id), RW_LEN,
				    seq + i), "message %u", seq + i);
		CHECK(ep_post(&b, (uint32_t)wc[i].wr_id) == 0);
	}
	seq += RW_STREAM;
	CHECK_EQ(rw_head(b.cq), h + RW_STREAM);
	CHECK_EQ(b.cq->rewinds, rw);
	CHECK(rw_idle(&b) == 0);
	CHECK_EQ(b.cq->rewinds, rw + 1);
	CHECK_EQ(rw_head(b.cq) & r->mask, 0);

	/*
	 * A sender has reserved the head's position and not published it
	 * yet (between its two steps, shm_cq_fill.h): no rewind skips it.
	 */
	for (i = 0; i < SHM_CQ_REWIND_AT; i++, seq++)
		CHECK(rw_one(&a, &b, seq, NULL) == 0);
	h = rw_head(b.cq);
	rw = b.cq->rewinds;
	t = shm_cq_reserve(r, 1);
	CHECK_EQ(t, h);
	CHECK(rw_idle(&b) == 0);
	CHECK_EQ(rw_head(b.cq), h);
	CHECK_EQ(b.cq->rewinds, rw);
	/* published, for a queue that is no more: consumed, not delivered */
	e = shm_cq_entry_take(r, t);
	memset(&e->rq_id, 0, SHM_CQE_BODY_LEN);
	e->rq_id = SHM_ANY_RQ;
	shm_cq_publish(e, t);
	CHECK_EQ(shm_cq_poll(b.cq, wc, 1), 0);
	CHECK_EQ(rw_head(b.cq), h + 1);
	CHECK(rw_idle(&b) == 0);
	CHECK_EQ(b.cq->rewinds, rw + 1);
	/* and the traffic after it goes on as before */
	for (i = 0; i < SHM_CQ_REWIND_AT; i++, seq++)
		CHECK(rw_one(&a, &b, seq, NULL) == 0);
	CHECK_EQ(shm_rq_posted(ep_rq(&b)), RW_CQE);
out:
	conn_destroy(&c);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cq_rewind, test_cq_rewind,
	"CQ empty past its first page starts a lap; no reserved entry skipped")

/*
 * rewind_span lowered to 4 laps (from 2^31 positions): rewinds stop
 * before any entry falls span positions behind the tail, a whole lap is
 * walked, and rewinds resume. last[] is each slot's last position, from
 * the test's side: the entry's seq is that position + 1.
 */
#define RW_SPAN_LAPS	4
#define RW_SPAN_PINGS	3000

static int
test_cq_rewind_span(void)
{
	uint64_t *last = NULL, span = (uint64_t)RW_SPAN_LAPS * RW_CQE;
	struct conn c = { 0 };
	struct shm_cq_ring *r;
	struct ep a, b;
	uint32_t i, s, top = 0;
	char fab[32];

	fabric_name(fab, sizeof(fab), "cq_rewind_span");
	CHECK(rw_open(&a, &b, &c, fab) == 0);
	r = b.cq->ring;
	b.cq->rewind_span = span;
	last = calloc(RW_CQE, sizeof(*last));
	CHECK(last != NULL);
	for (s = 0; s < RW_CQE; s++)
		last[s] = UINT64_MAX;	/* position -1: seq 0, never written */
	for (i = 0; i < RW_SPAN_PINGS; i++) {
		uint64_t tail;

		CHECK(rw_one(&a, &b, i, last) == 0);
		CHECK(rw_idle(&b) == 0);
		tail = shm_load(&r->tail);
		if ((uint32_t)(rw_head(b.cq) & r->mask) > top)
			top = (uint32_t)(rw_head(b.cq) & r->mask);
		for (s = 0; s < RW_CQE; s++)
			CHECK(tail - (last[s] + 1) <= span,
			      "message %u: slot %u at %llu, tail %llu", i, s,
			      (unsigned long long)last[s],
			      (unsigned long long)tail);
	}
	/* a whole lap walked (rewinds stopped), and rewinds went on after */
	CHECK_EQ(top, RW_CQE - 1);
	CHECK(b.cq->rewinds >= RW_SPAN_LAPS + 1, "%llu rewinds",
	      (unsigned long long)b.cq->rewinds);
	CHECK((rw_head(b.cq) & r->mask) < RW_CQE / 2);
out:
	free(last);
	conn_destroy(&c);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cq_rewind_span, test_cq_rewind_span,
	"CQ rewinds keep every entry within the span of a 32-bit seq, and go on")
