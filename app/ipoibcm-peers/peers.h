/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef PEERS_H
#define PEERS_H

/*
 * dpdk-ipoibcm-peers: one process that joins an shm fabric as up to 10,000
 * emulated IPoIB hosts. Each host has its own port (GID, LID), UD QP and
 * address record, and answers ARP, Neighbor Solicitation, ICMP echo and
 * UDP; it accepts connected-mode connections per --accept and, with
 * --connect, opens its own connection to the peers it sends to (the Linux
 * model: a connection carries one direction).
 *
 * To scale, the hosts share one CQ and two SRQs (datagram buffers and
 * connected-mode buffers): the datapath cost does not grow with the host
 * count. The process is single-threaded: the main loop polls the CQ every
 * turn and the CM and async events of a slice of the ports, round-robin.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ipoib_util.h"
#include "ipoib_wire.h"
#include "shm_fabric.h"

#define PEERS_PROG		"dpdk-ipoibcm-peers"
#define PEERS_MAX_HOSTS		10000
#define PEERS_DEF_GUID_BASE	0x0002c9fe00000000ULL
#define PEERS_DEF_IPV4		0x0a000064	/* 10.0.0.100 */
#define PEERS_DEF_MTU		IPOIB_CM_MTU

/* Receive buffers: every host's share of a broadcast must find one. */
#define PEERS_UD_BUFS_MIN	2048
#define PEERS_RC_BUFS		256
#define PEERS_BURST		64
/*
 * The main loop naps when it found nothing to do: 100 us at first, longer
 * (up to 1 ms) while nothing happens. It polls the CM (and async events)
 * of a slice of the ports per turn, at least 64, enough that every port
 * is polled every 40 ms whatever the nap: a REQ is answered well within
 * the CM response timeout (100 ms) without polling 10,000 ports a turn.
 */
#define PEERS_PORT_SLICE	64
#define PEERS_NAP_MIN_NS	100000
#define PEERS_NAP_MAX_NS	1000000
#define PEERS_NAP_GROW_LOOPS	32	/* idle turns before a longer nap */
#define PEERS_SWEEP_NS		40000000
/*
 * Solicited-node groups joined: the fabric's groups but the two every host
 * joins and 16 left for others (the usage text states the number).
 */
#define PEERS_SOL_GROUPS	(SHM_MAX_MCGS - 2 - 16)

/* Active side, as Linux: REQ retried 15 times; our backoff after refusal. */
#define PEERS_CM_RETRIES	15
#define PEERS_BACKOFF_MIN_MS	100
#define PEERS_BACKOFF_MAX_MS	5000

/* qp_context of RC QPs: flag, generation, connection index. */
#define PEERS_CTX_RC		0x80000000u
#define PEERS_CTX_GEN_SHIFT	22
#define PEERS_CTX_GEN_MASK	0xffu
#define PEERS_CTX_IDX_MASK	((1u << PEERS_CTX_GEN_SHIFT) - 1)

/* wr_id: which buffer pool in the upper half, buffer index below. */
#define PEERS_WR_UD		1ULL
#define PEERS_WR_RC		2ULL
#define PEERS_WR_KIND_SHIFT	32

enum peers_accept {
	PEERS_ACCEPT_ALL,	/* every REQ gets a REP */
	PEERS_ACCEPT_NONE,	/* REJ, reason 28 (consumer) */
	PEERS_ACCEPT_LIMIT,	/* REP up to N live per host, then REJ 1 */
	PEERS_ACCEPT_UD,	/* no connected mode: flags 0, no listen */
};

/*
 * Whose wire behaviour the hosts have (--personality). default: this
 * emulator's own (listens on both service IDs, REQ rnr_retry 7, UD with a
 * GRH, replies on UD while connecting). linux and illumos: those systems',
 * from their sources (peers_persona.c says which lines).
 */
enum peers_persona {
	PEERS_PERSONA_DEFAULT,
	PEERS_PERSONA_LINUX,
	PEERS_PERSONA_ILLUMOS,
};

/* Linux ipoib.h IPOIB_MAX_PATH_REC_QUEUE: packets held per neighbour. */
#define PEERS_LINUX_QUEUE	3
/* illumos ibd_cm.c: a failed OFED-ID connect is tried again this late. */
#define PEERS_ILLUMOS_RETRY_NS	(10 * IPOIB_NS_PER_MS)

struct peers_conf {
	char fabric[SHM_FABRIC_NAME_MAX + 1];
	uint32_t hosts;
	uint64_t guid_base;
	uint32_t ipv4;			/* host order: host 0 */
	uint8_t ipv6_prefix[16];
	unsigned int ipv6_plen;
	uint16_t pkey;
	uint16_t ib_mtu;
	uint32_t mtu;			/* connected-mode MTU, without header */
	enum peers_accept accept;
	uint32_t accept_limit;
	bool connect;
	enum peers_persona persona;
	double idle_after;		/* seconds; 0: never */
	double die_after;
	double duration;
	double report_interval;
	const char *json;
	bool quiet;
};

