/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Packets too long for the UD path: IPv4 fragmentation (checked by
 * reassembling with librte_ip_frag) and the ICMP errors Linux synthesizes.
 */

#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_ip_frag.h>
#include <rte_mbuf.h>

#include "ipoib_frag.h"
#include "test.h"
#include "test_pkt.h"

#define UD_MTU		2044	/* 2 KiB IB MTU - IPoIB header */
#define MAC_A		0x02, 0xaa, 0x00, 0x00, 0x00, 0x01
#define MAC_B		0x02, 0xbb, 0x00, 0x00, 0x00, 0x02

static const uint8_t mac_a[] = { MAC_A }, mac_b[] = { MAC_B };

/* IPv4/UDP from 10.0.0.1 to 10.0.0.2 (A to B), len bytes in all. */
static void
ipv4_udp(uint8_t *f, uint32_t len, uint8_t proto, uint16_t frag_off)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + 14);
	uint32_t i;

	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = 0x45;
	ip->type_of_service = 0x10;
	ip->total_length = rte_cpu_to_be_16(len - 14);
	ip->packet_id = rte_cpu_to_be_16(0x4321);
	ip->fragment_offset = rte_cpu_to_be_16(frag_off);
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->src_addr = RTE_BE32(0x0a000001);
	ip->dst_addr = RTE_BE32(0x0a000002);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	for (i = 34; i < len; i++)
		f[i] = (uint8_t)(i * 13 + i / 256);
}

static int
frag_check(struct rte_mbuf **out, int n, const uint8_t *orig)
{
	static const uint16_t want_len[] = { 2044, 2044, 2044, 2044, 904 };
	int i;

	TEST_ASSERT_EQ(n, 5, "9000-byte packet into 2024-byte pieces");
	for (i = 0; i < n; i++) {
		const struct rte_ipv4_hdr *ip;
		uint16_t fo, len;

		TEST_ASSERT(test_chain_ok(out[i]) == 0, "fragment %d chain", i);
		TEST_ASSERT(memcmp(rte_pktmbuf_mtod(out[i], void *), orig, 14)
			    == 0, "fragment %d Ethernet header", i);
		ip = rte_pktmbuf_mtod_offset(out[i], const struct rte_ipv4_hdr *,
					     14);
		len = rte_be_to_cpu_16(ip->total_length);
		fo = rte_be_to_cpu_16(ip->fragment_offset);
		printf("  fragment %d: %u bytes, offset %u, MF %u\n", i, len,
		       (fo & RTE_IPV4_HDR_OFFSET_MASK) * 8,
		       !!(fo & RTE_IPV4_HDR_MF_FLAG));
		TEST_ASSERT(len <= UD_MTU, "fragment %d longer than the MTU", i);
		TEST_ASSERT_EQ(len, want_len[i], "fragment %d length", i);
		TEST_ASSERT_EQ(out[i]->pkt_len, 14 + len, "");
		TEST_ASSERT_EQ(fo & RTE_IPV4_HDR_OFFSET_MASK, i * 2024 / 8, "");
		TEST_ASSERT_EQ(!!(fo & RTE_IPV4_HDR_MF_FLAG), i < n - 1, "MF");
		TEST_ASSERT_EQ(ip->packet_id, RTE_BE16(0x4321), "same ID");
		TEST_ASSERT_EQ(rte_raw_cksum(ip, sizeof(*ip)), 0xffff,
			       "fragment %d header checksum", i);
	}
	return 0;
}

