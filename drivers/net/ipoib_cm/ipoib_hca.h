/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_HCA_H
#define IPOIB_HCA_H

/*
 * The HCA interface: the one ops table between the driver and a transport
 * (the shm software fabric, rdma-core verbs), with the transport's devargs
 * and, apart, its test hooks (struct ipoib_hca_test_ops). Nothing above it
 * knows which transport runs. Types shared with the fabric are in
 * ipoib_hca_types.h. It follows the verbs model, batched:
 *
 * - Receive buffers are posted as scatter lists in memory the transport
 *   allocated (mem_alloc), into an SRQ or a QP's own receive queue; each
 *   consumed buffer yields one completion on the CQ the QP was created with.
 *   A UD receive starts with the 40-byte GRH, as on a real HCA.
 * - Sends take mbuf chains (IPoIB header included) and their ownership: the
 *   transport frees them once the send has completed, or at once if it
 *   refuses them. post_send returns how many it took, in order.
 * - Control (CM messages, async events) is polled by one control thread.
 *
 * Datapath calls (post_send, post_recv, poll_cq) may be made concurrently
 * on different objects; one CQ, SRQ or receive queue has one poller/poster.
 * post_send on one QP may come from several lcores at once.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "ipoib_devargs.h"
#include "ipoib_hca_types.h"

struct ipoib_hca;	/* one port of one transport */
struct ipoib_hca_cq;
struct ipoib_hca_srq;
struct ipoib_hca_qp;
struct ipoib_hca_ah;	/* UD address handle */
struct ipoib_hca_test_ops;

/* Port attributes, as ibv_query_port/ibv_query_device would give them. */
struct ipoib_port_attr {
	uint8_t gid[IPOIB_GID_LEN];
	uint16_t lid;
	uint16_t ib_mtu;		/* bytes: 256 .. 4096 */
	bool active;			/* port state ACTIVE */
	bool has_srq;
	uint16_t npkeys;
	uint16_t pkeys[IPOIB_PKEY_TABLE_LEN];
	uint32_t max_qp;
	uint32_t max_qp_wr;
	uint32_t max_srq_wr;
	uint32_t max_cqe;
	uint32_t max_sge;		/* of a QP's own receive queue */
	uint32_t max_srq_sge;		/* of an SRQ */
	uint32_t link_speed;		/* RTE_ETH_SPEED_NUM_* */
	/*
	 * A peer's REQ to our IPoIB service IDs reaches our CM: only then
	 * does the port advertise connected mode in its address.
	 */
	bool cm_reachable;
	/*
	 * A unicast address handle needs the destination's LID and SL from
	 * a path record (InfiniBand): the port asks path_query() for them
	 * before ah_create(). False: ah_create() finds the route itself
	 * (RoCE, and the shm fabric unless shm_sa_path=on).
	 */
	bool path_records;
	const char *name;		/* device name for logs: "shm:lab/3" */
};

/* Memory the transport can receive into (and, for verbs, send from). */
struct ipoib_hca_mem {
	void *addr;
	size_t len;
	size_t size;			/* what the transport took for it */
	uint32_t lkey;
	void *priv;			/* transport's own handle */
};

enum ipoib_qp_type {
	IPOIB_QPT_RC,
	IPOIB_QPT_UD,
};

enum ipoib_qp_state {
	IPOIB_QPS_INIT,
	IPOIB_QPS_RTR,		/* receives; passive side after REP sent */
	IPOIB_QPS_RTS,		/* sends and receives */
	IPOIB_QPS_ERR,		/* flushed: every posted receive completes */
};

struct ipoib_qp_init {
	enum ipoib_qp_type type;
	struct ipoib_hca_cq *recv_cq;
	struct ipoib_hca_srq *srq;	/* NULL: the QP has its own RQ */
	uint32_t max_recv_wr;		/* own RQ only */
	uint32_t max_send_wr;
	uint32_t max_recv_sge;
	uint16_t pkey_index;
	uint32_t qkey;			/* UD */
	uint32_t qp_context;		/* returned in async events */
};

