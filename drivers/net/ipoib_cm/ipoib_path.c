/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Path records of peers, asked of the subnet administrator without
 * waiting (issue 14: no lcore, and not the control thread either, waits
 * on a subnet-manager query). Linux does the same: ipoib_main.c,
 * path_rec_start() posts ib_sa_path_rec_get() and returns; its callback,
 * path_rec_completion(), makes the address handle and sends what was
 * queued meanwhile. Here the control thread posts the query
 * (path_query), keeps it in priv->paths, and in a later round takes the
 * answer (path_poll) or, after the devarg path_timeout (3000 ms, as
 * Linux's) without one, gives up (a lost MAD never answers). Frames to
 * the peer wait meanwhile (ipoib_tx_held.c); frames to a peer without a
 * path are dropped for IPOIB_NEG_CACHE_MS, as to a MAC the directory
 * does not know (ipoib_neg_set()), then a frame asks again.
 */

#include <errno.h>
#include <string.h>

#include <rte_ring.h>

#include "ipoib_cm.h"
#include "ipoib_log.h"
#include "ipoib_path.h"
#include "ipoib_peer.h"
#include "ipoib_tx_held.h"
#include "ipoib_util.h"

/* The entry whose peer is key (peer index + 1; 0: a free one), or -1. */
static int
ipoib_path_find(const struct ipoib_paths *pa, uint32_t key)
{
	int i;

	for (i = 0; i < IPOIB_PATH_PENDING_MAX; i++)
		if (pa->q[i].peer == key)
			return i;
	return -1;
}

int
ipoib_path_get(struct ipoib_priv *priv, const struct ipoib_peer *peer,
	       struct ipoib_ah_attr *aa)
{
	struct ipoib_paths *pa = &priv->paths;
	struct ipoib_path_wait *w;
	int i, ret;

	if (!priv->attr.path_records)
		return 1;
	i = ipoib_path_find(pa, peer->index + 1);
	w = i < 0 ? NULL : &pa->q[i];
	/* an answer for a peer whose slot was reused meanwhile: stale */
	if (w != NULL && memcmp(w->dgid, aa->dgid, IPOIB_GID_LEN) != 0) {
		w->peer = 0;
		w = NULL;
	}
	if (w != NULL) {
		if (!w->answered)
			return 0;
		/* a failure is not asked again for a while */
		if (w->status < 0)
			return w->status;
		w->peer = 0;
		aa->dlid = w->dlid;
		aa->sl = w->sl;
		return 1;
	}
	if (priv->stopping)
		return -ECANCELED;
	i = ipoib_path_find(pa, 0);
	if (i < 0)
		return 0;	/* asked once an entry is free */
	w = &pa->q[i];
	ret = priv->ops->path_query(priv->hca, aa->dgid, priv->pkey,
				    peer->index);
	if (ret == -ENOSPC)
		return 0;
	if (ret < 0)
		return ret;
	memset(w, 0, sizeof(*w));
	w->peer = peer->index + 1;
	w->since_ns = ipoib_now_ns();
	memcpy(w->dgid, aa->dgid, IPOIB_GID_LEN);
	priv->cstats.path_queries++;
	return 0;
}

bool
ipoib_path_waiting(const struct ipoib_priv *priv,
		   const struct ipoib_peer *peer)
{
	const struct ipoib_paths *pa = &priv->paths;
	int i;

	if (!priv->attr.path_records)
		return false;
	i = ipoib_path_find(pa, peer->index + 1);
	if (i >= 0)
		return !pa->q[i].answered || pa->q[i].status == 0;
	/* not asked yet: every entry was taken */
	return ipoib_path_find(pa, 0) < 0;
}

/* An answer (or a timeout): its peer gets its handle, or is dropped. */
static void
ipoib_path_answer(struct ipoib_priv *priv, struct ipoib_path_wait *w,
		  int status, uint16_t dlid, uint8_t sl)
{
	w->answered = 1;
	w->since_ns = ipoib_now_ns();	/* taken by then, or forgotten */
	w->status = status;
	w->dlid = dlid;
	w->sl = sl;
	if (status == -ETIMEDOUT)
		priv->cstats.path_timeouts++;
	else if (status < 0)
		priv->cstats.path_failures++;
	if (status < 0)
		IPOIB_LOG(DEBUG, "port %u: no path to peer %u: %s",
			  priv->eth_dev->data->port_id, w->peer - 1,
			  strerror(-status));
	priv->paths.changed = true;
	if (rte_ring_enqueue(priv->pt.resolve,
			     (void *)(uintptr_t)(w->peer - 1)) != 0)
		__atomic_store_n(&priv->pt.resolve_lost, 1, __ATOMIC_RELAXED);
}

bool
ipoib_path_poll(struct ipoib_priv *priv)
{
	struct ipoib_paths *pa = &priv->paths;
	struct ipoib_path_rec rec[16];
	uint64_t now;
	unsigned int j;
	bool work = false;
	int n, k;

	if (!priv->attr.path_records)
		return false;
	do {
		n = priv->ops->path_poll(priv->hca, rec, RTE_DIM(rec));
		for (k = 0; k < n; k++) {
			int i = rec[k].cookie >= UINT32_MAX ? -1 :
				ipoib_path_find(pa,
						(uint32_t)rec[k].cookie + 1);

			/* timed out before, or its entry was reused */
			if (i < 0 || pa->q[i].answered)
				continue;
			ipoib_path_answer(priv, &pa->q[i], rec[k].status,
					  rec[k].dlid, rec[k].sl);
		}
		work |= n > 0;
	} while (n == (int)RTE_DIM(rec));
	now = ipoib_now_ns();
	for (j = 0; j < IPOIB_PATH_PENDING_MAX; j++) {
		struct ipoib_path_wait *w = &pa->q[j];

		if (w->peer == 0)
			continue;
		/*
		 * A failure is kept a while: frames that waited on it are
		 * dropped, not made to ask again (a success is taken at once,
		 * unless its peer went meanwhile)
		 */
		if (w->answered) {
			if (now - w->since_ns >= IPOIB_NEG_CACHE_MS *
			    IPOIB_NS_PER_MS)
				w->peer = 0;
			continue;
		}
		if (now - w->since_ns >= priv->cfg.path_timeout *
		    IPOIB_NS_PER_MS) {
			ipoib_path_answer(priv, w, -ETIMEDOUT, 0, 0);
			work = true;
		}
	}
	return work;
}

void
ipoib_path_fail_all(struct ipoib_priv *priv)
{
	unsigned int i;

	for (i = 0; i < IPOIB_PATH_PENDING_MAX; i++) {
		struct ipoib_path_wait *w = &priv->paths.q[i];

		if (w->peer != 0 && !w->answered)
			ipoib_path_answer(priv, w, -ECANCELED, 0, 0);
	}
}
