/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * RC and receive queues: a long reliable stream between processes,
 * scatter lists, RNR, SRQs, flushes and the port's resource limits.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabric_util.h"

#define RC_N		100000
#define RC_BUF		4096
#define RC_NBUFS	256
#define RC_BURST	32

static const struct ep_conf rc_conf_a = { "a", SHM_QPT_RC, RC_NBUFS, RC_BUF };
static const struct ep_conf rc_conf_b = { "b", SHM_QPT_RC, RC_NBUFS, RC_BUF };

/* Private data of REQ (dir 0) and REP (dir 1): every byte used. */
static void
priv_fill(uint8_t *p, int dir)
{
	int i;

	for (i = 0; i < IPOIB_CM_PRIV_MAX; i++)
		p[i] = (uint8_t)(i * 3 + dir * 101 + 1);
}

static int
priv_check(const struct shm_cm_event *ev, int dir)
{
	uint8_t want[IPOIB_CM_PRIV_MAX];

	priv_fill(want, dir);
	CHECK_EQ(ev->priv_len, IPOIB_CM_PRIV_MAX);
	CHECK(memcmp(ev->priv, want, IPOIB_CM_PRIV_MAX) == 0, "private data");
	return 0;
out:
	return -1;
}

/*
 * Send n and receive n messages on e's connected QP, both at once; each
 * completion names the connected peer's QP and LID (hello of peer).
 */
static int
rc_stream(struct ep *e, uint32_t n, const struct msg *peer)
{
	static uint8_t bufs[RC_BURST][RC_BUF];
	double deadline = test_now_ms() + 250000;
	struct shm_send sw[RC_BURST];
	struct iovec iov[RC_BURST];
	uint32_t sent = 0, rcvd = 0, i, k, len;
	double t0 = test_now_ms();
	uint64_t bytes = 0;
	struct ipoib_wc wc[64];

	while (sent < n || rcvd < n) {
		CHECK(test_now_ms() < deadline, "sent %u, received %u", sent, rcvd);
		k = n - sent < RC_BURST ? n - sent : RC_BURST;
		for (i = 0; i < k; i++) {
			len = seq_len(sent + i, RC_BUF);
			fill_pattern(bufs[i], len, sent + i);
			iov[i] = (struct iovec){ bufs[i], len };
			sw[i] = (struct shm_send){ .iov = &iov[i],
						   .iovcnt = 1 };
		}
		if (k > 0)
			sent += shm_qp_post_send(e->qp, sw, (uint16_t)k);
		CHECK(shm_qp_state(e->qp) == SHM_QPS_RTS);
		k = shm_cq_poll(e->cq, wc, 64);
		for (i = 0; i < k; i++, rcvd++) {
			len = seq_len(rcvd, RC_BUF);
			CHECK_EQ(wc[i].status, IPOIB_WC_SUCCESS);
			CHECK_EQ(wc[i].byte_len, len);
			CHECK_EQ(wc[i].wc_flags & IPOIB_WC_GRH, 0);
			CHECK_EQ(wc[i].src_qp, peer->u32[1]);
			CHECK_EQ(wc[i].slid, peer->u32[0]);
			bytes += len;
			CHECK(check_pattern(ep_buf(e, (uint32_t)wc[i].wr_id),
					    len, rcvd), "message %u", rcvd);
			CHECK(ep_post(e, (uint32_t)wc[i].wr_id) == 0);
		}
	}
	ft_note("[pid %d] %u messages, %.1f MB each way in %.0f ms",
		(int)getpid(), n, bytes / 1e6, test_now_ms() - t0);
	return 0;
out:
	return -1;
}

/* The active side, in the child: REQ with private data, RTU, stream. */
static int
rc_child(int rd, int wr, void *arg)
{
	uint8_t priv[IPOIB_CM_PRIV_MAX];
	struct shm_cm_id *id = NULL;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	struct msg peer, m;
	struct ep b;

	memset(&b, 0, sizeof(b));
	CHECK(ep_open(&b, arg, &rc_conf_b) == 0);
	CHECK(msg_expect(rd, MSG_HELLO, &peer, T_TIMEOUT) == 0);
	ep_hello(&b, &m);
	CHECK(msg_send(wr, MSG_HELLO, &m) == 0);
	priv_fill(priv, 0);
	req_init(&req, peer.gid, b.qp, 7, 5);
	req.priv = priv;
	req.priv_len = sizeof(priv);
	CHECK(shm_cm_connect(b.port, &req, &id) == 0);
	CHECK(cm_expect(b.port, IPOIB_CM_REP_RCVD, &ev, T_TIMEOUT) == 0);
	CHECK(ev.id == id && priv_check(&ev, 1) == 0);
	CHECK_EQ(ev.remote_qpn, peer.u32[1]);
	CHECK(shm_cm_rtu(id) == 0);
	CHECK_EQ(shm_qp_state(b.qp), SHM_QPS_RTS);
	CHECK(rc_stream(&b, RC_N, &peer) == 0);
	CHECK(msg_send(wr, MSG_DONE, NULL) == 0);
	CHECK(msg_expect(rd, MSG_GO, NULL, 250000) == 0);
	CHECK(shm_cm_disconnect(id) == 0);
	CHECK(cm_expect(b.port, IPOIB_CM_DISCONNECTED, &ev, T_TIMEOUT) == 0);
out:
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&b);
	return ft_fails == 0 ? 0 : -1;
}

