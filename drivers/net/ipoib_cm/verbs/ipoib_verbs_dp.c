/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The datapath of the verbs transport: polling completions, posting
 * receives and sends.
 *
 *
 * Sends. Each QP has its own send CQ and a ring of the mbufs in flight;
 * post_send first reaps the send CQ (freeing what completed), then posts.
 * Few sends are signalled (every IPOIB_VERBS_SIGNAL-th and the last of a
 * call): a completion frees everything before it, since a send queue
 * completes in order. post_send on one QP may come from several lcores;
 * a spinlock per QP serialises them (ibv_post_send is thread-safe, but
 * the ring and the reaping are ours). A send queue full is a short return:
 * the driver gives the frames back to the application.
 *
 * Completions carry the QP number; the QP (and the qp_context the driver
 * gave it) is found in an open-addressing table, lock-free for readers.
 * On RoCE v2 over IPv4 the 40 bytes before a UD payload hold the IPv4
 * header, not a GRH: poll_cq rewrites them into the GRH the driver reads
 * (GIDs ::ffff:a.b.c.d; a multicast destination becomes the group's MGID).
 */

#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "ipoib_hca.h"
#include "ipoib_log.h"
#include "ipoib_util.h"
#include "ipoib_verbs.h"
#include "ipoib_wire.h"

#define IPOIB_VERBS_POLL_MAX	64
#define IPOIB_VERBS_POST_MAX	32

/* ---- completions ---------------------------------------------------------- */

static void
ipoib_verbs_gid_v4(uint8_t *gid, const uint8_t *ip)
{
	memset(gid, 0, 10);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, ip, 4);
}

/*
 * RoCE v2 over IPv4: 20 undefined bytes, then the IPv4 header, where the
 * driver reads a GRH. Rewrite the 40 bytes as the GRH of the same packet.
 */
static void
ipoib_verbs_fix_grh(struct ipoib_hca *hca, uint8_t *g, uint32_t byte_len)
{
	const struct ipoib_verbs_mcast *mc;
	uint8_t src[4], dst[4], ttl;
	uint32_t d;

	if ((g[0] >> 4) == 6 || (g[20] >> 4) != 4)
		return;		/* a GRH (IPv6 header) already */
	memcpy(src, g + 20 + 12, 4);
	memcpy(dst, g + 20 + 16, 4);
	ttl = g[20 + 8];
	g[0] = 0x60;
	g[1] = g[2] = g[3] = 0;
	g[4] = (uint8_t)((byte_len - IPOIB_GRH_LEN) >> 8);
	g[5] = (uint8_t)(byte_len - IPOIB_GRH_LEN);
	g[6] = 0x1b;		/* next header: IBA transport */
	g[7] = ttl;
	ipoib_verbs_gid_v4(g + 8, src);
	d = (uint32_t)dst[0] << 24 | (uint32_t)dst[1] << 16 |
	    (uint32_t)dst[2] << 8 | dst[3];
	if ((d & 0xf0000000) != 0xe0000000) {
		ipoib_verbs_gid_v4(g + 24, dst);
		return;
	}
	mc = ipoib_verbs_mcast_by_ipv4(hca, d);
	if (mc != NULL) {
		memcpy(g + 24, mc->mgid, IPOIB_GID_LEN);
	} else {	/* a group we did not join: still multicast */
		ipoib_verbs_gid_v4(g + 24, dst);
		g[24] = 0xff;
		g[25] = 0x0e;
	}
}

/*
 * One receive completion: iwc, on qp (NULL: a QP we do not know), as the
 * driver reads it. UD on RoCE (qp->rq_addr, ipoib_verbs_qp_rq_track())
 * has its 40 bytes before the payload rewritten into a GRH; InfiniBand
 * passes the completion's slid, src_qp and GRH flag on, the buffer as
 * the HCA wrote it (with or without a GRH).
 */
