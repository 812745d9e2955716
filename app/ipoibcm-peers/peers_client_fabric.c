/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * peers_client's fabric side: its ports (each a host with a UD QP, an
 * address record and CM listeners), one CQ and two SRQs, sending on UD
 * and RC, and the poll that dispatches completions and CM events.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "peers_client.h"

double
cl_secs(const struct cl *C)
{
	return (ipoib_now_ns() - C->t0) / 1e9;
}

void
cl_nap(void)
{
	struct timespec ts = { 0, 50000 };

	nanosleep(&ts, NULL);
}

void __attribute__((format(printf, 2, 3)))
cl_bad(struct cl *C, const char *fmt, ...)
{
	va_list ap;

	if (C->bad++ < 20) {
		fputs("BAD: ", stdout);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		fputc('\n', stdout);
	}
}

void
cl_host_ipv6(const struct cl *C, uint32_t ip, uint8_t *a)
{
	unsigned int b;

	memset(a, 0, 16);
	for (b = 0; b < C->plen / 8; b++)
		a[b] = C->prefix[b];
	if (C->plen % 8)
		a[b] = C->prefix[b] & (uint8_t)(0xff << (8 - C->plen % 8));
	pk_put32(a + 12, ip);
}

/* ---- fabric -------------------------------------------------------------- */

static uint16_t
cl_post(struct shm_rq *rq, const struct shm_mem *mem, uint32_t stride,
	uint64_t kind, uint32_t first, uint16_t n, const uint32_t *list)
{
	struct ipoib_recv_wr wr[CL_BURST];
	uint16_t i;

	for (i = 0; i < n; i++) {
		uint32_t idx = list != NULL ? list[i] : first + i;

		wr[i].sg_list[0].addr = (uintptr_t)mem->addr +
					(uint64_t)idx * stride;
		wr[i].sg_list[0].length = stride;
		wr[i].sg_list[0].lkey = mem->lkey;
		wr[i].num_sge = 1;
		wr[i].wr_id = kind << 32 | idx;
	}
	return shm_rq_post(rq, wr, n);
}

static int
cl_pool(struct cl *C, struct shm_rq *rq, struct shm_mem *mem, uint32_t n,
	uint32_t stride, uint64_t kind)
{
	uint32_t i;

	if (shm_mem_alloc(C->f, (size_t)n * stride, mem) < 0)
		return -ENOMEM;
	for (i = 0; i < n; i += CL_BURST)
		if (cl_post(rq, mem, stride, kind, i, CL_BURST, NULL) !=
		    CL_BURST)
			return -ENOSPC;
	return 0;
}

int
cl_open(struct cl *C, int nports)
{
	struct shm_port_info info;
	int i, ret;

	ret = shm_fabric_attach(C->fabric, &C->f);
	if (ret < 0)
		return ret;
	C->ud_stride = IPOIB_GRH_LEN + 4096 + 64;
	C->rc_stride = 65600;
	for (i = 0; i < nports; i++) {
		struct cl_port *p = &C->ports[i];
		char name[32];
		struct shm_port_conf pc = {
			.guid = 0x0002c9fd00000000ULL |
				(uint64_t)getpid() << 8 | (uint64_t)i,
			.name = name,
			.ib_mtu = C->ib_mtu,
			.npkeys = 1,
			.pkeys = { 0xffff },
		};
		struct shm_qp_conf qc = {
			.type = SHM_QPT_UD,
			.max_recv_sge = 1,
			.qkey = IPOIB_QKEY_DEFAULT,
			.qp_context = (uint32_t)i,
		};
		uint8_t mac[IPOIB_MAC_LEN];

		snprintf(name, sizeof(name), "client%d", i);
		ret = shm_port_open(C->f, &pc, &p->port);
		if (ret < 0)
			return ret;
		C->nports = i + 1;
		if (i == 0) {
			C->cq = shm_cq_create(p->port, 2048);
			C->ud_srq = shm_srq_create(p->port, CL_UD_BUFS, 1, 0);
			C->rc_srq = shm_srq_create(p->port, CL_RC_BUFS, 1, 0);
			if (C->cq == NULL || C->ud_srq == NULL ||
			    C->rc_srq == NULL)
				return -ENOMEM;
			ret = cl_pool(C, C->ud_srq, &C->ud_mem, CL_UD_BUFS,
				      C->ud_stride, CL_WR_UD);
			if (ret == 0)
				ret = cl_pool(C, C->rc_srq, &C->rc_mem,
					      CL_RC_BUFS, C->rc_stride,
					      CL_WR_RC);
			if (ret < 0)
				return ret;
		}
		qc.recv_cq = C->cq;
		qc.srq = C->ud_srq;
		p->ud = shm_qp_create(p->port, &qc);
		if (p->ud == NULL || shm_qp_modify(p->ud, SHM_QPS_RTS) < 0)
			return -ENOMEM;
		p->qpn = shm_qp_num(p->ud);
		shm_port_query(p->port, &info);
		p->lid = info.lid;
		memcpy(p->gid, info.gid, IPOIB_GID_LEN);
		p->ip = C->client_ip + (uint32_t)i;
		ipoib_hwaddr_set(&p->hw, IPOIB_HWADDR_F_RC, p->qpn, p->gid);
		ipoib_hwaddr_to_mac(mac, &p->hw);
		shm_port_publish(p->port, mac, p->qpn, IPOIB_HWADDR_F_RC);
		ret = shm_cm_listen(p->port, IPOIB_CM_SID_OFED | p->qpn);
		if (ret == 0)
			ret = shm_cm_listen(p->port, IPOIB_CM_SID_RFC | p->qpn);
		if (ret < 0)
			return ret;
	}
	return 0;
}

