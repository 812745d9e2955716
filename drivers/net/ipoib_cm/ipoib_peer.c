/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The peer table: every remote IPoIB interface the port has heard of,
 * found by its emulated MAC (transmit) or its hardware address (receive).
 * Readers are the rx and tx bursts, lock-free (ipoib_peer_hash.h);
 * writers (learning on any lcore, removal on the control thread) take
 * learn_lock. Peers are allocated a chunk at a time as they are learned
 * (an lcore that learns the first peer of a chunk allocates it). Removed
 * peers are reused after an RCU grace period (ipoib_rcu.h): it ends once
 * every burst that was running when the peer was removed has left.
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "ipoib_cm.h"
#include "ipoib_log.h"
#include "ipoib_peer.h"
#include "ipoib_tx_held.h"

/* Hashes of the keys, from aligned copies (a MAC in a frame sits at any
 * even address): CRC32 of 64-bit words.
 */
static inline uint64_t
ipoib_mac_key(const struct rte_ether_addr *mac)
{
	uint64_t k = 0;

	memcpy(&k, mac->addr_bytes, RTE_ETHER_ADDR_LEN);
	return k;
}

static inline uint32_t
ipoib_mac_hash(uint64_t key)
{
	return rte_hash_crc_8byte(key, 0);
}

/* QPN and GID: bytes 1-19 of the hardware address (flags left out). */
static inline uint32_t
ipoib_hw_hash(const struct ipoib_hwaddr *hw)
{
	uint64_t w[3] = { 0, 0, 0 };

	memcpy((uint8_t *)w + 1, &hw->bytes[1], IPOIB_HWADDR_LEN - 1);
	return rte_hash_crc_8byte(w[2],
				  rte_hash_crc_8byte(w[1],
						     rte_hash_crc_8byte(w[0],
									0)));
}

static inline bool
ipoib_hw_match(const struct ipoib_peer *p, const struct ipoib_hwaddr *hw)
{
	return memcmp(&p->hw.bytes[1], &hw->bytes[1],
		      IPOIB_HWADDR_LEN - 1) == 0;
}

/* The by_lid key of a GRH-less UD sender: (SLID, source QPN). */
static inline uint64_t
ipoib_lid_key(uint16_t lid, uint32_t qpn)
{
	return ((uint64_t)lid << 32) | (qpn & IPOIB_QPN_MASK);
}

static inline uint32_t
ipoib_lid_hash(uint64_t key)
{
	return rte_hash_crc_8byte(key, 0);
}

/* Rebuilding an index (learn_lock held): the key hash of peer idx. */
static uint32_t
ipoib_peer_mac_hash_of(void *arg, uint32_t idx)
{
	return ipoib_mac_hash(ipoib_mac_key(&ipoib_peer_at(arg, idx)->mac));
}

static uint32_t
ipoib_peer_hw_hash_of(void *arg, uint32_t idx)
{
	return ipoib_hw_hash(&ipoib_peer_at(arg, idx)->hw);
}

static uint32_t
ipoib_peer_lid_hash_of(void *arg, uint32_t idx)
{
	const struct ipoib_peer *p = ipoib_peer_at(arg, idx);

	return ipoib_lid_hash(ipoib_lid_key(p->lid, p->qpn));
}