/* Reassemble with librte_ip_frag; the result must be the original. */
static int
reassemble(struct rte_mbuf **out, int n, const uint8_t *orig, uint32_t len)
{
	struct rte_ip_frag_death_row dr = { 0 };
	struct rte_ip_frag_tbl *tbl;
	struct rte_mbuf *whole = NULL;
	struct rte_ipv4_hdr *ip;
	uint8_t *want;
	int i, ret;

	tbl = rte_ip_frag_table_create(16, 4, 16, rte_get_tsc_hz(),
				       SOCKET_ID_ANY);
	TEST_ASSERT(tbl != NULL, "no fragment table");
	/* Out of order on purpose: last first. */
	for (i = n - 1; i >= 0; i--) {
		out[i]->l2_len = 14;
		out[i]->l3_len = 20;
		ip = rte_pktmbuf_mtod_offset(out[i], struct rte_ipv4_hdr *, 14);
		whole = rte_ipv4_frag_reassemble_packet(tbl, &dr, out[i],
							rte_rdtsc(), ip);
		out[i] = NULL;
		if (whole != NULL)
			break;
	}
	rte_ip_frag_free_death_row(&dr, 0);
	rte_ip_frag_table_destroy(tbl);
	TEST_ASSERT(whole != NULL && i == 0, "not reassembled");
	/* The library leaves the header checksum to its caller. */
	ip = rte_pktmbuf_mtod_offset(whole, struct rte_ipv4_hdr *, 14);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	want = malloc(len);
	ret = want == NULL ? -1 : 0;
	if (ret == 0) {
		memcpy(want, orig, len);
		ret = test_frame_eq(whole, want, len);
		free(want);
	}
	rte_pktmbuf_free(whole);
	return ret;
}

static int
frag_9000(struct rte_mempool *mp, struct rte_mempool *mpi)
{
	static const uint16_t segs[] = { 2000 };
	enum { LEN = 14 + 9000 };
	struct rte_mbuf *m, *out[16];
	uint8_t *f;
	int n, ret;

	f = malloc(LEN);
	TEST_ASSERT(f != NULL, "");
	ipv4_udp(f, LEN, 17, 0);
	m = test_mbuf_segs(mp, f, LEN, segs, 1);
	if (m == NULL) {
		free(f);
		TEST_ASSERT(0, "no mbufs");
	}
	n = ipoib_frag_ipv4(m, UD_MTU, out, RTE_DIM(out), mp, mpi);
	ret = n > 0 ? frag_check(out, n, f) : -1;
	if (n > 0 && ret == 0)
		ret = reassemble(out, n, f, LEN);
	else if (n > 0)
		rte_pktmbuf_free_bulk(out, n);
	/* The original frame is intact for the caller to free. */
	if (ret == 0)
		ret = test_frame_eq(m, f, LEN);
	rte_pktmbuf_free(m);
	free(f);
	TEST_ASSERT(n > 0, "fragmentation failed: %d", n);
	return ret;
}

static int
frag_refusals(struct rte_mempool *mp, struct rte_mempool *mpi)
{
	struct rte_mbuf *m, *out[16];
	uint8_t f[3000];
	uint32_t len;

	ipv4_udp(f, sizeof(f), 17, RTE_IPV4_HDR_DF_FLAG);
	m = test_mbuf(mp, f, sizeof(f));
	TEST_ASSERT(m != NULL, "");
	TEST_ASSERT_EQ(ipoib_frag_ipv4(m, UD_MTU, out, 16, mp, mpi), -ENOTSUP,
		       "DF set");
	TEST_ASSERT_EQ(ipoib_frag_ipv4(m, UD_MTU, out, 1, mp, mpi), -ENOTSUP,
		       "");
	rte_pktmbuf_free(m);
	ipv4_udp(f, sizeof(f), 17, 0);
	m = test_mbuf(mp, f, sizeof(f));
	TEST_ASSERT(m != NULL, "");
	TEST_ASSERT_EQ(ipoib_frag_ipv4(m, UD_MTU, out, 1, mp, mpi), -EINVAL,
		       "room for 1 fragment only");
	rte_pktmbuf_free(m);
	for (len = 0; len < sizeof(f); len += len < 40 ? 1 : 997) {
		int ret;

		m = test_mbuf(mp, f, len);
		TEST_ASSERT(m != NULL, "");
		ret = ipoib_frag_ipv4(m, UD_MTU, out, 16, mp, mpi);
		rte_pktmbuf_free(m);
		TEST_ASSERT_EQ(ret, -EBADMSG, "truncated to %u", len);
	}
	f[12] = 0x86;
	f[13] = 0xdd;
	m = test_mbuf(mp, f, sizeof(f));
	TEST_ASSERT(m != NULL, "");
	TEST_ASSERT_EQ(ipoib_frag_ipv4(m, UD_MTU, out, 16, mp, mpi),
		       -EPROTONOSUPPORT, "IPv6");
	rte_pktmbuf_free(m);
	return 0;
}

