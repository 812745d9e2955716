/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Queue pairs of the shm fabric: creation, state, destruction, and the
 * watch that notices an RC peer gone.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shm_cq_fill.h"
#include "shm_internal.h"
#include "shm_log.h"
#include "shm_rc_send.h"

/* ---- queue pairs --------------------------------------------------------- */

static int
shm_qp_track(struct shm_port *p, struct shm_qp *qp)
{
	if (p->nr_qps == p->cap_qps) {
		unsigned int cap = p->cap_qps ? p->cap_qps * 2 : 64;
		void *n = realloc(p->qps, cap * sizeof(*p->qps));

		if (n == NULL)
			return -ENOMEM;
		p->qps = n;
		p->cap_qps = cap;
	}
	p->qps[p->nr_qps++] = qp;
	return 0;
}

static void
shm_qp_untrack(struct shm_port *p, struct shm_qp *qp)
{
	unsigned int i;

	for (i = 0; i < p->nr_qps; i++) {
		if (p->qps[i] == qp) {
			p->qps[i] = p->qps[--p->nr_qps];
			return;
		}
	}
}

/* A free QP entry: a new generation makes stale QPNs miss. */
static int
shm_qp_ent_alloc(struct shm_fabric *f, struct shm_port *p,
		 const struct shm_qp_conf *conf, struct shm_qp *qp)
{
	static uint32_t cursor;
	struct shm_hdr *h = f->hdr;
	uint32_t i, n;

	if (p->ent->nr_qp >= p->ent->max_qp)
		return -ENOMEM;
	for (n = 0; n < SHM_MAX_QPS; n++) {
		struct shm_qp_ent *q;

		i = (cursor + n) % SHM_MAX_QPS;
		q = &h->qps[i];
		if (q->state != SHM_QPS_FREE)
			continue;
		cursor = i + 1;
		/* read lock-free (shm_qp_ent_read()): gen first, whole fields */
		shm_store_relaxed(&q->gen, (uint8_t)(q->gen + 1) ?
				  (uint8_t)(q->gen + 1) : 1);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		shm_store_relaxed(&q->type, conf->type == SHM_QPT_UD ?
				  SHM_QPT_UD : SHM_QPT_RC);
		shm_store_relaxed(&q->port, p->index);
		shm_store_relaxed(&q->proc, f->proc);
		shm_store_relaxed(&q->qkey, conf->qkey);
		shm_store_relaxed(&q->pkey, p->ent->pkeys[conf->pkey_index %
							  p->ent->npkeys]);
		shm_store_relaxed(&q->qp_context, conf->qp_context);
		shm_store_relaxed(&q->remote_qpn, 0);
		shm_store_relaxed(&q->rq_off, qp->rq->off);
		shm_store_relaxed(&q->cq_off, qp->cq->off);
		shm_store_relaxed(&q->nr_rss, 0);
		q->rnr_retry = IPOIB_RNR_RETRY_FOREVER;
		shm_store(&q->state, SHM_QPS_INIT);
		p->ent->nr_qp++;
		qp->ent = q;
		qp->qpn = ((uint32_t)q->gen << 16) | i;
		if (qp->own_rq) {
			qp->rq->qpn = qp->qpn;
			qp->rq->qp_context = conf->qp_context;
		}
		return 0;
	}
	return -ENOSPC;
}

/* CQ capacity: every WR that may complete on a CQ has an entry there. */
static int
shm_cq_commit(struct shm_qp *qp, struct shm_cq *cq)
{
	uint32_t need = qp->own_rq ? qp->rq->ring->max_wr :
		(qp->rq->cq == NULL ? qp->rq->ring->max_wr : 0);

	if (!qp->own_rq && qp->rq->cq != NULL && qp->rq->cq != cq)
		return -EINVAL;	/* one SRQ completes on one CQ here */
	if (cq->committed + need > cq->ring->size)
		return -ENOMEM;
	cq->committed += need;
	if (!qp->own_rq && qp->rq->cq == NULL) {
		qp->rq->cq = cq;
		qp->rq->ring->cq_off = cq->off;
	}
	return 0;
}

