/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * dpdk-ipoibcm-bench: the measuring instruments of devtools/bench.py.
 *
 *   dpdk-ipoibcm-bench [EAL options] -- icount [--sizes 64,1500]
 *       [--packets N] [--warmup N] [--timeout S] [--loopback]
 *         two ports (0 sends, 1 receives) in one thread; run it under
 *         valgrind --tool=callgrind --toggle-collect=bench_icount_rx
 *         (or bench_icount_tx) to count one side's instructions;
 *         --loopback: port 0 alone, in loopback mode (lpbk_mode 1), as
 *         dpdk-test pmd_perf_autotest runs a port
 *   dpdk-ipoibcm-bench [EAL options] -- echo [--timeout S]
 *   dpdk-ipoibcm-bench [EAL options] -- ping --peer MAC [--sizes 64,1500]
 *       [--packets N] [--warmup N] [--timeout S]
 *         round-trip times between two processes, busy-polling port 0
 *
 * The drivers come from --vdev (and -d for a plugin); the application is
 * the same for every driver measured. --timeout only guards against a
 * hang (echo exits after it; icount and ping give up waiting).
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ethdev.h>

#include "bench.h"

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL options] -- icount|echo|ping [--sizes S,S..]\n"
		"       [--packets N] [--warmup N] [--peer MAC] [--timeout S]\n"
		"       [--loopback] [--burst N]\n",
		prog);
}

static int
parse_u64(const char *key, const char *s, uint64_t min, uint64_t max,
	  uint64_t *v)
{
	unsigned long long x;
	char *end;

	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' ||
	    x < min || x > max) {
		fprintf(stderr, "%s=%s: expected an integer in %llu..%llu\n",
			key, s, (unsigned long long)min,
			(unsigned long long)max);
		return -EINVAL;
	}
	*v = x;
	return 0;
}

static int
parse_sizes(const char *arg, struct bench_cfg *cfg)
{
	char buf[128], *tok, *save = NULL;
	uint64_t v;

	if (strlen(arg) >= sizeof(buf)) {
		fprintf(stderr, "--sizes=%s: too long\n", arg);
		return -EINVAL;
	}
	strcpy(buf, arg);
	cfg->nb_sizes = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		if (cfg->nb_sizes == BENCH_MAX_SIZES) {
			fprintf(stderr, "--sizes=%s: at most %d sizes\n", arg,
				BENCH_MAX_SIZES);
			return -EINVAL;
		}
		if (parse_u64("--sizes", tok, BENCH_MIN_FRAME, BENCH_MAX_FRAME,
			      &v) < 0)
			return -EINVAL;
		cfg->sizes[cfg->nb_sizes++] = (uint32_t)v;
	}
	if (cfg->nb_sizes == 0) {
		fprintf(stderr, "--sizes=%s: no size\n", arg);
		return -EINVAL;
	}
	return 0;
}

static int
parse_args(int argc, char **argv, struct bench_cfg *cfg)
{
	static const struct option opts[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "packets", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "peer", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "loopback", no_argument, NULL, 'l' },
		{ "burst", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	if (argc < 2 || (strcmp(argv[1], "icount") != 0 &&
			 strcmp(argv[1], "echo") != 0 &&
			 strcmp(argv[1], "ping") != 0)) {
		fprintf(stderr, "mode=%s: expected icount, echo or ping\n",
			argc < 2 ? "" : argv[1]);
		return -EINVAL;
	}
	cfg->mode = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_sizes(optarg, cfg) < 0)
				return -EINVAL;
			break;
		case 'n':
			if (parse_u64("--packets", optarg, 1, UINT64_C(1) << 32,
				      &cfg->packets) < 0)
				return -EINVAL;
			break;
		case 'w':
			if (parse_u64("--warmup", optarg, 1, UINT64_C(1) << 32,
				      &cfg->warmup) < 0)
				return -EINVAL;
			break;
		case 'p':
			if (rte_ether_unformat_addr(optarg, &cfg->peer) < 0) {
				fprintf(stderr, "--peer=%s: expected a MAC "
					"address\n", optarg);
				return -EINVAL;
			}
			cfg->have_peer = true;
			break;
		case 't':
			if (parse_u64("--timeout", optarg, 1, 86400, &v) < 0)
				return -EINVAL;
			cfg->timeout_s = (double)v;
			break;
		case 'l':
			cfg->loopback = true;
			break;
		case 'b':
			if (parse_u64("--burst", optarg, 1, BENCH_BURST, &v) < 0)
				return -EINVAL;
			cfg->burst = (uint16_t)v;
			break;
		default:
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct bench_cfg cfg = {
		.sizes = { 64, 1500 },
		.nb_sizes = 2,
		.packets = 100000,
		.warmup = 1000,
		.timeout_s = 60,
		.burst = BENCH_BURST,
	};
	int ret;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	argv[ret] = argv[0];
	if (parse_args(argc - ret, argv + ret, &cfg) < 0) {
		usage(argv[0]);
		rte_eal_cleanup();
		return 2;
	}
	bench_signals();
	if (strcmp(cfg.mode, "icount") == 0)
		ret = bench_icount(&cfg);
	else if (strcmp(cfg.mode, "echo") == 0)
		ret = bench_echo(&cfg);
	else
		ret = bench_ping(&cfg);
	rte_eal_cleanup();
	return ret == 0 ? 0 : 1;
}
