/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * dpdk-ipoibcm-peers: the command line and the main loop.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "peers.h"
#include "shm_log.h"

#define PEERS_EXIT_ERROR	1
#define PEERS_EXIT_USAGE	2
#define PEERS_EXIT_DIE		9
#define PEERS_MAX_SECONDS	1e6
#define PEERS_CQ_ROUNDS		16	/* CQ bursts per loop at most */

_Static_assert(PEERS_SOL_GROUPS == 46, "the usage text says 46");

static const char peers_usage[] =
"Usage: " PEERS_PROG " [OPTIONS]\n"
"\n"
"Join a net_ipoibcm shm fabric as N emulated IPoIB hosts (RFC 4391\n"
"datagram mode, RFC 4755 connected mode), for scale, spill and demo runs.\n"
"Host i has its own port (GUID BASE+i), UD QP and address record (the MAC\n"
"the driver derives from its hardware address), IPv4 address A+i and IPv6\n"
"address PREFIX::<IPv4 as 32 bits>. Host 0 joins the IPv4 broadcast and\n"
"IPv6 all-nodes groups for all (each frame goes to the host it names).\n"
"Hosts answer ARP, Neighbor Solicitations (NA with\n"
"the IPoIB link-layer option), ICMP/ICMPv6 echo and UDP (echoed with the\n"
"ports swapped), and accepts connected-mode connections per --accept.\n"
"Replies go on the host's own connection to the requester when it is up\n"
"(--connect), else on UD.\n"
"\n"
"Fabric and hosts:\n"
"  --fabric NAME        fabric to join: 1-31 of [A-Za-z0-9_-]\n"
"                       (default: default)\n"
"  --hosts N            number of hosts: 1..10000 (default: 1)\n"
"  --guid-base HEX      GUID of host 0, 64-bit hex, not 0\n"
"                       (default: 0x0002c9fe00000000 + (pid << 16))\n"
"  --ipv4 A.B.C.D       IPv4 address of host 0; host i has A.B.C.D + i\n"
"                       (default: 10.0.0.100)\n"
"  --ipv6-prefix P/LEN  IPv6 prefix, LEN 0..96 (default: fd00::/64)\n"
"  --pkey HEX           P_Key, 0x0001..0xffff (default: 0xffff)\n"
"  --ib-mtu N           IB link MTU: 256, 512, 1024, 2048 or 4096\n"
"                       (default: 2048; UD carries IB MTU - 4 of IP)\n"
"  --mtu N              connected-mode MTU advertised in REP and REQ\n"
"                       private data (plus the 4-byte header): 68..65520\n"
"                       (default: 65520)\n"
"\n"
"Connected mode:\n"
"  --accept MODE        all: a REP to every REQ (default)\n"
"                       none: REJ every REQ, reason 28 (consumer)\n"
"                       limit:N: per host, a REP while fewer than N\n"
"                         accepted connections are up, then REJ reason 1\n"
"                         (no QP); N 0..65536\n"
"                       ud: no connected mode: hardware address flags 0,\n"
"                         no listen (a REQ gets REJ 8 from the fabric)\n"
"                       In the other modes the flags byte is 0x80.\n"
"  --connect            a host opens its own connection to a peer it\n"
"                       replies to, if the peer offers connected mode, and\n"
"                       sends over it once established; after a REJ or a\n"
"                       timeout it stays on UD and retries after 100 ms,\n"
"                       doubling up to 5 s (default: replies on UD only)\n"
"  --personality NAME   default: as above. linux: as a Linux host\n"
"                         (ipoib): listens on the OFED service ID only,\n"
"                         REQ retry 0 / rnr_retry 0, advertises 65524,\n"
"                         connects to every peer offering connected mode\n"
"                         and holds 3 packets while it comes up (drops the\n"
"                         rest), after a REJ tries again with the next\n"
"                         packet, never UD to such a peer; unicast UD\n"
"                         without a GRH; Q_Key and UD MTU from the SA's\n"
"                         broadcast group. illumos: as an illumos host\n"
"                         (ibd): listens on both IDs, connects with the\n"
"                         OFED ID twice then the RFC one, each try 10 ms\n"
"                         after the last (with the next packet), and sends\n"
"                         up to 65524 bytes whatever the peer advertised.\n"
"                         linux and illumos imply --connect\n"
"\n"
"Run (timers start when every host is up):\n"
"  --idle-after SECONDS then send nothing: no ARP/ND answer, no echo or\n"
"                       UDP reply, no new connection; what arrives is\n"
"                       still counted, and REQ/DREQ still answered\n"
"  --die-after SECONDS  then exit at once with status 9, closing nothing\n"
"                       (a crash: the fabric's janitor reclaims the hosts)\n"
"  --duration SECONDS   then exit cleanly (default: run until SIGINT or\n"
"                       SIGTERM)\n"
"  SIGUSR1, SIGUSR2     go idle, or die, at once: as --idle-after and\n"
"                       --die-after do when their time comes (for tests\n"
"                       that need it to happen after some event)\n"
"  --report-interval SECONDS\n"
"                       print the table this often (default 0: at exit)\n"
"  --json FILE          at exit, write per-host results and totals as\n"
"                       JSON: {\"hosts\": [...], \"totals\": {...},\n"
"                       \"process\": {...}}\n"
"  --quiet              print nothing but errors (no ready line, no table)\n"
"  -h, --help           print this text\n"
"\n"
"SECONDS is a decimal number, more than 0 and at most 1000000\n"
"(--report-interval: 0 too). Once all hosts are up, a line \"ready: ...\"\n"
"gives the start time, and a line \"idle: ...\" says when the hosts went\n"
"idle. The table lists hosts with activity and a totals line: packets\n"
"received and sent on UD and on connections (RC), echo replies, UDP\n"
"echoes, ARP and ND answers, connection requests accepted and rejected,\n"
"accepted connections up (conns), and the state of the host's own\n"
"connection (active: -, connecting, up, backoff).\n"
"Only the first 46 hosts join their IPv6 solicited-node group (the fabric\n"
"has 64 multicast groups in all); the others answer solicitations sent to\n"
"them unicast or to ff02::1.\n"
"\n"
"Exit status: 0 done, 1 fabric or system error, 2 bad command line,\n"
"9 --die-after (or SIGUSR2).\n";

