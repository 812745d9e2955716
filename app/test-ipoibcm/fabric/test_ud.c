/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * UD: delivery between processes with the GRH, P_Key and Q_Key checks,
 * multicast groups across processes, fault-injected drops.
 */

#include <errno.h>
#include <string.h>

#include "fabric_util.h"

#define UD_N		40
#define UD_BUF		2048
#define UD_MAX		(UD_BUF - IPOIB_GRH_LEN)

static const struct ep_conf ud_conf_a = { "a", SHM_QPT_UD, 64, UD_BUF };
static const struct ep_conf ud_conf_b = { "b", SHM_QPT_UD, 64, UD_BUF };

/* What the GRH bytes of a buffer hold until a GRH is written there. */
#define UD_MARK		0xa5

/* Mark the GRH bytes of e's buffer i, then post it. */
static int
ud_repost(struct ep *e, uint32_t i)
{
	memset(ep_buf(e, i), UD_MARK, IPOIB_GRH_LEN);
	return ep_post(e, i);
}

/* Mark the GRH bytes of all e's buffers (posted, not yet written). */
static void
ud_mark(struct ep *e)
{
	uint32_t i;

	for (i = 0; i < e->nbufs; i++)
		memset(ep_buf(e, i), UD_MARK, IPOIB_GRH_LEN);
}

/* Even sequence numbers go with a GRH (global routing), odd without. */
static bool
ud_global(uint32_t seq)
{
	return seq % 2 == 0;
}

/*
 * One received UD message, sent by peer as sequence number seq: a GRH
 * only when the sender asked for one; SLID, source QPN and byte_len (40
 * bytes counted) either way; the payload at offset 40 either way.
 */
static int
ud_check(const struct ep *e, const struct ipoib_wc *wc, uint32_t seq,
	 const struct msg *peer)
{
	const uint8_t *grh = ep_buf(e, (uint32_t)wc->wr_id);
	uint32_t len = seq_len(seq, UD_MAX), i;

	CHECK_EQ(wc->status, IPOIB_WC_SUCCESS);
	CHECK_EQ(wc->byte_len, IPOIB_GRH_LEN + len);
	CHECK_EQ(wc->qp_num, shm_qp_num(e->qp));
	CHECK_EQ(wc->src_qp, peer->u32[1]);
	CHECK_EQ(wc->slid, peer->u32[0]);
	CHECK(check_pattern(grh + IPOIB_GRH_LEN, len, seq), "payload %u", seq);
	if (!ud_global(seq)) {
		CHECK_EQ(wc->wc_flags & IPOIB_WC_GRH, 0);
		for (i = 0; i < IPOIB_GRH_LEN; i++)
			CHECK_EQ(grh[i], UD_MARK);
		return 0;
	}
	CHECK(wc->wc_flags & IPOIB_WC_GRH);
	CHECK_EQ(grh[0] >> 4, 6);
	CHECK_EQ(grh[4] << 8 | grh[5], len);
	CHECK(memcmp(grh + 8, peer->gid, IPOIB_GID_LEN) == 0, "SGID");
	CHECK(memcmp(grh + 24, e->info.gid, IPOIB_GID_LEN) == 0, "DGID");
	return 0;
out:
	return -1;
}

static int
ud_burst(struct ep *e, const struct msg *peer, uint32_t n)
{
	uint8_t buf[UD_MAX];
	struct shm_ah ah;
	uint32_t i, len;

	CHECK(shm_ah_resolve(e->f, peer->gid, 0, &ah) == 0);
	CHECK_EQ(ah.dlid, peer->u32[0]);
	CHECK(!ah.global, "unicast: no GRH unless asked");
	for (i = 0; i < n; i++) {
		ah.global = ud_global(i);
		len = seq_len(i, UD_MAX);
		fill_pattern(buf, len, i);
		CHECK_EQ(ud_send(e->qp, &ah, peer->u32[1], T_QKEY, buf, len),
			 1);
	}
	return 0;
out:
	return -1;
}

