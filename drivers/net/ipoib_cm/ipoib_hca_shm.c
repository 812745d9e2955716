/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The HCA interface over the shm software fabric (transport=shm).
 * Fabric objects are handed out as the interface's opaque types.
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "ipoib_hca.h"
#include "ipoib_hca_shm.h"
#include "ipoib_log.h"
#include "ipoib_util.h"
#include "shm_fabric.h"
#include "shm_log.h"

/* The fabric logs into our log type. */
static void
ipoib_shm_logger(int level, const char *msg)
{
	rte_log((uint32_t)level + 1, ipoib_logtype, "%s\n", msg);
}

static int
ipoib_shm_open(const struct ipoib_config *cfg, const char *dev_name,
	       struct ipoib_hca **hcap)
{
	struct shm_port_conf pc = {
		.guid = cfg->shm.guid,
		.name = dev_name,
		.ib_mtu = cfg->shm.ib_mtu,
		.npkeys = 1,
		.pkeys = { cfg->pkey },
		.max_qp = cfg->shm.max_qp,
		.max_srq_wr = cfg->shm.max_srq_wr,
		.max_cqe = cfg->shm.max_cqe,
	};
	struct shm_port_info info;
	struct ipoib_hca *hca;
	int ret;

	/* syslog levels are rte_log levels minus one */
	shm_set_logger(ipoib_shm_logger,
		       (int)rte_log_get_level(ipoib_logtype) - 1);
	hca = calloc(1, sizeof(*hca));
	if (hca == NULL)
		return -ENOMEM;
	ret = shm_fabric_attach(cfg->shm.fabric, &hca->f);
	if (ret < 0)
		goto fail;
	ret = shm_port_open(hca->f, &pc, &hca->port);
	if (ret < 0)
		goto fail_detach;
	if (cfg->shm.capture[0] != '\0') {
		ret = shm_port_capture(hca->port, cfg->shm.capture);
		if (ret < 0)
			goto fail_port;
	}
	shm_port_set_faults(hca->port, &cfg->shm.faults);
	hca->cm_listen = cfg->shm.cm_listen == 0;
	hca->sa_path = cfg->shm.sa_path != 0;
	shm_port_query(hca->port, &info);
	snprintf(hca->name, sizeof(hca->name), "shm:%s/%u", cfg->shm.fabric,
		 info.index);
	*hcap = hca;
	return 0;
fail_port:
	shm_port_close(hca->port);
fail_detach:
	shm_fabric_detach(hca->f);
fail:
	free(hca);
	return ret;
}

static void
ipoib_shm_close(struct ipoib_hca *hca)
{
	shm_port_close(hca->port);
	shm_fabric_detach(hca->f);
	free(hca);
}

static int
ipoib_shm_query_port(struct ipoib_hca *hca, struct ipoib_port_attr *attr)
{
	struct shm_port_info info;

	shm_port_query(hca->port, &info);
	memset(attr, 0, sizeof(*attr));
	memcpy(attr->gid, info.gid, IPOIB_GID_LEN);
	attr->lid = info.lid;
	attr->ib_mtu = info.ib_mtu;
	attr->active = info.active;
	attr->has_srq = true;
	attr->npkeys = info.npkeys;
	memcpy(attr->pkeys, info.pkeys, sizeof(attr->pkeys));
	attr->max_qp = info.max_qp;
	attr->max_qp_wr = info.max_qp_wr;
	attr->max_srq_wr = info.max_srq_wr;
	attr->max_cqe = info.max_cqe;
	attr->max_sge = IPOIB_MAX_SGE;
	attr->max_srq_sge = IPOIB_MAX_SGE;
	attr->link_speed = RTE_ETH_SPEED_NUM_100G;
	attr->cm_reachable = hca->cm_listen;
	attr->path_records = hca->sa_path;
	attr->name = hca->name;
	return 0;
}

static int
ipoib_shm_mem_alloc(struct ipoib_hca *hca, size_t len,
		    struct ipoib_hca_mem *mem)
{
	struct shm_mem m;
	int ret = shm_mem_alloc(hca->f, len, &m);

	if (ret < 0)
		return ret;
	mem->addr = m.addr;
	mem->len = m.len;
	mem->size = m.size;
	mem->lkey = m.lkey;
	mem->priv = NULL;
	return 0;
}