struct peers_stats {
	uint64_t ud_rx;		/* datagrams for this host */
	uint64_t ud_tx;
	uint64_t rc_rx;
	uint64_t rc_tx;
	uint64_t echo;		/* ICMP/ICMPv6 echo replies sent */
	uint64_t udp;		/* UDP datagrams echoed */
	uint64_t arp;		/* ARP requests answered */
	uint64_t nd;		/* Neighbor Solicitations answered */
	uint64_t accepted;	/* connection requests given a REP */
	uint64_t rejected;	/* connection requests given a REJ */
	uint64_t act_up;	/* own connections established */
	uint64_t act_failed;	/* own connections refused or timed out */
	uint64_t rc_fallback;	/* replies sent on UD: connection busy */
	uint64_t dropped;	/* received and not answered */
	/* REQ or REP refused (REJ 28) for its private data: */
	uint64_t cm_bad_len;	/* shorter than { QPN, MTU } */
	uint64_t cm_bad_mtu;	/* MTU <= 4 (the header) or > 65524 */
	uint64_t cm_bad_qpn;	/* REP: not the QPN our REQ went to */
	uint64_t cm_queued;	/* linux: held while connecting, sent on RC */
	uint64_t cm_queue_drops;	/* linux: beyond the queue, or REJ */
	/* ARP replies and NAs about a known peer (peers_persona.c): */
	uint64_t neigh_updates;		/* taken: the peer's flags set */
	uint64_t neigh_rc_lost;		/* of which dropped connected mode */
	uint64_t neigh_locked;		/* linux: ignored within locktime */
};

enum peers_act {
	PEERS_ACT_NONE,
	PEERS_ACT_CONNECTING,
	PEERS_ACT_UP,
	PEERS_ACT_BACKOFF,
};

struct peers_host {
	struct shm_port *port;
	struct shm_qp *ud;
	uint32_t qpn;
	uint16_t lid;
	uint32_t ipv4;
	uint8_t ipv6[16];
	struct ipoib_hwaddr hw;		/* flags included */
	uint32_t passive;		/* accepted connections alive */
	uint32_t nconns;		/* connections of any kind */
	uint8_t act;			/* enum peers_act of the last one */
	uint32_t backoff_ms;		/* the last backoff it chose */
	struct peers_stats st;
};

/* A host's view of a remote: where to send, and its connection to it. */
struct peers_peer {
	uint32_t host;
	uint32_t qpn;
	uint8_t gid[IPOIB_GID_LEN];
	uint8_t flags;
	bool flags_known;
	uint64_t flags_ns;		/* when flags were last set */
	uint8_t sid_try;		/* service IDs tried (peers_persona.c) */
	uint8_t nq;			/* linux: packets held while connecting */
	struct peers_held *q[PEERS_LINUX_QUEUE];
	uint32_t tx;			/* active connection + 1, or 0 */
	uint32_t rx;			/* passive connection + 1, or 0 */
	uint32_t backoff_ms;
	uint64_t next_retry_ns;
	uint32_t ah;			/* address handle + 1, or 0 */
	uint32_t next;			/* hash chain: peer + 1, or 0 */
};

enum peers_conn_state {
	PEERS_CONN_FREE,
	PEERS_CONN_CONNECTING,
	PEERS_CONN_UP,
	PEERS_CONN_CLOSING,		/* our DREQ is out */
};

struct peers_conn {
	struct shm_qp *qp;
	struct shm_cm_id *id;
	uint32_t host;
	uint32_t peer;
	uint32_t tx_mtu;		/* active: the peer's, with header */
	uint8_t state;
	uint8_t gen;
	bool active;
	uint32_t next_free;		/* free list: connection + 1, or 0 */
};

/* A packet a Linux host holds for a neighbour it is connecting to. */
struct peers_held {
	uint16_t type;
	uint32_t len;
	uint8_t pkt[];
};

struct peers_ah {
	uint8_t gid[IPOIB_GID_LEN];
	struct shm_ah ah;
};

