/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Connection management: REJ, unknown service IDs, lost REQ, REP and RTU
 * (fault cm_drop_mask), rej_after, cm_delay_ms, DREQ/DREP both ways.
 * Active side on port a, passive on port b, both in this process: the
 * messages still go through the ports' mailboxes in shared memory.
 */

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "fabric_util.h"

#define IBTA_REJ_NO_RES		3	/* no resources */
#define IBTA_REJ_INVALID_SID	8
#define IBTA_REJ_CONSUMER	28

static const struct ep_conf cm_conf_a = { "a", SHM_QPT_RC, 16, 256 };
static const struct ep_conf cm_conf_b = { "b", SHM_QPT_RC, 16, 256 };

static int
cm_open(struct ep *a, struct ep *b, char *fab, size_t len, const char *test)
{
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	fabric_name(fab, len, test);
	if (ep_open(a, fab, &cm_conf_a) < 0 || ep_open(b, fab, &cm_conf_b) < 0)
		return -1;
	return shm_cm_listen(b->port, T_SID);
}

static void
cm_faults(struct ep *e, uint32_t drop_mask, uint32_t delay_ms,
	  int32_t rej_after)
{
	struct ipoib_faults fl = {
		.cm_drop_mask = drop_mask,
		.cm_delay_ms = delay_ms,
		.rej_after = rej_after,
	};

	shm_port_set_faults(e->port, &fl);
}

static uint64_t
cnt_of(struct ep *e, size_t off)
{
	struct shm_port_counters c;

	shm_port_counters(e->port, &c);
	return *(const uint64_t *)((const uint8_t *)&c + off);
}

#define CNT(e, field) cnt_of(e, offsetof(struct shm_port_counters, field))

/* One message each way on a connected pair. */
static int
cm_traffic(struct ep *a, struct ep *b)
{
	struct ipoib_wc wc;

	CHECK(rc_send_wait(a->qp, "ping", 4, T_TIMEOUT) == 0);
	CHECK_EQ(poll_wc(b->cq, &wc, 1, T_TIMEOUT), 1);
	CHECK(wc.status == IPOIB_WC_SUCCESS && wc.byte_len == 4);
	CHECK(ep_post(b, (uint32_t)wc.wr_id) == 0);
	CHECK(rc_send_wait(b->qp, "pong!", 5, T_TIMEOUT) == 0);
	CHECK_EQ(poll_wc(a->cq, &wc, 1, T_TIMEOUT), 1);
	CHECK(wc.status == IPOIB_WC_SUCCESS && wc.byte_len == 5);
	CHECK(ep_post(a, (uint32_t)wc.wr_id) == 0);
	return 0;
out:
	return -1;
}

/* ---- REJ ---------------------------------------------------------------- */

static int
test_cm_rej(void)
{
	uint8_t priv[IPOIB_CM_PRIV_MAX], rej[40];
	struct shm_cm_id *id = NULL;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	struct ep a, b;
	char fab[32];

	CHECK(cm_open(&a, &b, fab, sizeof(fab), "cm_rej") == 0);
	memset(priv, 0x5a, sizeof(priv));
	memset(rej, 0xa5, sizeof(rej));
	req_init(&req, b.info.gid, a.qp, 7, 3);
	req.priv = priv;
	req.priv_len = sizeof(priv);
	req.context = &a;
	CHECK(shm_cm_connect(a.port, &req, &id) == 0);
	CHECK(cm_expect(b.port, IPOIB_CM_REQ_RCVD, &ev, T_TIMEOUT) == 0);
	CHECK(ev.priv_len == sizeof(priv) &&
	      memcmp(ev.priv, priv, sizeof(priv)) == 0);
	CHECK(shm_cm_reject(ev.id, IBTA_REJ_CONSUMER, rej, sizeof(rej)) == 0);
	CHECK(shm_cm_accept(ev.id, b.qp, NULL, NULL, 0) == -EINVAL);
	shm_cm_destroy(ev.id);
	CHECK(cm_expect(a.port, IPOIB_CM_REJ_RCVD, &ev, T_TIMEOUT) == 0);
	CHECK(ev.id == id && ev.context == &a);
	CHECK_EQ(ev.reason, IBTA_REJ_CONSUMER);
	CHECK(ev.priv_len == sizeof(rej) &&
	      memcmp(ev.priv, rej, sizeof(rej)) == 0, "REJ private data");
	CHECK_EQ(shm_qp_state(a.qp), SHM_QPS_INIT);
	CHECK_EQ(cm_wait(a.port, &ev, 250), 0);	/* no timeout after it */
out:
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_rej, test_cm_rej,
	"CM: REJ with a reason and private data reaches the requester")

