/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Life: ports going down and up, ownership and isolation of fabrics,
 * what is left in /dev/shm after everyone leaves, forked and killed
 * processes, and the arena's memory.
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fabric_util.h"

/* ---- port down ---------------------------------------------------------- */

static int
expect_async(struct shm_port *p, enum shm_async_type type)
{
	struct shm_async_event ev;

	CHECK(async_wait(p, &ev, T_TIMEOUT) == 1);
	CHECK_EQ(ev.type, type);
	return 0;
out:
	return -1;
}

static int
port_down_run(struct ep *a, struct ep *b, struct udq *ua, struct udq *ub)
{
	struct shm_port_info info;
	struct shm_async_event ev;
	struct shm_ah ah;
	struct ipoib_wc wc;

	CHECK(shm_ah_resolve(a->f, b->info.gid, 0, &ah) == 0);
	CHECK(ud_send(ua->qp, &ah, shm_qp_num(ub->qp), T_QKEY, "up", 2) == 1);
	CHECK_EQ(shm_cq_poll(ub->cq, &wc, 1), 1);
	CHECK(post_buf(shm_qp_rq(ub->qp), &ub->mem, UDQ_BUF,
		       (uint32_t)wc.wr_id) == 0);
	CHECK(shm_port_set_state(b->port, false) == 0);
	shm_port_query(b->port, &info);
	CHECK(!info.active);
	CHECK(expect_async(b->port, SHM_EV_PORT_DOWN) == 0);
	CHECK_EQ(shm_async_poll(b->port, &ev, 1), 0);
	/* UD to a port that is down: gone, like on a wire */
	CHECK(ud_send(ua->qp, &ah, shm_qp_num(ub->qp), T_QKEY, "dn", 2) == 1);
	CHECK_EQ(shm_cq_poll(ub->cq, &wc, 1), 0);
	/* RC to it: the sender's QP goes to error, and says so */
	CHECK_EQ(rc_send(a->qp, "rc", 2), 0);
	CHECK_EQ(shm_qp_state(a->qp), SHM_QPS_ERR);
	CHECK(async_wait(a->port, &ev, T_TIMEOUT) == 1);
	CHECK(ev.type == SHM_EV_QP_FATAL && ev.qp_num == shm_qp_num(a->qp));
	CHECK(shm_port_set_state(b->port, true) == 0);
	CHECK(expect_async(b->port, SHM_EV_PORT_ACTIVE) == 0);
	CHECK(ud_send(ua->qp, &ah, shm_qp_num(ub->qp), T_QKEY, "up", 2) == 1);
	CHECK_EQ(shm_cq_poll(ub->cq, &wc, 1), 1);
	return 0;
out:
	return -1;
}

static int
test_port_down(void)
{
	struct ep_conf ca = { "a", SHM_QPT_RC, 8, 256 };
	struct ep_conf cb = { "b", SHM_QPT_RC, 8, 256 };
	struct udq ua = { 0 }, ub = { 0 };
	struct conn c = { 0 };
	struct ep a, b;
	char fab[32];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	fabric_name(fab, sizeof(fab), "port_down");
	CHECK(ep_open(&a, fab, &ca) == 0 && ep_open(&b, fab, &cb) == 0);
	CHECK(udq_open(&ua, a.f, a.port, 0, T_QKEY) == 0);
	CHECK(udq_open(&ub, b.f, b.port, 0, T_QKEY) == 0);
	CHECK(conn_local(&c, &a, &b, 7) == 0);
	CHECK(port_down_run(&a, &b, &ua, &ub) == 0);
out:
	conn_destroy(&c);
	udq_close(&ub, b.f);
	udq_close(&ua, a.f);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(port_down, test_port_down,
	"port down: UD dropped, RC senders in error, PORT_DOWN then ACTIVE")

/* ---- ownership and isolation -------------------------------------------- */

/* The fabric object, and every segment, is 0600 and ours whatever umask. */
static int
iso_modes(const char *fab)
{
	struct shm_fabric *f = NULL;
	char path[96], prefix[64];
	mode_t old = umask(0);
	struct stat st;
	uint32_t proc;

	CHECK(shm_fabric_attach(fab, &f) == 0);
	proc = f->proc;
	snprintf(path, sizeof(path), "/dev/shm/ipoibcm.%s", fab);
	CHECK(stat(path, &st) == 0);
	CHECK((st.st_mode & 0777) == 0600 && st.st_uid == geteuid(),
	      "mode %o uid %u", (unsigned int)(st.st_mode & 0777),
	      (unsigned int)st.st_uid);
	snprintf(path, sizeof(path), "/dev/shm/ipoibcm.%s.%08x.%u.%u.0", fab,
		 f->incarnation, proc, f->gen);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
out:
	umask(old);
	if (f != NULL)
		shm_fabric_detach(f);
	snprintf(prefix, sizeof(prefix), "%s", fab);
	return shm_leftovers(prefix) == 0 && ft_fails == 0 ? 0 : -1;
}

/* A fabric object not ours, or open to others: attach refuses it. */
static int
iso_refuse(const char *fab, bool chown_it, mode_t mode)
{
	struct shm_fabric *f = NULL;
	char name[64];
	int fd, ret = -1;

	snprintf(name, sizeof(name), "/ipoibcm.%s", fab);
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, sizeof(struct shm_hdr)) == 0);
	if (chown_it)
		CHECK(fchown(fd, 65534, 65534) == 0, "needs root: %s",
		      strerror(errno));
	CHECK(fchmod(fd, mode) == 0);
	ret = shm_fabric_attach(fab, &f);
	CHECK_EQ(ret, -EACCES);
