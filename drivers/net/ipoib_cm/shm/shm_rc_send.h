/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef SHM_RC_SEND_H
#define SHM_RC_SEND_H

/*
 * RC sends (IBTA chapter 9): reliable and in order. One always-inline
 * template, shm_rc_send_each(), for two callers: the fabric's
 * shm_qp_post_send(), whose messages are struct shm_send (peers, tests),
 * and the driver's shm transport, whose messages are mbufs it reads and
 * frees in the same pass as the copy (as an HCA's driver writes its own
 * WQEs instead of going through ibv_post_send()). The caller says how a
 * message is read (msg) and what is done once it is copied (sent); both
 * are inlined with the template. What is not per message is out of line
 * in shm_send.c.
 *
 * Stops at the first message that cannot go; a peer gone or a link down
 * puts the QP in error, as exhausted transport retries would. Several
 * threads may post on one QP at once, as ibv_post_send() allows (the
 * driver's tx queues and its control thread sending held frames): what
 * they share here is atomic.
 */

#include <stdbool.h>
#include <stdint.h>

#include "shm_copy.h"
#include "shm_cq_fill.h"
#include "shm_internal.h"
#include "shm_rq_claim.h"

/*
 * A message as an RC send reads it: its first piece and its length, and
 * for a message of several pieces all of them (sg; NULL for one piece).
 */
struct shm_rc_msg {
	const void *src;
	uint32_t len;
	const struct shm_send *sg;
};

/* QP state as senders see it: inline, a send reads them each call. */
static inline bool
shm_qp_connected(uint32_t state)
{
	return state == SHM_QPS_RTR || state == SHM_QPS_RTS;
}

/*
 * An RC peer that vanished (its slot reused), went to error, or is now
 * connected to another QP. A peer still in INIT (the REP is on its way) or
 * RTR is not gone. st: the peer's state, loaded (acquire) by the caller,
 * which may test it again.
 */
static inline bool
shm_rc_peer_gone(const struct shm_qp *qp, uint32_t st)
{
	const struct shm_qp_ent *peer = qp->peer;
	uint32_t rq = shm_load_relaxed(&peer->remote_qpn);

	return shm_load_relaxed(&peer->gen) != SHM_QPN_GEN(qp->peer_qpn) ||
	       st == SHM_QPS_FREE || st == SHM_QPS_ERR ||
	       (rq != 0 && rq != qp->qpn);
}

/*
 * The QP can send now: where to (qp->dst, resolved by shm_qp_connect()).
 * NULL: nothing goes (an RNR counted, or the QP put in error).
 */
const struct shm_rc_dst *shm_rc_open(struct shm_qp *qp);
/*
 * No posted buffer at the receiver: an RNR NAK, counted; the QP goes to
 * error once the retries are spent.
 */
void shm_rc_rnr(struct shm_qp *qp);

/*
 * Claim up to want (<= SHM_BURST) of the receiver's WRs into ents; 0: an
 * RNR NAK, counted. Inline: once per burst, one frame's in a ping-pong.
 */
static inline uint32_t
shm_rc_claim(struct shm_qp *qp, struct shm_rq_ring *r, uint32_t want,
	     struct shm_rq_ent *ents)
{
	bool descs;	/* one of ents is SHM_RQ_ENT_DESC */
	uint32_t k, i;

	k = shm_rq_claim(r, want, ents, &descs);
	if (k == 0) {
		shm_rc_rnr(qp);
		return 0;
	}
	/* read first: the line stays shared while no streak runs */
	if (shm_load_relaxed(&qp->rnr_since) != 0)
		shm_store_relaxed(&qp->rnr_since, 0);
	/* the receiver wrote the descriptors of WRs of several SGEs */
	for (i = 0; unlikely(descs) && i < k; i++)
		if (ents[i].off == SHM_RQ_ENT_DESC)
			__builtin_prefetch(shm_rdesc(r,
				SHM_RQ_ENT_SLOT(&ents[i])), 0, 3);
	return k;
}
/*
 * A message the template does not copy itself (several pieces, a WR of
 * several SGEs, a longer message than the buffer, a capture running):
 * fills completion e but its seq. False: nothing was copied (a length
 * error), e is to be published now.
 */
