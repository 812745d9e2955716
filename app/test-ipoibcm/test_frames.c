/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Frames of an IP stack, byte by byte (test_frames.h).
 */

#include <netinet/in.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_ip.h>

#include "ipoib_wire.h"
#include "test.h"
#include "test_frames.h"
#include "test_pkt.h"
#include "test_util.h"

#define IGMP_ALL_ROUTERS	TF_IPV4(224, 0, 0, 2)
#define IGMP_V3_ROUTERS		TF_IPV4(224, 0, 0, 22)

static const uint8_t mld_v2_routers[16] = { 0xff, 0x02, [15] = 0x16 };

void
tf_group_mac4(struct rte_ether_addr *mac, uint32_t group)
{
	mac->addr_bytes[0] = 0x01;
	mac->addr_bytes[1] = 0x00;
	mac->addr_bytes[2] = 0x5e;
	mac->addr_bytes[3] = (uint8_t)(group >> 16) & 0x7f;
	mac->addr_bytes[4] = (uint8_t)(group >> 8);
	mac->addr_bytes[5] = (uint8_t)group;
}

void
tf_group_mac6(struct rte_ether_addr *mac, const uint8_t *group)
{
	mac->addr_bytes[0] = 0x33;
	mac->addr_bytes[1] = 0x33;
	memcpy(&mac->addr_bytes[2], &group[12], 4);
}

void
tf_addr6(uint8_t *a, uint32_t n)
{
	memset(a, 0, 16);
	a[0] = 0xfd;
	a[12] = (uint8_t)(n >> 24);
	a[13] = (uint8_t)(n >> 16);
	a[14] = (uint8_t)(n >> 8);
	a[15] = (uint8_t)n;
}

static uint16_t
tf_sum(const void *p, size_t len, uint32_t sum)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static void
tf_eth(struct tf *f, const struct rte_ether_addr *src,
       const struct rte_ether_addr *dst, uint16_t type)
{
	struct rte_ether_hdr eh = {
		.dst_addr = *dst,
		.src_addr = *src,
		.ether_type = rte_cpu_to_be_16(type),
	};

	memcpy(f->b, &eh, sizeof(eh));
	f->len = sizeof(eh);
}

void
tf_ipv4(struct tf *f, const struct rte_ether_addr *src,
	const struct rte_ether_addr *dst, uint32_t sip, uint32_t dip,
	uint8_t proto, const void *l4, uint16_t l4len, uint16_t frag)
{
	struct rte_ipv4_hdr ip = {
		.version_ihl = RTE_IPV4_VHL_DEF,
		.total_length = rte_cpu_to_be_16(sizeof(ip) + l4len),
		.fragment_offset = rte_cpu_to_be_16(frag),
		.time_to_live = 1,
		.next_proto_id = proto,
		.src_addr = rte_cpu_to_be_32(sip),
		.dst_addr = rte_cpu_to_be_32(dip),
	};
	uint8_t *p;
	uint16_t ck;

	tf_eth(f, src, dst, RTE_ETHER_TYPE_IPV4);
	ip.hdr_checksum = rte_ipv4_cksum(&ip);
	memcpy(f->b + f->len, &ip, sizeof(ip));
	p = f->b + f->len + sizeof(ip);
	memcpy(p, l4, l4len);
	f->len += sizeof(ip) + l4len;
	if (proto == IPPROTO_ICMP || proto == IPPROTO_IGMP) {
		p[2] = p[3] = 0;
		ck = (uint16_t)~tf_sum(p, l4len, 0);
		p[2] = (uint8_t)(ck >> 8);
		p[3] = (uint8_t)ck;
	} else if ((proto == IPPROTO_UDP || proto == IPPROTO_TCP) &&
		   frag == 0) {
		struct rte_ipv4_hdr *iph = (struct rte_ipv4_hdr *)
					   (f->b + RTE_ETHER_HDR_LEN);
		size_t at = proto == IPPROTO_UDP ? 6 : 16;

		p[at] = p[at + 1] = 0;
		ck = rte_ipv4_udptcp_cksum(iph, p);
		memcpy(&p[at], &ck, sizeof(ck));
	}
}

void
tf_ipv6(struct tf *f, const struct rte_ether_addr *src,
	const struct rte_ether_addr *dst, const uint8_t *sip,
	const uint8_t *dip, uint8_t proto, const void *l4, uint16_t l4len,
	bool hbh)
{
	/* next header, length 0, router alert (MLD: 0), PadN */
	static const uint8_t ra[8] = { 0, 0, 5, 2, 0, 0, 1, 0 };
	struct rte_ipv6_hdr ip = {
		.vtc_flow = rte_cpu_to_be_32(6u << 28),
		.payload_len = rte_cpu_to_be_16(l4len + (hbh ? 8 : 0)),
		.proto = hbh ? IPPROTO_HOPOPTS : proto,
		.hop_limits = 255,
	};
	uint8_t *p;
	uint32_t sum;
	uint16_t ck;

	memcpy(IPOIB_IPV6_SRC(&ip), sip, 16);
	memcpy(IPOIB_IPV6_DST(&ip), dip, 16);
	tf_eth(f, src, dst, RTE_ETHER_TYPE_IPV6);
	memcpy(f->b + f->len, &ip, sizeof(ip));
	f->len += sizeof(ip);
	if (hbh) {
		memcpy(f->b + f->len, ra, sizeof(ra));
		f->b[f->len] = proto;
		f->len += sizeof(ra);
	}
	p = f->b + f->len;
	memcpy(p, l4, l4len);
	f->len += l4len;
	if (proto != IPPROTO_ICMPV6 && proto != IPPROTO_UDP)
		return;
	/* pseudo header (RFC 8200 s8.1): addresses, length, next header */
	sum = tf_sum(sip, 16, 0) + tf_sum(dip, 16, 0) + l4len + proto;
	ck = proto == IPPROTO_ICMPV6 ? 2 : 6;
	p[ck] = p[ck + 1] = 0;
	sum = (uint16_t)~tf_sum(p, l4len, sum);
	p[ck] = (uint8_t)(sum >> 8);
	p[ck + 1] = (uint8_t)sum;
}