out:
	if (fd >= 0)
		close(fd);
	if (ret == 0)
		shm_fabric_detach(f);
	shm_unlink(name);
	return ft_fails == 0 ? 0 : -1;
}

/* Same port names on two fabrics: nothing crosses between them. */
static int
iso_names(const char *f1, const char *f2)
{
	static const uint8_t mgid[IPOIB_GID_LEN] = { 0xff, 0x12, [15] = 9 };
	struct ep x1, y1, y2;
	struct shm_cm_id *id;
	struct shm_cm_req req;
	struct shm_ah ah;
	struct ipoib_wc wc;

	memset(&x1, 0, sizeof(x1));
	memset(&y1, 0, sizeof(y1));
	memset(&y2, 0, sizeof(y2));
	CHECK(ep_open(&x1, f1, &(struct ep_conf){ "x", SHM_QPT_UD, 4, 256 }) ==
	      0);
	CHECK(ep_open(&y1, f1, &(struct ep_conf){ "y", SHM_QPT_UD, 4, 256 }) ==
	      0);
	CHECK(ep_open(&y2, f2, &(struct ep_conf){ "y", SHM_QPT_UD, 4, 256 }) ==
	      0);
	CHECK(x1.f != y2.f && memcmp(y1.info.gid, y2.info.gid, 16) != 0);
	CHECK_EQ(shm_ah_resolve(x1.f, y2.info.gid, 0, &ah), -ENOENT);
	req_init(&req, y2.info.gid, x1.qp, 7, 1);
	CHECK_EQ(shm_cm_connect(x1.port, &req, &id), -EHOSTUNREACH);
	CHECK(shm_mcast_attach(y1.qp, mgid) == 0);
	CHECK(shm_mcast_attach(y2.qp, mgid) == 0);
	CHECK(shm_ah_resolve(x1.f, mgid, 0, &ah) == 0);
	CHECK_EQ(ud_send(x1.qp, &ah, IPOIB_MCAST_QPN, T_QKEY, "mc", 2), 1);
	CHECK(shm_ah_resolve(x1.f, y1.info.gid, 0, &ah) == 0);
	/* the same QPN on the other fabric does not see it */
	CHECK_EQ(ud_send(x1.qp, &ah, shm_qp_num(y2.qp), T_QKEY, "uc", 2), 1);
	CHECK_EQ(shm_cq_poll(y2.cq, &wc, 1), 0);
	CHECK_EQ(poll_wc(y1.cq, &wc, 1, 0), 1);
out:
	ep_close(&y2);
	ep_close(&y1);
	ep_close(&x1);
	return ft_fails == 0 ? 0 : -1;
}

