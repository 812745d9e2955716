/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_WR_ID_H
#define IPOIB_WR_ID_H

/*
 * The wr_id of a receive WR, encoded and decoded here only: the kind of
 * receive queue in the top byte, the connection index (IPOIB_WR_CONN)
 * below it, the ring slot in the low 24 bits. A completion's wr_id comes
 * back from the transport as it was posted; the datapath bounds-checks
 * what it decodes (kind, connection index, slot) before it indexes
 * anything, as Linux ipoib_cm.c does. IPOIB_WR_ID_DRAIN is reserved for
 * a WR that only marks the end of a flush (Linux IPOIB_CM_RX_DRAIN_WRID):
 * it names no buffer, and no ring posts it.
 */

#include <stdint.h>

#include <rte_common.h>

#define IPOIB_WR_KIND_SHIFT	56
#define IPOIB_WR_CONN_SHIFT	24
#define IPOIB_WR_SLOT_MASK	0xffffffULL
#define IPOIB_WR_CONN_MASK	0xffffffffULL

enum ipoib_wr_kind {
	IPOIB_WR_UD = 1,
	IPOIB_WR_SRQ = 2,
	IPOIB_WR_CONN = 3,
	IPOIB_WR_DRAIN = 0xff,		/* reserved: names no buffer */
};

#define IPOIB_WR_ID_DRAIN	UINT64_MAX	/* kind IPOIB_WR_DRAIN */

static inline uint64_t
ipoib_wr_id(enum ipoib_wr_kind kind, uint32_t conn, uint32_t slot)
{
	return (uint64_t)kind << IPOIB_WR_KIND_SHIFT |
	       (uint64_t)conn << IPOIB_WR_CONN_SHIFT | slot;
}

static __rte_always_inline uint32_t
ipoib_wr_slot(uint64_t wr_id)
{
	return (uint32_t)(wr_id & IPOIB_WR_SLOT_MASK);
}

static __rte_always_inline uint32_t
ipoib_wr_conn(uint64_t wr_id)
{
	return (uint32_t)((wr_id >> IPOIB_WR_CONN_SHIFT) & IPOIB_WR_CONN_MASK);
}

static __rte_always_inline unsigned int
ipoib_wr_kind(uint64_t wr_id)
{
	return (unsigned int)(wr_id >> IPOIB_WR_KIND_SHIFT);
}

/*
 * The ring a wr_id's slot belongs to (its kind and connection index),
 * comparable in one test: ipoib_wr_ring(id) == ipoib_wr_ring(other).
 */
static __rte_always_inline uint64_t
ipoib_wr_ring(uint64_t wr_id)
{
	return wr_id >> IPOIB_WR_CONN_SHIFT;
}

#endif /* IPOIB_WR_ID_H */
