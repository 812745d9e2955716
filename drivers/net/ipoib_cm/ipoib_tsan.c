/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * ThreadSanitizer builds only (b_sanitize=thread; meson links with
 * --wrap for these). DPDK's heap hands an element freed by one thread to
 * another under its own lock, in librte_eal, which is not instrumented:
 * without this, a port's control thread writing a structure it just
 * allocated looks like a race with another port's control thread that
 * wrote the same memory before freeing it. Every free releases, every
 * allocation acquires: the order the heap's lock makes, where TSan sees it.
 */

#include <stddef.h>

#include <sanitizer/tsan_interface.h>

#include <rte_malloc.h>

static char ipoib_heap_sync;

void *__real_rte_malloc(const char *type, size_t size, unsigned int align);
void *__real_rte_zmalloc(const char *type, size_t size, unsigned int align);
void *__real_rte_zmalloc_socket(const char *type, size_t size,
				unsigned int align, int socket);
void __real_rte_free(void *ptr);

void *__wrap_rte_malloc(const char *type, size_t size, unsigned int align);
void *__wrap_rte_zmalloc(const char *type, size_t size, unsigned int align);
void *__wrap_rte_zmalloc_socket(const char *type, size_t size,
				unsigned int align, int socket);
void __wrap_rte_free(void *ptr);

void *
__wrap_rte_malloc(const char *type, size_t size, unsigned int align)
{
	void *p = __real_rte_malloc(type, size, align);

	__tsan_acquire(&ipoib_heap_sync);
	return p;
}

void *
__wrap_rte_zmalloc(const char *type, size_t size, unsigned int align)
{
	void *p = __real_rte_zmalloc(type, size, align);

	__tsan_acquire(&ipoib_heap_sync);
	return p;
}

void *
__wrap_rte_zmalloc_socket(const char *type, size_t size, unsigned int align,
			  int socket)
{
	void *p = __real_rte_zmalloc_socket(type, size, align, socket);

	__tsan_acquire(&ipoib_heap_sync);
	return p;
}

void
__wrap_rte_free(void *ptr)
{
	__tsan_release(&ipoib_heap_sync);
	__real_rte_free(ptr);
}