static int
test_cm_no_listener(void)
{
	uint8_t nobody[IPOIB_GID_LEN] = { 0xfe, 0x80, [15] = 0x42 };
	struct shm_cm_id *id = NULL;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	struct ep a, b;
	char fab[32];

	CHECK(cm_open(&a, &b, fab, sizeof(fab), "cm_no_listener") == 0);
	req_init(&req, b.info.gid, a.qp, 7, 3);
	req.service_id = T_SID + 1;
	CHECK(shm_cm_connect(a.port, &req, &id) == 0);
	/* b's owner makes the REJ, and sees nothing of it */
	CHECK(cm_expect2(a.port, b.port, 0, IPOIB_CM_REJ_RCVD, &ev,
			 T_TIMEOUT) == 0);
	CHECK_EQ(ev.reason, IBTA_REJ_INVALID_SID);
	CHECK_EQ(ev.service_id, T_SID + 1);
	shm_cm_destroy(id);
	id = NULL;
	req.dgid = nobody;
	CHECK_EQ(shm_cm_connect(a.port, &req, &id), -EHOSTUNREACH);
out:
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_no_listener, test_cm_no_listener,
	"CM: REQ to a service ID nobody listens on gets REJ reason 8")

/* ---- lost messages ------------------------------------------------------ */

static int
test_cm_req_lost(void)
{
	struct shm_cm_id *id = NULL;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	struct ep a, b;
	char fab[32];
	double t0, dt;

	CHECK(cm_open(&a, &b, fab, sizeof(fab), "cm_req_lost") == 0);
	cm_faults(&b, 1u << IPOIB_CM_MSG_REQ, 0, -1);
	req_init(&req, b.info.gid, a.qp, 7, 3);
	t0 = test_now_ms();
	CHECK(shm_cm_connect(a.port, &req, &id) == 0);
	/*
	 * three retries, 100 ms apart, then the fourth timeout: never
	 * sooner (a slow machine only makes it later)
	 */
	CHECK(cm_expect(a.port, IPOIB_CM_TIMEOUT, &ev, T_TIMEOUT) == 0);
	dt = test_now_ms() - t0;
	CHECK(ev.id == id);
	CHECK(dt >= 4 * SHM_CM_TIMEOUT_MS - 1, "timeout after %.0f ms", dt);
	CHECK_EQ(CNT(&a, cm_retries), 3);
	CHECK_EQ(CNT(&b, fault_drops), 4);
	CHECK_EQ(cm_wait(b.port, &ev, 0), 0);
	ft_note("REQ lost 4 times: TIMEOUT after %.0f ms", dt);
out:
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_req_lost, test_cm_req_lost,
	"CM: REQs dropped at the receiver: retried, TIMEOUT after max retries")

/*
 * A REQ waits for its REP as long as it asks (its Remote CM Response
 * Timeout), not the fabric's 100 ms: B hears CM messages 300 ms late, more
 * than the fabric's 2 x 100 ms for 1 retry, and A still connects.
 */
static int
test_cm_req_waits(void)
{
	struct shm_cm_id *act = NULL, *pas = NULL;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	struct ep a, b;
	char fab[32];

	CHECK(cm_open(&a, &b, fab, sizeof(fab), "cm_req_waits") == 0);
	cm_faults(&b, 0, 300, -1);
	req_init(&req, b.info.gid, a.qp, 7, 1);
	req.cm_response_timeout = 20;	/* 4.3 s a try, as Linux asks */
	CHECK(shm_cm_connect(a.port, &req, &act) == 0);
	CHECK(cm_expect2(a.port, b.port, 1, IPOIB_CM_REQ_RCVD, &ev,
			 T_TIMEOUT) == 0);
	pas = ev.id;
	CHECK(shm_cm_accept(pas, b.qp, NULL, NULL, 0) == 0);
	CHECK(cm_expect2(a.port, b.port, 0, IPOIB_CM_REP_RCVD, &ev,
			 T_TIMEOUT) == 0);
	CHECK(ev.id == act && ev.remote_qpn == shm_qp_num(b.qp));
	CHECK(shm_cm_rtu(act) == 0);
	CHECK(cm_expect2(a.port, b.port, 1, IPOIB_CM_ESTABLISHED, &ev,
			 T_TIMEOUT) == 0);
	CHECK(cm_traffic(&a, &b) == 0);
	ft_note("REQ heard 300 ms late: connected, %llu REQ retries",
		(unsigned long long)CNT(&a, cm_retries));
out:
	if (act != NULL)
		shm_cm_destroy(act);
	if (pas != NULL)
		shm_cm_destroy(pas);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_req_waits, test_cm_req_waits,
	"CM: a REQ waits for its REP as long as it asks, not the fabric's 100 ms")

