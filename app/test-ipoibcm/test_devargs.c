/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Devargs: every key accepted with good values, every bad value refused
 * with a message naming the key.
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>

#include "test.h"
#include "test_util.h"

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
	{ "ctrl_nice=-21", "ctrl_nice" },
	{ "ctrl_nice=20", "ctrl_nice" },
	{ "ctrl_nice=5x", "ctrl_nice" },
	{ "ctrl_nice=", "ctrl_nice" },
	{ "ctrl_nice=high", "ctrl_nice" },
};

static const char *const good_args[] = {
	"",
	"transport=shm,fabric=t_devargs,guid=0x0002c90300a1b2c3,srq=on,"
	"max_conns=65536,mem_budget=1G,pkey=0x8001,ib_mtu=4096,mode=eth,"
	"reap_idle=0,retry_min=1,retry_max=3600000,ctrl_nice=-20",
	"srq=off,max_conns=1,mem_budget=64K,pkey=0x7fff,ib_mtu=256",
	"srq=auto,mem_budget=1048576,ib_mtu=512,reap_idle=604800,ctrl_nice=19",
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

/* The thread of this process named name, or -1. */
static pid_t
thread_by_name(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t tid = -1;

	while (d != NULL && tid < 0 && (e = readdir(d)) != NULL) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) != NULL &&
		    strncmp(comm, name, strlen(name)) == 0 &&
		    comm[strlen(name)] == '\n')
			tid = atoi(e->d_name);
		fclose(f);
	}
	if (d != NULL)
		closedir(d);
	return tid;
}

/* Wait (with a hang guard) until port's control thread has nice want. */
static int
ctrl_nice_is(uint16_t port, int want)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;
	char name[32];
	pid_t tid;
	int got;

	snprintf(name, sizeof(name), "ipoib-ctl-%u", port);
	tid = thread_by_name(name);
	TEST_ASSERT(tid > 0, "no thread %s", name);
	do {
		errno = 0;
		got = getpriority(PRIO_PROCESS, (id_t)tid);
		TEST_ASSERT(errno == 0, "getpriority: %s", strerror(errno));
		TEST_ASSERT(test_now_ms() < deadline,
			    "%s runs at nice %d, not %d", name, got, want);
	} while (got != want);
	return 0;
}

/*
 * ctrl_nice sets the nice value of the port's control thread: lower
 * than the process's (needs CAP_SYS_NICE: the tests run as root) and
 * higher; without it the thread keeps the process's.
 */
static int
test_devargs_ctrl_nice(void)
{
	static const char *const names[] = {
		"net_ipoibcm_nice0", "net_ipoibcm_nice1", "net_ipoibcm_nice2",
	};
	static const char *const args[] = {
		"fabric=t_nice,ctrl_nice=-3", "fabric=t_nice,ctrl_nice=19",
		"fabric=t_nice",
	};
	int want[] = { -3, 19, 0 };
	uint16_t port[RTE_DIM(names)];
	unsigned int i;
	int ret = 0;

	/* unset: the thread creating it (this one) passes its own on */
	errno = 0;
	want[2] = getpriority(PRIO_PROCESS, 0);
	TEST_ASSERT(errno == 0, "getpriority: %s", strerror(errno));
	for (i = 0; i < RTE_DIM(names) && ret == 0; i++)
		ret = test_port_create(names[i], args[i], 1, 1500, &port[i]);
	for (i = 0; i < RTE_DIM(names) && ret == 0; i++)
		ret = ctrl_nice_is(port[i], want[i]);
	for (i = 0; i < RTE_DIM(names); i++)
		test_port_destroy(names[i]);
	return ret;
}
REGISTER_TEST(devargs_ctrl_nice, test_devargs_ctrl_nice,
		    "ctrl_nice sets the control thread's nice value");
