/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Receive-buffer pools: mempools built on memory the transport allocated
 * (the HCA writes there), registered with EAL so that their mbufs can be
 * sent on any port (ipoib_extmem.c). Created for the UD QP, an SRQ or a
 * non-SRQ connection; kept idle for the next connection; reused. A pool is never
 * freed while the application holds some of its mbufs: it goes to the
 * reaper (ipoib_reaper.c), which frees it when they have come back.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf_pool_ops.h>

#include "ipoib_cm.h"
#include "ipoib_conn.h"
#include "ipoib_extmem.h"
#include "ipoib_log.h"
#include "ipoib_pool.h"
#include "ipoib_reaper.h"

/* ---- pools --------------------------------------------------------------- */

/* The bytes of one object of a pool of data_room-byte mbufs. */
static size_t
ipoib_pool_obj_size(uint32_t data_room)
{
	struct rte_mempool_objsz osz;

	return rte_mempool_calc_obj_size(sizeof(struct rte_mbuf) + data_room,
					 RTE_MEMPOOL_F_NO_IOVA_CONTIG, &osz);
}

/*
 * Known to EAL (ipoib_extmem.h): the pages from addr that hold the
 * objects, with their IOVAs; the mempool populated to match. A pool
 * EAL refuses (it has no memseg list left) still receives, with
 * IOVA = VA, and is counted.
 */
static int
ipoib_pool_populate(struct ipoib_priv *priv, struct ipoib_pool *pool,
		    void *addr, uint32_t n)
{
	size_t obj_sz = ipoib_pool_obj_size(
		rte_pktmbuf_data_room_size(pool->mp));
	size_t span = ipoib_extmem_span(n, obj_sz);
	bool per_page = false;
	int ret;

	ret = ipoib_extmem_register(addr, span, obj_sz, &per_page);
	if (ret == 0) {
		pool->eal_addr = addr;
		pool->eal_len = span;
	} else {
		priv->cstats.pools_unknown_to_eal++;
		IPOIB_LOG_RATELIMIT(WARNING, "pool %s: EAL refused its memory "
				    "(%s): its mbufs cannot be sent on a port "
				    "that DMAs", pool->mp->name,
				    strerror(-ret));
	}
	if (per_page)	/* IOVA as PA: per run of contiguous pages */
		return rte_mempool_populate_virt(pool->mp, addr, span,
						 ipoib_extmem_page_size(),
						 NULL, NULL);
	return rte_mempool_populate_iova(pool->mp, addr,
					 (rte_iova_t)(uintptr_t)addr,
					 (size_t)n * obj_sz, NULL, NULL);
}