void
cl_close(struct cl *C)
{
	int i;

	for (i = 0; i < CL_MAX_CONNS; i++) {
		struct cl_conn *c = &C->conns[i];

		if (c->state == CL_FREE)
			continue;
		if (c->id != NULL)
			shm_cm_destroy(c->id);
		if (c->qp != NULL)
			shm_qp_destroy(c->qp);
	}
	for (i = 0; i < C->nports; i++)
		if (C->ports[i].ud != NULL)
			shm_qp_destroy(C->ports[i].ud);
	/* an SRQ with completions on the CQ is busy: poll them away */
	for (i = 0; i < 1000 && (C->rc_srq != NULL || C->ud_srq != NULL);
	     i++) {
		struct ipoib_wc wc[CL_BURST];

		while (shm_cq_poll(C->cq, wc, CL_BURST) != 0)
			;
		if (C->rc_srq != NULL && shm_srq_destroy(C->rc_srq) == 0)
			C->rc_srq = NULL;
		if (C->ud_srq != NULL && shm_srq_destroy(C->ud_srq) == 0)
			C->ud_srq = NULL;
		if (C->rc_srq != NULL || C->ud_srq != NULL)
			cl_nap();
	}
	if (C->cq != NULL)
		shm_cq_destroy(C->cq);
	if (C->ud_mem.addr != NULL)
		shm_mem_free(C->f, &C->ud_mem);
	if (C->rc_mem.addr != NULL)
		shm_mem_free(C->f, &C->rc_mem);
	for (i = C->nports; i-- > 0;)
		shm_port_close(C->ports[i].port);
	if (C->f != NULL)
		shm_fabric_detach(C->f);
}

/* ---- sending ------------------------------------------------------------- */

static void
cl_hdr(uint8_t *hdr, uint16_t type)
{
	pk_put16(hdr, type);
	pk_put16(hdr + 2, 0);
}

static void
cl_send_ah(struct cl *C, int port, const struct shm_ah *ah, uint32_t qpn,
	   uint16_t type, const uint8_t *pkt, uint32_t len)
{
	uint8_t hdr[IPOIB_HDR_LEN];
	struct iovec iov[2] = {
		{ hdr, sizeof(hdr) },
		{ (void *)(uintptr_t)pkt, len },
	};
	struct shm_send wr = {
		.iov = iov,
		.iovcnt = 2,
		.ah = ah,
		.remote_qpn = qpn,
		.remote_qkey = IPOIB_QKEY_DEFAULT,
	};

	cl_hdr(hdr, type);
	shm_qp_post_send(C->ports[port].ud, &wr, 1);
}

