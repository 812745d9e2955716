/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_VERBS_H
#define IPOIB_VERBS_H

/*
 * The verbs transport (transport=verbs): the HCA interface over rdma-core.
 * ipoib_verbs_port.c has the device, its port and events, and the ops
 * table; ipoib_verbs_mr.c memory registration; ipoib_verbs_qp.c the
 * queues; ipoib_verbs_dp.c the datapath; ipoib_verbs_cm.c connection
 * management through librdmacm, ipoib_verbs_cm_param.c what it decides
 * without a device; ipoib_verbs_addr.c addresses, multicast
 * and the synchronous path record; ipoib_verbs_sa.c the asynchronous
 * subnet administrator queries (path records, the broadcast group's
 * join); ipoib_verbs_dir.c the test-only address directory. This header
 * is what they share; besides them only the unit test of the InfiniBand
 * code (app/test-ipoibcm/test_verbs_ib.c) includes it.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "ipoib_hca.h"

#define IPOIB_VERBS_MR_MAX	1024	/* registered regions per port */
#define IPOIB_VERBS_MCAST_MAX	32	/* multicast groups joined */
#define IPOIB_VERBS_LISTEN_MAX	4	/* service IDs listened on */
#define IPOIB_VERBS_PEND_MAX	16	/* CM failures not from the fabric */
#define IPOIB_VERBS_SEND_SGE	16	/* mbuf segments per send */
#define IPOIB_VERBS_INLINE	128	/* bytes sent inline (copied) */
#define IPOIB_VERBS_SQ_MAX	2048	/* send WRs per QP, at most */
#define IPOIB_VERBS_SIGNAL	32	/* a signalled send every so many */
#define IPOIB_VERBS_REAP_NS	1000000	/* idle send queues reaped so often */
#define IPOIB_VERBS_QPN_EMPTY	0ULL
#define IPOIB_VERBS_QPN_TOMB	UINT64_MAX
#define IPOIB_VCM_TIMEOUT_MS	2000	/* address and route resolution */
#define IPOIB_VERBS_PATH_MAX	64	/* path queries outstanding */
#define IPOIB_VCM_ROCE_RETRY	7	/* transport retries on Ethernet */
#define IPOIB_VCM_ROCE_QP_MASK	0xe00000 /* librdmacm: RoCE-only bits */
#define IPOIB_VCM_REJ_PRIV_LEN	4	/* "IPR" <reason> */

/*
 * One registered region: an MR and the address range it covers. Readers
 * (any lcore, on every send) go lock-free: seq is odd while the entry is
 * rewritten, a seqcount.
 */
struct ipoib_verbs_mr {
	uint32_t seq;
	uint32_t lkey;
	uintptr_t start;
	uintptr_t end;			/* 0: free */
	struct ibv_mr *mr;		/* control: NULL when free */
	const void *owner;		/* the mempool, NULL for mem_alloc */
};

/* A multicast group the UD QP receives (see ipoib_verbs_addr.c). */
struct ipoib_verbs_mcast {
	uint8_t mgid[IPOIB_GID_LEN];	/* as the driver names it */
	union ibv_gid fabric_gid;	/* as the fabric routes it */
	uint16_t mlid;
	uint32_t ipv4;			/* RoCE: the IPv4 group, host order */
	struct rdma_cm_id *id;		/* the join */
	bool attached;
};

/* A QP and what the transport keeps for it. */
struct ipoib_hca_qp {
	struct ibv_qp *qp;
	struct ipoib_hca *hca;
	struct ibv_cq *send_cq;		/* ours: completions free mbufs */
	enum ipoib_qp_type type;
	uint32_t qp_context;
	uint32_t slot;			/* in hca->qps[] */
	/* send ring: mbufs in flight, freed when their completion passes */
	rte_spinlock_t sq_lock;		/* post_send may come from any lcore */
	struct rte_mbuf **sq;		/* sq_size slots */
	uint32_t sq_size;		/* power of two */
	uint32_t sq_head;		/* next slot to fill */
	uint32_t sq_tail;		/* oldest slot in flight */
	uint32_t max_inline;
	uint32_t max_sge;
	int32_t mr_hint;		/* the MR the last segment was in */
	uint8_t fatal_reported;		/* atomic */
	/* UD on RoCE: the first buffer of each posted WR, in post order */
	uint64_t *rq_addr;
	uint32_t rq_size;		/* power of two */
	uint32_t rq_head, rq_tail;
	struct ipoib_cm_id *cm;		/* the connection using it (COMM_EST) */
};