static void
ipoib_shm_mem_free(struct ipoib_hca *hca, struct ipoib_hca_mem *mem)
{
	struct shm_mem m = {
		.addr = mem->addr, .len = mem->len, .lkey = mem->lkey,
	};

	shm_mem_free(hca->f, &m);
	mem->addr = NULL;
}

static struct ipoib_hca_cq *
ipoib_shm_cq_create(struct ipoib_hca *hca, uint32_t cqe)
{
	return FROM_SHM(cq, shm_cq_create(hca->port, cqe));
}

static int
ipoib_shm_cq_destroy(struct ipoib_hca_cq *cq)
{
	return shm_cq_destroy(TO_SHM(cq, cq));
}

/* The fabric completes with the interface's struct ipoib_wc: no copy. */
static uint16_t
ipoib_shm_poll_cq(struct ipoib_hca_cq *cq, struct ipoib_wc *wc, uint16_t n)
{
	return shm_cq_poll(TO_SHM(cq, cq), wc, n);
}

static uint32_t
ipoib_shm_cq_count(struct ipoib_hca_cq *cq)
{
	return shm_cq_count(TO_SHM(cq, cq));
}

static struct ipoib_hca_srq *
ipoib_shm_srq_create(struct ipoib_hca *hca, uint32_t max_wr, uint32_t max_sge,
		     uint32_t limit)
{
	return FROM_SHM(srq, shm_srq_create(hca->port, max_wr, max_sge,
					    limit));
}

static int
ipoib_shm_srq_destroy(struct ipoib_hca_srq *srq)
{
	return shm_srq_destroy(TO_SHM(rq, srq));
}

static int
ipoib_shm_srq_arm(struct ipoib_hca_srq *srq, uint32_t limit)
{
	return shm_srq_arm(TO_SHM(rq, srq), limit);
}

static uint16_t
ipoib_shm_post_srq_recv(struct ipoib_hca_srq *srq,
			const struct ipoib_recv_wr *wr, uint16_t n)
{
	return shm_rq_post(TO_SHM(rq, srq), wr, n);
}

static struct ipoib_hca_qp *
ipoib_shm_qp_create(struct ipoib_hca *hca, const struct ipoib_qp_init *init)
{
	struct shm_qp_conf c = {
		.type = init->type == IPOIB_QPT_UD ? SHM_QPT_UD : SHM_QPT_RC,
		.recv_cq = TO_SHM(cq, init->recv_cq),
		.srq = TO_SHM(rq, init->srq),
		.max_recv_wr = init->max_recv_wr,
		.max_recv_sge = init->max_recv_sge,
		.pkey_index = init->pkey_index,
		.qkey = init->qkey,
		.qp_context = init->qp_context,
	};

	return FROM_SHM(qp, shm_qp_create(hca->port, &c));
}

static int
ipoib_shm_qp_destroy(struct ipoib_hca_qp *qp)
{
	return shm_qp_destroy(TO_SHM(qp, qp));
}

static int
ipoib_shm_ud_rss_set(struct ipoib_hca_qp *ud, struct ipoib_hca_qp *const *qps,
		     uint16_t n, const struct ipoib_rss_conf *conf)
{
	struct shm_qp *rqs[SHM_RSS_MAX];
	uint16_t i;

	if (n > SHM_RSS_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++)
		rqs[i] = TO_SHM(qp, qps[i]);
	return shm_qp_rss_set(TO_SHM(qp, ud), rqs, n, conf);
}

static uint32_t
ipoib_shm_qp_num(const struct ipoib_hca_qp *qp)
{
	return shm_qp_num((const struct shm_qp *)(const void *)qp);
}

static int
ipoib_shm_qp_modify(struct ipoib_hca_qp *qp, enum ipoib_qp_state state)
{
	static const enum shm_qp_state map[] = {
		[IPOIB_QPS_INIT] = SHM_QPS_INIT,
		[IPOIB_QPS_RTR] = SHM_QPS_RTR,
		[IPOIB_QPS_RTS] = SHM_QPS_RTS,
		[IPOIB_QPS_ERR] = SHM_QPS_ERR,
	};

	return shm_qp_modify(TO_SHM(qp, qp), map[state]);
}

static void
ipoib_shm_qp_flush_settle(struct ipoib_hca_qp *qp)
{
	shm_qp_flush_settle(TO_SHM(qp, qp));
}

static uint16_t
ipoib_shm_post_recv(struct ipoib_hca_qp *qp, const struct ipoib_recv_wr *wr,
		    uint16_t n)
{
	return shm_rq_post(shm_qp_rq(TO_SHM(qp, qp)), wr, n);
}

