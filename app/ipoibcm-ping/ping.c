/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * dpdk-ipoibcm-ping: a DPDK application that talks to many IPoIB hosts
 * through one net_ipoibcm port, as an application on an InfiniBand cluster
 * would: it resolves every host with ARP, then sends UDP datagrams to the
 * hosts of each phase of its schedule and counts the echoes, printing who
 * is on which path (RC, UD) with the throughput. The demo and the scale
 * tests drive it against dpdk-ipoibcm-peers; the tests end each phase with
 * SIGUSR1 once what they wait for has happened.
 *
 *   dpdk-ipoibcm-ping [EAL options] -- --hosts N [--ipv4 A.B.C.D]
 *       [--src A.B.C.D] [--size BYTES (64..65534)] [--rate PPS] [--phase SECONDS:FIRST-LAST]...
 *       [--report SECONDS] [--arp-timeout SECONDS] [--grid] [--require-all]
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "rte_pmd_ipoib_cm.h"

#define MAX_HOSTS	16384
#define MAX_PHASES	8
#define BURST		32
#define ARP_WINDOW	64
#define ARP_RETRY_MS	300
#define UDP_PORT	9
/* Frames up to the connected-mode MTU (65520) with their Ethernet header */
#define MAX_SIZE	(RTE_ETHER_HDR_LEN + 65520)
/* Above an Ethernet MTU: 16 KiB mbufs, chained, and fewer of them */
#define BIG_SEG		16384
#define BIG_MBUFS	4095
#define BIG_RING	256

struct host {
	uint32_t ip;			/* host order */
	struct rte_ether_addr mac;
	bool resolved;
	uint64_t arp_sent_ms;
	uint64_t sent[MAX_PHASES];
	uint64_t recv[MAX_PHASES];
};

struct phase {
	double seconds;
	uint32_t first, last;
};

static struct {
	uint16_t port;
	uint32_t nb_hosts;
	uint32_t first_ip;
	uint32_t src_ip;
	uint32_t size;
	uint64_t rate;			/* frames per second, all hosts */
	double report_s;
	double arp_timeout_s;
	bool grid;
	bool require_all;
	struct phase phases[MAX_PHASES];
	unsigned int nb_phases;
} cfg = {
	.first_ip = RTE_IPV4(10, 0, 0, 100),
	.src_ip = RTE_IPV4(10, 0, 0, 1),
	.size = 256,
	.rate = 200000,
	.report_s = 2,
	.arp_timeout_s = 60,
};

static struct host *hosts;
static struct rte_mempool *mp;
static struct rte_ether_addr port_mac;
static volatile bool quit;
static volatile sig_atomic_t next_phase;
static unsigned int cur_phase;

static uint64_t
now_ms(void)
{
	return rte_get_timer_cycles() * 1000 / rte_get_timer_hz();
}

static void
on_signal(int sig)
{
	if (sig == SIGUSR1)
		next_phase = 1;
	else
		quit = true;
}

static void
usage(const char *prog)
{
	printf("usage: %s [EAL options] -- --hosts N [--ipv4 A.B.C.D] "
	       "[--src A.B.C.D]\n"
	       "    [--size BYTES] [--rate PPS] "
	       "[--phase SECONDS:FIRST-LAST]... [--report SECONDS]\n"
	       "    [--arp-timeout SECONDS] [--grid] [--require-all] "
	       "[--port P]\n"
	       "  --hosts N          hosts at --ipv4 + 0..N-1 (1..%u)\n"
	       "  --phase S:F-L      send to hosts F..L for S seconds, or "
	       "until SIGUSR1;\n"
	       "                     repeatable (default: all, 10 s)\n"
	       "  --rate PPS         UDP frames per second, all hosts "
	       "together (default 200000)\n"
	       "  --size BYTES       Ethernet frame size, 64..%u "
	       "(default 256);\n"
	       "                     above 1514 the port's MTU follows, "
	       "in chained %u-byte mbufs,\n"
	       "                     and the datagrams say DF: never "
	       "fragmented (over UD)\n"
	       "  --arp-timeout S    give up resolving hosts after S seconds "
	       "(default 60)\n"
	       "  --grid             print one letter per host: R on RC, "
	       "U spilled to UD,\n"
	       "                     D datagram only, C connecting, N not "
	       "connected, ? unknown\n"
	       "                     to the port; lower case (. for ?): not "
	       "in this phase\n"
	       "  --require-all      exit 1 unless every host of every phase "
	       "answered\n", prog, MAX_HOSTS, MAX_SIZE, BIG_SEG);
}

