/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_CM_H
#define IPOIB_CM_H

/*
 * The driver's private structures and constants. Datapath structures hold
 * what the bursts touch first and counters last; control state is apart.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <ethdev_driver.h>
#include <rte_ether.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <rte_spinlock.h>
#include <rte_thread.h>

#include "ipoib_adv.h"
#include "ipoib_devargs.h"
#include "ipoib_eth.h"
#include "ipoib_hca.h"
#include "ipoib_mcast.h"
#include "ipoib_mem.h"
#include "ipoib_path.h"
#include "ipoib_peer.h"
#include "ipoib_util.h"
#include "ipoib_wire.h"
#include "ipoib_wr_id.h"

#define IPOIB_MIN_MTU		68
#define IPOIB_MAX_DESC		8192	/* send WRs of a QP, at most */
#define IPOIB_MIN_DESC		32
#define IPOIB_BURST		32
/* replacement mbufs a receive burst takes at once, at most */
#define IPOIB_RX_FRESH		(IPOIB_BURST * 2)
/* SRQ mode: reposts wait until this many are due (ipoib_rx_srq_repost()) */
#define IPOIB_RX_SRQ_BATCH	8
#define IPOIB_UD_RING		2048	/* UD receive WRs (queue 0) */
#define IPOIB_TX_QP_WR		1	/* active RC QPs receive nothing */
#define IPOIB_MCAST_MAX		32	/* multicast groups with an AH */
/* priv->held_anon_mac: buckets of destination MACs */
#define IPOIB_HELD_ANON_BUCKETS	64

/* A pool of receive buffers in memory the HCA can write. */
struct ipoib_pool {
	struct rte_mempool *mp;
	struct ipoib_hca_mem mem;
	void *eal_addr;			/* registered with EAL (pages of mem) */
	size_t eal_len;			/* 0: EAL refused it */
	uint16_t seg_len;		/* bytes each mbuf receives */
	int64_t heap;			/* EAL heap its mempool took */
	/* its mbufs' data_off to port for a ring, in one store (ipoib_rxq.h) */
	uint64_t rearm;
};

/* Receive buffers posted to one receive queue (UD, SRQ, or a connection). */
struct ipoib_rx_ring {
	struct rte_mbuf **bufs;		/* nb_slots x segs */
	struct ipoib_pool *pool;
	uint32_t nb_slots;
	uint16_t segs;			/* mbufs per WR */
	uint16_t seg_len;
	uint32_t outstanding;		/* posted, not yet completed */
};

/*
 * The port's datagram side: one UD QP, polled by rx queue 0; with RSS,
 * each other queue's share of it (ipoib_rss.c).
 */
struct ipoib_ud {
	struct ipoib_hca_cq *cq;
	struct ipoib_pool pool;
	struct ipoib_rx_ring ring;
};

/*
 * Datapath counters have one writer, the queue's lcore, and are read by
 * the control path at any time: the writer stores them whole (relaxed
 * atomic stores, plain moves on 64-bit targets) and readers load them
 * whole (ipoib_stats_load()).
 */
#define IPOIB_STAT_ADD(c, n) \
	__atomic_store_n(&(c), (c) + (n), __ATOMIC_RELAXED)
#define IPOIB_STAT_INC(c) IPOIB_STAT_ADD(c, 1)