enum {
	OPT_FABRIC = 256,
	OPT_HOSTS,
	OPT_GUID_BASE,
	OPT_IPV4,
	OPT_IPV6_PREFIX,
	OPT_PKEY,
	OPT_IB_MTU,
	OPT_MTU,
	OPT_ACCEPT,
	OPT_CONNECT,
	OPT_PERSONALITY,
	OPT_IDLE_AFTER,
	OPT_DIE_AFTER,
	OPT_DURATION,
	OPT_REPORT_INTERVAL,
	OPT_JSON,
	OPT_QUIET,
};

static const struct option peers_options[] = {
	{ "fabric", required_argument, NULL, OPT_FABRIC },
	{ "hosts", required_argument, NULL, OPT_HOSTS },
	{ "guid-base", required_argument, NULL, OPT_GUID_BASE },
	{ "ipv4", required_argument, NULL, OPT_IPV4 },
	{ "ipv6-prefix", required_argument, NULL, OPT_IPV6_PREFIX },
	{ "pkey", required_argument, NULL, OPT_PKEY },
	{ "ib-mtu", required_argument, NULL, OPT_IB_MTU },
	{ "mtu", required_argument, NULL, OPT_MTU },
	{ "accept", required_argument, NULL, OPT_ACCEPT },
	{ "connect", no_argument, NULL, OPT_CONNECT },
	{ "personality", required_argument, NULL, OPT_PERSONALITY },
	{ "idle-after", required_argument, NULL, OPT_IDLE_AFTER },
	{ "die-after", required_argument, NULL, OPT_DIE_AFTER },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "report-interval", required_argument, NULL, OPT_REPORT_INTERVAL },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* What each option accepts, for the error messages. */
