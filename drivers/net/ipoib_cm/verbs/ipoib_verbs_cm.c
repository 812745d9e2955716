/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Connection management of the verbs transport, through
 * librdmacm, run by the control thread only.
 *
 * The driver creates its RC QPs itself (qp_create, in INIT), so librdmacm
 * is used in its "external QP" mode: rdma_connect()/rdma_accept() carry
 * the QP number, the QP is moved with rdma_init_qp_attr() attributes, and
 * the active side finishes with rdma_establish() (the RTU).
 *
 * Event mapping: CONNECT_REQUEST -> REQ_RCVD; CONNECT_RESPONSE ->
 * REP_RCVD; ESTABLISHED (passive) -> ESTABLISHED; REJECTED -> REJ_RCVD
 * with the event status as the reason; UNREACHABLE, CONNECT_ERROR,
 * ADDR_ERROR, ROUTE_ERROR -> TIMEOUT; DISCONNECTED -> DREQ_RCVD (a DREP
 * is sent) or, after our own DREQ, DISCONNECTED.
 *
 * Service IDs. rdma_cm binds only service IDs of its IP port spaces
 * (0x00000000010600pppp and friends), on RoCE and on InfiniBand alike; a
 * user process cannot listen on the IPoIB service IDs. Each IPoIB service
 * ID is therefore mapped to an rdma_cm port: the OFED one (0x10...|QPN) to
 * RDMA_PS_TCP, the RFC 4755 one (0x01...|QPN) to RDMA_PS_IB, both with
 * port 1024 + (UD QPN mod 64512). A port shared by two UD QPNs of one
 * host is detected: bind fails on the second; a REP whose private data
 * names another UD QPN than the one asked for is refused.
 *   RoCE: addresses are the IPs of the RoCE v2 GIDs (::ffff:a.b.c.d ->
 *   a.b.c.d), rdma_cm prepends its 36-byte header to the REQ private data
 *   (56 bytes left, 8 used).
 *   InfiniBand (AF_IB, untested here): the active side connects to the
 *   real IPoIB service ID with the raw 8-byte private data, as Linux does
 *   (byte-compatible); refused with reason 8 (no such service), it tries
 *   the mapped one, which is where our own ports listen.
 *
 * REJ reasons: rdma_reject() always sends reason 28 (consumer defined).
 * The reason the driver gives travels in the REJ private data as
 * "IPR" <reason>, and is read back on the other side.
 *
 * The decisions (destination, REQ parameters, REP check, REJ reason and
 * remapping, QP attribute mask) are pure functions of
 * ipoib_verbs_cm_param.c; this file makes the calls.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/ib.h>
#include <rte_common.h>

#include "ipoib_hca.h"
#include "ipoib_log.h"
#include "ipoib_verbs.h"
#include "ipoib_wire.h"

#define IPOIB_VCM_BACKLOG	128

enum ipoib_vcm_state {
	VCM_LISTEN,
	VCM_ADDR_QUERY,		/* active: resolving the address */
	VCM_ROUTE_QUERY,	/* active: resolving the route */
	VCM_REQ_SENT,
	VCM_REP_RCVD,
	VCM_REQ_RCVD,
	VCM_REP_SENT,
	VCM_ESTABLISHED,
	VCM_DREQ_SENT,
	VCM_DONE,
};

struct ipoib_cm_id {
	struct rdma_cm_id *id;
	struct ipoib_hca *hca;
	struct ipoib_cm_id *next, *prev;	/* hca->ids */
	void *context;
	struct ipoib_hca_qp *qp;
	enum ipoib_vcm_state state;
	bool active;
	bool mapped;		/* IB: connecting to the rdma_cm service ID */
	enum rdma_port_space ps;	/* listeners */
	uint16_t port;
	uint16_t pend_reason;
	uint64_t service_id;	/* the IPoIB one */
	uint8_t remote_gid[IPOIB_GID_LEN];
	uint32_t remote_qpn;
	struct rdma_conn_param req;	/* active: the REQ's, but the QP's */
	uint8_t priv[IPOIB_CM_PRIV_MAX];	/* req.private_data */
};

