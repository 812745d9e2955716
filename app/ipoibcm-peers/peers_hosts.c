/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The fabric side of the emulated hosts: one port, UD QP and address
 * record each; one CQ and two SRQs for all of them (created on host 0's
 * port: the fabric lets QPs of every port of a process use them); the
 * receive buffers and their reposting.
 *
 * Host 0's QP is the one member of the broadcast and all-nodes groups for
 * every host, and hands each frame to the host it addresses, as a switch
 * fans a group out to ports: with a member per host, every ARP request
 * would cost the fabric one copy per host, 10^8 copies to resolve 10,000
 * hosts. A host also joins its own solicited-node group while there are
 * groups.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>

#include "peers.h"
#include "peers_pkt.h"

static uint32_t
peers_align64(uint32_t v)
{
	return (v + 63) & ~63u;
}

/* Post buffers idx[0..n) of a pool; n <= PEERS_BURST. */
static uint16_t
peers_bufs_post(struct shm_rq *rq, const struct shm_mem *mem,
		uint32_t stride, uint64_t kind, const uint32_t *idx,
		uint16_t n)
{
	struct ipoib_recv_wr wr[PEERS_BURST];
	uint16_t i;

	for (i = 0; i < n; i++) {
		wr[i].sg_list[0].addr = (uintptr_t)mem->addr +
					(uint64_t)idx[i] * stride;
		wr[i].sg_list[0].length = stride;
		wr[i].sg_list[0].lkey = mem->lkey;
		wr[i].num_sge = 1;
		wr[i].wr_id = kind << PEERS_WR_KIND_SHIFT | idx[i];
	}
	return shm_rq_post(rq, wr, n);
}

/* A buffer pool for an SRQ, every buffer posted. */
static int
peers_pool_fill(struct peers *P, struct shm_rq *rq, struct shm_mem *mem,
		uint32_t nbufs, uint32_t stride, uint64_t kind)
{
	uint32_t idx[PEERS_BURST], i, k;
	int ret;

	ret = shm_mem_alloc(P->f, (size_t)nbufs * stride, mem);
	if (ret < 0) {
		fprintf(stderr, PEERS_PROG ": no shared memory for %u receive "
			"buffers of %u bytes: %s\n", nbufs, stride,
			strerror(-ret));
		return ret;
	}
	for (i = 0; i < nbufs; i += k) {
		for (k = 0; k < PEERS_BURST && i + k < nbufs; k++)
			idx[k] = i + k;
		if (peers_bufs_post(rq, mem, stride, kind, idx,
				    (uint16_t)k) != k) {
			fprintf(stderr, PEERS_PROG ": cannot post receive "
				"buffers\n");
			return -ENOSPC;
		}
	}
	return 0;
}

/* The CQ and SRQs every host uses, on host 0's port. */
static int
peers_shared_open(struct peers *P, struct shm_port *port)
{
	bool rc = P->conf.accept != PEERS_ACCEPT_UD || P->conf.connect;
	int ret;

	errno = 0;
	P->cq = shm_cq_create(port, ipoib_pow2(P->ud_bufs + P->rc_bufs));
	if (P->cq == NULL)
		goto fail_errno;
	P->ud_srq = shm_srq_create(port, P->ud_bufs, 1, 0);
	if (P->ud_srq == NULL)
		goto fail_errno;
	ret = peers_pool_fill(P, P->ud_srq, &P->ud_mem, P->ud_bufs,
			      P->ud_stride, PEERS_WR_UD);
	if (ret < 0)
		return ret;
	if (!rc)
		return 0;
	/* active connections need a receive queue too, but no buffers */
	P->rc_srq = shm_srq_create(port, P->rc_bufs, 1, 0);
	if (P->rc_srq == NULL)
		goto fail_errno;
	if (P->conf.accept == PEERS_ACCEPT_NONE ||
	    P->conf.accept == PEERS_ACCEPT_UD)
		return 0;
	return peers_pool_fill(P, P->rc_srq, &P->rc_mem, P->rc_bufs,
			       P->rc_stride, PEERS_WR_RC);
fail_errno:
	ret = errno ? -errno : -ENOMEM;
	fprintf(stderr, PEERS_PROG ": cannot create the shared CQ/SRQs: %s\n",
		strerror(-ret));
	return ret;
}