/* n messages, in order, then nothing more. */
static int
ud_recv(struct ep *e, const struct msg *peer, uint32_t n)
{
	struct ipoib_wc wc[UD_N + 1];
	uint32_t i;

	CHECK_EQ(poll_wc(e->cq, wc, (int)n, T_TIMEOUT), n);
	for (i = 0; i < n; i++) {
		CHECK(ud_check(e, &wc[i], i, peer) == 0, "message %u", i);
		CHECK(ud_repost(e, (uint32_t)wc[i].wr_id) == 0);
	}
	CHECK_EQ(shm_cq_poll(e->cq, wc, 1), 0);
	return 0;
out:
	return -1;
}

static int
ud_child(int rd, int wr, void *arg)
{
	struct msg peer, m;
	struct ep b;

	memset(&b, 0, sizeof(b));
	CHECK(ep_open(&b, arg, &ud_conf_b) == 0);
	ud_mark(&b);
	CHECK(msg_expect(rd, MSG_HELLO, &peer, T_TIMEOUT) == 0);
	ep_hello(&b, &m);
	CHECK(msg_send(wr, MSG_HELLO, &m) == 0);
	CHECK(ud_burst(&b, &peer, UD_N) == 0);
	CHECK(msg_send(wr, MSG_DONE, NULL) == 0);
	CHECK(msg_expect(rd, MSG_GO, NULL, T_TIMEOUT) == 0);
	CHECK(ud_recv(&b, &peer, UD_N) == 0);
out:
	ep_close(&b);
	return ft_fails == 0 ? 0 : -1;
}

