/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef SHM_FABRIC_H
#define SHM_FABRIC_H

/*
 * The shm fabric: a software InfiniBand subnet in POSIX shared memory.
 *
 * A fabric is a shared memory object /ipoibcm.<name> (mode 0600) holding
 * the directory of the subnet: attached processes, ports (GUID, GID, LID,
 * P_Keys), queue pairs and multicast groups. Every attached process owns an
 * arena object /ipoibcm.<name>.<proc>.<gen> from which it allocates its
 * queues (CQs, receive queues, SRQs, CM mailboxes) and its receive buffers;
 * peers map arenas on first use. A send copies the payload once, from the
 * sender's memory into the receiver's posted buffer, and publishes a
 * completion on the receiver's CQ: no locks and no system calls on that
 * path. Directory changes take the fabric's robust process-shared mutex.
 *
 * This library does not depend on EAL: the driver and the peer emulator
 * both use it. It speaks the HCA types of ipoib_hca_types.h (GIDs,
 * scatter lists, completions, CM events, faults) as the driver does. All
 * functions return 0 or a negative errno unless said.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ipoib_hca_types.h"

#define SHM_FABRIC_NAME_MAX	31

/* Fabric-wide limits (compile time; the directory is sized by them). */
#define SHM_MAX_PROCS		64
#define SHM_MAX_PORTS		16384
#define SHM_MAX_QPS		65536
#define SHM_MAX_MCGS		64
#define SHM_MCG_MAX_MEMBERS	16384

/* Per-port limits when the port configuration leaves them at 0. */
#define SHM_DEF_MAX_QP		16384
#define SHM_DEF_MAX_QP_WR	16384
#define SHM_DEF_MAX_SRQ_WR	32768
#define SHM_DEF_MAX_CQE		262144

/* How fast a dead process is noticed: liveness scan period. */
#define SHM_JANITOR_PERIOD_MS	100
/* CM response timeout for one try (unless a REQ asks), and RNR retry timer. */
#define SHM_CM_TIMEOUT_MS	100
#define SHM_RNR_TIMER_MS	10

struct shm_fabric;	/* this process's attachment to one fabric */
struct shm_port;	/* a port this process owns */
struct shm_cq;
struct shm_rq;		/* a QP's own receive queue, or an SRQ */
struct shm_qp;
struct shm_cm_id;

struct shm_port_conf {
	uint64_t guid;			/* 0: derived from the name */
	const char *name;		/* for the derivation and the logs */
	uint16_t ib_mtu;
	uint16_t npkeys;
	uint16_t pkeys[IPOIB_PKEY_TABLE_LEN];
	uint32_t max_qp;		/* 0: default */
	uint32_t max_srq_wr;
	uint32_t max_cqe;
};

struct shm_port_info {
	uint64_t guid;
	uint8_t gid[IPOIB_GID_LEN];
	uint16_t lid;
	uint16_t ib_mtu;
	bool active;
	uint32_t index;			/* port index in the fabric */
	uint32_t max_qp, max_qp_wr, max_srq_wr, max_cqe;
	uint16_t npkeys;
	uint16_t pkeys[IPOIB_PKEY_TABLE_LEN];
};

/* Memory posted buffers may live in: part of this process's arena. */
struct shm_mem {
	void *addr;
	size_t len;
	uint32_t lkey;
	size_t size;		/* what it takes of the arena: len rounded */
};

enum shm_qp_type {
	SHM_QPT_RC,
	SHM_QPT_UD,
};

enum shm_qp_state {
	SHM_QPS_FREE,
	SHM_QPS_INIT,
	SHM_QPS_RTR,
	SHM_QPS_RTS,
	SHM_QPS_ERR,
};

struct shm_qp_conf {
	enum shm_qp_type type;
	struct shm_cq *recv_cq;
	struct shm_rq *srq;		/* NULL: own receive queue */
	uint32_t max_recv_wr;
	uint32_t max_recv_sge;
	uint16_t pkey_index;
	uint32_t qkey;
	uint32_t qp_context;
};

/*
 * Where a UD message goes: resolved once, like an address handle.
 * global is the address handle's GRH flag (ibv_ah_attr.is_global): a
 * unicast message carries a GRH only when its sender sets it, as within
 * a real subnet, where LIDs route and Linux sends ARP replies and
 * datagram-mode IP without one. shm_ah_resolve() leaves it false for a
 * unicast GID; multicast always carries a GRH (the MGID is in it) and
 * resolve sets it true.
 */