int
ipoib_peers_init(struct ipoib_priv *priv, const char *name)
{
	uint32_t n = RTE_MAX((uint32_t)IPOIB_PEERS_MIN,
			     IPOIB_PEERS_PER_CONN * priv->cfg.max_conns);
	struct ipoib_peers *pt = &priv->pt;
	char nm[RTE_RING_NAMESIZE];
	size_t qsz;

	/* the datapath's per-peer counters are per queue, not in it */
	RTE_BUILD_BUG_ON(sizeof(struct ipoib_peer) > 2 * RTE_CACHE_LINE_SIZE);
	n = RTE_ALIGN_CEIL(n, IPOIB_PEER_CHUNK);
	pt->nr_max = n;
	pthread_mutex_init(&pt->learn_lock, NULL);
	ipoib_ph_init(&pt->by_mac, &priv->acct, ipoib_peer_mac_hash_of, pt);
	ipoib_ph_init(&pt->by_hw, &priv->acct, ipoib_peer_hw_hash_of, pt);
	ipoib_ph_init(&pt->by_lid, &priv->acct, ipoib_peer_lid_hash_of, pt);
	qsz = rte_rcu_qsbr_get_memsize(IPOIB_QSBR_THREADS);
	pt->qsbr = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_PEERS, "ipoib_qsbr",
				     qsz, RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	pt->chunk = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_PEERS,
				      "ipoib_peer_chunks",
				      (n / IPOIB_PEER_CHUNK) *
				      sizeof(*pt->chunk), 0, SOCKET_ID_ANY);
	if (pt->qsbr == NULL || pt->chunk == NULL)
		goto fail;
	if (rte_rcu_qsbr_init(pt->qsbr, IPOIB_QSBR_THREADS) != 0)
		goto fail;
	ipoib_rcu_init(&pt->rcu);
	snprintf(nm, sizeof(nm), "ipr_%u", priv->eth_dev->data->port_id);
	pt->resolve = ipoib_ring_create(&priv->acct, IPOIB_MEM_RINGS, nm,
					sizeof(void *), IPOIB_RESOLVE_RING,
					RING_F_SC_DEQ);
	if (pt->resolve == NULL)
		goto fail;
	return 0;
fail:
	IPOIB_LOG(ERR, "%s: cannot create the peer table of %u entries: %s",
		  name, n, rte_strerror(rte_errno));
	ipoib_peers_fini(priv);
	return -ENOMEM;
}

void
ipoib_peers_fini(struct ipoib_priv *priv)
{
	struct ipoib_peers *pt = &priv->pt;
	uint32_t i, k, c;

	for (k = 0; k < IPOIB_PEER_CTR_KINDS; k++)
		for (i = 0; i < IPOIB_CTR_QUEUES; i++) {
			for (c = 0; pt->ctr[k][i] != NULL &&
			     c < pt->nr_alloc / IPOIB_PEER_CHUNK; c++)
				ipoib_mem_free(&priv->acct, IPOIB_MEM_PEERS,
					       pt->ctr[k][i][c]);
			ipoib_mem_free(&priv->acct, IPOIB_MEM_PEERS,
				       pt->ctr[k][i]);
		}
	for (i = 0; i < pt->nr_alloc; i++) {
		struct ipoib_peer *p = ipoib_peer_at(pt, i);

		if (p->ah != NULL)
			priv->ops->ah_destroy(p->ah);
		p->ah = NULL;
	}
	for (c = 0; c < pt->nr_alloc / IPOIB_PEER_CHUNK; c++)
		ipoib_mem_free(&priv->acct, IPOIB_MEM_PEERS, pt->chunk[c]);
	ipoib_ph_fini(&pt->by_mac);
	ipoib_ph_fini(&pt->by_hw);
	ipoib_ph_fini(&pt->by_lid);
	ipoib_ring_free(&priv->acct, IPOIB_MEM_RINGS, pt->resolve);
	ipoib_mem_free(&priv->acct, IPOIB_MEM_PEERS, pt->chunk);
	ipoib_mem_free(&priv->acct, IPOIB_MEM_PEERS, pt->qsbr);
	pthread_mutex_destroy(&pt->learn_lock);
	memset(pt, 0, sizeof(*pt));
}

/* learn_lock held: one chunk of IPOIB_PEER_CHUNK counters. */
static struct ipoib_peer_ctr *
ipoib_peer_ctr_chunk(struct ipoib_priv *priv)
{
	return ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_PEERS,
				 "ipoib_peer_ctr",
				 IPOIB_PEER_CHUNK *
				 sizeof(struct ipoib_peer_ctr),
				 RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
}

struct ipoib_peer_ctr *const *
ipoib_peer_ctr_get(struct ipoib_priv *priv, enum ipoib_peer_ctr_kind k,
		   uint16_t q)
{
	struct ipoib_peers *pt = &priv->pt;
	struct ipoib_peer_ctr **d;
	uint32_t c;

	pthread_mutex_lock(&pt->learn_lock);
	d = pt->ctr[k][q];
	if (d != NULL)
		goto out;
	d = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_PEERS, "ipoib_peer_ctrs",
			      (pt->nr_max / IPOIB_PEER_CHUNK) * sizeof(*d), 0,
			      SOCKET_ID_ANY);
	for (c = 0; d != NULL && c < pt->nr_alloc / IPOIB_PEER_CHUNK; c++) {
		d[c] = ipoib_peer_ctr_chunk(priv);
		if (d[c] == NULL) {
			while (c-- > 0)
				ipoib_mem_free(&priv->acct, IPOIB_MEM_PEERS,
					       d[c]);
			ipoib_mem_free(&priv->acct, IPOIB_MEM_PEERS, d);
			d = NULL;
		}
	}
	/* complete (zeroed) before a reader sums it */
	if (d != NULL)
		__atomic_store_n(&pt->ctr[k][q], d, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&pt->learn_lock);
	return d;
}