void
cl_send_ud(struct cl *C, int port, const struct ipoib_hwaddr *to,
	   uint16_t type, const uint8_t *pkt, uint32_t len)
{
	struct shm_ah ah;

	if (shm_ah_resolve(C->f, ipoib_hwaddr_gid(to), 0, &ah) < 0) {
		cl_bad(C, "no port has the GID of QPN 0x%06x",
		       ipoib_hwaddr_qpn(to));
		return;
	}
	/* the driver names UD senders by the GRH (--no-grh: without) */
	ah.global = C->ud_global;
	cl_send_ah(C, port, &ah, ipoib_hwaddr_qpn(to), type, pkt, len);
}

void
cl_send_mcast(struct cl *C, int port, const uint8_t *mgid, uint16_t type,
	      const uint8_t *pkt, uint32_t len)
{
	struct shm_ah ah;

	shm_ah_resolve(C->f, mgid, 0, &ah);
	cl_send_ah(C, port, &ah, IPOIB_MCAST_QPN, type, pkt, len);
}

bool
cl_send_rc(struct cl_conn *c, uint16_t type, const uint8_t *pkt,
	   uint32_t len)
{
	uint8_t hdr[IPOIB_HDR_LEN];
	struct iovec iov[2] = {
		{ hdr, sizeof(hdr) },
		{ (void *)(uintptr_t)pkt, len },
	};
	struct shm_send wr = { .iov = iov, .iovcnt = 2 };

	cl_hdr(hdr, type);
	return shm_qp_post_send(c->qp, &wr, 1) == 1;
}

/* ---- events -------------------------------------------------------------- */

int
cl_conn_new(struct cl *C)
{
	int i;

	for (i = 0; i < CL_MAX_CONNS; i++)
		if (C->conns[i].state == CL_FREE)
			return i;
	return -1;
}

static void
cl_req(struct cl *C, int port, const struct shm_cm_event *ev)
{
	struct cl_port *p = &C->ports[port];
	struct ipoib_cm_data d = {
		.qpn = rte_cpu_to_be_32(p->qpn),
		.mtu = rte_cpu_to_be_32(C->rep_mtu),
	};
	struct shm_qp_conf qc = {
		.type = SHM_QPT_RC,
		.recv_cq = C->cq,
		.srq = C->rc_srq,
		.max_recv_sge = 1,
	};
	int i = cl_conn_new(C);
	struct ipoib_cm_data r = { 0 };

	if (ev->priv_len >= sizeof(r))
		memcpy(&r, ev->priv, sizeof(r));
	printf("req: sid 0x%016" PRIx64 " retry %u rnr %u mtu %u\n",
	       ev->service_id, ev->retry_count, ev->rnr_retry_count,
	       rte_be_to_cpu_32(r.mtu));
	if (C->nreqs < CL_MAX_REQS)
		C->req_at[C->nreqs++] = cl_secs(C);
	if (i < 0 || C->req_policy > 0) {
		shm_cm_reject(ev->id, (uint16_t)(i < 0 ? 3 : C->req_policy),
			      NULL, 0);
		shm_cm_destroy(ev->id);
		return;
	}
	C->conns[i].port = port;
	C->conns[i].id = ev->id;
	if (C->req_policy == 0) {	/* never answered: it times out */
		C->conns[i].state = CL_REQ_SEEN;
		return;
	}
	qc.qp_context = 0x80000000u | (uint32_t)i;
	C->conns[i].qp = shm_qp_create(p->port, &qc);
	C->conns[i].state = CL_CONNECTING;
	if (C->conns[i].qp == NULL ||
	    shm_cm_accept(ev->id, C->conns[i].qp,
			  (void *)(uintptr_t)(i + 1), (const uint8_t *)&d,
			  sizeof(d)) < 0)
		cl_bad(C, "cannot accept a connection from the emulator");
}

