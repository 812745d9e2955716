/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Sends on the shm fabric, UD (multicast included) and RC, and the
 * multicast groups UD QPs attach to. This is the datapath: no locks, no
 * system calls.
 */

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shm_copy.h"
#include "shm_cq_fill.h"
#include "shm_internal.h"
#include "shm_log.h"
#include "shm_rc_send.h"
#include "shm_rq_claim.h"
#include "shm_sa.h"

/* ---- sends --------------------------------------------------------------- */

#define SHM_UD_RUN	32	/* UD messages delivered together at most */

/*
 * The GRH of a UD message, at the start of its receive buffer: version 6,
 * payload length len, next header 0x1b (IBA transport), hop limit 1
 * (link-local), then the two GIDs. The common message's is written by
 * shm_ud_deliver() itself, with the payload, through one look-up of the
 * buffer; shm_write_grh() writes the others'. It writes in place, as
 * three stores, when the buffer's first piece holds it, which leaves c
 * mapping that piece for the payload; else through a copy
 * (shm_write_grh_copy(), out of line: one function with its bounce
 * buffer and descriptors took 67 instructions a message in the common
 * case, which inline adds 23 to shm_ud_deliver(); bench icount
 * --loopback). Built byte by byte on the stack and copied in 16-byte
 * loads, as before, it cost two failed store forwardings a message (perf
 * annotate of dpdk-test pmd_perf_autotest).
 */
static inline uint64_t
shm_grh_head(uint32_t len)
{
	return htobe64(UINT64_C(0x60) << 56 | (uint64_t)(len & 0xffff) << 16 |
		       UINT64_C(0x1b) << 8 | 1);
}

static inline void
shm_grh_fill(uint8_t *p, uint64_t head, const uint8_t *sgid,
	     const uint8_t *dgid)
{
	memcpy(p, &head, sizeof(head));
	memcpy(p + 8, sgid, IPOIB_GID_LEN);
	memcpy(p + 8 + IPOIB_GID_LEN, dgid, IPOIB_GID_LEN);
}

static __attribute__((noinline)) void
shm_write_grh_copy(struct shm_fabric *f, uint32_t proc,
		   const struct shm_target *d, uint64_t head,
		   const uint8_t *sgid, const uint8_t *dgid,
		   struct shm_dst_seg *c)
{
	uint8_t grh[IPOIB_GRH_LEN];
	struct iovec iov = { grh, sizeof(grh) };
	struct shm_send w = { .iov = &iov, .iovcnt = 1 };

	shm_grh_fill(grh, head, sgid, dgid);
	shm_copy(f, proc, d, 0, &w, sizeof(grh), false, c);
}

static inline void
shm_write_grh(struct shm_fabric *f, uint32_t proc, const struct shm_target *d,
	      uint32_t len, const uint8_t *sgid, const uint8_t *dgid,
	      struct shm_dst_seg *c)
{
	uint64_t head = shm_grh_head(len);
	uint8_t *to;

	if (likely(d->num_sge > 0 && d->sge[0].len >= IPOIB_GRH_LEN) &&
	    likely((to = shm_dst_at(f, proc, d->sge[0].off, c)) != NULL)) {
		shm_tsan_buf_take(to);
		shm_grh_fill(to, head, sgid, dgid);
		shm_tsan_buf_give(to);
		return;
	}
	shm_write_grh_copy(f, proc, d, head, sgid, dgid, c);
}

/*
 * A UD message shm_ud_deliver() does not write itself (several pieces, a
 * WR of several SGEs, a buffer it does not fit, a buffer not mapped):
 * fills completion e but its seq.
 */
static __attribute__((noinline)) void
shm_ud_put_slow(struct shm_qp *qp, uint32_t proc, struct shm_rq_ring *r,
		const struct shm_rq_ent *q, struct shm_cqe *e,
		const struct shm_send *wr, const struct shm_ah *ah,
		struct shm_port_ent *dp, struct shm_dst_seg *dst)
{
	struct shm_fabric *f = qp->port->f;
	uint32_t len = shm_msg_len(wr);
	struct shm_target to;

