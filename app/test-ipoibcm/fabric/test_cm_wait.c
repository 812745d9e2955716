/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The control thread's sleep: shm_cm_wait() returns when a CM message
 * comes (from another process: the doorbell is a futex in shared memory),
 * when shm_cm_wake() is called, and when a message held back by cm_delay_ms
 * falls due, and at once when the bell rang since the last wait read it.
 * Each wait is given twice T_TIMEOUT: a wake-up that does not
 * come shows as a test that does not end in T_TIMEOUT. The waker first sees
 * the sleeper inside FUTEX_WAIT (/proc/<tid>/syscall), so what is tested
 * is the wake-up, not a message that was there before the wait.
 */

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fabric_util.h"

#define WAIT_LONG_NS	(2ULL * T_TIMEOUT * 1000000ULL)
#define REJ_CONSUMER	28

static const struct ep_conf wait_conf_a = { "a", SHM_QPT_RC, 16, 256 };
static const struct ep_conf wait_conf_b = { "b", SHM_QPT_RC, 16, 256 };

/* Wait until thread tid of process pid sleeps in FUTEX_WAIT. */
static int
in_futex_wait(pid_t pid, pid_t tid)
{
	double deadline = test_now_ms() + T_TIMEOUT;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid,
		 (int)tid);
	while (test_now_ms() < deadline) {
		unsigned long nr = 0, addr, op = ~0UL;
		FILE *f = fopen(path, "r");

		if (f == NULL)
			return -1;
		if (fscanf(f, "%lu %lx %lx", &nr, &addr, &op) != 3)
			nr = 0;		/* "running": no syscall */
		fclose(f);
		if (nr == SYS_futex && (op & FUTEX_CMD_MASK) == FUTEX_WAIT)
			return 0;
		sched_yield();
	}
	ft_note("%d/%d never slept in FUTEX_WAIT", (int)pid, (int)tid);
	return -1;
}

/* Sleep in shm_cm_wait() until port p has a CM event, for T_TIMEOUT. */
static int
wait_event(struct shm_port *p, struct shm_cm_event *ev, unsigned int *waits)
{
	double deadline = test_now_ms() + T_TIMEOUT;

	*waits = 0;
	while (shm_cm_poll(p, ev, 1) == 0) {
		if (test_now_ms() > deadline)
			return -1;
		shm_cm_wait(p, WAIT_LONG_NS);
		(*waits)++;
	}
	return 0;
}

/* The passive side, in the child: asleep until the parent's REQ comes. */
static int
wake_child(int rd, int wr, void *arg)
{
	struct shm_cm_event ev;
	struct msg peer, m;
	unsigned int waits;
	double t0;
	struct ep b;

	memset(&b, 0, sizeof(b));
	CHECK(ep_open(&b, arg, &wait_conf_b) == 0);
	CHECK(shm_cm_listen(b.port, T_SID) == 0);
	CHECK(msg_expect(rd, MSG_HELLO, &peer, T_TIMEOUT) == 0);
	ep_hello(&b, &m);
	CHECK(msg_send(wr, MSG_HELLO, &m) == 0);
	t0 = test_now_ms();
	CHECK(wait_event(b.port, &ev, &waits) == 0, "no REQ");
	CHECK_EQ(ev.type, IPOIB_CM_REQ_RCVD);
	CHECK(waits >= 1, "the REQ came before the wait");
	ft_note("[child] REQ after %u wait(s), %.2f ms", waits,
		test_now_ms() - t0);
	CHECK(shm_cm_reject(ev.id, REJ_CONSUMER, NULL, 0) == 0);
	shm_cm_destroy(ev.id);
out:
	ep_close(&b);
	return ft_fails == 0 ? 0 : -1;
}

static int
test_cm_wake_msg(void)
{
	struct child c = { .pid = -1 };
	struct shm_cm_id *id = NULL;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	struct msg peer, m;
	char fab[32];
	struct ep a;

	memset(&a, 0, sizeof(a));
	fabric_name(fab, sizeof(fab), "cm_wake_msg");
	CHECK(ep_open(&a, fab, &wait_conf_a) == 0);
	CHECK(child_start(&c, wake_child, fab) == 0);
	ep_hello(&a, &m);
	CHECK(msg_send(c.wr, MSG_HELLO, &m) == 0);
	CHECK(msg_expect(c.rd, MSG_HELLO, &peer, T_TIMEOUT) == 0);
	CHECK(in_futex_wait(c.pid, c.pid) == 0);
	req_init(&req, peer.gid, a.qp, 7, 3);
	CHECK(shm_cm_connect(a.port, &req, &id) == 0);
	CHECK(cm_expect(a.port, IPOIB_CM_REJ_RCVD, &ev, T_TIMEOUT) == 0);
	CHECK_EQ(ev.reason, REJ_CONSUMER);
	CHECK(child_wait(&c, T_TIMEOUT) == 0, "the child woke for the REQ");
out:
	child_kill(&c);
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_wake_msg, test_cm_wake_msg,
	"CM wait: a REQ from another process ends the receiver's sleep")

