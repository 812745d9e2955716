/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The spill policy, run by the control thread's timers: each peer's
 * activity sampled, spilled peers retried after their backoff or promoted
 * busiest first as slots free, idle connections reaped, an idle one
 * evicted for a busy spilled peer, and idle unconnected peers forgotten.
 * Spilling itself (ipoib_spill()) is where a connection attempt ends, in
 * ipoib_conn.c.
 */

#include <rte_ring.h>

#include "ipoib_cm.h"
#include "ipoib_conn.h"
#include "ipoib_log.h"
#include "ipoib_reaper.h"

/* ---- timers: activity, retries, promotion, reaping, eviction ------------- */

static uint64_t
ipoib_peer_pkts(const struct ipoib_peers *pt, const struct ipoib_peer *p)
{
	struct ipoib_peer_ctr c[IPOIB_PEER_CTR_KINDS];

	ipoib_peer_counts(pt, p, c);
	return c[IPOIB_PEER_CTR_RX].pkts + c[IPOIB_PEER_CTR_TX_RC].pkts +
	       c[IPOIB_PEER_CTR_TX_UD].pkts;
}

/* Once a second: each peer's packet rate and last activity. */
static void
ipoib_sample_activity(struct ipoib_priv *priv, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < ipoib_peers_nr(&priv->pt); i++) {
		struct ipoib_peer *p = ipoib_peer_at(&priv->pt, i);
		uint64_t pkts;

		if (!ipoib_peer_live(p))
			continue;
		pkts = ipoib_peer_pkts(&priv->pt, p);
		p->rate = (uint32_t)RTE_MIN(pkts - p->sample_pkts,
					    (uint64_t)UINT32_MAX);
		p->sample_pkts = pkts;
		if (p->rate > 0)
			p->last_active_ns = now;
	}
}

/*
 * Forget peers without a connection that nothing was sent to or received
 * from for a while, as neighbour entries expire: hosts that left, or came
 * back under a new QPN (a new address), do not fill the table. The idle
 * time is reap_idle (IPOIB_PEER_STALE_NS when connections are never
 * reaped), and IPOIB_EVICT_IDLE_NS when the table is 7/8 full.
 */
static void
ipoib_peers_gc(struct ipoib_priv *priv, uint64_t now)
{
	struct ipoib_peers *pt = &priv->pt;
	uint64_t stale = priv->cfg.reap_idle != 0 ?
			 (uint64_t)priv->cfg.reap_idle * IPOIB_NS_PER_S :
			 IPOIB_PEER_STALE_NS;
	uint32_t i;

	if (pt->nr_max - __atomic_load_n(&pt->nr_used, __ATOMIC_RELAXED) <
	    pt->nr_max / 8)
		stale = RTE_MIN(stale, IPOIB_EVICT_IDLE_NS);
	for (i = 0; i < ipoib_peers_nr(pt); i++) {
		struct ipoib_peer *p = ipoib_peer_at(pt, i);
		uint32_t st;

		/*
		 * A peer another thread learned after now was taken is newer
		 * than now: not idle (the difference would wrap).
		 */
		if (!ipoib_peer_live(p) || p->txc != NULL ||
		    p->rx != NULL || p->last_active_ns > now ||
		    now - p->last_active_ns < stale)
			continue;
		st = __atomic_load_n(&p->state, __ATOMIC_ACQUIRE);
		if (st == IPOIB_PEER_CONNECTING || st == IPOIB_PEER_CONNECTED)
			continue;	/* a request is queued, or in flight */
		if (st == IPOIB_PEER_SPILLED)
			priv->nr_spilled--;
		ipoib_peer_forget(priv, p);
		priv->cstats.peers_forgotten++;
	}
}

/* The busiest spilled peer that may be connected now, or NULL. */
static struct ipoib_peer *
ipoib_pick_spilled(struct ipoib_priv *priv, uint64_t now)
{
	struct ipoib_peer *best = NULL;
	uint32_t i;

	for (i = 0; i < ipoib_peers_nr(&priv->pt); i++) {
		struct ipoib_peer *p = ipoib_peer_at(&priv->pt, i);

		/* a peer nobody talks to any more is left on UD */
		if (!ipoib_peer_live(p) ||
		    __atomic_load_n(&p->state, __ATOMIC_RELAXED) !=
		    IPOIB_PEER_SPILLED ||
		    now < p->next_retry_ns || p->rate == 0)
			continue;
		if (best == NULL || p->rate > best->rate)
			best = p;
	}
	return best;
}

/* Spilled peers whose time has come, busiest first, while slots last. */
static void
ipoib_promote(struct ipoib_priv *priv, uint64_t now)
{
	while (priv->nr_active < priv->cfg.max_conns) {
		struct ipoib_peer *p = ipoib_pick_spilled(priv, now);

		if (p == NULL)
			return;
		if (p->refused)
			priv->cstats.retries++;
		else
			priv->cstats.promotions++;
		ipoib_conn_connect(priv, p);
		if (p->state == IPOIB_PEER_SPILLED)
			return;		/* refused at once: wait */
	}
}

