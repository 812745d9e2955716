/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The verbs transport's InfiniBand-only code that runs from constructed
 * inputs, without a device (the CI's soft-RoCE has no subnet
 * administrator and no IPoIB port space): the answers path queries and
 * joins take from rdma_cm events (ipoib_verbs_sa.c), the AF_IB addresses
 * of GIDs and groups, the service IDs rdma_cm puts on the wire and the
 * port space of joins (ipoib_verbs_addr.c), what the SA calls do on a
 * port before any query (no channel) or on RoCE (no SA), the mapping of
 * UD receive completions with and without a GRH (ipoib_verbs_dp.c), the
 * REQ's destination and parameters, the REJ and REP decisions
 * (ipoib_verbs_cm_param.c), address handle attributes (ipoib_verbs_qp.c)
 * and the port attributes the link layer decides (ipoib_verbs_port.c).
 * Built only with the verbs transport.
 */

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/ib.h>

#include "ipoib_wire.h"
#include "test.h"
#include "verbs/ipoib_verbs.h"

static const uint8_t vib_gid[IPOIB_GID_LEN] = {
	0xfe, 0x80, 0, 0, 0, 0, 0, 0,
	0x00, 0x02, 0xc9, 0x03, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t vib_mgid[IPOIB_GID_LEN] = {	/* broadcast, 0x1234 */
	0xff, 0x12, 0x40, 0x1b, 0x92, 0x34, 0, 0,
	0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };

/* A zeroed port of the transport: no device, nothing opened. */
static struct ipoib_hca *
vib_hca(bool roce, uint16_t pkey)
{
	struct ipoib_hca *hca = calloc(1, sizeof(*hca));

	if (hca == NULL)
		return NULL;
	hca->roce = roce;
	hca->pkey = pkey;
	memcpy(hca->gid.raw, vib_gid, IPOIB_GID_LEN);
	return hca;
}

/* A path query's event ev (status st) on an id whose route has n paths. */
static bool
vib_path(enum rdma_cm_event_type ev, int st, uint32_t n,
	 const struct ibv_sa_path_rec *pr, struct ipoib_path_rec *rec)
{
	struct rdma_cm_id id;
	struct rdma_cm_event e;

	memset(&id, 0, sizeof(id));
	memset(&e, 0, sizeof(e));
	id.route.num_paths = (int)n;
	id.route.path_rec = (struct ibv_sa_path_rec *)(uintptr_t)pr;
	e.id = &id;
	e.event = ev;
	e.status = st;
	memset(rec, 0xa5, sizeof(*rec));
	return ipoib_vsa_path_answer(&e, 0x1122334455667788ULL, rec);
}

static int
test_verbs_ib_path_answer(void)
{
	struct ibv_sa_path_rec pr[2];
	struct ipoib_path_rec rec;

	memset(pr, 0, sizeof(pr));
	pr[0].dlid = htobe16(0x1234);
	pr[0].sl = 5;
	pr[1].dlid = htobe16(0x4321);
	pr[1].sl = 7;
	/* a route: the first path record's DLID (host order) and SL */
	TEST_ASSERT(vib_path(RDMA_CM_EVENT_ROUTE_RESOLVED, 0, 2, pr, &rec),
		    "ROUTE_RESOLVED ends the query");
	TEST_ASSERT_EQ(rec.cookie, 0x1122334455667788ULL, "the query's");
	TEST_ASSERT_EQ(rec.status, 0, "a path");
	TEST_ASSERT_EQ(rec.dlid, 0x1234, "host order");
	TEST_ASSERT_EQ(rec.sl, 5, "");
	/* the address: the route is asked next, no answer yet */
	TEST_ASSERT(!vib_path(RDMA_CM_EVENT_ADDR_RESOLVED, 0, 0, NULL, &rec),
		    "ADDR_RESOLVED does not end the query");
	TEST_ASSERT(!vib_path(RDMA_CM_EVENT_ADDR_CHANGE, 0, 0, NULL, &rec),
		    "");
	/* a route without paths, or with an invalid LID: no path */
	TEST_ASSERT(vib_path(RDMA_CM_EVENT_ROUTE_RESOLVED, 0, 0, pr, &rec),
		    "");
	TEST_ASSERT_EQ(rec.status, -EHOSTUNREACH, "0 paths");
	TEST_ASSERT(vib_path(RDMA_CM_EVENT_ROUTE_RESOLVED, 0, 1, NULL, &rec),
		    "");
	TEST_ASSERT_EQ(rec.status, -EHOSTUNREACH, "no path records");
	pr[0].dlid = 0;
	TEST_ASSERT(vib_path(RDMA_CM_EVENT_ROUTE_RESOLVED, 0, 1, pr, &rec),
		    "");
	TEST_ASSERT_EQ(rec.status, -EHOSTUNREACH, "DLID 0");
	/* errors: the event's errno, else EHOSTUNREACH */
	TEST_ASSERT(vib_path(RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT, 0, NULL,
			     &rec), "");
	TEST_ASSERT_EQ(rec.status, -ETIMEDOUT, "ADDR_ERROR, its status");
	TEST_ASSERT_EQ(rec.cookie, 0x1122334455667788ULL, "");
	TEST_ASSERT(vib_path(RDMA_CM_EVENT_ADDR_ERROR, 0, 0, NULL, &rec), "");
	TEST_ASSERT_EQ(rec.status, -EHOSTUNREACH, "ADDR_ERROR, status 0");
	TEST_ASSERT(vib_path(RDMA_CM_EVENT_ROUTE_ERROR, -ENETUNREACH, 0, NULL,
			     &rec), "");
	TEST_ASSERT_EQ(rec.status, -ENETUNREACH, "ROUTE_ERROR");
	TEST_ASSERT(vib_path(RDMA_CM_EVENT_ROUTE_ERROR, 0, 0, NULL, &rec), "");
	TEST_ASSERT_EQ(rec.status, -EHOSTUNREACH, "ROUTE_ERROR, status 0");
	TEST_ASSERT(vib_path(RDMA_CM_EVENT_UNREACHABLE, 8, 0, NULL, &rec), "");
	TEST_ASSERT_EQ(rec.status, -EHOSTUNREACH, "UNREACHABLE");
	TEST_ASSERT(vib_path(RDMA_CM_EVENT_DEVICE_REMOVAL, 0, 0, NULL, &rec),
		    "");
	TEST_ASSERT_EQ(rec.status, -ENODEV, "DEVICE_REMOVAL");
	TEST_ASSERT_EQ(rec.dlid, 0, "no DLID with an error");
	return 0;
}

REGISTER_TEST(verbs_ib_path_answer, test_verbs_ib_path_answer,
	      "verbs, IB: path record answers from rdma_cm events");

static int
vib_join(enum rdma_cm_event_type ev, int st, struct ipoib_mc_rec *rec)
{
	struct rdma_cm_id id;
	struct rdma_cm_event e;

	memset(&id, 0, sizeof(id));
	memset(&e, 0, sizeof(e));
	e.id = &id;
	e.event = ev;
	e.status = st;
	e.param.ud.qkey = 0x0b1b;
	e.param.ud.qp_num = 0xffffff;
	e.param.ud.ah_attr.dlid = 0xc001;
	e.param.ud.ah_attr.is_global = 1;
	memset(rec, 0xa5, sizeof(*rec));
	return ipoib_vsa_join_answer(&e, rec);
}

static int
test_verbs_ib_join_answer(void)
{
	struct ipoib_mc_rec rec;

	TEST_ASSERT_EQ(vib_join(RDMA_CM_EVENT_MULTICAST_JOIN, 0, &rec), 1,
		       "joined");
	TEST_ASSERT_EQ(rec.qkey, 0x0b1b, "the group's Q_Key");
	TEST_ASSERT_EQ(rec.mlid, 0xc001, "the group's MLID");
	TEST_ASSERT_EQ(rec.mtu, 0, "no MTU in the event: the port's is used");
	TEST_ASSERT_EQ(vib_join(RDMA_CM_EVENT_MULTICAST_ERROR, -EINVAL, &rec),
		       -EINVAL, "refused, the event's errno");
	TEST_ASSERT_EQ(vib_join(RDMA_CM_EVENT_MULTICAST_ERROR, 0, &rec),
		       -ECONNREFUSED, "refused, status 0");
	TEST_ASSERT_EQ(vib_join(RDMA_CM_EVENT_DEVICE_REMOVAL, 0, &rec),
		       -ENODEV, "");
	TEST_ASSERT_EQ(vib_join(RDMA_CM_EVENT_ADDR_CHANGE, 0, &rec), 0,
		       "not an answer");
	return 0;
}

REGISTER_TEST(verbs_ib_join_answer, test_verbs_ib_join_answer,
	      "verbs, IB: broadcast group records from rdma_cm events");

/* An AF_IB address: family, P_Key (full member), GID, service ID, mask. */
static int
vib_check_ib(const struct sockaddr *sa, const uint8_t *gid, uint16_t pkey,
	     uint64_t sid, uint64_t mask)
{
	const struct sockaddr_ib *sib = (const void *)sa;

	TEST_ASSERT_EQ(sib->sib_family, AF_IB, "");
	TEST_ASSERT_EQ(sib->sib_pkey, htons(pkey | 0x8000), "network order");
	TEST_ASSERT(memcmp(&sib->sib_addr, gid, IPOIB_GID_LEN) == 0, "GID");
	TEST_ASSERT_EQ(sib->sib_sid, htobe64(sid), "");
	TEST_ASSERT_EQ(sib->sib_sid_mask, htobe64(mask), "");
	TEST_ASSERT_EQ(sib->sib_flowinfo, 0, "");
	TEST_ASSERT_EQ(sib->sib_scope_id, 0, "");
	return 0;
}

static int
test_verbs_ib_addr(void)
{
	static const uint8_t v4gid[IPOIB_GID_LEN] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3 };
	struct ipoib_hca *hca = vib_hca(false, 0x1234);
	struct sockaddr_storage ss;
	const struct sockaddr_in *sin = (const void *)&ss;
	const struct sockaddr_in6 *sin6 = (const void *)&ss;
	uint64_t sid = IPOIB_CM_SID_OFED | 0x123456;
	int ret = -1;

	TEST_ASSERT(hca != NULL, "");
	memset(&ss, 0xa5, sizeof(ss));
	if (vib_check_ib(ipoib_vcm_addr(hca, vib_gid, 7, sid, &ss), vib_gid,
			 0x1234, sid, UINT64_MAX) < 0)
		goto out;
	/* no service ID: no mask (an address to bind or resolve from) */
	memset(&ss, 0xa5, sizeof(ss));
	if (vib_check_ib(ipoib_vcm_addr(hca, vib_gid, 7, 0, &ss), vib_gid,
			 0x1234, 0, 0) < 0)
		goto out;
	/* the full-member bit set already stays so; an IPv4 GID stays AF_IB */
	hca->pkey = 0xffff;
	if (vib_check_ib(ipoib_vcm_addr(hca, v4gid, 7, 0, &ss), v4gid,
			 0xffff, 0, 0) < 0)
		goto out;
	/* a group: AF_IB, the P_Key given, no service ID */
	memset(&ss, 0xa5, sizeof(ss));
	if (vib_check_ib(ipoib_vcm_mgid_addr(vib_mgid, 0x1234, &ss), vib_mgid,
			 0x1234, 0, 0) < 0)
		goto out;
	/* RoCE, for contrast: IP addresses with the rdma_cm port */
	hca->roce = true;
	hca->ndev_ifindex = 3;
	ipoib_vcm_addr(hca, v4gid, 1234, sid, &ss);
	if (sin->sin_family != AF_INET || sin->sin_port != htons(1234) ||
	    sin->sin_addr.s_addr != htonl(0x0a010203)) {
		printf("    FAIL: RoCE v2 IPv4 GID -> AF_INET 10.1.2.3:1234\n");
		goto out;
	}
	ipoib_vcm_addr(hca, vib_gid, 1234, sid, &ss);
	if (sin6->sin6_family != AF_INET6 || sin6->sin6_port != htons(1234) ||
	    sin6->sin6_scope_id != 3 ||
	    memcmp(&sin6->sin6_addr, vib_gid, IPOIB_GID_LEN) != 0) {
		printf("    FAIL: RoCE link-local GID -> AF_INET6, scope\n");
		goto out;
	}
	ret = 0;
out:
	free(hca);
	return ret;
}