struct shm_ah {
	uint32_t port;			/* destination port index */
	uint16_t dlid;
	uint8_t dgid[IPOIB_GID_LEN];
	bool multicast;			/* dgid is an MGID */
	bool global;			/* send a GRH (always for multicast) */
};

struct shm_send {
	const struct iovec *iov;	/* the message, gathered */
	uint16_t iovcnt;
	const struct shm_ah *ah;	/* UD */
	uint32_t remote_qpn;		/* UD */
	uint32_t remote_qkey;		/* UD */
};

/* Fabric attachment and ports. */
int shm_fabric_attach(const char *name, struct shm_fabric **f);
void shm_fabric_detach(struct shm_fabric *f);
const char *shm_fabric_name(const struct shm_fabric *f);
/* Remove a fabric's objects that no live process uses any more. */
int shm_fabric_unlink_stale(const char *name);
/* Were the fabric's objects removed under us? (see SHM_EV_FABRIC_LOST) */
bool shm_fabric_lost(const struct shm_fabric *f);

int shm_port_open(struct shm_fabric *f, const struct shm_port_conf *conf,
		  struct shm_port **p);
void shm_port_close(struct shm_port *p);
void shm_port_query(const struct shm_port *p, struct shm_port_info *info);
int shm_port_set_state(struct shm_port *p, bool active);
struct shm_fabric *shm_port_fabric(const struct shm_port *p);

/*
 * Address records: a port publishes a 6-byte link-layer address (the
 * driver's emulated MAC) with its UD QPN and flags; resolve finds the
 * 20-byte hardware address (flags, QPN, GID) that published mac, among
 * the ports that share a partition with p (as ARP would only find them).
 */
void shm_port_publish(struct shm_port *p, const uint8_t *mac, uint32_t qpn,
		      uint8_t flags);
int shm_addr_resolve(const struct shm_port *p, const uint8_t *mac,
		     uint8_t *hwaddr);

/*
 * The GID of the port with LID lid, from the directory; -ENOENT when no
 * port has it. For tools that stand for hosts (the peer emulator): a host
 * learns a GRH-less sender's GID from ARP/ND, and the driver must (issue
 * 14 part B), not from this.
 */
int shm_lid_to_gid(struct shm_fabric *f, uint16_t lid, uint8_t *gid);

/* Find a port by GID (unicast): fills ah; -ENOENT when absent. */
int shm_ah_resolve(struct shm_fabric *f, const uint8_t *gid, uint16_t dlid,
		   struct shm_ah *ah);

/* Receive buffer memory, in this process's arena. */
int shm_mem_alloc(struct shm_fabric *f, size_t len, struct shm_mem *mem);
void shm_mem_free(struct shm_fabric *f, struct shm_mem *mem);
/* Bytes this process has allocated in its arena, for anything. */
uint64_t shm_arena_used(struct shm_fabric *f);
/* Bytes of the arena a port's queues take (CQs, receive queues, CM). */
uint64_t shm_port_arena_bytes(const struct shm_port *p);

/* Completion queues: many producers (senders), one consumer. */
struct shm_cq *shm_cq_create(struct shm_port *p, uint32_t cqe);
int shm_cq_destroy(struct shm_cq *cq);
uint16_t shm_cq_poll(struct shm_cq *cq, struct ipoib_wc *wc, uint16_t n);
/* Completions waiting on cq (control path: a poller makes it shrink). */
uint32_t shm_cq_count(const struct shm_cq *cq);

/* Shared receive queues. */
struct shm_rq *shm_srq_create(struct shm_port *p, uint32_t max_wr,
			      uint32_t max_sge, uint32_t limit);
int shm_srq_destroy(struct shm_rq *srq);
int shm_srq_arm(struct shm_rq *srq, uint32_t limit);
uint32_t shm_rq_posted(const struct shm_rq *rq);

/* Post n receive WRs; returns how many. */
uint16_t shm_rq_post(struct shm_rq *rq, const struct ipoib_recv_wr *wr,
		     uint16_t n);

struct shm_qp *shm_qp_create(struct shm_port *p,
			     const struct shm_qp_conf *conf);