static __rte_always_inline void
ipoib_vdp_wc(struct ipoib_hca *hca, struct ipoib_hca_qp *qp,
	     const struct ibv_wc *iwc, struct ipoib_wc *wc)
{
	wc->wr_id = iwc->wr_id;
	wc->byte_len = iwc->byte_len;
	wc->qp_num = iwc->qp_num;
	wc->src_qp = iwc->src_qp;
	wc->slid = iwc->slid;
	wc->status = ipoib_verbs_wc_status(iwc->status);
	wc->wc_flags = iwc->wc_flags & IBV_WC_GRH ? IPOIB_WC_GRH : 0;
	wc->qp_context = qp != NULL ? qp->qp_context : UINT32_MAX;
	if (unlikely(iwc->status == IBV_WC_LOC_LEN_ERR))
		__atomic_fetch_add(&hca->len_errs, 1, __ATOMIC_RELAXED);
	if (qp == NULL || qp->rq_addr == NULL)
		return;
	/* UD on RoCE: completions come in post order */
	if (likely(qp->rq_tail != qp->rq_head)) {
		uint64_t a = qp->rq_addr[qp->rq_tail++ & (qp->rq_size - 1)];

		if (iwc->status == IBV_WC_SUCCESS &&
		    (iwc->wc_flags & IBV_WC_GRH) &&
		    iwc->byte_len >= IPOIB_GRH_LEN)
			ipoib_verbs_fix_grh(hca, (uint8_t *)(uintptr_t)a,
					    iwc->byte_len);
	}
}

void
ipoib_verbs_wc_one(struct ipoib_hca *hca, struct ipoib_hca_qp *qp,
		   const struct ibv_wc *iwc, struct ipoib_wc *wc)
{
	ipoib_vdp_wc(hca, qp, iwc, wc);
}

uint16_t
ipoib_verbs_poll_cq(struct ipoib_hca_cq *cq, struct ipoib_wc *wc, uint16_t n)
{
	struct ipoib_hca *hca = cq->hca;
	struct ibv_wc iwc[IPOIB_VERBS_POLL_MAX];
	int k, i;

	k = ibv_poll_cq(cq->cq, RTE_MIN(n, (uint16_t)IPOIB_VERBS_POLL_MAX),
			iwc);
	if (unlikely(k <= 0))
		return 0;
	for (i = 0; i < k; i++)
		ipoib_vdp_wc(hca, ipoib_verbs_qp_lookup(hca, iwc[i].qp_num),
			     &iwc[i], &wc[i]);
	return (uint16_t)k;
}

/* Chain n receive WRs; returns the first. */
static struct ibv_recv_wr *
ipoib_verbs_recv_chain(struct ibv_recv_wr *rw, const struct ipoib_recv_wr *wr,
		       uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		rw[i].wr_id = wr[i].wr_id;
		rw[i].sg_list = (struct ibv_sge *)(uintptr_t)wr[i].sg_list;
		rw[i].num_sge = wr[i].num_sge;
		rw[i].next = i + 1 < n ? &rw[i + 1] : NULL;
	}
	return rw;
}

uint16_t
ipoib_verbs_post_srq_recv(struct ipoib_hca_srq *srq,
			  const struct ipoib_recv_wr *wr, uint16_t n)
{
	struct ibv_recv_wr rw[IPOIB_VERBS_POST_MAX], *bad;
	uint16_t done = 0;

	while (done < n) {
		uint16_t k = RTE_MIN((uint16_t)(n - done),
				     (uint16_t)IPOIB_VERBS_POST_MAX);

		if (ibv_post_srq_recv(srq->srq,
				      ipoib_verbs_recv_chain(rw, wr + done, k),
				      &bad) != 0)
			return done + (uint16_t)(bad - rw);
		done += k;
	}
	return done;
}

