/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Telemetry (dpdk-telemetry.py):
 *   /ipoibcm/summary,<port>          the port and its connection table
 *   /ipoibcm/conns,<port>[,<first>]  peers from index <first>: state,
 *                                    path, traffic, idle time; a page at a
 *                                    time, "next" says where to go on
 *   /ipoibcm/mcast,<port>            multicast groups: joined, and why
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "ipoib_cm.h"
#include "ipoib_compat.h"
#include "ipoib_log.h"
#include "ipoib_telemetry.h"
#include "ipoib_xstats.h"

#define IPOIB_TEL_PAGE		40	/* peers per answer: 16 KiB replies */

static const char *const ipoib_peer_state_names[] = {
	[IPOIB_PEER_UD] = "ud-only",
	[IPOIB_PEER_NEW] = "new",
	[IPOIB_PEER_CONNECTING] = "connecting",
	[IPOIB_PEER_CONNECTED] = "connected",
	[IPOIB_PEER_SPILLED] = "spilled",
};

/* "<port>[,<n>]": the port must be one of ours. */
static struct ipoib_priv *
ipoib_tel_port(const char *params, unsigned long *arg)
{
	struct ipoib_priv *priv;
	unsigned long port;
	char *end;

	if (params == NULL || *params == '\0')
		return NULL;
	port = strtoul(params, &end, 10);
	if (end == params || (*end != '\0' && *end != ','))
		return NULL;
	*arg = 0;
	if (*end == ',') {
		const char *a = end + 1;

		*arg = strtoul(a, &end, 10);
		if (end == a || *end != '\0')
			return NULL;
	}
	if (port >= RTE_MAX_ETHPORTS)
		return NULL;
	priv = ipoib_priv_of_port((uint16_t)port);
	return priv;
}

/* What the port allocated, by category (ipoib_mem.h), as in xstats. */
static void
ipoib_tel_mem(struct ipoib_priv *priv, struct rte_tel_data *d)
{
	struct ipoib_hca_stats hs = { 0 };
	unsigned int i;

	if (priv->hca != NULL)
		priv->ops->stats_get(priv->hca, &hs);
	for (i = 0; i < IPOIB_MEM_NB; i++)
		rte_tel_data_add_dict_uint(d, ipoib_mem_names[i],
					   ipoib_mem_get(&priv->acct, i));
	rte_tel_data_add_dict_uint(d, "mem_heap_bytes",
				   ipoib_mem_heap_total(&priv->acct));
	rte_tel_data_add_dict_uint(d, "mem_hca_bytes", hs.mem_bytes);
}

static int
ipoib_tel_summary(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct ipoib_priv *priv;
	struct ipoib_gauges g;
	unsigned long unused;

	RTE_SET_USED(cmd);
	priv = ipoib_tel_port(params, &unused);
	if (priv == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&priv->ctrl_lock);
	ipoib_gauges(priv, &g);
	rte_tel_data_add_dict_int(d, "port", priv->eth_dev->data->port_id);
	rte_tel_data_add_dict_string(d, "hca", priv->attr.name);
	rte_tel_data_add_dict_string(d, "receive",
		!__atomic_load_n(&priv->started, __ATOMIC_ACQUIRE) ?
		"stopped" : priv->srq ? "SRQ" : "non-SRQ");
	rte_tel_data_add_dict_uint(d, "ud_qpn", priv->ud_qpn);
	rte_tel_data_add_dict_uint(d, "mtu", priv->eth_dev->data->mtu);
	rte_tel_data_add_dict_uint(d, "ud_mtu", priv->ud_mtu);
	rte_tel_data_add_dict_uint(d, "qkey", priv->qkey);
	rte_tel_data_add_dict_uint(d, "max_conns", priv->cfg.max_conns);
	rte_tel_data_add_dict_uint(d, "peers", g.peers);
	rte_tel_data_add_dict_uint(d, "tx_connected", g.tx_connected);
	rte_tel_data_add_dict_uint(d, "tx_connecting", g.tx_connecting);
	rte_tel_data_add_dict_uint(d, "rx_connections", g.rx);
	rte_tel_data_add_dict_uint(d, "spilled", g.spilled);
	rte_tel_data_add_dict_uint(d, "ud_only", g.ud_only);
	rte_tel_data_add_dict_uint(d, "mem_budget", priv->cfg.mem_budget);
	rte_tel_data_add_dict_uint(d, "mem_used", priv->mem_used);
	ipoib_tel_mem(priv, d);
	rte_tel_data_add_dict_uint(d, "promotions", priv->cstats.promotions);
	rte_tel_data_add_dict_uint(d, "reaped", priv->cstats.reaped);
	rte_tel_data_add_dict_uint(d, "evictions", priv->cstats.evictions);
	rte_tel_data_add_dict_uint(d, "spills", priv->cstats.spills);
	rte_tel_data_add_dict_uint(d, "retries", priv->cstats.retries);
	pthread_mutex_unlock(&priv->ctrl_lock);
	return 0;
}