static void
cl_cm_event(struct cl *C, int port, const struct shm_cm_event *ev)
{
	int i = (int)(uintptr_t)ev->context - 1;
	struct cl_conn *c = i >= 0 && i < CL_MAX_CONNS ? &C->conns[i] : NULL;
	struct ipoib_cm_data d;

	if (ev->type == IPOIB_CM_REQ_RCVD) {
		cl_req(C, port, ev);
		return;
	}
	if (c == NULL)
		return;
	switch (ev->type) {
	case IPOIB_CM_REP_RCVD:
		if (ev->priv_len < sizeof(d)) {
			cl_bad(C, "REP without private data");
			break;
		}
		memcpy(&d, ev->priv, sizeof(d));
		c->rep_qpn = rte_be_to_cpu_32(d.qpn) & IPOIB_QPN_MASK;
		c->rep_mtu = rte_be_to_cpu_32(d.mtu);
		printf("rep: rnr %u mtu %u\n", ev->rnr_retry_count,
		       c->rep_mtu);
		if (shm_cm_rtu(c->id) == 0)
			c->state = CL_UP;
		break;
	case IPOIB_CM_ESTABLISHED:
		c->state = CL_UP;
		break;
	case IPOIB_CM_REJ_RCVD:
		c->state = CL_REJECTED;
		c->reason = ev->reason;
		break;
	case IPOIB_CM_TIMEOUT:
		c->state = CL_FAILED;
		break;
	case IPOIB_CM_DREQ_RCVD:
	case IPOIB_CM_DISCONNECTED:
		c->state = CL_CLOSED;
		break;
	default:
		break;
	}
}

unsigned int
cl_poll(struct cl *C)
{
	struct ipoib_wc wc[CL_BURST];
	uint32_t ud[CL_BURST], rc[CL_BURST];
	struct shm_cm_event ev[8];
	struct shm_async_event aev[8];
	uint16_t n, i, nud = 0, nrc = 0;
	int p, k, j;
	bool grh;

	n = shm_cq_poll(C->cq, wc, CL_BURST);
	for (i = 0; i < n; i++) {
		uint32_t idx = (uint32_t)wc[i].wr_id;
		const uint8_t *buf;

		if (wc[i].wr_id >> 32 == CL_WR_UD) {
			buf = (const uint8_t *)C->ud_mem.addr +
			      (size_t)idx * C->ud_stride;
			ud[nud++] = idx;
			/*
			 * Without a GRH (a Linux host's unicast) the sender
			 * is its source QPN alone, and the frame is unicast.
			 */
			grh = wc[i].wc_flags & IPOIB_WC_GRH;
			if (wc[i].status == IPOIB_WC_SUCCESS && grh)
				C->ud_grh++;
			else if (wc[i].status == IPOIB_WC_SUCCESS)
				C->ud_nogrh++;
			if (wc[i].status == IPOIB_WC_SUCCESS &&
			    wc[i].byte_len >= IPOIB_GRH_LEN + IPOIB_HDR_LEN)
				cl_rx(C, (int)wc[i].qp_context, false,
				      wc[i].src_qp, grh ? buf + 8 : NULL,
				      grh && buf[24] == 0xff,
				      buf + IPOIB_GRH_LEN,
				      wc[i].byte_len - IPOIB_GRH_LEN);
		} else {
			int ci = (int)(wc[i].qp_context & 0xffff);

			buf = (const uint8_t *)C->rc_mem.addr +
			      (size_t)idx * C->rc_stride;
			rc[nrc++] = idx;
			if (wc[i].status == IPOIB_WC_SUCCESS && ci < CL_MAX_CONNS)
				cl_rx(C, C->conns[ci].port, true, 0, NULL,
				      false, buf, wc[i].byte_len);
			else
				cl_bad(C, "RC completion status %u",
				       wc[i].status);
		}
	}
	if (nud)
		cl_post(C->ud_srq, &C->ud_mem, C->ud_stride, CL_WR_UD, 0, nud,
			ud);
	if (nrc)
		cl_post(C->rc_srq, &C->rc_mem, C->rc_stride, CL_WR_RC, 0, nrc,
			rc);
	for (p = 0; p < C->nports; p++) {
		k = C->cm_hold ? 0 : shm_cm_poll(C->ports[p].port, ev, 8);
		for (j = 0; j < k; j++)
			cl_cm_event(C, p, &ev[j]);
		k = shm_async_poll(C->ports[p].port, aev, 8);
		for (j = 0; j < k; j++) {
			uint32_t ci = aev[j].qp_context & 0xffff;

			if (aev[j].type == SHM_EV_QP_FATAL &&
			    (aev[j].qp_context & 0x80000000u) &&
			    ci < CL_MAX_CONNS)
				C->conns[ci].fatal = true;
		}
	}
	if (n == 0)
		cl_nap();
	return n;
}

