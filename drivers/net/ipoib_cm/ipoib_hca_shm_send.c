/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Sends of the shm transport (ops->post_send). The copy into the
 * receiver's buffer is the only one; an mbuf is freed once its copy is
 * made. RC messages go through the fabric's RC send template
 * (shm_rc_send.h), compiled here so that it reads each mbuf and frees it
 * in the one pass that copies it; UD messages are gathered for
 * shm_qp_post_send().
 */

#include <stdint.h>
#include <sys/uio.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "ipoib_hca.h"
#include "ipoib_hca_shm.h"
#include "shm_rc_send.h"

/* Gather an mbuf chain into iov[]: how many pieces (IPOIB_MAX_SGE at most). */
static inline uint16_t
ipoib_shm_gather(struct rte_mbuf *m, struct iovec *iov)
{
	uint16_t s = 1;

	iov[0].iov_base = rte_pktmbuf_mtod(m, void *);
	iov[0].iov_len = m->data_len;
	/* next is in the mbuf's second line: not read for one segment */
	for (m = unlikely(m->nb_segs > 1) ? m->next : NULL;
	     unlikely(m != NULL) && s < IPOIB_MAX_SGE; m = m->next, s++) {
		iov[s].iov_base = rte_pktmbuf_mtod(m, void *);
		iov[s].iov_len = m->data_len;
	}
	return s;
}

/* What the template's callbacks see (never in memory: they are inlined). */
struct ipoib_shm_rc_ctx {
	const struct ipoib_send_wr *wr;
	struct ipoib_hca_freer *sent;
	struct iovec *iov;	/* a chain's pieces, for one message */
	struct shm_send *sg;
};

static __rte_always_inline void
ipoib_shm_rc_msg(void *ctx, uint32_t i, struct shm_rc_msg *msg)
{
	struct ipoib_shm_rc_ctx *x = ctx;
	struct rte_mbuf *m = x->wr[i].m;
	uint16_t s, j;

	msg->src = rte_pktmbuf_mtod(m, const void *);
	msg->len = m->data_len;
	msg->sg = NULL;
	if (likely(m->nb_segs == 1))
		return;
	s = ipoib_shm_gather(m, x->iov);
	x->sg->iov = x->iov;
	x->sg->iovcnt = s;
	msg->sg = x->sg;
	for (msg->len = 0, j = 0; j < s; j++)
		msg->len += (uint32_t)x->iov[j].iov_len;
}

static __rte_always_inline void
ipoib_shm_rc_sent(void *ctx, uint32_t i)
{
	struct ipoib_shm_rc_ctx *x = ctx;

	ipoib_hca_free_one(x->sent, x->wr[i].m);
}

static uint16_t
ipoib_shm_post_rc(struct shm_qp *qp, const struct ipoib_send_wr *wr,
		  uint16_t n)
{
	struct iovec iov[IPOIB_MAX_SGE];
	struct ipoib_hca_freer sent;
	struct shm_send sg;
	struct ipoib_shm_rc_ctx x = {
		.wr = wr, .sent = &sent, .iov = iov, .sg = &sg,
	};
	uint16_t done;

	ipoib_hca_free_start(&sent);
	done = shm_rc_send_each(qp, n, &x, ipoib_shm_rc_msg,
				ipoib_shm_rc_sent);
	ipoib_hca_free_end(&sent);
	return done;
}

static uint16_t
ipoib_shm_post_ud(struct shm_qp *qp, const struct ipoib_send_wr *wr,
		  uint16_t n)
{
	struct iovec iov[32][IPOIB_MAX_SGE];
	struct shm_send sw[32];
	struct ipoib_hca_freer sent;
	uint16_t done = 0;

	ipoib_hca_free_start(&sent);
	while (done < n) {
		uint16_t k = RTE_MIN((uint16_t)(n - done), (uint16_t)32);
		uint16_t i, posted;

		for (i = 0; i < k; i++) {
			const struct ipoib_send_wr *w = &wr[done + i];

			sw[i].iov = iov[i];
			sw[i].iovcnt = ipoib_shm_gather(w->m, iov[i]);
			sw[i].ah = (const struct shm_ah *)(const void *)w->ah;
			sw[i].remote_qpn = w->remote_qpn;
			sw[i].remote_qkey = w->remote_qkey;
		}
		posted = shm_qp_post_send(qp, sw, k);
		for (i = 0; i < posted; i++)
			ipoib_hca_free_one(&sent, wr[done + i].m);
		done += posted;
		if (posted < k)
			break;
	}
	ipoib_hca_free_end(&sent);
	return done;
}

uint16_t
ipoib_shm_post_send(struct ipoib_hca_qp *hqp, const struct ipoib_send_wr *wr,
		    uint16_t n)
{
	struct shm_qp *qp = TO_SHM(qp, hqp);

	/* the fabric's QP: this file compiles its RC template already */
	if (qp->type == SHM_QPT_UD)
		return ipoib_shm_post_ud(qp, wr, n);
	return ipoib_shm_post_rc(qp, wr, n);
}
