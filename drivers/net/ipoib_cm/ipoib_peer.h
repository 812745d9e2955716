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
	struct ipoib_hca_ah *ah;
	struct ipoib_conn *tx;		/* CONNECTED: the active connection */
	uint32_t tx_mtu;		/* RC: peer's receive MTU - header */
	uint32_t index;
	struct ipoib_hwaddr hw;
	struct rte_ether_addr mac;
	uint8_t dead;			/* removed, awaiting a grace period */
	uint8_t collided;		/* another peer has our derived MAC */
	uint16_t lid;			/* bound SLID (ARP/ND over UD), or 0 */
	uint8_t adv_ud;			/* refused: our address without RC */
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
 * ah last, with release; dead is set by the control thread.
 */
static inline bool
ipoib_peer_live(const struct ipoib_peer *p)
{
	return __atomic_load_n(&p->ah, __ATOMIC_ACQUIRE) != NULL &&
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
	struct rte_rcu_qsbr *qsbr;
	rte_spinlock_t learn_lock;	/* writers */
	struct ipoib_peer_deferred *deferred;	/* removed, in grace */
	uint32_t nr_deferred;
	/* per kind and queue: nr_max counters, made at dev_start */
	struct ipoib_peer_ctr *ctr[IPOIB_PEER_CTR_KINDS][IPOIB_MAX_QUEUES];
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