int shm_qp_destroy(struct shm_qp *qp);
uint32_t shm_qp_num(const struct shm_qp *qp);
struct shm_rq *shm_qp_rq(struct shm_qp *qp);
enum shm_qp_state shm_qp_state(const struct shm_qp *qp);
/*
 * INIT -> RTS for UD; any -> ERR: posted receives complete flushed, but
 * for a post racing with the move, which shm_qp_flush_settle() completes.
 */
int shm_qp_modify(struct shm_qp *qp, enum shm_qp_state state);
/*
 * qp in error, and every thread that posts to its receive queue has since
 * passed a point ordered after the move (a grace period, shm_queue.c):
 * flush what a post racing with the move left. No-op otherwise.
 */
void shm_qp_flush_settle(struct shm_qp *qp);
/*
 * UD qp: spread what arrives for it by flow over the receive queues (and
 * CQs) of the n UD QPs rqs, itself among them, as an HCA spreads over
 * receive work queues (RSS): the Toeplitz hash of conf's key over what
 * its types cover (struct ipoib_rss_conf), modulo n; anything else goes
 * to qp's own. The others only receive: they are not in any group, and
 * nobody sends to their QPNs. n = 0 (or 1) stops it. At most
 * SHM_RSS_MAX.
 */
#define SHM_RSS_MAX	16
int shm_qp_rss_set(struct shm_qp *qp, struct shm_qp *const *rqs, uint32_t n,
		   const struct ipoib_rss_conf *conf);
/* The Toeplitz hash of in[len] (len <= 36) with key (40 bytes). */
uint32_t shm_rss_toeplitz(const uint8_t *key, const uint8_t *in,
			  uint32_t len);
/*
 * Send n messages. Returns how many were sent (in order). A UD message
 * that cannot be delivered is dropped and counted, as on a wire; an RC
 * message whose receiver has no posted buffer stops the batch (RNR) and is
 * retried by the caller; when RNR lasts longer than the QP's RNR retry
 * budget the QP goes to error and returns what it could not send.
 */
uint16_t shm_qp_post_send(struct shm_qp *qp, const struct shm_send *wr,
			  uint16_t n);

int shm_mcast_attach(struct shm_qp *qp, const uint8_t *mgid);
int shm_mcast_detach(struct shm_qp *qp, const uint8_t *mgid);

/*
 * Connection management: real messages with timeouts and retries; events
 * of the types of ipoib_hca_types.h.
 */
struct shm_cm_event {
	enum ipoib_cm_event_type type;
	struct shm_cm_id *id;
	struct shm_port *port;
	void *context;
	uint64_t service_id;
	uint8_t remote_gid[IPOIB_GID_LEN];
	uint16_t remote_lid;
	uint32_t remote_qpn;
	uint16_t pkey;
	uint16_t reason;
	/* REQ_RCVD: the REQ's (IBTA 12.6.5); REP_RCVD: the REP's RNR count */
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t responder_resources;
	uint8_t priv_len;
	uint8_t priv[IPOIB_CM_PRIV_MAX];
};

struct shm_cm_req {
	uint64_t service_id;
	const uint8_t *dgid;
	struct shm_qp *qp;		/* RC, INIT */
	void *context;
	uint8_t retry_count;
	uint8_t rnr_retry_count;	/* IPOIB_RNR_RETRY_FOREVER: for ever */
	uint8_t max_cm_retries;
	uint8_t cm_response_timeout;	/* REP wait, 4.096 us << it; 0: below */
	uint8_t responder_resources;
	uint8_t priv_len;
	const uint8_t *priv;
};

int shm_cm_listen(struct shm_port *p, uint64_t service_id);
int shm_cm_connect(struct shm_port *p, const struct shm_cm_req *req,
		   struct shm_cm_id **id);
int shm_cm_accept(struct shm_cm_id *id, struct shm_qp *qp, void *context,
		  const uint8_t *priv, uint8_t priv_len);
/*
 * The RNR retry count a REP asks the active side to use for its sends
 * (IBTA 12.7.37); by default the REQ's, echoed as Linux's
 * ipoib_cm_send_rep() does. Before shm_cm_accept().
 */
int shm_cm_set_rep_rnr_retry(struct shm_cm_id *id, uint8_t rnr_retry);
int shm_cm_rtu(struct shm_cm_id *id);
int shm_cm_reject(struct shm_cm_id *id, uint16_t reason,
		  const uint8_t *priv, uint8_t priv_len);
