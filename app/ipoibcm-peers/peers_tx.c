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
	      const struct iovec *iov, uint16_t iovcnt)
{
	struct shm_send wr = {
		.iov = iov,
		.iovcnt = iovcnt,
		.ah = ah,
		.remote_qpn = qpn,
		.remote_qkey = IPOIB_QKEY_DEFAULT,
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
	       const uint8_t *pkt, uint32_t len, uint32_t ud_mtu)
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
		peers_ud_post(h, ah, qpn, iov, 3);
	}
	return true;
}

static bool
peers_send_ud(struct peers *P, struct peers_peer *pe, uint16_t type,
	      const uint8_t *pkt, uint32_t len)
{
	struct peers_host *h = &P->hosts[pe->host];
	const struct shm_ah *ah = peers_ah_get(P, pe->gid);
	uint32_t ud_mtu = P->conf.ib_mtu - IPOIB_HDR_LEN;
	uint8_t hdr[IPOIB_HDR_LEN];
	struct iovec iov[2];

	if (ah == NULL) {	/* the peer's port is gone */
		h->st.dropped++;
		return false;
	}
	if (len > ud_mtu) {
		if (type == PK_ETH_P_IPV4 &&
		    peers_ud_frags(h, ah, pe->qpn, pkt, len, ud_mtu))
			return true;
		h->st.dropped++;
		return false;
	}
	peers_ipoib_hdr(hdr, type);
	iov[0] = (struct iovec){ hdr, sizeof(hdr) };
	iov[1] = (struct iovec){ (void *)(uintptr_t)pkt, len };
	peers_ud_post(h, ah, pe->qpn, iov, 2);
	return true;
}

/* On the connection: false when it refused (receiver not ready). */
static bool
peers_send_rc(struct peers_conn *c, uint16_t type, const uint8_t *pkt,
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
	peers_ipoib_hdr(hdr, type);
	return shm_qp_post_send(c->qp, &wr, 1) == 1;
}

/* Send a host's packet to peer; may_rc: ARP always goes on UD. */
bool
peers_send(struct peers *P, uint32_t peer, uint16_t type, const uint8_t *pkt,
	   uint32_t len, bool may_rc)
{
	struct peers_peer *pe = &P->peers[peer];
	struct peers_host *h = &P->hosts[pe->host];

	if (may_rc && P->conf.connect) {
		struct peers_conn *c = pe->tx ? &P->conns[pe->tx - 1] : NULL;

		if (c == NULL) {
			peers_conn_connect(P, peer);
		} else if (c->state == PEERS_CONN_UP) {
			if (peers_send_rc(c, type, pkt, len)) {
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

	if (len + IPOIB_HDR_LEN > P->conf.ib_mtu ||
	    shm_ah_resolve(P->f, mgid, 0, &ah) < 0) {
		h->st.dropped++;
		return false;
	}
	peers_ipoib_hdr(hdr, type);
	iov[0] = (struct iovec){ hdr, sizeof(hdr) };
	iov[1] = (struct iovec){ (void *)(uintptr_t)pkt, len };
	peers_ud_post(h, &ah, IPOIB_MCAST_QPN, iov, 2);
	return true;
}
