/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Life and death: ports going down, a peer process killed and coming back,
 * the capture tap read back by tshark, ownership and isolation of fabrics,
 * and what is left in /dev/shm after everyone leaves.
 */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
	struct shm_wc wc;

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

/* ---- peer death --------------------------------------------------------- */

#define PD_BUF		512
#define PD_XCHG		32

static const struct ep_conf pd_ud = { "ud", SHM_QPT_UD, 64, PD_BUF };
static const struct ep_conf pd_rc = { "rc", SHM_QPT_RC, 64, PD_BUF };

struct pd_arg {
	const char *fabric;
	bool stream;		/* send until killed */
};

/* What came from the peer: RC in order; UD may have gaps, not go back. */
struct pd_rx {
	uint32_t rc;
	uint32_t ud;
	uint32_t ud_next;
};

static int
pd_drain(struct ep *rc, struct ep *ud, struct pd_rx *rx)
{
	struct shm_wc wc[16];
	uint32_t i, k, len, seq;
	const uint8_t *p;

	k = shm_cq_poll(rc->cq, wc, 16);
	for (i = 0; i < k; i++, rx->rc++) {
		len = seq_len(rx->rc, PD_BUF);
		CHECK_EQ(wc[i].status, SHM_WC_SUCCESS);
		CHECK(wc[i].byte_len == len &&
		      check_pattern(ep_buf(rc, (uint32_t)wc[i].wr_id), len,
				    rx->rc), "RC message %u", rx->rc);
		CHECK(ep_post(rc, (uint32_t)wc[i].wr_id) == 0);
	}
	k = shm_cq_poll(ud->cq, wc, 16);
	for (i = 0; i < k; i++, rx->ud++) {
		p = ep_buf(ud, (uint32_t)wc[i].wr_id) + SHM_GRH_LEN;
		memcpy(&seq, p, 4);
		len = seq_len(seq, PD_BUF - SHM_GRH_LEN);
		CHECK_EQ(wc[i].status, SHM_WC_SUCCESS);
		CHECK(seq >= rx->ud_next && wc[i].byte_len ==
		      SHM_GRH_LEN + len && check_pattern(p, len, seq),
		      "UD message %u after %u", seq, rx->ud_next);
		rx->ud_next = seq + 1;
		CHECK(ep_post(ud, (uint32_t)wc[i].wr_id) == 0);
	}
	return 0;
out:
	return -1;
}

/* Send n (or, when stream, endlessly) RC and UD messages; receive n. */
static int
pd_traffic(struct ep *rc, struct ep *ud, const struct msg *peer_ud,
	   uint32_t n, bool stream)
{
	/* a stream runs until the parent kills it, which waits T_TIMEOUT */
	double deadline = test_now_ms() + (stream ? 2 * T_TIMEOUT : T_TIMEOUT);
	struct pd_rx rx = { 0 };
	uint32_t rs = 0, us = 0, len;
	uint8_t buf[PD_BUF];
	struct shm_ah ah;

	CHECK(shm_ah_resolve(ud->f, peer_ud->gid, 0, &ah) == 0);
	while (stream || rs < n || us < n || rx.rc < n || rx.ud < n) {
		CHECK(test_now_ms() < deadline, "RC %u/%u UD %u/%u", rs, rx.rc, us,
		      rx.ud);
		if (stream || rs < n) {
			len = seq_len(rs, PD_BUF);
			fill_pattern(buf, len, rs);
			rs += rc_send(rc->qp, buf, len);
		}
		if (stream || us < n) {
			len = seq_len(us, PD_BUF - SHM_GRH_LEN);
			fill_pattern(buf, len, us);
			CHECK_EQ(ud_send(ud->qp, &ah, peer_ud->u32[1], T_QKEY,
					 buf, len), 1);
			us++;
		}
		CHECK(pd_drain(rc, ud, &rx) == 0);
		sched_yield();
	}
	return 0;
out:
	return -1;
}