static int
test_frag_ipv4(void)
{
	struct rte_mempool *mp = test_pool("t_frag");
	struct rte_mempool *mpi = test_pool("t_frag_ind");
	int ret = -1;

	if (mp != NULL && mpi != NULL) {
		ret = frag_9000(mp, mpi);
		if (ret == 0)
			ret = frag_refusals(mp, mpi);
	}
	TEST_RUN(test_pool_free(mp));
	TEST_RUN(test_pool_free(mpi));
	return ret;
}
REGISTER_TEST(frag_ipv4, test_frag_ipv4,
		    "9000-byte IPv4 fragmented to the UD MTU and reassembled");

/*
 * DF set, 3000 bytes: "fragmentation needed" from B's address to A, next-hop
 * MTU 2044, quoting 548 bytes (576-byte datagram, Linux icmp_send).
 */
static const uint8_t frag_needed_hdr[] = {
	MAC_A, MAC_B, 0x08, 0x00,
	0x45, 0xd0, 0x02, 0x40,		/* TOS 0x10 | 0xc0, length 576 */
	0x00, 0x00, 0x00, 0x00,		/* ID 0, no flags */
	0x40, 0x01, 0x63, 0xeb,		/* TTL 64, ICMP, header checksum */
	0x0a, 0x00, 0x00, 0x02,
	0x0a, 0x00, 0x00, 0x01,
	0x03, 0x04,			/* unreachable, fragmentation needed */
};
static const uint8_t frag_needed_mtu[] = { 0x00, 0x00, 0x07, 0xfc };

static int
too_big_ipv4(struct rte_mempool *mp)
{
	struct rte_mbuf *m, *r;
	uint8_t f[3014];
	const uint8_t *p;

	ipv4_udp(f, sizeof(f), 17, RTE_IPV4_HDR_DF_FLAG);
	m = test_mbuf_segs(mp, f, sizeof(f), (const uint16_t[]){ 1000 }, 1);
	TEST_ASSERT(m != NULL, "");
	r = ipoib_icmp_too_big(m, UD_MTU, mp);
	rte_pktmbuf_free(m);
	TEST_ASSERT(r != NULL, "no ICMP error");
	p = rte_pktmbuf_mtod(r, const uint8_t *);
	if (r->pkt_len != 14 + 576 || r->nb_segs != 1 ||
	    memcmp(p, frag_needed_hdr, sizeof(frag_needed_hdr)) != 0 ||
	    memcmp(p + 38, frag_needed_mtu, 4) != 0 ||
	    memcmp(p + 42, f + 14, 548) != 0 ||
	    rte_raw_cksum(p + 34, 556) != 0xffff) {
		test_hexdump("got", p, RTE_MIN(r->pkt_len, 80u));
		rte_pktmbuf_free(r);
		TEST_ASSERT(0, "ICMP fragmentation needed bytes");
	}
	rte_pktmbuf_free(r);

	/* A short packet is quoted whole. */
	ipv4_udp(f, 14 + 100, 17, RTE_IPV4_HDR_DF_FLAG);
	m = test_mbuf(mp, f, 14 + 100);
	TEST_ASSERT(m != NULL, "");
	r = ipoib_icmp_too_big(m, 68, mp);
	rte_pktmbuf_free(m);
	TEST_ASSERT(r != NULL, "");
	p = rte_pktmbuf_mtod(r, const uint8_t *);
	TEST_ASSERT_EQ(r->pkt_len, 14 + 20 + 8 + 100, "");
	TEST_ASSERT(p[16] == 0 && p[17] == 128, "total length 128");
	TEST_ASSERT(p[40] == 0 && p[41] == 68, "MTU 68");
	TEST_ASSERT(memcmp(p + 42, f + 14, 100) == 0, "");
	TEST_ASSERT_EQ(rte_raw_cksum(p + 14, 20), 0xffff, "IP checksum");
	TEST_ASSERT_EQ(rte_raw_cksum(p + 34, 108), 0xffff, "ICMP checksum");
	rte_pktmbuf_free(r);
	return 0;
}

