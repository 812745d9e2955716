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
 * The hash covers what a NIC's RSS covers: IPv4 and IPv6 source and
 * destination addresses, and the TCP or UDP ports when the packet is not
 * a fragment (so that every fragment of a datagram lands where its first
 * does). Anything else (ARP, ICMP without an IP flow of its own...) goes
 * to the QP's own receive queue.
 */

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "shm_internal.h"

#define SHM_RSS_PEEK	(IPOIB_HDR_LEN + 40 + 4)	/* IPv6 header, ports */

int
shm_qp_rss_set(struct shm_qp *qp, struct shm_qp *const *rqs, uint32_t n)
{
	uint32_t i;

	if (qp->type != SHM_QPT_UD || n > SHM_RSS_MAX)
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
	shm_store(&qp->ent->nr_rss, n);
	return 0;
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

static inline uint32_t
shm_rss_mix(uint32_t h, const uint8_t *p, uint32_t len)
{
	uint32_t i, v;

	for (i = 0; i + 4 <= len; i += 4) {
		memcpy(&v, p + i, 4);
		h ^= v;
		h *= 0x9e3779b1u;
		h ^= h >> 15;
	}
	return h;
}

/* The flow's hash into *hash; false: not an IP flow (the QP's own). */
static bool
shm_rss_hash(const struct shm_send *wr, uint32_t *hash)
{
	uint8_t b[SHM_RSS_PEEK];
	uint32_t len = shm_rss_peek(wr, b), ports = 0, h;
	const uint8_t *ip = b + IPOIB_HDR_LEN;
	uint16_t type;
	uint8_t proto;

	if (len < IPOIB_HDR_LEN + 20)
		return false;
	type = (uint16_t)(b[0] << 8 | b[1]);
	if (type == 0x0800 && (ip[0] >> 4) == 4) {
		uint32_t ihl = (ip[0] & 0xfu) * 4u;
		bool frag = ((ip[6] << 8 | ip[7]) & 0x3fff) != 0;

		proto = ip[9];
		h = shm_rss_mix(0x811c9dc5u, ip + 12, 8);
		if (!frag && (proto == 6 || proto == 17))
			ports = IPOIB_HDR_LEN + ihl;
	} else if (type == 0x86dd && (ip[0] >> 4) == 6 &&
		   len >= IPOIB_HDR_LEN + 40) {
		proto = ip[6];
		h = shm_rss_mix(0x811c9dc5u, ip + 8, 32);
		if (proto == 6 || proto == 17)
			ports = IPOIB_HDR_LEN + 40;
	} else {
		return false;
	}
	if (ports != 0 && ports + 4 <= len)
		h = shm_rss_mix(h ^ proto, b + ports, 4);
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	*hash = h;
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
	if (!shm_rss_hash(wr, &h))
		return d;
	qpn = shm_load_relaxed(&q->rss[h % n]);
	if (qpn == *dqpn)
		return d;
	/* a queue gone meanwhile (the table changes as ports stop) */
	c = shm_qp_lookup(f, qpn);
	if (c == NULL || !shm_qp_ent_read(c, qpn, v) ||
	    v->type != SHM_QPT_UD || v->state != SHM_QPS_RTS ||
	    v->proc != d->proc)
		return d;
	*dqpn = qpn;
	return v;
}
