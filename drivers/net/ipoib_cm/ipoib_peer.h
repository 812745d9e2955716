/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_PEER_H
#define IPOIB_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <pthread.h>

#include "ipoib_hca.h"
#include "ipoib_peer_hash.h"
#include "ipoib_rcu.h"
#include "ipoib_wire.h"

/* the peer table holds at most this many peers, allocated as learned */
#define IPOIB_PEERS_MIN		4096	/* at least this */
#define IPOIB_PEERS_PER_CONN	16	/* and this many per max_conns */
/* peers are allocated a chunk at a time, and never move */
#define IPOIB_PEER_CHUNK_SHIFT	8
#define IPOIB_PEER_CHUNK	(1u << IPOIB_PEER_CHUNK_SHIFT)
#define IPOIB_PEER_CHUNK_MASK	(IPOIB_PEER_CHUNK - 1)
#define IPOIB_MAX_QUEUES	16	/* rx queues, and tx queues, of a port */
/* the control thread's own tx queue (ipoib_tx_held.c), after them */
#define IPOIB_CTRL_TXQ		IPOIB_MAX_QUEUES
#define IPOIB_CTR_QUEUES	(IPOIB_MAX_QUEUES + 1)	/* peer counters */
#define IPOIB_RESOLVE_RING	1024	/* peers waiting for an AH */
/* RCU readers: every rx queue, then every tx queue */
#define IPOIB_QSBR_THREADS	(2 * IPOIB_MAX_QUEUES)

struct ipoib_conn;
struct ipoib_priv;

/* A peer: a remote IPoIB interface we have heard of. */
enum ipoib_peer_state {
	IPOIB_PEER_UD,		/* no connected mode (flag absent) */
	IPOIB_PEER_NEW,		/* connected mode offered, not tried */
	IPOIB_PEER_CONNECTING,	/* REQ out; traffic on UD meanwhile */
	IPOIB_PEER_CONNECTED,	/* tx on RC */
	IPOIB_PEER_SPILLED,	/* refused or no room: UD, retried later */
};

struct ipoib_conn;

struct ipoib_peer {
	/* read by the datapath */
	uint32_t state;			/* enum ipoib_peer_state, atomic */
	uint32_t qpn;			/* UD QPN */
	/* made by the control thread (ipoib_peers_resolve()), then set */
	struct ipoib_hca_ah *ah;
	struct ipoib_conn *tx;		/* CONNECTED: the active connection */
	uint32_t tx_mtu;		/* RC: peer's receive MTU - header */
	uint32_t index;
	struct ipoib_hwaddr hw;
	struct rte_ether_addr mac;
	uint8_t dead;			/* removed, awaiting a grace period */
	uint8_t live;			/* in use: published last (release) */
	uint16_t lid;			/* bound SLID (ARP/ND over UD), or 0 */
	/*
	 * Frames to it the tx queues handed to the control thread and it
	 * has not counted sent yet (ipoib_tx_held.c): while ah is NULL its
	 * frames are held too; while there are any, a burst holds a few
	 * more behind them (held_late) and then gives its frames back (not
	 * taken), so none overtakes another.
	 */
	uint16_t held;
	/*
	 * The bursts count nothing here: their counters of the peer are
	 * kept per queue (struct ipoib_peers' ctr), so that two lcores
	 * never share a line and none takes a lock to count.
	 */
	/* control thread only */
	struct ipoib_conn *txc;		/* the active connection, any state */
	/* the passive connection; tx reads if it is set (ipoib_adv.c) */
	struct ipoib_conn *rx;
	union {
		uint64_t next_retry_ns;	/* live */
		uint64_t grace_token;	/* removed: ipoib_peer_forget()'s */
	};
	uint64_t last_active_ns;
	uint64_t sample_pkts;		/* packet total at the last sample */
	uint64_t adv_ns;		/* last told to use UD (ipoib_adv.c) */
	uint32_t backoff_ms;
	/*
	 * Frames held behind held ones while ah was set, since held was
	 * last 0 (ipoib_held_late_take(); any thread, atomic).
	 */
	uint16_t held_late;
	uint32_t rate;			/* packets in the last sample period */
	uint8_t sid_try;		/* which service ID to try next */
	uint8_t refused;		/* spilled by a REJ or a timeout */
	uint8_t collided;		/* another peer has our derived MAC */
	uint8_t adv_ud;			/* refused: our address without RC */
} __rte_cache_aligned;