static int
parse_ip(const char *s, uint32_t *ip)
{
	unsigned int a, b, c, d;
	char extra;

	if (sscanf(s, "%u.%u.%u.%u%c", &a, &b, &c, &d, &extra) != 4 ||
	    a > 255 || b > 255 || c > 255 || d > 255)
		return -EINVAL;
	*ip = RTE_IPV4(a, b, c, d);
	return 0;
}

static int
parse_phase(const char *s, struct phase *ph)
{
	char extra;

	if (sscanf(s, "%lf:%u-%u%c", &ph->seconds, &ph->first, &ph->last,
		   &extra) != 3 || ph->seconds <= 0 || ph->first > ph->last)
		return -EINVAL;
	return 0;
}

static int
parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hosts", required_argument, NULL, 'n' },
		{ "ipv4", required_argument, NULL, 'i' },
		{ "src", required_argument, NULL, 's' },
		{ "size", required_argument, NULL, 'z' },
		{ "rate", required_argument, NULL, 'r' },
		{ "phase", required_argument, NULL, 'p' },
		{ "report", required_argument, NULL, 'R' },
		{ "arp-timeout", required_argument, NULL, 'T' },
		{ "port", required_argument, NULL, 'P' },
		{ "grid", no_argument, NULL, 'g' },
		{ "require-all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c, idx = 0;

	while ((c = getopt_long(argc, argv, "h", opts, &idx)) != -1) {
		switch (c) {
		case 'n':
			cfg.nb_hosts = (uint32_t)strtoul(optarg, &end, 10);
			if (*end || cfg.nb_hosts == 0 ||
			    cfg.nb_hosts > MAX_HOSTS)
				goto bad;
			break;
		case 'i':
			if (parse_ip(optarg, &cfg.first_ip) < 0)
				goto bad;
			break;
		case 's':
			if (parse_ip(optarg, &cfg.src_ip) < 0)
				goto bad;
			break;
		case 'z':
			cfg.size = (uint32_t)strtoul(optarg, &end, 10);
			if (*end || cfg.size < 64 || cfg.size > MAX_SIZE)
				goto bad;
			break;
		case 'r':
			cfg.rate = strtoull(optarg, &end, 10);
			if (*end || cfg.rate == 0)
				goto bad;
			break;
		case 'p':
			if (cfg.nb_phases == MAX_PHASES ||
			    parse_phase(optarg, &cfg.phases[cfg.nb_phases]) < 0)
				goto bad;
			cfg.nb_phases++;
			break;
		case 'R':
			cfg.report_s = strtod(optarg, &end);
			if (*end || cfg.report_s <= 0)
				goto bad;
			break;
		case 'T':
			cfg.arp_timeout_s = strtod(optarg, &end);
			if (*end || !(cfg.arp_timeout_s > 0))
				goto bad;
			break;
		case 'P':
			cfg.port = (uint16_t)strtoul(optarg, &end, 10);
			if (*end)
				goto bad;
			break;
		case 'g':
			cfg.grid = true;
			break;
		case 'a':
			cfg.require_all = true;
			break;
		default:
			usage(argv[0]);
			return -1;
		}
	}
	if (cfg.nb_hosts == 0) {
		fprintf(stderr, "--hosts is required\n");
		return -1;
	}
	if (cfg.nb_phases == 0)
		cfg.phases[cfg.nb_phases++] = (struct phase){
			10, 0, cfg.nb_hosts - 1 };
	for (c = 0; c < (int)cfg.nb_phases; c++) {
		if (cfg.phases[c].last >= cfg.nb_hosts) {
			fprintf(stderr, "bad value for --phase: host %u of "
				"%u hosts\n", cfg.phases[c].last,
				cfg.nb_hosts);
			return -1;
		}
	}
	return 0;
bad:
	fprintf(stderr, "bad value for --%s: %s\n", opts[idx].name, optarg);
	usage(argv[0]);
	return -1;
}