/* Host 0: broadcast and all-nodes; each: solicited-node, while there are. */
static int
peers_host_join(struct peers *P, struct peers_host *h)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 0x01 };
	uint16_t pkey = P->conf.pkey | IPOIB_PKEY_FULL;
	uint8_t mgid[IPOIB_GID_LEN], group[16];
	int ret;

	if (h != &P->hosts[0])
		goto solicited;
	ipoib_mgid_bcast(mgid, pkey);
	ret = shm_mcast_attach(h->ud, mgid);
	if (ret < 0) {
		fprintf(stderr, PEERS_PROG ": cannot join the broadcast group: "
			"%s\n", strerror(-ret));
		return ret;
	}
	ipoib_mgid_ipv6(mgid, pkey, all_nodes);
	ret = shm_mcast_attach(h->ud, mgid);
	if (ret < 0) {
		fprintf(stderr, PEERS_PROG ": cannot join the IPv6 all-nodes "
			"group: %s\n", strerror(-ret));
		return ret;
	}
	/*
	 * The fabric has SHM_MAX_MCGS groups in all: one per host does not
	 * fit. The first hosts get theirs; the others answer solicitations
	 * sent unicast or to all-nodes.
	 */
solicited:
	if (P->sol_full || P->sol_groups >= PEERS_SOL_GROUPS)
		return 0;
	ipoib_ipv6_solicited(group, h->ipv6);
	ipoib_mgid_ipv6(mgid, pkey, group);
	if (shm_mcast_attach(h->ud, mgid) == 0)
		P->sol_groups++;
	else
		P->sol_full = true;	/* the fabric is full: stop trying */
	return 0;
}

static void
peers_host_addrs(struct peers *P, uint32_t i, struct peers_host *h)
{
	unsigned int plen = P->conf.ipv6_plen, b;

	h->ipv4 = P->conf.ipv4 + i;
	memset(h->ipv6, 0, sizeof(h->ipv6));
	for (b = 0; b < plen / 8; b++)
		h->ipv6[b] = P->conf.ipv6_prefix[b];
	if (plen % 8)
		h->ipv6[b] = P->conf.ipv6_prefix[b] &
			     (uint8_t)(0xff << (8 - plen % 8));
	pk_put32(&h->ipv6[12], h->ipv4);
}

static int
peers_host_open(struct peers *P, uint32_t i)
{
	struct peers_host *h = &P->hosts[i];
	char name[32];
	struct shm_port_conf pc = {
		.guid = P->conf.guid_base + i,
		.name = name,
		.ib_mtu = P->conf.ib_mtu,
		.npkeys = 1,
		.pkeys = { P->conf.pkey },
	};
	struct shm_qp_conf qc = {
		.type = SHM_QPT_UD,
		.max_recv_sge = 1,
		.pkey_index = 0,
		.qp_context = i,
	};
	uint8_t flags = P->conf.accept == PEERS_ACCEPT_UD ? 0 :
			IPOIB_HWADDR_F_RC;
	uint8_t mac[IPOIB_MAC_LEN];
	struct shm_port_info info;
	int ret;

	snprintf(name, sizeof(name), "peer%u", i);
	if (i == 0) {
		pc.max_srq_wr = P->ud_bufs > P->rc_bufs ? P->ud_bufs :
							  P->rc_bufs;
		pc.max_cqe = ipoib_pow2(P->ud_bufs + P->rc_bufs);
	}
	ret = shm_port_open(P->f, &pc, &h->port);
	if (ret < 0) {
		fprintf(stderr, PEERS_PROG ": host %u: cannot open a port with "
			"GUID 0x%016" PRIx64 ": %s%s\n", i, pc.guid,
			strerror(-ret), ret == -EADDRINUSE ?
			" (choose another --guid-base)" : "");
		return ret;
	}
	P->nr_hosts = i + 1;
	if (i == 0) {
		ret = peers_shared_open(P, h->port);
		if (ret < 0)
			return ret;
	}
	ret = peers_persona_join(P, h);
	if (ret < 0)
		return ret;
	qc.qkey = P->qkey;
	qc.recv_cq = P->cq;
	qc.srq = P->ud_srq;
	h->ud = shm_qp_create(h->port, &qc);
	if (h->ud == NULL) {
		ret = errno ? -errno : -ENOMEM;
		fprintf(stderr, PEERS_PROG ": host %u: cannot create the UD "
			"QP: %s\n", i, strerror(-ret));
		return ret;
	}
	ret = shm_qp_modify(h->ud, SHM_QPS_RTS);
	if (ret < 0)
		return ret;
	h->qpn = shm_qp_num(h->ud);
	shm_port_query(h->port, &info);
	h->lid = info.lid;
	peers_host_addrs(P, i, h);
	ipoib_hwaddr_set(&h->hw, flags, h->qpn, info.gid);
	/* the driver resolves an unknown destination MAC with this record */
	ipoib_hwaddr_to_mac(mac, &h->hw);
	shm_port_publish(h->port, mac, h->qpn, flags);
	ret = peers_host_join(P, h);
	if (ret < 0)
		return ret;
	if (P->conf.accept == PEERS_ACCEPT_UD)
		return 0;
	/*
	 * Linux/OFED and RFC 4755 service IDs: peers use either. Linux
	 * listens on the OFED one only (peers_persona.c).
	 */
	ret = shm_cm_listen(h->port, IPOIB_CM_SID_OFED | h->qpn);
	if (ret == 0 && P->conf.persona != PEERS_PERSONA_LINUX)
		ret = shm_cm_listen(h->port, IPOIB_CM_SID_RFC | h->qpn);
	if (ret < 0)
		fprintf(stderr, PEERS_PROG ": host %u: cannot listen: %s\n", i,
			strerror(-ret));
	return ret;
}