/* A send completed in error: the QP is in error now; tell the driver once. */
static void
ipoib_verbs_send_failed(struct ipoib_hca_qp *qp)
{
	uint64_t ev = (uint64_t)qp->qp->qp_num << 32 | qp->qp_context;
	uint8_t zero = 0;

	__atomic_fetch_add(&qp->hca->send_errors, 1, __ATOMIC_RELAXED);
	if (__atomic_compare_exchange_n(&qp->fatal_reported, &zero, 1, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		rte_ring_mp_enqueue(qp->hca->fatal, (void *)(uintptr_t)ev);
}

/* Free what has completed: the ring up to the last completion seen. */
void
ipoib_verbs_sq_reap(struct ipoib_hca_qp *qp)
{
	struct ibv_wc wc[IPOIB_VERBS_POLL_MAX];
	struct rte_mbuf *fr[IPOIB_VERBS_POLL_MAX];
	int k, i;

	while ((k = ibv_poll_cq(qp->send_cq, RTE_DIM(wc), wc)) > 0) {
		for (i = 0; i < k; i++) {
			uint32_t upto = (uint32_t)wc[i].wr_id + 1;
			unsigned int nf = 0;

			if (unlikely(wc[i].status != IBV_WC_SUCCESS &&
				     wc[i].status != IBV_WC_WR_FLUSH_ERR))
				ipoib_verbs_send_failed(qp);
			while (qp->sq_tail != upto &&
			       (int32_t)(upto - qp->sq_tail) > 0) {
				struct rte_mbuf **s = &qp->sq[qp->sq_tail++ &
							     (qp->sq_size - 1)];

				if (*s != NULL)
					fr[nf++] = *s;
				*s = NULL;
				if (nf == RTE_DIM(fr)) {
					ipoib_hca_free_sent(fr, nf);
					nf = 0;
				}
			}
			if (nf > 0)
				ipoib_hca_free_sent(fr, nf);
		}
		if (k < (int)RTE_DIM(wc))
			break;
	}
}

/*
 * Control thread, every IPOIB_VERBS_REAP_NS at most: free what completed
 * on send queues nobody posts to. post_send reaps only when it is called,
 * so an application whose mbufs are all in flight, and which therefore
 * sends nothing more, would never get them back: 2048 send WRs of 4
 * segments can hold all 8192 mbufs of the verbs pair test's testpmd. A
 * queue an lcore is posting to (its lock taken) is reaped by that lcore.
 */
void
ipoib_verbs_sq_reap_idle(struct ipoib_hca *hca)
{
	uint64_t now = ipoib_now_ns();
	uint32_t slot;

	if (now - hca->sq_reap_ns < IPOIB_VERBS_REAP_NS)
		return;
	hca->sq_reap_ns = now;
	rte_spinlock_lock(&hca->qp_lock);	/* no QP goes meanwhile */
	for (slot = 0; slot < hca->nr_qps_max; slot++) {
		struct ipoib_hca_qp *qp = hca->qps[slot];

		if (qp == NULL || !rte_spinlock_trylock(&qp->sq_lock))
			continue;
		if (qp->sq_tail != qp->sq_head)
			ipoib_verbs_sq_reap(qp);
		rte_spinlock_unlock(&qp->sq_lock);
	}
	rte_spinlock_unlock(&hca->qp_lock);
}

uint16_t
ipoib_verbs_post_recv(struct ipoib_hca_qp *qp, const struct ipoib_recv_wr *wr,
		      uint16_t n)
{
	struct ibv_recv_wr rw[IPOIB_VERBS_POST_MAX], *bad;
	uint16_t done = 0, i, k, posted;

	while (done < n) {
		k = RTE_MIN((uint16_t)(n - done),
			    (uint16_t)IPOIB_VERBS_POST_MAX);
		posted = k;
		if (ibv_post_recv(qp->qp, ipoib_verbs_recv_chain(rw, wr + done,
								 k), &bad) != 0)
			posted = (uint16_t)(bad - rw);
		if (qp->rq_addr != NULL)
			for (i = 0; i < posted; i++)
				qp->rq_addr[qp->rq_head++ &
					    (qp->rq_size - 1)] =
					wr[done + i].sg_list[0].addr;
		done += posted;
		if (posted < k)
			break;
	}
	return done;
}

/*
 * One send WR for m; false if it cannot be sent (it is dropped: more
 * segments than the QP takes, or memory that cannot be registered).
 */
static __rte_always_inline bool
ipoib_verbs_send_wr(struct ipoib_hca_qp *qp, struct rte_mbuf *m,
		    struct ibv_send_wr *sw, struct ibv_sge *sge, bool *inl)
{
	struct rte_mbuf *s;
	uint16_t j = 0;

	*inl = m->pkt_len <= qp->max_inline;
	if (unlikely(m->nb_segs > qp->max_sge))
		return false;
	for (s = m; s != NULL; s = s->next, j++) {
		int64_t lkey = 0;

		sge[j].addr = rte_pktmbuf_mtod(s, uintptr_t);
		sge[j].length = s->data_len;
		if (!*inl) {
			lkey = ipoib_verbs_mr_find(qp->hca, sge[j].addr,
						   s->data_len, &qp->mr_hint);
			if (unlikely(lkey < 0)) {
				/* first sight of its mempool */
				if (ipoib_verbs_mr_register_mbuf(qp->hca,
								 s) < 0)
					return false;
				lkey = ipoib_verbs_mr_find(qp->hca,
							   sge[j].addr,
							   s->data_len,
							   &qp->mr_hint);
				if (lkey < 0)
					return false;
			}
		}
		sge[j].lkey = (uint32_t)lkey;
	}
	sw->sg_list = sge;
	sw->num_sge = j;
	sw->opcode = IBV_WR_SEND;
	sw->send_flags = *inl ? IBV_SEND_INLINE : 0;
	return true;
}

uint16_t
ipoib_verbs_post_send(struct ipoib_hca_qp *qp, const struct ipoib_send_wr *wr,
		      uint16_t n)
{
	struct ibv_send_wr sw[IPOIB_VERBS_POST_MAX], *bad;
	struct ibv_sge sge[IPOIB_VERBS_POST_MAX][IPOIB_VERBS_SEND_SGE];
	struct rte_mbuf *fr[IPOIB_VERBS_POST_MAX];	/* inline or dropped */
	uint16_t frin[IPOIB_VERBS_POST_MAX];		/* their input index */
	uint16_t wrin[IPOIB_VERBS_POST_MAX];		/* input of each WR */
	uint16_t done = 0;

	rte_spinlock_lock(&qp->sq_lock);
	ipoib_verbs_sq_reap(qp);
	while (done < n) {
		uint32_t room = qp->sq_size - (qp->sq_head - qp->sq_tail);
		uint16_t i, nw = 0, nf = 0, accepted, end;
		uint32_t head = qp->sq_head;

		room = RTE_MIN(room, (uint32_t)IPOIB_VERBS_POST_MAX);
		end = (uint16_t)RTE_MIN((uint32_t)(n - done), room);
		if (end == 0)
			break;		/* send queue full */
		for (i = 0; i < end; i++) {
			const struct ipoib_send_wr *w = &wr[done + i];
			struct ibv_send_wr *s = &sw[nw];
			bool inl;

			if (unlikely(!ipoib_verbs_send_wr(qp, w->m, s,
							  sge[nw], &inl))) {
				__atomic_fetch_add(&qp->hca->send_drops, 1,
						   __ATOMIC_RELAXED);
				IPOIB_LOG_RATELIMIT(WARNING, "%s: frame of %u "
					"segments dropped: unregistrable "
					"memory or more than %u segments",
					qp->hca->name, w->m->nb_segs,
					qp->max_sge);
				frin[nf] = i;
				fr[nf++] = w->m;
				continue;
			}
			if (qp->type == IPOIB_QPT_UD) {
				s->wr.ud.ah = w->ah->ah;
				s->wr.ud.remote_qpn = w->remote_qpn;
				s->wr.ud.remote_qkey = w->remote_qkey;
			}
			s->wr_id = head + nw;
			if (((head + nw) & (IPOIB_VERBS_SIGNAL - 1)) == 0)
				s->send_flags |= IBV_SEND_SIGNALED;
			if (inl) {	/* copied when posted: freed then */
				frin[nf] = i;
				fr[nf++] = w->m;
				qp->sq[(head + nw) & (qp->sq_size - 1)] = NULL;
			} else {
				qp->sq[(head + nw) & (qp->sq_size - 1)] = w->m;
			}
			wrin[nw] = i;
			s->next = &sw[nw + 1];
			nw++;
		}
		accepted = end;
		if (nw > 0) {
			/* the last WR of a call completes visibly */
			sw[nw - 1].send_flags |= IBV_SEND_SIGNALED;
			sw[nw - 1].next = NULL;
			if (unlikely(ibv_post_send(qp->qp, sw, &bad) != 0)) {
				uint16_t b = (uint16_t)(bad - sw), j;

				accepted = wrin[b];
				for (j = b; j < nw; j++)
					qp->sq[(head + j) &
					       (qp->sq_size - 1)] = NULL;
				nw = b;
			}
			qp->sq_head = head + nw;
		}
		/* inline and dropped frames the caller gave us are freed */
		for (i = 0; i < nf; i++)
			if (frin[i] < accepted)
				rte_pktmbuf_free(fr[i]);
		done += accepted;
		if (accepted < end)
			break;
	}
	rte_spinlock_unlock(&qp->sq_lock);
	return done;
}