/* Frames above an Ethernet MTU: chained, sent whole over RC (DF) or not */
static bool
frames_big(void)
{
	return cfg.size - RTE_ETHER_HDR_LEN > RTE_ETHER_MTU;
}

static int
port_init(void)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	bool big = frames_big();

	if (!rte_eth_dev_is_valid_port(cfg.port) ||
	    rte_eth_dev_info_get(cfg.port, &info) != 0)
		return -ENODEV;
	if (big) {
		conf.rxmode.mtu = cfg.size - RTE_ETHER_HDR_LEN;
		conf.rxmode.offloads = RTE_ETH_RX_OFFLOAD_SCATTER;
		conf.txmode.offloads = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	}
	mp = rte_pktmbuf_pool_create("ping_mp", big ? BIG_MBUFS : 32767, 256,
				     0, big ? BIG_SEG + RTE_PKTMBUF_HEADROOM :
				     RTE_MBUF_DEFAULT_BUF_SIZE,
				     rte_socket_id());
	if (mp == NULL)
		return -ENOMEM;
	if (rte_eth_dev_configure(cfg.port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(cfg.port, 0, big ? BIG_RING : 1024,
				   rte_socket_id(), NULL, mp) != 0 ||
	    rte_eth_tx_queue_setup(cfg.port, 0, 1024, rte_socket_id(),
				   NULL) != 0 ||
	    rte_eth_dev_start(cfg.port) != 0)
		return -EIO;
	rte_eth_macaddr_get(cfg.port, &port_mac);
	return 0;
}

static struct host *
host_by_ip(uint32_t ip)
{
	uint32_t i = ip - cfg.first_ip;

	return i < cfg.nb_hosts ? &hosts[i] : NULL;
}

static struct rte_mbuf *
make_arp(uint16_t op, uint32_t tip, const struct rte_ether_addr *tha)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;

	if (m == NULL)
		return NULL;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, sizeof(*eth) +
							 sizeof(*arp));
	arp = (struct rte_arp_hdr *)(eth + 1);
	memset(&eth->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	if (tha != NULL)
		eth->dst_addr = *tha;
	eth->src_addr = port_mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	arp->arp_data.arp_sha = port_mac;
	arp->arp_data.arp_sip = rte_cpu_to_be_32(cfg.src_ip);
	memset(&arp->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
	if (tha != NULL)
		arp->arp_data.arp_tha = *tha;
	arp->arp_data.arp_tip = rte_cpu_to_be_32(tip);
	return m;
}

/*
 * An mbuf of len bytes, zeroed: one segment, or a chain of as many as a
 * frame larger than one mbuf takes. NULL when the pool runs dry.
 */
static struct rte_mbuf *
alloc_frame(uint32_t len)
{
	struct rte_mbuf *head = NULL, *m;

	while (len > 0) {
		uint16_t n;

		m = rte_pktmbuf_alloc(mp);
		if (m == NULL || (head != NULL &&
				  rte_pktmbuf_chain(head, m) != 0)) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(head);
			return NULL;
		}
		if (head == NULL)
			head = m;
		/* append() fills the chain's last segment: m */
		n = (uint16_t)RTE_MIN(len, (uint32_t)rte_pktmbuf_tailroom(m));
		memset(rte_pktmbuf_append(head, n), 0, n);
		len -= n;
	}
	return head;
}