	shm_rq_target(r, q, &to);
	if (IPOIB_GRH_LEN + len > to.total_len) {
		e->status = IPOIB_WC_LOC_LEN_ERR;
		shm_add(&dp->cnt_len_errs, 1);
		return;
	}
	if (ah->global)
		shm_write_grh(f, proc, &to, len, qp->port->ent->gid, ah->dgid,
			      dst);
	shm_copy(f, proc, &to, IPOIB_GRH_LEN, wr, len, false, dst);
	e->byte_len = IPOIB_GRH_LEN + len;
}

/*
 * Deliver k UD messages of wr, all to QP dqpn through ah with one Q_Key,
 * in order; drops are counted at the target. As IBTA chapter 10 has it
 * for UD: a message whose P_Key does not match the receiver's
 * (shm_pkey_match()) or whose Q_Key is not the receiving QP's is dropped
 * silently (a controlled Q_Key, high bit set, stands for the sender's own
 * Q_Key); one that finds no posted receive is dropped, never retried; the
 * receive buffer's first 40 bytes are for the GRH, and a message longer
 * than the buffer completes with a length error.
 * A GRH is written, and IPOIB_WC_GRH set, only when the message carries
 * one: multicast always, unicast when the sender's address handle asks
 * for global routing (shm_ah.global). Without one the first 40 bytes are
 * left as they were (undefined, as an HCA leaves them) and the payload
 * still starts at offset 40; byte_len counts those 40 bytes either way,
 * as Linux's ipoib_ib_handle_rx_wc() relies on (it pulls IB_GRH_BYTES
 * whatever wc_flags says). The completion names the sender by SLID and
 * source QPN in both cases (IBTA 11.4.2.1, ibv_wc.slid / src_qp).
 *
 * The k messages share one lookup of the target, one claim of receive
 * WRs and one reservation of completions: two atomic operations on lines
 * the receiver shares, where one message at a time made two each. What
 * decides per message (a receiver that spreads by flow, injected drops)
 * takes them one at a time.
 */
static void
shm_ud_deliver(struct shm_qp *qp, const struct shm_send *wr, uint16_t k,
	       uint32_t dqpn, const struct shm_ah *ah, int sa_g)
{
	struct shm_fabric *f = qp->port->f;
	struct shm_qp_ent *q = shm_qp_lookup(f, dqpn), dv, rv;
	const struct shm_qp_ent *d = &dv;
	struct shm_port_ent *dp;
	struct shm_rq_ring *r;
	struct shm_cq_ring *c;
	struct shm_dst_seg dst = { .seg = UINT64_MAX };
	struct shm_rq_ent ents[SHM_UD_RUN];
	struct shm_cqe tmpl;
	bool descs;	/* unused: shm_rq_target() reads the entry */
	const uint8_t *sgid = qp->port->ent->gid;
	bool grh = ah->global;
	uint32_t qkey, got, j;
	uint64_t t;

	if (q == NULL || !shm_qp_ent_read_ud(q, dqpn, &dv))
		return;
	dp = &f->hdr->ports[d->port];
	if (shm_load(&dp->state) != SHM_PORT_ACTIVE)
		return;
	/* a group the SA knows reaches its full members only */
	if (sa_g >= 0 && !((shm_load_relaxed(&dp->sa_full) >> sa_g) & 1))
		return;
	if (k > 1 && (shm_load_relaxed(&dp->fault_drop_ppm) != 0 ||
		      shm_load(&q->nr_rss) >= 2)) {
		for (j = 0; j < k; j++)
			shm_ud_deliver(qp, &wr[j], 1, dqpn, ah, sa_g);
		return;
	}
	if (shm_fault_drop(shm_load_relaxed(&dp->fault_drop_ppm))) {
		shm_add(&dp->cnt_fault_drops, 1);
		return;
	}
	if (!shm_pkey_match(qp->ent->pkey, d->pkey)) {
		shm_add(&dp->cnt_pkey_drops, k);
		return;
	}
	/* a Q_Key with the high bit set means "use the QP's own" */
	qkey = (wr->remote_qkey & 0x80000000u) ? qp->ent->qkey :
						  wr->remote_qkey;
	if (qkey != d->qkey) {
		shm_add(&dp->cnt_qkey_drops, k);
		return;
	}
	/* spread by flow over the receive queues the receiver named */
	d = shm_rss_pick(f, q, d, &dqpn, wr, &rv);
	r = shm_arena_ptr(f, d->proc, d->rq_off);
	c = shm_arena_ptr(f, d->proc, d->cq_off);
	if (r == NULL || c == NULL)
		return;
	got = shm_rq_claim(r, k, ents, &descs);
	if (got < k)
		shm_add(&dp->cnt_ud_no_wr, k - got);
	if (got == 0)
		return;
	/*
	 * What the k completions share, once; each is filled in place
	 * from it and published once its message is in, as an RC send's
	 * (shm_rc_send.h): a template per message, copied to the CQ after
	 * the last, cost 14 instructions a message more (bench icount
	 * --loopback, tx side, 64 bytes: 277 against 263).
	 */
	shm_cqe_tmpl(&tmpl, r->id, dqpn, qp->qpn, d->qp_context,
		     qp->port->ent->lid, grh ? IPOIB_WC_GRH : 0);
	t = shm_cq_reserve(c, got);
	for (j = 0; j < got; j++) {
		const struct shm_rq_ent *ent = &ents[j];
		/* before the completion's stores, which could alias them */
		bool one = wr[j].iovcnt == 1;
		const void *src = one ? wr[j].iov[0].iov_base : NULL;
		uint32_t len = one ? (uint32_t)wr[j].iov[0].iov_len : 0;
		struct shm_cqe *e = shm_cq_entry_take(c, t + j);
		uint8_t *to;

		shm_cq_entry_fill(e, &tmpl, SHM_RQ_ENT_SLOT(ent));
		/*
		 * The common message: one piece, GRH and all within the
		 * entry's one buffer, written through one look-up of it.
		 * One message at a time: never streamed.
		 */
		if (likely(one && ent->off != SHM_RQ_ENT_DESC &&
			   IPOIB_GRH_LEN + len <= SHM_RQ_ENT_LEN(ent)) &&
		    likely((to = shm_dst_at(f, d->proc, ent->off, &dst)) !=
			   NULL)) {
			shm_tsan_buf_take(to);
			if (grh)
				shm_grh_fill(to, shm_grh_head(len), sgid,
					     ah->dgid);
			shm_copy_piece(to + IPOIB_GRH_LEN, src, len, false);
			shm_tsan_buf_give(to);
			e->byte_len = IPOIB_GRH_LEN + len;
		} else {
			shm_ud_put_slow(qp, d->proc, r, ent, e, &wr[j], ah,
					dp, &dst);
		}
		shm_cq_publish(e, t + j);
	}
}

