/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * No lcore waits on the subnet (issue 14 item 2): a burst that meets a
 * destination without an address handle hands the frame to the control
 * thread (ipoib_tx_held.c), which makes the handle and sends what was
 * held, in order; what it cannot hold is given back, untouched.
 *
 * The fault ah_hold makes every address handle of port A wait, as a path
 * query the subnet administrator has not answered: if a burst made one
 * (or asked the directory, or resolved a path), the burst itself would
 * wait, and these tests would hang instead of passing. B advertises no
 * connected mode (shm_cm_listen=none), so everything A sends it goes over
 * UD, in the order it was posted, which the tests check.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "ipoib_peer.h"
#include "ipoib_tx_held.h"
#include "ipoib_wire.h"
#include "rte_pmd_ipoib_cm.h"
#include "shm_fabric.h"
#include "test.h"
#include "test_frames.h"
#include "test_raw.h"
#include "test_util.h"

#define HELD_QUIET_MS	300	/* B hears nothing while A's AH waits */
#define HELD_LEN	200
#define HELD_OVER	1200	/* more than the 1024 frames held */
#define HELD_RING	1024
#define HELD_BURST	32	/* the control thread takes this many */
#define HELD_FIRST	1800	/* within B's UD receive ring */
#define HELD_ANON	500	/* of them held before B is a peer */
#define HELD_FIRST_ROUNDS	3

struct held_pair {
	char an[32], bn[32];
	uint16_t a, b;
	struct rte_ether_addr amac, bmac;
};

static int
held_open(struct held_pair *p, const char *tag)
{
	const char *fab = test_fabric(tag);
	char args[160];

	snprintf(p->an, sizeof(p->an), "net_ipoibcm_%sa", tag);
	snprintf(p->bn, sizeof(p->bn), "net_ipoibcm_%sb", tag);
	snprintf(args, sizeof(args), "fabric=%s,guid=0xa", fab);
	TEST_RUN(test_port_create(p->an, args, 1, 1500, &p->a));
	snprintf(args, sizeof(args), "fabric=%s,guid=0xb,shm_cm_listen=none",
		 fab);
	TEST_RUN(test_port_create(p->bn, args, 1, 1500, &p->b));
	rte_eth_macaddr_get(p->a, &p->amac);
	rte_eth_macaddr_get(p->b, &p->bmac);
	return 0;
}

static void
held_close(struct held_pair *p)
{
	test_port_destroy(p->bn);
	test_port_destroy(p->an);
}

static int
held_ah_hold(uint16_t port, bool on)
{
	struct rte_pmd_ipoibcm_faults f;

	TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_get(port, &f), 0, "faults");
	f.ah_hold = on;
	TEST_ASSERT_EQ(rte_pmd_ipoibcm_faults_set(port, &f), 0, "ah_hold");
	return 0;
}

/*
 * Frames seq from..to-1 from src to dst, one burst each: taken at once
 * (held), or sent again until taken (a burst gives a frame back while
 * frames to its peer are still held).
 */
static int
held_send(uint16_t port, const struct rte_ether_addr *src,
	  const struct rte_ether_addr *dst, uint32_t from, uint32_t to,
	  bool at_once)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;
	uint32_t i;

	for (i = from; i < to; i++) {
		struct rte_mbuf *m = test_udp_frame(src, dst, HELD_LEN, i,
						    false);

		TEST_ASSERT(m != NULL, "frame");
		while (rte_eth_tx_burst(port, 0, &m, 1) == 0) {
			if (at_once || test_now_ms() > deadline) {
				rte_pktmbuf_free(m);
				TEST_ASSERT(false, "frame %u not taken", i);
			}
		}
	}
	return 0;
}

/* Frames seq from..to-1 from src to dst, made now, into m[]. */
static int
held_make(struct rte_mbuf **m, const struct rte_ether_addr *src,
	  const struct rte_ether_addr *dst, uint32_t from, uint32_t to)
{
	uint32_t i;

	for (i = from; i < to; i++) {
		m[i - from] = test_udp_frame(src, dst, HELD_LEN, i, false);
		if (m[i - from] == NULL) {
			rte_pktmbuf_free_bulk(m, i - from);
			TEST_ASSERT(false, "frame %u", i);
		}
	}
	return 0;
}