static int
test_isolation(void)
{
	struct shm_fabric *f;
	char f1[32], f2[32], f3[32], f4[32];

	fabric_name(f1, sizeof(f1), "iso1");
	fabric_name(f2, sizeof(f2), "iso2");
	fabric_name(f3, sizeof(f3), "iso3");
	fabric_name(f4, sizeof(f4), "iso4");
	CHECK(iso_modes(f1) == 0);
	CHECK(iso_refuse(f3, true, 0600) == 0);
	CHECK(iso_refuse(f4, false, 0660) == 0);
	CHECK(iso_refuse(f4, false, 0604) == 0);
	CHECK(iso_names(f1, f2) == 0);
	CHECK_EQ(shm_fabric_attach("", &f), -EINVAL);
	CHECK_EQ(shm_fabric_attach("0123456789abcdef0123456789abcdef", &f),
		 -EINVAL);
out:
	ft_end(f2);
	ft_end(f3);
	ft_end(f4);
	return ft_end(f1);
}
REGISTER_TEST(isolation, test_isolation,
	"fabric objects 0600; foreign or open ones refused; names isolated")

/* ---- what is left ------------------------------------------------------- */

/* A process's full set: port, CQ, SRQ, QPs, memory; then all closed. */
static int
full_set(const char *fab)
{
	struct ep_conf c = { "full", SHM_QPT_RC, 32, 128, .srq = true };
	struct shm_mem big = { 0 };
	struct udq u = { 0 };
	struct ep e;

	memset(&e, 0, sizeof(e));
	CHECK(ep_open(&e, fab, &c) == 0);
	CHECK(udq_open(&u, e.f, e.port, 0, T_QKEY) == 0);
	/* more than a segment: the arena grows a second one */
	CHECK(shm_mem_alloc(e.f, 9 << 20, &big) == 0 && big.lkey != 0);
out:
	if (big.addr != NULL)
		shm_mem_free(e.f, &big);
	udq_close(&u, e.f);
	ep_close(&e);
	return ft_fails == 0 ? 0 : -1;
}

static int
cl_child(int rd, int wr, void *arg)
{
	CHECK(full_set(arg) == 0);
	CHECK(msg_send(wr, MSG_DONE, NULL) == 0);
out:
	return ft_fails == 0 ? 0 : -1;
}

static int
test_cleanup(void)
{
	struct child c = { .pid = -1 };
	struct shm_fabric *f = NULL;
	char fab[32], path[64];
	struct stat st;
	int i, m0 = 0;

	fabric_name(fab, sizeof(fab), "cleanup");
	snprintf(path, sizeof(path), "/dev/shm/ipoibcm.%s", fab);
	CHECK(shm_fabric_attach(fab, &f) == 0);
	CHECK(child_start(&c, cl_child, fab) == 0);
	CHECK(msg_expect(c.rd, MSG_DONE, NULL, T_TIMEOUT) == 0);
	CHECK(child_wait(&c, T_TIMEOUT) == 0);
	CHECK(stat(path, &st) == 0, "the fabric stays while we are attached");
	CHECK_EQ(shm_objects(fab, false), 2);	/* directory, our segment */
	CHECK(full_set(fab) == 0);
	shm_fabric_detach(f);
	f = NULL;
	CHECK_EQ(shm_leftovers(fab), 0);
	/* attach, use, detach again and again: nothing left, nothing grows */
	for (i = 0; i < 200; i++) {
		if (i == 1)
			m0 = maps_count();
		CHECK(full_set(fab) == 0, "round %d", i);
		CHECK_EQ(shm_leftovers(fab), 0);
	}
	CHECK(maps_count() <= m0, "mappings %d -> %d", m0, maps_count());
	ft_note("200 rounds: %d mappings before, %d after", m0, maps_count());
out:
	child_kill(&c);
	if (f != NULL)
		shm_fabric_detach(f);
	return ft_end(fab);
}
REGISTER_TEST(cleanup, test_cleanup,
	"last detach leaves nothing; 200 attach/detach rounds do not grow")

/* ---- fork, dead processes ----------------------------------------------- */

