/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef FABRIC_UTIL_H
#define FABRIC_UTIL_H

/*
 * Helpers of shm-fabric-test: checks, child processes with pipes and
 * deadlines, and the few fabric recipes every test repeats (an endpoint =
 * port + CQ + buffers + QP; a local RC connection).
 * The tests are white-box where the public API cannot show a fact (a
 * directory slot freed): they include shm_internal.h for that only.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "shm_fabric.h"
#include "shm_internal.h"
#include "test_runner.h"

/* ---- checks ------------------------------------------------------------- */

/* Failures of the running test (or of this child process). */
extern int ft_fails;

void ft_fail(const char *file, int line, const char *expr, const char *fmt,
	     ...) __attribute__((format(printf, 4, 5)));
void ft_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* On failure: say where and why, count it, and go to the test's "out:". */
#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		ft_fail(__FILE__, __LINE__, #cond, " " __VA_ARGS__); \
		goto out; \
	} \
} while (0)

#define CHECK_EQ(a, b) do { \
	long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) { \
		ft_fail(__FILE__, __LINE__, #a " == " #b, " %lld != %lld", \
			a_, b_); \
		goto out; \
	} \
} while (0)

/* "tf_<test>_<pid>", unique to this test run. */
void fabric_name(char *buf, size_t len, const char *test);
/* Objects /dev/shm/ipoibcm.<fabric> and .<fabric>.*, maybe printed. */
int shm_objects(const char *fabric, bool print);
/* The same, printed: what a test left behind. */
int shm_leftovers(const char *fabric);
/* End of a test: leftovers are a failure; 0 when the test passed. */
int ft_end(const char *fabric);
/* Lines of /proc/self/maps. */
int maps_count(void);

/* ---- child processes ---------------------------------------------------- */

/* Messages between parent and child: small, written atomically. */
struct msg {
	uint32_t type;
	uint32_t u32[4];
	uint64_t u64[2];
	uint8_t gid[IPOIB_GID_LEN];
};

enum {
	MSG_HELLO = 1,		/* gid, u32[0] lid, u32[1] qpn, u32[2] qpn2 */
	MSG_READY,
	MSG_GO,
	MSG_DONE,		/* u32[0]: failures, u64: counts */
	MSG_STOP,
};

struct child {
	pid_t pid;
	int rd;			/* parent reads the child's messages */
	int wr;			/* parent writes to the child */
};

/* Child side: its ends of the pipes. Returns 0 when it passed. */
typedef int (*child_fn)(int rd, int wr, void *arg);

int child_start(struct child *c, child_fn fn, void *arg);
/* Wait for the child to exit (bounded); 0 when it exited with status 0. */
int child_wait(struct child *c, int timeout_ms);
void child_kill(struct child *c);

int msg_send(int fd, uint32_t type, const struct msg *m);
/* 0: got one; -ETIMEDOUT; -EPIPE: the other side is gone. */
int msg_recv(int fd, struct msg *m, int timeout_ms);
/* Receive a message of this type; anything else is an error. */
int msg_expect(int fd, uint32_t type, struct msg *m, int timeout_ms);

/* ---- fabric recipes ----------------------------------------------------- */

#define T_QKEY		0x11223344u
#define T_SID		0x1000000000000abcULL
/*
 * ms: how long a test waits for what must happen (a message, an event, a
 * child's exit). It catches a hang and never judges how fast the thing
 * happened: generous for a slow, shared or sanitized machine. Waits for
 * what must NOT happen use short windows of their own.
 */
#define T_TIMEOUT	60000

/* A port with one CQ, one QP, and nbufs receive buffers of buf_len. */
struct ep {
	struct shm_fabric *f;
	struct shm_port *port;
	struct shm_port_info info;
	struct shm_cq *cq;
	struct shm_rq *srq;	/* optional */
	struct shm_qp *qp;
	struct shm_mem mem;
	uint32_t nbufs;
	uint32_t buf_len;
};

struct ep_conf {
	const char *port_name;
	enum shm_qp_type type;
	uint32_t nbufs;		/* posted at once, wr_id = index */
	uint32_t buf_len;
	bool srq;		/* receive through an SRQ */
	bool no_post;		/* create, but post nothing */
	const struct shm_port_conf *pc;	/* optional */
};

