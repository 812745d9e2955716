/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_RCU_H
#define IPOIB_RCU_H

/*
 * The bursts read peers and connections that the control thread frees
 * (or reuses) after a grace period of the port's QSBR (rte_rcu_qsbr).
 * Each rx and tx queue is a reader.
 *
 * A queue goes online at its first burst after the port starts and
 * stays online: a burst costs a store as it enters and a quiescent state
 * as it leaves (rte_rcu_qsbr_quiescent(): a load, and a store only when
 * the token moved), no fence. Online and offline around every burst cost
 * rte_rcu_qsbr_thread_online()'s full fence (a locked instruction) per
 * burst and queue.
 *
 * Idle detection makes that safe when the application stops polling a
 * queue (testpmd's "stop", an lcore that left, a queue nobody polls any
 * more): such a queue never reports again, and its grace periods would
 * never end. The writer, once a grace period has waited
 * IPOIB_RCU_IDLE_NS, makes membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED):
 * every thread of the process passes a full fence. After it, a queue
 * whose busy flag reads 0 is between bursts: its last burst released the
 * flag after its reads, and any burst it starts later set the flag after
 * that fence, so it reads what the writer removed before as removed
 * (the store-buffering pattern with a fence on both sides, the reader's
 * fence made by the kernel). Such a queue holds no grace period older
 * than the token read before the membarrier.
 *
 * Where membarrier() is not there (a seccomp filter, an old kernel),
 * the queues go offline after every burst, as before.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_rcu_qsbr.h>

#define IPOIB_RCU_IDLE_NS	50000ULL	/* 50 us: then look for idle */

struct ipoib_priv;
struct rte_eth_dev_data;

/*
 * A queue's reader state. busy doubles as the queue's handoff: an
 * acquire when a use starts and a release when it ends, which orders the
 * uses of a queue by different threads (an lcore's bursts, then the main
 * lcore's flush or stop) where ThreadSanitizer looks.
 */
struct ipoib_rcu_reader {
	uint8_t id;		/* thread id in the port's QSBR */
	uint8_t online;		/* since its first burst after start */
	uint8_t sticky;		/* stays online between bursts */
	uint8_t pad;
	uint32_t busy;		/* 1 inside a burst */
};

/* The writer's state (control thread). */
struct ipoib_rcu {
	uint64_t idle_passed;	/* tokens up to this one have passed */
	uint64_t lag_since_ns;	/* the oldest check that failed, or 0 */
	uint64_t scans;		/* membarrier() scans: xstat rcu_idle_scans */
	bool membarrier;	/* registered for this process */
};

/* A burst starts: nothing it reads is freed until it leaves. */
static __rte_always_inline void
ipoib_rcu_enter(struct rte_rcu_qsbr *v, struct ipoib_rcu_reader *r)
{
	(void)__atomic_load_n(&r->busy, __ATOMIC_ACQUIRE);
	__atomic_store_n(&r->busy, 1, __ATOMIC_RELAXED);
	/* the compiler keeps it before the burst's reads; the CPU: above */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (unlikely(!r->online)) {
		rte_rcu_qsbr_thread_online(v, r->id);
		r->online = 1;
	}
}

/* A burst ends: a quiescent state; offline if it cannot stay online. */
static __rte_always_inline void
ipoib_rcu_leave(struct rte_rcu_qsbr *v, struct ipoib_rcu_reader *r)
{
	if (likely(r->sticky)) {
		rte_rcu_qsbr_quiescent(v, r->id);
	} else {
		rte_rcu_qsbr_thread_offline(v, r->id);
		r->online = 0;
	}
	__atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
}

/* A use of the queue by a thread that is not a burst (dev_stop). */
static __rte_always_inline void
ipoib_rcu_handoff(const struct ipoib_rcu_reader *r)
{
	(void)__atomic_load_n(&r->busy, __ATOMIC_ACQUIRE);
}

/* Once per port: membarrier() registration for the idle detection. */
void ipoib_rcu_init(struct ipoib_rcu *rcu);
/* dev_start: the queues of d become readers of v. */
void ipoib_rcu_readers_start(struct ipoib_priv *priv,
			     struct rte_eth_dev_data *d);
/*
 * dev_stop, no burst running, the queues taken over
 * (ipoib_queues_enter()): every queue of d offline, unregistered.
 */
void ipoib_rcu_readers_stop(struct ipoib_priv *priv,
			    struct rte_eth_dev_data *d);
/*
 * Control thread: every burst that was running when token was taken has
 * left, so what it could see may be freed: each queue has reported a
 * quiescent state since (rte_rcu_qsbr_check()), is offline, or (after
 * IPOIB_RCU_IDLE_NS of waiting) was found between bursts.
 */
bool ipoib_grace_passed(struct ipoib_priv *priv, uint64_t token);

#endif /* IPOIB_RCU_H */
