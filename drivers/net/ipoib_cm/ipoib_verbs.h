/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_VERBS_H
#define IPOIB_VERBS_H

/*
 * The verbs transport (transport=verbs): the HCA interface over rdma-core.
 * ipoib_hca_verbs.c has the device, memory, queues and datapath;
 * ipoib_verbs_cm.c has connection management and multicast through
 * librdmacm. This header is what the two share; nothing else includes it.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
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

/* A multicast group the UD QP receives (see ipoib_verbs_cm.c). */
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
	bool ib_cm_af_ib;		/* IB link layer: AF_IB addressing */
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

/* ipoib_hca_verbs.c */
struct ipoib_hca_qp *ipoib_verbs_qp_by_num(struct ipoib_hca *hca,
					   uint32_t qpn);

/* ipoib_verbs_cm.c: CM over librdmacm, multicast joins */
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

#endif /* IPOIB_VERBS_H */
