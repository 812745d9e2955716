/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * P_Key membership (IBTA 10.9.3): a full member (high bit set) talks to
 * full and limited members of its partition; two limited members of the
 * same partition cannot talk, over UD, multicast or the CM.
 */

#include <errno.h>
#include <string.h>

#include "fabric_util.h"

#define PK_FULL		0x8001
#define PK_LIMITED	0x0001

static const struct shm_port_conf pk_full = { .npkeys = 1,
					      .pkeys = { PK_FULL } };
static const struct shm_port_conf pk_lim = { .npkeys = 1,
					     .pkeys = { PK_LIMITED } };

struct pk_world {
	struct ep f, l1, l2;		/* RC endpoints: one full, two limited */
	struct udq uf, ul1, ul2;	/* a UD QP on each of their ports */
};

static int
pk_open(struct pk_world *w, const char *fab)
{
	struct ep_conf cf = { "f", SHM_QPT_RC, 8, 256, .pc = &pk_full };
	struct ep_conf c1 = { "l1", SHM_QPT_RC, 8, 256, .pc = &pk_lim };
	struct ep_conf c2 = { "l2", SHM_QPT_RC, 8, 256, .pc = &pk_lim };

	memset(w, 0, sizeof(*w));
	if (ep_open(&w->f, fab, &cf) < 0 || ep_open(&w->l1, fab, &c1) < 0 ||
	    ep_open(&w->l2, fab, &c2) < 0)
		return -1;
	if (udq_open(&w->uf, w->f.f, w->f.port, 0, T_QKEY) < 0 ||
	    udq_open(&w->ul1, w->l1.f, w->l1.port, 0, T_QKEY) < 0 ||
	    udq_open(&w->ul2, w->l2.f, w->l2.port, 0, T_QKEY) < 0)
		return -1;
	return 0;
}

static void
pk_close(struct pk_world *w)
{
	udq_close(&w->ul2, w->l2.f);
	udq_close(&w->ul1, w->l1.f);
	udq_close(&w->uf, w->f.f);
	ep_close(&w->l2);
	ep_close(&w->l1);
	ep_close(&w->f);
}

/* One UD message from s to d (port dp): delivered or not (counted). */
static int
pk_ud(struct udq *s, struct udq *d, const struct ep *dp, bool delivered)
{
	struct shm_port_counters before, after;
	struct ipoib_wc wc;
	struct shm_ah ah;
	char msg[64] = "membership";

	shm_port_counters(dp->port, &before);
	CHECK(shm_ah_resolve(dp->f, dp->info.gid, 0, &ah) == 0);
	CHECK_EQ(ud_send(s->qp, &ah, shm_qp_num(d->qp), T_QKEY, msg,
			 sizeof(msg)), 1);
	/* delivery is done inside the send: no wait needed either way */
	CHECK_EQ(shm_cq_poll(d->cq, &wc, 1), delivered ? 1 : 0);
	shm_port_counters(dp->port, &after);
	CHECK_EQ(after.pkey_drops - before.pkey_drops, delivered ? 0 : 1);
	if (delivered) {
		CHECK_EQ(wc.status, IPOIB_WC_SUCCESS);
		CHECK_EQ(wc.src_qp, shm_qp_num(s->qp));
		CHECK(post_buf(shm_qp_rq(d->qp), &d->mem, UDQ_BUF,
			       (uint32_t)wc.wr_id) == 0);
	}
	return 0;
out:
	return -1;
}

static int
pk_ud_all(struct pk_world *w)
{
	CHECK(pk_ud(&w->uf, &w->ul1, &w->l1, true) == 0, "full -> limited");
	CHECK(pk_ud(&w->uf, &w->ul2, &w->l2, true) == 0, "full -> limited");
	CHECK(pk_ud(&w->ul1, &w->uf, &w->f, true) == 0, "limited -> full");
	CHECK(pk_ud(&w->ul2, &w->uf, &w->f, true) == 0, "limited -> full");
	CHECK(pk_ud(&w->ul1, &w->ul2, &w->l2, false) == 0, "limited x2");
	CHECK(pk_ud(&w->ul2, &w->ul1, &w->l1, false) == 0, "limited x2");
	return 0;
out:
	return -1;
}

static int
test_pkey_ud(void)
{
	struct pk_world w;
	char fab[32];

	fabric_name(fab, sizeof(fab), "pkey_ud");
	CHECK(pk_open(&w, fab) == 0);
	CHECK(pk_ud_all(&w) == 0);
out:
	pk_close(&w);
	return ft_end(fab);
}
REGISTER_TEST(pkey_ud, test_pkey_ud,
	"P_Key: full talks to limited both ways, two limited members never")

static const uint8_t pk_mgid[IPOIB_GID_LEN] = {
	0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
	0xff, 0xff,
};