bool shm_rc_put_slow(struct shm_qp *qp, const struct shm_rc_dst *d,
		     const struct shm_rq_ent *q, struct shm_cqe *e,
		     const void *src, uint32_t len, const struct shm_send *sg,
		     bool stream);

typedef void (*shm_rc_msg_fn)(void *ctx, uint32_t i, struct shm_rc_msg *m);
typedef void (*shm_rc_sent_fn)(void *ctx, uint32_t i);

/*
 * Send messages 0 to n - 1 of ctx (read by msg(ctx, i, &m)) on RC QP qp;
 * sent(ctx, i) once message i is copied (or failed with a length error:
 * either way the receiver has its completion and the message is done).
 * Returns how many were sent, in order from the first.
 */
static __attribute__((always_inline)) inline uint16_t
shm_rc_send_each(struct shm_qp *qp, uint16_t n, void *ctx, shm_rc_msg_fn msg,
		 shm_rc_sent_fn sent)
{
	struct shm_dst_seg dst = { .seg = UINT64_MAX };
	struct shm_rq_ent ents[SHM_BURST];
	uint32_t late[SHM_BURST];
	struct shm_fabric *f = qp->port->f;
	struct shm_rq_ring *r;
	struct shm_cq_ring *c;
	const struct shm_rc_dst *d;
	struct shm_cqe tmpl;
	uint32_t done = 0;
	uint32_t proc;

	d = shm_rc_open(qp);
	if (d == NULL)
		return 0;
	/* what the loop reads of *d, in locals: stores could alias it */
	r = d->r;
	c = d->c;
	proc = d->proc;
	tmpl = d->tmpl;
	while (done < n) {
		uint32_t want = n - done < SHM_BURST ? n - done : SHM_BURST;
		uint32_t k, i, nlate = 0, stream_min, lim;
		uint64_t t;

		k = shm_rc_claim(qp, r, want, ents);
		if (k == 0)
			break;
		/* each completion filled in place once its message is in */
		t = shm_cq_reserve(c, k);
		/*
		 * The receiver last read the completion entries: ask for them
		 * all before the first is written (a miss per message, in
		 * turn, was two thirds of the send). Two entries a line:
		 * every line from t's, then the last's.
		 */
		for (i = 0; i < k; i += 2)
			__builtin_prefetch(&c->cqe[(t + i) & c->mask], 1, 3);
		__builtin_prefetch(&c->cqe[(t + k - 1) & c->mask], 1, 3);
		/*
		 * What this loop copies itself: messages shorter than lim, in
		 * one piece, into a WR's one SGE. A message of SHM_STREAM_MIN
		 * bytes or more in a round of SHM_STREAM_BATCH is streamed,
		 * and while a capture runs each message is written to it too:
		 * both in shm_rc_put_slow(), as is anything else. A streamed
		 * message's completion waits for one fence after the last
		 * copy; the others are published as they are copied (the
		 * poller stops at the first unpublished one anyway).
		 */
		stream_min = k >= SHM_STREAM_BATCH ? SHM_STREAM_MIN : UINT32_MAX;
		lim = qp->port->cap != NULL ? 0 : stream_min;
		for (i = 0; i < k; i++) {
			const struct shm_rq_ent *q = &ents[i];
			struct shm_cqe *e = shm_cq_entry_take(c, t + i);
			struct shm_rc_msg m;

			/* before the stores below, which could alias it */
			msg(ctx, done + i, &m);
			shm_cq_entry_fill(e, &tmpl, SHM_RQ_ENT_SLOT(q));
			/* the common WR's one SGE is in its entry */
			if (likely(m.len < lim && q->off != SHM_RQ_ENT_DESC &&
				   m.sg == NULL && m.len <= SHM_RQ_ENT_LEN(q))) {
				shm_copy_one(f, proc, q->off, 0, m.src, m.len,
					     false, &dst);
				e->byte_len = m.len;
				shm_cq_publish(e, t + i);
			} else if (shm_rc_put_slow(qp, d, q, e, m.src, m.len,
						   m.sg, m.len >= stream_min) &&
				   m.len >= stream_min) {
				late[nlate++] = i;
			} else {
				shm_cq_publish(e, t + i);
			}
			sent(ctx, done + i);
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

#endif /* SHM_RC_SEND_H */