int shm_cm_disconnect(struct shm_cm_id *id);
void shm_cm_destroy(struct shm_cm_id *id);
/* Progress messages and timers of port p; up to n events. */
int shm_cm_poll(struct shm_port *p, struct shm_cm_event *ev, int n);
/*
 * Sleep until a message for port p may be due, shm_cm_wake() was called
 * or timeout_ns passed (the owner's control thread; any process posts).
 */
void shm_cm_wait(struct shm_port *p, uint64_t timeout_ns);
/* Cut a shm_cm_wait() of port p short, from any thread. */
void shm_cm_wake(struct shm_port *p);

/* Asynchronous events. */
enum shm_async_type {
	SHM_EV_QP_FATAL,
	SHM_EV_SRQ_LIMIT,
	SHM_EV_PORT_ACTIVE,
	SHM_EV_PORT_DOWN,
	/*
	 * The fabric's objects were removed from /dev/shm: newcomers cannot
	 * reach this process any more. Detach and attach again.
	 */
	SHM_EV_FABRIC_LOST,
};

struct shm_async_event {
	enum shm_async_type type;
	uint32_t qp_num;
	uint32_t qp_context;
	struct shm_rq *srq;
};

/* Also runs the fabric janitor (dead processes) when its period is due. */
int shm_async_poll(struct shm_port *p, struct shm_async_event *ev, int n);

/* Counters of what the fabric dropped or refused for a port. */
struct shm_port_counters {
	uint64_t rnr_naks;		/* RC sends refused: no posted buffer */
	uint64_t ud_no_wr;		/* UD to this port dropped: no buffer */
	uint64_t pkey_drops;		/* UD to this port: P_Key mismatch */
	uint64_t qkey_drops;		/* UD to this port: Q_Key mismatch */
	uint64_t len_errs;		/* to this port: longer than buffer */
	uint64_t fault_drops;		/* dropped by fault injection */
	uint64_t cm_retries;		/* CM messages resent on timeout */
	uint64_t cm_drops;		/* CM messages malformed, or a REP for
					 * no REQ of ours */
	uint64_t link_down_drops;	/* sends dropped: this port was down */
	uint64_t sa_drops;		/* SA queries lost (shm_sa_set_faults) */
	uint64_t sa_errors;		/* SA answers with an error status */
};

void shm_port_counters(const struct shm_port *p, struct shm_port_counters *c);

/*
 * Fault injection on what port p receives (struct ipoib_faults): messages
 * dropped or delayed, REQs refused; port_down takes the link down, as
 * shm_port_set_state() does.
 */
void shm_port_set_faults(struct shm_port *p, const struct ipoib_faults *fl);
void shm_port_get_faults(const struct shm_port *p, struct ipoib_faults *fl);
void shm_port_ah_wait(const struct shm_port *p);

/*
 * The subnet administrator (SA): path records (IBTA 15.2.5.16) and
 * multicast membership (MCMemberRecord, 15.2.5.17), ASYNCHRONOUS as on a
 * real subnet. A query is posted with a cookie and returns at once (0, or
 * -ENOSPC when SHM_SA_MAX_PENDING are outstanding); its answer is an
 * event that shm_sa_poll() returns later, never from inside the query,
 * after the port's SA delay (shm_sa_set_faults(); 0 by default: the next
 * poll). A dropped query (fault) never answers: the caller's timeout is
 * the only way to learn it, as with a lost MAD. The SA acts on a query
 * when its answer is due, so a join takes effect then. shm_cm_wait()
 * wakes for a due answer; a query posted from another thread wakes it.
 * The SA runs in the process that owns the port; several threads may
 * post and poll.
 *
 * Groups (what the code follows, and from where):
 * - A join names the group's MGID, the join state and, in comp_mask, the
 *   fields it cares about. An existing group: every named field must
 *   match the group's, else the join is refused (-EINVAL), as opensm's
 *   osm_sa_mcmember_record.c validates a join against the group.
 * - A new group is created by a full member only, naming at least its
 *   Q_Key, P_Key and MTU (others default to 0); anything else is -EINVAL
 *   (no such group for a send-only join: -ENOENT).
 * - IPoIB broadcast groups (ff1S:401b:PPPP::ffff:ffff, IPv4 RFC 4391
 *   §4) are pre-created by the SA, as opensm creates them from its
 *   partitions.conf ("Default=0x7fff, ipoib"): P_Key PPPP, Q_Key and MTU
 *   of shm_sa_set_ipoib() (0x0b1b and 2048 by default), SL, TClass,
 *   FlowLabel, HopLimit 0. They are never deleted; other groups go with
 *   their last member. Linux ipoib joins the broadcast group without
 *   creating it and takes Q_Key and MTU from the answer.
 * - Full members receive the group's traffic; send-only members
 *   (SendOnlyNonMember 0x4 or SendOnlyFullMember 0x8) may send and never
 *   receive, even with a QP attached. A QP attached to an MGID the SA
 *   has no group for still receives (the driver joins the IPv4
 *   broadcast group only and attaches the others without joining).
 * - A port's memberships end with the port (closed or its process dead).
 * - The answer's status: 0, -ENOENT (no such record: unknown GID, no
 *   shared partition, leave of a group not joined), -EINVAL (refused).
 */
