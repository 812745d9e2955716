/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Frames the tx queues hand to the control thread (ipoib_tx_held.c): to a
 * destination that needs the subnet first (a directory lookup, a path
 * query, an address handle), which an lcore never waits for.
 */

#ifndef IPOIB_TX_HELD_H
#define IPOIB_TX_HELD_H

#include <string.h>

#include <rte_cycles.h>
#include <rte_ether.h>

#include "ipoib_cm.h"
#include "ipoib_peer.h"

#define IPOIB_HELD_RING		1024	/* frames held, port-wide */
#define IPOIB_NEG_CACHE_MS	100	/* a MAC the directory did not know */

/* An element of priv->held. */
struct ipoib_held {
	struct rte_mbuf *m;
	uint32_t peer;		/* peer index + 1; 0: no peer yet */
	/* no peer yet, unicast: priv->held_anon_mac bucket + 1; else 0 */
	uint32_t anon;
};

/* The bucket of priv->held_anon_mac that counts frames to mac. */
static inline uint32_t
ipoib_held_anon_bucket(const struct rte_ether_addr *mac)
{
	return (uint32_t)(mac->addr_bytes[3] ^ mac->addr_bytes[4] ^
			  mac->addr_bytes[5]) % IPOIB_HELD_ANON_BUCKETS;
}

/* A frame held before its peer existed: counted before it is held. */
static inline void
ipoib_held_anon_add(struct ipoib_priv *priv, uint32_t bucket)
{
	__atomic_fetch_add(&priv->held_anon_mac[bucket], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&priv->held_anon, 1, __ATOMIC_RELAXED);
}

/* One such frame is gone (sent or dropped): after it, as ipoib_held_done. */
static inline void
ipoib_held_anon_done(struct ipoib_priv *priv, uint32_t bucket)
{
	__atomic_fetch_sub(&priv->held_anon_mac[bucket], 1, __ATOMIC_RELEASE);
	__atomic_fetch_sub(&priv->held_anon, 1, __ATOMIC_RELEASE);
}

/*
 * One held frame of the peer's is gone (sent or dropped). The last one
 * ends the episode: frames may be held late again in the next.
 */
static inline void
ipoib_held_done(struct ipoib_peer *peer)
{
	uint16_t n = __atomic_load_n(&peer->held, __ATOMIC_RELAXED);

	/* never below zero, even for a slot reused meanwhile */
	while (n != 0) {
		if (__atomic_compare_exchange_n(&peer->held, &n, n - 1, false,
						__ATOMIC_RELEASE,
						__ATOMIC_RELAXED)) {
			if (n == 1)
				__atomic_store_n(&peer->held_late, 0,
						 __ATOMIC_RELAXED);
			return;
		}
	}
}

/*
 * Frames a burst holds behind a ready peer's held ones (its ah set, held
 * not 0: the control thread is sending them, or has sent them and not
 * counted them down yet) before it gives the peer's frames back. The
 * first answer to a new peer comes right behind what was held for it (an
 * echo reply behind the ARP reply that waited for the peer's handle): an
 * application that does not send a refused frame again, as testpmd's
 * forwarding engines do not, would lose it whenever the control thread
 * is descheduled between its send and its count. Bounded per episode
 * (until held is 0 again), so that a stream never stays on the control
 * thread's path: past it the burst gives frames back, the control thread
 * catches up, and the lcores send again themselves.
 */
#define IPOIB_HELD_LATE		8

static inline bool
ipoib_held_late_take(struct ipoib_peer *peer)
{
	if (__atomic_load_n(&peer->held_late, __ATOMIC_RELAXED) >=
	    IPOIB_HELD_LATE)
		return false;
	__atomic_fetch_add(&peer->held_late, 1, __ATOMIC_RELAXED);
	return true;
}

static inline uint64_t
ipoib_neg_key(const struct rte_ether_addr *mac)
{
	uint64_t k = 0;

	memcpy(&k, mac->addr_bytes, RTE_ETHER_ADDR_LEN);
	return k | (UINT64_C(1) << 63);	/* never 0, the empty cache */
}

/*
 * Whether the control thread just failed to reach this MAC: the directory
 * did not know it, or its peer's address handle could not be made (no
 * path). Frames to it are then dropped at once (tx_drop_no_neigh) for
 * IPOIB_NEG_CACHE_MS instead of held. Any thread; written by the control
 * thread (ipoib_neg_set()).
 */
static inline bool
ipoib_neg_hit(const struct ipoib_priv *priv, const struct rte_ether_addr *mac)
{
	if (__atomic_load_n(&priv->neg_mac, __ATOMIC_RELAXED) !=
	    ipoib_neg_key(mac))
		return false;
	return rte_get_timer_cycles() -
	       __atomic_load_n(&priv->neg_tsc, __ATOMIC_RELAXED) <
	       rte_get_timer_hz() / 1000 * IPOIB_NEG_CACHE_MS;
}

/* Whether a MAC with no peer is worth asking the subnet directory about. */
static inline bool
ipoib_tx_may_resolve(const struct ipoib_priv *priv,
		     const struct rte_ether_addr *mac)
{
	return priv->ops->test != NULL &&
	       priv->ops->test->addr_resolve != NULL &&
	       !ipoib_neg_hit(priv, mac);
}

static inline void
ipoib_neg_set(struct ipoib_priv *priv, const struct rte_ether_addr *mac)
{
	__atomic_store_n(&priv->neg_tsc, rte_get_timer_cycles(),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&priv->neg_mac, ipoib_neg_key(mac),
			 __ATOMIC_RELAXED);
}

/* dev_start: the ring and the control thread's tx queue. */
int ipoib_tx_held_start(struct ipoib_priv *priv);
/* Control thread: send what is held, in order. True if there was any. */
bool ipoib_tx_held_drain(struct ipoib_priv *priv);
/* dev_close: both go; nothing is held (the port was stopped). */
void ipoib_tx_held_fini(struct ipoib_priv *priv);

/* ipoib_tx.c: route and send a burst, as tx_burst does (any tx queue) */
uint16_t ipoib_tx_send(struct ipoib_txq *txq, struct rte_mbuf **pkts,
		       uint16_t n);
/* ipoib_txq.c: a tx queue's memory, made and freed (its own pools too) */
struct ipoib_txq *ipoib_txq_new(struct ipoib_priv *priv, uint16_t qid,
				int socket);
void ipoib_txq_free(struct ipoib_priv *priv, struct ipoib_txq *txq);

#endif /* IPOIB_TX_HELD_H */
