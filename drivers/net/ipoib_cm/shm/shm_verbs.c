/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Queues of the shm fabric: completion queues, receive queues (own and
 * shared), queue pairs, sends and multicast. This is the datapath: no
 * locks, no system calls. Who may run each function concurrently is
 * stated with it.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shm_internal.h"
#include "shm_log.h"

#define SHM_BURST	64

#ifndef unlikely
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

static uint32_t
shm_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static inline struct shm_rdesc *
shm_rdesc(struct shm_rq_ring *r, uint32_t slot)
{
	return (struct shm_rdesc *)((uint8_t *)r + r->desc_rel +
				    (uint64_t)slot * r->desc_stride);
}

/* ---- completion queues --------------------------------------------------- */

struct shm_cq *
shm_cq_create(struct shm_port *p, uint32_t cqe)
{
	struct shm_fabric *f = p->f;
	uint32_t size = shm_pow2(cqe < 2 ? 2 : cqe);
	size_t bytes = sizeof(struct shm_cq_ring) +
		       (size_t)size * sizeof(struct shm_cqe);
	struct shm_cq *cq;
	uint64_t off;

	if (cqe > p->ent->max_cqe) {
		errno = ENOMEM;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return NULL;
	if (shm_arena_alloc(f, bytes, true, &off) < 0) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->port = p;
	cq->off = off;
	cq->ring = shm_arena_ptr(f, f->proc, off);
	cq->ring->size = size;
	cq->ring->mask = size - 1;
	return cq;
}

int
shm_cq_destroy(struct shm_cq *cq)
{
	struct shm_cq_ring *r = cq->ring;

	shm_arena_free(cq->port->f, cq->off, sizeof(*r) +
		       (size_t)r->size * sizeof(struct shm_cqe));
	free(cq);
	return 0;
}

/*
 * Reserve n completions on a CQ of another (or this) process and fill them
 * from tmpl[]; each is published by storing its seq last. Senders run this
 * concurrently; the CQ is sized so that it never holds more completions
 * than receive WRs that may complete on it.
 */
static void
shm_cq_push(struct shm_cq_ring *c, const struct shm_cqe *tmpl, uint32_t n)
{
	uint64_t t = __atomic_fetch_add(&c->tail, n, __ATOMIC_RELAXED);
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct shm_cqe *e = &c->cqe[(t + i) & c->mask];

		e->rq_off = tmpl[i].rq_off;
		e->slot = tmpl[i].slot;
		e->byte_len = tmpl[i].byte_len;
		e->qp_num = tmpl[i].qp_num;
		e->src_qp = tmpl[i].src_qp;
		e->qp_context = tmpl[i].qp_context;
		e->slid = tmpl[i].slid;
		e->status = tmpl[i].status;
		e->wc_flags = tmpl[i].wc_flags;
		/* pairs with the acquire load in shm_cq_poll() */
		shm_store(&e->seq, t + i + 1);
	}
}

/*
 * A producer reserved position h and never published it: it died inside
 * shm_cq_push(). After SHM_STALL_NS the position is skipped and counted.
 */
static bool
shm_cq_stalled(struct shm_cq *cq)
{
	uint64_t now;

	if (shm_load(&cq->ring->tail) <= cq->head)
		return false;
	now = shm_now_ns();
	if (cq->stall_since == 0) {
		cq->stall_since = now;
		return false;
	}
	if (now - cq->stall_since < SHM_STALL_NS)
		return false;
	cq->stall_since = 0;
	cq->stall_skips++;
	SHM_LOG(WARNING, "port %u: CQ entry %llu never published; skipped",
		cq->port->index, (unsigned long long)cq->head);
	return true;
}