static struct ipoib_hca_ah *
ipoib_shm_ah_create(struct ipoib_hca *hca, const struct ipoib_ah_attr *attr)
{
	struct shm_ah *ah = malloc(sizeof(*ah));

	if (ah == NULL)
		return NULL;
	shm_port_ah_wait(hca->port);
	if (shm_ah_resolve(hca->f, attr->dgid, attr->dlid, ah) < 0) {
		free(ah);
		return NULL;
	}
	/*
	 * With a GRH, as the verbs transport's is_global: a receiver that
	 * has not had our ARP/ND yet names us by the GRH's SGID, where a
	 * GRH-less frame from an (SLID, QPN) it does not know would be
	 * dropped (ipoib_rx_learn.c).
	 */
	ah->global = true;
	return (struct ipoib_hca_ah *)(void *)ah;
}

static void
ipoib_shm_ah_destroy(struct ipoib_hca_ah *ah)
{
	free(ah);
}

static int
ipoib_shm_mcast_attach(struct ipoib_hca_qp *qp, const uint8_t *mgid)
{
	return shm_mcast_attach(TO_SHM(qp, qp), mgid);
}

static int
ipoib_shm_mcast_detach(struct ipoib_hca_qp *qp, const uint8_t *mgid)
{
	return shm_mcast_detach(TO_SHM(qp, qp), mgid);
}

static int
ipoib_shm_cm_listen(struct ipoib_hca *hca, uint64_t service_id)
{
	/* shm_cm_listen=none: REQs to us are refused by the fabric (8) */
	if (!hca->cm_listen)
		return 0;
	return shm_cm_listen(hca->port, service_id);
}

static int
ipoib_shm_cm_connect(struct ipoib_hca *hca,
		     const struct ipoib_cm_connect *param,
		     struct ipoib_cm_id **id)
{
	struct shm_cm_req req = {
		.service_id = param->service_id,
		.dgid = param->dest.dgid,
		.qp = TO_SHM(qp, param->qp),
		.context = param->context,
		.retry_count = param->retry_count,
		.rnr_retry_count = param->rnr_retry_count,
		.max_cm_retries = param->max_cm_retries,
		.cm_response_timeout = param->cm_response_timeout,
		.responder_resources = param->responder_resources,
		.priv_len = param->priv_len,
		.priv = param->priv,
	};

	return shm_cm_connect(hca->port, &req, (struct shm_cm_id **)id);
}

static int
ipoib_shm_cm_accept(struct ipoib_cm_id *id, struct ipoib_hca_qp *qp,
		    void *context, const uint8_t *priv, uint8_t priv_len)
{
	return shm_cm_accept(TO_SHM(cm_id, id), TO_SHM(qp, qp), context, priv,
			     priv_len);
}

static int
ipoib_shm_cm_rtu(struct ipoib_cm_id *id)
{
	return shm_cm_rtu(TO_SHM(cm_id, id));
}

static int
ipoib_shm_cm_reject(struct ipoib_cm_id *id, uint16_t reason,
		    const uint8_t *priv, uint8_t priv_len)
{
	return shm_cm_reject(TO_SHM(cm_id, id), reason, priv, priv_len);
}

static int
ipoib_shm_cm_disconnect(struct ipoib_cm_id *id)
{
	return shm_cm_disconnect(TO_SHM(cm_id, id));
}

static void
ipoib_shm_cm_destroy(struct ipoib_cm_id *id)
{
	shm_cm_destroy(TO_SHM(cm_id, id));
}

static int
ipoib_shm_cm_poll(struct ipoib_hca *hca, struct ipoib_cm_event *ev, int n)
{
	struct shm_cm_event sev[16];
	int k, i;

	k = shm_cm_poll(hca->port, sev, RTE_MIN(n, (int)RTE_DIM(sev)));
	for (i = 0; i < k; i++) {
		ev[i].type = sev[i].type;
		ev[i].id = (struct ipoib_cm_id *)(void *)sev[i].id;
		ev[i].context = sev[i].context;
		ev[i].service_id = sev[i].service_id;
		memcpy(ev[i].remote_gid, sev[i].remote_gid, IPOIB_GID_LEN);
		ev[i].remote_lid = sev[i].remote_lid;
		ev[i].remote_qpn = sev[i].remote_qpn;
		ev[i].pkey = sev[i].pkey;
		ev[i].reason = sev[i].reason;
		ev[i].priv_len = sev[i].priv_len;
		memcpy(ev[i].priv, sev[i].priv, sev[i].priv_len);
	}
	return k;
}

