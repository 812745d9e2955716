/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef SHM_COPY_H
#define SHM_COPY_H

/*
 * The copies a send makes: a message from the sender's memory into the
 * receive buffers a receiver posted, the "DMA" of the fabric. Inline what
 * the common message (one piece, into one buffer) needs; shm_copy.c the
 * rest. Used by shm_send.c and by the RC send template (shm_rc_send.h),
 * which the driver compiles too.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "shm_internal.h"

static inline uint32_t
shm_msg_len(const struct shm_send *wr)
{
	uint32_t len = 0;
	uint16_t i;

	/* the common message: one piece */
	if (likely(wr->iovcnt == 1))
		return (uint32_t)wr->iov[0].iov_len;
	for (i = 0; i < wr->iovcnt; i++)
		len += wr->iov[i].iov_len;
	return len;
}

/*
 * A message of SHM_STREAM_MIN bytes or more, sent with at least
 * SHM_STREAM_BATCH - 1 others (the receive WRs one round of
 * shm_rc_send() claimed), is written with non-temporal stores:
 * without them each destination line is first read (a read for
 * ownership) from a receive buffer no core has touched for a ring's lap.
 * A message sent alone is not: its receiver is likely waiting for it and
 * would read its first line from memory, after a fence per message.
 * Streamed stores are weakly ordered: the caller of shm_copy() makes
 * shm_copy_fence() before a streamed message's completion is published.
 */
#define SHM_STREAM_MIN		4096
#define SHM_STREAM_BATCH	4

/* Non-temporal stores of n bytes at dst (SSE2; a memcpy() without). */
void shm_copy_stream(uint8_t *dst, const uint8_t *src, size_t n);

/*
 * A message of 16 to 64 bytes (a small frame, a TCP ACK): two or four
 * 16-byte moves, the last ones overlapping. The call to memcpy() they
 * replace cost 6 instructions more per 64-byte frame (callgrind).
 */
static inline bool
shm_copy_small(uint8_t *dst, const uint8_t *src, size_t n)
{
#ifdef __SSE2__
	__m128i a, b, c, e;

	if (n < 16 || n > 64)
		return false;
	a = _mm_loadu_si128((const __m128i *)(const void *)src);
	b = _mm_loadu_si128((const __m128i *)(const void *)(src + n - 16));
	if (n > 32) {
		c = _mm_loadu_si128((const __m128i *)(const void *)(src + 16));
		e = _mm_loadu_si128((const __m128i *)(const void *)
				    (src + n - 32));
		_mm_storeu_si128((__m128i *)(void *)(dst + 16), c);
		_mm_storeu_si128((__m128i *)(void *)(dst + n - 32), e);
	}
	_mm_storeu_si128((__m128i *)(void *)dst, a);
	_mm_storeu_si128((__m128i *)(void *)(dst + n - 16), b);
	return true;
#else
	(void)dst;
	(void)src;
	(void)n;
	return false;
#endif
}

/* One piece of a message, streamed or not as shm_copy() was told. */
static inline void
shm_copy_piece(uint8_t *dst, const void *src, size_t n, bool stream)
{
	if (unlikely(stream))
		shm_copy_stream(dst, src, n);
	else if (!shm_copy_small(dst, src, n))
		memcpy(dst, src, n);
}

static inline void
shm_copy_fence(void)
{
#ifdef __SSE2__
	_mm_sfence();
#endif
}

/*
 * Where a claimed WR's message goes, as the copy reads it: the entry's
 * one SGE (in one), or the slot's descriptor's (shm_rq_target()).
 */
struct shm_target {
	const struct shm_rdesc_sge *sge;
	uint32_t num_sge;
	uint32_t total_len;
	struct shm_rdesc_sge one;
};

static inline void
shm_rq_target(struct shm_rq_ring *r, const struct shm_rq_ent *e,
	      struct shm_target *t)
{
	const struct shm_rdesc *d;

