/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Framing tests (test_framing.h): the two ports' helpers.
 */

#include <errno.h>
#include <string.h>

#include <rte_ip.h>

#include "test.h"
#include "test_framing.h"
#include "test_pkt.h"

static int
node_resolve(void *arg, const struct rte_ether_addr *mac,
	     struct ipoib_hwaddr *ha)
{
	struct node *nd = arg;
	unsigned int i;

	for (i = 0; i < nd->n; i++) {
		if (rte_is_same_ether_addr(mac, &nd->neigh[i].mac)) {
			*ha = nd->neigh[i].hw;
			return 0;
		}
	}
	return -ENOENT;
}

void
node_learn(struct node *nd, const struct ipoib_learn *l)
{
	if (l->valid && nd->n < RTE_DIM(nd->neigh))
		nd->neigh[nd->n++] = *l;
}

static void
node_init(struct node *nd, const uint8_t *hw, const uint8_t *mac)
{
	memset(nd, 0, sizeof(*nd));
	memcpy(&nd->ctx.port_hw, hw, IPOIB_HWADDR_LEN);
	memcpy(&nd->ctx.port_mac, mac, RTE_ETHER_ADDR_LEN);
	nd->ctx.pkey = 0xffff;
	nd->ctx.resolve = node_resolve;
	nd->ctx.resolve_arg = nd;
}

void
ud_src(struct ipoib_hwaddr *ha, const uint8_t *hw)
{
	memcpy(ha, hw, IPOIB_HWADDR_LEN);
	ha->bytes[0] = 0;
}

void
nodes_init(struct node *a, struct node *b)
{
	static const uint8_t amac[] = { A_MAC }, bmac[] = { B_MAC };

	node_init(a, a_hw, amac);
	node_init(b, b_hw, bmac);
}

int
frame_unchanged(const struct rte_mbuf *m, const void *want, uint32_t len)
{
	return test_frame_eq(m, want, len);
}

int
check_learn(const struct ipoib_learn *l, const uint8_t *mac,
	    const uint8_t *hw)
{
	TEST_ASSERT(l->valid, "nothing learned");
	TEST_ASSERT(memcmp(&l->mac, mac, 6) == 0, "learned MAC");
	TEST_ASSERT(memcmp(&l->hw, hw, 20) == 0, "learned hwaddr (flags too)");
	return 0;
}

void
ipv4_frame(uint8_t *f, uint32_t len, const uint8_t *dmac,
	   const uint8_t *smac, uint32_t src, uint32_t dst)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + 14);
	uint32_t i;

	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(len - 14);
	ip->packet_id = rte_cpu_to_be_16(0x1234);
	ip->time_to_live = 64;
	ip->next_proto_id = 17;
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	for (i = 34; i < len; i++)
		f[i] = (uint8_t)(i * 7 + 3);
	f[34] = 0x30;	/* UDP ports 12345 -> 12346, no checksum */
	f[35] = 0x39;
	f[36] = 0x30;
	f[37] = 0x3a;
	f[38] = (uint8_t)((len - 34) >> 8);
	f[39] = (uint8_t)(len - 34);
	f[40] = 0;
	f[41] = 0;
}