int
peers_hosts_open(struct peers *P)
{
	uint32_t n = P->conf.hosts, i;
	int ret;

	/* a datagram in flight to every host, twice over */
	P->ud_bufs = 2 * n + 1024;
	if (P->ud_bufs < PEERS_UD_BUFS_MIN)
		P->ud_bufs = PEERS_UD_BUFS_MIN;
	P->ud_stride = peers_align64(IPOIB_GRH_LEN + P->conf.ib_mtu);
	P->rc_bufs = PEERS_RC_BUFS;
	P->rc_stride = peers_align64(P->conf.mtu + IPOIB_HDR_LEN);
	P->hosts = calloc(n, sizeof(*P->hosts));
	if (P->hosts == NULL)
		return -ENOMEM;
	/* from the broadcast group's record (peers_persona_join) */
	P->qkey = IPOIB_QKEY_DEFAULT;
	P->ud_mtu = P->conf.ib_mtu;
	ret = shm_fabric_attach(P->conf.fabric, &P->f);
	if (ret < 0) {
		fprintf(stderr, PEERS_PROG ": cannot attach fabric %s: %s\n",
			P->conf.fabric, strerror(-ret));
		return ret;
	}
	for (i = 0; i < n; i++) {
		ret = peers_host_open(P, i);
		if (ret < 0)
			return ret;
	}
	if (P->sol_groups < n && !P->conf.quiet)
		fprintf(stderr, PEERS_PROG ": note: hosts %u..%u have no "
			"solicited-node group (the fabric has %d groups in "
			"all); they answer solicitations sent unicast or to "
			"ff02::1\n", P->sol_groups, n - 1, SHM_MAX_MCGS);
	return 0;
}

/*
 * An SRQ with completions still on the CQ cannot go (-EBUSY): with every
 * QP gone nothing new arrives, so poll what is there (a sender inside its
 * copy publishes within microseconds) and try again, for a while.
 */
static void
peers_srq_destroy(struct peers *P, struct shm_rq *srq)
{
	struct timespec ts = { 0, 1000000 };
	struct ipoib_wc wc[PEERS_BURST];
	int tries;

	for (tries = 0; tries < 1000; tries++) {
		if (shm_srq_destroy(srq) != -EBUSY)
			return;
		while (shm_cq_poll(P->cq, wc, PEERS_BURST) != 0)
			;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, PEERS_PROG ": an SRQ stayed busy; left behind\n");
}

/* Everything goes, in reverse: QPs, SRQs, CQ, buffers, ports, fabric. */
void
peers_hosts_close(struct peers *P)
{
	uint32_t i;

	if (P->f == NULL)
		return;
	for (i = 0; i < P->nr_hosts; i++)
		if (P->hosts[i].ud != NULL)
			shm_qp_destroy(P->hosts[i].ud);
	if (P->rc_srq != NULL)
		peers_srq_destroy(P, P->rc_srq);
	if (P->ud_srq != NULL)
		peers_srq_destroy(P, P->ud_srq);
	if (P->cq != NULL)
		shm_cq_destroy(P->cq);
	if (P->rc_mem.addr != NULL)
		shm_mem_free(P->f, &P->rc_mem);
	if (P->ud_mem.addr != NULL)
		shm_mem_free(P->f, &P->ud_mem);
	for (i = P->nr_hosts; i-- > 0;)
		shm_port_close(P->hosts[i].port);
	shm_fabric_detach(P->f);
	P->f = NULL;
}