static int
pd_child(int rd, int wr, void *arg)
{
	const struct pd_arg *pa = arg;
	struct shm_cm_id *id = NULL;
	struct msg pud, prc, m;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	struct ep cu, cr;

	memset(&cu, 0, sizeof(cu));
	memset(&cr, 0, sizeof(cr));
	CHECK(ep_open(&cu, pa->fabric, &(struct ep_conf){ "cud", SHM_QPT_UD,
		      64, PD_BUF }) == 0);
	CHECK(ep_open(&cr, pa->fabric, &(struct ep_conf){ "crc", SHM_QPT_RC,
		      64, PD_BUF }) == 0);
	CHECK(msg_expect(rd, MSG_HELLO, &pud, T_TIMEOUT) == 0);
	CHECK(msg_expect(rd, MSG_HELLO, &prc, T_TIMEOUT) == 0);
	ep_hello(&cu, &m);
	m.u32[3] = shm_qp_num(cr.qp);
	CHECK(msg_send(wr, MSG_HELLO, &m) == 0);
	req_init(&req, prc.gid, cr.qp, 7, 5);
	CHECK(shm_cm_connect(cr.port, &req, &id) == 0);
	CHECK(cm_expect(cr.port, SHM_CM_REP_RCVD, &ev, T_TIMEOUT) == 0);
	CHECK(shm_cm_rtu(id) == 0);
	CHECK(msg_send(wr, MSG_READY, NULL) == 0);
	CHECK(pd_traffic(&cr, &cu, &pud, PD_XCHG, pa->stream) == 0);
	CHECK(msg_send(wr, MSG_DONE, NULL) == 0);
	CHECK(msg_expect(rd, MSG_STOP, NULL, T_TIMEOUT) == 0);
out:
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&cr);
	ep_close(&cu);
	return ft_fails == 0 ? 0 : -1;
}

/* Start a peer, say hello, accept its connection to sr. */
static int
pd_meet(struct child *c, struct pd_arg *pa, struct ep *su, struct ep *sr,
	struct msg *peer, struct shm_cm_id **id)
{
	struct shm_cm_event ev;
	struct msg m;

	CHECK(child_start(c, pd_child, pa) == 0);
	ep_hello(su, &m);
	CHECK(msg_send(c->wr, MSG_HELLO, &m) == 0);
	ep_hello(sr, &m);
	CHECK(msg_send(c->wr, MSG_HELLO, &m) == 0);
	CHECK(msg_expect(c->rd, MSG_HELLO, peer, T_TIMEOUT) == 0);
	CHECK(cm_expect(sr->port, SHM_CM_REQ_RCVD, &ev, T_TIMEOUT) == 0);
	*id = ev.id;
	CHECK(shm_cm_accept(*id, sr->qp, NULL, NULL, 0) == 0);
	CHECK(cm_expect(sr->port, SHM_CM_ESTABLISHED, &ev, T_TIMEOUT) == 0);
	CHECK(msg_expect(c->rd, MSG_READY, NULL, T_TIMEOUT) == 0);
	return 0;
out:
	return -1;
}

/*
 * Kill the peer mid-stream: our RC QP is reported in error. How long that
 * took, and how much of it we were not running at all (a loaded machine),
 * are figures for the log.
 */
static int
pd_kill(struct child *c, struct ep *su, struct ep *sr, double *dt,
	double *off_cpu)
{
	struct shm_async_event ev;
	struct pd_rx rx = { 0 };
	double t0, t, last, deadline;

	deadline = test_now_ms() + T_TIMEOUT;
	while (rx.rc < 50 || rx.ud < 50) {
		CHECK(test_now_ms() < deadline, "RC %u UD %u from the peer", rx.rc,
		      rx.ud);
		CHECK(pd_drain(sr, su, &rx) == 0);
		sched_yield();
	}
	/* not reaped: a dead process that is still a zombie is dead */
	t0 = last = test_now_ms();
	*off_cpu = 0;
	CHECK(kill(c->pid, SIGKILL) == 0);
	for (;;) {
		t = test_now_ms();
		if (t - last > 5)
			*off_cpu += t - last;
		last = t;
		CHECK(t - t0 < T_TIMEOUT, "no QP_FATAL");
		CHECK(pd_drain(sr, su, &rx) == 0);
		if (shm_async_poll(su->port, &ev, 1) == 1)
			CHECK(0, "async event %d on the UD port", ev.type);
		if (shm_async_poll(sr->port, &ev, 1) == 1)
			break;
		sched_yield();	/* the dying one may need the CPU */
	}
	*dt = test_now_ms() - t0;
	CHECK(ev.type == SHM_EV_QP_FATAL && ev.qp_num == shm_qp_num(sr->qp));
	return 0;
out:
	return -1;
}