/* Send work request: one mbuf chain, IPoIB header first. */
struct ipoib_send_wr {
	struct rte_mbuf *m;
	const struct ipoib_hca_ah *ah;	/* UD only */
	uint32_t remote_qpn;		/* UD only */
	uint32_t remote_qkey;		/* UD only */
};

/* Address of a destination: GID always, LID where the fabric routes on it. */
struct ipoib_ah_attr {
	uint8_t dgid[IPOIB_GID_LEN];
	uint16_t dlid;			/* 0: the transport finds it */
	uint8_t sl;			/* with dlid: from the path record */
	bool multicast;
};

/*
 * What the subnet administrator answered a path query with (PathRecord,
 * IBTA 15.2.5.16): the fields an address handle needs.
 */
struct ipoib_path_rec {
	uint64_t cookie;		/* the query's */
	int status;			/* 0, or a negative errno: no path */
	uint16_t dlid;
	uint8_t sl;
};

/*
 * What the subnet administrator answered a join with: the group's
 * MCMemberRecord (IBTA 15.2.5.17), the fields the port takes from it.
 */
struct ipoib_mc_rec {
	uint32_t qkey;
	uint16_t mtu;			/* bytes: 256 .. 4096 */
	uint16_t mlid;
};

/* Connection management, at the level of librdmacm / ib_cm events
 * (enum ipoib_cm_event_type, ipoib_hca_types.h).
 */
struct ipoib_cm_id;	/* one connection attempt or connection */

struct ipoib_cm_event {
	enum ipoib_cm_event_type type;
	struct ipoib_cm_id *id;
	void *context;			/* given at connect / accept */
	uint64_t service_id;
	uint8_t remote_gid[IPOIB_GID_LEN];
	uint16_t remote_lid;
	uint32_t remote_qpn;		/* the peer's RC QP */
	uint16_t pkey;
	uint16_t reason;		/* REJ */
	uint8_t priv_len;
	uint8_t priv[IPOIB_CM_PRIV_MAX];
};

struct ipoib_cm_connect {
	uint64_t service_id;
	struct ipoib_ah_attr dest;
	struct ipoib_hca_qp *qp;	/* RC, in INIT */
	void *context;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t max_cm_retries;
	uint8_t cm_response_timeout;	/* REP wait, 4.096 us << it; 0: default */
	uint8_t responder_resources;
	uint8_t priv_len;
	const uint8_t *priv;
};

enum ipoib_async_event_type {
	IPOIB_EVENT_QP_FATAL,		/* QP went to error */
	IPOIB_EVENT_SRQ_LIMIT,		/* SRQ fell below its limit */
	IPOIB_EVENT_PORT_ACTIVE,
	IPOIB_EVENT_PORT_DOWN,
	IPOIB_EVENT_DEVICE_FATAL,	/* the transport is gone: reset */
};

struct ipoib_async_event {
	enum ipoib_async_event_type type;
	uint32_t qp_context;		/* QP events */
	uint32_t qp_num;
	struct ipoib_hca_srq *srq;	/* SRQ events */
};

/* Transport counters, reported among the port's xstats. */
struct ipoib_hca_stats {
	uint64_t rnr_naks;		/* RC sends refused: receiver had no WR */
	uint64_t ud_no_wr;		/* UD messages dropped: no posted WR */
	uint64_t pkey_drops;		/* refused: P_Key mismatch */
	uint64_t qkey_drops;		/* refused: Q_Key mismatch */
	uint64_t len_errs;		/* longer than the posted buffer */
	uint64_t fault_drops;		/* dropped by fault injection */
	uint64_t cm_retries;		/* CM messages resent after timeout */
	uint64_t cm_drops;		/* CM messages dropped: malformed, or
					 * a REP for no REQ of the port's */
	uint64_t link_down_drops;	/* sends dropped: the link was down */
	/* a gauge, not a counter: transport memory the HCA's own queues
	 * take (shm: CQs, receive queues, CM ring in the arena; verbs: 0,
	 * the provider library does not say)
	 */
	uint64_t mem_bytes;
};