struct shm_qp *
shm_qp_create(struct shm_port *p, const struct shm_qp_conf *conf)
{
	struct shm_fabric *f = p->f;
	struct shm_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return NULL;
	qp->port = p;
	qp->type = conf->type;
	qp->cq = conf->recv_cq;
	qp->rnr_retry = IPOIB_RNR_RETRY_FOREVER;
	if (conf->srq != NULL) {
		qp->rq = conf->srq;
	} else {
		if (conf->max_recv_wr > p->ent->max_qp_wr) {
			ret = -ENOMEM;
			goto fail;
		}
		qp->rq = shm_rq_create(p, conf->max_recv_wr,
				       conf->max_recv_sge, false);
		if (qp->rq == NULL) {
			ret = -errno;
			goto fail;
		}
		qp->own_rq = true;
		qp->rq->ring->cq_off = qp->cq->off;
	}
	ret = shm_cq_commit(qp, qp->cq);
	if (ret < 0)
		goto fail_rq;
	if (!qp->own_rq)
		qp->rq->users++;
	ret = shm_lock(f);
	if (ret == 0) {
		ret = shm_qp_ent_alloc(f, p, conf, qp);
		shm_unlock(f);
	}
	if (ret == 0)
		ret = shm_qp_track(p, qp);
	if (ret < 0)
		goto fail_commit;
	return qp;
fail_commit:
	if (qp->ent != NULL && shm_lock(f) == 0) {
		shm_store(&qp->ent->state, SHM_QPS_FREE);
		p->ent->nr_qp--;
		shm_unlock(f);
	}
	qp->cq->committed -= qp->own_rq ? qp->rq->ring->max_wr : 0;
	if (!qp->own_rq)
		qp->rq->users--;
fail_rq:
	if (qp->own_rq)
		shm_rq_free(qp->rq);
fail:
	free(qp);
	errno = -ret;
	return NULL;
}

/*
 * After the flush, what is outstanding and not on the CQ was claimed by a
 * sender that has not completed it. A live sender completes within a copy;
 * one that died in between never will, and the QP could never go. An RC
 * QP's only sender is its peer: once the peer's entry is freed (its owner
 * destroyed it, or died and was reclaimed) nothing more comes. A UD QP may
 * hear from anyone: it waits as long as a CQ waits for a producer that
 * died (SHM_STALL_NS), timed in rnr_since, which UD QPs do not use.
 */
static bool
shm_rq_claims_lost(struct shm_qp *qp)
{
	uint64_t now;

	if (qp->type == SHM_QPT_RC)
		return qp->peer == NULL ||
		       shm_load_relaxed(&qp->peer->gen) !=
		       SHM_QPN_GEN(qp->peer_qpn) ||
		       shm_load(&qp->peer->state) == SHM_QPS_FREE;
	now = ipoib_now_ns();
	if (qp->rnr_since == 0) {
		qp->rnr_since = now;
		return false;
	}
	return now - qp->rnr_since >= SHM_STALL_NS;
}

/*
 * Destroy a QP: its own receive queue is flushed first, and the QP lives
 * on (-EBUSY) until the owner has polled every flushed WR.
 */
