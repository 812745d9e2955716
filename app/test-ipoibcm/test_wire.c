/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Wire formats: struct sizes, hardware addresses, MGIDs, and the MACs
 * the Ethernet emulation derives from hardware addresses (test_framing.h).
 */

#include <errno.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "test.h"
#include "test_framing.h"
#include "test_pkt.h"

static int
test_wire_sizes(void)
{
	struct ipoib_cm_data cd;
	static const uint8_t cd_want[] = {
		0x00, 0x12, 0x34, 0x56,	/* UD QPN */
		0x00, 0x00, 0xff, 0xf4,	/* 65524: MTU + IPoIB header */
	};

	ipoib_wire_check_sizes();
	TEST_ASSERT_EQ(sizeof(struct ipoib_hdr), 4, "");
	TEST_ASSERT_EQ(sizeof(struct ipoib_hwaddr), 20, "");
	TEST_ASSERT_EQ(sizeof(struct ipoib_grh), 40, "");
	TEST_ASSERT_EQ(sizeof(struct ipoib_arp), 56, "");
	TEST_ASSERT_EQ(sizeof(struct ipoib_cm_data), 8, "");
	TEST_ASSERT_EQ(IPOIB_HDR_LEN, 4, "");
	TEST_ASSERT_EQ(IPOIB_HWADDR_LEN, 20, "");
	TEST_ASSERT_EQ(IPOIB_GRH_LEN, 40, "");
	TEST_ASSERT_EQ(IPOIB_GID_LEN, 16, "");
	TEST_ASSERT_EQ(IPOIB_QKEY_DEFAULT, 0xb1b, "");
	TEST_ASSERT_EQ(IPOIB_CM_MTU, 65520, "");
	TEST_ASSERT_EQ(IPOIB_CM_BUF_SIZE, 65524, "");
	TEST_ASSERT_EQ(IPOIB_MCAST_QPN, 0xffffff, "");
	TEST_ASSERT_EQ(IPOIB_ARPHRD_INFINIBAND, 32, "");
	TEST_ASSERT(IPOIB_CM_SID_OFED == 0x1000000000000000ULL, "");
	TEST_ASSERT(IPOIB_CM_SID_RFC == 0x0100000000000000ULL, "");
	cd.qpn = rte_cpu_to_be_32(0x123456);
	cd.mtu = rte_cpu_to_be_32(IPOIB_CM_BUF_SIZE);
	TEST_ASSERT(memcmp(&cd, cd_want, sizeof(cd_want)) == 0,
		    "CM private data bytes");
	return 0;
}
REGISTER_TEST(wire_sizes, test_wire_sizes,
		    "wire struct sizes and protocol constants");

static int
test_wire_hwaddr(void)
{
	static const uint8_t gid[] = { A_GID };
	static const uint8_t want[] = {
		0x80, 0x12, 0x34, 0x56, A_GID,
	};
	struct ipoib_hwaddr ha, hb;

	ipoib_hwaddr_set(&ha, IPOIB_HWADDR_F_RC, 0x123456, gid);
	TEST_ASSERT(memcmp(&ha, want, sizeof(want)) == 0, "hwaddr bytes");
	TEST_ASSERT_EQ(ipoib_hwaddr_qpn(&ha), 0x123456, "");
	TEST_ASSERT_EQ(ipoib_hwaddr_flags(&ha), 0x80, "");
	TEST_ASSERT(ipoib_hwaddr_gid(&ha) == &ha.bytes[4], "");
	TEST_ASSERT(memcmp(ipoib_hwaddr_gid(&ha), gid, 16) == 0, "");
	/* A QPN is 24 bits: the rest does not reach the flags byte. */
	ipoib_hwaddr_set(&hb, 0, 0xff123456, gid);
	TEST_ASSERT_EQ(hb.bytes[0], 0, "");
	TEST_ASSERT_EQ(ipoib_hwaddr_qpn(&hb), 0x123456, "");
	TEST_ASSERT(ipoib_hwaddr_eq_qpn_gid(&ha, &hb), "flags must not count");
	hb.bytes[3] ^= 1;
	TEST_ASSERT(!ipoib_hwaddr_eq_qpn_gid(&ha, &hb), "QPN differs");
	hb.bytes[3] ^= 1;
	hb.bytes[19] ^= 1;
	TEST_ASSERT(!ipoib_hwaddr_eq_qpn_gid(&ha, &hb), "GID differs");
	ipoib_hwaddr_set(&hb, IPOIB_HWADDR_F_UC, IPOIB_MCAST_QPN, gid);
	TEST_ASSERT_EQ(hb.bytes[0], 0x40, "");
	TEST_ASSERT_EQ(ipoib_hwaddr_qpn(&hb), 0xffffff, "");
	return 0;
}
REGISTER_TEST(wire_hwaddr, test_wire_hwaddr,
		    "hardware address layout and helpers");

struct mgid_case {
	const char *name;
	int kind;		/* 0 broadcast, 4 IPv4, 6 IPv6 */
	uint16_t pkey;
	uint8_t group[16];	/* IPv4: 4 bytes */
	uint8_t want[16];
};