static int
test_rc_two_procs(void)
{
	uint8_t priv[IPOIB_CM_PRIV_MAX];
	struct child c = { .pid = -1 };
	struct shm_cm_id *id = NULL;
	struct shm_cm_event ev;
	struct msg peer, m;
	char fab[32];
	struct ep a;

	memset(&a, 0, sizeof(a));
	fabric_name(fab, sizeof(fab), "rc_two_procs");
	CHECK(ep_open(&a, fab, &rc_conf_a) == 0);
	CHECK(shm_cm_listen(a.port, T_SID) == 0);
	CHECK(shm_cm_listen(a.port, T_SID) == -EADDRINUSE);
	CHECK(child_start(&c, rc_child, fab) == 0);
	ep_hello(&a, &m);
	CHECK(msg_send(c.wr, MSG_HELLO, &m) == 0);
	CHECK(msg_expect(c.rd, MSG_HELLO, &peer, T_TIMEOUT) == 0);
	CHECK(cm_expect(a.port, IPOIB_CM_REQ_RCVD, &ev, T_TIMEOUT) == 0);
	id = ev.id;
	CHECK(priv_check(&ev, 0) == 0);
	CHECK(ev.service_id == T_SID && ev.remote_qpn == peer.u32[1] &&
	      ev.remote_lid == peer.u32[0], "REQ names its sender");
	CHECK(memcmp(ev.remote_gid, peer.gid, IPOIB_GID_LEN) == 0);
	priv_fill(priv, 1);
	CHECK(shm_cm_accept(id, a.qp, &a, priv, sizeof(priv)) == 0);
	CHECK_EQ(shm_qp_state(a.qp), SHM_QPS_RTR);
	CHECK(cm_expect(a.port, IPOIB_CM_ESTABLISHED, &ev, T_TIMEOUT) == 0);
	CHECK(ev.id == id && ev.context == &a);
	CHECK_EQ(shm_qp_state(a.qp), SHM_QPS_RTS);
	CHECK(rc_stream(&a, RC_N, &peer) == 0);
	CHECK(msg_expect(c.rd, MSG_DONE, NULL, 250000) == 0);
	CHECK(msg_send(c.wr, MSG_GO, NULL) == 0);
	CHECK(cm_expect(a.port, IPOIB_CM_DREQ_RCVD, &ev, T_TIMEOUT) == 0);
	CHECK(child_wait(&c, T_TIMEOUT) == 0);
out:
	child_kill(&c);
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(rc_two_procs, test_rc_two_procs,
	"RC via the CM between processes: 100000 messages each way, in order")

/* ---- scatter ------------------------------------------------------------ */

#define SG_N		33
#define SG_LEN		2048
#define SG_MSG		65524

/* A WR of n SGEs of len bytes each, laid out backwards with gaps. */
static int
post_sgl(struct shm_rq *rq, const struct shm_mem *m, uint32_t n,
	 const uint32_t *lens, uint64_t wr_id)
{
	struct ipoib_recv_wr wr = { .wr_id = wr_id, .num_sge = (uint16_t)n };
	uint64_t off = m->len;
	uint32_t i;

	for (i = 0; i < n; i++) {
		off -= lens[i] + 64;	/* a 64-byte gap after each */
		wr.sg_list[i] = (struct ipoib_sge){ (uintptr_t)m->addr + off,
						    lens[i], m->lkey };
	}
	return shm_rq_post(rq, &wr, 1) == 1 ? 0 : -1;
}

/* Gather what the WR posted by post_sgl() holds; the gaps must be 0xaa. */
static int
gather_sgl(const struct shm_mem *m, uint32_t n, const uint32_t *lens,
	   uint8_t *out)
{
	const uint8_t *base = m->addr;
	uint64_t off = m->len;
	uint32_t i, j;

	for (i = 0; i < n; i++) {
		off -= lens[i] + 64;
		memcpy(out, base + off, lens[i]);
		out += lens[i];
		for (j = 0; j < 64; j++)
			CHECK_EQ(base[off + lens[i] + j], 0xaa);
	}
	return 0;
out:
	return -1;
}

/* Port b gets a QP that takes up to IPOIB_MAX_SGE SGEs per WR. */
static struct shm_qp *
sg_qp(struct ep *b, enum shm_qp_type type)
{
	struct shm_qp_conf qc = {
		.type = type, .recv_cq = b->cq, .max_recv_wr = 4,
		.max_recv_sge = IPOIB_MAX_SGE, .qkey = T_QKEY,
	};
	struct shm_qp *qp = shm_qp_create(b->port, &qc);

	if (qp != NULL && type == SHM_QPT_UD)
		shm_qp_modify(qp, SHM_QPS_RTS);
	return qp;
}

static int
rc_scatter(struct ep *a, struct ep *b, struct shm_mem *m, uint8_t *msg,
	   uint8_t *got)
{
	uint32_t lens[SG_N], i;
	struct shm_port_counters cnt;
	struct ipoib_wc wc;

	for (i = 0; i < SG_N; i++)
		lens[i] = SG_LEN;
	memset(m->addr, 0xaa, m->len);
	fill_pattern(msg, SG_MSG, 7);
	CHECK(post_sgl(shm_qp_rq(b->qp), m, SG_N, lens, 33) == 0);
	CHECK(rc_send_wait(a->qp, msg, SG_MSG, T_TIMEOUT) == 0);
	CHECK_EQ(poll_wc(b->cq, &wc, 1, T_TIMEOUT), 1);
	CHECK(wc.status == IPOIB_WC_SUCCESS && wc.wr_id == 33);
	CHECK_EQ(wc.byte_len, SG_MSG);
	CHECK(gather_sgl(m, SG_N, lens, got) == 0);
	CHECK(memcmp(got, msg, SG_MSG) == 0, "scattered bytes");
	for (i = SG_MSG; i < SG_N * SG_LEN; i++)
		CHECK_EQ(got[i], 0xaa);
	/* one byte more than the WR holds */
	CHECK(post_sgl(shm_qp_rq(b->qp), m, 1, lens, 1) == 0);
	CHECK(rc_send_wait(a->qp, msg, SG_LEN + 1, T_TIMEOUT) == 0);
	CHECK_EQ(poll_wc(b->cq, &wc, 1, T_TIMEOUT), 1);
	CHECK(wc.status == IPOIB_WC_LOC_LEN_ERR && wc.wr_id == 1);
	shm_port_counters(b->port, &cnt);
	CHECK_EQ(cnt.len_errs, 1);
	return 0;
out:
	return -1;
}

/*
 * Messages of 4 KiB and more posted 4 at a time are copied with
 * non-temporal stores, which write 16 aligned bytes at a time
 * (shm_send.c): SGEs of odd lengths at odd addresses, sources at odd
 * addresses, WRs longer than the messages; nothing around them may change
 * (the gaps, the tails).
 */
#define NT_N		4	/* SHM_STREAM_BATCH, and b's max_recv_wr */
#define NT_REGION	10000	/* of m per WR; not a multiple of 16 */

static int
rc_nt_post(struct ep *a, struct ep *b, struct shm_mem *m, uint8_t *msg,
	   uint8_t *got, const uint32_t *lens, uint32_t n, uint32_t len)
{
	struct iovec iov[NT_N];
	struct shm_send sw[NT_N];
	struct ipoib_wc wc[NT_N];
	uint32_t i, j, room = 0;

	for (i = 0; i < n; i++)
		room += lens[i];
	memset(m->addr, 0xaa, m->len);
	for (j = 0; j < NT_N; j++) {
		struct shm_mem mj = *m;

		mj.len -= j * NT_REGION;
		iov[j] = (struct iovec){ msg + j * NT_REGION + 2 * j + 1, len };
		sw[j] = (struct shm_send){ .iov = &iov[j], .iovcnt = 1 };
		fill_pattern(iov[j].iov_base, len, len + j);
		CHECK(post_sgl(shm_qp_rq(b->qp), &mj, n, lens, j) == 0);
	}
	CHECK_EQ(shm_qp_post_send(a->qp, sw, NT_N), NT_N);
	CHECK_EQ(poll_wc(b->cq, wc, NT_N, T_TIMEOUT), NT_N);
	for (j = 0; j < NT_N; j++) {
		struct shm_mem mj = *m;

		mj.len -= j * NT_REGION;
		CHECK(wc[j].status == IPOIB_WC_SUCCESS && wc[j].wr_id == j);
		CHECK_EQ(wc[j].byte_len, len);
		CHECK(gather_sgl(&mj, n, lens, got) == 0);
		CHECK(memcmp(got, iov[j].iov_base, len) == 0,
		      "%u bytes streamed, message %u", len, j);
		for (i = len; i < room; i++)
			CHECK_EQ(got[i], 0xaa);
	}
	return 0;
out:
	return -1;
}

static int
rc_nt_copy(struct ep *a, struct ep *b, struct shm_mem *m, uint8_t *msg,
	   uint8_t *got)
{
	static const uint32_t sg[] = { 5, 9, 31, 63, 4097, 4811 };
	static const uint32_t one[] = { 9001 };
	const uint32_t nsg = (uint32_t)(sizeof(sg) / sizeof(sg[0]));

	/* in pieces (shm_copy_sg()), 15 bytes short of the WRs */
	CHECK(rc_nt_post(a, b, m, msg, got, sg, nsg, 9001) == 0);
	/* one piece (shm_copy()) */
	CHECK(rc_nt_post(a, b, m, msg, got, one, 1, 9001) == 0);
	/* the smallest streamed message */
	CHECK(rc_nt_post(a, b, m, msg, got, sg, nsg, 4096) == 0);
	return 0;
out:
	return -1;
}

/* UD: the GRH split over two SGEs, the payload after it; then too long. */
static int
ud_scatter(struct ep *a, struct ep *b, struct shm_qp *ud, struct shm_mem *m,
	   uint8_t *msg, uint8_t *got)
{
	uint32_t lens[3] = { 16, 30, 2000 };
	struct shm_port_counters cnt;
	struct shm_ah ah;
	struct ipoib_wc wc;

	memset(m->addr, 0xaa, m->len);
	fill_pattern(msg, 2006, 9);
	CHECK(shm_ah_resolve(a->f, b->info.gid, 0, &ah) == 0);
	ah.global = true;	/* with a GRH, split over the first two SGEs */
	CHECK(post_sgl(shm_qp_rq(ud), m, 3, lens, 3) == 0);
	CHECK_EQ(ud_send(a->qp, &ah, shm_qp_num(ud), T_QKEY, msg, 2006), 1);
	CHECK_EQ(poll_wc(b->cq, &wc, 1, 0), 1);
	CHECK(wc.status == IPOIB_WC_SUCCESS && wc.byte_len == 2046);
	CHECK(gather_sgl(m, 3, lens, got) == 0);
	CHECK(got[0] == 0x60 && memcmp(got + 8, a->info.gid, 16) == 0 &&
	      memcmp(got + 24, b->info.gid, 16) == 0, "split GRH");
	CHECK(memcmp(got + IPOIB_GRH_LEN, msg, 2006) == 0, "payload");
	CHECK(post_sgl(shm_qp_rq(ud), m, 3, lens, 4) == 0);
	CHECK_EQ(ud_send(a->qp, &ah, shm_qp_num(ud), T_QKEY, msg, 2007), 1);
	CHECK_EQ(poll_wc(b->cq, &wc, 1, 0), 1);
	CHECK(wc.status == IPOIB_WC_LOC_LEN_ERR && wc.wr_id == 4);
	shm_port_counters(b->port, &cnt);
	CHECK_EQ(cnt.len_errs, 2);
	return 0;
out:
	return -1;
}

static int
test_rc_scatter(void)
{
	struct ep_conf cb = { "b", SHM_QPT_RC, 16, 64, .no_post = true };
	uint8_t *msg = malloc(SG_N * SG_LEN), *got = malloc(SG_N * SG_LEN);
	struct shm_mem m = { 0 };
	struct shm_qp *ud = NULL;
	struct conn cn = { 0 };
	struct ep a, b, u;
	char fab[32];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&u, 0, sizeof(u));
	fabric_name(fab, sizeof(fab), "rc_scatter");
	CHECK(msg != NULL && got != NULL);
	CHECK(ep_open(&a, fab, &rc_conf_a) == 0);
	CHECK(ep_open(&b, fab, &cb) == 0);
	CHECK(ep_open(&u, fab, &(struct ep_conf){ "u", SHM_QPT_UD, 4, 64 }) ==
	      0);
	/* b's QP is replaced by one taking 34 SGEs */
	CHECK(shm_qp_destroy(b.qp) == 0);
	b.qp = sg_qp(&b, SHM_QPT_RC);
	CHECK(b.qp != NULL);
	CHECK(shm_mem_alloc(b.f, 2 * SG_N * (SG_LEN + 64), &m) == 0);
	CHECK(conn_local(&cn, &a, &b, 7) == 0);
	CHECK(rc_scatter(&a, &b, &m, msg, got) == 0);
	CHECK(rc_nt_copy(&a, &b, &m, msg, got) == 0);
	/* and a UD QP on b with scatter lists, sent to from u */
	ud = sg_qp(&b, SHM_QPT_UD);
	CHECK(ud != NULL);
	CHECK(ud_scatter(&u, &b, ud, &m, msg, got) == 0);
out:
	if (ud != NULL)
		qp_destroy_drain(ud, b.cq);
	conn_destroy(&cn);
	if (m.addr != NULL)
		shm_mem_free(b.f, &m);
	ep_close(&u);
	ep_close(&b);
	ep_close(&a);
	free(msg);
	free(got);
	return ft_end(fab);
}
REGISTER_TEST(rc_scatter, test_rc_scatter,
	"65524 bytes into 33 SGEs of 2048; too long: LOC_LEN_ERR, counted; "
	"messages of 4 KiB and up, 4 a post (streamed), at odd addresses "
	"and lengths")

