/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * fuzz_eth_rx: IPoIB frames as the datapath receives them (UD or RC, one
 * segment or a chain, any headroom) through ipoib_eth_decap(), and the
 * binding it learns from ARP/ND.
 *
 * Input: 3 layout bytes (fuzz_mbuf.h), 1 flags byte, then the frame from
 * its 4-byte IPoIB header on.
 *   flags bit 0: received on a multicast group
 *   flags bit 1: over RC (the sender's flags byte is 0x80; UD: 0)
 *   flags bits 2-3: the sender: a peer, our own port, all zeros, the
 *                   peer's GID with another QPN
 *
 * Properties: a refusal (-EBADMSG, -ENOSPC) leaves the chain exactly as
 * it was and learns nothing; an accepted frame is a well-formed chain with
 * the Ethernet header the receiver promises; ARP/ND are rewritten with a
 * valid ICMPv6 checksum; a learnt binding is never ours nor zero; no mbuf
 * is leaked.
 */

#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "fuzz_mbuf.h"
#include "ipoib_eth.h"
#include "ipoib_wire.h"

#define HDR_LEN		(FUZZ_LAYOUT_LEN + 1)
#define ETH_DELTA	(RTE_ETHER_HDR_LEN - IPOIB_HDR_LEN)
/* an IPoIB option becomes an 8-byte Ethernet one */
#define ND_GROW		(IPOIB_ND_OPT_IB_LEN - 8)

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

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	RTE_SET_USED(argc);
	RTE_SET_USED(argv);
	fuzz_eal_init("fuzz_eth_rx");
	pool = fuzz_pool("fz_rx", 1024);
	ipoib_hwaddr_set(&ctx.port_hw, IPOIB_HWADDR_F_RC, 0x48, own_gid);
	ipoib_mac_from_hwaddr(&ctx.port_mac, &ctx.port_hw);
	ctx.pkey = 0xffff;
	return 0;
}

static void
sender(struct ipoib_hwaddr *src, uint8_t flags)
{
	uint8_t hwf = (flags & 2) ? IPOIB_HWADDR_F_RC : 0;

	switch ((flags >> 2) & 3) {
	case 0:
		ipoib_hwaddr_set(src, hwf, 0xa1, peer_gid);
		break;
	case 1:
		ipoib_hwaddr_set(src, hwf, 0x48, own_gid);
		break;
	case 2:
		memset(src, 0, sizeof(*src));
		break;
	default:
		ipoib_hwaddr_set(src, hwf, 0xfffffe, peer_gid);
		break;
	}
}

/* The MAC the receiver shows for hardware address ha. */
static void
shown_mac(const struct ipoib_hwaddr *ha, struct rte_ether_addr *mac)
{
	if (ipoib_hwaddr_eq_qpn_gid(ha, &ctx.port_hw))
		*mac = ctx.port_mac;
	else
		ipoib_mac_from_hwaddr(mac, ha);
}

static void
check_arp(const struct rte_mbuf *m, const uint8_t *frame)
{
	const struct ipoib_arp *ia = (const void *)(frame + IPOIB_HDR_LEN);
	struct rte_ether_addr mac;
	struct rte_arp_hdr ea;

	FUZZ_CHECK(m->nb_segs == 1 &&
		   m->pkt_len == RTE_ETHER_HDR_LEN + sizeof(ea));
	memcpy(&ea, rte_pktmbuf_mtod_offset(m, void *, RTE_ETHER_HDR_LEN),
	       sizeof(ea));
	FUZZ_CHECK(ea.arp_hardware == RTE_BE16(RTE_ARP_HRD_ETHER) &&
		   ea.arp_protocol == RTE_BE16(RTE_ETHER_TYPE_IPV4) &&
		   ea.arp_hlen == RTE_ETHER_ADDR_LEN && ea.arp_plen == 4 &&
		   ea.arp_opcode == ia->op);
	FUZZ_CHECK(ea.arp_data.arp_sip == ia->sender_ip &&
		   ea.arp_data.arp_tip == ia->target_ip);
	shown_mac(&ia->sender_hw, &mac);
	FUZZ_CHECK(rte_is_same_ether_addr(&mac, &ea.arp_data.arp_sha));
}

