/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The subnet administrator: path records and MCMemberRecord joins and
 * leaves answered asynchronously; what a join may create or must match;
 * full and send-only membership on the wire; lost and delayed answers;
 * queries from another thread (TSan).
 */

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "fabric_util.h"

/* A window in which an answer must NOT come; never a time judged. */
#define QUIET_MS	200
/* A delay far longer than the calls that must come before it. */
#define SA_LONG_MS	5000

static const uint8_t sa_bcast[IPOIB_GID_LEN] = {
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff,
	0xff,
};
static const uint8_t sa_mgid[IPOIB_GID_LEN] = {
	0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x16,
};

/* One SA answer of port p within the deadline: 0, or -1. */
static int
sa_wait(struct shm_port *p, struct shm_sa_event *ev, int timeout_ms)
{
	double deadline = test_now_ms() + timeout_ms;

	while (shm_sa_poll(p, ev, 1) == 0) {
		if (test_now_ms() > deadline)
			return -1;
		shm_cm_wait(p, 10 * 1000000ULL);
	}
	return 0;
}

/* Post a join of mgid; its answer's status, the record in *out. */
static int
sa_join(struct shm_port *p, const uint8_t *mgid, uint8_t state,
	uint32_t comp, uint32_t qkey, uint16_t pkey, uint16_t mtu,
	struct shm_sa_mcmember *out)
{
	struct shm_sa_mcmember r = { .comp_mask = comp, .qkey = qkey,
				     .pkey = pkey, .mtu = mtu,
				     .join_state = state };
	struct shm_sa_event ev;

	memcpy(r.mgid, mgid, IPOIB_GID_LEN);
	if (shm_sa_mc_join(p, &r, 77) < 0 || sa_wait(p, &ev, T_TIMEOUT) < 0 ||
	    ev.op != SHM_SA_MC_JOIN || ev.cookie != 77)
		return -1000;
	if (out != NULL)
		*out = ev.mc;
	return ev.status;
}

static int
sa_leave(struct shm_port *p, const uint8_t *mgid, uint8_t state)
{
	struct shm_sa_event ev;

	if (shm_sa_mc_leave(p, mgid, state, 78) < 0 ||
	    sa_wait(p, &ev, T_TIMEOUT) < 0 || ev.op != SHM_SA_MC_LEAVE ||
	    ev.cookie != 78)
		return -1000;
	return ev.status;
}

static int
sa_path(struct shm_port *p, const uint8_t *dgid, uint16_t pkey,
	struct shm_sa_path *out)
{
	struct shm_sa_event ev;

	if (shm_sa_path_query(p, dgid, pkey, 79) < 0 ||
	    sa_wait(p, &ev, T_TIMEOUT) < 0 || ev.op != SHM_SA_PATH_GET ||
	    ev.cookie != 79)
		return -1000;
	*out = ev.path;
	return ev.status;
}

/* ---- path records ---------------------------------------------------- */

static int
test_sa_path(void)
{
	struct shm_port_conf cb = { .ib_mtu = 4096 };
	struct shm_port_conf cl = { .npkeys = 2, .pkeys = { 0x0001, 0x7fff } };
	struct ep_conf ea = { "a", SHM_QPT_UD, 4, 256 };
	struct ep_conf eb = { "b", SHM_QPT_UD, 4, 256, .pc = &cb };
	struct ep_conf el = { "l", SHM_QPT_UD, 4, 256, .pc = &cl };
	struct ep_conf em = { "m", SHM_QPT_UD, 4, 256, .pc = &cl };
	uint8_t nobody[IPOIB_GID_LEN] = { 0xfe, 0x80, [15] = 0x42 };
	struct shm_sa_path pr;
	struct ep a, b, l, m;
	char fab[32];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&l, 0, sizeof(l));
	memset(&m, 0, sizeof(m));
	fabric_name(fab, sizeof(fab), "sa_path");
	CHECK(ep_open(&a, fab, &ea) == 0 && ep_open(&b, fab, &eb) == 0);
	CHECK(ep_open(&l, fab, &el) == 0 && ep_open(&m, fab, &em) == 0);
	CHECK_EQ(sa_path(a.port, b.info.gid, 0, &pr), 0);
	CHECK(memcmp(pr.sgid, a.info.gid, IPOIB_GID_LEN) == 0);
	CHECK(memcmp(pr.dgid, b.info.gid, IPOIB_GID_LEN) == 0);
	CHECK_EQ(pr.slid, a.info.lid);
	CHECK_EQ(pr.dlid, b.info.lid);
	CHECK_EQ(pr.pkey, 0xffff);
	CHECK_EQ(pr.mtu, 2048);		/* the smaller of the two ports */
	CHECK_EQ(pr.hop_limit, 0);
	CHECK_EQ(sa_path(a.port, nobody, 0, &pr), -ENOENT);
	CHECK(memcmp(pr.dgid, nobody, IPOIB_GID_LEN) == 0, "names the query");
	/* a (full 0xffff) and l share 0x7fff; l and m only as limited */
	CHECK_EQ(sa_path(l.port, a.info.gid, 0, &pr), 0);
	CHECK_EQ(pr.pkey, 0x7fff);
	CHECK_EQ(sa_path(l.port, m.info.gid, 0, &pr), -ENOENT);
	CHECK_EQ(sa_path(l.port, m.info.gid, 0x0001, &pr), -ENOENT);
	CHECK_EQ(sa_path(a.port, l.info.gid, 0x0001, &pr), -ENOENT);
	/* a port that is down has no path */
	CHECK(shm_port_set_state(b.port, false) == 0);
	CHECK_EQ(sa_path(a.port, b.info.gid, 0, &pr), -ENOENT);