static const char *
peers_accepted(int opt)
{
	switch (opt) {
	case OPT_FABRIC:
		return "1-31 characters of [A-Za-z0-9_-]";
	case OPT_HOSTS:
		return "an integer 1..10000";
	case OPT_GUID_BASE:
		return "a 64-bit hex number, not 0, such that BASE + hosts - 1 "
		       "does not overflow";
	case OPT_IPV4:
		return "A.B.C.D such that every host's address is below "
		       "224.0.0.0 and not 0.0.0.0";
	case OPT_IPV6_PREFIX:
		return "an IPv6 unicast prefix ADDR/LEN, LEN 0..96";
	case OPT_PKEY:
		return "hex 0x0001..0xffff";
	case OPT_IB_MTU:
		return "256, 512, 1024, 2048 or 4096";
	case OPT_MTU:
		return "an integer 68..65520";
	case OPT_ACCEPT:
		return "all, none, ud or limit:N with N 0..65536";
	case OPT_PERSONALITY:
		return "default, linux or illumos";
	case OPT_IDLE_AFTER:
	case OPT_DIE_AFTER:
	case OPT_DURATION:
		return "seconds, a decimal number > 0 and <= 1000000";
	case OPT_REPORT_INTERVAL:
		return "seconds, a decimal number >= 0 and <= 1000000";
	case OPT_JSON:
		return "a file name";
	default:
		return "no value";
	}
}

static const char *
peers_opt_name(int opt)
{
	const struct option *o;

	for (o = peers_options; o->name != NULL; o++)
		if (o->val == opt)
			return o->name;
	return "?";
}

static void __attribute__((noreturn))
peers_bad_value(int opt, const char *value)
{
	fprintf(stderr, PEERS_PROG ": --%s: invalid value '%s'; accepted: "
		"%s\n", peers_opt_name(opt), value, peers_accepted(opt));
	exit(PEERS_EXIT_USAGE);
}

static uint64_t
peers_parse_uint(int opt, const char *s, int base, uint64_t min, uint64_t max)
{
	unsigned long long v;
	char *end;

	if (*s == '\0' || *s == '-' || *s == '+' || *s == ' ')
		peers_bad_value(opt, s);
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		peers_bad_value(opt, s);
	return v;
}

static double
peers_parse_seconds(int opt, const char *s, bool zero_ok)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (*s == '\0' || errno != 0 || *end != '\0' || !isfinite(v) ||
	    v < 0 || (v == 0 && !zero_ok) || v > PEERS_MAX_SECONDS)
		peers_bad_value(opt, s);
	return v;
}

static void
peers_parse_fabric(struct peers_conf *conf, const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > SHM_FABRIC_NAME_MAX)
		peers_bad_value(OPT_FABRIC, s);
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '-'))
			peers_bad_value(OPT_FABRIC, s);
	memcpy(conf->fabric, s, n + 1);
}

static void
peers_parse_prefix(struct peers_conf *conf, const char *s)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');

	if (slash == NULL || (size_t)(slash - s) >= sizeof(addr))
		peers_bad_value(OPT_IPV6_PREFIX, s);
	memcpy(addr, s, slash - s);
	addr[slash - s] = '\0';
	if (inet_pton(AF_INET6, addr, conf->ipv6_prefix) != 1 ||
	    conf->ipv6_prefix[0] == 0xff)
		peers_bad_value(OPT_IPV6_PREFIX, s);
	if (slash[1] == '\0' || slash[1] == '-' || slash[1] == '+')
		peers_bad_value(OPT_IPV6_PREFIX, s);
	conf->ipv6_plen = (unsigned int)strtoul(slash + 1, (char **)&slash,
						10);
	if (*slash != '\0' || conf->ipv6_plen > 96 ||
	    strlen(s) > INET6_ADDRSTRLEN + 3)
		peers_bad_value(OPT_IPV6_PREFIX, s);
}

