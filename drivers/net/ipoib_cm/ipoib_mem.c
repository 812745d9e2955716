/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Memory accounting by category (ipoib_mem.h). A figure is what EAL's
 * heap changed by across the driver's call, not a size computed from a
 * structure: the heap's element headers, alignment and what a library
 * allocates inside (a mempool's header, caches and ring, a hash table's
 * buckets and key store) are in it.
 */

#include <pthread.h>

#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_ring_elem.h>

#include "ipoib_mem.h"

const char *const ipoib_mem_names[IPOIB_MEM_NB] = {
	[IPOIB_MEM_PORT] = "mem_port_bytes",
	[IPOIB_MEM_PEERS] = "mem_peer_table_bytes",
	[IPOIB_MEM_HASH] = "mem_hash_bytes",
	[IPOIB_MEM_RINGS] = "mem_ring_bytes",
	[IPOIB_MEM_CONNS] = "mem_conn_table_bytes",
	[IPOIB_MEM_QUEUES] = "mem_queue_bytes",
	[IPOIB_MEM_MEMPOOLS] = "mem_mempool_bytes",
	[IPOIB_MEM_MCAST] = "mem_mcast_bytes",
	[IPOIB_MEM_RX_BUFFERS] = "mem_rx_buffer_bytes",
};

/* one measured region at a time, all ports */
static pthread_mutex_t ipoib_mem_lock = PTHREAD_MUTEX_INITIALIZER;
/* odd inside a region: a seqcount for readers (ipoib_mem_generation()) */
static uint32_t ipoib_mem_gen;

uint64_t
ipoib_mem_heap_allocated(void)
{
	struct rte_malloc_socket_stats st;
	unsigned int i, n = rte_socket_count();
	uint64_t sum = 0;

	for (i = 0; i < n; i++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i),
						&st) == 0)
			sum += st.heap_allocsz_bytes;
	return sum;
}

void
ipoib_mem_begin(struct ipoib_mem_mark *m)
{
	pthread_mutex_lock(&ipoib_mem_lock);
	__atomic_fetch_add(&ipoib_mem_gen, 1, __ATOMIC_ACQ_REL);
	m->heap = ipoib_mem_heap_allocated();
}

int64_t
ipoib_mem_end(struct ipoib_mem_mark *m, struct ipoib_mem *mem,
	      enum ipoib_mem_cat cat)
{
	int64_t d = (int64_t)(ipoib_mem_heap_allocated() - m->heap);

	ipoib_mem_charge(mem, cat, d);
	/* release: the charge is seen by whoever sees the generation */
	__atomic_fetch_add(&ipoib_mem_gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ipoib_mem_lock);
	return d;
}

uint32_t
ipoib_mem_generation(void)
{
	return __atomic_load_n(&ipoib_mem_gen, __ATOMIC_ACQUIRE);
}

void
ipoib_mem_charge(struct ipoib_mem *mem, enum ipoib_mem_cat cat,
		 int64_t bytes)
{
	__atomic_fetch_add(&mem->bytes[cat], (uint64_t)bytes,
			   __ATOMIC_RELAXED);
}

void *
ipoib_mem_zmalloc(struct ipoib_mem *mem, enum ipoib_mem_cat cat,
		  const char *type, size_t size, unsigned int align, int socket)
{
	struct ipoib_mem_mark m;
	void *p;

	ipoib_mem_begin(&m);
	p = rte_zmalloc_socket(type, size, align, socket);
	ipoib_mem_end(&m, mem, cat);
	return p;
}

void
ipoib_mem_free(struct ipoib_mem *mem, enum ipoib_mem_cat cat, void *p)
{
	struct ipoib_mem_mark m;

	if (p == NULL)
		return;
	ipoib_mem_begin(&m);
	rte_free(p);
	ipoib_mem_end(&m, mem, cat);
}

struct rte_ring *
ipoib_ring_create(struct ipoib_mem *mem, enum ipoib_mem_cat cat,
		  const char *name, unsigned int esize, unsigned int count,
		  unsigned int flags)
{
	struct ipoib_mem_mark m;
	struct rte_ring *r;

	ipoib_mem_begin(&m);
	r = rte_ring_create_elem(name, esize, count, (int)rte_socket_id(),
				 flags);
	ipoib_mem_end(&m, mem, cat);
	return r;
}

void
ipoib_ring_free(struct ipoib_mem *mem, enum ipoib_mem_cat cat,
		struct rte_ring *r)
{
	struct ipoib_mem_mark m;

	if (r == NULL)
		return;
	ipoib_mem_begin(&m);
	rte_ring_free(r);
	ipoib_mem_end(&m, mem, cat);
}

uint64_t
ipoib_mem_get(const struct ipoib_mem *mem, enum ipoib_mem_cat cat)
{
	return __atomic_load_n(&mem->bytes[cat], __ATOMIC_RELAXED);
}

uint64_t
ipoib_mem_heap_total(const struct ipoib_mem *mem)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < IPOIB_MEM_HEAP_NB; i++)
		sum += ipoib_mem_get(mem, i);
	return sum;
}
