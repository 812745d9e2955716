/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Results: the per-host table (hosts with activity, then the totals) and
 * the JSON file {"hosts": [...], "totals": {...}, "process": {...}}.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "peers.h"

static const char *const peers_act_names[] = {
	[PEERS_ACT_NONE] = "-",
	[PEERS_ACT_CONNECTING] = "connecting",
	[PEERS_ACT_UP] = "up",
	[PEERS_ACT_BACKOFF] = "backoff",
};

/* The counters of struct peers_stats by name, for both outputs. */
#define PEERS_STAT(f)	{ #f, offsetof(struct peers_stats, f) }
static const struct {
	const char *name;
	size_t off;
} peers_stat_fields[] = {
	PEERS_STAT(ud_rx), PEERS_STAT(ud_tx),
	PEERS_STAT(rc_rx), PEERS_STAT(rc_tx),
	{ "echo_replies", offsetof(struct peers_stats, echo) },
	{ "udp_echoed", offsetof(struct peers_stats, udp) },
	{ "arp_answered", offsetof(struct peers_stats, arp) },
	{ "nd_answered", offsetof(struct peers_stats, nd) },
	{ "conn_accepted", offsetof(struct peers_stats, accepted) },
	{ "conn_rejected", offsetof(struct peers_stats, rejected) },
	{ "active_established", offsetof(struct peers_stats, act_up) },
	{ "active_failed", offsetof(struct peers_stats, act_failed) },
	{ "rc_fallback", offsetof(struct peers_stats, rc_fallback) },
	{ "dropped", offsetof(struct peers_stats, dropped) },
	PEERS_STAT(cm_queued), PEERS_STAT(cm_queue_drops),
	PEERS_STAT(cm_bad_len), PEERS_STAT(cm_bad_mtu), PEERS_STAT(cm_bad_qpn),
	PEERS_STAT(neigh_updates), PEERS_STAT(neigh_rc_lost),
	PEERS_STAT(neigh_locked),
};

static uint64_t
peers_stat(const struct peers_stats *st, unsigned int i)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)st + peers_stat_fields[i].off, sizeof(v));
	return v;
}

static bool
peers_host_active(const struct peers_host *h)
{
	static const struct peers_stats zero;

	return memcmp(&h->st, &zero, sizeof(zero)) != 0 ||
	       h->act != PEERS_ACT_NONE || h->passive != 0;
}

/* All counters are uint64_t: summed as an array. */
_Static_assert(sizeof(struct peers_stats) % sizeof(uint64_t) == 0,
	       "struct peers_stats holds uint64_t counters only");

static void
peers_sum(const struct peers *P, struct peers_stats *sum)
{
	uint32_t i;
	unsigned int k;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < P->nr_hosts; i++) {
		for (k = 0; k < sizeof(*sum) / sizeof(uint64_t); k++)
			((uint64_t *)sum)[k] +=
				((const uint64_t *)&P->hosts[i].st)[k];
	}
}

static void
peers_ipv4_str(uint32_t a, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u.%u", a >> 24, (a >> 16) & 0xff,
		 (a >> 8) & 0xff, a & 0xff);
}

/* The last 8 bytes of the GID: the port GUID. */
static void
peers_gid_suffix(const struct peers_host *h, char *buf, size_t len)
{
	const uint8_t *g = ipoib_hwaddr_gid(&h->hw) + 8;

	snprintf(buf, len, "%02x%02x:%02x%02x:%02x%02x:%02x%02x", g[0], g[1],
		 g[2], g[3], g[4], g[5], g[6], g[7]);
}

static void
peers_table_row(FILE *out, const char *lead, const struct peers_stats *st,
		uint64_t passive_or_hosts, const char *active)
{
	fprintf(out, "%s %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64
		" %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %5" PRIu64
		" %5" PRIu64 " %5" PRIu64 "  %s\n", lead, st->ud_rx, st->ud_tx,
		st->rc_rx, st->rc_tx, st->echo, st->udp, st->arp, st->nd,
		st->accepted, st->rejected, passive_or_hosts, active);
}

void
peers_report_table(const struct peers *P, FILE *out)
{
	char lead[96], ip[16], gid[24], act[32];
	struct peers_stats sum;
	uint32_t i, shown = 0, up = 0, passive = 0;

	fprintf(out, "%5s %-15s %-8s %-19s %7s %7s %7s %7s %7s %7s %7s %7s "
		"%5s %5s %5s  %s\n", "host", "ipv4", "qpn", "gid-suffix",
		"ud_rx", "ud_tx", "rc_rx", "rc_tx", "echo", "udp", "arp", "nd",
		"acc", "rej", "conns", "active");
	for (i = 0; i < P->nr_hosts; i++) {
		const struct peers_host *h = &P->hosts[i];

		up += h->act == PEERS_ACT_UP;
		passive += h->passive;
		if (!peers_host_active(h))
			continue;
		shown++;
		peers_ipv4_str(h->ipv4, ip, sizeof(ip));
		peers_gid_suffix(h, gid, sizeof(gid));
		snprintf(lead, sizeof(lead), "%5u %-15s 0x%06x %-19s", i, ip,
			 h->qpn, gid);
		peers_table_row(out, lead, &h->st, h->passive,
				peers_act_names[h->act]);
	}
	peers_sum(P, &sum);
	snprintf(lead, sizeof(lead), "total %-10u %-29s", P->nr_hosts,
		 "hosts");
	snprintf(act, sizeof(act), "%u up", up);
	peers_table_row(out, lead, &sum, passive, act);
	fprintf(out, "(%u of %u hosts with activity shown; %" PRIu64
		" multicast frames for other hosts, %" PRIu64 " dropped)\n",
		shown, P->nr_hosts, P->mcast_other, sum.dropped);
	fflush(out);
}