REGISTER_TEST(verbs_ib_addr, test_verbs_ib_addr,
	      "verbs, IB: AF_IB addresses of GIDs and groups");

static int
test_verbs_ib_sid(void)
{
	enum rdma_port_space ps;
	uint16_t port;

	/* OFED service IDs: the TCP port space, 1024 + QPN mod 64512 */
	TEST_ASSERT_EQ(ipoib_vcm_sid_map(IPOIB_CM_SID_OFED | 0x123456, &ps,
					 &port), 0, "");
	TEST_ASSERT_EQ(ps, RDMA_PS_TCP, "");
	TEST_ASSERT_EQ(port, 1024 + 0x123456 % 64512, "");
	TEST_ASSERT_EQ(ipoib_vcm_ps_sid(ps, port),
		       0x0000000001060000ULL | port, "on the wire");
	/* RFC 4755 service IDs: the IB port space, the same port */
	TEST_ASSERT_EQ(ipoib_vcm_sid_map(IPOIB_CM_SID_RFC | 0x123456, &ps,
					 &port), 0, "");
	TEST_ASSERT_EQ(ps, RDMA_PS_IB, "");
	TEST_ASSERT_EQ(port, 1024 + 0x123456 % 64512, "");
	TEST_ASSERT_EQ(ipoib_vcm_ps_sid(ps, port),
		       0x00000000013f0000ULL | port, "on the wire");
	/* the edges of the mapping */
	TEST_ASSERT_EQ(ipoib_vcm_sid_map(IPOIB_CM_SID_RFC | 0, &ps, &port), 0,
		       "");
	TEST_ASSERT_EQ(port, 1024, "QPN 0");
	TEST_ASSERT_EQ(ipoib_vcm_sid_map(IPOIB_CM_SID_OFED | 64511, &ps,
					 &port), 0, "");
	TEST_ASSERT_EQ(port, 65535, "");
	TEST_ASSERT_EQ(ipoib_vcm_sid_map(IPOIB_CM_SID_OFED | 64512, &ps,
					 &port), 0, "");
	TEST_ASSERT_EQ(port, 1024, "wraps");
	/* neither kind */
	TEST_ASSERT_EQ(ipoib_vcm_sid_map(0x0000000001060400ULL, &ps, &port),
		       -EINVAL, "an rdma_cm service ID");
	TEST_ASSERT_EQ(ipoib_vcm_sid_map(IPOIB_CM_SID_OFED |
					 IPOIB_CM_SID_RFC | 1, &ps, &port),
		       -EINVAL, "both kinds");
	return 0;
}

