/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Queues of the verbs transport: completion queues, shared receive queues,
 * queue pairs (and the table that finds them by number), address handles.
 *
 * Completions name their QP by number: ipoib_verbs_qp_lookup() in
 * ipoib_verbs.h finds it in the table kept here.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "ipoib_hca.h"
#include "ipoib_log.h"
#include "ipoib_verbs.h"
#include "ipoib_wire.h"

#define IPOIB_VERBS_HOP_LIMIT	64

/* ---- QPs by number ------------------------------------------------------- */

/* Control: make qp findable by its number. */
static int
ipoib_verbs_qp_register(struct ipoib_hca *hca, struct ipoib_hca_qp *qp)
{
	uint32_t qpn = qp->qp->qp_num, slot, i, n;
	int ret = -ENOSPC;

	rte_spinlock_lock(&hca->qp_lock);
	for (slot = 0; slot < hca->nr_qps_max; slot++)
		if (hca->qps[slot] == NULL)
			break;
	if (slot == hca->nr_qps_max)
		goto out;
	i = ipoib_verbs_qpn_hash(qpn) & hca->qpn_mask;
	for (n = 0; n <= hca->qpn_mask; n++, i = (i + 1) & hca->qpn_mask) {
		uint64_t e = hca->qpn_tab[i];

		if (e != IPOIB_VERBS_QPN_EMPTY && e != IPOIB_VERBS_QPN_TOMB)
			continue;
		qp->slot = slot;
		__atomic_store_n(&hca->qps[slot], qp, __ATOMIC_RELAXED);
		/* the entry is complete before readers find it */
		__atomic_store_n(&hca->qpn_tab[i], (uint64_t)qpn << 32 | slot,
				 __ATOMIC_RELEASE);
		ret = 0;
		break;
	}
out:
	rte_spinlock_unlock(&hca->qp_lock);
	return ret;
}

static void
ipoib_verbs_qp_unregister(struct ipoib_hca *hca, struct ipoib_hca_qp *qp)
{
	uint64_t want = (uint64_t)qp->qp->qp_num << 32 | qp->slot;
	uint32_t i;

	rte_spinlock_lock(&hca->qp_lock);
	for (i = 0; i <= hca->qpn_mask; i++) {
		if (hca->qpn_tab[i] == want) {
			__atomic_store_n(&hca->qpn_tab[i], IPOIB_VERBS_QPN_TOMB,
					 __ATOMIC_RELEASE);
			break;
		}
	}
	__atomic_store_n(&hca->qps[qp->slot], NULL, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&hca->qp_lock);
}

/* ---- completion queues --------------------------------------------------- */

struct ipoib_hca_cq *
ipoib_verbs_cq_create(struct ipoib_hca *hca, uint32_t cqe)
{
	struct ipoib_hca_cq *cq = calloc(1, sizeof(*cq));
	uint32_t n = RTE_MIN(cqe, (uint32_t)hca->dattr.max_cqe);

	if (cq == NULL)
		return NULL;
	if (n < cqe)
		IPOIB_LOG(WARNING, "%s: CQ of %u entries asked, the device "
			  "allows %u: fewer connections or descriptors avoid "
			  "an overrun", hca->name, cqe, n);
	cq->hca = hca;
	cq->cq = ibv_create_cq(hca->ctx, (int)n, cq, NULL, 0);
	if (cq->cq == NULL) {
		IPOIB_LOG(ERR, "%s: ibv_create_cq(%u): %s", hca->name, n,
			  strerror(errno));
		free(cq);
		return NULL;
	}
	return cq;
}

int
ipoib_verbs_cq_destroy(struct ipoib_hca_cq *cq)
{
	int ret = ibv_destroy_cq(cq->cq);

	if (ret != 0) {
		IPOIB_LOG(ERR, "%s: ibv_destroy_cq: %s", cq->hca->name,
			  strerror(ret));
		return -ret;
	}
	free(cq);
	return 0;
}

/* ---- shared receive queues ----------------------------------------------- */

