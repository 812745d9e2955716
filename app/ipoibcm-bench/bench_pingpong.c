/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Ping-pong between two processes, both busy-polling port 0: "echo" sends
 * every frame back with its MAC addresses swapped; "ping" sends one frame
 * at a time to the echo's MAC and takes the TSC before the send and when
 * the frame with the same sequence number is back. Per size it prints
 *
 *   rtt size=S count=N lost=L min_ns=.. median_ns=.. p99_ns=.. p999_ns=..
 *       max_ns=.. [ud_rx=U]
 *
 * where ud_rx (drivers with an rx_ud_packets xstat) counts echoes that
 * came back over the datagram path during the measured pings.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "bench.h"

#define PORT		0
#define PING_WAIT_S	1	/* an echo later than this is lost */

static uint64_t
tsc_after(double seconds)
{
	return rte_rdtsc() + (uint64_t)(seconds * rte_get_tsc_hz());
}

/* Send everything, unless quitting or the guard passes. */
static uint16_t
send_all(struct rte_mbuf **pkts, uint16_t n, uint64_t deadline)
{
	uint16_t sent = 0;

	while (sent < n && !bench_quit() && rte_rdtsc() < deadline)
		sent += rte_eth_tx_burst(PORT, 0, pkts + sent, n - sent);
	rte_pktmbuf_free_bulk(pkts + sent, n - sent);
	return sent;
}

int
bench_echo(const struct bench_cfg *cfg)
{
	struct rte_mbuf *pkts[BENCH_BURST];
	struct rte_ether_addr mac;
	struct rte_mempool *mp;
	uint64_t end;
	uint16_t i, n;
	int ret;

	mp = bench_pool("echo_mp", 8191);
	if (mp == NULL)
		return -ENOMEM;
	ret = bench_port_start(PORT, mp, false);
	if (ret != 0)
		return ret;
	rte_eth_macaddr_get(PORT, &mac);
	printf("echo ready mac=" RTE_ETHER_ADDR_PRT_FMT "\n",
	       RTE_ETHER_ADDR_BYTES(&mac));
	fflush(stdout);
	end = tsc_after(cfg->timeout_s);
	while (!bench_quit() && rte_rdtsc() < end) {
		n = rte_eth_rx_burst(PORT, 0, pkts, BENCH_BURST);
		for (i = 0; i < n; i++) {
			struct rte_ether_hdr *eth =
				rte_pktmbuf_mtod(pkts[i], struct rte_ether_hdr *);

			rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
			rte_ether_addr_copy(&mac, &eth->src_addr);
		}
		if (n != 0)
			send_all(pkts, n, end);
	}
	bench_port_close(PORT);
	return 0;
}

