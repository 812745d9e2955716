/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Addresses of the verbs transport, run by the control thread only: the
 * rdma_cm port an IPoIB service ID maps to (ipoib_verbs_cm.c says why),
 * socket addresses of GIDs, multicast groups and path records (what
 * librdmacm asks the subnet administrator, or on RoCE the IP stack).
 *
 * Multicast: RoCE has no IPoIB MGIDs. Each MGID is mapped to an IPv4
 * group (IPv4-signature MGIDs: 224.0.0.0 | low 28 bits, broadcast
 * ffff:ffff -> 239.255.255.255; others 239.254.x.y from a hash of the
 * MGID), joined with rdma_join_multicast() (IGMP on the netdev), and the
 * UD QP attached to the group's GID. On InfiniBand the MGID is joined as
 * it is (AF_IB), in the IPoIB port space (ipoib_vcm_join_ps()).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <infiniband/ib.h>
#include <rte_common.h>

#include "ipoib_hca.h"
#include "ipoib_log.h"
#include "ipoib_verbs.h"
#include "ipoib_wire.h"

#define IPOIB_VCM_PORT_BASE	1024	/* below: privileged ports */
#define IPOIB_VCM_PORT_SPAN	64512
#define IPOIB_VCM_BCAST_IPV4	0xefffffffU	/* 239.255.255.255 */

/* ---- addresses ----------------------------------------------------------- */

int
ipoib_vcm_sid_map(uint64_t sid, enum rdma_port_space *ps, uint16_t *port)
{
	uint64_t kind = sid & ~(uint64_t)IPOIB_QPN_MASK;
	uint32_t qpn = (uint32_t)(sid & IPOIB_QPN_MASK);

	if (kind == IPOIB_CM_SID_OFED)
		*ps = RDMA_PS_TCP;
	else if (kind == IPOIB_CM_SID_RFC)
		*ps = RDMA_PS_IB;
	else
		return -EINVAL;
	*port = (uint16_t)(IPOIB_VCM_PORT_BASE + qpn % IPOIB_VCM_PORT_SPAN);
	return 0;
}

/* The service ID rdma_cm puts on the wire for (ps, port). */
uint64_t
ipoib_vcm_ps_sid(enum rdma_port_space ps, uint16_t port)
{
	return (ps == RDMA_PS_TCP ? RDMA_IB_IP_PS_TCP : RDMA_IB_PS_IB) | port;
}

/*
 * The socket address of a GID: RoCE v2 IPv4 GIDs as AF_INET, other RoCE
 * GIDs as AF_INET6; InfiniBand as AF_IB with service ID sid.
 */
struct sockaddr *
ipoib_vcm_addr(const struct ipoib_hca *hca, const uint8_t *gid, uint16_t port,
	       uint64_t sid, struct sockaddr_storage *ss)
{
	uint32_t v4 = ipoib_verbs_gid_ipv4(gid);

	memset(ss, 0, sizeof(*ss));
	if (!hca->roce) {
		struct sockaddr_ib *sib = (struct sockaddr_ib *)ss;

		RTE_BUILD_BUG_ON(sizeof(*sib) > sizeof(*ss));
		sib->sib_family = AF_IB;
		sib->sib_pkey = htons(hca->pkey | IPOIB_PKEY_FULL);
		memcpy(&sib->sib_addr, gid, IPOIB_GID_LEN);
		sib->sib_sid = htobe64(sid);
		sib->sib_sid_mask = htobe64(sid != 0 ? UINT64_MAX : 0);
	} else if (v4 != 0) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr.s_addr = htonl(v4);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, gid, IPOIB_GID_LEN);
		if (gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80)
			sin6->sin6_scope_id = hca->ndev_ifindex;
	}
	return (struct sockaddr *)ss;
}

/* The AF_IB address of IPoIB group mgid in partition pkey (full member). */
struct sockaddr *
ipoib_vcm_mgid_addr(const uint8_t *mgid, uint16_t pkey,
		    struct sockaddr_storage *ss)
{
	struct sockaddr_ib *sib = (struct sockaddr_ib *)ss;

	memset(ss, 0, sizeof(*ss));
	sib->sib_family = AF_IB;
	sib->sib_pkey = htons(pkey | IPOIB_PKEY_FULL);
	memcpy(&sib->sib_addr, mgid, IPOIB_GID_LEN);
	return (struct sockaddr *)ss;
}

/*
 * The port space of a multicast join: on InfiniBand RDMA_PS_IPOIB, whose
 * ids the kernel's cma gives the Q_Key of the partition's IPoIB broadcast
 * group (RDMA_PS_UDP would give librdmacm's 0x01234567, which an IPoIB
 * group refuses); on RoCE RDMA_PS_UDP, IGMP on the netdev.
 */
enum rdma_port_space
ipoib_vcm_join_ps(const struct ipoib_hca *hca)
{
	return hca->roce ? RDMA_PS_UDP : RDMA_PS_IPOIB;
}

