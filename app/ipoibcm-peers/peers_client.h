/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef PEERS_CLIENT_H
#define PEERS_CLIENT_H

/*
 * peers_client: the peer emulator's test client. Its fabric side (ports,
 * queues, CM, polling), the requests it sends and the replies it checks,
 * shared by the scenarios in peers_client.c.
 */

#include <stdbool.h>
#include <stdint.h>

#include "ipoib_util.h"
#include "ipoib_wire.h"
#include "peers_pkt.h"
#include "shm_fabric.h"

#define CL_PROG			"peers_client"
#define CL_MAX_PORTS		8
#define CL_MAX_CONNS		64
#define CL_MAX_REQS		64
#define CL_UD_BUFS		1024
#define CL_RC_BUFS		64
#define CL_BURST		64
#define CL_UDP_SRC		40000
#define CL_UDP_DST		7
#define CL_ICMP_ID		0x4950
#define CL_TAG_LEN		12	/* "PEER", index, sequence */
#define CL_BIG_ECHO		4000	/* fragmented on UD */
#define CL_RC_BIG		60000	/* one RC message */

#define CL_WR_UD		1ULL
#define CL_WR_RC		2ULL

enum cl_conn_state {
	CL_FREE,
	CL_CONNECTING,
	CL_UP,
	CL_REJECTED,
	CL_FAILED,
	CL_CLOSED,
	CL_REQ_SEEN,		/* passive, left unanswered */
};

struct cl_port {
	struct shm_port *port;
	struct shm_qp *ud;
	uint32_t qpn;
	uint16_t lid;
	uint8_t gid[IPOIB_GID_LEN];
	struct ipoib_hwaddr hw;
	uint32_t ip;
};

struct cl_conn {
	enum cl_conn_state state;
	bool active;
	int port;
	struct shm_qp *qp;
	struct shm_cm_id *id;
	uint16_t reason;
	uint32_t rep_qpn, rep_mtu;
	bool fatal;
};

struct cl_host {
	struct ipoib_hwaddr hw;
	bool arp, ping, udp, ping6, udp6, nd, frag;
	uint32_t nas;			/* Neighbor Advertisements */
	uint32_t rc_replies, ud_replies;
	uint32_t big_rc, big_ud;	/* replies of CL_RC_BIG bytes */
};

struct cl {
	/* command line */
	char fabric[SHM_FABRIC_NAME_MAX + 1];
	uint32_t hosts, first_ip, client_ip;
	uint8_t prefix[16];
	unsigned int plen;
	uint64_t guid_base;
	uint16_t ib_mtu;
	double timeout;
	/* fabric */
	struct shm_fabric *f;
	struct cl_port ports[CL_MAX_PORTS];
	int nports;
	struct shm_cq *cq;
	struct shm_rq *ud_srq, *rc_srq;
	struct shm_mem ud_mem, rc_mem;
	uint32_t ud_stride, rc_stride;
	struct cl_conn conns[CL_MAX_CONNS];
	/* active side: service ID base and RNR retry count of our REQs */
	uint64_t sid;
	uint8_t req_rnr;
	uint32_t rep_mtu;		/* passive: the MTU our REPs advertise */
	uint32_t req_mtu;		/* active: the MTU our REQs advertise */
	uint8_t req_priv_len;		/* active: private data bytes */
	bool ud_global;			/* our unicast UD with a GRH */
	/* UD frames received with and without a GRH */
	uint64_t ud_grh, ud_nogrh;
	/* passive side: REJ reason for REQs (-1 accept, 0 ignore) */
	int req_policy;
	double req_at[CL_MAX_REQS];
	int nreqs;
	int want_reqs;			/* backoff: stop after so many, or 0 */
	bool cm_hold;			/* cl_poll() leaves CM events queued */
	uint64_t t0;
	struct cl_host *h;
	unsigned int bad;
	/* reassembly of one fragmented IPv4 datagram */
	uint16_t ra_id;
	uint32_t ra_src;
	uint32_t ra_total;	/* payload bytes; 0: last not seen */
	uint32_t ra_have;
	uint8_t ra_hdr[PK_IPV4_HLEN];
	uint8_t ra_buf[65536];
	uint8_t ra_map[65536 / 8];
	uint8_t tx[65600];
};

/* peers_client_fabric.c */
double cl_secs(const struct cl *C);
void cl_nap(void);
void cl_bad(struct cl *C, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cl_host_ipv6(const struct cl *C, uint32_t ip, uint8_t *a);
int cl_open(struct cl *C, int nports);
void cl_close(struct cl *C);
void cl_send_ud(struct cl *C, int port, const struct ipoib_hwaddr *to,
		uint16_t type, const uint8_t *pkt, uint32_t len);
void cl_send_mcast(struct cl *C, int port, const uint8_t *mgid,
		   uint16_t type, const uint8_t *pkt, uint32_t len);
bool cl_send_rc(struct cl_conn *c, uint16_t type, const uint8_t *pkt,
		uint32_t len);
int cl_conn_new(struct cl *C);
/* One round of completions, CM and async events: the completions. */
unsigned int cl_poll(struct cl *C);

/* peers_client_pkt.c */
uint32_t cl_arp_req(struct cl *C, int port, uint32_t idx);
uint32_t cl_echo4(struct cl *C, int port, uint32_t idx, uint32_t seq,
		  uint32_t len);
uint32_t cl_udp4(struct cl *C, int port, uint32_t idx, uint32_t seq,
		 uint32_t len);
uint32_t cl_echo6(struct cl *C, int port, uint32_t idx, uint32_t seq,
		  uint32_t len, bool udp);
uint32_t cl_ns(struct cl *C, int port, uint32_t idx, bool to_group);
void cl_send_frags(struct cl *C, int port, const struct ipoib_hwaddr *to,
		   uint32_t len);
void cl_rx(struct cl *C, int port, bool rc, uint32_t src_qp,
	   const uint8_t *sgid, bool mcast, const uint8_t *frame,
	   uint32_t len);

#endif /* PEERS_CLIENT_H */
