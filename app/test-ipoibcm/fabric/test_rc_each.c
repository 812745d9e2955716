/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The RC send template (shm_rc_send.h) as a caller with its own message
 * type sees it, the driver's shm transport being one: each message read
 * through its callback, "sent" called once per message that completed
 * at the receiver, in order, and never for one the receiver had no WR
 * for (the caller still owns those), whatever path a message took: one
 * piece, several pieces, longer than the buffer.
 */

#include <string.h>
#include <sys/uio.h>

#include "fabric_util.h"
#include "shm_rc_send.h"

#define EACH_BUF	256
#define EACH_N		6

/* The caller's messages: up to two pieces each, as an mbuf chain has. */
struct each_msg {
	uint8_t data[2][EACH_BUF + 64];
	uint32_t len[2];
	uint32_t npieces;
};

struct each_ctx {
	struct each_msg *m;
	uint32_t from;		/* message 0 of the current call */
	struct iovec iov[2];
	struct shm_send sg;
	uint32_t sent[EACH_N];	/* times each was reported sent */
	uint32_t order[EACH_N];	/* the reports, in order */
	uint32_t nsent;
};

static __attribute__((always_inline)) inline void
each_msg(void *ctx, uint32_t i, struct shm_rc_msg *m)
{
	struct each_ctx *x = ctx;
	struct each_msg *e = &x->m[x->from + i];
	uint32_t j;

	m->src = e->data[0];
	m->len = e->len[0];
	m->sg = NULL;
	if (e->npieces == 1)
		return;
	for (j = 0; j < e->npieces; j++) {
		x->iov[j].iov_base = e->data[j];
		x->iov[j].iov_len = e->len[j];
	}
	x->sg.iov = x->iov;
	x->sg.iovcnt = (uint16_t)e->npieces;
	m->sg = &x->sg;
	m->len = e->len[0] + e->len[1];
}

static __attribute__((always_inline)) inline void
each_sent(void *ctx, uint32_t i)
{
	struct each_ctx *x = ctx;

	x->sent[x->from + i]++;
	/* counted always, kept while there is room (a template reporting
	 * twice fails the count, not the test's memory)
	 */
	if (x->nsent < EACH_N)
		x->order[x->nsent] = x->from + i;
	x->nsent++;
}

/* Messages from to from + n - 1, as the template's 0 to n - 1. */
static uint16_t
each_send(struct shm_qp *qp, struct each_ctx *x, uint32_t from, uint16_t n)
{
	x->from = from;
	return shm_rc_send_each(qp, n, x, each_msg, each_sent);
}

static void
each_fill(struct each_msg *m)
{
	/* 0: one piece; 1: two pieces; 2: longer than the buffer; 3: two
	 * pieces, the second empty; 4, 5: one piece
	 */
	static const uint32_t lens[EACH_N][2] = {
		{ 100, 0 }, { 60, 40 }, { EACH_BUF + 1, 0 }, { 77, 0 },
		{ 16, 0 }, { EACH_BUF, 0 },
	};
	static const uint32_t pieces[EACH_N] = { 1, 2, 1, 2, 1, 1 };
	uint32_t i, j;

	for (i = 0; i < EACH_N; i++) {
		m[i].npieces = pieces[i];
		for (j = 0; j < 2; j++) {
			m[i].len[j] = lens[i][j];
			fill_pattern(m[i].data[j], sizeof(m[i].data[j]),
				     i * 2 + j);
		}
	}
}

static int
each_check(struct ep *b, const struct each_msg *m, uint32_t from, uint32_t n)
{
	struct ipoib_wc wc[EACH_N];
	uint32_t i;

	CHECK_EQ(poll_wc(b->cq, wc, (int)n, T_TIMEOUT), n);
	for (i = 0; i < n; i++) {
		const struct each_msg *e = &m[from + i];
		uint32_t len = e->len[0] + (e->npieces > 1 ? e->len[1] : 0);
		const uint8_t *got = ep_buf(b, (uint32_t)wc[i].wr_id);

		CHECK_EQ(wc[i].wr_id, from + i);
		if (len > EACH_BUF) {
			CHECK_EQ(wc[i].status, IPOIB_WC_LOC_LEN_ERR);
			continue;
		}
		CHECK_EQ(wc[i].status, IPOIB_WC_SUCCESS);
		CHECK_EQ(wc[i].byte_len, len);
		CHECK(memcmp(got, e->data[0], e->len[0]) == 0,
		      "message %u, first piece", from + i);
		if (e->npieces > 1)
			CHECK(memcmp(got + e->len[0], e->data[1],
				     e->len[1]) == 0,
			      "message %u, second piece", from + i);
	}
	return 0;
out:
	return -1;
}

static int
test_rc_each(void)
{
	struct ep_conf cb = { "b", SHM_QPT_RC, EACH_N, EACH_BUF,
			      .no_post = true };
	static const struct ep_conf ca = { "a", SHM_QPT_RC, 8, EACH_BUF };
	static struct each_msg msgs[EACH_N];
	struct each_ctx x;
	struct conn c = { 0 };
	struct ep a, b;
	uint32_t i;
	char fab[32];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&x, 0, sizeof(x));
	each_fill(msgs);
	x.m = msgs;
	fabric_name(fab, sizeof(fab), "rc_each");
	CHECK(ep_open(&a, fab, &ca) == 0);
	CHECK(ep_open(&b, fab, &cb) == 0);
	CHECK(conn_local(&c, &a, &b, 7) == 0);
	/* no WR at the receiver: an RNR, nothing reported sent */
	CHECK_EQ(each_send(a.qp, &x, 0, EACH_N), 0);
	CHECK_EQ(x.nsent, 0);
	/* three WRs: messages 0 to 2 go, the length error among them */
	for (i = 0; i < 3; i++)
		CHECK(ep_post(&b, i) == 0);
	CHECK_EQ(each_send(a.qp, &x, 0, EACH_N), 3);
	CHECK_EQ(x.nsent, 3);
	CHECK(each_check(&b, msgs, 0, 3) == 0);
	/* the rest, from where the caller stopped */
	for (i = 3; i < EACH_N; i++)
		CHECK(ep_post(&b, i) == 0);
	CHECK_EQ(each_send(a.qp, &x, 3, EACH_N - 3), EACH_N - 3);
	CHECK(each_check(&b, msgs, 3, EACH_N - 3) == 0);
	CHECK_EQ(x.nsent, EACH_N);
	for (i = 0; i < EACH_N; i++) {
		CHECK_EQ(x.sent[i], 1);
		CHECK_EQ(x.order[i], i);
	}
	CHECK_EQ(shm_qp_state(a.qp), SHM_QPS_RTS);
out:
	conn_destroy(&c);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(rc_each, test_rc_each,
	"RC send template: each message read once, reported sent once, in order")