#define SHM_SA_MAX_PENDING	256	/* per port */

#define SHM_SA_JOIN_FULL		0x1	/* JoinState bits */
#define SHM_SA_JOIN_SEND_ONLY_NON	0x4
#define SHM_SA_JOIN_SEND_ONLY_FULL	0x8

/* MCMemberRecord fields a join names (comp_mask). */
#define SHM_SA_MC_QKEY		0x01
#define SHM_SA_MC_PKEY		0x02
#define SHM_SA_MC_MTU		0x04
#define SHM_SA_MC_SL		0x08
#define SHM_SA_MC_TCLASS	0x10
#define SHM_SA_MC_FLOW_LABEL	0x20
#define SHM_SA_MC_HOP_LIMIT	0x40

struct shm_sa_mcmember {
	uint8_t mgid[IPOIB_GID_LEN];
	uint32_t comp_mask;		/* join: SHM_SA_MC_* named below */
	uint32_t qkey;
	uint32_t flow_label;		/* 20 bits */
	uint16_t mlid;			/* answer */
	uint16_t pkey;			/* with the full-member bit */
	uint16_t mtu;			/* bytes, 256..4096 */
	uint8_t sl;
	uint8_t tclass;
	uint8_t hop_limit;
	uint8_t join_state;		/* join: SHM_SA_JOIN_*; answer: all */
};

struct shm_sa_path {
	uint8_t sgid[IPOIB_GID_LEN];
	uint8_t dgid[IPOIB_GID_LEN];
	uint16_t slid;
	uint16_t dlid;
	uint16_t pkey;			/* the partition both ports share */
	uint16_t mtu;			/* bytes: the smaller port's */
	uint8_t sl;
	uint8_t hop_limit;		/* 0: within the subnet */
};

enum shm_sa_op {
	SHM_SA_PATH_GET,
	SHM_SA_MC_JOIN,
	SHM_SA_MC_LEAVE,
};

struct shm_sa_event {
	enum shm_sa_op op;
	uint64_t cookie;		/* the query's */
	int status;			/* 0, -ENOENT, -EINVAL */
	struct shm_sa_path path;	/* SHM_SA_PATH_GET */
	struct shm_sa_mcmember mc;	/* join and leave: the group */
};

/*
 * A path from p to dgid in partition pkey (0: the first partition of p's
 * table that dgid's port shares with p, IBTA 10.9.3 membership rule).
 */
int shm_sa_path_query(struct shm_port *p, const uint8_t *dgid,
		      uint16_t pkey, uint64_t cookie);
int shm_sa_mc_join(struct shm_port *p, const struct shm_sa_mcmember *rec,
		   uint64_t cookie);
/* Leave mgid in the given join states (SHM_SA_JOIN_* bits). */
int shm_sa_mc_leave(struct shm_port *p, const uint8_t *mgid,
		    uint8_t join_state, uint64_t cookie);
/* Answers due for p: up to n events. */
int shm_sa_poll(struct shm_port *p, struct shm_sa_event *ev, int n);
/* Delay of every answer, and queries lost per million (faults). */
void shm_sa_set_faults(struct shm_port *p, uint32_t delay_ms,
		       uint32_t drop_ppm);
/*
 * Q_Key and MTU of the IPoIB broadcast groups the SA pre-creates from
 * now on (the subnet's partitions.conf); 0 keeps a default.
 */
int shm_sa_set_ipoib(struct shm_fabric *f, uint32_t qkey, uint16_t mtu);

/* Capture tap: pcap (LINKTYPE_IPOIB) of everything the port sends and
 * receives; NULL path closes it.
 */
int shm_port_capture(struct shm_port *p, const char *path);

#endif /* SHM_FABRIC_H */