static void
ipoib_shm_ctrl_wait(struct ipoib_hca *hca, uint64_t timeout_ns)
{
	shm_cm_wait(hca->port, timeout_ns);
}

static void
ipoib_shm_ctrl_wake(struct ipoib_hca *hca)
{
	shm_cm_wake(hca->port);
}

static int
ipoib_shm_async_poll(struct ipoib_hca *hca, struct ipoib_async_event *ev,
		     int n)
{
	static const enum ipoib_async_event_type map[] = {
		[SHM_EV_QP_FATAL] = IPOIB_EVENT_QP_FATAL,
		[SHM_EV_SRQ_LIMIT] = IPOIB_EVENT_SRQ_LIMIT,
		[SHM_EV_PORT_ACTIVE] = IPOIB_EVENT_PORT_ACTIVE,
		[SHM_EV_PORT_DOWN] = IPOIB_EVENT_PORT_DOWN,
		[SHM_EV_FABRIC_LOST] = IPOIB_EVENT_DEVICE_FATAL,
	};
	struct shm_async_event sev[16];
	int k, i;

	k = shm_async_poll(hca->port, sev, RTE_MIN(n, (int)RTE_DIM(sev)));
	for (i = 0; i < k; i++) {
		ev[i].type = map[sev[i].type];
		ev[i].qp_context = sev[i].qp_context;
		ev[i].qp_num = sev[i].qp_num;
		ev[i].srq = FROM_SHM(srq, sev[i].srq);
	}
	return k;
}

static void
ipoib_shm_stats_get(struct ipoib_hca *hca, struct ipoib_hca_stats *st)
{
	struct shm_port_counters c;

	shm_port_counters(hca->port, &c);
	st->rnr_naks = c.rnr_naks;
	st->ud_no_wr = c.ud_no_wr;
	st->pkey_drops = c.pkey_drops;
	st->qkey_drops = c.qkey_drops;
	st->len_errs = c.len_errs;
	st->fault_drops = c.fault_drops;
	st->cm_retries = c.cm_retries;
	st->cm_drops = c.cm_drops;
	st->link_down_drops = c.link_down_drops;
	st->mem_bytes = shm_port_arena_bytes(hca->port);
}

static int
ipoib_shm_addr_publish(struct ipoib_hca *hca, const uint8_t *mac,
		       uint32_t ud_qpn, uint8_t flags)
{
	shm_port_publish(hca->port, mac, ud_qpn, flags);
	return 0;
}

static int
ipoib_shm_addr_resolve(struct ipoib_hca *hca, const uint8_t *mac,
		       uint8_t *hwaddr)
{
	return shm_addr_resolve(hca->port, mac, hwaddr);
}

static int
ipoib_shm_faults_set(struct ipoib_hca *hca, const struct ipoib_faults *fl)
{
	shm_port_set_faults(hca->port, fl);
	return 0;
}

static int
ipoib_shm_faults_get(struct ipoib_hca *hca, struct ipoib_faults *fl)
{
	shm_port_get_faults(hca->port, fl);
	return 0;
}

/* The fabric's address records, and its fault injection. */
static const struct ipoib_hca_test_ops ipoib_shm_test_ops = {
	.addr_publish = ipoib_shm_addr_publish,
	.addr_resolve = ipoib_shm_addr_resolve,
	.faults_set = ipoib_shm_faults_set,
	.faults_get = ipoib_shm_faults_get,
};

/* ---- devargs ------------------------------------------------------------- */

#define IPOIB_SHM_DEFAULT_FABRIC	"default"
#define IPOIB_SHM_DEFAULT_IB_MTU	2048

static int
arg_fabric(const char *value, void *field)
{
	return ipoib_parse_name(value, field, IPOIB_FABRIC_NAME_MAX, false);
}

static int
arg_guid(const char *value, void *field)
{
	const char *hex = value;
	uint64_t v;

	if (strncmp(hex, "0x", 2) == 0 || strncmp(hex, "0X", 2) == 0)
		hex += 2;
	if (strlen(hex) > 16 || ipoib_parse_uint(hex, 16, 1, UINT64_MAX, &v) < 0)
		return -EINVAL;
	*(uint64_t *)field = v;
	return 0;
}

