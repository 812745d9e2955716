/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Connected mode of the emulated hosts (RFC 4755), the Linux way: a host
 * receives on the connections peers open to it (passive, answered per
 * --accept) and, with --connect, sends on the one it opens itself (active)
 * to a peer it replies to. A refused or timed-out REQ leaves the peer on
 * UD, retried after a backoff of 100 ms doubling to 5 s. Connections end
 * by DREQ (the fabric answers DREP), by the peer's death (QP_FATAL from
 * the async events), or at our exit (DREQ, briefly awaited).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "peers.h"
#include "peers_pkt.h"

#define PEERS_SHUTDOWN_NS	(500 * IPOIB_NS_PER_MS)

static void *
peers_ctx_ptr(const struct peers *P, uint32_t idx)
{
	return (void *)(uintptr_t)peers_conn_ctx(P, idx);
}

/* Tear a connection down at once: CM id, QP, slot. */
static void
peers_conn_close(struct peers *P, uint32_t idx)
{
	struct peers_conn *c = &P->conns[idx];
	struct peers_peer *pe = &P->peers[c->peer];

	if (c->active) {
		if (pe->tx == idx + 1)
			pe->tx = 0;
	} else {
		if (pe->rx == idx + 1)
			pe->rx = 0;
		P->hosts[c->host].passive--;
	}
	P->hosts[c->host].nconns--;
	if (c->id != NULL)
		shm_cm_destroy(c->id);
	/* on the SRQ: no receive of its own to flush, gone at once */
	if (c->qp != NULL)
		shm_qp_destroy(c->qp);
	peers_conn_free(P, idx);
}

/* On the connection: false when it refused (receiver not ready). */
bool
peers_conn_send(struct peers_conn *c, uint16_t type, const uint8_t *pkt,
		uint32_t len)
{
	uint8_t hdr[IPOIB_HDR_LEN];
	struct iovec iov[2] = {
		{ hdr, sizeof(hdr) },
		{ (void *)(uintptr_t)pkt, len },
	};
	struct shm_send wr = { .iov = iov, .iovcnt = 2 };

	if (len + IPOIB_HDR_LEN > c->tx_mtu)
		return false;
	pk_put16(hdr, type);
	pk_put16(hdr + 2, 0);
	return shm_qp_post_send(c->qp, &wr, 1) == 1;
}

/*
 * Free what a Linux host holds for pe: sent on its connection c (up), or
 * dropped and counted (c NULL: refused, timed out, or stopping).
 */
void
peers_conn_flush_held(struct peers *P, struct peers_peer *pe,
		      struct peers_conn *c)
{
	struct peers_host *h = &P->hosts[pe->host];
	uint8_t i;

	for (i = 0; i < pe->nq; i++) {
		if (c != NULL && peers_conn_send(c, pe->q[i]->type,
						 pe->q[i]->pkt,
						 pe->q[i]->len)) {
			h->st.rc_tx++;
			h->st.cm_queued++;
		} else {
			h->st.cm_queue_drops++;
		}
		free(pe->q[i]);
		pe->q[i] = NULL;
	}
	pe->nq = 0;
}

/*
 * Refused, timed out or failed: UD for a while, then try again. Linux
 * has no backoff: what it held is dropped and the next packet tries
 * again (peers_persona.c).
 */
static void
peers_backoff(struct peers *P, struct peers_peer *pe)
{
	if (P->conf.persona == PEERS_PERSONA_LINUX) {
		peers_conn_flush_held(P, pe, NULL);
		P->hosts[pe->host].act = PEERS_ACT_NONE;
		return;
	}
	pe->backoff_ms = pe->backoff_ms == 0 ? PEERS_BACKOFF_MIN_MS :
			 pe->backoff_ms * 2 > PEERS_BACKOFF_MAX_MS ?
			 PEERS_BACKOFF_MAX_MS : pe->backoff_ms * 2;
	pe->next_retry_ns = ipoib_now_ns() +
			    pe->backoff_ms * IPOIB_NS_PER_MS;
	P->hosts[pe->host].act = PEERS_ACT_BACKOFF;
	P->hosts[pe->host].backoff_ms = pe->backoff_ms;
}

/* Does the peer offer connected mode? Its address record says. */
static bool
peers_peer_rc(struct peers *P, struct peers_peer *pe)
{
	struct ipoib_hwaddr hw, got;
	uint8_t mac[IPOIB_MAC_LEN];

	if (!pe->flags_known) {
		ipoib_hwaddr_set(&hw, 0, pe->qpn, pe->gid);
		ipoib_hwaddr_to_mac(mac, &hw);
		pe->flags = shm_addr_resolve(P->hosts[pe->host].port, mac,
					     got.bytes) == 0 &&
			    ipoib_hwaddr_eq_qpn_gid(&hw, &got) ?
			    ipoib_hwaddr_flags(&got) : 0;
		pe->flags_known = true;
	}
	return pe->flags & IPOIB_HWADDR_F_RC;
}