REGISTER_TEST(verbs_ib_sid, test_verbs_ib_sid,
	      "verbs: IPoIB service IDs mapped to rdma_cm ports and back");

/* Joins' port space, and the SA calls on a port without a query. */
static int
test_verbs_ib_sa_idle(void)
{
	struct ipoib_hca *ib = vib_hca(false, 0x7fff);
	struct ipoib_hca *roce = vib_hca(true, 0x7fff);
	struct ipoib_path_rec prec[4];
	struct ipoib_mc_rec mrec;
	int ret = -1;

	TEST_ASSERT(ib != NULL && roce != NULL, "");
	if (ipoib_vcm_join_ps(ib) != RDMA_PS_IPOIB ||
	    ipoib_vcm_join_ps(roce) != RDMA_PS_UDP) {
		printf("    FAIL: joins: IPoIB port space on IB, UDP on "
		       "RoCE\n");
		goto out;
	}
	/* RoCE: no subnet administrator, nothing opened */
	if (ipoib_verbs_mc_join(roce, vib_mgid, 0x7fff) != -EOPNOTSUPP ||
	    ipoib_verbs_path_query(roce, vib_gid, 0x7fff, 1) != -EOPNOTSUPP ||
	    roce->sa != NULL) {
		printf("    FAIL: RoCE: mc_join, path_query -EOPNOTSUPP\n");
		goto out;
	}
	/* no query asked: no channel, no answer, nothing to wait on */
	if (ipoib_verbs_path_poll(ib, prec, 4) != 0 ||
	    ipoib_verbs_mc_join_poll(ib, &mrec) != 0 ||
	    ipoib_verbs_sa_fd(ib) != -1 || ipoib_verbs_sa_ready(ib) ||
	    ib->sa != NULL) {
		printf("    FAIL: idle port: no answers, fd -1\n");
		goto out;
	}
	ipoib_verbs_sa_close(ib);	/* nothing to close */
	ret = 0;
out:
	free(ib);
	free(roce);
	return ret;
}