/* n frames of m[] in bursts back to back, what one gives back again. */
static int
held_blast(uint16_t port, struct rte_mbuf **m, uint32_t n)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;
	uint32_t done = 0;

	while (done < n && test_now_ms() < deadline)
		done += rte_eth_tx_burst(port, 0, &m[done],
					 (uint16_t)RTE_MIN(n - done,
							   (uint32_t)HELD_BURST));
	if (done < n) {
		rte_pktmbuf_free_bulk(&m[done], n - done);
		TEST_ASSERT(false, "%u of %u frames not taken", n - done, n);
	}
	return 0;
}

/* How many frames arrive at port within quiet_ms. */
static unsigned int
held_heard(uint16_t port, uint64_t quiet_ms)
{
	uint64_t deadline = test_now_ms() + quiet_ms;
	struct rte_mbuf *rx[32];
	unsigned int got = 0;
	uint16_t n;

	while (test_now_ms() < deadline) {
		n = rte_eth_rx_burst(port, 0, rx, RTE_DIM(rx));
		rte_pktmbuf_free_bulk(rx, n);
		got += n;
	}
	return got;
}

/* A's opackets reach want (the control thread counts what it sent). */
static bool
held_wait_opackets(uint16_t port, uint64_t want)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;
	struct rte_eth_stats st;

	do {
		if (rte_eth_stats_get(port, &st) == 0 && st.opackets == want)
			return true;
	} while (test_now_ms() < deadline);
	printf("    opackets %" PRIu64 ", want %" PRIu64 "\n", st.opackets,
	       want);
	return false;
}

/*
 * A sends to B's MAC, of which it knows nothing: the directory lookup,
 * the peer and its handle are the control thread's. 100 frames held
 * while the handle waits, then released: all arrive, in order, and the
 * next 100 after them.
 */
static int
test_held_directory(void)
{
	struct held_pair p;
	struct rte_eth_stats st;

	TEST_RUN(held_open(&p, "hd"));
	TEST_RUN(held_ah_hold(p.a, true));
	TEST_RUN(held_send(p.a, &p.amac, &p.bmac, 0, 100, true));
	TEST_ASSERT_EQ(held_heard(p.b, HELD_QUIET_MS), 0,
		       "nothing reaches B before A has its handle");
	TEST_RUN(held_ah_hold(p.a, false));
	TEST_RUN(test_expect_seq(p.b, 0, 100));
	TEST_RUN(held_send(p.a, &p.amac, &p.bmac, 100, 200, false));
	TEST_RUN(test_expect_seq(p.b, 100, 200));
	TEST_ASSERT(held_wait_opackets(p.a, 200), "A counted 200 sent");
	TEST_ASSERT(test_xstat(p.a, "tx_held") >= 100, "the first 100 held");
	TEST_ASSERT(test_wait_held(p.a), "every held frame sent");
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_ud_packets"), 200, "all on UD");
	TEST_ASSERT_EQ(rte_eth_stats_get(p.a, &st), 0, "stats");
	TEST_ASSERT_EQ(st.oerrors, 0, "no errors");
	held_close(&p);
	return 0;
}
REGISTER_TEST(held_directory, test_held_directory,
		    "to an unknown MAC: held while the AH waits, then in order");

/*
 * First contact while the bursts go on. A's handles wait, and its control
 * thread with them, on a frame to C; meanwhile A's frames to B's MAC,
 * unknown to it, are held before B is a peer of A's (not counted against
 * it). The wait over, the control thread makes peer B and sends them;
 * once the first has reached B, A's next bursts, back to back, meet B
 * ready: they must not overtake the rest (ipoib_held_anon_bucket()). All
 * arrive, in order.
 */
