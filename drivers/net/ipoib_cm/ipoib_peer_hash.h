/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_PEER_HASH_H
#define IPOIB_PEER_HASH_H

/*
 * An index of the peer table by one key (ipoib_peer_hash.c): open
 * addressing with linear probing, a slot the peer's index + 1. The keys
 * are the peers' own fields, so a slot is 4 bytes and a table grows with
 * what it holds (at most three quarters of its slots used or deleted;
 * rebuilt at two slots per entry, and smaller once an eighth full).
 * Readers (any lcore, in an RCU read-side section: the bursts) take no
 * lock; writers hold the peer table's learn_lock. A
 * rebuilt table replaces the old one at once; the old one is freed by the
 * control thread once no burst can still read it (ipoib_ph_reclaim()).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_rcu_qsbr.h>

#include "ipoib_mem.h"

#define IPOIB_PH_EMPTY		0u
#define IPOIB_PH_TOMB		UINT32_MAX	/* deleted: probing goes on */
#define IPOIB_PH_MIN		64		/* slots of a new table */

struct ipoib_ph_tab {
	struct ipoib_ph_tab *next;	/* replaced, awaiting a grace period */
	uint64_t token;			/* RCU token taken when replaced */
	uint32_t mask;			/* slots - 1 */
	uint32_t slot[];		/* peer index + 1, EMPTY or TOMB */
};

/* The hash of the key of the peer at index idx (rebuilding). */
typedef uint32_t (*ipoib_ph_hash_of_t)(void *arg, uint32_t idx);

struct ipoib_ph {
	struct ipoib_ph_tab *tab;	/* readers: acquire */
	struct ipoib_ph_tab *old;	/* replaced tables, newest first */
	uint32_t used;			/* entries (writers) */
	uint32_t tombs;			/* deleted slots (writers) */
	ipoib_ph_hash_of_t hash_of;
	void *arg;
	struct ipoib_mem *acct;		/* charged to IPOIB_MEM_HASH */
};

/* The table readers probe now. */
static inline const struct ipoib_ph_tab *
ipoib_ph_tab(const struct ipoib_ph *h)
{
	return __atomic_load_n(&h->tab, __ATOMIC_ACQUIRE);
}

/*
 * Slot i (any value: wraps) of t: a peer index + 1, IPOIB_PH_TOMB, or
 * IPOIB_PH_EMPTY where the probe for a key ends. Acquire: the peer the
 * slot names was complete before the slot was stored.
 */
static inline uint32_t
ipoib_ph_slot(const struct ipoib_ph_tab *t, uint32_t i)
{
	return __atomic_load_n(&t->slot[i & t->mask], __ATOMIC_ACQUIRE);
}

/* An empty index: no table until the first add. */
void ipoib_ph_init(struct ipoib_ph *h, struct ipoib_mem *acct,
		   ipoib_ph_hash_of_t hash_of, void *arg);
/* Free every table, the replaced ones too: nothing may read them. */
void ipoib_ph_fini(struct ipoib_ph *h);
/*
 * Writers: index idx under hash (the caller knows the key is not
 * there). A table this replaces waits for a grace period of qsbr.
 * -ENOMEM: the table could not grow; nothing changed.
 */
int ipoib_ph_add(struct ipoib_ph *h, uint32_t hash, uint32_t idx,
		 struct rte_rcu_qsbr *qsbr);
/*
 * Writers: remove idx, indexed under hash. False: it was not there. A
 * table left mostly empty is rebuilt smaller (the old one waits for a
 * grace period of qsbr).
 */
bool ipoib_ph_del(struct ipoib_ph *h, uint32_t hash, uint32_t idx,
		  struct rte_rcu_qsbr *qsbr);
/* Writers: the slot of idx, indexed under hash, names idx_new now. */
bool ipoib_ph_move(struct ipoib_ph *h, uint32_t hash, uint32_t idx,
		   uint32_t idx_new);
/*
 * Control thread, writers excluded: free the replaced tables whose
 * token grace_passed() accepts.
 */
void ipoib_ph_reclaim(struct ipoib_ph *h, bool (*grace_passed)(void *,
		      uint64_t), void *garg);
/* Any thread: no replaced table waits to be freed. */
bool ipoib_ph_settled(const struct ipoib_ph *h);

#endif /* IPOIB_PEER_HASH_H */