/* One consumer: the lcore that owns the CQ. */
uint16_t
shm_cq_poll(struct shm_cq *cq, struct shm_wc *wc, uint16_t n)
{
	struct shm_cq_ring *c = cq->ring;
	struct shm_fabric *f = cq->port->f;
	uint64_t h = cq->head;
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct shm_cqe *e = &c->cqe[h & c->mask];
		struct shm_rq *rq;

		if (shm_load(&e->seq) != h + 1) {
			if (i == 0 && shm_cq_stalled(cq)) {
				h++;
				i--;	/* the for loop's i++ undoes it */
				continue;
			}
			break;
		}
		rq = (struct shm_rq *)(uintptr_t)shm_load(&((struct shm_rq_ring *)
			shm_arena_ptr(f, f->proc, e->rq_off))->handle);
		if (unlikely(rq == NULL)) {
			/*
			 * Its queue is gone: a sender that stalled past
			 * SHM_STALL_NS completed into a destroyed QP.
			 */
			h++;
			i--;
			continue;
		}
		/*
		 * The sender claimed the slot after an acquire of prod, in its
		 * process; the poster's bookkeeping of it, in ours, was done
		 * before its release of prod, maybe by another thread.
		 */
		(void)shm_load(&rq->ring->prod);
		wc[i].wr_id = rq->wr_id[e->slot];
		wc[i].byte_len = e->byte_len;
		wc[i].qp_num = e->qp_num;
		wc[i].src_qp = e->src_qp;
		wc[i].qp_context = e->qp_context;
		wc[i].slid = e->slid;
		wc[i].status = e->status;
		wc[i].wc_flags = e->wc_flags;
		if (cq->port->cap != NULL && e->status == SHM_WC_SUCCESS)
			shm_capture_rx(cq->port, &wc[i],
				       shm_rdesc(rq->ring, e->slot));
		rq->free_slots[rq->nr_free++] = e->slot;
		rq->outstanding--;
		h++;
	}
	if (h != cq->head) {
		cq->head = h;
		cq->stall_since = 0;
		shm_store(&c->head, h);
	}
	return i;
}

/*
 * Completions of the queue at rq_off (SHM_ANY_RQ: of any) published on cq
 * and not polled yet. Control path: the consumer may be polling meanwhile,
 * which only makes the answer shrink.
 */
static uint32_t
shm_cq_pending(const struct shm_cq *cq, uint64_t rq_off)
{
	const struct shm_cq_ring *c = cq->ring;
	uint64_t h, t = shm_load(&c->tail);
	uint32_t n = 0;

	for (h = shm_load(&c->head); h < t; h++) {
		const struct shm_cqe *e = &c->cqe[h & c->mask];

		if (shm_load(&e->seq) == h + 1 &&
		    (rq_off == SHM_ANY_RQ || e->rq_off == rq_off))
			n++;
	}
	return n;
}

uint32_t
shm_cq_count(const struct shm_cq *cq)
{
	return shm_cq_pending(cq, SHM_ANY_RQ);
}

/* ---- receive queues ------------------------------------------------------ */