/* Poll both sides until pred holds; any event meanwhile is an error. */
static int
cm_idle_until(struct ep *a, struct ep *b, uint64_t (*pred)(struct ep *),
	      struct ep *on, uint64_t want)
{
	double deadline = test_now_ms() + T_TIMEOUT;
	struct shm_cm_event ev;

	while (pred(on) < want) {
		CHECK(test_now_ms() < deadline, "%llu of %llu",
		      (unsigned long long)pred(on), (unsigned long long)want);
		CHECK(cm_wait2(a->port, b->port, &ev, 1) < 0,
		      "unexpected CM event %d", ev.type);
	}
	return 0;
out:
	return -1;
}

static uint64_t
retries_of(struct ep *e)
{
	return CNT(e, cm_retries);
}

static int
test_cm_rep_lost(void)
{
	struct shm_cm_id *act = NULL, *pas = NULL;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	uint64_t reps, dup;
	struct ep a, b;
	char fab[32];

	CHECK(cm_open(&a, &b, fab, sizeof(fab), "cm_rep_lost") == 0);
	cm_faults(&a, 1u << IPOIB_CM_MSG_REP, 0, -1);
	req_init(&req, b.info.gid, a.qp, 7, 10);
	CHECK(shm_cm_connect(a.port, &req, &act) == 0);
	CHECK(cm_expect(b.port, IPOIB_CM_REQ_RCVD, &ev, T_TIMEOUT) == 0);
	pas = ev.id;
	CHECK(shm_cm_accept(pas, b.qp, NULL, NULL, 0) == 0);
	/* the requester retries its REQ; the duplicates are not new REQs */
	CHECK(cm_idle_until(&a, &b, retries_of, &a, 3) == 0);
	/* REPs sent: the first, b's own timer's, and answers to duplicates */
	reps = CNT(&a, fault_drops);
	dup = reps - 1 - CNT(&b, cm_retries);
	CHECK(dup >= 1, "%llu REPs, none answering a duplicate REQ",
	      (unsigned long long)reps);
	cm_faults(&a, 0, 0, -1);
	CHECK(cm_expect2(a.port, b.port, 0, IPOIB_CM_REP_RCVD, &ev,
			 T_TIMEOUT) == 0);
	CHECK(ev.id == act && ev.remote_qpn == shm_qp_num(b.qp));
	CHECK(shm_cm_rtu(act) == 0);
	CHECK(cm_expect(b.port, IPOIB_CM_ESTABLISHED, &ev, T_TIMEOUT) == 0);
	CHECK(ev.id == pas);
	CHECK(cm_traffic(&a, &b) == 0);
	/* later REPs (b's timer is off now) make no event on a */
	CHECK_EQ(cm_wait2(a.port, b.port, &ev, 250), -1);
	ft_note("REP lost %llu times (%llu answering duplicate REQs)",
		(unsigned long long)reps, (unsigned long long)dup);
out:
	if (act != NULL)
		shm_cm_destroy(act);
	if (pas != NULL)
		shm_cm_destroy(pas);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_rep_lost, test_cm_rep_lost,
	"CM: REP lost: REQ retried, REP resent for it, then established")

