/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Devargs: every key accepted with good values, every bad value refused
 * with a message naming the key.
 */

#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>

#include "test.h"

struct bad_arg {
	const char *args;
	const char *key;	/* the message must name it */
};

static const struct bad_arg bad_args[] = {
	{ "srq=maybe", "srq" },
	{ "max_conns=0", "max_conns" },
	{ "max_conns=65537", "max_conns" },
	{ "max_conns=12x", "max_conns" },
	{ "pkey=0x10000", "pkey" },
	{ "pkey=0x8000", "pkey" },
	{ "pkey=0", "pkey" },
	{ "mem_budget=lots", "mem_budget" },
	{ "mem_budget=1K", "mem_budget" },
	{ "mem_budget=-5M", "mem_budget" },
	{ "colour=blue", "colour" },
	{ "transport=ethernet", "transport" },
	{ "fabric=", "fabric" },
	{ "fabric=has/slash", "fabric" },
	{ "fabric=0123456789012345678901234567890123", "fabric" },
	{ "guid=0", "guid" },
	{ "guid=0x12345678901234567", "guid" },
	{ "guid=xyz", "guid" },
	{ "ib_mtu=1500", "ib_mtu" },
	{ "ib_mtu=8192", "ib_mtu" },
	{ "mode=ip", "mode" },
	{ "mode=raw", "mode" },		/* not implemented */
	{ "reap_idle=-1", "reap_idle" },
	{ "retry_min=0", "retry_min" },
	{ "retry_min=500,retry_max=100", "retry_min" },
	{ "srq=on,srq=off", "srq" },
	{ "dev=mlx5_0", "dev" },		/* verbs-only key on shm */
	{ "transport=verbs,fabric=x", "fabric" },	/* shm-only on verbs */
	{ "transport=verbs,port=0", "port" },
	{ "transport=verbs,gid_index=256", "gid_index" },
	{ "capture=/proc/no-such-dir/x.pcap", "capture" },	/* unwritable */
	{ "capture=/", "capture" },
};

static const char *const good_args[] = {
	"",
	"transport=shm,fabric=t_devargs,guid=0x0002c90300a1b2c3,srq=on,"
	"max_conns=65536,mem_budget=1G,pkey=0x8001,ib_mtu=4096,mode=eth,"
	"reap_idle=0,retry_min=1,retry_max=3600000",
	"srq=off,max_conns=1,mem_budget=64K,pkey=0x7fff,ib_mtu=256",
	"srq=auto,mem_budget=1048576,ib_mtu=512,reap_idle=604800",
	"fabric=A-z_09,guid=1,mem_budget=3m,ib_mtu=1024",
};

static int
test_devargs_invalid(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad_args); i++) {
		const char *log;
		int ret;

		printf("  %s\n", bad_args[i].args);
		test_log_capture_start();
		ret = rte_vdev_init("net_ipoibcm_bad", bad_args[i].args);
		log = test_log_capture_stop();
		TEST_ASSERT(ret < 0, "probe with \"%s\" succeeded",
			    bad_args[i].args);
		TEST_ASSERT(strstr(log, bad_args[i].key) != NULL,
			    "message does not name \"%s\"", bad_args[i].key);
		TEST_ASSERT(strstr(log, "accepted") != NULL ||
			    strstr(log, "applies to") != NULL,
			    "message does not say what is accepted");
		TEST_ASSERT(rte_eth_dev_count_avail() == 0,
			    "a port was left behind");
	}
	return 0;
}
REGISTER_TEST(devargs_invalid, test_devargs_invalid,
		    "bad devargs fail the probe naming the key");

static int
test_devargs_valid(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(good_args); i++) {
		uint16_t port;

		printf("  \"%s\"\n", good_args[i]);
		TEST_ASSERT(rte_vdev_init("net_ipoibcm_good", good_args[i]) == 0,
			    "probe refused \"%s\"", good_args[i]);
		TEST_ASSERT(rte_eth_dev_get_port_by_name("net_ipoibcm_good",
							  &port) == 0,
			    "no port");
		TEST_ASSERT(rte_vdev_uninit("net_ipoibcm_good") == 0,
			    "remove failed");
	}
	return 0;
}
REGISTER_TEST(devargs_valid, test_devargs_valid,
		    "every devarg accepts its documented values");
