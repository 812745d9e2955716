/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The subnet administrator of the shm fabric: path records (IBTA
 * 15.2.5.16) and MCMemberRecord joins and leaves (15.2.5.17), answered
 * asynchronously. The rules are in shm_fabric.h. A query waits in its
 * port's process-local queue (sa_lock) until its answer is due; the SA
 * then acts on it under the directory lock and the answer is returned
 * by shm_sa_poll().
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shm_bell.h"
#include "shm_internal.h"
#include "shm_log.h"
#include "shm_sa.h"

#define SHM_SA_IPOIB_QKEY	0x0b1b	/* opensm partitions.conf default */
#define SHM_SA_IPOIB_MTU	2048	/* opensm: mtu=4 (2048) */
#define SHM_SA_MLID_BASE	0xc000

struct shm_sa_req {
	enum shm_sa_op op;
	uint64_t cookie;
	uint64_t due_ns;
	uint16_t pkey;			/* path */
	uint8_t gid[IPOIB_GID_LEN];	/* path: DGID */
	struct shm_sa_mcmember rec;	/* join, leave */
};

/* ---- the queue ------------------------------------------------------------ */

static void
shm_sa_due_update(struct shm_port *p)
{
	uint64_t due = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < p->sa_nr; i++)
		if (p->sa_q[i].due_ns < due)
			due = p->sa_q[i].due_ns;
	/* read by shm_cm_wait() without sa_lock */
	__atomic_store_n(&p->sa_due_ns, due, __ATOMIC_RELAXED);
}

