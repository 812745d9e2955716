/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_ADV_H
#define IPOIB_ADV_H

/*
 * What our hardware address tells each peer: the connected-mode flag
 * (0x80) only where we can accept the peer's connection. A Linux peer
 * that sees the flag sends to us over RC only, and when we refuse its
 * REQ it drops the packet and asks again on the next one, for ever
 * (ipoib_cm.c: ipoib_cm_rej_handler(), ipoib_cm_tx_handler()); without
 * the flag it sends over UD (ipoib_main.c: ipoib_cm_enabled()).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

#include "ipoib_util.h"

/* A refused peer is told again on a later REQ, not sooner than this. */
#define IPOIB_ADV_GAP_NS	(200 * IPOIB_NS_PER_MS)

struct ipoib_peer;
struct ipoib_priv;

struct ipoib_adv {
	/* set by the control thread, read by the tx lcores: atomics */
	uint32_t full;		/* no room for another passive connection */
	uint32_t withdrawn;	/* a peer was told UD: groups are, too */
	/* our addresses as the application's ARP/ND last named them */
	uint32_t ipv4;		/* network order; 0: none seen */
	uint32_t ipv6[4];	/* words in network order */
	uint32_t has_ipv6;
	/* ARP/ND of the application sent without the flag: any lcore */
	uint64_t tx_no_rc;
	uint64_t tx_no_rc_base;	/* at the last xstats reset (ctrl_lock) */
};

/* ipoib_eth_ctx.adv_rc (arg: the port); counts the false answers. */
bool ipoib_adv_rc(void *arg, const struct rte_ether_addr *dst);
/* ipoib_eth_ctx.own_ip (arg: the port). */
void ipoib_adv_own_ip(void *arg, const uint8_t *ip, unsigned int len);
/*
 * Control thread, every round: whether a passive connection would be
 * taken (ipoib_conn_room()); none while stopping.
 */
void ipoib_adv_room(struct ipoib_priv *priv, bool room);
/*
 * Control thread: the REQ of peer was refused for lack of room. From now
 * on our address goes to it without the flag, and it is told at once by
 * an unsolicited ARP reply and NA (rate-limited: again on a later REQ).
 */
void ipoib_adv_refused(struct ipoib_priv *priv, struct ipoib_peer *peer);

#endif /* IPOIB_ADV_H */