/* Connect a's qa to b's qb up to the RTU; the RTU is dropped at b. */
static int
rtu_dropped(struct ep *a, struct ep *b, struct shm_qp *qa, struct shm_qp *qb,
	    uint8_t retries, struct conn *c)
{
	struct shm_cm_event ev;
	struct shm_cm_req req;

	cm_faults(b, 1u << IPOIB_CM_MSG_RTU, 0, -1);
	req_init(&req, b->info.gid, qa, 7, retries);
	CHECK(shm_cm_connect(a->port, &req, &c->act) == 0);
	CHECK(cm_expect(b->port, IPOIB_CM_REQ_RCVD, &ev, T_TIMEOUT) == 0);
	c->pas = ev.id;
	CHECK(shm_cm_accept(c->pas, qb, NULL, NULL, 0) == 0);
	CHECK(cm_expect(a->port, IPOIB_CM_REP_RCVD, &ev, T_TIMEOUT) == 0);
	CHECK(shm_cm_rtu(c->act) == 0);
	CHECK_EQ(shm_qp_state(qb), SHM_QPS_RTR);
	return 0;
out:
	return -1;
}

static uint64_t
drops_of(struct ep *e)
{
	return CNT(e, fault_drops);
}

/* The RTU is lost until b has resent its REP twice, then gets through. */
static int
rtu_lost_then_found(struct ep *a, struct ep *b)
{
	struct conn c = { 0 };
	struct shm_cm_event ev;

	CHECK(rtu_dropped(a, b, a->qp, b->qp, 10, &c) == 0);
	/* each REP resent makes a resend the RTU, dropped again */
	CHECK(cm_idle_until(a, b, retries_of, b, 2) == 0);
	CHECK(cm_idle_until(a, b, drops_of, b, 3) == 0);
	CHECK_EQ(shm_qp_state(b->qp), SHM_QPS_RTR);
	cm_faults(b, 0, 0, -1);
	CHECK(cm_expect2(a->port, b->port, 1, IPOIB_CM_ESTABLISHED, &ev,
			 T_TIMEOUT) == 0);
	CHECK(ev.id == c.pas);
	CHECK_EQ(shm_qp_state(b->qp), SHM_QPS_RTS);
	CHECK(cm_traffic(a, b) == 0);
	conn_destroy(&c);
	return 0;
out:
	conn_destroy(&c);
	return -1;
}

/*
 * Every RTU is lost and b's REP retries run out while a, established,
 * sends: as with a COMM_EST on real HCAs, b must not be left in RTR with a
 * TIMEOUT for a connection that works.
 */
static int
rtu_never_found(struct ep *a, struct ep *b)
{
	struct shm_qp *qa = qp_new(a->port, SHM_QPT_RC, a->cq, a->srq, 0, 0);
	struct shm_qp *qb = qp_new(b->port, SHM_QPT_RC, b->cq, b->srq, 0, 0);
	struct conn c = { 0 };
	struct shm_cm_event ev;
	struct ipoib_wc wc;
	double t0;

	CHECK(qa != NULL && qb != NULL);
	CHECK(rtu_dropped(a, b, qa, qb, 1, &c) == 0);
	CHECK(rc_send_wait(qa, "data", 4, T_TIMEOUT) == 0);
	CHECK_EQ(poll_wc(b->cq, &wc, 1, T_TIMEOUT), 1);
	CHECK(wc.status == IPOIB_WC_SUCCESS && wc.qp_num == shm_qp_num(qb));
	CHECK(ep_post(b, (uint32_t)wc.wr_id) == 0);
	t0 = test_now_ms();
	CHECK(cm_expect2(a->port, b->port, 1, IPOIB_CM_ESTABLISHED, &ev,
			 T_TIMEOUT) == 0, "after %.0f ms", test_now_ms() - t0);
	CHECK(ev.id == c.pas);
	CHECK_EQ(shm_qp_state(qb), SHM_QPS_RTS);
	CHECK(rc_send_wait(qb, "back", 4, T_TIMEOUT) == 0);
	CHECK_EQ(poll_wc(a->cq, &wc, 1, T_TIMEOUT), 1);
	CHECK(wc.status == IPOIB_WC_SUCCESS && wc.qp_num == shm_qp_num(qa));
	CHECK(ep_post(a, (uint32_t)wc.wr_id) == 0);
out:
	conn_destroy(&c);
	if (qa != NULL)
		qp_destroy_drain(qa, a->cq);
	if (qb != NULL)
		qp_destroy_drain(qb, b->cq);
	return ft_fails == 0 ? 0 : -1;
}