REGISTER_TEST(verbs_ib_sa_idle, test_verbs_ib_sa_idle,
	      "verbs: join port spaces; SA calls on RoCE and before a query");

/*
 * 40 bytes before a UD payload that are not a GRH: zeros, then an IPv4
 * header at 20 (10.0.0.1 -> 10.0.0.2, TTL 9), what RoCE v2 over IPv4
 * leaves there and rewrites; then 4 bytes of payload.
 */
static void
vib_ud_buf(uint8_t *b)
{
	memset(b, 0, IPOIB_GRH_LEN + 4);
	b[20] = 0x45;
	b[20 + 8] = 9;
	b[20 + 12] = 10;
	b[20 + 15] = 1;
	b[20 + 16] = 10;
	b[20 + 19] = 2;
	memcpy(b + IPOIB_GRH_LEN, "\x08\x00\x00\x00", 4);
}

static void
vib_iwc(struct ibv_wc *iwc, enum ibv_wc_status st, unsigned int flags)
{
	memset(iwc, 0, sizeof(*iwc));
	iwc->wr_id = 0x1122334455667788ULL;
	iwc->status = st;
	iwc->byte_len = IPOIB_GRH_LEN + 4;
	iwc->qp_num = 0x000111;
	iwc->src_qp = 0xabcdef;
	iwc->slid = 0x1234;
	iwc->wc_flags = flags;
}

/* wc is iwc's, with flags and context */
static int
vib_check_wc(const struct ipoib_wc *wc, uint8_t status, uint8_t flags,
	     uint32_t context)
{
	TEST_ASSERT_EQ(wc->wr_id, 0x1122334455667788ULL, "");
	TEST_ASSERT_EQ(wc->byte_len, IPOIB_GRH_LEN + 4, "as the HCA said");
	TEST_ASSERT_EQ(wc->qp_num, 0x000111, "");
	TEST_ASSERT_EQ(wc->src_qp, 0xabcdef, "the sender's UD QPN");
	TEST_ASSERT_EQ(wc->slid, 0x1234, "the sender's LID");
	TEST_ASSERT_EQ(wc->status, status, "");
	TEST_ASSERT_EQ(wc->wc_flags, flags, "");
	TEST_ASSERT_EQ(wc->qp_context, context, "");
	return 0;
}

