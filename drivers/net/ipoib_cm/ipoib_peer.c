/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The peer table: every remote IPoIB interface the port has heard of,
 * found by its emulated MAC (transmit) or its hardware address (receive).
 * Readers are the rx and tx bursts, lock-free (rte_hash in lock-free
 * read mode); writers (learning on any lcore, removal on the control
 * thread) take learn_lock. Removed peers are reused after an RCU grace
 * period: a queue is online (rte_rcu_qsbr_thread_online()) only inside
 * its bursts, so the period ends once every burst that was running when
 * the peer was removed has left.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_malloc.h>

#include "ipoib_cm.h"
#include "ipoib_log.h"
#include "ipoib_peer.h"
#include "ipoib_tx_held.h"

/*
 * rte_jhash() reads 32-bit words, unaligned on x86 (undefined behaviour
 * for UBSan); a MAC in a received frame sits at any even address. Keys
 * (6 and 20 bytes) are hashed from an aligned copy.
 */
static uint32_t
ipoib_hash_fn(const void *key, uint32_t len, uint32_t init)
{
	uint32_t words[(IPOIB_HWADDR_LEN + 3) / 4];

	RTE_ASSERT(len <= sizeof(words));
	memcpy(words, key, len);
	return rte_jhash(words, len, init);
}

/* The hardware address as a table key: QPN and GID, flags zeroed. */
void
ipoib_hw_key(struct ipoib_hwaddr *key, const struct ipoib_hwaddr *hw)
{
	*key = *hw;
	key->bytes[0] = 0;
}

static struct rte_hash *
ipoib_hash_create(struct ipoib_mem *acct, const char *name, uint32_t entries,
		  uint32_t key_len, struct rte_rcu_qsbr *qsbr)
{
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = entries,
		.key_len = key_len,
		.hash_func = ipoib_hash_fn,
		.socket_id = (int)rte_socket_id(),
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF,
	};
	struct rte_hash_rcu_config rc = {
		.v = qsbr,
		.mode = RTE_HASH_QSBR_MODE_DQ,
	};
	struct ipoib_mem_mark m;
	struct rte_hash *h;

	ipoib_mem_begin(&m);
	h = rte_hash_create(&hp);
	if (h != NULL && rte_hash_rcu_qsbr_add(h, &rc) != 0) {
		rte_hash_free(h);
		h = NULL;
	}
	ipoib_mem_end(&m, acct, IPOIB_MEM_HASH);
	return h;
}

static void
ipoib_hash_free(struct ipoib_mem *acct, struct rte_hash *h)
{
	struct ipoib_mem_mark m;

	ipoib_mem_begin(&m);
	rte_hash_free(h);
	ipoib_mem_end(&m, acct, IPOIB_MEM_HASH);
}

