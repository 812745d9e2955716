/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef RTE_PMD_IPOIB_CM_H
#define RTE_PMD_IPOIB_CM_H

/**
 * @file
 * net_ipoibcm specific API: what an application may ask of the connection
 * table, and fault injection for tests (shm transport).
 *
 * @warning
 * @b EXPERIMENTAL: this API may change without prior notice.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_compat.h>
#include <rte_ether.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How a peer is reached. */
enum rte_pmd_ipoibcm_peer_state {
	RTE_PMD_IPOIBCM_PEER_UD_ONLY,	 /**< no connected mode offered */
	RTE_PMD_IPOIBCM_PEER_NEW,	 /**< connects on the next frame */
	RTE_PMD_IPOIBCM_PEER_CONNECTING, /**< UD while the REQ is out */
	RTE_PMD_IPOIBCM_PEER_CONNECTED,	 /**< sent to over RC */
	RTE_PMD_IPOIBCM_PEER_SPILLED,	 /**< on UD; retried or promoted */
};

/** A peer of the port, found by its (emulated) MAC. */
struct rte_pmd_ipoibcm_peer {
	enum rte_pmd_ipoibcm_peer_state state;
	bool rx_rc;			/**< it sends to us over RC */
	uint32_t qpn;			/**< its UD QPN */
	uint8_t gid[16];
	uint64_t tx_rc_packets;
	uint64_t tx_ud_packets;
	uint64_t rx_packets;
	uint64_t idle_ms;		/**< since traffic either way */
	/** Connected: the longest IPoIB message its REP accepts (at most
	 *  65524, whatever it said); else 0. */
	uint32_t tx_mtu;
};

/**
 * Look a peer up by MAC.
 *
 * @return 0, -ENODEV (not a net_ipoibcm port) or -ENOENT (no such peer).
 */
__rte_experimental
int rte_pmd_ipoibcm_peer_get(uint16_t port_id,
			     const struct rte_ether_addr *mac,
			     struct rte_pmd_ipoibcm_peer *info);

/**
 * Close the connections with a peer (DREQ), in both directions. The peer
 * stays known and is connected again when next sent to, as after reaping.
 *
 * @return the number of connections closed (0, 1 or 2), -ENODEV (not a
 *   net_ipoibcm port), -ENOENT (no such peer) or -EAGAIN (port stopped).
 */
__rte_experimental
int rte_pmd_ipoibcm_peer_disconnect(uint16_t port_id,
				    const struct rte_ether_addr *mac);

/** Faults the shm transport injects into what a port receives. */
struct rte_pmd_ipoibcm_faults {
	uint32_t drop_ppm;	/**< UD and CM messages dropped, per million */
	uint32_t cm_delay_ms;	/**< CM messages held this long */
	int32_t rej_after;	/**< -1 off; REJ every REQ beyond N conns */
	uint32_t cm_drop_mask;	/**< 1 << type (1 REQ .. 6 DREP): dropped */
	bool port_down;		/**< the port's link is down */
	/** the next N UD send WRs the port posts are refused, the tail of
	 *  each post, as by a full send queue (reads back what is left) */
	uint32_t ud_send_refuse;
	/** the port's requests to the subnet administrator (joins, path
	 *  records) never answered, per million */
	uint32_t sa_drop_ppm;
	/** while set, the port's address handles are not made: making one
	 *  waits, as for a path record the subnet administrator has not
	 *  answered yet (the control thread's, never an lcore's) */
	bool ah_hold;
};

/**
 * Set or read the faults of a port.
 *
 * @return 0, -ENODEV, -ENOTSUP (the transport has no fault injection) or
 *   -EIO (the port's transport failed and a reset could not reopen it).
 */
__rte_experimental
int rte_pmd_ipoibcm_faults_set(uint16_t port_id,
			       const struct rte_pmd_ipoibcm_faults *f);
__rte_experimental
int rte_pmd_ipoibcm_faults_get(uint16_t port_id,
			       struct rte_pmd_ipoibcm_faults *f);

#ifdef __cplusplus
}
#endif

#endif /* RTE_PMD_IPOIB_CM_H */
