/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Queues of the shm fabric: completion queues and receive queues (own
 * and shared). This is the datapath: no locks and no system calls. Who
 * may run each function concurrently is stated with it.
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shm_cq_fill.h"
#include "shm_internal.h"
#include "shm_log.h"
#include "shm_rq_claim.h"

/*
 * A receive queue's post and its flush: the poster stores prod (a
 * release) and then loads flushed, the flusher stores flushed and then
 * claims what prod shows (shm_rq_claim()). Neither fences between its
 * store and its load, so a post racing with the move to error can be
 * seen by neither: its prod still in the poster's store buffer when the
 * flush loads it, flushed not yet visible to the poster. The owner of
 * the queue closes that window with shm_qp_flush_settle() once every
 * thread that posts to the queue has passed a point ordered after the
 * move (a grace period of its RCU, which the driver waits for before it
 * frees a connection anyway): a post before that point is visible to the
 * settle's claim, one after it sees flushed and flushes itself. A fence
 * on the poster's side (a sequentially consistent store of prod, an xchg
 * on x86) waited for every descriptor the post wrote: the receiver's
 * profile at 64 B had 59 % of its time in shm_rq_post(), 19 % once the
 * store was a release. One on the flusher's side
 * (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)) cost about 20 us on a
 * 2-core VM while another thread ran, once per connection's teardown
 * (ipoib_cm_perf.rst, "A teardown's fences").
 */

/* ---- completion queues --------------------------------------------------- */