static int
held_first_round(const char *tag)
{
	struct rte_mbuf **m = calloc(HELD_FIRST, sizeof(*m));
	struct rte_ether_addr cmac;
	struct held_pair p;
	char args[160], cn[32];
	uint16_t c;

	TEST_ASSERT(m != NULL, "array");
	TEST_RUN(held_open(&p, tag));
	snprintf(cn, sizeof(cn), "net_ipoibcm_%sc", tag);
	snprintf(args, sizeof(args), "fabric=%s,guid=0xc,shm_cm_listen=none",
		 test_fabric(tag));
	TEST_RUN(test_port_create(cn, args, 1, 1500, &c));
	rte_eth_macaddr_get(c, &cmac);
	TEST_RUN(held_ah_hold(p.a, true));
	TEST_RUN(held_send(p.a, &p.amac, &cmac, 0, 1, true));
	TEST_RUN(held_send(p.a, &p.amac, &p.bmac, 0, HELD_ANON, true));
	TEST_RUN(held_make(m, &p.amac, &p.bmac, HELD_ANON, HELD_FIRST));
	TEST_RUN(held_ah_hold(p.a, false));
	TEST_RUN(held_blast(p.a, m, HELD_FIRST - HELD_ANON));
	free(m);
	TEST_RUN(test_expect_seq(p.b, 0, HELD_FIRST));
	TEST_ASSERT(test_wait_held(p.a), "every held frame sent");
	printf("    %s: %" PRIu64 " held, bursts stopped behind them %" PRIu64
	       " times\n", tag, test_xstat(p.a, "tx_held"),
	       test_xstat(p.a, "tx_held_busy"));
	test_port_destroy(cn);
	held_close(&p);
	return 0;
}

/* The overtaking it forbids is a race: several first contacts. */
static int
test_held_first_contact(void)
{
	char tag[8];
	int r;

	for (r = 0; r < HELD_FIRST_ROUNDS; r++) {
		snprintf(tag, sizeof(tag), "hf%d", r);
		TEST_RUN(held_first_round(tag));
	}
	return 0;
}
REGISTER_TEST(held_first_contact, test_held_first_contact,
	      "to a MAC not known yet, without a pause: in order");

/*
 * A learns B on its receive lcore (B sends first): the burst publishes
 * the peer and returns; its handle is the control thread's, and waits.
 * A's replies meanwhile are held behind it, then go in order.
 */
static int
test_held_learned(void)
{
	struct rte_mbuf *rx[16];
	struct held_pair p;

	TEST_RUN(held_open(&p, "hl"));
	TEST_RUN(held_ah_hold(p.a, true));
	TEST_RUN(held_send(p.b, &p.bmac, &p.amac, 0, 10, false));
	TEST_ASSERT_EQ(test_rx_until(p.a, rx, 10, TEST_HANG_MS), 10,
		       "A received B's 10 while its handle for B waits");
	rte_pktmbuf_free_bulk(rx, 10);
	TEST_RUN(held_send(p.a, &p.amac, &p.bmac, 0, 50, true));
	TEST_ASSERT_EQ(held_heard(p.b, HELD_QUIET_MS), 0,
		       "nothing reaches B before A has its handle");
	TEST_RUN(held_ah_hold(p.a, false));
	TEST_RUN(test_expect_seq(p.b, 0, 50));
	TEST_RUN(held_send(p.a, &p.amac, &p.bmac, 50, 100, false));
	TEST_RUN(test_expect_seq(p.b, 50, 100));
	TEST_ASSERT(held_wait_opackets(p.a, 100), "A counted 100 sent");
	TEST_ASSERT(test_xstat(p.a, "tx_held") >= 50, "the first 50 held");
	TEST_ASSERT(test_wait_held(p.a), "every held frame sent");
	held_close(&p);
	return 0;
}
REGISTER_TEST(held_learned, test_held_learned,
		    "to a peer learned on rx: held until its AH exists");

/*
 * A ready peer whose held frames the control thread has sent but not yet
 * counted down (descheduled between the two, as under load; made here by
 * adding one to the peer's count, which the test takes back): a burst
 * holds IPOIB_HELD_LATE frames behind them, which the control thread
 * sends, and gives the next back untouched (tx_held_busy). Once the count
 * is down the lcore sends again itself, and the next such episode may
 * hold as many. Everything arrives, in order.
 */
