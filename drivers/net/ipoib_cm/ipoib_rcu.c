/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The writer's side of the queues' RCU (ipoib_rcu.h): grace periods,
 * and the idle detection that lets the queues stay online between
 * bursts.
 */

#include <errno.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipoib_cm.h"
#include "ipoib_log.h"
#include "ipoib_rcu.h"

static long
ipoib_membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

void
ipoib_rcu_init(struct ipoib_rcu *rcu)
{
	/* per process, and harmless to repeat */
	rcu->membarrier =
		ipoib_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
	if (!rcu->membarrier)
		IPOIB_LOG(NOTICE, "membarrier(PRIVATE_EXPEDITED): %s; rx and tx "
			  "queues go offline after every burst (a fence each)",
			  strerror(errno));
}

void
ipoib_rcu_readers_start(struct ipoib_priv *priv, struct rte_eth_dev_data *d)
{
	struct ipoib_rcu_reader *r;
	uint32_t i;

	for (i = 0; i < ipoib_nb_readers(d); i++) {
		r = ipoib_reader_nth(d, i);
		if (r == NULL)
			continue;
		r->online = 0;
		r->sticky = priv->pt.rcu.membarrier;
		rte_rcu_qsbr_thread_register(priv->pt.qsbr, r->id);
		/* to the queue's first burst, on whichever lcore */
		__atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
	}
}

void
ipoib_rcu_readers_stop(struct ipoib_priv *priv, struct rte_eth_dev_data *d)
{
	struct ipoib_rcu_reader *r;
	uint32_t i;

	/* the caller took the queues over (ipoib_queues_enter()) */
	for (i = 0; i < ipoib_nb_readers(d); i++) {
		r = ipoib_reader_nth(d, i);
		if (r == NULL)
			continue;
		if (r->online)
			rte_rcu_qsbr_thread_offline(priv->pt.qsbr, r->id);
		r->online = 0;
		rte_rcu_qsbr_thread_unregister(priv->pt.qsbr, r->id);
	}
}

/* Reader r holds nothing removed before token t (after the membarrier). */
static bool
ipoib_rcu_reader_quiet(struct rte_rcu_qsbr *v,
		       const struct ipoib_rcu_reader *r, uint64_t t)
{
	uint64_t c = __atomic_load_n(&v->qsbr_cnt[r->id].cnt,
				     __ATOMIC_ACQUIRE);

	return c == __RTE_QSBR_CNT_THR_OFFLINE || c >= t ||
	       __atomic_load_n(&r->busy, __ATOMIC_ACQUIRE) == 0;
}

/*
 * Every queue either reported since the current token, is offline, or
 * is between bursts: then every token up to the current one has passed.
 */
static bool
ipoib_rcu_idle_scan(struct ipoib_priv *priv)
{
	const struct rte_eth_dev_data *d = priv->eth_dev->data;
	struct ipoib_rcu *rcu = &priv->pt.rcu;
	struct rte_rcu_qsbr *v = priv->pt.qsbr;
	uint64_t t = __atomic_load_n(&v->token, __ATOMIC_ACQUIRE);
	const struct ipoib_rcu_reader *r;
	uint32_t i;

	IPOIB_STAT_INC(rcu->scans);
	if (ipoib_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0)
		return false;
	for (i = 0; i < ipoib_nb_readers(d); i++) {
		r = ipoib_reader_nth(d, i);
		if (r != NULL && !ipoib_rcu_reader_quiet(v, r, t))
			return false;
	}
	rcu->idle_passed = t;
	return true;
}

bool
ipoib_grace_passed(struct ipoib_priv *priv, uint64_t token)
{
	struct ipoib_rcu *rcu = &priv->pt.rcu;
	uint64_t now;

	if (rte_rcu_qsbr_check(priv->pt.qsbr, token, false) == 1) {
		rcu->lag_since_ns = 0;
		goto passed;
	}
	if (token <= rcu->idle_passed)
		goto passed;
	/*
	 * A busy queue reports within a burst: look for idle ones (a
	 * membarrier(), a fence on every core running the process) only
	 * when a grace period has waited long, and then once per period.
	 */
	now = ipoib_now_ns();
	if (rcu->lag_since_ns == 0) {
		rcu->lag_since_ns = now;
		return false;
	}
	if (!rcu->membarrier || now - rcu->lag_since_ns < IPOIB_RCU_IDLE_NS)
		return false;
	rcu->lag_since_ns = now;
	if (!ipoib_rcu_idle_scan(priv) || token > rcu->idle_passed)
		return false;
passed:
	/*
	 * The RCU orders the bursts' reads before this with fences, which
	 * ThreadSanitizer does not model: acquire what each queue released
	 * when its last burst left, which says the same where it looks.
	 */
	ipoib_queues_enter(priv->eth_dev->data);
	return true;
}