/* b gives up on the connection (QP in error) before the RTU gets there. */
static int
rtu_after_error(struct ep *a, struct ep *b)
{
	struct shm_qp *qa = qp_new(a->port, SHM_QPT_RC, a->cq, a->srq, 0, 0);
	struct shm_qp *qb = qp_new(b->port, SHM_QPT_RC, b->cq, b->srq, 0, 0);
	struct shm_async_event ev;
	struct conn c = { 0 };

	CHECK(qa != NULL && qb != NULL);
	CHECK(rtu_dropped(a, b, qa, qb, 10, &c) == 0);
	CHECK(shm_qp_modify(qb, SHM_QPS_ERR) == 0);
	while (shm_async_poll(b->port, &ev, 1) == 1)
		;
	cm_faults(b, 0, 0, -1);
	/* REPs resent, RTUs answered: the QP stays in error, no event */
	CHECK(cm_idle_until(a, b, retries_of, b, CNT(b, cm_retries) + 2) == 0);
	CHECK_EQ(shm_qp_state(qb), SHM_QPS_ERR);
out:
	conn_destroy(&c);
	if (qa != NULL)
		qp_destroy_drain(qa, a->cq);
	if (qb != NULL)
		qp_destroy_drain(qb, b->cq);
	return ft_fails == 0 ? 0 : -1;
}

static int
test_cm_rtu_lost(void)
{
	struct ep_conf ca = { "a", SHM_QPT_RC, 16, 256, .srq = true };
	struct ep_conf cb = { "b", SHM_QPT_RC, 16, 256, .srq = true };
	struct ep a, b;
	char fab[32];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	fabric_name(fab, sizeof(fab), "cm_rtu_lost");
	CHECK(ep_open(&a, fab, &ca) == 0 && ep_open(&b, fab, &cb) == 0);
	CHECK(shm_cm_listen(b.port, T_SID) == 0);
	CHECK(rtu_lost_then_found(&a, &b) == 0);
	CHECK(rtu_never_found(&a, &b) == 0);
	CHECK(rtu_after_error(&a, &b) == 0);
out:
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_rtu_lost, test_cm_rtu_lost,
	"CM: RTU lost: REP resent, established once RTU (or data) arrives")

/* ---- rej_after and the count of connections ----------------------------- */

/* A REQ from a new QP of a: accepted (QP given back) or REJ'd. */
static int
try_conn(struct ep *a, struct ep *b, struct shm_qp **qa, struct shm_qp **qb,
	 struct conn *c, bool accepted)
{
	struct shm_cm_event ev;
	struct shm_cm_req req;

	*qa = qp_new(a->port, SHM_QPT_RC, a->cq, a->srq, 0, 0);
	CHECK(*qa != NULL);
	req_init(&req, b->info.gid, *qa, 7, 3);
	CHECK(shm_cm_connect(a->port, &req, &c->act) == 0);
	if (!accepted) {
		CHECK(cm_expect2(a->port, b->port, 0, IPOIB_CM_REJ_RCVD, &ev,
				 T_TIMEOUT) == 0);
		CHECK_EQ(ev.reason, IBTA_REJ_NO_RES);
		return 0;
	}
	CHECK(cm_expect(b->port, IPOIB_CM_REQ_RCVD, &ev, T_TIMEOUT) == 0);
	c->pas = ev.id;
	*qb = qp_new(b->port, SHM_QPT_RC, b->cq, b->srq, 0, 0);
	CHECK(*qb != NULL);
	CHECK(shm_cm_accept(c->pas, *qb, NULL, NULL, 0) == 0);
	CHECK(cm_expect(a->port, IPOIB_CM_REP_RCVD, &ev, T_TIMEOUT) == 0);
	CHECK(shm_cm_rtu(c->act) == 0);
	CHECK(cm_expect(b->port, IPOIB_CM_ESTABLISHED, &ev, T_TIMEOUT) == 0);
	return 0;
out:
	return -1;
}

#define RA_N	6

static int
rej_after_run(struct ep *a, struct ep *b, struct shm_qp **qa,
	      struct shm_qp **qb, struct conn *c)
{
	struct shm_async_event ev;