struct ipoib_hca_ops {
	const char *name;

	/*
	 * The transport's devargs, parsed into its part of struct
	 * ipoib_config after the port's own keys; its defaults set there
	 * first; a description of them for the configuration's log line.
	 */
	const struct ipoib_arg *args;
	unsigned int nb_args;
	void (*config_defaults)(struct ipoib_config *cfg);
	void (*config_describe)(const struct ipoib_config *cfg, char *buf,
				size_t len);

	/* Open the port named by the devargs; close releases everything. */
	int (*open)(const struct ipoib_config *cfg, const char *dev_name,
		    struct ipoib_hca **hca);
	void (*close)(struct ipoib_hca *hca);
	int (*query_port)(struct ipoib_hca *hca, struct ipoib_port_attr *attr);

	int (*mem_alloc)(struct ipoib_hca *hca, size_t len,
			 struct ipoib_hca_mem *mem);
	void (*mem_free)(struct ipoib_hca *hca, struct ipoib_hca_mem *mem);

	struct ipoib_hca_cq *(*cq_create)(struct ipoib_hca *hca,
					  uint32_t cqe);
	int (*cq_destroy)(struct ipoib_hca_cq *cq);
	/* Datapath: up to n receive completions, in order. */
	uint16_t (*poll_cq)(struct ipoib_hca_cq *cq, struct ipoib_wc *wc,
			    uint16_t n);
	/* Completions waiting on cq, for rx_queue_count; NULL: unknown. */
	uint32_t (*cq_count)(struct ipoib_hca_cq *cq);

	struct ipoib_hca_srq *(*srq_create)(struct ipoib_hca *hca,
					    uint32_t max_wr, uint32_t max_sge,
					    uint32_t limit);
	int (*srq_destroy)(struct ipoib_hca_srq *srq);
	int (*srq_arm)(struct ipoib_hca_srq *srq, uint32_t limit);
	/* Datapath: post n receive WRs; returns how many were posted. */
	uint16_t (*post_srq_recv)(struct ipoib_hca_srq *srq,
				  const struct ipoib_recv_wr *wr, uint16_t n);

	struct ipoib_hca_qp *(*qp_create)(struct ipoib_hca *hca,
					  const struct ipoib_qp_init *init);
	/* Flushes what is posted (completions with WR_FLUSH_ERR) first. */
	int (*qp_destroy)(struct ipoib_hca_qp *qp);
	uint32_t (*qp_num)(const struct ipoib_hca_qp *qp);
	/*
	 * UD: INIT -> RTS. RC moves with the CM calls. ERR from any: every
	 * posted receive completes flushed, but that one posted by a thread
	 * racing with the move may wait for qp_flush_settle().
	 */
	int (*qp_modify)(struct ipoib_hca_qp *qp, enum ipoib_qp_state state);
	/*
	 * After qp_modify(ERR), once every thread that posts to qp's receive
	 * queue has passed a point ordered after the move (a grace period of
	 * the port's RCU, or the queues taken over at stop): what a post
	 * racing with the move left completes flushed too. The shm fabric
	 * flushes without a fence (shm_queue.c); an HCA needs nothing here.
	 */
	void (*qp_flush_settle)(struct ipoib_hca_qp *qp);
	uint16_t (*post_recv)(struct ipoib_hca_qp *qp,
			      const struct ipoib_recv_wr *wr, uint16_t n);
	/* Datapath: send n WRs; takes ownership of the mbufs it accepts. */
	uint16_t (*post_send)(struct ipoib_hca_qp *qp,
			      const struct ipoib_send_wr *wr, uint16_t n);

	/*
	 * UD QP ud: spread what arrives for it by flow over the receive
	 * queues and CQs of the n UD QPs qps, ud among them, as an HCA's
	 * RSS spreads over receive work queues: by conf (struct
	 * ipoib_rss_conf), the hash modulo n; anything else stays on ud's.
	 * n < 2 stops it; n <= IPOIB_MAX_QUEUES. NULL: the transport cannot
	 * (everything arrives on ud's own receive queue).
	 */
	int (*ud_rss_set)(struct ipoib_hca_qp *ud,
			  struct ipoib_hca_qp *const *qps, uint16_t n,
			  const struct ipoib_rss_conf *conf);