/* Copy n counters written by another thread. */
static inline void
ipoib_stats_load(uint64_t *dst, const uint64_t *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

#define IPOIB_STATS_LOAD(dst, src) \
	ipoib_stats_load((uint64_t *)(dst), (const uint64_t *)(src), \
			 sizeof(*(src)) / sizeof(uint64_t))

/*
 * An object handed through an rte_ring to another thread: the ring's
 * barriers order the producer's writes before the consumer's reads, which
 * ThreadSanitizer does not model. A release (an RMW: several producers)
 * before the enqueue and an acquire after a dequeue that got something
 * say so where it looks; plain moves and adds on x86. gen is the ring's.
 */
static __rte_always_inline void
ipoib_ring_give(uint32_t *gen)
{
	__atomic_fetch_add(gen, 1, __ATOMIC_RELEASE);
}

static __rte_always_inline void
ipoib_ring_take(const uint32_t *gen)
{
	(void)__atomic_load_n(gen, __ATOMIC_ACQUIRE);
}

/* Datapath counters of one rx queue: one writer, its lcore. */
struct ipoib_rxq_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t nombuf;
	uint64_t rc_packets;
	uint64_t rc_bytes;
	uint64_t ud_packets;
	uint64_t ud_bytes;
	uint64_t drop_malformed;
	uint64_t drop_len;		/* longer than the posted buffer */
	uint64_t drop_mcast_loop;	/* our own multicast, looped back */
	uint64_t drop_unknown_conn;
	uint64_t drop_unknown_lid;	/* GRH-less UD, no peer, not ARP/ND */
	uint64_t bad_wr_id;		/* completions naming no buffer */
	uint64_t flushed;		/* WRs completed by a QP teardown */
	uint64_t learned;		/* peers first heard of here */
	uint64_t mc_rx[IPOIB_MC_KINDS];	/* delivered from groups, by kind */
};

struct ipoib_priv;

struct ipoib_rxq {
	/* hot: what the bursts touch */
	struct ipoib_priv *priv;
	/* copied from priv at start: the bursts do not chase them there */
	uint16_t (*poll_cq)(struct ipoib_hca_cq *cq, struct ipoib_wc *wc,
			    uint16_t n);
	uint16_t (*post_recv)(struct ipoib_hca_qp *qp,
			      const struct ipoib_recv_wr *wr, uint16_t n);
	uint16_t (*post_srq_recv)(struct ipoib_hca_srq *srq,
				  const struct ipoib_recv_wr *wr, uint16_t n);
	struct rte_rcu_qsbr *qsbr;	/* priv->pt.qsbr */
	struct ipoib_hca_cq *cq;	/* RC completions of this queue */
	/* queue 0: the UD QP's; others: their RSS share (ipoib_rss.c) */
	struct ipoib_hca_cq *ud_cq;
	struct ipoib_hca_qp *ud_qp;
	struct ipoib_rx_ring *ud;
	struct ipoib_hca_srq *srq;	/* SRQ mode */
	struct ipoib_rx_ring srq_ring;
	struct ipoib_conn **conns;	/* priv->conns */
	uint32_t nr_conns;
	struct rte_ring *loopback;	/* queue 0: ICMP errors made by tx */
	uint16_t port_id;
	uint16_t queue_id;
	struct ipoib_rcu_reader rcu;	/* ipoib_rcu.h */
	uint8_t stopped;		/* rx_queue_stop(): bursts return 0 */
	uint8_t deferred;		/* not started by dev_start */
	/* the last UD source, to skip a hash lookup for a busy sender */
	struct ipoib_peer *last_src;
	/* its counters of each peer (ipoib_peer_ctr_at()) */
	struct ipoib_peer_ctr *const *peer_ctr;
	uint16_t stash_n;		/* SRQ mode: mbufs in stash */
	uint16_t srq_wait_n;		/* SRQ mode: reposts in srq_wait */
	uint64_t srq_wait[IPOIB_RX_SRQ_BATCH - 1];	/* their WR IDs */
	/* counters last */
	struct ipoib_rxq_stats stats;
	struct ipoib_rxq_stats stats_base;	/* snapshot at last reset */
	/* control */
	struct ipoib_pool pool;		/* SRQ buffers */
	/*
	 * The bursts': replacements taken from pool ahead
	 * (ipoib_rx_stash_take()); here, after the counters, for its size.
	 */
	struct rte_mbuf *stash[IPOIB_RX_FRESH];
	struct ipoib_ud rss_ud;		/* queues 1..: UD by flow (RSS) */
	struct ipoib_hca_qp *rss_qp;	/* the UD QP whose RQ that is */
	struct rte_mempool *app_mp;	/* what the application gave */
	uint16_t nb_desc;
} __rte_cache_aligned;

