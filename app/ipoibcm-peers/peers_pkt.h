/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef PEERS_PKT_H
#define PEERS_PKT_H

/*
 * Packet helpers of the peer emulator and its test client: byte-order
 * access at any alignment, Internet checksums (RFC 1071, incremental
 * update RFC 1624) and the layouts of the few IPv4/IPv6 messages an IPoIB
 * host answers. Offsets are named where they are used; the IPoIB side
 * (encapsulation header, ARP, hardware address, ND options) is in
 * ipoib_wire.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PK_ETH_P_IPV4		0x0800
#define PK_ETH_P_ARP		0x0806
#define PK_ETH_P_IPV6		0x86dd

#define PK_IPV4_HLEN		20
#define PK_IPV6_HLEN		40
#define PK_UDP_HLEN		8
#define PK_ICMP_HLEN		8
#define PK_IPPROTO_ICMP		1
#define PK_IPPROTO_UDP		17
#define PK_IPPROTO_ICMPV6	58
#define PK_IPV4_DF		0x4000
#define PK_IPV4_MF		0x2000
#define PK_IPV4_OFF_MASK	0x1fff
#define PK_TTL			64

#define PK_ICMP_ECHO_REPLY	0
#define PK_ICMP_ECHO_REQUEST	8
#define PK_ICMP6_ECHO_REQUEST	128
#define PK_ICMP6_ECHO_REPLY	129
#define PK_ND_NEIGH_SOL		135
#define PK_ND_NEIGH_ADV		136
#define PK_ND_HOP_LIMIT		255	/* RFC 4861 s7.1.1: else not ND */
#define PK_ND_NS_LEN		24	/* type .. target */
#define PK_NA_F_SOLICITED	0x40	/* first flags byte */
#define PK_NA_F_OVERRIDE	0x20

#define PK_ARP_OP_REQUEST	1
#define PK_ARP_OP_REPLY		2

static inline uint16_t
pk_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
pk_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t
pk_get64(const uint8_t *p)
{
	return (uint64_t)pk_get32(p) << 32 | pk_get32(p + 4);
}

static inline void
pk_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
pk_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* One's complement sum of big-endian 16-bit words, not yet folded. */
static inline uint32_t
pk_sum(uint32_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static inline uint16_t
pk_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The checksum of a buffer (checksum field included: 0 when valid). */
static inline uint16_t
pk_cksum(const uint8_t *p, size_t len)
{
	return pk_fold(pk_sum(0, p, len));
}

/* IPv4 pseudo-header (RFC 768) of an upper-layer message of len bytes. */
static inline uint32_t
pk_sum_pseudo4(const uint8_t *ip, uint8_t proto, uint32_t len)
{
	return pk_sum(0, ip + 12, 8) + proto + len;
}

/* IPv6 pseudo-header (RFC 8200 s8.1). */
static inline uint32_t
pk_sum_pseudo6(const uint8_t *src, const uint8_t *dst, uint8_t nh,
	       uint32_t len)
{
	return pk_sum(pk_sum(0, src, 16), dst, 16) + (len >> 16) +
	       (len & 0xffff) + nh;
}

/* RFC 1624 eqn. 3: the checksum after one 16-bit word went from m to n. */
static inline uint16_t
pk_cksum_update(uint16_t hc, uint16_t m, uint16_t n)
{
	uint32_t sum = (uint16_t)~hc + (uint32_t)(uint16_t)~m + n;

	return pk_fold(sum);
}

/* An IPv4 header of 20 bytes; the checksum is filled in. */
static inline void
pk_ipv4_hdr(uint8_t *ip, uint16_t total_len, uint16_t id, uint16_t frag,
	    uint8_t proto, uint32_t src, uint32_t dst)
{
	ip[0] = 0x45;
	ip[1] = 0;
	pk_put16(ip + 2, total_len);
	pk_put16(ip + 4, id);
	pk_put16(ip + 6, frag);
	ip[8] = PK_TTL;
	ip[9] = proto;
	pk_put16(ip + 10, 0);
	pk_put32(ip + 12, src);
	pk_put32(ip + 16, dst);
	pk_put16(ip + 10, pk_cksum(ip, PK_IPV4_HLEN));
}

/* An IPv6 header; payload length, next header, hop limit, addresses. */
static inline void
pk_ipv6_hdr(uint8_t *ip, uint16_t plen, uint8_t nh, uint8_t hops,
	    const uint8_t *src, const uint8_t *dst)
{
	memset(ip, 0, 4);
	ip[0] = 0x60;
	pk_put16(ip + 4, plen);
	ip[6] = nh;
	ip[7] = hops;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
}

/* Checksum of an ICMPv6 or UDP message in an IPv6 packet: set in place. */
static inline void
pk_l4_cksum6(uint8_t *ip, uint8_t *l4, uint32_t len, size_t cksum_off)
{
	uint16_t ck;

	pk_put16(l4 + cksum_off, 0);
	ck = pk_fold(pk_sum(pk_sum_pseudo6(ip + 8, ip + 24, ip[6], len),
			    l4, len));
	if (ck == 0 && ip[6] == PK_IPPROTO_UDP)
		ck = 0xffff;	/* RFC 8200 s8.1: zero means none */
	pk_put16(l4 + cksum_off, ck);
}

/* Is the ICMPv6/UDP message of an IPv6 packet correctly checksummed? */
static inline bool
pk_l4_cksum6_ok(const uint8_t *ip, const uint8_t *l4, uint32_t len)
{
	return pk_fold(pk_sum(pk_sum_pseudo6(ip + 8, ip + 24, ip[6], len),
			      l4, len)) == 0;
}

#endif /* PEERS_PKT_H */
