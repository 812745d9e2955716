/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "fuzz_mbuf.h"

void
fuzz_eal_init(const char *name)
{
	char prefix[64];
	char *argv[] = {
		(char *)"fuzz", (char *)"--no-huge", (char *)"-m",
		(char *)"256", (char *)"--no-pci", (char *)"--no-shconf",
		(char *)"--no-telemetry", (char *)"-l", (char *)"0",
		(char *)"--log-level=*:emerg", prefix,
	};
	cpu_set_t cpus;
	int ok;

	snprintf(prefix, sizeof(prefix), "--file-prefix=%s_%d", name,
		 (int)getpid());
	/* EAL pins the main lcore; two harnesses at once must not share it */
	ok = sched_getaffinity(0, sizeof(cpus), &cpus) == 0;
	rte_log_set_global_level(RTE_LOG_EMERG);
	if (rte_eal_init((int)RTE_DIM(argv), argv) < 0) {
		fprintf(stderr, "%s: rte_eal_init failed\n", name);
		exit(1);
	}
	if (ok)
		pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
}

struct rte_mempool *
fuzz_pool(const char *name, unsigned int n)
{
	struct rte_mempool *mp;

	mp = rte_pktmbuf_pool_create(name, n, 0, 0, FUZZ_DATA_ROOM,
				     SOCKET_ID_ANY);
	if (mp == NULL) {
		fprintf(stderr, "cannot create pool %s\n", name);
		exit(1);
	}
	return mp;
}

void
fuzz_layout_get(struct fuzz_layout *lo, const uint8_t *in)
{
	lo->headroom = in[0];
	lo->seg0 = in[1];
	lo->segn = in[2];
}

/* Put len bytes in segment m: the headroom the layout asks, if it fits. */
static void
seg_fill(struct rte_mbuf *m, unsigned int headroom, const uint8_t *p,
	 uint16_t len)
{
	unsigned int room = m->buf_len - len;

	m->data_off = (uint16_t)RTE_MIN(headroom, room);
	m->data_len = len;
	memcpy(rte_pktmbuf_mtod(m, uint8_t *), p, len);
}

struct rte_mbuf *
fuzz_chain(struct rte_mempool *mp, const struct fuzz_layout *lo,
	   const uint8_t *frame, size_t len)
{
	uint16_t max = FUZZ_DATA_ROOM, first, seg;
	struct rte_mbuf *head, *prev, *m;
	size_t off;

	if (len > FUZZ_MAX_FRAME)
		return NULL;
	first = lo->seg0 ? (uint16_t)RTE_MIN(lo->seg0 * 8u, max) : max;
	seg = lo->segn ? (uint16_t)RTE_MIN(lo->segn * 8u, max) : max;
	first = (uint16_t)RTE_MIN((size_t)first, len);
	if (len > first && (len - first + seg - 1) / seg + 1 > FUZZ_MAX_SEGS)
		return NULL;
	head = rte_pktmbuf_alloc(mp);
	if (head == NULL)
		return NULL;
	/* 255: the frame ends at the end of the buffer (no tailroom) */
	seg_fill(head, lo->headroom == 255 ? max : lo->headroom, frame,
		 first);
	head->pkt_len = (uint32_t)len;
	prev = head;
	for (off = first; off < len; off += m->data_len) {
		m = rte_pktmbuf_alloc(mp);
		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		seg_fill(m, RTE_PKTMBUF_HEADROOM, frame + off,
			 (uint16_t)RTE_MIN((size_t)seg, len - off));
		prev->next = m;
		prev = m;
		head->nb_segs++;
	}
	return head;
}

void
fuzz_check_chain(const struct rte_mbuf *m)
{
	const struct rte_mbuf *s;
	unsigned int n = 0;
	uint32_t len = 0;

	for (s = m; s != NULL; s = s->next) {
		FUZZ_CHECK(++n <= FUZZ_MAX_SEGS);
		FUZZ_CHECK((uint32_t)s->data_off + s->data_len <= s->buf_len);
		FUZZ_CHECK(rte_mbuf_refcnt_read(s) >= 1);
		len += s->data_len;
	}
	FUZZ_CHECK(n == m->nb_segs);
	FUZZ_CHECK(len == m->pkt_len);
}

void
fuzz_snap_take(struct fuzz_snap *s, const struct rte_mbuf *m)
{
	const struct rte_mbuf *g;
	uint32_t off = 0;
	unsigned int i = 0;

	s->pkt_len = m->pkt_len;
	for (g = m; g != NULL && i < FUZZ_MAX_SEGS; g = g->next, i++) {
		s->seg[i] = (struct rte_mbuf *)(uintptr_t)g;
		s->data_off[i] = g->data_off;
		s->data_len[i] = g->data_len;
		s->refcnt[i] = rte_mbuf_refcnt_read(g);
		if (off + g->data_len <= sizeof(s->bytes))
			memcpy(s->bytes + off, rte_pktmbuf_mtod(g, void *),
			       g->data_len);
		off += g->data_len;
	}
	s->nb_segs = i;
}

bool
fuzz_snap_same(const struct fuzz_snap *s, const struct rte_mbuf *m)
{
	const struct rte_mbuf *g = m;
	uint32_t off = 0;
	unsigned int i;

	if (m->pkt_len != s->pkt_len || m->nb_segs != s->nb_segs)
		return false;
	for (i = 0; i < s->nb_segs; i++, g = g->next) {
		if (g != s->seg[i] || g->data_off != s->data_off[i] ||
		    g->data_len != s->data_len[i] ||
		    rte_mbuf_refcnt_read(g) != s->refcnt[i])
			return false;
		if (off + g->data_len <= sizeof(s->bytes) &&
		    memcmp(s->bytes + off, rte_pktmbuf_mtod(g, void *),
			   g->data_len) != 0)
			return false;
		off += g->data_len;
	}
	return g == NULL;
}

bool
fuzz_chain_bytes(const struct rte_mbuf *m, uint8_t *buf, uint32_t len)
{
	const void *p;

	if (len > m->pkt_len)
		return false;
	p = rte_pktmbuf_read(m, 0, len, buf);
	if (p == NULL)
		return false;
	if (p != buf)
		memcpy(buf, p, len);
	return true;
}

void
fuzz_check_pool_full(const struct rte_mempool *mp)
{
	FUZZ_CHECK(rte_mempool_in_use_count(mp) == 0);
}
