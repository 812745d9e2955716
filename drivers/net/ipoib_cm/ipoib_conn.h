/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_CONN_H
#define IPOIB_CONN_H

#include "ipoib_cm.h"
#include "ipoib_pool.h"

#define IPOIB_CONN_SPARE	64	/* slots for connections draining */
#define IPOIB_DRAIN_TIMEOUT_NS	(5ULL * 1000000000ULL)
#define IPOIB_CM_RETRIES	15	/* Linux: max_cm_retries */
/*
 * How long a REQ waits for its REP, as the IBTA exponent (4.096 us << it):
 * 17 is 0.54 s, 16 tries 8.6 s, for a passive side that builds a large
 * receive pool before it can answer. Linux asks 20 (4.3 s). The shm
 * fabric honours it; on verbs rdma_cm uses its own (20).
 */
#define IPOIB_CM_RESPONSE_TIMEOUT	17
#define IPOIB_SAMPLE_NS		(1000000000ULL)	/* activity sampling */
#define IPOIB_TICK_NS		(10000000ULL)	/* promotion, peer reclaim */
#define IPOIB_BUSY_PPS		10	/* a spilled peer this busy may evict */
#define IPOIB_EVICT_IDLE_NS	(2ULL * 1000000000ULL)
#define IPOIB_PEER_STALE_NS	(600ULL * 1000000000ULL)	/* reap_idle=0 */
#define IPOIB_SPARE_POOLS	4
#define IPOIB_SPARE_NS		IPOIB_SAMPLE_NS	/* unused this long: freed */
/* At most this many bytes a connection slot, checked at build time. */
#define IPOIB_CONN_HOST_BYTES	128
/* connection slots are allocated this many at a time, when all are busy */
#define IPOIB_CONN_CHUNK_SHIFT	6
#define IPOIB_CONN_CHUNK	(1u << IPOIB_CONN_CHUNK_SHIFT)

static inline void
ipoib_count_rej(uint64_t *by_reason, uint16_t reason)
{
	by_reason[reason < 31 ? reason : 31]++;
}

/* Open a send connection to peer, or spill it. */
void ipoib_conn_connect(struct ipoib_priv *priv, struct ipoib_peer *peer);
/*
 * Control thread: whether a REQ would be taken now: a passive slot free
 * (max_conns) and, in non-SRQ mode, a receive ring within mem_budget.
 * Else false, *reason (if not NULL) the REJ reason.
 */
bool ipoib_conn_room(struct ipoib_priv *priv, uint16_t *reason);
/* Take a connection down (see ipoib_conn.c). */
void ipoib_conn_close(struct ipoib_priv *priv, struct ipoib_conn *c,
		      bool send_dreq, bool refused);
/* Destroy the connections that drained; true when none is left draining. */
bool ipoib_conn_reap_drained(struct ipoib_priv *priv);
/* Every connection down; with a DREQ where one can still be sent. */
void ipoib_conns_close_all(struct ipoib_priv *priv, bool send_dreq);
/* Close a peer's connections (DREQ); how many. */
int ipoib_conn_disconnect_peer(struct ipoib_priv *priv,
			       struct ipoib_peer *peer);
/* Stopped port: poll the queues' CQs for flushes ourselves. */
void ipoib_conns_poll_stopped(struct ipoib_priv *priv);

/* ipoib_spill.c: the spill policy (control thread timers) */
/* Spilled peers are tried again now, their backoff forgotten. */
void ipoib_peers_retry_now(struct ipoib_priv *priv);

#endif /* IPOIB_CONN_H */
