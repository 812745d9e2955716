/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Ports and frames, the same for every driver measured: one rx and one tx
 * queue, UDP/IPv4 frames carrying a sequence number.
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "bench.h"

#define BENCH_UDP_PORT	9	/* discard */
/* 198.18.0.1 -> 198.18.0.2, the benchmarking range (RFC 2544) */
#define BENCH_IP(d)	((UINT32_C(198) << 24) | (UINT32_C(18) << 16) | (d))

static volatile sig_atomic_t quit;

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	quit = 1;
}

void
bench_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}

bool
bench_quit(void)
{
	return quit != 0;
}

struct rte_mempool *
bench_pool(const char *name, unsigned int n)
{
	return rte_pktmbuf_pool_create(name, n, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE,
				       rte_socket_id());
}

/* loopback: the port's rte_eth_conf.lpbk_mode, as pmd_perf_autotest sets */
int
bench_port_start(uint16_t port, struct rte_mempool *mp, bool loopback)
{
	struct rte_eth_conf conf;
	int ret;

	memset(&conf, 0, sizeof(conf));
	conf.lpbk_mode = loopback ? 1 : 0;
	if (!rte_eth_dev_is_valid_port(port)) {
		fprintf(stderr, "port %u: no such port (give --vdev)\n", port);
		return -ENODEV;
	}
	ret = rte_eth_dev_configure(port, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(port, 0, BENCH_RING,
					     rte_socket_id(), NULL, mp);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(port, 0, BENCH_RING,
					     rte_socket_id(), NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	if (ret != 0)
		fprintf(stderr, "port %u: setup failed: %s\n", port,
			rte_strerror(-ret));
	return ret;
}

/* Stopped and closed: net_memif removes its socket file only then. */
void
bench_port_close(uint16_t port)
{
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
}

int
bench_link_wait(uint16_t port, double timeout_s)
{
	uint64_t end = rte_get_timer_cycles() +
		(uint64_t)(timeout_s * rte_get_timer_hz());
	struct rte_eth_link link;

	do {
		if (rte_eth_link_get_nowait(port, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_UP)
			return 0;
		rte_delay_us_sleep(1000);	/* a link poll, not a measure */
	} while (rte_get_timer_cycles() < end && !bench_quit());
	fprintf(stderr, "port %u: link still down after %.0f s\n", port,
		timeout_s);
	return -ETIMEDOUT;
}

struct rte_mbuf *
bench_frame(struct rte_mempool *mp, const struct rte_ether_addr *dst,
	    const struct rte_ether_addr *src, uint32_t size, uint64_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	char *p;

	if (m == NULL)
		return NULL;
	p = rte_pktmbuf_append(m, size);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(p + BENCH_HDRS_LEN, 0, size - BENCH_HDRS_LEN);
	eth = (struct rte_ether_hdr *)p;
	rte_ether_addr_copy(dst, &eth->dst_addr);
	rte_ether_addr_copy(src, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->total_length = rte_cpu_to_be_16(size - RTE_ETHER_HDR_LEN);
	ip->src_addr = rte_cpu_to_be_32(BENCH_IP(1));
	ip->dst_addr = rte_cpu_to_be_32(BENCH_IP(2));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = rte_cpu_to_be_16(BENCH_UDP_PORT);
	udp->dst_port = rte_cpu_to_be_16(BENCH_UDP_PORT);
	udp->dgram_len = rte_cpu_to_be_16(size - RTE_ETHER_HDR_LEN -
					  sizeof(*ip));
	udp->dgram_cksum = 0;
	memcpy(p + BENCH_HDRS_LEN, &seq, sizeof(seq));
	return m;
}

/* The sequence number of one of our frames; UINT64_MAX for any other. */
uint64_t
bench_frame_seq(const struct rte_mbuf *m)
{
	uint64_t seq;

	if (rte_pktmbuf_pkt_len(m) < BENCH_MIN_FRAME ||
	    rte_pktmbuf_data_len(m) < BENCH_MIN_FRAME)
		return UINT64_MAX;
	memcpy(&seq, rte_pktmbuf_mtod_offset(m, const char *, BENCH_HDRS_LEN),
	       sizeof(seq));
	return seq;
}

/* The id of an xstat by name; -ENOENT where the driver has none. */
int
bench_xstat_id(uint16_t port, const char *name, uint64_t *id)
{
	return rte_eth_xstats_get_id_by_name(port, name, id);
}

uint64_t
bench_xstat(uint16_t port, uint64_t id)
{
	uint64_t v = 0;

	if (rte_eth_xstats_get_by_id(port, &id, &v, 1) != 1)
		return 0;
	return v;
}

uint64_t
bench_ns(uint64_t cycles)
{
	return (uint64_t)((double)cycles * 1e9 / (double)rte_get_tsc_hz());
}