	/* an RC QP of b that never connected: in error, then gone */
	qb[0] = qp_new(b->port, SHM_QPT_RC, b->cq, b->srq, 0, 0);
	CHECK(qb[0] != NULL && shm_qp_modify(qb[0], SHM_QPS_ERR) == 0);
	CHECK(qp_destroy_drain(qb[0], b->cq) == 0);
	qb[0] = NULL;
	while (shm_async_poll(b->port, &ev, 1) == 1)
		;
	cm_faults(b, 0, 0, 2);
	CHECK(try_conn(a, b, &qa[0], &qb[0], &c[0], true) == 0);
	CHECK(try_conn(a, b, &qa[1], &qb[1], &c[1], true) == 0);
	CHECK(try_conn(a, b, &qa[2], &qb[2], &c[2], false) == 0);
	/*
	 * A connection in error no longer counts, and only once. An error
	 * the owner asked for raises no QP_FATAL, as with verbs.
	 */
	CHECK(shm_qp_modify(qb[0], SHM_QPS_ERR) == 0);
	CHECK(shm_async_poll(b->port, &ev, 1) == 0);
	CHECK(try_conn(a, b, &qa[3], &qb[3], &c[3], true) == 0);
	CHECK(qp_destroy_drain(qb[0], b->cq) == 0);
	qb[0] = NULL;
	CHECK(try_conn(a, b, &qa[4], &qb[4], &c[4], false) == 0);
	/* a connected QP destroyed frees its place */
	CHECK(qp_destroy_drain(qb[1], b->cq) == 0);
	qb[1] = NULL;
	CHECK(try_conn(a, b, &qa[5], &qb[5], &c[5], true) == 0);
	return 0;
out:
	return -1;
}

static int
test_cm_rej_after(void)
{
	struct ep_conf ca = { "a", SHM_QPT_RC, 16, 256, .srq = true };
	struct ep_conf cb = { "b", SHM_QPT_RC, 16, 256, .srq = true };
	struct shm_qp *qa[RA_N] = { NULL }, *qb[RA_N] = { NULL };
	struct conn c[RA_N];
	struct ep a, b;
	char fab[32];
	int i;

	memset(c, 0, sizeof(c));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	fabric_name(fab, sizeof(fab), "cm_rej_after");
	CHECK(ep_open(&a, fab, &ca) == 0 && ep_open(&b, fab, &cb) == 0);
	CHECK(shm_cm_listen(b.port, T_SID) == 0);
	CHECK(rej_after_run(&a, &b, qa, qb, c) == 0);
out:
	for (i = 0; i < RA_N; i++) {
		conn_destroy(&c[i]);
		if (qa[i] != NULL)
			qp_destroy_drain(qa[i], a.cq);
		if (qb[i] != NULL)
			qp_destroy_drain(qb[i], b.cq);
	}
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_rej_after, test_cm_rej_after,
	"CM: rej_after N: REQs beyond N connections get REJ reason 3")

/* ---- delay -------------------------------------------------------------- */

static int
test_cm_delay(void)
{
	struct shm_cm_id *act = NULL, *pas = NULL;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	double t0, dreq, drtu;
	struct ep a, b;
	char fab[32];

	CHECK(cm_open(&a, &b, fab, sizeof(fab), "cm_delay") == 0);
	cm_faults(&b, 0, 60, -1);
	req_init(&req, b.info.gid, a.qp, 7, 3);
	t0 = test_now_ms();
	CHECK(shm_cm_connect(a.port, &req, &act) == 0);
	CHECK(cm_expect(b.port, IPOIB_CM_REQ_RCVD, &ev, T_TIMEOUT) == 0);
	dreq = test_now_ms() - t0;
	pas = ev.id;
	CHECK(shm_cm_accept(pas, b.qp, NULL, NULL, 0) == 0);
	/* a's port has no delay: its REP is there as soon as it is sent */
	CHECK(cm_expect(a.port, IPOIB_CM_REP_RCVD, &ev, 0) == 0,
	      "REP to a undelayed");
	t0 = test_now_ms();
	CHECK(shm_cm_rtu(act) == 0);
	CHECK(cm_expect(b.port, IPOIB_CM_ESTABLISHED, &ev, T_TIMEOUT) == 0);
	drtu = test_now_ms() - t0;
	/* held at least the delay: a slow machine only holds them longer */
	CHECK(dreq >= 59, "REQ after %.0f ms", dreq);
	CHECK(drtu >= 59, "RTU after %.0f ms", drtu);
	CHECK(cm_traffic(&a, &b) == 0);
	ft_note("delayed 60 ms: REQ after %.0f ms, RTU after %.0f ms", dreq,
		drtu);
out:
	if (act != NULL)
		shm_cm_destroy(act);
	if (pas != NULL)
		shm_cm_destroy(pas);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_delay, test_cm_delay,
	"CM: cm_delay_ms holds the receiving port's CM messages that long")

