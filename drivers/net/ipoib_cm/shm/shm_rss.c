/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Receive-side scaling of a UD QP: what arrives for it is spread by flow
 * over the receive queues and CQs of several UD QPs, as an HCA spreads
 * UD traffic over its receive work queues (the RSS of enhanced IPoIB).
 * The receiver names the QPs (shm_qp_rss_set()); a sender hashes each
 * message's IP header at delivery (shm_rss_pick()), so the frames of one
 * flow always land on one queue, in order.
 *
 * The hash is a NIC's: Toeplitz with the receiver's 40-byte key over the
 * IPv4 or IPv6 source and destination addresses, then the TCP or UDP
 * source and destination ports when the packet is not a fragment (so that
 * every fragment of a datagram lands where its first does) and the
 * receiver's hash types (struct ipoib_rss_conf) cover them. Anything else
 * (ARP, a type not covered) goes to the QP's own receive queue.
 */

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "shm_internal.h"

#define SHM_RSS_PEEK	(IPOIB_HDR_LEN + 40 + 4)	/* IPv6 header, ports */

int
shm_qp_rss_set(struct shm_qp *qp, struct shm_qp *const *rqs, uint32_t n,
	       const struct ipoib_rss_conf *conf)
{
	uint32_t i, w;

	if (qp->type != SHM_QPT_UD || n > SHM_RSS_MAX ||
	    (n >= 2 && conf == NULL))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (rqs[i]->type != SHM_QPT_UD || rqs[i]->port != qp->port)
			return -EINVAL;
	/* senders that read the old table may still deliver by it */
	shm_store(&qp->ent->nr_rss, 0);
	if (n < 2)
		return 0;
	for (i = 0; i < n; i++)
		shm_store_relaxed(&qp->ent->rss[i], rqs[i]->qpn);
	for (i = 0; i < IPOIB_RSS_KEY_LEN / 4; i++) {
		memcpy(&w, conf->key + 4 * i, 4);
		shm_store_relaxed(&qp->ent->rss_key[i], w);
	}
	shm_store_relaxed(&qp->ent->rss_types, conf->types);
	shm_store(&qp->ent->nr_rss, n);
	return 0;
}

uint32_t
shm_rss_toeplitz(const uint8_t *key, const uint8_t *in, uint32_t len)
{
	uint32_t h = 0, v, i, b;

	/* v: the key's 32 bits at the input bit being looked at */
	v = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 |
	    (uint32_t)key[2] << 8 | key[3];
	for (i = 0; i < len && i + 4 < IPOIB_RSS_KEY_LEN; i++) {
		for (b = 0; b < 8; b++) {
			if (in[i] & (0x80u >> b))
				h ^= v;
			v = v << 1 | ((key[i + 4] >> (7 - b)) & 1u);
		}
	}
	return h;
}

/* The first bytes of the message, gathered: how many there were. */
static uint32_t
shm_rss_peek(const struct shm_send *wr, uint8_t *b)
{
	uint32_t got = 0;
	uint16_t i;

	for (i = 0; i < wr->iovcnt && got < SHM_RSS_PEEK; i++) {
		uint32_t k = wr->iov[i].iov_len;

		if (k > SHM_RSS_PEEK - got)
			k = SHM_RSS_PEEK - got;
		memcpy(b + got, wr->iov[i].iov_base, k);
		got += k;
	}
	return got;
}

/*
 * The flow's hash into *hash, by the receiver q's key and types; false:
 * no type covers it (the QP's own queue).
 */
static bool
shm_rss_hash(const struct shm_qp_ent *q, const struct shm_send *wr,
	     uint32_t *hash)
{
	uint32_t types = shm_load_relaxed(&q->rss_types), w, i;
	uint8_t b[SHM_RSS_PEEK], in[36], key[IPOIB_RSS_KEY_LEN];
	uint32_t len = shm_rss_peek(wr, b), ports = 0, n;
	const uint8_t *ip = b + IPOIB_HDR_LEN;
	uint32_t l3, l4_tcp, l4_udp;
	uint16_t type;
	uint8_t proto;
	bool frag;

	if (len < IPOIB_HDR_LEN + 20)
		return false;
	type = (uint16_t)(b[0] << 8 | b[1]);
	if (type == 0x0800 && (ip[0] >> 4) == 4) {
		proto = ip[9];
		frag = ((ip[6] << 8 | ip[7]) & 0x3fff) != 0;
		memcpy(in, ip + 12, 8);
		n = 8;
		ports = IPOIB_HDR_LEN + (ip[0] & 0xfu) * 4u;
		l3 = IPOIB_RSS_IPV4;
		l4_tcp = IPOIB_RSS_IPV4_TCP;
		l4_udp = IPOIB_RSS_IPV4_UDP;
	} else if (type == 0x86dd && (ip[0] >> 4) == 6 &&
		   len >= IPOIB_HDR_LEN + 40) {
		proto = ip[6];
		frag = false;	/* a fragment header is proto 44 */
		memcpy(in, ip + 8, 32);
		n = 32;
		ports = IPOIB_HDR_LEN + 40;
		l3 = IPOIB_RSS_IPV6;
		l4_tcp = IPOIB_RSS_IPV6_TCP;
		l4_udp = IPOIB_RSS_IPV6_UDP;
	} else {
		return false;
	}
	if (!frag && ports + 4 <= len &&
	    ((proto == 6 && (types & l4_tcp)) ||
	     (proto == 17 && (types & l4_udp)))) {
		memcpy(in + n, b + ports, 4);
		n += 4;
	} else if (!(types & l3)) {
		return false;
	}
	for (i = 0; i < IPOIB_RSS_KEY_LEN / 4; i++) {
		w = shm_load_relaxed(&q->rss_key[i]);
		memcpy(key + 4 * i, &w, 4);
	}
	*hash = shm_rss_toeplitz(key, in, n);
	return true;
}

const struct shm_qp_ent *
shm_rss_pick(struct shm_fabric *f, const struct shm_qp_ent *q,
	     const struct shm_qp_ent *d, uint32_t *dqpn,
	     const struct shm_send *wr, struct shm_qp_ent *v)
{
	uint32_t n = shm_load(&q->nr_rss), h, qpn;
	struct shm_qp_ent *c;

	if (n < 2 || n > SHM_RSS_MAX)
		return d;
	if (!shm_rss_hash(q, wr, &h))
		return d;
	qpn = shm_load_relaxed(&q->rss[h % n]);
	if (qpn == *dqpn)
		return d;
	/* a queue gone meanwhile (the table changes as ports stop) */
	c = shm_qp_lookup(f, qpn);
	if (c == NULL || !shm_qp_ent_read_ud(c, qpn, v) ||
	    v->proc != d->proc)
		return d;
	*dqpn = qpn;
	return v;
}
