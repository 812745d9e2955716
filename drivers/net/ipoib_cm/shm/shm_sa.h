/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef SHM_SA_H
#define SHM_SA_H

/*
 * The subnet administrator's multicast groups in the directory (struct
 * shm_sa_mcg), as its queries (shm_sa.c), the senders of datagrams and a
 * port going away use them.
 */

#include <string.h>

#include "shm_internal.h"

/* The SA's group of mgid (index), or -1; without the lock (senders). */
static inline int
shm_sa_mcg_lookup(const struct shm_hdr *h, const uint8_t *mgid)
{
	int g;

	for (g = 0; g < SHM_MAX_MCGS; g++)
		if (shm_load(&h->sa_mcgs[g].in_use) &&
		    memcmp(h->sa_mcgs[g].mgid, mgid, IPOIB_GID_LEN) == 0)
			return g;
	return -1;
}

/*
 * Port pt leaves the SA's group g in the join states of mask (full,
 * send-only or both); the group goes with its last member unless the SA
 * pre-created it. Lock held.
 */
static inline void
shm_sa_mcg_leave(struct shm_hdr *h, struct shm_port_ent *pt, uint32_t g,
		 bool full, bool send_only)
{
	uint64_t bit = 1ULL << g, was = (pt->sa_full | pt->sa_send_only) & bit;
	struct shm_sa_mcg *m = &h->sa_mcgs[g];

	if (full)
		shm_store(&pt->sa_full, pt->sa_full & ~bit);
	if (send_only)
		shm_store(&pt->sa_send_only, pt->sa_send_only & ~bit);
	if (!was || ((pt->sa_full | pt->sa_send_only) & bit))
		return;
	if (--m->nr_members == 0 && !m->persistent)
		shm_store(&m->in_use, 0);
}

/* A port going away leaves every SA group (lock held). */
static inline void
shm_sa_port_gone(struct shm_hdr *h, struct shm_port_ent *pt)
{
	uint32_t g;

	for (g = 0; g < SHM_MAX_MCGS; g++)
		shm_sa_mcg_leave(h, pt, g, true, true);
}
/* Drop the SA queries of a port being closed (its owner). */
void shm_sa_port_close(struct shm_port *p);

#endif /* SHM_SA_H */
