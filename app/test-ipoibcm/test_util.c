/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Helpers shared by the tests: ports, frames, waiting for a condition.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "ipoib_cm.h"
#include "ipoib_telemetry.h"
#include "test.h"
#include "test_util.h"

static struct rte_mempool *test_mp;

struct rte_mempool *
test_mempool(void)
{
	if (test_mp == NULL)
		test_mp = rte_pktmbuf_pool_create("test_mp", 16383, 256, 0,
						  RTE_MBUF_DEFAULT_BUF_SIZE,
						  rte_socket_id());
	return test_mp;
}

const char *
test_fabric(const char *base)
{
	static char names[8][32];
	static unsigned int next;
	char *n = names[next++ % RTE_DIM(names)];

	snprintf(n, sizeof(names[0]), "%.20s_%d", base, (int)getpid());
	return n;
}

int
test_port_setup(uint16_t port, uint16_t nb_q, uint16_t mtu)
{
	return test_port_setup_rss(port, nb_q, mtu, 0);
}

int
test_port_setup_rss(uint16_t port, uint16_t nb_q, uint16_t mtu,
		    uint64_t rss_hf)
{
	struct rte_eth_conf conf = { .intr_conf.lsc = 1 };
	uint16_t q;

	if (rss_hf != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = rss_hf;
	}
	if (mtu > RTE_MBUF_DEFAULT_DATAROOM)
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	if (rte_eth_dev_configure(port, nb_q, nb_q, &conf) != 0 ||
	    rte_eth_dev_set_mtu(port, mtu) != 0)
		return -1;
	for (q = 0; q < nb_q; q++) {
		if (rte_eth_rx_queue_setup(port, q, 256, rte_socket_id(),
					   NULL, test_mp) != 0 ||
		    rte_eth_tx_queue_setup(port, q, 256, rte_socket_id(),
					   NULL) != 0)
			return -1;
	}
	return rte_eth_dev_start(port) == 0 ? 0 : -1;
}

int
test_port_create(const char *name, const char *args, uint16_t nb_q,
		 uint16_t mtu, uint16_t *port)
{
	return test_port_create_rss(name, args, nb_q, mtu, 0, port);
}

int
test_port_create_rss(const char *name, const char *args, uint16_t nb_q,
		     uint16_t mtu, uint64_t rss_hf, uint16_t *port)
{
	if (test_mempool() == NULL || rte_vdev_init(name, args) != 0 ||
	    rte_eth_dev_get_port_by_name(name, port) != 0)
		return -1;
	return test_port_setup_rss(*port, nb_q, mtu, rss_hf);
}

void
test_port_destroy(const char *name)
{
	uint16_t port;

	if (rte_eth_dev_get_port_by_name(name, &port) == 0) {
		rte_eth_dev_stop(port);
		rte_eth_dev_close(port);
	}
	rte_vdev_uninit(name);
}

/* An Ethernet/IPv4/UDP frame of len bytes, payload filled with seq. */
struct rte_mbuf *
test_udp_frame(const struct rte_ether_addr *src,
	       const struct rte_ether_addr *dst, uint32_t len, uint32_t seq,
	       bool df)
{
	uint32_t hdr = sizeof(struct rte_ether_hdr) +
		       sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr);
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp), *seg = m, *prev;
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	uint32_t left = len, off = 0;

	if (m == NULL || len < hdr)
		goto fail;
	/* fill segment by segment */
	while (left > 0) {
		uint32_t n = RTE_MIN(left, (uint32_t)rte_pktmbuf_tailroom(seg));
		uint8_t *p = (uint8_t *)rte_pktmbuf_append(seg, (uint16_t)n);
		uint32_t i;

		for (i = 0; i < n; i++)
			p[i] = (uint8_t)(seq + off + i);
		off += n;
		left -= n;
		if (left == 0)
			break;
		prev = seg;
		seg = rte_pktmbuf_alloc(test_mp);
		if (seg == NULL)
			goto fail;
		prev->next = seg;
		m->nb_segs++;
	}
	m->pkt_len = len;
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	eth->src_addr = *src;
	eth->dst_addr = *dst;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - sizeof(*eth)));
	ip->packet_id = rte_cpu_to_be_16((uint16_t)seq);
	ip->fragment_offset = df ? rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG) : 0;
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 1));
	ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 2));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = rte_cpu_to_be_16(1024);
	udp->dst_port = rte_cpu_to_be_16(9);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(len - sizeof(*eth) -
						      sizeof(*ip)));
	udp->dgram_cksum = 0;
	return m;
fail:
	rte_pktmbuf_free(m);
	return NULL;
}

/* Send n 200-byte frames, retrying what is pushed back; 0 when all went. */
int
test_send_frames(uint16_t port, const struct rte_ether_addr *src,
		 const struct rte_ether_addr *dst, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = test_udp_frame(src, dst, 200, i, false);

		TEST_ASSERT(m != NULL, "frame");
		TEST_ASSERT(test_tx_one(port, 0, m), "frame %u never taken", i);
	}
	return 0;
}