/* ---- ids ----------------------------------------------------------------- */

static struct ipoib_cm_id *
ipoib_vcm_new(struct ipoib_hca *hca)
{
	struct ipoib_cm_id *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return NULL;
	w->hca = hca;
	w->next = hca->ids;
	if (hca->ids != NULL)
		hca->ids->prev = w;
	hca->ids = w;
	return w;
}

static void
ipoib_vcm_free(struct ipoib_cm_id *w)
{
	struct ipoib_hca *hca = w->hca;
	unsigned int i;

	for (i = 0; i < hca->nr_pend; i++)
		if (hca->pend[i] == w)
			hca->pend[i] = NULL;
	if (w->qp != NULL && w->qp->cm == w)
		w->qp->cm = NULL;
	if (w->id != NULL && rdma_destroy_id(w->id) != 0)
		IPOIB_LOG(ERR, "%s: rdma_destroy_id: %s", hca->name,
			  strerror(errno));
	if (w->prev != NULL)
		w->prev->next = w->next;
	else if (hca->ids == w)
		hca->ids = w->next;
	if (w->next != NULL)
		w->next->prev = w->prev;
	free(w);
}

/* An attempt that failed without the fabric saying so: a REJ event. */
static void
ipoib_vcm_pend(struct ipoib_cm_id *w, uint16_t reason)
{
	struct ipoib_hca *hca = w->hca;

	w->state = VCM_DONE;
	w->pend_reason = reason;
	if (hca->nr_pend < IPOIB_VERBS_PEND_MAX)
		hca->pend[hca->nr_pend++] = w;
	else
		IPOIB_LOG(ERR, "%s: CM failure not reported", hca->name);
}

static void
ipoib_vcm_fill(const struct ipoib_cm_id *w, struct ipoib_cm_event *ev,
	       enum ipoib_cm_event_type type)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->id = (struct ipoib_cm_id *)(uintptr_t)w;
	ev->context = w->context;
	ev->service_id = w->service_id;
	memcpy(ev->remote_gid, w->remote_gid, IPOIB_GID_LEN);
	ev->remote_qpn = w->remote_qpn;
	ev->pkey = w->hca->pkey | IPOIB_PKEY_FULL;
}

static void
ipoib_vcm_priv(struct ipoib_cm_event *ev, const struct rdma_conn_param *c)
{
	ev->priv_len = (uint8_t)RTE_MIN(c->private_data_len,
					(uint8_t)IPOIB_CM_PRIV_MAX);
	if (c->private_data == NULL)
		ev->priv_len = 0;
	if (ev->priv_len > 0)
		memcpy(ev->priv, c->private_data, ev->priv_len);
}

/* Move our QP with the attributes rdma_cm computed for this connection. */
static int
ipoib_vcm_qp_move(struct ipoib_cm_id *w, struct ipoib_hca_qp *qp,
		  enum ibv_qp_state st)
{
	struct ibv_qp_attr a;
	int mask, ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = st;
	if (rdma_init_qp_attr(w->id, &a, &mask) != 0)
		return -errno;
	ret = ibv_modify_qp(qp->qp, &a,
			    ipoib_vcm_qp_mask(w->hca->roce, mask));
	if (ret != 0) {
		IPOIB_LOG(ERR, "%s: QP 0x%06x to %s: %s", w->hca->name,
			  qp->qp->qp_num, st == IBV_QPS_RTR ? "RTR" : "RTS",
			  strerror(ret));
		return -ret;
	}
	return 0;
}

/* ---- active side --------------------------------------------------------- */

