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
