/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * What Linux and illumos IPoIB hosts do on the wire that this emulator's
 * own hosts do not (--personality), each from its source:
 *
 * linux (drivers/infiniband/ulp/ipoib):
 * - listens on 0x1000000000000000 | QPN only (ipoib_cm_dev_open():
 *   ib_cm_listen(IPOIB_CM_IETF_ID | qpn)): a REQ for the RFC 4755 ID
 *   finds no listener and ib_cm answers REJ 8 (invalid service ID);
 * - REQ: retry_count 0, rnr_retry_count 0 ("RFC draft warns against
 *   retries", ipoib_cm_send_req()); REP echoes the REQ's rnr_retry
 *   (ipoib_cm_send_rep()); both advertise IPOIB_CM_BUF_SIZE, 65524;
 * - while a neighbour's connection is coming up, at most
 *   IPOIB_MAX_PATH_REC_QUEUE (3) packets are held (ipoib_start_xmit(),
 *   neigh->queue) and the rest dropped; they go on RC once it is up;
 * - a REJ or a timeout frees the neighbour and its queue
 *   (ipoib_cm_tx_handler()); the next packet starts over: no fallback to
 *   UD for a peer that advertises connected mode, no backoff;
 * - unicast UD without a GRH (path_rec_completion(): the address
 *   handle comes from the SA's path record, which within the subnet has
 *   hop limit 0 and so no IB_AH_GRH);
 * - joins the broadcast group through the SA and takes Q_Key and the UD
 *   MTU from its MCMemberRecord (ipoib_mcast_join_finish());
 * - sends over RC only to a neighbour whose address has the flag 0x80
 *   (ipoib_main.c: ipoib_cm_enabled() tests the neighbour's hardware
 *   address); an ARP reply or an NA that changes the address without it
 *   moves the neighbour to UD, subject to the neighbour table's rules
 *   (peers_persona_neigh_update()).
 *
 * illumos (usr/src/uts/common/io/ib/clients/ibd/ibd_cm.c):
 * - listens on both service IDs (ibd_rc_listen());
 * - connects with the OFED one, again 10 ms later, then with the RFC
 *   one 10 ms after that (ibd_rc_try_connect(): delay(10000 us));
 * - sends up to its own 65524-byte buffers whatever MTU the peer's REP
 *   advertised (it never reads the REP's MTU).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "peers.h"

#define PEERS_SA_JOIN_NS	(10ULL * 1000 * IPOIB_NS_PER_MS)
/* Linux arp_tbl's default locktime (net/ipv4/arp.c: LOCKTIME 1 * HZ) */
#define PEERS_LINUX_LOCKTIME_NS	(1000ULL * IPOIB_NS_PER_MS)

const char *
peers_persona_name(enum peers_persona p)
{
	switch (p) {
	case PEERS_PERSONA_LINUX:
		return "linux";
	case PEERS_PERSONA_ILLUMOS:
		return "illumos";
	default:
		return "default";
	}
}

/* The service ID of try number sid_try. */
uint64_t
peers_persona_sid(const struct peers *P, uint8_t sid_try)
{
	if (P->conf.persona == PEERS_PERSONA_ILLUMOS)
		return sid_try < 2 ? IPOIB_CM_SID_OFED : IPOIB_CM_SID_RFC;
	if (P->conf.persona == PEERS_PERSONA_LINUX)
		return IPOIB_CM_SID_OFED;
	return sid_try == 0 ? IPOIB_CM_SID_OFED : IPOIB_CM_SID_RFC;
}

/*
 * After a refused or timed-out REQ: is there another service ID to try?
 * Sets pe->sid_try, and for illumos the time of the next try.
 */
bool
peers_persona_next_sid(const struct peers *P, struct peers_peer *pe,
		       uint16_t reason)
{
	switch (P->conf.persona) {
	case PEERS_PERSONA_ILLUMOS:
		if (pe->sid_try >= 2)
			return false;
		pe->sid_try++;
		pe->next_retry_ns = ipoib_now_ns() + PEERS_ILLUMOS_RETRY_NS;
		return true;
	case PEERS_PERSONA_LINUX:
		return false;
	default:
		if (reason != IPOIB_REJ_INVALID_SERVICE_ID || pe->sid_try != 0)
			return false;
		pe->sid_try = 1;
		return true;
	}
}

/* The receive MTU our REQ and REP advertise (IPoIB header counted). */
uint32_t
peers_persona_adv_mtu(const struct peers *P)
{
	if (P->conf.persona == PEERS_PERSONA_LINUX)
		return IPOIB_CM_BUF_SIZE;
	return P->conf.mtu + IPOIB_HDR_LEN;
}

/* Linux: hold a packet for a neighbour whose connection is coming up. */
bool
peers_persona_hold(struct peers *P, struct peers_peer *pe, uint16_t type,
		   const uint8_t *pkt, uint32_t len)
{
	struct peers_host *h = &P->hosts[pe->host];
	struct peers_held *q;

	if (pe->nq >= PEERS_LINUX_QUEUE) {
		h->st.cm_queue_drops++;
		return false;
	}
	q = malloc(sizeof(*q) + len);
	if (q == NULL) {
		h->st.cm_queue_drops++;
		return false;
	}
	q->type = type;
	q->len = len;
	memcpy(q->pkt, pkt, len);
	pe->q[pe->nq++] = q;
	return true;
}

/*
 * Every host joins the broadcast group through the SA as a full member
 * before its interface is up, and takes its Q_Key and MTU (the first
 * host's answer; all share the partition). Linux: ipoib keeps the
 * carrier off until the broadcast join completes; the emulator waits for
 * the answer here. illumos ibd joins the broadcast group as a full
 * member when it starts and sends with its Q_Key (ibd.c:
 * ibd_async_acache(), id_mcinfo->mc_qkey). Once the group exists only
 * its full members receive broadcast, the driver among them.
 */
int
peers_persona_join(struct peers *P, struct peers_host *h)
{
	struct shm_sa_mcmember rec = { .join_state = SHM_SA_JOIN_FULL };
	uint64_t deadline = ipoib_now_ns() + PEERS_SA_JOIN_NS;
	struct shm_sa_event ev;
	int ret;

	ipoib_mgid_bcast(rec.mgid, P->conf.pkey | IPOIB_PKEY_FULL);
	ret = shm_sa_mc_join(h->port, &rec, 0);
	while (ret == 0 && shm_sa_poll(h->port, &ev, 1) == 0) {
		if (ipoib_now_ns() > deadline)
			ret = -ETIMEDOUT;
		else
			shm_cm_wait(h->port, 10 * IPOIB_NS_PER_MS);
	}
	if (ret == 0)
		ret = ev.status;
	if (ret < 0) {
		fprintf(stderr, PEERS_PROG ": host %u: broadcast group join "
			"failed: %s\n", (unsigned int)(h - P->hosts),
			strerror(-ret));
		return ret;
	}
	P->qkey = ev.mc.qkey;
	if (ev.mc.mtu < P->ud_mtu)
		P->ud_mtu = ev.mc.mtu;
	return 0;
}

/*
 * An ARP reply or NA received by host names hw (flags included) as a
 * neighbour's address. Linux updates only an entry it has
 * (arp_process(): __neigh_lookup(..., 0) without arp_accept;
 * ndisc_recv_na(): neigh_lookup()), so an unknown peer stays unknown.
 * override: a gratuitous ARP (sender IP = target IP, and for a reply
 * target address = sender's: arp_is_garp()) or an NA with the O flag
 * (NEIGH_UPDATE_F_OVERRIDE). Any other ARP is taken only once the
 * entry's locktime has passed since its last update (arp_process():
 * override = time_after(jiffies, n->updated + LOCKTIME) || is_garp);
 * neigh_update() ignores a new address otherwise.
 */
void
peers_persona_neigh_update(struct peers *P, uint32_t host,
			   const struct ipoib_hwaddr *hw, bool override)
{
	struct peers_host *h = &P->hosts[host];
	uint32_t peer = peers_peer_find(P, host, ipoib_hwaddr_qpn(hw),
					ipoib_hwaddr_gid(hw));
	uint8_t flags = ipoib_hwaddr_flags(hw);
	struct peers_peer *pe;

	if (peer == UINT32_MAX)
		return;
	pe = &P->peers[peer];
	if (P->conf.persona == PEERS_PERSONA_LINUX && !override &&
	    pe->flags_known &&
	    ipoib_now_ns() - pe->flags_ns < PEERS_LINUX_LOCKTIME_NS) {
		h->st.neigh_locked++;
		return;
	}
	if (pe->flags_known && (pe->flags & IPOIB_HWADDR_F_RC) &&
	    !(flags & IPOIB_HWADDR_F_RC))
		h->st.neigh_rc_lost++;
	h->st.neigh_updates++;
	peers_peer_set_flags(P, peer, flags);
}
