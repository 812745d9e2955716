/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The verbs transport's InfiniBand-only code that runs from constructed
 * inputs, without a device (the CI's soft-RoCE has no subnet
 * administrator and no IPoIB port space): the answers path queries and
 * joins take from rdma_cm events (ipoib_verbs_sa.c), the AF_IB addresses
 * of GIDs and groups, the service IDs rdma_cm puts on the wire and the
 * port space of joins (ipoib_verbs_addr.c), and what the SA calls do on a
 * port before any query (no channel) or on RoCE (no SA). Built only with
 * the verbs transport.
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
