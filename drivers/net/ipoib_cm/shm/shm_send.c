/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Sends on the shm fabric, UD (multicast included) and RC, and the
 * multicast groups UD QPs attach to. This is the datapath: no locks, no
 * system calls.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "shm_cq_fill.h"
#include "shm_internal.h"
#include "shm_log.h"

/* ---- sends --------------------------------------------------------------- */

static inline uint32_t
shm_msg_len(const struct shm_send *wr)
{
	uint32_t len = 0;
	uint16_t i;

	/* the common message: one piece */
	if (likely(wr->iovcnt == 1))
		return (uint32_t)wr->iov[0].iov_len;
	for (i = 0; i < wr->iovcnt; i++)
		len += wr->iov[i].iov_len;
	return len;
}

/*
 * A message of SHM_STREAM_MIN bytes or more, sent with at least
 * SHM_STREAM_BATCH - 1 others (the receive WRs one round of
 * shm_rc_send() claimed), is written with non-temporal stores:
 * without them each destination line is first read (a read for
 * ownership) from a receive buffer no core has touched for a ring's lap.
 * A message sent alone is not: its receiver is likely waiting for it and
 * would read its first line from memory, after a fence per message.
 * Streamed stores are weakly ordered: the caller of shm_copy() makes
 * shm_copy_fence() before a streamed message's completion is published.
 */
#define SHM_STREAM_MIN		4096
#define SHM_STREAM_BATCH	4

static void
shm_copy_stream(uint8_t *dst, const uint8_t *src, size_t n)
{
#ifdef __SSE2__
	size_t head = (16 - ((uintptr_t)dst & 15)) & 15;

	if (head > n)
		head = n;
	memcpy(dst, src, head);
	dst += head;
	src += head;
	n -= head;
	for (; n >= 64; n -= 64, src += 64, dst += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)src);
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)
					    (src + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(const void *)
					    (src + 32));
		__m128i e = _mm_loadu_si128((const __m128i *)(const void *)
					    (src + 48));

		_mm_stream_si128((__m128i *)(void *)dst, a);
		_mm_stream_si128((__m128i *)(void *)(dst + 16), b);
		_mm_stream_si128((__m128i *)(void *)(dst + 32), c);
		_mm_stream_si128((__m128i *)(void *)(dst + 48), e);
	}
#endif
	memcpy(dst, src, n);
}

/*
 * A message of 16 to 64 bytes (a small frame, a TCP ACK): two or four
 * 16-byte moves, the last ones overlapping. The call to memcpy() they
 * replace cost 6 instructions more per 64-byte frame (callgrind).
 */
static inline bool
shm_copy_small(uint8_t *dst, const uint8_t *src, size_t n)
{
#ifdef __SSE2__
	__m128i a, b, c, e;

	if (n < 16 || n > 64)
		return false;
	a = _mm_loadu_si128((const __m128i *)(const void *)src);
	b = _mm_loadu_si128((const __m128i *)(const void *)(src + n - 16));
	if (n > 32) {
		c = _mm_loadu_si128((const __m128i *)(const void *)(src + 16));
		e = _mm_loadu_si128((const __m128i *)(const void *)
				    (src + n - 32));
		_mm_storeu_si128((__m128i *)(void *)(dst + 16), c);
		_mm_storeu_si128((__m128i *)(void *)(dst + n - 32), e);
	}
	_mm_storeu_si128((__m128i *)(void *)dst, a);
	_mm_storeu_si128((__m128i *)(void *)(dst + n - 16), b);
	return true;
#else
	(void)dst;
	(void)src;
	(void)n;
	return false;
#endif
}

/* One piece of a message, streamed or not as shm_copy() was told. */
static inline void
shm_copy_piece(uint8_t *dst, const void *src, size_t n, bool stream)
{
	if (unlikely(stream))
		shm_copy_stream(dst, src, n);
	else if (!shm_copy_small(dst, src, n))
		memcpy(dst, src, n);
}

