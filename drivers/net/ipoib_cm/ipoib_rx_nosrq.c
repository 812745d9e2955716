/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The receive burst for non-SRQ mode: every connection posts its own buffers.
 */

#include "ipoib_rx.h"

uint16_t
ipoib_rx_burst_nosrq(void *q, struct rte_mbuf **pkts, uint16_t n)
{
	return ipoib_rx_burst_tmpl(q, pkts, n, false);
}