struct sleeper {
	struct shm_port *port;
	pid_t tid;		/* atomic */
	int done;		/* atomic */
};

static void *
sleeper_main(void *arg)
{
	struct sleeper *s = arg;

	__atomic_store_n(&s->tid, (pid_t)syscall(SYS_gettid),
			 __ATOMIC_RELEASE);
	shm_cm_wait(s->port, WAIT_LONG_NS);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Whether the sleeper's wait ended, given T_TIMEOUT to. */
static bool
sleeper_ended(struct sleeper *s)
{
	double deadline = test_now_ms() + T_TIMEOUT;

	while (!__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) &&
	       test_now_ms() < deadline)
		sched_yield();
	return __atomic_load_n(&s->done, __ATOMIC_ACQUIRE);
}

static int
test_cm_wake_call(void)
{
	struct sleeper s = { NULL, 0, 0 };
	double deadline, t0;
	bool started = false;
	pthread_t th;
	char fab[32];
	struct ep a;

	memset(&a, 0, sizeof(a));
	fabric_name(fab, sizeof(fab), "cm_wake_call");
	CHECK(ep_open(&a, fab, &wait_conf_a) == 0);
	s.port = a.port;
	CHECK(pthread_create(&th, NULL, sleeper_main, &s) == 0);
	started = true;
	deadline = test_now_ms() + T_TIMEOUT;
	while (__atomic_load_n(&s.tid, __ATOMIC_ACQUIRE) == 0 &&
	       test_now_ms() < deadline)
		sched_yield();
	CHECK(in_futex_wait(getpid(), s.tid) == 0);
	t0 = test_now_ms();
	shm_cm_wake(a.port);
	CHECK(sleeper_ended(&s), "one wake and the sleeper still sleeps");
	ft_note("woken %.2f ms after the wake", test_now_ms() - t0);
out:
	if (started)
		pthread_join(th, NULL);	/* WAIT_LONG_NS at most */
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_wake_call, test_cm_wake_call,
	"CM wait: shm_cm_wake() from another thread ends the sleep")

/*
 * A ring that came after the last wait read the bell (a connection
 * request enqueued while the control thread's round ran, after the round
 * had looked for one) ends the next wait at once, though nobody slept
 * when it rang.
 */
static int
test_cm_wait_rung_before(void)
{
	struct sleeper s = { NULL, 0, 0 };
	bool started = false;
	pthread_t th;
	char fab[32];
	struct ep a;

	memset(&a, 0, sizeof(a));
	fabric_name(fab, sizeof(fab), "cm_wait_rung");
	CHECK(ep_open(&a, fab, &wait_conf_a) == 0);
	s.port = a.port;
	shm_cm_wait(a.port, 1000000);	/* a round starts after this */
	shm_cm_wake(a.port);		/* rung during the round */
	CHECK(pthread_create(&th, NULL, sleeper_main, &s) == 0);
	started = true;
	CHECK(sleeper_ended(&s),
	      "the wait slept through a ring it had not looked at");
out:
	if (started)
		pthread_join(th, NULL);	/* WAIT_LONG_NS at most */
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_wait_rung_before, test_cm_wait_rung_before,
	"CM wait: a ring since the last look ends the next wait at once")

static int
test_cm_wait_delay(void)
{
	struct ipoib_faults fl = { .cm_delay_ms = 80, .rej_after = -1 };
	struct shm_cm_id *id = NULL;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	unsigned int waits;
	struct ep a, b;
	char fab[32];
	double t0, dt;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	fabric_name(fab, sizeof(fab), "cm_wait_delay");
	CHECK(ep_open(&a, fab, &wait_conf_a) == 0);
	CHECK(ep_open(&b, fab, &wait_conf_b) == 0);
	CHECK(shm_cm_listen(b.port, T_SID) == 0);
	shm_port_set_faults(b.port, &fl);
	req_init(&req, b.info.gid, a.qp, 7, 3);
	t0 = test_now_ms();
	CHECK(shm_cm_connect(a.port, &req, &id) == 0);
	/* the REQ is in b's mailbox now, due in 80 ms: wait that long */
	CHECK(wait_event(b.port, &ev, &waits) == 0, "no REQ");
	dt = test_now_ms() - t0;
	CHECK_EQ(ev.type, IPOIB_CM_REQ_RCVD);
	CHECK(dt >= 79, "REQ after %.1f ms, before its delay", dt);
	ft_note("REQ delayed 80 ms: after %.1f ms, %u wait(s)", dt, waits);
	CHECK(shm_cm_reject(ev.id, REJ_CONSUMER, NULL, 0) == 0);
	shm_cm_destroy(ev.id);
	CHECK(cm_expect(a.port, IPOIB_CM_REJ_RCVD, &ev, T_TIMEOUT) == 0);
out:
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_wait_delay, test_cm_wait_delay,
	"CM wait: a message held back by cm_delay_ms ends the sleep when due")