/* One round trip; its TSC cycles, or 0 when the echo did not come. */
static uint64_t
ping_one(struct rte_mempool *mp, const struct rte_ether_addr *dst,
	 const struct rte_ether_addr *src, uint32_t size, uint64_t seq)
{
	struct rte_mbuf *pkts[BENCH_BURST];
	uint64_t t0, t1 = 0, deadline;
	uint16_t i, n;

	pkts[0] = bench_frame(mp, dst, src, size, seq);
	if (pkts[0] == NULL)
		return 0;
	t0 = rte_rdtsc_precise();
	deadline = t0 + PING_WAIT_S * rte_get_tsc_hz();
	if (send_all(pkts, 1, deadline) != 1)
		return 0;
	while (t1 == 0 && !bench_quit()) {
		n = rte_eth_rx_burst(PORT, 0, pkts, BENCH_BURST);
		if (n == 0 && rte_rdtsc() > deadline)
			break;
		for (i = 0; i < n; i++)
			if (bench_frame_seq(pkts[i]) == seq)
				t1 = rte_rdtsc_precise();
		rte_pktmbuf_free_bulk(pkts, n);
	}
	return t1 != 0 ? t1 - t0 : 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The value below which a share q of the sorted samples lie. */
static uint64_t
quantile(const uint64_t *v, uint64_t n, double q)
{
	uint64_t i = (uint64_t)(q * (double)n + 0.999999);

	return v[i == 0 ? 0 : RTE_MIN(i, n) - 1];
}

/*
 * Pings until the path is the one measured: warmup echoes in a row, and,
 * on a driver with connections, sent on one and all echoed over RC.
 */
static int
ping_warmup(struct rte_mempool *mp, const struct rte_ether_addr *dst,
	    const struct rte_ether_addr *src, const struct bench_cfg *cfg,
	    uint64_t *seq)
{
	uint64_t conn_id, ud_id, ud, ok = 0, end = tsc_after(cfg->timeout_s);
	uint64_t echoes = 0, lost = 0, ud_echoes = 0;
	bool conn = bench_xstat_id(PORT, "conns_tx_connected", &conn_id) == 0;
	bool has_ud = bench_xstat_id(PORT, "rx_ud_packets", &ud_id) == 0;

	ud = has_ud ? bench_xstat(PORT, ud_id) : 0;
	while (ok < cfg->warmup) {
		if (bench_quit() || rte_rdtsc() > end) {
			fprintf(stderr, "ping: no steady echo after %.0f s: %"
				PRIu64 " echoes, %" PRIu64 " lost, %" PRIu64
				" over UD, connected: %s\n", cfg->timeout_s,
				echoes, lost, ud_echoes, !conn ? "n/a" :
				bench_xstat(PORT, conn_id) != 0 ? "yes" : "no");
			return -ETIMEDOUT;
		}
		if (ping_one(mp, dst, src, BENCH_MIN_FRAME, (*seq)++) != 0) {
			echoes++;
			ok++;
		} else {
			lost++;
			ok = 0;
		}
		if (conn && bench_xstat(PORT, conn_id) == 0)
			ok = 0;
		if (has_ud && bench_xstat(PORT, ud_id) != ud) {
			ud_echoes += bench_xstat(PORT, ud_id) - ud;
			ud = bench_xstat(PORT, ud_id);
			ok = 0;
		}
	}
	return 0;
}

static int
ping_size(struct rte_mempool *mp, const struct rte_ether_addr *dst,
	  const struct rte_ether_addr *src, const struct bench_cfg *cfg,
	  uint32_t size, uint64_t *seq)
{
	uint64_t *rtt = malloc(cfg->packets * sizeof(*rtt));
	uint64_t i, n = 0, lost = 0, ud_id, ud0 = 0;
	bool has_ud = bench_xstat_id(PORT, "rx_ud_packets", &ud_id) == 0;

	if (rtt == NULL)
		return -ENOMEM;
	if (has_ud)
		ud0 = bench_xstat(PORT, ud_id);
	for (i = 0; i < cfg->packets && !bench_quit(); i++) {
		uint64_t c = ping_one(mp, dst, src, size, (*seq)++);

		if (c != 0)
			rtt[n++] = c;
		else
			lost++;
	}
	if (n == 0) {
		fprintf(stderr, "ping: no echo at %u B\n", size);
		free(rtt);
		return -EIO;
	}
	qsort(rtt, n, sizeof(*rtt), cmp_u64);
	printf("rtt size=%u count=%" PRIu64 " lost=%" PRIu64 " min_ns=%" PRIu64
	       " median_ns=%" PRIu64 " p99_ns=%" PRIu64 " p999_ns=%" PRIu64
	       " max_ns=%" PRIu64, size, n, lost, bench_ns(rtt[0]),
	       bench_ns(quantile(rtt, n, 0.5)), bench_ns(quantile(rtt, n, 0.99)),
	       bench_ns(quantile(rtt, n, 0.999)), bench_ns(rtt[n - 1]));
	if (has_ud)
		printf(" ud_rx=%" PRIu64, bench_xstat(PORT, ud_id) - ud0);
	printf("\n");
	fflush(stdout);
	free(rtt);
	return 0;
}

int
bench_ping(const struct bench_cfg *cfg)
{
	struct rte_ether_addr src;
	struct rte_mempool *mp;
	uint64_t seq = 1;
	unsigned int s;
	int ret;

	if (!cfg->have_peer) {
		fprintf(stderr, "ping: give --peer MAC (the echo's port)\n");
		return -EINVAL;
	}
	mp = bench_pool("ping_mp", 8191);
	if (mp == NULL)
		return -ENOMEM;
	ret = bench_port_start(PORT, mp, false);
	if (ret != 0)
		return ret;
	ret = bench_link_wait(PORT, cfg->timeout_s);
	rte_eth_macaddr_get(PORT, &src);
	if (ret == 0)
		ret = ping_warmup(mp, &cfg->peer, &src, cfg, &seq);
	for (s = 0; s < cfg->nb_sizes && ret == 0; s++)
		ret = ping_size(mp, &cfg->peer, &src, cfg, cfg->sizes[s], &seq);
	bench_port_close(PORT);
	return ret;
}
