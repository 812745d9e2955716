/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_WIRE_H
#define IPOIB_WIRE_H

/*
 * IPoIB wire formats (RFC 4391 datagram mode, RFC 4755 connected mode), as
 * the Linux driver (drivers/infiniband/ulp/ipoib) puts them on the wire.
 * Header only, no state. Every struct is packed: frames are rewritten in
 * place at whatever alignment the mbuf gives.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "ipoib_compat.h"
#include "ipoib_hca_types.h"	/* GID, GRH, QPN sizes */

#define IPOIB_CM_MTU		65520	/* RFC 4755 connected-mode MTU */
#define IPOIB_HWADDR_LEN	20	/* RFC 4391 s9.1.1 */
#define IPOIB_ARP_LEN		56	/* ARP with 20-byte hardware addresses */
#define IPOIB_ARPHRD_INFINIBAND	32	/* IANA ARP hardware type */

/* Flags in the first (reserved) byte of the hardware address (Linux). */
#define IPOIB_HWADDR_F_RC	0x80	/* connected mode supported */
#define IPOIB_HWADDR_F_UC	0x40

#define IPOIB_QKEY_DEFAULT	0x00000b1b
/* Linux IPOIB_CM_BUF_SIZE: what REQ/REP private data advertise. */
#define IPOIB_CM_BUF_SIZE	(IPOIB_CM_MTU + IPOIB_HDR_LEN)
/* CM service IDs; the UD QPN is ORed in (Linux/OFED, RFC 4755 s3.5). */
#define IPOIB_CM_SID_OFED	0x1000000000000000ULL
#define IPOIB_CM_SID_RFC	0x0100000000000000ULL
#define IPOIB_PKEY_FULL		0x8000	/* full-member bit of a P_Key */

/* MGID signatures, RFC 4391 s4: ff1<scope>:<sig>:<P_Key>:... */
#define IPOIB_MGID_SCOPE_LINK	0x2
#define IPOIB_MGID_SIG_IPV4	0x401b
#define IPOIB_MGID_SIG_IPV6	0x601b

/* Encapsulation header in front of every IPoIB frame (RFC 4391 s6). */
struct __rte_packed_begin ipoib_hdr {
	rte_be16_t proto;	/* EtherType */
	rte_be16_t reserved;	/* zero on send, ignored on receive */
} __rte_packed_end;

/* Link-layer address: flags (reserved) byte, 24-bit UD QPN, port GID. */
struct ipoib_hwaddr {
	uint8_t bytes[IPOIB_HWADDR_LEN];
};

/* IB Global Route Header: first 40 bytes of every UD receive buffer. */
struct __rte_packed_begin ipoib_grh {
	rte_be32_t version_tclass_flow;	/* 4-bit IP version 6, tclass, flow */
	rte_be16_t paylen;
	uint8_t next_hdr;
	uint8_t hop_limit;
	uint8_t sgid[IPOIB_GID_LEN];
	uint8_t dgid[IPOIB_GID_LEN];
} __rte_packed_end;

/* ARP as carried over IPoIB (RFC 4391 s9.1): 20-byte hardware addresses. */
struct __rte_packed_begin ipoib_arp {
	rte_be16_t hw_type;		/* IPOIB_ARPHRD_INFINIBAND */
	rte_be16_t proto;		/* RTE_ETHER_TYPE_IPV4 */
	uint8_t hlen;			/* IPOIB_HWADDR_LEN */
	uint8_t plen;			/* 4 */
	rte_be16_t op;
	struct ipoib_hwaddr sender_hw;
	rte_be32_t sender_ip;
	struct ipoib_hwaddr target_hw;
	rte_be32_t target_ip;
} __rte_packed_end;

/*
 * IPv6 ND source/target link-layer address options (RFC 4861 s4.6.1) over
 * IPoIB, RFC 4391 s9.2.1 and Linux ndisc_fill_addr_option() with
 * ndisc_addr_option_pad(ARPHRD_INFINIBAND) == 2: type, length 3 (in units
 * of 8 bytes), two zero pad bytes, then the 20-byte hardware address.
 */
#define IPOIB_ND_OPT_SLLA	1
#define IPOIB_ND_OPT_TLLA	2
#define IPOIB_ND_OPT_IB_PAD	2
#define IPOIB_ND_OPT_IB_LEN	24