int
ipoib_peers_init(struct ipoib_priv *priv, const char *name)
{
	uint32_t n = RTE_MAX((uint32_t)IPOIB_PEERS_MIN,
			     IPOIB_PEERS_PER_CONN * priv->cfg.max_conns);
	struct ipoib_peers *pt = &priv->pt;
	char nm[RTE_HASH_NAMESIZE];
	size_t qsz;
	uint32_t i;

	/* the datapath's per-peer counters are per queue, not in it */
	RTE_BUILD_BUG_ON(sizeof(struct ipoib_peer) > 2 * RTE_CACHE_LINE_SIZE);
	n = rte_align32pow2(n);
	pt->nr_max = n;
	rte_spinlock_init(&pt->learn_lock);
	qsz = rte_rcu_qsbr_get_memsize(IPOIB_QSBR_THREADS);
	pt->qsbr = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_PEERS, "ipoib_qsbr",
				     qsz, RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	pt->peers = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_PEERS,
				      "ipoib_peers",
				      (size_t)n * sizeof(*pt->peers),
				      RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	pt->deferred = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_PEERS,
					 "ipoib_deferred",
					 (size_t)n * sizeof(*pt->deferred), 0,
					 SOCKET_ID_ANY);
	if (pt->qsbr == NULL || pt->peers == NULL || pt->deferred == NULL)
		goto fail;
	if (rte_rcu_qsbr_init(pt->qsbr, IPOIB_QSBR_THREADS) != 0)
		goto fail;
	/* short names: DPDK derives longer ones (defer queues) from them */
	snprintf(nm, sizeof(nm), "ipm_%u", priv->eth_dev->data->port_id);
	pt->mac_hash = ipoib_hash_create(&priv->acct, nm, n,
					 RTE_ETHER_ADDR_LEN, pt->qsbr);
	snprintf(nm, sizeof(nm), "iph_%u", priv->eth_dev->data->port_id);
	pt->hw_hash = ipoib_hash_create(&priv->acct, nm, n, IPOIB_HWADDR_LEN,
					pt->qsbr);
	snprintf(nm, sizeof(nm), "ipl_%u", priv->eth_dev->data->port_id);
	pt->lid_hash = ipoib_hash_create(&priv->acct, nm, n, sizeof(uint64_t),
					 pt->qsbr);
	snprintf(nm, sizeof(nm), "ipf_%u", priv->eth_dev->data->port_id);
	pt->free = ipoib_ring_create(&priv->acct, IPOIB_MEM_RINGS, nm,
				     sizeof(void *), n, RING_F_EXACT_SZ);
	snprintf(nm, sizeof(nm), "ipr_%u", priv->eth_dev->data->port_id);
	pt->resolve = ipoib_ring_create(&priv->acct, IPOIB_MEM_RINGS, nm,
					sizeof(void *), IPOIB_RESOLVE_RING,
					RING_F_SC_DEQ);
	if (pt->mac_hash == NULL || pt->hw_hash == NULL ||
	    pt->lid_hash == NULL || pt->free == NULL || pt->resolve == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		pt->peers[i].index = i;
		rte_ring_enqueue(pt->free, (void *)(uintptr_t)i);
	}
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
	uint32_t i, k;

	for (k = 0; k < IPOIB_PEER_CTR_KINDS; k++)
		for (i = 0; i < IPOIB_CTR_QUEUES; i++)
			ipoib_mem_free(&priv->acct, IPOIB_MEM_PEERS,
				       pt->ctr[k][i]);
	for (i = 0; pt->peers != NULL && i < pt->nr_max; i++) {
		if (pt->peers[i].ah != NULL)
			priv->ops->ah_destroy(pt->peers[i].ah);
		pt->peers[i].ah = NULL;
	}
	if (pt->mac_hash != NULL)
		ipoib_hash_free(&priv->acct, pt->mac_hash);
	if (pt->hw_hash != NULL)
		ipoib_hash_free(&priv->acct, pt->hw_hash);
	if (pt->lid_hash != NULL)
		ipoib_hash_free(&priv->acct, pt->lid_hash);
	ipoib_ring_free(&priv->acct, IPOIB_MEM_RINGS, pt->free);
	ipoib_ring_free(&priv->acct, IPOIB_MEM_RINGS, pt->resolve);
	ipoib_mem_free(&priv->acct, IPOIB_MEM_PEERS, pt->deferred);
	ipoib_mem_free(&priv->acct, IPOIB_MEM_PEERS, pt->peers);
	ipoib_mem_free(&priv->acct, IPOIB_MEM_PEERS, pt->qsbr);
	memset(pt, 0, sizeof(*pt));
}

struct ipoib_peer_ctr *
ipoib_peer_ctr_get(struct ipoib_priv *priv, enum ipoib_peer_ctr_kind k,
		   uint16_t q)
{
	struct ipoib_peers *pt = &priv->pt;
	struct ipoib_peer_ctr *c = pt->ctr[k][q];

	if (c != NULL)
		return c;
	c = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_PEERS, "ipoib_peer_ctr",
			      (size_t)pt->nr_max * sizeof(*c),
			      RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	/* complete (zeroed) before a reader sums it */
	if (c != NULL)
		__atomic_store_n(&pt->ctr[k][q], c, __ATOMIC_RELEASE);
	return c;
}