static void
peers_parse_accept(struct peers_conf *conf, const char *s)
{
	if (strcmp(s, "all") == 0) {
		conf->accept = PEERS_ACCEPT_ALL;
	} else if (strcmp(s, "none") == 0) {
		conf->accept = PEERS_ACCEPT_NONE;
	} else if (strcmp(s, "ud") == 0) {
		conf->accept = PEERS_ACCEPT_UD;
	} else if (strncmp(s, "limit:", 6) == 0) {
		const char *n = s + 6;
		char *end;

		if (*n < '0' || *n > '9')
			peers_bad_value(OPT_ACCEPT, s);
		errno = 0;
		conf->accept_limit = (uint32_t)strtoul(n, &end, 10);
		if (errno != 0 || *end != '\0' || conf->accept_limit > 65536)
			peers_bad_value(OPT_ACCEPT, s);
		conf->accept = PEERS_ACCEPT_LIMIT;
	} else {
		peers_bad_value(OPT_ACCEPT, s);
	}
}

static void
peers_parse_option(struct peers_conf *conf, int opt, const char *arg,
		   const char **ipv4_arg, const char **guid_arg)
{
	struct in_addr in;

	switch (opt) {
	case OPT_FABRIC:
		peers_parse_fabric(conf, arg);
		break;
	case OPT_HOSTS:
		conf->hosts = (uint32_t)peers_parse_uint(opt, arg, 10, 1,
							  PEERS_MAX_HOSTS);
		break;
	case OPT_GUID_BASE:
		conf->guid_base = peers_parse_uint(opt, arg, 16, 1, UINT64_MAX);
		*guid_arg = arg;
		break;
	case OPT_IPV4:
		if (inet_pton(AF_INET, arg, &in) != 1)
			peers_bad_value(opt, arg);
		conf->ipv4 = ntohl(in.s_addr);
		*ipv4_arg = arg;
		break;
	case OPT_IPV6_PREFIX:
		peers_parse_prefix(conf, arg);
		break;
	case OPT_PKEY:
		conf->pkey = (uint16_t)peers_parse_uint(opt, arg, 16, 1,
							 0xffff);
		break;
	case OPT_IB_MTU:
		conf->ib_mtu = (uint16_t)peers_parse_uint(opt, arg, 10, 256,
							   4096);
		if (conf->ib_mtu & (conf->ib_mtu - 1))
			peers_bad_value(opt, arg);
		break;
	case OPT_MTU:
		conf->mtu = (uint32_t)peers_parse_uint(opt, arg, 10, 68,
							IPOIB_CM_MTU);
		break;
	case OPT_ACCEPT:
		peers_parse_accept(conf, arg);
		break;
	case OPT_CONNECT:
		conf->connect = true;
		break;
	case OPT_PERSONALITY:
		if (strcmp(arg, "linux") == 0)
			conf->persona = PEERS_PERSONA_LINUX;
		else if (strcmp(arg, "illumos") == 0)
			conf->persona = PEERS_PERSONA_ILLUMOS;
		else if (strcmp(arg, "default") == 0)
			conf->persona = PEERS_PERSONA_DEFAULT;
		else
			peers_bad_value(opt, arg);
		/* both open connections to the peers they send to */
		if (conf->persona != PEERS_PERSONA_DEFAULT)
			conf->connect = true;
		break;
	case OPT_IDLE_AFTER:
		conf->idle_after = peers_parse_seconds(opt, arg, false);
		break;
	case OPT_DIE_AFTER:
		conf->die_after = peers_parse_seconds(opt, arg, false);
		break;
	case OPT_DURATION:
		conf->duration = peers_parse_seconds(opt, arg, false);
		break;
	case OPT_REPORT_INTERVAL:
		conf->report_interval = peers_parse_seconds(opt, arg, true);
		break;
	case OPT_JSON:
		if (*arg == '\0')
			peers_bad_value(opt, arg);
		conf->json = arg;
		break;
	case OPT_QUIET:
		conf->quiet = true;
		break;
	}
}