/* ---- disconnect --------------------------------------------------------- */

/* from disconnects: to gets DREQ_RCVD, from DISCONNECTED. */
static int
dreq_way(struct shm_port *from, struct shm_cm_id *id, struct shm_port *to,
	 struct shm_cm_id *peer)
{
	struct shm_cm_event ev;

	CHECK(shm_cm_disconnect(id) == 0);
	CHECK_EQ(shm_cm_disconnect(id), -EINVAL);
	if (peer != NULL) {
		CHECK(cm_expect(to, IPOIB_CM_DREQ_RCVD, &ev, T_TIMEOUT) == 0);
		CHECK(ev.id == peer);
	} else {
		/* nobody holds the id: the DREP comes all the same */
		CHECK_EQ(cm_wait(to, &ev, 50), 0);
	}
	CHECK(cm_expect(from, IPOIB_CM_DISCONNECTED, &ev, T_TIMEOUT) == 0);
	CHECK(ev.id == id);
	return 0;
out:
	return -1;
}

static int
disc_run(struct ep *a, struct ep *b, struct shm_qp **qa, struct shm_qp **qb,
	 struct conn *c)
{
	struct shm_cm_event ev;
	double t0;

	CHECK(try_conn(a, b, &qa[0], &qb[0], &c[0], true) == 0);
	CHECK(try_conn(a, b, &qa[1], &qb[1], &c[1], true) == 0);
	CHECK(try_conn(a, b, &qa[2], &qb[2], &c[2], true) == 0);
	CHECK(try_conn(a, b, &qa[3], &qb[3], &c[3], true) == 0);
	CHECK(dreq_way(a->port, c[0].act, b->port, c[0].pas) == 0);
	CHECK(dreq_way(b->port, c[1].pas, a->port, c[1].act) == 0);
	shm_cm_destroy(c[2].act);
	c[2].act = NULL;
	CHECK(dreq_way(b->port, c[2].pas, a->port, NULL) == 0);
	/* a DREQ lost every time: DISCONNECTED after the retries */
	cm_faults(b, 1u << IPOIB_CM_MSG_DREQ, 0, -1);
	t0 = test_now_ms();
	CHECK(shm_cm_disconnect(c[3].act) == 0);
	CHECK(cm_expect(a->port, IPOIB_CM_DISCONNECTED, &ev, T_TIMEOUT) == 0);
	CHECK(test_now_ms() - t0 >= 4 * SHM_CM_TIMEOUT_MS - 1);
	CHECK_EQ(cm_wait(b->port, &ev, 0), 0);
	return 0;
out:
	return -1;
}

static int
test_cm_disconnect(void)
{
	struct ep_conf ca = { "a", SHM_QPT_RC, 16, 256, .srq = true };
	struct ep_conf cb = { "b", SHM_QPT_RC, 16, 256, .srq = true };
	struct shm_qp *qa[4] = { NULL }, *qb[4] = { NULL };
	struct conn c[4];
	struct ep a, b;
	char fab[32];
	int i;

	memset(c, 0, sizeof(c));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	fabric_name(fab, sizeof(fab), "cm_disconnect");
	CHECK(ep_open(&a, fab, &ca) == 0 && ep_open(&b, fab, &cb) == 0);
	CHECK(shm_cm_listen(b.port, T_SID) == 0);
	CHECK(disc_run(&a, &b, qa, qb, c) == 0);
out:
	for (i = 0; i < 4; i++) {
		conn_destroy(&c[i]);
		if (qa[i] != NULL)
			qp_destroy_drain(qa[i], a.cq);
		if (qb[i] != NULL)
			qp_destroy_drain(qb[i], b.cq);
	}
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_disconnect, test_cm_disconnect,
	"CM: DREQ/DREP both ways, to a forgotten id, and DREQ lost")

/* ---- REQ fields and the REP's RNR retry count ----------------------------- */

