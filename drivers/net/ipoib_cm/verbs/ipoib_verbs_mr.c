/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Memory registration of the verbs transport.
 *
 * Memory. Receive buffers live in memory mem_alloc() maps and registers.
 * Send buffers are the application's mbufs: the mempool an mbuf comes from
 * is registered the first time one of its mbufs is sent (every memory
 * chunk of the pool, rte_mempool_mem_iter()), and deregistered when the
 * pool is freed (mempool event callback). Frames up to IPOIB_VERBS_INLINE
 * bytes go inline: copied at post time and freed at once, no lookup.
 * Registered ranges are found lock-free (a seqcount per entry) with a
 * per-QP hint, so a send costs one range check per segment.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "ipoib_hca.h"
#include "ipoib_log.h"
#include "ipoib_verbs.h"

/* ---- registered memory --------------------------------------------------- */

/* Writers hold mr_lock. */
static void
ipoib_verbs_mr_write(struct ipoib_verbs_mr *e, uintptr_t start, uintptr_t end,
		     uint32_t lkey)
{
	uint32_t s = e->seq;

	__atomic_store_n(&e->seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->start, start, __ATOMIC_RELAXED);
	__atomic_store_n(&e->end, end, __ATOMIC_RELAXED);
	__atomic_store_n(&e->lkey, lkey, __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

/* Register [addr, addr + len) and list it; mr_lock held. */
static struct ibv_mr *
ipoib_verbs_mr_add(struct ipoib_hca *hca, void *addr, size_t len,
		   const void *owner)
{
	struct ipoib_verbs_mr *e = NULL;
	struct ibv_mr *mr;
	uint32_t i;

	for (i = 0; i < hca->nr_mrs; i++) {
		if (hca->mrs[i].mr == NULL) {
			e = &hca->mrs[i];
			break;
		}
	}
	if (e == NULL) {
		if (hca->nr_mrs == IPOIB_VERBS_MR_MAX) {
			errno = ENOSPC;
			return NULL;
		}
		e = &hca->mrs[hca->nr_mrs];
	}
	mr = ibv_reg_mr(hca->pd, addr, len, IBV_ACCESS_LOCAL_WRITE);
	if (mr == NULL)
		return NULL;
	e->mr = mr;
	e->owner = owner;
	ipoib_verbs_mr_write(e, (uintptr_t)addr, (uintptr_t)addr + len,
			     mr->lkey);
	if (e == &hca->mrs[hca->nr_mrs])
		__atomic_store_n(&hca->nr_mrs, hca->nr_mrs + 1,
				 __ATOMIC_RELEASE);
	return mr;
}

/* Unlist and deregister entry e; mr_lock held. */
void
ipoib_verbs_mr_del(struct ipoib_verbs_mr *e)
{
	int ret;

	ipoib_verbs_mr_write(e, 0, 0, 0);
	ret = ibv_dereg_mr(e->mr);
	if (ret != 0)
		IPOIB_LOG(ERR, "ibv_dereg_mr: %s", strerror(ret));
	e->mr = NULL;
	e->owner = NULL;
}

struct ipoib_verbs_reg_ctx {
	struct ipoib_hca *hca;
	int err;
};

static void
ipoib_verbs_reg_chunk(struct rte_mempool *mp, void *opaque,
		      struct rte_mempool_memhdr *memhdr, unsigned int idx)
{
	struct ipoib_verbs_reg_ctx *c = opaque;
	uint32_t i;

	RTE_SET_USED(idx);
	if (c->err != 0)
		return;
	for (i = 0; i < c->hca->nr_mrs; i++)
		if (c->hca->mrs[i].mr != NULL &&
		    c->hca->mrs[i].start == (uintptr_t)memhdr->addr)
			return;		/* registered already */
	if (ipoib_verbs_mr_add(c->hca, memhdr->addr, memhdr->len, mp) == NULL)
		c->err = errno ? errno : ENOMEM;
}

/*
 * First sight of an mbuf's memory: register the mempool its data lives
 * in. Once per pool; it makes a system call, on the datapath, once.
 */
int
ipoib_verbs_mr_register_mbuf(struct ipoib_hca *hca, struct rte_mbuf *m)
{
	struct ipoib_verbs_reg_ctx c = { .hca = hca, .err = 0 };
	struct rte_mbuf *direct = m;
	struct rte_mempool *mp;

	if (RTE_MBUF_HAS_EXTBUF(m))
		return -ENOENT;	/* not in a mempool: cannot be found */
	if (RTE_MBUF_CLONED(m))
		direct = rte_mbuf_from_indirect(m);
	mp = direct->pool;
	if (mp == NULL)
		return -ENOENT;
	rte_spinlock_lock(&hca->mr_lock);
	rte_mempool_mem_iter(mp, ipoib_verbs_reg_chunk, &c);
	rte_spinlock_unlock(&hca->mr_lock);
	if (c.err != 0) {
		IPOIB_LOG_RATELIMIT(ERR, "%s: cannot register mempool %s: %s",
				    hca->name, mp->name, strerror(c.err));
		return -c.err;
	}
	IPOIB_LOG(DEBUG, "%s: mempool %s registered for sending", hca->name,
		  mp->name);
	return 0;
}

/* A mempool is freed: its memory may go; so must its registrations. */
void
ipoib_verbs_mempool_event(enum rte_mempool_event event,
			  struct rte_mempool *mp, void *arg)
{
	struct ipoib_hca *hca = arg;
	uint32_t i;

	if (event != RTE_MEMPOOL_EVENT_DESTROY)
		return;
	rte_spinlock_lock(&hca->mr_lock);
	for (i = 0; i < hca->nr_mrs; i++)
		if (hca->mrs[i].mr != NULL && hca->mrs[i].owner == mp)
			ipoib_verbs_mr_del(&hca->mrs[i]);
	rte_spinlock_unlock(&hca->mr_lock);
}

/* struct ipoib_sge is struct ibv_sge: scatter lists go as they are. */
void
ipoib_verbs_sge_layout(void)
{
	RTE_BUILD_BUG_ON(sizeof(struct ipoib_sge) != sizeof(struct ibv_sge));
	RTE_BUILD_BUG_ON(offsetof(struct ipoib_sge, addr) !=
			 offsetof(struct ibv_sge, addr));
	RTE_BUILD_BUG_ON(offsetof(struct ipoib_sge, length) !=
			 offsetof(struct ibv_sge, length));
	RTE_BUILD_BUG_ON(offsetof(struct ipoib_sge, lkey) !=
			 offsetof(struct ibv_sge, lkey));
}

/* ---- memory the HCA receives into ---------------------------------------- */

int
ipoib_verbs_mem_alloc(struct ipoib_hca *hca, size_t len,
		      struct ipoib_hca_mem *mem)
{
	size_t sz = RTE_ALIGN_CEIL(len, (size_t)sysconf(_SC_PAGESIZE));
	struct ibv_mr *mr;
	void *addr;

	addr = mmap(NULL, sz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (addr == MAP_FAILED)
		return -errno;
	rte_spinlock_lock(&hca->mr_lock);
	mr = ipoib_verbs_mr_add(hca, addr, sz, NULL);
	rte_spinlock_unlock(&hca->mr_lock);
	if (mr == NULL) {
		int ret = -(errno ? errno : ENOMEM);

		IPOIB_LOG(ERR, "%s: cannot register %zu bytes: %s", hca->name,
			  sz, strerror(-ret));
		munmap(addr, sz);
		return ret;
	}
	mem->addr = addr;
	mem->len = sz;
	mem->size = sz;
	mem->lkey = mr->lkey;
	mem->priv = mr;
	return 0;
}

void
ipoib_verbs_mem_free(struct ipoib_hca *hca, struct ipoib_hca_mem *mem)
{
	uint32_t i;

	if (mem->addr == NULL)
		return;
	rte_spinlock_lock(&hca->mr_lock);
	for (i = 0; i < hca->nr_mrs; i++)
		if (hca->mrs[i].mr == mem->priv)
			ipoib_verbs_mr_del(&hca->mrs[i]);
	rte_spinlock_unlock(&hca->mr_lock);
	munmap(mem->addr, mem->len);
	mem->addr = NULL;
}