struct ipoib_hca_srq *
ipoib_verbs_srq_create(struct ipoib_hca *hca, uint32_t max_wr,
		       uint32_t max_sge, uint32_t limit)
{
	struct ibv_srq_init_attr ia = {
		.attr = { .max_wr = max_wr, .max_sge = max_sge },
	};
	struct ipoib_hca_srq *srq = calloc(1, sizeof(*srq));

	if (srq == NULL)
		return NULL;
	ia.srq_context = srq;
	srq->hca = hca;
	srq->srq = ibv_create_srq(hca->pd, &ia);
	if (srq->srq == NULL) {
		IPOIB_LOG(ERR, "%s: ibv_create_srq(%u WRs, %u SGEs): %s",
			  hca->name, max_wr, max_sge, strerror(errno));
		free(srq);
		return NULL;
	}
	if (limit > 0 && limit < max_wr) {
		struct ibv_srq_attr a = { .srq_limit = limit };

		if (ibv_modify_srq(srq->srq, &a, IBV_SRQ_LIMIT) != 0)
			IPOIB_LOG(WARNING, "%s: SRQ limit not armed",
				  hca->name);
	}
	return srq;
}

int
ipoib_verbs_srq_destroy(struct ipoib_hca_srq *srq)
{
	int ret = ibv_destroy_srq(srq->srq);

	if (ret != 0)
		return -ret;
	free(srq);
	return 0;
}

int
ipoib_verbs_srq_arm(struct ipoib_hca_srq *srq, uint32_t limit)
{
	struct ibv_srq_attr a = { .srq_limit = limit };

	return -ibv_modify_srq(srq->srq, &a, IBV_SRQ_LIMIT);
}

/* ---- queue pairs --------------------------------------------------------- */

static int
ipoib_verbs_modify(struct ipoib_hca_qp *qp, struct ibv_qp_attr *a, int mask)
{
	int ret = ibv_modify_qp(qp->qp, a, mask);

	if (ret != 0)
		IPOIB_LOG(ERR, "%s: QP 0x%06x to state %d: %s", qp->hca->name,
			  qp->qp->qp_num, a->qp_state, strerror(ret));
	return -ret;
}

static struct ibv_qp *
ipoib_verbs_create_qp(struct ipoib_hca_qp *qp, struct ibv_qp_init_attr *ia)
{
	struct ibv_qp *q = ibv_create_qp(qp->hca->pd, ia);

	if (q == NULL && ia->cap.max_inline_data > 0) {
		/* some devices send nothing inline */
		ia->cap.max_inline_data = 0;
		q = ibv_create_qp(qp->hca->pd, ia);
	}
	return q;
}

static void ipoib_verbs_qp_free(struct ipoib_hca_qp *qp);