out:
	ep_close(&m);
	ep_close(&l);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(sa_path, test_sa_path,
	"SA path records: LIDs, GIDs, MTU, shared partition; none when absent")

/* ---- joins and leaves --------------------------------------------------- */

static int
sa_bcast_checks(struct ep *a, struct ep *small)
{
	struct shm_sa_mcmember r;
	struct shm_ah ah;

	/* pre-created: a plain join (no fields named) gets its record */
	CHECK_EQ(sa_join(a->port, sa_bcast, SHM_SA_JOIN_FULL, 0, 0, 0, 0, &r),
		 0);
	CHECK_EQ(r.qkey, 0x12345678);
	CHECK_EQ(r.mtu, 4096);
	CHECK_EQ(r.pkey, 0xffff);
	CHECK(r.mlid >= 0xc000, "a multicast LID");
	CHECK_EQ(r.join_state, SHM_SA_JOIN_FULL);
	CHECK(shm_ah_resolve(a->f, sa_bcast, 0, &ah) == 0);
	CHECK_EQ(ah.dlid, r.mlid);
	/* a port whose MTU is below the group's may not join */
	CHECK_EQ(sa_join(small->port, sa_bcast, SHM_SA_JOIN_FULL, 0, 0, 0, 0,
			 NULL), -EINVAL);
	/* it is never deleted */
	CHECK_EQ(sa_leave(a->port, sa_bcast, SHM_SA_JOIN_FULL), 0);
	CHECK_EQ(sa_leave(a->port, sa_bcast, SHM_SA_JOIN_FULL), -ENOENT);
	CHECK_EQ(sa_join(a->port, sa_bcast, SHM_SA_JOIN_SEND_ONLY_NON, 0, 0,
			 0, 0, &r), 0);
	CHECK_EQ(r.qkey, 0x12345678);
	return 0;
out:
	return -1;
}

