/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The fabric's RSS hash (shm_rss.c) is Toeplitz's: Microsoft's RSS
 * verification suite ("Verifying the RSS Hash Calculation"; the 82599
 * datasheet's 7.1.2.8.3 and DPDK's test_thash.c have it too), its key and
 * its published hashes of IPv4 address pairs, with and without TCP ports,
 * and of IPv6 ones with ports. The input is what a NIC hashes: source
 * address, destination address, source port, destination port, in
 * network order.
 */

#include <arpa/inet.h>
#include <string.h>

#include "fabric_util.h"

static const uint8_t ms_key[IPOIB_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct rss_vec {
	const char *src, *dst;
	uint16_t sport, dport;
	uint32_t l3;		/* 0: not published here */
	uint32_t l4;
};

static const struct rss_vec vecs[] = {
	{ "66.9.149.187", "161.142.100.80", 2794, 1766,
	  0x323e8fc2, 0x51ccc178 },
	{ "199.92.111.2", "65.69.140.83", 14230, 4739,
	  0xd718262a, 0xc626b0ea },
	{ "24.19.198.95", "12.22.207.184", 12898, 38024,
	  0xd2d0a5de, 0x5c2b394a },
	{ "38.27.205.30", "209.142.163.6", 48228, 2217,
	  0x82989176, 0xafc7327f },
	{ "153.39.163.191", "202.188.127.2", 44251, 1303,
	  0x5d1809c5, 0x10e828a2 },
	{ "3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 2794, 1766,
	  0, 0x40207d3d },
	{ "3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 14230, 4739,
	  0, 0xdde51bbf },
};

static int
test_rss_toeplitz(void)
{
	unsigned int i;

	for (i = 0; i < (sizeof(vecs) / sizeof(vecs[0])); i++) {
		const struct rss_vec *v = &vecs[i];
		int af = strchr(v->src, ':') != NULL ? AF_INET6 : AF_INET;
		uint32_t alen = af == AF_INET ? 4 : 16, h;
		uint16_t sp = htons(v->sport), dp = htons(v->dport);
		uint8_t in[36];

		CHECK(inet_pton(af, v->src, in) == 1 &&
		      inet_pton(af, v->dst, in + alen) == 1, "%s", v->src);
		if (v->l3 != 0) {
			h = shm_rss_toeplitz(ms_key, in, 2 * alen);
			CHECK(h == v->l3, "%s -> %s: 0x%08x, published 0x%08x",
			      v->src, v->dst, h, v->l3);
		}
		memcpy(in + 2 * alen, &sp, 2);
		memcpy(in + 2 * alen + 2, &dp, 2);
		h = shm_rss_toeplitz(ms_key, in, 2 * alen + 4);
		CHECK(h == v->l4, "%s:%u -> %s:%u: 0x%08x, published 0x%08x",
		      v->src, v->sport, v->dst, v->dport, h, v->l4);
	}
	ft_note("%u published hashes", (unsigned int)(sizeof(vecs) / sizeof(vecs[0])) * 2 - 2);
	return 0;
out:
	return -1;
}
REGISTER_TEST(rss_toeplitz, test_rss_toeplitz,
	"the RSS hash is Toeplitz: Microsoft's verification suite")