struct ipoib_hca_qp *
ipoib_verbs_qp_create(struct ipoib_hca *hca, const struct ipoib_qp_init *init)
{
	struct ibv_qp_init_attr ia = { .sq_sig_all = 0 };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT };
	struct ipoib_hca_qp *qp = calloc(1, sizeof(*qp));
	uint32_t sq = RTE_MIN(init->max_send_wr,
			      (uint32_t)IPOIB_VERBS_SQ_MAX);
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (qp == NULL)
		return NULL;
	qp->hca = hca;
	qp->type = init->type;
	qp->qp_context = init->qp_context;
	qp->mr_hint = -1;
	rte_spinlock_init(&qp->sq_lock);
	sq = RTE_MAX(sq, 1U);
	sq = RTE_MIN(sq, (uint32_t)hca->dattr.max_qp_wr);
	qp->sq_size = rte_align32pow2(sq);
	qp->sq = calloc(qp->sq_size, sizeof(*qp->sq));
	qp->send_cq = ibv_create_cq(hca->ctx, (int)sq, qp, NULL, 0);
	if (qp->sq == NULL || qp->send_cq == NULL)
		goto fail;
	ia.qp_context = qp;
	ia.send_cq = qp->send_cq;
	ia.recv_cq = init->recv_cq->cq;
	ia.srq = init->srq != NULL ? init->srq->srq : NULL;
	ia.qp_type = init->type == IPOIB_QPT_UD ? IBV_QPT_UD : IBV_QPT_RC;
	ia.cap.max_send_wr = sq;
	ia.cap.max_send_sge = RTE_MIN(IPOIB_VERBS_SEND_SGE,
				      hca->dattr.max_sge);
	if (ia.srq == NULL) {
		ia.cap.max_recv_wr = RTE_MAX(init->max_recv_wr, 1U);
		ia.cap.max_recv_sge = RTE_MAX(init->max_recv_sge, 1U);
		ia.cap.max_recv_sge = RTE_MIN(ia.cap.max_recv_sge,
					      (uint32_t)hca->dattr.max_sge);
	}
	ia.cap.max_inline_data = IPOIB_VERBS_INLINE;
	qp->qp = ipoib_verbs_create_qp(qp, &ia);
	if (qp->qp == NULL) {
		IPOIB_LOG(ERR, "%s: ibv_create_qp(%s, %u send WRs, %u recv "
			  "WRs x %u SGEs%s): %s", hca->name,
			  init->type == IPOIB_QPT_UD ? "UD" : "RC", sq,
			  ia.cap.max_recv_wr, ia.cap.max_recv_sge,
			  ia.srq != NULL ? ", SRQ" : "", strerror(errno));
		goto fail;
	}
	qp->max_inline = ia.cap.max_inline_data;
	qp->max_sge = RTE_MIN(ia.cap.max_send_sge,
			      (uint32_t)IPOIB_VERBS_SEND_SGE);
	if (ipoib_verbs_qp_rq_track(hca, init->type)) {
		qp->rq_size = rte_align32pow2(RTE_MAX(ia.cap.max_recv_wr,
						      init->max_recv_wr));
		qp->rq_addr = calloc(qp->rq_size, sizeof(*qp->rq_addr));
		if (qp->rq_addr == NULL)
			goto fail;
	}
	/* INIT now; RC goes on with the CM, UD with qp_modify() */
	a.pkey_index = init->pkey_index;
	a.port_num = hca->port;
	if (init->type == IPOIB_QPT_UD) {
		a.qkey = init->qkey;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = 0;	/* sends and receives only */
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (ipoib_verbs_modify(qp, &a, mask) < 0 ||
	    ipoib_verbs_qp_register(hca, qp) < 0)
		goto fail;
	return qp;
fail:
	ipoib_verbs_qp_free(qp);
	return NULL;
}

static void
ipoib_verbs_qp_free(struct ipoib_hca_qp *qp)
{
	if (qp->qp != NULL && ibv_destroy_qp(qp->qp) != 0)
		IPOIB_LOG(ERR, "%s: ibv_destroy_qp: %s", qp->hca->name,
			  strerror(errno));
	if (qp->send_cq != NULL)
		ibv_destroy_cq(qp->send_cq);
	free(qp->rq_addr);
	free(qp->sq);
	free(qp);
}

int
ipoib_verbs_qp_destroy(struct ipoib_hca_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	int tries;

	/* flush the send queue: its mbufs come back through the CQ */
	ibv_modify_qp(qp->qp, &a, IBV_QP_STATE);
	for (tries = 0; tries < 100 && qp->sq_tail != qp->sq_head; tries++) {
		/* the control thread may be reaping it too */
		rte_spinlock_lock(&qp->sq_lock);
		ipoib_verbs_sq_reap(qp);
		rte_spinlock_unlock(&qp->sq_lock);
		if (qp->sq_tail != qp->sq_head)
			usleep(100);
	}
	ipoib_verbs_cm_qp_gone(qp);
	ipoib_verbs_qp_unregister(qp->hca, qp);
	if (ibv_destroy_qp(qp->qp) != 0) {
		int ret = -errno;

		IPOIB_LOG(ERR, "%s: ibv_destroy_qp(0x%06x): %s", qp->hca->name,
			  qp->qp->qp_num, strerror(errno));
		ipoib_verbs_qp_register(qp->hca, qp);
		return ret == -EBUSY ? -EBUSY : ret;
	}
	qp->qp = NULL;
	/* what never completed is ours to free now */
	while (qp->sq_tail != qp->sq_head) {
		struct rte_mbuf *m = qp->sq[qp->sq_tail++ & (qp->sq_size - 1)];

		rte_pktmbuf_free(m);
	}
	ipoib_verbs_qp_free(qp);
	return 0;
}