/* UD receive completions on an IB port, with and without a GRH. */
static int
test_verbs_ib_ud_recv(void)
{
	struct ipoib_hca *ib = vib_hca(false, 0xffff);
	struct ipoib_hca *roce = vib_hca(true, 0xffff);
	struct ipoib_hca_qp qp, rqp;
	uint8_t buf[IPOIB_GRH_LEN + 4], orig[sizeof(buf)];
	uint64_t rq_addr[4];
	struct ipoib_wc wc;
	struct ibv_wc iwc;
	int ret = -1;

	TEST_ASSERT(ib != NULL && roce != NULL, "");
	/* only UD on RoCE keeps its buffers for the GRH rewrite */
	if (ipoib_verbs_qp_rq_track(ib, IPOIB_QPT_UD) ||
	    ipoib_verbs_qp_rq_track(ib, IPOIB_QPT_RC) ||
	    !ipoib_verbs_qp_rq_track(roce, IPOIB_QPT_UD) ||
	    ipoib_verbs_qp_rq_track(roce, IPOIB_QPT_RC)) {
		printf("    FAIL: rq_track: UD on RoCE only\n");
		goto out;
	}
	/* the UD QP as qp_create() makes it on IB: no rq_addr */
	memset(&qp, 0, sizeof(qp));
	qp.hca = ib;
	qp.type = IPOIB_QPT_UD;
	qp.qp_context = 5;
	vib_ud_buf(buf);
	memcpy(orig, buf, sizeof(buf));
	/* from a Linux host of the subnet: no GRH */
	vib_iwc(&iwc, IBV_WC_SUCCESS, 0);
	memset(&wc, 0xa5, sizeof(wc));
	ipoib_verbs_wc_one(ib, &qp, &iwc, &wc);
	if (vib_check_wc(&wc, IPOIB_WC_SUCCESS, 0, 5) < 0)
		goto out;
	/* with a GRH (multicast, routed): the flag passed on */
	vib_iwc(&iwc, IBV_WC_SUCCESS, IBV_WC_GRH);
	ipoib_verbs_wc_one(ib, &qp, &iwc, &wc);
	if (vib_check_wc(&wc, IPOIB_WC_SUCCESS, IPOIB_WC_GRH, 5) < 0)
		goto out;
	if (memcmp(buf, orig, sizeof(buf)) != 0) {
		printf("    FAIL: IB: the 40 bytes rewritten\n");
		goto out;
	}
	/* errors; a QP not known */
	vib_iwc(&iwc, IBV_WC_LOC_LEN_ERR, 0);
	ipoib_verbs_wc_one(ib, &qp, &iwc, &wc);
	if (vib_check_wc(&wc, IPOIB_WC_LOC_LEN_ERR, 0, 5) < 0)
		goto out;
	TEST_ASSERT_EQ(ib->len_errs, 1, "counted");
	vib_iwc(&iwc, IBV_WC_WR_FLUSH_ERR, 0);
	ipoib_verbs_wc_one(ib, &qp, &iwc, &wc);
	if (vib_check_wc(&wc, IPOIB_WC_WR_FLUSH_ERR, 0, 5) < 0)
		goto out;
	vib_iwc(&iwc, IBV_WC_REM_ACCESS_ERR, IBV_WC_GRH);
	ipoib_verbs_wc_one(ib, NULL, &iwc, &wc);
	if (vib_check_wc(&wc, IPOIB_WC_GENERAL_ERR, IPOIB_WC_GRH,
			 UINT32_MAX) < 0)
		goto out;
	/* RoCE, for contrast: the same bytes become the packet's GRH */
	memset(&rqp, 0, sizeof(rqp));
	rqp.hca = roce;
	rqp.type = IPOIB_QPT_UD;
	rqp.qp_context = 6;
	rqp.rq_addr = rq_addr;
	rqp.rq_size = RTE_DIM(rq_addr);
	rq_addr[rqp.rq_head++] = (uintptr_t)buf;
	vib_iwc(&iwc, IBV_WC_SUCCESS, IBV_WC_GRH);
	ipoib_verbs_wc_one(roce, &rqp, &iwc, &wc);
	if (vib_check_wc(&wc, IPOIB_WC_SUCCESS, IPOIB_WC_GRH, 6) < 0)
		goto out;
	TEST_ASSERT_EQ(rqp.rq_tail, 1, "the buffer taken");
	TEST_ASSERT_EQ(buf[0], 0x60, "RoCE: IPv6 version");
	TEST_ASSERT_EQ(buf[5], 4, "payload length");
	TEST_ASSERT_EQ(buf[6], 0x1b, "next header");
	TEST_ASSERT_EQ(buf[7], 9, "hop limit: the TTL");
	TEST_ASSERT(buf[18] == 0xff && buf[19] == 0xff && buf[20] == 10 &&
		    buf[23] == 1, "SGID ::ffff:10.0.0.1");
	TEST_ASSERT(buf[34] == 0xff && buf[35] == 0xff && buf[36] == 10 &&
		    buf[39] == 2, "DGID ::ffff:10.0.0.2");
	TEST_ASSERT(memcmp(buf + IPOIB_GRH_LEN, orig + IPOIB_GRH_LEN, 4) == 0,
		    "payload");
	ret = 0;
out:
	free(ib);
	free(roce);
	return ret;
}