static inline void
shm_copy_fence(void)
{
#ifdef __SSE2__
	_mm_sfence();
#endif
}

/*
 * Where a claimed WR's message goes, as the copy reads it: the entry's
 * one SGE (in one), or the slot's descriptor's (shm_rq_target()).
 */
struct shm_target {
	const struct shm_rdesc_sge *sge;
	uint32_t num_sge;
	uint32_t total_len;
	struct shm_rdesc_sge one;
};

static inline void
shm_rq_target(struct shm_rq_ring *r, const struct shm_rq_ent *e,
	      struct shm_target *t)
{
	const struct shm_rdesc *d;

	if (likely(e->off != SHM_RQ_ENT_DESC)) {
		t->one.off = e->off;
		t->one.len = SHM_RQ_ENT_LEN(e);
		t->sge = &t->one;
		t->num_sge = 1;
		t->total_len = t->one.len;
		return;
	}
	d = shm_rdesc(r, SHM_RQ_ENT_SLOT(e));
	t->sge = d->sge;
	t->num_sge = d->num_sge;
	t->total_len = d->total_len;
}

/* shm_copy() of a message in pieces, or past a first segment. */
static void __attribute__((noinline))
shm_copy_sg(struct shm_fabric *f, uint32_t proc, const struct shm_target *d,
	    uint32_t skip, const struct shm_send *wr, bool stream)
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
			shm_tsan_buf_take(dst);
			shm_copy_piece(dst + soff, src, n, stream);
			shm_tsan_buf_give(dst);
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

/*
 * The segment of process proc a sender last wrote into, for the next
 * message of the same call (mostly the same segment): no lookup of the
 * process's map per message.
 */
struct shm_dst_seg {
	uint64_t seg;		/* UINT64_MAX: none yet */
	uint8_t *base;
};

static inline uint8_t *
shm_dst_ptr(struct shm_fabric *f, uint32_t proc, uint64_t off,
	    struct shm_dst_seg *c)
{
	uint8_t *p;

	if (likely(off >> SHM_SEG_SHIFT == c->seg))
		return c->base + (off & SHM_SEG_OFF_MASK);
	p = shm_arena_ptr(f, proc, off);
	if (p != NULL) {
		c->seg = off >> SHM_SEG_SHIFT;
		c->base = p - (off & SHM_SEG_OFF_MASK);
	}
	return p;
}

/*
 * Scatter the message of len bytes (after skip bytes of the buffer) into
 * a WR posted by process proc: the copy the "DMA" makes. The common
 * message, one piece (one: wr->iovcnt == 1, its data at src) within the
 * buffer's first segment, is one memcpy here; any other goes through
 * shm_copy_sg(). stream: with non-temporal stores (shm_copy_fence()
 * before the completion). The caller reads wr's fields before it writes
 * the completion, which could alias them.
 */
static inline void
shm_copy_one(struct shm_fabric *f, uint32_t proc, uint64_t off, uint32_t skip,
	     const void *src, uint32_t len, bool stream, struct shm_dst_seg *c)
{
	uint8_t *dst = shm_dst_ptr(f, proc, off, c);

	if (dst != NULL) {
		shm_tsan_buf_take(dst);
		shm_copy_piece(dst + skip, src, len, stream);
		shm_tsan_buf_give(dst);
	}
}

static inline void
shm_copy_msg(struct shm_fabric *f, uint32_t proc, const struct shm_target *d,
	     uint32_t skip, const struct shm_send *wr, const void *src,
	     bool one, uint32_t len, bool stream, struct shm_dst_seg *c)
{
	if (likely(one && d->num_sge > 0 && skip + len <= d->sge[0].len))
		shm_copy_one(f, proc, d->sge[0].off, skip, src, len, stream, c);
	else
		shm_copy_sg(f, proc, d, skip, wr, stream);
}

