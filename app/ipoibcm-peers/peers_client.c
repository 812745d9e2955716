/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * peers_client: the peer emulator's test client (not installed). It joins
 * the fabric as one or more IPoIB hosts of its own and checks what the
 * emulated hosts answer, byte by byte. One scenario per run:
 *
 *   probe    ARP each host (broadcast), check its address record, then
 *            ICMP echo, UDP, ICMPv6 echo, UDP over IPv6, Neighbor
 *            Solicitation (unicast, and to host 0's solicited-node group)
 *            and a fragmented IPv4 echo
 *   rc       connect from P ports to one host; count REPs and REJ reasons;
 *            ping over each connection; see on what the reply comes back
 *   backoff  refuse the host's own connections; record its REQ times
 *   idle     ping once every 50 ms until replies come; then, told on
 *            stdin that the host went idle, ping on: no reply may come
 *   hold     connect to a host, then wait for its death to be noticed
 *
 * Results are lines "key: value" on stdout; the exit status is 0 when
 * every check passed. No EAL: like the emulator it links the shm fabric.
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peers_client.h"
#include "shm_log.h"

/* ---- scenarios ----------------------------------------------------------- */

typedef bool (*cl_done_fn)(const struct cl_host *h);
typedef void (*cl_send_fn)(struct cl *C, uint32_t idx, uint32_t seq);

/*
 * Send a request to hosts 0..count-1, at most window in flight, resent
 * after retry_ms, until each is done or the deadline passes. Prints how
 * many answered and how many requests went (resends included).
 */
static uint32_t
cl_phase(struct cl *C, const char *name, uint32_t count, uint32_t window,
	 uint32_t retry_ms, cl_done_fn done, cl_send_fn send)
{
	uint64_t deadline = ipoib_now_ns() + (uint64_t)(C->timeout * 1e9);
	uint64_t *sent = calloc(count, sizeof(*sent));
	uint32_t *fly = calloc(window, sizeof(*fly));
	uint32_t next = 0, nfly = 0, ok = 0, seq = 1, i;
	double t = cl_secs(C);

	if (sent == NULL || fly == NULL) {
		free(sent);
		free(fly);
		return 0;
	}
	while (ipoib_now_ns() < deadline) {
		uint64_t now = ipoib_now_ns();

		for (i = 0; i < nfly;) {
			if (done(&C->h[fly[i]])) {
				ok++;
				fly[i] = fly[--nfly];
				continue;
			}
			if (now - sent[fly[i]] > retry_ms * 1000000ULL) {
				send(C, fly[i], seq++);
				sent[fly[i]] = now;
			}
			i++;
		}
		while (nfly < window && next < count) {
			if (done(&C->h[next])) {
				ok++;
				next++;
				continue;
			}
			send(C, next, seq++);
			sent[next] = now;
			fly[nfly++] = next++;
		}
		if (nfly == 0 && next == count)
			break;
		cl_poll(C);
	}
	printf("%s: %u/%u in %.3f s, %u sent\n", name, ok, count,
	       cl_secs(C) - t, seq - 1);
	if (ok != count)
		cl_bad(C, "%s: %u of %u hosts did not answer", name,
		       count - ok, count);
	free(sent);
	free(fly);
	return ok;
}

static bool cl_d_arp(const struct cl_host *h) { return h->arp; }
static bool cl_d_ping(const struct cl_host *h) { return h->ping; }
static bool cl_d_udp(const struct cl_host *h) { return h->udp; }
static bool cl_d_ping6(const struct cl_host *h) { return h->ping6; }
static bool cl_d_udp6(const struct cl_host *h) { return h->udp6; }
static bool cl_d_nd(const struct cl_host *h) { return h->nd; }
static bool cl_d_frag(const struct cl_host *h) { return h->frag; }

static void
cl_s_arp(struct cl *C, uint32_t idx, uint32_t seq)
{
	uint8_t mgid[IPOIB_GID_LEN];

	(void)seq;
	ipoib_mgid_bcast(mgid, 0xffff);
	cl_send_mcast(C, 0, mgid, PK_ETH_P_ARP, C->tx, cl_arp_req(C, 0, idx));
}

static void
cl_s_ping(struct cl *C, uint32_t idx, uint32_t seq)
{
	cl_send_ud(C, 0, &C->h[idx].hw, PK_ETH_P_IPV4, C->tx,
		   cl_echo4(C, 0, idx, seq, 64 + idx % 64));
}

static void
cl_s_udp(struct cl *C, uint32_t idx, uint32_t seq)
{
	cl_send_ud(C, 0, &C->h[idx].hw, PK_ETH_P_IPV4, C->tx,
		   cl_udp4(C, 0, idx, seq, 100 + idx % 100));
}

static void
cl_s_ping6(struct cl *C, uint32_t idx, uint32_t seq)
{
	cl_send_ud(C, 0, &C->h[idx].hw, PK_ETH_P_IPV6, C->tx,
		   cl_echo6(C, 0, idx, seq, 56, false));
}

static void
cl_s_udp6(struct cl *C, uint32_t idx, uint32_t seq)
{
	cl_send_ud(C, 0, &C->h[idx].hw, PK_ETH_P_IPV6, C->tx,
		   cl_echo6(C, 0, idx, seq, 200, true));
}

static void
cl_s_nd(struct cl *C, uint32_t idx, uint32_t seq)
{
	(void)seq;
	cl_send_ud(C, 0, &C->h[idx].hw, PK_ETH_P_IPV6, C->tx,
		   cl_ns(C, 0, idx, false));
}

static void
cl_s_frag(struct cl *C, uint32_t idx, uint32_t seq)
{
	uint32_t len = cl_echo4(C, 0, idx, seq, CL_BIG_ECHO);

	cl_send_frags(C, 0, &C->h[idx].hw, len);
}

static int
cl_probe(struct cl *C, uint32_t count, uint32_t window, int flags,
	 bool full)
{
	uint8_t mgid[IPOIB_GID_LEN], group[16], target[16];
	uint64_t deadline;
	uint32_t i, nas, sent = 0;
	bool mcast_ok;

	if (count == 0 || count > C->hosts)
		count = C->hosts;
	cl_phase(C, "arp", count, window, 500, cl_d_arp, cl_s_arp);
	for (i = 0; i < count; i++) {
		const struct cl_host *h = &C->h[i];
		uint64_t want = C->guid_base + i;
		const uint8_t *g = ipoib_hwaddr_gid(&h->hw);
		uint64_t guid = pk_get64(g + 8);

		if (!h->arp)
			continue;
		if ((flags >= 0 && ipoib_hwaddr_flags(&h->hw) != flags) ||
		    (C->guid_base != 0 && guid != want) ||
		    g[0] != 0xfe || g[1] != 0x80)
			cl_bad(C, "host %u: hwaddr flags 0x%02x GUID 0x%016"
			       PRIx64, i, ipoib_hwaddr_flags(&h->hw), guid);
	}
	if (!full)
		return 0;
	cl_phase(C, "ping", count, 32, 300, cl_d_ping, cl_s_ping);
	cl_phase(C, "udp", count, 32, 300, cl_d_udp, cl_s_udp);
	cl_phase(C, "ping6", count, 32, 300, cl_d_ping6, cl_s_ping6);
	cl_phase(C, "udp6", count, 32, 300, cl_d_udp6, cl_s_udp6);
	cl_phase(C, "nd", count, 32, 300, cl_d_nd, cl_s_nd);
	cl_phase(C, "frag", 1, 1, 500, cl_d_frag, cl_s_frag);
	/* host 0 has its solicited-node group: an NS sent there too */
	cl_host_ipv6(C, C->first_ip, target);
	ipoib_ipv6_solicited(group, target);
	ipoib_mgid_ipv6(mgid, 0xffff, group);
	deadline = ipoib_now_ns() + (uint64_t)(C->timeout * 1e9);
	nas = C->h[0].nas;
	for (i = 0; C->h[0].nas == nas && ipoib_now_ns() < deadline; i++) {
		if (i % 2000 == 0) {
			cl_send_mcast(C, 0, mgid, PK_ETH_P_IPV6, C->tx,
				      cl_ns(C, 0, 0, true));
			sent++;
		}
		cl_poll(C);
	}
	mcast_ok = C->h[0].nas != nas;
	printf("nd_mcast: %d\nnd_mcast_sent: %u\n", mcast_ok, sent);
	if (!mcast_ok)
		cl_bad(C, "no NA for an NS to host 0's solicited-node group");
	for (i = 0; i < count; i++)
		if (C->h[i].rc_replies != 0)
			cl_bad(C, "host %u replied on RC without a connection",
			       i);
	return 0;
}

/* Wait until cond() or the deadline; cond is polled between polls. */
static bool
cl_wait(struct cl *C, bool (*cond)(struct cl *C), double seconds)
{
	uint64_t deadline = ipoib_now_ns() + (uint64_t)(seconds * 1e9);

	while (!cond(C)) {
		if (ipoib_now_ns() >= deadline)
			return false;
		cl_poll(C);
	}
	return true;
}

static bool
cl_c_settled(struct cl *C)
{
	int i;

	for (i = 0; i < CL_MAX_CONNS; i++)
		if (C->conns[i].active && C->conns[i].state == CL_CONNECTING)
			return false;
	return true;
}

static int
cl_connect(struct cl *C, int port, uint32_t idx)
{
	struct cl_port *p = &C->ports[port];
	struct ipoib_cm_data d = {
		.qpn = rte_cpu_to_be_32(p->qpn),
		.mtu = rte_cpu_to_be_32(C->req_mtu),
	};
	struct shm_qp_conf qc = {
		.type = SHM_QPT_RC,
		.recv_cq = C->cq,
		.srq = C->rc_srq,
		.max_recv_sge = 1,
	};
	struct shm_cm_req req = {
		.service_id = C->sid | ipoib_hwaddr_qpn(&C->h[idx].hw),
		.dgid = ipoib_hwaddr_gid(&C->h[idx].hw),
		.rnr_retry_count = C->req_rnr,
		.max_cm_retries = 15,
		.responder_resources = 4,
		.priv_len = C->req_priv_len,
		.priv = (const uint8_t *)&d,
	};
	int i = cl_conn_new(C);

	if (i < 0)
		return -ENOSPC;
	qc.qp_context = 0x80000000u | (uint32_t)i;
	C->conns[i].qp = shm_qp_create(p->port, &qc);
	if (C->conns[i].qp == NULL)
		return -ENOMEM;
	C->conns[i].port = port;
	C->conns[i].active = true;
	C->conns[i].state = CL_CONNECTING;
	req.qp = C->conns[i].qp;
	req.context = (void *)(uintptr_t)(i + 1);
	if (shm_cm_connect(p->port, &req, &C->conns[i].id) < 0) {
		C->conns[i].state = CL_FAILED;
		return -EIO;
	}
	return i;
}

static bool
cl_wait_conn(struct cl *C, int ci, double seconds)
{
	uint64_t deadline = ipoib_now_ns() + (uint64_t)(seconds * 1e9);

	while (C->conns[ci].state == CL_CONNECTING) {
		if (ipoib_now_ns() >= deadline)
			return false;
		cl_poll(C);
	}
	return true;
}

/*
 * Echo requests of len bytes over connection ci, once every 100 ms, until
 * a reply of that size comes back on RC (want_rc) or on UD.
 */
static void
cl_ping_rc(struct cl *C, int ci, uint32_t idx, uint32_t len, bool want_rc)
{
	uint64_t deadline = ipoib_now_ns() + (uint64_t)(C->timeout * 1e9), next = 0;
	struct cl_host *h = &C->h[idx];
	uint32_t ud0 = h->ud_replies, rc0 = h->rc_replies;
	uint32_t bud0 = h->big_ud, brc0 = h->big_rc, seq = 1000, sent = 0;
	bool big = len >= CL_RC_BIG;

	while (ipoib_now_ns() < deadline) {
		if (ipoib_now_ns() >= next) {
			uint32_t n = cl_echo4(C, C->conns[ci].port, idx, seq++,
					      len);

			sent += cl_send_rc(&C->conns[ci], PK_ETH_P_IPV4, C->tx,
					   n);
			next = ipoib_now_ns() + 100000000ULL;
		}
		cl_poll(C);
		if (big ? (want_rc ? h->big_rc > brc0 : h->big_ud > bud0) :
		    (want_rc ? h->rc_replies > rc0 : h->ud_replies > ud0))
			break;
	}
	printf("rc_ping: conn %d len %u sent %u replies ud %u rc %u\n", ci,
	       len, sent, h->ud_replies - ud0, h->rc_replies - rc0);
	if (want_rc ? h->rc_replies == rc0 || (big && h->big_rc == brc0) :
	    h->rc_replies != rc0 || h->ud_replies == ud0 ||
	    (big && h->big_ud == bud0))
		cl_bad(C, "echo of %u bytes: expected the reply on %s only",
		       len, want_rc ? "the host's connection" : "UD");
}

static int
cl_rc(struct cl *C, uint32_t idx, int expect_acc, int expect_reason,
      bool want_rc, bool big, uint32_t expect_mtu, bool reconnect)
{
	int ci[CL_MAX_PORTS], p, acc = 0, rej = 0, first_up = -1;
	int first_rej = -1;

	cl_probe(C, idx + 1, 4, -1, false);
	if (!C->h[idx].arp)
		return 1;
	for (p = 0; p < C->nports; p++) {
		ci[p] = cl_connect(C, p, idx);
		if (ci[p] < 0)
			cl_bad(C, "port %d: cannot send a REQ", p);
		/* one at a time: the order decides who is over the limit */
		if (!cl_wait(C, cl_c_settled, C->timeout))
			cl_bad(C, "port %d: REQ not answered", p);
	}
	for (p = 0; p < C->nports; p++) {
		struct cl_conn *c = ci[p] >= 0 ? &C->conns[ci[p]] : NULL;

		if (c == NULL)
			continue;
		if (c->state == CL_UP) {
			acc++;
			if (first_up < 0)
				first_up = ci[p];
			if (c->rep_qpn != ipoib_hwaddr_qpn(&C->h[idx].hw) ||
			    (expect_mtu && c->rep_mtu != expect_mtu))
				cl_bad(C, "REP private data: QPN 0x%06x MTU %u",
				       c->rep_qpn, c->rep_mtu);
		} else if (c->state == CL_REJECTED) {
			rej++;
			if (first_rej < 0)
				first_rej = p;
			if (expect_reason >= 0 && c->reason != expect_reason)
				cl_bad(C, "REJ reason %u, expected %d",
				       c->reason, expect_reason);
		} else {
			cl_bad(C, "port %d: connection state %d", p, c->state);
		}
	}
	printf("rc: accepted %d rejected %d\n", acc, rej);
	if (expect_acc >= 0 && acc != expect_acc)
		cl_bad(C, "%d connections accepted, expected %d", acc,
		       expect_acc);
	if (first_up < 0)
		return 0;
	cl_ping_rc(C, first_up, idx, 64, want_rc);
	if (big)	/* on UD it comes back in fragments */
		cl_ping_rc(C, first_up, idx, CL_RC_BIG, want_rc);
	if (reconnect && first_rej >= 0) {
		/* a slot frees when a connection goes: DREQ, then retry */
		int again;

		if (shm_cm_disconnect(C->conns[first_up].id) == 0)
			C->conns[first_up].state = CL_CONNECTING;
		if (!cl_wait_conn(C, first_up, C->timeout))
			cl_bad(C, "no DREP");
		again = cl_connect(C, first_rej, idx);
		if (again < 0 || !cl_wait_conn(C, again, C->timeout) ||
		    C->conns[again].state != CL_UP)
			cl_bad(C, "no REP after a connection went away");
		else
			printf("reconnect: accepted\n");
	}
	return 0;
}

static uint32_t
cl_replies(const struct cl *C, uint32_t idx)
{
	return C->h[idx].ud_replies + C->h[idx].rc_replies;
}

static bool
cl_got_reply(const struct cl *C, uint32_t idx)
{
	return cl_replies(C, idx) != 0;
}

static bool
cl_got_reqs(const struct cl *C, uint32_t idx)
{
	(void)idx;
	return C->want_reqs != 0 && C->nreqs >= C->want_reqs;
}

/*
 * Ping host idx every period_ms, polling meanwhile, until stop(C, idx)
 * holds (NULL: never) or the clock passes end; the pings sent.
 */
static uint32_t
cl_ping_until(struct cl *C, uint32_t idx, uint64_t period_ms, uint64_t end,
	      bool (*stop)(const struct cl *C, uint32_t idx))
{
	uint64_t next = 0;
	uint32_t sent = 0;

	while (ipoib_now_ns() < end && (stop == NULL || !stop(C, idx))) {
		if (ipoib_now_ns() >= next) {
			cl_s_ping(C, idx, sent + 1);
			sent++;
			next = ipoib_now_ns() + period_ms * 1000000ULL;
		}
		cl_poll(C);
	}
	return sent;
}

/*
 * K pings to host idx at once; we answer the REQ of the host's
 * connection to us only once it read them all (an ARP barrier). Then
 * what comes back: at least want replies (a hang guard), then nothing
 * more within a quiet window.
 */
static int
cl_queue(struct cl *C, uint32_t idx, uint32_t count, uint32_t want)
{
	uint64_t deadline, quiet;
	uint32_t i;

	cl_probe(C, idx + 1, 4, IPOIB_HWADDR_F_RC, false);
	if (!C->h[idx].arp)
		return 1;
	for (i = 0; i < count; i++)
		cl_s_ping(C, idx, i + 1);
	deadline = ipoib_now_ns() + (uint64_t)(C->timeout * 1e9);
	/*
	 * The host reads its UD receives in order: once it answered an ARP
	 * sent after the pings, it read them all, whatever its poll batches,
	 * and its REQ waits meanwhile (the CM is not polled).
	 */
	C->h[idx].arp = false;
	C->cm_hold = true;
	cl_s_arp(C, idx, 0);
	while (!C->h[idx].arp && ipoib_now_ns() < deadline)
		cl_poll(C);
	C->cm_hold = false;
	while (C->h[idx].rc_replies + C->h[idx].ud_replies < want &&
	       ipoib_now_ns() < deadline)
		cl_poll(C);
	/* a window in which nothing more may come: 500 ms */
	quiet = ipoib_now_ns() + 500 * 1000000ULL;
	while (ipoib_now_ns() < quiet)
		cl_poll(C);
	printf("queue: pings %u replies ud %u rc %u\n", count,
	       C->h[idx].ud_replies, C->h[idx].rc_replies);
	return 0;
}

/*
 * Until reqs REQs came (0: no limit), for seconds at most; then until
 * min(expect, pings) replies came (a hang guard: a host that drops them
 * is told so by expect, and its own counters say what it sent).
 */
static int
cl_backoff(struct cl *C, uint32_t idx, double seconds, int reason,
	   int reqs, uint32_t expect)
{
	uint64_t end;
	uint32_t sent;
	int i;

	cl_probe(C, idx + 1, 4, IPOIB_HWADDR_F_RC, false);
	if (!C->h[idx].arp)
		return 1;
	C->req_policy = reason;
	C->nreqs = 0;
	C->want_reqs = reqs;
	C->t0 = ipoib_now_ns();
	sent = cl_ping_until(C, idx, 20, C->t0 + (uint64_t)(seconds * 1e9),
			     cl_got_reqs);
	/* the replies still on their way are counted too (a hang guard) */
	end = ipoib_now_ns() + (uint64_t)(C->timeout * 1e9);
	if (expect > sent)
		expect = sent;
	while (cl_replies(C, idx) < expect && ipoib_now_ns() < end)
		cl_poll(C);
	printf("backoff: pings %u replies ud %u rc %u\nreqs:", sent,
	       C->h[idx].ud_replies, C->h[idx].rc_replies);
	for (i = 0; i < C->nreqs; i++)
		printf(" %.3f", C->req_at[i]);
	printf("\n");
	if (C->h[idx].rc_replies != 0)
		cl_bad(C, "replies came on a refused connection");
	return 0;
}

/*
 * Ping host idx every 50 ms until it replies (within --timeout) and say
 * so; then wait for a line on stdin (the test has made the host idle
 * meanwhile), take what it sent before, and ping for seconds: nothing
 * may come back.
 */
static int
cl_idle(struct cl *C, uint32_t idx, double seconds)
{
	uint32_t sent, before;
	char line[64];

	cl_probe(C, idx + 1, 4, -1, false);
	if (!C->h[idx].arp)
		return 1;
	cl_ping_until(C, idx, 50, ipoib_now_ns() + (uint64_t)(C->timeout * 1e9),
		      cl_got_reply);
	if (!cl_got_reply(C, idx)) {
		cl_bad(C, "host %u never replied", idx);
		return 1;
	}
	printf("idle: answered\n");
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL) {
		cl_bad(C, "stdin closed before the host went idle");
		return 1;
	}
	while (cl_poll(C) != 0)
		;
	before = cl_replies(C, idx);
	sent = cl_ping_until(C, idx, 50,
			     ipoib_now_ns() + (uint64_t)(seconds * 1e9), NULL);
	printf("idle: pings %u replies %u\n", sent,
	       cl_replies(C, idx) - before);
	if (cl_replies(C, idx) != before)
		cl_bad(C, "host %u replied while idle", idx);
	return 0;
}

