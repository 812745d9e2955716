/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * dpdk-ipoibcm-bench: the measuring instruments of devtools/bench.py,
 * for any ethdev (net_ipoibcm, net_memif): an instruction-count harness
 * to run under callgrind, and a ping-pong for round-trip times.
 */

#ifndef IPOIBCM_BENCH_H
#define IPOIBCM_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#define BENCH_BURST		32
#define BENCH_MAX_SIZES		8
#define BENCH_RING		1024
/* Ethernet + IPv4 + UDP headers, then the payload's sequence number. */
#define BENCH_HDRS_LEN		(RTE_ETHER_HDR_LEN + 20 + 8)
#define BENCH_MIN_FRAME		(BENCH_HDRS_LEN + 8)
#define BENCH_MAX_FRAME		(RTE_MBUF_DEFAULT_DATAROOM)

/* What the command line asked for. */
struct bench_cfg {
	const char *mode;		/* "icount", "ping", "echo" */
	uint32_t sizes[BENCH_MAX_SIZES];	/* frame bytes */
	unsigned int nb_sizes;
	uint64_t packets;		/* measured, per size */
	uint64_t warmup;		/* ping: echoes before measuring */
	double timeout_s;		/* a hang guard, not a measurement */
	struct rte_ether_addr peer;	/* ping: the echo port's MAC */
	bool have_peer;
	bool loopback;			/* icount: port 0 to itself */
	uint16_t burst;			/* icount: frames per burst */
};

/* bench_port.c */
struct rte_mempool *bench_pool(const char *name, unsigned int n);
int bench_port_start(uint16_t port, struct rte_mempool *mp, bool loopback);
void bench_port_close(uint16_t port);
int bench_link_wait(uint16_t port, double timeout_s);
struct rte_mbuf *bench_frame(struct rte_mempool *mp,
			     const struct rte_ether_addr *dst,
			     const struct rte_ether_addr *src,
			     uint32_t size, uint64_t seq);
uint64_t bench_frame_seq(const struct rte_mbuf *m);
int bench_xstat_id(uint16_t port, const char *name, uint64_t *id);
uint64_t bench_xstat(uint16_t port, uint64_t id);
uint64_t bench_ns(uint64_t cycles);
bool bench_quit(void);
void bench_signals(void);

/* bench_icount.c */
int bench_icount(const struct bench_cfg *cfg);

/* bench_pingpong.c */
int bench_ping(const struct bench_cfg *cfg);
int bench_echo(const struct bench_cfg *cfg);

#endif /* IPOIBCM_BENCH_H */