REGISTER_TEST(verbs_ib_ud_recv, test_verbs_ib_ud_recv,
	      "verbs, IB: UD completions with and without a GRH");

/* An OFED service ID: Linux IPoIB's, for the UD QPN 0x123456. */
#define VIB_SID		(IPOIB_CM_SID_OFED | 0x123456)
#define VIB_PORT	(1024 + 0x123456 % 64512)

/* The active side's REQ: destination, parameters, REJ 8, REP check. */
static int
test_verbs_ib_cm_req(void)
{
	static const uint8_t priv[8] = {	/* be32 UD QPN, be32 MTU */
		0, 0x65, 0x43, 0x21, 0, 0, 0xff, 0xfc };
	static const uint8_t rep_ok[8] = { 0, 0x12, 0x34, 0x56, 0, 0, 8, 0 };
	static const uint8_t rep_bad[8] = { 0, 0x12, 0x34, 0x57, 0, 0, 8, 0 };
	uint8_t rej[IPOIB_VCM_REJ_PRIV_LEN], len;
	struct ipoib_hca *hca = vib_hca(false, 0x8001);
	struct ipoib_cm_connect c;
	struct rdma_conn_param p;
	struct sockaddr_storage ss;
	enum rdma_port_space ps;
	uint64_t sid;
	uint16_t port;
	uint32_t got;
	int ret = -1;

	TEST_ASSERT(hca != NULL, "");
	/* IB, first: the real service ID, RDMA_PS_IB, no port */
	TEST_ASSERT_EQ(ipoib_vcm_dest(false, false, VIB_SID, &ps, &port,
				      &sid), 0, "");
	TEST_ASSERT(ps == RDMA_PS_IB && port == 0 && sid == VIB_SID, "");
	if (vib_check_ib(ipoib_vcm_addr(hca, vib_gid, port, sid, &ss),
			 vib_gid, 0x8001, VIB_SID, UINT64_MAX) < 0)
		goto out;
	TEST_ASSERT_EQ(ipoib_vcm_dest(false, false, IPOIB_CM_SID_RFC | 7,
				      &ps, &port, &sid), 0, "");
	TEST_ASSERT(ps == RDMA_PS_IB && port == 0 &&
		    sid == (IPOIB_CM_SID_RFC | 7), "RFC 4755, as it is");
	/* the REQ: the driver's private data and counts, as given */
	memset(&c, 0, sizeof(c));
	c.service_id = VIB_SID;
	c.retry_count = 0;
	c.rnr_retry_count = IPOIB_RNR_RETRY_FOREVER;
	c.responder_resources = 1;
	c.priv = priv;
	c.priv_len = sizeof(priv);
	memset(&p, 0xa5, sizeof(p));
	ipoib_vcm_req_param(false, &c, &p);
	TEST_ASSERT(p.private_data == priv && p.private_data_len == 8,
		    "8 bytes, no header of ours");
	TEST_ASSERT_EQ(p.retry_count, 0, "IB: the driver's");
	TEST_ASSERT_EQ(p.rnr_retry_count, IPOIB_RNR_RETRY_FOREVER, "");
	TEST_ASSERT_EQ(p.responder_resources, 1, "");
	TEST_ASSERT_EQ(p.initiator_depth, 0, "");
	TEST_ASSERT(p.qp_num == 0 && p.srq == 0 && p.flow_control == 0,
		    "the QP's, when sent");
	ipoib_vcm_req_param(true, &c, &p);
	TEST_ASSERT_EQ(p.retry_count, IPOIB_VCM_ROCE_RETRY, "RoCE");
	/* REJ reason 8 to the real one: again, to the mapped one, once */
	len = 0;
	TEST_ASSERT_EQ(ipoib_vcm_rej_reason(IPOIB_REJ_INVALID_SERVICE_ID,
					    NULL, &len),
		       IPOIB_REJ_INVALID_SERVICE_ID, "");
	TEST_ASSERT(ipoib_vcm_rej_remap(false, true, false,
					IPOIB_REJ_INVALID_SERVICE_ID), "");
	TEST_ASSERT(!ipoib_vcm_rej_remap(false, true, true,
					 IPOIB_REJ_INVALID_SERVICE_ID),
		    "the mapped one refused: done");
	TEST_ASSERT(!ipoib_vcm_rej_remap(true, true, false,
					 IPOIB_REJ_INVALID_SERVICE_ID), "RoCE");
	TEST_ASSERT(!ipoib_vcm_rej_remap(false, false, false,
					 IPOIB_REJ_INVALID_SERVICE_ID),
		    "passive");
	TEST_ASSERT(!ipoib_vcm_rej_remap(false, true, false, IPOIB_REJ_NO_QP),
		    "other reasons");
	TEST_ASSERT(!ipoib_vcm_rej_remap(false, true, false,
					 IPOIB_REJ_CONSUMER), "");
	TEST_ASSERT_EQ(ipoib_vcm_dest(false, true, VIB_SID, &ps, &port, &sid),
		       0, "");
	TEST_ASSERT(ps == RDMA_PS_TCP && port == VIB_PORT &&
		    sid == (0x0000000001060000ULL | VIB_PORT), "mapped");
	if (vib_check_ib(ipoib_vcm_addr(hca, vib_gid, port, sid, &ss),
			 vib_gid, 0x8001, sid, UINT64_MAX) < 0)
		goto out;
	TEST_ASSERT_EQ(ipoib_vcm_dest(true, false, VIB_SID, &ps, &port, &sid),
		       0, "");
	TEST_ASSERT(ps == RDMA_PS_TCP && port == VIB_PORT, "RoCE: mapped");
	TEST_ASSERT_EQ(ipoib_vcm_dest(false, true, 0x0000000001060400ULL,
				      &ps, &port, &sid), -EINVAL,
		       "no IPoIB service ID to map");
	/* REJ reasons: the status; 28 with "IPR" <reason>; none: timeout */
	len = ipoib_vcm_rej_priv(IPOIB_REJ_NO_QP, rej);
	TEST_ASSERT(len == 4 && memcmp(rej, "IPR\x01", 4) == 0, "");
	TEST_ASSERT_EQ(ipoib_vcm_rej_reason(IPOIB_REJ_CONSUMER, rej, &len),
		       IPOIB_REJ_NO_QP, "");
	TEST_ASSERT_EQ(len, 0, "consumed");
	len = 3;
	TEST_ASSERT_EQ(ipoib_vcm_rej_reason(IPOIB_REJ_CONSUMER, rej, &len),
		       IPOIB_REJ_CONSUMER, "too short");
	TEST_ASSERT_EQ(len, 3, "");
	len = 8;
	TEST_ASSERT_EQ(ipoib_vcm_rej_reason(IPOIB_REJ_CONSUMER, priv, &len),
		       IPOIB_REJ_CONSUMER, "a Linux host's");
	TEST_ASSERT_EQ(len, 8, "");
	len = 4;
	TEST_ASSERT_EQ(ipoib_vcm_rej_reason(IPOIB_REJ_NO_QP, rej, &len),
		       IPOIB_REJ_NO_QP, "not 28: the status");
	TEST_ASSERT_EQ(ipoib_vcm_rej_reason(0, NULL, &len), IPOIB_REJ_TIMEOUT,
		       "");
	TEST_ASSERT_EQ(ipoib_vcm_rej_reason(-ETIMEDOUT, NULL, &len),
		       IPOIB_REJ_TIMEOUT, "");
	/* REP: the UD QPN checked for mapped service IDs only */
	TEST_ASSERT(ipoib_vcm_rep_check(false, false, VIB_SID, rep_bad, 8,
					&got), "IB, real: not checked");
	TEST_ASSERT(ipoib_vcm_rep_check(false, true, VIB_SID, rep_ok, 8,
					&got), "");
	TEST_ASSERT_EQ(got, 0x123456, "");
	TEST_ASSERT(!ipoib_vcm_rep_check(false, true, VIB_SID, rep_bad, 8,
					 &got), "IB, mapped: refused");
	TEST_ASSERT_EQ(got, 0x123457, "");
	TEST_ASSERT(!ipoib_vcm_rep_check(true, false, VIB_SID, rep_bad, 8,
					 &got), "RoCE: refused");
	TEST_ASSERT(ipoib_vcm_rep_check(true, false, VIB_SID, rep_bad, 3,
					&got), "too short to check");
	/* QP attributes: IB drops librdmacm's RoCE-only bits */
	TEST_ASSERT_EQ(ipoib_vcm_qp_mask(false, IPOIB_VCM_ROCE_QP_MASK |
					 IBV_QP_STATE | IBV_QP_AV |
					 IBV_QP_DEST_QPN),
		       IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN, "");
	TEST_ASSERT_EQ(ipoib_vcm_qp_mask(true, IPOIB_VCM_ROCE_QP_MASK |
					 IBV_QP_STATE),
		       IPOIB_VCM_ROCE_QP_MASK | IBV_QP_STATE, "RoCE: all");
	ret = 0;
out:
	free(hca);
	return ret;
}