/* The fabric's shared memory objects now, for the test to compare. */
static void
cl_list_objects(const struct cl *C)
{
	char prefix[64];
	struct dirent *e;
	DIR *d = opendir("/dev/shm");

	snprintf(prefix, sizeof(prefix), "ipoibcm.%s.", C->fabric);
	printf("objects:");
	while (d != NULL && (e = readdir(d)) != NULL)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			printf(" %s", e->d_name);
	printf("\n");
	if (d != NULL)
		closedir(d);
}

static bool
cl_c_fatal(struct cl *C)
{
	return C->conns[0].fatal;
}

static int
cl_hold(struct cl *C, uint32_t idx, double seconds)
{
	uint64_t deadline;
	struct shm_ah ah;
	double fatal_at = -1, gone_at = -1;
	int ci;

	cl_probe(C, idx + 1, 4, -1, false);
	if (!C->h[idx].arp)
		return 1;
	ci = cl_connect(C, 0, idx);
	if (ci != 0 || !cl_wait(C, cl_c_settled, C->timeout) ||
	    C->conns[0].state != CL_UP) {
		cl_bad(C, "no connection to host %u", idx);
		return 1;
	}
	printf("hold: connected\n");
	fflush(stdout);
	C->t0 = ipoib_now_ns();
	deadline = C->t0 + (uint64_t)(seconds * 1e9);
	while (ipoib_now_ns() < deadline && (fatal_at < 0 || gone_at < 0)) {
		cl_poll(C);
		if (fatal_at < 0 && cl_c_fatal(C))
			fatal_at = cl_secs(C);
		if (gone_at < 0 && shm_ah_resolve(C->f,
		    ipoib_hwaddr_gid(&C->h[idx].hw), 0, &ah) == -ENOENT)
			gone_at = cl_secs(C);
	}
	printf("hold: fatal_at %.3f gone_at %.3f\n", fatal_at, gone_at);
	cl_list_objects(C);
	if (fatal_at < 0 || gone_at < 0)
		cl_bad(C, "the host's death went unnoticed");
	return 0;
}