/* What the dead peer had is gone from the directory and /dev/shm. */
static int
pd_gone(struct ep *su, const struct msg *peer, const char *fab)
{
	struct shm_hdr *h = su->f->hdr;
	char prefix[64];
	struct shm_ah ah;

	CHECK_EQ(h->procs[peer->u32[2]].state, SHM_PROC_FREE);
	CHECK(shm_qp_lookup(su->f, peer->u32[1]) == NULL, "UD QP freed");
	CHECK(shm_qp_lookup(su->f, peer->u32[3]) == NULL, "RC QP freed");
	CHECK_EQ(shm_ah_resolve(su->f, peer->gid, 0, &ah), -ENOENT);
	snprintf(prefix, sizeof(prefix), "%s.%u", fab, peer->u32[2]);
	CHECK_EQ(shm_leftovers(prefix), 0);
	/* and a send to it goes nowhere */
	CHECK(shm_ah_resolve(su->f, su->info.gid, 0, &ah) == 0);
	CHECK_EQ(ud_send(su->qp, &ah, peer->u32[1], T_QKEY, "?", 1), 1);
	return 0;
out:
	return -1;
}

/* A fresh RC QP for the next peer, its buffers posted; UD drained. */
static int
pd_new_qp(struct ep *su, struct ep *sr, struct shm_cm_id **id)
{
	struct shm_wc wc[16];
	uint32_t i, k;

	while ((k = shm_cq_poll(su->cq, wc, 16)) > 0)
		for (i = 0; i < k; i++)
			CHECK(ep_post(su, (uint32_t)wc[i].wr_id) == 0);

	shm_cm_destroy(*id);
	*id = NULL;
	CHECK(qp_destroy_drain(sr->qp, sr->cq) == 0);
	sr->qp = qp_new(sr->port, SHM_QPT_RC, sr->cq, NULL, sr->nbufs, 0);
	CHECK(sr->qp != NULL);
	for (i = 0; i < sr->nbufs; i++)
		CHECK(ep_post(sr, i) == 0);
	return 0;
out:
	return -1;
}

static int
test_peer_death(void)
{
	struct child c = { .pid = -1 };
	struct shm_cm_id *id = NULL;
	struct pd_arg pa = { NULL, true };
	struct ep su, sr;
	struct msg peer;
	char fab[32];
	double dt, off;

	memset(&su, 0, sizeof(su));
	memset(&sr, 0, sizeof(sr));
	fabric_name(fab, sizeof(fab), "peer_death");
	pa.fabric = fab;
	CHECK(ep_open(&su, fab, &pd_ud) == 0 && ep_open(&sr, fab, &pd_rc) == 0);
	CHECK(shm_cm_listen(sr.port, T_SID) == 0);
	CHECK(pd_meet(&c, &pa, &su, &sr, &peer, &id) == 0);
	CHECK(pd_kill(&c, &su, &sr, &dt, &off) == 0);
	ft_note("peer death detected in %.1f ms (janitor period %d ms; %.1f "
		"ms of it not scheduled)", dt, SHM_JANITOR_PERIOD_MS, off);
	child_kill(&c);
	CHECK(pd_gone(&su, &peer, fab) == 0);
	CHECK(pd_new_qp(&su, &sr, &id) == 0);
	/* the peer returns, with the same port names (GUIDs) */
	pa.stream = false;
	CHECK(pd_meet(&c, &pa, &su, &sr, &peer, &id) == 0);
	CHECK(pd_traffic(&sr, &su, &peer, PD_XCHG, false) == 0);
	CHECK(msg_expect(c.rd, MSG_DONE, NULL, T_TIMEOUT) == 0);
	CHECK(msg_send(c.wr, MSG_STOP, NULL) == 0);
	CHECK(child_wait(&c, T_TIMEOUT) == 0);
out:
	child_kill(&c);
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&sr);
	ep_close(&su);
	return ft_end(fab);
}
REGISTER_TEST(peer_death, test_peer_death,
	"peer SIGKILLed mid-stream: QP_FATAL, reclaimed; it returns")