/* No ICMP error for these (RFC 1122 s3.2.2). */
static int
too_big_ipv4_never(struct rte_mempool *mp)
{
	struct rte_mbuf *m, *r;
	uint8_t f[3014];
	unsigned int i;

	for (i = 0; i < 6; i++) {
		ipv4_udp(f, sizeof(f), 17, RTE_IPV4_HDR_DF_FLAG);
		if (i == 0) {		/* an ICMP error itself */
			ipv4_udp(f, sizeof(f), 1, RTE_IPV4_HDR_DF_FLAG);
			f[34] = 3;
		} else if (i == 1) {	/* a later fragment */
			ipv4_udp(f, sizeof(f), 17, 185);
		} else if (i == 2) {	/* to a group */
			f[30] = 239;
		} else if (i == 3) {	/* from no host */
			memset(f + 26, 0, 4);
		} else if (i == 4) {	/* ARP */
			f[13] = 0x06;
		} else {		/* ICMP of unknown type */
			ipv4_udp(f, sizeof(f), 1, RTE_IPV4_HDR_DF_FLAG);
			f[34] = 42;
		}
		m = test_mbuf(mp, f, sizeof(f));
		TEST_ASSERT(m != NULL, "");
		r = ipoib_icmp_too_big(m, UD_MTU, mp);
		rte_pktmbuf_free(m);
		if (r != NULL) {
			rte_pktmbuf_free(r);
			TEST_ASSERT(0, "answered case %u", i);
		}
	}
	/* An echo request is answered. */
	ipv4_udp(f, sizeof(f), 1, RTE_IPV4_HDR_DF_FLAG);
	f[34] = 8;
	m = test_mbuf(mp, f, sizeof(f));
	TEST_ASSERT(m != NULL, "");
	r = ipoib_icmp_too_big(m, UD_MTU, mp);
	rte_pktmbuf_free(m);
	TEST_ASSERT(r != NULL, "echo request not answered");
	rte_pktmbuf_free(r);
	return 0;
}

#define V6_A	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01
#define V6_B	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02

/* IPv6/UDP from 2001:db8::1 to dst, len bytes in all. */
static void
ipv6_udp(uint8_t *f, uint32_t len, uint8_t nh, const uint8_t *dst)
{
	static const uint8_t hdr[] = {
		MAC_B, MAC_A, 0x86, 0xdd,
		0x60, 0x01, 0x23, 0x45, 0x00, 0x00, 0x11, 0x40, V6_A,
	};
	uint32_t i;

	memcpy(f, hdr, sizeof(hdr));
	f[18] = (uint8_t)((len - 54) >> 8);
	f[19] = (uint8_t)(len - 54);
	f[20] = nh;
	memcpy(f + 38, dst, 16);
	for (i = 54; i < len; i++)
		f[i] = (uint8_t)(i * 11 + 5);
}

/* Packet too big from B's address to A: MTU 2044, 1232 bytes quoted. */
static const uint8_t pkt_too_big_hdr[] = {
	MAC_A, MAC_B, 0x86, 0xdd,
	0x60, 0x00, 0x00, 0x00,		/* version 6, class 0, flow 0 */
	0x04, 0xd8, 0x3a, 0x40,		/* 1240 bytes, ICMPv6, hop limit 64 */
	V6_B, V6_A,
	0x02, 0x00,			/* packet too big */
};