static int
arg_ib_mtu(const char *value, void *field)
{
	uint64_t v;

	if (ipoib_parse_uint(value, 10, 256, 4096, &v) < 0 ||
	    !ipoib_ib_mtu_valid((uint32_t)v))
		return -EINVAL;
	*(uint16_t *)field = (uint16_t)v;
	return 0;
}

/* The port writes the capture file: a path it cannot write is refused. */
static int
arg_capture(const char *value, void *field)
{
	size_t len = strlen(value);
	char dir[PATH_MAX];
	const char *why = NULL;
	struct stat st;
	char *slash;

	if (len == 0 || len >= PATH_MAX)
		return -EINVAL;
	memcpy(dir, value, len + 1);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		strcpy(dir, ".");
	else
		slash[slash == dir ? 1 : 0] = '\0';
	if (access(dir, W_OK | X_OK) != 0)
		why = strerror(errno);
	else if (stat(value, &st) == 0 && S_ISDIR(st.st_mode))
		why = "it is a directory";
	else if (access(value, F_OK) == 0 && access(value, W_OK) != 0)
		why = strerror(errno);
	if (why != NULL) {
		IPOIB_LOG(ERR, "devarg capture=%s: the file cannot be written: "
			  "%s", value, why);
		return -EINVAL;
	}
	memcpy(field, value, len + 1);
	return 0;
}

static int
arg_fault_rej(const char *value, void *field)
{
	uint64_t n;

	if (strcmp(value, "all") == 0) {
		*(int32_t *)field = 0;
		return 0;
	}
	if (ipoib_parse_uint(value, 10, 0, 65536, &n) < 0)
		return -EINVAL;
	*(int32_t *)field = (int32_t)n;
	return 0;
}

/* CM message types separated by ':' (kvargs keeps ',' for itself). */
static int
arg_fault_cm_drop(const char *value, void *field)
{
	static const char *const words[] = {
		"", "req", "rep", "rej", "rtu", "dreq", "drep", NULL,
	};
	char buf[64], *tok, *save = NULL;
	uint32_t mask = 0;
	int i;

	RTE_BUILD_BUG_ON(IPOIB_CM_MSG_REQ != 1 || IPOIB_CM_MSG_DREP != 6);
	if (strlen(value) == 0 || strlen(value) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, value);
	for (tok = strtok_r(buf, ":", &save); tok != NULL;
	     tok = strtok_r(NULL, ":", &save)) {
		i = ipoib_parse_word(tok, words);
		if (i <= 0)
			return -EINVAL;
		mask |= 1u << i;
	}
	*(uint32_t *)field = mask;
	return 0;
}

static const char *const ipoib_shm_cm_listen_words[] = {
	"ipoib", "none", NULL,
};

static const char *const ipoib_shm_sa_path_words[] = {
	"off", "on", NULL,
};

static const struct ipoib_arg ipoib_shm_args[] = {
	IPOIB_ARG_PARSE(IPOIB_ARG_FABRIC, "1-31 characters of [A-Za-z0-9_-]",
			shm.fabric, arg_fabric),
	IPOIB_ARG_PARSE(IPOIB_ARG_GUID, "a non-zero 64-bit hex number, e.g. "
			"0x0002c90300a1b2c3", shm.guid, arg_guid),
	IPOIB_ARG_PARSE(IPOIB_ARG_IB_MTU, "256, 512, 1024, 2048 or 4096",
			shm.ib_mtu, arg_ib_mtu),
	IPOIB_ARG_PARSE(IPOIB_ARG_CAPTURE, "a path the port can write, in a "
			"directory that exists", shm.capture,
			arg_capture),
	IPOIB_ARG_UINT(IPOIB_ARG_SHM_MAX_QP, "1-65536", shm.max_qp, 1, 65536),
	IPOIB_ARG_UINT(IPOIB_ARG_SHM_MAX_SRQ_WR, "1-1048576", shm.max_srq_wr,
		       1, 1 << 20),
	IPOIB_ARG_UINT(IPOIB_ARG_SHM_MAX_CQE, "1-16777216", shm.max_cqe, 1,
		       1 << 24),
	IPOIB_ARG_WORD(IPOIB_ARG_SHM_CM_LISTEN, shm.cm_listen,
		       ipoib_shm_cm_listen_words),
	IPOIB_ARG_WORD(IPOIB_ARG_SHM_SA_PATH, shm.sa_path,
		       ipoib_shm_sa_path_words),
	IPOIB_ARG_UINT(IPOIB_ARG_FAULT_DROP, "0-1000000 (parts per million)",
		       shm.faults.drop_ppm, 0, 1000000),
	IPOIB_ARG_UINT(IPOIB_ARG_FAULT_CM_DELAY, "0-60000 milliseconds",
		       shm.faults.cm_delay_ms, 0, 60000),
	IPOIB_ARG_PARSE(IPOIB_ARG_FAULT_REJ, "all or 0-65536 (connections "
			"accepted)", shm.faults.rej_after, arg_fault_rej),
	IPOIB_ARG_PARSE(IPOIB_ARG_FAULT_CM_DROP, "CM message types req, rep, "
			"rej, rtu, dreq, drep joined with ':'",
			shm.faults.cm_drop_mask, arg_fault_cm_drop),
	IPOIB_ARG_UINT(IPOIB_ARG_FAULT_SA_DROP, "0-1000000 (parts per million)",
		       shm.faults.sa_drop_ppm, 0, 1000000),
};