/* REQ a -> b with rnr_retry req_rnr; b answers REP with rep_rnr (-1: echo). */
static int
cm_rnr_run(struct ep *a, struct ep *b, uint8_t req_rnr, int rep_rnr,
	   uint8_t want_rep)
{
	struct shm_cm_id *id = NULL, *pas = NULL;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	int ret = -1;

	req_init(&req, b->info.gid, a->qp, req_rnr, 3);
	req.retry_count = 0;
	CHECK(shm_cm_connect(a->port, &req, &id) == 0);
	CHECK(cm_expect(b->port, IPOIB_CM_REQ_RCVD, &ev, T_TIMEOUT) == 0);
	pas = ev.id;
	CHECK_EQ(ev.retry_count, 0);
	CHECK_EQ(ev.rnr_retry_count, req_rnr);
	CHECK_EQ(ev.responder_resources, 4);
	if (rep_rnr >= 0)
		CHECK(shm_cm_set_rep_rnr_retry(pas, (uint8_t)rep_rnr) == 0);
	CHECK(shm_cm_set_rep_rnr_retry(pas, 8) == -EINVAL);
	CHECK(shm_cm_accept(pas, b->qp, NULL, NULL, 0) == 0);
	CHECK(shm_cm_set_rep_rnr_retry(pas, 1) == -EINVAL, "after the REP");
	CHECK(cm_expect(a->port, IPOIB_CM_REP_RCVD, &ev, T_TIMEOUT) == 0);
	CHECK_EQ(ev.rnr_retry_count, want_rep);
	CHECK(shm_cm_rtu(id) == 0);
	CHECK(cm_expect(b->port, IPOIB_CM_ESTABLISHED, &ev, T_TIMEOUT) == 0);
	CHECK(cm_traffic(a, b) == 0);
	ret = 0;
out:
	if (id != NULL)
		shm_cm_destroy(id);
	if (pas != NULL)
		shm_cm_destroy(pas);
	return ret;
}

static int
test_cm_rnr_fields(void)
{
	struct ep a, b;
	uint32_t i;
	char fab[32];

	CHECK(cm_open(&a, &b, fab, sizeof(fab), "cm_rnr_fields") == 0);
	/* Linux: REQ rnr_retry 0, and its REP echoes what the REQ said */
	CHECK(cm_rnr_run(&a, &b, 0, -1, 0) == 0);
	CHECK(qp_destroy_drain(a.qp, a.cq) == 0 &&
	      qp_destroy_drain(b.qp, b.cq) == 0);
	a.qp = qp_new(a.port, SHM_QPT_RC, a.cq, NULL, a.nbufs, 0);
	b.qp = qp_new(b.port, SHM_QPT_RC, b.cq, NULL, b.nbufs, 0);
	CHECK(a.qp != NULL && b.qp != NULL);
	for (i = 0; i < a.nbufs; i++)
		CHECK(ep_post(&a, i) == 0 && ep_post(&b, i) == 0);
	CHECK(cm_rnr_run(&a, &b, 7, 3, 3) == 0);
out:
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_rnr_fields, test_cm_rnr_fields,
	"CM: REQ retry/RNR/responder fields seen; REP's RNR count echoed or set")

/* ---- a REP nobody asked for ----------------------------------------------- */

/*
 * The active side gives its REQ up before the REP comes: the REP (and
 * its resends) finds no id, is dropped and counted; the passive side
 * times out; nothing is left behind.
 */
static int
test_cm_rep_unknown(void)
{
	struct shm_cm_id *id = NULL;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	struct ep a, b;
	char fab[32];

	CHECK(cm_open(&a, &b, fab, sizeof(fab), "cm_rep_unknown") == 0);
	req_init(&req, b.info.gid, a.qp, 7, 2);
	CHECK(shm_cm_connect(a.port, &req, &id) == 0);
	CHECK(cm_expect(b.port, IPOIB_CM_REQ_RCVD, &ev, T_TIMEOUT) == 0);
	shm_cm_destroy(id);
	id = ev.id;
	CHECK(shm_cm_accept(id, b.qp, NULL, NULL, 0) == 0);
	CHECK(cm_expect2(a.port, b.port, 1, IPOIB_CM_TIMEOUT, &ev,
			 T_TIMEOUT) == 0);
	CHECK(ev.id == id);
	CHECK(CNT(&a, cm_drops) >= 1, "the REP was counted");
	CHECK_EQ(CNT(&b, cm_drops), 0);
out:
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(cm_rep_unknown, test_cm_rep_unknown,
	"CM: a REP for no REQ of ours is dropped and counted; no stuck id")
