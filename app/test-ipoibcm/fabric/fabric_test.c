/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * shm-fabric-test: the semantics of the shm fabric (drivers/net/ipoib_cm/
 * shm), across processes, without EAL (lib/test_runner.h runs the tests).
 *
 *   shm-fabric-test list            the tests, one a line, with their help
 *   shm-fabric-test all             every test, in name order
 *   shm-fabric-test <name>...       the named tests
 *
 * meson registers every test on its own (suite 'fabric'):
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

#include "fabric_util.h"
#include "shm_log.h"

/* A failed CHECK counts in ft_fails: the test failed, whatever it returns. */
static void
ft_before(const struct test_case *t)
{
	(void)t;
	ft_fails = 0;
}

static int
ft_after(const struct test_case *t, int ret)
{
	(void)t;
	return ft_fails != 0 ? -1 : ret;
}

int
main(int argc, char **argv)
{
	static const struct test_hooks hooks = { ft_before, ft_after };

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* the fabric's own warnings (a peer died, ...) are expected here */
	shm_set_logger(NULL, getenv("SHM_FABRIC_TEST_DEBUG") != NULL ?
		       SHM_LOG_DEBUG : SHM_LOG_ERR);
	return test_main(argc, argv, &hooks);
}
