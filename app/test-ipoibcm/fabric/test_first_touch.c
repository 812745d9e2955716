/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * First touch: a large CQ (64 KiB and more) is mapped in its owner when
 * made, and any in an RC sender when it connects, as an HCA's queues
 * are pinned when made. A
 * page a process touches first on the datapath costs it a fault (every
 * 64 completions of a fresh CQ before: ipoib_cm_perf.rst, "First
 * touch"). Whether a page is mapped is read from /proc/self/pagemap.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fabric_util.h"

/*
 * 4096 CQEs of 64 bytes: 64 pages, more than one read fault maps at once
 * (the kernel's fault-around, 64 KiB), so a page found mapped was mapped
 * on purpose.
 */
#define FT_CQE		4096

static const struct ep_conf ft_conf_a = { "a", SHM_QPT_RC, FT_CQE, 256 };
static const struct ep_conf ft_conf_b = { "b", SHM_QPT_RC, 64, 256 };

/* Pages of [p, p + len) this process has no page table entry for. */
static long
pages_unmapped(const void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p & ~(page - 1), end = (uintptr_t)p + len;
	long missing = 0;
	uint64_t e;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return -errno;
	for (; a < end; a += page) {
		if (pread(fd, &e, sizeof(e), (off_t)(a / page * sizeof(e))) !=
		    (ssize_t)sizeof(e)) {
			missing = -EIO;
			break;
		}
		missing += !(e >> 63);	/* bit 63: present */
	}
	close(fd);
	return missing;
}

/* The CQ a remote QP completes into, as this process maps it. */
static long
peer_cq_unmapped(struct shm_fabric *f, uint32_t qpn)
{
	const struct shm_qp_ent *q = shm_qp_slot(f, qpn);
	const struct shm_cq_ring *c;

	if (q == NULL)
		return -EINVAL;
	c = shm_arena_ptr(f, q->proc, q->cq_off);
	if (c == NULL)
		return -EINVAL;
	return pages_unmapped(c, shm_cq_bytes(c->size));
}

/* The active side: every page of A's CQ mapped here once connected. */
static int
ft_child(int rd, int wr, void *arg)
{
	struct shm_cm_id *id = NULL;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	struct msg peer, m;
	struct ep b;

	memset(&b, 0, sizeof(b));
	CHECK(ep_open(&b, arg, &ft_conf_b) == 0);
	CHECK(msg_expect(rd, MSG_HELLO, &peer, T_TIMEOUT) == 0);
	ep_hello(&b, &m);
	CHECK(msg_send(wr, MSG_HELLO, &m) == 0);
	req_init(&req, peer.gid, b.qp, 7, 5);
	CHECK(shm_cm_connect(b.port, &req, &id) == 0);
	CHECK(cm_expect(b.port, IPOIB_CM_REP_RCVD, &ev, T_TIMEOUT) == 0);
	CHECK(shm_cm_rtu(id) == 0);
	CHECK_EQ(peer_cq_unmapped(b.f, peer.u32[1]), 0);
	CHECK(msg_send(wr, MSG_DONE, NULL) == 0);
	CHECK(msg_expect(rd, MSG_GO, NULL, T_TIMEOUT) == 0);
	CHECK(shm_cm_disconnect(id) == 0);
	CHECK(cm_expect(b.port, IPOIB_CM_DISCONNECTED, &ev, T_TIMEOUT) == 0);
out:
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&b);
	return ft_fails == 0 ? 0 : -1;
}

static int
test_cq_first_touch(void)
{
	struct child c = { .pid = -1 };
	struct shm_cq *big = NULL;
	struct shm_cm_id *id = NULL;
	struct shm_cm_event ev;
	struct msg peer, m;
	char fab[32];
	struct ep a;

	memset(&a, 0, sizeof(a));
	fabric_name(fab, sizeof(fab), "cq_first_touch");
	CHECK(ep_open(&a, fab, &ft_conf_a) == 0);
	/* the owner's: mapped as made, a CQ of many pages too */
	CHECK_EQ(pages_unmapped(a.cq->ring, shm_cq_bytes(a.cq->ring->size)),
		 0);
	big = shm_cq_create(a.port, FT_CQE);
	CHECK(big != NULL);
	CHECK_EQ(pages_unmapped(big->ring, shm_cq_bytes(big->ring->size)), 0);
	/* a sender's: once connected */
	CHECK(shm_cm_listen(a.port, T_SID) == 0);
	CHECK(child_start(&c, ft_child, fab) == 0);
	ep_hello(&a, &m);
	CHECK(msg_send(c.wr, MSG_HELLO, &m) == 0);
	CHECK(msg_expect(c.rd, MSG_HELLO, &peer, T_TIMEOUT) == 0);
	CHECK(cm_expect(a.port, IPOIB_CM_REQ_RCVD, &ev, T_TIMEOUT) == 0);
	id = ev.id;
	CHECK(shm_cm_accept(id, a.qp, &a, NULL, 0) == 0);
	CHECK(cm_expect(a.port, IPOIB_CM_ESTABLISHED, &ev, T_TIMEOUT) == 0);
	CHECK(msg_expect(c.rd, MSG_DONE, NULL, T_TIMEOUT) == 0);
	CHECK(msg_send(c.wr, MSG_GO, NULL) == 0);
	CHECK(cm_expect(a.port, IPOIB_CM_DREQ_RCVD, &ev, T_TIMEOUT) == 0);
	CHECK(child_wait(&c, T_TIMEOUT) == 0);
out:
	child_kill(&c);
	if (id != NULL)
		shm_cm_destroy(id);
	if (big != NULL)
		shm_cq_destroy(big);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cq_first_touch, test_cq_first_touch,
	"CQs mapped in their owner when made, in an RC sender when connected")