/* Queue q's counter of kind k for peer, or NULL: the queue has none. */
static struct ipoib_peer_ctr *
ipoib_peer_ctr_of(const struct ipoib_peers *pt, uint32_t k, uint32_t q,
		  const struct ipoib_peer *peer)
{
	struct ipoib_peer_ctr *const *d = __atomic_load_n(&pt->ctr[k][q],
							  __ATOMIC_ACQUIRE);

	/* the peer's chunk of them was made before the peer could be seen */
	return d != NULL ? ipoib_peer_ctr_at(d, peer->index) : NULL;
}

void
ipoib_peer_counts(const struct ipoib_peers *pt, const struct ipoib_peer *peer,
		  struct ipoib_peer_ctr sum[IPOIB_PEER_CTR_KINDS])
{
	const struct ipoib_peer_ctr *c;
	uint32_t k, q;

	for (k = 0; k < IPOIB_PEER_CTR_KINDS; k++) {
		sum[k].pkts = sum[k].bytes = 0;
		for (q = 0; q < IPOIB_CTR_QUEUES; q++) {
			c = ipoib_peer_ctr_of(pt, k, q, peer);
			if (c == NULL)
				continue;
			sum[k].pkts += __atomic_load_n(&c->pkts,
						       __ATOMIC_RELAXED);
			sum[k].bytes += __atomic_load_n(&c->bytes,
							__ATOMIC_RELAXED);
		}
	}
}

/*
 * A new peer in a reused slot counts from zero. No queue writes the
 * slot's counters now: it was freed after a grace period.
 */
static void
ipoib_peer_ctr_clear(struct ipoib_peers *pt, const struct ipoib_peer *peer)
{
	struct ipoib_peer_ctr *c;
	uint32_t k, q;

	for (k = 0; k < IPOIB_PEER_CTR_KINDS; k++)
		for (q = 0; q < IPOIB_CTR_QUEUES; q++) {
			c = ipoib_peer_ctr_of(pt, k, q, peer);
			if (c == NULL)
				continue;
			__atomic_store_n(&c->pkts, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&c->bytes, 0, __ATOMIC_RELAXED);
		}
}

/*
 * Probe an index from the key's hash until an empty slot: a live peer
 * match() accepts, or NULL. A peer removed but not yet reused may still
 * be named by a slot of a table the reader loaded: it is not live.
 */
#define IPOIB_PH_LOOKUP(pt, ph, hash, p, match)				\
	do {								\
		const struct ipoib_ph_tab *t_ = ipoib_ph_tab(ph);	\
		uint32_t i_, v_;					\
									\
		(p) = NULL;						\
		if (t_ == NULL)						\
			break;						\
		for (i_ = (hash);; i_++) {				\
			v_ = ipoib_ph_slot(t_, i_);			\
			if (v_ == IPOIB_PH_EMPTY)			\
				break;					\
			if (v_ == IPOIB_PH_TOMB)			\
				continue;				\
			(p) = ipoib_peer_at(pt, v_ - 1);		\
			if (ipoib_peer_live(p) && (match))		\
				break;					\
			(p) = NULL;					\
		}							\
	} while (0)

struct ipoib_peer *
ipoib_peer_by_mac(struct ipoib_priv *priv, const struct rte_ether_addr *mac)
{
	uint64_t key = ipoib_mac_key(mac);
	struct ipoib_peer *p;

	IPOIB_PH_LOOKUP(&priv->pt, &priv->pt.by_mac, ipoib_mac_hash(key), p,
			ipoib_mac_key(&p->mac) == key);
	return p;
}