	struct ipoib_hca_ah *(*ah_create)(struct ipoib_hca *hca,
					  const struct ipoib_ah_attr *attr);
	void (*ah_destroy)(struct ipoib_hca_ah *ah);

	int (*mcast_attach)(struct ipoib_hca_qp *qp, const uint8_t *mgid);
	int (*mcast_detach)(struct ipoib_hca_qp *qp, const uint8_t *mgid);
	/*
	 * Control context: join group mgid of partition pkey as a full
	 * member through the subnet administrator. The query is posted and
	 * returns at once; the answer comes from mc_join_poll() later: 1
	 * and the group's record, the SA's refusal (negative errno), or 0
	 * while none has come. One join at a time. NULL (both), or
	 * mc_join() -EOPNOTSUPP (a port without a subnet administrator,
	 * RoCE): the port keeps the defaults (ipoib_mcast_bcast_join()).
	 * The record's mtu may be 0: the transport could not learn it (the
	 * port's MTU is used).
	 */
	int (*mc_join)(struct ipoib_hca *hca, const uint8_t *mgid,
		       uint16_t pkey);
	int (*mc_join_poll)(struct ipoib_hca *hca, struct ipoib_mc_rec *rec);
	/*
	 * Control context, where the port attributes say path_records: ask
	 * the subnet administrator for the path to dgid in partition pkey.
	 * Returns at once: 0 (asked), or a negative errno (-ENOSPC: too
	 * many outstanding, ask again later). The answer, with the cookie,
	 * comes from path_poll() later: up to n of them, 0 while none has
	 * come. A query lost on the way never answers: the caller times it
	 * out. ctrl_wait() wakes for an answer.
	 */
	int (*path_query)(struct ipoib_hca *hca, const uint8_t *dgid,
			  uint16_t pkey, uint64_t cookie);
	int (*path_poll)(struct ipoib_hca *hca, struct ipoib_path_rec *rec,
			 int n);

	/* CM: all calls from the control thread. */
	int (*cm_listen)(struct ipoib_hca *hca, uint64_t service_id);
	int (*cm_connect)(struct ipoib_hca *hca,
			  const struct ipoib_cm_connect *param,
			  struct ipoib_cm_id **id);
	/* Passive: accept a REQ with this QP (INIT); the QP goes to RTR. */
	int (*cm_accept)(struct ipoib_cm_id *id, struct ipoib_hca_qp *qp,
			 void *context, const uint8_t *priv, uint8_t priv_len);
	/* Active: after REP, move the QP to RTS and send RTU. */
	int (*cm_rtu)(struct ipoib_cm_id *id);
	int (*cm_reject)(struct ipoib_cm_id *id, uint16_t reason,
			 const uint8_t *priv, uint8_t priv_len);
	/*
	 * Send DREQ. The driver destroys the id right after, as Linux does
	 * with ib_destroy_cm_id(): no DREP or IPOIB_CM_DISCONNECTED is awaited.
	 */
	int (*cm_disconnect)(struct ipoib_cm_id *id);
	/* Forget the id; after a final event or after disconnect. */
	void (*cm_destroy)(struct ipoib_cm_id *id);
	/* Progress timers and messages; return up to n events. */
	int (*cm_poll)(struct ipoib_hca *hca, struct ipoib_cm_event *ev, int n);
	/*
	 * The control thread's sleep: until a CM message or an async event
	 * may be there, ctrl_wake() is called, or timeout_ns passes. It may
	 * return early; it never holds an event back.
	 */
	void (*ctrl_wait)(struct ipoib_hca *hca, uint64_t timeout_ns);
	/* Cut a ctrl_wait() short; any thread, the datapath included. */
	void (*ctrl_wake)(struct ipoib_hca *hca);

	int (*async_poll)(struct ipoib_hca *hca, struct ipoib_async_event *ev,
			  int n);
	void (*stats_get)(struct ipoib_hca *hca, struct ipoib_hca_stats *st);

