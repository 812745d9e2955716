/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIBCM_TEST_FRAMES_H
#define IPOIBCM_TEST_FRAMES_H

/*
 * Ethernet frames an IP stack sends, built byte by byte: IPv4 and IPv6
 * with any payload, IGMP and MLD reports, Neighbor Discovery, to a
 * unicast MAC or to a group's MAC (RFC 1112 s6.4, RFC 2464 s7).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#define TF_MAX		2048	/* bytes of a frame built here */

/* An IPv4 address, host order (RTE_IPV4 shifts an int: UBSan). */
#define TF_IPV4(a, b, c, d) \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | \
	 (uint32_t)(d))
#define TF_IP_A		TF_IPV4(10, 0, 0, 1)	/* port 0 (A) */
#define TF_IP_B		TF_IPV4(10, 0, 0, 2)	/* port 1 (B) */

struct tf {
	uint8_t b[TF_MAX];
	uint32_t len;
};

/* The Ethernet MAC of an IPv4 (host order) or IPv6 group. */
void tf_group_mac4(struct rte_ether_addr *mac, uint32_t group);
void tf_group_mac6(struct rte_ether_addr *mac, const uint8_t *group);

/* IPv4 of proto with payload l4 (checksummed if ICMP, IGMP, UDP, TCP). */
void tf_ipv4(struct tf *f, const struct rte_ether_addr *src,
	     const struct rte_ether_addr *dst, uint32_t sip, uint32_t dip,
	     uint8_t proto, const void *l4, uint16_t l4len, uint16_t frag);
/* IPv6; hbh puts a hop-by-hop router alert first (MLD). */
void tf_ipv6(struct tf *f, const struct rte_ether_addr *src,
	     const struct rte_ether_addr *dst, const uint8_t *sip,
	     const uint8_t *dip, uint8_t proto, const void *l4,
	     uint16_t l4len, bool hbh);

/* IGMPv2 report (0x16) or leave (0x17), to the group or 224.0.0.2. */
void tf_igmp2(struct tf *f, const struct rte_ether_addr *src, uint32_t sip,
	      uint8_t type, uint32_t group);
/* IGMPv3 report of one record (type, no source) to 224.0.0.22. */
void tf_igmp3(struct tf *f, const struct rte_ether_addr *src, uint32_t sip,
	      uint8_t rec_type, uint32_t group);
/* MLDv1 report (131) or done (132); MLDv2 report of one record. */
void tf_mld1(struct tf *f, const struct rte_ether_addr *src,
	     const uint8_t *sip, uint8_t type, const uint8_t *group);
void tf_mld2(struct tf *f, const struct rte_ether_addr *src,
	     const uint8_t *sip, uint8_t rec_type, const uint8_t *group);
/* Neighbor Solicitation for target to its solicited-node group. */
void tf_ns(struct tf *f, const struct rte_ether_addr *src,
	   const uint8_t *sip, const uint8_t *target, bool slla);
/* Neighbor Advertisement (solicited) of target, to dip/dst. */
void tf_na(struct tf *f, const struct rte_ether_addr *src,
	   const struct rte_ether_addr *dst, const uint8_t *sip,
	   const uint8_t *dip);

/* Send the frame on queue 0 of port; 0 once taken. */
int tf_send(uint16_t port, const struct tf *f);

/* An IPv6 address fd00::<n> (tests' own prefix). */
void tf_addr6(uint8_t *a, uint32_t n);

#endif /* IPOIBCM_TEST_FRAMES_H */
