/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Isolation: nothing crosses a partition (P_Key), a wrong Q_Key or a
 * fabric name, and a port joins no fabric another user could have
 * tampered with. The raw-fabric checks inject IPoIB frames from a shm
 * port of this process, below the driver, where the driver's own sends
 * could never produce them.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>

#include "ipoib_wire.h"
#include "shm_fabric.h"
#include "test.h"
#include "test_raw.h"
#include "test_util.h"

#define QUIET_MS	300	/* how long "nothing more arrives" is watched */

static const struct rte_ether_addr bcast = {
	.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
};

/*
 * Receive at port until want frames came (or the hang guard), then what
 * else arrives within quiet_ms; the count.
 */
static unsigned int
drain(uint16_t port, unsigned int want, uint64_t quiet_ms)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;
	struct rte_mbuf *rx[32];
	unsigned int got = 0;
	uint16_t n;

	while (got < want && test_now_ms() < deadline) {
		n = rte_eth_rx_burst(port, 0, rx, RTE_DIM(rx));
		rte_pktmbuf_free_bulk(rx, n);
		got += n;
	}
	deadline = test_now_ms() + quiet_ms;
	while (test_now_ms() < deadline) {
		n = rte_eth_rx_burst(port, 0, rx, RTE_DIM(rx));
		rte_pktmbuf_free_bulk(rx, n);
		got += n;
	}
	return got;
}

struct iso_port {
	char name[32];
	uint16_t port;
	struct rte_ether_addr mac;
};

static int
iso_port_open(struct iso_port *p, const char *name, const char *fabric,
	      unsigned int guid, const char *extra)
{
	char args[160];

	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(args, sizeof(args), "fabric=%s,guid=0x%x%s", fabric, guid,
		 extra);
	TEST_RUN(test_port_create(p->name, args, 1, 1500, &p->port));
	rte_eth_macaddr_get(p->port, &p->mac);
	return 0;
}

/*
 * A and C in partition 0x8001, B in 0x8002 on one fabric: A reaches C,
 * unicast and broadcast, and never B; B's broadcasts reach neither.
 */
static int
test_iso_pkey(void)
{
	const char *fab = test_fabric("t_iso_pkey");
	struct iso_port a, b, c;
	unsigned int got;

	TEST_RUN(iso_port_open(&a, "net_ipoibcm_isoa", fab, 0xa, ",pkey=0x8001"));
	TEST_RUN(iso_port_open(&b, "net_ipoibcm_isob", fab, 0xb, ",pkey=0x8002"));
	TEST_RUN(iso_port_open(&c, "net_ipoibcm_isoc", fab, 0xc, ",pkey=0x8001"));
	TEST_RUN(test_send_frames(a.port, &a.mac, &c.mac, 20));
	TEST_RUN(test_send_frames(a.port, &a.mac, &bcast, 5));
	TEST_RUN(test_send_frames(a.port, &a.mac, &b.mac, 20));
	got = drain(c.port, 25, QUIET_MS);
	TEST_ASSERT_EQ(got, 25, "C, in A's partition, got A's frames");
	TEST_ASSERT_EQ(drain(b.port, 0, QUIET_MS), 0, "B got nothing of A's");
	/* counted by the control thread, which looked the MAC up */
	TEST_ASSERT(test_wait_xstat(a.port, "tx_drop_no_neigh", 20,
				    TEST_HANG_MS), "B cannot be resolved from A's partition");
	TEST_RUN(test_send_frames(b.port, &b.mac, &bcast, 5));
	TEST_ASSERT_EQ(drain(a.port, 0, QUIET_MS) + drain(c.port, 0, 1), 0,
		       "B's broadcasts reach no one of 0x8001");
	test_port_destroy(c.name);
	test_port_destroy(b.name);
	test_port_destroy(a.name);
	return 0;
}
REGISTER_TEST(iso_pkey, test_iso_pkey,
		    "P_Keys 0x8001 and 0x8002: nothing crosses, both ways");

/*
 * pkey= is the port's P_Key table entry, membership bit included (as the
 * SM assigns it): A and B limited members of partition 1 (0x0001), C a
 * full member (0x8001). A limited member talks with a full one, both
 * ways, unicast and broadcast; two limited members never (IBTA 10.9.3).
 */