/*
 * Huge pages for a walked CQ: one of SHM_HUGE_PAGE bytes or more starts
 * at a 2 MiB multiple of its segment and is advised huge, in its owner
 * and in a process that maps it to complete into it (shm_populate());
 * a smaller one is not. Read from the VmFlags of /proc/self/smaps ("hg":
 * MADV_HUGEPAGE), which say what was asked whatever /dev/shm's mount
 * then gives.
 */
#define FT_HUGE_CQE	(SHM_HUGE_PAGE / sizeof(struct shm_cqe))

/* 1: the mapping holding p is advised huge, 0: not, <0: no mapping. */
static int
advised_huge(const void *p)
{
	char line[512];
	uintptr_t lo, hi, a = (uintptr_t)p;
	int in = 0, ret = -ENOENT;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = a >= lo && a < hi;
		else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			ret = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* The sender's side: maps A's CQ (u32[0] proc, u64[0] off) as a QP would. */
static int
huge_child(int rd, int wr, void *arg)
{
	const struct shm_cq_ring *c;
	struct msg m;
	struct ep b;

	memset(&b, 0, sizeof(b));
	CHECK(ep_open(&b, arg, &ft_conf_b) == 0);
	CHECK(msg_expect(rd, MSG_HELLO, &m, T_TIMEOUT) == 0);
	shm_cq_populate(b.f, m.u32[0], m.u64[0]);
	c = shm_arena_ptr(b.f, m.u32[0], m.u64[0]);
	CHECK(c != NULL);
	CHECK_EQ(pages_unmapped(c, shm_cq_bytes(c->size)), 0);
	CHECK_EQ(advised_huge(c->cqe), 1);
	CHECK_EQ(advised_huge(&c->cqe[c->size - 1]), 1);
	CHECK(msg_send(wr, MSG_DONE, NULL) == 0);
out:
	ep_close(&b);
	return ft_fails == 0 ? 0 : -1;
}

static int
test_cq_huge_advice(void)
{
	struct child c = { .pid = -1 };
	struct shm_cq *big = NULL, *small = NULL;
	char fab[32];
	struct msg m;
	struct ep a;

	memset(&a, 0, sizeof(a));
	memset(&m, 0, sizeof(m));
	fabric_name(fab, sizeof(fab), "cq_huge_advice");
	CHECK(ep_open(&a, fab, &ft_conf_a) == 0);
	small = shm_cq_create(a.port, FT_CQE);
	big = shm_cq_create(a.port, FT_HUGE_CQE);
	CHECK(small != NULL && big != NULL);
	CHECK(shm_cq_bytes(big->ring->size) >= SHM_HUGE_PAGE);
	CHECK_EQ((big->off & SHM_SEG_OFF_MASK) % SHM_HUGE_PAGE, 0);
	CHECK_EQ(pages_unmapped(big->ring, shm_cq_bytes(big->ring->size)), 0);
	CHECK_EQ(advised_huge(big->ring), 1);
	CHECK_EQ(advised_huge(&big->ring->cqe[big->ring->size - 1]), 1);
	CHECK_EQ(advised_huge(small->ring), 0);
	CHECK(child_start(&c, huge_child, fab) == 0);
	m.u32[0] = a.f->proc;
	m.u64[0] = big->off;
	CHECK(msg_send(c.wr, MSG_HELLO, &m) == 0);
	CHECK(msg_expect(c.rd, MSG_DONE, NULL, T_TIMEOUT) == 0);
	CHECK(child_wait(&c, T_TIMEOUT) == 0);
out:
	child_kill(&c);
	if (big != NULL)
		shm_cq_destroy(big);
	if (small != NULL)
		shm_cq_destroy(small);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cq_huge_advice, test_cq_huge_advice,
	"CQs of 2 MiB and more 2 MiB aligned, advised huge by owner and sender")
