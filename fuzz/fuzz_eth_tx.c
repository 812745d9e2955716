/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * fuzz_eth_tx: Ethernet frames as an application sends them through
 * ipoib_eth_encap(): ARP and ND rewriting, multicast mapping, with a
 * neighbour table (the resolve callback) that answers as the input says.
 *
 * Input: 3 layout bytes (fuzz_mbuf.h), then
 *   flags: bits 0-1: 1 the first segment is shared (refcnt 2), 2 the
 *          frame is an indirect clone (both: -EPERM); bit 2: no resolve
 *          callback at all
 *   resolve mask: the i-th lookup (i < 8) finds a neighbour iff bit i set
 *   the neighbours' flags byte and 24-bit QPN (3 bytes; QPN + i for the
 *   i-th), then the Ethernet frame.
 *
 * Properties: a refusal leaves the chain exactly as it was, and a shared
 * frame is always refused; an accepted frame is a well-formed chain
 * starting with the IPoIB header of the frame's EtherType, and the
 * destination says what the MAC meant; ARP becomes the 56-byte IPoIB ARP;
 * rewritten ND keeps a valid checksum; the callback is only asked about
 * unicast MACs that are not ours; no mbuf is leaked.
 */

#include <errno.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "fuzz_mbuf.h"
#include "ipoib_eth.h"
#include "ipoib_wire.h"

#define HDR_LEN		(FUZZ_LAYOUT_LEN + 6)
#define ETH_DELTA	(RTE_ETHER_HDR_LEN - IPOIB_HDR_LEN)
#define ND_GROW		16

static struct rte_mempool *pool;
static struct ipoib_eth_ctx ctx;
static struct fuzz_snap snap;

static const uint8_t own_gid[IPOIB_GID_LEN] = {
	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1,
	0xb2, 0xc3,
};
static const uint8_t peer_gid[IPOIB_GID_LEN] = {
	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0xd4,
	0xe5, 0xf6,
};

/* The neighbour table of one input. */
struct resolver {
	uint8_t mask;
	uint8_t flags;
	uint32_t qpn;
	unsigned int calls;
};

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	RTE_SET_USED(argc);
	RTE_SET_USED(argv);
	fuzz_eal_init("fuzz_eth_tx");
	pool = fuzz_pool("fz_tx", 1024);
	ipoib_hwaddr_set(&ctx.port_hw, IPOIB_HWADDR_F_RC, 0x48, own_gid);
	ipoib_mac_from_hwaddr(&ctx.port_mac, &ctx.port_hw);
	ctx.pkey = 0x7fff;	/* the full-member bit is the code's to add */
	return 0;
}

static int
resolve(void *arg, const struct rte_ether_addr *mac, struct ipoib_hwaddr *ha)
{
	struct resolver *r = arg;
	unsigned int i = r->calls++;

	FUZZ_CHECK(rte_is_unicast_ether_addr(mac));
	FUZZ_CHECK(!rte_is_same_ether_addr(mac, &ctx.port_mac));
	if (i >= 8 || !(r->mask >> i & 1))
		return -ENOENT;
	ipoib_hwaddr_set(ha, r->flags, (r->qpn + i) & IPOIB_QPN_MASK,
			 peer_gid);
	return 0;
}

static void
check_dst(const struct ipoib_tx_dst *dst, const uint8_t *frame)
{
	struct rte_ether_addr da;

	memcpy(&da, frame, sizeof(da));
	FUZZ_CHECK(rte_is_same_ether_addr(&da, &dst->mac));
	if (rte_is_unicast_ether_addr(&da)) {
		FUZZ_CHECK(dst->type == IPOIB_DST_UNICAST);
		return;
	}
	/* ff12:<signature>:<P_Key with the full-member bit> */
	FUZZ_CHECK(dst->type == IPOIB_DST_MULTICAST);
	FUZZ_CHECK(dst->mgid[0] == 0xff && dst->mgid[1] == 0x12 &&
		   dst->mgid[3] == 0x1b && dst->mgid[4] == 0xff &&
		   dst->mgid[5] == 0xff);
}

static void
check_arp(const struct rte_mbuf *m)
{
	struct ipoib_arp ia;

	FUZZ_CHECK(m->nb_segs == 1 &&
		   m->pkt_len == IPOIB_HDR_LEN + IPOIB_ARP_LEN);
	memcpy(&ia, rte_pktmbuf_mtod_offset(m, void *, IPOIB_HDR_LEN),
	       sizeof(ia));
	FUZZ_CHECK(ia.hw_type == RTE_BE16(IPOIB_ARPHRD_INFINIBAND) &&
		   ia.proto == RTE_BE16(RTE_ETHER_TYPE_IPV4) &&
		   ia.hlen == IPOIB_HWADDR_LEN && ia.plen == 4);
}

