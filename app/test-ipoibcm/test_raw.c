/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The raw port of test_raw.h.
 */

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "ipoib_wire.h"
#include "test.h"
#include "test_raw.h"
#include "test_util.h"

int
raw_open(struct raw *r, const char *fab)
{
	struct shm_port_conf pc = {
		.guid = 0xfe, .name = "raw", .ib_mtu = 2048, .npkeys = 2,
		.pkeys = { 0x8001, 0x8002 },
	};
	struct shm_qp_conf qc = {
		.type = SHM_QPT_UD, .max_recv_wr = 1, .max_recv_sge = 1,
		.qkey = IPOIB_QKEY_DEFAULT,
	};
	unsigned int i;

	memset(r, 0, sizeof(*r));
	TEST_ASSERT_EQ(shm_fabric_attach(fab, &r->f), 0, "attach");
	TEST_ASSERT_EQ(shm_port_open(r->f, &pc, &r->port), 0, "raw port");
	r->cq = shm_cq_create(r->port, 64);
	TEST_ASSERT(r->cq != NULL, "cq");
	qc.recv_cq = r->cq;
	for (i = 0; i < 2; i++) {
		qc.pkey_index = (uint16_t)i;
		r->ud[i] = shm_qp_create(r->port, &qc);
		TEST_ASSERT(r->ud[i] != NULL &&
			    shm_qp_modify(r->ud[i], SHM_QPS_RTS) == 0, "UD QP");
	}
	qc.type = SHM_QPT_RC;
	qc.pkey_index = 1;
	r->rc = shm_qp_create(r->port, &qc);
	TEST_ASSERT(r->rc != NULL, "RC QP");
	return 0;
}

void
raw_qp_destroy(struct raw *r, struct shm_qp *qp)
{
	struct ipoib_wc wc[8];

	while (shm_qp_destroy(qp) == -EBUSY)
		shm_cq_poll(r->cq, wc, RTE_DIM(wc));
}

void
raw_close(struct raw *r)
{
	unsigned int i;

	if (r->rc != NULL)
		shm_qp_destroy(r->rc);
	for (i = 0; i < 2; i++)
		if (r->ud[i] != NULL)
			raw_qp_destroy(r, r->ud[i]);
	if (r->cq != NULL)
		shm_cq_destroy(r->cq);
	if (r->port != NULL)
		shm_port_close(r->port);
	if (r->f != NULL)
		shm_fabric_detach(r->f);
}

int
raw_post(struct raw *r, unsigned int qp, uint32_t qkey, const uint8_t *hw,
	 bool global, uint16_t proto, const void *payload, uint32_t len)
{
	struct ipoib_hdr hdr = { .proto = rte_cpu_to_be_16(proto) };
	struct iovec iov[2];
	struct shm_send s = { .iov = iov, .iovcnt = 2,
			      .remote_qkey = qkey };
	struct shm_ah ah;

	s.remote_qpn = ipoib_hwaddr_qpn((const struct ipoib_hwaddr *)hw);
	TEST_ASSERT_EQ(shm_ah_resolve(r->f, &hw[4], 0, &ah), 0, "AH");
	ah.global = global;
	s.ah = &ah;
	iov[0].iov_base = &hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = (void *)(uintptr_t)payload;
	iov[1].iov_len = len;
	TEST_ASSERT_EQ(shm_qp_post_send(r->ud[qp], &s, 1), 1, "sent");
	return 0;
}

int
raw_req(struct raw *r, struct shm_qp *qp, const uint8_t *hw,
	const void *priv, uint8_t priv_len, struct shm_cm_event *ev)
{
	struct shm_cm_id *id = NULL;
	struct shm_cm_req req;
	uint64_t deadline;
	int n = 0;

	memset(&req, 0, sizeof(req));
	req.service_id = IPOIB_CM_SID_OFED |
			 ipoib_hwaddr_qpn((const struct ipoib_hwaddr *)hw);
	req.dgid = &hw[4];
	req.qp = qp;
	req.max_cm_retries = 3;
	req.priv = priv;
	req.priv_len = priv_len;
	TEST_ASSERT_EQ(shm_cm_connect(r->port, &req, &id), 0, "REQ");
	deadline = test_now_ms() + TEST_HANG_MS;
	while (n == 0 && test_now_ms() < deadline)
		n = shm_cm_poll(r->port, ev, 1);
	shm_cm_destroy(id);
	TEST_ASSERT_EQ(n, 1, "an answer");
	return 0;
}

int
raw_req_reason(struct raw *r, const uint8_t *hw, const void *priv,
	       uint8_t priv_len, uint16_t *reason)
{
	struct shm_qp_conf qc = {
		.type = SHM_QPT_RC, .max_recv_wr = 1, .max_recv_sge = 1,
		.recv_cq = r->cq, .pkey_index = 0,
	};
	struct shm_cm_event ev;
	struct shm_qp *qp;
	int ret;

	qp = shm_qp_create(r->port, &qc);
	TEST_ASSERT(qp != NULL, "R's RC QP");
	ret = raw_req(r, qp, hw, priv, priv_len, &ev);
	if (ret == 0)
		*reason = ev.type == IPOIB_CM_REJ_RCVD ? ev.reason : 0;
	shm_qp_destroy(qp);
	return ret;
}
