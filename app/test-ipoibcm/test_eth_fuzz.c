/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Robustness of the Ethernet emulation: mutated reference frames
 * (test_framing.h).
 */

#include <errno.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "test.h"
#include "test_framing.h"
#include "test_pkt.h"

/* xorshift64*: a fixed sequence, so a failure can be replayed. */
static uint64_t
fuzz_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* Resolves about half the MACs there are, to reach both outcomes. */
static int
fuzz_resolve(void *arg, const struct rte_ether_addr *mac,
	     struct ipoib_hwaddr *ha)
{
	RTE_SET_USED(arg);
	if (mac->addr_bytes[5] & 1)
		return -ENOENT;
	memcpy(ha, b_hw, sizeof(*ha));
	return 0;
}

struct fuzz_seed {
	const uint8_t *f;
	uint32_t len;
	bool encap;
};

/* A frame from sd with random changes: bytes, length, segments, room. */
static struct rte_mbuf *
fuzz_frame(struct rte_mempool *mp, const struct fuzz_seed *sd, uint64_t *s,
	   uint8_t *buf, uint32_t *len)
{
	uint16_t segs[2];
	struct rte_mbuf *m;
	unsigned int i, n;

	*len = sd->len;
	memcpy(buf, sd->f, sd->len);
	n = fuzz_rand(s) % 4;
	for (i = 0; i < n; i++)
		buf[fuzz_rand(s) % sd->len] = (uint8_t)fuzz_rand(s);
	if (fuzz_rand(s) % 4 == 0)
		*len = fuzz_rand(s) % (sd->len + 1);
	else if (fuzz_rand(s) % 4 == 0)
		for (n = fuzz_rand(s) % 64; n > 0; n--)
			buf[(*len)++] = (uint8_t)fuzz_rand(s);
	segs[0] = (uint16_t)(1 + fuzz_rand(s) % (*len + 1));
	segs[1] = (uint16_t)(1 + fuzz_rand(s) % 64);
	m = test_mbuf_segs(mp, buf, *len, segs, fuzz_rand(s) % 2 ? 2 : 0);
	if (m != NULL && m->nb_segs == 1 && fuzz_rand(s) % 4 == 0) {
		/*
		 * Against the end of the buffer (no tailroom) or near its
		 * start (headroom 10 or 11 bytes), at either alignment.
		 */
		uint16_t off = sd->encap ? m->buf_len - m->data_len :
			IPOIB_GRH_LEN - IPOIB_HDR_LEN - 26;

		off -= (uint16_t)(sd->encap && off > 0 ? fuzz_rand(s) % 2 : 0);
		off += (uint16_t)(sd->encap ? 0 : fuzz_rand(s) % 2);

		memmove((uint8_t *)m->buf_addr + off, rte_pktmbuf_mtod(m, void *),
			m->data_len);
		m->data_off = off;
	}
	return m;
}

static int
fuzz_run(struct rte_mempool *mp, unsigned int iters)
{
	static const uint8_t amac[] = { A_MAC }, bmac_a[] = { B_MAC_A };
	static uint8_t f4[90], f4ib[80], buf[256];
	const struct fuzz_seed seeds[] = {
		{ arp_req_eth, sizeof(arp_req_eth), true },
		{ arp_rep_eth, sizeof(arp_rep_eth), true },
		{ ns_eth, sizeof(ns_eth), true },
		{ na_eth, sizeof(na_eth), true },
		{ redirect_eth, sizeof(redirect_eth), true },
		{ f4, sizeof(f4), true },
		{ arp_req_ib, sizeof(arp_req_ib), false },
		{ arp_rep_ib, sizeof(arp_rep_ib), false },
		{ ns_ib, sizeof(ns_ib), false },
		{ na_ib, sizeof(na_ib), false },
		{ f4ib, sizeof(f4ib), false },
	};
	unsigned int it, ok = 0;
	struct node a, b;
	uint64_t s = 0x1b1b2b2b3c3c4d4dULL;

	nodes_init(&a, &b);
	a.ctx.resolve = fuzz_resolve;
	ipv4_frame(f4, sizeof(f4), bmac_a, amac, 0x0a000001, 0xe0000001);
	memcpy(f4ib, (const uint8_t[]){ 0x08, 0x00, 0x00, 0x00 }, 4);
	memcpy(f4ib + 4, f4 + 14, sizeof(f4) - 14);
	for (it = 0; it < iters; it++) {
		const struct fuzz_seed *sd = &seeds[fuzz_rand(&s) % RTE_DIM(seeds)];
		struct ipoib_hwaddr src;
		struct ipoib_tx_dst dst;
		struct ipoib_learn l;
		struct rte_mbuf *m;
		uint32_t len;
		int ret;

		m = fuzz_frame(mp, sd, &s, buf, &len);
		TEST_ASSERT(m != NULL, "no mbufs at %u", it);
		ud_src(&src, a_hw);
		if (sd->encap)
			ret = ipoib_eth_encap(m, &a.ctx, &dst);
		else
			ret = ipoib_eth_decap(m, &src, fuzz_rand(&s) % 2, &b.ctx,
					      &l);
		if (ret == 0) {
			ok++;
			ret = test_chain_ok(m);
		} else if (test_frame_eq(m, buf, len) != 0 ||
			   (!sd->encap && l.valid)) {
			ret = -1;
		} else {
			ret = 0;
		}
		rte_pktmbuf_free(m);
		TEST_ASSERT(ret == 0, "iteration %u", it);
	}
	printf("  %u frames, %u accepted\n", iters, ok);
	return 0;
}

static int
test_eth_fuzz_smoke(void)
{
	struct rte_mempool *mp = test_pool("t_eth_fuzz");
	int ret;

	TEST_ASSERT(mp != NULL, "no pool");
	ret = fuzz_run(mp, 50000);
	TEST_RUN(test_pool_free(mp));
	return ret;
}
REGISTER_TEST(eth_fuzz_smoke, test_eth_fuzz_smoke,
		    "mutated frames: no stray access, refusals leave m as it was");
