/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * shm-fabric-test: the semantics of the shm fabric (drivers/net/ipoib_cm/
 * shm), across processes, without EAL.
 *
 *   shm-fabric-test list            the tests, one a line, with their help
 *   shm-fabric-test all             every test, in name order
 *   shm-fabric-test <name>...       the named tests
 *
 * Each test prints "=== <name>", its failures, and "--- <name>: PASS" or
 * FAIL; the run ends with "N passed, N failed" and exits non-zero if any
 * failed. meson registers every test on its own (suite 'fabric'):
 *
 *   meson test -C build --suite fabric
 *   meson test -C build-asan --suite fabric rc_two_procs
 *
 * Every test works on a fabric of its own, "tf_<test>_<pid>", and fails if
 * any /dev/shm/ipoibcm.<fabric>* object is left at its end. Processes are
 * fork()ed children that attach by name and talk to their parent over
 * pipes; every wait has a deadline, no sleep stands in for a handshake.
 * The capture test runs tshark, which must be installed.
 */

#include <stdlib.h>
#include <string.h>

#include "fabric_util.h"
#include "shm_log.h"

static struct ftest *ftests;

/* Keep the list sorted by name, so "list" and "all" are stable. */
void
ftest_register(struct ftest *t)
{
	struct ftest **pp = &ftests;

	while (*pp != NULL && strcmp((*pp)->name, t->name) < 0)
		pp = &(*pp)->next;
	t->next = *pp;
	*pp = t;
}

static int
run_one(const struct ftest *t)
{
	double t0 = now_ms();
	int ret;

	printf("=== %s\n", t->name);
	fflush(stdout);
	ft_fails = 0;
	ret = t->fn();
	if (ft_fails != 0)
		ret = -1;
	printf("--- %s: %s (%.0f ms)\n", t->name, ret == 0 ? "PASS" : "FAIL",
	       now_ms() - t0);
	fflush(stdout);
	return ret;
}

static const struct ftest *
find_test(const char *name)
{
	const struct ftest *t;

	for (t = ftests; t != NULL; t = t->next)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

int
main(int argc, char **argv)
{
	unsigned int passed = 0, failed = 0;
	const struct ftest *t;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* the fabric's own warnings (a peer died, ...) are expected here */
	shm_set_logger(NULL, getenv("SHM_FABRIC_TEST_DEBUG") != NULL ?
		       SHM_LOG_DEBUG : SHM_LOG_ERR);
	if (argc < 2 || strcmp(argv[1], "list") == 0) {
		for (t = ftests; t != NULL; t = t->next)
			printf("%-20s %s\n", t->name, t->help);
		return 0;
	}
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "all") == 0) {
			for (t = ftests; t != NULL; t = t->next) {
				if (run_one(t) == 0)
					passed++;
				else
					failed++;
			}
			continue;
		}
		t = find_test(argv[i]);
		if (t == NULL) {
			printf("no test named %s\n", argv[i]);
			failed++;
			continue;
		}
		if (run_one(t) == 0)
			passed++;
		else
			failed++;
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
