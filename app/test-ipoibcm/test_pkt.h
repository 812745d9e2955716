/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIBCM_TEST_PKT_H
#define IPOIBCM_TEST_PKT_H

/* Packet helpers for the framing tests: build mbuf chains, compare bytes. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#define TEST_POOL_SIZE	511

static inline struct rte_mempool *
test_pool(const char *name)
{
	return rte_pktmbuf_pool_create(name, TEST_POOL_SIZE, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
}

/* Every mbuf back in the pool (no leak), then free the pool. */
static inline int
test_pool_free(struct rte_mempool *mp)
{
	unsigned int avail;

	if (mp == NULL)
		return 0;
	avail = rte_mempool_avail_count(mp);
	rte_mempool_free(mp);
	if (avail != TEST_POOL_SIZE) {
		printf("    FAIL: %u mbufs leaked\n", TEST_POOL_SIZE - avail);
		return -1;
	}
	return 0;
}

/*
 * A frame of len bytes as a chain: segment i holds seg[i] bytes (the last
 * listed size repeats); nseg 0 means a single segment.
 */
static inline struct rte_mbuf *
test_mbuf_segs(struct rte_mempool *mp, const void *data, uint32_t len,
	       const uint16_t *seg, unsigned int nseg)
{
	struct rte_mbuf *head = NULL, *m;
	uint32_t off = 0;
	unsigned int i = 0;

	do {
		uint32_t n = len - off;
		char *p;

		if (nseg != 0 && seg[i < nseg ? i : nseg - 1] < n)
			n = seg[i < nseg ? i : nseg - 1];

		m = rte_pktmbuf_alloc(mp);
		if (m == NULL)
			goto fail;
		p = rte_pktmbuf_append(m, (uint16_t)n);
		if (p == NULL) {
			rte_pktmbuf_free(m);
			goto fail;
		}
		memcpy(p, (const uint8_t *)data + off, n);
		if (head == NULL)
			head = m;
		else if (rte_pktmbuf_chain(head, m) != 0) {
			rte_pktmbuf_free(m);
			goto fail;
		}
		off += n;
		i++;
	} while (off < len);
	return head;
fail:
	rte_pktmbuf_free(head);
	return NULL;
}

/* One segment, or as few as the pool's data room allows. */
static inline struct rte_mbuf *
test_mbuf(struct rte_mempool *mp, const void *data, uint32_t len)
{
	uint16_t room = rte_pktmbuf_data_room_size(mp) - RTE_PKTMBUF_HEADROOM;

	return test_mbuf_segs(mp, data, len, &room, len > room ? 1 : 0);
}

/* The chain is consistent: segment lengths add up, nb_segs counts them. */
static inline int
test_chain_ok(const struct rte_mbuf *m)
{
	const struct rte_mbuf *s;
	uint32_t len = 0;
	uint16_t n = 0;

	for (s = m; s != NULL; s = s->next) {
		len += s->data_len;
		n++;
		if (s->data_off + s->data_len > s->buf_len)
			return -1;
	}
	return len == m->pkt_len && n == m->nb_segs ? 0 : -1;
}

static inline void
test_hexdump(const char *what, const uint8_t *p, uint32_t len)
{
	uint32_t i;

	printf("    %s (%u bytes):", what, len);
	for (i = 0; i < len; i++)
		printf("%s%02x", i % 16 == 0 ? "\n      " : " ", p[i]);
	printf("\n");
}

/* The frame in m is exactly the len bytes of want. */
static inline int
test_frame_eq(const struct rte_mbuf *m, const void *want, uint32_t len)
{
	const uint8_t *p;
	uint8_t *buf;
	uint32_t i;
	int ret = 0;

	if (test_chain_ok(m) != 0) {
		printf("    FAIL: inconsistent mbuf chain\n");
		return -1;
	}
	if (m->pkt_len != len) {
		printf("    FAIL: frame is %u bytes, want %u\n", m->pkt_len, len);
		len = RTE_MIN(len, m->pkt_len);
		ret = -1;
	}
	buf = malloc(len + 1);
	if (buf == NULL)
		return -1;
	p = rte_pktmbuf_read(m, 0, len, buf);
	for (i = 0; p != NULL && i < len; i++)
		if (p[i] != ((const uint8_t *)want)[i])
			break;
	if (p == NULL || i < len) {
		printf("    FAIL: frames differ at byte %u\n", i);
		ret = -1;
	}
	if (ret != 0 && p != NULL) {
		test_hexdump("got", p, len);
		test_hexdump("want", want, len);
	}
	free(buf);
	return ret;
}

#endif /* IPOIBCM_TEST_PKT_H */
