/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIBCM_TEST_MCAST_H
#define IPOIBCM_TEST_MCAST_H

/* Ports of one fabric exchanging group traffic (test_mcast.c). */

#include <stdint.h>

#include <rte_ether.h>

#define TM_PORTS	3

struct tm_net {
	const char *names[TM_PORTS];
	uint16_t port[TM_PORTS];
	struct rte_ether_addr mac[TM_PORTS];
	unsigned int n;
	uint8_t marker;		/* tag of the last marker frame */
};

int tm_open(struct tm_net *n, unsigned int nports);
void tm_close(struct tm_net *n);
/* A UDP datagram from port i to an IPv4 group (UINT32_MAX: broadcast). */
int tm_send_group4(struct tm_net *n, unsigned int i, uint32_t group,
		   uint8_t tag);
/*
 * Port i receives frames until the broadcast frame tagged marker; seen
 * counts those to mac before it. The marker follows the same path (UD,
 * in order): a frame it does not find did not come.
 */
int tm_until_marker(struct tm_net *n, unsigned int i, uint8_t marker,
		    const struct rte_ether_addr *mac, unsigned int *seen);
/* A frame from port from to group reaches port i, or does not. */
int tm_gets(struct tm_net *n, unsigned int from, unsigned int i,
	    uint32_t group);
int tm_misses(struct tm_net *n, unsigned int from, unsigned int i,
	      uint32_t group);

#endif /* IPOIBCM_TEST_MCAST_H */
