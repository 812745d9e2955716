/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Death: a peer process SIGKILLed mid-stream (our QPs fail, what it had
 * is reclaimed, it comes back), and a sender that died holding a claimed
 * receive WR (our QPs can still be destroyed).
 */

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>

#include "fabric_util.h"

/* ---- peer death --------------------------------------------------------- */

#define PD_BUF		512
#define PD_XCHG		32

static const struct ep_conf pd_ud = { "ud", SHM_QPT_UD, 64, PD_BUF };
static const struct ep_conf pd_rc = { "rc", SHM_QPT_RC, 64, PD_BUF };

struct pd_arg {
	const char *fabric;
	bool stream;		/* send until killed */
};

/* What came from the peer: RC in order; UD may have gaps, not go back. */
struct pd_rx {
	uint32_t rc;
	uint32_t ud;
	uint32_t ud_next;
};

static int
pd_drain(struct ep *rc, struct ep *ud, struct pd_rx *rx)
{
	struct ipoib_wc wc[16];
	uint32_t i, k, len, seq;
	const uint8_t *p;

	k = shm_cq_poll(rc->cq, wc, 16);
	for (i = 0; i < k; i++, rx->rc++) {
		len = seq_len(rx->rc, PD_BUF);
		CHECK_EQ(wc[i].status, IPOIB_WC_SUCCESS);
		CHECK(wc[i].byte_len == len &&
		      check_pattern(ep_buf(rc, (uint32_t)wc[i].wr_id), len,
				    rx->rc), "RC message %u", rx->rc);
		CHECK(ep_post(rc, (uint32_t)wc[i].wr_id) == 0);
	}
	k = shm_cq_poll(ud->cq, wc, 16);
	for (i = 0; i < k; i++, rx->ud++) {
		p = ep_buf(ud, (uint32_t)wc[i].wr_id) + IPOIB_GRH_LEN;
		memcpy(&seq, p, 4);
		len = seq_len(seq, PD_BUF - IPOIB_GRH_LEN);
		CHECK_EQ(wc[i].status, IPOIB_WC_SUCCESS);
		CHECK(seq >= rx->ud_next && wc[i].byte_len ==
		      IPOIB_GRH_LEN + len && check_pattern(p, len, seq),
		      "UD message %u after %u", seq, rx->ud_next);
		rx->ud_next = seq + 1;
		CHECK(ep_post(ud, (uint32_t)wc[i].wr_id) == 0);
	}
	return 0;
out:
	return -1;
}

/* Send n (or, when stream, endlessly) RC and UD messages; receive n. */
static int
pd_traffic(struct ep *rc, struct ep *ud, const struct msg *peer_ud,
	   uint32_t n, bool stream)
{
	/* a stream runs until the parent kills it, which waits T_TIMEOUT */
	double deadline = test_now_ms() + (stream ? 2 * T_TIMEOUT : T_TIMEOUT);
	struct pd_rx rx = { 0 };
	uint32_t rs = 0, us = 0, len;
	uint8_t buf[PD_BUF];
	struct shm_ah ah;

	CHECK(shm_ah_resolve(ud->f, peer_ud->gid, 0, &ah) == 0);
	while (stream || rs < n || us < n || rx.rc < n || rx.ud < n) {
		CHECK(test_now_ms() < deadline, "RC %u/%u UD %u/%u", rs, rx.rc, us,
		      rx.ud);
		if (stream || rs < n) {
			len = seq_len(rs, PD_BUF);
			fill_pattern(buf, len, rs);
			rs += rc_send(rc->qp, buf, len);
		}
		if (stream || us < n) {
			len = seq_len(us, PD_BUF - IPOIB_GRH_LEN);
			fill_pattern(buf, len, us);
			CHECK_EQ(ud_send(ud->qp, &ah, peer_ud->u32[1], T_QKEY,
					 buf, len), 1);
			us++;
		}
		CHECK(pd_drain(rc, ud, &rx) == 0);
		sched_yield();
	}
	return 0;
out:
	return -1;
}