static int
ipoib_pool_make(struct ipoib_priv *priv, struct ipoib_pool *pool,
		const char *port, const char *what, uint32_t n,
		uint32_t data_room)
{
	static uint32_t seq;
	struct rte_pktmbuf_pool_private pp = {
		.mbuf_data_room_size = (uint16_t)data_room,
	};
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *mp;
	int ret;

	if (data_room > UINT16_MAX || data_room <= RTE_PKTMBUF_HEADROOM)
		return -EINVAL;
	snprintf(name, sizeof(name), "ipb_%s_%u", what,
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	/*
	 * The HCA reads virtual addresses: objects may cross pages. An
	 * lcore's cache holds up to 1.5 times its size, out of reach of the
	 * others: at n / 32, the three lcores that may touch a pool (the one
	 * polling the queue, the application's main lcore flushing the queue
	 * at start as testpmd does, one freeing what the application
	 * forwards) hold at most 14 % of it, less than the fifth of a
	 * connection's pool its ring leaves free (ipoib_conn_pool_size()).
	 * At n / 8 one testpmd's two lcores could strand all of it, and the
	 * ring went without replacements (rx_nombuf, test_secondary.py).
	 */
	mp = rte_mempool_create_empty(name, n, sizeof(struct rte_mbuf) +
				      data_room, IPOIB_POOL_CACHE(n),
				      sizeof(pp), (int)rte_socket_id(),
				      RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (mp == NULL)
		return -rte_errno;
	ret = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(),
					 NULL);
	if (ret < 0)
		goto fail_mp;
	rte_pktmbuf_pool_init(mp, &pp);
	ret = priv->ops->mem_alloc(priv->hca, ipoib_pool_bytes(n, data_room),
				   &pool->mem);
	if (ret < 0)
		goto fail_mp;
	pool->mp = mp;
	pool->eal_len = 0;
	ret = ipoib_pool_populate(priv, pool,
				  RTE_PTR_ALIGN_CEIL(pool->mem.addr,
						     ipoib_extmem_page_size()),
				  n);
	if (ret < (int)n) {
		ret = ret < 0 ? ret : -ENOMEM;
		ipoib_reaper_release(priv->ops, priv->hca, pool);
		return ret;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	/* IPOIB_POOL_DATA_OFS: the buffer right after the mbuf */
	RTE_VERIFY(rte_pktmbuf_priv_size(mp) == 0);
	pool->seg_len = (uint16_t)(data_room - RTE_PKTMBUF_HEADROOM);
	pool->rearm = ipoib_pool_rearm_word(priv->eth_dev->data->port_id);
	IPOIB_LOG(DEBUG, "%s: pool %s: %u mbufs of %u bytes, %zu bytes", port,
		  name, n, data_room, pool->mem.len);
	return 0;
fail_mp:
	rte_mempool_free(mp);
	return ret;
}

/*
 * A pool, counted: the EAL heap its mempool takes (header, caches, ring,
 * memory chunk headers) measured, and the transport's memory for the
 * buffers, both the port's until the pool is freed or handed to the
 * reaper (ipoib_pool_free()).
 */
int
ipoib_pool_create(struct ipoib_priv *priv, struct ipoib_pool *pool,
		  const char *port, const char *what, uint32_t n,
		  uint32_t data_room)
{
	struct ipoib_mem_mark m;
	int64_t heap;
	int ret;

	ipoib_mem_begin(&m);
	ret = ipoib_pool_make(priv, pool, port, what, n, data_room);
	if (ret == 0)
		ipoib_mem_charge(&priv->acct, IPOIB_MEM_RX_BUFFERS,
				 (int64_t)pool->mem.size);
	/* what a failed attempt left on the heap is the port's too */
	heap = ipoib_mem_end(&m, &priv->acct, IPOIB_MEM_MEMPOOLS);
	if (ret < 0)
		return ret;
	pool->heap = heap;
	return 0;
}

bool
ipoib_pool_idle(const struct ipoib_pool *pool)
{
	return pool->mp == NULL || rte_mempool_full(pool->mp);
}

void
ipoib_pool_free(struct ipoib_priv *priv, struct ipoib_pool *pool)
{
	int64_t size = (int64_t)pool->mem.size;
	struct ipoib_mem_mark m;

	if (pool->mp == NULL)
		return;
	/* the port's no more, whether freed now or waiting in the reaper */
	if (!rte_mempool_full(pool->mp)) {
		/* counted in mem_app_held_bytes while it waits */
		ipoib_mem_charge(&priv->acct, IPOIB_MEM_RX_BUFFERS, -size);
		ipoib_mem_charge(&priv->acct, IPOIB_MEM_MEMPOOLS, -pool->heap);
		pool->heap = 0;
		ipoib_reaper_adopt(priv->ops, priv->hca, pool);
		return;
	}
	ipoib_mem_begin(&m);
	ipoib_reaper_release(priv->ops, priv->hca, pool);
	ipoib_mem_charge(&priv->acct, IPOIB_MEM_RX_BUFFERS, -size);
	ipoib_mem_end(&m, &priv->acct, IPOIB_MEM_MEMPOOLS);
	pool->heap = 0;
}

/*
 * The HCA memory a pool of n mbufs of data_room bytes takes: the pages
 * that hold them (ipoib_extmem_span()) and one more, as the transport's
 * memory need not start on a page.
 */
uint64_t
ipoib_pool_bytes(uint32_t n, uint32_t data_room)
{
	return ipoib_extmem_span(n, ipoib_pool_obj_size(data_room)) +
		ipoib_extmem_page_size();
}

/* ---- spare pools -------------------------------------------------------- */

/*
 * Spare pools. Creating a non-SRQ connection's pool (a mempool, fabric
 * memory faulted in, every mbuf initialised) is most of what a non-SRQ
 * setup costs, so an idle one is kept for the next connection: up to
 * IPOIB_SPARE_POOLS, while what connections hold plus the spares fits
 * mem_budget, and for IPOIB_SPARE_NS after last use.
 */
bool
ipoib_pools_keep(struct ipoib_priv *priv, struct ipoib_pool *pool)
{
	if (priv->nr_spare_pools == IPOIB_SPARE_POOLS || priv->stopping ||
	    !ipoib_pools_fit(priv, priv->spare_bytes + pool->mem.len))
		return false;
	priv->spare_pools[priv->nr_spare_pools++] = *pool;
	priv->spare_bytes += pool->mem.len;
	priv->spare_used_ns = ipoib_now_ns();
	pool->mp = NULL;
	return true;
}

/*
 * Whether bytes more of connection buffers fit mem_budget, beside what
 * connections hold and what the application still holds of pools gone
 * (ipoib_reaper.h): an application that never gives mbufs back does not
 * make the port allocate past its budget.
 */
bool
ipoib_pools_fit(struct ipoib_priv *priv, uint64_t bytes)
{
	uint64_t held = 0;

	ipoib_reaper_waiting(priv->hca, &held);
	return priv->mem_used + held + bytes <= priv->cfg.mem_budget;
}

/* A spare of n mbufs of data_room bytes, into pool. */
bool
ipoib_pools_take(struct ipoib_priv *priv, struct ipoib_pool *pool,
		 uint32_t n, uint32_t data_room)
{
	uint32_t i;

	for (i = 0; i < priv->nr_spare_pools; i++) {
		struct ipoib_pool *sp = &priv->spare_pools[i];

		if (sp->mp->size != n || rte_pktmbuf_data_room_size(sp->mp) !=
		    data_room)
			continue;
		*pool = *sp;
		priv->spare_bytes -= sp->mem.len;
		*sp = priv->spare_pools[--priv->nr_spare_pools];
		priv->spare_used_ns = ipoib_now_ns();
		priv->cstats.pool_reuses++;
		return true;
	}
	return false;
}

void
ipoib_pools_spare_free(struct ipoib_priv *priv)
{
	while (priv->nr_spare_pools > 0) {
		struct ipoib_pool *sp =
			&priv->spare_pools[--priv->nr_spare_pools];

		priv->spare_bytes -= sp->mem.len;
		ipoib_pool_free(priv, sp);
	}
}

/* Close: the spare pools go; those the application holds wait. */
void
ipoib_pools_reap_all(struct ipoib_priv *priv)
{
	ipoib_pools_spare_free(priv);
	ipoib_reaper_reap();
}
