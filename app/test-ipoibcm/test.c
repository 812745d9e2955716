/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * dpdk-test-ipoibcm: the driver's unit, fault and soak tests, in one
 * process with EAL (lib/test_runner.h runs them).
 *   dpdk-test-ipoibcm [EAL options] -- list | all | <test>...
 */

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

int
main(int argc, char **argv)
{
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
	rte_eal_cleanup();
	free(log_buf);
	return ret;
}