struct shm_cq *
shm_cq_create(struct shm_port *p, uint32_t cqe)
{
	struct shm_fabric *f = p->f;
	uint32_t size = ipoib_pow2(cqe < 2 ? 2 : cqe);
	size_t bytes = shm_cq_bytes(size);
	struct shm_cq *cq;
	uint64_t off;

	if (cqe > p->ent->max_cqe) {
		errno = ENOMEM;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return NULL;
	if (shm_port_arena_alloc(p, bytes, SHM_ARENA_COMMIT | SHM_ARENA_WALKED,
				 &off) < 0) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->port = p;
	cq->off = off;
	cq->ring = shm_arena_ptr(f, f->proc, off);
	cq->ring->size = size;
	cq->ring->mask = size - 1;
	cq->rewind_span = SHM_CQ_REWIND_SPAN;
	return cq;
}

int
shm_cq_destroy(struct shm_cq *cq)
{
	struct shm_cq_ring *r = cq->ring;

	shm_port_arena_free(cq->port, cq->off, shm_cq_bytes(r->size));
	free(cq);
	return 0;
}

/*
 * A producer reserved position h and never published it: it died between
 * the two (shm_cq_fill.h). After SHM_STALL_NS the position is skipped
 * and counted.
 */
static bool
shm_cq_stalled(struct shm_cq *cq)
{
	uint64_t now;

	if (shm_load(&cq->ring->tail) <= cq->head)
		return false;
	now = ipoib_now_ns();
	if (cq->stall_since == 0) {
		cq->stall_since = now;
		return false;
	}
	if (now - cq->stall_since < SHM_STALL_NS)
		return false;
	cq->stall_since = 0;
	cq->stall_skips++;
	/* the entry keeps an earlier position: not a walk of published ones */
	cq->walk_from = cq->head + 1;
	SHM_LOG(WARNING, "port %u: CQ entry %llu never published; skipped",
		cq->port->index, (unsigned long long)cq->head);
	return true;
}

/*
 * The CQ is empty, its head SHM_CQ_REWIND_AT or more into a lap: start the
 * next lap, so that a queue that empties often (a ping-pong, a receiver
 * faster than its senders) keeps its completions in its first page
 * instead of walking its whole ring, a new page each 128 completions: on
 * this fabric a non-SRQ CQ holds every receive WR its connections may
 * post (4 MiB for 91 connections' rings), and each new page cost both
 * processes a TLB miss, the p99 of a non-SRQ ping-pong (ipoib_cm_perf.rst,
 * "Non-SRQ round trips"). The positions skipped were reserved by nobody:
 * the tail moves from the head to the lap's end only if no sender has
 * reserved a position since (a compare-and-swap against the senders'
 * fetch_add, shm_cq_reserve()); a sender's next reservation is the lap's
 * first. Nothing else changes: the CQ holds as many completions as
 * before, in the order they were reserved.
 *
 * A CQE's seq is its position mod 2^32, and an entry past the rewind
 * point keeps an old one; rewinds alone would bring the positions 2^32
 * past it after 2^32 / size of them. So a rewind is made only while the
 * positions of the lap it starts stay within rewind_span of oldest, a
 * bound of every entry's position; once they would not, the consumer
 * walks whole laps again, and a whole lap walked from walk_from (every
 * position in it published) raises oldest to the lap's start.
 */
static __attribute__((noinline, cold)) void
shm_cq_rewind(struct shm_cq *cq)
{
	struct shm_cq_ring *c = cq->ring;
	uint64_t h = cq->head, next = (h | c->mask) + 1;

	if (h - cq->walk_from >= c->size)
		cq->oldest = h - c->size;
	if (next + c->size - cq->oldest > cq->rewind_span)
		return;
	if (!__atomic_compare_exchange_n(&c->tail, &h, next, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;		/* a sender reserved h meanwhile */
	cq->head = next;
	cq->walk_from = next;
	cq->rewinds++;
	shm_store(&c->head, next);
}

/*
 * Our receive queue of that id, NULL if it is gone (shm_rq_free()). Its
 * poller's side: the queue, once found, is used until its destroyer
 * knows no completion of it is left (shm_cq_pending()).
 */
static struct shm_rq *
shm_rq_find(struct shm_fabric *f, uint32_t id)
{
	uint32_t i = SHM_RQ_IDX(id);
	struct shm_rq **chunk = __atomic_load_n(&f->rq_tab[i / SHM_RQ_CHUNK],
						__ATOMIC_ACQUIRE);
	struct shm_rq *rq;

	if (chunk == NULL)
		return NULL;
	rq = __atomic_load_n(&chunk[i % SHM_RQ_CHUNK], __ATOMIC_ACQUIRE);
	return rq != NULL && rq->id == id ? rq : NULL;
}

/* A capture of a message that arrived in slot's buffer(s). */
static void
shm_cq_capture(struct shm_port *p, struct shm_rq *rq, uint32_t slot,
	       const struct ipoib_wc *wc)
{
	const struct shm_rdesc *d;
	struct shm_rdesc_sge one;

	if (rq->one_off[slot] != SHM_RQ_ENT_DESC) {
		/* a successful completion's bytes fit its one buffer */
		one.off = rq->one_off[slot];
		one.len = wc->byte_len;
		shm_capture_rx(p, wc, &one, 1);
		return;
	}
	d = shm_rdesc(rq->ring, slot);
	shm_capture_rx(p, wc, d->sge, d->num_sge);
}

/*
 * One consumer: the lcore that owns the CQ. The free-slot stack of the
 * queue being polled lives in locals while its completions follow each
 * other (the wc stores could alias it in memory) and goes back when the
 * queue changes and at the end.
 */
static __attribute__((noinline)) uint16_t
shm_cq_poll_some(struct shm_cq *cq, struct ipoib_wc *wc, uint16_t n)
{
	struct shm_cq_ring *c = cq->ring;
	struct shm_fabric *f = cq->port->f;
	/* a capture started meanwhile sees the next poll's */
	bool cap = cq->port->cap != NULL;
	uint64_t h = cq->head;
	/* rq's id; wider: no entry's id, not even SHM_ANY_RQ, is no queue's */
	uint64_t rq_id = UINT64_MAX;
	struct shm_rq *rq = NULL;
	uint32_t *free_slots = NULL;
	const uint64_t *ids = NULL;
	uint32_t nr_free = 0;
	uint16_t i;

	i = 0;
	while (i < n) {
		struct shm_cqe *e = &c->cqe[h & c->mask];
		uint32_t slot;

		if (shm_load(&e->seq) != (uint32_t)(h + 1)) {
			if (i == 0 && shm_cq_stalled(cq)) {
				h++;
				continue;
			}
			break;
		}
		/* the queue of the one before, mostly (one SRQ, one QP's) */
		if (unlikely(e->rq_id != rq_id)) {
			if (rq != NULL)
				rq->nr_free = nr_free;
			rq = shm_rq_find(f, e->rq_id);
			if (unlikely(rq == NULL)) {
				/*
				 * Its queue is gone: a sender that stalled
				 * past SHM_STALL_NS completed into a
				 * destroyed QP.
				 */
				rq_id = UINT64_MAX;
				h++;
				continue;
			}
			/*
			 * The sender claimed the slots after an acquire of
			 * prod, in its process; the poster's bookkeeping of
			 * them (and of the queue's fields read next), in
			 * ours, was done before its release of prod, maybe
			 * by another thread (the control thread posts a new
			 * connection's ring before its REP): what the CQE's
			 * acquire already orders, where TSan cannot see the
			 * sender's side. First, then.
			 */
			(void)shm_load(&rq->ring->prod);
			rq_id = e->rq_id;
			free_slots = rq->free_slots;
			ids = rq->wr_id;
			nr_free = rq->nr_free;
		}
		slot = e->slot;
		wc[i].wr_id = ids[slot];
		/* byte_len to wc_flags: the same fields, in the same order */
		memcpy(&wc[i].byte_len, &e->byte_len, SHM_CQE_WC_LEN);
		if (cap && e->status == IPOIB_WC_SUCCESS)
			shm_cq_capture(cq->port, rq, slot, &wc[i]);
		free_slots[nr_free++] = slot;
		/* read: a sender of the next lap may fill it (TSan) */
		shm_tsan_buf_give(e);
		h++;
		i++;
	}
	if (rq != NULL)
		rq->nr_free = nr_free;
	if (h != cq->head) {
		cq->head = h;
		cq->stall_since = 0;
		shm_store(&c->head, h);
	} else if (unlikely((h & c->mask) >= SHM_CQ_REWIND_AT)) {
		shm_cq_rewind(cq);	/* found nothing: it may be empty */
	}
	return i;
}

/*
 * Nothing at the head and nothing reserved (shm_cq_stalled()): an empty
 * poll, as a burst's of its other CQ, returns without the loop's frame.
 */
uint16_t
shm_cq_poll(struct shm_cq *cq, struct ipoib_wc *wc, uint16_t n)
{
	const struct shm_cq_ring *c = cq->ring;
	uint64_t h = cq->head;

	if (shm_load(&c->cqe[h & c->mask].seq) == (uint32_t)(h + 1) ||
	    shm_load(&c->tail) > h)
		return shm_cq_poll_some(cq, wc, n);
	if (unlikely((h & c->mask) >= SHM_CQ_REWIND_AT))
		shm_cq_rewind(cq);
	return 0;
}

void
shm_cq_populate(struct shm_fabric *f, uint32_t proc, uint64_t cq_off)
{
	const struct shm_cq_ring *c = shm_arena_ptr(f, proc, cq_off);

	/* from shared memory: shm_arena_populate() keeps it in the map */
	if (c != NULL)
		shm_arena_populate(f, proc, cq_off,
				   shm_cq_bytes(shm_load_relaxed(&c->size)));
}

/*
 * Completions of the queue rq_id (SHM_ANY_RQ: of any) published on cq
 * and not polled yet. Control path: the consumer may be polling meanwhile,
 * which only makes the answer shrink.
 */
uint32_t
shm_cq_pending(const struct shm_cq *cq, uint32_t rq_id)
{
	const struct shm_cq_ring *c = cq->ring;
	uint64_t h, t = shm_load(&c->tail);
	uint32_t n = 0;

	for (h = shm_load(&c->head); h < t; h++) {
		const struct shm_cqe *e = &c->cqe[h & c->mask];

		if (shm_load(&e->seq) == (uint32_t)(h + 1) &&
		    (rq_id == SHM_ANY_RQ || e->rq_id == rq_id))
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

/* Entry i of the table, in a chunk there is. Lock held. */
static inline struct shm_rq **
shm_rq_tab_ent(struct shm_fabric *f, uint32_t i)
{
	return &f->rq_tab[i / SHM_RQ_CHUNK][i % SHM_RQ_CHUNK];
}

/*
 * A free index of the table, in the chunks there are (looked for from
 * where the last was taken), else the first of a new chunk: the table
 * grows with the queues that exist at once, not with those ever made.
 * Lock held.
 */
static int
shm_rq_index(struct shm_fabric *f, uint32_t *idx)
{
	uint32_t cap = f->rq_chunks * SHM_RQ_CHUNK, n, i;
	struct shm_rq **c;

	for (n = 0; n < cap; n++) {
		i = (f->rq_next + n) % cap;
		if (*shm_rq_tab_ent(f, i) == NULL) {
			*idx = i;
			return 0;
		}
	}
	if (f->rq_chunks == SHM_RQ_MAX / SHM_RQ_CHUNK)
		return -ENOSPC;
	c = calloc(SHM_RQ_CHUNK, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	__atomic_store_n(&f->rq_tab[f->rq_chunks++], c, __ATOMIC_RELEASE);
	*idx = cap;
	return 0;
}

/*
 * Give rq an id and its place in the table, where pollers find it
 * (shm_rq_find()): stored last, as the queue is complete.
 */
static int
shm_rq_register(struct shm_fabric *f, struct shm_rq *rq)
{
	uint32_t i;
	int ret;

	pthread_mutex_lock(&f->lock);
	ret = shm_rq_index(f, &i);
	if (ret == 0) {
		/* the generation: 1 up to what the id's upper bits hold */
		if (++f->rq_gen >= 1u << (32 - SHM_RQ_IDX_BITS))
			f->rq_gen = 1;
		rq->id = f->rq_gen << SHM_RQ_IDX_BITS | i;
		rq->ring->id = rq->id;
		f->rq_next = i + 1;
		__atomic_store_n(shm_rq_tab_ent(f, i), rq, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

static void
shm_rq_unregister(struct shm_fabric *f, const struct shm_rq *rq)
{
	uint32_t i = SHM_RQ_IDX(rq->id);

	pthread_mutex_lock(&f->lock);
	__atomic_store_n(shm_rq_tab_ent(f, i), NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&f->lock);
}

struct shm_rq *
shm_rq_create(struct shm_port *p, uint32_t max_wr, uint32_t max_sge,
	      bool srq)
{
	struct shm_fabric *f = p->f;
	uint32_t size = ipoib_pow2(max_wr < 2 ? 2 : max_wr);
	/*
	 * A power of two: no descriptor straddles two lines (24 bytes for
	 * one SGE did, and a sender's prefetch of its first line missed the
	 * rest).
	 */
	uint32_t stride = ipoib_pow2(sizeof(struct shm_rdesc) +
				     max_sge * sizeof(struct shm_rdesc_sge));
	size_t ring_bytes = sizeof(struct shm_rq_ring) +
			    (size_t)size * sizeof(struct shm_rq_ent);
	size_t bytes;
	struct shm_rq *rq;
	uint64_t off;
	uint32_t i;
	int ret;

	if (max_sge == 0 || max_sge > IPOIB_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	ring_bytes = (ring_bytes + SHM_ALIGN - 1) & ~(size_t)(SHM_ALIGN - 1);
	bytes = ring_bytes + (size_t)max_wr * stride;
	rq = calloc(1, sizeof(*rq));
	if (rq == NULL)
		return NULL;
	rq->wr_id = calloc(max_wr, sizeof(*rq->wr_id));
	rq->one_off = calloc(max_wr, sizeof(*rq->one_off));
	rq->free_slots = calloc(max_wr, sizeof(*rq->free_slots));
	if (rq->wr_id == NULL || rq->one_off == NULL || rq->free_slots == NULL ||
	    shm_port_arena_alloc(p, bytes, SHM_ARENA_COMMIT, &off) < 0) {
		ret = -ENOMEM;
		goto fail;
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
	rq->max_wr = max_wr;
	/* last: a completion of this queue may be polled by another thread */
	ret = shm_rq_register(f, rq);
	if (ret == 0)
		return rq;
	shm_port_arena_free(p, rq->off, rq->size);
fail:
	free(rq->wr_id);
	free(rq->one_off);
	free(rq->free_slots);
	free(rq);
	errno = -ret;
	return NULL;
}

void
shm_rq_free(struct shm_rq *rq)
{
	shm_rq_unregister(rq->port->f, rq);
	shm_port_arena_free(rq->port, rq->off, rq->size);
	free(rq->wr_id);
	free(rq->one_off);
	free(rq->free_slots);
	free(rq);
}

/*
 * Complete every posted, unclaimed WR of rq with a flush error: the move
 * to error, the QP's destroy, the poster once it saw flushed, and
 * shm_qp_flush_settle() (top of this file), any of them concurrently.
 */
void
shm_rq_flush(struct shm_rq *rq)
{
	struct shm_cq_ring *c = shm_arena_ptr(rq->port->f, rq->port->f->proc,
					      rq->ring->cq_off);
	struct shm_rq_ent ents[SHM_BURST];
	struct shm_cqe tmpl;
	uint32_t k, i;
	uint64_t pos;
	bool descs;

	shm_store(&rq->ring->flushed, 1);
	shm_cqe_tmpl(&tmpl, rq->id, rq->qpn, 0, rq->qp_context, 0, 0);
	tmpl.status = IPOIB_WC_WR_FLUSH_ERR;
	while ((k = shm_rq_claim(rq->ring, SHM_BURST, ents, &descs)) != 0) {
		pos = shm_cq_reserve(c, k);
		for (i = 0; i < k; i++) {
			struct shm_cqe *e = shm_cq_entry_take(c, pos + i);

			shm_cq_entry_fill(e, &tmpl, SHM_RQ_ENT_SLOT(&ents[i]));
			shm_cq_publish(e, pos + i);
		}
	}
}

/*
 * The descriptor of a WR of several SGEs (a receive ring's slot of
 * several mbufs), out of the common one-buffer WR's loop: its length, or
 * -1 if a buffer is not our memory.
 */
static __attribute__((noinline)) int64_t
shm_rq_desc_fill(const struct shm_fabric *f, uint32_t nr_segs,
		 struct shm_rdesc *d, const struct ipoib_sge *s, uint16_t ns)
{
	struct shm_seg_view seg = { .lkey = UINT32_MAX };
	uint32_t len = 0;
	uint16_t j;

	for (j = 0; j < ns; j++) {
		uint64_t off;

		if (!shm_arena_own_in(f, nr_segs, &seg, s[j].lkey, s[j].addr,
				      s[j].length, &off))
			return -1;
		d->sge[j].off = off;
		d->sge[j].len = s[j].length;
		len += s[j].length;
	}
	d->num_sge = ns;
	d->total_len = len;
	return len;
}

/*
 * Post n receive WRs: one poster (the lcore that owns the queue). Posting
 * to a queue in error completes the WRs at once with a flush error.
 */
uint16_t
shm_rq_post(struct shm_rq *rq, const struct ipoib_recv_wr *wr, uint16_t n)
{
	struct shm_rq_ring *r = rq->ring;
	struct shm_fabric *f = rq->port->f;
	uint64_t prod = r->prod;
	/* read once: the descriptors written below could alias them */
	uint32_t nr_segs = __atomic_load_n(&f->nr_segs, __ATOMIC_ACQUIRE);
	struct shm_seg_view seg = { .lkey = UINT32_MAX };
	const uint32_t *free_slots = rq->free_slots;
	uint32_t nr_free = rq->nr_free, max_sge = r->max_sge, mask = r->mask;
	uint64_t *ids = rq->wr_id, *one_off = rq->one_off;
	struct shm_rq_ent *ring = r->ring;
	const struct ipoib_recv_wr *w, *end;
	uint64_t pos;
	unsigned int i;

	/*
	 * Room in the ring without reading cons (the senders' line): what it
	 * holds, prod - cons, is posted and not claimed, so at most max_wr -
	 * nr_free, and max_wr <= size (shm_rq_create()).
	 */
	if (n > nr_free)
		n = (uint16_t)nr_free;
	/*
	 * A sender last read the ring's entries: ask for them all, to
	 * write, before the first store waits for its line (the store of
	 * prod below waits for every one of them). Descriptors of one SGE
	 * are the poster's alone (struct shm_rq_ent).
	 */
	for (i = 0; i < n; i += 4)	/* 4 entries a line */
		__builtin_prefetch(&ring[(prod + i) & mask], 1, 3);
	if (n > 0)
		__builtin_prefetch(&ring[(prod + n - 1) & mask], 1, 3);
	/* a pointer and a position for a counter, an end for n: registers */
	for (w = wr, end = wr + n, pos = prod; w < end; w++, pos++) {
		uint32_t slot = free_slots[nr_free - 1];
		const struct ipoib_sge *s = w->sg_list;
		uint64_t ent_off;
		uint32_t total;
		struct shm_rq_ent *e;

		/* the common WR: one buffer, in the entry (no descriptor) */
		if (likely(w->num_sge == 1)) {
			if (!shm_arena_own_in(f, nr_segs, &seg, s->lkey,
					      s->addr, s->length, &ent_off))
				break;	/* not our memory: refused */
			total = s->length;
		} else {
			int64_t len;

			if (w->num_sge == 0 || w->num_sge > max_sge)
				break;
			len = shm_rq_desc_fill(f, nr_segs, shm_rdesc(r, slot),
					       s, w->num_sge);
			if (len < 0)
				break;	/* not our memory: refused */
			ent_off = SHM_RQ_ENT_DESC;
			total = (uint32_t)len;
		}
		ids[slot] = w->wr_id;
		one_off[slot] = ent_off;
		nr_free--;
		/* a sender whose claim then fails may be reading it */
		e = &ring[pos & mask];
		shm_store_relaxed(&e->off, ent_off);
		shm_store_relaxed(&e->meta, SHM_RQ_ENT_META(slot, total));
	}
	i = (unsigned int)(pos - prod);
	rq->nr_free = nr_free;
	/* pairs with the acquire load of prod in shm_rq_claim() */
	__atomic_store_n(&r->prod, prod + i, __ATOMIC_RELEASE);
	/* the poster's side of the flush (top of this file) */
	if (unlikely(shm_load_relaxed(&r->flushed)))
		shm_rq_flush(rq);
	return i;
}

uint32_t
shm_rq_posted(const struct shm_rq *rq)
{
	return rq->max_wr - rq->nr_free;
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
	if (srq->cq != NULL && shm_cq_pending(srq->cq, srq->id) != 0)
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
