/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The capture tap: UD, RC and multicast traffic, and a message longer
 * than the snap length, written as pcap that tshark reads back whole.
 */

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fabric_util.h"

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
	static const uint8_t mgid[IPOIB_GID_LEN] = { 0xff, 0x12, 0x40, 0x1b,
						   [15] = 0x07 };
	struct shm_ah ab, ba, mc;
	struct ipoib_wc wc[4];
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
	CHECK(ud_send(ua->qp, &mc, IPOIB_MCAST_QPN, T_QKEY, pkt, len) == 1);
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
	struct ipoib_recv_wr wr = { .wr_id = 77, .num_sge = 4 };
	struct shm_qp *qp;
	int i;

	*cq = shm_cq_create(p, 1);
	if (*cq == NULL || shm_mem_alloc(f, 4 * BIG_SGE, m) < 0)
		return NULL;
	qp = qp_new(p, SHM_QPT_RC, *cq, NULL, 1, 0);
	for (i = 0; i < 4; i++)
		wr.sg_list[i] = (struct ipoib_sge){
			(uintptr_t)m->addr + i * BIG_SGE, BIG_SGE, m->lkey };
	if (qp != NULL && shm_rq_post(shm_qp_rq(qp), &wr, 1) != 1) {
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
	struct ipoib_wc wc;

	qa = big_qp(a->f, a->port, &ca, &ma);
	qb = big_qp(b->f, b->port, &cb, &mb);
	CHECK(pkt != NULL && qa != NULL && qb != NULL);
	CHECK(conn_qps(&c, a->port, qa, b->port, qb, 7) == 0);
	fill_pattern(pkt, BIG_LEN, 5);
	ipoib_udp(pkt, 20, 1000);
	CHECK(rc_send_wait(qa, pkt, BIG_LEN, T_TIMEOUT) == 0);
	CHECK(rc_send_wait(qb, pkt, BIG_LEN, T_TIMEOUT) == 0);
	CHECK_EQ(poll_wc(cb, &wc, 1, T_TIMEOUT), 1);
	CHECK(wc.status == IPOIB_WC_SUCCESS && wc.byte_len == BIG_LEN);
	CHECK_EQ(poll_wc(ca, &wc, 1, T_TIMEOUT), 1);	/* captured here */
	CHECK(wc.status == IPOIB_WC_SUCCESS && wc.byte_len == BIG_LEN);
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
