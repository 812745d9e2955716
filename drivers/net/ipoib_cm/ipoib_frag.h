/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_FRAG_H
#define IPOIB_FRAG_H

/*
 * Packets longer than the UD path's MTU, handled as the Linux driver does
 * (ipoib_cm_skb_too_long): IPv4 without DF is fragmented; IPv4 with DF and
 * IPv6 get an ICMP "fragmentation needed" / "packet too big" back.
 */

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

/*
 * Fragment the Ethernet frame m (IPv4, DF clear) into IP packets of at most
 * mtu bytes, each an Ethernet frame with a copy of m's Ethernet header, put
 * in out[0..n). Fragment heads come from direct, the payload is referenced
 * through indirect mbufs from indirect. m is not consumed (the caller frees
 * it) but its trailing padding may be trimmed.
 *
 * Returns the number of fragments, or -EBADMSG (malformed), -EPROTONOSUPPORT
 * (not IPv4), -ENOTSUP (DF set), -EINVAL (mtu < 68, nb_out too small),
 * -ENOMEM or -ENOSPC (no mbufs or headroom); nothing is in out[] then.
 */
int ipoib_frag_ipv4(struct rte_mbuf *m, uint16_t mtu, struct rte_mbuf **out,
		    uint16_t nb_out, struct rte_mempool *direct,
		    struct rte_mempool *indirect);

/*
 * The ICMP error the application receives for the Ethernet frame m that
 * does not fit the path MTU mtu: IPv4 destination unreachable/fragmentation
 * needed (RFC 1191) or ICMPv6 packet too big (RFC 4443 s3.2), quoting as
 * much of m as Linux icmp_send/icmp6_send do (576 / 1280 bytes in all), from
 * the original destination to the original source. One segment from mp.
 *
 * Returns NULL on allocation failure, for frames that are not IPv4/IPv6,
 * and for those RFC 1122 s3.2.2 / RFC 4443 s2.4(e) forbid answering (ICMP
 * errors, non-first fragments, non-unicast sources, IPv4 multicast).
 */
struct rte_mbuf *ipoib_icmp_too_big(const struct rte_mbuf *m, uint16_t mtu,
				    struct rte_mempool *mp);

#endif /* IPOIB_FRAG_H */
