/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * fuzz_frag: Ethernet frames too long for a UD path, through
 * ipoib_icmp_too_big() and ipoib_frag_ipv4().
 *
 * Input: 3 layout bytes (fuzz_mbuf.h), the path MTU (2 bytes, big-endian),
 * the room for fragments (1 byte), flags (bit 0: the pool of fragment
 * heads holds 2 mbufs, bit 1: so does the indirect pool), then the frame.
 *
 * Properties: the ICMP error never touches the frame, is one segment
 * within the 576 / 1280 bytes Linux quotes, with valid checksums, and
 * answers the original source; fragmentation either fails with the frame
 * as it was (but for trailing padding trimmed) and nothing to free, or
 * gives at most the room's fragments, each a well-formed chain within the
 * MTU with a valid header checksum, whose payloads put together are the
 * original payload; an MTU below 68 (RFC 791) is refused; no mbuf of any
 * pool is leaked.
 */

#include <errno.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "fuzz_mbuf.h"
#include "ipoib_compat.h"
#include "ipoib_frag.h"

#define HDR_LEN		(FUZZ_LAYOUT_LEN + 4)
#define ICMP4_ERR_MAX	576
#define ICMP6_ERR_MAX	1280
#define IPV4_MIN_MTU	68
#define MAX_OUT		256

static struct rte_mempool *pool, *direct, *indirect, *answers;
static struct rte_mempool *direct_tiny, *indirect_tiny;
static struct fuzz_snap snap;
static uint8_t bytes[FUZZ_MAX_FRAME];
static uint8_t joined[65536];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	RTE_SET_USED(argc);
	RTE_SET_USED(argv);
	fuzz_eal_init("fuzz_frag");
	pool = fuzz_pool("fz_frag", 256);
	direct = fuzz_pool("fz_direct", 512);
	direct_tiny = fuzz_pool("fz_direct2", 2);
	answers = fuzz_pool("fz_icmp", 64);
	indirect = rte_pktmbuf_pool_create("fz_indirect", 512, 0, 0, 0,
					   SOCKET_ID_ANY);
	indirect_tiny = rte_pktmbuf_pool_create("fz_indirect2", 2, 0, 0, 0,
						SOCKET_ID_ANY);
	FUZZ_CHECK(indirect != NULL && indirect_tiny != NULL);
	return 0;
}

static void
check_icmp(const struct rte_mbuf *r, const uint8_t *frame, size_t len)
{
	const uint8_t *p = rte_pktmbuf_mtod(r, const uint8_t *);

	FUZZ_CHECK(r->nb_segs == 1 && r->pkt_len == r->data_len);
	FUZZ_CHECK(len >= RTE_ETHER_HDR_LEN && r->pkt_len >= RTE_ETHER_HDR_LEN);
	/* same EtherType, back to the source */
	FUZZ_CHECK(memcmp(p + 12, frame + 12, 2) == 0);
	FUZZ_CHECK(memcmp(p, frame + 6, RTE_ETHER_ADDR_LEN) == 0);
	/* the input's headers by copy: they may sit at odd addresses */
	if (frame[12] == 0x08) {
		const struct rte_ipv4_hdr *ip = (const void *)(p + 14);
		struct rte_ipv4_hdr oip;

		memcpy(&oip, frame + 14, sizeof(oip));
		FUZZ_CHECK(r->pkt_len <= RTE_ETHER_HDR_LEN + ICMP4_ERR_MAX &&
			   r->pkt_len >= RTE_ETHER_HDR_LEN + sizeof(*ip) + 8);
		FUZZ_CHECK(rte_be_to_cpu_16(ip->total_length) ==
			   r->pkt_len - RTE_ETHER_HDR_LEN);
		FUZZ_CHECK(rte_raw_cksum(ip, sizeof(*ip)) == 0xffff);
		FUZZ_CHECK(rte_raw_cksum(ip + 1, r->pkt_len -
			   RTE_ETHER_HDR_LEN - sizeof(*ip)) == 0xffff);
		FUZZ_CHECK(ip->dst_addr == oip.src_addr);
		FUZZ_CHECK(p[14 + 20] == 3 && p[14 + 21] == 4);
	} else {
		const struct rte_ipv6_hdr *ip6 = (const void *)(p + 14);
		struct rte_ipv6_hdr oip6;

		memcpy(&oip6, frame + 14, sizeof(oip6));
		FUZZ_CHECK(r->pkt_len <= RTE_ETHER_HDR_LEN + ICMP6_ERR_MAX &&
			   r->pkt_len >= RTE_ETHER_HDR_LEN + sizeof(*ip6) + 8);
		FUZZ_CHECK(rte_be_to_cpu_16(ip6->payload_len) ==
			   r->pkt_len - RTE_ETHER_HDR_LEN - sizeof(*ip6));
		FUZZ_CHECK(rte_ipv6_udptcp_cksum_verify(ip6, ip6 + 1) == 0);
		FUZZ_CHECK(memcmp(IPOIB_IPV6_DST(ip6), IPOIB_IPV6_SRC(&oip6), 16) == 0);
		FUZZ_CHECK(p[14 + 40] == 2);
	}
}