struct ipoib_peer *
ipoib_peer_by_hw(struct ipoib_priv *priv, const struct ipoib_hwaddr *hw)
{
	struct ipoib_peer *p;

	IPOIB_PH_LOOKUP(&priv->pt, &priv->pt.by_hw, ipoib_hw_hash(hw), p,
			ipoib_hw_match(p, hw));
	return p;
}

struct ipoib_peer *
ipoib_peer_by_lid(struct ipoib_priv *priv, uint16_t lid, uint32_t qpn)
{
	uint64_t key = ipoib_lid_key(lid, qpn);
	struct ipoib_peer *p;

	IPOIB_PH_LOOKUP(&priv->pt, &priv->pt.by_lid, ipoib_lid_hash(key), p,
			ipoib_lid_key(__atomic_load_n(&p->lid,
						      __ATOMIC_RELAXED),
				      p->qpn) == key);
	return p;
}

/* Under learn_lock: the peer's (LID, QPN) no longer names it. */
static void
ipoib_peer_unbind_lid(struct ipoib_peers *pt, struct ipoib_peer *peer)
{
	/* peer->lid is stored by threads that do not hold learn_lock */
	uint16_t lid = __atomic_load_n(&peer->lid, __ATOMIC_RELAXED);

	if (lid == 0)
		return;
	ipoib_ph_del(&pt->by_lid, ipoib_lid_hash(ipoib_lid_key(lid, peer->qpn)),
		     peer->index, pt->qsbr);
	__atomic_store_n(&peer->lid, 0, __ATOMIC_RELAXED);
}

/*
 * Under learn_lock: bind (lid, peer's QPN) to the peer. A LID and QPN
 * another peer had (its host came back with another GID) move over: the
 * other peer loses them, so the datapath's cache of the last sender
 * cannot name it for them.
 */
static void
ipoib_peer_bind_lid(struct ipoib_priv *priv, struct ipoib_peer *peer,
		    uint16_t lid)
{
	struct ipoib_peers *pt = &priv->pt;
	uint64_t key = ipoib_lid_key(lid, peer->qpn);
	uint32_t hash = ipoib_lid_hash(key);
	struct ipoib_peer *other;

	ipoib_peer_unbind_lid(pt, peer);
	other = ipoib_peer_by_lid(priv, lid, peer->qpn);
	/* the key is the peer's before a reader finds it there */
	__atomic_store_n(&peer->lid, lid, __ATOMIC_RELAXED);
	if (other != NULL) {
		ipoib_ph_move(&pt->by_lid, hash, other->index, peer->index);
		__atomic_store_n(&other->lid, 0, __ATOMIC_RELAXED);
	} else if (ipoib_ph_add(&pt->by_lid, hash, peer->index,
				pt->qsbr) != 0) {
		__atomic_store_n(&peer->lid, 0, __ATOMIC_RELAXED);
		__atomic_fetch_add(&pt->learn_fail, 1, __ATOMIC_RELAXED);
	}
}

/* ARP/ND rewriting: the hardware address behind an emulated MAC. */
int
ipoib_peer_resolve(void *arg, const struct rte_ether_addr *mac,
		   struct ipoib_hwaddr *hw)
{
	struct ipoib_peer *peer = ipoib_peer_by_mac(arg, mac);

	if (peer == NULL)
		return -ENOENT;
	*hw = peer->hw;
	return 0;
}