static int
test_iso_pkey_limited(void)
{
	const char *fab = test_fabric("t_iso_lim");
	struct iso_port a, b, c;

	TEST_RUN(iso_port_open(&a, "net_ipoibcm_lima", fab, 0xa, ",pkey=0x0001"));
	TEST_RUN(iso_port_open(&b, "net_ipoibcm_limb", fab, 0xb, ",pkey=0x0001"));
	TEST_RUN(iso_port_open(&c, "net_ipoibcm_limc", fab, 0xc, ",pkey=0x8001"));
	TEST_RUN(test_send_frames(a.port, &a.mac, &c.mac, 10));
	TEST_ASSERT_EQ(drain(c.port, 10, QUIET_MS), 10,
		       "limited A reaches full C");
	TEST_RUN(test_send_frames(c.port, &c.mac, &a.mac, 10));
	TEST_ASSERT_EQ(drain(a.port, 10, QUIET_MS), 10,
		       "full C reaches limited A");
	TEST_RUN(test_send_frames(a.port, &a.mac, &b.mac, 10));
	TEST_ASSERT_EQ(drain(b.port, 0, QUIET_MS), 0,
		       "limited A never reaches limited B");
	/* counted by the control thread, which looked the MAC up */
	TEST_ASSERT(test_wait_xstat(a.port, "tx_drop_no_neigh", 10,
				    TEST_HANG_MS), "B cannot be resolved from A: counted");
	TEST_RUN(test_send_frames(b.port, &b.mac, &bcast, 5));
	TEST_ASSERT_EQ(drain(c.port, 5, QUIET_MS), 5,
		       "B's broadcasts reach full C");
	TEST_ASSERT_EQ(drain(a.port, 0, QUIET_MS), 0,
		       "and never limited A");
	test_port_destroy(c.name);
	test_port_destroy(b.name);
	test_port_destroy(a.name);
	return 0;
}
REGISTER_TEST(iso_pkey_limited, test_iso_pkey_limited,
	      "pkey=0x0001 is a limited member: talks to 0x8001, not 0x0001");

/* One IPoIB frame (header + IPv4/UDP) from a raw UD QP to a port. */
static int
raw_send(struct raw *r, unsigned int qp, uint32_t qkey,
	 const uint8_t *hw, const struct rte_ether_addr *src,
	 const struct rte_ether_addr *dst)
{
	struct rte_mbuf *m = test_udp_frame(src, dst, 200, 7, false);
	int ret;

	TEST_ASSERT(m != NULL, "frame");
	/* with a GRH: the sender is named by its GID at once */
	ret = raw_post(r, qp, qkey, hw, true, RTE_ETHER_TYPE_IPV4,
		       rte_pktmbuf_mtod_offset(m, void *, RTE_ETHER_HDR_LEN),
		       m->pkt_len - RTE_ETHER_HDR_LEN);
	rte_pktmbuf_free(m);
	return ret;
}

/*
 * Below the driver: a frame from partition 0x8002 and one with a wrong
 * Q_Key are dropped by the fabric and counted, never delivered; the same
 * frame from 0x8001 with the right Q_Key is. A REQ from 0x8002 is refused.
 */
static int
test_iso_raw(void)
{
	const char *fab = test_fabric("t_iso_raw");
	uint8_t hw[IPOIB_HWADDR_LEN];
	struct shm_cm_event ev;
	struct iso_port a;
	struct raw r;

	TEST_RUN(iso_port_open(&a, "net_ipoibcm_isoa", fab, 0xa,
			       ",pkey=0x8001"));
	TEST_RUN(raw_open(&r, fab));
	TEST_ASSERT_EQ(shm_addr_resolve(r.port, a.mac.addr_bytes, hw), 0,
		       "A's address, seen from the raw port");

	TEST_RUN(raw_send(&r, 1, IPOIB_QKEY_DEFAULT, hw, &bcast, &a.mac));
	TEST_ASSERT_EQ(test_xstat(a.port, "hca_pkey_drops"), 1,
		       "from 0x8002: dropped by P_Key");
	TEST_RUN(raw_send(&r, 0, 0x1234, hw, &bcast, &a.mac));
	TEST_ASSERT_EQ(test_xstat(a.port, "hca_qkey_drops"), 1,
		       "wrong Q_Key: dropped");
	TEST_ASSERT_EQ(drain(a.port, 0, QUIET_MS), 0, "the app saw neither");
	TEST_RUN(raw_send(&r, 0, IPOIB_QKEY_DEFAULT, hw, &bcast, &a.mac));
	TEST_ASSERT_EQ(drain(a.port, 1, QUIET_MS), 1,
		       "the same frame from 0x8001 with the Q_Key arrives");

	TEST_RUN(raw_req(&r, r.rc, hw, NULL, 0, &ev));
	TEST_ASSERT_EQ(ev.type, IPOIB_CM_REJ_RCVD, "REQ from 0x8002 refused");
	TEST_ASSERT_EQ(test_xstat(a.port, "conns_rx"), 0, "no connection");
	raw_close(&r);
	test_port_destroy(a.name);
	return 0;
}
REGISTER_TEST(iso_raw, test_iso_raw,
		    "raw frames of another P_Key or Q_Key dropped, counted");