/* ---- active side --------------------------------------------------------- */

static int
peers_send_req(struct peers *P, uint32_t idx)
{
	struct peers_conn *c = &P->conns[idx];
	struct peers_peer *pe = &P->peers[c->peer];
	struct peers_host *h = &P->hosts[c->host];
	struct ipoib_cm_data d = {
		.qpn = rte_cpu_to_be_32(h->qpn),
		.mtu = rte_cpu_to_be_32(peers_persona_adv_mtu(P)),
	};
	struct shm_cm_req req = {
		.service_id = peers_persona_sid(P, pe->sid_try) | pe->qpn,
		.dgid = pe->gid,
		.qp = c->qp,
		.context = peers_ctx_ptr(P, idx),
		/* Linux: no transport retries, 15 CM retries */
		.retry_count = 0,
		/*
		 * A busy receiver makes us use UD for that reply instead;
		 * Linux sends 0 (ipoib_cm_send_req()).
		 */
		.rnr_retry_count = P->conf.persona == PEERS_PERSONA_LINUX ?
				   0 : IPOIB_RNR_RETRY_FOREVER,
		.max_cm_retries = PEERS_CM_RETRIES,
		.responder_resources = 4,
		.priv_len = sizeof(d),
		.priv = (const uint8_t *)&d,
	};

	return shm_cm_connect(h->port, &req, &c->id);
}

/* Open the host's connection to peer, if it may be tried now. */
void
peers_conn_connect(struct peers *P, uint32_t peer)
{
	struct peers_peer *pe = &P->peers[peer];
	struct peers_host *h = &P->hosts[pe->host];
	struct shm_qp_conf qc = {
		.type = SHM_QPT_RC,
		.recv_cq = P->cq,
		.srq = P->rc_srq,
		.max_recv_sge = 1,
	};
	struct peers_conn *c;
	uint32_t idx;

	if (pe->tx != 0 || P->idle || P->stopping ||
	    ipoib_now_ns() < pe->next_retry_ns || !peers_peer_rc(P, pe))
		return;
	idx = peers_conn_alloc(P);
	if (idx == UINT32_MAX)
		return;
	c = &P->conns[idx];
	c->host = pe->host;
	c->peer = peer;
	c->active = true;
	c->state = PEERS_CONN_CONNECTING;
	h->nconns++;
	qc.qp_context = peers_conn_ctx(P, idx);
	c->qp = shm_qp_create(h->port, &qc);
	if (c->qp == NULL || peers_send_req(P, idx) < 0) {
		h->st.act_failed++;
		peers_conn_close(P, idx);
		peers_backoff(P, pe);
		return;
	}
	pe->tx = idx + 1;
	h->act = PEERS_ACT_CONNECTING;
}

static void
peers_act_failed(struct peers *P, uint32_t idx)
{
	struct peers_conn *c = &P->conns[idx];
	struct peers_peer *pe = &P->peers[c->peer];

	P->hosts[c->host].st.act_failed++;
	peers_conn_close(P, idx);
	peers_backoff(P, pe);
}

static void
peers_cm_rep(struct peers *P, uint32_t idx, const struct shm_cm_event *ev)
{
	struct peers_conn *c = &P->conns[idx];
	struct peers_peer *pe = &P->peers[c->peer];
	struct peers_host *h = &P->hosts[c->host];
	struct ipoib_cm_data d;
	uint64_t *bad = NULL;
	uint32_t mtu = 0;

	if (!c->active || c->state != PEERS_CONN_CONNECTING)
		return;
	if (ev->priv_len >= sizeof(d)) {
		memcpy(&d, ev->priv, sizeof(d));
		mtu = rte_be_to_cpu_32(d.mtu);
		if (mtu <= IPOIB_HDR_LEN || mtu > IPOIB_CM_BUF_SIZE)
			bad = &h->st.cm_bad_mtu;	/* Linux: <= 4 too */
		else if ((rte_be_to_cpu_32(d.qpn) & IPOIB_QPN_MASK) != pe->qpn)
			bad = &h->st.cm_bad_qpn;
	} else {
		bad = &h->st.cm_bad_len;
	}
	if (bad != NULL) {
		(*bad)++;
		shm_cm_reject(c->id, IPOIB_REJ_CONSUMER, NULL, 0);
		peers_act_failed(P, idx);
		return;
	}
	if (shm_cm_rtu(c->id) < 0) {
		peers_act_failed(P, idx);
		return;
	}
	c->tx_mtu = mtu < IPOIB_CM_BUF_SIZE ? mtu : IPOIB_CM_BUF_SIZE;
	/* illumos never reads the REP's MTU: its own buffers bound it */
	if (P->conf.persona == PEERS_PERSONA_ILLUMOS)
		c->tx_mtu = IPOIB_CM_BUF_SIZE;
	c->state = PEERS_CONN_UP;
	pe->backoff_ms = 0;
	if (P->conf.persona == PEERS_PERSONA_ILLUMOS)
		pe->sid_try = 0;	/* the next connect starts over */
	h->act = PEERS_ACT_UP;
	h->st.act_up++;
	peers_conn_flush_held(P, pe, c);
}