static int
shm_sa_post(struct shm_port *p, struct shm_sa_req *r)
{
	int ret = 0;

	pthread_mutex_lock(&p->sa_lock);
	if (p->sa_nr == p->sa_cap) {
		unsigned int cap = p->sa_cap ? 2 * p->sa_cap : 16;
		struct shm_sa_req *q;

		if (p->sa_nr >= SHM_SA_MAX_PENDING) {
			ret = -ENOSPC;
			goto out;
		}
		if (cap > SHM_SA_MAX_PENDING)
			cap = SHM_SA_MAX_PENDING;
		q = realloc(p->sa_q, cap * sizeof(*q));
		if (q == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		p->sa_q = q;
		p->sa_cap = cap;
	}
	r->due_ns = ipoib_now_ns() + (uint64_t)p->sa_delay_ms * 1000000ULL;
	p->sa_q[p->sa_nr++] = *r;
	shm_sa_due_update(p);
out:
	pthread_mutex_unlock(&p->sa_lock);
	if (ret == 0)
		shm_bell_ring(p->cm);	/* a waiter recomputes its deadline */
	return ret;
}

int
shm_sa_path_query(struct shm_port *p, const uint8_t *dgid, uint16_t pkey,
		  uint64_t cookie)
{
	struct shm_sa_req r = { .op = SHM_SA_PATH_GET, .cookie = cookie,
				.pkey = pkey };

	if (dgid == NULL)
		return -EINVAL;
	memcpy(r.gid, dgid, IPOIB_GID_LEN);
	return shm_sa_post(p, &r);
}

int
shm_sa_mc_join(struct shm_port *p, const struct shm_sa_mcmember *rec,
	       uint64_t cookie)
{
	struct shm_sa_req r = { .op = SHM_SA_MC_JOIN, .cookie = cookie };

	if (rec == NULL)
		return -EINVAL;
	r.rec = *rec;
	return shm_sa_post(p, &r);
}

int
shm_sa_mc_leave(struct shm_port *p, const uint8_t *mgid, uint8_t join_state,
		uint64_t cookie)
{
	struct shm_sa_req r = { .op = SHM_SA_MC_LEAVE, .cookie = cookie };

	if (mgid == NULL)
		return -EINVAL;
	memcpy(r.rec.mgid, mgid, IPOIB_GID_LEN);
	r.rec.join_state = join_state;
	return shm_sa_post(p, &r);
}

void
shm_sa_set_faults(struct shm_port *p, uint32_t delay_ms, uint32_t drop_ppm)
{
	pthread_mutex_lock(&p->sa_lock);
	p->sa_delay_ms = delay_ms;
	p->sa_drop_ppm = drop_ppm;
	pthread_mutex_unlock(&p->sa_lock);
}

int
shm_sa_set_ipoib(struct shm_fabric *f, uint32_t qkey, uint16_t mtu)
{
	int ret;

	if (mtu != 0 && !ipoib_ib_mtu_valid(mtu))
		return -EINVAL;
	ret = shm_lock(f);
	if (ret < 0)
		return ret;
	f->hdr->sa_ipoib_qkey = qkey;
	f->hdr->sa_ipoib_mtu = mtu;
	shm_unlock(f);
	return 0;
}

void
shm_sa_port_close(struct shm_port *p)
{
	free(p->sa_q);
	p->sa_q = NULL;
	p->sa_nr = p->sa_cap = 0;
	pthread_mutex_destroy(&p->sa_lock);
}

/* ---- path records ----------------------------------------------------------- */

/*
 * The partition of p's table (pkey, or the first one when pkey is 0) that
 * port d shares with it under the membership rule; 0 when none.
 */
static uint16_t
shm_sa_shared_pkey(const struct shm_port_ent *s, const struct shm_port_ent *d,
		   uint16_t pkey)
{
	uint16_t i, j;

	for (i = 0; i < s->npkeys; i++) {
		if (pkey != 0 && (s->pkeys[i] & 0x7fff) != (pkey & 0x7fff))
			continue;
		for (j = 0; j < d->npkeys; j++)
			if (shm_pkey_match(s->pkeys[i], d->pkeys[j]))
				return s->pkeys[i];
	}
	return 0;
}

static int
shm_sa_path(struct shm_port *p, const struct shm_sa_req *r,
	    struct shm_sa_path *out)
{
	struct shm_hdr *h = p->f->hdr;
	const struct shm_port_ent *d;
	int port = shm_port_find_gid_locked(p->f, r->gid);

	if (port < 0)
		return -ENOENT;
	d = &h->ports[port];
	if (shm_load(&d->state) != SHM_PORT_ACTIVE)
		return -ENOENT;
	out->pkey = shm_sa_shared_pkey(p->ent, d, r->pkey);
	if (out->pkey == 0)
		return -ENOENT;
	memcpy(out->sgid, p->ent->gid, IPOIB_GID_LEN);
	memcpy(out->dgid, d->gid, IPOIB_GID_LEN);
	out->slid = p->ent->lid;
	out->dlid = d->lid;
	out->mtu = p->ent->ib_mtu < d->ib_mtu ? p->ent->ib_mtu : d->ib_mtu;
	return 0;
}

/* ---- multicast groups ------------------------------------------------------- */

/* An IPv4 broadcast MGID: ff1S:401b:PPPP:0000:0000:0000:ffff:ffff. */
static bool
shm_sa_ipoib_bcast(const uint8_t *g)
{
	static const uint8_t tail[10] = { 0, 0, 0, 0, 0, 0,
					  0xff, 0xff, 0xff, 0xff };

	return g[0] == 0xff && (g[1] & 0xf0) == 0x10 && g[2] == 0x40 &&
	       g[3] == 0x1b && memcmp(&g[6], tail, sizeof(tail)) == 0;
}

/* Does p hold partition pkey (membership rule)? */
static bool
shm_sa_port_in(const struct shm_port_ent *e, uint16_t pkey)
{
	uint16_t i;

	for (i = 0; i < e->npkeys; i++)
		if (shm_pkey_match(e->pkeys[i], pkey))
			return true;
	return false;
}

static void
shm_sa_rec(const struct shm_sa_mcg *m, const struct shm_port_ent *pt,
	   uint32_t g, struct shm_sa_mcmember *out)
{
	memcpy(out->mgid, m->mgid, IPOIB_GID_LEN);
	out->comp_mask = SHM_SA_MC_QKEY | SHM_SA_MC_PKEY | SHM_SA_MC_MTU |
			 SHM_SA_MC_SL | SHM_SA_MC_TCLASS |
			 SHM_SA_MC_FLOW_LABEL | SHM_SA_MC_HOP_LIMIT;
	out->qkey = m->qkey;
	out->flow_label = m->flow_label;
	out->mlid = m->mlid;
	out->pkey = m->pkey;
	out->mtu = m->mtu;
	out->sl = m->sl;
	out->tclass = m->tclass;
	out->hop_limit = m->hop_limit;
	out->join_state = ((pt->sa_full >> g) & 1 ? SHM_SA_JOIN_FULL : 0) |
			  ((pt->sa_send_only >> g) & 1 ?
			   SHM_SA_JOIN_SEND_ONLY_FULL : 0);
}

/* A free group slot filled from rec (named fields) or the IPoIB defaults. */
static int
shm_sa_mcg_create(struct shm_hdr *h, const struct shm_sa_mcmember *rec,
		  bool bcast)
{
	struct shm_sa_mcg *m;
	int g;

	for (g = 0; g < SHM_MAX_MCGS; g++)
		if (!h->sa_mcgs[g].in_use)
			break;
	if (g == SHM_MAX_MCGS)
		return -ENOSPC;
	m = &h->sa_mcgs[g];
	memset(m, 0, sizeof(*m));
	memcpy(m->mgid, rec->mgid, IPOIB_GID_LEN);
	m->mlid = (uint16_t)(SHM_SA_MLID_BASE + g);
	if (bcast) {
		m->persistent = 1;
		m->pkey = (uint16_t)(rec->mgid[4] << 8 | rec->mgid[5]);
		m->qkey = h->sa_ipoib_qkey ? h->sa_ipoib_qkey :
					     SHM_SA_IPOIB_QKEY;
		m->mtu = h->sa_ipoib_mtu ? h->sa_ipoib_mtu : SHM_SA_IPOIB_MTU;
	} else {
		m->pkey = rec->pkey;
		m->qkey = rec->qkey;
		m->mtu = rec->mtu;
		m->sl = rec->comp_mask & SHM_SA_MC_SL ? rec->sl : 0;
		m->tclass = rec->comp_mask & SHM_SA_MC_TCLASS ? rec->tclass : 0;
		m->flow_label = rec->comp_mask & SHM_SA_MC_FLOW_LABEL ?
				rec->flow_label : 0;
		m->hop_limit = rec->comp_mask & SHM_SA_MC_HOP_LIMIT ?
			       rec->hop_limit : 0;
	}
	/* senders find it once in_use is set: the fields first */
	shm_store(&m->in_use, 1);
	return g;
}

/* Every field the join names matches the group's. */
static bool
shm_sa_mcg_matches(const struct shm_sa_mcg *m, const struct shm_sa_mcmember *r)
{
	uint32_t c = r->comp_mask;

	return (!(c & SHM_SA_MC_QKEY) || r->qkey == m->qkey) &&
	       (!(c & SHM_SA_MC_PKEY) || r->pkey == m->pkey) &&
	       (!(c & SHM_SA_MC_MTU) || r->mtu == m->mtu) &&
	       (!(c & SHM_SA_MC_SL) || r->sl == m->sl) &&
	       (!(c & SHM_SA_MC_TCLASS) || r->tclass == m->tclass) &&
	       (!(c & SHM_SA_MC_FLOW_LABEL) || r->flow_label == m->flow_label) &&
	       (!(c & SHM_SA_MC_HOP_LIMIT) || r->hop_limit == m->hop_limit);
}

#define SHM_SA_JOIN_SEND_ONLY \
	(SHM_SA_JOIN_SEND_ONLY_NON | SHM_SA_JOIN_SEND_ONLY_FULL)
#define SHM_SA_CREATE_NEEDS	(SHM_SA_MC_QKEY | SHM_SA_MC_PKEY | SHM_SA_MC_MTU)

static int
shm_sa_join(struct shm_port *p, const struct shm_sa_mcmember *r,
	    struct shm_sa_mcmember *out)
{
	struct shm_hdr *h = p->f->hdr;
	struct shm_port_ent *pt = p->ent;
	bool full = r->join_state & SHM_SA_JOIN_FULL;
	bool so = r->join_state & SHM_SA_JOIN_SEND_ONLY;
	bool bcast = shm_sa_ipoib_bcast(r->mgid);
	uint64_t bit;
	int g;

	if (r->mgid[0] != 0xff || (!full && !so) ||
	    (r->join_state & ~(SHM_SA_JOIN_FULL | SHM_SA_JOIN_SEND_ONLY)))
		return -EINVAL;
	g = shm_sa_mcg_lookup(h, r->mgid);
	if (g < 0 && !bcast) {
		if (!full)
			return -ENOENT;
		if ((r->comp_mask & SHM_SA_CREATE_NEEDS) != SHM_SA_CREATE_NEEDS ||
		    !ipoib_ib_mtu_valid(r->mtu) || !shm_sa_port_in(pt, r->pkey))
			return -EINVAL;
	}
	if (g < 0 && bcast &&
	    !shm_sa_port_in(pt, (uint16_t)(r->mgid[4] << 8 | r->mgid[5])))
		return -EINVAL;
	if (g < 0 && (g = shm_sa_mcg_create(h, r, bcast)) < 0)
		return g;
	/* the group's own rules: its fields, its partition, its MTU */
	if (!shm_sa_mcg_matches(&h->sa_mcgs[g], r) ||
	    !shm_sa_port_in(pt, h->sa_mcgs[g].pkey) ||
	    pt->ib_mtu < h->sa_mcgs[g].mtu) {
		if (h->sa_mcgs[g].nr_members == 0 && !h->sa_mcgs[g].persistent)
			shm_store(&h->sa_mcgs[g].in_use, 0);
		return -EINVAL;
	}
	bit = 1ULL << g;
	if (!((pt->sa_full | pt->sa_send_only) & bit))
		h->sa_mcgs[g].nr_members++;
	if (full)
		shm_store(&pt->sa_full, pt->sa_full | bit);
	if (so)
		shm_store(&pt->sa_send_only, pt->sa_send_only | bit);
	shm_sa_rec(&h->sa_mcgs[g], pt, (uint32_t)g, out);
	return 0;
}

static int
shm_sa_leave(struct shm_port *p, const struct shm_sa_mcmember *r,
	     struct shm_sa_mcmember *out)
{
	struct shm_hdr *h = p->f->hdr;
	struct shm_port_ent *pt = p->ent;
	int g = shm_sa_mcg_lookup(h, r->mgid);
	bool full = r->join_state & SHM_SA_JOIN_FULL;
	bool so = r->join_state & SHM_SA_JOIN_SEND_ONLY;

	if (g < 0 || !((full && (pt->sa_full >> g) & 1) ||
		       (so && (pt->sa_send_only >> g) & 1)))
		return -ENOENT;
	shm_sa_mcg_leave(h, pt, (uint32_t)g, full, so);
	shm_sa_rec(&h->sa_mcgs[g], pt, (uint32_t)g, out);
	return 0;
}

/* ---- answers ------------------------------------------------------------- */

static void
shm_sa_answer(struct shm_port *p, const struct shm_sa_req *r,
	      struct shm_sa_event *ev)
{
	int ret = shm_lock(p->f);

	memset(ev, 0, sizeof(*ev));
	ev->op = r->op;
	ev->cookie = r->cookie;
	if (ret == 0) {
		switch (r->op) {
		case SHM_SA_PATH_GET:
			ret = shm_sa_path(p, r, &ev->path);
			break;
		case SHM_SA_MC_JOIN:
			ret = shm_sa_join(p, &r->rec, &ev->mc);
			break;
		default:
			ret = shm_sa_leave(p, &r->rec, &ev->mc);
			break;
		}
		shm_unlock(p->f);
	}
	if (ret < 0 && r->op != SHM_SA_PATH_GET && ev->mc.mgid[0] == 0)
		memcpy(ev->mc.mgid, r->rec.mgid, IPOIB_GID_LEN);
	if (ret < 0 && r->op == SHM_SA_PATH_GET)
		memcpy(ev->path.dgid, r->gid, IPOIB_GID_LEN);
	ev->status = ret;
}

int
shm_sa_poll(struct shm_port *p, struct shm_sa_event *ev, int n)
{
	struct shm_sa_req due[SHM_BURST];
	uint64_t now = ipoib_now_ns();
	unsigned int i, k = 0, nd = 0;
	uint64_t errors = 0;
	int got;

	if (n <= 0 ||
	    __atomic_load_n(&p->sa_due_ns, __ATOMIC_RELAXED) > now)
		return 0;
	if (n > SHM_BURST)
		n = SHM_BURST;
	pthread_mutex_lock(&p->sa_lock);
	/* the due ones in the order they were posted; the rest stay */
	for (i = 0; i < p->sa_nr; i++) {
		if (p->sa_q[i].due_ns > now || (int)nd == n) {
			p->sa_q[k++] = p->sa_q[i];
		} else if (shm_fault_drop(p->sa_drop_ppm)) {
			p->sa_drops++;	/* lost: never answered */
		} else {
			due[nd++] = p->sa_q[i];
		}
	}
	p->sa_nr = k;
	shm_sa_due_update(p);
	pthread_mutex_unlock(&p->sa_lock);
	for (got = 0; got < (int)nd; got++) {
		shm_sa_answer(p, &due[got], &ev[got]);
		if (ev[got].status < 0)
			errors++;
	}
	if (errors != 0) {
		pthread_mutex_lock(&p->sa_lock);
		p->sa_errors += errors;
		pthread_mutex_unlock(&p->sa_lock);
	}
	return got;
}