static struct rte_mbuf *
make_udp(const struct host *h)
{
	struct rte_mbuf *m = alloc_frame(cfg.size);
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;

	if (m == NULL)
		return NULL;
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	udp = (struct rte_udp_hdr *)(ip + 1);
	eth->dst_addr = h->mac;
	eth->src_addr = port_mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(cfg.size -
						       sizeof(*eth)));
	if (frames_big())
		ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(cfg.src_ip);
	ip->dst_addr = rte_cpu_to_be_32(h->ip);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(40000);
	udp->dst_port = rte_cpu_to_be_16(UDP_PORT);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(cfg.size - sizeof(*eth) -
						     sizeof(*ip)));
	udp->dgram_cksum = 0;
	return m;
}

static void
send_one(struct rte_mbuf *m)
{
	if (m != NULL && rte_eth_tx_burst(cfg.port, 0, &m, 1) == 0)
		rte_pktmbuf_free(m);
}

/* ARP replies give hosts' MACs; ARP requests for us get an answer. */
static void
handle_arp(const struct rte_arp_hdr *arp)
{
	uint32_t sip = rte_be_to_cpu_32(arp->arp_data.arp_sip);
	struct host *h = host_by_ip(sip);

	if (h != NULL) {
		h->mac = arp->arp_data.arp_sha;
		h->resolved = true;
	}
	if (arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) &&
	    rte_be_to_cpu_32(arp->arp_data.arp_tip) == cfg.src_ip)
		send_one(make_arp(RTE_ARP_OP_REPLY, sip,
				  &arp->arp_data.arp_sha));
}

static void
handle_udp(const struct rte_ipv4_hdr *ip)
{
	struct host *h = host_by_ip(rte_be_to_cpu_32(ip->src_addr));

	if (h != NULL && cur_phase < MAX_PHASES)
		h->recv[cur_phase]++;
}

static void
poll_rx(void)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n, i;

	n = rte_eth_rx_burst(cfg.port, 0, pkts, BURST);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct rte_ether_hdr *eth =
			rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

		if (m->data_len >= sizeof(*eth) + sizeof(struct rte_arp_hdr) &&
		    eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP))
			handle_arp((const struct rte_arp_hdr *)(eth + 1));
		else if (m->data_len >= sizeof(*eth) +
			 sizeof(struct rte_ipv4_hdr) &&
			 eth->ether_type == rte_cpu_to_be_16(
				 RTE_ETHER_TYPE_IPV4))
			handle_udp((const struct rte_ipv4_hdr *)(eth + 1));
		rte_pktmbuf_free(m);
	}
}

/* Resolve every host, a window of requests at a time. */
static int
resolve_all(void)
{
	uint64_t start = now_ms();
	uint64_t deadline = start + (uint64_t)(cfg.arp_timeout_s * 1000);
	uint32_t resolved = 0, next = 0, i;

	while (resolved < cfg.nb_hosts && !quit && now_ms() < deadline) {
		uint32_t outstanding = 0;
		uint64_t t = now_ms();

		for (i = 0; i < cfg.nb_hosts &&
		     outstanding < ARP_WINDOW; i++) {
			struct host *h = &hosts[(next + i) % cfg.nb_hosts];

			if (h->resolved)
				continue;
			outstanding++;
			if (t - h->arp_sent_ms < ARP_RETRY_MS)
				continue;
			h->arp_sent_ms = t;
			send_one(make_arp(RTE_ARP_OP_REQUEST, h->ip, NULL));
		}
		poll_rx();
		for (resolved = 0, i = 0; i < cfg.nb_hosts; i++)
			resolved += hosts[i].resolved;
		while (next < cfg.nb_hosts && hosts[next].resolved)
			next++;
	}
	printf("resolved %u of %u hosts with ARP in %.2f s\n", resolved,
	       cfg.nb_hosts, (now_ms() - start) / 1000.0);
	return resolved == cfg.nb_hosts ? 0 : -1;
}

static uint64_t
xstat(const char *name)
{
	uint64_t id, v;

	if (rte_eth_xstats_get_id_by_name(cfg.port, name, &id) != 0 ||
	    rte_eth_xstats_get_by_id(cfg.port, &id, &v, 1) != 1)
		return 0;
	return v;
}