struct ipoib_hca_cq {
	struct ibv_cq *cq;
	struct ipoib_hca *hca;
};

struct ipoib_hca_srq {
	struct ibv_srq *srq;
	struct ipoib_hca *hca;
};

struct ipoib_hca_ah {
	struct ibv_ah *ah;
};

struct ipoib_hca {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t port;
	uint8_t gid_index;
	bool roce;			/* Ethernet link layer */
	uint16_t lid;
	uint16_t pkey;			/* the port's P_Key (devarg) */
	union ibv_gid gid;
	uint32_t gid_type;		/* enum ibv_gid_type */
	uint32_t ndev_ifindex;
	struct ibv_device_attr dattr;
	char dev_name[IBV_SYSFS_NAME_MAX];
	char name[80];			/* for logs: "verbs:rxe0/1" */
	/* QPs by number: an open-addressing table of qpn << 32 | slot */
	uint64_t *qpn_tab;
	uint32_t qpn_mask;
	struct ipoib_hca_qp **qps;	/* by slot */
	uint32_t nr_qps_max;
	rte_spinlock_t qp_lock;		/* writers of the two tables */
	/* registered memory */
	struct ipoib_verbs_mr mrs[IPOIB_VERBS_MR_MAX];
	uint32_t nr_mrs;		/* entries in use or used, atomic */
	rte_spinlock_t mr_lock;		/* writers */
	bool mempool_cb;
	/* QP errors seen on send completions, for async_poll */
	struct rte_ring *fatal;
	uint64_t sq_reap_ns;		/* control: last ipoib_verbs_sq_reap_idle() */
	/* connection management (ipoib_verbs_cm.c) */
	struct rdma_event_channel *ch;
	int wake_fd;			/* eventfd: ctrl_wake() */
	struct ipoib_cm_id *listen[IPOIB_VERBS_LISTEN_MAX];
	unsigned int nr_listen;
	struct ipoib_cm_id *ids;	/* connections, for close */
	struct ipoib_cm_id *pend[IPOIB_VERBS_PEND_MAX];	/* failed at once */
	unsigned int nr_pend;
	struct ipoib_verbs_mcast mcast[IPOIB_VERBS_MCAST_MAX];
	unsigned int nr_mcast;		/* atomic: read by poll_cq */
	/* SA queries (ipoib_verbs_sa.c): NULL until the first */
	struct ipoib_verbs_sa *sa;
	/* subnet directory file of this port (addr_publish) */
	char dir_file[256];
	/* counters */
	uint64_t len_errs;		/* atomic */
	uint64_t send_drops;		/* atomic: unregistrable, too long */
	uint64_t send_errors;		/* atomic: error send completions */
};

/* The IPv4 address a RoCE v2 GID stands for (::ffff:a.b.c.d), or 0. */
static inline uint32_t
ipoib_verbs_gid_ipv4(const uint8_t *gid)
{
	static const uint8_t v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					0xff, 0xff };
	unsigned int i;

	for (i = 0; i < sizeof(v4); i++)
		if (gid[i] != v4[i])
			return 0;
	return (uint32_t)gid[12] << 24 | (uint32_t)gid[13] << 16 |
	       (uint32_t)gid[14] << 8 | gid[15];
}

/* The port's link layer is Ethernet: RoCE. Else (and unspecified) IB. */
static inline bool
ipoib_verbs_link_roce(uint8_t link_layer)
{
	return link_layer == IBV_LINK_LAYER_ETHERNET;
}

/*
 * A QP records its receive buffers in post order (rq_addr), for the GRH
 * rewrite of ipoib_verbs_wc_one(): UD on RoCE only.
 */
static inline bool
ipoib_verbs_qp_rq_track(const struct ipoib_hca *hca, enum ipoib_qp_type type)
{
	return type == IPOIB_QPT_UD && hca->roce;
}

static __rte_always_inline uint8_t
ipoib_verbs_wc_status(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_SUCCESS: return IPOIB_WC_SUCCESS;
	case IBV_WC_LOC_LEN_ERR: return IPOIB_WC_LOC_LEN_ERR;
	case IBV_WC_WR_FLUSH_ERR: return IPOIB_WC_WR_FLUSH_ERR;
	default: return IPOIB_WC_GENERAL_ERR;
	}
}

