/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_POOL_H
#define IPOIB_POOL_H

/*
 * Receive-buffer pools in HCA memory (ipoib_pool.c): create, keep idle
 * for the next connection, reuse; free, or hand to the reaper while the
 * application holds mbufs (ipoib_reaper.h).
 */

#include <stddef.h>
#include <string.h>

#include <rte_mbuf.h>

#include "ipoib_cm.h"

/* The per-lcore cache of a pool of n mbufs (ipoib_pool.c says why). */
#define IPOIB_POOL_CACHE(n)	RTE_MIN(256U, (uint32_t)(n) / 32)

/*
 * Where a posted mbuf of these pools receives, from the mbuf's address:
 * they have no private area (ipoib_pool_make() checks), so the buffer
 * follows the mbuf, and a posted mbuf's data starts at the headroom
 * (ipoib_rx_mbufs_get(), rte_pktmbuf_alloc_bulk()). The receive WR
 * (ipoib_rx_ring_fill_wr()) and the burst's prefetch take the address
 * without first reading the mbuf.
 */
#define IPOIB_POOL_DATA_OFS	(sizeof(struct rte_mbuf) + RTE_PKTMBUF_HEADROOM)

/*
 * An mbuf's fields from data_off to port (what rte_mbuf calls its
 * rearm_data) as one word: the headroom, refcnt 1, one segment, the
 * port. A pool's (struct ipoib_pool's rearm), stored in each mbuf a
 * ring takes by ipoib_pool_rearm(), which sets them in one store where
 * rte_pktmbuf_reset() takes four, and the receive burst need not set the
 * port of what it delivers.
 */
static inline uint64_t
ipoib_pool_rearm_word(uint16_t port_id)
{
	const struct {
		uint16_t data_off, refcnt, nb_segs, port;
	} w = { RTE_PKTMBUF_HEADROOM, 1, 1, port_id };
	uint64_t v;

	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, refcnt) !=
			 offsetof(struct rte_mbuf, data_off) + 2);
	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, nb_segs) !=
			 offsetof(struct rte_mbuf, data_off) + 4);
	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, port) !=
			 offsetof(struct rte_mbuf, data_off) + 6);
	memcpy(&v, &w, sizeof(v));
	return v;
}

static __rte_always_inline void
ipoib_pool_rearm(struct rte_mbuf *m, uint64_t rearm)
{
	memcpy((uint8_t *)m + offsetof(struct rte_mbuf, data_off), &rearm,
	       sizeof(rearm));
}

/*
 * mbufs in a non-SRQ connection's pool: its ring and a quarter more, at
 * least a burst, for what the application holds while the ring is
 * refilled. A ring of 32 with 8 more lost half of a burst of 16 frames the
 * application held (rx_nombuf, dp_one_by_one_nosrq).
 */
static inline uint32_t
ipoib_conn_pool_size(uint32_t nb_desc, uint32_t segs)
{
	return (nb_desc + RTE_MAX(nb_desc / 4, (uint32_t)IPOIB_BURST)) * segs;
}

int ipoib_pool_create(struct ipoib_priv *priv, struct ipoib_pool *pool,
		      const char *port, const char *what, uint32_t n,
		      uint32_t data_room);
/* Free a pool now, or once its last mbuf is back (ipoib_reaper.h). */
void ipoib_pool_free(struct ipoib_priv *priv, struct ipoib_pool *pool);
bool ipoib_pool_idle(const struct ipoib_pool *pool);
/* The HCA memory a pool of n mbufs of data_room bytes takes. */
uint64_t ipoib_pool_bytes(uint32_t n, uint32_t data_room);

/* Whether bytes more fit mem_budget, with what the application holds. */
bool ipoib_pools_fit(struct ipoib_priv *priv, uint64_t bytes);
/* Keep an idle pool for the next connection; false if it does not fit. */
bool ipoib_pools_keep(struct ipoib_priv *priv, struct ipoib_pool *pool);
/* A kept pool of n mbufs of data_room bytes, into pool; false if none. */
bool ipoib_pools_take(struct ipoib_priv *priv, struct ipoib_pool *pool,
		      uint32_t n, uint32_t data_room);
/* Idle pools kept for the next non-SRQ connection: all freed. */
void ipoib_pools_spare_free(struct ipoib_priv *priv);
/* Close: the spares freed; pools with mbufs out wait in the reaper. */
void ipoib_pools_reap_all(struct ipoib_priv *priv);

#endif /* IPOIB_POOL_H */