/* Create the rdma_cm id and resolve the peer's address. */
static int
ipoib_vcm_start(struct ipoib_cm_id *w)
{
	struct ipoib_hca *hca = w->hca;
	struct sockaddr_storage src, dst;
	enum rdma_port_space ps;
	uint64_t sid;
	uint16_t port;
	int ret;

	ret = ipoib_vcm_dest(hca->roce, w->mapped, w->service_id, &ps, &port,
			     &sid);
	if (ret < 0)
		return ret;
	if (rdma_create_id(hca->ch, &w->id, w, ps) != 0)
		return -errno;
	if (rdma_resolve_addr(w->id,
			      ipoib_vcm_addr(hca, hca->gid.raw, 0, 0, &src),
			      ipoib_vcm_addr(hca, w->remote_gid, port, sid,
					     &dst),
			      IPOIB_VCM_TIMEOUT_MS) != 0) {
		ret = -errno;
		rdma_destroy_id(w->id);
		w->id = NULL;
		return ret;
	}
	w->state = VCM_ADDR_QUERY;
	return 0;
}

int
ipoib_verbs_cm_connect(struct ipoib_hca *hca,
		       const struct ipoib_cm_connect *param,
		       struct ipoib_cm_id **idp)
{
	struct ipoib_cm_id *w;
	int ret;

	if (param->qp == NULL || param->priv_len > IPOIB_CM_PRIV_MAX ||
	    (param->priv == NULL && param->priv_len != 0))
		return -EINVAL;
	w = ipoib_vcm_new(hca);
	if (w == NULL)
		return -ENOMEM;
	w->active = true;
	w->context = param->context;
	w->qp = param->qp;
	w->service_id = param->service_id;
	memcpy(w->remote_gid, param->dest.dgid, IPOIB_GID_LEN);
	ipoib_vcm_req_param(hca->roce, param, &w->req);
	if (param->priv_len > 0)
		memcpy(w->priv, param->priv, param->priv_len);
	w->req.private_data = w->priv;		/* the caller's may go */
	ret = ipoib_vcm_start(w);
	if (ret < 0) {
		w->qp = NULL;
		ipoib_vcm_free(w);
		return ret;
	}
	param->qp->cm = w;
	*idp = w;
	return 0;
}

/* Route known: the REQ. */
static int
ipoib_vcm_send_req(struct ipoib_cm_id *w)
{
	struct rdma_conn_param p = w->req;

	if (w->qp == NULL)
		return -EINVAL;
	p.qp_num = w->qp->qp->qp_num;
	p.srq = w->qp->qp->srq != NULL;
	if (rdma_connect(w->id, &p) != 0)
		return -errno;
	w->state = VCM_REQ_SENT;
	return 0;
}

/* IB: the real service ID is not served there; try rdma_cm's one. */
static void
ipoib_vcm_restart(struct ipoib_cm_id *w)
{
	rdma_destroy_id(w->id);
	w->id = NULL;
	w->mapped = true;
	if (ipoib_vcm_start(w) < 0)
		ipoib_vcm_pend(w, IPOIB_REJ_INVALID_SERVICE_ID);
}

int
ipoib_verbs_cm_rtu(struct ipoib_cm_id *w)
{
	int ret;

	if (w->state != VCM_REP_RCVD || w->qp == NULL)
		return -EINVAL;
	ret = ipoib_vcm_qp_move(w, w->qp, IBV_QPS_RTR);
	if (ret == 0)
		ret = ipoib_vcm_qp_move(w, w->qp, IBV_QPS_RTS);
	if (ret < 0)
		return ret;
	if (rdma_establish(w->id) != 0)
		return -errno;
	w->state = VCM_ESTABLISHED;
	return 0;
}

/* ---- passive side -------------------------------------------------------- */