static int
fork_child(int rd, int wr, void *arg)
{
	struct shm_fabric *inherited = arg, *f = NULL;
	struct shm_mem m = { 0 };
	struct msg hello = { 0 };
	uint32_t i;

	CHECK(shm_fabric_attach(inherited->name, &f) == 0);
	CHECK(f != inherited, "a handle of its own, not the parent's");
	CHECK(f->hdr->procs[f->proc].pid == getpid());
	CHECK(shm_mem_alloc(f, 4096, &m) == 0);
	memset(m.addr, 0xcc, 4096);
	hello.u32[2] = f->proc;
	CHECK(msg_send(wr, MSG_READY, &hello) == 0);
	CHECK(msg_expect(rd, MSG_GO, NULL, T_TIMEOUT) == 0);
	for (i = 0; i < 4096; i++)
		CHECK(((uint8_t *)m.addr)[i] == 0xcc, "byte %u overwritten", i);
out:
	if (m.addr != NULL)
		shm_mem_free(f, &m);
	if (f != NULL)
		shm_fabric_detach(f);
	return ft_fails == 0 ? 0 : -1;
}

static int
test_fork_attach(void)
{
	struct child c = { .pid = -1 };
	struct shm_fabric *f = NULL;
	struct shm_mem m = { 0 };
	char fab[32];
	struct msg r;

	fabric_name(fab, sizeof(fab), "fork_attach");
	CHECK(shm_fabric_attach(fab, &f) == 0);
	CHECK(child_start(&c, fork_child, f) == 0);
	CHECK(msg_expect(c.rd, MSG_READY, &r, T_TIMEOUT) == 0);
	CHECK(r.u32[2] != f->proc);
	/* our next allocation must not be the child's memory */
	CHECK(shm_mem_alloc(f, 4096, &m) == 0);
	memset(m.addr, 0x33, 4096);
	CHECK(msg_send(c.wr, MSG_GO, NULL) == 0);
	CHECK(child_wait(&c, T_TIMEOUT) == 0);
	CHECK(f->hdr->procs[f->proc].pid == getpid() &&
	      f->hdr->procs[f->proc].state == SHM_PROC_ACTIVE,
	      "our slot survives the child's detach");
out:
	child_kill(&c);
	if (m.addr != NULL)
		shm_mem_free(f, &m);
	if (f != NULL)
		shm_fabric_detach(f);
	return ft_end(fab);
}
REGISTER_TEST(fork_attach, test_fork_attach,
	"a forked child attaching by name gets its own slot and arena")

static int
dead_child(int rd, int wr, void *arg)
{
	struct ep e;

	memset(&e, 0, sizeof(e));
	CHECK(ep_open(&e, arg, &(struct ep_conf){ "dead", SHM_QPT_UD, 4,
		      256 }) == 0);
	CHECK(msg_send(wr, MSG_READY, NULL) == 0);
	msg_expect(rd, MSG_STOP, NULL, 2 * T_TIMEOUT); /* killed before */
out:
	ep_close(&e);
	return -1;
}

/* A child that attached is killed (and reaped) mid-life. */
static int
dead_peer(const char *fab)
{
	struct child c = { .pid = -1 };

	CHECK(child_start(&c, dead_child, (void *)(uintptr_t)fab) == 0);
	CHECK(msg_expect(c.rd, MSG_READY, NULL, T_TIMEOUT) == 0);
	child_kill(&c);
	return 0;
out:
	child_kill(&c);
	return -1;
}

static int
test_dead_then_detach(void)
{
	struct shm_fabric *f = NULL;
	char fab[32];

	fabric_name(fab, sizeof(fab), "dead_then_detach");
	/* the last one alive leaves right after: it cleans up for the dead */
	CHECK(shm_fabric_attach(fab, &f) == 0);
	CHECK(dead_peer(fab) == 0);
	shm_fabric_detach(f);
	f = NULL;
	CHECK_EQ(shm_leftovers(fab), 0);
	/* nobody alive: unlink_stale removes what the dead left */
	CHECK(dead_peer(fab) == 0);
	CHECK(shm_objects(fab, false) > 0);
	CHECK(shm_fabric_unlink_stale(fab) == 0);
out:
	if (f != NULL)
		shm_fabric_detach(f);
	return ft_end(fab);
}
REGISTER_TEST(dead_then_detach, test_dead_then_detach,
	"a killed process's objects go when the last live one detaches")

/* ---- memory ------------------------------------------------------------- */