struct ipoib_txq_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t rc_packets;
	uint64_t rc_bytes;
	uint64_t ud_packets;
	uint64_t ud_bytes;
	uint64_t mcast_packets;
	uint64_t drop_no_neigh;
	uint64_t drop_malformed;
	uint64_t drop_too_long;
	uint64_t drop_vlan;
	uint64_t drop_refused;		/* refused by UD, not given back */
	uint64_t frags_refused;		/* fragments UD refused, freed */
	uint64_t frag_packets;		/* packets fragmented */
	uint64_t frags;			/* fragments made */
	uint64_t icmp_too_big;		/* ICMP errors given back */
	uint64_t mc_req_lost;		/* snooped joins the ring refused */
	uint64_t held;			/* to the control thread */
	uint64_t held_busy;		/* bursts that stopped, held frames */
	uint64_t held_done;		/* control thread: held ones taken */
};

struct ipoib_tx_run;

struct ipoib_txq {
	/* hot */
	struct ipoib_priv *priv;
	uint16_t (*post_send)(struct ipoib_hca_qp *qp,
			      const struct ipoib_send_wr *wr, uint16_t n);
	struct ipoib_hca_qp *ud_qp;
	struct ipoib_tx_run *run;	/* per-burst scratch */
	struct ipoib_tx_run *frag_run;	/* fragments of one frame */
	struct ipoib_peer *last_peer;	/* the last unicast destination */
	uint16_t queue_id;
	uint8_t stopped;		/* tx_queue_stop(): bursts return 0 */
	uint8_t deferred;		/* not started by dev_start */
	struct ipoib_rcu_reader rcu;	/* ipoib_rcu.h */
	uint32_t ud_qkey;		/* remote Q_Key of UD sends: priv->qkey */
	/* its counters of each peer (ipoib_peer_ctr_at()): on RC, on UD */
	struct ipoib_peer_ctr *const *peer_rc;
	struct ipoib_peer_ctr *const *peer_ud;
	struct ipoib_mc_last mc_last;	/* ipoib_mcast_snoop() */
	struct rte_mempool *frag_direct;
	struct rte_mempool *frag_indirect;
	/* counters last */
	struct ipoib_txq_stats stats;
	struct ipoib_txq_stats stats_base;
	uint16_t nb_desc;
} __rte_cache_aligned;

/* A connection (one RC QP): active (we send) or passive (we receive). */
enum ipoib_conn_state {
	IPOIB_CONN_CONNECTING,
	IPOIB_CONN_CONNECTED,
	IPOIB_CONN_DRAINING,	/* QP in error, waiting for its flushes */
};

struct ipoib_conn {
	/* read by the datapath */
	struct ipoib_hca_qp *qp;
	struct ipoib_peer *peer;
	struct ipoib_rx_ring ring;	/* non-SRQ passive: own buffers */
	uint32_t index;			/* in priv->conns[], in wr_id */
	uint32_t state;			/* enum ipoib_conn_state */
	uint8_t active;
	uint32_t qpn;			/* completions of older QPs are stale */
	/* control */
	struct ipoib_cm_id *cm_id;
	struct ipoib_pool *pool;	/* non-SRQ passive: its buffers */
	uint64_t charged;		/* bytes charged to mem_budget */
	uint64_t since_ns;
	uint64_t token;			/* RCU: when it stopped being used */
	uint64_t drain_deadline_ns;
	struct ipoib_conn *drain_next;	/* priv->draining */
};

/*
 * A connection's QP number, set by the control thread once its QP exists,
 * is how the datapath tells its completions from those of the QP the slot
 * held before: it is read while it may be written.
 */