int
ipoib_verbs_cm_listen(struct ipoib_hca *hca, uint64_t service_id)
{
	struct sockaddr_storage ss;
	enum rdma_port_space ps;
	struct ipoib_cm_id *w;
	unsigned int i;
	uint16_t port;
	int ret;

	ret = ipoib_vcm_sid_map(service_id, &ps, &port);
	if (ret < 0)
		return ret;
	for (i = 0; i < hca->nr_listen; i++)
		if (hca->listen[i]->ps == ps && hca->listen[i]->port == port)
			return -EADDRINUSE;	/* ours already */
	if (hca->nr_listen == IPOIB_VERBS_LISTEN_MAX)
		return -ENOSPC;
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return -ENOMEM;
	w->hca = hca;
	w->state = VCM_LISTEN;
	w->service_id = service_id;
	w->ps = ps;
	w->port = port;
	if (rdma_create_id(hca->ch, &w->id, w, ps) != 0) {
		ret = -errno;
		goto fail;
	}
	if (rdma_bind_addr(w->id, ipoib_vcm_addr(hca, hca->gid.raw, port,
						 ipoib_vcm_ps_sid(ps, port),
						 &ss)) != 0) {
		ret = -errno;
		if (ret == -EADDRINUSE) {
			IPOIB_LOG(ERR, "%s: rdma_cm %s port %u is taken on "
				  "this host: another UD QPN maps to it (port "
				  "= 1024 + QPN mod 64512)", hca->name,
				  ps == RDMA_PS_TCP ? "TCP" : "IB", port);
			ret = -EADDRNOTAVAIL;
		}
		goto fail_id;
	}
	if (rdma_listen(w->id, IPOIB_VCM_BACKLOG) != 0) {
		ret = -errno;
		goto fail_id;
	}
	hca->listen[hca->nr_listen++] = w;
	IPOIB_LOG(INFO, "%s: service ID 0x%016" PRIx64 " served as rdma_cm "
		  "%s port %u (service ID 0x%016" PRIx64 ")", hca->name,
		  service_id, ps == RDMA_PS_TCP ? "TCP" : "IB", port,
		  ipoib_vcm_ps_sid(ps, port));
	return 0;
fail_id:
	rdma_destroy_id(w->id);
fail:
	IPOIB_LOG(ERR, "%s: cannot listen for 0x%016" PRIx64 ": %s", hca->name,
		  service_id, strerror(-ret));
	free(w);
	return ret;
}

int
ipoib_verbs_cm_accept(struct ipoib_cm_id *w, struct ipoib_hca_qp *qp,
		      void *context, const uint8_t *priv, uint8_t priv_len)
{
	struct rdma_conn_param p = {
		.private_data = priv,
		.private_data_len = priv_len,
		.responder_resources = 0,
		.initiator_depth = 0,
		.retry_count = w->hca->roce ? IPOIB_VCM_ROCE_RETRY : 0,
		/* receivers out of buffers push back, never fail it */
		.rnr_retry_count = IPOIB_RNR_RETRY_FOREVER,
	};
	int ret;

	if (w->state != VCM_REQ_RCVD || qp == NULL)
		return -EINVAL;
	/* RTR and RTS before the REP, as Linux IPoIB and librdmacm do */
	ret = ipoib_vcm_qp_move(w, qp, IBV_QPS_RTR);
	if (ret == 0)
		ret = ipoib_vcm_qp_move(w, qp, IBV_QPS_RTS);
	if (ret < 0)
		return ret;
	p.qp_num = qp->qp->qp_num;
	p.srq = qp->qp->srq != NULL;
	if (rdma_accept(w->id, &p) != 0)
		return -errno;
	w->qp = qp;
	w->context = context;
	qp->cm = w;
	w->state = VCM_REP_SENT;
	return 0;
}

int
ipoib_verbs_cm_reject(struct ipoib_cm_id *w, uint16_t reason,
		      const uint8_t *priv, uint8_t priv_len)
{
	uint8_t buf[IPOIB_VCM_REJ_PRIV_LEN];

	if (priv_len == 0 && reason != IPOIB_REJ_CONSUMER) {
		priv_len = ipoib_vcm_rej_priv(reason, buf);
		priv = buf;
	}
	if (rdma_reject(w->id, priv, priv_len) != 0)
		return -errno;
	w->state = VCM_DONE;
	return 0;
}

