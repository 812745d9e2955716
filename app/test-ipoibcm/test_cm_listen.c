/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * A port whose CM its peers cannot reach (shm_cm_listen=none: as a
 * process using librdmacm on InfiniBand, which cannot listen on the IPoIB
 * service IDs) does not offer connected mode: its peers send to it over
 * UD and never send it a REQ, while it connects out to them over RC, as
 * it would to Linux hosts. Nothing is lost either way.
 */

#include <rte_ethdev.h>

#include "rte_pmd_ipoib_cm.h"
#include "test.h"
#include "test_net.h"
#include "test_util.h"

static int
cm_listen_none(const char *srq)
{
	char a_args[64];
	unsigned int peer = 1;
	struct test_net net;
	uint32_t seq = 0;

	snprintf(a_args, sizeof(a_args), "shm_cm_listen=none,%s", srq);
	TEST_RUN(test_net_open(&net, "t_cm_listen", a_args, srq, 1));
	TEST_ASSERT(test_net_until(&net, &peer, 1, net.port[0],
				   "conns_tx_connected", 1, true, &seq) == 0,
		    "A connected to B over RC");
	TEST_RUN(test_net_rounds(&net, &peer, 1, 50, seq));
	TEST_ASSERT_EQ(test_net_peer_state(net.port[1], &net.mac[0]),
		       RTE_PMD_IPOIBCM_PEER_UD_ONLY,
		       "B sees no connected mode in A's address");
	TEST_ASSERT_EQ(test_xstat(net.port[1], "conn_established_active"), 0,
		       "B never connected to A");
	TEST_ASSERT_EQ(test_xstat(net.port[1], "conn_failed"), 0,
		       "B never tried");
	TEST_ASSERT_EQ(test_xstat(net.port[0], "conn_established_passive"), 0,
		       "A accepted nothing");
	TEST_ASSERT(test_xstat(net.port[1], "tx_ud_packets") >= 50,
		    "B sends to A over UD");
	TEST_ASSERT(test_xstat(net.port[0], "tx_rc_packets") >= 50,
		    "A sends to B over RC");
	test_net_close(&net);
	return 0;
}

static int
test_cm_listen_none_srq(void)
{
	return cm_listen_none("srq=on");
}
REGISTER_TEST(cm_listen_none_srq, test_cm_listen_none_srq,
		    "CM unreachable: no RC offered, peers on UD to it, SRQ");

static int
test_cm_listen_none_nosrq(void)
{
	return cm_listen_none("srq=off");
}
REGISTER_TEST(cm_listen_none_nosrq, test_cm_listen_none_nosrq,
		    "CM unreachable: no RC offered, peers on UD to it, non-SRQ");