void
tf_igmp2(struct tf *f, const struct rte_ether_addr *src, uint32_t sip,
	 uint8_t type, uint32_t group)
{
	uint32_t dip = type == 0x17 ? IGMP_ALL_ROUTERS : group;
	uint8_t m[8] = { type, 0, 0, 0, (uint8_t)(group >> 24),
			 (uint8_t)(group >> 16), (uint8_t)(group >> 8),
			 (uint8_t)group };
	struct rte_ether_addr dst;

	tf_group_mac4(&dst, dip);
	tf_ipv4(f, src, &dst, sip, dip, IPPROTO_IGMP, m, sizeof(m), 0);
}

void
tf_igmp3(struct tf *f, const struct rte_ether_addr *src, uint32_t sip,
	 uint8_t rec_type, uint32_t group)
{
	uint8_t m[16] = { 0x22, 0, 0, 0, 0, 0, 0, 1, rec_type, 0, 0, 0,
			  (uint8_t)(group >> 24), (uint8_t)(group >> 16),
			  (uint8_t)(group >> 8), (uint8_t)group };
	struct rte_ether_addr dst;

	tf_group_mac4(&dst, IGMP_V3_ROUTERS);
	tf_ipv4(f, src, &dst, sip, IGMP_V3_ROUTERS, IPPROTO_IGMP, m,
		sizeof(m), 0);
}

void
tf_mld1(struct tf *f, const struct rte_ether_addr *src, const uint8_t *sip,
	uint8_t type, const uint8_t *group)
{
	static const uint8_t all_routers[16] = { 0xff, 0x02, [15] = 0x02 };
	const uint8_t *dip = type == 132 ? all_routers : group;
	struct rte_ether_addr dst;
	uint8_t m[24] = { type };

	memcpy(&m[8], group, 16);
	tf_group_mac6(&dst, dip);
	tf_ipv6(f, src, &dst, sip, dip, IPPROTO_ICMPV6, m, sizeof(m), true);
}

void
tf_mld2(struct tf *f, const struct rte_ether_addr *src, const uint8_t *sip,
	uint8_t rec_type, const uint8_t *group)
{
	struct rte_ether_addr dst;
	uint8_t m[28] = { 143, 0, 0, 0, 0, 0, 0, 1, rec_type };

	memcpy(&m[12], group, 16);
	tf_group_mac6(&dst, mld_v2_routers);
	tf_ipv6(f, src, &dst, sip, mld_v2_routers, IPPROTO_ICMPV6, m,
		sizeof(m), true);
}

void
tf_ns(struct tf *f, const struct rte_ether_addr *src, const uint8_t *sip,
      const uint8_t *target, bool slla)
{
	uint8_t m[32] = { 135 }, group[16];
	struct rte_ether_addr dst;

	memcpy(&m[8], target, 16);
	m[24] = 1;	/* source link-layer address */
	m[25] = 1;
	memcpy(&m[26], src, RTE_ETHER_ADDR_LEN);
	ipoib_ipv6_solicited(group, target);
	tf_group_mac6(&dst, group);
	tf_ipv6(f, src, &dst, sip, group, IPPROTO_ICMPV6, m,
		slla ? sizeof(m) : 24, false);
}

void
tf_na(struct tf *f, const struct rte_ether_addr *src,
      const struct rte_ether_addr *dst, const uint8_t *sip,
      const uint8_t *dip)
{
	uint8_t m[32] = { 136, 0, 0, 0, 0x60 };	/* solicited, override */

	memcpy(&m[8], sip, 16);
	m[24] = 2;	/* target link-layer address */
	m[25] = 1;
	memcpy(&m[26], src, RTE_ETHER_ADDR_LEN);
	tf_ipv6(f, src, dst, sip, dip, IPPROTO_ICMPV6, m, sizeof(m), false);
}

int
tf_send(uint16_t port, const struct tf *f)
{
	struct rte_mbuf *m = test_mbuf(test_mempool(), f->b, f->len);
	uint64_t deadline = test_now_ms() + 5000;

	TEST_ASSERT(m != NULL, "mbuf");
	while (rte_eth_tx_burst(port, 0, &m, 1) == 0) {
		if (test_now_ms() > deadline) {
			rte_pktmbuf_free(m);
			TEST_ASSERT(false, "frame never taken");
		}
	}
	return 0;
}