static int
test_ud_two_procs(void)
{
	struct child c = { .pid = -1 };
	struct msg peer, m;
	char fab[32];
	struct ep a;

	memset(&a, 0, sizeof(a));
	fabric_name(fab, sizeof(fab), "ud_two_procs");
	CHECK(ep_open(&a, fab, &ud_conf_a) == 0);
	ud_mark(&a);
	CHECK(child_start(&c, ud_child, fab) == 0);
	ep_hello(&a, &m);
	CHECK(msg_send(c.wr, MSG_HELLO, &m) == 0);
	CHECK(msg_expect(c.rd, MSG_HELLO, &peer, T_TIMEOUT) == 0);
	CHECK(peer.u32[2] != a.f->proc, "the child has a slot of its own");
	CHECK(msg_expect(c.rd, MSG_DONE, NULL, T_TIMEOUT) == 0);
	CHECK(ud_recv(&a, &peer, UD_N) == 0);
	CHECK(ud_burst(&a, &peer, UD_N) == 0);
	CHECK(msg_send(c.wr, MSG_GO, NULL) == 0);
	CHECK(child_wait(&c, T_TIMEOUT) == 0);
out:
	child_kill(&c);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(ud_two_procs, test_ud_two_procs,
	"UD both ways between processes: GRH only when asked, src_qp, slid")

/* One message from qp to q (on the port of ah): delivered or not. */
static int
ud_one(struct shm_qp *qp, const struct shm_ah *ah, struct udq *q,
       uint32_t qkey, bool delivered)
{
	struct ipoib_wc wc;
	char msg[64] = "partition";

	CHECK_EQ(ud_send(qp, ah, shm_qp_num(q->qp), qkey, msg, sizeof(msg)),
		 1);
	/* delivery is done inside the send: no wait needed either way */
	CHECK_EQ(shm_cq_poll(q->cq, &wc, 1), delivered ? 1 : 0);
	if (delivered) {
		CHECK_EQ(wc.status, IPOIB_WC_SUCCESS);
		CHECK(post_buf(shm_qp_rq(q->qp), &q->mem, UDQ_BUF,
			       (uint32_t)wc.wr_id) == 0);
	}
	return 0;
out:
	return -1;
}

/* a: P_Key 0xffff; l: limited 0x0001; b: QP full 0x8001 and QP lim 0x0001 */
static int
keys_run(struct ep *a, struct ep *b, struct ep *l, struct udq *full,
	 struct udq *lim)
{
	struct shm_port_counters cnt;
	struct shm_ah ah;

	CHECK(shm_ah_resolve(a->f, b->info.gid, 0, &ah) == 0);
	/* another partition */
	CHECK(ud_one(a->qp, &ah, full, T_QKEY, false) == 0);
	/* same partition, one full member */
	CHECK(ud_one(l->qp, &ah, full, T_QKEY, true) == 0);
	/* two limited members never talk (IBTA 10.9.3) */
	CHECK(ud_one(l->qp, &ah, lim, T_QKEY, false) == 0);
	shm_port_counters(b->port, &cnt);
	CHECK_EQ(cnt.pkey_drops, 2);
	CHECK_EQ(cnt.qkey_drops, 0);
	/* wrong Q_Key; then "use my own" (high bit) with the right one */
	CHECK(ud_one(l->qp, &ah, full, T_QKEY + 1, false) == 0);
	CHECK(ud_one(l->qp, &ah, full, 0x80000000u, true) == 0);
	shm_port_counters(b->port, &cnt);
	CHECK_EQ(cnt.pkey_drops, 2);
	CHECK_EQ(cnt.qkey_drops, 1);
	CHECK_EQ(cnt.ud_no_wr + cnt.len_errs + cnt.fault_drops, 0);
	/* the sender's port counts nothing of it */
	shm_port_counters(l->port, &cnt);
	CHECK_EQ(cnt.pkey_drops + cnt.qkey_drops, 0);
	return 0;
out:
	return -1;
}

static int
test_ud_keys(void)
{
	struct shm_port_conf pb = { .npkeys = 2, .pkeys = { 0x8001, 0x0001 } };
	struct shm_port_conf pl = { .npkeys = 1, .pkeys = { 0x0001 } };
	struct ep_conf cb = { "b", SHM_QPT_UD, 4, UD_BUF, .pc = &pb };
	struct ep_conf cl = { "l", SHM_QPT_UD, 4, UD_BUF, .pc = &pl };
	struct udq full = { 0 }, lim = { 0 };
	struct ep a, b, l;
	char fab[32];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&l, 0, sizeof(l));
	fabric_name(fab, sizeof(fab), "ud_keys");
	CHECK(ep_open(&a, fab, &ud_conf_a) == 0);
	CHECK(ep_open(&b, fab, &cb) == 0);
	CHECK(ep_open(&l, fab, &cl) == 0);
	CHECK(udq_open(&full, b.f, b.port, 0, T_QKEY) == 0);
	CHECK(udq_open(&lim, b.f, b.port, 1, T_QKEY) == 0);
	CHECK(keys_run(&a, &b, &l, &full, &lim) == 0);
out:
	udq_close(&full, b.f);
	udq_close(&lim, b.f);
	ep_close(&l);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(ud_keys, test_ud_keys,
	"UD P_Key and Q_Key mismatches: not delivered, counted at receiver")

/* ---- multicast ---------------------------------------------------------- */

static const uint8_t t_mgid[IPOIB_GID_LEN] = {
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
};

enum { CMD_COUNT = 100, CMD_DETACH, CMD_EXIT };

/* Exactly want messages on e (from the sender peer), nothing more. */
static int
mc_expect(struct ep *e, int want, const struct msg *peer)
{
	struct ipoib_wc wc[4];
	const uint8_t *grh;
	int i;

	CHECK_EQ(poll_wc(e->cq, wc, want, T_TIMEOUT), want);
	CHECK_EQ(shm_cq_poll(e->cq, wc + want, 1), 0);
	for (i = 0; i < want; i++) {
		grh = ep_buf(e, (uint32_t)wc[i].wr_id);
		CHECK_EQ(wc[i].status, IPOIB_WC_SUCCESS);
		CHECK_EQ(wc[i].src_qp, peer->u32[1]);
		CHECK_EQ(wc[i].slid, peer->u32[0]);
		/* multicast always carries a GRH: the MGID is in it */
		CHECK(wc[i].wc_flags & IPOIB_WC_GRH);
		CHECK(memcmp(grh + 8, peer->gid, IPOIB_GID_LEN) == 0, "SGID");
		CHECK(memcmp(grh + 24, t_mgid, IPOIB_GID_LEN) == 0, "DGID");
		CHECK(ep_post(e, (uint32_t)wc[i].wr_id) == 0);
	}
	return 0;
out:
	return -1;
}

static int
mc_child(int rd, int wr, void *arg)
{
	struct msg peer, m;
	struct ep c;

	memset(&c, 0, sizeof(c));
	CHECK(ep_open(&c, arg, &ud_conf_b) == 0);
	CHECK(shm_mcast_attach(c.qp, t_mgid) == 0);
	CHECK(msg_expect(rd, MSG_HELLO, &peer, T_TIMEOUT) == 0);
	CHECK(msg_send(wr, MSG_READY, NULL) == 0);
	for (;;) {
		CHECK(msg_recv(rd, &m, T_TIMEOUT) == 0);
		if (m.type == CMD_EXIT)
			break;
		if (m.type == CMD_DETACH)
			CHECK(shm_mcast_detach(c.qp, t_mgid) == 0);
		else
			CHECK(mc_expect(&c, (int)m.u32[0], &peer) == 0);
		CHECK(msg_send(wr, MSG_DONE, NULL) == 0);
	}
out:
	ep_close(&c);
	return ft_fails == 0 ? 0 : -1;
}

/* Send one message to the group; each member checks what it got. */
static int
mc_round(struct ep *s, struct ep *m1, struct ep *m2, struct child *c,
	 int w1, int w2, int wc)
{
	struct msg hello, cmd = { .u32 = { (uint32_t)wc } };
	struct shm_ah ah;
	char buf[100] = "to the group";

	ep_hello(s, &hello);
	CHECK(shm_ah_resolve(s->f, t_mgid, 0, &ah) == 0 && ah.multicast);
	CHECK_EQ(ud_send(s->qp, &ah, IPOIB_MCAST_QPN, T_QKEY, buf, sizeof(buf)),
		 1);
	CHECK(mc_expect(m1, w1, &hello) == 0);
	CHECK(mc_expect(m2, w2, &hello) == 0);
	CHECK(msg_send(c->wr, CMD_COUNT, &cmd) == 0);
	CHECK(msg_expect(c->rd, MSG_DONE, NULL, T_TIMEOUT) == 0);
	return 0;
out:
	return -1;
}

static int
test_mcast_two_procs(void)
{
	struct child c = { .pid = -1 };
	struct ep s, m1, m2;
	char fab[32];
	struct msg m;

	memset(&s, 0, sizeof(s));
	memset(&m1, 0, sizeof(m1));
	memset(&m2, 0, sizeof(m2));
	fabric_name(fab, sizeof(fab), "mcast_two_procs");
	CHECK(ep_open(&s, fab, &ud_conf_a) == 0);
	CHECK(ep_open(&m1, fab, &(struct ep_conf){ "m1", SHM_QPT_UD, 8,
						   UD_BUF }) == 0);
	CHECK(ep_open(&m2, fab, &(struct ep_conf){ "m2", SHM_QPT_UD, 8,
						   UD_BUF }) == 0);
	CHECK(shm_mcast_attach(m1.qp, t_mgid) == 0);
	CHECK(shm_mcast_attach(m2.qp, t_mgid) == 0);
	CHECK(shm_mcast_attach(m2.qp, t_mgid) == 0);	/* twice: once */
	CHECK(shm_mcast_attach(s.qp, (const uint8_t[IPOIB_GID_LEN]){ 0xfe }) ==
	      -EINVAL);
	CHECK(child_start(&c, mc_child, fab) == 0);
	ep_hello(&s, &m);
	CHECK(msg_send(c.wr, MSG_HELLO, &m) == 0);
	CHECK(msg_expect(c.rd, MSG_READY, NULL, T_TIMEOUT) == 0);
	CHECK(mc_round(&s, &m1, &m2, &c, 1, 1, 1) == 0);
	CHECK(shm_mcast_detach(m2.qp, t_mgid) == 0);
	CHECK(shm_mcast_detach(m2.qp, t_mgid) == -ENOENT);
	CHECK(mc_round(&s, &m1, &m2, &c, 1, 0, 1) == 0);
	CHECK(msg_send(c.wr, CMD_DETACH, NULL) == 0);
	CHECK(msg_expect(c.rd, MSG_DONE, NULL, T_TIMEOUT) == 0);
	CHECK(mc_round(&s, &m1, &m2, &c, 1, 0, 0) == 0);
	CHECK(shm_mcast_detach(m1.qp, t_mgid) == 0);
	CHECK(mc_round(&s, &m1, &m2, &c, 0, 0, 0) == 0);
	CHECK(msg_send(c.wr, CMD_EXIT, NULL) == 0);
	CHECK(child_wait(&c, T_TIMEOUT) == 0);
out:
	child_kill(&c);
	ep_close(&m2);
	ep_close(&m1);
	ep_close(&s);
	return ft_end(fab);
}
REGISTER_TEST(mcast_two_procs, test_mcast_two_procs,
	"multicast: 3 QPs in 2 processes get one send; detach stops it")

/* ---- fault injection: drops --------------------------------------------- */

static int
ud_drops(struct ep *a, struct ep *b, uint32_t ppm, int n)
{
	struct ipoib_faults fl = { .drop_ppm = ppm, .rej_after = -1 };
	struct ipoib_wc wc[64];
	struct msg peer;
	int i, got = 0, k;

	ep_hello(b, &peer);
	shm_port_set_faults(b->port, &fl);
	for (i = 0; i < n; i++) {
		CHECK(ud_burst(a, &peer, 1) == 0);
		while ((k = shm_cq_poll(b->cq, wc, 64)) > 0) {
			got += k;
			while (k-- > 0)
				CHECK(ep_post(b, (uint32_t)wc[k].wr_id) == 0);
		}
	}
	fl.drop_ppm = 0;
	shm_port_set_faults(b->port, &fl);
	return got;
out:
	return -1;
}

static int
test_ud_drop(void)
{
	struct shm_port_counters cnt;
	struct ipoib_faults fl;
	struct ep a, b;
	char fab[32];
	int got;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	fabric_name(fab, sizeof(fab), "ud_drop");
	CHECK(ep_open(&a, fab, &ud_conf_a) == 0);
	CHECK(ep_open(&b, fab, &ud_conf_b) == 0);
	shm_port_get_faults(b.port, &fl);
	CHECK(fl.drop_ppm == 0 && fl.rej_after == -1 && fl.cm_drop_mask == 0,
	      "no faults by default");
	CHECK_EQ(ud_drops(&a, &b, 1000000, 100), 0);
	shm_port_counters(b.port, &cnt);
	CHECK_EQ(cnt.fault_drops, 100);
	shm_port_counters(a.port, &cnt);
	CHECK_EQ(cnt.fault_drops, 0);
	/* half of them, give or take */
	got = ud_drops(&a, &b, 500000, 1000);
	CHECK(got > 300 && got < 700, "%d of 1000 delivered at 50%% drops",
	      got);
	shm_port_counters(b.port, &cnt);
	CHECK_EQ(cnt.fault_drops, 100 + 1000 - got);
	CHECK_EQ(ud_drops(&a, &b, 0, 10), 10);
out:
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(ud_drop, test_ud_drop,
	"fault drop_ppm: every (or half the) UD message dropped, counted")

/* ---- several messages in one post: delivered as a run ------------------- */

#define RUN_N		9
#define RUN_LONG	6	/* the index of the message too long */
#define RUN_BAD_QKEY	4	/* the index of the one with another Q_Key */

static const struct ep_conf ud_conf_six = { "b", SHM_QPT_UD, 6, UD_BUF };

/*
 * What one post of RUN_N messages holds: two runs to b (global routing
 * with even sequence numbers, then without, odd), a Q_Key b does not have
 * between them. b has 6 receive WRs: the first run takes 4, the second 2
 * (the second of them completes with a length error), 2 find none.
 */
static const uint32_t run_seq[RUN_N] = { 0, 2, 4, 6, 8, 1, 3, 5, 7 };

static int
test_ud_run(void)
{
	static uint8_t bufs[RUN_N][UD_BUF];
	struct shm_port_counters cnt;
	struct ipoib_faults fl = { .rej_after = -1 };
	struct iovec iov[RUN_N];
	struct shm_send wr[RUN_N];
	struct ipoib_wc wc[RUN_N];
	struct shm_ah ah_g, ah;
	struct msg pa, pb;
	struct ep a, b;
	char fab[32];
	uint32_t i;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	fabric_name(fab, sizeof(fab), "ud_run");
	CHECK(ep_open(&a, fab, &ud_conf_a) == 0);
	CHECK(ep_open(&b, fab, &ud_conf_six) == 0);
	ud_mark(&b);
	ep_hello(&a, &pa);
	ep_hello(&b, &pb);
	CHECK(shm_ah_resolve(a.f, pb.gid, 0, &ah) == 0);
	ah_g = ah;
	ah_g.global = true;
	for (i = 0; i < RUN_N; i++) {
		uint32_t len = seq_len(run_seq[i], UD_MAX);

		if (i == RUN_LONG)
			len = UD_MAX + 1;
		fill_pattern(bufs[i], len, run_seq[i]);
		iov[i] = (struct iovec){ bufs[i], len };
		wr[i] = (struct shm_send){
			.iov = &iov[i], .iovcnt = 1,
			.ah = run_seq[i] % 2 == 0 ? &ah_g : &ah,
			.remote_qpn = pb.u32[1],
			.remote_qkey = i == RUN_BAD_QKEY ? T_QKEY + 1 : T_QKEY,
		};
	}
	CHECK_EQ(shm_qp_post_send(a.qp, wr, RUN_N), RUN_N);
	CHECK_EQ(poll_wc(b.cq, wc, 6, T_TIMEOUT), 6);
	for (i = 0; i < 4; i++)
		CHECK(ud_check(&b, &wc[i], run_seq[i], &pa) == 0,
		      "completion %u", i);
	CHECK(ud_check(&b, &wc[4], run_seq[5], &pa) == 0);
	CHECK_EQ(wc[5].status, IPOIB_WC_LOC_LEN_ERR);
	CHECK_EQ(wc[5].qp_num, shm_qp_num(b.qp));
	CHECK_EQ(shm_cq_poll(b.cq, wc, 1), 0);
	shm_port_counters(b.port, &cnt);
	CHECK_EQ(cnt.qkey_drops, 1);
	CHECK_EQ(cnt.len_errs, 1);
	CHECK_EQ(cnt.ud_no_wr, 2);
	/* drops decided per message: a run of four, every one dropped */
	for (i = 0; i < 6; i++)
		CHECK(ud_repost(&b, i) == 0);
	fl.drop_ppm = 1000000;
	shm_port_set_faults(b.port, &fl);
	CHECK_EQ(shm_qp_post_send(a.qp, wr, 4), 4);
	shm_port_counters(b.port, &cnt);
	CHECK_EQ(cnt.fault_drops, 4);
	fl.drop_ppm = 0;
	shm_port_set_faults(b.port, &fl);
	CHECK_EQ(shm_qp_post_send(a.qp, wr, 4), 4);
	CHECK_EQ(poll_wc(b.cq, wc, 4, T_TIMEOUT), 4);
	for (i = 0; i < 4; i++)
		CHECK(ud_check(&b, &wc[i], run_seq[i], &pa) == 0,
		      "completion %u after the drops", i);
	CHECK_EQ(shm_cq_poll(b.cq, wc, 1), 0);
out:
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(ud_run, test_ud_run,
	"UD: one post of several messages, Q_Key break, no WR, length error")