int
ipoib_verbs_cm_disconnect(struct ipoib_cm_id *w)
{
	if (w->state != VCM_ESTABLISHED && w->state != VCM_REP_SENT)
		return -EINVAL;
	if (rdma_disconnect(w->id) != 0)
		return -errno;
	w->state = VCM_DREQ_SENT;
	return 0;
}

void
ipoib_verbs_cm_destroy(struct ipoib_cm_id *w)
{
	ipoib_vcm_free(w);
}

void
ipoib_verbs_cm_comm_est(struct ipoib_hca_qp *qp)
{
	if (qp != NULL && qp->cm != NULL && qp->cm->id != NULL)
		rdma_notify(qp->cm->id, IBV_EVENT_COMM_EST);
}

void
ipoib_verbs_cm_qp_gone(struct ipoib_hca_qp *qp)
{
	struct ipoib_hca *hca = qp->hca;
	unsigned int i;

	if (qp->cm != NULL) {
		qp->cm->qp = NULL;
		qp->cm = NULL;
	}
	if (qp->type != IPOIB_QPT_UD)
		return;
	for (i = 0; i < hca->nr_mcast; i++)
		if (hca->mcast[i].attached)
			ipoib_verbs_mcast_detach(qp, hca->mcast[i].mgid);
}

/* ---- events -------------------------------------------------------------- */

static bool
ipoib_vcm_req(struct ipoib_hca *hca, struct rdma_cm_event *e,
	      struct ipoib_cm_event *ev)
{
	struct ipoib_cm_id *l = e->listen_id != NULL ?
				e->listen_id->context : NULL;
	struct ipoib_cm_id *w = l != NULL ? ipoib_vcm_new(hca) : NULL;

	if (w == NULL) {
		rdma_reject(e->id, NULL, 0);
		rdma_destroy_id(e->id);
		return false;
	}
	w->id = e->id;
	w->state = VCM_REQ_RCVD;
	w->service_id = l->service_id;
	e->id->context = w;
	ipoib_vcm_peer_gid(e->id, w->remote_gid);
	w->remote_qpn = e->param.conn.qp_num;
	ipoib_vcm_fill(w, ev, IPOIB_CM_REQ_RCVD);
	ipoib_vcm_priv(ev, &e->param.conn);
	return true;
}

static bool
ipoib_vcm_rep(struct ipoib_cm_id *w, struct rdma_cm_event *e,
	      struct ipoib_cm_event *ev)
{
	uint32_t got;

	if (w->state != VCM_REQ_SENT)
		return false;
	w->remote_qpn = e->param.conn.qp_num;
	ipoib_vcm_fill(w, ev, IPOIB_CM_REP_RCVD);
	ipoib_vcm_priv(ev, &e->param.conn);
	w->state = VCM_REP_RCVD;
	/* a mapped port names a UD QPN modulo 64512: check it is the one */
	if (ipoib_vcm_rep_check(w->hca->roce, w->mapped, w->service_id,
				ev->priv, ev->priv_len, &got))
		return true;
	IPOIB_LOG(WARNING, "%s: REP from UD QPN 0x%06x for 0x%06x (rdma_cm "
		  "port shared): refused", w->hca->name, got,
		  (uint32_t)(w->service_id & IPOIB_QPN_MASK));
	rdma_reject(w->id, NULL, 0);
	w->state = VCM_DONE;
	ipoib_vcm_fill(w, ev, IPOIB_CM_REJ_RCVD);
	ev->reason = IPOIB_REJ_INVALID_SERVICE_ID;
	return true;
}