static struct shm_rq *
shm_rq_create(struct shm_port *p, uint32_t max_wr, uint32_t max_sge,
	      bool srq)
{
	struct shm_fabric *f = p->f;
	uint32_t size = shm_pow2(max_wr < 2 ? 2 : max_wr);
	uint32_t stride = sizeof(struct shm_rdesc) +
			  max_sge * sizeof(struct shm_rdesc_sge);
	size_t ring_bytes = sizeof(struct shm_rq_ring) +
			    (size_t)size * sizeof(uint32_t);
	size_t bytes;
	struct shm_rq *rq;
	uint64_t off;
	uint32_t i;

	if (max_sge == 0 || max_sge > SHM_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	ring_bytes = (ring_bytes + SHM_ALIGN - 1) & ~(size_t)(SHM_ALIGN - 1);
	bytes = ring_bytes + (size_t)max_wr * stride;
	rq = calloc(1, sizeof(*rq));
	if (rq == NULL)
		return NULL;
	rq->wr_id = calloc(max_wr, sizeof(*rq->wr_id));
	rq->free_slots = calloc(max_wr, sizeof(*rq->free_slots));
	if (rq->wr_id == NULL || rq->free_slots == NULL ||
	    shm_arena_alloc(f, bytes, true, &off) < 0) {
		free(rq->wr_id);
		free(rq->free_slots);
		free(rq);
		errno = ENOMEM;
		return NULL;
	}
	rq->port = p;
	rq->off = off;
	rq->size = bytes;
	rq->ring = shm_arena_ptr(f, f->proc, off);
	rq->ring->size = size;
	rq->ring->mask = size - 1;
	rq->ring->max_wr = max_wr;
	rq->ring->max_sge = max_sge;
	rq->ring->desc_stride = stride;
	rq->ring->is_srq = srq;
	rq->ring->desc_rel = (uint32_t)ring_bytes;
	for (i = 0; i < max_wr; i++)
		rq->free_slots[i] = max_wr - 1 - i;
	rq->nr_free = max_wr;
	/* last: a completion of this queue may be polled by another thread */
	__atomic_store_n(&rq->ring->handle, (uint64_t)(uintptr_t)rq,
			 __ATOMIC_RELEASE);
	return rq;
}

static void
shm_rq_free(struct shm_rq *rq)
{
	shm_arena_free(rq->port->f, rq->off, rq->size);
	free(rq->wr_id);
	free(rq->free_slots);
	free(rq);
}

/*
 * Claim up to want posted WRs of ring r (in another process's arena).
 * Senders run this concurrently; see struct shm_rq_ring for why the slot
 * ids read before a successful CAS are ours.
 */
static uint32_t
shm_rq_claim(struct shm_rq_ring *r, uint32_t want, uint32_t *slots)
{
	uint64_t c = shm_load(&r->cons);
	uint32_t k, i;

	for (;;) {
		uint64_t p = shm_load(&r->prod);

		if (p <= c)
			return 0;
		k = p - c < want ? (uint32_t)(p - c) : want;
		for (i = 0; i < k; i++)
			slots[i] = shm_load_relaxed(&r->ring[(c + i) & r->mask]);
		if (__atomic_compare_exchange_n(&r->cons, &c, c + k, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			break;
	}
	if (shm_load_relaxed(&r->limit) != 0 &&
	    shm_load(&r->prod) - (c + k) < shm_load_relaxed(&r->limit)) {
		/* below the SRQ limit: fire once, the owner re-arms */
		shm_store(&r->limit, 0);
		shm_store(&r->limit_fired, 1);
	}
	return k;
}

/* Complete every posted, unclaimed WR of rq with a flush error. */
void
shm_rq_flush(struct shm_rq *rq)
{
	struct shm_cq_ring *c = shm_arena_ptr(rq->port->f, rq->port->f->proc,
					      rq->ring->cq_off);
	struct shm_cqe tmpl[SHM_BURST];
	uint32_t slots[SHM_BURST], k, i;

	shm_store(&rq->ring->flushed, 1);
	while ((k = shm_rq_claim(rq->ring, SHM_BURST, slots)) != 0) {
		for (i = 0; i < k; i++) {
			memset(&tmpl[i], 0, sizeof(tmpl[i]));
			tmpl[i].rq_off = rq->off;
			tmpl[i].slot = slots[i];
			tmpl[i].qp_num = rq->qpn;
			tmpl[i].qp_context = rq->qp_context;
			tmpl[i].status = SHM_WC_WR_FLUSH_ERR;
		}
		shm_cq_push(c, tmpl, k);
	}
}

/*
 * Post n receive WRs: one poster (the lcore that owns the queue). Posting
 * to a queue in error completes the WRs at once with a flush error.
 */
uint16_t
shm_rq_post(struct shm_rq *rq, const uint64_t *wr_id,
	    const struct shm_sge *const *sgl, const uint16_t *nsge,
	    uint16_t n)
{
	struct shm_rq_ring *r = rq->ring;
	struct shm_fabric *f = rq->port->f;
	uint64_t prod = r->prod;
	uint64_t space = r->size - (prod - shm_load(&r->cons));
	uint16_t i, j;

	if (n > space)
		n = (uint16_t)space;
	if (n > rq->nr_free)
		n = (uint16_t)rq->nr_free;
	for (i = 0; i < n; i++) {
		uint32_t slot = rq->free_slots[rq->nr_free - 1];
		struct shm_rdesc *d = shm_rdesc(r, slot);
		uint32_t total = 0;

		if (nsge[i] == 0 || nsge[i] > r->max_sge)
			break;
		for (j = 0; j < nsge[i]; j++) {
			const struct shm_sge *s = &sgl[i][j];
			uint64_t off;

			if (!shm_arena_own(f, s->lkey, s->addr, s->length,
					   &off))
				break;
			d->sge[j].off = off;
			d->sge[j].len = s->length;
			total += s->length;
		}
		if (j < nsge[i])
			break;	/* not our memory: refused */
		d->num_sge = nsge[i];
		d->total_len = total;
		rq->wr_id[slot] = wr_id[i];
		rq->nr_free--;
		r->ring[(prod + i) & r->mask] = slot;
	}
	rq->outstanding += i;
	/* pairs with the acquire load of prod in shm_rq_claim() */
	shm_store(&r->prod, prod + i);
	if (shm_load(&r->flushed))
		shm_rq_flush(rq);
	return i;
}

uint32_t
shm_rq_posted(const struct shm_rq *rq)
{
	return rq->outstanding;
}

struct shm_rq *
shm_srq_create(struct shm_port *p, uint32_t max_wr, uint32_t max_sge,
	       uint32_t limit)
{
	struct shm_rq *srq;
	void *n;

	if (max_wr > p->ent->max_srq_wr) {
		errno = ENOMEM;
		return NULL;
	}
	n = realloc(p->srqs, (p->nr_srqs + 1) * sizeof(*p->srqs));
	if (n == NULL)
		return NULL;
	p->srqs = n;
	srq = shm_rq_create(p, max_wr, max_sge, true);
	if (srq == NULL)
		return NULL;
	srq->ring->limit = limit;
	p->srqs[p->nr_srqs++] = srq;
	return srq;
}

int
shm_srq_arm(struct shm_rq *srq, uint32_t limit)
{
	shm_store(&srq->ring->limit, limit);
	return 0;
}

/*
 * As with verbs, an SRQ still used by a QP cannot go (-EBUSY), and what is
 * posted to it is simply discarded: the owner takes its buffers back.
 */
int
shm_srq_destroy(struct shm_rq *srq)
{
	struct shm_port *p = srq->port;
	unsigned int i;

	if (srq->users != 0)
		return -EBUSY;
	/* a completion left on the CQ would lead its poller to freed memory */
	if (srq->cq != NULL && shm_cq_pending(srq->cq, srq->off) != 0)
		return -EBUSY;
	shm_store(&srq->ring->flushed, 1);
	for (i = 0; i < p->nr_srqs; i++) {
		if (p->srqs[i] == srq) {
			p->srqs[i] = p->srqs[--p->nr_srqs];
			break;
		}
	}
	if (srq->cq != NULL)
		srq->cq->committed -= srq->ring->max_wr;
	shm_rq_free(srq);
	return 0;
}

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
		q->rnr_retry = 7;
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
	qp->rnr_retry = 7;
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

static bool
shm_qp_connected(uint32_t state)
{
	return state == SHM_QPS_RTR || state == SHM_QPS_RTS;
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
	now = shm_now_ns();
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
		if (qp->rq->outstanding != 0 &&
		    (shm_cq_pending(qp->cq, qp->rq->off) != 0 ||
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
					m->members[i] = m->members[nr - 1];
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
static void
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

/* Control side of an error: flush what is posted, raise QP_FATAL once. */
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

/* Internal to the CM: connect an RC QP to its peer and set its state. */
int
shm_qp_connect(struct shm_qp *qp, uint32_t remote_qpn, uint8_t rnr_retry,
	       enum shm_qp_state state)
{
	struct shm_fabric *f = qp->port->f;
	struct shm_qp_ent *peer = shm_qp_lookup(f, remote_qpn);
	uint32_t old = shm_load(&qp->ent->state);
	bool first = qp->peer == NULL;

	/* a QP in error stays there: a late RTU must not revive it */
	if (peer == NULL || qp->type != SHM_QPT_RC ||
	    old == SHM_QPS_ERR || old == SHM_QPS_FREE)
		return -EINVAL;
	/* the datapath reads the peer once it sees the state: peer first */
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

/*
 * An RC peer that vanished (its slot reused), went to error, or is now
 * connected to another QP. A peer still in INIT (the REP is on its way) or
 * RTR is not gone.
 */
static bool
shm_rc_peer_gone(const struct shm_qp *qp)
{
	const struct shm_qp_ent *peer = qp->peer;
	uint32_t st = shm_load(&peer->state);
	uint32_t rq = shm_load_relaxed(&peer->remote_qpn);

	return shm_load_relaxed(&peer->gen) != SHM_QPN_GEN(qp->peer_qpn) ||
	       st == SHM_QPS_FREE || st == SHM_QPS_ERR ||
	       (rq != 0 && rq != qp->qpn);
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
		if (!shm_rc_peer_gone(qp)) {
			qp->gone_since = 0;
		} else if (qp->gone_since == 0) {
			qp->gone_since = shm_now_ns();
		} else if (shm_now_ns() - qp->gone_since >=
			   SHM_GONE_GRACE_NS) {
			shm_qp_set_err(qp);
			shm_qp_report_err(qp, true);
		}
	}
}

struct shm_qp_ent *
shm_qp_lookup(struct shm_fabric *f, uint32_t qpn)
{
	struct shm_qp_ent *q = &f->hdr->qps[SHM_QPN_INDEX(qpn)];

	if (SHM_QPN_GEN(qpn) == 0 ||
	    shm_load_relaxed(&q->gen) != SHM_QPN_GEN(qpn) ||
	    (qpn >> 24) != 0 || shm_load(&q->state) == SHM_QPS_FREE)
		return NULL;
	return q;
}

/* ---- sends --------------------------------------------------------------- */

static inline uint32_t
shm_msg_len(const struct shm_send *wr)
{
	uint32_t len = 0;
	uint16_t i;

	for (i = 0; i < wr->iovcnt; i++)
		len += wr->iov[i].iov_len;
	return len;
}

/*
 * Scatter the message (after skip bytes of the buffer) into a WR posted by
 * process proc: the copy the "DMA" makes.
 */
static void
shm_copy(struct shm_fabric *f, uint32_t proc, const struct shm_rdesc *d,
	 uint32_t skip, const struct shm_send *wr)
{
	uint32_t s = 0, soff = skip;
	uint16_t i;

	while (s < d->num_sge && soff >= d->sge[s].len)
		soff -= d->sge[s++].len;
	for (i = 0; i < wr->iovcnt; i++) {
		const uint8_t *src = wr->iov[i].iov_base;
		size_t left = wr->iov[i].iov_len;

		while (left > 0 && s < d->num_sge) {
			size_t room = d->sge[s].len - soff;
			size_t n = left < room ? left : room;
			uint8_t *dst = shm_arena_ptr(f, proc, d->sge[s].off);

			if (dst == NULL)
				return;
			memcpy(dst + soff, src, n);
			src += n;
			left -= n;
			soff += n;
			if (soff == d->sge[s].len) {
				s++;
				soff = 0;
			}
		}
	}
}

static void
shm_write_grh(struct shm_fabric *f, uint32_t proc, const struct shm_rdesc *d,
	      uint32_t len, const uint8_t *sgid, const uint8_t *dgid)
{
	uint8_t grh[SHM_GRH_LEN] = { 0x60, 0, 0, 0 };
	struct iovec iov = { grh, sizeof(grh) };
	struct shm_send w = { .iov = &iov, .iovcnt = 1 };

	grh[4] = (uint8_t)(len >> 8);
	grh[5] = (uint8_t)len;
	grh[6] = 0x1b;		/* next header: IBA transport */
	grh[7] = 1;		/* hop limit: link-local */
	memcpy(&grh[8], sgid, SHM_GID_LEN);
	memcpy(&grh[24], dgid, SHM_GID_LEN);
	shm_copy(f, proc, d, 0, &w);
}

/* Deliver one UD message to QP dqpn; drops are counted at the target. */
static void
shm_ud_deliver(struct shm_qp *qp, const struct shm_send *wr, uint32_t len,
	       uint32_t dqpn, const uint8_t *dgid)
{
	struct shm_fabric *f = qp->port->f;
	struct shm_qp_ent *q = shm_qp_lookup(f, dqpn), dv;
	const struct shm_qp_ent *d = &dv;
	struct shm_port_ent *dp;
	struct shm_rq_ring *r;
	struct shm_cq_ring *c;
	struct shm_cqe cqe;
	uint32_t slot, qkey;

	if (q == NULL || !shm_qp_ent_read(q, dqpn, &dv) ||
	    d->type != SHM_QPT_UD || d->state != SHM_QPS_RTS)
		return;
	dp = &f->hdr->ports[d->port];
	if (shm_load(&dp->state) != SHM_PORT_ACTIVE)
		return;
	if (shm_fault_drop(shm_load_relaxed(&dp->fault_drop_ppm))) {
		shm_add(&dp->cnt_fault_drops, 1);
		return;
	}
	if (!shm_pkey_match(qp->ent->pkey, d->pkey)) {
		shm_add(&dp->cnt_pkey_drops, 1);
		return;
	}
	/* a Q_Key with the high bit set means "use the QP's own" */
	qkey = (wr->remote_qkey & 0x80000000u) ? qp->ent->qkey :
						  wr->remote_qkey;
	if (qkey != d->qkey) {
		shm_add(&dp->cnt_qkey_drops, 1);
		return;
	}
	r = shm_arena_ptr(f, d->proc, d->rq_off);
	c = shm_arena_ptr(f, d->proc, d->cq_off);
	if (r == NULL || c == NULL)
		return;
	if (shm_rq_claim(r, 1, &slot) == 0) {
		shm_add(&dp->cnt_ud_no_wr, 1);
		return;
	}
	memset(&cqe, 0, sizeof(cqe));
	cqe.rq_off = d->rq_off;
	cqe.slot = slot;
	cqe.qp_num = dqpn;
	cqe.src_qp = qp->qpn;
	cqe.qp_context = d->qp_context;
	cqe.slid = qp->port->ent->lid;
	cqe.wc_flags = SHM_WC_GRH;
	if (SHM_GRH_LEN + len > shm_rdesc(r, slot)->total_len) {
		cqe.status = SHM_WC_LOC_LEN_ERR;
		shm_add(&dp->cnt_len_errs, 1);
	} else {
		shm_write_grh(f, d->proc, shm_rdesc(r, slot), len,
			      qp->port->ent->gid, dgid);
		shm_copy(f, d->proc, shm_rdesc(r, slot), SHM_GRH_LEN, wr);
		cqe.byte_len = SHM_GRH_LEN + len;
	}
	shm_cq_push(c, &cqe, 1);
}

static struct shm_mcg_ent *
shm_mcg_find(struct shm_hdr *h, const uint8_t *mgid)
{
	uint32_t g;

	for (g = 0; g < SHM_MAX_MCGS; g++)
		if (shm_load(&h->mcgs[g].nr_members) != 0 &&
		    memcmp(h->mcgs[g].mgid, mgid, SHM_GID_LEN) == 0)
			return &h->mcgs[g];
	return NULL;
}

/* UD sends never stop: what cannot be delivered is dropped, as on a wire. */
static uint16_t
shm_ud_send(struct shm_qp *qp, const struct shm_send *wr, uint16_t n)
{
	struct shm_hdr *h = qp->port->f->hdr;
	uint16_t i;

	if (shm_load(&qp->ent->state) != SHM_QPS_RTS)
		return 0;
	for (i = 0; i < n; i++) {
		const struct shm_ah *ah = wr[i].ah;
		uint32_t len = shm_msg_len(&wr[i]);

		if (qp->port->cap != NULL)
			shm_capture_tx(qp->port, &wr[i], wr[i].remote_qpn,
				       ah->dgid, len);
		if (shm_load(&qp->port->ent->state) != SHM_PORT_ACTIVE) {
			shm_add(&qp->port->ent->cnt_link_down_drops, 1);
			continue;
		}
		if (ah->multicast) {
			struct shm_mcg_ent *m = shm_mcg_find(h, ah->dgid);
			uint32_t k, nr;

			if (m == NULL)
				continue;
			nr = shm_load(&m->nr_members);
			for (k = 0; k < nr && k < SHM_MCG_MAX_MEMBERS; k++)
				shm_ud_deliver(qp, &wr[i], len,
					       shm_load_relaxed(&m->members[k]),
					       ah->dgid);
		} else {
			shm_ud_deliver(qp, &wr[i], len, wr[i].remote_qpn,
				       ah->dgid);
		}
	}
	return n;
}

/* No posted buffer at the receiver: RNR NAK; retry, or error out. */
static void
shm_rc_rnr(struct shm_qp *qp)
{
	uint64_t now = shm_now_ns();

	shm_add(&qp->port->ent->cnt_rnr_naks, 1);
	if (qp->rnr_since == 0) {
		qp->rnr_since = now;
		return;
	}
	if (qp->rnr_retry != 7 && now - qp->rnr_since >
	    (uint64_t)(qp->rnr_retry + 1) * SHM_RNR_TIMER_MS * 1000000ULL)
		shm_qp_set_err(qp);
}

/* RC sends: reliable and in order. Stops at the first that cannot go. */
static uint16_t
shm_rc_send(struct shm_qp *qp, const struct shm_send *wr, uint16_t n)
{
	struct shm_fabric *f = qp->port->f;
	const struct shm_qp_ent *peer = NULL;
	struct shm_cqe cqe[SHM_BURST];
	uint32_t slots[SHM_BURST], k, i;
	struct shm_qp_ent pv;
	struct shm_rq_ring *r;
	struct shm_cq_ring *c;
	uint16_t done = 0;

	if (shm_load(&qp->ent->state) != SHM_QPS_RTS)
		return 0;
	if (shm_load(&qp->port->ent->state) != SHM_PORT_ACTIVE) {
		/* the link is down: the retries run out, the QP errors */
		shm_add(&qp->port->ent->cnt_link_down_drops, 1);
		shm_qp_set_err(qp);
		return 0;
	}
	if (shm_rc_peer_gone(qp) ||
	    !shm_qp_ent_read(qp->peer, qp->peer_qpn, &pv) ||
	    shm_load(&f->hdr->ports[pv.port].state) != SHM_PORT_ACTIVE) {
		shm_qp_set_err(qp);
		return 0;
	}
	peer = &pv;
	r = shm_arena_ptr(f, peer->proc, peer->rq_off);
	c = shm_arena_ptr(f, peer->proc, peer->cq_off);
	if (r == NULL || c == NULL) {
		shm_qp_set_err(qp);
		return 0;
	}
	if (!shm_qp_connected(peer->state)) {
		shm_rc_rnr(qp);		/* not ready to receive yet */
		return 0;
	}
	while (done < n) {
		uint16_t want = n - done < SHM_BURST ? n - done : SHM_BURST;

		k = shm_rq_claim(r, want, slots);
		if (k == 0) {
			shm_rc_rnr(qp);
			break;
		}
		qp->rnr_since = 0;
		for (i = 0; i < k; i++) {
			const struct shm_send *w = &wr[done + i];
			struct shm_rdesc *d = shm_rdesc(r, slots[i]);
			uint32_t len = shm_msg_len(w);

			memset(&cqe[i], 0, sizeof(cqe[i]));
			cqe[i].rq_off = peer->rq_off;
			cqe[i].slot = slots[i];
			cqe[i].qp_num = qp->peer_qpn;
			cqe[i].src_qp = qp->qpn;
			cqe[i].qp_context = peer->qp_context;
			cqe[i].slid = qp->port->ent->lid;
			if (qp->port->cap != NULL)
				shm_capture_tx(qp->port, w, qp->peer_qpn,
					       f->hdr->ports[peer->port].gid,
					       len);
			if (len > d->total_len) {
				cqe[i].status = SHM_WC_LOC_LEN_ERR;
				shm_add(&f->hdr->ports[peer->port].cnt_len_errs,
					1);
				continue;
			}
			shm_copy(f, peer->proc, d, 0, w);
			cqe[i].byte_len = len;
		}
		shm_cq_push(c, cqe, k);
		done += k;
	}
	return done;
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
			memcpy(m->mgid, mgid, SHM_GID_LEN);
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