static int
test_held_late(void)
{
	struct ipoib_priv *priv;
	struct ipoib_peer *peer;
	struct held_pair p;
	struct rte_mbuf *m;
	uint64_t held, busy;
	uint32_t seq, round;

	TEST_RUN(held_open(&p, "hl"));
	/* first contact: held until A has B's handle */
	TEST_RUN(held_send(p.a, &p.amac, &p.bmac, 0, 1, false));
	TEST_RUN(test_expect_seq(p.b, 0, 1));
	TEST_ASSERT(test_wait_held(p.a), "the held frame sent");
	priv = rte_eth_devices[p.a].data->dev_private;
	peer = ipoib_peer_by_mac(priv, &p.bmac);
	TEST_ASSERT(peer != NULL &&
		    __atomic_load_n(&peer->ah, __ATOMIC_ACQUIRE) != NULL,
		    "B is a ready peer of A's");
	for (seq = 1, round = 0; round < 2; round++) {
		held = test_xstat(p.a, "tx_held");
		busy = test_xstat(p.a, "tx_held_busy");
		__atomic_fetch_add(&peer->held, 1, __ATOMIC_RELAXED);
		TEST_RUN(held_send(p.a, &p.amac, &p.bmac, seq,
				   seq + IPOIB_HELD_LATE, true));
		seq += IPOIB_HELD_LATE;
		m = test_udp_frame(&p.amac, &p.bmac, HELD_LEN, seq, false);
		TEST_ASSERT(m != NULL, "frame");
		TEST_ASSERT_EQ(rte_eth_tx_burst(p.a, 0, &m, 1), 0,
			       "round %u: the next frame is given back", round);
		rte_pktmbuf_free(m);
		TEST_ASSERT_EQ(test_xstat(p.a, "tx_held") - held,
			       IPOIB_HELD_LATE, "round %u: held late", round);
		TEST_ASSERT_EQ(test_xstat(p.a, "tx_held_busy") - busy, 1,
			       "round %u: one burst stopped", round);
		TEST_RUN(test_expect_seq(p.b, seq - IPOIB_HELD_LATE, seq));
		ipoib_held_done(peer);	/* the count the test made up */
		/* tx_held_done is stored after the peer's counts go down */
		TEST_ASSERT(test_wait_held(p.a), "round %u: held sent", round);
		TEST_ASSERT_EQ(__atomic_load_n(&peer->held, __ATOMIC_ACQUIRE),
			       0, "round %u: none held", round);
		/* the lcore's own again: taken at once, not held */
		TEST_RUN(held_send(p.a, &p.amac, &p.bmac, seq, seq + 1, true));
		TEST_RUN(test_expect_seq(p.b, seq, seq + 1));
		seq++;
		TEST_ASSERT_EQ(test_xstat(p.a, "tx_held") - held,
			       IPOIB_HELD_LATE, "round %u: sent, not held",
			       round);
	}
	TEST_ASSERT(test_wait_held(p.a), "every held frame sent");
	held_close(&p);
	return 0;
}
REGISTER_TEST(held_late, test_held_late,
		    "a ready peer with frames held: a few held behind, then given back");

/*
 * More than the ring holds: frames are taken until it is full, then the
 * burst gives the frame back untouched, as a full queue does (counted in
 * tx_held_busy); every one taken is sent once the handle exists, none is
 * dropped.
 */