/* ---- capture ------------------------------------------------------------ */

/* IPoIB header, then a valid IPv4 header and UDP: n picks the ports. */
static uint32_t
ipoib_udp(uint8_t *b, uint32_t n, uint16_t dlen)
{
	uint16_t tot = (uint16_t)(20 + 8 + dlen);
	uint32_t sum = 0, i;
	uint8_t *ip = b + 4, *udp = b + 24;

	memset(b, 0, 4 + tot);
	b[0] = 0x08;				/* ethertype IPv4, reserved 0 */
	ip[0] = 0x45;
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[5] = (uint8_t)n;
	ip[6] = 0x40;				/* DF */
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, (const uint8_t[]){ 10, 0, 0, 1, 10, 0, 0, 2 }, 8);
	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
	udp[0] = 0x0f;
	udp[1] = (uint8_t)n;			/* source port 0x0f00 + n */
	udp[2] = 0x13;
	udp[3] = 0x88;				/* 5000 */
	udp[4] = (uint8_t)((8 + dlen) >> 8);
	udp[5] = (uint8_t)(8 + dlen);
	fill_pattern(udp + 8, dlen, n);
	return 4 + tot;
}

/* Run cmd; its stdout into out (NUL-terminated). Exit status 0: 0. */
static int
run_cmd(const char *cmd, char *out, size_t len)
{
	size_t got = 0, k;
	FILE *fp = popen(cmd, "r");
	int st;

	if (fp == NULL)
		return -1;
	while (got + 1 < len && (k = fread(out + got, 1, len - 1 - got,
					   fp)) > 0)
		got += k;
	out[got] = '\0';
	st = pclose(fp);
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* What a's tap sees: UD and RC both ways, and a multicast send. */
static int
cap_traffic(struct ep *a, struct ep *b, struct udq *ua, struct udq *ub)
{
	static const uint8_t mgid[SHM_GID_LEN] = { 0xff, 0x12, 0x40, 0x1b,
						   [15] = 0x07 };
	struct shm_ah ab, ba, mc;
	struct shm_wc wc[4];
	uint8_t pkt[600];
	uint32_t i, len;

	CHECK(shm_ah_resolve(a->f, b->info.gid, 0, &ab) == 0);
	CHECK(shm_ah_resolve(b->f, a->info.gid, 0, &ba) == 0);
	CHECK(shm_ah_resolve(a->f, mgid, 0, &mc) == 0);
	CHECK(shm_mcast_attach(ub->qp, mgid) == 0);
	for (i = 0; i < 3; i++) {
		len = ipoib_udp(pkt, i, (uint16_t)(100 + 200 * i));
		CHECK(ud_send(ua->qp, &ab, shm_qp_num(ub->qp), T_QKEY, pkt,
			      len) == 1);
		CHECK(ud_send(ub->qp, &ba, shm_qp_num(ua->qp), T_QKEY, pkt,
			      len) == 1);
		CHECK(rc_send_wait(a->qp, pkt, len, T_TIMEOUT) == 0);
		CHECK(rc_send_wait(b->qp, pkt, len, T_TIMEOUT) == 0);
		/* a's receive side is captured when a polls */
		CHECK_EQ(poll_wc(ua->cq, wc, 1, T_TIMEOUT), 1);
		CHECK(post_buf(shm_qp_rq(ua->qp), &ua->mem, UDQ_BUF,
			       (uint32_t)wc[0].wr_id) == 0);
		CHECK_EQ(poll_wc(a->cq, wc, 1, T_TIMEOUT), 1);
		CHECK(ep_post(a, (uint32_t)wc[0].wr_id) == 0);
		CHECK_EQ(poll_wc(ub->cq, wc, 1, T_TIMEOUT), 1);
		CHECK(post_buf(shm_qp_rq(ub->qp), &ub->mem, UDQ_BUF,
			       (uint32_t)wc[0].wr_id) == 0);
	}
	len = ipoib_udp(pkt, 9, 64);
	CHECK(ud_send(ua->qp, &mc, SHM_MCAST_QPN, T_QKEY, pkt, len) == 1);
	return 0;
out:
	return -1;
}

#define BIG_LEN		300000	/* more than the snap length (262144) */
#define BIG_SGE		80000

/* A QP of port p with one WR of 4 x BIG_SGE posted, on a CQ of its own. */
static struct shm_qp *
big_qp(struct shm_fabric *f, struct shm_port *p, struct shm_cq **cq,
       struct shm_mem *m)
{
	struct shm_sge sge[4];
	const struct shm_sge *sgl = sge;
	uint64_t wr_id = 77;
	uint16_t nsge = 4;
	struct shm_qp *qp;
	int i;

	*cq = shm_cq_create(p, 1);
	if (*cq == NULL || shm_mem_alloc(f, 4 * BIG_SGE, m) < 0)
		return NULL;
	qp = qp_new(p, SHM_QPT_RC, *cq, NULL, 1, 0);
	for (i = 0; i < 4; i++)
		sge[i] = (struct shm_sge){ (uintptr_t)m->addr + i * BIG_SGE,
					   BIG_SGE, m->lkey };
	if (qp != NULL && shm_rq_post(shm_qp_rq(qp), &wr_id, &sgl, &nsge, 1)
	    != 1) {
		shm_qp_destroy(qp);
		qp = NULL;
	}
	return qp;
}

/* One message of BIG_LEN each way between new QPs of a and b. */
static int
cap_big(struct ep *a, struct ep *b)
{
	struct shm_mem ma = { 0 }, mb = { 0 };
	struct shm_cq *ca = NULL, *cb = NULL;
	struct shm_qp *qa, *qb;
	uint8_t *pkt = malloc(BIG_LEN);
	struct conn c = { 0 };
	struct shm_wc wc;

	qa = big_qp(a->f, a->port, &ca, &ma);
	qb = big_qp(b->f, b->port, &cb, &mb);
	CHECK(pkt != NULL && qa != NULL && qb != NULL);
	CHECK(conn_qps(&c, a->port, qa, b->port, qb, 7) == 0);
	fill_pattern(pkt, BIG_LEN, 5);
	ipoib_udp(pkt, 20, 1000);
	CHECK(rc_send_wait(qa, pkt, BIG_LEN, T_TIMEOUT) == 0);
	CHECK(rc_send_wait(qb, pkt, BIG_LEN, T_TIMEOUT) == 0);
	CHECK_EQ(poll_wc(cb, &wc, 1, T_TIMEOUT), 1);
	CHECK(wc.status == SHM_WC_SUCCESS && wc.byte_len == BIG_LEN);
	CHECK_EQ(poll_wc(ca, &wc, 1, T_TIMEOUT), 1);	/* captured here */
	CHECK(wc.status == SHM_WC_SUCCESS && wc.byte_len == BIG_LEN);
	CHECK(memcmp(ma.addr, pkt, BIG_LEN) == 0);
out:
	conn_destroy(&c);
	if (qa != NULL)
		qp_destroy_drain(qa, ca);
	if (qb != NULL)
		qp_destroy_drain(qb, cb);
	if (ca != NULL)
		shm_cq_destroy(ca);
	if (cb != NULL)
		shm_cq_destroy(cb);
	if (ma.addr != NULL)
		shm_mem_free(a->f, &ma);
	if (mb.addr != NULL)
		shm_mem_free(b->f, &mb);
	free(pkt);
	return ft_fails == 0 ? 0 : -1;
}

/* 15 frames, each ipoib:ip:udp..., none malformed; pcap of type 242. */
static int
cap_check(const char *path)
{
	char cmd[256], out[8192], *line, *save = NULL;
	uint32_t hdr[6] = { 0 };
	FILE *fp = fopen(path, "rb");
	int n = 0;

	CHECK(fp != NULL && fread(hdr, sizeof(hdr), 1, fp) == 1);
	fclose(fp);
	CHECK(hdr[0] == 0xa1b2c3d4 && hdr[5] == 242, "pcap, LINKTYPE_IPOIB");
	snprintf(cmd, sizeof(cmd), "tshark -r %s -T fields -e frame.protocols "
		 "2>/dev/null", path);
	CHECK(run_cmd(cmd, out, sizeof(out)) == 0, "%s: failed", cmd);
	for (line = strtok_r(out, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save), n++)
		CHECK(strncmp(line, "ipoib:ip:udp", 12) == 0,
		      "frame %d is %s", n + 1, line);
	CHECK_EQ(n, 15);
	snprintf(cmd, sizeof(cmd), "tshark -r %s -Y _ws.malformed "
		 "2>/dev/null", path);
	CHECK(run_cmd(cmd, out, sizeof(out)) == 0, "%s: failed", cmd);
	CHECK(out[0] == '\0', "malformed: %s", out);
	return 0;
out:
	return -1;
}

static int
test_capture(void)
{
	struct ep_conf ca = { "a", SHM_QPT_RC, 8, 1024 };
	struct ep_conf cb = { "b", SHM_QPT_RC, 8, 1024 };
	struct udq ua = { 0 }, ub = { 0 };
	struct conn c = { 0 };
	char fab[32], path[64];
	struct ep a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	fabric_name(fab, sizeof(fab), "capture");
	snprintf(path, sizeof(path), "/tmp/%s.pcap", fab);
	CHECK(ep_open(&a, fab, &ca) == 0 && ep_open(&b, fab, &cb) == 0);
	CHECK(udq_open(&ua, a.f, a.port, 0, T_QKEY) == 0);
	CHECK(udq_open(&ub, b.f, b.port, 0, T_QKEY) == 0);
	CHECK(conn_local(&c, &a, &b, 7) == 0);
	CHECK(shm_port_capture(a.port, "/nonexistent/dir/x.pcap") < 0);
	CHECK(shm_port_capture(a.port, path) == 0);
	CHECK(cap_traffic(&a, &b, &ua, &ub) == 0);
	CHECK(cap_big(&a, &b) == 0);
	CHECK(shm_port_capture(a.port, NULL) == 0);
	CHECK(cap_check(path) == 0);
out:
	unlink(path);
	conn_destroy(&c);
	udq_close(&ub, b.f);
	udq_close(&ua, a.f);
	ep_close(&b);
	ep_close(&a);
	return ft_end(fab);
}
REGISTER_TEST(capture, test_capture,
	"capture tap: UD, RC, multicast, >snaplen: pcap tshark parses whole")

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
	static const uint8_t mgid[SHM_GID_LEN] = { 0xff, 0x12, [15] = 9 };
	struct ep x1, y1, y2;
	struct shm_cm_id *id;
	struct shm_cm_req req;
	struct shm_ah ah;
	struct shm_wc wc;

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
	CHECK_EQ(ud_send(x1.qp, &ah, SHM_MCAST_QPN, T_QKEY, "mc", 2), 1);
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
	struct shm_sge sge = { addr, len, lkey };
	const struct shm_sge *sgl = &sge;
	uint64_t wr_id = 0;
	uint16_t nsge = 1;

	return shm_rq_post(rq, &wr_id, &sgl, &nsge, 1);
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

/* ---- a sender that died holding a claimed WR ---------------------------- */

/* Claim one posted WR of QP qpn as a sender does, and never complete it. */
static int
claim_one(struct shm_fabric *f, uint32_t qpn)
{
	struct shm_qp_ent *q = shm_qp_lookup(f, qpn);
	struct shm_rq_ring *r;

	CHECK(q != NULL);
	r = shm_arena_ptr(f, q->proc, q->rq_off);
	CHECK(r != NULL && shm_load(&r->prod) > shm_load(&r->cons));
	__atomic_fetch_add(&r->cons, 1, __ATOMIC_ACQ_REL);
	return 0;
out:
	return -1;
}

static int
claim_child(int rd, int wr, void *arg)
{
	struct shm_cm_id *id = NULL;
	struct shm_cm_event ev;
	struct shm_cm_req req;
	struct msg pud, prc;
	struct ep cr;

	memset(&cr, 0, sizeof(cr));
	CHECK(ep_open(&cr, arg, &(struct ep_conf){ "crc", SHM_QPT_RC, 64,
		      PD_BUF }) == 0);
	CHECK(msg_expect(rd, MSG_HELLO, &pud, T_TIMEOUT) == 0);
	CHECK(msg_expect(rd, MSG_HELLO, &prc, T_TIMEOUT) == 0);
	req_init(&req, prc.gid, cr.qp, 7, 5);
	CHECK(shm_cm_connect(cr.port, &req, &id) == 0);
	CHECK(cm_expect(cr.port, SHM_CM_REP_RCVD, &ev, T_TIMEOUT) == 0);
	CHECK(shm_cm_rtu(id) == 0);
	CHECK(claim_one(cr.f, pud.u32[1]) == 0);
	CHECK(claim_one(cr.f, prc.u32[1]) == 0);
	CHECK(msg_send(wr, MSG_READY, NULL) == 0);
	msg_expect(rd, MSG_STOP, NULL, 2 * T_TIMEOUT); /* killed before */
out:
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&cr);
	return -1;
}

