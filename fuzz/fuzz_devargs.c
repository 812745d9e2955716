/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * fuzz_devargs: arbitrary devargs strings through ipoib_config_parse(), as
 * EAL hands them to the probe ("key=value,key=value"), then the effective
 * configuration through ipoib_config_log(). No EAL: kvargs and the log
 * need none; the log goes to /dev/null at DEBUG so every message of the
 * refusals is formatted too.
 *
 * Input: the devargs string (up to the first NUL).
 *
 * Properties: no stray access whatever the string; an accepted string
 * leaves a configuration inside every documented range (DESIGN.md's
 * devargs table and ipoib_devargs.h).
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "ipoib_devargs.h"

#define FUZZ_CHECK(cond) do {			\
	if (!(cond))				\
		__builtin_trap();		\
} while (0)

#define MAX_ARGS	4096

static char args[MAX_ARGS + 1];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *null = fopen("/dev/null", "w");

	RTE_SET_USED(argc);
	RTE_SET_USED(argv);
	if (null != NULL)
		rte_openlog_stream(null);
	rte_log_set_global_level(RTE_LOG_DEBUG);
	rte_log_set_level_pattern("*", RTE_LOG_DEBUG);
	return 0;
}

static bool
name_ok(const char *s, size_t max, bool dots)
{
	size_t n = strnlen(s, max + 1), i;

	if (n == 0 || n > max)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' &&
		    s[i] != '-' && !(dots && s[i] == '.'))
			return false;
	return true;
}

static void
check_config(const struct ipoib_config *c)
{
	const struct ipoib_shm_config *shm = &c->shm;
	const struct ipoib_verbs_config *verbs = &c->verbs;

	FUZZ_CHECK(c->transport == IPOIB_TRANSPORT_SHM ||
		   c->transport == IPOIB_TRANSPORT_VERBS);
	FUZZ_CHECK(c->srq <= IPOIB_SRQ_OFF);
	FUZZ_CHECK(c->max_conns >= 1 && c->max_conns <= 65536);
	FUZZ_CHECK(c->mem_budget >= (64ULL << 10) &&
		   c->mem_budget <= (1ULL << 40));
	FUZZ_CHECK((c->pkey & 0x7fff) != 0);
	FUZZ_CHECK(c->reap_idle <= 604800);
	FUZZ_CHECK(c->retry_min >= 1 && c->retry_min <= c->retry_max &&
		   c->retry_max <= 3600000);
	/* transport=shm */
	FUZZ_CHECK(name_ok(shm->fabric, IPOIB_FABRIC_NAME_MAX, false));
	FUZZ_CHECK(shm->ib_mtu >= 256 && shm->ib_mtu <= 4096 &&
		   (shm->ib_mtu & (shm->ib_mtu - 1)) == 0);
	FUZZ_CHECK(strnlen(shm->capture, sizeof(shm->capture)) <
		   sizeof(shm->capture));
	FUZZ_CHECK(shm->max_qp <= 65536 && shm->max_srq_wr <= (1 << 20) &&
		   shm->max_cqe <= (1 << 24));
	FUZZ_CHECK(shm->faults.drop_ppm <= 1000000 &&
		   shm->faults.cm_delay_ms <= 60000);
	FUZZ_CHECK(shm->faults.rej_after >= -1 &&
		   shm->faults.rej_after <= 65536);
	/* bits 1..6: REQ .. DREP */
	FUZZ_CHECK((shm->faults.cm_drop_mask & ~0x7eu) == 0);
	/* transport=verbs */
	FUZZ_CHECK(verbs->dev[0] == '\0' ||
		   name_ok(verbs->dev, IPOIB_DEV_NAME_MAX, true));
	FUZZ_CHECK(verbs->port >= 1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ipoib_config cfg;
	int ret;

	if (size > MAX_ARGS)
		return -1;
	memcpy(args, data, size);
	args[size] = '\0';
	ipoib_config_defaults(&cfg);
	ret = ipoib_config_parse(&cfg, "net_ipoibcm0", args);
	if (ret == 0) {
		check_config(&cfg);
		ipoib_config_log(&cfg, "net_ipoibcm0");
	} else {
		FUZZ_CHECK(ret == -EINVAL);
	}
	return 0;
}