long
peers_rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *fp = fopen("/proc/self/status", "r");

	if (fp == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(fp);
	return kib;
}

static void
peers_json_stats(FILE *fp, const struct peers_stats *st)
{
	unsigned int k;

	for (k = 0; k < sizeof(peers_stat_fields) /
			sizeof(peers_stat_fields[0]); k++)
		fprintf(fp, ", \"%s\": %" PRIu64, peers_stat_fields[k].name,
			peers_stat(st, k));
}

static void
peers_json_host(FILE *fp, const struct peers *P, uint32_t i)
{
	const struct peers_host *h = &P->hosts[i];
	const uint8_t *g = ipoib_hwaddr_gid(&h->hw);
	char ip4[16], ip6[INET6_ADDRSTRLEN];
	uint8_t mac[IPOIB_MAC_LEN];
	unsigned int k;

	peers_ipv4_str(h->ipv4, ip4, sizeof(ip4));
	inet_ntop(AF_INET6, h->ipv6, ip6, sizeof(ip6));
	ipoib_hwaddr_to_mac(mac, &h->hw);
	fprintf(fp, "    {\"index\": %u, \"ipv4\": \"%s\", \"ipv6\": \"%s\", "
		"\"qpn\": %u, \"lid\": %u, \"flags\": %u, \"gid\": \"", i, ip4,
		ip6, h->qpn, h->lid, ipoib_hwaddr_flags(&h->hw));
	for (k = 0; k < 16; k += 2)
		fprintf(fp, "%s%02x%02x", k ? ":" : "", g[k], g[k + 1]);
	fprintf(fp, "\", \"mac\": \"%02x:%02x:%02x:%02x:%02x:%02x\", "
		"\"conn_passive\": %u, \"active_state\": \"%s\", "
		"\"backoff_ms\": %u", mac[0], mac[1], mac[2], mac[3], mac[4],
		mac[5], h->passive, peers_act_names[h->act], h->backoff_ms);
	peers_json_stats(fp, &h->st);
	fprintf(fp, "}%s\n", i + 1 < P->nr_hosts ? "," : "");
}

/* What the fabric dropped or refused, summed over the hosts' ports. */
static void
peers_json_fabric(FILE *fp, const struct peers *P)
{
	struct shm_port_counters sum, c;
	uint32_t i;

	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < P->nr_hosts; i++) {
		shm_port_counters(P->hosts[i].port, &c);
		sum.rnr_naks += c.rnr_naks;
		sum.ud_no_wr += c.ud_no_wr;
		sum.pkey_drops += c.pkey_drops;
		sum.qkey_drops += c.qkey_drops;
		sum.len_errs += c.len_errs;
		sum.fault_drops += c.fault_drops;
		sum.cm_retries += c.cm_retries;
		sum.cm_drops += c.cm_drops;
	}
	fprintf(fp, ", \"fabric_drops\": {\"ud_no_wr\": %" PRIu64
		", \"len_errs\": %" PRIu64 ", \"pkey_drops\": %" PRIu64
		", \"qkey_drops\": %" PRIu64 ", \"rnr_naks\": %" PRIu64
		", \"fault_drops\": %" PRIu64 ", \"cm_retries\": %" PRIu64
		", \"cm_drops\": %" PRIu64 "}", sum.ud_no_wr, sum.len_errs,
		sum.pkey_drops, sum.qkey_drops, sum.rnr_naks, sum.fault_drops,
		sum.cm_retries, sum.cm_drops);
}

/* Written to path.tmp, then renamed: readers never see half a file. */
int
peers_report_json(const struct peers *P, const char *path)
{
	char tmp[4096];
	struct peers_stats sum;
	uint32_t i, up = 0, passive = 0;
	FILE *fp;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fp = fopen(tmp, "w");
	if (fp == NULL)
		return -errno;
	fprintf(fp, "{\n  \"hosts\": [\n");
	for (i = 0; i < P->nr_hosts; i++) {
		peers_json_host(fp, P, i);
		up += P->hosts[i].act == PEERS_ACT_UP;
		passive += P->hosts[i].passive;
	}
	peers_sum(P, &sum);
	fprintf(fp, "  ],\n  \"totals\": {\"hosts\": %u, \"conn_passive\": %u, "
		"\"active_up\": %u", P->nr_hosts, passive, up);
	peers_json_stats(fp, &sum);
	fprintf(fp, "},\n  \"process\": {\"pid\": %d, \"fabric\": \"%s\", "
		"\"guid_base\": \"0x%016" PRIx64 "\", \"start_seconds\": %.3f, "
		"\"run_seconds\": %.3f, \"rss_kib\": %ld, \"idle\": %s, "
		"\"solicited_groups\": %u, \"mcast_other\": %" PRIu64 ", "
		"\"stale_completions\": %" PRIu64 ", \"completion_errors\": %"
		PRIu64 ", \"ud_without_grh\": %" PRIu64 ", \"personality\": "
		"\"%s\"", (int)getpid(), P->conf.fabric, P->conf.guid_base,
		(P->ready_ns - P->start_ns) / 1e9,
		(ipoib_now_ns() - P->ready_ns) / 1e9, peers_rss_kib(),
		P->idle ? "true" : "false", P->sol_groups, P->mcast_other,
		P->stale_wc, P->wc_errors, P->ud_nogrh,
		peers_persona_name(P->conf.persona));
	peers_json_fabric(fp, P);
	fprintf(fp, "}\n}\n");
	if (fclose(fp) != 0 || rename(tmp, path) != 0) {
		int ret = -errno;

		unlink(tmp);
		return ret;
	}
	return 0;
}