static void
ipoib_shm_config_defaults(struct ipoib_config *cfg)
{
	strcpy(cfg->shm.fabric, IPOIB_SHM_DEFAULT_FABRIC);
	cfg->shm.ib_mtu = IPOIB_SHM_DEFAULT_IB_MTU;
	cfg->shm.faults.rej_after = -1;
}

static void
ipoib_shm_config_describe(const struct ipoib_config *cfg, char *buf,
			  size_t len)
{
	const struct ipoib_shm_config *c = &cfg->shm;

	snprintf(buf, len, " fabric=%s guid=0x%016" PRIx64 " ib_mtu=%u%s%s",
		 c->fabric, c->guid, c->ib_mtu,
		 c->capture[0] ? " capture=" : "", c->capture);
}

/* ---- ops ----------------------------------------------------------------- */

const struct ipoib_hca_ops ipoib_hca_shm_ops = {
	.name = "shm",
	.args = ipoib_shm_args,
	.nb_args = RTE_DIM(ipoib_shm_args),
	.config_defaults = ipoib_shm_config_defaults,
	.config_describe = ipoib_shm_config_describe,
	.open = ipoib_shm_open,
	.close = ipoib_shm_close,
	.query_port = ipoib_shm_query_port,
	.mem_alloc = ipoib_shm_mem_alloc,
	.mem_free = ipoib_shm_mem_free,
	.cq_create = ipoib_shm_cq_create,
	.cq_destroy = ipoib_shm_cq_destroy,
	.poll_cq = ipoib_shm_poll_cq,
	.cq_count = ipoib_shm_cq_count,
	.srq_create = ipoib_shm_srq_create,
	.srq_destroy = ipoib_shm_srq_destroy,
	.srq_arm = ipoib_shm_srq_arm,
	.post_srq_recv = ipoib_shm_post_srq_recv,
	.qp_create = ipoib_shm_qp_create,
	.qp_destroy = ipoib_shm_qp_destroy,
	.qp_num = ipoib_shm_qp_num,
	.qp_modify = ipoib_shm_qp_modify,
	.qp_flush_settle = ipoib_shm_qp_flush_settle,
	.post_recv = ipoib_shm_post_recv,
	.post_send = ipoib_shm_post_send,
	.ud_rss_set = ipoib_shm_ud_rss_set,
	.ah_create = ipoib_shm_ah_create,
	.ah_destroy = ipoib_shm_ah_destroy,
	.mcast_attach = ipoib_shm_mcast_attach,
	.mcast_detach = ipoib_shm_mcast_detach,
	.mc_join = ipoib_shm_mc_join,
	.mc_join_poll = ipoib_shm_mc_join_poll,
	.path_query = ipoib_shm_path_query,
	.path_poll = ipoib_shm_path_poll,
	.cm_listen = ipoib_shm_cm_listen,
	.cm_connect = ipoib_shm_cm_connect,
	.cm_accept = ipoib_shm_cm_accept,
	.cm_rtu = ipoib_shm_cm_rtu,
	.cm_reject = ipoib_shm_cm_reject,
	.cm_disconnect = ipoib_shm_cm_disconnect,
	.cm_destroy = ipoib_shm_cm_destroy,
	.cm_poll = ipoib_shm_cm_poll,
	.ctrl_wait = ipoib_shm_ctrl_wait,
	.ctrl_wake = ipoib_shm_ctrl_wake,
	.async_poll = ipoib_shm_async_poll,
	.stats_get = ipoib_shm_stats_get,
	.test = &ipoib_shm_test_ops,
};