static int
pd_child(int rd, int wr, void *arg)
{
	const struct pd_arg *pa = arg;
	struct shm_cm_id *id = NULL;
	struct msg pud, prc, m;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	struct ep cu, cr;

	memset(&cu, 0, sizeof(cu));
	memset(&cr, 0, sizeof(cr));
	CHECK(ep_open(&cu, pa->fabric, &(struct ep_conf){ "cud", SHM_QPT_UD,
		      64, PD_BUF }) == 0);
	CHECK(ep_open(&cr, pa->fabric, &(struct ep_conf){ "crc", SHM_QPT_RC,
		      64, PD_BUF }) == 0);
	CHECK(msg_expect(rd, MSG_HELLO, &pud, T_TIMEOUT) == 0);
	CHECK(msg_expect(rd, MSG_HELLO, &prc, T_TIMEOUT) == 0);
	ep_hello(&cu, &m);
	m.u32[3] = shm_qp_num(cr.qp);
	CHECK(msg_send(wr, MSG_HELLO, &m) == 0);
	req_init(&req, prc.gid, cr.qp, 7, 5);
	CHECK(shm_cm_connect(cr.port, &req, &id) == 0);
	CHECK(cm_expect(cr.port, IPOIB_CM_REP_RCVD, &ev, T_TIMEOUT) == 0);
	CHECK(shm_cm_rtu(id) == 0);
	CHECK(msg_send(wr, MSG_READY, NULL) == 0);
	CHECK(pd_traffic(&cr, &cu, &pud, PD_XCHG, pa->stream) == 0);
	CHECK(msg_send(wr, MSG_DONE, NULL) == 0);
	CHECK(msg_expect(rd, MSG_STOP, NULL, T_TIMEOUT) == 0);
out:
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&cr);
	ep_close(&cu);
	return ft_fails == 0 ? 0 : -1;
}

/* Start a peer, say hello, accept its connection to sr. */
static int
pd_meet(struct child *c, struct pd_arg *pa, struct ep *su, struct ep *sr,
	struct msg *peer, struct shm_cm_id **id)
{
	struct shm_cm_event ev;
	struct msg m;

	CHECK(child_start(c, pd_child, pa) == 0);
	ep_hello(su, &m);
	CHECK(msg_send(c->wr, MSG_HELLO, &m) == 0);
	ep_hello(sr, &m);
	CHECK(msg_send(c->wr, MSG_HELLO, &m) == 0);
	CHECK(msg_expect(c->rd, MSG_HELLO, peer, T_TIMEOUT) == 0);
	CHECK(cm_expect(sr->port, IPOIB_CM_REQ_RCVD, &ev, T_TIMEOUT) == 0);
	*id = ev.id;
	CHECK(shm_cm_accept(*id, sr->qp, NULL, NULL, 0) == 0);
	CHECK(cm_expect(sr->port, IPOIB_CM_ESTABLISHED, &ev, T_TIMEOUT) == 0);
	CHECK(msg_expect(c->rd, MSG_READY, NULL, T_TIMEOUT) == 0);
	return 0;
out:
	return -1;
}

/*
 * Kill the peer mid-stream: our RC QP is reported in error. How long that
 * took, and how much of it we were not running at all (a loaded machine),
 * are figures for the log.
 */
static int
pd_kill(struct child *c, struct ep *su, struct ep *sr, double *dt,
	double *off_cpu)
{
	struct shm_async_event ev;
	struct pd_rx rx = { 0 };
	double t0, t, last, deadline;

	deadline = test_now_ms() + T_TIMEOUT;
	while (rx.rc < 50 || rx.ud < 50) {
		CHECK(test_now_ms() < deadline, "RC %u UD %u from the peer", rx.rc,
		      rx.ud);
		CHECK(pd_drain(sr, su, &rx) == 0);
		sched_yield();
	}
	/* not reaped: a dead process that is still a zombie is dead */
	t0 = last = test_now_ms();
	*off_cpu = 0;
	CHECK(kill(c->pid, SIGKILL) == 0);
	for (;;) {
		t = test_now_ms();
		if (t - last > 5)
			*off_cpu += t - last;
		last = t;
		CHECK(t - t0 < T_TIMEOUT, "no QP_FATAL");
		CHECK(pd_drain(sr, su, &rx) == 0);
		if (shm_async_poll(su->port, &ev, 1) == 1)
			CHECK(0, "async event %d on the UD port", ev.type);
		if (shm_async_poll(sr->port, &ev, 1) == 1)
			break;
		sched_yield();	/* the dying one may need the CPU */
	}
	*dt = test_now_ms() - t0;
	CHECK(ev.type == SHM_EV_QP_FATAL && ev.qp_num == shm_qp_num(sr->qp));
	return 0;
out:
	return -1;
}

