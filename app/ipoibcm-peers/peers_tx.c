/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Sending a host's reply: on the host's own connection to the peer when it
 * is up (--connect), else on UD to the peer's QPN and GID. A UD message
 * carries at most the IB MTU (IPoIB header included): a longer IPv4 packet
 * is fragmented unless DF is set (RFC 791); anything else is dropped.
 */

#include <sys/uio.h>

#include "peers.h"
#include "peers_pkt.h"

static void
peers_ipoib_hdr(uint8_t *hdr, uint16_t type)
{
	pk_put16(hdr, type);
	pk_put16(hdr + 2, 0);
}

static void
peers_ud_post(struct peers_host *h, const struct shm_ah *ah, uint32_t qpn,
	      uint32_t qkey, const struct iovec *iov, uint16_t iovcnt)
{
	struct shm_send wr = {
		.iov = iov,
		.iovcnt = iovcnt,
		.ah = ah,
		.remote_qpn = qpn,
		.remote_qkey = qkey,
	};

	/*
	 * The fabric takes every UD send while the QP is up: what cannot be
	 * delivered is lost, as on a wire.
	 */
	shm_qp_post_send(h->ud, &wr, 1);
	h->st.ud_tx++;
}

/* An IPv4 packet (20-byte header, as all ours) in UD-sized fragments. */
static bool
peers_ud_frags(struct peers_host *h, const struct shm_ah *ah, uint32_t qpn,
	       uint32_t qkey, const uint8_t *pkt, uint32_t len, uint32_t ud_mtu)
{
	uint16_t frag = pk_get16(pkt + 6);
	uint32_t max = (ud_mtu - PK_IPV4_HLEN) & ~7u, off, n;
	uint8_t hdr[IPOIB_HDR_LEN], ip[PK_IPV4_HLEN];
	struct iovec iov[3];

	if ((frag & PK_IPV4_DF) || (pkt[0] & 0xf) != 5 || max == 0)
		return false;
	peers_ipoib_hdr(hdr, PK_ETH_P_IPV4);
	for (off = 0; off < len - PK_IPV4_HLEN; off += n) {
		bool more;

		n = len - PK_IPV4_HLEN - off;
		if (n > max)
			n = max;
		more = off + n < len - PK_IPV4_HLEN || (frag & PK_IPV4_MF);
		memcpy(ip, pkt, PK_IPV4_HLEN);
		pk_put16(ip + 2, (uint16_t)(PK_IPV4_HLEN + n));
		pk_put16(ip + 6, (uint16_t)(((frag & PK_IPV4_OFF_MASK) +
					     off / 8) |
					    (more ? PK_IPV4_MF : 0)));
		pk_put16(ip + 10, 0);
		pk_put16(ip + 10, pk_cksum(ip, PK_IPV4_HLEN));
		iov[0] = (struct iovec){ hdr, sizeof(hdr) };
		iov[1] = (struct iovec){ ip, sizeof(ip) };
		iov[2] = (struct iovec){ (void *)(uintptr_t)(pkt +
					 PK_IPV4_HLEN + off), n };
		peers_ud_post(h, ah, qpn, qkey, iov, 3);
	}
	return true;
}

static bool
peers_send_ud(struct peers *P, struct peers_peer *pe, uint16_t type,
	      const uint8_t *pkt, uint32_t len)
{
	struct peers_host *h = &P->hosts[pe->host];
	const struct shm_ah *ah = peers_ah_get(P, pe->gid);
	uint32_t ud_mtu = P->ud_mtu - IPOIB_HDR_LEN;
	uint8_t hdr[IPOIB_HDR_LEN];
	struct iovec iov[2];

	if (ah == NULL) {	/* the peer's port is gone */
		h->st.dropped++;
		return false;
	}
	if (len > ud_mtu) {
		if (type == PK_ETH_P_IPV4 &&
		    peers_ud_frags(h, ah, pe->qpn, P->qkey, pkt, len, ud_mtu))
			return true;
		h->st.dropped++;
		return false;
	}
	peers_ipoib_hdr(hdr, type);
	iov[0] = (struct iovec){ hdr, sizeof(hdr) };
	iov[1] = (struct iovec){ (void *)(uintptr_t)pkt, len };
	peers_ud_post(h, ah, pe->qpn, P->qkey, iov, 2);
	return true;
}

/*
 * Linux (ipoib_start_xmit()): every unicast packet, ARP included, to a
 * peer that advertises connected mode goes on the connection; while it
 * comes up, 3 are held and the rest dropped (peers_persona.c).
 */
static bool
peers_send_linux(struct peers *P, uint32_t peer, uint16_t type,
		 const uint8_t *pkt, uint32_t len)
{
	struct peers_peer *pe = &P->peers[peer];
	struct peers_host *h = &P->hosts[pe->host];
	struct peers_conn *c;

	if (pe->tx == 0)
		peers_conn_connect(P, peer);
	c = pe->tx ? &P->conns[pe->tx - 1] : NULL;
	/*
	 * No connected mode there, or no more: an ARP or NA took the flag
	 * away, and the new address is a new ipoib_neigh on UD.
	 */
	if (c == NULL || !(pe->flags & IPOIB_HWADDR_F_RC))
		return peers_send_ud(P, pe, type, pkt, len);
	if (c->state != PEERS_CONN_UP)
		return peers_persona_hold(P, pe, type, pkt, len);
	if (peers_conn_send(c, type, pkt, len)) {
		h->st.rc_tx++;
		return true;
	}
	h->st.dropped++;	/* RNR retries 0: it would go to error */
	return false;
}

/* Send a host's packet to peer; may_rc: ARP always goes on UD. */
bool
peers_send(struct peers *P, uint32_t peer, uint16_t type, const uint8_t *pkt,
	   uint32_t len, bool may_rc)
{
	struct peers_peer *pe = &P->peers[peer];
	struct peers_host *h = &P->hosts[pe->host];

	/* Linux sends unicast ARP on UD too (unicast_arp_send()) */
	if (P->conf.persona == PEERS_PERSONA_LINUX && may_rc)
		return peers_send_linux(P, peer, type, pkt, len);
	if (may_rc && P->conf.connect) {
		struct peers_conn *c = pe->tx ? &P->conns[pe->tx - 1] : NULL;

		if (c == NULL) {
			peers_conn_connect(P, peer);
		} else if (c->state == PEERS_CONN_UP) {
			if (peers_conn_send(c, type, pkt, len)) {
				h->st.rc_tx++;
				return true;
			}
			h->st.rc_fallback++;
		}
		/* connecting makes connections, never peers: pe holds */
	}
	return peers_send_ud(P, pe, type, pkt, len);
}

/* To a multicast group on UD (an unsolicited advertisement). */
bool
peers_send_mcast(struct peers *P, uint32_t host, const uint8_t *mgid,
		 uint16_t type, const uint8_t *pkt, uint32_t len)
{
	struct peers_host *h = &P->hosts[host];
	uint8_t hdr[IPOIB_HDR_LEN];
	struct iovec iov[2];
	struct shm_ah ah;

	if (len + IPOIB_HDR_LEN > P->ud_mtu ||
	    shm_ah_resolve(P->f, mgid, 0, &ah) < 0) {
		h->st.dropped++;
		return false;
	}
	peers_ipoib_hdr(hdr, type);
	iov[0] = (struct iovec){ hdr, sizeof(hdr) };
	iov[1] = (struct iovec){ (void *)(uintptr_t)pkt, len };
	peers_ud_post(h, &ah, IPOIB_MCAST_QPN, P->qkey, iov, 2);
	return true;
}