/* Ports on fabrics x and y (same GUIDs): x never sees y's traffic. */
static int
test_iso_fabric(void)
{
	const char *fx = test_fabric("t_iso_x"), *fy = test_fabric("t_iso_y");
	struct iso_port x0, x1, y1;

	TEST_RUN(iso_port_open(&x0, "net_ipoibcm_isox0", fx, 0x10, ""));
	TEST_RUN(iso_port_open(&x1, "net_ipoibcm_isox1", fx, 0x11, ""));
	TEST_RUN(iso_port_open(&y1, "net_ipoibcm_isoy1", fy, 0x11, ""));
	TEST_RUN(test_send_frames(y1.port, &y1.mac, &bcast, 5));
	TEST_RUN(test_send_frames(y1.port, &y1.mac, &x0.mac, 5));
	TEST_ASSERT_EQ(drain(x0.port, 0, QUIET_MS) + drain(x1.port, 0, 1), 0,
		       "nothing from fabric y on fabric x");
	/* counted by the control thread, which looked the MAC up */
	TEST_ASSERT(test_wait_xstat(y1.port, "tx_drop_no_neigh", 5,
				    TEST_HANG_MS), "x0 cannot be resolved from y");
	TEST_RUN(test_send_frames(x1.port, &x1.mac, &x0.mac, 5));
	TEST_ASSERT_EQ(drain(x0.port, 5, QUIET_MS), 5, "x1 reaches x0");
	test_port_destroy(y1.name);
	test_port_destroy(x1.name);
	test_port_destroy(x0.name);
	return 0;
}
REGISTER_TEST(iso_fabric, test_iso_fabric,
		    "two fabric names: no traffic crosses");

/* Probe a port on fab; it must fail, logging why. */
static int
probe_refused(const char *fab, const char *why)
{
	char args[96];
	const char *log;
	int ret;

	snprintf(args, sizeof(args), "fabric=%s,guid=0x1", fab);
	test_log_capture_start();
	ret = rte_vdev_init("net_ipoibcm_isoo", args);
	log = test_log_capture_stop();
	TEST_ASSERT(ret != 0, "probe refused (%s)", why);
	TEST_ASSERT(strstr(log, "refusing to join") != NULL,
		    "the log says why (%s)", why);
	return 0;
}

/*
 * The fabric's objects are created 0600 and owned by us; an object open
 * to others, or another user's (checked when running as root), is refused.
 */
static int
test_iso_owner(void)
{
	const char *fab = test_fabric("t_iso_own");
	char name[64], path[96];
	struct iso_port a;
	struct stat st;
	int fd;

	TEST_RUN(iso_port_open(&a, "net_ipoibcm_isoa", fab, 0xa, ""));
	snprintf(path, sizeof(path), "/dev/shm/ipoibcm.%s", fab);
	TEST_ASSERT(stat(path, &st) == 0, "%s", path);
	TEST_ASSERT_EQ(st.st_mode & 0777, 0600, "header 0600");
	TEST_ASSERT_EQ(st.st_uid, geteuid(), "and ours");
	test_port_destroy(a.name);

	snprintf(name, sizeof(name), "/ipoibcm.%s", fab);
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	TEST_ASSERT(fd >= 0, "planted object");
	TEST_ASSERT_EQ(fchmod(fd, 0666), 0, "open to all");
	TEST_RUN(probe_refused(fab, "mode 0666"));
	if (geteuid() == 0) {
		TEST_ASSERT_EQ(fchmod(fd, 0600), 0, "0600");
		TEST_ASSERT_EQ(fchown(fd, 65534, 65534), 0, "nobody's");
		TEST_RUN(probe_refused(fab, "owned by uid 65534"));
	} else {
		printf("    not root: the foreign-owner case needs root\n");
	}
	close(fd);
	shm_unlink(name);
	return 0;
}
REGISTER_TEST(iso_owner, test_iso_owner,
		    "fabric objects 0600; one open to others or foreign refused");