static bool
ipoib_vcm_rej(struct ipoib_cm_id *w, struct rdma_cm_event *e,
	      struct ipoib_cm_event *ev, struct ipoib_cm_id **restart)
{
	if (w->state != VCM_REQ_SENT && w->state != VCM_REP_SENT &&
	    w->state != VCM_REP_RCVD)
		return false;
	ipoib_vcm_fill(w, ev, IPOIB_CM_REJ_RCVD);
	ipoib_vcm_priv(ev, &e->param.conn);
	ev->reason = ipoib_vcm_rej_reason(e->status, ev->priv, &ev->priv_len);
	if (ipoib_vcm_rej_remap(w->hca->roce, w->active, w->mapped,
				ev->reason)) {
		*restart = w;	/* once the event is acknowledged */
		return false;
	}
	w->state = VCM_DONE;
	return true;
}

static bool
ipoib_vcm_event(struct ipoib_hca *hca, struct rdma_cm_event *e,
		struct ipoib_cm_event *ev, struct ipoib_cm_id **restart)
{
	struct ipoib_cm_id *w = e->id->context;

	if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return ipoib_vcm_req(hca, e, ev);
	if (w == NULL || w->state == VCM_LISTEN) {
		if (e->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			IPOIB_LOG(ERR, "%s: device removed", hca->name);
		return false;
	}
	switch (e->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (w->state != VCM_ADDR_QUERY)
			return false;
		if (rdma_resolve_route(w->id, IPOIB_VCM_TIMEOUT_MS) == 0) {
			w->state = VCM_ROUTE_QUERY;
			return false;
		}
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (w->state != VCM_ROUTE_QUERY)
			return false;
		if (ipoib_vcm_send_req(w) == 0)
			return false;
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		return ipoib_vcm_rep(w, e, ev);
	case RDMA_CM_EVENT_ESTABLISHED:
		if (w->state != VCM_REP_SENT)
			return false;	/* active: cm_rtu() said so */
		w->state = VCM_ESTABLISHED;
		ipoib_vcm_fill(w, ev, IPOIB_CM_ESTABLISHED);
		return true;
	case RDMA_CM_EVENT_REJECTED:
		return ipoib_vcm_rej(w, e, ev, restart);
	case RDMA_CM_EVENT_DISCONNECTED:
		if (w->state == VCM_DREQ_SENT) {
			w->state = VCM_DONE;
			ipoib_vcm_fill(w, ev, IPOIB_CM_DISCONNECTED);
			return true;
		}
		if (w->state == VCM_DONE)
			return false;
		rdma_disconnect(w->id);		/* the DREP */
		w->state = VCM_DONE;
		ipoib_vcm_fill(w, ev, IPOIB_CM_DREQ_RCVD);
		return true;
	default:	/* TIMEWAIT_EXIT, ADDR_CHANGE, multicast */
		return false;
	}
	/* the attempt failed before or without an answer */
	if (w->state == VCM_DONE)
		return false;
	IPOIB_LOG(DEBUG, "%s: %s (%d) for service ID 0x%016" PRIx64,
		  hca->name, rdma_event_str(e->event), e->status,
		  w->service_id);
	w->state = VCM_DONE;
	ipoib_vcm_fill(w, ev, IPOIB_CM_TIMEOUT);
	ev->reason = IPOIB_REJ_TIMEOUT;
	return true;
}

int
ipoib_verbs_cm_poll(struct ipoib_hca *hca, struct ipoib_cm_event *ev, int n)
{
	struct rdma_cm_event *e;
	int k = 0;

	while (k < n && hca->nr_pend > 0) {
		struct ipoib_cm_id *w = hca->pend[--hca->nr_pend];

		if (w == NULL)
			continue;
		ipoib_vcm_fill(w, &ev[k], IPOIB_CM_REJ_RCVD);
		ev[k++].reason = w->pend_reason;
	}
	while (k < n) {
		struct ipoib_cm_id *restart = NULL;

		if (rdma_get_cm_event(hca->ch, &e) != 0) {
			if (errno != EAGAIN)
				IPOIB_LOG_RATELIMIT(ERR, "%s: rdma_get_cm_"
						    "event: %s", hca->name,
						    strerror(errno));
			break;
		}
		if (ipoib_vcm_event(hca, e, &ev[k], &restart))
			k++;
		/* private data is copied: the event can go */
		rdma_ack_cm_event(e);
		if (restart != NULL)
			ipoib_vcm_restart(restart);
	}
	return k;
}

/*
 * Sleep on the rdma_cm channels (CM; SA queries, -1 before the first, which
 * ppoll() skips), the async events and the wake eventfd.
 */
void
ipoib_verbs_ctrl_wait(struct ipoib_hca *hca, uint64_t timeout_ns)
{
	struct pollfd fds[] = {
		{ .fd = hca->ch->fd, .events = POLLIN },
		{ .fd = hca->ctx->async_fd, .events = POLLIN },
		{ .fd = hca->wake_fd, .events = POLLIN },
		{ .fd = ipoib_verbs_sa_fd(hca), .events = POLLIN },
	};
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / 1000000000ULL),
		.tv_nsec = (long)(timeout_ns % 1000000000ULL),
	};
	uint64_t v;

	if (hca->nr_pend > 0 || ipoib_verbs_sa_ready(hca))
		return;
	if (ppoll(fds, RTE_DIM(fds), &ts, NULL) > 0 &&
	    (fds[2].revents & POLLIN) &&
	    read(hca->wake_fd, &v, sizeof(v)) < 0)
		IPOIB_LOG_RATELIMIT(DEBUG, "%s: wake eventfd: %s", hca->name,
				    strerror(errno));
}