/*
 * Destroy e's QP: all but the lost WR come back flushed. Once they are
 * all polled, an RC QP (stall false) goes at the next attempt: its only
 * sender is gone. A UD QP (stall true) waits for the claim at least
 * SHM_STALL_NS, then goes. The time it took is a figure for the log.
 */
static int
lost_destroy(struct ep *e, const char *what, bool stall)
{
	double t0 = test_now_ms(), dt;
	uint32_t flushed = 0, busy_after = 0;
	struct shm_wc wc[64];
	int ret, k;

	while ((ret = shm_qp_destroy(e->qp)) == -EBUSY &&
	       test_now_ms() - t0 < T_TIMEOUT) {
		busy_after += flushed == e->nbufs - 1;
		k = shm_cq_poll(e->cq, wc, 64);
		while (k-- > 0)
			flushed += wc[k].status == SHM_WC_WR_FLUSH_ERR;
		sched_yield();
	}
	dt = test_now_ms() - t0;
	CHECK_EQ(ret, 0);
	e->qp = NULL;
	CHECK_EQ(flushed, e->nbufs - 1);
	if (stall)
		CHECK(dt >= SHM_STALL_NS / 1e6, "destroyed after %.0f ms, "
		      "before the claim could be given up", dt);
	else
		CHECK_EQ(busy_after, 0);
	ft_note("%s QP with a WR lost to a dead sender: destroyed after %.0f "
		"ms", what, dt);
	return 0;
out:
	return -1;
}