static inline void
ipoib_conn_set_qpn(struct ipoib_conn *c, uint32_t qpn)
{
	__atomic_store_n(&c->qpn, qpn, __ATOMIC_RELEASE);
}

static inline uint32_t
ipoib_conn_qpn(const struct ipoib_conn *c)
{
	return __atomic_load_n(&c->qpn, __ATOMIC_ACQUIRE);
}

/* Control counters: one writer, the control thread. */
struct ipoib_ctrl_stats {
	uint64_t conn_established_active;
	uint64_t conn_established_passive;
	uint64_t conn_failed;
	uint64_t rej_sent[32];		/* by IBTA reason, capped */
	uint64_t rej_rcvd[32];
	uint64_t cm_timeouts;
	uint64_t retries;
	uint64_t promotions;
	uint64_t reaped;
	uint64_t evictions;
	uint64_t spills;
	uint64_t qp_errors;
	uint64_t cm_malformed;		/* all of the two below */
	uint64_t cm_short_priv;		/* REQ/REP private data < 8 bytes */
	uint64_t cm_bad_mtu;		/* REP's MTU no larger than a header */
	uint64_t drain_timeouts;	/* slow to drain: rx queue not polled */
	uint64_t peers_forgotten;	/* idle, unconnected: table entry freed */
	uint64_t pool_reuses;		/* non-SRQ: spare pools taken */
	uint64_t pools_unknown_to_eal;	/* EAL refused a pool's memory */
	uint64_t mc_joins;		/* groups attached */
	uint64_t mc_joins_refused;	/* full, or the transport refused */
	uint64_t mc_leaves;		/* groups nobody wanted, detached */
	uint64_t mc_list_refused;	/* set_mc_addr_list() refused */
	uint64_t mac_set_refused;	/* mac_addr_set() refused */
	uint64_t sec_attaches;		/* secondary processes attached */
	uint64_t sec_refused;		/* secondary attaches refused */
	uint64_t adv_no_rc;		/* ARP/NA telling a refused peer UD */
	uint64_t adv_untold;		/* refused peers we had none to send */
	uint64_t path_queries;		/* path records asked of the SA */
	uint64_t path_failures;		/* answered: no path */
	uint64_t path_timeouts;		/* not answered in time */
};

struct ipoib_mcast {
	uint8_t mgid[IPOIB_GID_LEN];
	struct ipoib_hca_ah *ah;
	bool joined;
};