/* ND whose options grew from 8 to 24 bytes: lengths and checksum hold. */
static void
check_nd(const struct rte_mbuf *m, const uint8_t *frame)
{
	unsigned int plen = frame[RTE_ETHER_HDR_LEN + 4] << 8 |
			    frame[RTE_ETHER_HDR_LEN + 5];
	struct rte_ipv6_hdr ip6;	/* a copy: it may sit at an odd address */
	const uint8_t *l3;
	unsigned int grow;

	FUZZ_CHECK(m->nb_segs == 1);
	l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *, IPOIB_HDR_LEN);
	memcpy(&ip6, l3, sizeof(ip6));
	FUZZ_CHECK(m->pkt_len == IPOIB_HDR_LEN + sizeof(ip6) +
		   rte_be_to_cpu_16(ip6.payload_len));
	grow = rte_be_to_cpu_16(ip6.payload_len) - plen;
	FUZZ_CHECK(grow % ND_GROW == 0 && grow >= ND_GROW &&
		   grow <= 4 * ND_GROW);
	FUZZ_CHECK(rte_ipv6_udptcp_cksum_verify(&ip6, l3 + sizeof(ip6)) == 0);
}

static void
check_accepted(const struct rte_mbuf *m, const uint8_t *frame, size_t len,
	       const struct ipoib_tx_dst *dst)
{
	uint16_t type = (uint16_t)(frame[12] << 8 | frame[13]);
	struct ipoib_hdr h;

	fuzz_check_chain(m);
	memcpy(&h, rte_pktmbuf_mtod(m, void *), sizeof(h));
	FUZZ_CHECK(rte_be_to_cpu_16(h.proto) == type && h.reserved == 0);
	check_dst(dst, frame);
	if (type == RTE_ETHER_TYPE_ARP)
		check_arp(m);
	else if (type == RTE_ETHER_TYPE_IPV6 && m->pkt_len != len - ETH_DELTA)
		check_nd(m, frame);
	else
		FUZZ_CHECK(m->pkt_len == len - ETH_DELTA);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *in = data + FUZZ_LAYOUT_LEN;
	const uint8_t *frame = data + HDR_LEN;
	size_t len = size - HDR_LEN;
	struct ipoib_eth_ctx c = ctx;
	struct rte_mbuf *m, *sent;
	struct ipoib_tx_dst dst;
	struct fuzz_layout lo;
	struct resolver r;
	unsigned int share;
	int ret;

	if (size < HDR_LEN)
		return -1;
	fuzz_layout_get(&lo, data);
	share = in[0] & 3;
	r.mask = in[1];
	r.flags = in[2];
	r.qpn = (uint32_t)in[3] << 16 | (uint32_t)in[4] << 8 | in[5];
	r.calls = 0;
	c.resolve = (in[0] & 4) ? NULL : resolve;
	c.resolve_arg = &r;
	m = fuzz_chain(pool, &lo, frame, len);
	if (m == NULL)
		return -1;
	sent = m;
	if (share == 1) {
		rte_mbuf_refcnt_update(m, 1);
	} else if (share == 2) {
		sent = rte_pktmbuf_clone(m, pool);
		if (sent == NULL) {
			rte_pktmbuf_free(m);
			return -1;
		}
	}
	fuzz_snap_take(&snap, sent);
	ret = ipoib_eth_encap(sent, &c, &dst);
	if (ret == 0) {
		FUZZ_CHECK(share == 0 || share == 3);
		check_accepted(sent, frame, len, &dst);
	} else {
		FUZZ_CHECK(ret == -EBADMSG || ret == -ENOENT ||
			   ret == -ENOSPC || ret == -EPROTONOSUPPORT ||
			   ret == -EPERM);
		FUZZ_CHECK((ret == -EPERM) <= (share == 1 || share == 2));
		FUZZ_CHECK(fuzz_snap_same(&snap, sent));
	}
	if (share == 1)
		rte_mbuf_refcnt_update(m, -1);
	else if (share == 2)
		rte_pktmbuf_free(sent);
	rte_pktmbuf_free(m);
	fuzz_check_pool_full(pool);
	return 0;
}
