/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_EXTMEM_H
#define IPOIB_EXTMEM_H

/*
 * The receive pools' memory made known to EAL (ipoib_extmem.c): registered
 * as external memory, with the IOVA of each page, and mapped for DMA of
 * the process's devices, so that a received mbuf can be sent on any port.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The page size the transports allocate with (the system's). */
size_t ipoib_extmem_page_size(void);
/*
 * Bytes of whole pages that hold n objects of obj_sz bytes with a known
 * IOVA each: back to back when IOVA = VA, or when objects do not fit in
 * a page; else so many to a page, as physical pages need not be
 * contiguous.
 */
size_t ipoib_extmem_span(uint32_t n, size_t obj_sz);
/*
 * Register [addr, addr + len) (page aligned, from ipoib_extmem_span())
 * with EAL and map it for DMA of every device of the process's ports, now
 * and probed later. *per_page: true when the IOVAs are per-page physical
 * addresses (populate the mempool with rte_mempool_populate_virt()),
 * false when IOVA = VA. Negative errno: EAL did not take it.
 */
int ipoib_extmem_register(void *addr, size_t len, size_t obj_sz,
			  bool *per_page);
/* Unmap it from the devices and unregister it from EAL. */
void ipoib_extmem_unregister(void *addr, size_t len);

#endif /* IPOIB_EXTMEM_H */