struct ipoib_priv {
	struct rte_eth_dev *eth_dev;
	struct ipoib_config cfg;
	const struct ipoib_hca_ops *ops;
	struct ipoib_hca *hca;
	struct ipoib_port_attr attr;
	struct ipoib_eth_ctx eth;	/* MAC, hwaddr, P_Key for framing */
	struct ipoib_adv adv;		/* the RC flag per peer (ipoib_adv.c) */
	struct rte_ether_addr mac;
	uint16_t pkey;			/* full member */
	/* from the broadcast group's record (ipoib_mcast_bcast_join()) */
	uint16_t ud_mtu;		/* largest UD payload: MTU - 4 */
	uint32_t qkey;			/* of the UD QP and every UD send */
	uint32_t rc_buf;		/* RC receive WR bytes: MTU + 4 */
	bool srq;			/* receive mode chosen at start */
	bool started;
	bool port_active;		/* HCA port ACTIVE (control thread) */
	bool fatal;			/* transport failed: needs a reset */
	struct ipoib_hca_qp *ud_qp;
	uint32_t ud_qpn;
	uint16_t pkey_index;		/* of cfg.pkey in the port's table */
	/* dev_info's: data, since secondaries read it (never priv->ops) */
	uint64_t rss_offloads;
	/* RSS of UD receive as configured (ipoib_rss.c): hf and key */
	uint64_t rss_hf;
	struct ipoib_rss_conf rss;
	struct ipoib_ud ud;
	/* multicast: AHs to send, groups joined to receive */
	struct ipoib_mcast mcast[IPOIB_MCAST_MAX];
	unsigned int nr_mcast;
	rte_spinlock_t mcast_lock;
	struct ipoib_mc *mc;		/* groups received (ipoib_mcast.c) */
	uint32_t ptype_mask;		/* rte_eth_dev_set_ptypes() */
	struct ipoib_hca_ah *lpbk_ah;	/* lpbk_mode: to our own UD QP */
	bool closing;			/* dev_close began: no secondary */
	struct ipoib_peers pt;
	/* connections */
	struct ipoib_conn **conns;	/* by index; NULL: free */
	/* the connections, a chunk at a time as needed (ipoib_conn.c) */
	struct ipoib_conn **conn_chunk;
	uint32_t nr_conn_slots;		/* in chunks */
	uint32_t nr_conns_max;		/* 2 x max_conns, + draining */
	uint32_t conn_cursor;
	uint32_t nr_active, nr_passive;	/* CONNECTING + CONNECTED */
	uint64_t mem_used;		/* bytes charged to mem_budget */
	struct rte_ring *connect_req;	/* peers the datapath wants on RC */
	uint64_t next_sample_ns;
	uint64_t next_tick_ns;
	uint32_t nr_spilled;		/* peers in SPILLED */
	uint32_t nr_draining;		/* connections in DRAINING */
	struct ipoib_conn *draining;	/* those, linked by drain_next */
	struct ipoib_pool spare_pools[4];	/* idle, for the next conn */
	uint32_t nr_spare_pools;
	uint64_t spare_bytes;		/* their fabric memory */
	uint64_t spare_used_ns;		/* last kept or taken */
	uint64_t srq_limit_events;
	uint64_t port_down_events;
	/* control thread */
	rte_thread_t ctrl_thread;
	bool ctrl_running;
	bool ctrl_stop;			/* atomic */
	bool stopping;			/* no new connections */
	pthread_mutex_t ctrl_lock;	/* telemetry and API readers */
	struct ipoib_ctrl_stats cstats;
	struct ipoib_ctrl_stats cstats_base;
	struct ipoib_hca_stats hstats_base;
	struct rte_ring *loopback;	/* ICMP errors for the rx side */
	uint32_t loopback_gen;		/* ipoib_ring_give() of loopback */
	/* frames held for the control thread (ipoib_tx_held.c) */
	struct rte_ring *held;		/* of struct ipoib_held */
	/* frames the control thread holds until their paths come */
	struct rte_ring *held_wait;	/* of struct ipoib_held */
	struct ipoib_paths paths;	/* path records asked (ipoib_path.c) */
	struct ipoib_txq *ctrl_txq;	/* it sends them as this queue */
	uint32_t held_gen;		/* ipoib_ring_give() of held */
	/*
	 * Unicast frames held before their destination was a peer (struct
	 * ipoib_held.anon), not sent yet: in all (read by every unicast
	 * frame's route, written only by such holds) and by bucket of their
	 * destination MAC (ipoib_held_anon_bucket()). A burst that meets a
	 * peer ready while its bucket counts any holds the frame behind them,
	 * counted with the peer: it may be behind them.
	 */
	uint32_t held_anon __rte_cache_aligned;
	uint16_t held_anon_mac[IPOIB_HELD_ANON_BUCKETS];
	/* a MAC the subnet did not know, not asked again for a while */
	uint64_t neg_mac;		/* ipoib_neg_key(), 0: none */
	uint64_t neg_tsc;
	/* memory accounting (ipoib_mem.h) */
	struct ipoib_mem acct;
	void **acct_rxq_arr;		/* ethdev's queue arrays, replaced */
	void **acct_txq_arr;		/* where they are measured */
	int64_t acct_rxq_arr_bytes;
	int64_t acct_txq_arr_bytes;
	uint32_t nr_conns;		/* connection slots in use */
};