/* Not static: the option fuzzer (fuzz/fuzz_peers_opts.c) calls it. */
void
peers_parse_args(struct peers_conf *conf, int argc, char **argv)
{
	const char *ipv4_arg = "10.0.0.100", *guid_arg = NULL;
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", peers_options,
				  NULL)) != -1) {
		switch (opt) {
		case 'h':
			fputs(peers_usage, stdout);
			exit(0);
		case ':':
			fprintf(stderr, PEERS_PROG ": %s: a value is needed; "
				"accepted: %s\n", argv[optind - 1],
				peers_accepted(optopt));
			exit(PEERS_EXIT_USAGE);
		case '?':
			if (optopt >= OPT_FABRIC)
				fprintf(stderr, PEERS_PROG ": %s: takes no "
					"value; see --help\n",
					argv[optind - 1]);
			else if (optopt != 0)
				fprintf(stderr, PEERS_PROG ": unknown option "
					"'-%c'; see --help\n", optopt);
			else
				fprintf(stderr, PEERS_PROG ": unknown option "
					"'%s'; see --help\n", argv[optind - 1]);
			exit(PEERS_EXIT_USAGE);
		default:
			peers_parse_option(conf, opt, optarg, &ipv4_arg,
					   &guid_arg);
			break;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PEERS_PROG ": unexpected argument '%s'; see "
			"--help\n", argv[optind]);
		exit(PEERS_EXIT_USAGE);
	}
	/* the ranges the hosts take must fit */
	if (conf->ipv4 == 0 ||
	    (uint64_t)conf->ipv4 + conf->hosts - 1 >= 0xe0000000ULL)
		peers_bad_value(OPT_IPV4, ipv4_arg);
	if (conf->guid_base > UINT64_MAX - (conf->hosts - 1))
		peers_bad_value(OPT_GUID_BASE, guid_arg);
}

/* ---- main loop ----------------------------------------------------------- */

static volatile sig_atomic_t peers_stop, peers_idle_now, peers_die_now;

static void
peers_on_signal(int sig)
{
	if (sig == SIGUSR1)
		peers_idle_now = 1;
	else if (sig == SIGUSR2)
		peers_die_now = 1;
	else
		peers_stop = 1;
}

static uint64_t
peers_deadline(uint64_t from, double seconds)
{
	return seconds > 0 ? from + (uint64_t)(seconds * 1e9) : 0;
}

/*
 * The CM and async events of the next slice of ports. Async events are
 * about RC QPs (a peer died): only ports with connections have any, and
 * port 0 runs the fabric's janitor for the others.
 */
static unsigned int
peers_poll_ports(struct peers *P, uint64_t nap_ns)
{
	uint64_t n = (P->nr_hosts * nap_ns + PEERS_SWEEP_NS - 1) /
		     PEERS_SWEEP_NS;
	unsigned int work = 0;
	uint32_t i, h;

	if (n < PEERS_PORT_SLICE)
		n = PEERS_PORT_SLICE;
	if (n > P->nr_hosts)
		n = P->nr_hosts;

	for (i = 0; i < n; i++) {
		h = P->cm_cursor;
		work += peers_cm_poll(P, h);
		if (P->hosts[h].nconns != 0 || h == 0)
			work += peers_async_poll(P, h);
		if (++P->cm_cursor == P->nr_hosts)
			P->cm_cursor = 0;
	}
	return work;
}

static void
peers_run(struct peers *P)
{
	const struct peers_conf *c = &P->conf;
	uint64_t nap_ns = PEERS_NAP_MIN_NS, idle_loops = 0;
	uint64_t idle_at = peers_deadline(P->ready_ns, c->idle_after);
	uint64_t die_at = peers_deadline(P->ready_ns, c->die_after);
	uint64_t end_at = peers_deadline(P->ready_ns, c->duration);
	uint64_t report_ns = (uint64_t)(c->report_interval * 1e9);
	uint64_t next_report = report_ns ? P->ready_ns + report_ns : 0;

	while (!peers_stop) {
		uint64_t now = ipoib_now_ns();
		unsigned int work = 0, k, r;

		if ((die_at && now >= die_at) || peers_die_now)
			_exit(PEERS_EXIT_DIE);	/* a crash: nothing closed */
		/* before the end: a run that passed both was idle */
		if (!P->idle && ((idle_at && now >= idle_at) ||
				 peers_idle_now)) {
			P->idle = true;
			if (!c->quiet) {
				printf("idle: from %.3f s on, nothing is "
				       "answered\n", (now - P->ready_ns) / 1e9);
				fflush(stdout);
			}
		}
		if (end_at && now >= end_at)
			break;
		if (next_report && now >= next_report) {
			if (!c->quiet) {
				printf("--- %.1f s ---\n",
				       (now - P->ready_ns) / 1e9);
				peers_report_table(P, stdout);
			}
			next_report += report_ns;
		}
		for (r = 0; r < PEERS_CQ_ROUNDS; r++) {
			k = peers_poll_cq(P);
			work += k;
			if (k < PEERS_BURST)
				break;
		}
		work += peers_poll_ports(P, nap_ns);
		if (work != 0) {
			nap_ns = PEERS_NAP_MIN_NS;
			idle_loops = 0;
		} else {
			struct timespec nap = { 0, (long)nap_ns };

			nanosleep(&nap, NULL);
			if (++idle_loops % PEERS_NAP_GROW_LOOPS == 0 &&
			    nap_ns < PEERS_NAP_MAX_NS)
				nap_ns = nap_ns * 2 < PEERS_NAP_MAX_NS ?
					 nap_ns * 2 : PEERS_NAP_MAX_NS;
		}
	}
}

