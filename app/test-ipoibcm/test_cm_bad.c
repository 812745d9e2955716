/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * CM messages no IPoIB host sends: a REQ without private data or with
 * less than its 8 bytes is refused (REJ, consumer reason) and counted by
 * reason; a REQ whose MTU is 0 is taken (its MTU is not used, as Linux
 * does not use it); the port keeps serving.
 */

#include <string.h>

#include <rte_byteorder.h>
#include <rte_ethdev.h>

#include "ipoib_hca_types.h"
#include "ipoib_wire.h"
#include "test.h"
#include "test_net.h"
#include "test_raw.h"
#include "test_util.h"

static int
test_cm_bad_req(void)
{
	uint8_t a_hw[IPOIB_HWADDR_LEN];
	struct ipoib_cm_data d;
	struct test_net net;
	uint16_t reason = 0;
	struct raw r;

	TEST_RUN(test_net_open(&net, "t_cm_bad", "pkey=0x8001", "", 0));
	TEST_RUN(raw_open(&r, test_fabric("t_cm_bad")));
	TEST_ASSERT_EQ(shm_addr_resolve(r.port, net.mac[0].addr_bytes, a_hw),
		       0, "A's address, seen from R");
	d.qpn = rte_cpu_to_be_32(shm_qp_num(r.ud[0]));
	d.mtu = rte_cpu_to_be_32(IPOIB_CM_BUF_SIZE);
	TEST_RUN(raw_req_reason(&r, a_hw, NULL, 0, &reason));
	TEST_ASSERT_EQ(reason, IPOIB_REJ_CONSUMER, "no private data: REJ");
	TEST_RUN(raw_req_reason(&r, a_hw, &d, 4, &reason));
	TEST_ASSERT_EQ(reason, IPOIB_REJ_CONSUMER, "4 bytes of 8: REJ");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "cm_malformed_short"), 2,
		       "counted as short");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "cm_malformed"), 2,
		       "counted as malformed");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "rej_sent_reason_28"), 2,
		       "both refused by the consumer reason");
	/* a well-formed REQ, MTU 0 included, is still taken */
	d.mtu = 0;
	TEST_RUN(raw_req_reason(&r, a_hw, &d, sizeof(d), &reason));
	TEST_ASSERT_EQ(reason, 0, "REP to a REQ whose MTU is 0");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "cm_malformed"), 2,
		       "a REQ's MTU is not judged");
	raw_close(&r);
	test_net_close(&net);
	return 0;
}
REGISTER_TEST(cm_bad_req, test_cm_bad_req,
		    "a REQ with short private data is refused and counted");

/*
 * R, below the driver, as a passive host: it publishes a MAC with the
 * connected-mode flag and listens on the OFED service ID of its UD QPN,
 * so that A, sending to that MAC, connects to R. R answers each of A's
 * REQs as a test says, with an RC QP of its own.
 */
struct rep_host {
	struct test_net net;
	struct raw r;
	struct rte_ether_addr mac;
	struct shm_qp *qp[8];
	unsigned int nqp;
	uint64_t next_ms;
};

static int
rep_open(struct rep_host *h)
{
	struct shm_port_info pi;
	struct ipoib_hwaddr hw;
	uint32_t qpn;

	memset(h, 0, sizeof(*h));
	TEST_RUN(test_net_open(&h->net, "t_cm_rep", "pkey=0x8001", "", 0));
	TEST_RUN(raw_open(&h->r, test_fabric("t_cm_rep")));
	/* the MAC every port derives from R's address */
	qpn = shm_qp_num(h->r.ud[0]);
	shm_port_query(h->r.port, &pi);
	ipoib_hwaddr_set(&hw, IPOIB_HWADDR_F_RC, qpn, pi.gid);
	ipoib_hwaddr_to_mac(h->mac.addr_bytes, &hw);
	shm_port_publish(h->r.port, h->mac.addr_bytes, qpn, IPOIB_HWADDR_F_RC);
	TEST_ASSERT_EQ(shm_cm_listen(h->r.port, IPOIB_CM_SID_OFED | qpn), 0,
		       "R listens");
	return 0;
}

static void
rep_close(struct rep_host *h)
{
	unsigned int i;

	for (i = 0; i < h->nqp; i++)
		raw_qp_destroy(&h->r, h->qp[i]);
	raw_close(&h->r);
	test_net_close(&h->net);
}

/*
 * Until R has an event of type t (other events' ids are let go): A sends
 * to R every millisecond, which makes it connect, or connect again once
 * its backoff has passed; A's queue is polled as an application does.
 */
static int
rep_wait(struct rep_host *h, enum ipoib_cm_event_type t,
	 struct shm_cm_event *ev)
{
	uint64_t deadline = test_now_ms() + TEST_HANG_MS;
	struct rte_mbuf *m;

	for (;;) {
		TEST_ASSERT(test_now_ms() < deadline, "R waits for event %d",
			    (int)t);
		if (test_now_ms() >= h->next_ms) {
			h->next_ms = test_now_ms() + 1;
			m = test_udp_frame(&h->net.mac[0], &h->mac, 100, 0,
					   false);
			TEST_ASSERT(m != NULL, "frame");
			if (rte_eth_tx_burst(h->net.port[0], 0, &m, 1) == 0)
				rte_pktmbuf_free(m);
		}
		test_net_poll(&h->net);
		if (shm_cm_poll(h->r.port, ev, 1) != 1)
			continue;
		if (ev->type == t)
			return 0;
		if (ev->type != IPOIB_CM_REQ_RCVD &&
		    ev->type != IPOIB_CM_ESTABLISHED)
			shm_cm_destroy(ev->id);
	}
}