/* ipoib_port.c: the port's life with its HCA */
int ipoib_port_open(struct ipoib_priv *priv, const char *name);
void ipoib_port_close(struct ipoib_priv *priv);
/* ipoib_mcast.c: a group's AH to send to, made by the control thread */
struct ipoib_hca_ah *ipoib_mcast_ah(struct ipoib_priv *priv,
				    const uint8_t *mgid);
/* Any thread: the group's AH if it has been made, else NULL. */
struct ipoib_hca_ah *ipoib_mcast_ah_find(struct ipoib_priv *priv,
					 const uint8_t *mgid);


/* ipoib_rx_srq.c / ipoib_rx_nosrq.c: the two receive bursts */
uint16_t ipoib_rx_burst_srq(void *q, struct rte_mbuf **pkts, uint16_t n);
uint16_t ipoib_rx_burst_nosrq(void *q, struct rte_mbuf **pkts, uint16_t n);

/* ipoib_tx.c */
int ipoib_txq_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		    unsigned int socket);
void ipoib_txq_release(struct rte_eth_dev *dev, uint16_t qid);
uint16_t ipoib_tx_burst(void *q, struct rte_mbuf **pkts, uint16_t n);

/* ipoib_conn.c: the connection manager (control thread) */
int ipoib_conns_init(struct ipoib_priv *priv);
void ipoib_conns_fini(struct ipoib_priv *priv);
void ipoib_conn_request(struct ipoib_priv *priv, struct ipoib_peer *peer);
void ipoib_conn_handle_cm(struct ipoib_priv *priv,
			  const struct ipoib_cm_event *ev);
int ipoib_conn_listen(struct ipoib_priv *priv);

/* ipoib_spill.c: the spill policy (control thread timers) */
void ipoib_conn_timers(struct ipoib_priv *priv, uint64_t now);
void ipoib_peers_reset_pending(struct ipoib_priv *priv);

/* ipoib_ctrl.c: the control thread */
int ipoib_ctrl_start(struct ipoib_priv *priv);
void ipoib_ctrl_stop(struct ipoib_priv *priv);

/*
 * Tx queue i for counting: the port's, then (i == nb_tx_queues) the
 * control thread's (ipoib_tx_held.c); NULL where there is none.
 */
static inline struct ipoib_txq *
ipoib_txq_nth(const struct rte_eth_dev *dev, uint16_t i)
{
	const struct ipoib_priv *priv = dev->data->dev_private;

	return i < dev->data->nb_tx_queues ? dev->data->tx_queues[i] :
	       priv->ctrl_txq;
}

/* The port's rx and tx queues: the readers of its RCU. */
static inline uint32_t
ipoib_nb_readers(const struct rte_eth_dev_data *d)
{
	return (uint32_t)d->nb_rx_queues + d->nb_tx_queues;
}

/*
 * Reader i (< ipoib_nb_readers()): rx queue i, then the tx queues; NULL
 * for a queue not set up.
 */
static inline struct ipoib_rcu_reader *
ipoib_reader_nth(const struct rte_eth_dev_data *d, uint32_t i)
{
	if (i < d->nb_rx_queues)
		return d->rx_queues[i] == NULL ? NULL :
		       &((struct ipoib_rxq *)d->rx_queues[i])->rcu;
	i -= d->nb_rx_queues;
	return d->tx_queues[i] == NULL ? NULL :
	       &((struct ipoib_txq *)d->tx_queues[i])->rcu;
}

/* Take over every queue of the port from the threads that used it last. */
static inline void
ipoib_queues_enter(const struct rte_eth_dev_data *d)
{
	const struct ipoib_rcu_reader *r;
	uint32_t i;

	for (i = 0; i < ipoib_nb_readers(d); i++)
		if ((r = ipoib_reader_nth(d, i)) != NULL)
			ipoib_rcu_handoff(r);
}

#endif /* IPOIB_CM_H */