/* ---- receive ------------------------------------------------------------- */

/* Whether a GID is one of the hosts' own (their GUIDs are consecutive). */
static bool
peers_gid_is_ours(const struct peers *P, const uint8_t *gid)
{
	return pk_get64(gid + 8) - P->conf.guid_base < P->nr_hosts;
}

static void
peers_rx_ud(struct peers *P, const struct ipoib_wc *wc, const uint8_t *buf)
{
	bool grh = wc->wc_flags & IPOIB_WC_GRH;
	const uint8_t *sgid = buf + 8, *frame = buf + IPOIB_GRH_LEN;
	uint32_t len = wc->byte_len - IPOIB_GRH_LEN, host = wc->qp_context;
	bool mcast = grh && buf[24] == 0xff;
	uint8_t gid[IPOIB_GID_LEN];

	if (wc->status != IPOIB_WC_SUCCESS || wc->qp_context >= P->nr_hosts ||
	    wc->byte_len < IPOIB_GRH_LEN + IPOIB_HDR_LEN) {
		P->wc_errors++;
		return;
	}
	/*
	 * Unicast without a GRH (as Linux sends it, and as Linux accepts
	 * it): the sender is its SLID and source QPN. A host would know
	 * the GID from ARP/ND; the emulator takes it from the directory.
	 */
	if (!grh) {
		if (shm_lid_to_gid(P->f, wc->slid, gid) < 0) {
			P->wc_errors++;
			return;
		}
		sgid = gid;
		P->ud_nogrh++;
	}
	if (mcast) {
		/* our own multicast, looped back, or for no host of ours */
		host = peers_gid_is_ours(P, sgid) ? UINT32_MAX :
		       peers_rx_mcast_host(P, frame, len);
		if (host == UINT32_MAX) {
			P->mcast_other++;
			return;
		}
	}
	peers_rx_frame(P, host, UINT32_MAX, sgid, wc->src_qp, mcast, false,
		       frame, len);
}

static void
peers_rx_rc(struct peers *P, const struct ipoib_wc *wc, const uint8_t *buf)
{
	const struct peers_conn *c = peers_conn_from_ctx(P, wc->qp_context);

	if (c == NULL) {
		P->stale_wc++;
		return;
	}
	if (wc->status != IPOIB_WC_SUCCESS || wc->byte_len < IPOIB_HDR_LEN) {
		P->wc_errors++;
		return;
	}
	peers_rx_frame(P, c->host, c->peer, NULL, 0, false, true, buf,
		       wc->byte_len);
}

/* One burst of the shared CQ: handle, then give the buffers back. */
unsigned int
peers_poll_cq(struct peers *P)
{
	struct ipoib_wc wc[PEERS_BURST];
	uint32_t ud[PEERS_BURST], rc[PEERS_BURST];
	uint16_t n, i, nud = 0, nrc = 0;

	n = shm_cq_poll(P->cq, wc, PEERS_BURST);
	for (i = 0; i < n; i++) {
		uint64_t kind = wc[i].wr_id >> PEERS_WR_KIND_SHIFT;
		uint32_t idx = (uint32_t)wc[i].wr_id;

		if (kind == PEERS_WR_UD && idx < P->ud_bufs) {
			peers_rx_ud(P, &wc[i], (const uint8_t *)P->ud_mem.addr +
				    (size_t)idx * P->ud_stride);
			ud[nud++] = idx;
		} else if (kind == PEERS_WR_RC && idx < P->rc_bufs) {
			peers_rx_rc(P, &wc[i], (const uint8_t *)P->rc_mem.addr +
				    (size_t)idx * P->rc_stride);
			rc[nrc++] = idx;
		} else {
			P->wc_errors++;
		}
	}
	if (nud > 0 && peers_bufs_post(P->ud_srq, &P->ud_mem, P->ud_stride,
				       PEERS_WR_UD, ud, nud) != nud)
		P->wc_errors++;
	if (nrc > 0 && peers_bufs_post(P->rc_srq, &P->rc_mem, P->rc_stride,
				       PEERS_WR_RC, rc, nrc) != nrc)
		P->wc_errors++;
	return n;
}
