/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The connected-mode flag in our own address, per message: ARP and ND
 * the application sends go with or without it as ctx->adv_rc answers,
 * and name our addresses to ctx->own_ip (test_framing.h).
 */

#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "test.h"
#include "test_framing.h"
#include "test_pkt.h"

/* The flags byte of our address: ARP sender, NS SLLA / NA TLLA. */
#define ADV_ARP_SHA_FLAGS	(IPOIB_HDR_LEN + 8)
#define ADV_ND_LLA_FLAGS	(IPOIB_HDR_LEN + 40 + 24 + 2 + \
				 IPOIB_ND_OPT_IB_PAD)
#define ADV_ND_CKSUM		(IPOIB_HDR_LEN + 40 + 2)	/* 2 bytes */

static struct {
	bool rc;		/* what adv_rc answers */
	unsigned int calls;
	bool group;		/* the last call was for a group */
	uint8_t own[16];
	unsigned int own_len;
} adv;

static bool
adv_rc(void *arg, const struct rte_ether_addr *dst)
{
	RTE_SET_USED(arg);
	adv.calls++;
	adv.group = dst == NULL;
	return adv.rc;
}

static void
adv_own_ip(void *arg, const uint8_t *ip, unsigned int len)
{
	RTE_SET_USED(arg);
	memcpy(adv.own, ip, len);
	adv.own_len = len;
}

/* Encapsulate frame f at node nd; the result must be want, but flags. */
static int
adv_encap(struct rte_mempool *mp, struct node *nd, const uint8_t *f,
	  uint32_t flen, const uint8_t *want, uint32_t wlen,
	  uint32_t flags_off, uint8_t flags)
{
	struct ipoib_tx_dst dst;
	struct rte_mbuf *m = test_mbuf(mp, f, flen);
	const uint8_t *p;
	uint32_t i;

	TEST_ASSERT(m != NULL, "");
	TEST_ASSERT_EQ(ipoib_eth_encap(m, &nd->ctx, &dst), 0, "encap");
	TEST_ASSERT_EQ(m->pkt_len, wlen, "length");
	p = rte_pktmbuf_mtod(m, const uint8_t *);
	TEST_ASSERT_EQ(p[flags_off], flags, "flags of our address");
	for (i = 0; i < wlen; i++) {
		/* ND: the ICMPv6 checksum changes with the flags */
		if (i == flags_off || (flags_off == ADV_ND_LLA_FLAGS &&
		    (i == ADV_ND_CKSUM || i == ADV_ND_CKSUM + 1)))
			continue;
		TEST_ASSERT_EQ(p[i], want[i], "byte %u", i);
	}
	if (flags_off == ADV_ND_LLA_FLAGS) {
		const struct rte_ipv6_hdr *ip6 = (const void *)
						 (p + IPOIB_HDR_LEN);

		TEST_ASSERT(rte_ipv6_udptcp_cksum_verify(ip6, ip6 + 1) == 0,
			    "ICMPv6 checksum");
	}
	rte_pktmbuf_free(m);
	return 0;
}

static int
adv_cases(struct rte_mempool *mp)
{
	static const uint8_t a_ip4[] = { A_IP4 }, fe80_1[] = { FE80_1 },
			     fe80_2[] = { FE80_2 };
	struct node a, b;

	nodes_init(&a, &b);
	a.ctx.adv_rc = b.ctx.adv_rc = adv_rc;
	a.ctx.own_ip = b.ctx.own_ip = adv_own_ip;

	/* a request to the broadcast group, the flag withheld */
	adv.rc = false;
	TEST_RUN(adv_encap(mp, &a, arp_req_eth, sizeof(arp_req_eth),
			   arp_req_ib, sizeof(arp_req_ib), ADV_ARP_SHA_FLAGS,
			   0));
	TEST_ASSERT(adv.calls == 1 && adv.group, "asked once, for a group");
	TEST_ASSERT(adv.own_len == 4 && memcmp(adv.own, a_ip4, 4) == 0,
		    "our IPv4 address noted");
	/* allowed: the frame is the one without callbacks */
	adv.rc = true;
	TEST_RUN(adv_encap(mp, &a, arp_req_eth, sizeof(arp_req_eth),
			   arp_req_ib, sizeof(arp_req_ib), ADV_ARP_SHA_FLAGS,
			   IPOIB_HWADDR_F_RC));
	/* NS: our SLLA without the flag, the checksum still right */
	adv.rc = false;
	TEST_RUN(adv_encap(mp, &a, ns_eth, sizeof(ns_eth), ns_ib,
			   sizeof(ns_ib), ADV_ND_LLA_FLAGS, 0));
	TEST_ASSERT(adv.own_len == 16 && memcmp(adv.own, fe80_1, 16) == 0,
		    "NS: our source address noted");
	/* NA to a unicast MAC: the target is our address */
	adv.calls = 0;
	TEST_RUN(adv_encap(mp, &b, na_eth, sizeof(na_eth), na_ib,
			   sizeof(na_ib), ADV_ND_LLA_FLAGS, 0));
	TEST_ASSERT(adv.calls == 1 && !adv.group, "asked once, for a peer");
	TEST_ASSERT(adv.own_len == 16 && memcmp(adv.own, fe80_2, 16) == 0,
		    "NA: our target address noted");
	return 0;
}

static int
test_eth_adv(void)
{
	struct rte_mempool *mp = test_pool("t_eth_adv");
	int ret;

	TEST_ASSERT(mp != NULL, "no pool");
	ret = adv_cases(mp);
	TEST_RUN(test_pool_free(mp));
	return ret;
}
REGISTER_TEST(eth_adv, test_eth_adv,
		    "our address in ARP/ND with or without the RC flag");