/* Neighbor Solicitation and Advertisement (RFC 4861 s4.3, s4.4). */
#define IPOIB_ND_NEIGH_SOL	135
#define IPOIB_ND_NEIGH_ADV	136
#define IPOIB_ND_NA_LEN		24	/* type .. target, before options */
#define IPOIB_ND_NA_F_OVERRIDE	0x20	/* flags byte (offset 4): O */
#define IPOIB_ND_HOP_LIMIT	255	/* RFC 4861 s7.1.2: else dropped */
/* ff02::1, all-nodes (RFC 4291 s2.7.1) */
#define IPOIB_IPV6_ALL_NODES	{ 0xff, 0x02, [15] = 0x01 }

/* CM REQ/REP private data (RFC 4755 s6). */
struct __rte_packed_begin ipoib_cm_data {
	rte_be32_t qpn;		/* UD QPN; the high byte is ignored on receive */
	rte_be32_t mtu;		/* receive MTU including the IPoIB header */
} __rte_packed_end;

/* Compile-time size checks of every wire struct; called by the tests. */
static inline void
ipoib_wire_check_sizes(void)
{
	RTE_BUILD_BUG_ON(sizeof(struct ipoib_hdr) != IPOIB_HDR_LEN);
	RTE_BUILD_BUG_ON(sizeof(struct ipoib_hwaddr) != IPOIB_HWADDR_LEN);
	RTE_BUILD_BUG_ON(sizeof(struct ipoib_grh) != IPOIB_GRH_LEN);
	RTE_BUILD_BUG_ON(sizeof(struct ipoib_arp) != IPOIB_ARP_LEN);
	RTE_BUILD_BUG_ON(sizeof(struct ipoib_cm_data) != 8);
	RTE_BUILD_BUG_ON(offsetof(struct ipoib_arp, sender_ip) != 28);
	RTE_BUILD_BUG_ON(offsetof(struct ipoib_arp, target_hw) != 32);
	RTE_BUILD_BUG_ON(offsetof(struct ipoib_arp, target_ip) != 52);
	RTE_BUILD_BUG_ON(offsetof(struct ipoib_grh, sgid) != 8);
	RTE_BUILD_BUG_ON(offsetof(struct ipoib_grh, dgid) != 24);
	RTE_BUILD_BUG_ON(IPOIB_CM_BUF_SIZE != 65524);
	RTE_BUILD_BUG_ON(IPOIB_ND_OPT_IB_LEN !=
			 2 + IPOIB_ND_OPT_IB_PAD + IPOIB_HWADDR_LEN);
}

static inline uint8_t
ipoib_hwaddr_flags(const struct ipoib_hwaddr *ha)
{
	return ha->bytes[0];
}

static inline uint32_t
ipoib_hwaddr_qpn(const struct ipoib_hwaddr *ha)
{
	return (uint32_t)ha->bytes[1] << 16 | (uint32_t)ha->bytes[2] << 8 |
	       ha->bytes[3];
}

static inline const uint8_t *
ipoib_hwaddr_gid(const struct ipoib_hwaddr *ha)
{
	return &ha->bytes[4];
}

static inline void
ipoib_hwaddr_set(struct ipoib_hwaddr *ha, uint8_t flags, uint32_t qpn,
		 const uint8_t *gid)
{
	ha->bytes[0] = flags;
	ha->bytes[1] = (uint8_t)(qpn >> 16);
	ha->bytes[2] = (uint8_t)(qpn >> 8);
	ha->bytes[3] = (uint8_t)qpn;
	memcpy(&ha->bytes[4], gid, IPOIB_GID_LEN);
}

/* Same QPN and GID; the flags byte is unknown for UD receives. */
static inline bool
ipoib_hwaddr_eq_qpn_gid(const struct ipoib_hwaddr *a,
			const struct ipoib_hwaddr *b)
{
	return memcmp(&a->bytes[1], &b->bytes[1], IPOIB_HWADDR_LEN - 1) == 0;
}

#define IPOIB_MAC_LEN		6	/* the emulated Ethernet address */
#define IPOIB_MAC_LOCAL_ADMIN	0x02	/* IEEE 802: locally administered */

/* splitmix64 finaliser: every input bit affects every output bit. */
static inline uint64_t
ipoib_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/*
 * The MAC that stands for a hardware address in Ethernet emulation: a
 * locally administered unicast MAC hashed from the QPN and the GID only
 * (the flags byte is not known for UD receives), so every receiver derives
 * the same one. One implementation for the driver and the peer emulator,
 * which publishes it in the fabric's address records.
 */