static int
too_big_ipv6(struct rte_mempool *mp)
{
	static const uint8_t b[] = { V6_B };
	static const uint8_t grp[] = {
		0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42,
	};
	const struct rte_ipv6_hdr *ip6;
	struct rte_mbuf *m, *r;
	uint8_t f[4000];
	const uint8_t *p;

	ipv6_udp(f, sizeof(f), 17, b);
	m = test_mbuf_segs(mp, f, sizeof(f), (const uint16_t[]){ 1500 }, 1);
	TEST_ASSERT(m != NULL, "");
	r = ipoib_icmp_too_big(m, UD_MTU, mp);
	rte_pktmbuf_free(m);
	TEST_ASSERT(r != NULL, "no ICMPv6 error");
	p = rte_pktmbuf_mtod(r, const uint8_t *);
	ip6 = (const struct rte_ipv6_hdr *)(p + 14);
	if (r->pkt_len != 14 + 1280 || r->nb_segs != 1 ||
	    memcmp(p, pkt_too_big_hdr, sizeof(pkt_too_big_hdr)) != 0 ||
	    memcmp(p + 58, (const uint8_t[]){ 0, 0, 0x07, 0xfc }, 4) != 0 ||
	    memcmp(p + 62, f + 14, 1232) != 0 ||
	    rte_ipv6_udptcp_cksum_verify(ip6, ip6 + 1) != 0) {
		test_hexdump("got", p, RTE_MIN(r->pkt_len, 80u));
		rte_pktmbuf_free(r);
		TEST_ASSERT(0, "ICMPv6 packet too big bytes");
	}
	rte_pktmbuf_free(r);

	/* To a group (allowed, RFC 4443 s2.4(e.3)): the host answers itself. */
	ipv6_udp(f, 3000, 17, grp);
	memcpy(f, (const uint8_t[]){ 0x33, 0x33, 0, 0, 0, 0x42 }, 6);
	m = test_mbuf(mp, f, 3000);
	TEST_ASSERT(m != NULL, "");
	r = ipoib_icmp_too_big(m, UD_MTU, mp);
	rte_pktmbuf_free(m);
	TEST_ASSERT(r != NULL, "group destination not answered");
	p = rte_pktmbuf_mtod(r, const uint8_t *);
	TEST_ASSERT(memcmp(p + 6, mac_a, 6) == 0, "source MAC is unicast");
	TEST_ASSERT(memcmp(p + 22, (const uint8_t[]){ V6_A }, 16) == 0, "");
	ip6 = (const struct rte_ipv6_hdr *)(p + 14);
	TEST_ASSERT(rte_ipv6_udptcp_cksum_verify(ip6, ip6 + 1) == 0, "");
	rte_pktmbuf_free(r);

	/* ICMPv6 errors are never answered (RFC 4443 s2.4(e.1)); echo is. */
	ipv6_udp(f, 3000, 58, b);
	f[54] = 1;
	m = test_mbuf(mp, f, 3000);
	TEST_ASSERT(m != NULL, "");
	r = ipoib_icmp_too_big(m, UD_MTU, mp);
	TEST_ASSERT(r == NULL, "answered an ICMPv6 error");
	rte_pktmbuf_mtod(m, uint8_t *)[54] = 128;
	r = ipoib_icmp_too_big(m, UD_MTU, mp);
	rte_pktmbuf_free(m);
	TEST_ASSERT(r != NULL, "echo request not answered");
	rte_pktmbuf_free(r);
	/* Behind a hop-by-hop header: still an ICMPv6 error. */
	ipv6_udp(f, 3000, 0, b);
	memcpy(f + 54, (const uint8_t[]){ 58, 0, 1, 4, 0, 0, 0, 0, 2, 0 }, 10);
	m = test_mbuf(mp, f, 3000);
	TEST_ASSERT(m != NULL, "");
	r = ipoib_icmp_too_big(m, UD_MTU, mp);
	rte_pktmbuf_free(m);
	TEST_ASSERT(r == NULL, "answered an ICMPv6 error after HBH");
	return 0;
}

static int
test_frag_icmp(void)
{
	struct rte_mempool *mp = test_pool("t_icmp");
	int ret;

	TEST_ASSERT(mp != NULL, "no pool");
	ret = too_big_ipv4(mp);
	if (ret == 0)
		ret = too_big_ipv4_never(mp);
	if (ret == 0)
		ret = too_big_ipv6(mp);
	TEST_RUN(test_pool_free(mp));
	return ret;
}
REGISTER_TEST(frag_icmp, test_frag_icmp,
		    "ICMP fragmentation needed / ICMPv6 packet too big");