/* A REJ or a timeout of our REQ. */
static void
peers_cm_refused(struct peers *P, uint32_t idx, const struct shm_cm_event *ev)
{
	struct peers_conn *c = &P->conns[idx];
	struct peers_peer *pe = &P->peers[c->peer];

	uint16_t reason = ev->type == IPOIB_CM_REJ_RCVD ? ev->reason : 0;

	/*
	 * Another service ID to try: the RFC 4755 one at once when the
	 * OFED one is unknown there (default); illumos's sequence, 10 ms
	 * apart, on any failure (peers_persona.c).
	 */
	if (peers_persona_next_sid(P, pe, reason)) {
		if (P->conf.persona == PEERS_PERSONA_ILLUMOS) {
			/* a new QP for the next try, when it is due */
			P->hosts[c->host].st.act_failed++;
			peers_conn_close(P, idx);
			return;
		}
		shm_cm_destroy(c->id);
		c->id = NULL;
		if (peers_send_req(P, idx) == 0)
			return;
	}
	if (P->conf.persona == PEERS_PERSONA_ILLUMOS)
		pe->sid_try = 0;	/* the next connect starts over */
	peers_act_failed(P, idx);
}

/* ---- passive side -------------------------------------------------------- */

static void
peers_reject(struct peers_host *h, struct shm_cm_id *id, uint16_t reason)
{
	shm_cm_reject(id, reason, NULL, 0);
	shm_cm_destroy(id);
	h->st.rejected++;
}

static void
peers_cm_req(struct peers *P, uint32_t host, const struct shm_cm_event *ev)
{
	struct peers_host *h = &P->hosts[host];
	struct ipoib_cm_data d, rep = {
		.qpn = rte_cpu_to_be_32(h->qpn),
		.mtu = rte_cpu_to_be_32(peers_persona_adv_mtu(P)),
	};
	struct shm_qp_conf qc = {
		.type = SHM_QPT_RC,
		.recv_cq = P->cq,
		.srq = P->rc_srq,
		.max_recv_sge = 1,
	};
	struct peers_conn *c;
	uint32_t peer, idx;

	if (ev->priv_len < sizeof(d) ||
	    P->conf.accept == PEERS_ACCEPT_NONE) {
		if (ev->priv_len < sizeof(d))
			h->st.cm_bad_len++;
		peers_reject(h, ev->id, IPOIB_REJ_CONSUMER);
		return;
	}
	memcpy(&d, ev->priv, sizeof(d));
	if (rte_be_to_cpu_32(d.mtu) <= IPOIB_HDR_LEN ||
	    rte_be_to_cpu_32(d.mtu) > IPOIB_CM_BUF_SIZE) {
		h->st.cm_bad_mtu++;
		peers_reject(h, ev->id, IPOIB_REJ_CONSUMER);
		return;
	}
	peer = peers_peer_get(P, host, rte_be_to_cpu_32(d.qpn),
			      ev->remote_gid);
	if (peer == UINT32_MAX) {
		peers_reject(h, ev->id, IPOIB_REJ_NO_RESOURCES);
		return;
	}
	peers_peer_set_flags(P, peer, IPOIB_HWADDR_F_RC);
	/* the peer came back: its old connection is stale */
	if (P->peers[peer].rx != 0)
		peers_conn_close(P, P->peers[peer].rx - 1);
	if (P->stopping || (P->conf.accept == PEERS_ACCEPT_LIMIT &&
			    h->passive >= P->conf.accept_limit)) {
		peers_reject(h, ev->id, IPOIB_REJ_NO_QP);
		return;
	}
	idx = peers_conn_alloc(P);
	if (idx == UINT32_MAX) {
		peers_reject(h, ev->id, IPOIB_REJ_NO_RESOURCES);
		return;
	}
	c = &P->conns[idx];
	c->host = host;
	c->peer = peer;
	c->state = PEERS_CONN_CONNECTING;
	qc.qp_context = peers_conn_ctx(P, idx);
	c->qp = shm_qp_create(h->port, &qc);
	if (c->qp == NULL) {
		peers_conn_free(P, idx);
		peers_reject(h, ev->id, IPOIB_REJ_NO_QP);
		return;
	}
	if (shm_cm_accept(ev->id, c->qp, peers_ctx_ptr(P, idx),
			  (const uint8_t *)&rep, sizeof(rep)) < 0) {
		shm_qp_destroy(c->qp);
		peers_conn_free(P, idx);
		peers_reject(h, ev->id, IPOIB_REJ_NO_RESOURCES);
		return;
	}
	c->id = ev->id;
	P->peers[peer].rx = idx + 1;
	h->passive++;
	h->nconns++;
	h->st.accepted++;
}