int ep_open(struct ep *e, const char *fabric, const struct ep_conf *c);
void ep_close(struct ep *e);
uint8_t *ep_buf(const struct ep *e, uint32_t i);
int ep_post(struct ep *e, uint32_t i);
struct shm_rq *ep_rq(struct ep *e);
/* What a peer needs to reach e: gid, u32[0] lid, [1] qpn, [2] proc slot. */
void ep_hello(const struct ep *e, struct msg *m);

/* Post one receive WR of buffer i into rq, one SGE. */
int post_buf(struct shm_rq *rq, const struct shm_mem *m, uint32_t buf_len,
	     uint32_t i);
/* Poll until want completions or the deadline; returns how many. */
int poll_wc(struct shm_cq *cq, struct ipoib_wc *wc, int want, int timeout_ms);
/* Destroy a QP, polling away its flushed completions; 0 on success. */
int qp_destroy_drain(struct shm_qp *qp, struct shm_cq *cq);

struct shm_qp *qp_new(struct shm_port *p, enum shm_qp_type type,
		      struct shm_cq *cq, struct shm_rq *srq, uint32_t nwr,
		      uint32_t ctx);
/* UD send of one message; returns what shm_qp_post_send returned. */
uint16_t ud_send(struct shm_qp *qp, const struct shm_ah *ah, uint32_t dqpn,
		 uint32_t qkey, const void *buf, uint32_t len);
uint16_t rc_send(struct shm_qp *qp, const void *buf, uint32_t len);
/* RC send retried on RNR until sent or the deadline: 0 when sent. */
int rc_send_wait(struct shm_qp *qp, const void *buf, uint32_t len,
		 int timeout_ms);

/* One CM event of port p within the deadline: 1, or 0 on timeout. */
int cm_wait(struct shm_port *p, struct shm_cm_event *ev, int timeout_ms);
/* Wait for an event of this type; another type is an error (-1). */
int cm_expect(struct shm_port *p, enum ipoib_cm_event_type type,
	      struct shm_cm_event *ev, int timeout_ms);
/* Poll both ports' CM until one of them has an event: its port's index. */
int cm_wait2(struct shm_port *a, struct shm_port *b, struct shm_cm_event *ev,
	     int timeout_ms);
/* Poll a and b: the first event must be on port a (on 0) or b (on 1). */
int cm_expect2(struct shm_port *a, struct shm_port *b, int on,
	       enum ipoib_cm_event_type type, struct shm_cm_event *ev,
	       int timeout_ms);
/* One async event of port p (runs the janitor too). */
int async_wait(struct shm_port *p, struct shm_async_event *ev,
	       int timeout_ms);

/* A connection between two QPs of this process (ports a and b). */
struct conn {
	struct shm_cm_id *act;	/* on a */
	struct shm_cm_id *pas;	/* on b */
};

void req_init(struct shm_cm_req *r, const uint8_t *dgid, struct shm_qp *qp,
	      uint8_t rnr_retry, uint8_t cm_retries);
/* REQ -> REP -> RTU from qa (port pa) to qb (port pb, listening T_SID). */
int conn_qps(struct conn *c, struct shm_port *pa, struct shm_qp *qa,
	     struct shm_port *pb, struct shm_qp *qb, uint8_t rnr_retry);
int conn_local(struct conn *c, struct ep *a, struct ep *b,
	       uint8_t rnr_retry);
void conn_destroy(struct conn *c);

/* A UD QP on port p with the P_Key at pkey_index, its own CQ and buffers. */
#define UDQ_BUF		2048
#define UDQ_NBUFS	4

struct udq {
	struct shm_cq *cq;
	struct shm_qp *qp;
	struct shm_mem mem;
};

int udq_open(struct udq *q, struct shm_fabric *f, struct shm_port *p,
	     uint16_t pkey_index, uint32_t qkey);
void udq_close(struct udq *q, struct shm_fabric *f);

/* A payload of len bytes for sequence number seq; check one. */
void fill_pattern(uint8_t *buf, uint32_t len, uint32_t seq);
bool check_pattern(const uint8_t *buf, uint32_t len, uint32_t seq);
/* Message length of sequence number seq: 4 .. max, varying. */
uint32_t seq_len(uint32_t seq, uint32_t max);

#endif /* FABRIC_UTIL_H */
