/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * UD without a GRH, as unicast goes within a real subnet (Linux sends its
 * ARP replies and datagram IP that way): the driver names such a sender
 * by the SLID and source QPN of the completion, bound to a peer by the
 * ARP it sent; what comes from an (SLID, QPN) nothing named is dropped
 * and counted (rx_drop_unknown_lid). A raw shm port (test_raw.h) plays
 * the host, in both receive modes of the driver.
 */

#include <string.h>

#include <rte_arp.h>
#include <rte_ethdev.h>
#include <rte_ip.h>

#include "ipoib_compat.h"
#include "ipoib_eth.h"
#include "ipoib_wire.h"
#include "shm_fabric.h"
#include "test.h"
#include "test_raw.h"
#include "test_util.h"

#define NG_HOST_IP	RTE_BE32(RTE_IPV4(10, 9, 0, 2))
#define NG_PORT_IP	RTE_BE32(RTE_IPV4(10, 9, 0, 1))
#define NG_FRAMES	5

/* The driver's port A and the raw host R, with their addresses. */
struct ng {
	char name[32];
	uint16_t port;
	struct rte_ether_addr a_mac;
	uint8_t a_hw[IPOIB_HWADDR_LEN];
	struct raw r;
	struct ipoib_hwaddr r_hw;	/* R's UD QP 0 (partition 0x8001) */
	struct rte_ether_addr r_mac;	/* the MAC A derives for it */
};

static int
ng_open(struct ng *t, const char *fab, const char *srq)
{
	struct shm_port_info info;
	char args[96];

	snprintf(t->name, sizeof(t->name), "net_ipoibcm_ng");
	snprintf(args, sizeof(args), "fabric=%s,guid=0xa,pkey=0x8001,srq=%s",
		 fab, srq);
	TEST_RUN(test_port_create(t->name, args, 1, 1500, &t->port));
	rte_eth_macaddr_get(t->port, &t->a_mac);
	TEST_RUN(raw_open(&t->r, fab));
	TEST_ASSERT_EQ(shm_addr_resolve(t->r.port, t->a_mac.addr_bytes,
					t->a_hw), 0, "A's address, from R");
	shm_port_query(t->r.port, &info);
	ipoib_hwaddr_set(&t->r_hw, 0, shm_qp_num(t->r.ud[0]), info.gid);
	ipoib_mac_from_hwaddr(&t->r_mac, &t->r_hw);
	return 0;
}

static void
ng_close(struct ng *t)
{
	raw_close(&t->r);
	test_port_destroy(t->name);
}

/* An ARP message from R (its sender address sha) to A. */
static int
ng_arp(struct ng *t, bool global, uint16_t op,
       const struct ipoib_hwaddr *sha)
{
	struct ipoib_arp arp = {
		.hw_type = RTE_BE16(IPOIB_ARPHRD_INFINIBAND),
		.proto = RTE_BE16(RTE_ETHER_TYPE_IPV4),
		.hlen = IPOIB_HWADDR_LEN,
		.plen = 4,
		.op = rte_cpu_to_be_16(op),
		.sender_hw = *sha,
		.sender_ip = NG_HOST_IP,
		.target_ip = NG_PORT_IP,
	};

	memcpy(&arp.target_hw, t->a_hw, IPOIB_HWADDR_LEN);
	return raw_post(&t->r, 0, IPOIB_QKEY_DEFAULT, t->a_hw, global,
			RTE_ETHER_TYPE_ARP, &arp, sizeof(arp));
}

/* IPv4/UDP frame seq from R to A, as A's application should see it. */
static struct rte_mbuf *
ng_ipv4(struct ng *t, uint32_t seq)
{
	return test_udp_frame(&t->r_mac, &t->a_mac, 200, seq, false);
}

static int
ng_send_ipv4(struct ng *t, uint32_t seq, bool global)
{
	struct rte_mbuf *m = ng_ipv4(t, seq);
	int ret;

	TEST_ASSERT(m != NULL, "frame");
	ret = raw_post(&t->r, 0, IPOIB_QKEY_DEFAULT, t->a_hw, global,
		       RTE_ETHER_TYPE_IPV4,
		       rte_pktmbuf_mtod_offset(m, void *, RTE_ETHER_HDR_LEN),
		       m->pkt_len - RTE_ETHER_HDR_LEN);
	rte_pktmbuf_free(m);
	return ret;
}

/*
 * Poll A until xstat rx_drop_unknown_lid reaches want; the frames
 * delivered meanwhile are freed and their number returned.
 */