static void
print_grid(const struct phase *ph)
{
	static const char letters[] = {
		[RTE_PMD_IPOIBCM_PEER_UD_ONLY] = 'D',
		[RTE_PMD_IPOIBCM_PEER_NEW] = 'N',
		[RTE_PMD_IPOIBCM_PEER_CONNECTING] = 'C',
		[RTE_PMD_IPOIBCM_PEER_CONNECTED] = 'R',
		[RTE_PMD_IPOIBCM_PEER_SPILLED] = 'U',
	};
	uint32_t i;

	printf("  hosts %u-%u: R on RC, U spilled to UD (retried), D datagram "
	       "only (no connected mode),\n  C connecting, N not connected "
	       "(new, or its connection reaped), ? unknown to the port\n  "
	       "(never heard from, or forgotten when idle); lower case and . "
	       "for ?: not sent to in this phase\n  ", 0, cfg.nb_hosts - 1);
	for (i = 0; i < cfg.nb_hosts; i++) {
		struct rte_pmd_ipoibcm_peer info;
		bool out = i < ph->first || i > ph->last;
		char l = out ? '.' : '?';

		if (rte_pmd_ipoibcm_peer_get(cfg.port, &hosts[i].mac,
					     &info) == 0)
			l = (char)(letters[info.state] | (out ? 0x20 : 0));
		putchar(l);
		if (i % 64 == 63 && i + 1 < cfg.nb_hosts)
			printf("\n  ");
	}
	putchar('\n');
}

/* served: hosts of the phase that answered in it so far */
static void
report(const struct phase *ph, double elapsed, uint64_t sent,
       uint64_t recv, uint32_t served, uint64_t *last_rx_bytes, double dt)
{
	uint64_t rx_bytes = xstat("rx_rc_bytes") + xstat("rx_ud_bytes");

	printf("[phase %u %5.1fs] sent %" PRIu64 " echoed %" PRIu64
	       " served %u/%u"
	       " | RC tx %" PRIu64 " UD tx %" PRIu64 " | conns tx %" PRIu64
	       " rx %" PRIu64 " spilled %" PRIu64 " | promoted %" PRIu64
	       " retried %" PRIu64
	       " reaped %" PRIu64 " evicted %" PRIu64 " REJ sent %" PRIu64
	       " rcvd %" PRIu64 " | %.2f Gbit/s in | %" PRIu64 " B heap\n",
	       cur_phase, elapsed, sent, recv, served,
	       ph->last - ph->first + 1,
	       xstat("tx_rc_packets"), xstat("tx_ud_packets"),
	       xstat("conns_tx_connected"), xstat("conns_rx"),
	       xstat("peers_spilled"), xstat("conn_promotions"),
	       xstat("conn_retries"), xstat("conn_reaped"),
	       xstat("conn_evictions"),
	       xstat("rej_sent_reason_1") + xstat("rej_sent_reason_3"),
	       xstat("rej_rcvd_reason_1") + xstat("rej_rcvd_reason_3"),
	       dt > 0 ? (rx_bytes - *last_rx_bytes) * 8 / dt / 1e9 : 0.0,
	       xstat("mem_heap_bytes"));
	*last_rx_bytes = rx_bytes;
	if (cfg.grid)
		print_grid(ph);
	fflush(stdout);
}

/*
 * Send to the phase's hosts round robin at the configured rate, for the
 * phase's seconds or until SIGUSR1.
 */