/* An ND message whose options were rewritten: its checksum holds. */
static void
check_nd(const struct rte_mbuf *m, const uint8_t *frame)
{
	unsigned int plen = frame[IPOIB_HDR_LEN + 4] << 8 |
			    frame[IPOIB_HDR_LEN + 5];
	struct rte_ipv6_hdr ip6;	/* a copy: it may sit at an odd address */
	const uint8_t *l3;
	unsigned int shrink;

	FUZZ_CHECK(m->nb_segs == 1);
	l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *, RTE_ETHER_HDR_LEN);
	memcpy(&ip6, l3, sizeof(ip6));
	FUZZ_CHECK(m->pkt_len == RTE_ETHER_HDR_LEN + sizeof(ip6) +
		   rte_be_to_cpu_16(ip6.payload_len));
	shrink = plen - rte_be_to_cpu_16(ip6.payload_len);
	FUZZ_CHECK(shrink % ND_GROW == 0 && shrink >= ND_GROW &&
		   shrink <= 4 * ND_GROW);
	FUZZ_CHECK(rte_ipv6_udptcp_cksum_verify(&ip6, l3 + sizeof(ip6)) == 0);
}

static void
check_accepted(const struct rte_mbuf *m, const uint8_t *frame, size_t len,
	       const struct ipoib_hwaddr *src, bool mcast,
	       const struct ipoib_learn *learn)
{
	uint16_t type = (uint16_t)(frame[0] << 8 | frame[1]);
	struct rte_ether_addr mac;
	struct rte_ether_hdr eh;

	fuzz_check_chain(m);
	memcpy(&eh, rte_pktmbuf_mtod(m, void *), sizeof(eh));
	FUZZ_CHECK(rte_be_to_cpu_16(eh.ether_type) == type);
	ipoib_mac_from_hwaddr(&mac, src);
	FUZZ_CHECK(rte_is_same_ether_addr(&mac, &eh.src_addr));
	if (mcast)
		FUZZ_CHECK(rte_is_multicast_ether_addr(&eh.dst_addr));
	else
		FUZZ_CHECK(rte_is_same_ether_addr(&ctx.port_mac, &eh.dst_addr));
	if (type == RTE_ETHER_TYPE_ARP) {
		check_arp(m, frame);
	} else if (type == RTE_ETHER_TYPE_IPV6 && m->pkt_len != len + ETH_DELTA) {
		/* options shrank: 16 bytes per link-layer option */
		FUZZ_CHECK(m->pkt_len < len + ETH_DELTA);
		check_nd(m, frame);
	} else {
		FUZZ_CHECK(m->pkt_len == len + ETH_DELTA);
		FUZZ_CHECK(!learn->valid);
	}
	if (learn->valid) {
		static const struct ipoib_hwaddr zero;

		FUZZ_CHECK(type == RTE_ETHER_TYPE_ARP ||
			   type == RTE_ETHER_TYPE_IPV6);
		FUZZ_CHECK(!ipoib_hwaddr_eq_qpn_gid(&learn->hw, &ctx.port_hw));
		FUZZ_CHECK(!ipoib_hwaddr_eq_qpn_gid(&learn->hw, &zero));
		ipoib_mac_from_hwaddr(&mac, &learn->hw);
		FUZZ_CHECK(rte_is_same_ether_addr(&mac, &learn->mac));
		FUZZ_CHECK(rte_is_unicast_ether_addr(&learn->mac));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *frame = data + HDR_LEN;
	size_t len = size - HDR_LEN;
	struct ipoib_hwaddr src;
	struct ipoib_learn learn;
	struct fuzz_layout lo;
	struct rte_mbuf *m;
	bool mcast;
	int ret;

	if (size < HDR_LEN)
		return -1;
	fuzz_layout_get(&lo, data);
	mcast = data[FUZZ_LAYOUT_LEN] & 1;
	sender(&src, data[FUZZ_LAYOUT_LEN]);
	m = fuzz_chain(pool, &lo, frame, len);
	if (m == NULL)
		return -1;
	fuzz_snap_take(&snap, m);
	memset(&learn, 0xa5, sizeof(learn));	/* must be written */
	ret = ipoib_eth_decap(m, &src, mcast, &ctx, &learn);
	if (ret == 0) {
		check_accepted(m, frame, len, &src, mcast, &learn);
	} else {
		FUZZ_CHECK(ret == -EBADMSG || ret == -ENOSPC);
		FUZZ_CHECK(!learn.valid);
		FUZZ_CHECK(fuzz_snap_same(&snap, m));
	}
	rte_pktmbuf_free(m);
	fuzz_check_pool_full(pool);
	return 0;
}