/*
 * Traffic of one peer counted by one queue, by peer index: one writer,
 * the queue's lcore (IPOIB_STAT_ADD); readers sum every queue's
 * (ipoib_peer_counts()).
 */
struct ipoib_peer_ctr {
	uint64_t pkts;
	uint64_t bytes;
};

enum ipoib_peer_ctr_kind {
	IPOIB_PEER_CTR_RX,	/* received, any path (rx queues) */
	IPOIB_PEER_CTR_TX_RC,	/* sent on RC (tx queues) */
	IPOIB_PEER_CTR_TX_UD,	/* sent on UD (tx queues) */
	IPOIB_PEER_CTR_KINDS,
};

/*
 * A peer in use, for threads that find it by scanning the table (control
 * thread, xstats, telemetry) or by a lookup: ipoib_peer_new() publishes
 * live last, with release; dead is set by the control thread. A live
 * peer may have no address handle yet (ah NULL until the control thread
 * made it).
 */
static inline bool
ipoib_peer_live(const struct ipoib_peer *p)
{
	return __atomic_load_n(&p->live, __ATOMIC_ACQUIRE) != 0 &&
	       !__atomic_load_n(&p->dead, __ATOMIC_RELAXED);
}

/* IPOIB_PEER_CHUNK peers, allocated when the table needs them. */
struct ipoib_peer_chunk {
	struct ipoib_peer peer[IPOIB_PEER_CHUNK];
	/* the free list, or the grace queue (removed): next's index + 1 */
	uint32_t next_free[IPOIB_PEER_CHUNK];
};

/*
 * A queue of peers, oldest first, linked through their chunks' next_free
 * (a peer is on one queue at most): indexes + 1, 0 when empty.
 */
struct ipoib_peer_fifo {
	uint32_t head;
	uint32_t tail;
};

/*
 * The table: peers by MAC, by hardware address and by (LID, QPN), lock-free
 * reads (ipoib_peer_hash.h). Memory follows the peers learned: chunks of
 * peers (and of each queue's counters of them) are added as the table
 * fills, up to nr_max peers, and kept until the port closes; the indexes
 * grow and shrink with what they hold.
 */
struct ipoib_peers {
	struct ipoib_ph by_mac;
	struct ipoib_ph by_hw;
	struct ipoib_ph by_lid;		/* (SLID, QPN) of GRH-less senders */
	struct ipoib_peer_chunk **chunk;	/* nr_max / IPOIB_PEER_CHUNK */
	uint32_t nr_max;
	uint32_t nr_alloc;		/* peers in chunks: scans (acquire) */
	uint32_t nr_used;		/* live or in grace (relaxed reads) */
	struct ipoib_peer_fifo free;	/* under learn_lock: reused in order */
	/* peers learned without an address handle, for the control thread */
	struct rte_ring *resolve;
	uint8_t resolve_lost;		/* the ring was full: scan the table */
	struct rte_rcu_qsbr *qsbr;
	struct ipoib_rcu rcu;		/* its grace periods (ipoib_rcu.c) */
	/* writers; a mutex, which ThreadSanitizer sees (rte_spinlock: asm) */
	pthread_mutex_t learn_lock;
	/* removed peers in grace, oldest first (control thread) */
	struct ipoib_peer_fifo grace;
	/*
	 * Per kind and queue, made at dev_start: a chunk of counters for each
	 * chunk of peers (ipoib_peer_ctr_at()).
	 */
	struct ipoib_peer_ctr **ctr[IPOIB_PEER_CTR_KINDS][IPOIB_CTR_QUEUES];
	/* counters, any lcore: relaxed atomics */
	uint64_t learned;
	uint64_t collisions;
	uint64_t learn_fail;
};

/*
 * The peer at index idx (an index a table, a ring or a scan gave). The
 * chunk pointer is loaded with acquire (a plain load on x86): an index
 * handed over through an rte_ring carries no order TSan can see.
 */