/* What the dead peer had is gone from the directory and /dev/shm. */
static int
pd_gone(struct ep *su, const struct msg *peer, const char *fab)
{
	struct shm_hdr *h = su->f->hdr;
	char prefix[64];
	struct shm_ah ah;

	CHECK_EQ(h->procs[peer->u32[2]].state, SHM_PROC_FREE);
	CHECK(shm_qp_lookup(su->f, peer->u32[1]) == NULL, "UD QP freed");
	CHECK(shm_qp_lookup(su->f, peer->u32[3]) == NULL, "RC QP freed");
	CHECK_EQ(shm_ah_resolve(su->f, peer->gid, 0, &ah), -ENOENT);
	snprintf(prefix, sizeof(prefix), "%s.%u", fab, peer->u32[2]);
	CHECK_EQ(shm_leftovers(prefix), 0);
	/* and a send to it goes nowhere */
	CHECK(shm_ah_resolve(su->f, su->info.gid, 0, &ah) == 0);
	CHECK_EQ(ud_send(su->qp, &ah, peer->u32[1], T_QKEY, "?", 1), 1);
	return 0;
out:
	return -1;
}

/* A fresh RC QP for the next peer, its buffers posted; UD drained. */
static int
pd_new_qp(struct ep *su, struct ep *sr, struct shm_cm_id **id)
{
	struct ipoib_wc wc[16];
	uint32_t i, k;

	while ((k = shm_cq_poll(su->cq, wc, 16)) > 0)
		for (i = 0; i < k; i++)
			CHECK(ep_post(su, (uint32_t)wc[i].wr_id) == 0);

	shm_cm_destroy(*id);
	*id = NULL;
	CHECK(qp_destroy_drain(sr->qp, sr->cq) == 0);
	sr->qp = qp_new(sr->port, SHM_QPT_RC, sr->cq, NULL, sr->nbufs, 0);
	CHECK(sr->qp != NULL);
	for (i = 0; i < sr->nbufs; i++)
		CHECK(ep_post(sr, i) == 0);
	return 0;
out:
	return -1;
}

static int
test_peer_death(void)
{
	struct child c = { .pid = -1 };
	struct shm_cm_id *id = NULL;
	struct pd_arg pa = { NULL, true };
	struct ep su, sr;
	struct msg peer;
	char fab[32];
	double dt, off;

	memset(&su, 0, sizeof(su));
	memset(&sr, 0, sizeof(sr));
	fabric_name(fab, sizeof(fab), "peer_death");
	pa.fabric = fab;
	CHECK(ep_open(&su, fab, &pd_ud) == 0 && ep_open(&sr, fab, &pd_rc) == 0);
	CHECK(shm_cm_listen(sr.port, T_SID) == 0);
	CHECK(pd_meet(&c, &pa, &su, &sr, &peer, &id) == 0);
	CHECK(pd_kill(&c, &su, &sr, &dt, &off) == 0);
	ft_note("peer death detected in %.1f ms (janitor period %d ms; %.1f "
		"ms of it not scheduled)", dt, SHM_JANITOR_PERIOD_MS, off);
	child_kill(&c);
	CHECK(pd_gone(&su, &peer, fab) == 0);
	CHECK(pd_new_qp(&su, &sr, &id) == 0);
	/* the peer returns, with the same port names (GUIDs) */
	pa.stream = false;
	CHECK(pd_meet(&c, &pa, &su, &sr, &peer, &id) == 0);
	CHECK(pd_traffic(&sr, &su, &peer, PD_XCHG, false) == 0);
	CHECK(msg_expect(c.rd, MSG_DONE, NULL, T_TIMEOUT) == 0);
	CHECK(msg_send(c.wr, MSG_STOP, NULL) == 0);
	CHECK(child_wait(&c, T_TIMEOUT) == 0);
out:
	child_kill(&c);
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&sr);
	ep_close(&su);
	return ft_end(fab);
}
REGISTER_TEST(peer_death, test_peer_death,
	"peer SIGKILLed mid-stream: QP_FATAL, reclaimed; it returns")
/* ---- a sender that died holding a claimed WR ---------------------------- */

/* Claim one posted WR of QP qpn as a sender does, and never complete it. */
static int
claim_one(struct shm_fabric *f, uint32_t qpn)
{
	struct shm_qp_ent *q = shm_qp_lookup(f, qpn);
	struct shm_rq_ring *r;

	CHECK(q != NULL);
	r = shm_arena_ptr(f, q->proc, q->rq_off);
	CHECK(r != NULL && shm_load(&r->prod) > shm_load(&r->cons));
	__atomic_fetch_add(&r->cons, 1, __ATOMIC_ACQ_REL);
	return 0;
out:
	return -1;
}