uint32_t
ipoib_verbs_qp_num(const struct ipoib_hca_qp *qp)
{
	return qp->qp->qp_num;
}

int
ipoib_verbs_qp_modify(struct ipoib_hca_qp *qp, enum ipoib_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	int ret;

	switch (state) {
	case IPOIB_QPS_ERR:
		return ipoib_verbs_modify(qp, &a, IBV_QP_STATE);
	case IPOIB_QPS_RTR:
	case IPOIB_QPS_RTS:
		if (qp->type != IPOIB_QPT_UD)
			return -EINVAL;	/* RC moves with the CM */
		a.qp_state = IBV_QPS_RTR;
		ret = ipoib_verbs_modify(qp, &a, IBV_QP_STATE);
		if (ret < 0 || state == IPOIB_QPS_RTR)
			return ret;
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0;
		return ipoib_verbs_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	default:
		return -EINVAL;
	}
}

/* The HCA completes a post racing with the move to error itself. */
void
ipoib_verbs_qp_flush_settle(struct ipoib_hca_qp *qp)
{
	RTE_SET_USED(qp);
}

/* ---- address handles ----------------------------------------------------- */

/*
 * The address handle's attributes for attr. IB: the DLID and SL given
 * (path_query(), or the port's own LID for its loopback handle); only a
 * unicast handle asked without a DLID has its path record asked here,
 * synchronously (ipoib_verbs_path_lid()). A group: its fabric GID and
 * MLID (ipoib_verbs_mcast_route()). RoCE: no LID, SL 0.
 */
int
ipoib_verbs_ah_attr(struct ipoib_hca *hca, const struct ipoib_ah_attr *attr,
		    struct ibv_ah_attr *a)
{
	int ret;

	memset(a, 0, sizeof(*a));
	a->is_global = 1;
	a->port_num = hca->port;
	a->dlid = attr->dlid;
	a->sl = attr->sl;
	a->grh.sgid_index = hca->gid_index;
	a->grh.hop_limit = IPOIB_VERBS_HOP_LIMIT;
	if (attr->multicast) {
		ret = ipoib_verbs_mcast_route(hca, attr->dgid, &a->grh.dgid,
					      &a->dlid);
		if (ret < 0)
			return ret;
	} else {
		memcpy(a->grh.dgid.raw, attr->dgid, IPOIB_GID_LEN);
		if (!hca->roce && a->dlid == 0) {
			ret = ipoib_verbs_path_lid(hca, attr->dgid, &a->dlid,
						   &a->sl);
			if (ret < 0)
				return ret;
		}
	}
	if (hca->roce) {	/* Ethernet: no LID; SL would be the priority */
		a->dlid = 0;
		a->sl = 0;
	}
	return 0;
}

struct ipoib_hca_ah *
ipoib_verbs_ah_create(struct ipoib_hca *hca, const struct ipoib_ah_attr *attr)
{
	struct ibv_ah_attr a;
	struct ipoib_hca_ah *ah;

	if (ipoib_verbs_ah_attr(hca, attr, &a) < 0)
		return NULL;
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL)
		return NULL;
	ah->ah = ibv_create_ah(hca->pd, &a);
	if (ah->ah == NULL) {
		IPOIB_LOG_RATELIMIT(ERR, "%s: ibv_create_ah: %s", hca->name,
				    strerror(errno));
		free(ah);
		return NULL;
	}
	return ah;
}

void
ipoib_verbs_ah_destroy(struct ipoib_hca_ah *ah)
{
	ibv_destroy_ah(ah->ah);
	free(ah);
}