/* The GID of a peer from its socket address. */
void
ipoib_vcm_peer_gid(const struct rdma_cm_id *id, uint8_t *gid)
{
	const struct sockaddr *sa = &id->route.addr.dst_addr;

	switch (sa->sa_family) {
	case AF_INET: {
		const struct sockaddr_in *sin = (const void *)sa;

		memset(gid, 0, 10);
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &sin->sin_addr, 4);
		break;
	}
	case AF_INET6:
		memcpy(gid, &((const struct sockaddr_in6 *)(const void *)sa)
		       ->sin6_addr, IPOIB_GID_LEN);
		break;
	case AF_IB:
		memcpy(gid, &((const struct sockaddr_ib *)(const void *)sa)
		       ->sib_addr, IPOIB_GID_LEN);
		break;
	default:
		memcpy(gid, id->route.addr.addr.ibaddr.dgid.raw,
		       IPOIB_GID_LEN);
		break;
	}
}

/* ---- multicast ----------------------------------------------------------- */

/* The IPv4 group (host order) that stands for an IPoIB MGID on RoCE. */
static uint32_t
ipoib_vcm_mgid_ipv4(const uint8_t *mgid)
{
	uint32_t low = (uint32_t)mgid[12] << 24 | (uint32_t)mgid[13] << 16 |
		       (uint32_t)mgid[14] << 8 | mgid[15];
	uint32_t h = 0;
	unsigned int i;

	if ((mgid[2] << 8 | mgid[3]) == IPOIB_MGID_SIG_IPV4)
		return low == UINT32_MAX ? IPOIB_VCM_BCAST_IPV4 :
		       0xe0000000U | (low & 0x0fffffffU);
	for (i = 0; i < IPOIB_GID_LEN; i++)
		h = h * 31 + mgid[i];
	return 0xeffe0000U | (h & 0xffff);	/* 239.254.x.y */
}

static struct ipoib_verbs_mcast *
ipoib_vcm_mcast_find(struct ipoib_hca *hca, const uint8_t *mgid)
{
	unsigned int i;

	for (i = 0; i < hca->nr_mcast; i++)
		if (memcmp(hca->mcast[i].mgid, mgid, IPOIB_GID_LEN) == 0)
			return &hca->mcast[i];
	return NULL;
}

const struct ipoib_verbs_mcast *
ipoib_verbs_mcast_by_ipv4(const struct ipoib_hca *hca, uint32_t ipv4)
{
	unsigned int n = __atomic_load_n(&hca->nr_mcast, __ATOMIC_ACQUIRE), i;

	for (i = 0; i < n; i++)
		if (hca->mcast[i].ipv4 == ipv4)
			return &hca->mcast[i];
	return NULL;
}

/* Join with a synchronous rdma_cm id of its own: at probe time. */
static int
ipoib_vcm_join(struct ipoib_hca *hca, struct ipoib_verbs_mcast *mc)
{
	struct sockaddr_storage src, grp;
	struct rdma_cm_event *e;
	struct rdma_cm_id *id;
	int ret;

	memset(&grp, 0, sizeof(grp));
	if (hca->roce) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&grp;

		if (ipoib_verbs_gid_ipv4(hca->gid.raw) == 0) {
			IPOIB_LOG(ERR, "%s: multicast needs a RoCE v2 IPv4 GID "
				  "(gid_index)", hca->name);
			return -ENOTSUP;
		}
		mc->ipv4 = ipoib_vcm_mgid_ipv4(mc->mgid);
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(mc->ipv4);
	} else {
		ipoib_vcm_mgid_addr(mc->mgid, hca->pkey, &grp);
	}
	if (rdma_create_id(NULL, &id, NULL, ipoib_vcm_join_ps(hca)) != 0)
		return -errno;
	if (rdma_bind_addr(id, ipoib_vcm_addr(hca, hca->gid.raw, 0, 0,
					      &src)) != 0 ||
	    rdma_join_multicast(id, (struct sockaddr *)&grp, NULL) != 0) {
		ret = -errno;
		rdma_destroy_id(id);
		return ret;
	}
	e = id->event;
	if (e == NULL || e->event != RDMA_CM_EVENT_MULTICAST_JOIN) {
		rdma_destroy_id(id);
		return -EPROTO;
	}
	mc->fabric_gid = e->param.ud.ah_attr.grh.dgid;
	mc->mlid = e->param.ud.ah_attr.dlid;
	/* acknowledged now, or leaving the group would wait for it */
	rdma_ack_cm_event(e);
	id->event = NULL;
	mc->id = id;
	return 0;
}