/* A known peer told us its flags (ARP/ND): connected mode may appear. */
static void
ipoib_peer_update_flags(struct ipoib_peer *peer,
			const struct ipoib_hwaddr *hw)
{
	uint32_t st = IPOIB_PEER_UD;

	/* atomic: the control thread reads it (ipoib_peer_ah()) */
	if (hw->bytes[0] == 0 ||
	    hw->bytes[0] == __atomic_load_n(&peer->hw.bytes[0],
					    __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&peer->hw.bytes[0], hw->bytes[0], __ATOMIC_RELAXED);
	if (hw->bytes[0] & IPOIB_HWADDR_F_RC)
		__atomic_compare_exchange_n(&peer->state, &st, IPOIB_PEER_NEW,
					    false, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED);
}

/* Bind the peer's MAC; a MAC already bound to another peer is a collision,
 * counted and left as it is: two peers are never merged.
 */
static void
ipoib_peer_bind_mac(struct ipoib_priv *priv, struct ipoib_peer *peer)
{
	struct ipoib_peers *pt = &priv->pt;
	struct ipoib_peer *other = ipoib_peer_by_mac(priv, &peer->mac);

	if (other != NULL) {
		other->collided = 1;
		peer->collided = 1;
		__atomic_fetch_add(&pt->collisions, 1, __ATOMIC_RELAXED);
		IPOIB_LOG_RATELIMIT(WARNING, "peers %u and %u derive the same "
				    "MAC " RTE_ETHER_ADDR_PRT_FMT
				    "; the second is reachable on receive only",
				    other->index, peer->index,
				    RTE_ETHER_ADDR_BYTES(&peer->mac));
		return;
	}
	/* no room: reachable on receive only, like a collision */
	if (ipoib_ph_add(&pt->by_mac, ipoib_mac_hash(ipoib_mac_key(&peer->mac)),
			 peer->index, pt->qsbr) != 0)
		__atomic_fetch_add(&pt->learn_fail, 1, __ATOMIC_RELAXED);
}

/*
 * A UD source does not tell its flags (ARP does): ask the subnet directory
 * where the transport has one, so that connected mode is known at once.
 */
static uint8_t
ipoib_peer_flags(struct ipoib_priv *priv, const struct ipoib_hwaddr *hw,
		 const struct rte_ether_addr *mac)
{
	struct ipoib_hwaddr dir;

	if (hw->bytes[0] != 0 || priv->ops->test == NULL ||
	    priv->ops->test->addr_resolve == NULL ||
	    priv->ops->test->addr_resolve(priv->hca, mac->addr_bytes,
					  dir.bytes) < 0 ||
	    !ipoib_hwaddr_eq_qpn_gid(&dir, hw))
		return hw->bytes[0];
	return dir.bytes[0];
}

/* The queue link of peer idx. */
static inline uint32_t *
ipoib_peer_next_free(struct ipoib_peers *pt, uint32_t idx)
{
	struct ipoib_peer_chunk *ch =
		__atomic_load_n(&pt->chunk[idx >> IPOIB_PEER_CHUNK_SHIFT],
				__ATOMIC_ACQUIRE);

	return &ch->next_free[idx & IPOIB_PEER_CHUNK_MASK];
}

/* Peer idx last in q. */
static void
ipoib_peer_fifo_push(struct ipoib_peers *pt, struct ipoib_peer_fifo *q,
		     uint32_t idx)
{
	*ipoib_peer_next_free(pt, idx) = 0;
	if (q->tail != 0)
		*ipoib_peer_next_free(pt, q->tail - 1) = idx + 1;
	else
		q->head = idx + 1;
	q->tail = idx + 1;
}

/* q's first peer, taken off it (q not empty). */
static struct ipoib_peer *
ipoib_peer_fifo_pop(struct ipoib_peers *pt, struct ipoib_peer_fifo *q)
{
	uint32_t idx = q->head - 1;

	q->head = *ipoib_peer_next_free(pt, idx);
	if (q->head == 0)
		q->tail = 0;
	return ipoib_peer_at(pt, idx);
}

/*
 * Under learn_lock: one more chunk of peers, with a chunk of counters for
 * each queue that has them, its peers put on the free list. Any thread:
 * the measured allocation serialises with every other (ipoib_mem.c).
 */
static int
ipoib_peers_grow(struct ipoib_priv *priv)
{
	struct ipoib_peers *pt = &priv->pt;
	uint32_t c = pt->nr_alloc / IPOIB_PEER_CHUNK, k, q, i;
	struct ipoib_peer_ctr *ctr[IPOIB_PEER_CTR_KINDS][IPOIB_CTR_QUEUES];
	struct ipoib_peer_chunk *ch;

	if (pt->nr_alloc >= pt->nr_max)
		return -ENOSPC;
	memset(ctr, 0, sizeof(ctr));
	ch = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_PEERS, "ipoib_peer_chunk",
			       sizeof(*ch), RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (ch == NULL)
		return -ENOMEM;
	for (k = 0; k < IPOIB_PEER_CTR_KINDS; k++)
		for (q = 0; q < IPOIB_CTR_QUEUES; q++) {
			if (pt->ctr[k][q] == NULL)
				continue;
			ctr[k][q] = ipoib_peer_ctr_chunk(priv);
			if (ctr[k][q] == NULL)
				goto fail;
		}
	for (k = 0; k < IPOIB_PEER_CTR_KINDS; k++)
		for (q = 0; q < IPOIB_CTR_QUEUES; q++)
			if (pt->ctr[k][q] != NULL)
				__atomic_store_n(&pt->ctr[k][q][c], ctr[k][q],
						 __ATOMIC_RELEASE);
	for (i = 0; i < IPOIB_PEER_CHUNK; i++)
		ch->peer[i].index = pt->nr_alloc + i;
	/* complete before any thread reaches it (ipoib_peer_at()) */
	__atomic_store_n(&pt->chunk[c], ch, __ATOMIC_RELEASE);
	/* the free list takes them in order */
	for (i = 0; i < IPOIB_PEER_CHUNK; i++)
		ipoib_peer_fifo_push(pt, &pt->free, pt->nr_alloc + i);
	/* scans of other threads may look at the chunk now */
	__atomic_store_n(&pt->nr_alloc, pt->nr_alloc + IPOIB_PEER_CHUNK,
			 __ATOMIC_RELEASE);
	return 0;
fail:
	for (k = 0; k < IPOIB_PEER_CTR_KINDS; k++)
		for (q = 0; q < IPOIB_CTR_QUEUES; q++)
			ipoib_mem_free(&priv->acct, IPOIB_MEM_PEERS,
				       ctr[k][q]);
	ipoib_mem_free(&priv->acct, IPOIB_MEM_PEERS, ch);
	return -ENOMEM;
}

/* Under learn_lock: a free peer, the table grown if need be, or NULL. */
static struct ipoib_peer *
ipoib_peer_take(struct ipoib_priv *priv)
{
	struct ipoib_peers *pt = &priv->pt;

	if (pt->free.head == 0 && ipoib_peers_grow(priv) != 0)
		return NULL;
	__atomic_store_n(&pt->nr_used, pt->nr_used + 1, __ATOMIC_RELAXED);
	return ipoib_peer_fifo_pop(pt, &pt->free);
}

/*
 * Under learn_lock: the peer is free again, reused after every peer freed
 * before it. A queue's cache of its last peer (ipoib_tx_peer(),
 * ipoib_rx_ud_source()) outlives its bursts and compares that peer's key
 * without a lock; a reuse rewrites the key: oldest first, as the ring of
 * free peers did before the table grew on demand, puts every other free
 * peer between a removal and its reuse.
 */
static void
ipoib_peer_put(struct ipoib_peers *pt, struct ipoib_peer *peer)
{
	ipoib_peer_fifo_push(pt, &pt->free, peer->index);
	__atomic_store_n(&pt->nr_used, pt->nr_used - 1, __ATOMIC_RELAXED);
}

/*
 * Any thread, under learn_lock: publish a new peer. Nothing here waits
 * on the subnet: its address handle (a path query on verbs) and the
 * directory's flags are the control thread's, through pt->resolve.
 */
static struct ipoib_peer *
ipoib_peer_new(struct ipoib_priv *priv, const struct ipoib_hwaddr *hw)
{
	struct ipoib_peers *pt = &priv->pt;
	struct ipoib_peer *peer = ipoib_peer_take(priv);

	if (peer == NULL)
		return NULL;
	peer->hw = *hw;
	peer->qpn = ipoib_hwaddr_qpn(hw);
	ipoib_mac_from_hwaddr(&peer->mac, hw);
	__atomic_store_n(&peer->ah, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&peer->held, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&peer->held_late, 0, __ATOMIC_RELAXED);
	peer->tx = NULL;
	__atomic_store_n(&peer->rx, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&peer->adv_ud, 0, __ATOMIC_RELAXED);
	peer->adv_ns = 0;
	__atomic_store_n(&peer->dead, 0, __ATOMIC_RELAXED);
	peer->collided = 0;
	__atomic_store_n(&peer->lid, 0, __ATOMIC_RELAXED);
	ipoib_peer_ctr_clear(pt, peer);
	peer->next_retry_ns = 0;
	peer->backoff_ms = 0;
	peer->last_active_ns = ipoib_now_ns();
	peer->sample_pkts = 0;
	peer->rate = 0;
	peer->sid_try = 0;
	__atomic_store_n(&peer->state, (peer->hw.bytes[0] & IPOIB_HWADDR_F_RC) ?
			 IPOIB_PEER_NEW : IPOIB_PEER_UD, __ATOMIC_RELAXED);
	/* complete: scans and lookups of other threads may take it now */
	__atomic_store_n(&peer->live, 1, __ATOMIC_RELEASE);
	/* the entry is complete before readers can find it */
	if (ipoib_ph_add(&pt->by_hw, ipoib_hw_hash(hw), peer->index,
			 pt->qsbr) != 0) {
		/* nobody could find it: free at once */
		__atomic_store_n(&peer->live, 0, __ATOMIC_RELEASE);
		ipoib_peer_put(pt, peer);
		return NULL;
	}
	ipoib_peer_bind_mac(priv, peer);
	__atomic_fetch_add(&pt->learned, 1, __ATOMIC_RELAXED);
	if (rte_ring_enqueue(pt->resolve,
			     (void *)(uintptr_t)peer->index) != 0)
		__atomic_store_n(&pt->resolve_lost, 1, __ATOMIC_RELAXED);
	priv->ops->ctrl_wake(priv->hca);
	return peer;
}

struct ipoib_hca_ah *
ipoib_peer_ah(struct ipoib_priv *priv, struct ipoib_peer *peer)
{
	struct ipoib_ah_attr aa = { .dlid = 0 };
	struct ipoib_hca_ah *ah;
	struct ipoib_hwaddr hw;
	int ret;

	if (!ipoib_peer_live(peer))	/* acquire: the entry is complete */
		return NULL;
	ah = __atomic_load_n(&peer->ah, __ATOMIC_RELAXED);
	if (ah != NULL)
		return ah;
	memcpy(aa.dgid, ipoib_hwaddr_gid(&peer->hw), IPOIB_GID_LEN);
	ret = ipoib_path_get(priv, peer, &aa);
	if (ret == 0)
		return NULL;	/* the SA is asked: the answer makes it */
	ah = ret > 0 ? priv->ops->ah_create(priv->hca, &aa) : NULL;
	if (ah == NULL) {
		/* no path: the lcores drop its frames a while, not hold them */
		ipoib_neg_set(priv, &peer->mac);
		__atomic_fetch_add(&priv->pt.learn_fail, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	/*
	 * A UD source (no flags known): ask the directory whether it offers
	 * connected mode. Only the state says so; the flags byte stays the
	 * lcores' (ARP/ND), which write it.
	 */
	if (__atomic_load_n(&peer->hw.bytes[0], __ATOMIC_RELAXED) == 0) {
		uint32_t st = IPOIB_PEER_UD;

		ipoib_hwaddr_set(&hw, 0, peer->qpn,
				 ipoib_hwaddr_gid(&peer->hw));
		if (ipoib_peer_flags(priv, &hw, &peer->mac) &
		    IPOIB_HWADDR_F_RC)
			__atomic_compare_exchange_n(&peer->state, &st,
						    IPOIB_PEER_NEW, false,
						    __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED);
	}
	/* pairs with the tx queues' acquire: the handle is complete */
	__atomic_store_n(&peer->ah, ah, __ATOMIC_RELEASE);
	return ah;
}

bool
ipoib_peers_resolve(struct ipoib_priv *priv)
{
	struct ipoib_peers *pt = &priv->pt;
	void *idx[32];
	unsigned int n, i;
	bool work = false;

	do {
		n = rte_ring_dequeue_burst(pt->resolve, idx, RTE_DIM(idx),
					   NULL);
		for (i = 0; i < n; i++)
			ipoib_peer_ah(priv,
				      ipoib_peer_at(pt, (uintptr_t)idx[i]));
		work |= n > 0;
	} while (n == RTE_DIM(idx));
	if (__atomic_exchange_n(&pt->resolve_lost, 0, __ATOMIC_RELAXED)) {
		/* after the reset: a peer learned meanwhile is seen too */
		for (i = 0; i < ipoib_peers_nr(pt); i++)
			ipoib_peer_ah(priv, ipoib_peer_at(pt, i));
		work = true;
	}
	return work;
}

/*
 * The peer with hardware address hw, created if new (any lcore). Flags in
 * hw (from ARP/ND) update those known; a zero flags byte (UD source) does
 * not.
 */
struct ipoib_peer *
ipoib_peer_learn(struct ipoib_priv *priv, const struct ipoib_hwaddr *hw)
{
	struct ipoib_peer *peer = ipoib_peer_by_hw(priv, hw);

	if (peer != NULL) {
		ipoib_peer_update_flags(peer, hw);
		return peer;
	}
	pthread_mutex_lock(&priv->pt.learn_lock);
	peer = ipoib_peer_by_hw(priv, hw);	/* another lcore may have */
	if (peer == NULL)
		peer = ipoib_peer_new(priv, hw);
	pthread_mutex_unlock(&priv->pt.learn_lock);
	if (peer == NULL)
		__atomic_fetch_add(&priv->pt.learn_fail, 1, __ATOMIC_RELAXED);
	return peer;
}

struct ipoib_peer *
ipoib_peer_learn_at(struct ipoib_priv *priv, const struct ipoib_hwaddr *hw,
		    uint16_t lid, uint32_t qpn)
{
	struct ipoib_peer *peer = ipoib_peer_learn(priv, hw);

	if (peer == NULL || lid == 0 || ipoib_hwaddr_qpn(hw) != qpn ||
	    __atomic_load_n(&peer->lid, __ATOMIC_RELAXED) == lid)
		return peer;
	pthread_mutex_lock(&priv->pt.learn_lock);
	if (!__atomic_load_n(&peer->dead, __ATOMIC_RELAXED))
		ipoib_peer_bind_lid(priv, peer, lid);
	pthread_mutex_unlock(&priv->pt.learn_lock);
	return peer;
}

/* Control thread: remove a peer; it is reused after a grace period. */
void
ipoib_peer_forget(struct ipoib_priv *priv, struct ipoib_peer *peer)
{
	struct ipoib_peers *pt = &priv->pt;

	pthread_mutex_lock(&pt->learn_lock);
	__atomic_store_n(&peer->dead, 1, __ATOMIC_RELAXED);
	ipoib_ph_del(&pt->by_hw, ipoib_hw_hash(&peer->hw), peer->index,
		     pt->qsbr);
	ipoib_peer_unbind_lid(pt, peer);
	/* not there if it collided: another peer has its MAC */
	ipoib_ph_del(&pt->by_mac, ipoib_mac_hash(ipoib_mac_key(&peer->mac)),
		     peer->index, pt->qsbr);
	pthread_mutex_unlock(&pt->learn_lock);
	/* the grace queue: in the peer itself, nothing allocated */
	peer->grace_token = rte_rcu_qsbr_start(pt->qsbr);
	ipoib_peer_fifo_push(pt, &pt->grace, peer->index);
}

static bool
ipoib_grace_cb(void *priv, uint64_t token)
{
	return ipoib_grace_passed(priv, token);
}

bool
ipoib_peers_settled(const struct ipoib_peers *pt)
{
	return ipoib_ph_settled(&pt->by_mac) && ipoib_ph_settled(&pt->by_hw) &&
	       ipoib_ph_settled(&pt->by_lid);
}

/* Control thread: give back the peers every queue has stopped seeing. */
void
ipoib_peers_reclaim(struct ipoib_priv *priv)
{
	struct ipoib_peers *pt = &priv->pt;
	struct ipoib_peer *peer;

	while (pt->grace.head != 0 &&
	       ipoib_grace_passed(priv, ipoib_peer_at(pt, pt->grace.head - 1)->
				  grace_token)) {
		peer = ipoib_peer_fifo_pop(pt, &pt->grace);
		if (peer->ah != NULL)
			priv->ops->ah_destroy(peer->ah);
		__atomic_store_n(&peer->ah, NULL, __ATOMIC_RELAXED);
		/* the slot is free: pairs with ipoib_peer_live()'s acquire */
		__atomic_store_n(&peer->live, 0, __ATOMIC_RELEASE);
		pthread_mutex_lock(&pt->learn_lock);
		ipoib_peer_put(pt, peer);
		pthread_mutex_unlock(&pt->learn_lock);
	}
	/* indexes replaced by bigger (or emptier) ones */
	pthread_mutex_lock(&pt->learn_lock);
	ipoib_ph_reclaim(&pt->by_mac, ipoib_grace_cb, priv);
	ipoib_ph_reclaim(&pt->by_hw, ipoib_grace_cb, priv);
	ipoib_ph_reclaim(&pt->by_lid, ipoib_grace_cb, priv);
	pthread_mutex_unlock(&pt->learn_lock);
}