/* The same, of a message whose fields no store has been made over. */
static inline void
shm_copy(struct shm_fabric *f, uint32_t proc, const struct shm_target *d,
	 uint32_t skip, const struct shm_send *wr, uint32_t len, bool stream,
	 struct shm_dst_seg *c)
{
	shm_copy_msg(f, proc, d, skip, wr, wr->iov[0].iov_base,
		     wr->iovcnt == 1, len, stream, c);
}

static void
shm_write_grh(struct shm_fabric *f, uint32_t proc, const struct shm_target *d,
	      uint32_t len, const uint8_t *sgid, const uint8_t *dgid)
{
	uint8_t grh[IPOIB_GRH_LEN] = { 0x60, 0, 0, 0 };
	struct iovec iov = { grh, sizeof(grh) };
	struct shm_send w = { .iov = &iov, .iovcnt = 1 };
	struct shm_dst_seg c = { .seg = UINT64_MAX };

	grh[4] = (uint8_t)(len >> 8);
	grh[5] = (uint8_t)len;
	grh[6] = 0x1b;		/* next header: IBA transport */
	grh[7] = 1;		/* hop limit: link-local */
	memcpy(&grh[8], sgid, IPOIB_GID_LEN);
	memcpy(&grh[24], dgid, IPOIB_GID_LEN);
	shm_copy(f, proc, d, 0, &w, sizeof(grh), false, &c);
}

/*
 * Deliver one UD message to QP dqpn; drops are counted at the target. As
 * IBTA chapter 10 has it for UD: a message whose P_Key does not match the
 * receiver's (shm_pkey_match()) or whose Q_Key is not the receiving QP's
 * is dropped silently (a controlled Q_Key, high bit set, stands for the
 * sender's own Q_Key); one that finds no posted receive is dropped, never
 * retried; the receive buffer's first 40 bytes are for the GRH, and a
 * message longer than the buffer completes with a length error.
 * A GRH is written, and IPOIB_WC_GRH set, only when the message carries
 * one: multicast always, unicast when the sender's address handle asks
 * for global routing (shm_ah.global). Without one the first 40 bytes are
 * left as they were (undefined, as an HCA leaves them) and the payload
 * still starts at offset 40; byte_len counts those 40 bytes either way,
 * as Linux's ipoib_ib_handle_rx_wc() relies on (it pulls IB_GRH_BYTES
 * whatever wc_flags says). The completion names the sender by SLID and
 * source QPN in both cases (IBTA 11.4.2.1, ibv_wc.slid / src_qp).
 */
