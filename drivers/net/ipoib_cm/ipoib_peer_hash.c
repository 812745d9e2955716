/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The peer table's indexes (by MAC, by hardware address, by LID and
 * QPN): see ipoib_peer_hash.h. Writers hold learn_lock; a table that has
 * to grow (or shed deleted slots) is rebuilt beside the old one and
 * published with one store, so a reader probes either the old table or
 * the new one, each complete.
 */

#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "ipoib_peer_hash.h"

void
ipoib_ph_init(struct ipoib_ph *h, struct ipoib_mem *acct,
	      ipoib_ph_hash_of_t hash_of, void *arg)
{
	memset(h, 0, sizeof(*h));
	h->acct = acct;
	h->hash_of = hash_of;
	h->arg = arg;
}

static void
ipoib_ph_tab_free(struct ipoib_ph *h, struct ipoib_ph_tab *t)
{
	ipoib_mem_free(h->acct, IPOIB_MEM_HASH, t);
}

void
ipoib_ph_fini(struct ipoib_ph *h)
{
	struct ipoib_ph_tab *t, *next;

	for (t = h->old; t != NULL; t = next) {
		next = t->next;
		ipoib_ph_tab_free(h, t);
	}
	if (h->tab != NULL)
		ipoib_ph_tab_free(h, h->tab);
	h->tab = h->old = NULL;
	h->used = h->tombs = 0;
}

/* Into a table nobody reads yet, or under learn_lock: the first free. */
static uint32_t
ipoib_ph_free_slot(const struct ipoib_ph_tab *t, uint32_t hash)
{
	uint32_t i = hash;

	for (;; i++) {
		uint32_t v = t->slot[i & t->mask];

		if (v == IPOIB_PH_EMPTY || v == IPOIB_PH_TOMB)
			return i & t->mask;
	}
}

/* Slots of a table built for entries: two per entry, IPOIB_PH_MIN. */
static uint32_t
ipoib_ph_size(uint32_t entries)
{
	return rte_align32pow2(RTE_MAX(2 * entries, (uint32_t)IPOIB_PH_MIN));
}

/*
 * A table of ipoib_ph_size(entries) slots holding every entry of the
 * current one, deleted slots dropped.
 */
static struct ipoib_ph_tab *
ipoib_ph_rebuild(struct ipoib_ph *h, uint32_t entries)
{
	uint32_t n = ipoib_ph_size(entries);
	const struct ipoib_ph_tab *o = h->tab;
	struct ipoib_ph_tab *t;
	uint32_t i;

	t = ipoib_mem_zmalloc(h->acct, IPOIB_MEM_HASH, "ipoib_peer_hash",
			      sizeof(*t) + (size_t)n * sizeof(t->slot[0]),
			      RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (t == NULL)
		return NULL;
	t->mask = n - 1;
	for (i = 0; o != NULL && i <= o->mask; i++) {
		uint32_t v = o->slot[i];

		if (v == IPOIB_PH_EMPTY || v == IPOIB_PH_TOMB)
			continue;
		t->slot[ipoib_ph_free_slot(t, h->hash_of(h->arg, v - 1))] = v;
	}
	return t;
}

/* Readers probe t from now on; the table it replaces waits for grace. */
static void
ipoib_ph_publish(struct ipoib_ph *h, struct ipoib_ph_tab *t,
		 struct rte_rcu_qsbr *qsbr)
{
	if (h->tab != NULL) {
		h->tab->token = rte_rcu_qsbr_start(qsbr);
		h->tab->next = h->old;
		/* ipoib_ph_settled() reads it from any thread */
		__atomic_store_n(&h->old, h->tab, __ATOMIC_RELAXED);
	}
	h->tombs = 0;
	/* complete before a reader finds it */
	__atomic_store_n(&h->tab, t, __ATOMIC_RELEASE);
}

int
ipoib_ph_add(struct ipoib_ph *h, uint32_t hash, uint32_t idx,
	     struct rte_rcu_qsbr *qsbr)
{
	struct ipoib_ph_tab *t = h->tab;
	uint32_t i;

	/*
	 * At most three quarters of the slots used or deleted: a probe for
	 * a key that is not there ends within a few slots (8.5 on average at
	 * the most, linear probing's 1/2 (1 + 1/(1 - 3/4)^2)).
	 */
	if (t == NULL || 4 * (h->used + h->tombs + 1) > 3 * (t->mask + 1)) {
		t = ipoib_ph_rebuild(h, h->used + 1);
		if (t == NULL)
			return -ENOMEM;
		ipoib_ph_publish(h, t, qsbr);
	}
	i = ipoib_ph_free_slot(t, hash);
	if (t->slot[i] == IPOIB_PH_TOMB)
		h->tombs--;
	/* the peer is complete before a reader finds it */
	__atomic_store_n(&t->slot[i], idx + 1, __ATOMIC_RELEASE);
	h->used++;
	return 0;
}

/* The slot holding idx on hash's probe path, or NULL. */
static uint32_t *
ipoib_ph_find(struct ipoib_ph *h, uint32_t hash, uint32_t idx)
{
	struct ipoib_ph_tab *t = h->tab;
	uint32_t i;

	if (t == NULL)
		return NULL;
	for (i = hash;; i++) {
		uint32_t *s = &t->slot[i & t->mask];

		if (*s == IPOIB_PH_EMPTY)
			return NULL;
		if (*s == idx + 1)
			return s;
	}
}

bool
ipoib_ph_del(struct ipoib_ph *h, uint32_t hash, uint32_t idx,
	     struct rte_rcu_qsbr *qsbr)
{
	uint32_t *s = ipoib_ph_find(h, hash, idx);
	struct ipoib_ph_tab *t;

	if (s == NULL)
		return false;
	/* a tombstone, not empty: keys probed past it stay found */
	__atomic_store_n(s, IPOIB_PH_TOMB, __ATOMIC_RELEASE);
	h->used--;
	h->tombs++;
	/*
	 * Under an eighth used: a table sized for what is left (half its
	 * size at most, so an add and a delete at a boundary do not rebuild
	 * each time). Without memory the big one stays: nothing is lost.
	 */
	if (h->tab->mask + 1 > IPOIB_PH_MIN &&
	    8 * h->used < h->tab->mask + 1) {
		t = ipoib_ph_rebuild(h, h->used);
		if (t != NULL)
			ipoib_ph_publish(h, t, qsbr);
	}
	return true;
}

bool
ipoib_ph_move(struct ipoib_ph *h, uint32_t hash, uint32_t idx,
	      uint32_t idx_new)
{
	uint32_t *s = ipoib_ph_find(h, hash, idx);

	if (s == NULL)
		return false;
	__atomic_store_n(s, idx_new + 1, __ATOMIC_RELEASE);
	return true;
}

void
ipoib_ph_reclaim(struct ipoib_ph *h,
		 bool (*grace_passed)(void *, uint64_t), void *garg)
{
	struct ipoib_ph_tab **pp = &h->old, *t;

	/* newest first: once one may be freed, all older ones may too */
	while ((t = *pp) != NULL && !grace_passed(garg, t->token))
		pp = &t->next;
	__atomic_store_n(pp, NULL, __ATOMIC_RELAXED);
	while (t != NULL) {
		struct ipoib_ph_tab *next = t->next;

		ipoib_ph_tab_free(h, t);
		t = next;
	}
}

bool
ipoib_ph_settled(const struct ipoib_ph *h)
{
	return __atomic_load_n(&h->old, __ATOMIC_RELAXED) == NULL;
}