static int
claim_child(int rd, int wr, void *arg)
{
	struct shm_cm_id *id = NULL;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	struct msg pud, prc;
	struct ep cr;

	memset(&cr, 0, sizeof(cr));
	CHECK(ep_open(&cr, arg, &(struct ep_conf){ "crc", SHM_QPT_RC, 64,
		      PD_BUF }) == 0);
	CHECK(msg_expect(rd, MSG_HELLO, &pud, T_TIMEOUT) == 0);
	CHECK(msg_expect(rd, MSG_HELLO, &prc, T_TIMEOUT) == 0);
	req_init(&req, prc.gid, cr.qp, 7, 5);
	CHECK(shm_cm_connect(cr.port, &req, &id) == 0);
	CHECK(cm_expect(cr.port, IPOIB_CM_REP_RCVD, &ev, T_TIMEOUT) == 0);
	CHECK(shm_cm_rtu(id) == 0);
	CHECK(claim_one(cr.f, pud.u32[1]) == 0);
	CHECK(claim_one(cr.f, prc.u32[1]) == 0);
	CHECK(msg_send(wr, MSG_READY, NULL) == 0);
	msg_expect(rd, MSG_STOP, NULL, 2 * T_TIMEOUT); /* killed before */
out:
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&cr);
	return -1;
}

/*
 * Destroy e's QP: all but the lost WR come back flushed. Once they are
 * all polled, an RC QP (stall false) goes at the next attempt: its only
 * sender is gone. A UD QP (stall true) waits for the claim at least
 * SHM_STALL_NS, then goes. The time it took is a figure for the log.
 */
static int
lost_destroy(struct ep *e, const char *what, bool stall)
{
	double t0 = test_now_ms(), dt;
	uint32_t flushed = 0, busy_after = 0;
	struct ipoib_wc wc[64];
	int ret, k;

	while ((ret = shm_qp_destroy(e->qp)) == -EBUSY &&
	       test_now_ms() - t0 < T_TIMEOUT) {
		busy_after += flushed == e->nbufs - 1;
		k = shm_cq_poll(e->cq, wc, 64);
		while (k-- > 0)
			flushed += wc[k].status == IPOIB_WC_WR_FLUSH_ERR;
		sched_yield();
	}
	dt = test_now_ms() - t0;
	CHECK_EQ(ret, 0);
	e->qp = NULL;
	CHECK_EQ(flushed, e->nbufs - 1);
	if (stall)
		CHECK(dt >= SHM_STALL_NS / 1e6, "destroyed after %.0f ms, "
		      "before the claim could be given up", dt);
	else
		CHECK_EQ(busy_after, 0);
	ft_note("%s QP with a WR lost to a dead sender: destroyed after %.0f "
		"ms", what, dt);
	return 0;
out:
	return -1;
}

static int
test_lost_claim(void)
{
	struct child c = { .pid = -1 };
	struct shm_cm_id *id = NULL;
	struct shm_async_event ev;
	struct shm_cm_event cev;
	struct ep su, sr;
	char fab[32];
	struct msg m;

	memset(&su, 0, sizeof(su));
	memset(&sr, 0, sizeof(sr));
	fabric_name(fab, sizeof(fab), "lost_claim");
	CHECK(ep_open(&su, fab, &pd_ud) == 0 && ep_open(&sr, fab, &pd_rc) == 0);
	CHECK(shm_cm_listen(sr.port, T_SID) == 0);
	CHECK(child_start(&c, claim_child, fab) == 0);
	ep_hello(&su, &m);
	CHECK(msg_send(c.wr, MSG_HELLO, &m) == 0);
	ep_hello(&sr, &m);
	CHECK(msg_send(c.wr, MSG_HELLO, &m) == 0);
	CHECK(cm_expect(sr.port, IPOIB_CM_REQ_RCVD, &cev, T_TIMEOUT) == 0);
	id = cev.id;
	CHECK(shm_cm_accept(id, sr.qp, NULL, NULL, 0) == 0);
	CHECK(cm_expect(sr.port, IPOIB_CM_ESTABLISHED, &cev, T_TIMEOUT) == 0);
	CHECK(msg_expect(c.rd, MSG_READY, NULL, T_TIMEOUT) == 0);
	child_kill(&c);
	CHECK(async_wait(sr.port, &ev, T_TIMEOUT) == 1);
	CHECK_EQ(ev.type, SHM_EV_QP_FATAL);
	/* RC: the only sender is gone, nothing more can come */
	CHECK(lost_destroy(&sr, "RC", false) == 0);
	/* UD: anyone may send; a claim left SHM_STALL_NS is given up */
	CHECK(lost_destroy(&su, "UD", true) == 0);
out:
	child_kill(&c);
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&sr);
	ep_close(&su);
	return ft_end(fab);
}
REGISTER_TEST(lost_claim, test_lost_claim,
	"a sender dies holding a claimed WR: our QPs can still be destroyed")