static inline struct ipoib_peer *
ipoib_peer_at(const struct ipoib_peers *pt, uint32_t idx)
{
	struct ipoib_peer_chunk *ch =
		__atomic_load_n(&pt->chunk[idx >> IPOIB_PEER_CHUNK_SHIFT],
				__ATOMIC_ACQUIRE);

	return &ch->peer[idx & IPOIB_PEER_CHUNK_MASK];
}

/* Scans: the peers [0, n) may be looked at (live or not). */
static inline uint32_t
ipoib_peers_nr(const struct ipoib_peers *pt)
{
	return __atomic_load_n(&pt->nr_alloc, __ATOMIC_ACQUIRE);
}

/* One queue's counter of a peer: dir is what ipoib_peer_ctr_get() gave. */
static inline struct ipoib_peer_ctr *
ipoib_peer_ctr_at(struct ipoib_peer_ctr *const *dir, uint32_t idx)
{
	struct ipoib_peer_ctr *c =
		__atomic_load_n(&dir[idx >> IPOIB_PEER_CHUNK_SHIFT],
				__ATOMIC_ACQUIRE);

	return &c[idx & IPOIB_PEER_CHUNK_MASK];
}

int ipoib_peers_init(struct ipoib_priv *priv, const char *name);
void ipoib_peers_fini(struct ipoib_priv *priv);
struct ipoib_peer *ipoib_peer_by_mac(struct ipoib_priv *priv,
				     const struct rte_ether_addr *mac);
struct ipoib_peer *ipoib_peer_by_hw(struct ipoib_priv *priv,
				    const struct ipoib_hwaddr *hw);
struct ipoib_peer *ipoib_peer_learn(struct ipoib_priv *priv,
				    const struct ipoib_hwaddr *hw);
/*
 * A UD sender without a GRH, by the SLID and source QPN of its
 * completion: the peer an ARP/ND message bound to them, or NULL.
 */
struct ipoib_peer *ipoib_peer_by_lid(struct ipoib_priv *priv, uint16_t lid,
				     uint32_t qpn);
/*
 * ipoib_peer_learn() of the sender address hw an ARP/ND message taught,
 * received on UD from LID lid and source QPN qpn (lid 0: not on UD).
 * When hw names that QPN the peer is bound to (lid, qpn), where a real
 * subnet's GRH-less unicast names it (issue 14).
 */
struct ipoib_peer *ipoib_peer_learn_at(struct ipoib_priv *priv,
				       const struct ipoib_hwaddr *hw,
				       uint16_t lid, uint32_t qpn);
void ipoib_peer_forget(struct ipoib_priv *priv, struct ipoib_peer *peer);
/*
 * Control thread: the peer's address handle, made now if it has none
 * (path resolution, and the subnet directory's flags for a peer learned
 * from a UD source). NULL: it cannot be made; the peer stays without.
 */
struct ipoib_hca_ah *ipoib_peer_ah(struct ipoib_priv *priv,
				   struct ipoib_peer *peer);
/*
 * Control thread: make the address handles of the peers the datapath
 * learned (ipoib_peer_learn() on an lcore only publishes the peer).
 * True if there was any.
 */
bool ipoib_peers_resolve(struct ipoib_priv *priv);
void ipoib_peers_reclaim(struct ipoib_priv *priv);
/*
 * Any thread: no index the table replaced waits for its grace period
 * (what the table holds of EAL's heap is what its peers need).
 */
bool ipoib_peers_settled(const struct ipoib_peers *pt);
int ipoib_peer_resolve(void *arg, const struct rte_ether_addr *mac,
		       struct ipoib_hwaddr *hw);
/*
 * dev_start: queue q's counters of kind k, a chunk of them per chunk of
 * peers (ipoib_peer_ctr_at()), made at the first start with that queue
 * and kept until the port closes (readers may be summing them
 * meanwhile); chunks of peers added later come with theirs. NULL: no
 * memory.
 */
struct ipoib_peer_ctr *const *ipoib_peer_ctr_get(struct ipoib_priv *priv,
					  enum ipoib_peer_ctr_kind k,
					  uint16_t q);
/* Any thread: the peer's counters, summed over queues, by kind. */
void ipoib_peer_counts(const struct ipoib_peers *pt,
		       const struct ipoib_peer *peer,
		       struct ipoib_peer_ctr sum[IPOIB_PEER_CTR_KINDS]);

#endif /* IPOIB_PEER_H */