static unsigned int
ng_until_dropped(struct ng *t, uint64_t want)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;
	struct rte_mbuf *rx[32];
	unsigned int got = 0;
	uint16_t n;

	while (test_xstat(t->port, "rx_drop_unknown_lid") < want &&
	       test_now_ms() < deadline) {
		n = rte_eth_rx_burst(t->port, 0, rx, RTE_DIM(rx));
		rte_pktmbuf_free_bulk(rx, n);
		got += n;
	}
	return got;
}

/* NG_FRAMES IPv4 frames from R without a GRH: all delivered as sent. */
static int
ng_expect_ipv4(struct ng *t, uint32_t first)
{
	struct rte_mbuf *rx[NG_FRAMES];
	uint16_t n, i;

	for (i = 0; i < NG_FRAMES; i++)
		TEST_RUN(ng_send_ipv4(t, first + i, false));
	n = test_rx_until(t->port, rx, NG_FRAMES, TEST_HANG_MS);
	TEST_ASSERT_EQ(n, NG_FRAMES, "every GRH-less IPv4 frame delivered");
	for (i = 0; i < n; i++) {
		struct rte_mbuf *want = ng_ipv4(t, first + i);
		bool same = want != NULL && test_frames_equal(want, rx[i]);

		rte_pktmbuf_free(want);
		rte_pktmbuf_free(rx[i]);
		TEST_ASSERT(same, "frame %u: as sent, from R's MAC", i);
	}
	return 0;
}

/*
 * The message that taught A the peer R arrives, of Ethernet type type
 * and from R's MAC; then R's GRH-less IPv4 does, with nothing dropped.
 */
static int
ng_expect_taught(struct ng *t, uint16_t type)
{
	struct rte_ether_hdr *eh;
	struct rte_mbuf *m;
	bool ok;

	TEST_ASSERT_EQ(test_rx_until(t->port, &m, 1, TEST_HANG_MS), 1,
		       "the message that teaches R is delivered");
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	ok = eh->ether_type == rte_cpu_to_be_16(type) &&
	     rte_is_same_ether_addr(&eh->src_addr, &t->r_mac);
	rte_pktmbuf_free(m);
	TEST_ASSERT(ok, "type 0x%04x from R's MAC", type);
	TEST_RUN(ng_expect_ipv4(t, 0));
	TEST_ASSERT_EQ(test_xstat(t->port, "rx_drop_unknown_lid"), 0,
		       "nothing dropped");
	return 0;
}

/* One scenario in both receive modes. */
static int
ng_both(int (*run)(const char *srq))
{
	TEST_RUN(run("on"));
	return run("off");
}

/*
 * R knows A (it answers A's ARP): its first GRH-less IPv4 frame is from
 * an (SLID, QPN) nothing named, dropped and counted, as is an ARP reply
 * whose sender address names another QPN; its ARP reply then teaches A
 * the peer, and every GRH-less frame after it is delivered.
 */
static int
ng_run_reply(const char *srq)
{
	const char *fab = test_fabric("t_nogrh");
	struct ipoib_hwaddr forged;
	struct rte_ether_hdr *eh;
	struct rte_arp_hdr *ea;
	struct rte_mbuf *m;
	struct ng t;

	TEST_RUN(ng_open(&t, fab, srq));
	TEST_RUN(ng_send_ipv4(&t, 0, false));
	TEST_ASSERT_EQ(ng_until_dropped(&t, 1), 0,
		       "IPv4 from an unknown LID: dropped, not delivered");
	forged = t.r_hw;
	forged.bytes[3] ^= 1;
	TEST_RUN(ng_arp(&t, false, RTE_ARP_OP_REPLY, &forged));
	TEST_ASSERT_EQ(ng_until_dropped(&t, 2), 0,
		       "ARP naming another QPN teaches nothing: dropped");
	TEST_ASSERT_EQ(test_xstat(t.port, "peers"), 0, "no peer learned");

	TEST_RUN(ng_arp(&t, false, RTE_ARP_OP_REPLY, &t.r_hw));
	TEST_ASSERT_EQ(test_rx_until(t.port, &m, 1, TEST_HANG_MS), 1,
		       "the GRH-less ARP reply is delivered");
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	ea = (struct rte_arp_hdr *)(eh + 1);
	TEST_ASSERT(eh->ether_type == RTE_BE16(RTE_ETHER_TYPE_ARP) &&
		    rte_is_same_ether_addr(&eh->src_addr, &t.r_mac) &&
		    rte_is_same_ether_addr(&ea->arp_data.arp_sha, &t.r_mac) &&
		    ea->arp_data.arp_sip == NG_HOST_IP,
		    "ARP reply from R's MAC, naming R");
	rte_pktmbuf_free(m);
	TEST_RUN(ng_expect_ipv4(&t, 1));
	TEST_ASSERT_EQ(test_xstat(t.port, "rx_drop_unknown_lid"), 2,
		       "nothing more dropped");
	TEST_ASSERT_EQ(test_xstat(t.port, "peers"), 1, "R is one peer");
	ng_close(&t);
	return 0;
}

