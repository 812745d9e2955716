/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_PEER_H
#define IPOIB_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_hash.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "ipoib_hca.h"
#include "ipoib_wire.h"

#define IPOIB_PEERS_MIN		4096	/* peer table: at least this */
#define IPOIB_PEERS_PER_CONN	16	/* and this many per max_conns */
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
	 * has not sent yet (ipoib_tx_held.c): while ah is NULL its frames
	 * are held too; while there are any, a burst gives its frames back
	 * (not taken), so none overtakes another.
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
	uint64_t next_retry_ns;
	uint64_t last_active_ns;
	uint64_t sample_pkts;		/* packet total at the last sample */
	uint64_t adv_ns;		/* last told to use UD (ipoib_adv.c) */
	uint32_t backoff_ms;
	uint32_t retries;
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

struct ipoib_peer_deferred {
	uint32_t index;
	uint64_t token;
};

/* The table: MAC -> peer and hardware address -> peer, lock-free reads. */
struct ipoib_peers {
	struct rte_hash *mac_hash;
	struct rte_hash *hw_hash;
	struct rte_hash *lid_hash;	/* (SLID, QPN) of GRH-less senders */
	struct ipoib_peer *peers;
	uint32_t nr_max;
	struct rte_ring *free;		/* free peer indices */
	/* peers learned without an address handle, for the control thread */
	struct rte_ring *resolve;
	uint8_t resolve_lost;		/* the ring was full: scan the table */
	struct rte_rcu_qsbr *qsbr;
	rte_spinlock_t learn_lock;	/* writers */
	struct ipoib_peer_deferred *deferred;	/* removed, in grace */
	uint32_t nr_deferred;
	/* per kind and queue: nr_max counters, made at dev_start */
	struct ipoib_peer_ctr *ctr[IPOIB_PEER_CTR_KINDS][IPOIB_CTR_QUEUES];
	/* counters, any lcore: relaxed atomics */
	uint64_t learned;
	uint64_t collisions;
	uint64_t learn_fail;
};

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
/*
 * Control thread: every burst that was running when token was taken has
 * left (rte_rcu_qsbr_check()), so what it could see may be freed.
 */
bool ipoib_grace_passed(struct ipoib_priv *priv, uint64_t token);
void ipoib_peers_reclaim(struct ipoib_priv *priv);
int ipoib_peer_resolve(void *arg, const struct rte_ether_addr *mac,
		       struct ipoib_hwaddr *hw);
void ipoib_hw_key(struct ipoib_hwaddr *key, const struct ipoib_hwaddr *hw);
/*
 * dev_start: queue q's counters of kind k (nr_max of them), made at the
 * first start with that queue and kept until the port closes (readers
 * may be summing them meanwhile). NULL: no memory.
 */
struct ipoib_peer_ctr *ipoib_peer_ctr_get(struct ipoib_priv *priv,
					  enum ipoib_peer_ctr_kind k,
					  uint16_t q);
/* Any thread: the peer's counters, summed over queues, by kind. */
void ipoib_peer_counts(const struct ipoib_peers *pt,
		       const struct ipoib_peer *peer,
		       struct ipoib_peer_ctr sum[IPOIB_PEER_CTR_KINDS]);

#endif /* IPOIB_PEER_H */