static int
test_held_overflow(void)
{
	struct rte_mbuf *m = NULL, *copy;
	struct rte_eth_stats st;
	struct held_pair p;
	uint64_t held;
	uint32_t i;

	TEST_RUN(held_open(&p, "ho"));
	TEST_RUN(held_ah_hold(p.a, true));
	for (i = 0; i < HELD_OVER; i++) {
		m = test_udp_frame(&p.amac, &p.bmac, HELD_LEN, i, false);
		TEST_ASSERT(m != NULL, "frame");
		copy = rte_pktmbuf_copy(m, test_mempool(), 0, UINT32_MAX);
		TEST_ASSERT(copy != NULL, "copy");
		if (rte_eth_tx_burst(p.a, 0, &m, 1) == 0) {
			bool same = test_frames_equal(m, copy);

			rte_pktmbuf_free(m);
			rte_pktmbuf_free(copy);
			TEST_ASSERT(same, "the frame given back is unchanged");
			break;
		}
		rte_pktmbuf_free(copy);
	}
	TEST_RUN(held_ah_hold(p.a, false));
	held = test_xstat(p.a, "tx_held");
	printf("    taken and held %u, then one given back\n", i);
	TEST_ASSERT(i < HELD_OVER, "the ring filled");
	TEST_ASSERT_EQ(held, i, "every frame taken was held");
	/* the ring, and what the control thread took before it waited */
	TEST_ASSERT(held >= HELD_RING && held <= HELD_RING + HELD_BURST,
		    "held %" PRIu64, held);
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_held_busy"), 1,
		       "the burst that stopped is counted");
	TEST_ASSERT(test_wait_held(p.a), "every held frame sent");
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_ud_packets"), held, "sent on UD");
	TEST_ASSERT(held_wait_opackets(p.a, held), "opackets: those sent");
	TEST_ASSERT_EQ(rte_eth_stats_get(p.a, &st), 0, "stats");
	TEST_ASSERT_EQ(st.oerrors, 0, "nothing dropped");
	held_heard(p.b, 0);
	held_close(&p);
	return 0;
}
REGISTER_TEST(held_overflow, test_held_overflow,
		    "beyond the held ring: given back untouched, the rest sent");

/* A UDP datagram to an IPv4 group, its payload's first byte seq's. */
static int
held_send_group(uint16_t port, const struct rte_ether_addr *src,
		uint32_t group, uint32_t from, uint32_t to)
{
	struct rte_ether_addr gmac;
	uint8_t l4[sizeof(struct rte_udp_hdr) + 16];
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)l4;
	struct tf f;
	uint32_t i;

	tf_group_mac4(&gmac, group);
	for (i = from; i < to; i++) {
		memset(l4, 0, sizeof(l4));
		udp->src_port = RTE_BE16(4000);
		udp->dst_port = RTE_BE16(4001);
		udp->dgram_len = rte_cpu_to_be_16(sizeof(l4));
		l4[sizeof(*udp)] = (uint8_t)(i + TEST_SEQ_OFF);
		tf_ipv4(&f, src, &gmac, TF_IP_A, group,
			IPPROTO_UDP, l4, sizeof(l4), 0);
		TEST_RUN(tf_send(port, &f));
	}
	return 0;
}

/*
 * A sends to a group it never joined: the group's address handle is the
 * control thread's to make (Linux makes it with its send-only join), and
 * waits. B, which joined the group, hears nothing until it exists, then
 * every frame, in order.
 */
static int
test_held_mcast(void)
{
	/* a MAC stands for 23 bits: the group B joins from it is 224.1.2.3 */
	const uint32_t group = TF_IPV4(224, 1, 2, 3);
	struct rte_ether_addr gmac;
	struct held_pair p;
	uint64_t groups;

	TEST_RUN(held_open(&p, "hm"));
	tf_group_mac4(&gmac, group);
	groups = test_xstat(p.b, "mcast_groups");
	TEST_ASSERT_EQ(rte_eth_dev_set_mc_addr_list(p.b, &gmac, 1), 0, "");
	TEST_ASSERT(test_wait_xstat(p.b, "mcast_groups", groups + 1,
				    TEST_HANG_MS), "B joined the group");
	TEST_RUN(held_ah_hold(p.a, true));
	TEST_RUN(held_send_group(p.a, &p.amac, group, 0, 20));
	TEST_ASSERT_EQ(held_heard(p.b, HELD_QUIET_MS), 0,
		       "nothing reaches B before A has the group's handle");
	TEST_RUN(held_ah_hold(p.a, false));
	TEST_RUN(test_expect_seq(p.b, 0, 20));
	TEST_RUN(held_send_group(p.a, &p.amac, group, 20, 40));
	TEST_RUN(test_expect_seq(p.b, 20, 40));
	TEST_ASSERT(held_wait_opackets(p.a, 40), "A counted 40 sent");
	TEST_ASSERT_EQ(test_xstat(p.a, "tx_mcast_packets"), 40, "");
	held_close(&p);
	return 0;
}
REGISTER_TEST(held_mcast, test_held_mcast,
		    "to a group without an AH: held until the control thread made it");

