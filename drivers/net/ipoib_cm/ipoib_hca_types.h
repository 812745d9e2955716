/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_HCA_TYPES_H
#define IPOIB_HCA_TYPES_H

/*
 * The types an HCA speaks, defined once for the driver's HCA interface
 * (ipoib_hca.h), the shm fabric (shm/shm_fabric.h) and the peer emulator.
 * No EAL and no DPDK header: the fabric is built without them. Values the
 * IBTA specification (Volume 1) defines are its values.
 */

#include <stdbool.h>
#include <stdint.h>

#define IPOIB_GID_LEN		16
#define IPOIB_GRH_LEN		40	/* the IBTA Global Route Header */
/* RFC 4391 s6: EtherType + reserved, what an IPoIB payload starts with */
#define IPOIB_HDR_LEN		4
#define IPOIB_PKEY_TABLE_LEN	16
#define IPOIB_MAX_SGE		34	/* 65524 bytes in 2 KiB segments + GRH */
#define IPOIB_CM_PRIV_MAX	92	/* REQ private data, IBTA 12.6.5 */
#define IPOIB_QPN_MASK		0xffffff	/* QPNs are 24 bits */
#define IPOIB_MCAST_QPN		0xffffff	/* IBTA: the multicast QPN */
#define IPOIB_RNR_RETRY_FOREVER	7	/* IBTA: an RNR retry count of 7 */

/* An MTU of an IB link or multicast group: 256 to 4096, a power of two. */
static inline bool
ipoib_ib_mtu_valid(uint32_t mtu)
{
	return mtu >= 256 && mtu <= 4096 && (mtu & (mtu - 1)) == 0;
}

/* A scatter/gather element: laid out as rdma-core's struct ibv_sge. */
struct ipoib_sge {
	uint64_t addr;			/* virtual address in this process */
	uint32_t length;
	uint32_t lkey;
};

/* A receive WR: what the driver posts, as the transports take it. */
struct ipoib_recv_wr {
	uint64_t wr_id;
	uint16_t num_sge;
	struct ipoib_sge sg_list[IPOIB_MAX_SGE];
};

enum ipoib_wc_status {
	IPOIB_WC_SUCCESS = 0,
	IPOIB_WC_LOC_LEN_ERR,		/* message longer than the buffer */
	IPOIB_WC_WR_FLUSH_ERR,		/* QP or SRQ torn down */
	IPOIB_WC_GENERAL_ERR,
};

#define IPOIB_WC_GRH		0x1	/* buffer starts with a GRH */

/* A receive completion. */
struct ipoib_wc {
	uint64_t wr_id;
	uint32_t byte_len;		/* GRH included when present */
	uint32_t qp_num;		/* local QP that received */
	uint32_t src_qp;
	uint32_t qp_context;		/* given when the QP was created */
	uint16_t slid;
	uint8_t status;			/* enum ipoib_wc_status */
	uint8_t wc_flags;		/* IPOIB_WC_* */
};

/* Connection management events, at the level of librdmacm / ib_cm. */
enum ipoib_cm_event_type {
	IPOIB_CM_REQ_RCVD,	/* passive: a REQ on a listened service ID */
	IPOIB_CM_REP_RCVD,	/* active: REP; answer with an RTU or a REJ */
	IPOIB_CM_ESTABLISHED,	/* passive: RTU received (QP in RTS) */
	IPOIB_CM_REJ_RCVD,	/* either side: the peer rejected */
	IPOIB_CM_TIMEOUT,	/* REQ or REP unanswered after all retries */
	IPOIB_CM_DREQ_RCVD,	/* peer disconnects; DREP already sent */
	IPOIB_CM_DISCONNECTED,	/* our DREQ answered, or timed out */
};

/*
 * CM messages (IBTA 12.6.5 REQ, 12.6.7 REJ, 12.6.8 REP, 12.6.9 RTU,
 * 12.6.10 DREQ, 12.6.11 DREP), numbered as the fault settings name them.
 */
#define IPOIB_CM_MSG_REQ	1
#define IPOIB_CM_MSG_REP	2
#define IPOIB_CM_MSG_REJ	3
#define IPOIB_CM_MSG_RTU	4
#define IPOIB_CM_MSG_DREQ	5
#define IPOIB_CM_MSG_DREP	6

/* REJ reasons IPoIB uses (IBTA 12.6.7.2, Rejection Reason). */
#define IPOIB_REJ_NO_QP			1
#define IPOIB_REJ_NO_RESOURCES		3
#define IPOIB_REJ_TIMEOUT		4
#define IPOIB_REJ_INVALID_SERVICE_ID	8
#define IPOIB_REJ_STALE_CONN		10
#define IPOIB_REJ_CONSUMER		28

/*
 * Receive-side scaling of a UD QP (ops->ud_rss_set()): the Toeplitz hash
 * of a 40-byte key over what the types name, as a NIC's RSS: an IPv4 or
 * IPv6 packet by its source and destination addresses, and by its source
 * and destination ports too when it is TCP or UDP (not a fragment) and
 * that type is on. A packet no type covers stays on the QP's own queue.
 */
#define IPOIB_RSS_KEY_LEN	40
#define IPOIB_RSS_IPV4		(1u << 0)
#define IPOIB_RSS_IPV4_TCP	(1u << 1)
#define IPOIB_RSS_IPV4_UDP	(1u << 2)
#define IPOIB_RSS_IPV6		(1u << 3)
#define IPOIB_RSS_IPV6_TCP	(1u << 4)
#define IPOIB_RSS_IPV6_UDP	(1u << 5)

struct ipoib_rss_conf {
	uint8_t key[IPOIB_RSS_KEY_LEN];
	uint32_t types;			/* IPOIB_RSS_* */
};

/*
 * Fault injection on what a port receives (tests): set from devargs, by
 * rte_pmd_ipoibcm_faults_set(), or on a fabric port directly.
 */
struct ipoib_faults {
	uint32_t drop_ppm;		/* UD and CM messages dropped, per 1e6 */
	uint32_t cm_delay_ms;		/* CM messages held this long */
	int32_t rej_after;		/* -1 off; REJ REQs beyond N conns */
	uint32_t cm_drop_mask;		/* 1 << IPOIB_CM_MSG_*: all dropped */
	bool port_down;			/* the port's link is down */
	uint32_t ud_send_refuse;	/* UD send WRs to refuse (queue full) */
	uint32_t sa_drop_ppm;		/* SA requests never answered, per 1e6 */
	bool ah_hold;			/* ah_create waits while set */
};

#endif /* IPOIB_HCA_TYPES_H */