	if (likely(e->off != SHM_RQ_ENT_DESC)) {
		t->one.off = e->off;
		t->one.len = SHM_RQ_ENT_LEN(e);
		t->sge = &t->one;
		t->num_sge = 1;
		t->total_len = t->one.len;
		return;
	}
	d = shm_rdesc(r, SHM_RQ_ENT_SLOT(e));
	t->sge = d->sge;
	t->num_sge = d->num_sge;
	t->total_len = d->total_len;
}

/* shm_copy() of a message in pieces, or past a first segment. */
void shm_copy_sg(struct shm_fabric *f, uint32_t proc,
		 const struct shm_target *d, uint32_t skip,
		 const struct shm_send *wr, bool stream);

/*
 * The segment of process proc a sender last wrote into, for the next
 * message of the same call (mostly the same segment): no lookup of the
 * process's map per message.
 */
struct shm_dst_seg {
	uint64_t seg;		/* UINT64_MAX: none yet */
	uint8_t *base;
};

/* Another segment than the last: looked up, and kept in c. */
static inline uint8_t *
shm_dst_map(struct shm_fabric *f, uint32_t proc, uint64_t off,
	    struct shm_dst_seg *c)
{
	uint8_t *p = shm_arena_ptr(f, proc, off);

	if (p != NULL) {
		c->seg = off >> SHM_SEG_SHIFT;
		c->base = p - (off & SHM_SEG_OFF_MASK);
	}
	return p;
}

/*
 * Where off lies in process proc's memory: in c's segment, the last one
 * looked up (its base known not NULL: no test then), else looked up.
 */
static inline uint8_t *
shm_dst_at(struct shm_fabric *f, uint32_t proc, uint64_t off,
	   struct shm_dst_seg *c)
{
	if (likely(off >> SHM_SEG_SHIFT == c->seg))
		return c->base + (off & SHM_SEG_OFF_MASK);
	return shm_dst_map(f, proc, off, c);
}

/*
 * Scatter the message of len bytes (after skip bytes of the buffer) into
 * a WR posted by process proc: the copy the "DMA" makes. The common
 * message, one piece (one: wr->iovcnt == 1, its data at src) within the
 * buffer's first segment, is one memcpy here; any other goes through
 * shm_copy_sg(). stream: with non-temporal stores (shm_copy_fence()
 * before the completion). The caller reads wr's fields before it writes
 * the completion, which could alias them.
 */
static inline void
shm_copy_one(struct shm_fabric *f, uint32_t proc, uint64_t off, uint32_t skip,
	     const void *src, uint32_t len, bool stream, struct shm_dst_seg *c)
{
	uint8_t *dst = shm_dst_at(f, proc, off, c);

	if (dst == NULL)
		return;
	shm_tsan_buf_take(dst);
	shm_copy_piece(dst + skip, src, len, stream);
	shm_tsan_buf_give(dst);
}

static inline void
shm_copy_msg(struct shm_fabric *f, uint32_t proc, const struct shm_target *d,
	     uint32_t skip, const struct shm_send *wr, const void *src,
	     bool one, uint32_t len, bool stream, struct shm_dst_seg *c)
{
	if (likely(one && d->num_sge > 0 && skip + len <= d->sge[0].len))
		shm_copy_one(f, proc, d->sge[0].off, skip, src, len, stream, c);
	else
		shm_copy_sg(f, proc, d, skip, wr, stream);
}

/* The same, of a message whose fields no store has been made over. */
static inline void
shm_copy(struct shm_fabric *f, uint32_t proc, const struct shm_target *d,
	 uint32_t skip, const struct shm_send *wr, uint32_t len, bool stream,
	 struct shm_dst_seg *c)
{
	shm_copy_msg(f, proc, d, skip, wr, wr->iov[0].iov_base,
		     wr->iovcnt == 1, len, stream, c);
}

#endif /* SHM_COPY_H */