struct peers {
	struct peers_conf conf;
	struct shm_fabric *f;
	struct peers_host *hosts;
	uint32_t nr_hosts;		/* opened so far */
	struct shm_cq *cq;
	struct shm_rq *ud_srq;
	struct shm_rq *rc_srq;
	struct shm_mem ud_mem, rc_mem;
	uint32_t ud_bufs, ud_stride;
	uint32_t rc_bufs, rc_stride;
	/* peers: a vector and a chained hash on (host, QPN, GID) */
	struct peers_peer *peers;
	uint32_t nr_peers, cap_peers;
	uint32_t *bucket;
	uint32_t nr_buckets;
	/* address handles by GID: open addressing, power of 2 */
	struct peers_ah *ahs;
	uint32_t nr_ahs, cap_ahs;
	uint32_t *ah_slot;
	/* connections: a vector with a free list */
	struct peers_conn *conns;
	uint32_t nr_conns, cap_conns, free_conn;
	uint32_t cm_cursor;
	uint32_t qkey;			/* UD: the broadcast group's */
	uint32_t ud_mtu;		/* UD payload with the IPoIB header */
	bool idle;			/* --idle-after passed: send nothing */
	bool stopping;			/* exiting: REJ new connections */
	uint32_t sol_groups;		/* solicited-node groups joined */
	bool sol_full;			/* the fabric had no group left */
	uint64_t mcast_other;		/* multicast for none of ours */
	uint64_t stale_wc;		/* completions of closed connections */
	uint64_t ud_nogrh;		/* UD received without a GRH */
	uint64_t wc_errors;
	uint64_t start_ns, ready_ns;
	/* replies are built here; never longer than a received frame */
	uint8_t tx_buf[65536];
};

/* peers_main.c */
/*
 * The command line into conf (holding the defaults); exits with status 2
 * and a message on a bad one, 0 after --help.
 */
void peers_conf_defaults(struct peers_conf *conf);
void peers_parse_args(struct peers_conf *conf, int argc, char **argv);

/* peers_hosts.c: the fabric side of the hosts */
int peers_hosts_open(struct peers *P);
void peers_hosts_close(struct peers *P);
unsigned int peers_poll_cq(struct peers *P);

/* peers_rx.c: what a host answers */
void peers_rx_frame(struct peers *P, uint32_t host, uint32_t peer,
		    const uint8_t *sgid, uint32_t src_qp, bool mcast,
		    bool rc, const uint8_t *frame, uint32_t len);
uint32_t peers_rx_mcast_host(const struct peers *P, const uint8_t *frame,
			     uint32_t len);

/* peers_table.c: peers, address handles, connection slots */
int peers_tables_init(struct peers *P);
void peers_tables_fini(struct peers *P);
uint32_t peers_peer_get(struct peers *P, uint32_t host, uint32_t qpn,
			const uint8_t *gid);
void peers_peer_set_flags(struct peers *P, uint32_t peer, uint8_t flags);
/* The peer (host, qpn, gid) if the host has heard of it; UINT32_MAX. */
uint32_t peers_peer_find(const struct peers *P, uint32_t host, uint32_t qpn,
			 const uint8_t *gid);
const struct shm_ah *peers_ah_get(struct peers *P, const uint8_t *gid);
uint32_t peers_conn_ctx(const struct peers *P, uint32_t idx);
struct peers_conn *peers_conn_from_ctx(struct peers *P, uint32_t ctx);
uint32_t peers_conn_alloc(struct peers *P);
void peers_conn_free(struct peers *P, uint32_t idx);

/* peers_tx.c: a host's replies */
bool peers_send(struct peers *P, uint32_t peer, uint16_t type,
		const uint8_t *pkt, uint32_t len, bool may_rc);
bool peers_send_mcast(struct peers *P, uint32_t host, const uint8_t *mgid,
		      uint16_t type, const uint8_t *pkt, uint32_t len);

/* peers_conn.c: connected mode */
void peers_conn_connect(struct peers *P, uint32_t peer);
bool peers_conn_send(struct peers_conn *c, uint16_t type, const uint8_t *pkt,
		     uint32_t len);
void peers_conn_flush_held(struct peers *P, struct peers_peer *pe,
			   struct peers_conn *c);
unsigned int peers_cm_poll(struct peers *P, uint32_t host);
unsigned int peers_async_poll(struct peers *P, uint32_t host);
void peers_conns_shutdown(struct peers *P);

/* peers_persona.c: what Linux and illumos hosts do differently */
const char *peers_persona_name(enum peers_persona p);
uint64_t peers_persona_sid(const struct peers *P, uint8_t sid_try);
bool peers_persona_next_sid(const struct peers *P, struct peers_peer *pe,
			    uint16_t reason);
uint32_t peers_persona_adv_mtu(const struct peers *P);
bool peers_persona_hold(struct peers *P, struct peers_peer *pe,
			uint16_t type, const uint8_t *pkt, uint32_t len);
int peers_persona_join(struct peers *P, struct peers_host *h);
void peers_persona_neigh_update(struct peers *P, uint32_t host,
				const struct ipoib_hwaddr *hw, bool override);

/* peers_report.c */
void peers_report_table(const struct peers *P, FILE *out);
int peers_report_json(const struct peers *P, const char *path);
long peers_rss_kib(void);

#endif /* PEERS_H */