static int
test_ud_nogrh_arp(void)
{
	return ng_both(ng_run_reply);
}
REGISTER_TEST(ud_nogrh_arp, test_ud_nogrh_arp,
	      "UD without GRH: unknown (SLID, QPN) dropped, ARP teaches it");

/*
 * R asks first, with a GRH (as a broadcast ARP request has one): the
 * request names R's GID and binds R's LID and QPN too, so R's GRH-less
 * traffic that follows is delivered with nothing dropped.
 */
static int
ng_run_request(const char *srq)
{
	const char *fab = test_fabric("t_nogrh_req");
	struct ng t;

	TEST_RUN(ng_open(&t, fab, srq));
	TEST_RUN(ng_arp(&t, true, RTE_ARP_OP_REQUEST, &t.r_hw));
	TEST_RUN(ng_expect_taught(&t, RTE_ETHER_TYPE_ARP));
	ng_close(&t);
	return 0;
}

static int
test_ud_nogrh_request(void)
{
	return ng_both(ng_run_request);
}
REGISTER_TEST(ud_nogrh_request, test_ud_nogrh_request,
	      "UD without GRH after an ARP request with one: delivered");

/*
 * An unsolicited neighbor advertisement from R without a GRH (RFC 4861
 * s7.2.6), its target link-layer option R's 20-byte address (RFC 4391
 * s9.2.1): delivered, and it teaches A the peer as an ARP reply does.
 */
static int
ng_run_nd(const char *srq)
{
	const char *fab = test_fabric("t_nogrh_nd");
	struct {	/* no padding: a 40-byte header and bytes */
		struct rte_ipv6_hdr ip;
		uint8_t icmp[24 + IPOIB_ND_OPT_IB_LEN];
	} na;
	uint16_t ck;
	struct ng t;

	RTE_BUILD_BUG_ON(sizeof(na) != sizeof(na.ip) + sizeof(na.icmp));
	TEST_RUN(ng_open(&t, fab, srq));
	memset(&na, 0, sizeof(na));
	na.ip.vtc_flow = RTE_BE32(6u << 28);
	na.ip.payload_len = rte_cpu_to_be_16(sizeof(na.icmp));
	na.ip.proto = IPPROTO_ICMPV6;
	na.ip.hop_limits = 255;
	IPOIB_IPV6_SRC(&na.ip)[0] = 0xfe;
	IPOIB_IPV6_SRC(&na.ip)[1] = 0x80;
	IPOIB_IPV6_SRC(&na.ip)[15] = 2;
	IPOIB_IPV6_DST(&na.ip)[0] = 0xff;	/* all-nodes, ff02::1 */
	IPOIB_IPV6_DST(&na.ip)[1] = 0x02;
	IPOIB_IPV6_DST(&na.ip)[15] = 1;
	na.icmp[0] = 136;		/* neighbor advertisement */
	na.icmp[4] = 0x20;		/* override */
	memcpy(&na.icmp[8], IPOIB_IPV6_SRC(&na.ip), 16);
	na.icmp[24] = IPOIB_ND_OPT_TLLA;
	na.icmp[25] = IPOIB_ND_OPT_IB_LEN / 8;
	memcpy(&na.icmp[24 + 2 + IPOIB_ND_OPT_IB_PAD], &t.r_hw,
	       IPOIB_HWADDR_LEN);
	ck = rte_ipv6_udptcp_cksum(&na.ip, na.icmp);
	memcpy(&na.icmp[2], &ck, sizeof(ck));
	TEST_RUN(raw_post(&t.r, 0, IPOIB_QKEY_DEFAULT, t.a_hw, false,
			  RTE_ETHER_TYPE_IPV6, &na, sizeof(na)));
	TEST_RUN(ng_expect_taught(&t, RTE_ETHER_TYPE_IPV6));
	ng_close(&t);
	return 0;
}

static int
test_ud_nogrh_nd(void)
{
	return ng_both(ng_run_nd);
}
REGISTER_TEST(ud_nogrh_nd, test_ud_nogrh_nd,
	      "UD without GRH: an NA teaches the sender as ARP does");
