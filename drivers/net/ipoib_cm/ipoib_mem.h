/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_MEM_H
#define IPOIB_MEM_H

/*
 * What a port allocates, by category (ipoib_mem.c). EAL heap categories
 * are measured: EAL's allocated-bytes figure read before and after each
 * allocation and free of the driver, the driver's allocations one at a
 * time. What the transport allocates for receive buffers (the shm fabric's
 * arena, or mapped and registered memory on verbs) is counted as the
 * transport reports it.
 */

#include <stddef.h>
#include <stdint.h>

#include <rte_ring.h>

enum ipoib_mem_cat {
	IPOIB_MEM_PORT,		/* dev_private, ethdev's queue arrays */
	IPOIB_MEM_PEERS,	/* peer table, its grace list and RCU */
	IPOIB_MEM_HASH,		/* the MAC and hardware address hashes */
	IPOIB_MEM_RINGS,	/* free peers, connect requests, loopback */
	IPOIB_MEM_CONNS,	/* connection slots and their pool handles */
	IPOIB_MEM_QUEUES,	/* rx/tx queues, posted-buffer arrays */
	IPOIB_MEM_MEMPOOLS,	/* mempools: headers, caches, rings */
	IPOIB_MEM_MCAST,	/* multicast state and its request ring */
	IPOIB_MEM_HEAP_NB,	/* above: EAL's heap; below: the transport */
	IPOIB_MEM_RX_BUFFERS = IPOIB_MEM_HEAP_NB,
	IPOIB_MEM_NB,
};

/* Per port; any thread charges (relaxed atomics), anyone reads. */
struct ipoib_mem {
	uint64_t bytes[IPOIB_MEM_NB];
};

/* xstat names of the categories, in order */
extern const char *const ipoib_mem_names[IPOIB_MEM_NB];

/*
 * A measured region: begin, allocate or free with EAL, end. Regions
 * of all ports are serialised; the difference is what EAL's heap
 * changed by. An allocation another thread of the process makes with
 * EAL in the same window (not the driver's) would be counted too.
 */
struct ipoib_mem_mark {
	uint64_t heap;
};

void ipoib_mem_begin(struct ipoib_mem_mark *m);
/* End the region: charge its difference to cat, and return it. */
int64_t ipoib_mem_end(struct ipoib_mem_mark *m, struct ipoib_mem *mem,
		      enum ipoib_mem_cat cat);
/*
 * Changes across every measured region, odd inside one (a seqcount): a
 * reader that sees the same even value before and after it read EAL's
 * heap and the categories read them at one moment, as long as nothing
 * but the driver allocated meanwhile.
 */
uint32_t ipoib_mem_generation(void);
/* Add bytes (negative: remove) to a category. */
void ipoib_mem_charge(struct ipoib_mem *mem, enum ipoib_mem_cat cat,
		      int64_t bytes);
/* What EAL's heaps hold allocated, all sockets. */
uint64_t ipoib_mem_heap_allocated(void);

/* rte_zmalloc_socket() and rte_free(), measured into cat. */
void *ipoib_mem_zmalloc(struct ipoib_mem *mem, enum ipoib_mem_cat cat,
			const char *type, size_t size, unsigned int align,
			int socket);
void ipoib_mem_free(struct ipoib_mem *mem, enum ipoib_mem_cat cat, void *p);

/* rte_ring_create_elem() and rte_ring_free(), measured into cat. */
struct rte_ring *ipoib_ring_create(struct ipoib_mem *mem,
				   enum ipoib_mem_cat cat, const char *name,
				   unsigned int esize, unsigned int count,
				   unsigned int flags);
void ipoib_ring_free(struct ipoib_mem *mem, enum ipoib_mem_cat cat,
		     struct rte_ring *r);

/* The sum of the EAL heap categories. */
uint64_t ipoib_mem_heap_total(const struct ipoib_mem *mem);
uint64_t ipoib_mem_get(const struct ipoib_mem *mem, enum ipoib_mem_cat cat);

#endif /* IPOIB_MEM_H */