void
peers_conf_defaults(struct peers_conf *conf)
{
	static const uint8_t fd00[16] = { 0xfd };

	memset(conf, 0, sizeof(*conf));
	strcpy(conf->fabric, "default");
	conf->hosts = 1;
	/* two emulators on a fabric differ: the pid picks the range */
	conf->guid_base = PEERS_DEF_GUID_BASE + ((uint64_t)getpid() << 16);
	conf->ipv4 = PEERS_DEF_IPV4;
	memcpy(conf->ipv6_prefix, fd00, sizeof(fd00));
	conf->ipv6_plen = 64;
	conf->pkey = 0xffff;
	conf->ib_mtu = 2048;
	conf->mtu = PEERS_DEF_MTU;
	conf->accept = PEERS_ACCEPT_ALL;
}

static void
peers_setup_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = peers_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int
main(int argc, char **argv)
{
	static struct peers P;	/* large: tx_buf */
	int ret, status = 0;

	peers_conf_defaults(&P.conf);
	peers_parse_args(&P.conf, argc, argv);
	shm_set_logger(NULL, P.conf.quiet ? SHM_LOG_WARNING : SHM_LOG_NOTICE);
	peers_setup_signals();
	P.start_ns = ipoib_now_ns();
	ret = peers_tables_init(&P);
	if (ret == 0)
		ret = peers_hosts_open(&P);
	if (ret < 0) {
		status = PEERS_EXIT_ERROR;
		goto out;
	}
	P.ready_ns = ipoib_now_ns();
	if (!P.conf.quiet) {
		const struct peers_host *h0 = &P.hosts[0];

		printf("ready: %u hosts on fabric %s in %.3f s: GUID 0x%016"
		       PRIx64 "..0x%016" PRIx64 ", IPv4 %u.%u.%u.%u.., host 0 "
		       "QPN 0x%06x, RSS %ld KiB, pid %d\n", P.nr_hosts,
		       P.conf.fabric, (P.ready_ns - P.start_ns) / 1e9,
		       P.conf.guid_base, P.conf.guid_base + P.nr_hosts - 1,
		       h0->ipv4 >> 24, (h0->ipv4 >> 16) & 0xff,
		       (h0->ipv4 >> 8) & 0xff, h0->ipv4 & 0xff, h0->qpn,
		       peers_rss_kib(), (int)getpid());
		fflush(stdout);
	}
	peers_run(&P);
	if (!P.conf.quiet)
		peers_report_table(&P, stdout);
	if (P.conf.json != NULL) {
		ret = peers_report_json(&P, P.conf.json);
		if (ret < 0) {
			fprintf(stderr, PEERS_PROG ": cannot write %s: %s\n",
				P.conf.json, strerror(-ret));
			status = PEERS_EXIT_ERROR;
		}
	}
out:
	if (P.f != NULL)
		peers_conns_shutdown(&P);
	peers_hosts_close(&P);
	peers_tables_fini(&P);
	free(P.hosts);
	return status;
}