/*
 * No path to a peer: its address handle cannot be made (here a raw port R
 * is heard, then leaves the fabric before A's handle for it is made). The
 * control thread tries once; for a while after, the lcores drop frames to
 * it at once (tx_drop_no_neigh) instead of holding them for another try
 * each: at most one more try per burst, never one per frame.
 */
static int
test_held_no_path(void)
{
	const char *fab = test_fabric("t_hnp");
	uint8_t a_hw[IPOIB_HWADDR_LEN], payload[64];
	struct rte_ether_addr amac, rmac;
	struct rte_mbuf *m, *tx[32];
	uint64_t fails0, fails;
	unsigned int b, i, sent = 0;
	char args[96];
	struct raw r;
	uint16_t a;

	snprintf(args, sizeof(args), "fabric=%s,guid=0xa,pkey=0x8001", fab);
	TEST_RUN(test_port_create("net_ipoibcm_hnpa", args, 1, 1500, &a));
	TEST_RUN(raw_open(&r, fab));
	rte_eth_macaddr_get(a, &amac);
	TEST_ASSERT_EQ(shm_addr_resolve(r.port, amac.addr_bytes, a_hw), 0,
		       "A's address, seen from R");
	fails0 = test_xstat(a, "peer_learn_failures");
	TEST_RUN(held_ah_hold(a, true));
	memset(payload, 0, sizeof(payload));
	payload[0] = 0x45;	/* IPv4, 20-byte header */
	payload[3] = sizeof(payload);
	payload[8] = 64;
	payload[9] = IPPROTO_UDP;
	TEST_RUN(raw_post(&r, 0, IPOIB_QKEY_DEFAULT, a_hw, true,
			  RTE_ETHER_TYPE_IPV4, payload, sizeof(payload)));
	TEST_ASSERT_EQ(test_rx_until(a, &m, 1, TEST_HANG_MS), 1,
		       "A heard R (and learned it; its handle waits)");
	rte_ether_addr_copy(&rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->
			    src_addr, &rmac);
	rte_pktmbuf_free(m);
	raw_close(&r);		/* R leaves: no path to it any more */
	TEST_RUN(held_ah_hold(a, false));
	TEST_ASSERT(test_wait_xstat(a, "peer_learn_failures", fails0 + 1,
				    TEST_HANG_MS), "A's handle for R failed");
	for (b = 0; b < 4; b++) {
		for (i = 0; i < RTE_DIM(tx); i++) {
			tx[i] = test_udp_frame(&amac, &rmac, 100, i, false);
			TEST_ASSERT(tx[i] != NULL, "frame");
		}
		i = rte_eth_tx_burst(a, 0, tx, RTE_DIM(tx));
		rte_pktmbuf_free_bulk(tx + i, RTE_DIM(tx) - i);
		TEST_ASSERT_EQ(i, RTE_DIM(tx), "burst %u taken", b);
		sent += i;
	}
	TEST_ASSERT(test_wait_xstat(a, "tx_drop_no_neigh", sent,
				    TEST_HANG_MS), "every frame to R counted");
	TEST_ASSERT(test_wait_held(a), "nothing left held");
	fails = test_xstat(a, "peer_learn_failures") - fails0;
	printf("    %u frames to R dropped; %" PRIu64 " handle tries\n",
	       sent, fails);
	TEST_ASSERT(fails <= 1 + b, "at most one try per burst: %" PRIu64,
		    fails);
	test_port_destroy("net_ipoibcm_hnpa");
	return 0;
}
REGISTER_TEST(held_no_path, test_held_no_path,
		    "no path to a peer: its frames dropped, counted, tried per burst at most");