/*
 * Send one frame, retrying while the queue pushes it back, as an
 * application does: a full queue, or frames to the same destination still
 * held for the control thread (xstat tx_held_busy). The frame is freed
 * when it is never taken.
 */
bool
test_tx_one(uint16_t port, uint16_t queue, struct rte_mbuf *m)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;

	while (rte_eth_tx_burst(port, queue, &m, 1) == 0) {
		if (test_now_ms() > deadline) {
			rte_pktmbuf_free(m);
			return false;
		}
	}
	return true;
}

/* Compare two frames byte by byte, across segments. */
bool
test_frames_equal(const struct rte_mbuf *a, const struct rte_mbuf *b)
{
	uint8_t ba[256], bb[256];
	uint32_t off;

	if (a->pkt_len != b->pkt_len)
		return false;
	for (off = 0; off < a->pkt_len; off += sizeof(ba)) {
		uint32_t n = RTE_MIN((uint32_t)sizeof(ba), a->pkt_len - off);
		const void *pa = rte_pktmbuf_read(a, off, n, ba);
		const void *pb = rte_pktmbuf_read(b, off, n, bb);

		if (memcmp(pa, pb, n) != 0)
			return false;
	}
	return true;
}

/* Receive on port until n frames came or the deadline passed. */
uint16_t
test_rx_until(uint16_t port, struct rte_mbuf **pkts, uint16_t n,
	      uint64_t timeout_ms)
{
	uint64_t deadline = test_now_ms() + timeout_ms;
	uint16_t got = 0;

	while (got < n && test_now_ms() < deadline)
		got += rte_eth_rx_burst(port, 0, pkts + got,
					RTE_MIN(32, n - got));
	return got;
}

/* An xstat by name, or UINT64_MAX. */
uint64_t
test_xstat(uint16_t port, const char *name)
{
	uint64_t id, v;

	if (rte_eth_xstats_get_id_by_name(port, name, &id) != 0 ||
	    rte_eth_xstats_get_by_id(port, &id, &v, 1) != 1)
		return UINT64_MAX;
	return v;
}

void
test_xstats_print(uint16_t port, const char *who)
{
	int nb = rte_eth_xstats_get_names(port, NULL, 0), i;
	struct rte_eth_xstat_name *names = calloc(RTE_MAX(nb, 1),
						  sizeof(*names));
	struct rte_eth_xstat *xs = calloc(RTE_MAX(nb, 1), sizeof(*xs));

	if (nb > 0 && names != NULL && xs != NULL &&
	    rte_eth_xstats_get_names(port, names, nb) == nb &&
	    rte_eth_xstats_get(port, xs, nb) == nb)
		for (i = 0; i < nb; i++)
			if (xs[i].value != 0)
				printf("    %s %s %" PRIu64 "\n", who,
				       names[xs[i].id].name, xs[i].value);
	free(names);
	free(xs);
}

/* Wait (polling, with a deadline) until an xstat reaches a value. */
bool
test_wait_xstat(uint16_t port, const char *name, uint64_t value,
		uint64_t timeout_ms)
{
	uint64_t deadline = test_now_ms() + timeout_ms;

	while (test_now_ms() < deadline)
		if (test_xstat(port, name) == value)
			return true;
	printf("    %s = %" PRIu64 ", expected %" PRIu64 "\n", name,
	       test_xstat(port, name), value);
	return false;
}

bool
test_wait_held(uint16_t port)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;

	while (test_now_ms() < deadline)
		if (test_xstat(port, "tx_held_done") ==
		    test_xstat(port, "tx_held"))
			return true;
	printf("    tx_held %" PRIu64 ", tx_held_done %" PRIu64 "\n",
	       test_xstat(port, "tx_held"), test_xstat(port, "tx_held_done"));
	return false;
}

bool
test_wait_peers_settled(uint16_t port)
{
	const struct ipoib_priv *priv = ipoib_priv_of_port(port);
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;

	if (priv == NULL)
		return false;
	while (!ipoib_peers_settled(&priv->pt)) {
		if (test_now_ms() >= deadline)
			return false;
		usleep(1000);
	}
	return true;
}

/* Receive frames seq from..to-1 at port, in that order. */
int
test_expect_seq(uint16_t port, uint32_t from, uint32_t to)
{
	struct rte_mbuf *rx[64];
	uint32_t seq = from;
	uint16_t n, i;

	while (seq < to) {
		n = test_rx_until(port, rx, (uint16_t)RTE_MIN(to - seq,
				  (uint32_t)RTE_DIM(rx)), TEST_HANG_MS);
		TEST_ASSERT(n > 0, "frames %u..%u never came", seq, to - 1);
		for (i = 0; i < n; i++, seq++) {
			uint8_t got = *rte_pktmbuf_mtod_offset(rx[i],
						uint8_t *, TEST_SEQ_OFF);
			uint8_t want = (uint8_t)(seq + TEST_SEQ_OFF);

			if (got != want) {
				rte_pktmbuf_free_bulk(rx, n);
				TEST_ASSERT(false, "frame %u out of order "
					    "(payload %u, want %u)", seq, got,
					    want);
			}
		}
		rte_pktmbuf_free_bulk(rx, n);
	}
	return 0;
}