/* Post one SGE; 1 when the fabric took it. */
static uint16_t
post_one(struct shm_rq *rq, uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct ipoib_recv_wr wr = {
		.num_sge = 1,
		.sg_list = { { addr, len, lkey } },
	};

	return shm_rq_post(rq, &wr, 1);
}

/*
 * WRs of several SGEs (a descriptor each), and of none or more than the
 * queue's 4: the posted ones taken in order, the first refused one ends
 * the post. foreign: an address outside the arena.
 */
static int
post_sges(struct shm_rq *rq, const struct shm_mem *m, uint32_t lkey,
	  uint64_t foreign)
{
	uint64_t base = (uintptr_t)m->addr + 4096;
	struct ipoib_recv_wr wr[3];
	uint32_t before = shm_rq_posted(rq);
	uint16_t i;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 100 + i;
		wr[i].num_sge = 2;
		wr[i].sg_list[0] = (struct ipoib_sge){ base + i * 512, 256, lkey };
		wr[i].sg_list[1] = (struct ipoib_sge){ base + i * 512 + 256, 256,
						       lkey };
	}
	/* the second's second SGE is not ours: one taken of three */
	wr[1].sg_list[1].addr = foreign;
	CHECK_EQ(shm_rq_post(rq, wr, 3), 1);
	CHECK_EQ(shm_rq_posted(rq), before + 1);
	wr[1].sg_list[1].addr = base + 512 + 256;
	/* no SGE; then more than max_recv_sge */
	wr[1].num_sge = 0;
	CHECK_EQ(shm_rq_post(rq, &wr[1], 2), 0);
	for (i = 0; i < 5; i++)	/* all ours, but one too many */
		wr[1].sg_list[i] = (struct ipoib_sge){ base + 2048 + i * 64, 64,
						       lkey };
	wr[1].num_sge = 5;
	CHECK_EQ(shm_rq_post(rq, &wr[1], 2), 0);
	wr[1].num_sge = 2;
	CHECK_EQ(shm_rq_post(rq, &wr[1], 2), 2);
	CHECK_EQ(shm_rq_posted(rq), before + 3);
	return 0;
out:
	return -1;
}

static int
mem_run(struct ep *e)
{
	struct shm_mem a = { 0 }, b = { 0 };
	uint64_t end;
	uint32_t lkey;
	void *addr;
	char heap[256];

	/* more than the first segment holds: in a second one */
	CHECK(shm_mem_alloc(e->f, 9 << 20, &a) == 0 && a.lkey != 0);
	addr = a.addr;
	lkey = a.lkey;
	/* a caller that kept address and length only still frees it */
	a.lkey = 0;
	shm_mem_free(e->f, &a);
	CHECK(a.addr == NULL);
	CHECK(shm_mem_alloc(e->f, 9 << 20, &b) == 0);
	CHECK(b.addr == addr && b.lkey == lkey, "freed memory not reused");
	/* receive buffers must be in the arena, under their own key */
	end = (uintptr_t)b.addr + b.len;
	CHECK_EQ(post_one(shm_qp_rq(e->qp), (uintptr_t)heap, 256, 0), 0);
	CHECK_EQ(post_one(shm_qp_rq(e->qp), (uintptr_t)b.addr, 256, lkey + 1),
		 0);
	CHECK_EQ(post_one(shm_qp_rq(e->qp), end - 128, 1 << 24, lkey), 0);
	CHECK_EQ(post_one(shm_qp_rq(e->qp), (uintptr_t)b.addr, 256, lkey), 1);
	CHECK(post_sges(shm_qp_rq(e->qp), &b, lkey, (uintptr_t)heap) == 0);
out:
	if (b.addr != NULL)
		shm_mem_free(e->f, &b);
	return ft_fails == 0 ? 0 : -1;
}

static int
test_mem(void)
{
	struct ep e;
	char fab[32];

	memset(&e, 0, sizeof(e));
	fabric_name(fab, sizeof(fab), "mem");
	CHECK(ep_open(&e, fab, &(struct ep_conf){ "m", SHM_QPT_UD, 4, 256,
		      .no_post = true }) == 0);
	CHECK(mem_run(&e) == 0);
out:
	ep_close(&e);
	return ft_end(fab);
}
REGISTER_TEST(mem, test_mem,
	"arena memory: freed without its lkey, reused; foreign SGEs refused")