/* ff12:401b:PPPP::ffff:ffff; ip_ib_mc_map; ipv6_ib_mc_map (Linux). */
static const struct mgid_case mgid_cases[] = {
	{ "broadcast pkey ffff", 0, 0xffff, { 0 },
	  { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff } },
	{ "broadcast pkey 8001", 0, 0x8001, { 0 },
	  { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff } },
	{ "broadcast pkey 0001 (full member bit added)", 0, 0x0001, { 0 },
	  { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff } },
	{ "239.1.2.3", 4, 0xffff, { 239, 1, 2, 3 },
	  { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0x0f, 0x01, 0x02, 0x03 } },
	{ "224.0.0.1", 4, 0xffff, { 224, 0, 0, 1 },
	  { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01 } },
	{ "239.129.2.3 pkey 8001", 4, 0x8001, { 239, 129, 2, 3 },
	  { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0x0f, 0x81, 0x02, 0x03 } },
	{ "ff02::1", 6, 0xffff,
	  { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01 },
	  { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01 } },
	{ "ff02::1:ff00:1234", 6, 0xffff,
	  { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff, 0, 0x12, 0x34 },
	  { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x01, 0xff, 0x00, 0x12, 0x34 } },
	{ "ff05::1:3 pkey 8001", 6, 0x8001,
	  { 0xff, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0x03 },
	  { 0xff, 0x12, 0x60, 0x1b, 0x80, 0x01, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x03 } },
};

static int
test_wire_mgid(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(mgid_cases); i++) {
		const struct mgid_case *c = &mgid_cases[i];
		uint8_t mgid[16];
		rte_be32_t g;

		memset(mgid, 0xa5, sizeof(mgid));
		printf("  %s\n", c->name);
		if (c->kind == 0) {
			ipoib_mgid_bcast(mgid, c->pkey);
		} else if (c->kind == 4) {
			memcpy(&g, c->group, sizeof(g));
			ipoib_mgid_ipv4(mgid, c->pkey, g);
		} else {
			ipoib_mgid_ipv6(mgid, c->pkey, c->group);
		}
		if (memcmp(mgid, c->want, sizeof(mgid)) != 0) {
			test_hexdump("got", mgid, 16);
			test_hexdump("want", c->want, 16);
			TEST_ASSERT(0, "MGID for %s", c->name);
		}
	}
	return 0;
}
REGISTER_TEST(wire_mgid, test_wire_mgid,
		    "multicast GIDs as Linux builds them");

static int
mac_cmp(const void *a, const void *b)
{
	return memcmp(a, b, RTE_ETHER_ADDR_LEN);
}

static int
test_eth_mac_derive(void)
{
	static const uint8_t a_want[] = { A_MAC_B }, b_want[] = { B_MAC_A };
	enum { N = 4096 };
	struct rte_ether_addr m1, m2, *all;
	struct ipoib_hwaddr ha;
	unsigned int i;

	memcpy(&ha, a_hw, sizeof(ha));
	ipoib_mac_from_hwaddr(&m1, &ha);
	TEST_ASSERT(memcmp(&m1, a_want, 6) == 0, "A's MAC changed");
	memcpy(&ha, b_hw, sizeof(ha));
	ipoib_mac_from_hwaddr(&m1, &ha);
	TEST_ASSERT(memcmp(&m1, b_want, 6) == 0, "B's MAC changed");
	/* The flags byte does not count: UD receives do not know it. */
	ha.bytes[0] = 0;
	ipoib_mac_from_hwaddr(&m2, &ha);
	TEST_ASSERT(rte_is_same_ether_addr(&m1, &m2), "flags changed the MAC");
	/* Distinct over QPNs of one GID and over one-bit GID changes. */
	all = calloc(2 * N, sizeof(*all));
	TEST_ASSERT(all != NULL, "");
	for (i = 0; i < N; i++) {
		ipoib_hwaddr_set(&ha, 0, i, ipoib_hwaddr_gid(
				 (const struct ipoib_hwaddr *)a_hw));
		ipoib_mac_from_hwaddr(&all[i], &ha);
		memcpy(&ha, a_hw, sizeof(ha));
		ha.bytes[4 + (i / 8) % 16] ^= (uint8_t)(1u << (i % 8));
		ha.bytes[1 + i % 3] ^= (uint8_t)(i >> 7);
		ipoib_mac_from_hwaddr(&all[N + i], &ha);
	}
	for (i = 0; i < 2 * N; i++) {
		if (!rte_is_unicast_ether_addr(&all[i]) ||
		    !(all[i].addr_bytes[0] & RTE_ETHER_LOCAL_ADMIN_ADDR)) {
			free(all);
			TEST_ASSERT(0, "MAC %u not locally administered unicast",
				    i);
		}
	}
	qsort(all, 2 * N, sizeof(*all), mac_cmp);
	for (i = 1; i < 2 * N; i++) {
		if (rte_is_same_ether_addr(&all[i - 1], &all[i])) {
			free(all);
			TEST_ASSERT(0, "MAC collision at %u", i);
		}
	}
	free(all);
	return 0;
}
REGISTER_TEST(eth_mac_derive, test_eth_mac_derive,
		    "MACs derived from hardware addresses");
