/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef SHM_RQ_CLAIM_H
#define SHM_RQ_CLAIM_H

/*
 * A sender's claim of posted receive WRs (an RC send, a UD delivery, a
 * receive queue's flush). Inline: a send in a burst of one claims once,
 * and the call's saves and restores were a quarter of the claim.
 */

#include <stdbool.h>
#include <stdint.h>

#include "shm_internal.h"

/*
 * Copy n entries of a ring from e (a sender reads them; their poster may
 * be writing the next lap's if our claim then fails). Their offsets or'ed.
 */
static inline uint64_t
shm_rq_ents_read(const struct shm_rq_ent *e, struct shm_rq_ent *to,
		 uint32_t n)
{
	const struct shm_rq_ent *end = e + n;
	uint64_t offs = 0;

	for (; e < end; to++, e++) {
		to->off = shm_load_relaxed(&e->off);
		to->meta = shm_load_relaxed(&e->meta);
		offs |= to->off;
	}
	return offs;
}

/*
 * Claim up to want posted WRs of ring r (in another process's arena).
 * Senders run this concurrently; see struct shm_rq_ring for why the
 * entries read before a successful CAS are ours. *descs: whether one of
 * them has its SGEs in its descriptor (SHM_RQ_ENT_DESC).
 */
static inline uint32_t
shm_rq_claim(struct shm_rq_ring *r, uint32_t want, struct shm_rq_ent *ents,
	     bool *descs)
{
	uint64_t c = shm_load(&r->cons);
	uint64_t offs;	/* their offsets or'ed: the top bit is DESC's only */
	uint32_t k, run;

	for (;;) {
		uint64_t p = shm_load(&r->prod);
		uint64_t at, room;

		if (p <= c)
			return 0;
		k = p - c < want ? (uint32_t)(p - c) : want;
		/* a run to the ring's end, then, rarely, one from its start */
		at = c & r->mask;
		room = (uint64_t)r->mask + 1 - at;
		run = k < room ? k : (uint32_t)room;
		offs = shm_rq_ents_read(&r->ring[at], ents, run);
		if (unlikely(run < k))
			offs |= shm_rq_ents_read(r->ring, ents + run, k - run);
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
	*descs = (int64_t)offs < 0;
	return k;
}

#endif /* SHM_RQ_CLAIM_H */