int
ipoib_verbs_mcast_attach(struct ipoib_hca_qp *qp, const uint8_t *mgid)
{
	struct ipoib_hca *hca = qp->hca;
	struct ipoib_verbs_mcast *mc = ipoib_vcm_mcast_find(hca, mgid);
	bool fresh = mc == NULL;
	int ret;

	if (mc != NULL && mc->attached)
		return 0;
	if (fresh) {
		if (hca->nr_mcast == IPOIB_VERBS_MCAST_MAX)
			return -ENOSPC;
		mc = &hca->mcast[hca->nr_mcast];
		memset(mc, 0, sizeof(*mc));
		memcpy(mc->mgid, mgid, IPOIB_GID_LEN);
	}
	if (mc->id == NULL) {
		ret = ipoib_vcm_join(hca, mc);
		if (ret < 0 && !hca->roce) {
			/* an IPoIB group of other Q_Key, no SA join rights */
			IPOIB_LOG(WARNING, "%s: multicast join refused (%s): "
				  "broadcast is not received; peers must be "
				  "known otherwise", hca->name, strerror(-ret));
			return 0;
		}
		if (ret < 0) {
			IPOIB_LOG(ERR, "%s: rdma_join_multicast: %s",
				  hca->name, strerror(-ret));
			return ret;
		}
	}
	ret = ibv_attach_mcast(qp->qp, &mc->fabric_gid, mc->mlid);
	if (ret != 0) {
		IPOIB_LOG(ERR, "%s: ibv_attach_mcast: %s", hca->name,
			  strerror(ret));
		return -ret;
	}
	mc->attached = true;
	if (fresh)	/* poll_cq reads the entry once it is counted */
		__atomic_store_n(&hca->nr_mcast, hca->nr_mcast + 1,
				 __ATOMIC_RELEASE);
	if (hca->roce)
		IPOIB_LOG(INFO, "%s: multicast group joined as IPv4 "
			  "%u.%u.%u.%u", hca->name, mc->ipv4 >> 24,
			  (mc->ipv4 >> 16) & 0xff, (mc->ipv4 >> 8) & 0xff,
			  mc->ipv4 & 0xff);
	return 0;
}

int
ipoib_verbs_mcast_detach(struct ipoib_hca_qp *qp, const uint8_t *mgid)
{
	struct ipoib_verbs_mcast *mc = ipoib_vcm_mcast_find(qp->hca, mgid);
	int ret;

	if (mc == NULL || !mc->attached)
		return -ENOENT;
	ret = ibv_detach_mcast(qp->qp, &mc->fabric_gid, mc->mlid);
	mc->attached = false;
	return -ret;
}

int
ipoib_verbs_mcast_route(struct ipoib_hca *hca, const uint8_t *mgid,
			union ibv_gid *gid, uint16_t *mlid)
{
	const struct ipoib_verbs_mcast *mc = ipoib_vcm_mcast_find(hca, mgid);
	uint32_t v4;

	if (mc != NULL && mc->id != NULL) {
		*gid = mc->fabric_gid;
		*mlid = mc->mlid;
		return 0;
	}
	if (!hca->roce)
		return -ENOENT;	/* IB: a group not joined has no MLID */
	/* RoCE: the group's GID is its IPv4 address; no join to send */
	v4 = ipoib_vcm_mgid_ipv4(mgid);
	memset(gid->raw, 0, sizeof(gid->raw));
	gid->raw[10] = gid->raw[11] = 0xff;
	gid->raw[12] = (uint8_t)(v4 >> 24);
	gid->raw[13] = (uint8_t)(v4 >> 16);
	gid->raw[14] = (uint8_t)(v4 >> 8);
	gid->raw[15] = (uint8_t)v4;
	*mlid = 0;
	return 0;
}

/*
 * IB (untested): the LID of a GID, from the SA through rdma_cm, blocking
 * the caller up to twice IPOIB_VCM_TIMEOUT_MS. ah_create() falls back to
 * it only for an address handle asked without a DLID; path_query() is
 * the asynchronous way (ipoib_verbs_sa.c).
 */
int
ipoib_verbs_path_lid(struct ipoib_hca *hca, const uint8_t *dgid,
		     uint16_t *dlid, uint8_t *sl)
{
	struct sockaddr_storage src, dst;
	struct rdma_cm_id *id;
	int ret = 0;

	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_IB) != 0)
		return -errno;
	ipoib_vcm_addr(hca, hca->gid.raw, 0, 0, &src);
	ipoib_vcm_addr(hca, dgid, 0, ipoib_vcm_ps_sid(RDMA_PS_IB, 1), &dst);
	if (rdma_resolve_addr(id, (struct sockaddr *)&src,
			      (struct sockaddr *)&dst,
			      IPOIB_VCM_TIMEOUT_MS) != 0 ||
	    rdma_resolve_route(id, IPOIB_VCM_TIMEOUT_MS) != 0)
		ret = -errno;
	else if (id->route.num_paths < 1)
		ret = -EHOSTUNREACH;
	if (ret == 0) {
		*dlid = be16toh(id->route.path_rec[0].dlid);
		*sl = id->route.path_rec[0].sl;
	}
	rdma_destroy_id(id);
	return ret;
}
