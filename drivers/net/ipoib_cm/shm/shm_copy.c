/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The copies of shm_copy.h not worth inlining: streamed (non-temporal)
 * stores, and a message in pieces or into several buffers.
 */

#include "shm_copy.h"

void
shm_copy_stream(uint8_t *dst, const uint8_t *src, size_t n)
{
#ifdef __SSE2__
	size_t head = (16 - ((uintptr_t)dst & 15)) & 15;

	if (head > n)
		head = n;
	memcpy(dst, src, head);
	dst += head;
	src += head;
	n -= head;
	for (; n >= 64; n -= 64, src += 64, dst += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)src);
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)
					    (src + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(const void *)
					    (src + 32));
		__m128i e = _mm_loadu_si128((const __m128i *)(const void *)
					    (src + 48));

		_mm_stream_si128((__m128i *)(void *)dst, a);
		_mm_stream_si128((__m128i *)(void *)(dst + 16), b);
		_mm_stream_si128((__m128i *)(void *)(dst + 32), c);
		_mm_stream_si128((__m128i *)(void *)(dst + 48), e);
	}
#endif
	memcpy(dst, src, n);
}

/* shm_copy() of a message in pieces, or past a first segment. */
void
shm_copy_sg(struct shm_fabric *f, uint32_t proc, const struct shm_target *d,
	    uint32_t skip, const struct shm_send *wr, bool stream)
{
	uint32_t s = 0, soff = skip;
	uint16_t i;

	while (s < d->num_sge && soff >= d->sge[s].len)
		soff -= d->sge[s++].len;
	for (i = 0; i < wr->iovcnt; i++) {
		const uint8_t *src = wr->iov[i].iov_base;
		size_t left = wr->iov[i].iov_len;

		while (left > 0 && s < d->num_sge) {
			size_t room = d->sge[s].len - soff;
			size_t n = left < room ? left : room;
			uint8_t *dst = shm_arena_ptr(f, proc, d->sge[s].off);

			if (dst == NULL)
				return;
			shm_tsan_buf_take(dst);
			shm_copy_piece(dst + soff, src, n, stream);
			shm_tsan_buf_give(dst);
			src += n;
			left -= n;
			soff += n;
			if (soff == d->sge[s].len) {
				s++;
				soff = 0;
			}
		}
	}
}
