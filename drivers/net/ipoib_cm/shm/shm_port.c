/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Ports of the fabric: open and close, attributes, address handles,
 * async events, counters, fault injection and the address records.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shm_internal.h"
#include "shm_log.h"
#include "shm_sa.h"

/* ---- ports -------------------------------------------------------------- */

static uint64_t
shm_guid_derive(const char *fabric, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	const char *s;

	for (s = fabric; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	h = (h ^ '/') * 0x100000001b3ULL;
	for (s = name; s != NULL && *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	/* a Mellanox-like OUI keeps derived GUIDs recognisable */
	return 0x0002c90000000000ULL | (h & 0xffffffffffULL);
}

static void
shm_gid_from_guid(uint8_t *gid, uint64_t guid)
{
	uint64_t prefix = SHM_SUBNET_PREFIX;
	int i;

	for (i = 0; i < 8; i++) {
		gid[i] = (uint8_t)(prefix >> (56 - 8 * i));
		gid[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
	}
}

static uint32_t
shm_or_default(uint32_t v, uint32_t def)
{
	return v == 0 ? def : v;
}

static int
shm_port_alloc(struct shm_fabric *f, const struct shm_port_conf *conf,
	       uint64_t guid, uint32_t *index)
{
	struct shm_hdr *h = f->hdr;
	uint8_t gid[IPOIB_GID_LEN];
	uint32_t i, free_idx = SHM_MAX_PORTS;

	shm_gid_from_guid(gid, guid);
	for (i = 0; i < SHM_MAX_PORTS; i++) {
		struct shm_port_ent *pt = &h->ports[i];

		if (pt->state == SHM_PORT_FREE) {
			if (free_idx == SHM_MAX_PORTS)
				free_idx = i;
		} else if (pt->guid == guid) {
			SHM_LOG(ERR, "fabric %s: GUID 0x%016" PRIx64 " is in "
				"use by port %u", f->name, guid, i);
			return -EADDRINUSE;
		}
	}
	if (free_idx == SHM_MAX_PORTS)
		return -ENOSPC;
	i = free_idx;
	/* state (FREE) is read without the lock: shm_port_open() sets it */
	memset((uint8_t *)&h->ports[i] + sizeof(h->ports[i].state), 0,
	       sizeof(h->ports[i]) - sizeof(h->ports[i].state));
	h->ports[i].proc = f->proc;
	h->ports[i].proc_gen = f->gen;
	h->ports[i].lid = (uint16_t)(i + 1);	/* LIDs 1..16384: unicast */
	h->ports[i].ib_mtu = conf->ib_mtu ? conf->ib_mtu : 2048;
	h->ports[i].guid = guid;
	memcpy(h->ports[i].gid, gid, IPOIB_GID_LEN);
	h->ports[i].npkeys = conf->npkeys;
	memcpy(h->ports[i].pkeys, conf->pkeys, sizeof(conf->pkeys));
	if (h->ports[i].npkeys == 0) {
		h->ports[i].npkeys = 1;
		h->ports[i].pkeys[0] = 0xffff;
	}
	h->ports[i].max_qp = shm_or_default(conf->max_qp, SHM_DEF_MAX_QP);
	h->ports[i].max_qp_wr = SHM_DEF_MAX_QP_WR;
	h->ports[i].max_srq_wr = shm_or_default(conf->max_srq_wr,
						SHM_DEF_MAX_SRQ_WR);
	h->ports[i].max_cqe = shm_or_default(conf->max_cqe, SHM_DEF_MAX_CQE);
	h->ports[i].fault_rej_after = -1;
	*index = i;
	return 0;
}

int
shm_port_open(struct shm_fabric *f, const struct shm_port_conf *conf,
	      struct shm_port **pp)
{
	uint64_t guid = conf->guid ? conf->guid :
			shm_guid_derive(f->name, conf->name);
	struct shm_port *p;
	uint64_t off;
	uint32_t index;
	int ret;

	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	p->f = f;
	pthread_mutex_init(&p->cap_lock, NULL);
	pthread_mutex_init(&p->sa_lock, NULL);
	p->sa_due_ns = UINT64_MAX;
	ret = shm_port_arena_alloc(p, sizeof(struct shm_cm_ring), 0, &off);
	if (ret < 0)
		goto fail;
	p->cm = shm_arena_ptr(f, f->proc, off);	/* zeroed */
	ret = shm_lock(f);
	if (ret < 0)
		goto fail_cm;
	ret = shm_port_alloc(f, conf, guid, &index);
	if (ret == 0) {
		p->index = index;
		p->ent = &f->hdr->ports[index];
		p->ent->cm_ring_off = off;
		shm_store(&p->ent->state, SHM_PORT_ACTIVE);
	}
	shm_unlock(f);
	if (ret < 0)
		goto fail_cm;
	p->last_state = SHM_PORT_ACTIVE;
	SHM_LOG(INFO, "fabric %s: port %u up: GUID 0x%016" PRIx64 " LID %u",
		f->name, index, guid, p->ent->lid);
	*pp = p;
	return 0;
fail_cm:
	shm_port_arena_free(p, off, sizeof(struct shm_cm_ring));
fail:
	pthread_mutex_destroy(&p->sa_lock);
	pthread_mutex_destroy(&p->cap_lock);
	free(p);
	return ret;
}

/* The port's QPs, SRQs and CM ids must be gone already. */
void
shm_port_close(struct shm_port *p)
{
	struct shm_fabric *f = p->f;
	/* once the slot is free another process may reuse (and zero) it */
	uint64_t cm_off = p->ent->cm_ring_off;

	shm_capture_close(p);
	if (shm_lock(f) == 0) {
		shm_ll_unindex(f->hdr, p->ent);
		shm_sa_port_gone(f->hdr, p->ent);
		shm_store(&p->ent->state, SHM_PORT_FREE);
		shm_unlock(f);
	}
	shm_port_arena_free(p, cm_off, sizeof(struct shm_cm_ring));
	shm_sa_port_close(p);
	free(p->qps);
	free(p->srqs);
	free(p->listen);
	free(p->ids);
	pthread_mutex_destroy(&p->cap_lock);
	free(p);
}

void
shm_port_query(const struct shm_port *p, struct shm_port_info *info)
{
	const struct shm_port_ent *e = p->ent;

	memset(info, 0, sizeof(*info));
	info->guid = e->guid;
	memcpy(info->gid, e->gid, IPOIB_GID_LEN);
	info->lid = e->lid;
	info->ib_mtu = e->ib_mtu;
	info->active = shm_load(&e->state) == SHM_PORT_ACTIVE;
	info->index = p->index;
	info->max_qp = e->max_qp;
	info->max_qp_wr = e->max_qp_wr;
	info->max_srq_wr = e->max_srq_wr;
	info->max_cqe = e->max_cqe;
	info->npkeys = e->npkeys;
	memcpy(info->pkeys, e->pkeys, sizeof(info->pkeys));
}

/* Take the port down or bring it back (fault injection, tests). */
int
shm_port_set_state(struct shm_port *p, bool active)
{
	shm_store(&p->ent->state, active ? SHM_PORT_ACTIVE : SHM_PORT_DOWN);
	return 0;
}

struct shm_fabric *
shm_port_fabric(const struct shm_port *p)
{
	return p->f;
}

int
shm_lid_to_gid(struct shm_fabric *f, uint16_t lid, uint8_t *gid)
{
	const struct shm_port_ent *pt;
	int ret;

	/* LIDs are port index + 1 (shm_port_alloc()) */
	if (lid == 0 || lid > SHM_MAX_PORTS)
		return -ENOENT;
	ret = shm_lock(f);
	if (ret < 0)
		return ret;
	pt = &f->hdr->ports[lid - 1];
	ret = shm_load(&pt->state) == SHM_PORT_FREE ? -ENOENT : 0;
	if (ret == 0)
		memcpy(gid, pt->gid, IPOIB_GID_LEN);
	shm_unlock(f);
	return ret;
}

int
shm_ah_resolve(struct shm_fabric *f, const uint8_t *gid, uint16_t dlid,
	       struct shm_ah *ah)
{
	int port;

	memset(ah, 0, sizeof(*ah));
	memcpy(ah->dgid, gid, IPOIB_GID_LEN);
	if (gid[0] == 0xff) {
		ah->multicast = true;
		ah->global = true;
		port = shm_sa_mcg_lookup(f->hdr, gid);
		/* the MLID the SA gave the group; before any join, 0xc000 */
		ah->dlid = port >= 0 ?
			   shm_load_relaxed(&f->hdr->sa_mcgs[port].mlid) :
			   0xc000;
		return 0;
	}
	port = shm_lock(f);
	if (port < 0)
		return port;
	port = shm_port_find_gid_locked(f, gid);
	if (port >= 0) {
		ah->port = (uint32_t)port;
		ah->dlid = dlid ? dlid : f->hdr->ports[port].lid;
	}
	shm_unlock(f);
	return port < 0 ? port : 0;
}

static void
shm_port_check_state(struct shm_port *p)
{
	uint32_t st = shm_load(&p->ent->state);
	struct shm_async_event ev = { 0 };

	if (st == p->last_state)
		return;
	p->last_state = st;
	ev.type = st == SHM_PORT_ACTIVE ? SHM_EV_PORT_ACTIVE :
					  SHM_EV_PORT_DOWN;
	shm_port_event(p, &ev);
}

static void
shm_srq_check_limits(struct shm_port *p)
{
	unsigned int i;

	for (i = 0; i < p->nr_srqs; i++) {
		struct shm_rq *srq = p->srqs[i];
		struct shm_async_event ev = { .type = SHM_EV_SRQ_LIMIT };

		if (__atomic_exchange_n(&srq->ring->limit_fired, 0,
					__ATOMIC_ACQ_REL) == 0)
			continue;
		ev.srq = srq;
		shm_port_event(p, &ev);
	}
}

int
shm_async_poll(struct shm_port *p, struct shm_async_event *ev, int n)
{
	int k = 0;

	shm_janitor(p->f);
	if (!p->lost_reported && shm_fabric_lost(p->f)) {
		struct shm_async_event lost = { .type = SHM_EV_FABRIC_LOST };

		p->lost_reported = true;
		shm_port_event(p, &lost);
	}
	shm_port_check_state(p);
	shm_qp_watch(p);
	shm_srq_check_limits(p);
	while (k < n && p->ev_head != p->ev_tail)
		ev[k++] = p->evq[p->ev_head++ % SHM_EVQ_LEN];
	return k;
}

void
shm_port_counters(const struct shm_port *p, struct shm_port_counters *c)
{
	const struct shm_port_ent *e = p->ent;

	c->ud_no_wr = shm_load_relaxed(&e->cnt_ud_no_wr);
	c->pkey_drops = shm_load_relaxed(&e->cnt_pkey_drops);
	c->qkey_drops = shm_load_relaxed(&e->cnt_qkey_drops);
	c->len_errs = shm_load_relaxed(&e->cnt_len_errs);
	c->fault_drops = shm_load_relaxed(&e->cnt_fault_drops);
	c->cm_drops = shm_load_relaxed(&e->cnt_cm_drops);
	c->cm_retries = shm_load_relaxed(&p->cm_retries);
	c->rnr_naks = shm_load_relaxed(&e->cnt_rnr_naks);
	c->link_down_drops = shm_load_relaxed(&e->cnt_link_down_drops);
	pthread_mutex_lock((pthread_mutex_t *)(uintptr_t)&p->sa_lock);
	c->sa_drops = p->sa_drops;
	c->sa_errors = p->sa_errors;
	pthread_mutex_unlock((pthread_mutex_t *)(uintptr_t)&p->sa_lock);
}

/*
 * The port's entry keeps each setting in a field of its own: senders of
 * other processes load them one by one, atomically. port_down is the
 * port's state.
 */
void
shm_port_set_faults(struct shm_port *p, const struct ipoib_faults *fl)
{
	struct shm_port_ent *e = p->ent;

	shm_store(&e->fault_drop_ppm, fl->drop_ppm);
	shm_store(&e->fault_cm_delay_ms, fl->cm_delay_ms);
	shm_store(&e->fault_rej_after, fl->rej_after);
	shm_store(&e->fault_cm_drop_mask, fl->cm_drop_mask);
	__atomic_store_n(&p->ud_send_refuse, fl->ud_send_refuse,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&p->ah_hold, fl->ah_hold, __ATOMIC_RELEASE);
	pthread_mutex_lock(&p->sa_lock);
	p->sa_drop_ppm = fl->sa_drop_ppm;
	pthread_mutex_unlock(&p->sa_lock);
	shm_port_set_state(p, !fl->port_down);
}

void
shm_port_get_faults(const struct shm_port *p, struct ipoib_faults *fl)
{
	const struct shm_port_ent *e = p->ent;

	fl->drop_ppm = shm_load(&e->fault_drop_ppm);
	fl->cm_delay_ms = shm_load(&e->fault_cm_delay_ms);
	fl->rej_after = shm_load(&e->fault_rej_after);
	fl->cm_drop_mask = shm_load(&e->fault_cm_drop_mask);
	fl->port_down = shm_load(&e->state) != SHM_PORT_ACTIVE;
	fl->ud_send_refuse = __atomic_load_n(&p->ud_send_refuse,
					     __ATOMIC_RELAXED);
	fl->ah_hold = __atomic_load_n(&p->ah_hold, __ATOMIC_RELAXED);
	pthread_mutex_lock((pthread_mutex_t *)(uintptr_t)&p->sa_lock);
	fl->sa_drop_ppm = p->sa_drop_ppm;
	pthread_mutex_unlock((pthread_mutex_t *)(uintptr_t)&p->sa_lock);
}

/*
 * Fault ah_hold: wait while it is set, as a path query the SA has not
 * answered (checked every millisecond; only tests set it).
 */
void
shm_port_ah_wait(const struct shm_port *p)
{
	while (__atomic_load_n(&p->ah_hold, __ATOMIC_ACQUIRE))
		usleep(1000);
}

/* ---- address records ----------------------------------------------------- */

void
shm_port_publish(struct shm_port *p, const uint8_t *mac, uint32_t qpn,
		 uint8_t flags)
{
	struct shm_port_ent *e = p->ent;
	struct shm_hdr *h = p->f->hdr;

	if (shm_lock(p->f) < 0)
		return;
	shm_ll_unindex(h, e);
	shm_store(&e->ll_valid, 0);
	memcpy(e->ll_mac, mac, sizeof(e->ll_mac));
	e->ll_qpn = qpn;
	e->ll_flags = flags;
	shm_store(&e->ll_valid, 1);
	shm_ll_index(h, p->index);
	shm_unlock(p->f);
}

/* Do two ports have a P_Key in common they may talk with? */
static bool
shm_ports_share_pkey(const struct shm_port_ent *a, const struct shm_port_ent *b)
{
	uint32_t i, j;

	for (i = 0; i < a->npkeys && i < IPOIB_PKEY_TABLE_LEN; i++)
		for (j = 0; j < b->npkeys && j < IPOIB_PKEY_TABLE_LEN; j++)
			if (shm_pkey_match(a->pkeys[i], b->pkeys[j]))
				return true;
	return false;
}

int
shm_addr_resolve(const struct shm_port *p, const uint8_t *mac,
		 uint8_t *hwaddr)
{
	struct shm_hdr *h = p->f->hdr;
	uint32_t b = shm_ll_bucket(mac), n;

	for (n = 0; n < SHM_LL_BUCKETS; n++, b = (b + 1) & SHM_LL_MASK) {
		uint32_t v = shm_load(&h->ll_index[b]);
		struct shm_port_ent *e;

		if (v == 0)
			break;		/* the end of its probe path */
		if (v == SHM_LL_FREED || v > SHM_MAX_PORTS)
			continue;
		e = &h->ports[v - 1];
		if (shm_load(&e->state) != SHM_PORT_ACTIVE ||
		    !shm_load(&e->ll_valid) ||
		    memcmp(e->ll_mac, mac, sizeof(e->ll_mac)) != 0 ||
		    !shm_ports_share_pkey(p->ent, e))
			continue;
		hwaddr[0] = e->ll_flags;
		hwaddr[1] = (uint8_t)(e->ll_qpn >> 16);
		hwaddr[2] = (uint8_t)(e->ll_qpn >> 8);
		hwaddr[3] = (uint8_t)e->ll_qpn;
		memcpy(&hwaddr[4], e->gid, IPOIB_GID_LEN);
		return 0;
	}
	return -ENOENT;
}