/* One peer: state, the path it is sent on, traffic, idle time. */
static struct rte_tel_data *
ipoib_tel_peer(const struct ipoib_peers *pt, const struct ipoib_peer *p,
	       uint64_t now)
{
	struct rte_tel_data *c = rte_tel_data_alloc();
	uint32_t st = __atomic_load_n(&p->state, __ATOMIC_RELAXED);
	char gid[48];
	const uint8_t *g = ipoib_hwaddr_gid(&p->hw);
	struct ipoib_peer_ctr n[IPOIB_PEER_CTR_KINDS];
	const struct ipoib_peer_ctr *rc = &n[IPOIB_PEER_CTR_TX_RC];
	const struct ipoib_peer_ctr *ud = &n[IPOIB_PEER_CTR_TX_UD];
	const struct ipoib_peer_ctr *rx = &n[IPOIB_PEER_CTR_RX];

	if (c == NULL)
		return NULL;
	ipoib_peer_counts(pt, p, n);
	snprintf(gid, sizeof(gid), "%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		 g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
	rte_tel_data_start_dict(c);
	rte_tel_data_add_dict_string(c, "state",
				     st < RTE_DIM(ipoib_peer_state_names) ?
				     ipoib_peer_state_names[st] : "?");
	rte_tel_data_add_dict_string(c, "path",
				     st == IPOIB_PEER_CONNECTED ? "RC" : "UD");
	rte_tel_data_add_dict_string(c, "rx_path", p->rx != NULL ? "RC" :
				     "UD");
	rte_tel_data_add_dict_string(c, "gid", gid);
	rte_tel_data_add_dict_uint(c, "qpn", p->qpn);
	rte_tel_data_add_dict_uint(c, "tx_packets", rc->pkts + ud->pkts);
	rte_tel_data_add_dict_uint(c, "tx_rc_packets", rc->pkts);
	rte_tel_data_add_dict_uint(c, "tx_bytes", rc->bytes + ud->bytes);
	rte_tel_data_add_dict_uint(c, "rx_packets", rx->pkts);
	rte_tel_data_add_dict_uint(c, "rx_bytes", rx->bytes);
	rte_tel_data_add_dict_uint(c, "idle_ms",
				   (now - p->last_active_ns) / 1000000);
	return c;
}

static int
ipoib_tel_conns(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct ipoib_priv *priv;
	unsigned long first;
	uint64_t now = ipoib_now_ns();
	uint32_t i, n = 0, nr;
	char key[16];

	RTE_SET_USED(cmd);
	priv = ipoib_tel_port(params, &first);
	if (priv == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&priv->ctrl_lock);
	nr = ipoib_peers_nr(&priv->pt);
	for (i = (uint32_t)RTE_MIN(first, (unsigned long)nr);
	     i < nr && n < IPOIB_TEL_PAGE; i++) {
		const struct ipoib_peer *p = ipoib_peer_at(&priv->pt, i);
		struct rte_tel_data *c;

		if (!ipoib_peer_live(p))
			continue;
		c = ipoib_tel_peer(&priv->pt, p, now);
		if (c == NULL)
			break;
		snprintf(key, sizeof(key), "%u", i);
		if (rte_tel_data_add_dict_container(d, key, c, 0) < 0) {
			rte_tel_data_free(c);
			break;
		}
		n++;
	}
	rte_tel_data_add_dict_uint(d, "next", i < nr ? i : 0);
	pthread_mutex_unlock(&priv->ctrl_lock);
	return 0;
}

static int
ipoib_tel_mcast(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct ipoib_priv *priv;
	unsigned long unused;

	RTE_SET_USED(cmd);
	priv = ipoib_tel_port(params, &unused);
	if (priv == NULL)
		return -EINVAL;
	pthread_mutex_lock(&priv->ctrl_lock);
	ipoib_mcast_tel(priv, d);
	pthread_mutex_unlock(&priv->ctrl_lock);
	return 0;
}

RTE_INIT(ipoib_telemetry_init)
{
	/* help texts are at most RTE_TEL_MAX_STRING_LEN - 1 bytes */
	if (rte_telemetry_register_cmd("/ipoibcm/summary", ipoib_tel_summary,
		"A net_ipoibcm port and its connection table. "
		"Parameters: int port_id") < 0 ||
	    rte_telemetry_register_cmd("/ipoibcm/conns", ipoib_tel_conns,
		"Peers of a net_ipoibcm port, 40 from first_peer; 'next' goes "
		"on. Parameters: int port_id[,int first_peer]") < 0 ||
	    rte_telemetry_register_cmd("/ipoibcm/mcast", ipoib_tel_mcast,
		"Multicast groups of a net_ipoibcm port: MGID, joined, and "
		"why. Parameters: int port_id") < 0)
		IPOIB_LOG(ERR, "cannot register the telemetry commands");
}
