/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The HCA interface over rdma-core (transport=verbs): libibverbs for the
 * device, memory, queues and datapath; librdmacm for connections and
 * multicast (ipoib_verbs_cm.c).
 *
 * Memory. Receive buffers live in memory mem_alloc() maps and registers.
 * Send buffers are the application's mbufs: the mempool an mbuf comes from
 * is registered the first time one of its mbufs is sent (every memory
 * chunk of the pool, rte_mempool_mem_iter()), and deregistered when the
 * pool is freed (mempool event callback). Frames up to IPOIB_VERBS_INLINE
 * bytes go inline: copied at post time and freed at once, no lookup.
 * Registered ranges are found lock-free (a seqcount per entry) with a
 * per-QP hint, so a send costs one range check per segment.
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
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "ipoib_hca.h"
#include "ipoib_log.h"
#include "ipoib_verbs.h"
#include "ipoib_wire.h"

#define IPOIB_VERBS_QPN_EMPTY	0ULL
#define IPOIB_VERBS_QPN_TOMB	UINT64_MAX
#define IPOIB_VERBS_POLL_MAX	64
#define IPOIB_VERBS_POST_MAX	32
#define IPOIB_VERBS_FATAL_RING	1024
#define IPOIB_VERBS_DIR		"/run/ipoibcm-verbs"
#define IPOIB_VERBS_HOP_LIMIT	64

/* ---- QPs by number ------------------------------------------------------- */

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

struct ipoib_hca_qp *
ipoib_verbs_qp_by_num(struct ipoib_hca *hca, uint32_t qpn)
{
	return ipoib_verbs_qp_lookup(hca, qpn);
}

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

/* ---- registered memory --------------------------------------------------- */

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