/* What each of f, l1, l2 got of one multicast send: 1 or 0 each. */
static int
pk_mc_round(struct pk_world *w, struct udq *s, int gf, int g1, int g2)
{
	struct udq *q[3] = { &w->uf, &w->ul1, &w->ul2 };
	int want[3] = { gf, g1, g2 }, i;
	struct ipoib_wc wc;
	struct shm_ah ah;
	char msg[64] = "to the group";

	CHECK(shm_ah_resolve(w->f.f, pk_mgid, 0, &ah) == 0 && ah.global);
	CHECK_EQ(ud_send(s->qp, &ah, IPOIB_MCAST_QPN, T_QKEY, msg,
			 sizeof(msg)), 1);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(shm_cq_poll(q[i]->cq, &wc, 1), want[i]);
		if (want[i] == 0)
			continue;
		CHECK(wc.wc_flags & IPOIB_WC_GRH);
		CHECK(post_buf(shm_qp_rq(q[i]->qp), &q[i]->mem, UDQ_BUF,
			       (uint32_t)wc.wr_id) == 0);
	}
	return 0;
out:
	return -1;
}

static int
test_pkey_mcast(void)
{
	struct pk_world w;
	char fab[32];

	fabric_name(fab, sizeof(fab), "pkey_mcast");
	CHECK(pk_open(&w, fab) == 0);
	CHECK(shm_mcast_attach(w.uf.qp, pk_mgid) == 0);
	CHECK(shm_mcast_attach(w.ul1.qp, pk_mgid) == 0);
	CHECK(shm_mcast_attach(w.ul2.qp, pk_mgid) == 0);
	/* a full member's send reaches everyone (itself included) */
	CHECK(pk_mc_round(&w, &w.uf, 1, 1, 1) == 0);
	/* a limited member's reaches the full member only */
	CHECK(pk_mc_round(&w, &w.ul1, 1, 0, 0) == 0);
	CHECK(pk_mc_round(&w, &w.ul2, 1, 0, 0) == 0);
out:
	pk_close(&w);
	return ft_end(fab);
}
REGISTER_TEST(pkey_mcast, test_pkey_mcast,
	"P_Key: a limited member's multicast reaches full members only")

/* A REQ from port a to port b, new QPs: refused (REJ) or connected. */
static int
pk_cm(struct ep *a, struct ep *b, bool accepted)
{
	struct shm_cq *ca = shm_cq_create(a->port, 4);
	struct shm_cq *cb = shm_cq_create(b->port, 4);
	struct shm_qp *qa = ca == NULL ? NULL :
			    qp_new(a->port, SHM_QPT_RC, ca, NULL, 4, 0);
	struct shm_qp *qb = cb == NULL ? NULL :
			    qp_new(b->port, SHM_QPT_RC, cb, NULL, 4, 0);
	struct conn c = { 0 };
	struct shm_cm_event ev;
	struct shm_cm_req r;
	int ret = -1;

	CHECK(qa != NULL && qb != NULL);
	if (accepted) {
		CHECK(conn_qps(&c, a->port, qa, b->port, qb, 0) == 0);
		CHECK_EQ(shm_qp_state(qa), SHM_QPS_RTS);
		ret = 0;
		goto out;
	}
	CHECK(shm_cm_listen(b->port, T_SID) == 0);
	req_init(&r, b->info.gid, qa, 0, 3);
	CHECK(shm_cm_connect(a->port, &r, &c.act) == 0);
	/* the passive side never hears of it; the active side is refused */
	CHECK(cm_expect2(a->port, b->port, 0, IPOIB_CM_REJ_RCVD, &ev,
			 T_TIMEOUT) == 0);
	CHECK(ev.id == c.act);
	ret = 0;
out:
	conn_destroy(&c);
	if (qa != NULL && qp_destroy_drain(qa, ca) < 0)
		ret = -1;
	if (qb != NULL && qp_destroy_drain(qb, cb) < 0)
		ret = -1;
	if (ca != NULL)
		shm_cq_destroy(ca);
	if (cb != NULL)
		shm_cq_destroy(cb);
	return ret;
}

static int
test_pkey_cm(void)
{
	struct pk_world w;
	char fab[32];

	fabric_name(fab, sizeof(fab), "pkey_cm");
	CHECK(pk_open(&w, fab) == 0);
	CHECK(pk_cm(&w.l1, &w.l2, false) == 0, "limited -> limited");
	CHECK(pk_cm(&w.l1, &w.f, true) == 0, "limited -> full");
	CHECK(pk_cm(&w.f, &w.l2, true) == 0, "full -> limited");
out:
	pk_close(&w);
	return ft_end(fab);
}
REGISTER_TEST(pkey_cm, test_pkey_cm,
	"P_Key: the CM connects full and limited, refuses two limited")