	/* Test hooks: NULL for a transport without any. */
	const struct ipoib_hca_test_ops *test;
};

/*
 * What a transport offers tests, not production; every hook optional
 * (NULL). A subnet directory lets applications that never ARP (testpmd)
 * reach each other: publish this port's Ethernet-emulation address, find
 * the hardware address that published mac. Fault injection changes what
 * the port receives.
 */
struct ipoib_hca_test_ops {
	int (*addr_publish)(struct ipoib_hca *hca, const uint8_t *mac,
			    uint32_t ud_qpn, uint8_t flags);
	int (*addr_resolve)(struct ipoib_hca *hca, const uint8_t *mac,
			    uint8_t *hwaddr);
	int (*faults_set)(struct ipoib_hca *hca,
			  const struct ipoib_faults *fl);
	int (*faults_get)(struct ipoib_hca *hca, struct ipoib_faults *fl);
};

/*
 * Free mbufs a transport has sent (copied out, or completed). The common
 * one, a single direct segment nobody else references, goes back to its
 * pool with the others of that pool in one rte_mempool_put_bulk(); any
 * other through rte_pktmbuf_free(). What rte_pktmbuf_free_bulk() does,
 * without its per-segment walk for the common mbuf. Each is given to
 * ipoib_hca_free_one() after ipoib_hca_free_start(), then
 * ipoib_hca_free_end() puts what it kept.
 */
struct ipoib_hca_freer {
	struct rte_mempool *mp;
	unsigned int np;
	void *put[64];
};

/* Not an initializer: that would clear put[] (a memset per call). */
static __rte_always_inline void
ipoib_hca_free_start(struct ipoib_hca_freer *b)
{
	b->mp = NULL;
	b->np = 0;
}

static __rte_always_inline void
ipoib_hca_free_one(struct ipoib_hca_freer *b, struct rte_mbuf *m)
{
	typedef uint64_t __attribute__((__may_alias__)) u64_alias;
	uint64_t w;

	/*
	 * refcnt and nb_segs both 1, from one atomic load (refcnt's reads
	 * are) of the aligned word data_off, refcnt, nb_segs, port: in
	 * either byte order its middle 32 bits are 1 << 16 | 1 then.
	 * 2 instructions a frame fewer than three loads (callgrind).
	 */
	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, data_off) % 8 != 0 ||
			 offsetof(struct rte_mbuf, refcnt) !=
			 offsetof(struct rte_mbuf, data_off) + 2 ||
			 offsetof(struct rte_mbuf, nb_segs) !=
			 offsetof(struct rte_mbuf, data_off) + 4);
	w = __atomic_load_n((const u64_alias *)(const void *)&m->data_off,
			    __ATOMIC_RELAXED);
	if (unlikely((uint32_t)(w >> 16) != (UINT32_C(1) << 16 | 1) ||
		     !RTE_MBUF_DIRECT(m))) {
		rte_pktmbuf_free(m);
		return;
	}
	if (unlikely(m->pool != b->mp || b->np == RTE_DIM(b->put))) {
		if (b->np > 0)
			rte_mempool_put_bulk(b->mp, b->put, b->np);
		b->np = 0;
		b->mp = m->pool;
	}
	b->put[b->np++] = m;
}

static __rte_always_inline void
ipoib_hca_free_end(struct ipoib_hca_freer *b)
{
	if (b->np > 0)
		rte_mempool_put_bulk(b->mp, b->put, b->np);
}

static inline void
ipoib_hca_free_sent(struct rte_mbuf **pkts, uint16_t n)
{
	struct ipoib_hca_freer b;
	uint16_t i;

	ipoib_hca_free_start(&b);

	for (i = 0; i < n; i++)
		ipoib_hca_free_one(&b, pkts[i]);
	ipoib_hca_free_end(&b);
}

extern const struct ipoib_hca_ops ipoib_hca_shm_ops;
extern const struct ipoib_hca_ops ipoib_hca_verbs_ops;

#endif /* IPOIB_HCA_H */
