/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Receive-pool memory made known to EAL, so that a received mbuf can be
 * sent on any port of the process, a NIC that DMAs included. The pools
 * live in memory the transport allocated (shm fabric memory, or on verbs
 * an mmap registered as an MR), which EAL does not know. Each pool's
 * page-aligned region is registered as external memory
 * (rte_extmem_register(), with the IOVA of every page) and mapped for DMA
 * with rte_dev_dma_map() on the device of every ethdev port of the
 * process, and of every port probed later (RTE_ETH_EVENT_NEW): DPDK maps
 * none of it itself (VFIO's own mapping skips external memory). Freeing
 * the pool's memory unmaps and unregisters it first.
 *
 * IOVA: in IOVA-as-VA mode an mbuf's IOVA is its address. In PA mode it
 * is the physical address of its page (rte_mem_virt2phy()), pages are
 * populated one chunk of physically contiguous pages at a time, and
 * ipoib_extmem_span() sizes the region so that n objects fit even when no
 * two pages are contiguous. Where a physical address cannot be known (an
 * object larger than a page, no pagemap), IOVA = VA is kept and said once.
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include <ethdev_driver.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_memory.h>

#include "ipoib_extmem.h"
#include "ipoib_log.h"

/* A registered region and the devices it is mapped for. */
struct ipoib_extmem_region {
	TAILQ_ENTRY(ipoib_extmem_region) next;
	void *addr;
	size_t len;
	rte_iova_t *iova;		/* per page; NULL: IOVA = VA */
	unsigned int nr_devs;
	struct rte_device *devs[RTE_MAX_ETHPORTS];
};

static TAILQ_HEAD(, ipoib_extmem_region) ipoib_extmem_regions =
	TAILQ_HEAD_INITIALIZER(ipoib_extmem_regions);
static pthread_mutex_t ipoib_extmem_lock = PTHREAD_MUTEX_INITIALIZER;
static bool ipoib_extmem_cb_set;	/* under the lock */

size_t
ipoib_extmem_page_size(void)
{
	/* asked once: a REQ sizes a non-SRQ connection's pool with it */
	static size_t pg;
	size_t v = __atomic_load_n(&pg, __ATOMIC_RELAXED);

	if (unlikely(v == 0)) {
		v = (size_t)sysconf(_SC_PAGESIZE);
		__atomic_store_n(&pg, v, __ATOMIC_RELAXED);
	}
	return v;
}

/* Whether objects of obj_sz bytes get the physical address of a page. */
static bool
ipoib_extmem_pa(size_t obj_sz)
{
	return rte_eal_iova_mode() == RTE_IOVA_PA &&
		obj_sz <= ipoib_extmem_page_size();
}

size_t
ipoib_extmem_span(uint32_t n, size_t obj_sz)
{
	size_t pg = ipoib_extmem_page_size();
	size_t per;

	if (!ipoib_extmem_pa(obj_sz))
		return RTE_ALIGN_CEIL((size_t)n * obj_sz, pg);
	per = pg / obj_sz;
	return (n + per - 1) / per * pg;
}

/* The physical address of every page, faulted in; NULL if one is unknown. */
static rte_iova_t *
ipoib_extmem_phys(void *addr, size_t len)
{
	size_t pg = ipoib_extmem_page_size(), i, n = len / pg;
	rte_iova_t *iova = malloc(n * sizeof(*iova));

	if (iova == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		volatile uint8_t *p = RTE_PTR_ADD(addr, i * pg);

		*p = *p;	/* unused yet: a page of its own, present */
		iova[i] = rte_mem_virt2phy(RTE_PTR_ADD(addr, i * pg));
		if (iova[i] == RTE_BAD_IOVA) {
			free(iova);
			return NULL;
		}
	}
	return iova;
}

/* rte_dev_dma_map() of r on dev, by runs of contiguous IOVAs. */
static int
ipoib_extmem_map(const struct ipoib_extmem_region *r, struct rte_device *dev,
		 bool map)
{
	size_t pg = ipoib_extmem_page_size(), n = r->len / pg, i, j;
	int ret;

	for (i = 0; i < n; i = j) {
		rte_iova_t iova;

		if (r->iova == NULL) {	/* IOVA = VA: one run */
			iova = (rte_iova_t)(uintptr_t)r->addr + i * pg;
			j = n;
		} else {
			iova = r->iova[i];
			for (j = i + 1; j < n && r->iova[j] == iova +
			     (j - i) * pg; j++)
				;
		}
		ret = map ? rte_dev_dma_map(dev, RTE_PTR_ADD(r->addr, i * pg),
					    iova, (j - i) * pg) :
			rte_dev_dma_unmap(dev, RTE_PTR_ADD(r->addr, i * pg),
					  iova, (j - i) * pg);
		if (ret < 0)
			return -rte_errno;
	}
	return 0;
}

/* Under the lock: map r for DMA of dev, once. */
static void
ipoib_extmem_map_dev(struct ipoib_extmem_region *r, struct rte_device *dev)
{
	unsigned int i;
	int ret;

	for (i = 0; i < r->nr_devs; i++)
		if (r->devs[i] == dev)
			return;
	ret = ipoib_extmem_map(r, dev, true);
	if (ret == -ENOTSUP)	/* its bus maps nothing: nothing to do */
		return;
	if (ret < 0) {
		IPOIB_LOG(WARNING, "%s: receive memory at %p (%zu bytes) not "
			  "mapped for its DMA: %s", rte_dev_name(dev), r->addr,
			  r->len, strerror(-ret));
		return;
	}
	if (r->nr_devs < RTE_DIM(r->devs))
		r->devs[r->nr_devs++] = dev;
}

/* The device behind a port, NULL for a free slot. */
static struct rte_device *
ipoib_extmem_port_dev(uint16_t port)
{
	const struct rte_eth_dev *dev = &rte_eth_devices[port];

	return dev->state == RTE_ETH_DEV_UNUSED ? NULL : dev->device;
}

/* A port was probed: the regions mapped for its device too. */
static int
ipoib_extmem_new_port(uint16_t port, enum rte_eth_event_type event,
		      void *arg, void *ret_param)
{
	struct ipoib_extmem_region *r;
	struct rte_device *dev = ipoib_extmem_port_dev(port);

	RTE_SET_USED(event);
	RTE_SET_USED(arg);
	RTE_SET_USED(ret_param);
	if (dev == NULL)
		return 0;
	pthread_mutex_lock(&ipoib_extmem_lock);
	TAILQ_FOREACH(r, &ipoib_extmem_regions, next)
		ipoib_extmem_map_dev(r, dev);
	pthread_mutex_unlock(&ipoib_extmem_lock);
	return 0;
}

int
ipoib_extmem_register(void *addr, size_t len, size_t obj_sz, bool *per_page)
{
	static bool said;
	size_t pg = ipoib_extmem_page_size();
	struct ipoib_extmem_region *r;
	rte_iova_t *va;
	unsigned int i;
	uint16_t port;
	int ret;

	*per_page = false;
	r = calloc(1, sizeof(*r));
	va = malloc(len / pg * sizeof(*va));
	if (r == NULL || va == NULL) {
		free(r);
		free(va);
		return -ENOMEM;
	}
	r->addr = addr;
	r->len = len;
	if (rte_eal_iova_mode() == RTE_IOVA_PA) {
		r->iova = ipoib_extmem_pa(obj_sz) ?
			ipoib_extmem_phys(addr, len) : NULL;
		if (r->iova == NULL && !__atomic_exchange_n(&said, true,
							    __ATOMIC_RELAXED))
			IPOIB_LOG(WARNING, "IOVA as PA, and the physical "
				  "address of receive buffers of %zu bytes "
				  "unknown: their IOVA is their virtual "
				  "address (use --iova-mode=va)", obj_sz);
	}
	for (i = 0; i < len / pg; i++)
		va[i] = r->iova != NULL ? r->iova[i] :
			(rte_iova_t)(uintptr_t)addr + (rte_iova_t)i * pg;
	ret = rte_extmem_register(addr, len, va, len / pg, pg);
	free(va);
	if (ret < 0) {
		ret = -rte_errno;
		free(r->iova);
		free(r);
		return ret;
	}
	*per_page = r->iova != NULL;
	pthread_mutex_lock(&ipoib_extmem_lock);
	for (port = 0; port < RTE_MAX_ETHPORTS; port++) {
		struct rte_device *dev = ipoib_extmem_port_dev(port);

		if (dev != NULL)
			ipoib_extmem_map_dev(r, dev);
	}
	TAILQ_INSERT_TAIL(&ipoib_extmem_regions, r, next);
	if (!ipoib_extmem_cb_set &&
	    rte_eth_dev_callback_register(RTE_ETH_ALL, RTE_ETH_EVENT_NEW,
					  ipoib_extmem_new_port, NULL) == 0)
		ipoib_extmem_cb_set = true;
	pthread_mutex_unlock(&ipoib_extmem_lock);
	return 0;
}

/* Whether a device still backs a port (a removed one has gone). */
static bool
ipoib_extmem_dev_present(const struct rte_device *dev)
{
	uint16_t port;

	for (port = 0; port < RTE_MAX_ETHPORTS; port++)
		if (ipoib_extmem_port_dev(port) == dev)
			return true;
	return false;
}

void
ipoib_extmem_unregister(void *addr, size_t len)
{
	struct ipoib_extmem_region *r;
	unsigned int i;

	pthread_mutex_lock(&ipoib_extmem_lock);
	TAILQ_FOREACH(r, &ipoib_extmem_regions, next)
		if (r->addr == addr && r->len == len)
			break;
	if (r != NULL)
		TAILQ_REMOVE(&ipoib_extmem_regions, r, next);
	pthread_mutex_unlock(&ipoib_extmem_lock);
	if (r == NULL) {
		IPOIB_LOG(ERR, "%p (%zu bytes) was not registered", addr, len);
		return;
	}
	for (i = 0; i < r->nr_devs; i++)
		if (ipoib_extmem_dev_present(r->devs[i]) &&
		    ipoib_extmem_map(r, r->devs[i], false) < 0)
			IPOIB_LOG(WARNING, "%s: receive memory at %p not "
				  "unmapped", rte_dev_name(r->devs[i]), addr);
	if (rte_extmem_unregister(addr, len) < 0)
		IPOIB_LOG(ERR, "EAL kept %p (%zu bytes): %s", addr, len,
			  rte_strerror(rte_errno));
	free(r->iova);
	free(r);
}