/* ---- RNR ---------------------------------------------------------------- */

/* Post the same 4 messages; returns how many went. */
static uint16_t
send4(struct shm_qp *qp)
{
	static char data[4][100];
	struct shm_send sw[4];
	struct iovec iov[4];
	int i;

	for (i = 0; i < 4; i++) {
		memset(data[i], 'A' + i, sizeof(data[i]));
		iov[i] = (struct iovec){ data[i], sizeof(data[i]) };
		sw[i] = (struct shm_send){ .iov = &iov[i], .iovcnt = 1 };
	}
	return shm_qp_post_send(qp, sw, 4);
}

static int
rnr_forever(struct ep *a, struct ep *b)
{
	struct shm_port_counters cnt;
	struct shm_async_event ev;
	struct ipoib_wc wc[4];
	double t0 = test_now_ms();
	int n = 0;

	/* well past what any finite budget (at most 7 x 10 ms) allows */
	while (test_now_ms() - t0 < 300) {
		CHECK_EQ(send4(a->qp), 0);
		n++;
	}
	CHECK_EQ(shm_qp_state(a->qp), SHM_QPS_RTS);
	CHECK_EQ(shm_async_poll(a->port, &ev, 1), 0);
	shm_port_counters(a->port, &cnt);
	CHECK_EQ(cnt.rnr_naks, n);
	/* two buffers: the batch stops after two, in order */
	CHECK(ep_post(b, 0) == 0 && ep_post(b, 1) == 0);
	CHECK_EQ(send4(a->qp), 2);
	CHECK_EQ(poll_wc(b->cq, wc, 2, T_TIMEOUT), 2);
	CHECK(wc[0].wr_id == 0 && ep_buf(b, 0)[0] == 'A');
	CHECK(wc[1].wr_id == 1 && ep_buf(b, 1)[0] == 'B');
	return 0;
out:
	return -1;
}

