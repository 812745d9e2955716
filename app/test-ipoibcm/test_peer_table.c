/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The peer table grows with the peers learned (ipoib_peer.c, its indexes
 * ipoib_peer_hash.c): a port sized for max_conns=1024 (16384 peers) holds
 * almost nothing of it before the first peer, and 10,000 learned peers
 * cost at most 256 bytes each of EAL heap, everything the table allocates
 * included (chunks of peers, each queue's counters of them, the three
 * indexes and what they replaced, the rings). Every peer is then found by
 * its hardware address and its MAC, unknown ones are not, a (LID, QPN)
 * moves from one peer to another, and a table at its bound refuses the
 * next peer. The peers are learned from this thread as an lcore's burst
 * learns them; this thread is no RCU reader, so it holds the port's
 * control lock while it learns and looks up (as the driver's API does):
 * the control thread frees no index it may be reading.
 */

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "ipoib_cm.h"
#include "ipoib_eth.h"
#include "ipoib_mem.h"
#include "ipoib_peer.h"
#include "ipoib_telemetry.h"
#include "test.h"
#include "test_util.h"

#define PT_PEERS		10000
#define PT_BYTES_PER_PEER	256	/* issue 13's target */
#define PT_EMPTY_BYTES		(64 * 1024)	/* before the first peer */

/* Peer i's hardware address: its own GID and QPN, no flags (UD). */
static void
pt_hw(struct ipoib_hwaddr *hw, uint32_t i, uint32_t qpn)
{
	uint8_t gid[IPOIB_GID_LEN] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				       0x02, 0x11, 0x22, 0xff };

	gid[12] = (uint8_t)(i >> 24);
	gid[13] = (uint8_t)(i >> 16);
	gid[14] = (uint8_t)(i >> 8);
	gid[15] = (uint8_t)i;
	ipoib_hwaddr_set(hw, 0, qpn, gid);
}

/*
 * What the peer table holds of EAL's heap: peers, their counters, the
 * indexes (its rings are of fixed sizes, none per peer).
 */
static uint64_t
pt_bytes(uint16_t port)
{
	return test_xstat(port, "mem_peer_table_bytes") +
	       test_xstat(port, "mem_hash_bytes");
}

static int
pt_open(const char *name, const char *base, const char *extra,
	uint16_t *port, struct ipoib_priv **priv)
{
	char args[128];

	snprintf(args, sizeof(args), "fabric=%s,%s", test_fabric(base),
		 extra);
	TEST_RUN(test_port_create(name, args, 1, 1500, port));
	*priv = ipoib_priv_of_port(*port);
	TEST_ASSERT(*priv != NULL, "port %u is ours", *port);
	return 0;
}

/* fn under the port's control lock (released whatever fn returns) */
static int
pt_locked(struct ipoib_priv *priv, int (*fn)(struct ipoib_priv *, void *),
	  void *arg)
{
	int ret;

	pthread_mutex_lock(&priv->ctrl_lock);
	ret = fn(priv, arg);
	pthread_mutex_unlock(&priv->ctrl_lock);
	return ret;
}

static int
pt_learn_all(struct ipoib_priv *priv, void *arg)
{
	struct ipoib_hwaddr hw;
	uint32_t i;

	RTE_SET_USED(arg);
	for (i = 0; i < PT_PEERS; i++) {
		pt_hw(&hw, i, 0x100 + i);
		TEST_ASSERT(ipoib_peer_learn(priv, &hw) != NULL,
			    "peer %u learned", i);
	}
	return 0;
}

static int
pt_find_all(struct ipoib_priv *priv, void *arg)
{
	struct ipoib_hwaddr hw, other;
	struct rte_ether_addr mac;
	struct ipoib_peer *p, *q;
	uint32_t i;

	RTE_SET_USED(arg);
	for (i = 0; i < PT_PEERS; i++) {
		pt_hw(&hw, i, 0x100 + i);
		p = ipoib_peer_by_hw(priv, &hw);
		TEST_ASSERT(p != NULL, "peer %u found by its address", i);
		TEST_ASSERT(ipoib_peer_learn(priv, &hw) == p,
			    "peer %u learned once", i);
		ipoib_mac_from_hwaddr(&mac, &hw);
		TEST_ASSERT(ipoib_peer_by_mac(priv, &mac) == p,
			    "peer %u found by its MAC", i);
		/* the same GID with another QPN is another interface */
		pt_hw(&other, i, 0x100 + i + PT_PEERS);
		TEST_ASSERT(ipoib_peer_by_hw(priv, &other) == NULL,
			    "no peer %u at QPN %#x", i, 0x100 + i + PT_PEERS);
	}
	TEST_ASSERT_EQ(__atomic_load_n(&priv->pt.nr_used, __ATOMIC_RELAXED),
		       PT_PEERS, "%u peers in use", PT_PEERS);
	/* a (LID, QPN) names one peer; a new GID behind it takes it over */
	pt_hw(&hw, 1, 0x100 + 1);
	p = ipoib_peer_learn_at(priv, &hw, 7, 0x101);
	TEST_ASSERT(p != NULL && ipoib_peer_by_lid(priv, 7, 0x101) == p,
		    "peer 1 bound to LID 7");
	TEST_ASSERT(ipoib_peer_by_lid(priv, 7, 0x102) == NULL,
		    "LID 7 with another QPN names nobody");
	pt_hw(&hw, PT_PEERS + 1, 0x101);
	q = ipoib_peer_learn_at(priv, &hw, 7, 0x101);
	TEST_ASSERT(q != NULL && q != p, "a new peer behind LID 7");
	TEST_ASSERT(ipoib_peer_by_lid(priv, 7, 0x101) == q,
		    "LID 7 and QPN 0x101 moved to it");
	TEST_ASSERT_EQ(__atomic_load_n(&p->lid, __ATOMIC_RELAXED), 0,
		       "peer 1 lost LID 7");
	return 0;
}

