/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Helpers shared by the shm fabric tests; see fabric_util.h.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fabric_util.h"

int ft_fails;

void
ft_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
	va_list ap;

	printf("    FAIL [pid %d] %s:%d: %s:", (int)getpid(), file, line,
	       expr);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	ft_fails++;
}

void
ft_note(const char *fmt, ...)
{
	va_list ap;

	printf("    ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void
fabric_name(char *buf, size_t len, const char *test)
{
	snprintf(buf, len, "tf_%.16s_%d", test, (int)getpid());
}

int
shm_objects(const char *fabric, bool print)
{
	char prefix[64];
	struct dirent *de;
	size_t plen;
	DIR *d;
	int n = 0;

	plen = (size_t)snprintf(prefix, sizeof(prefix), "ipoibcm.%s", fabric);
	d = opendir("/dev/shm");
	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, plen) != 0 ||
		    (de->d_name[plen] != '\0' && de->d_name[plen] != '.'))
			continue;
		if (print)
			ft_note("left behind: /dev/shm/%s", de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

int
shm_leftovers(const char *fabric)
{
	return shm_objects(fabric, true);
}

int
ft_end(const char *fabric)
{
	int n = shm_leftovers(fabric);

	if (n != 0)
		ft_fail(__FILE__, __LINE__, "shm_leftovers(fabric) == 0",
			" %d objects of fabric %s remain", n, fabric);
	return ft_fails == 0 ? 0 : -1;
}

int
maps_count(void)
{
	FILE *fp = fopen("/proc/self/maps", "r");
	int n = 0, ch;

	if (fp == NULL)
		return -1;
	while ((ch = fgetc(fp)) != EOF)
		n += ch == '\n';
	fclose(fp);
	return n;
}

/* ---- child processes ---------------------------------------------------- */

int
child_start(struct child *c, child_fn fn, void *arg)
{
	int down[2], up[2], ret;
	pid_t parent = getpid();

	c->pid = -1;
	if (pipe(down) < 0)
		return -errno;
	if (pipe(up) < 0) {
		close(down[0]);
		close(down[1]);
		return -errno;
	}
	/* what is buffered would be printed twice */
	fflush(stdout);
	fflush(stderr);
	c->pid = fork();
	if (c->pid < 0) {
		ret = -errno;
		close(down[0]);
		close(down[1]);
		close(up[0]);
		close(up[1]);
		return ret;
	}
	if (c->pid == 0) {
		close(down[1]);
		close(up[0]);
		/* never outlive a parent that failed */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		ft_fails = 0;
		ret = fn(down[0], up[1], arg);
		close(down[0]);
		close(up[1]);
		exit(ret == 0 && ft_fails == 0 ? 0 : 1);
	}
	close(down[0]);
	close(up[1]);
	c->rd = up[0];
	c->wr = down[1];
	return 0;
}

static void
child_close(struct child *c)
{
	if (c->rd >= 0)
		close(c->rd);
	if (c->wr >= 0)
		close(c->wr);
	c->rd = c->wr = -1;
	c->pid = -1;
}

/*
 * The child's end of its pipe closes when it exits: wait for that (bounded),
 * then reap it. A child that does not finish in time is killed.
 */
int
child_wait(struct child *c, int timeout_ms)
{
	double deadline = test_now_ms() + timeout_ms;
	struct timespec ms = { 0, 1000000 };
	char buf[sizeof(struct msg)];
	int status = 0;
	pid_t r = 0;

	if (c->pid <= 0)
		return -1;
	for (;;) {
		struct pollfd pfd = { c->rd, POLLIN, 0 };
		int left = (int)(deadline - test_now_ms());

		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			break;
		if (read(c->rd, buf, sizeof(buf)) <= 0)
			break;
	}
	while (test_now_ms() < deadline &&
	       (r = waitpid(c->pid, &status, WNOHANG)) == 0)
		nanosleep(&ms, NULL);
	if (r != c->pid) {
		ft_note("child %d did not exit in %d ms: killed",
			(int)c->pid, timeout_ms);
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &status, 0);
		child_close(c);
		return -1;
	}
	child_close(c);
	if (WIFSIGNALED(status)) {
		ft_note("child killed by signal %d", WTERMSIG(status));
		return -1;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

void
child_kill(struct child *c)
{
	if (c->pid <= 0)
		return;
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	child_close(c);
}

int
msg_send(int fd, uint32_t type, const struct msg *m)
{
	struct msg out;

	if (m != NULL)
		out = *m;
	else
		memset(&out, 0, sizeof(out));
	out.type = type;
	/* smaller than PIPE_BUF: written whole */
	if (write(fd, &out, sizeof(out)) != (ssize_t)sizeof(out))
		return -EPIPE;
	return 0;
}

int
msg_recv(int fd, struct msg *m, int timeout_ms)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	ssize_t n;
	int r;

	do {
		r = poll(&pfd, 1, timeout_ms);
	} while (r < 0 && errno == EINTR);
	if (r == 0)
		return -ETIMEDOUT;
	n = read(fd, m, sizeof(*m));
	return n == (ssize_t)sizeof(*m) ? 0 : -EPIPE;
}

int
msg_expect(int fd, uint32_t type, struct msg *m, int timeout_ms)
{
	struct msg tmp;
	int ret;

	if (m == NULL)
		m = &tmp;
	ret = msg_recv(fd, m, timeout_ms);
	if (ret < 0) {
		ft_note("[pid %d] waiting for message %u: %s", (int)getpid(),
			type, strerror(-ret));
		return ret;
	}
	if (m->type != type) {
		ft_note("[pid %d] message %u instead of %u", (int)getpid(),
			m->type, type);
		return -EPROTO;
	}
	return 0;
}

/* ---- fabric recipes ----------------------------------------------------- */

struct shm_qp *
qp_new(struct shm_port *p, enum shm_qp_type type, struct shm_cq *cq,
       struct shm_rq *srq, uint32_t nwr, uint32_t ctx)
{
	struct shm_qp_conf qc = {
		.type = type,
		.recv_cq = cq,
		.srq = srq,
		.max_recv_wr = srq != NULL ? 0 : nwr,
		.max_recv_sge = 4,
		.qkey = T_QKEY,
		.qp_context = ctx,
	};
	struct shm_qp *qp = shm_qp_create(p, &qc);

	if (qp != NULL && type == SHM_QPT_UD &&
	    shm_qp_modify(qp, SHM_QPS_RTS) < 0) {
		shm_qp_destroy(qp);
		return NULL;
	}
	return qp;
}

int
post_buf(struct shm_rq *rq, const struct shm_mem *m, uint32_t buf_len,
	 uint32_t i)
{
	struct ipoib_recv_wr wr = {
		.wr_id = i,
		.num_sge = 1,
		.sg_list = { {
			.addr = (uintptr_t)m->addr + (uint64_t)i * buf_len,
			.length = buf_len,
			.lkey = m->lkey,
		} },
	};

	return shm_rq_post(rq, &wr, 1) == 1 ? 0 : -ENOSPC;
}

int
ep_open(struct ep *e, const char *fabric, const struct ep_conf *c)
{
	struct shm_port_conf pc = { 0 };
	uint32_t i;
	int ret;

	memset(e, 0, sizeof(*e));
	if (c->pc != NULL)
		pc = *c->pc;
	pc.name = c->port_name;
	e->nbufs = c->nbufs;
	e->buf_len = c->buf_len;
	ret = shm_fabric_attach(fabric, &e->f);
	if (ret < 0)
		return ret;
	ret = shm_port_open(e->f, &pc, &e->port);
	if (ret < 0)
		goto fail;
	shm_port_query(e->port, &e->info);
	ret = -ENOMEM;
	e->cq = shm_cq_create(e->port, c->nbufs);
	if (e->cq == NULL)
		goto fail;
	if (c->srq) {
		e->srq = shm_srq_create(e->port, c->nbufs, 1, 0);
		if (e->srq == NULL)
			goto fail;
	}
	e->qp = qp_new(e->port, c->type, e->cq, e->srq, c->nbufs, 0);
	if (e->qp == NULL)
		goto fail;
	ret = shm_mem_alloc(e->f, (size_t)c->nbufs * c->buf_len, &e->mem);
	if (ret < 0)
		goto fail;
	for (i = 0; !c->no_post && i < c->nbufs; i++) {
		ret = ep_post(e, i);
		if (ret < 0)
			goto fail;
	}
	return 0;
fail:
	ep_close(e);
	return ret;
}

void
ep_close(struct ep *e)
{
	if (e->qp != NULL && qp_destroy_drain(e->qp, e->cq) < 0)
		ft_note("QP %#x would not go", shm_qp_num(e->qp));
	e->qp = NULL;
	if (e->srq != NULL && shm_srq_destroy(e->srq) < 0)
		ft_note("SRQ would not go");
	e->srq = NULL;
	if (e->cq != NULL)
		shm_cq_destroy(e->cq);
	e->cq = NULL;
	if (e->mem.addr != NULL)
		shm_mem_free(e->f, &e->mem);
	if (e->port != NULL)
		shm_port_close(e->port);
	e->port = NULL;
	if (e->f != NULL)
		shm_fabric_detach(e->f);
	e->f = NULL;
}

uint8_t *
ep_buf(const struct ep *e, uint32_t i)
{
	return (uint8_t *)e->mem.addr + (size_t)i * e->buf_len;
}

struct shm_rq *
ep_rq(struct ep *e)
{
	return e->srq != NULL ? e->srq : shm_qp_rq(e->qp);
}

void
ep_hello(const struct ep *e, struct msg *m)
{
	memset(m, 0, sizeof(*m));
	memcpy(m->gid, e->info.gid, IPOIB_GID_LEN);
	m->u32[0] = e->info.lid;
	m->u32[1] = shm_qp_num(e->qp);
	m->u32[2] = e->f->proc;
}

int
ep_post(struct ep *e, uint32_t i)
{
	return post_buf(ep_rq(e), &e->mem, e->buf_len, i);
}

int
poll_wc(struct shm_cq *cq, struct ipoib_wc *wc, int want, int timeout_ms)
{
	double deadline = test_now_ms() + timeout_ms;
	int got = 0;

	for (;;) {
		got += shm_cq_poll(cq, wc + got, (uint16_t)(want - got));
		if (got >= want || test_now_ms() > deadline)
			return got;
		sched_yield();
	}
}

int
qp_destroy_drain(struct shm_qp *qp, struct shm_cq *cq)
{
	double deadline = test_now_ms() + T_TIMEOUT;
	struct ipoib_wc wc[64];
	int ret;

	while ((ret = shm_qp_destroy(qp)) == -EBUSY && test_now_ms() < deadline)
		shm_cq_poll(cq, wc, 64);
	return ret;
}

uint16_t
ud_send(struct shm_qp *qp, const struct shm_ah *ah, uint32_t dqpn,
	uint32_t qkey, const void *buf, uint32_t len)
{
	struct iovec iov = { (void *)(uintptr_t)buf, len };
	struct shm_send s = {
		.iov = &iov,
		.iovcnt = 1,
		.ah = ah,
		.remote_qpn = dqpn,
		.remote_qkey = qkey,
	};

	return shm_qp_post_send(qp, &s, 1);
}

uint16_t
rc_send(struct shm_qp *qp, const void *buf, uint32_t len)
{
	struct iovec iov = { (void *)(uintptr_t)buf, len };
	struct shm_send s = { .iov = &iov, .iovcnt = 1 };

	return shm_qp_post_send(qp, &s, 1);
}

int
rc_send_wait(struct shm_qp *qp, const void *buf, uint32_t len,
	     int timeout_ms)
{
	double deadline = test_now_ms() + timeout_ms;

	while (rc_send(qp, buf, len) != 1) {
		if (test_now_ms() > deadline ||
		    shm_qp_state(qp) == SHM_QPS_ERR)
			return -1;
		sched_yield();
	}
	return 0;
}

int
cm_wait(struct shm_port *p, struct shm_cm_event *ev, int timeout_ms)
{
	double deadline = test_now_ms() + timeout_ms;

	for (;;) {
		if (shm_cm_poll(p, ev, 1) == 1)
			return 1;
		if (test_now_ms() > deadline)
			return 0;
		sched_yield();
	}
}

static const char *
cm_ev_name(enum ipoib_cm_event_type t)
{
	static const char *const names[] = {
		"REQ_RCVD", "REP_RCVD", "ESTABLISHED", "REJ_RCVD", "TIMEOUT",
		"DREQ_RCVD", "DISCONNECTED",
	};

	return (unsigned int)t < 7 ? names[t] : "?";
}

int
cm_expect(struct shm_port *p, enum ipoib_cm_event_type type,
	  struct shm_cm_event *ev, int timeout_ms)
{
	if (cm_wait(p, ev, timeout_ms) == 0) {
		ft_note("no CM event %s in %d ms", cm_ev_name(type),
			timeout_ms);
		return -1;
	}
	if (ev->type != type) {
		ft_note("CM event %s (reason %u) instead of %s",
			cm_ev_name(ev->type), ev->reason, cm_ev_name(type));
		return -1;
	}
	return 0;
}

int
cm_wait2(struct shm_port *a, struct shm_port *b, struct shm_cm_event *ev,
	 int timeout_ms)
{
	double deadline = test_now_ms() + timeout_ms;

	for (;;) {
		if (shm_cm_poll(a, ev, 1) == 1)
			return 0;
		if (shm_cm_poll(b, ev, 1) == 1)
			return 1;
		if (test_now_ms() > deadline)
			return -1;
		sched_yield();
	}
}

int
cm_expect2(struct shm_port *a, struct shm_port *b, int on,
	   enum ipoib_cm_event_type type, struct shm_cm_event *ev,
	   int timeout_ms)
{
	int which = cm_wait2(a, b, ev, timeout_ms);

	if (which < 0) {
		ft_note("no CM event %s in %d ms", cm_ev_name(type),
			timeout_ms);
		return -1;
	}
	if (which != on || ev->type != type) {
		ft_note("CM event %s (reason %u) on port %c instead of %s on "
			"%c", cm_ev_name(ev->type), ev->reason, 'a' + which,
			cm_ev_name(type), 'a' + on);
		return -1;
	}
	return 0;
}

int
async_wait(struct shm_port *p, struct shm_async_event *ev, int timeout_ms)
{
	double deadline = test_now_ms() + timeout_ms;

	for (;;) {
		if (shm_async_poll(p, ev, 1) == 1)
			return 1;
		if (test_now_ms() > deadline)
			return 0;
		sched_yield();
	}
}

void
req_init(struct shm_cm_req *r, const uint8_t *dgid, struct shm_qp *qp,
	 uint8_t rnr_retry, uint8_t cm_retries)
{
	memset(r, 0, sizeof(*r));
	r->service_id = T_SID;
	r->dgid = dgid;
	r->qp = qp;
	r->rnr_retry_count = rnr_retry;
	r->max_cm_retries = cm_retries;
	r->responder_resources = 4;
}

int
conn_qps(struct conn *c, struct shm_port *pa, struct shm_qp *qa,
	 struct shm_port *pb, struct shm_qp *qb, uint8_t rnr_retry)
{
	struct shm_port_info ib;
	struct shm_cm_event ev;
	struct shm_cm_req r;
	int ret;

	memset(c, 0, sizeof(*c));
	shm_port_query(pb, &ib);
	ret = shm_cm_listen(pb, T_SID);
	if (ret < 0 && ret != -EADDRINUSE)
		return ret;
	req_init(&r, ib.gid, qa, rnr_retry, 3);
	ret = shm_cm_connect(pa, &r, &c->act);
	if (ret < 0)
		return ret;
	if (cm_expect(pb, IPOIB_CM_REQ_RCVD, &ev, T_TIMEOUT) < 0)
		return -1;
	c->pas = ev.id;
	if (shm_cm_accept(c->pas, qb, NULL, NULL, 0) < 0 ||
	    cm_expect(pa, IPOIB_CM_REP_RCVD, &ev, T_TIMEOUT) < 0 ||
	    shm_cm_rtu(c->act) < 0 ||
	    cm_expect(pb, IPOIB_CM_ESTABLISHED, &ev, T_TIMEOUT) < 0)
		return -1;
	return 0;
}

int
conn_local(struct conn *c, struct ep *a, struct ep *b, uint8_t rnr_retry)
{
	return conn_qps(c, a->port, a->qp, b->port, b->qp, rnr_retry);
}

void
conn_destroy(struct conn *c)
{
	if (c->act != NULL)
		shm_cm_destroy(c->act);
	if (c->pas != NULL)
		shm_cm_destroy(c->pas);
	c->act = c->pas = NULL;
}

int
udq_open(struct udq *q, struct shm_fabric *f, struct shm_port *p,
	 uint16_t pkey_index, uint32_t qkey)
{
	struct shm_qp_conf qc = {
		.type = SHM_QPT_UD, .max_recv_wr = UDQ_NBUFS, .max_recv_sge = 1,
		.pkey_index = pkey_index, .qkey = qkey,
	};
	uint32_t i;

	q->cq = shm_cq_create(p, UDQ_NBUFS);
	qc.recv_cq = q->cq;
	q->qp = q->cq != NULL ? shm_qp_create(p, &qc) : NULL;
	if (q->qp == NULL || shm_qp_modify(q->qp, SHM_QPS_RTS) < 0 ||
	    shm_mem_alloc(f, UDQ_NBUFS * UDQ_BUF, &q->mem) < 0)
		return -1;
	for (i = 0; i < UDQ_NBUFS; i++)
		if (post_buf(shm_qp_rq(q->qp), &q->mem, UDQ_BUF, i) < 0)
			return -1;
	return 0;
}

void
udq_close(struct udq *q, struct shm_fabric *f)
{
	if (q->qp != NULL)
		qp_destroy_drain(q->qp, q->cq);
	if (q->cq != NULL)
		shm_cq_destroy(q->cq);
	if (q->mem.addr != NULL)
		shm_mem_free(f, &q->mem);
	memset(q, 0, sizeof(*q));
}

/*
 * Byte i of message seq is (seq * 31 + i * 7) mod 256: after the first
 * four bytes (seq itself) that is pat[i + k] with pat[j] = 7 j mod 256 and
 * k = 31 * seq / 7 mod 256 (183 is 1/7 mod 256). memcpy and memcmp then
 * do the work, which matters under the sanitizers.
 */
#define PAT_LEN		(70000 + 256)

static uint8_t pat[PAT_LEN];

static const uint8_t *
pattern_of(uint32_t seq)
{
	uint32_t j;

	if (pat[1] == 0)
		for (j = 0; j < PAT_LEN; j++)
			pat[j] = (uint8_t)(j * 7);
	return pat + (uint8_t)(seq * 31 * 183);
}

void
fill_pattern(uint8_t *buf, uint32_t len, uint32_t seq)
{
	const uint8_t *p = pattern_of(seq);
	uint32_t i = 0;

	if (len >= 4) {
		memcpy(buf, &seq, 4);
		i = 4;
	}
	if (len <= PAT_LEN - 256) {
		memcpy(buf + i, p + i, len - i);
		return;
	}
	for (; i < len; i++)
		buf[i] = (uint8_t)(seq * 31 + i * 7);
}

bool
check_pattern(const uint8_t *buf, uint32_t len, uint32_t seq)
{
	const uint8_t *p = pattern_of(seq);
	uint32_t i = 0;

	if (len >= 4) {
		if (memcmp(buf, &seq, 4) != 0)
			return false;
		i = 4;
	}
	if (len <= PAT_LEN - 256)
		return memcmp(buf + i, p + i, len - i) == 0;
	for (; i < len; i++)
		if (buf[i] != (uint8_t)(seq * 31 + i * 7))
			return false;
	return true;
}

uint32_t
seq_len(uint32_t seq, uint32_t max)
{
	return 4 + ((seq * 2654435761u) >> 7) % (max - 3);
}