/* R accepts the REQ of *req with a new RC QP: a REP carrying priv. */
static int
rep_accept(struct rep_host *h, const struct shm_cm_event *req,
	   const void *priv, uint8_t len)
{
	struct shm_qp_conf qc = {
		.type = SHM_QPT_RC, .max_recv_wr = 1, .max_recv_sge = 1,
		.recv_cq = h->r.cq, .pkey_index = 0,
	};
	struct shm_qp *qp;

	TEST_ASSERT(h->nqp < RTE_DIM(h->qp), "");
	qp = shm_qp_create(h->r.port, &qc);
	TEST_ASSERT(qp != NULL, "R's RC QP");
	h->qp[h->nqp++] = qp;
	TEST_ASSERT_EQ(shm_cm_accept(req->id, qp, NULL, priv, len), 0,
		       "REP");
	return 0;
}

/* R answers A's next REQ with a REP carrying priv (len bytes). */
static int
rep_answer(struct rep_host *h, const void *priv, uint8_t len,
	   struct shm_cm_event *req)
{
	TEST_RUN(rep_wait(h, IPOIB_CM_REQ_RCVD, req));
	return rep_accept(h, req, priv, len);
}

/* A refuses a REP with bad private data: REJ (consumer), counted. */
static int
rep_refused(struct rep_host *h, const void *priv, uint8_t len,
	    const char *counter)
{
	uint64_t before = test_xstat(h->net.port[0], counter);
	struct shm_cm_event ev;

	TEST_RUN(rep_answer(h, priv, len, &ev));
	TEST_RUN(rep_wait(h, IPOIB_CM_REJ_RCVD, &ev));
	TEST_ASSERT_EQ(ev.reason, IPOIB_REJ_CONSUMER, "REJ, consumer reason");
	shm_cm_destroy(ev.id);
	TEST_ASSERT_EQ(test_xstat(h->net.port[0], counter), before + 1,
		       "%s counted", counter);
	return 0;
}

/*
 * REPs no IPoIB host sends, to A's REQs: a REP for a REQ A gave up is
 * dropped below the driver and counted (hca_cm_drops); one with short
 * private data or an MTU of 0 is refused and counted by reason; one whose
 * MTU is past 65524 is taken, its MTU bounded. After each, A connects
 * again and is connected at the end: no peer is left stuck.
 */
static int
test_cm_bad_rep(void)
{
	struct ipoib_cm_data d;
	struct rte_pmd_ipoibcm_peer info;
	struct shm_cm_event ev;
	struct rep_host h;
	uint16_t a;
	int ret;

	TEST_RUN(rep_open(&h));
	a = h.net.port[0];
	d.qpn = rte_cpu_to_be_32(shm_qp_num(h.r.ud[0]));

	/* A gives up its REQ; R's REP then finds no id */
	TEST_RUN(rep_wait(&h, IPOIB_CM_REQ_RCVD, &ev));
	ret = rte_pmd_ipoibcm_peer_disconnect(a, &h.mac);
	TEST_ASSERT(ret >= 1, "A gave up (%d, state %d)", ret,
		    (int)test_net_peer_state(a, &h.mac));
	d.mtu = rte_cpu_to_be_32(IPOIB_CM_BUF_SIZE);
	TEST_RUN(rep_accept(&h, &ev, &d, sizeof(d)));
	TEST_ASSERT(test_wait_xstat(a, "hca_cm_drops", 1, TEST_HANG_MS),
		    "the REP for no REQ dropped, counted");
	shm_cm_destroy(ev.id);
	TEST_ASSERT_EQ(test_xstat(a, "conn_established_active"), 0, "");

	/* short private data; an MTU of 0 */
	TEST_RUN(rep_refused(&h, &d, 4, "cm_malformed_short"));
	d.mtu = 0;
	TEST_RUN(rep_refused(&h, &d, sizeof(d), "cm_malformed_mtu"));
	TEST_ASSERT_EQ(test_xstat(a, "cm_malformed"), 2, "both malformed");

	/* past 65524: taken, A sends at most 65524 */
	d.mtu = rte_cpu_to_be_32(UINT32_MAX);
	TEST_RUN(rep_answer(&h, &d, sizeof(d), &ev));
	TEST_RUN(rep_wait(&h, IPOIB_CM_ESTABLISHED, &ev));
	TEST_ASSERT_EQ(test_net_peer_state(a, &h.mac),
		       RTE_PMD_IPOIBCM_PEER_CONNECTED, "A connected");
	TEST_ASSERT_EQ(rte_pmd_ipoibcm_peer_get(a, &h.mac, &info), 0, "");
	TEST_ASSERT_EQ(info.tx_mtu, IPOIB_CM_BUF_SIZE, "MTU bounded");
	TEST_ASSERT_EQ(test_xstat(a, "conn_established_active"), 1,
		       "one connection");
	TEST_ASSERT_EQ(test_xstat(a, "cm_malformed"), 2, "");
	shm_cm_destroy(ev.id);
	rep_close(&h);
	return 0;
}
REGISTER_TEST(cm_bad_rep, test_cm_bad_rep,
	      "REPs for no REQ, short or with a bad MTU: dropped or refused, counted");
