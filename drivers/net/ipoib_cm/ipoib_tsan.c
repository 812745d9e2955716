/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * ThreadSanitizer builds only (b_sanitize=thread; meson links the driver
 * with --wrap for each function here). DPDK's heap hands memory freed by
 * one thread to another under its own lock, in librte_eal, which is not
 * instrumented: without this, a port's control thread filling a structure
 * it just allocated looks like a race with another port's control thread
 * that wrote the same memory before freeing it (the heap's own memset()s
 * included). The driver's allocations and frees run under one mutex here:
 * the order the heap's lock makes, where TSan sees it.
 */

#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

static pthread_mutex_t ipoib_heap_lock = PTHREAD_MUTEX_INITIALIZER;

#define IPOIB_TSAN_ALLOC(type, fn, params, args) \
	type __real_##fn params; \
	type __wrap_##fn params; \
	type __wrap_##fn params \
	{ \
		type ret; \
		pthread_mutex_lock(&ipoib_heap_lock); \
		ret = __real_##fn args; \
		pthread_mutex_unlock(&ipoib_heap_lock); \
		return ret; \
	}

#define IPOIB_TSAN_FREE(fn, param, arg) \
	void __real_##fn(param); \
	void __wrap_##fn(param); \
	void __wrap_##fn(param) \
	{ \
		pthread_mutex_lock(&ipoib_heap_lock); \
		__real_##fn(arg); \
		pthread_mutex_unlock(&ipoib_heap_lock); \
	}

IPOIB_TSAN_ALLOC(void *, rte_malloc,
	(const char *type, size_t size, unsigned int align),
	(type, size, align))
IPOIB_TSAN_ALLOC(void *, rte_zmalloc,
	(const char *type, size_t size, unsigned int align),
	(type, size, align))
IPOIB_TSAN_ALLOC(void *, rte_zmalloc_socket,
	(const char *type, size_t size, unsigned int align, int socket),
	(type, size, align, socket))
IPOIB_TSAN_ALLOC(struct rte_mempool *, rte_mempool_create_empty,
	(const char *name, unsigned int n, unsigned int elt_size,
	 unsigned int cache_size, unsigned int private_data_size,
	 int socket_id, unsigned int flags),
	(name, n, elt_size, cache_size, private_data_size, socket_id, flags))
IPOIB_TSAN_ALLOC(struct rte_mempool *, rte_pktmbuf_pool_create,
	(const char *name, unsigned int n, unsigned int cache_size,
	 uint16_t priv_size, uint16_t data_room_size, int socket_id),
	(name, n, cache_size, priv_size, data_room_size, socket_id))
IPOIB_TSAN_ALLOC(struct rte_ring *, rte_ring_create,
	(const char *name, unsigned int count, int socket_id, unsigned int flags),
	(name, count, socket_id, flags))

/* a lookup reads the list of mempools, under EAL's lock too */
IPOIB_TSAN_ALLOC(struct rte_mempool *, rte_mempool_lookup,
	(const char *name), (name))

IPOIB_TSAN_FREE(rte_free, void *ptr, ptr)
IPOIB_TSAN_FREE(rte_mempool_free, struct rte_mempool *mp, mp)
IPOIB_TSAN_FREE(rte_ring_free, struct rte_ring *r, r)