/* The table of *n peers filled, then one more refused. */
static int
pt_fill(struct ipoib_priv *priv, void *arg)
{
	uint32_t n = *(uint32_t *)arg, i;
	struct ipoib_hwaddr hw;

	for (i = 0; i < n; i++) {
		pt_hw(&hw, i, 0x100 + i);
		TEST_ASSERT(ipoib_peer_learn(priv, &hw) != NULL,
			    "peer %u of %u learned", i, n);
	}
	pt_hw(&hw, n, 0x100 + n);
	TEST_ASSERT(ipoib_peer_learn(priv, &hw) == NULL,
		    "peer %u refused: the table is full", n);
	TEST_ASSERT_EQ(__atomic_load_n(&priv->pt.nr_alloc, __ATOMIC_ACQUIRE),
		       n, "nothing allocated beyond the bound");
	TEST_ASSERT_EQ(__atomic_load_n(&priv->pt.nr_used, __ATOMIC_RELAXED),
		       n, "%u peers in use", n);
	pt_hw(&hw, 0, 0x100);
	TEST_ASSERT(ipoib_peer_by_hw(priv, &hw) != NULL,
		    "the first peer still there");
	return 0;
}

static int
test_peer_table_on_demand(void)
{
	const char *name = "net_ipoibcm_ptd";
	struct ipoib_priv *priv;
	uint64_t b0, b1, per;
	uint16_t port;

	TEST_RUN(pt_open(name, "t_ptd", "max_conns=1024", &port, &priv));
	TEST_ASSERT_EQ(priv->pt.nr_max, 16 * 1024, "room for 16384 peers");
	b0 = pt_bytes(port);
	printf("    before the first peer: %" PRIu64 " bytes\n", b0);
	TEST_ASSERT(b0 < PT_EMPTY_BYTES, "the table allocates as it fills: "
		    "%" PRIu64 " bytes before the first peer", b0);
	TEST_RUN(pt_locked(priv, pt_learn_all, NULL));
	/* the indexes they outgrew are freed after a grace period */
	TEST_ASSERT(test_wait_peers_settled(port), "outgrown indexes freed");
	b1 = pt_bytes(port);
	per = (b1 - b0) / PT_PEERS;
	printf("    %u peers: %" PRIu64 " bytes, %" PRIu64 " a peer "
	       "(peer table %" PRIu64 ", indexes %" PRIu64 ")\n", PT_PEERS,
	       b1, per, test_xstat(port, "mem_peer_table_bytes"),
	       test_xstat(port, "mem_hash_bytes"));
	TEST_ASSERT(per <= PT_BYTES_PER_PEER, "%" PRIu64 " bytes a peer, "
		    "at most %u", per, PT_BYTES_PER_PEER);
	TEST_RUN(pt_locked(priv, pt_find_all, NULL));
	test_port_destroy(name);
	return 0;
}
REGISTER_TEST(peer_table_on_demand, test_peer_table_on_demand,
	      "peer table: allocated as peers are learned, at most 256 bytes "
	      "a peer at 10,000; every peer found");

/*
 * Filled under the control lock: the table's 2-second eviction (7/8
 * full, ipoib_peers_gc()) runs on the control thread, which waits.
 */
static int
test_peer_table_full(void)
{
	const char *name = "net_ipoibcm_ptf";
	struct ipoib_priv *priv;
	uint16_t port;
	uint32_t n;

	TEST_RUN(pt_open(name, "t_ptf", "max_conns=1", &port, &priv));
	n = priv->pt.nr_max;
	TEST_ASSERT_EQ(n, IPOIB_PEERS_MIN, "the smallest table");
	/* the control lock also keeps the table's eviction from running */
	TEST_RUN(pt_locked(priv, pt_fill, &n));
	/*
	 * peer_learn_failures counts it, and also each address handle the
	 * control thread could not make (these GIDs are on no fabric)
	 */
	TEST_ASSERT(test_xstat(port, "peer_learn_failures") >= 1,
		    "the refusal counted");
	test_port_destroy(name);
	return 0;
}
REGISTER_TEST(peer_table_full, test_peer_table_full,
	      "peer table: at its bound the next peer is refused, counted");