/* Queue q's counter of kind k for peer, or NULL: the queue has none. */
static struct ipoib_peer_ctr *
ipoib_peer_ctr_of(const struct ipoib_peers *pt, uint32_t k, uint32_t q,
		  const struct ipoib_peer *peer)
{
	struct ipoib_peer_ctr *c = __atomic_load_n(&pt->ctr[k][q],
						   __ATOMIC_ACQUIRE);

	return c != NULL ? c + peer->index : NULL;
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

static inline struct ipoib_peer *
ipoib_peer_get(struct ipoib_peers *pt, int32_t ret, void *data)
{
	struct ipoib_peer *peer;

	if (ret < 0)
		return NULL;
	peer = &pt->peers[(uint32_t)(uintptr_t)data];
	return ipoib_peer_live(peer) ? peer : NULL;
}

struct ipoib_peer *
ipoib_peer_by_mac(struct ipoib_priv *priv, const struct rte_ether_addr *mac)
{
	void *data = NULL;
	int32_t ret = rte_hash_lookup_data(priv->pt.mac_hash, mac, &data);

	return ipoib_peer_get(&priv->pt, ret, data);
}

struct ipoib_peer *
ipoib_peer_by_hw(struct ipoib_priv *priv, const struct ipoib_hwaddr *hw)
{
	struct ipoib_hwaddr key;
	void *data = NULL;
	int32_t ret;

	ipoib_hw_key(&key, hw);
	ret = rte_hash_lookup_data(priv->pt.hw_hash, &key, &data);
	return ipoib_peer_get(&priv->pt, ret, data);
}

/* The lid_hash key of a GRH-less UD sender: (SLID, source QPN). */
static inline uint64_t
ipoib_lid_key(uint16_t lid, uint32_t qpn)
{
	return ((uint64_t)lid << 32) | (qpn & IPOIB_QPN_MASK);
}

struct ipoib_peer *
ipoib_peer_by_lid(struct ipoib_priv *priv, uint16_t lid, uint32_t qpn)
{
	uint64_t key = ipoib_lid_key(lid, qpn);
	void *data = NULL;
	int32_t ret = rte_hash_lookup_data(priv->pt.lid_hash, &key, &data);

	return ipoib_peer_get(&priv->pt, ret, data);
}

/* Under learn_lock: the peer's (LID, QPN) no longer names it. */
static void
ipoib_peer_unbind_lid(struct ipoib_peers *pt, struct ipoib_peer *peer)
{
	/* peer->lid is stored by threads that do not hold learn_lock */
	uint16_t lid = __atomic_load_n(&peer->lid, __ATOMIC_RELAXED);
	uint64_t key = ipoib_lid_key(lid, peer->qpn);
	void *data = NULL;

	if (lid == 0)
		return;
	if (rte_hash_lookup_data(pt->lid_hash, &key, &data) >= 0 &&
	    (uintptr_t)data == peer->index)
		rte_hash_del_key(pt->lid_hash, &key);
	__atomic_store_n(&peer->lid, 0, __ATOMIC_RELAXED);
}

/*
 * Under learn_lock: bind (lid, peer's QPN) to the peer. A LID and QPN
 * another peer had (its host came back with another GID) move over: the
 * other peer loses them, so the datapath's cache of the last sender
 * cannot name it for them.
 */
static void
ipoib_peer_bind_lid(struct ipoib_peers *pt, struct ipoib_peer *peer,
		    uint16_t lid)
{
	uint64_t key = ipoib_lid_key(lid, peer->qpn);
	void *data = NULL;

	ipoib_peer_unbind_lid(pt, peer);
	if (rte_hash_lookup_data(pt->lid_hash, &key, &data) >= 0)
		__atomic_store_n(&pt->peers[(uintptr_t)data].lid, 0,
				 __ATOMIC_RELAXED);
	if (rte_hash_add_key_data(pt->lid_hash, &key,
				  (void *)(uintptr_t)peer->index) == 0)
		__atomic_store_n(&peer->lid, lid, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&pt->learn_fail, 1, __ATOMIC_RELAXED);
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
	void *data = NULL;

	if (rte_hash_lookup_data(pt->mac_hash, &peer->mac, &data) >= 0) {
		struct ipoib_peer *other = &pt->peers[(uintptr_t)data];

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
	rte_hash_add_key_data(pt->mac_hash, &peer->mac,
			      (void *)(uintptr_t)peer->index);
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

/*
 * Any thread, under learn_lock: publish a new peer. Nothing here waits
 * on the subnet: its address handle (a path query on verbs) and the
 * directory's flags are the control thread's, through pt->resolve.
 */
static struct ipoib_peer *
ipoib_peer_new(struct ipoib_priv *priv, const struct ipoib_hwaddr *hw)
{
	struct ipoib_peers *pt = &priv->pt;
	struct ipoib_hwaddr key;
	struct ipoib_peer *peer;
	void *idx;

	if (rte_ring_dequeue(pt->free, &idx) != 0)
		return NULL;
	peer = &pt->peers[(uintptr_t)idx];
	peer->hw = *hw;
	peer->qpn = ipoib_hwaddr_qpn(hw);
	ipoib_mac_from_hwaddr(&peer->mac, hw);
	__atomic_store_n(&peer->ah, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&peer->held, 0, __ATOMIC_RELAXED);
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
	peer->retries = 0;
	peer->last_active_ns = ipoib_now_ns();
	peer->sample_pkts = 0;
	peer->rate = 0;
	peer->sid_try = 0;
	__atomic_store_n(&peer->state, (peer->hw.bytes[0] & IPOIB_HWADDR_F_RC) ?
			 IPOIB_PEER_NEW : IPOIB_PEER_UD, __ATOMIC_RELAXED);
	/* complete: scans and lookups of other threads may take it now */
	__atomic_store_n(&peer->live, 1, __ATOMIC_RELEASE);
	ipoib_hw_key(&key, hw);
	/* the entry is complete before readers can find it */
	if (rte_hash_add_key_data(pt->hw_hash, &key, idx) < 0) {
		__atomic_store_n(&peer->live, 0, __ATOMIC_RELEASE);
		rte_ring_enqueue(pt->free, idx);
		return NULL;
	}
	ipoib_peer_bind_mac(priv, peer);
	__atomic_fetch_add(&pt->learned, 1, __ATOMIC_RELAXED);
	if (rte_ring_enqueue(pt->resolve, idx) != 0)
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
			ipoib_peer_ah(priv, &pt->peers[(uintptr_t)idx[i]]);
		work |= n > 0;
	} while (n == RTE_DIM(idx));
	if (__atomic_exchange_n(&pt->resolve_lost, 0, __ATOMIC_RELAXED)) {
		/* after the reset: a peer learned meanwhile is seen too */
		for (i = 0; i < pt->nr_max; i++)
			ipoib_peer_ah(priv, &pt->peers[i]);
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
	rte_spinlock_lock(&priv->pt.learn_lock);
	peer = ipoib_peer_by_hw(priv, hw);	/* another lcore may have */
	if (peer == NULL)
		peer = ipoib_peer_new(priv, hw);
	rte_spinlock_unlock(&priv->pt.learn_lock);
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
	rte_spinlock_lock(&priv->pt.learn_lock);
	if (!__atomic_load_n(&peer->dead, __ATOMIC_RELAXED))
		ipoib_peer_bind_lid(&priv->pt, peer, lid);
	rte_spinlock_unlock(&priv->pt.learn_lock);
	return peer;
}

/* Control thread: remove a peer; it is reused after a grace period. */
void
ipoib_peer_forget(struct ipoib_priv *priv, struct ipoib_peer *peer)
{
	struct ipoib_peers *pt = &priv->pt;
	struct ipoib_hwaddr key;
	void *data = NULL;

	rte_spinlock_lock(&pt->learn_lock);
	__atomic_store_n(&peer->dead, 1, __ATOMIC_RELAXED);
	ipoib_hw_key(&key, &peer->hw);
	rte_hash_del_key(pt->hw_hash, &key);
	ipoib_peer_unbind_lid(pt, peer);
	if (rte_hash_lookup_data(pt->mac_hash, &peer->mac, &data) >= 0 &&
	    (uintptr_t)data == peer->index)
		rte_hash_del_key(pt->mac_hash, &peer->mac);
	rte_spinlock_unlock(&pt->learn_lock);
	pt->deferred[pt->nr_deferred].index = peer->index;
	pt->deferred[pt->nr_deferred].token = rte_rcu_qsbr_start(pt->qsbr);
	pt->nr_deferred++;
}

bool
ipoib_grace_passed(struct ipoib_priv *priv, uint64_t token)
{
	if (rte_rcu_qsbr_check(priv->pt.qsbr, token, false) != 1)
		return false;
	/*
	 * The RCU orders the bursts' reads before this with fences, which
	 * ThreadSanitizer does not model: acquire what each queue released
	 * when its last burst left, which says the same where it looks.
	 */
	ipoib_queues_enter(priv->eth_dev->data);
	return true;
}

/* Control thread: give back the peers every queue has stopped seeing. */
void
ipoib_peers_reclaim(struct ipoib_priv *priv)
{
	struct ipoib_peers *pt = &priv->pt;
	uint32_t i = 0, j;

	while (i < pt->nr_deferred &&
	       ipoib_grace_passed(priv, pt->deferred[i].token)) {
		struct ipoib_peer *peer = &pt->peers[pt->deferred[i].index];

		if (peer->ah != NULL)
			priv->ops->ah_destroy(peer->ah);
		__atomic_store_n(&peer->ah, NULL, __ATOMIC_RELAXED);
		/* the slot is free: pairs with ipoib_peer_live()'s acquire */
		__atomic_store_n(&peer->live, 0, __ATOMIC_RELEASE);
		rte_ring_enqueue(pt->free, (void *)(uintptr_t)peer->index);
		i++;
	}
	for (j = 0; i > 0 && j + i < pt->nr_deferred; j++)
		pt->deferred[j] = pt->deferred[j + i];
	pt->nr_deferred -= i;
}