void
ipoib_verbs_ctrl_wake(struct ipoib_hca *hca)
{
	uint64_t one = 1;

	/* EAGAIN: the counter is full, the thread wakes anyway */
	if (write(hca->wake_fd, &one, sizeof(one)) < 0)
		IPOIB_LOG_RATELIMIT(DEBUG, "%s: wake eventfd: %s", hca->name,
				    strerror(errno));
}

int
ipoib_verbs_cm_open(struct ipoib_hca *hca)
{
	int fl;

	hca->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (hca->wake_fd < 0) {
		IPOIB_LOG(ERR, "%s: no eventfd: %s", hca->dev_name,
			  strerror(errno));
		return -errno;
	}
	hca->ch = rdma_create_event_channel();
	if (hca->ch == NULL) {
		IPOIB_LOG(ERR, "%s: no rdma_cm event channel (is rdma_ucm "
			  "loaded?): %s", hca->dev_name, strerror(errno));
		fl = -(errno ? errno : ENODEV);
		goto fail_fd;
	}
	fl = fcntl(hca->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(hca->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		fl = -errno;
		rdma_destroy_event_channel(hca->ch);
		hca->ch = NULL;
		goto fail_fd;
	}
	return 0;
fail_fd:
	close(hca->wake_fd);
	hca->wake_fd = -1;
	return fl;
}

void
ipoib_verbs_cm_close(struct ipoib_hca *hca)
{
	unsigned int i;

	while (hca->ids != NULL)
		ipoib_vcm_free(hca->ids);
	for (i = 0; i < hca->nr_listen; i++) {
		rdma_destroy_id(hca->listen[i]->id);
		free(hca->listen[i]);
	}
	hca->nr_listen = 0;
	for (i = 0; i < hca->nr_mcast; i++)
		if (hca->mcast[i].id != NULL)
			rdma_destroy_id(hca->mcast[i].id);
	hca->nr_mcast = 0;
	if (hca->ch != NULL)
		rdma_destroy_event_channel(hca->ch);
	hca->ch = NULL;
	if (hca->wake_fd >= 0)
		close(hca->wake_fd);
	hca->wake_fd = -1;
}
