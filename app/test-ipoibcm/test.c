/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * dpdk-test-ipoibcm: the driver's unit, fault and soak tests, in one
 * process with EAL (lib/test_runner.h runs them).
 *   dpdk-test-ipoibcm [EAL options] -- list | all | <test>...
 */

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_log.h>

#include "test.h"

static char *log_buf;
static size_t log_len;
static FILE *log_mem;
static FILE *log_prev;

void
test_log_capture_start(void)
{
	free(log_buf);
	log_buf = NULL;
	log_mem = open_memstream(&log_buf, &log_len);
	log_prev = rte_log_get_stream();
	rte_openlog_stream(log_mem);
}

/* The text logged since test_log_capture_start(), also echoed. */
const char *
test_log_capture_stop(void)
{
	rte_openlog_stream(log_prev == stderr ? NULL : log_prev);
	fclose(log_mem);
	log_mem = NULL;
	fputs(log_buf, stdout);
	return log_buf;
}

static int
test_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

int
main(int argc, char **argv)
{
	char runtime[PATH_MAX];
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "EAL initialisation failed\n");
		return 2;
	}
	argc -= ret;
	argv += ret;
	if (argc > 1 && strcmp(argv[1], "--") == 0) {
		argc--;
		argv++;
	}
	ret = test_main(argc, argv, NULL);
	/* EAL leaves its runtime directory (/var/run/dpdk/<prefix>) */
	snprintf(runtime, sizeof(runtime), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	if (rte_eal_process_type() == RTE_PROC_PRIMARY)
		nftw(runtime, test_rm, 8, FTW_DEPTH | FTW_PHYS);
	free(log_buf);
	return ret;
}