int
shm_qp_destroy(struct shm_qp *qp)
{
	struct shm_port *p = qp->port;
	struct shm_fabric *f = p->f;
	int ret;

	if (qp->own_rq) {
		shm_rq_flush(qp->rq);
		if (shm_rq_posted(qp->rq) != 0 &&
		    (shm_cq_pending(qp->cq, qp->rq->id) != 0 ||
		     !shm_rq_claims_lost(qp)))
			return -EBUSY;
	}
	while (qp->mcgs > 0) {
		uint32_t g;

		ret = shm_lock(f);
		if (ret < 0)
			return ret;
		for (g = 0; g < SHM_MAX_MCGS; g++) {
			struct shm_mcg_ent *m = &f->hdr->mcgs[g];
			uint32_t i, nr = m->nr_members;

			for (i = 0; i < nr; i++) {
				if (m->members[i] == qp->qpn) {
					/* senders read below nr_members */
					shm_store_relaxed(&m->members[i],
							  m->members[nr - 1]);
					shm_store(&m->nr_members, nr - 1);
					qp->mcgs--;
					break;
				}
			}
		}
		shm_unlock(f);
		qp->mcgs = 0;
	}
	ret = shm_lock(f);
	if (ret < 0)
		return ret;
	/* counted while connected, unless its error was reported already */
	if (qp->peer != NULL && !qp->reported_err)
		p->ent->nr_rc_conn--;
	shm_store(&qp->ent->state, SHM_QPS_FREE);
	p->ent->nr_qp--;
	shm_unlock(f);
	shm_qp_untrack(p, qp);
	if (qp->own_rq) {
		qp->cq->committed -= qp->rq->ring->max_wr;
		shm_rq_free(qp->rq);
	} else {
		qp->rq->users--;
	}
	free(qp);
	return 0;
}

uint32_t
shm_qp_num(const struct shm_qp *qp)
{
	return qp->qpn;
}

struct shm_rq *
shm_qp_rq(struct shm_qp *qp)
{
	return qp->rq;
}

enum shm_qp_state
shm_qp_state(const struct shm_qp *qp)
{
	return (enum shm_qp_state)shm_load(&qp->ent->state);
}

/* Move to ERR from any lcore; the control side flushes and reports. */
void
shm_qp_set_err(struct shm_qp *qp)
{
	uint32_t st = shm_load(&qp->ent->state);

	while (st != SHM_QPS_ERR && st != SHM_QPS_FREE &&
	       !__atomic_compare_exchange_n(&qp->ent->state, &st,
					    SHM_QPS_ERR, false,
					    __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE))
		;
}

/*
 * Control side of an error: flush what is posted, raise QP_FATAL once. As
 * IBTA chapter 10's error state: every posted receive completes with a
 * flush error, and an error the QP ran into (not one asked for with
 * shm_qp_modify()) is an affiliated asynchronous event.
 */
static void
shm_qp_report_err(struct shm_qp *qp, bool event)
{
	struct shm_async_event ev = { .type = SHM_EV_QP_FATAL };

	if (qp->reported_err)
		return;
	/* only a QP that connected counts in nr_rc_conn (rej_after) */
	if (qp->peer != NULL && shm_lock(qp->port->f) == 0) {
		qp->port->ent->nr_rc_conn--;
		shm_unlock(qp->port->f);
	}
	qp->reported_err = true;
	if (qp->own_rq)
		shm_rq_flush(qp->rq);
	ev.qp_num = qp->qpn;
	ev.qp_context = qp->ent->qp_context;
	if (event)
		shm_port_event(qp->port, &ev);
}

/* Where qp's sends go: to QP qpn, whose entry pv was read as of qpn. */
static bool
shm_rc_dst_resolve(struct shm_qp *qp, uint32_t qpn,
		   const struct shm_qp_ent *pv, struct shm_rc_dst *d)
{
	struct shm_fabric *f = qp->port->f;

	d->r = shm_arena_ptr(f, pv->proc, pv->rq_off);
	d->c = shm_arena_ptr(f, pv->proc, pv->cq_off);
	if (d->r == NULL || d->c == NULL)
		return false;
	d->proc = pv->proc;
	d->port = pv->port;
	shm_cqe_tmpl(&d->tmpl, d->r->id, qpn, qp->qpn,
		     pv->qp_context, qp->port->ent->lid, 0);
	return true;
}

