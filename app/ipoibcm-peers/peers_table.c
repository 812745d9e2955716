/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The emulator's tables: peers (a host's view of a remote UD QPN and GID),
 * address handles by GID, and connections. Vectors indexed by number, so
 * that growing them moves nothing anyone holds a pointer to for long.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "peers.h"

#define PEERS_MAX_PEERS		(1u << 22)
#define PEERS_MIN_BUCKETS	1024

static uint32_t
peers_gid_hash(const uint8_t *gid)
{
	uint64_t hi, lo;

	memcpy(&hi, gid, sizeof(hi));
	memcpy(&lo, gid + sizeof(hi), sizeof(lo));
	return (uint32_t)ipoib_mix64(hi ^ ipoib_mix64(lo));
}

static uint32_t
peers_key_hash(uint32_t host, uint32_t qpn, const uint8_t *gid)
{
	return (uint32_t)ipoib_mix64(((uint64_t)host << 32 | qpn) ^
				     peers_gid_hash(gid));
}

int
peers_tables_init(struct peers *P)
{
	P->nr_buckets = PEERS_MIN_BUCKETS;
	P->bucket = calloc(P->nr_buckets, sizeof(*P->bucket));
	P->cap_ahs = 64;
	P->ah_slot = calloc(P->cap_ahs, sizeof(*P->ah_slot));
	P->ahs = calloc(P->cap_ahs / 2, sizeof(*P->ahs));
	if (P->bucket == NULL || P->ah_slot == NULL || P->ahs == NULL)
		return -ENOMEM;
	return 0;
}

void
peers_tables_fini(struct peers *P)
{
	free(P->bucket);
	free(P->peers);
	free(P->ah_slot);
	free(P->ahs);
	free(P->conns);
}

/* ---- peers --------------------------------------------------------------- */

static int
peers_rehash(struct peers *P, uint32_t nb)
{
	uint32_t *b = calloc(nb, sizeof(*b)), i;

	if (b == NULL)
		return -ENOMEM;
	for (i = 0; i < P->nr_peers; i++) {
		struct peers_peer *pe = &P->peers[i];
		uint32_t k = peers_key_hash(pe->host, pe->qpn, pe->gid) &
			     (nb - 1);

		pe->next = b[k];
		b[k] = i + 1;
	}
	free(P->bucket);
	P->bucket = b;
	P->nr_buckets = nb;
	return 0;
}

uint32_t
peers_peer_find(const struct peers *P, uint32_t host, uint32_t qpn,
		const uint8_t *gid)
{
	const struct peers_peer *pe;
	uint32_t k, i;

	qpn &= IPOIB_QPN_MASK;
	k = peers_key_hash(host, qpn, gid) & (P->nr_buckets - 1);
	for (i = P->bucket[k]; i != 0; i = P->peers[i - 1].next) {
		pe = &P->peers[i - 1];
		if (pe->host == host && pe->qpn == qpn &&
		    memcmp(pe->gid, gid, IPOIB_GID_LEN) == 0)
			return i - 1;
	}
	return UINT32_MAX;
}

/* The peer (host, qpn, gid), made on first use; UINT32_MAX: no room. */
uint32_t
peers_peer_get(struct peers *P, uint32_t host, uint32_t qpn,
	       const uint8_t *gid)
{
	uint32_t k, i;
	struct peers_peer *pe;

	i = peers_peer_find(P, host, qpn, gid);
	if (i != UINT32_MAX)
		return i;
	qpn &= IPOIB_QPN_MASK;
	k = peers_key_hash(host, qpn, gid) & (P->nr_buckets - 1);
	if (P->nr_peers == PEERS_MAX_PEERS)
		return UINT32_MAX;
	if (P->nr_peers == P->cap_peers) {
		uint32_t cap = P->cap_peers ? P->cap_peers * 2 : 1024;
		void *n = realloc(P->peers, (size_t)cap * sizeof(*P->peers));

		if (n == NULL)
			return UINT32_MAX;
		P->peers = n;
		P->cap_peers = cap;
	}
	if (P->nr_peers >= P->nr_buckets) {
		if (peers_rehash(P, P->nr_buckets * 2) < 0)
			return UINT32_MAX;
		k = peers_key_hash(host, qpn, gid) & (P->nr_buckets - 1);
	}
	i = P->nr_peers++;
	pe = &P->peers[i];
	memset(pe, 0, sizeof(*pe));
	pe->host = host;
	pe->qpn = qpn;
	memcpy(pe->gid, gid, IPOIB_GID_LEN);
	pe->next = P->bucket[k];
	P->bucket[k] = i + 1;
	return i;
}

