/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Connection management on the shm fabric: REQ, REP, REJ, RTU, DREQ and
 * DREP as real messages through each port's CM mailbox, with the response
 * timeouts and retries of IBTA chapter 12 (ib_cm's behaviour as librdmacm
 * users see it). All of it runs in the port owner's control thread.
 *
 * What it follows of IBTA Volume 1, chapter 12:
 * - the messages of 12.6: REQ (12.6.5), REJ (12.6.7), REP (12.6.8), RTU
 *   (12.6.9), DREQ (12.6.10), DREP (12.6.11), with what IPoIB uses of
 *   them: service ID, QPN, P_Key, RNR retry count, CM retries, up to 92
 *   bytes of private data (the REQ's room);
 * - REJ reasons of 12.6.7.2: 8 (invalid service ID) for a REQ nobody
 *   listens for, 3 (no resources) for a P_Key the port lacks or a REQ
 *   beyond its limit; a consumer's REJ carries the consumer's reason;
 * - a REQ, REP or DREQ unanswered after the response timeout is sent
 *   again, up to the max CM retries the REQ gave; then the id times out,
 *   reported as reason 4 (timeout), or is disconnected (DREQ);
 * - a REQ or REP that comes again because our answer was lost is answered
 *   again, not acted on twice; a DREQ for an id we no longer have gets its
 *   DREP;
 * - the passive side that never gets the RTU establishes when its QP is
 *   seen in use, as an HCA's communication-established event lets ib_cm
 *   do (shm_cm_comm_est()).
 * Not modelled: MRA, LAP/APR, SIDR, alternate paths, CM over MADs.
 */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/futex.h>
#include <sys/syscall.h>

#include "shm_bell.h"
#include "shm_internal.h"
#include "shm_log.h"

enum shm_cm_state {
	SHM_CMS_REQ_SENT,
	SHM_CMS_REQ_RCVD,
	SHM_CMS_REP_SENT,
	SHM_CMS_REP_RCVD,
	SHM_CMS_ESTABLISHED,
	SHM_CMS_DREQ_SENT,
	SHM_CMS_DONE,
};

struct shm_cm_id {
	struct shm_port *port;
	enum shm_cm_state state;
	uint32_t local_id;
	uint32_t remote_id;
	uint32_t remote_port;
	uint32_t remote_qpn;
	uint16_t remote_lid;
	uint16_t pkey;
	uint8_t remote_gid[IPOIB_GID_LEN];
	uint64_t service_id;
	void *context;
	struct shm_qp *qp;
	uint8_t rnr_retry;	/* for our sends: the REQ's (passive), REP's */
	uint8_t rep_rnr_retry;	/* passive: in our REP */
	uint8_t max_retries;
	uint8_t retries;
	uint64_t deadline_ns;	/* 0: no timer */
	uint64_t rep_wait_ns;	/* active: a REQ's timeout (the REQ asks) */
	struct shm_cm_msg last;	/* resent on timeout */
};

#define SHM_CM_TIMEOUT_NS	(SHM_CM_TIMEOUT_MS * 1000000ULL)

/*
 * One try's response timeout: a REQ's is the one its sender asked for (the
 * REQ's Remote CM Response Timeout); every other message's is the fabric's.
 */
static uint64_t
shm_cm_try_ns(const struct shm_cm_id *id)
{
	return id->last.type == IPOIB_CM_MSG_REQ && id->rep_wait_ns != 0 ?
	       id->rep_wait_ns : SHM_CM_TIMEOUT_NS;
}

static int
shm_cm_track(struct shm_port *p, struct shm_cm_id *id)
{
	if (p->nr_ids == p->cap_ids) {
		unsigned int cap = p->cap_ids ? p->cap_ids * 2 : 64;
		void *n = realloc(p->ids, cap * sizeof(*p->ids));

		if (n == NULL)
			return -ENOMEM;
		p->ids = n;
		p->cap_ids = cap;
	}
	p->ids[p->nr_ids++] = id;
	return 0;
}

static struct shm_cm_id *
shm_cm_id_new(struct shm_port *p, enum shm_cm_state state)
{
	struct shm_cm_id *id = calloc(1, sizeof(*id));

	if (id == NULL)
		return NULL;
	id->port = p;
	id->state = state;
	/*
	 * The counter is the fabric attachment's, shared by the control
	 * threads of every port this process has on it (ThreadSanitizer).
	 */
	do {
		id->local_id = __atomic_add_fetch(&p->f->cm_next_id, 1,
						  __ATOMIC_RELAXED);
	} while (id->local_id == 0);
	if (shm_cm_track(p, id) < 0) {
		free(id);
		return NULL;
	}
	return id;
}

static struct shm_cm_id *
shm_cm_find_local(struct shm_port *p, uint32_t local_id)
{
	unsigned int i;

	for (i = 0; i < p->nr_ids; i++)
		if (p->ids[i]->local_id == local_id)
			return p->ids[i];
	return NULL;
}

static struct shm_cm_id *
shm_cm_find_remote(struct shm_port *p, uint32_t port, uint32_t remote_id)
{
	unsigned int i;

	for (i = 0; i < p->nr_ids; i++)
		if (p->ids[i]->remote_port == port &&
		    p->ids[i]->remote_id == remote_id)
			return p->ids[i];
	return NULL;
}

/*
 * Put a message in the mailbox of port dst. Lost messages (full mailbox,
 * port gone, fault injection) are what retries are for. The directory
 * lock is held throughout: shm_port_close() marks the port free under it
 * before its mailbox goes back to the arena, and shm_port_open() may then
 * reuse the entry, so a message is never written to a freed mailbox or
 * read from a reused entry. CM messages are few; the data path never
 * takes this lock. The wake, a system call that may hand this core to
 * the thread it wakes, comes after the lock is dropped.
 */
static void
shm_cm_post(struct shm_port *p, uint32_t dst, struct shm_cm_msg *msg)
{
	struct shm_fabric *f = p->f;
	struct shm_port_ent *dp;
	struct shm_cm_ring *ring;
	struct shm_cm_msg *slot;
	uint32_t *bell = NULL;
	uint64_t t;

	if (dst >= SHM_MAX_PORTS || shm_lock(f) < 0)
		return;
	dp = &f->hdr->ports[dst];
	if (shm_load(&dp->state) != SHM_PORT_ACTIVE)
		goto out;
	if ((shm_load(&dp->fault_cm_drop_mask) & (1u << msg->type)) ||
	    shm_fault_drop(shm_load(&dp->fault_drop_ppm))) {
		shm_add(&dp->cnt_fault_drops, 1);
		goto out;
	}
	ring = shm_arena_ptr(f, dp->proc, dp->cm_ring_off);
	if (ring == NULL)
		goto out;
	t = shm_load(&ring->tail);
	do {
		if (t - shm_load(&ring->head) >= SHM_CM_RING)
			goto out;	/* full: dropped */
	} while (!__atomic_compare_exchange_n(&ring->tail, &t, t + 1, false,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	msg->src_port = p->index;
	msg->src_lid = p->ent->lid;
	memcpy(msg->src_gid, p->ent->gid, IPOIB_GID_LEN);
	msg->deliver_ns = ipoib_now_ns() +
		shm_load(&dp->fault_cm_delay_ms) * 1000000ULL;
	slot = &ring->msg[t % SHM_CM_RING];
	memcpy((uint8_t *)slot + sizeof(slot->seq),
	       (uint8_t *)msg + sizeof(msg->seq),
	       sizeof(*msg) - sizeof(msg->seq));
	shm_store(&slot->seq, t + 1);	/* pairs with shm_cm_poll() */
	if (shm_bell_add(ring))
		bell = &ring->bell;
out:
	shm_unlock(f);
	if (bell != NULL)
		shm_bell_wake(bell);
}

/* Send the id's message and (for those that expect an answer) time it. */
static void
shm_cm_send(struct shm_cm_id *id, uint8_t type, bool timed)
{
	id->last.type = type;
	id->last.local_id = id->local_id;
	id->last.remote_id = id->remote_id;
	shm_cm_post(id->port, id->remote_port, &id->last);
	id->retries = 0;
	id->deadline_ns = timed ? ipoib_now_ns() + shm_cm_try_ns(id) : 0;
}

/* Answer a message no id owns (REJ to a REQ, DREP to a DREQ). */
static void
shm_cm_reply(struct shm_port *p, const struct shm_cm_msg *in, uint8_t type,
	     uint16_t reason)
{
	struct shm_cm_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.reason = reason;
	m.remote_id = in->local_id;
	m.service_id = in->service_id;
	shm_cm_post(p, in->src_port, &m);
}

static void
shm_cm_event_fill(struct shm_cm_event *ev, enum ipoib_cm_event_type type,
		  struct shm_cm_id *id)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->id = id;
	ev->port = id->port;
	ev->context = id->context;
	ev->service_id = id->service_id;
	memcpy(ev->remote_gid, id->remote_gid, IPOIB_GID_LEN);
	ev->remote_lid = id->remote_lid;
	ev->remote_qpn = id->remote_qpn;
	ev->pkey = id->pkey;
}

static void
shm_cm_event_priv(struct shm_cm_event *ev, const struct shm_cm_msg *m)
{
	ev->priv_len = m->priv_len;
	memcpy(ev->priv, m->priv, m->priv_len);
	ev->reason = m->reason;
}

/*
 * Private data of a message (checked by the caller); NULL with length 0 is
 * none, which memcpy() may not be given.
 */
static void
shm_cm_priv_set(struct shm_cm_msg *m, const uint8_t *priv, uint8_t len)
{
	m->priv_len = len;
	if (len != 0)
		memcpy(m->priv, priv, len);
}

static bool
shm_cm_listening(const struct shm_port *p, uint64_t service_id)
{
	unsigned int i;

	for (i = 0; i < p->nr_listen; i++)
		if (p->listen[i] == service_id)
			return true;
	return false;
}

/*
 * A REQ's P_Key against this port's table, with IBTA 10.9.3's membership
 * rule: the partition must be there, and a limited member only talks to
 * a full member (two limited members cannot connect).
 */
static bool
shm_cm_pkey_ok(const struct shm_port *p, uint16_t pkey)
{
	uint16_t i;

	for (i = 0; i < p->ent->npkeys; i++)
		if (shm_pkey_match(p->ent->pkeys[i], pkey))
			return true;
	return false;
}

/* A REQ: a new passive id, a duplicate, or a refusal. */
static bool
shm_cm_rx_req(struct shm_port *p, const struct shm_cm_msg *m,
	      struct shm_cm_event *ev)
{
	struct shm_cm_id *id = shm_cm_find_remote(p, m->src_port, m->local_id);
	int32_t rej_after = shm_load(&p->ent->fault_rej_after);

	if (id != NULL) {	/* our REP was lost: say it again */
		if (id->state == SHM_CMS_REP_SENT)
			shm_cm_post(p, id->remote_port, &id->last);
		return false;
	}
	if (!shm_cm_listening(p, m->service_id)) {
		shm_cm_reply(p, m, IPOIB_CM_MSG_REJ,
			     IPOIB_REJ_INVALID_SERVICE_ID);
		return false;
	}
	if (!shm_cm_pkey_ok(p, m->pkey) ||
	    (rej_after >= 0 &&
	     shm_load(&p->ent->nr_rc_conn) >= (uint32_t)rej_after)) {
		shm_cm_reply(p, m, IPOIB_CM_MSG_REJ, IPOIB_REJ_NO_RESOURCES);
		return false;
	}
	id = shm_cm_id_new(p, SHM_CMS_REQ_RCVD);
	if (id == NULL) {
		shm_cm_reply(p, m, IPOIB_CM_MSG_REJ, IPOIB_REJ_NO_RESOURCES);
		return false;
	}
	id->remote_id = m->local_id;
	id->remote_port = m->src_port;
	id->remote_qpn = m->qpn;
	id->remote_lid = m->src_lid;
	memcpy(id->remote_gid, m->src_gid, IPOIB_GID_LEN);
	id->pkey = m->pkey;
	id->service_id = m->service_id;
	id->rnr_retry = m->rnr_retry;
	id->rep_rnr_retry = m->rnr_retry;	/* echoed unless set */
	id->max_retries = m->max_cm_retries;
	shm_cm_event_fill(ev, IPOIB_CM_REQ_RCVD, id);
	shm_cm_event_priv(ev, m);
	ev->retry_count = m->retry_count;
	ev->rnr_retry_count = m->rnr_retry;
	ev->responder_resources = m->resp_res;
	return true;
}

/* REP, RTU, REJ, DREQ, DREP: for an id of ours. */
static bool
shm_cm_rx_reply(struct shm_port *p, const struct shm_cm_msg *m,
		struct shm_cm_event *ev)
{
	struct shm_cm_id *id = shm_cm_find_local(p, m->remote_id);

	if (id == NULL) {
		if (m->type == IPOIB_CM_MSG_DREQ)
			shm_cm_reply(p, m, IPOIB_CM_MSG_DREP, 0);
		/* a REP for a REQ we never sent (or gave up): unknown */
		if (m->type == IPOIB_CM_MSG_REP)
			shm_add(&p->ent->cnt_cm_drops, 1);
		return false;
	}
	switch (m->type) {
	case IPOIB_CM_MSG_REP:
		if (id->state == SHM_CMS_ESTABLISHED) {	/* RTU lost */
			shm_cm_post(p, id->remote_port, &id->last);
			return false;
		}
		if (id->state != SHM_CMS_REQ_SENT)
			return false;
		id->state = SHM_CMS_REP_RCVD;
		id->deadline_ns = 0;
		id->remote_id = m->local_id;
		id->remote_qpn = m->qpn;
		/* IBTA 12.7.37: our sends retry RNR as the REP asks */
		id->rnr_retry = m->rnr_retry;
		shm_cm_event_fill(ev, IPOIB_CM_REP_RCVD, id);
		shm_cm_event_priv(ev, m);
		ev->rnr_retry_count = m->rnr_retry;
		return true;
	case IPOIB_CM_MSG_RTU:
		if (id->state != SHM_CMS_REP_SENT ||
		    shm_qp_connect(id->qp, id->remote_qpn, id->rnr_retry,
				   SHM_QPS_RTS) < 0)
			return false;
		id->state = SHM_CMS_ESTABLISHED;
		id->deadline_ns = 0;
		shm_cm_event_fill(ev, IPOIB_CM_ESTABLISHED, id);
		return true;
	case IPOIB_CM_MSG_REJ:
		if (id->state != SHM_CMS_REQ_SENT &&
		    id->state != SHM_CMS_REP_SENT &&
		    id->state != SHM_CMS_REP_RCVD)
			return false;
		id->state = SHM_CMS_DONE;
		id->deadline_ns = 0;
		shm_cm_event_fill(ev, IPOIB_CM_REJ_RCVD, id);
		shm_cm_event_priv(ev, m);
		return true;
	case IPOIB_CM_MSG_DREQ:
		shm_cm_reply(p, m, IPOIB_CM_MSG_DREP, 0);
		if (id->state != SHM_CMS_ESTABLISHED &&
		    id->state != SHM_CMS_REP_SENT &&
		    id->state != SHM_CMS_DREQ_SENT)
			return false;
		id->state = SHM_CMS_DONE;
		id->deadline_ns = 0;
		shm_cm_event_fill(ev, IPOIB_CM_DREQ_RCVD, id);
		return true;
	case IPOIB_CM_MSG_DREP:
		if (id->state != SHM_CMS_DREQ_SENT)
			return false;
		id->state = SHM_CMS_DONE;
		id->deadline_ns = 0;
		shm_cm_event_fill(ev, IPOIB_CM_DISCONNECTED, id);
		return true;
	default:
		return false;
	}
}

/* Handle one received message; true when it made an event. */
static bool
shm_cm_rx(struct shm_port *p, const struct shm_cm_msg *m,
	  struct shm_cm_event *ev)
{
	if (m->type < IPOIB_CM_MSG_REQ || m->type > IPOIB_CM_MSG_DREP ||
	    m->priv_len > IPOIB_CM_PRIV_MAX || m->src_port >= SHM_MAX_PORTS) {
		shm_add(&p->ent->cnt_cm_drops, 1);
		return false;
	}
	if (m->type == IPOIB_CM_MSG_REQ)
		return shm_cm_rx_req(p, m, ev);
	return shm_cm_rx_reply(p, m, ev);
}

/*
 * The passive side whose RTUs were all lost: the active QP is RTS and
 * connected to ours, so the RTU was sent and data may be flowing into our
 * RTR QP. On an HCA the first message received raises the communication
 * established event (COMM_EST) and ib_cm establishes as if the RTU had
 * come; here the active QP's state says the same. Without this, the
 * passive side gave up with a TIMEOUT on a connection its peer uses.
 */
static bool
shm_cm_comm_est(struct shm_cm_id *id)
{
	const struct shm_qp_ent *peer;

	if (id->state != SHM_CMS_REP_SENT || id->qp == NULL)
		return false;
	peer = shm_qp_lookup(id->port->f, id->remote_qpn);
	return peer != NULL && shm_load(&peer->state) == SHM_QPS_RTS &&
	       shm_load_relaxed(&peer->remote_qpn) == shm_qp_num(id->qp) &&
	       shm_qp_connect(id->qp, id->remote_qpn, id->rnr_retry,
			      SHM_QPS_RTS) == 0;
}

/* A response timeout: resend, or give up with an event. */
static bool
shm_cm_timeout(struct shm_cm_id *id, uint64_t now, struct shm_cm_event *ev)
{
	if (id->retries < id->max_retries) {
		id->retries++;
		/* read by shm_port_counters() in another thread (TSan) */
		shm_add(&id->port->cm_retries, 1);
		shm_cm_post(id->port, id->remote_port, &id->last);
		id->deadline_ns = now + shm_cm_try_ns(id);
		return false;
	}
	id->deadline_ns = 0;
	if (shm_cm_comm_est(id)) {
		id->state = SHM_CMS_ESTABLISHED;
		shm_cm_event_fill(ev, IPOIB_CM_ESTABLISHED, id);
		return true;
	}
	if (id->state == SHM_CMS_DREQ_SENT) {
		id->state = SHM_CMS_DONE;
		shm_cm_event_fill(ev, IPOIB_CM_DISCONNECTED, id);
		return true;
	}
	id->state = SHM_CMS_DONE;
	shm_cm_event_fill(ev, IPOIB_CM_TIMEOUT, id);
	ev->reason = IPOIB_REJ_TIMEOUT;
	return true;
}

int
shm_cm_poll(struct shm_port *p, struct shm_cm_event *ev, int n)
{
	struct shm_cm_ring *ring = p->cm;
	uint64_t now = ipoib_now_ns();
	unsigned int i;
	int k = 0;

	while (k < n) {
		uint64_t h = ring->head;
		struct shm_cm_msg *m = &ring->msg[h % SHM_CM_RING];
		struct shm_cm_msg copy;

		if (shm_load(&m->seq) != h + 1 || m->deliver_ns > now)
			break;
		copy = *m;
		shm_store(&ring->head, h + 1);
		if (shm_cm_rx(p, &copy, &ev[k]))
			k++;
	}
	for (i = 0; i < p->nr_ids && k < n; i++) {
		struct shm_cm_id *id = p->ids[i];

		if (id->deadline_ns != 0 && now >= id->deadline_ns &&
		    shm_cm_timeout(id, now, &ev[k]))
			k++;
	}
	return k;
}

/*
 * The bell is read before the mailbox: a message posted after the read
 * changed the bell, and FUTEX_WAIT returns at once. A message held back
 * by fault injection (deliver_ns) shortens the sleep to its time. A ring
 * that came during the caller's last round, after the bell was last read
 * (a connection request the round had already looked for), changed it
 * from bell_seen: no sleep then, the caller looks again.
 */
void
shm_cm_wait(struct shm_port *p, uint64_t timeout_ns)
{
	struct shm_cm_ring *ring = p->cm;
	uint32_t bell = __atomic_load_n(&ring->bell, __ATOMIC_SEQ_CST);
	uint64_t h = ring->head, now;
	const struct shm_cm_msg *m = &ring->msg[h % SHM_CM_RING];
	/* an SA answer due (shm_sa.c); a query posted later rings the bell */
	uint64_t sa_due = __atomic_load_n(&p->sa_due_ns, __ATOMIC_RELAXED);
	struct timespec ts;

	if (bell != p->bell_seen) {
		p->bell_seen = bell;
		return;
	}
	now = ipoib_now_ns();
	if (sa_due != UINT64_MAX) {
		if (sa_due <= now)
			return;
		if (sa_due - now < timeout_ns)
			timeout_ns = sa_due - now;
	}
	if (shm_load(&m->seq) == h + 1) {
		if (m->deliver_ns <= now)
			return;
		if (m->deliver_ns - now < timeout_ns)
			timeout_ns = m->deliver_ns - now;
	}
	ts.tv_sec = (time_t)(timeout_ns / 1000000000ULL);
	ts.tv_nsec = (long)(timeout_ns % 1000000000ULL);
	__atomic_fetch_add(&ring->sleepers, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &ring->bell, FUTEX_WAIT, bell, &ts, NULL, 0);
	__atomic_fetch_sub(&ring->sleepers, 1, __ATOMIC_RELAXED);
	p->bell_seen = __atomic_load_n(&ring->bell, __ATOMIC_SEQ_CST);
}

void
shm_cm_wake(struct shm_port *p)
{
	shm_bell_ring(p->cm);
}

int
shm_cm_listen(struct shm_port *p, uint64_t service_id)
{
	void *n;

	if (shm_cm_listening(p, service_id))
		return -EADDRINUSE;
	n = realloc(p->listen, (p->nr_listen + 1) * sizeof(*p->listen));
	if (n == NULL)
		return -ENOMEM;
	p->listen = n;
	p->listen[p->nr_listen++] = service_id;
	return 0;
}

int
shm_cm_connect(struct shm_port *p, const struct shm_cm_req *req,
	       struct shm_cm_id **idp)
{
	int dst = shm_port_find_gid(p->f, req->dgid);
	struct shm_cm_id *id;

	if (dst < 0)
		return -EHOSTUNREACH;
	if (req->qp == NULL || req->qp->type != SHM_QPT_RC ||
	    req->priv_len > IPOIB_CM_PRIV_MAX ||
	    (req->priv == NULL && req->priv_len != 0))
		return -EINVAL;
	id = shm_cm_id_new(p, SHM_CMS_REQ_SENT);
	if (id == NULL)
		return -ENOMEM;
	id->remote_port = (uint32_t)dst;
	memcpy(id->remote_gid, req->dgid, IPOIB_GID_LEN);
	id->remote_lid = p->f->hdr->ports[dst].lid;
	id->service_id = req->service_id;
	id->context = req->context;
	id->qp = req->qp;
	id->pkey = req->qp->ent->pkey;
	id->rnr_retry = req->rnr_retry_count;
	id->max_retries = req->max_cm_retries;
	if (req->cm_response_timeout != 0)	/* IBTA: 5 bits */
		id->rep_wait_ns = 4096ULL << (req->cm_response_timeout & 31);
	memset(&id->last, 0, sizeof(id->last));
	id->last.service_id = req->service_id;
	id->last.qpn = req->qp->qpn;
	id->last.pkey = id->pkey;
	id->last.rnr_retry = req->rnr_retry_count;
	id->last.retry_count = req->retry_count;
	id->last.resp_res = req->responder_resources;
	id->last.max_cm_retries = req->max_cm_retries;
	shm_cm_priv_set(&id->last, req->priv, req->priv_len);
	shm_cm_send(id, IPOIB_CM_MSG_REQ, true);
	*idp = id;
	return 0;
}

int
shm_cm_accept(struct shm_cm_id *id, struct shm_qp *qp, void *context,
	      const uint8_t *priv, uint8_t priv_len)
{
	int ret;

	if (id->state != SHM_CMS_REQ_RCVD || qp->type != SHM_QPT_RC ||
	    priv_len > IPOIB_CM_PRIV_MAX || (priv == NULL && priv_len != 0))
		return -EINVAL;
	ret = shm_qp_connect(qp, id->remote_qpn, id->rnr_retry, SHM_QPS_RTR);
	if (ret < 0)
		return ret;
	id->qp = qp;
	id->context = context;
	memset(&id->last, 0, sizeof(id->last));
	id->last.service_id = id->service_id;
	id->last.qpn = qp->qpn;
	id->last.pkey = id->pkey;
	id->last.rnr_retry = id->rep_rnr_retry;
	shm_cm_priv_set(&id->last, priv, priv_len);
	id->state = SHM_CMS_REP_SENT;
	shm_cm_send(id, IPOIB_CM_MSG_REP, true);
	return 0;
}

int
shm_cm_set_rep_rnr_retry(struct shm_cm_id *id, uint8_t rnr_retry)
{
	if (id->state != SHM_CMS_REQ_RCVD || rnr_retry > 7)
		return -EINVAL;
	id->rep_rnr_retry = rnr_retry;
	return 0;
}

int
shm_cm_rtu(struct shm_cm_id *id)
{
	int ret;

	if (id->state != SHM_CMS_REP_RCVD)
		return -EINVAL;
	ret = shm_qp_connect(id->qp, id->remote_qpn, id->rnr_retry,
			     SHM_QPS_RTS);
	if (ret < 0)
		return ret;
	memset(&id->last, 0, sizeof(id->last));
	id->state = SHM_CMS_ESTABLISHED;
	shm_cm_send(id, IPOIB_CM_MSG_RTU, false);
	return 0;
}

int
shm_cm_reject(struct shm_cm_id *id, uint16_t reason, const uint8_t *priv,
	      uint8_t priv_len)
{
	if ((id->state != SHM_CMS_REQ_RCVD && id->state != SHM_CMS_REP_RCVD) ||
	    priv_len > IPOIB_CM_PRIV_MAX || (priv == NULL && priv_len != 0))
		return -EINVAL;
	memset(&id->last, 0, sizeof(id->last));
	id->last.reason = reason;
	shm_cm_priv_set(&id->last, priv, priv_len);
	id->state = SHM_CMS_DONE;
	shm_cm_send(id, IPOIB_CM_MSG_REJ, false);
	return 0;
}

int
shm_cm_disconnect(struct shm_cm_id *id)
{
	if (id->state != SHM_CMS_ESTABLISHED && id->state != SHM_CMS_REP_SENT)
		return -EINVAL;
	memset(&id->last, 0, sizeof(id->last));
	id->state = SHM_CMS_DREQ_SENT;
	if (id->max_retries == 0)
		id->max_retries = 3;
	shm_cm_send(id, IPOIB_CM_MSG_DREQ, true);
	return 0;
}

void
shm_cm_destroy(struct shm_cm_id *id)
{
	struct shm_port *p = id->port;
	unsigned int i;

	for (i = 0; i < p->nr_ids; i++) {
		if (p->ids[i] == id) {
			p->ids[i] = p->ids[--p->nr_ids];
			break;
		}
	}
	free(id);
}
