/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The test runner shared by dpdk-test-ipoibcm and shm-fabric-test.
 */

#include <stdio.h>
#include <string.h>

#include "test_runner.h"

static struct test_case *tests;

/* Keep the list sorted by name, so "list" and "all" are stable. */
void
test_register(struct test_case *t)
{
	struct test_case **pp = &tests;

	while (*pp != NULL && strcmp((*pp)->name, t->name) < 0)
		pp = &(*pp)->next;
	t->next = *pp;
	*pp = t;
}

static int
run_one(const struct test_case *t, const struct test_hooks *hooks)
{
	double t0 = test_now_ms();
	int ret;

	printf("=== %s\n", t->name);
	fflush(stdout);
	if (hooks != NULL && hooks->before != NULL)
		hooks->before(t);
	ret = t->fn();
	if (hooks != NULL && hooks->after != NULL)
		ret = hooks->after(t, ret);
	printf("--- %s: %s (%.0f ms)\n", t->name, ret == 0 ? "PASS" : "FAIL",
	       test_now_ms() - t0);
	fflush(stdout);
	return ret;
}

static const struct test_case *
find_test(const char *name)
{
	const struct test_case *t;

	for (t = tests; t != NULL; t = t->next)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

int
test_main(int argc, char **argv, const struct test_hooks *hooks)
{
	unsigned int passed = 0, failed = 0;
	const struct test_case *t;
	int i;

	if (argc < 2 || strcmp(argv[1], "list") == 0) {
		for (t = tests; t != NULL; t = t->next)
			printf("%-28s %s\n", t->name, t->help);
		return 0;
	}
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "all") == 0) {
			for (t = tests; t != NULL; t = t->next) {
				if (run_one(t, hooks) == 0)
					passed++;
				else
					failed++;
			}
			continue;
		}
		t = find_test(argv[i]);
		if (t == NULL) {
			printf("unknown test \"%s\"; \"list\" names them\n",
			       argv[i]);
			failed++;
		} else if (run_one(t, hooks) == 0) {
			passed++;
		} else {
			failed++;
		}
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
