/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_FUZZ_MBUF_H
#define IPOIB_FUZZ_MBUF_H

/*
 * What the mbuf harnesses share: EAL brought up once (no hugepages, no
 * shared config, a file prefix of this process), pools, mbuf chains built
 * from fuzzer input, and the checks every harness makes on what the code
 * under test gives back. A violated property calls FUZZ_CHECK's
 * __builtin_trap(): libFuzzer reports it as a crash with the input.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#define FUZZ_CHECK(cond) do {			\
	if (!(cond))				\
		__builtin_trap();		\
} while (0)

/* Data room of the fuzzing pools: one IB MTU frame per segment. */
#define FUZZ_DATA_ROOM		(2048 + RTE_PKTMBUF_HEADROOM)
#define FUZZ_MAX_SEGS		64
#define FUZZ_MAX_FRAME		(16 * 1024)

/* How a frame is laid out in mbufs: 3 bytes of the input say it. */
struct fuzz_layout {
	uint8_t headroom;	/* first segment: headroom, 255: at the end */
	uint8_t seg0;		/* first segment: length / 8 (0: all it holds) */
	uint8_t segn;		/* others: length / 8 (0: all they hold) */
};
#define FUZZ_LAYOUT_LEN		3

/* A copy of a chain: lengths, offsets, bytes, segment pointers. */
struct fuzz_snap {
	unsigned int nb_segs;
	uint32_t pkt_len;
	struct rte_mbuf *seg[FUZZ_MAX_SEGS];
	uint16_t data_off[FUZZ_MAX_SEGS];
	uint16_t data_len[FUZZ_MAX_SEGS];
	uint16_t refcnt[FUZZ_MAX_SEGS];
	uint8_t bytes[FUZZ_MAX_FRAME];
};

/*
 * rte_eal_init with --no-huge -m 256 --no-pci --no-shconf, EAL logs
 * silenced, --file-prefix=<name>_<pid>. Exits the process on failure.
 */
void fuzz_eal_init(const char *name);
/* A pool of n mbufs of FUZZ_DATA_ROOM; exits on failure. */
struct rte_mempool *fuzz_pool(const char *name, unsigned int n);

void fuzz_layout_get(struct fuzz_layout *lo, const uint8_t *in);
/*
 * The chain holding frame[0..len) laid out as lo says, from mp; NULL when
 * the pool is empty or the frame does not fit FUZZ_MAX_SEGS segments.
 */
struct rte_mbuf *fuzz_chain(struct rte_mempool *mp,
			    const struct fuzz_layout *lo,
			    const uint8_t *frame, size_t len);

/* A well-formed chain: segment count, lengths, bounds. */
void fuzz_check_chain(const struct rte_mbuf *m);
void fuzz_snap_take(struct fuzz_snap *s, const struct rte_mbuf *m);
/* m is exactly as when s was taken (the API's "m is unchanged"). */
bool fuzz_snap_same(const struct fuzz_snap *s, const struct rte_mbuf *m);
/* Bytes [0, len) of the chain into buf; false if the chain is shorter. */
bool fuzz_chain_bytes(const struct rte_mbuf *m, uint8_t *buf, uint32_t len);
/* Every mbuf of mp is back (the pool leaks nothing). */
void fuzz_check_pool_full(const struct rte_mempool *mp);

#endif /* IPOIB_FUZZ_MBUF_H */
