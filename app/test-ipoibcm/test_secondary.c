/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * What the primary answers a secondary process that attaches: yes while
 * the port runs, no (clearly, counted) once it closes. The secondary's
 * side, with real dpdk-proc-info and dpdk-dumpcap, is
 * blackbox/test_secondary.py.
 */

#include <string.h>

#include <rte_ethdev.h>

#include "ipoib_cm.h"
#include "ipoib_secondary.h"
#include "ipoib_telemetry.h"
#include "test.h"
#include "test_util.h"

static int
test_secondary_admit(void)
{
	const char *name = "net_ipoibcm_sec", *log;
	struct ipoib_priv *priv;
	char args[64];
	uint16_t port;

	snprintf(args, sizeof(args), "fabric=%s", test_fabric("t_sec"));
	TEST_RUN(test_port_create(name, args, 1, 1500, &port));
	priv = ipoib_priv_of_port(port);
	TEST_ASSERT_EQ(ipoib_secondary_admit(name), 0, "admitted");
	TEST_ASSERT_EQ(ipoib_secondary_admit("net_ipoibcm_none"), -ENODEV,
		       "no such port");
	TEST_ASSERT_EQ(test_xstat(port, "secondary_attaches"), 1, "counted");
	/* what dev_close does first: from then on, refused */
	ipoib_secondary_closing(priv);
	test_log_capture_start();
	TEST_ASSERT_EQ(ipoib_secondary_admit(name), -ENODEV,
		       "refused while the port closes");
	log = test_log_capture_stop();
	TEST_ASSERT(strstr(log, "while the port closes") != NULL,
		    "the log says so");
	TEST_ASSERT_EQ(test_xstat(port, "secondary_refused"), 1, "counted");
	test_port_destroy(name);
	return 0;
}
REGISTER_TEST(secondary_admit, test_secondary_admit,
		    "a secondary is admitted, and refused once the port closes");