static int
rnr_bounded(struct ep *c, uint8_t budget)
{
	struct shm_async_event ev;
	double t0 = test_now_ms(), dt;

	while (shm_qp_state(c->qp) != SHM_QPS_ERR && test_now_ms() - t0 < T_TIMEOUT)
		CHECK_EQ(send4(c->qp), 0);
	dt = test_now_ms() - t0;
	CHECK_EQ(shm_qp_state(c->qp), SHM_QPS_ERR);
	CHECK(dt >= (budget + 1) * SHM_RNR_TIMER_MS - 1,
	      "error after %.1f ms, before the RNR budget", dt);
	CHECK(async_wait(c->port, &ev, T_TIMEOUT) == 1);
	CHECK(ev.type == SHM_EV_QP_FATAL && ev.qp_num == shm_qp_num(c->qp));
	CHECK_EQ(shm_async_poll(c->port, &ev, 1), 0);	/* once */
	CHECK_EQ(send4(c->qp), 0);
	ft_note("RNR budget %u: QP in error after %.1f ms", budget, dt);
	return 0;
out:
	return -1;
}

static int
test_rc_rnr(void)
{
	struct ep_conf cb = { "b", SHM_QPT_RC, 8, 256, .no_post = true };
	struct ep_conf cd = { "d", SHM_QPT_RC, 8, 256, .no_post = true };
	struct ep_conf cc = { "c", SHM_QPT_RC, 8, 256 };
	struct conn c1 = { 0 }, c2 = { 0 };
	struct ep a, b, c, d;
	char fab[32];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	memset(&d, 0, sizeof(d));
	fabric_name(fab, sizeof(fab), "rc_rnr");
	CHECK(ep_open(&a, fab, &rc_conf_a) == 0);
	CHECK(ep_open(&b, fab, &cb) == 0);
	CHECK(ep_open(&c, fab, &cc) == 0);
	CHECK(ep_open(&d, fab, &cd) == 0);
	CHECK(conn_local(&c1, &a, &b, 7) == 0);
	CHECK(rnr_forever(&a, &b) == 0);
	CHECK(conn_local(&c2, &c, &d, 2) == 0);
	CHECK(rnr_bounded(&c, 2) == 0);
out:
	conn_destroy(&c2);
	conn_destroy(&c1);
	ep_close(&d);
	ep_close(&c);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(rc_rnr, test_rc_rnr,
	"RNR: the batch stops; budget 7 retries for ever, 2 ends in QP_FATAL")

/* ---- SRQ ---------------------------------------------------------------- */

#define SRQ_QPS		3

/* Send message i from qa[i % 3]; then the SRQ limit event, or none. */
static int
srq_send(struct ep *b, struct shm_qp **qa, uint32_t i, bool event)
{
	struct shm_async_event ev;
	char msg[64];
	int n;

	fill_pattern((uint8_t *)msg, sizeof(msg), i);
	CHECK(rc_send_wait(qa[i % SRQ_QPS], msg, sizeof(msg), T_TIMEOUT) == 0);
	n = shm_async_poll(b->port, &ev, 1);
	CHECK_EQ(n, event ? 1 : 0);
	if (event)
		CHECK(ev.type == SHM_EV_SRQ_LIMIT && ev.srq == b->srq);
	return 0;
out:
	return -1;
}

static int
srq_check(struct ep *b, struct shm_qp **qa, struct shm_qp **qb, uint32_t n)
{
	struct ipoib_wc wc[32];
	uint32_t i;

	CHECK_EQ(poll_wc(b->cq, wc, (int)n, T_TIMEOUT), n);
	for (i = 0; i < n; i++) {
		CHECK_EQ(wc[i].status, IPOIB_WC_SUCCESS);
		CHECK_EQ(wc[i].qp_num, shm_qp_num(qb[i % SRQ_QPS]));
		CHECK_EQ(wc[i].qp_context, i % SRQ_QPS);
		CHECK_EQ(wc[i].src_qp, shm_qp_num(qa[i % SRQ_QPS]));
		CHECK(check_pattern(ep_buf(b, (uint32_t)wc[i].wr_id), 64, i));
	}
	return 0;
out:
	return -1;
}

static int
srq_run(struct ep *b, struct shm_qp **qa, struct shm_qp **qb)
{
	uint32_t i;

	for (i = 0; i < 32; i++)
		CHECK(ep_post(b, i) == 0);
	CHECK(shm_srq_arm(b->srq, 16) == 0);
	/* below 16 posted is after the 17th message, and only once */
	for (i = 0; i < 22; i++)
		CHECK(srq_send(b, qa, i, i == 16) == 0, "message %u", i);
	/* re-armed at 8: 10 left now, below 8 after three more */
	CHECK(shm_srq_arm(b->srq, 8) == 0);
	for (; i < 25; i++)
		CHECK(srq_send(b, qa, i, i == 24) == 0, "message %u", i);
	CHECK(srq_check(b, qa, qb, 25) == 0);
	CHECK_EQ(shm_rq_posted(b->srq), 7);
	CHECK_EQ(shm_srq_destroy(b->srq), -EBUSY);
	return 0;
out:
	return -1;
}

/* An SRQ goes once no QP uses it and no completion of it is left. */
static int
srq_leave(struct ep *b, struct shm_qp **qa, struct shm_qp **qb)
{
	struct ipoib_wc wc;
	int i;

	CHECK(srq_send(b, qa, 25, false) == 0);
	for (i = 0; i < SRQ_QPS; i++) {
		CHECK(shm_qp_destroy(qb[i]) == 0);
		qb[i] = NULL;
	}
	b->qp = NULL;
	CHECK_EQ(shm_srq_destroy(b->srq), -EBUSY);
	CHECK_EQ(poll_wc(b->cq, &wc, 1, T_TIMEOUT), 1);
	CHECK(wc.status == IPOIB_WC_SUCCESS && wc.byte_len == 64);
	CHECK_EQ(shm_srq_destroy(b->srq), 0);
	b->srq = NULL;
	return 0;
out:
	return -1;
}

static int
test_srq_shared(void)
{
	struct ep_conf cb = { "b", SHM_QPT_RC, 64, 64, .srq = true,
			      .no_post = true };
	struct shm_qp *qa[SRQ_QPS] = { NULL }, *qb[SRQ_QPS] = { NULL };
	struct conn cn[SRQ_QPS] = { { 0 } };
	struct shm_cq *cqa = NULL;
	struct ep a, b;
	char fab[32];
	int i;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	fabric_name(fab, sizeof(fab), "srq_shared");
	CHECK(ep_open(&a, fab, &rc_conf_a) == 0);
	CHECK(ep_open(&b, fab, &cb) == 0);
	cqa = shm_cq_create(a.port, 8);
	CHECK(cqa != NULL);
	qa[0] = a.qp;
	qb[0] = b.qp;
	for (i = 1; i < SRQ_QPS; i++) {
		qa[i] = qp_new(a.port, SHM_QPT_RC, cqa, NULL, 2, 0);
		qb[i] = qp_new(b.port, SHM_QPT_RC, b.cq, b.srq, 0, (uint32_t)i);
		CHECK(qa[i] != NULL && qb[i] != NULL);
	}
	for (i = 0; i < SRQ_QPS; i++)
		CHECK(conn_qps(&cn[i], a.port, qa[i], b.port, qb[i], 7) == 0);
	CHECK(srq_run(&b, qa, qb) == 0);
	CHECK(srq_leave(&b, qa, qb) == 0);
out:
	for (i = SRQ_QPS - 1; i >= 0; i--) {
		conn_destroy(&cn[i]);
		if (i > 0 && qa[i] != NULL)
			qp_destroy_drain(qa[i], cqa);
		if (i > 0 && qb[i] != NULL)
			qp_destroy_drain(qb[i], b.cq);
	}
	if (cqa != NULL)
		shm_cq_destroy(cqa);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(srq_shared, test_srq_shared,
	"SRQ shared by 3 RC QPs; limit event once, re-armed; destroy rules")

/* ---- flush -------------------------------------------------------------- */

static int
flush_check(struct ep *b, uint32_t first, int n)
{
	struct ipoib_wc wc[8];
	int i;

	CHECK_EQ(poll_wc(b->cq, wc, n, T_TIMEOUT), n);
	for (i = 0; i < n; i++) {
		CHECK_EQ(wc[i].status, IPOIB_WC_WR_FLUSH_ERR);
		CHECK_EQ(wc[i].wr_id, first + (uint32_t)i);
		CHECK_EQ(wc[i].qp_num, shm_qp_num(b->qp));
	}
	return 0;
out:
	return -1;
}

static int
test_qp_flush(void)
{
	struct ep_conf cb = { "b", SHM_QPT_UD, 8, 256 };
	struct ep_conf cr = { "r", SHM_QPT_RC, 8, 256 };
	struct ipoib_wc wc;
	struct shm_ah ah;
	struct ep a, b, r;
	char fab[32];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&r, 0, sizeof(r));
	fabric_name(fab, sizeof(fab), "qp_flush");
	CHECK(ep_open(&a, fab, &(struct ep_conf){ "a", SHM_QPT_UD, 8, 256 }) ==
	      0);
	CHECK(ep_open(&b, fab, &cb) == 0);
	CHECK(ep_open(&r, fab, &cr) == 0);
	CHECK_EQ(shm_rq_posted(shm_qp_rq(b.qp)), 8);
	CHECK_EQ(shm_qp_modify(r.qp, SHM_QPS_RTS), -EINVAL);	/* CM's job */
	CHECK(shm_qp_modify(b.qp, SHM_QPS_ERR) == 0);
	CHECK_EQ(shm_qp_state(b.qp), SHM_QPS_ERR);
	CHECK_EQ(shm_qp_modify(b.qp, SHM_QPS_RTS), -EINVAL);
	CHECK_EQ(shm_qp_destroy(b.qp), -EBUSY);
	CHECK(flush_check(&b, 0, 7) == 0);
	CHECK_EQ(shm_qp_destroy(b.qp), -EBUSY);
	CHECK(flush_check(&b, 7, 1) == 0);
	/* posted in error: flushed at once */
	CHECK(ep_post(&b, 0) == 0 && ep_post(&b, 1) == 0);
	CHECK(flush_check(&b, 0, 2) == 0);
	/* a QP in error receives nothing */
	CHECK(shm_ah_resolve(a.f, b.info.gid, 0, &ah) == 0);
	CHECK_EQ(ud_send(a.qp, &ah, shm_qp_num(b.qp), T_QKEY, "x", 1), 1);
	CHECK_EQ(shm_cq_poll(b.cq, &wc, 1), 0);
	CHECK_EQ(shm_qp_destroy(b.qp), 0);
	b.qp = NULL;
	/* an RC QP that never connected flushes the same way */
	CHECK(shm_qp_modify(r.qp, SHM_QPS_ERR) == 0);
	CHECK_EQ(poll_wc(r.cq, &wc, 1, T_TIMEOUT), 1);
	CHECK_EQ(wc.status, IPOIB_WC_WR_FLUSH_ERR);
out:
	ep_close(&r);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(qp_flush, test_qp_flush,
	"modify(ERR) flushes posted WRs; destroy is -EBUSY until polled")

/* ---- limits ------------------------------------------------------------- */

/* errno of a create that must fail. */
#define FAILS_WITH(expr, err) ((errno = 0, (expr) == NULL) && errno == (err))

static int
limits_qps(struct shm_port *p, struct shm_cq *cq, struct shm_rq *srq)
{
	struct shm_qp *q[3] = { NULL }, *x = NULL;
	struct shm_cq *small = shm_cq_create(p, 32);
	int i;

	CHECK(small != NULL);
	for (i = 0; i < 3; i++)
		CHECK((q[i] = qp_new(p, SHM_QPT_UD, cq, NULL, 32, 0)) != NULL);
	CHECK(FAILS_WITH(qp_new(p, SHM_QPT_UD, cq, NULL, 1, 0), ENOMEM));
	CHECK(shm_qp_destroy(q[2]) == 0);
	q[2] = NULL;
	/* 64 of 128 CQEs committed: 65 more do not fit, 64 do */
	CHECK(FAILS_WITH(qp_new(p, SHM_QPT_UD, cq, NULL, 65, 0), ENOMEM));
	CHECK((q[2] = qp_new(p, SHM_QPT_UD, cq, NULL, 64, 0)) != NULL);
	CHECK(shm_qp_destroy(q[2]) == 0);
	q[2] = NULL;
	/* an SRQ of 64 WRs cannot complete on a CQ of 32 */
	CHECK(FAILS_WITH(qp_new(p, SHM_QPT_RC, small, srq, 0, 0), ENOMEM));
	CHECK(FAILS_WITH(qp_new(p, SHM_QPT_UD, small, NULL,
				SHM_DEF_MAX_QP_WR + 1, 0), ENOMEM));
	CHECK((x = qp_new(p, SHM_QPT_RC, cq, srq, 0, 0)) != NULL);
out:
	for (i = 0; i < 3; i++)
		if (q[i] != NULL)
			shm_qp_destroy(q[i]);
	if (x != NULL)
		shm_qp_destroy(x);
	if (small != NULL)
		shm_cq_destroy(small);
	return ft_fails == 0 ? 0 : -1;
}

static int
test_limits(void)
{
	struct shm_port_conf pc = {
		.name = "lim", .max_qp = 3, .max_srq_wr = 64, .max_cqe = 128,
	};
	struct shm_port_info info;
	struct shm_fabric *f = NULL;
	struct shm_port *p = NULL;
	struct shm_rq *srq = NULL;
	struct shm_cq *cq = NULL;
	char fab[32];

	fabric_name(fab, sizeof(fab), "limits");
	CHECK(shm_fabric_attach(fab, &f) == 0);
	CHECK(shm_port_open(f, &pc, &p) == 0);
	shm_port_query(p, &info);
	CHECK(info.max_qp == 3 && info.max_srq_wr == 64 &&
	      info.max_cqe == 128 && info.max_qp_wr == SHM_DEF_MAX_QP_WR);
	CHECK(FAILS_WITH(shm_cq_create(p, 129), ENOMEM));
	CHECK((cq = shm_cq_create(p, 128)) != NULL);
	CHECK(FAILS_WITH(shm_srq_create(p, 65, 1, 0), ENOMEM));
	CHECK((srq = shm_srq_create(p, 64, 1, 0)) != NULL);
	CHECK(limits_qps(p, cq, srq) == 0);
out:
	if (srq != NULL)
		shm_srq_destroy(srq);
	if (cq != NULL)
		shm_cq_destroy(cq);
	if (p != NULL)
		shm_port_close(p);
	if (f != NULL)
		shm_fabric_detach(f);
	return ft_end(fab);
}
REGISTER_TEST(limits, test_limits,
	"max_qp, max_srq_wr, max_cqe and CQ capacity: ENOMEM past them")