static struct shm_mcg_ent *
shm_mcg_find(struct shm_hdr *h, const uint8_t *mgid)
{
	uint32_t g;

	for (g = 0; g < SHM_MAX_MCGS; g++)
		if (shm_load(&h->mcgs[g].nr_members) != 0 &&
		    memcmp(h->mcgs[g].mgid, mgid, IPOIB_GID_LEN) == 0)
			return &h->mcgs[g];
	return NULL;
}

/*
 * Fault injection: a full send queue. The tail of a post is refused, as
 * a verbs send queue without room refuses it, until the port's
 * ud_send_refuse WRs have been refused. Returns how many of n are.
 */
static uint16_t
shm_ud_refused(struct shm_port *p, uint16_t n)
{
	uint32_t left = __atomic_load_n(&p->ud_send_refuse, __ATOMIC_RELAXED);
	uint32_t r;

	do {
		if (left == 0)
			return 0;
		r = left < n ? left : n;
	} while (!__atomic_compare_exchange_n(&p->ud_send_refuse, &left,
					      left - r, false,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return (uint16_t)r;
}

/*
 * How many of the n messages of wr, from the first, go to one QP through
 * one address handle with one Q_Key: delivered together (at most
 * SHM_UD_RUN). Multicast goes one message at a time.
 */
static uint16_t
shm_ud_run(const struct shm_send *wr, uint16_t n)
{
	uint16_t i;

	if (wr->ah->multicast)
		return 1;
	n = n < SHM_UD_RUN ? n : SHM_UD_RUN;
	for (i = 1; i < n && wr[i].ah == wr->ah &&
	     wr[i].remote_qpn == wr->remote_qpn &&
	     wr[i].remote_qkey == wr->remote_qkey; i++)
		;
	return i;
}

/*
 * UD sends never stop: what cannot be delivered is dropped, as on a wire
 * (but for the fault above).
 */
static uint16_t
shm_ud_send(struct shm_qp *qp, const struct shm_send *wr, uint16_t n)
{
	struct shm_hdr *h = qp->port->f->hdr;
	uint16_t i, k, j;

	if (shm_load(&qp->ent->state) != SHM_QPS_RTS)
		return 0;
	n -= shm_ud_refused(qp->port, n);
	for (i = 0; i < n; i += k) {
		const struct shm_ah *ah = wr[i].ah;

		k = shm_ud_run(&wr[i], n - i);
		if (qp->port->cap != NULL)
			for (j = i; j < i + k; j++)
				shm_capture_tx(qp->port, &wr[j],
					       wr[j].remote_qpn, ah->dgid,
					       shm_msg_len(&wr[j]));
		if (shm_load(&qp->port->ent->state) != SHM_PORT_ACTIVE) {
			shm_add(&qp->port->ent->cnt_link_down_drops, k);
			continue;
		}
		if (ah->multicast) {
			struct shm_mcg_ent *m = shm_mcg_find(h, ah->dgid);
			int sa_g = shm_sa_mcg_lookup(h, ah->dgid);
			uint32_t nr;

			if (m == NULL)
				continue;
			nr = shm_load(&m->nr_members);
			for (j = 0; j < nr && j < SHM_MCG_MAX_MEMBERS; j++)
				shm_ud_deliver(qp, &wr[i], 1,
					       shm_load_relaxed(&m->members[j]),
					       ah, sa_g);
		} else {
			shm_ud_deliver(qp, &wr[i], k, wr[i].remote_qpn, ah,
				       -1);
		}
	}
	return n;
}

/*
 * No posted buffer at the receiver: an RNR NAK (IBTA chapter 9, RC). The
 * sender retries; with an RNR retry count of 7 for ever, otherwise the QP
 * goes to error once (rnr_retry + 1) RNR timer periods have passed.
 */
void
shm_rc_rnr(struct shm_qp *qp)
{
	uint64_t now = ipoib_now_ns();
	uint64_t since = 0;

	shm_add(&qp->port->ent->cnt_rnr_naks, 1);
	/* the first refusal of a streak starts it, whichever thread's */
	if (__atomic_compare_exchange_n(&qp->rnr_since, &since, now, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	if (qp->rnr_retry != IPOIB_RNR_RETRY_FOREVER && now > since &&
	    now - since >
	    (uint64_t)(qp->rnr_retry + 1) * SHM_RNR_TIMER_MS * 1000000ULL)
		shm_qp_set_err(qp);
}

/*
 * RC sends (shm_rc_send.h): what is not per message. The peer's entry
 * was read when the QP connected (qp->dst); here only what may have
 * changed since: the peer's state and whether the entry is still its.
 */
const struct shm_rc_dst *
shm_rc_open(struct shm_qp *qp)
{
	struct shm_fabric *f = qp->port->f;
	uint32_t peer_st;

	/* the acquire that pairs with shm_qp_connect()'s store: dst after */
	if (shm_load(&qp->ent->state) != SHM_QPS_RTS)
		return NULL;
	if (shm_load(&qp->port->ent->state) != SHM_PORT_ACTIVE) {
		/* the link is down: the retries run out, the QP errors */
		shm_add(&qp->port->ent->cnt_link_down_drops, 1);
		goto err;
	}
	if (unlikely(!qp->dst_ok))
		goto err;
	peer_st = shm_load(&qp->peer->state);
	if (shm_rc_peer_gone(qp, peer_st) ||
	    shm_load(&f->hdr->ports[qp->dst.port].state) != SHM_PORT_ACTIVE)
		goto err;
	if (!shm_qp_connected(peer_st)) {
		shm_rc_rnr(qp);		/* not ready to receive yet */
		return NULL;
	}
	return &qp->dst;
err:
	shm_qp_set_err(qp);
	return NULL;
}

bool
shm_rc_put_slow(struct shm_qp *qp, const struct shm_rc_dst *d,
		const struct shm_rq_ent *q, struct shm_cqe *e,
		const void *src, uint32_t len, const struct shm_send *sg,
		bool stream)
{
	struct shm_fabric *f = qp->port->f;
	struct iovec one = { .iov_base = (void *)(uintptr_t)src,
			     .iov_len = len };
	struct shm_send w1 = { .iov = &one, .iovcnt = 1 };
	const struct shm_send *w = sg != NULL ? sg : &w1;
	struct shm_dst_seg dst = { .seg = UINT64_MAX };
	struct shm_target to;

	shm_rq_target(d->r, q, &to);
	if (qp->port->cap != NULL)
		shm_capture_tx(qp->port, w, qp->peer_qpn,
			       f->hdr->ports[d->port].gid, len);
	if (len > to.total_len) {
		e->status = IPOIB_WC_LOC_LEN_ERR;
		shm_add(&f->hdr->ports[d->port].cnt_len_errs, 1);
		return false;
	}
	shm_copy_msg(f, d->proc, &to, 0, w, src, sg == NULL, len, stream,
		     &dst);
	e->byte_len = len;
	return true;
}

/* A struct shm_send as shm_rc_send_each() reads a message. */
static __attribute__((always_inline)) inline void
shm_rc_msg_of_send(void *ctx, uint32_t i, struct shm_rc_msg *m)
{
	const struct shm_send *w = (const struct shm_send *)ctx + i;

	m->src = w->iov[0].iov_base;
	if (likely(w->iovcnt == 1)) {
		m->len = (uint32_t)w->iov[0].iov_len;
		m->sg = NULL;
	} else {
		m->len = shm_msg_len(w);
		m->sg = w;
	}
}

/* The caller of shm_qp_post_send() keeps its messages: nothing to do. */
static __attribute__((always_inline)) inline void
shm_rc_sent_nothing(void *ctx, uint32_t i)
{
	(void)ctx;
	(void)i;
}

static uint16_t
shm_rc_send(struct shm_qp *qp, const struct shm_send *wr, uint16_t n)
{
	return shm_rc_send_each(qp, n, (void *)(uintptr_t)wr,
				shm_rc_msg_of_send, shm_rc_sent_nothing);
}


uint16_t
shm_qp_post_send(struct shm_qp *qp, const struct shm_send *wr, uint16_t n)
{
	if (qp->type == SHM_QPT_UD)
		return shm_ud_send(qp, wr, n);
	return shm_rc_send(qp, wr, n);
}

/* ---- multicast ----------------------------------------------------------- */

int
shm_mcast_attach(struct shm_qp *qp, const uint8_t *mgid)
{
	struct shm_fabric *f = qp->port->f;
	struct shm_hdr *h = f->hdr;
	struct shm_mcg_ent *m;
	uint32_t g, i;
	int ret;

	if (qp->type != SHM_QPT_UD || mgid[0] != 0xff)
		return -EINVAL;
	ret = shm_lock(f);
	if (ret < 0)
		return ret;
	m = shm_mcg_find(h, mgid);
	for (g = 0; m == NULL && g < SHM_MAX_MCGS; g++) {
		if (h->mcgs[g].nr_members == 0) {
			m = &h->mcgs[g];
			memcpy(m->mgid, mgid, IPOIB_GID_LEN);
		}
	}
	ret = -ENOSPC;
	if (m != NULL && m->nr_members < SHM_MCG_MAX_MEMBERS) {
		for (i = 0; i < m->nr_members; i++)
			if (m->members[i] == qp->qpn)
				break;
		if (i == m->nr_members) {
			/* senders read the slots without the lock */
			shm_store_relaxed(&m->members[i], qp->qpn);
			/* a sender reads members below nr_members */
			shm_store(&m->nr_members, i + 1);
			qp->mcgs++;
		}
		ret = 0;
	}
	shm_unlock(f);
	return ret;
}

int
shm_mcast_detach(struct shm_qp *qp, const uint8_t *mgid)
{
	struct shm_fabric *f = qp->port->f;
	struct shm_mcg_ent *m;
	uint32_t i;
	int ret = shm_lock(f);

	if (ret < 0)
		return ret;
	ret = -ENOENT;
	m = shm_mcg_find(f->hdr, mgid);
	for (i = 0; m != NULL && i < m->nr_members; i++) {
		if (m->members[i] == qp->qpn) {
			/*
			 * A sender that read nr_members before may see the
			 * last member twice: a datagram duplicated while a
			 * member leaves, never one lost for the others.
			 */
			shm_store_relaxed(&m->members[i],
					  m->members[m->nr_members - 1]);
			shm_store(&m->nr_members, m->nr_members - 1);
			qp->mcgs--;
			ret = 0;
			break;
		}
	}
	shm_unlock(f);
	return ret;
}
