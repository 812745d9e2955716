/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * A UD send queue that refuses (the shm transport's ud_send_refuse fault,
 * as a full verbs send queue does): every frame given to tx_burst is
 * either sent, or freed and counted, or given back untouched, exactly
 * once; fragments the driver made are its own to free. Every mbuf is
 * counted back (mempool in-use counts). And IPv4 too long for UD, to a
 * group, is fragmented unless DF is set.
 */

#include <stdio.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mempool.h>

#include <rte_pmd_ipoib_cm.h>

#include "test.h"
#include "test_util.h"

#define RF_BURST	8

struct rf_pair {
	uint16_t a, b;
	struct rte_ether_addr a_mac, b_mac;
};

static const char *const rf_names[] = { "net_ipoibcm_rfa", "net_ipoibcm_rfb" };

/* A and B; B rejects every connection, so A sends to it over UD only. */
static int
rf_open(struct rf_pair *p)
{
	struct rte_pmd_ipoibcm_faults f;
	char args[256];

	snprintf(args, sizeof(args), "fabric=%s", test_fabric("t_rf"));
	TEST_RUN(test_port_create(rf_names[0], args, 1, 1500, &p->a));
	TEST_RUN(test_port_create(rf_names[1], args, 1, 1500, &p->b));
	rte_eth_macaddr_get(p->a, &p->a_mac);
	rte_eth_macaddr_get(p->b, &p->b_mac);
	TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_get(p->b, &f), 0, "");
	f.rej_after = 0;
	TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_set(p->b, &f), 0, "");
	return 0;
}

static void
rf_close(void)
{
	test_port_destroy(rf_names[0]);
	test_port_destroy(rf_names[1]);
}

static int
rf_refuse(uint16_t port, uint32_t n)
{
	struct rte_pmd_ipoibcm_faults f;

	TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_get(port, &f), 0, "");
	f.ud_send_refuse = n;
	TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_set(port, &f), 0, "");
	return 0;
}

static uint32_t
rf_refuse_left(uint16_t port)
{
	struct rte_pmd_ipoibcm_faults f;

	if (rte_pmd_ipoibcm_faults_get(port, &f) != 0)
		return UINT32_MAX;
	return f.ud_send_refuse;
}

/* An ARP request from A for 10.0.0.2, to broadcast: rewritten on tx. */
static struct rte_mbuf *
rf_arp(const struct rte_ether_addr *src)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mempool());
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;

	if (m == NULL)
		return NULL;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m,
		sizeof(*eth) + sizeof(*arp));
	memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	eth->src_addr = *src;
	eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_ARP);
	arp = (struct rte_arp_hdr *)(eth + 1);
	memset(arp, 0, sizeof(*arp));
	arp->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = RTE_BE16(RTE_ARP_OP_REQUEST);
	arp->arp_data.arp_sha = *src;
	arp->arp_data.arp_sip = RTE_BE32(0x0a000001);
	arp->arp_data.arp_tip = RTE_BE32(0x0a000002);
	return m;
}

/* B takes n frames (or fewer when want is 0: none may come). */
static int
rf_expect(struct rf_pair *p, uint16_t want)
{
	struct rte_mbuf *rx[64];
	uint16_t got;

	got = test_rx_until(p->b, rx, want, TEST_HANG_MS);
	rte_pktmbuf_free_bulk(rx, got);
	TEST_ASSERT_EQ(got, want, "frames B received");
	return 0;
}

/* The driver's fragment pools of port, queue 0: every mbuf back. */
static int
rf_frag_pools_full(uint16_t port)
{
	const char *kind[] = { "d", "i" };	/* direct, indirect */
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *mp;
	unsigned int i;

	for (i = 0; i < RTE_DIM(kind); i++) {
		snprintf(name, sizeof(name), "ipf%s_%u_0", kind[i], port);
		mp = rte_mempool_lookup(name);
		TEST_ASSERT(mp != NULL, "pool %s", name);
		TEST_ASSERT_EQ(rte_mempool_in_use_count(mp), 0,
			       "%s: mbufs in use", name);
	}
	return 0;
}