/* ---- events -------------------------------------------------------------- */

static void
peers_cm_event(struct peers *P, uint32_t host, const struct shm_cm_event *ev)
{
	struct peers_conn *c;
	uint32_t idx;

	if (ev->type == IPOIB_CM_REQ_RCVD) {
		peers_cm_req(P, host, ev);
		return;
	}
	c = peers_conn_from_ctx(P, (uint32_t)(uintptr_t)ev->context);
	if (c == NULL)
		return;		/* every id of ours belongs to a live slot */
	idx = (uint32_t)(c - P->conns);
	switch (ev->type) {
	case IPOIB_CM_REP_RCVD:
		peers_cm_rep(P, idx, ev);
		break;
	case IPOIB_CM_ESTABLISHED:
		c->state = PEERS_CONN_UP;
		break;
	case IPOIB_CM_REJ_RCVD:
	case IPOIB_CM_TIMEOUT:
		if (c->active && c->state == PEERS_CONN_CONNECTING)
			peers_cm_refused(P, idx, ev);
		else
			peers_conn_close(P, idx);
		break;
	case IPOIB_CM_DREQ_RCVD:
		/* a clean close: the next reply may connect again at once */
		if (c->active)
			P->hosts[c->host].act = PEERS_ACT_NONE;
		peers_conn_close(P, idx);
		break;
	case IPOIB_CM_DISCONNECTED:
		peers_conn_close(P, idx);
		break;
	default:
		break;
	}
}

unsigned int
peers_cm_poll(struct peers *P, uint32_t host)
{
	struct shm_cm_event ev[8];
	unsigned int total = 0;
	int n, i;

	do {
		n = shm_cm_poll(P->hosts[host].port, ev, 8);
		for (i = 0; i < n; i++)
			peers_cm_event(P, host, &ev[i]);
		total += n > 0 ? (unsigned int)n : 0;
	} while (n == 8);
	return total;
}

/* Also where the fabric notices dead peers (and runs its janitor). */
unsigned int
peers_async_poll(struct peers *P, uint32_t host)
{
	struct shm_async_event ev[8];
	int n = shm_async_poll(P->hosts[host].port, ev, 8), i;

	for (i = 0; i < n; i++) {
		struct peers_conn *c;

		if (ev[i].type != SHM_EV_QP_FATAL)
			continue;
		c = peers_conn_from_ctx(P, ev[i].qp_context);
		if (c != NULL) {
			uint32_t idx = (uint32_t)(c - P->conns);
			struct peers_peer *pe = &P->peers[c->peer];
			bool active = c->active;

			peers_conn_close(P, idx);
			if (active)
				peers_backoff(P, pe);
		} else if (ev[i].qp_context == host) {
			fprintf(stderr, PEERS_PROG ": host %u: UD QP 0x%06x "
				"failed\n", host, ev[i].qp_num);
		}
	}
	return n > 0 ? (unsigned int)n : 0;
}

/* At exit: DREQ every established connection, await DREPs a little. */
void
peers_conns_shutdown(struct peers *P)
{
	struct timespec ts = { 0, 1000000 };
	uint64_t deadline = ipoib_now_ns() + PEERS_SHUTDOWN_NS;
	bool left = false;
	uint32_t i;

	P->stopping = true;
	for (i = 0; i < P->nr_conns; i++) {
		struct peers_conn *c = &P->conns[i];

		if (c->state == PEERS_CONN_UP &&
		    shm_cm_disconnect(c->id) == 0) {
			c->state = PEERS_CONN_CLOSING;
			left = true;
		}
	}
	while (left && ipoib_now_ns() < deadline) {
		nanosleep(&ts, NULL);
		left = false;
		for (i = 0; i < P->nr_conns; i++) {
			if (P->conns[i].state != PEERS_CONN_CLOSING)
				continue;
			left = true;
			peers_cm_poll(P, P->conns[i].host);
		}
	}
	for (i = 0; i < P->nr_conns; i++)
		if (P->conns[i].state != PEERS_CONN_FREE)
			peers_conn_close(P, i);
	for (i = 0; i < P->nr_peers; i++)
		peers_conn_flush_held(P, &P->peers[i], NULL);
}
