/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Subnet administrator queries of the verbs transport, InfiniBand link
 * layer only, run by the control thread: path records (path_query,
 * path_poll) and the join of the broadcast group (mc_join, mc_join_poll).
 * Both are asynchronous on an rdma_cm event channel of their own (non-
 * blocking, made at the first query; ctrl_wait() polls its fd), one
 * rdma_cm id per query, whose context is its slot in struct ipoib_verbs_sa.
 *
 * Path query: rdma_resolve_addr() from our GID to the destination's
 * (AF_IB), ADDR_RESOLVED -> rdma_resolve_route(), ROUTE_RESOLVED -> the
 * first path record's DLID and SL; an error event, or a call that fails,
 * answers a negative errno (ipoib_vsa_path_answer()). At most
 * IPOIB_VERBS_PATH_MAX queries are outstanding, answers not yet taken
 * included (-ENOSPC beyond).
 *
 * Join: an id in the IPoIB port space (RDMA_PS_IPOIB: the kernel's cma
 * takes the Q_Key of the partition's IPoIB broadcast group for it, not
 * librdmacm's 0x01234567), bound to our GID, rdma_join_multicast() to the
 * MGID; MULTICAST_JOIN -> the group's Q_Key and MLID, MTU 0 (the event
 * carries none: the port's MTU is used), MULTICAST_ERROR -> a negative
 * errno (ipoib_vsa_join_answer()). The id is destroyed once the answer
 * has come, which leaves the group: the UD QP's membership is the one
 * mcast_attach() makes (ipoib_verbs_addr.c). On RoCE there is no subnet
 * administrator: mc_join() and path_query() return -EOPNOTSUPP.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/ib.h>
#include <rte_common.h>

#include "ipoib_hca.h"
#include "ipoib_log.h"
#include "ipoib_verbs.h"
#include "ipoib_wire.h"

/* One query: a slot of struct ipoib_verbs_sa, the context of its id. */
struct ipoib_vsa_query {
	struct rdma_cm_id *id;		/* NULL: free */
	uint64_t cookie;		/* path queries */
	bool join;
};

struct ipoib_verbs_sa {
	struct rdma_event_channel *ch;
	struct ipoib_vsa_query path[IPOIB_VERBS_PATH_MAX];
	unsigned int nr_path;		/* slots in use */
	/* path answers not yet taken by path_poll(), a ring */
	struct ipoib_path_rec ans[IPOIB_VERBS_PATH_MAX];
	unsigned int ans_head;		/* oldest */
	unsigned int nr_ans;
	struct ipoib_vsa_query join;
	int join_ret;			/* 0: no answer; 1: join_rec; < 0 */
	struct ipoib_mc_rec join_rec;
};

/* ---- answers from events: no device needed ------------------------------- */

bool
ipoib_vsa_path_answer(const struct rdma_cm_event *e, uint64_t cookie,
		      struct ipoib_path_rec *rec)
{
	const struct rdma_route *rt = &e->id->route;

	memset(rec, 0, sizeof(*rec));
	rec->cookie = cookie;
	switch (e->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:	/* the route is asked next */
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return false;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (rt->num_paths >= 1 && rt->path_rec != NULL &&
		    rt->path_rec[0].dlid != 0) {
			rec->dlid = be16toh(rt->path_rec[0].dlid);
			rec->sl = rt->path_rec[0].sl;
		} else {
			rec->status = -EHOSTUNREACH;
		}
		return true;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		rec->status = -ENODEV;
		return true;
	default:	/* ADDR_ERROR, ROUTE_ERROR, UNREACHABLE, ... */
		rec->status = e->status < 0 ? e->status : -EHOSTUNREACH;
		return true;
	}
}

int
ipoib_vsa_join_answer(const struct rdma_cm_event *e, struct ipoib_mc_rec *rec)
{
	switch (e->event) {
	case RDMA_CM_EVENT_MULTICAST_JOIN:
		memset(rec, 0, sizeof(*rec));
		rec->qkey = e->param.ud.qkey;
		rec->mlid = e->param.ud.ah_attr.dlid;
		rec->mtu = 0;	/* not in the event: the port's is used */
		return 1;
	case RDMA_CM_EVENT_MULTICAST_ERROR:
		return e->status < 0 ? e->status : -ECONNREFUSED;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return -ENODEV;
	default:
		return 0;
	}
}

/* ---- the channel --------------------------------------------------------- */

/* The port's SA state, made with its channel at the first query. */
static int
ipoib_vsa_open(struct ipoib_hca *hca)
{
	struct ipoib_verbs_sa *sa;
	int fl, ret;

	if (hca->sa != NULL)
		return 0;
	sa = calloc(1, sizeof(*sa));
	if (sa == NULL)
		return -ENOMEM;
	sa->join.join = true;
	sa->ch = rdma_create_event_channel();
	if (sa->ch == NULL) {
		ret = -(errno ? errno : ENODEV);
		IPOIB_LOG(ERR, "%s: no rdma_cm event channel for the subnet "
			  "administrator: %s", hca->name, strerror(-ret));
		free(sa);
		return ret;
	}
	fl = fcntl(sa->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(sa->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		ret = -errno;
		rdma_destroy_event_channel(sa->ch);
		free(sa);
		return ret;
	}
	hca->sa = sa;
	return 0;
}

static void
ipoib_vsa_path_done(struct ipoib_verbs_sa *sa, const struct ipoib_path_rec *r)
{
	/* room: queries and answers together are at most the ring's size */
	sa->ans[(sa->ans_head + sa->nr_ans) % IPOIB_VERBS_PATH_MAX] = *r;
	sa->nr_ans++;
}

/* A path query's event; true: the query is over. */
static bool
ipoib_vsa_path_event(struct ipoib_verbs_sa *sa, struct ipoib_vsa_query *q,
		     const struct rdma_cm_event *e)
{
	struct ipoib_path_rec rec;

	if (!ipoib_vsa_path_answer(e, q->cookie, &rec)) {
		if (e->event != RDMA_CM_EVENT_ADDR_RESOLVED ||
		    rdma_resolve_route(q->id, IPOIB_VCM_TIMEOUT_MS) == 0)
			return false;
		rec.status = -(errno ? errno : EHOSTUNREACH);
	}
	ipoib_vsa_path_done(sa, &rec);
	return true;
}

/* Take what the channel has: answers go to the ring and the join slot. */
static void
ipoib_vsa_pump(struct ipoib_hca *hca, struct ipoib_verbs_sa *sa)
{
	struct rdma_cm_event *e;

	while (rdma_get_cm_event(sa->ch, &e) == 0) {
		struct ipoib_vsa_query *q = e->id->context;
		bool done;
		int ret;

		if (q->join) {
			ret = ipoib_vsa_join_answer(e, &sa->join_rec);
			sa->join_ret = ret != 0 ? ret : sa->join_ret;
			done = ret != 0;
		} else {
			done = ipoib_vsa_path_event(sa, q, e);
		}
		rdma_ack_cm_event(e);
		if (!done)
			continue;
		/* acknowledged first: rdma_destroy_id() waits for that */
		rdma_destroy_id(q->id);
		q->id = NULL;
		if (!q->join)
			sa->nr_path--;
	}
	if (errno != EAGAIN)
		IPOIB_LOG_RATELIMIT(ERR, "%s: rdma_get_cm_event: %s",
				    hca->name, strerror(errno));
}

int
ipoib_verbs_sa_fd(const struct ipoib_hca *hca)
{
	return hca->sa != NULL ? hca->sa->ch->fd : -1;
}

/*
 * Path answers only: the driver takes them every round. A join's answer
 * is taken by the loop that asked it, between its waits; one that came
 * after that loop gave up is never taken and must not keep the control
 * thread awake.
 */
bool
ipoib_verbs_sa_ready(const struct ipoib_hca *hca)
{
	return hca->sa != NULL && hca->sa->nr_ans > 0;
}

void
ipoib_verbs_sa_close(struct ipoib_hca *hca)
{
	struct ipoib_verbs_sa *sa = hca->sa;
	unsigned int i;

	if (sa == NULL)
		return;
	/* every event taken was acknowledged: the ids go at once */
	for (i = 0; i < IPOIB_VERBS_PATH_MAX; i++)
		if (sa->path[i].id != NULL)
			rdma_destroy_id(sa->path[i].id);
	if (sa->join.id != NULL)
		rdma_destroy_id(sa->join.id);
	rdma_destroy_event_channel(sa->ch);
	free(sa);
	hca->sa = NULL;
}

/* ---- path records -------------------------------------------------------- */

int
ipoib_verbs_path_query(struct ipoib_hca *hca, const uint8_t *dgid,
		       uint16_t pkey, uint64_t cookie)
{
	struct sockaddr_storage src, dst;
	struct ipoib_verbs_sa *sa;
	struct ipoib_vsa_query *q = NULL;
	unsigned int i;
	int ret;

	if (hca->roce)
		return -EOPNOTSUPP;
	ret = ipoib_vsa_open(hca);
	if (ret < 0)
		return ret;
	sa = hca->sa;
	if (sa->nr_path + sa->nr_ans >= IPOIB_VERBS_PATH_MAX)
		return -ENOSPC;
	for (i = 0; i < IPOIB_VERBS_PATH_MAX && q == NULL; i++)
		if (sa->path[i].id == NULL)
			q = &sa->path[i];
	if (q == NULL)
		return -ENOSPC;
	q->cookie = cookie;
	q->join = false;
	if (rdma_create_id(sa->ch, &q->id, q, RDMA_PS_IB) != 0) {
		q->id = NULL;
		return -errno;
	}
	ipoib_vcm_addr(hca, hca->gid.raw, 0, 0, &src);
	ipoib_vcm_addr(hca, dgid, 0, ipoib_vcm_ps_sid(RDMA_PS_IB, 1), &dst);
	((struct sockaddr_ib *)&src)->sib_pkey = htons(pkey | IPOIB_PKEY_FULL);
	((struct sockaddr_ib *)&dst)->sib_pkey = htons(pkey | IPOIB_PKEY_FULL);
	if (rdma_resolve_addr(q->id, (struct sockaddr *)&src,
			      (struct sockaddr *)&dst,
			      IPOIB_VCM_TIMEOUT_MS) != 0) {
		ret = -errno;
		rdma_destroy_id(q->id);
		q->id = NULL;
		return ret;
	}
	sa->nr_path++;
	return 0;
}

int
ipoib_verbs_path_poll(struct ipoib_hca *hca, struct ipoib_path_rec *rec,
		      int n)
{
	struct ipoib_verbs_sa *sa = hca->sa;
	int k = 0;

	if (sa == NULL)
		return 0;
	ipoib_vsa_pump(hca, sa);
	while (k < n && sa->nr_ans > 0) {
		rec[k++] = sa->ans[sa->ans_head];
		sa->ans_head = (sa->ans_head + 1) % IPOIB_VERBS_PATH_MAX;
		sa->nr_ans--;
	}
	return k;
}

/* ---- the broadcast group's record ---------------------------------------- */

int
ipoib_verbs_mc_join(struct ipoib_hca *hca, const uint8_t *mgid, uint16_t pkey)
{
	struct sockaddr_storage src, grp;
	struct ipoib_verbs_sa *sa;
	int ret;

	if (hca->roce)
		return -EOPNOTSUPP;	/* no subnet administrator */
	ret = ipoib_vsa_open(hca);
	if (ret < 0)
		return ret;
	sa = hca->sa;
	if (sa->join.id != NULL) {
		/* one join at a time: the caller gave the last one up */
		rdma_destroy_id(sa->join.id);
		sa->join.id = NULL;
	}
	sa->join_ret = 0;
	if (rdma_create_id(sa->ch, &sa->join.id, &sa->join,
			   ipoib_vcm_join_ps(hca)) != 0) {
		sa->join.id = NULL;
		return -errno;
	}
	ipoib_vcm_addr(hca, hca->gid.raw, 0, 0, &src);
	((struct sockaddr_ib *)&src)->sib_pkey = htons(pkey | IPOIB_PKEY_FULL);
	if (rdma_bind_addr(sa->join.id, (struct sockaddr *)&src) != 0 ||
	    rdma_join_multicast(sa->join.id,
				ipoib_vcm_mgid_addr(mgid, pkey, &grp),
				&sa->join) != 0) {
		ret = -errno;
		rdma_destroy_id(sa->join.id);
		sa->join.id = NULL;
		return ret;
	}
	return 0;
}

int
ipoib_verbs_mc_join_poll(struct ipoib_hca *hca, struct ipoib_mc_rec *rec)
{
	struct ipoib_verbs_sa *sa = hca->sa;
	int ret;

	if (sa == NULL)
		return 0;
	ipoib_vsa_pump(hca, sa);
	ret = sa->join_ret;
	if (ret > 0)
		*rec = sa->join_rec;
	sa->join_ret = 0;
	return ret;
}