static int
test_lost_claim(void)
{
	struct child c = { .pid = -1 };
	struct shm_cm_id *id = NULL;
	struct shm_async_event ev;
	struct shm_cm_event cev;
	struct ep su, sr;
	char fab[32];
	struct msg m;

	memset(&su, 0, sizeof(su));
	memset(&sr, 0, sizeof(sr));
	fabric_name(fab, sizeof(fab), "lost_claim");
	CHECK(ep_open(&su, fab, &pd_ud) == 0 && ep_open(&sr, fab, &pd_rc) == 0);
	CHECK(shm_cm_listen(sr.port, T_SID) == 0);
	CHECK(child_start(&c, claim_child, fab) == 0);
	ep_hello(&su, &m);
	CHECK(msg_send(c.wr, MSG_HELLO, &m) == 0);
	ep_hello(&sr, &m);
	CHECK(msg_send(c.wr, MSG_HELLO, &m) == 0);
	CHECK(cm_expect(sr.port, SHM_CM_REQ_RCVD, &cev, T_TIMEOUT) == 0);
	id = cev.id;
	CHECK(shm_cm_accept(id, sr.qp, NULL, NULL, 0) == 0);
	CHECK(cm_expect(sr.port, SHM_CM_ESTABLISHED, &cev, T_TIMEOUT) == 0);
	CHECK(msg_expect(c.rd, MSG_READY, NULL, T_TIMEOUT) == 0);
	child_kill(&c);
	CHECK(async_wait(sr.port, &ev, T_TIMEOUT) == 1);
	CHECK_EQ(ev.type, SHM_EV_QP_FATAL);
	/* RC: the only sender is gone, nothing more can come */
	CHECK(lost_destroy(&sr, "RC", false) == 0);
	/* UD: anyone may send; a claim left SHM_STALL_NS is given up */
	CHECK(lost_destroy(&su, "UD", true) == 0);
out:
	child_kill(&c);
	if (id != NULL)
		shm_cm_destroy(id);
	ep_close(&sr);
	ep_close(&su);
	return ft_end(fab);
}
REGISTER_TEST(lost_claim, test_lost_claim,
	"a sender dies holding a claimed WR: our QPs can still be destroyed")