REGISTER_TEST(verbs_ib_cm_req, test_verbs_ib_cm_req,
	      "verbs, IB: REQ destination and parameters, REJ 8, REP check");

static int
vib_check_ah(const struct ibv_ah_attr *a, const uint8_t *dgid, uint16_t dlid,
	     uint8_t sl)
{
	TEST_ASSERT_EQ(a->is_global, 1, "");
	TEST_ASSERT_EQ(a->port_num, 2, "");
	TEST_ASSERT_EQ(a->grh.sgid_index, 3, "");
	TEST_ASSERT_EQ(a->grh.hop_limit, 64, "");
	TEST_ASSERT(memcmp(a->grh.dgid.raw, dgid, IPOIB_GID_LEN) == 0, "");
	TEST_ASSERT_EQ(a->dlid, dlid, "");
	TEST_ASSERT_EQ(a->sl, sl, "");
	TEST_ASSERT_EQ(a->src_path_bits, 0, "");
	TEST_ASSERT_EQ(a->static_rate, 0, "");
	return 0;
}

/* Address handle attributes; IB handles asked with a DLID only. */
static int
test_verbs_ib_ah_attr(void)
{
	static const uint8_t fgid[IPOIB_GID_LEN] = { 0xff, 0x12, 0x40, 0x1b,
						     0x80, 0x01, [15] = 1 };
	struct ipoib_hca *hca = vib_hca(false, 0x8001);
	struct ipoib_ah_attr attr;
	struct ibv_ah_attr a;
	int ret = -1;

	TEST_ASSERT(hca != NULL, "");
	hca->port = 2;
	hca->gid_index = 3;
	memset(&attr, 0, sizeof(attr));
	memcpy(attr.dgid, vib_gid, IPOIB_GID_LEN);
	attr.dlid = 0x1234;
	attr.sl = 5;
	TEST_ASSERT_EQ(ipoib_verbs_ah_attr(hca, &attr, &a), 0, "");
	if (vib_check_ah(&a, vib_gid, 0x1234, 5) < 0)
		goto out;
	/* a group: not joined, no MLID; joined: its fabric GID and MLID */
	attr.multicast = true;
	memcpy(attr.dgid, vib_mgid, IPOIB_GID_LEN);
	TEST_ASSERT_EQ(ipoib_verbs_ah_attr(hca, &attr, &a), -ENOENT, "");
	memcpy(hca->mcast[0].mgid, vib_mgid, IPOIB_GID_LEN);
	memcpy(hca->mcast[0].fabric_gid.raw, fgid, IPOIB_GID_LEN);
	hca->mcast[0].mlid = 0xc001;
	hca->mcast[0].id = (struct rdma_cm_id *)(uintptr_t)1; /* not used */
	hca->nr_mcast = 1;
	TEST_ASSERT_EQ(ipoib_verbs_ah_attr(hca, &attr, &a), 0, "");
	if (vib_check_ah(&a, fgid, 0xc001, 5) < 0)
		goto out;
	/* RoCE, for contrast: no LID, SL 0 */
	hca->roce = true;
	attr.multicast = false;
	memcpy(attr.dgid, vib_gid, IPOIB_GID_LEN);
	TEST_ASSERT_EQ(ipoib_verbs_ah_attr(hca, &attr, &a), 0, "");
	if (vib_check_ah(&a, vib_gid, 0, 0) < 0)
		goto out;
	attr.dlid = 0;		/* RoCE asks no path record */
	TEST_ASSERT_EQ(ipoib_verbs_ah_attr(hca, &attr, &a), 0, "");
	ret = 0;
out:
	free(hca);
	return ret;
}

REGISTER_TEST(verbs_ib_ah_attr, test_verbs_ib_ah_attr,
	      "verbs, IB: address handle attributes from the DLID given");

static int
test_verbs_ib_port_link(void)
{
	struct ipoib_port_attr attr;

	TEST_ASSERT(!ipoib_verbs_link_roce(IBV_LINK_LAYER_INFINIBAND), "");
	TEST_ASSERT(!ipoib_verbs_link_roce(IBV_LINK_LAYER_UNSPECIFIED),
		    "older kernels' IB");
	TEST_ASSERT(ipoib_verbs_link_roce(IBV_LINK_LAYER_ETHERNET), "");
	memset(&attr, 0xa5, sizeof(attr));
	ipoib_verbs_port_link(false, &attr);
	TEST_ASSERT(!attr.cm_reachable, "IB: connected mode not offered");
	TEST_ASSERT(attr.path_records, "IB: path records");
	ipoib_verbs_port_link(true, &attr);
	TEST_ASSERT(attr.cm_reachable && !attr.path_records, "RoCE");
	return 0;
}

REGISTER_TEST(verbs_ib_port_link, test_verbs_ib_port_link,
	      "verbs, IB: connected mode and path records by link layer");