static int
sa_group_checks(struct ep *a, struct ep *b)
{
	const uint32_t all = SHM_SA_MC_QKEY | SHM_SA_MC_PKEY | SHM_SA_MC_MTU;
	struct shm_sa_mcmember r;

	/* nobody creates it by a send-only join, or without its fields */
	CHECK_EQ(sa_join(b->port, sa_mgid, SHM_SA_JOIN_SEND_ONLY_FULL, all,
			 0x55, 0xffff, 2048, NULL), -ENOENT);
	CHECK_EQ(sa_join(a->port, sa_mgid, SHM_SA_JOIN_FULL, SHM_SA_MC_QKEY,
			 0x55, 0, 0, NULL), -EINVAL);
	CHECK_EQ(sa_join(a->port, sa_mgid, SHM_SA_JOIN_FULL, all, 0x55,
			 0xffff, 0, NULL), -EINVAL);
	CHECK_EQ(sa_join(a->port, sa_mgid, 0, all, 0x55, 0xffff, 2048, NULL),
		 -EINVAL);
	/* the first full member creates it with its fields */
	CHECK_EQ(sa_join(a->port, sa_mgid, SHM_SA_JOIN_FULL, all, 0x55,
			 0xffff, 2048, &r), 0);
	CHECK(r.qkey == 0x55 && r.mtu == 2048 && r.pkey == 0xffff);
	/* others must match what they name */
	CHECK_EQ(sa_join(b->port, sa_mgid, SHM_SA_JOIN_FULL, SHM_SA_MC_QKEY,
			 0x56, 0, 0, NULL), -EINVAL);
	CHECK_EQ(sa_join(b->port, sa_mgid, SHM_SA_JOIN_FULL, SHM_SA_MC_MTU,
			 0, 0, 1024, NULL), -EINVAL);
	CHECK_EQ(sa_join(b->port, sa_mgid, SHM_SA_JOIN_FULL, all, 0x55,
			 0xffff, 2048, &r), 0);
	CHECK_EQ(sa_join(b->port, sa_mgid, SHM_SA_JOIN_SEND_ONLY_FULL, 0, 0, 0,
			 0, &r), 0);
	CHECK_EQ(r.join_state,
		 SHM_SA_JOIN_FULL | SHM_SA_JOIN_SEND_ONLY_FULL);
	/* the group goes with its last member */
	CHECK_EQ(sa_leave(a->port, sa_mgid, SHM_SA_JOIN_FULL), 0);
	CHECK_EQ(sa_leave(b->port, sa_mgid, SHM_SA_JOIN_FULL), 0);
	CHECK_EQ(sa_leave(b->port, sa_mgid, SHM_SA_JOIN_FULL), -ENOENT);
	CHECK_EQ(sa_join(a->port, sa_mgid, SHM_SA_JOIN_SEND_ONLY_NON, 0, 0, 0,
			 0, NULL), 0);
	CHECK_EQ(sa_leave(b->port, sa_mgid, SHM_SA_JOIN_SEND_ONLY_FULL), 0);
	CHECK_EQ(sa_leave(a->port, sa_mgid, SHM_SA_JOIN_SEND_ONLY_NON), 0);
	CHECK_EQ(sa_join(a->port, sa_mgid, SHM_SA_JOIN_SEND_ONLY_NON, 0, 0, 0,
			 0, NULL), -ENOENT);
	/* and with the port of its last member */
	CHECK_EQ(sa_join(b->port, sa_mgid, SHM_SA_JOIN_FULL, all, 0x66,
			 0xffff, 2048, NULL), 0);
	return 0;
out:
	return -1;
}