/* Data frames refused: all given back, each byte as it was. */
static int
rf_data_back(struct rf_pair *p)
{
	struct rte_mbuf *tx[RF_BURST], *copy[RF_BURST];
	uint16_t i, sent;

	for (i = 0; i < RF_BURST; i++) {
		tx[i] = test_udp_frame(&p->a_mac, &p->b_mac, 100 + i, i, false);
		TEST_ASSERT(tx[i] != NULL, "");
		copy[i] = rte_pktmbuf_copy(tx[i], test_mempool(), 0,
					   UINT32_MAX);
		TEST_ASSERT(copy[i] != NULL, "");
	}
	TEST_RUN(rf_refuse(p->a, 1000));
	sent = rte_eth_tx_burst(p->a, 0, tx, RF_BURST);
	TEST_ASSERT_EQ(sent, 0, "a refused post consumes nothing");
	for (i = 0; i < RF_BURST; i++) {
		TEST_ASSERT(test_frames_equal(tx[i], copy[i]),
			    "frame %u given back changed", i);
		rte_pktmbuf_free(tx[i]);
		rte_pktmbuf_free(copy[i]);
	}
	TEST_ASSERT_EQ(test_xstat(p->a, "tx_drop_ud_refused"), 0, "");
	return 0;
}

/*
 * [data, ARP, data, data]: the ARP frame was rewritten and cannot be given
 * back: it and the frame before it are freed and counted; the two after
 * come back untouched.
 */
static int
rf_arp_dropped(struct rf_pair *p)
{
	struct rte_mbuf *tx[4], *copy[2];
	uint16_t i, sent;

	tx[0] = test_udp_frame(&p->a_mac, &p->b_mac, 100, 0, false);
	tx[1] = rf_arp(&p->a_mac);
	tx[2] = test_udp_frame(&p->a_mac, &p->b_mac, 200, 2, false);
	tx[3] = test_udp_frame(&p->a_mac, &p->b_mac, 300, 3, false);
	for (i = 0; i < 4; i++)
		TEST_ASSERT(tx[i] != NULL, "");
	for (i = 0; i < 2; i++) {
		copy[i] = rte_pktmbuf_copy(tx[2 + i], test_mempool(), 0,
					   UINT32_MAX);
		TEST_ASSERT(copy[i] != NULL, "");
	}
	sent = rte_eth_tx_burst(p->a, 0, tx, 4);
	TEST_ASSERT_EQ(sent, 2, "the ARP frame and the one before consumed");
	TEST_ASSERT_EQ(test_xstat(p->a, "tx_drop_ud_refused"), 2, "counted");
	for (i = 0; i < 2; i++) {
		TEST_ASSERT(test_frames_equal(tx[2 + i], copy[i]),
			    "frame %u given back changed", 2 + i);
		rte_pktmbuf_free(tx[2 + i]);
		rte_pktmbuf_free(copy[i]);
	}
	return 0;
}

/* A 3000-byte packet in two fragments; the queue refuses `refuse`. */
static int
rf_frags(struct rf_pair *p, uint32_t refuse, uint16_t arrive)
{
	uint64_t lost = test_xstat(p->a, "tx_drop_ud_refused");
	uint64_t frags = test_xstat(p->a, "tx_frags_ud_refused");
	struct rte_mbuf *m;

	TEST_RUN(rf_refuse(p->a, refuse));
	m = test_udp_frame(&p->a_mac, &p->b_mac, 3000, 9, false);
	TEST_ASSERT(m != NULL, "");
	TEST_ASSERT(test_tx_one(p->a, 0, m),
		    "a fragmented packet is consumed");
	TEST_ASSERT_EQ(test_xstat(p->a, "tx_frags_ud_refused") - frags,
		       refuse, "fragments refused and freed");
	TEST_ASSERT_EQ(test_xstat(p->a, "tx_drop_ud_refused") - lost, 1,
		       "the packet counted lost");
	TEST_ASSERT_EQ(rf_refuse_left(p->a), 0, "refusals used up");
	TEST_RUN(rf_frag_pools_full(p->a));
	return rf_expect(p, arrive);
}