/* Writers hold mr_lock. */
static void
ipoib_verbs_mr_write(struct ipoib_verbs_mr *e, uintptr_t start, uintptr_t end,
		     uint32_t lkey)
{
	uint32_t s = e->seq;

	__atomic_store_n(&e->seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->start, start, __ATOMIC_RELAXED);
	__atomic_store_n(&e->end, end, __ATOMIC_RELAXED);
	__atomic_store_n(&e->lkey, lkey, __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

/* Register [addr, addr + len) and list it; mr_lock held. */
static struct ibv_mr *
ipoib_verbs_mr_add(struct ipoib_hca *hca, void *addr, size_t len,
		   const void *owner)
{
	struct ipoib_verbs_mr *e = NULL;
	struct ibv_mr *mr;
	uint32_t i;

	for (i = 0; i < hca->nr_mrs; i++) {
		if (hca->mrs[i].mr == NULL) {
			e = &hca->mrs[i];
			break;
		}
	}
	if (e == NULL) {
		if (hca->nr_mrs == IPOIB_VERBS_MR_MAX) {
			errno = ENOSPC;
			return NULL;
		}
		e = &hca->mrs[hca->nr_mrs];
	}
	mr = ibv_reg_mr(hca->pd, addr, len, IBV_ACCESS_LOCAL_WRITE);
	if (mr == NULL)
		return NULL;
	e->mr = mr;
	e->owner = owner;
	ipoib_verbs_mr_write(e, (uintptr_t)addr, (uintptr_t)addr + len,
			     mr->lkey);
	if (e == &hca->mrs[hca->nr_mrs])
		__atomic_store_n(&hca->nr_mrs, hca->nr_mrs + 1,
				 __ATOMIC_RELEASE);
	return mr;
}

/* Unlist and deregister entry e; mr_lock held. */
static void
ipoib_verbs_mr_del(struct ipoib_verbs_mr *e)
{
	int ret;

	ipoib_verbs_mr_write(e, 0, 0, 0);
	ret = ibv_dereg_mr(e->mr);
	if (ret != 0)
		IPOIB_LOG(ERR, "ibv_dereg_mr: %s", strerror(ret));
	e->mr = NULL;
	e->owner = NULL;
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

struct ipoib_verbs_reg_ctx {
	struct ipoib_hca *hca;
	int err;
};

static void
ipoib_verbs_reg_chunk(struct rte_mempool *mp, void *opaque,
		      struct rte_mempool_memhdr *memhdr, unsigned int idx)
{
	struct ipoib_verbs_reg_ctx *c = opaque;
	uint32_t i;

	RTE_SET_USED(idx);
	if (c->err != 0)
		return;
	for (i = 0; i < c->hca->nr_mrs; i++)
		if (c->hca->mrs[i].mr != NULL &&
		    c->hca->mrs[i].start == (uintptr_t)memhdr->addr)
			return;		/* registered already */
	if (ipoib_verbs_mr_add(c->hca, memhdr->addr, memhdr->len, mp) == NULL)
		c->err = errno ? errno : ENOMEM;
}

/*
 * First sight of an mbuf's memory: register the mempool its data lives
 * in. Once per pool; it makes a system call, on the datapath, once.
 */
static int
ipoib_verbs_mr_register_mbuf(struct ipoib_hca *hca, struct rte_mbuf *m)
{
	struct ipoib_verbs_reg_ctx c = { .hca = hca, .err = 0 };
	struct rte_mbuf *direct = m;
	struct rte_mempool *mp;

	if (RTE_MBUF_HAS_EXTBUF(m))
		return -ENOENT;	/* not in a mempool: cannot be found */
	if (RTE_MBUF_CLONED(m))
		direct = rte_mbuf_from_indirect(m);
	mp = direct->pool;
	if (mp == NULL)
		return -ENOENT;
	rte_spinlock_lock(&hca->mr_lock);
	rte_mempool_mem_iter(mp, ipoib_verbs_reg_chunk, &c);
	rte_spinlock_unlock(&hca->mr_lock);
	if (c.err != 0) {
		IPOIB_LOG_RATELIMIT(ERR, "%s: cannot register mempool %s: %s",
				    hca->name, mp->name, strerror(c.err));
		return -c.err;
	}
	IPOIB_LOG(DEBUG, "%s: mempool %s registered for sending", hca->name,
		  mp->name);
	return 0;
}

/* A mempool is freed: its memory may go; so must its registrations. */
static void
ipoib_verbs_mempool_event(enum rte_mempool_event event,
			  struct rte_mempool *mp, void *arg)
{
	struct ipoib_hca *hca = arg;
	uint32_t i;

	if (event != RTE_MEMPOOL_EVENT_DESTROY)
		return;
	rte_spinlock_lock(&hca->mr_lock);
	for (i = 0; i < hca->nr_mrs; i++)
		if (hca->mrs[i].mr != NULL && hca->mrs[i].owner == mp)
			ipoib_verbs_mr_del(&hca->mrs[i]);
	rte_spinlock_unlock(&hca->mr_lock);
}

/* struct ipoib_sge is struct ibv_sge: scatter lists go as they are. */
static void
ipoib_verbs_sge_layout(void)
{
	RTE_BUILD_BUG_ON(sizeof(struct ipoib_sge) != sizeof(struct ibv_sge));
	RTE_BUILD_BUG_ON(offsetof(struct ipoib_sge, addr) !=
			 offsetof(struct ibv_sge, addr));
	RTE_BUILD_BUG_ON(offsetof(struct ipoib_sge, length) !=
			 offsetof(struct ibv_sge, length));
	RTE_BUILD_BUG_ON(offsetof(struct ipoib_sge, lkey) !=
			 offsetof(struct ibv_sge, lkey));
}

/* ---- port ---------------------------------------------------------------- */

static uint32_t
ipoib_verbs_mtu_bytes(enum ibv_mtu mtu)
{
	switch (mtu) {
	case IBV_MTU_256: return 256;
	case IBV_MTU_512: return 512;
	case IBV_MTU_1024: return 1024;
	case IBV_MTU_2048: return 2048;
	default: return 4096;
	}
}

/* Link speed from ibv_port_attr: lanes x per-lane rate, in Mb/s. */
static uint32_t
ipoib_verbs_speed(const struct ibv_port_attr *pa)
{
	static const struct { uint32_t speed; uint32_t mbps; } per_lane[] = {
		{ 1, 2500 }, { 2, 5000 }, { 4, 10000 }, { 8, 10000 },
		{ 16, 14000 }, { 32, 25000 }, { 64, 50000 }, { 128, 100000 },
	};
	static const struct { uint32_t width; uint32_t lanes; } widths[] = {
		{ 1, 1 }, { 2, 4 }, { 4, 8 }, { 8, 12 }, { 16, 2 },
	};
	uint32_t mbps = 0, lanes = 1, i;

	for (i = 0; i < RTE_DIM(per_lane); i++)
		if (pa->active_speed == per_lane[i].speed)
			mbps = per_lane[i].mbps;
	for (i = 0; i < RTE_DIM(widths); i++)
		if (pa->active_width == widths[i].width)
			lanes = widths[i].lanes;
	return mbps * lanes;
}

static const char *
ipoib_verbs_gid_type_name(uint32_t type)
{
	switch (type) {
	case IBV_GID_TYPE_IB: return "IB";
	case IBV_GID_TYPE_ROCE_V1: return "RoCE v1";
	case IBV_GID_TYPE_ROCE_V2: return "RoCE v2";
	default: return "unknown";
	}
}

static struct ibv_context *
ipoib_verbs_open_device(const char *want, char *name, size_t len)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n, i;

	list = ibv_get_device_list(&n);
	if (list == NULL) {
		IPOIB_LOG(ERR, "no RDMA devices: %s", strerror(errno));
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (want[0] != '\0' &&
		    strcmp(ibv_get_device_name(list[i]), want) != 0)
			continue;
		snprintf(name, len, "%s", ibv_get_device_name(list[i]));
		ctx = ibv_open_device(list[i]);
		if (ctx == NULL)
			IPOIB_LOG(ERR, "cannot open %s: %s", name,
				  strerror(errno));
		break;
	}
	if (i == n) {
		IPOIB_LOG(ERR, "RDMA device %s not found (%d devices; "
			  "rdma link / ibv_devices lists them)",
			  want[0] ? want : "(any)", n);
		errno = ENODEV;
	}
	ibv_free_device_list(list);
	return ctx;
}

static int
ipoib_verbs_query_gid(struct ipoib_hca *hca)
{
	static const union ibv_gid zero;
	struct ibv_gid_entry ent;

	if (ibv_query_gid_ex(hca->ctx, hca->port, hca->gid_index, &ent,
			     0) == 0) {
		hca->gid = ent.gid;
		hca->gid_type = ent.gid_type;
		hca->ndev_ifindex = ent.ndev_ifindex;
	} else if (ibv_query_gid(hca->ctx, hca->port, hca->gid_index,
				 &hca->gid) == 0) {
		hca->gid_type = hca->roce ? IBV_GID_TYPE_ROCE_V2 :
			       IBV_GID_TYPE_IB;
	} else {
		return -EINVAL;
	}
	if (memcmp(&hca->gid, &zero, sizeof(zero)) == 0)
		return -EINVAL;
	return 0;
}

static int
ipoib_verbs_open(const struct ipoib_config *cfg, const char *dev_name,
		 struct ipoib_hca **hcap)
{
	static uint32_t seq;
	struct ibv_port_attr pa;
	struct ipoib_hca *hca;
	char rname[RTE_RING_NAMESIZE];
	int ret, fl;

	ipoib_verbs_sge_layout();
	hca = calloc(1, sizeof(*hca));
	if (hca == NULL)
		return -ENOMEM;
	hca->wake_fd = -1;
	rte_spinlock_init(&hca->qp_lock);
	rte_spinlock_init(&hca->mr_lock);
	hca->ctx = ipoib_verbs_open_device(cfg->dev, hca->dev_name,
					   sizeof(hca->dev_name));
	if (hca->ctx == NULL) {
		ret = -(errno ? errno : ENODEV);
		goto fail;
	}
	hca->port = cfg->port;
	hca->gid_index = cfg->gid_index;
	hca->pkey = cfg->pkey;
	ret = ibv_query_device(hca->ctx, &hca->dattr);
	if (ret != 0) {
		ret = -ret;
		goto fail_ctx;
	}
	if (hca->port < 1 || hca->port > hca->dattr.phys_port_cnt ||
	    ibv_query_port(hca->ctx, hca->port, &pa) != 0) {
		IPOIB_LOG(ERR, "%s: %s has no port %u (ports 1-%u)", dev_name,
			  hca->dev_name, hca->port, hca->dattr.phys_port_cnt);
		ret = -EINVAL;
		goto fail_ctx;
	}
	hca->roce = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	hca->lid = pa.lid;
	if (hca->gid_index >= pa.gid_tbl_len ||
	    ipoib_verbs_query_gid(hca) < 0) {
		IPOIB_LOG(ERR, "%s: %s port %u has no GID at gid_index=%u "
			  "(table of %d; see /sys/class/infiniband/%s/ports/"
			  "%u/gids)",
			  dev_name, hca->dev_name, hca->port, hca->gid_index,
			  pa.gid_tbl_len, hca->dev_name, hca->port);
		ret = -EINVAL;
		goto fail_ctx;
	}
	hca->pd = ibv_alloc_pd(hca->ctx);
	if (hca->pd == NULL) {
		ret = -(errno ? errno : ENOMEM);
		goto fail_ctx;
	}
	/* async events are polled by the control thread, never waited for */
	fl = fcntl(hca->ctx->async_fd, F_GETFL);
	if (fl < 0 || fcntl(hca->ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		ret = -errno;
		goto fail_pd;
	}
	/* every connection has at most one QP: 2 x max_conns, spares, UD */
	hca->nr_qps_max = 2 * cfg->max_conns + 128;
	hca->qpn_mask = rte_align32pow2(2 * hca->nr_qps_max) - 1;
	hca->qpn_tab = calloc(hca->qpn_mask + 1, sizeof(*hca->qpn_tab));
	hca->qps = calloc(hca->nr_qps_max, sizeof(*hca->qps));
	snprintf(rname, sizeof(rname), "ipvf_%u",
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	hca->fatal = rte_ring_create(rname, IPOIB_VERBS_FATAL_RING,
				     (int)rte_socket_id(), RING_F_SC_DEQ);
	if (hca->qpn_tab == NULL || hca->qps == NULL || hca->fatal == NULL) {
		ret = -ENOMEM;
		goto fail_tabs;
	}
	ret = rte_mempool_event_callback_register(ipoib_verbs_mempool_event,
						  hca);
	if (ret < 0)
		goto fail_tabs;
	hca->mempool_cb = true;
	ret = ipoib_verbs_cm_open(hca);
	if (ret < 0)
		goto fail_cb;
	snprintf(hca->name, sizeof(hca->name), "verbs:%s/%u", hca->dev_name,
		 hca->port);
	IPOIB_LOG(INFO, "%s: %s on %s port %u, %s link layer, GID index %u "
		  "(%s), LID %u, %s", dev_name, hca->name, hca->dev_name,
		  hca->port, hca->roce ? "Ethernet (RoCE)" : "InfiniBand",
		  hca->gid_index, ipoib_verbs_gid_type_name(hca->gid_type),
		  hca->lid, hca->roce ?
		  "connections through rdma_cm over IP (see the guide)" :
		  "connections with the IPoIB service IDs (AF_IB)");
	*hcap = hca;
	return 0;
fail_cb:
	rte_mempool_event_callback_unregister(ipoib_verbs_mempool_event, hca);
fail_tabs:
	rte_ring_free(hca->fatal);
	free(hca->qps);
	free(hca->qpn_tab);
fail_pd:
	ibv_dealloc_pd(hca->pd);
fail_ctx:
	ibv_close_device(hca->ctx);
fail:
	free(hca);
	return ret;
}

static void
ipoib_verbs_close(struct ipoib_hca *hca)
{
	uint32_t i;
	int ret;

	ipoib_verbs_cm_close(hca);
	if (hca->dir_file[0] != '\0')
		unlink(hca->dir_file);
	if (hca->mempool_cb)
		rte_mempool_event_callback_unregister(
			ipoib_verbs_mempool_event, hca);
	rte_spinlock_lock(&hca->mr_lock);
	for (i = 0; i < hca->nr_mrs; i++)
		if (hca->mrs[i].mr != NULL)
			ipoib_verbs_mr_del(&hca->mrs[i]);
	rte_spinlock_unlock(&hca->mr_lock);
	rte_ring_free(hca->fatal);
	free(hca->qps);
	free(hca->qpn_tab);
	ret = ibv_dealloc_pd(hca->pd);
	if (ret != 0)
		IPOIB_LOG(ERR, "%s: protection domain still in use: %s",
			  hca->name, strerror(ret));
	ibv_close_device(hca->ctx);
	free(hca);
}

static int
ipoib_verbs_query_port(struct ipoib_hca *hca, struct ipoib_port_attr *attr)
{
	struct ibv_port_attr pa;
	uint16_t i;

	if (ibv_query_port(hca->ctx, hca->port, &pa) != 0)
		return -errno;
	memset(attr, 0, sizeof(*attr));
	memcpy(attr->gid, hca->gid.raw, IPOIB_GID_LEN);
	attr->lid = pa.lid;
	attr->ib_mtu = (uint16_t)ipoib_verbs_mtu_bytes(pa.active_mtu);
	attr->active = pa.state == IBV_PORT_ACTIVE;
	attr->has_srq = hca->dattr.max_srq > 0;
	for (i = 0; i < RTE_MIN(pa.pkey_tbl_len, IPOIB_PKEY_TABLE_LEN); i++) {
		__be16 pk;

		if (ibv_query_pkey(hca->ctx, hca->port, i, &pk) != 0)
			break;
		attr->pkeys[attr->npkeys++] = be16toh(pk);
	}
	attr->max_qp = (uint32_t)hca->dattr.max_qp;
	attr->max_qp_wr = (uint32_t)hca->dattr.max_qp_wr;
	attr->max_srq_wr = (uint32_t)hca->dattr.max_srq_wr;
	attr->max_cqe = (uint32_t)hca->dattr.max_cqe;
	attr->max_sge = (uint32_t)RTE_MIN(hca->dattr.max_sge,
					  hca->dattr.max_srq_sge > 0 ?
					  hca->dattr.max_srq_sge :
					  hca->dattr.max_sge);
	attr->link_speed = ipoib_verbs_speed(&pa);
	attr->name = hca->name;
	return 0;
}

/* ---- memory the HCA receives into ---------------------------------------- */

static int
ipoib_verbs_mem_alloc(struct ipoib_hca *hca, size_t len,
		      struct ipoib_hca_mem *mem)
{
	size_t sz = RTE_ALIGN_CEIL(len, (size_t)sysconf(_SC_PAGESIZE));
	struct ibv_mr *mr;
	void *addr;

	addr = mmap(NULL, sz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (addr == MAP_FAILED)
		return -errno;
	rte_spinlock_lock(&hca->mr_lock);
	mr = ipoib_verbs_mr_add(hca, addr, sz, NULL);
	rte_spinlock_unlock(&hca->mr_lock);
	if (mr == NULL) {
		int ret = -(errno ? errno : ENOMEM);

		IPOIB_LOG(ERR, "%s: cannot register %zu bytes: %s", hca->name,
			  sz, strerror(-ret));
		munmap(addr, sz);
		return ret;
	}
	mem->addr = addr;
	mem->len = sz;
	mem->lkey = mr->lkey;
	mem->priv = mr;
	return 0;
}

static void
ipoib_verbs_mem_free(struct ipoib_hca *hca, struct ipoib_hca_mem *mem)
{
	uint32_t i;

	if (mem->addr == NULL)
		return;
	rte_spinlock_lock(&hca->mr_lock);
	for (i = 0; i < hca->nr_mrs; i++)
		if (hca->mrs[i].mr == mem->priv)
			ipoib_verbs_mr_del(&hca->mrs[i]);
	rte_spinlock_unlock(&hca->mr_lock);
	munmap(mem->addr, mem->len);
	mem->addr = NULL;
}

/* ---- completion queues --------------------------------------------------- */

static struct ipoib_hca_cq *
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

static int
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

static uint16_t
ipoib_verbs_poll_cq(struct ipoib_hca_cq *cq, struct ipoib_wc *wc, uint16_t n)
{
	struct ipoib_hca *hca = cq->hca;
	struct ibv_wc iwc[IPOIB_VERBS_POLL_MAX];
	int k, i;

	k = ibv_poll_cq(cq->cq, RTE_MIN(n, (uint16_t)IPOIB_VERBS_POLL_MAX),
			iwc);
	if (unlikely(k <= 0))
		return 0;
	for (i = 0; i < k; i++) {
		struct ipoib_hca_qp *qp = ipoib_verbs_qp_lookup(hca,
								iwc[i].qp_num);

		wc[i].wr_id = iwc[i].wr_id;
		wc[i].byte_len = iwc[i].byte_len;
		wc[i].qp_num = iwc[i].qp_num;
		wc[i].src_qp = iwc[i].src_qp;
		wc[i].slid = iwc[i].slid;
		wc[i].status = ipoib_verbs_wc_status(iwc[i].status);
		wc[i].wc_flags = iwc[i].wc_flags & IBV_WC_GRH ?
				 IPOIB_WC_GRH : 0;
		wc[i].qp_context = qp != NULL ? qp->qp_context : UINT32_MAX;
		if (unlikely(iwc[i].status == IBV_WC_LOC_LEN_ERR))
			__atomic_fetch_add(&hca->len_errs, 1,
					   __ATOMIC_RELAXED);
		if (qp == NULL || qp->rq_addr == NULL)
			continue;
		/* UD on RoCE: completions come in post order */
		if (likely(qp->rq_tail != qp->rq_head)) {
			uint64_t a = qp->rq_addr[qp->rq_tail++ &
						 (qp->rq_size - 1)];

			if (iwc[i].status == IBV_WC_SUCCESS &&
			    (iwc[i].wc_flags & IBV_WC_GRH) &&
			    iwc[i].byte_len >= IPOIB_GRH_LEN)
				ipoib_verbs_fix_grh(hca,
						    (uint8_t *)(uintptr_t)a,
						    iwc[i].byte_len);
		}
	}
	return (uint16_t)k;
}

/* ---- shared receive queues ----------------------------------------------- */

static struct ipoib_hca_srq *
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

static int
ipoib_verbs_srq_destroy(struct ipoib_hca_srq *srq)
{
	int ret = ibv_destroy_srq(srq->srq);

	if (ret != 0)
		return -ret;
	free(srq);
	return 0;
}

static int
ipoib_verbs_srq_arm(struct ipoib_hca_srq *srq, uint32_t limit)
{
	struct ibv_srq_attr a = { .srq_limit = limit };

	return -ibv_modify_srq(srq->srq, &a, IBV_SRQ_LIMIT);
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

static uint16_t
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

static struct ipoib_hca_qp *
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
	if (init->type == IPOIB_QPT_UD && hca->roce) {
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
static void
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
					rte_pktmbuf_free_bulk(fr, nf);
					nf = 0;
				}
			}
			if (nf > 0)
				rte_pktmbuf_free_bulk(fr, nf);
		}
		if (k < (int)RTE_DIM(wc))
			break;
	}
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

static int
ipoib_verbs_qp_destroy(struct ipoib_hca_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	int tries;

	/* flush the send queue: its mbufs come back through the CQ */
	ibv_modify_qp(qp->qp, &a, IBV_QP_STATE);
	for (tries = 0; tries < 100 && qp->sq_tail != qp->sq_head; tries++) {
		ipoib_verbs_sq_reap(qp);
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

static uint32_t
ipoib_verbs_qp_num(const struct ipoib_hca_qp *qp)
{
	return qp->qp->qp_num;
}

static int
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

static uint16_t
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

static uint16_t
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

/* ---- address handles ----------------------------------------------------- */

static struct ipoib_hca_ah *
ipoib_verbs_ah_create(struct ipoib_hca *hca, const struct ipoib_ah_attr *attr)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.port_num = hca->port,
		.dlid = attr->dlid,
		.grh = {
			.sgid_index = hca->gid_index,
			.hop_limit = IPOIB_VERBS_HOP_LIMIT,
		},
	};
	struct ipoib_hca_ah *ah;

	if (attr->multicast) {
		if (ipoib_verbs_mcast_route(hca, attr->dgid, &a.grh.dgid,
					    &a.dlid) < 0)
			return NULL;
	} else {
		memcpy(a.grh.dgid.raw, attr->dgid, IPOIB_GID_LEN);
		if (!hca->roce && a.dlid == 0 &&
		    ipoib_verbs_path_lid(hca, attr->dgid, &a.dlid, &a.sl) < 0)
			return NULL;
	}
	if (hca->roce)
		a.dlid = 0;
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

static void
ipoib_verbs_ah_destroy(struct ipoib_hca_ah *ah)
{
	ibv_destroy_ah(ah->ah);
	free(ah);
}

/* ---- async events -------------------------------------------------------- */

static bool
ipoib_verbs_async_one(struct ipoib_hca *hca, const struct ibv_async_event *ae,
		      struct ipoib_async_event *ev)
{
	struct ipoib_hca_qp *qp;

	switch (ae->event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		qp = ae->element.qp->qp_context;
		ev->type = IPOIB_EVENT_QP_FATAL;
		ev->qp_context = qp->qp_context;
		ev->qp_num = ae->element.qp->qp_num;
		__atomic_store_n(&qp->fatal_reported, 1, __ATOMIC_RELAXED);
		return true;
	case IBV_EVENT_COMM_EST:
		/* traffic before the RTU: the CM establishes on it */
		ipoib_verbs_cm_comm_est(ae->element.qp->qp_context);
		return false;
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		ev->type = IPOIB_EVENT_SRQ_LIMIT;
		ev->srq = ae->element.srq->srq_context;
		return true;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
		if (ae->element.port_num != hca->port)
			return false;
		ev->type = ae->event_type == IBV_EVENT_PORT_ACTIVE ?
			   IPOIB_EVENT_PORT_ACTIVE : IPOIB_EVENT_PORT_DOWN;
		return true;
	case IBV_EVENT_DEVICE_FATAL:
		/* the device must be reopened: the driver asks for a reset */
		IPOIB_LOG(ERR, "%s: device fatal error", hca->name);
		ev->type = IPOIB_EVENT_DEVICE_FATAL;
		return true;
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
		IPOIB_LOG(NOTICE, "%s: %s", hca->name,
			  ibv_event_type_str(ae->event_type));
		return false;
	default:	/* LAST_WQE_REACHED, SQ_DRAINED, ... */
		return false;
	}
}

static int
ipoib_verbs_async_poll(struct ipoib_hca *hca, struct ipoib_async_event *ev,
		       int n)
{
	struct ibv_async_event ae;
	void *v;
	int k = 0;

	/* send completions in error, seen by the datapath */
	while (k < n && rte_ring_sc_dequeue(hca->fatal, &v) == 0) {
		uint64_t x = (uint64_t)(uintptr_t)v;

		memset(&ev[k], 0, sizeof(ev[k]));
		ev[k].type = IPOIB_EVENT_QP_FATAL;
		ev[k].qp_num = (uint32_t)(x >> 32);
		ev[k].qp_context = (uint32_t)x;
		k++;
	}
	while (k < n && ibv_get_async_event(hca->ctx, &ae) == 0) {
		memset(&ev[k], 0, sizeof(ev[k]));
		if (ipoib_verbs_async_one(hca, &ae, &ev[k]))
			k++;
		ibv_ack_async_event(&ae);
	}
	return k;
}

static void
ipoib_verbs_stats_get(struct ipoib_hca *hca, struct ipoib_hca_stats *st)
{
	memset(st, 0, sizeof(*st));
	/* RNR NAKs and UD drops happen in the HCA, which does not say */
	st->len_errs = __atomic_load_n(&hca->len_errs, __ATOMIC_RELAXED);
}

/* ---- subnet directory (a testing convenience, see the guide) ------------- */

/*
 * /run/ipoibcm-verbs/<device>/<MAC>: the 20-byte hardware address that
 * the Ethernet-emulation MAC stands for, and the pid that published it.
 * Only processes of one host see it; real deployments ARP.
 */
static void
ipoib_verbs_dir_path(const struct ipoib_hca *hca, const uint8_t *mac,
		     char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/%02x%02x%02x%02x%02x%02x",
		 IPOIB_VERBS_DIR, hca->dev_name, mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);
}

static int
ipoib_verbs_addr_publish(struct ipoib_hca *hca, const uint8_t *mac,
			 uint32_t ud_qpn, uint8_t flags)
{
	char dir[192], tmp[300];
	FILE *f;
	int i;

	snprintf(dir, sizeof(dir), "%s/%s", IPOIB_VERBS_DIR, hca->dev_name);
	mkdir(IPOIB_VERBS_DIR, 0755);
	mkdir(dir, 0755);
	ipoib_verbs_dir_path(hca, mac, hca->dir_file, sizeof(hca->dir_file));
	snprintf(tmp, sizeof(tmp), "%s.%d", hca->dir_file, (int)getpid());
	f = fopen(tmp, "w");
	if (f == NULL) {
		IPOIB_LOG(INFO, "%s: no subnet directory (%s: %s): peers are "
			  "found by ARP only", hca->name, dir, strerror(errno));
		hca->dir_file[0] = '\0';
		return -errno;
	}
	fprintf(f, "%02x%06x", flags, ud_qpn & IPOIB_QPN_MASK);
	for (i = 0; i < IPOIB_GID_LEN; i++)
		fprintf(f, "%02x", hca->gid.raw[i]);
	fprintf(f, " %d\n", (int)getpid());
	if (fclose(f) != 0 || rename(tmp, hca->dir_file) != 0) {
		unlink(tmp);
		hca->dir_file[0] = '\0';
		return -EIO;
	}
	return 0;
}

static int
ipoib_verbs_addr_resolve(struct ipoib_hca *hca, const uint8_t *mac,
			 uint8_t *hwaddr)
{
	char path[256], hex[2 * IPOIB_HWADDR_LEN + 1];
	unsigned int i, b;
	FILE *f;
	int pid, n;

	ipoib_verbs_dir_path(hca, mac, path, sizeof(path));
	f = fopen(path, "r");
	if (f == NULL)
		return -ENOENT;
	n = fscanf(f, "%40s %d", hex, &pid);
	fclose(f);
	if (n != 2 || strlen(hex) != 2 * IPOIB_HWADDR_LEN)
		return -EINVAL;
	if (kill(pid, 0) < 0 && errno == ESRCH) {
		unlink(path);	/* its publisher died */
		return -ENOENT;
	}
	for (i = 0; i < IPOIB_HWADDR_LEN; i++) {
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -EINVAL;
		hwaddr[i] = (uint8_t)b;
	}
	return 0;
}

/* ---- ops ----------------------------------------------------------------- */

const struct ipoib_hca_ops ipoib_hca_verbs_ops = {
	.name = "verbs",
	.open = ipoib_verbs_open,
	.close = ipoib_verbs_close,
	.query_port = ipoib_verbs_query_port,
	.mem_alloc = ipoib_verbs_mem_alloc,
	.mem_free = ipoib_verbs_mem_free,
	.cq_create = ipoib_verbs_cq_create,
	.cq_destroy = ipoib_verbs_cq_destroy,
	.poll_cq = ipoib_verbs_poll_cq,
	.srq_create = ipoib_verbs_srq_create,
	.srq_destroy = ipoib_verbs_srq_destroy,
	.srq_arm = ipoib_verbs_srq_arm,
	.post_srq_recv = ipoib_verbs_post_srq_recv,
	.qp_create = ipoib_verbs_qp_create,
	.qp_destroy = ipoib_verbs_qp_destroy,
	.qp_num = ipoib_verbs_qp_num,
	.qp_modify = ipoib_verbs_qp_modify,
	.post_recv = ipoib_verbs_post_recv,
	.post_send = ipoib_verbs_post_send,
	.ah_create = ipoib_verbs_ah_create,
	.ah_destroy = ipoib_verbs_ah_destroy,
	.mcast_attach = ipoib_verbs_mcast_attach,
	.mcast_detach = ipoib_verbs_mcast_detach,
	.cm_listen = ipoib_verbs_cm_listen,
	.cm_connect = ipoib_verbs_cm_connect,
	.cm_accept = ipoib_verbs_cm_accept,
	.cm_rtu = ipoib_verbs_cm_rtu,
	.cm_reject = ipoib_verbs_cm_reject,
	.cm_disconnect = ipoib_verbs_cm_disconnect,
	.cm_destroy = ipoib_verbs_cm_destroy,
	.cm_poll = ipoib_verbs_cm_poll,
	.ctrl_wait = ipoib_verbs_ctrl_wait,
	.ctrl_wake = ipoib_verbs_ctrl_wake,
	.async_poll = ipoib_verbs_async_poll,
	.stats_get = ipoib_verbs_stats_get,
	.addr_publish = ipoib_verbs_addr_publish,
	.addr_resolve = ipoib_verbs_addr_resolve,
	.faults_set = NULL,
	.faults_get = NULL,
};