/* Connections idle for reap_idle seconds are torn down (DREQ). */
static void
ipoib_reap(struct ipoib_priv *priv, uint64_t now)
{
	uint64_t idle = (uint64_t)priv->cfg.reap_idle * IPOIB_NS_PER_S;
	uint32_t i;

	if (idle == 0)
		return;
	for (i = 0; i < priv->nr_conns_max; i++) {
		struct ipoib_conn *c = priv->conns[i];

		if (c == NULL || c->state != IPOIB_CONN_CONNECTED ||
		    now - RTE_MAX(c->peer->last_active_ns, c->since_ns) < idle)
			continue;
		priv->cstats.reaped++;
		ipoib_conn_close(priv, c, true, false);
	}
}

/*
 * Table full and a spilled peer busy: evict the least recently used
 * connection that has been idle at least IPOIB_EVICT_IDLE_NS.
 */
static void
ipoib_evict(struct ipoib_priv *priv, uint64_t now)
{
	struct ipoib_peer *busy;
	struct ipoib_conn *lru = NULL;
	uint32_t i;

	if (priv->nr_active < priv->cfg.max_conns)
		return;
	busy = ipoib_pick_spilled(priv, now);
	if (busy == NULL || busy->rate < IPOIB_BUSY_PPS)
		return;
	for (i = 0; i < priv->nr_conns_max; i++) {
		struct ipoib_conn *c = priv->conns[i];

		if (c == NULL || !c->active ||
		    c->state != IPOIB_CONN_CONNECTED ||
		    now - c->peer->last_active_ns < IPOIB_EVICT_IDLE_NS)
			continue;
		if (lru == NULL ||
		    c->peer->last_active_ns < lru->peer->last_active_ns)
			lru = c;
	}
	if (lru == NULL)
		return;
	priv->cstats.evictions++;
	ipoib_conn_close(priv, lru, true, false);
}

void
ipoib_conn_timers(struct ipoib_priv *priv, uint64_t now)
{
	void *idx;

	while (rte_ring_dequeue(priv->connect_req, &idx) == 0) {
		struct ipoib_peer *p = ipoib_peer_at(&priv->pt,
						     (uintptr_t)idx);

		/* acquire: pairs with the CAS of ipoib_conn_request() */
		if (!__atomic_load_n(&p->dead, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&p->state, __ATOMIC_ACQUIRE) ==
		    IPOIB_PEER_CONNECTING &&
		    p->txc == NULL)
			ipoib_conn_connect(priv, p);
	}
	if (now >= priv->next_sample_ns) {
		priv->next_sample_ns = now + IPOIB_SAMPLE_NS;
		ipoib_sample_activity(priv, now);
		ipoib_reap(priv, now);
		ipoib_evict(priv, now);
		ipoib_peers_gc(priv, now);
		if (now - priv->spare_used_ns > IPOIB_SPARE_NS)
			ipoib_pools_spare_free(priv);
		/* pools the application held, of any port: back yet? */
		ipoib_reaper_reap();
	}
	/* a teardown ends as soon as it can: a walk of those draining */
	if (priv->nr_draining > 0)
		ipoib_conn_reap_drained(priv);
	/* the scans below are for a few tens of milliseconds at most */
	if (now < priv->next_tick_ns)
		return;
	priv->next_tick_ns = now + IPOIB_TICK_NS;
	if (priv->nr_spilled > 0)
		ipoib_promote(priv, now);
	ipoib_peers_reclaim(priv);
}

void
ipoib_peers_retry_now(struct ipoib_priv *priv)
{
	uint64_t now = ipoib_now_ns();
	uint32_t i;

	for (i = 0; i < ipoib_peers_nr(&priv->pt); i++) {
		struct ipoib_peer *p = ipoib_peer_at(&priv->pt, i);

		if (ipoib_peer_live(p) && __atomic_load_n(&p->state,
		    __ATOMIC_RELAXED) == IPOIB_PEER_SPILLED) {
			p->next_retry_ns = now;
			p->backoff_ms = 0;
		}
	}
}

/* After a stop: requests never served go back to "not tried". */
void
ipoib_peers_reset_pending(struct ipoib_priv *priv)
{
	uint32_t i;

	for (i = 0; i < ipoib_peers_nr(&priv->pt); i++) {
		struct ipoib_peer *p = ipoib_peer_at(&priv->pt, i);

		if (ipoib_peer_live(p) && __atomic_load_n(&p->state,
		    __ATOMIC_RELAXED) == IPOIB_PEER_CONNECTING &&
		    p->txc == NULL)
			p->state = IPOIB_PEER_NEW;
	}
}