/* Internal to the CM: connect an RC QP to its peer and set its state. */
int
shm_qp_connect(struct shm_qp *qp, uint32_t remote_qpn, uint8_t rnr_retry,
	       enum shm_qp_state state)
{
	struct shm_fabric *f = qp->port->f;
	struct shm_qp_ent *peer = shm_qp_slot(f, remote_qpn), pv;
	uint32_t old = shm_load(&qp->ent->state);
	bool first = qp->peer == NULL;

	/*
	 * As on an HCA, RTR takes the remote QPN as it is: a peer already
	 * gone (its entry freed or reused: the REQ's sender gave up) is found
	 * gone by the first send or the watch (shm_rc_peer_gone()), the REP
	 * still goes. Only a QPN that cannot be is refused. A QP in error
	 * stays there: a late RTU must not revive it.
	 */
	if (peer == NULL || qp->type != SHM_QPT_RC ||
	    old == SHM_QPS_ERR || old == SHM_QPS_FREE)
		return -EINVAL;
	if (first && shm_qp_ent_read(peer, remote_qpn, &pv)) {
		shm_cq_populate(f, pv.proc, pv.cq_off);
		qp->dst_ok = shm_rc_dst_resolve(qp, remote_qpn, &pv,
						&qp->dst);
	}
	/*
	 * The datapath reads the peer and dst once it sees the state: they
	 * first. A peer that could not be read is found gone by the first
	 * send (shm_rc_open()), as it would have been then.
	 */
	qp->peer = peer;
	qp->peer_qpn = remote_qpn;
	qp->rnr_retry = rnr_retry;
	shm_store_relaxed(&qp->ent->remote_qpn, remote_qpn);
	if (first && shm_lock(f) == 0) {
		qp->port->ent->nr_rc_conn++;
		shm_unlock(f);
	}
	shm_store(&qp->ent->state, state);
	return 0;
}

/*
 * The QP states of IBTA chapter 10 that IPoIB goes through: RESET is the
 * free entry, INIT at creation, RTR and RTS (UD here, RC through the CM),
 * ERR from any state.
 */
int
shm_qp_modify(struct shm_qp *qp, enum shm_qp_state state)
{
	uint32_t cur = shm_load(&qp->ent->state);

	switch (state) {
	case SHM_QPS_ERR:
		/* asked for: flushed, but no QP_FATAL (as with verbs) */
		shm_qp_set_err(qp);
		shm_qp_report_err(qp, false);
		return 0;
	case SHM_QPS_RTR:
	case SHM_QPS_RTS:
		if (qp->type != SHM_QPT_UD || cur == SHM_QPS_ERR)
			return -EINVAL;	/* RC moves through the CM */
		shm_store(&qp->ent->state, state);
		return 0;
	default:
		return -EINVAL;
	}
}

void
shm_qp_flush_settle(struct shm_qp *qp)
{
	if (qp->own_rq && shm_load_relaxed(&qp->rq->ring->flushed))
		shm_rq_flush(qp->rq);
}

/* Notice RC QPs whose peer went away or that an lcore put in error. */
void
shm_qp_watch(struct shm_port *p)
{
	unsigned int i;

	for (i = 0; i < p->nr_qps; i++) {
		struct shm_qp *qp = p->qps[i];
		uint32_t st = shm_load(&qp->ent->state);
		struct shm_qp_ent *peer = qp->peer;

		if (st == SHM_QPS_ERR) {
			shm_qp_report_err(qp, true);
			continue;
		}
		if (qp->type != SHM_QPT_RC || !shm_qp_connected(st) ||
		    peer == NULL)
			continue;
		if (!shm_rc_peer_gone(qp, shm_load(&peer->state))) {
			qp->gone_since = 0;
		} else if (qp->gone_since == 0) {
			qp->gone_since = ipoib_now_ns();
		} else if (ipoib_now_ns() - qp->gone_since >=
			   SHM_GONE_GRACE_NS) {
			shm_qp_set_err(qp);
			shm_qp_report_err(qp, true);
		}
	}
}