static inline void
ipoib_hwaddr_to_mac(uint8_t mac[IPOIB_MAC_LEN], const struct ipoib_hwaddr *ha)
{
	const uint8_t *gid = ipoib_hwaddr_gid(ha);
	uint64_t hi, lo, h;

	memcpy(&hi, gid, sizeof(hi));
	memcpy(&lo, gid + sizeof(hi), sizeof(lo));
	/* "IPoIB" in ASCII seeds the hash */
	h = ipoib_mix64(ipoib_hwaddr_qpn(ha) ^ 0x49506f4942ULL);
	h = ipoib_mix64(h ^ rte_be_to_cpu_64(hi));
	h = ipoib_mix64(h ^ rte_be_to_cpu_64(lo));
	/* 46 hash bits: locally administered (0x02), unicast (0x01 clear). */
	mac[0] = ((uint8_t)(h >> 40) & 0xfc) | IPOIB_MAC_LOCAL_ADMIN;
	mac[1] = (uint8_t)(h >> 32);
	mac[2] = (uint8_t)(h >> 24);
	mac[3] = (uint8_t)(h >> 16);
	mac[4] = (uint8_t)(h >> 8);
	mac[5] = (uint8_t)h;
}

/* 224.0.0.0/4, host order (RTE_IS_IPV4_MCAST overflows an int: UBSan). */
static inline bool
ipoib_ipv4_is_mcast(uint32_t addr)
{
	return (addr >> 28) == 0xe;
}

/* ff1<scope>:<sig>:<P_Key>, the MGID prefix (Linux ip_ib_mc_map). */
static inline void
ipoib_mgid_prefix(uint8_t mgid[IPOIB_GID_LEN], uint16_t sig, uint16_t pkey)
{
	pkey |= IPOIB_PKEY_FULL;
	mgid[0] = 0xff;
	mgid[1] = 0x10 | IPOIB_MGID_SCOPE_LINK;
	mgid[2] = (uint8_t)(sig >> 8);
	mgid[3] = (uint8_t)sig;
	mgid[4] = (uint8_t)(pkey >> 8);
	mgid[5] = (uint8_t)pkey;
}

/* IPv4 broadcast group: ff12:401b:PPPP:0000:0000:0000:ffff:ffff. */
static inline void
ipoib_mgid_bcast(uint8_t mgid[IPOIB_GID_LEN], uint16_t pkey)
{
	ipoib_mgid_prefix(mgid, IPOIB_MGID_SIG_IPV4, pkey);
	memset(&mgid[6], 0, 6);
	memset(&mgid[12], 0xff, 4);
}

/* IPv4 group: the low 28 bits of the address (Linux ip_ib_mc_map). */
static inline void
ipoib_mgid_ipv4(uint8_t mgid[IPOIB_GID_LEN], uint16_t pkey, rte_be32_t group)
{
	uint32_t addr = rte_be_to_cpu_32(group);

	ipoib_mgid_prefix(mgid, IPOIB_MGID_SIG_IPV4, pkey);
	memset(&mgid[6], 0, 6);
	mgid[12] = (uint8_t)(addr >> 24) & 0x0f;
	mgid[13] = (uint8_t)(addr >> 16);
	mgid[14] = (uint8_t)(addr >> 8);
	mgid[15] = (uint8_t)addr;
}

/* IPv6 group: the last 10 bytes of the address (Linux ipv6_ib_mc_map). */
static inline void
ipoib_mgid_ipv6(uint8_t mgid[IPOIB_GID_LEN], uint16_t pkey,
		const uint8_t group[16])
{
	ipoib_mgid_prefix(mgid, IPOIB_MGID_SIG_IPV6, pkey);
	memcpy(&mgid[6], &group[6], 10);
}

/* IPv6 solicited-node group of an address (RFC 4291 s2.7.1). */
static inline void
ipoib_ipv6_solicited(uint8_t group[16], const uint8_t addr[16])
{
	memset(group, 0, 16);
	group[0] = 0xff;
	group[1] = 0x02;
	group[11] = 0x01;
	group[12] = 0xff;
	memcpy(&group[13], &addr[13], 3);
}

#endif /* IPOIB_WIRE_H */