/*
 * The index itself (ipoib_peer_hash.c), over keys of its own: 5000 added,
 * 4900 of them deleted (the table shrinks, its old tables freed once
 * their grace period passed, no reader being online), the rest still
 * found and the deleted ones not; then added back. EAL's heap goes back
 * to where it was.
 */
#define PH_KEYS		5000
#define PH_KEEP		100

static uint64_t ph_key[PH_KEYS];

static uint32_t
ph_hash(uint64_t k)
{
	return (uint32_t)(k * 0x9e3779b97f4a7c15ULL >> 32);
}

static uint32_t
ph_hash_of(void *arg, uint32_t idx)
{
	RTE_SET_USED(arg);
	return ph_hash(ph_key[idx]);
}

static bool
ph_grace(void *qsbr, uint64_t token)
{
	return rte_rcu_qsbr_check(qsbr, token, false) == 1;
}

/* The index of key k, or -1: a reader's probe. */
static int64_t
ph_find(const struct ipoib_ph *h, uint64_t k)
{
	const struct ipoib_ph_tab *t = ipoib_ph_tab(h);
	uint32_t i, v;

	for (i = ph_hash(k); t != NULL; i++) {
		v = ipoib_ph_slot(t, i);
		if (v == IPOIB_PH_EMPTY)
			break;
		if (v != IPOIB_PH_TOMB && ph_key[v - 1] == k)
			return v - 1;
	}
	return -1;
}

static int
test_peer_hash_index(void)
{
	struct rte_rcu_qsbr *qsbr;
	struct ipoib_mem acct;
	struct ipoib_ph h;
	uint64_t heap0;
	uint32_t i, big;

	memset(&acct, 0, sizeof(acct));
	qsbr = rte_zmalloc(NULL, rte_rcu_qsbr_get_memsize(1), 0);
	TEST_ASSERT(qsbr != NULL && rte_rcu_qsbr_init(qsbr, 1) == 0, "RCU");
	heap0 = ipoib_mem_heap_allocated();
	ipoib_ph_init(&h, &acct, ph_hash_of, NULL);
	for (i = 0; i < PH_KEYS; i++) {
		/* keys that share hash buckets: probes cross each other */
		ph_key[i] = (uint64_t)(i % 97) << 40 | i;
		TEST_ASSERT_EQ(ipoib_ph_add(&h, ph_hash(ph_key[i]), i, qsbr), 0,
			       "key %u added", i);
	}
	big = ipoib_ph_tab(&h)->mask + 1;
	TEST_ASSERT(3 * big >= 4 * PH_KEYS, "%u slots for %u keys: at most "
		    "three quarters full", big, PH_KEYS);
	for (i = 0; i < PH_KEYS; i++)
		TEST_ASSERT_EQ(ph_find(&h, ph_key[i]), (int64_t)i,
			       "key %u found", i);
	TEST_ASSERT_EQ(ph_find(&h, 1ULL << 63), -1, "no such key");
	for (i = PH_KEEP; i < PH_KEYS; i++)
		TEST_ASSERT(ipoib_ph_del(&h, ph_hash(ph_key[i]), i, qsbr),
			    "key %u deleted", i);
	TEST_ASSERT(!ipoib_ph_del(&h, ph_hash(ph_key[0]), PH_KEYS, qsbr),
		    "an index that is not there");
	TEST_ASSERT(ipoib_ph_tab(&h)->mask + 1 < big / 8, "shrunk: %u slots",
		    ipoib_ph_tab(&h)->mask + 1);
	for (i = 0; i < PH_KEYS; i++)
		TEST_ASSERT_EQ(ph_find(&h, ph_key[i]),
			       i < PH_KEEP ? (int64_t)i : -1,
			       "key %u %s", i, i < PH_KEEP ? "kept" : "gone");
	TEST_ASSERT(!ipoib_ph_settled(&h), "replaced tables wait");
	ipoib_ph_reclaim(&h, ph_grace, qsbr);
	TEST_ASSERT(ipoib_ph_settled(&h), "no reader: all freed");
	for (i = PH_KEEP; i < PH_KEYS; i++)
		TEST_ASSERT_EQ(ipoib_ph_add(&h, ph_hash(ph_key[i]), i, qsbr), 0,
			       "key %u added back", i);
	for (i = 0; i < PH_KEYS; i++)
		TEST_ASSERT_EQ(ph_find(&h, ph_key[i]), (int64_t)i,
			       "key %u found again", i);
	ipoib_ph_fini(&h);
	TEST_ASSERT_EQ(ipoib_mem_heap_allocated(), heap0, "EAL's heap back");
	TEST_ASSERT_EQ(acct.bytes[IPOIB_MEM_HASH], 0, "its category back");
	rte_free(qsbr);
	return 0;
}
REGISTER_TEST(peer_hash_index, test_peer_hash_index,
	      "peer index: grows, shrinks, finds what it holds and nothing "
	      "else, frees what it replaced");