/* ---- command line -------------------------------------------------------- */

static void __attribute__((noreturn))
cl_usage(void)
{
	fputs("usage: " CL_PROG " --fabric NAME --hosts N [--ipv4 A.B.C.D] "
	      "[--client-ip A.B.C.D]\n"
	      "       [--ipv6-prefix P/LEN] [--guid-base HEX] [--ib-mtu N] "
	      "[--timeout S] [--ports P]\n"
	      "       [--sid ofed|rfc] [--req-rnr N] [--rep-mtu N] "
	      "[--req-mtu N] [--req-priv-len N] [--no-grh]\n"
	      "       probe [--count K] [--window W] [--flags F] [--arp-only]\n"
	      "     | rc --host I [--accept A] [--reason R] [--rc-reply] "
	      "[--big] [--mtu M] [--reconnect]\n"
	      "     | backoff --host I --seconds S [--reqs N]\n"
	      "               [--reason R (0: ignore)] [--count REPLIES]\n"
	      "     | idle --host I --seconds S\n"
	      "     | hold --host I --seconds S\n"
	      "     | queue --host I --count K [--reqs WANT]\n", stderr);
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", 1, NULL, 'f' }, { "hosts", 1, NULL, 'n' },
		{ "ipv4", 1, NULL, '4' }, { "client-ip", 1, NULL, 'c' },
		{ "ipv6-prefix", 1, NULL, '6' }, { "guid-base", 1, NULL, 'g' },
		{ "ib-mtu", 1, NULL, 'm' }, { "timeout", 1, NULL, 't' },
		{ "ports", 1, NULL, 'p' }, { "count", 1, NULL, 'k' },
		{ "window", 1, NULL, 'w' }, { "flags", 1, NULL, 'F' },
		{ "arp-only", 0, NULL, 'a' }, { "host", 1, NULL, 'i' },
		{ "accept", 1, NULL, 'A' }, { "reason", 1, NULL, 'R' },
		{ "rc-reply", 0, NULL, 'r' }, { "big", 0, NULL, 'b' },
		{ "mtu", 1, NULL, 'M' }, { "reconnect", 0, NULL, 'C' },
		{ "seconds", 1, NULL, 's' }, { "reqs", 1, NULL, 'q' },
		{ "sid", 1, NULL, 'S' }, { "req-rnr", 1, NULL, 'N' },
		{ "rep-mtu", 1, NULL, 'P' }, { "req-mtu", 1, NULL, 'U' },
		{ "req-priv-len", 1, NULL, 'L' }, { "no-grh", 0, NULL, 'G' },
		{ NULL, 0, NULL, 0 },
	};
	static struct cl C;
	struct in_addr in;
	uint32_t count = 0, window = 4, host = 0, mtu = 0;
	uint32_t expect = UINT32_MAX;
	int opt, nports = 1, flags = -1, accept = -1, reason = -1, reqs = 0;
	int ret;
	bool full = true, want_rc = false, big = false, reconnect = false;
	double seconds = 3;
	const char *cmd;
	char *slash;

	strcpy(C.fabric, "default");
	C.first_ip = 0x0a000064;
	C.client_ip = 0x0a000001;
	C.prefix[0] = 0xfd;
	C.plen = 64;
	C.ib_mtu = 2048;
	C.timeout = 20;
	C.req_policy = -1;
	C.sid = IPOIB_CM_SID_OFED;
	C.req_rnr = IPOIB_RNR_RETRY_FOREVER;
	C.rep_mtu = IPOIB_CM_BUF_SIZE;
	C.req_mtu = IPOIB_CM_BUF_SIZE;
	C.ud_global = true;
	C.req_priv_len = sizeof(struct ipoib_cm_data);
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			snprintf(C.fabric, sizeof(C.fabric), "%s", optarg);
			break;
		case 'n':
			C.hosts = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case '4':
		case 'c':
			if (inet_pton(AF_INET, optarg, &in) != 1)
				cl_usage();
			*(opt == '4' ? &C.first_ip : &C.client_ip) =
				ntohl(in.s_addr);
			break;
		case '6':
			slash = strchr(optarg, '/');
			if (slash == NULL)
				cl_usage();
			*slash = '\0';
			if (inet_pton(AF_INET6, optarg, C.prefix) != 1)
				cl_usage();
			C.plen = (unsigned int)strtoul(slash + 1, NULL, 10);
			break;
		case 'g':
			C.guid_base = strtoull(optarg, NULL, 16);
			break;
		case 'm':
			C.ib_mtu = (uint16_t)strtoul(optarg, NULL, 0);
			break;
		case 't':
			C.timeout = strtod(optarg, NULL);
			break;
		case 'p':
			nports = (int)strtol(optarg, NULL, 0);
			if (nports < 1 || nports > CL_MAX_PORTS)
				cl_usage();
			break;
		case 'k':
			count = (uint32_t)strtoul(optarg, NULL, 0);
			expect = count;
			break;
		case 'w':
			window = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'F':
			flags = (int)strtol(optarg, NULL, 0);
			break;
		case 'a':
			full = false;
			break;
		case 'i':
			host = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'A':
			accept = (int)strtol(optarg, NULL, 0);
			break;
		case 'R':
			reason = (int)strtol(optarg, NULL, 0);
			break;
		case 'r':
			want_rc = true;
			break;
		case 'b':
			big = true;
			break;
		case 'M':
			mtu = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'C':
			reconnect = true;
			break;
		case 's':
			seconds = strtod(optarg, NULL);
			break;
		case 'q':
			reqs = (int)strtol(optarg, NULL, 0);
			break;
		case 'S':
			if (strcmp(optarg, "ofed") == 0)
				C.sid = IPOIB_CM_SID_OFED;
			else if (strcmp(optarg, "rfc") == 0)
				C.sid = IPOIB_CM_SID_RFC;
			else
				cl_usage();
			break;
		case 'P':	/* any value: bad ones are for tests */
			C.rep_mtu = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'G':
			C.ud_global = false;
			break;
		case 'U':	/* any value: bad ones are for tests */
			C.req_mtu = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'L':
			C.req_priv_len = (uint8_t)strtoul(optarg, NULL, 0);
			if (C.req_priv_len > sizeof(struct ipoib_cm_data))
				cl_usage();
			break;
		case 'N':
			C.req_rnr = (uint8_t)strtoul(optarg, NULL, 0);
			if (C.req_rnr > 7)
				cl_usage();
			break;
		default:
			cl_usage();
		}
	}
	/* getopt moved the command behind the options */
	if (optind != argc - 1 || C.hosts == 0 || window == 0)
		cl_usage();
	cmd = argv[optind];
	C.h = calloc(C.hosts, sizeof(*C.h));
	if (C.h == NULL)
		return 1;
	shm_set_logger(NULL, SHM_LOG_WARNING);
	C.t0 = ipoib_now_ns();
	ret = cl_open(&C, nports);
	if (ret < 0) {
		printf("BAD: cannot join fabric %s: %s\n", C.fabric,
		       strerror(-ret));
		cl_close(&C);
		return 1;
	}
	if (strcmp(cmd, "probe") == 0)
		ret = cl_probe(&C, count, window, flags, full);
	else if (strcmp(cmd, "rc") == 0)
		ret = cl_rc(&C, host, accept, reason, want_rc, big, mtu,
			    reconnect);
	else if (strcmp(cmd, "backoff") == 0)
		ret = cl_backoff(&C, host, seconds, reason < 0 ? 28 : reason,
				 reqs, expect);
	else if (strcmp(cmd, "idle") == 0)
		ret = cl_idle(&C, host, seconds);
	else if (strcmp(cmd, "hold") == 0)
		ret = cl_hold(&C, host, seconds);
	else if (strcmp(cmd, "queue") == 0)
		ret = cl_queue(&C, host, count ? count : 10,
			       reqs > 0 ? (uint32_t)reqs : 1);
	else
		cl_usage();
	printf("ud: grh %" PRIu64 " nogrh %" PRIu64 "\n", C.ud_grh,
	       C.ud_nogrh);
	cl_close(&C);
	free(C.h);
	printf("checks: %s (%u bad)\n", C.bad || ret ? "FAILED" : "passed",
	       C.bad);
	return C.bad || ret ? 1 : 0;
}