static int
test_refuse_ud(void)
{
	struct rte_mempool *mp = test_mempool();
	unsigned int in_use;
	struct rte_mbuf *m;
	struct rf_pair p;

	TEST_RUN(rf_open(&p));
	/* A learns B, B hears A: over UD (B refuses connections) */
	m = test_udp_frame(&p.a_mac, &p.b_mac, 100, 0, false);
	TEST_ASSERT(m != NULL && test_tx_one(p.a, 0, m), "");
	TEST_RUN(rf_expect(&p, 1));
	/* B's first frame was held: bursts to B stop while it is */
	TEST_ASSERT(test_wait_held(p.a), "held frames sent");
	in_use = rte_mempool_in_use_count(mp);

	TEST_RUN(rf_data_back(&p));
	TEST_RUN(rf_arp_dropped(&p));
	TEST_ASSERT_EQ(rte_mempool_in_use_count(mp), in_use,
		       "every mbuf of the application back");
	/* both fragments refused; then the second only */
	TEST_RUN(rf_frags(&p, 2, 0));
	TEST_RUN(rf_frags(&p, 1, 1));
	TEST_ASSERT_EQ(rte_mempool_in_use_count(mp), in_use,
		       "every mbuf of the application back");

	/* the queue takes frames again */
	m = test_udp_frame(&p.a_mac, &p.b_mac, 100, 1, false);
	TEST_ASSERT(m != NULL && test_tx_one(p.a, 0, m), "");
	TEST_RUN(rf_expect(&p, 1));
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_rc_packets"), 0, "UD only");
	rf_close();
	return 0;
}
REGISTER_TEST(refuse_ud, test_refuse_ud,
	      "a refused UD post: frames freed once or given back untouched");

/* A 3000-byte datagram to 255.255.255.255, DF set or not. */
static struct rte_mbuf *
rf_bcast_frame(const struct rte_ether_addr *src, uint32_t seq, bool df)
{
	struct rte_ether_addr bcast;
	struct rte_ipv4_hdr *ip;
	struct rte_mbuf *m;

	memset(&bcast, 0xff, sizeof(bcast));
	m = test_udp_frame(src, &bcast, 3000, seq, df);
	if (m == NULL)
		return NULL;
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *,
				     sizeof(struct rte_ether_hdr));
	ip->dst_addr = RTE_BE32(UINT32_MAX);
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	return m;
}

/* IPv4 to the broadcast group, 3000 bytes: fragmented, or dropped (DF). */
static int
test_refuse_frag_mcast(void)
{
	struct rte_mbuf *m;
	struct rf_pair p;

	TEST_RUN(rf_open(&p));
	m = rf_bcast_frame(&p.a_mac, 5, false);
	TEST_ASSERT(m != NULL && test_tx_one(p.a, 0, m), "");
	TEST_RUN(rf_expect(&p, 2));
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_frag_packets"), 1, "fragmented");
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_frags"), 2, "in two");
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_mcast_packets"), 2, "to the group");
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_drop_too_long"), 0, "");
	m = rf_bcast_frame(&p.a_mac, 6, true);
	TEST_ASSERT(m != NULL && test_tx_one(p.a, 0, m), "");
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_drop_too_long"), 1,
		       "DF set: dropped, counted");
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_icmp_too_big"), 0,
		       "no ICMP error for a broadcast (RFC 1122 s3.2.2)");
	TEST_RUN(rf_frag_pools_full(p.a));
	rf_close();
	return 0;
}
REGISTER_TEST(refuse_frag_mcast, test_refuse_frag_mcast,
	      "IPv4 multicast too long for UD, without DF: fragmented");