/* Fragments: within the MTU, valid headers, the payload put together. */
static void
check_fragments(struct rte_mbuf **out, int n, uint16_t mtu,
		const uint8_t *frame)
{
	struct rte_ipv4_hdr oip;	/* a copy: it may sit at an odd address */
	unsigned int ohl, olen, ooff, got = 0;
	int i;

	memcpy(&oip, frame + 14, sizeof(oip));
	ohl = rte_ipv4_hdr_len(&oip);
	olen = rte_be_to_cpu_16(oip.total_length) - ohl;
	/* a fragment may be fragmented again: offsets from its own */
	ooff = (rte_be_to_cpu_16(oip.fragment_offset) &
		RTE_IPV4_HDR_OFFSET_MASK) * 8u;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *f = out[i];
		struct rte_ipv4_hdr ip;
		unsigned int hl, plen, off;

		fuzz_check_chain(f);
		FUZZ_CHECK(f->pkt_len <= RTE_ETHER_HDR_LEN + (uint32_t)mtu);
		FUZZ_CHECK(f->data_len >= RTE_ETHER_HDR_LEN + sizeof(ip));
		FUZZ_CHECK(memcmp(rte_pktmbuf_mtod(f, void *), frame,
				  RTE_ETHER_HDR_LEN) == 0);
		memcpy(&ip, rte_pktmbuf_mtod_offset(f, void *,
			RTE_ETHER_HDR_LEN), sizeof(ip));
		hl = rte_ipv4_hdr_len(&ip);
		FUZZ_CHECK(hl >= sizeof(ip) &&
			   f->data_len >= RTE_ETHER_HDR_LEN + hl);
		FUZZ_CHECK(rte_raw_cksum(rte_pktmbuf_mtod_offset(f, void *,
			   RTE_ETHER_HDR_LEN), hl) == 0xffff);
		FUZZ_CHECK(rte_be_to_cpu_16(ip.total_length) ==
			   f->pkt_len - RTE_ETHER_HDR_LEN);
		plen = f->pkt_len - RTE_ETHER_HDR_LEN - hl;
		off = (rte_be_to_cpu_16(ip.fragment_offset) &
		       RTE_IPV4_HDR_OFFSET_MASK) * 8u;
		FUZZ_CHECK(off >= ooff);
		off -= ooff;
		FUZZ_CHECK(off + plen <= olen);
		FUZZ_CHECK(fuzz_chain_bytes(f, bytes, f->pkt_len));
		memcpy(joined + off, bytes + RTE_ETHER_HDR_LEN + hl, plen);
		got += plen;
	}
	FUZZ_CHECK(got == olen);
	FUZZ_CHECK(memcmp(joined, frame + 14 + ohl, olen) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *in = data + FUZZ_LAYOUT_LEN;
	const uint8_t *frame = data + HDR_LEN;
	size_t len = size - HDR_LEN;
	struct rte_mbuf *out[MAX_OUT];
	struct rte_mempool *dp, *ip;
	struct rte_mbuf *m, *r;
	struct fuzz_layout lo;
	uint16_t mtu, nb_out;
	int n, i;

	if (size < HDR_LEN)
		return -1;
	fuzz_layout_get(&lo, data);
	mtu = (uint16_t)(in[0] << 8 | in[1]);
	nb_out = in[2];
	dp = (in[3] & 1) ? direct_tiny : direct;
	ip = (in[3] & 2) ? indirect_tiny : indirect;
	m = fuzz_chain(pool, &lo, frame, len);
	if (m == NULL)
		return -1;
	fuzz_snap_take(&snap, m);

	r = ipoib_icmp_too_big(m, mtu, answers);
	FUZZ_CHECK(fuzz_snap_same(&snap, m));
	if (r != NULL) {
		check_icmp(r, frame, len);
		rte_pktmbuf_free(r);
	}

	for (i = 0; i < MAX_OUT; i++)
		out[i] = NULL;
	n = ipoib_frag_ipv4(m, mtu, out, nb_out, dp, ip);
	FUZZ_CHECK(m->data_off == snap.data_off[0] && m == snap.seg[0]);
	if (n > 0) {
		FUZZ_CHECK(n <= nb_out && mtu >= IPV4_MIN_MTU);
		check_fragments(out, n, mtu, frame);
		rte_pktmbuf_free_bulk(out, n);
	} else {
		FUZZ_CHECK(n == -EBADMSG || n == -EPROTONOSUPPORT ||
			   n == -ENOTSUP || n == -EINVAL || n == -ENOMEM ||
			   n == -ENOSPC);
		/* nothing to free: the pool checks below see any leak */
		/* as it was, but for trailing padding */
		fuzz_check_chain(m);
		FUZZ_CHECK(m->pkt_len <= len);
		FUZZ_CHECK(fuzz_chain_bytes(m, bytes, m->pkt_len));
		FUZZ_CHECK(memcmp(bytes, frame, m->pkt_len) == 0);
	}
	rte_pktmbuf_free(m);
	fuzz_check_pool_full(pool);
	fuzz_check_pool_full(direct);
	fuzz_check_pool_full(direct_tiny);
	fuzz_check_pool_full(indirect);
	fuzz_check_pool_full(indirect_tiny);
	fuzz_check_pool_full(answers);
	return 0;
}