static void
run_phase(const struct phase *ph)
{
	uint64_t hz = rte_get_timer_hz(), t0 = rte_get_timer_cycles();
	uint64_t end = t0 + (uint64_t)(ph->seconds * hz);
	uint64_t next_report = t0 + (uint64_t)(cfg.report_s * hz);
	uint64_t last_report = t0, sent = 0, recv, last_rx = 0;
	uint32_t span = ph->last - ph->first + 1, i = 0, k, served;
	uint64_t t;

	next_phase = 0;
	while (!quit && !next_phase && (t = rte_get_timer_cycles()) < end) {
		uint64_t due = (t - t0) * cfg.rate / hz;

		while (sent < due && !quit) {
			struct host *h = &hosts[ph->first + i % span];
			struct rte_mbuf *m = make_udp(h);

			if (m == NULL || rte_eth_tx_burst(cfg.port, 0, &m,
							  1) == 0) {
				rte_pktmbuf_free(m);
				break;	/* refused: the receiver is full */
			}
			h->sent[cur_phase]++;
			sent++;
			i++;
			if (sent % BURST == 0)
				poll_rx();
		}
		poll_rx();
		if (t >= next_report) {
			for (recv = 0, k = 0; k < cfg.nb_hosts; k++)
				recv += hosts[k].recv[cur_phase];
			for (served = 0, k = ph->first; k <= ph->last; k++)
				served += hosts[k].recv[cur_phase] > 0;
			report(ph, (double)(t - t0) / hz, sent, recv, served,
			       &last_rx, (double)(t - last_report) / hz);
			last_report = t;
			next_report = t + (uint64_t)(cfg.report_s * hz);
		}
	}
	/* the last echoes */
	for (t = rte_get_timer_cycles(); rte_get_timer_cycles() - t < hz / 2;)
		poll_rx();
}

/* Every host of the phase answered? Prints the verdict. */
static bool
phase_served(unsigned int p)
{
	const struct phase *ph = &cfg.phases[p];
	uint32_t i, served = 0, sent = 0;
	uint64_t s = 0, r = 0;

	for (i = ph->first; i <= ph->last && i < cfg.nb_hosts; i++) {
		sent += hosts[i].sent[p] > 0;
		served += hosts[i].recv[p] > 0;
		s += hosts[i].sent[p];
		r += hosts[i].recv[p];
	}
	printf("phase %u: hosts %u-%u: %u sent to, %u answered; %" PRIu64
	       " datagrams sent, %" PRIu64 " echoed\n", p, ph->first,
	       ph->last, sent, served, s, r);
	return served == ph->last - ph->first + 1;
}

int
main(int argc, char **argv)
{
	bool all = true;
	unsigned int p;
	uint32_t i;
	int ret;

	ret = rte_eal_init(argc, argv);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "EAL initialisation failed\n");
	argc -= ret;
	argv += ret;
	if (parse_args(argc, argv) < 0)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_signal);
	hosts = rte_zmalloc(NULL, cfg.nb_hosts * sizeof(*hosts), 0);
	if (hosts == NULL || port_init() < 0)
		rte_exit(EXIT_FAILURE, "cannot set up port %u\n", cfg.port);
	for (i = 0; i < cfg.nb_hosts; i++)
		hosts[i].ip = cfg.first_ip + i;
	printf("port %u MAC " RTE_ETHER_ADDR_PRT_FMT ", %u hosts from %u.%u.%u.%u\n",
	       cfg.port, RTE_ETHER_ADDR_BYTES(&port_mac), cfg.nb_hosts,
	       cfg.first_ip >> 24, (cfg.first_ip >> 16) & 0xff,
	       (cfg.first_ip >> 8) & 0xff, cfg.first_ip & 0xff);
	if (resolve_all() < 0)
		all = false;
	for (p = 0; p < cfg.nb_phases && !quit; p++) {
		cur_phase = p;
		printf("phase %u: %.0f s, %u B datagrams to hosts %u-%u at "
		       "%" PRIu64 " per second\n", p, cfg.phases[p].seconds,
		       cfg.size, cfg.phases[p].first, cfg.phases[p].last,
		       cfg.rate);
		run_phase(&cfg.phases[p]);
	}
	for (p = 0; p < cfg.nb_phases; p++)
		all &= phase_served(p);
	printf("%s\n", all ? "every host was served" :
			     "some hosts were NOT served");
	rte_eth_dev_stop(cfg.port);
	rte_eth_dev_close(cfg.port);
	rte_free(hosts);
	rte_mempool_free(mp);
	rte_eal_cleanup();
	return cfg.require_all && !all ? 1 : 0;
}