/* xorshift64*: a fixed sequence, so a failure can be replayed. */
static uint64_t
fuzz_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* An answer, if any, has correct checksums and fits its limit. */
static int
fuzz_check_answer(const struct rte_mbuf *r)
{
	const uint8_t *p = rte_pktmbuf_mtod(r, const uint8_t *);

	if (r->nb_segs != 1 || r->pkt_len < 14 + 28)
		return -1;
	if (p[12] == 0x08)
		return r->pkt_len <= 14 + 576 &&
		       rte_raw_cksum(p + 14, 20) == 0xffff &&
		       rte_raw_cksum(p + 34, r->pkt_len - 34) == 0xffff ? 0 : -1;
	return r->pkt_len <= 14 + 1280 &&
	       rte_ipv6_udptcp_cksum_verify((const void *)(p + 14),
					    p + 54) == 0 ? 0 : -1;
}

/* Fragments of an accepted frame fit the MTU. */
static int
fuzz_check_frags(struct rte_mbuf **out, int n, uint16_t mtu)
{
	int i, ret = 0;

	for (i = 0; i < n; i++) {
		if (test_chain_ok(out[i]) != 0 || out[i]->pkt_len > 14u + mtu)
			ret = -1;
		rte_pktmbuf_free(out[i]);
	}
	return ret;
}

static int
fuzz_frag_run(struct rte_mempool *mp, struct rte_mempool *mpi,
	      unsigned int iters)
{
	static const uint8_t b6[] = { V6_B };
	static uint8_t seed4[3014], seed6[3014], buf[3100];
	uint64_t s = 0x4d4d3c3c2b2b1b1bULL;
	unsigned int it, answered = 0, split = 0;

	ipv4_udp(seed4, sizeof(seed4), 17, 0);
	ipv6_udp(seed6, sizeof(seed6), 58, b6);
	seed6[54] = 128;
	for (it = 0; it < iters; it++) {
		const uint8_t *seed = fuzz_rand(&s) % 2 ? seed4 : seed6;
		uint16_t seg = (uint16_t)(64 + fuzz_rand(&s) % 1984);
		uint16_t mtu = (uint16_t)(fuzz_rand(&s) % 4096);
		struct rte_mbuf *m, *r, *out[64];
		uint32_t len = sizeof(seed4), i, n;
		int ret = 0, nf;

		memcpy(buf, seed, len);
		for (n = fuzz_rand(&s) % 6, i = 0; i < n; i++)
			buf[fuzz_rand(&s) % 80] = (uint8_t)fuzz_rand(&s);
		if (fuzz_rand(&s) % 3 == 0)
			len = fuzz_rand(&s) % (len + 1);
		m = test_mbuf_segs(mp, buf, len, &seg, 1);
		TEST_ASSERT(m != NULL, "no mbufs at %u", it);
		r = ipoib_icmp_too_big(m, mtu, mp);
		if (r != NULL) {
			answered++;
			ret = fuzz_check_answer(r);
			rte_pktmbuf_free(r);
		}
		nf = ipoib_frag_ipv4(m, mtu, out, RTE_DIM(out), mp, mpi);
		if (nf > 0) {
			split++;
			if (fuzz_check_frags(out, nf, mtu) != 0)
				ret = -1;
		}
		rte_pktmbuf_free(m);
		TEST_ASSERT(ret == 0, "iteration %u", it);
	}
	printf("  %u frames: %u answered, %u fragmented\n", iters, answered,
	       split);
	return 0;
}

static int
test_frag_fuzz_smoke(void)
{
	struct rte_mempool *mp = test_pool("t_frag_fuzz");
	struct rte_mempool *mpi = test_pool("t_frag_fuzz_ind");
	int ret = -1;

	if (mp != NULL && mpi != NULL)
		ret = fuzz_frag_run(mp, mpi, 5000);
	TEST_RUN(test_pool_free(mp));
	TEST_RUN(test_pool_free(mpi));
	return ret;
}
REGISTER_TEST(frag_fuzz_smoke, test_frag_fuzz_smoke,
		    "mutated frames through fragmentation and ICMP synthesis");