static inline uint32_t
ipoib_verbs_qpn_hash(uint32_t qpn)
{
	return qpn * 0x9e3779b1u;
}

/* Datapath: the QP a completion names, or NULL. */
static __rte_always_inline struct ipoib_hca_qp *
ipoib_verbs_qp_lookup(struct ipoib_hca *hca, uint32_t qpn)
{
	uint32_t i = ipoib_verbs_qpn_hash(qpn) & hca->qpn_mask, n;

	for (n = 0; n <= hca->qpn_mask; n++, i = (i + 1) & hca->qpn_mask) {
		uint64_t e = __atomic_load_n(&hca->qpn_tab[i],
					     __ATOMIC_ACQUIRE);

		if (e == IPOIB_VERBS_QPN_EMPTY)
			return NULL;
		if (e != IPOIB_VERBS_QPN_TOMB && (uint32_t)(e >> 32) == qpn)
			return __atomic_load_n(&hca->qps[(uint32_t)e],
					       __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Read entry i consistently: its range and lkey, or false if free. */
static __rte_always_inline bool
ipoib_verbs_mr_read(const struct ipoib_verbs_mr *e, uintptr_t *start,
		    uintptr_t *end, uint32_t *lkey)
{
	uint32_t s1, s2;

	do {
		s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
		if (unlikely(s1 & 1)) {
			rte_pause();
			continue;
		}
		*start = __atomic_load_n(&e->start, __ATOMIC_RELAXED);
		*end = __atomic_load_n(&e->end, __ATOMIC_RELAXED);
		*lkey = __atomic_load_n(&e->lkey, __ATOMIC_RELAXED);
		/* pairs with the release in ipoib_verbs_mr_write() */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
		if (s1 == s2)
			return *end != 0;
	} while (true);
	return false;
}

/* The lkey of [a, a + len), or -1; hint is tried first and updated. */
static __rte_always_inline int64_t
ipoib_verbs_mr_find(struct ipoib_hca *hca, uintptr_t a, uint32_t len,
		    int32_t *hint)
{
	uint32_t n = __atomic_load_n(&hca->nr_mrs, __ATOMIC_ACQUIRE), i, lkey;
	uintptr_t s, e;

	if (likely(*hint >= 0) &&
	    ipoib_verbs_mr_read(&hca->mrs[*hint], &s, &e, &lkey) &&
	    a >= s && a + len <= e)
		return lkey;
	for (i = 0; i < n; i++) {
		if (ipoib_verbs_mr_read(&hca->mrs[i], &s, &e, &lkey) &&
		    a >= s && a + len <= e) {
			*hint = (int32_t)i;
			return lkey;
		}
	}
	return -1;
}

/* ipoib_verbs_mr.c: registered memory */
void ipoib_verbs_sge_layout(void);
void ipoib_verbs_mr_del(struct ipoib_verbs_mr *e);
int ipoib_verbs_mr_register_mbuf(struct ipoib_hca *hca, struct rte_mbuf *m);
void ipoib_verbs_mempool_event(enum rte_mempool_event event,
			       struct rte_mempool *mp, void *arg);
int ipoib_verbs_mem_alloc(struct ipoib_hca *hca, size_t len,
			  struct ipoib_hca_mem *mem);
void ipoib_verbs_mem_free(struct ipoib_hca *hca, struct ipoib_hca_mem *mem);

/* ipoib_verbs_qp.c: queues */
struct ipoib_hca_cq *ipoib_verbs_cq_create(struct ipoib_hca *hca,
					   uint32_t cqe);
int ipoib_verbs_cq_destroy(struct ipoib_hca_cq *cq);
struct ipoib_hca_srq *ipoib_verbs_srq_create(struct ipoib_hca *hca,
					     uint32_t max_wr,
					     uint32_t max_sge,
					     uint32_t limit);
int ipoib_verbs_srq_destroy(struct ipoib_hca_srq *srq);
int ipoib_verbs_srq_arm(struct ipoib_hca_srq *srq, uint32_t limit);
struct ipoib_hca_qp *ipoib_verbs_qp_create(struct ipoib_hca *hca,
					   const struct ipoib_qp_init *init);
int ipoib_verbs_qp_destroy(struct ipoib_hca_qp *qp);
uint32_t ipoib_verbs_qp_num(const struct ipoib_hca_qp *qp);
int ipoib_verbs_qp_modify(struct ipoib_hca_qp *qp, enum ipoib_qp_state state);
void ipoib_verbs_qp_flush_settle(struct ipoib_hca_qp *qp);
/* The attributes of attr's handle; may ask a path record (IB, no DLID). */
int ipoib_verbs_ah_attr(struct ipoib_hca *hca,
			const struct ipoib_ah_attr *attr,
			struct ibv_ah_attr *a);
struct ipoib_hca_ah *ipoib_verbs_ah_create(struct ipoib_hca *hca,
					   const struct ipoib_ah_attr *attr);
void ipoib_verbs_ah_destroy(struct ipoib_hca_ah *ah);

/* ipoib_verbs_dp.c: datapath */
uint16_t ipoib_verbs_poll_cq(struct ipoib_hca_cq *cq, struct ipoib_wc *wc,
			     uint16_t n);
/* One completion as poll_cq() gives it (qp: the QP it names, or NULL). */
void ipoib_verbs_wc_one(struct ipoib_hca *hca, struct ipoib_hca_qp *qp,
			const struct ibv_wc *iwc, struct ipoib_wc *wc);
uint16_t ipoib_verbs_post_srq_recv(struct ipoib_hca_srq *srq,
				   const struct ipoib_recv_wr *wr, uint16_t n);
void ipoib_verbs_sq_reap(struct ipoib_hca_qp *qp);
void ipoib_verbs_sq_reap_idle(struct ipoib_hca *hca);
uint16_t ipoib_verbs_post_recv(struct ipoib_hca_qp *qp,
			       const struct ipoib_recv_wr *wr, uint16_t n);
uint16_t ipoib_verbs_post_send(struct ipoib_hca_qp *qp,
			       const struct ipoib_send_wr *wr, uint16_t n);

/* ipoib_verbs_port.c: the port attributes its link layer decides */
void ipoib_verbs_port_link(bool roce, struct ipoib_port_attr *attr);

/* ipoib_verbs_dir.c: the test-only address directory */
int ipoib_verbs_addr_publish(struct ipoib_hca *hca, const uint8_t *mac,
			     uint32_t ud_qpn, uint8_t flags);
int ipoib_verbs_addr_resolve(struct ipoib_hca *hca, const uint8_t *mac,
			     uint8_t *hwaddr);
/* Close: this port's record leaves the directory. */
void ipoib_verbs_dir_remove(struct ipoib_hca *hca);

/* ipoib_verbs_addr.c: rdma_cm addresses */
int ipoib_vcm_sid_map(uint64_t sid, enum rdma_port_space *ps, uint16_t *port);
uint64_t ipoib_vcm_ps_sid(enum rdma_port_space ps, uint16_t port);
struct sockaddr *ipoib_vcm_addr(const struct ipoib_hca *hca,
				const uint8_t *gid, uint16_t port,
				uint64_t sid, struct sockaddr_storage *ss);
struct sockaddr *ipoib_vcm_mgid_addr(const uint8_t *mgid, uint16_t pkey,
				     struct sockaddr_storage *ss);
enum rdma_port_space ipoib_vcm_join_ps(const struct ipoib_hca *hca);
void ipoib_vcm_peer_gid(const struct rdma_cm_id *id, uint8_t *gid);

/* ipoib_verbs_cm.c: CM over librdmacm */
int ipoib_verbs_cm_open(struct ipoib_hca *hca);
void ipoib_verbs_cm_close(struct ipoib_hca *hca);
int ipoib_verbs_cm_listen(struct ipoib_hca *hca, uint64_t service_id);
int ipoib_verbs_cm_connect(struct ipoib_hca *hca,
			   const struct ipoib_cm_connect *param,
			   struct ipoib_cm_id **id);
int ipoib_verbs_cm_accept(struct ipoib_cm_id *id, struct ipoib_hca_qp *qp,
			  void *context, const uint8_t *priv,
			  uint8_t priv_len);
int ipoib_verbs_cm_rtu(struct ipoib_cm_id *id);
int ipoib_verbs_cm_reject(struct ipoib_cm_id *id, uint16_t reason,
			  const uint8_t *priv, uint8_t priv_len);
int ipoib_verbs_cm_disconnect(struct ipoib_cm_id *id);
void ipoib_verbs_cm_destroy(struct ipoib_cm_id *id);
int ipoib_verbs_cm_poll(struct ipoib_hca *hca, struct ipoib_cm_event *ev,
			int n);
void ipoib_verbs_ctrl_wait(struct ipoib_hca *hca, uint64_t timeout_ns);
void ipoib_verbs_ctrl_wake(struct ipoib_hca *hca);
/* The HCA saw traffic on a QP whose RTU has not come: establish it. */
void ipoib_verbs_cm_comm_est(struct ipoib_hca_qp *qp);
/* The QP is going away: forget the connection's reference to it. */
void ipoib_verbs_cm_qp_gone(struct ipoib_hca_qp *qp);

/* ipoib_verbs_cm_param.c: the CM's decisions (see there) */
int ipoib_vcm_dest(bool roce, bool mapped, uint64_t service_id,
		   enum rdma_port_space *ps, uint16_t *port, uint64_t *sid);
void ipoib_vcm_req_param(bool roce, const struct ipoib_cm_connect *c,
			 struct rdma_conn_param *p);
bool ipoib_vcm_rep_check(bool roce, bool mapped, uint64_t service_id,
			 const uint8_t *priv, uint8_t priv_len,
			 uint32_t *got);
uint8_t ipoib_vcm_rej_priv(uint16_t reason, uint8_t *buf);
uint16_t ipoib_vcm_rej_reason(int status, const uint8_t *priv,
			      uint8_t *priv_len);
bool ipoib_vcm_rej_remap(bool roce, bool active, bool mapped,
			 uint16_t reason);
int ipoib_vcm_qp_mask(bool roce, int mask);

/* ipoib_verbs_addr.c: multicast joins, path records */
int ipoib_verbs_mcast_attach(struct ipoib_hca_qp *qp, const uint8_t *mgid);
int ipoib_verbs_mcast_detach(struct ipoib_hca_qp *qp, const uint8_t *mgid);
/* The group a fabric multicast address stands for (UD receive), or NULL. */
const struct ipoib_verbs_mcast *ipoib_verbs_mcast_by_ipv4(
	const struct ipoib_hca *hca, uint32_t ipv4);
/* Fabric address of an IPoIB MGID (the AH of a multicast send). */
int ipoib_verbs_mcast_route(struct ipoib_hca *hca, const uint8_t *mgid,
			    union ibv_gid *gid, uint16_t *mlid);
/* IB link layer: the LID of a GID, from a path record (may block). */
int ipoib_verbs_path_lid(struct ipoib_hca *hca, const uint8_t *dgid,
			 uint16_t *dlid, uint8_t *sl);

/* ipoib_verbs_sa.c: asynchronous SA queries, InfiniBand only */
int ipoib_verbs_path_query(struct ipoib_hca *hca, const uint8_t *dgid,
			   uint16_t pkey, uint64_t cookie);
int ipoib_verbs_path_poll(struct ipoib_hca *hca, struct ipoib_path_rec *rec,
			  int n);
int ipoib_verbs_mc_join(struct ipoib_hca *hca, const uint8_t *mgid,
			uint16_t pkey);
int ipoib_verbs_mc_join_poll(struct ipoib_hca *hca, struct ipoib_mc_rec *rec);
/* The channel's fd for ctrl_wait(), or -1 (no query asked yet). */
int ipoib_verbs_sa_fd(const struct ipoib_hca *hca);
/* Path answers were taken from the channel and wait for path_poll(). */
bool ipoib_verbs_sa_ready(const struct ipoib_hca *hca);
void ipoib_verbs_sa_close(struct ipoib_hca *hca);
/*
 * The answer a path query's event gives (cookie, status, DLID and SL in
 * host order); false: the event does not end the query (ADDR_RESOLVED:
 * the route is asked next).
 */
bool ipoib_vsa_path_answer(const struct rdma_cm_event *e, uint64_t cookie,
			   struct ipoib_path_rec *rec);
/*
 * The answer a join's event gives: 1 and rec (MULTICAST_JOIN), a negative
 * errno (MULTICAST_ERROR, DEVICE_REMOVAL), 0 (not an answer).
 */
int ipoib_vsa_join_answer(const struct rdma_cm_event *e,
			  struct ipoib_mc_rec *rec);

#endif /* IPOIB_VERBS_H */