/* The flags byte of a hardware address the peer sent (ARP, ND, CM). */
void
peers_peer_set_flags(struct peers *P, uint32_t peer, uint8_t flags)
{
	P->peers[peer].flags = flags;
	P->peers[peer].flags_known = true;
	P->peers[peer].flags_ns = ipoib_now_ns();
}

/* ---- address handles ----------------------------------------------------- */

static int
peers_ah_grow(struct peers *P)
{
	uint32_t cap = P->cap_ahs * 2, i;
	uint32_t *slot = calloc(cap, sizeof(*slot));
	struct peers_ah *ahs = realloc(P->ahs, cap / 2 * sizeof(*ahs));

	if (slot == NULL || ahs == NULL) {
		free(slot);
		if (ahs != NULL)
			P->ahs = ahs;
		return -ENOMEM;
	}
	P->ahs = ahs;
	for (i = 0; i < P->nr_ahs; i++) {
		uint32_t k = peers_gid_hash(ahs[i].gid) & (cap - 1);

		while (slot[k] != 0)
			k = (k + 1) & (cap - 1);
		slot[k] = i + 1;
	}
	free(P->ah_slot);
	P->ah_slot = slot;
	P->cap_ahs = cap;
	return 0;
}

/* A unicast address handle by GID: resolved (a directory scan) once. */
const struct shm_ah *
peers_ah_get(struct peers *P, const uint8_t *gid)
{
	uint32_t k = peers_gid_hash(gid) & (P->cap_ahs - 1);
	struct peers_ah *a;

	for (; P->ah_slot[k] != 0; k = (k + 1) & (P->cap_ahs - 1)) {
		a = &P->ahs[P->ah_slot[k] - 1];
		if (memcmp(a->gid, gid, IPOIB_GID_LEN) == 0)
			return &a->ah;
	}
	if (P->nr_ahs * 2 + 2 > P->cap_ahs) {
		if (peers_ah_grow(P) < 0)
			return NULL;
		return peers_ah_get(P, gid);
	}
	a = &P->ahs[P->nr_ahs];
	if (shm_ah_resolve(P->f, gid, 0, &a->ah) < 0)
		return NULL;	/* no such port (now): not cached */
	/* Linux sends unicast UD without a GRH (peers_persona.c) */
	a->ah.global = P->conf.persona != PEERS_PERSONA_LINUX;
	memcpy(a->gid, gid, IPOIB_GID_LEN);
	P->ah_slot[k] = ++P->nr_ahs;
	return &a->ah;
}

/* ---- connections --------------------------------------------------------- */

uint32_t
peers_conn_ctx(const struct peers *P, uint32_t idx)
{
	return PEERS_CTX_RC |
	       (uint32_t)P->conns[idx].gen << PEERS_CTX_GEN_SHIFT | idx;
}

/* The live connection a qp_context (or CM context) names, or NULL. */
struct peers_conn *
peers_conn_from_ctx(struct peers *P, uint32_t ctx)
{
	uint32_t idx = ctx & PEERS_CTX_IDX_MASK;
	struct peers_conn *c;

	if (!(ctx & PEERS_CTX_RC) || idx >= P->nr_conns)
		return NULL;
	c = &P->conns[idx];
	if (c->state == PEERS_CONN_FREE ||
	    c->gen != ((ctx >> PEERS_CTX_GEN_SHIFT) & PEERS_CTX_GEN_MASK))
		return NULL;
	return c;
}

/* A free connection slot (state still FREE), or UINT32_MAX. */
uint32_t
peers_conn_alloc(struct peers *P)
{
	uint32_t idx;

	if (P->free_conn != 0) {
		idx = P->free_conn - 1;
		P->free_conn = P->conns[idx].next_free;
		return idx;
	}
	if (P->nr_conns > PEERS_CTX_IDX_MASK)
		return UINT32_MAX;
	if (P->nr_conns == P->cap_conns) {
		uint32_t cap = P->cap_conns ? P->cap_conns * 2 : 256;
		void *n = realloc(P->conns, (size_t)cap * sizeof(*P->conns));

		if (n == NULL)
			return UINT32_MAX;
		P->conns = n;
		P->cap_conns = cap;
	}
	idx = P->nr_conns++;
	memset(&P->conns[idx], 0, sizeof(P->conns[idx]));
	return idx;
}

/* Back to the free list; a new generation makes old contexts miss. */
void
peers_conn_free(struct peers *P, uint32_t idx)
{
	struct peers_conn *c = &P->conns[idx];

	c->state = PEERS_CONN_FREE;
	c->qp = NULL;
	c->id = NULL;
	c->gen = (uint8_t)(c->gen + 1);
	c->next_free = P->free_conn;
	P->free_conn = idx + 1;
}