static void
shm_ud_deliver(struct shm_qp *qp, const struct shm_send *wr, uint32_t len,
	       uint32_t dqpn, const struct shm_ah *ah, int sa_g)
{
	struct shm_fabric *f = qp->port->f;
	struct shm_qp_ent *q = shm_qp_lookup(f, dqpn), dv, rv;
	const struct shm_qp_ent *d = &dv;
	struct shm_port_ent *dp;
	struct shm_rq_ring *r;
	struct shm_cq_ring *c;
	struct shm_dst_seg dst = { .seg = UINT64_MAX };
	struct shm_rq_ent ent;
	bool descs;	/* unused: shm_rq_target() reads the entry */
	struct shm_target to;
	struct shm_cqe cqe;
	uint32_t qkey;

	if (q == NULL || !shm_qp_ent_read(q, dqpn, &dv) ||
	    d->type != SHM_QPT_UD || d->state != SHM_QPS_RTS)
		return;
	dp = &f->hdr->ports[d->port];
	if (shm_load(&dp->state) != SHM_PORT_ACTIVE)
		return;
	/* a group the SA knows reaches its full members only */
	if (sa_g >= 0 && !((shm_load_relaxed(&dp->sa_full) >> sa_g) & 1))
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
	/* spread by flow over the receive queues the receiver named */
	d = shm_rss_pick(f, q, d, &dqpn, wr, &rv);
	r = shm_arena_ptr(f, d->proc, d->rq_off);
	c = shm_arena_ptr(f, d->proc, d->cq_off);
	if (r == NULL || c == NULL)
		return;
	if (shm_rq_claim(r, 1, &ent, &descs) == 0) {
		shm_add(&dp->cnt_ud_no_wr, 1);
		return;
	}
	memset(&cqe, 0, sizeof(cqe));
	cqe.rq_id = r->id;
	cqe.slot = SHM_RQ_ENT_SLOT(&ent);
	cqe.qp_num = dqpn;
	cqe.src_qp = qp->qpn;
	cqe.qp_context = d->qp_context;
	cqe.slid = qp->port->ent->lid;
	cqe.wc_flags = ah->global ? IPOIB_WC_GRH : 0;
	shm_rq_target(r, &ent, &to);
	if (IPOIB_GRH_LEN + len > to.total_len) {
		cqe.status = IPOIB_WC_LOC_LEN_ERR;
		shm_add(&dp->cnt_len_errs, 1);
	} else {
		if (ah->global)
			shm_write_grh(f, d->proc, &to, len,
				      qp->port->ent->gid, ah->dgid);
		/* one message at a time: never streamed */
		shm_copy(f, d->proc, &to, IPOIB_GRH_LEN, wr,
			 len, false, &dst);
		cqe.byte_len = IPOIB_GRH_LEN + len;
	}
	shm_cq_push(c, &cqe, 1);
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
 * UD sends never stop: what cannot be delivered is dropped, as on a wire
 * (but for the fault above).
 */
static uint16_t
shm_ud_send(struct shm_qp *qp, const struct shm_send *wr, uint16_t n)
{
	struct shm_hdr *h = qp->port->f->hdr;
	uint16_t i;

	if (shm_load(&qp->ent->state) != SHM_QPS_RTS)
		return 0;
	n -= shm_ud_refused(qp->port, n);
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
			int sa_g = shm_sa_mcg_lookup(h, ah->dgid);
			uint32_t k, nr;

			if (m == NULL)
				continue;
			nr = shm_load(&m->nr_members);
			for (k = 0; k < nr && k < SHM_MCG_MAX_MEMBERS; k++)
				shm_ud_deliver(qp, &wr[i], len,
					       shm_load_relaxed(&m->members[k]),
					       ah, sa_g);
		} else {
			shm_ud_deliver(qp, &wr[i], len, wr[i].remote_qpn, ah,
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
static void
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
 * RC sends: reliable and in order (IBTA chapter 9). Stops at the first
 * that cannot go; a peer gone or a link down puts the QP in error, as
 * exhausted transport retries would. Several threads may post on one QP
 * at once, as ibv_post_send() allows (the driver's tx queues and its
 * control thread sending held frames): what they share here is atomic.
 */
static uint16_t
shm_rc_send(struct shm_qp *qp, const struct shm_send *wr, uint16_t n)
{
	struct shm_fabric *f = qp->port->f;
	const struct shm_qp_ent *peer = NULL;
	struct shm_dst_seg dst = { .seg = UINT64_MAX };
	struct shm_cqe tmpl = { .seq = 0 };
	uint32_t late[SHM_BURST], k, i, nlate, stream_min;
	struct shm_rq_ent ents[SHM_BURST];
	bool descs;	/* one of ents is SHM_RQ_ENT_DESC */
	bool cap;	/* a capture runs: each message is written to it too */
	struct shm_qp_ent pv;
	struct shm_rq_ring *r;
	struct shm_cq_ring *c;
	uint16_t done = 0;
	uint64_t t;

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
	tmpl.rq_id = r->id;
	tmpl.qp_num = qp->peer_qpn;
	tmpl.src_qp = qp->qpn;
	tmpl.qp_context = peer->qp_context;
	tmpl.slid = qp->port->ent->lid;
	tmpl.status = IPOIB_WC_SUCCESS;
	while (done < n) {
		uint16_t want = n - done < SHM_BURST ? n - done : SHM_BURST;

		k = shm_rq_claim(r, want, ents, &descs);
		if (k == 0) {
			shm_rc_rnr(qp);
			break;
		}
		/* read first: the line stays shared while no streak runs */
		if (shm_load_relaxed(&qp->rnr_since) != 0)
			shm_store_relaxed(&qp->rnr_since, 0);
		/* each completion filled in place once its message is in */
		t = shm_cq_reserve(c, k);
		/*
		 * The receiver last read the completion entries, and wrote the
		 * descriptors of WRs of several SGEs: ask for them all before
		 * the first is read (a miss per message, in turn, was two
		 * thirds of this function). Two entries a line: every line
		 * from t's, then the last's.
		 */
		for (i = 0; i < k; i += 2)
			__builtin_prefetch(&c->cqe[(t + i) & c->mask], 1, 3);
		__builtin_prefetch(&c->cqe[(t + k - 1) & c->mask], 1, 3);
		for (i = 0; unlikely(descs) && i < k; i++)
			if (ents[i].off == SHM_RQ_ENT_DESC)
				__builtin_prefetch(shm_rdesc(r,
					SHM_RQ_ENT_SLOT(&ents[i])), 0, 3);
		/*
		 * A streamed message's completion waits for one fence after
		 * the last copy; the others are published as they are copied
		 * (the poller stops at the first unpublished one anyway).
		 */
		stream_min = k >= SHM_STREAM_BATCH ? SHM_STREAM_MIN : UINT32_MAX;
		nlate = 0;
		cap = qp->port->cap != NULL;
		for (i = 0; i < k; i++) {
			const struct shm_send *w = &wr[done + i];
			const struct shm_rq_ent *q = &ents[i];
			struct shm_cqe *e = shm_cq_entry_take(c, t + i);
			/* before the stores below, which could alias them */
			const void *src = w->iov[0].iov_base;
			bool one = w->iovcnt == 1;
			uint32_t len = likely(one) ? (uint32_t)w->iov[0].iov_len :
						     shm_msg_len(w);
			uint32_t room = SHM_RQ_ENT_LEN(q);
			bool stream = len >= stream_min;
			struct shm_target to;

			/* the body, not seq nor the padding */
			memcpy(&e->rq_id, &tmpl.rq_id, SHM_CQE_BODY_LEN);
			e->slot = SHM_RQ_ENT_SLOT(q);
			/* the common WR's one SGE is in its entry */
			if (unlikely(q->off == SHM_RQ_ENT_DESC || !one)) {
				shm_rq_target(r, q, &to);
				room = to.total_len;
			}
			if (unlikely(cap))
				shm_capture_tx(qp->port, w, qp->peer_qpn,
					       f->hdr->ports[peer->port].gid,
					       len);
			if (len > room) {
				e->status = IPOIB_WC_LOC_LEN_ERR;
				shm_add(&f->hdr->ports[peer->port].cnt_len_errs,
					1);
				shm_cq_publish(e, t + i);
				continue;
			}
			if (likely(q->off != SHM_RQ_ENT_DESC && one))
				shm_copy_one(f, peer->proc, q->off, 0, src, len,
					     stream, &dst);
			else
				shm_copy_msg(f, peer->proc, &to, 0, w, src,
					     one, len, stream, &dst);
			e->byte_len = len;
			if (unlikely(stream)) {
				late[nlate++] = i;
				continue;
			}
			shm_cq_publish(e, t + i);
		}
		if (unlikely(nlate > 0)) {
			shm_copy_fence();
			for (i = 0; i < nlate; i++)
				shm_cq_publish(&c->cqe[(t + late[i]) & c->mask],
					       t + late[i]);
		}
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
