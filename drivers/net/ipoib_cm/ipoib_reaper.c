/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The reaper: receive pools whose mbufs the application still holds.
 * An application may keep a received mbuf as long as it likes, across
 * the teardown of the connection it came on, a queue reconfiguration or
 * the close of the port (rte_eth_dev_close() frees the port's resources;
 * memory the application still references is not the port's to free).
 * Such a pool is adopted here instead of being freed, and freed when its
 * last mbuf is back (rte_mempool_full(), seen twice, IPOIB_REAPER_GRACE_NS
 * apart; its memory is unregistered from EAL first: ipoib_extmem.c),
 * checked by the ports' control threads and, once no port is left to do
 * it, by an EAL alarm. Its
 * memory belongs to the transport: a port closed while pools of it wait
 * keeps its HCA open (its QPs are gone) until the last is freed. When the
 * last net_ipoibcm device of the process is removed (rte_eal_cleanup()),
 * whatever still waits is freed, logged with the mbufs still out.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/queue.h>

#include <rte_alarm.h>
#include <rte_mempool.h>
#include <rte_tailq.h>

#include "ipoib_cm.h"
#include "ipoib_extmem.h"
#include "ipoib_log.h"
#include "ipoib_reaper.h"

#define IPOIB_REAPER_US		(100 * 1000)	/* alarm period, no port */
/*
 * A pool is freed once seen full twice this far apart. rte_mempool_full()
 * counts the lcores' caches, whose lengths an lcore raises before it has
 * finished writing to them (rte_mempool_put()): the second look leaves an
 * application's last free all that time to return.
 */
#define IPOIB_REAPER_GRACE_NS	(100ULL * 1000 * 1000)

struct ipoib_orphan {
	TAILQ_ENTRY(ipoib_orphan) next;
	const struct ipoib_hca_ops *ops;
	struct ipoib_hca *hca;
	struct ipoib_pool pool;
	uint64_t full_ns;	/* first seen full, 0: not yet */
};

/* An HCA whose port is closed, open for the pools that still wait. */
struct ipoib_closing {
	TAILQ_ENTRY(ipoib_closing) next;
	const struct ipoib_hca_ops *ops;
	struct ipoib_hca *hca;
};

static TAILQ_HEAD(, ipoib_orphan) ipoib_orphans =
	TAILQ_HEAD_INITIALIZER(ipoib_orphans);
static TAILQ_HEAD(, ipoib_closing) ipoib_closing =
	TAILQ_HEAD_INITIALIZER(ipoib_closing);
static pthread_mutex_t ipoib_reaper_lock = PTHREAD_MUTEX_INITIALIZER;
static bool ipoib_alarm_armed;		/* under the lock */

void
ipoib_reaper_release(const struct ipoib_hca_ops *ops, struct ipoib_hca *hca,
		     struct ipoib_pool *pool)
{
	rte_mempool_free(pool->mp);
	pool->mp = NULL;
	if (pool->eal_len != 0)	/* EAL forgets it before it goes */
		ipoib_extmem_unregister(pool->eal_addr, pool->eal_len);
	pool->eal_len = 0;
	ops->mem_free(hca, &pool->mem);
}

static void
ipoib_orphan_free(struct ipoib_orphan *o)
{
	ipoib_reaper_release(o->ops, o->hca, &o->pool);
	free(o);
}

static bool
ipoib_hca_has_orphans(const struct ipoib_hca *hca)
{
	const struct ipoib_orphan *o;

	TAILQ_FOREACH(o, &ipoib_orphans, next)
		if (o->hca == hca)
			return true;
	return false;
}

/* Under the lock: close the HCAs no pool waits for any more. */
static void
ipoib_closing_reap(void)
{
	struct ipoib_closing *c, *tmp;

	RTE_TAILQ_FOREACH_SAFE(c, &ipoib_closing, next, tmp) {
		if (ipoib_hca_has_orphans(c->hca))
			continue;
		TAILQ_REMOVE(&ipoib_closing, c, next);
		c->ops->close(c->hca);
		free(c);
	}
}

static unsigned int
ipoib_reap_locked(void)
{
	struct ipoib_orphan *o, *tmp;
	unsigned int left = 0;

	RTE_TAILQ_FOREACH_SAFE(o, &ipoib_orphans, next, tmp) {
		if (!rte_mempool_full(o->pool.mp)) {
			o->full_ns = 0;
			left++;
			continue;
		}
		if (o->full_ns == 0)
			o->full_ns = ipoib_now_ns();
		if (ipoib_now_ns() - o->full_ns < IPOIB_REAPER_GRACE_NS) {
			left++;
			continue;
		}
		TAILQ_REMOVE(&ipoib_orphans, o, next);
		IPOIB_LOG(DEBUG, "pool %s: every mbuf back, freed",
			  o->pool.mp->name);
		ipoib_orphan_free(o);
	}
	ipoib_closing_reap();
	return left;
}

/* No port's control thread may be left to reap: the alarm does. */
static void
ipoib_reaper_alarm(void *arg)
{
	RTE_SET_USED(arg);
	pthread_mutex_lock(&ipoib_reaper_lock);
	ipoib_alarm_armed = false;
	if (ipoib_reap_locked() > 0 &&
	    rte_eal_alarm_set(IPOIB_REAPER_US, ipoib_reaper_alarm, NULL) == 0)
		ipoib_alarm_armed = true;
	pthread_mutex_unlock(&ipoib_reaper_lock);
}

/* Under the lock: pools wait for a closed port; check them on a timer. */
static void
ipoib_reaper_arm(void)
{
	if (ipoib_alarm_armed || TAILQ_EMPTY(&ipoib_closing))
		return;
	if (rte_eal_alarm_set(IPOIB_REAPER_US, ipoib_reaper_alarm, NULL) == 0)
		ipoib_alarm_armed = true;
	else
		IPOIB_LOG(ERR, "no alarm: waiting pools freed at cleanup");
}

void
ipoib_reaper_adopt(const struct ipoib_hca_ops *ops, struct ipoib_hca *hca,
		   struct ipoib_pool *pool)
{
	struct ipoib_orphan *o = malloc(sizeof(*o));

	if (o == NULL) {
		/* cannot track it: keep it for ever rather than free it */
		IPOIB_LOG(ERR, "pool %s: %u mbufs out and no memory to track "
			  "it: left allocated", pool->mp->name,
			  rte_mempool_in_use_count(pool->mp));
		pool->mp = NULL;
		return;
	}
	o->ops = ops;
	o->hca = hca;
	o->pool = *pool;
	o->full_ns = 0;
	pool->mp = NULL;
	IPOIB_LOG(DEBUG, "pool %s: %u mbufs still out: freed when back",
		  o->pool.mp->name, rte_mempool_in_use_count(o->pool.mp));
	pthread_mutex_lock(&ipoib_reaper_lock);
	TAILQ_INSERT_TAIL(&ipoib_orphans, o, next);
	pthread_mutex_unlock(&ipoib_reaper_lock);
}

void
ipoib_reaper_close_hca(const struct ipoib_hca_ops *ops, struct ipoib_hca *hca)
{
	struct ipoib_closing *c;

	pthread_mutex_lock(&ipoib_reaper_lock);
	ipoib_reap_locked();
	if (!ipoib_hca_has_orphans(hca)) {
		pthread_mutex_unlock(&ipoib_reaper_lock);
		ops->close(hca);
		return;
	}
	c = malloc(sizeof(*c));
	if (c == NULL) {
		/* the pools' memory must stay: the HCA is left open */
		IPOIB_LOG(ERR, "no memory: HCA left open for its pools");
		pthread_mutex_unlock(&ipoib_reaper_lock);
		return;
	}
	c->ops = ops;
	c->hca = hca;
	TAILQ_INSERT_TAIL(&ipoib_closing, c, next);
	IPOIB_LOG(INFO, "port closed with received mbufs still out: its "
		  "memory is freed when they are back");
	ipoib_reaper_arm();
	pthread_mutex_unlock(&ipoib_reaper_lock);
}

unsigned int
ipoib_reaper_reap(void)
{
	unsigned int left;

	pthread_mutex_lock(&ipoib_reaper_lock);
	left = ipoib_reap_locked();
	pthread_mutex_unlock(&ipoib_reaper_lock);
	return left;
}

unsigned int
ipoib_reaper_waiting(const struct ipoib_hca *hca, uint64_t *bytes)
{
	const struct ipoib_orphan *o;
	unsigned int n = 0;
	uint64_t b = 0;

	pthread_mutex_lock(&ipoib_reaper_lock);
	TAILQ_FOREACH(o, &ipoib_orphans, next) {
		if (hca != NULL && o->hca != hca)
			continue;
		n++;
		b += o->pool.mem.len;
	}
	pthread_mutex_unlock(&ipoib_reaper_lock);
	if (bytes != NULL)
		*bytes = b;
	return n;
}

void
ipoib_reaper_fini(void)
{
	struct ipoib_orphan *o;

	/* not under the lock: the alarm may be waiting for it */
	rte_eal_alarm_cancel(ipoib_reaper_alarm, NULL);
	pthread_mutex_lock(&ipoib_reaper_lock);
	ipoib_alarm_armed = false;
	while ((o = TAILQ_FIRST(&ipoib_orphans)) != NULL) {
		TAILQ_REMOVE(&ipoib_orphans, o, next);
		if (!rte_mempool_full(o->pool.mp))
			IPOIB_LOG(WARNING, "cleanup: pool %s freed with %u "
				  "mbufs never given back", o->pool.mp->name,
				  rte_mempool_in_use_count(o->pool.mp));
		ipoib_orphan_free(o);
	}
	ipoib_closing_reap();
	pthread_mutex_unlock(&ipoib_reaper_lock);
	rte_eal_alarm_cancel(ipoib_reaper_alarm, NULL);
}