static int
test_sa_join(void)
{
	struct shm_port_conf cbig = { .ib_mtu = 4096 };
	struct ep_conf ea = { "a", SHM_QPT_UD, 4, 256, .pc = &cbig };
	struct ep_conf eb = { "b", SHM_QPT_UD, 4, 256 };
	struct shm_port_counters cnt;
	struct ep a, b;
	char fab[32];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	fabric_name(fab, sizeof(fab), "sa_join");
	CHECK(ep_open(&a, fab, &ea) == 0 && ep_open(&b, fab, &eb) == 0);
	CHECK_EQ(shm_sa_set_ipoib(a.f, 0x12345678, 1000), -EINVAL);
	CHECK_EQ(shm_sa_set_ipoib(a.f, 0x12345678, 4096), 0);
	CHECK(sa_bcast_checks(&a, &b) == 0);
	CHECK(sa_group_checks(&a, &b) == 0);
	shm_port_counters(a.port, &cnt);
	CHECK(cnt.sa_errors >= 4 && cnt.sa_drops == 0);
	ep_close(&b);
	CHECK_EQ(sa_join(a.port, sa_mgid, SHM_SA_JOIN_SEND_ONLY_NON, 0, 0, 0,
			 0, NULL), -ENOENT);
out:
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(sa_join, test_sa_join,
	"SA joins: broadcast pre-created, create needs a full member, match")

/* ---- membership on the wire --------------------------------------------- */

/* What each of q[0..3] got of one multicast send from s: 1 or 0 each. */
static int
sa_mc_round(struct shm_fabric *f, struct udq *s, struct udq *q,
	    const int *want)
{
	struct ipoib_wc wc;
	struct shm_ah ah;
	char msg[64] = "to the members";
	int i;

	CHECK(shm_ah_resolve(f, sa_mgid, 0, &ah) == 0);
	CHECK_EQ(ud_send(s->qp, &ah, IPOIB_MCAST_QPN, 0x55, msg, sizeof(msg)),
		 1);
	for (i = 0; i < 4; i++) {
		CHECK_EQ(shm_cq_poll(q[i].cq, &wc, 1), want[i]);
		if (want[i] != 0)
			CHECK(post_buf(shm_qp_rq(q[i].qp), &q[i].mem, UDQ_BUF,
				       (uint32_t)wc.wr_id) == 0);
	}
	return 0;
out:
	return -1;
}

/*
 * Ports a, b full members, c send-only, d no member; a QP of each
 * attached to the group. Full members receive; c sends, never receives;
 * d receives nothing of a group the SA knows.
 */
static int
test_sa_members(void)
{
	const uint32_t all = SHM_SA_MC_QKEY | SHM_SA_MC_PKEY | SHM_SA_MC_MTU;
	static const char *names[4] = { "a", "b", "c", "d" };
	struct ep e[4];
	struct udq q[4];
	char fab[32];
	int i;

	memset(e, 0, sizeof(e));
	memset(q, 0, sizeof(q));
	fabric_name(fab, sizeof(fab), "sa_members");
	for (i = 0; i < 4; i++) {
		struct ep_conf c = { names[i], SHM_QPT_UD, 4, 256 };

		CHECK(ep_open(&e[i], fab, &c) == 0);
		CHECK(udq_open(&q[i], e[i].f, e[i].port, 0, 0x55) == 0);
		CHECK(shm_mcast_attach(q[i].qp, sa_mgid) == 0);
	}
	CHECK_EQ(sa_join(e[0].port, sa_mgid, SHM_SA_JOIN_FULL, all, 0x55,
			 0xffff, 2048, NULL), 0);
	CHECK_EQ(sa_join(e[1].port, sa_mgid, SHM_SA_JOIN_FULL, 0, 0, 0, 0,
			 NULL), 0);
	CHECK_EQ(sa_join(e[2].port, sa_mgid, SHM_SA_JOIN_SEND_ONLY_FULL, 0, 0,
			 0, 0, NULL), 0);
	CHECK(sa_mc_round(e[2].f, &q[2], q, (const int[]){ 1, 1, 0, 0 }) == 0);
	CHECK(sa_mc_round(e[0].f, &q[0], q, (const int[]){ 1, 1, 0, 0 }) == 0);
	/* a member that leaves gets nothing more */
	CHECK_EQ(sa_leave(e[1].port, sa_mgid, SHM_SA_JOIN_FULL), 0);
	CHECK(sa_mc_round(e[3].f, &q[3], q, (const int[]){ 1, 0, 0, 0 }) == 0);
	/* the group gone, attachment alone delivers again (driver today) */
	CHECK_EQ(sa_leave(e[0].port, sa_mgid, SHM_SA_JOIN_FULL), 0);
	CHECK_EQ(sa_leave(e[2].port, sa_mgid, SHM_SA_JOIN_SEND_ONLY_FULL), 0);
	CHECK(sa_mc_round(e[0].f, &q[0], q, (const int[]){ 1, 1, 1, 1 }) == 0);
out:
	for (i = 3; i >= 0; i--) {
		udq_close(&q[i], e[i].f);
		ep_close(&e[i]);
	}
	return ft_end(fab);
}
REGISTER_TEST(sa_members, test_sa_members,
	"SA membership: full members receive, send-only and others do not")

/* ---- faults: lost and late answers ----------------------------------- */

static int
test_sa_faults(void)
{
	const uint32_t all = SHM_SA_MC_QKEY | SHM_SA_MC_PKEY | SHM_SA_MC_MTU;
	struct shm_sa_mcmember r = { .comp_mask = all, .qkey = 0x55,
				     .pkey = 0xffff, .mtu = 2048,
				     .join_state = SHM_SA_JOIN_FULL };
	struct ep_conf ea = { "a", SHM_QPT_UD, 4, 256 };
	struct shm_port_counters cnt;
	struct shm_sa_event ev;
	struct shm_sa_path pr;
	struct ep a;
	char fab[32];
	int i, ret;

	memset(&a, 0, sizeof(a));
	fabric_name(fab, sizeof(fab), "sa_faults");
	CHECK(ep_open(&a, fab, &ea) == 0);
	memcpy(r.mgid, sa_mgid, IPOIB_GID_LEN);
	/* every query lost: no answer, and the join did not happen */
	shm_sa_set_faults(a.port, 0, 1000000);
	CHECK(shm_sa_mc_join(a.port, &r, 1) == 0);
	CHECK(shm_sa_path_query(a.port, a.info.gid, 0, 2) == 0);
	CHECK(sa_wait(a.port, &ev, QUIET_MS) < 0, "a lost answer came");
	shm_port_counters(a.port, &cnt);
	CHECK_EQ(cnt.sa_drops, 2);
	shm_sa_set_faults(a.port, 0, 0);
	CHECK_EQ(sa_join(a.port, sa_mgid, SHM_SA_JOIN_SEND_ONLY_NON, 0, 0, 0,
			 0, NULL), -ENOENT);
	/* late: nothing before the delay, then the answer */
	shm_sa_set_faults(a.port, SA_LONG_MS, 0);
	CHECK(shm_sa_path_query(a.port, a.info.gid, 0, 3) == 0);
	CHECK_EQ(shm_sa_poll(a.port, &ev, 1), 0);
	CHECK(sa_wait(a.port, &ev, T_TIMEOUT) == 0);
	CHECK(ev.cookie == 3 && ev.status == 0);
	/* a bounded queue: the query beyond it is refused, nothing lost */
	for (i = 0, ret = 0; ret == 0 && i <= SHM_SA_MAX_PENDING; i++)
		ret = shm_sa_path_query(a.port, a.info.gid, 0, 100 + i);
	CHECK_EQ(ret, -ENOSPC);
	CHECK_EQ(i, SHM_SA_MAX_PENDING + 1);
	shm_sa_set_faults(a.port, 0, 0);
	for (i = 0; i < SHM_SA_MAX_PENDING; i++) {
		CHECK(sa_wait(a.port, &ev, T_TIMEOUT) == 0, "answer %d", i);
		CHECK_EQ(ev.cookie, 100 + i);
	}
	CHECK_EQ(sa_path(a.port, a.info.gid, 0, &pr), 0);
out:
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(sa_faults, test_sa_faults,
	"SA faults: lost queries never answer (counted), late ones come")

/* ---- threads --------------------------------------------------------------- */

#define SA_THREAD_N	2000

struct sa_poster {
	struct shm_port *p;
	const uint8_t *gid;
	int failed;
};

static void *
sa_poster_main(void *arg)
{
	struct sa_poster *s = arg;
	uint64_t i = 0;
	double deadline = test_now_ms() + T_TIMEOUT;

	while (i < SA_THREAD_N && test_now_ms() < deadline) {
		int ret = shm_sa_path_query(s->p, s->gid, 0, i);

		if (ret == 0)
			i++;
		else if (ret != -ENOSPC)
			s->failed = 1;
	}
	if (i < SA_THREAD_N)
		s->failed = 1;
	return NULL;
}

/* One thread posts, the control thread waits and polls: every answer. */
static int
test_sa_threads(void)
{
	struct ep_conf ea = { "a", SHM_QPT_UD, 4, 256 };
	struct ep_conf eb = { "b", SHM_QPT_UD, 4, 256 };
	static uint8_t seen[SA_THREAD_N];
	struct shm_sa_event ev[16];
	struct sa_poster s = { 0 };
	double deadline;
	bool started = false;
	pthread_t th;
	int got = 0, k, i;
	struct ep a, b;
	char fab[32];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(seen, 0, sizeof(seen));
	fabric_name(fab, sizeof(fab), "sa_threads");
	CHECK(ep_open(&a, fab, &ea) == 0 && ep_open(&b, fab, &eb) == 0);
	s.p = a.port;
	s.gid = b.info.gid;
	CHECK(pthread_create(&th, NULL, sa_poster_main, &s) == 0);
	started = true;
	deadline = test_now_ms() + T_TIMEOUT;
	while (got < SA_THREAD_N) {
		CHECK(test_now_ms() < deadline, "%d answers", got);
		shm_cm_wait(a.port, 100 * 1000000ULL);
		k = shm_sa_poll(a.port, ev, 16);
		for (i = 0; i < k; i++) {
			CHECK(ev[i].status == 0 && ev[i].cookie < SA_THREAD_N);
			CHECK_EQ(ev[i].path.dlid, b.info.lid);
			CHECK(!seen[ev[i].cookie], "answer %u twice",
			      (unsigned int)ev[i].cookie);
			seen[ev[i].cookie] = 1;
		}
		got += k;
	}
out:
	if (started)
		pthread_join(th, NULL);
	if (s.failed)
		ft_fail(__FILE__, __LINE__, "poster", " failed");
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(sa_threads, test_sa_threads,
	"SA: queries from one thread, answers polled by another, each once")
