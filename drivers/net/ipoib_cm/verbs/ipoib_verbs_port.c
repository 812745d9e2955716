/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The HCA interface over rdma-core (transport=verbs): libibverbs for the
 * device, memory, queues and datapath; librdmacm for connections and
 * multicast (ipoib_verbs_cm.c, ipoib_verbs_addr.c), and on InfiniBand
 * the subnet administrator's path records and join (ipoib_verbs_sa.c).
 *
 * This file: the device and its port (open, close, query), async events,
 * counters and the ops table. Memory registration is in ipoib_verbs_mr.c,
 * CQs, SRQs, QPs and AHs in ipoib_verbs_qp.c, the datapath in
 * ipoib_verbs_dp.c, the test-only address directory in ipoib_verbs_dir.c.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "ipoib_hca.h"
#include "ipoib_log.h"
#include "ipoib_verbs.h"
#include "ipoib_wire.h"

#define IPOIB_VERBS_FATAL_RING	1024

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
	hca->ctx = ipoib_verbs_open_device(cfg->verbs.dev, hca->dev_name,
					   sizeof(hca->dev_name));
	if (hca->ctx == NULL) {
		ret = -(errno ? errno : ENODEV);
		goto fail;
	}
	hca->port = cfg->verbs.port;
	hca->gid_index = cfg->verbs.gid_index;
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
	hca->roce = ipoib_verbs_link_roce(pa.link_layer);
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

	ipoib_verbs_sa_close(hca);
	ipoib_verbs_cm_close(hca);
	ipoib_verbs_dir_remove(hca);
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

void
ipoib_verbs_port_link(bool roce, struct ipoib_port_attr *attr)
{
	/*
	 * rdma_cm listens on its own port spaces only: on InfiniBand a
	 * Linux or illumos host's REQ to our IPoIB service ID cannot reach
	 * us, so the port does not offer connected mode there (the hosts
	 * send to it over UD; it still connects out to them). On RoCE its
	 * peers are ports like it, which connect to the mapped ports.
	 */
	attr->cm_reachable = roce;
	/* InfiniBand routes on LIDs: the driver asks path_query() for them */
	attr->path_records = !roce;
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
	ipoib_verbs_port_link(hca->roce, attr);
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
	attr->max_sge = (uint32_t)hca->dattr.max_sge;
	attr->max_srq_sge = (uint32_t)hca->dattr.max_srq_sge;
	attr->link_speed = ipoib_verbs_speed(&pa);
	attr->name = hca->name;
	return 0;
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

	ipoib_verbs_sq_reap_idle(hca);	/* may find send errors too */
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

/* The test-only subnet directory (ipoib_verbs_dir.c); no fault injection. */
static const struct ipoib_hca_test_ops ipoib_verbs_test_ops = {
	.addr_publish = ipoib_verbs_addr_publish,
	.addr_resolve = ipoib_verbs_addr_resolve,
};

/* ---- devargs ------------------------------------------------------------- */

static int
ipoib_verbs_arg_dev(const char *value, void *field)
{
	return ipoib_parse_name(value, field, IPOIB_DEV_NAME_MAX, true);
}

static const struct ipoib_arg ipoib_verbs_args[] = {
	IPOIB_ARG_PARSE(IPOIB_ARG_DEV, "an RDMA device name of 1-63 "
			"characters of [A-Za-z0-9_.-]", verbs.dev,
			ipoib_verbs_arg_dev),
	IPOIB_ARG_UINT(IPOIB_ARG_PORT, "1-255", verbs.port, 1, UINT8_MAX),
	IPOIB_ARG_UINT(IPOIB_ARG_GID_INDEX, "0-255", verbs.gid_index, 0,
		       UINT8_MAX),
};

static void
ipoib_verbs_config_defaults(struct ipoib_config *cfg)
{
	cfg->verbs.port = 1;
}

static void
ipoib_verbs_config_describe(const struct ipoib_config *cfg, char *buf,
			    size_t len)
{
	snprintf(buf, len, " dev=%s port=%u gid_index=%u",
		 cfg->verbs.dev[0] ? cfg->verbs.dev : "(first)",
		 cfg->verbs.port, cfg->verbs.gid_index);
}

/* ---- ops ----------------------------------------------------------------- */

const struct ipoib_hca_ops ipoib_hca_verbs_ops = {
	.name = "verbs",
	.args = ipoib_verbs_args,
	.nb_args = RTE_DIM(ipoib_verbs_args),
	.config_defaults = ipoib_verbs_config_defaults,
	.config_describe = ipoib_verbs_config_describe,
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
	.qp_flush_settle = ipoib_verbs_qp_flush_settle,
	.post_recv = ipoib_verbs_post_recv,
	.post_send = ipoib_verbs_post_send,
	.ah_create = ipoib_verbs_ah_create,
	.ah_destroy = ipoib_verbs_ah_destroy,
	.mcast_attach = ipoib_verbs_mcast_attach,
	.mcast_detach = ipoib_verbs_mcast_detach,
	.mc_join = ipoib_verbs_mc_join,
	.mc_join_poll = ipoib_verbs_mc_join_poll,
	.path_query = ipoib_verbs_path_query,
	.path_poll = ipoib_verbs_path_poll,
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
	.test = &ipoib_verbs_test_ops,
};
