/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Extended statistics, from {name, offset} tables: counters of the rx and
 * tx queues (summed), of the control thread, of the HCA; and gauges (the
 * connection table, memory). Reset is a snapshot: writers stay writers.
 */

#include <stdio.h>
#include <string.h>

#include "ipoib_cm.h"
#include "ipoib_reaper.h"
#include "ipoib_xstats.h"

struct ipoib_xstat {
	const char *name;
	size_t offset;
};

#define RXQ(n, f)	{ n, offsetof(struct ipoib_rxq_stats, f) }
#define TXQ(n, f)	{ n, offsetof(struct ipoib_txq_stats, f) }
#define CTL(n, f)	{ n, offsetof(struct ipoib_ctrl_stats, f) }
#define HCA(n, f)	{ n, offsetof(struct ipoib_hca_stats, f) }

static const struct ipoib_xstat ipoib_rxq_xstats[] = {
	RXQ("rx_rc_packets", rc_packets),
	RXQ("rx_rc_bytes", rc_bytes),
	RXQ("rx_ud_packets", ud_packets),
	RXQ("rx_ud_bytes", ud_bytes),
	RXQ("rx_drop_malformed", drop_malformed),
	RXQ("rx_drop_too_long", drop_len),
	RXQ("rx_drop_mcast_loopback", drop_mcast_loop),
	RXQ("rx_drop_unknown_conn", drop_unknown_conn),
	RXQ("rx_drop_unknown_lid", drop_unknown_lid),
	RXQ("rx_bad_wr_id", bad_wr_id),
	RXQ("rx_flushed_wrs", flushed),
	RXQ("rx_nombuf", nombuf),
	RXQ("rx_mcast_bcast_packets", mc_rx[IPOIB_MC_K_BCAST]),
	RXQ("rx_mcast_ipv4_packets", mc_rx[IPOIB_MC_K_IPV4]),
	RXQ("rx_mcast_allnodes_packets", mc_rx[IPOIB_MC_K_ALLNODES]),
	RXQ("rx_mcast_solicited_packets", mc_rx[IPOIB_MC_K_SOLICITED]),
	RXQ("rx_mcast_ipv6_packets", mc_rx[IPOIB_MC_K_IPV6]),
};

static const struct ipoib_xstat ipoib_txq_xstats[] = {
	TXQ("tx_rc_packets", rc_packets),
	TXQ("tx_rc_bytes", rc_bytes),
	TXQ("tx_ud_packets", ud_packets),
	TXQ("tx_ud_bytes", ud_bytes),
	TXQ("tx_mcast_packets", mcast_packets),
	TXQ("tx_drop_no_neigh", drop_no_neigh),
	TXQ("tx_drop_malformed", drop_malformed),
	TXQ("tx_drop_too_long", drop_too_long),
	TXQ("tx_drop_vlan", drop_vlan),
	TXQ("tx_drop_ud_refused", drop_refused),
	TXQ("tx_frag_packets", frag_packets),
	TXQ("tx_frags", frags),
	TXQ("tx_frags_ud_refused", frags_refused),
	TXQ("tx_icmp_too_big", icmp_too_big),
	TXQ("tx_mcast_requests_lost", mc_req_lost),
	TXQ("tx_held", held),
	TXQ("tx_held_busy", held_busy),
	TXQ("tx_held_done", held_done),
};

static const struct ipoib_xstat ipoib_ctrl_xstats[] = {
	CTL("conn_established_active", conn_established_active),
	CTL("conn_established_passive", conn_established_passive),
	CTL("conn_failed", conn_failed),
	CTL("cm_timeouts", cm_timeouts),
	CTL("cm_malformed", cm_malformed),
	CTL("cm_malformed_short", cm_short_priv),
	CTL("cm_malformed_mtu", cm_bad_mtu),
	CTL("conn_retries", retries),
	CTL("conn_promotions", promotions),
	CTL("conn_reaped", reaped),
	CTL("conn_evictions", evictions),
	CTL("conn_spills", spills),
	CTL("qp_errors", qp_errors),
	CTL("conn_drain_timeouts", drain_timeouts),
	CTL("peers_forgotten", peers_forgotten),
	CTL("conn_pool_reuses", pool_reuses),
	CTL("mem_pools_unknown_to_eal", pools_unknown_to_eal),
	CTL("mcast_joins", mc_joins),
	CTL("mcast_joins_refused", mc_joins_refused),
	CTL("mcast_leaves", mc_leaves),
	CTL("mcast_list_refused", mc_list_refused),
	CTL("mac_addr_set_refused", mac_set_refused),
	CTL("secondary_attaches", sec_attaches),
	CTL("secondary_refused", sec_refused),
	CTL("cm_adv_no_rc", adv_no_rc),
	CTL("cm_adv_untold", adv_untold),
	CTL("path_queries", path_queries),
	CTL("path_failures", path_failures),
	CTL("path_timeouts", path_timeouts),
};

static const struct ipoib_xstat ipoib_hca_xstats[] = {
	HCA("hca_rnr_naks", rnr_naks),
	HCA("hca_ud_no_wr_drops", ud_no_wr),
	HCA("hca_pkey_drops", pkey_drops),
	HCA("hca_qkey_drops", qkey_drops),
	HCA("hca_len_errors", len_errs),
	HCA("hca_fault_drops", fault_drops),
	HCA("hca_cm_retries", cm_retries),
	HCA("hca_cm_drops", cm_drops),
	HCA("hca_link_down_drops", link_down_drops),
};

/* REJ reasons named among the xstats (IBTA 12.6.7.2). */
static const uint16_t ipoib_rej_reasons[] = {
	IPOIB_REJ_NO_QP, IPOIB_REJ_NO_RESOURCES, IPOIB_REJ_TIMEOUT,
	IPOIB_REJ_INVALID_SERVICE_ID, IPOIB_REJ_STALE_CONN, IPOIB_REJ_CONSUMER,
};

static const char *const ipoib_gauge_names[] = {
	"conns_tx_connected",
	"conns_tx_connecting",
	"conns_rx",
	"peers",
	"peers_spilled",
	"peers_ud_only",
	"peer_mac_collisions",
	"peer_learn_failures",
	"mem_budget_bytes",
	"mem_used_bytes",
	"mem_spare_bytes",
	"conn_slots_used",
	"srq_limit_events",
	"port_down_events",
	"mcast_groups",
	"mem_app_held_pools",
	"mem_app_held_bytes",
	"mem_heap_bytes",
	"mem_hca_bytes",
	"rcu_idle_scans",
};

#define NB_RXQ		RTE_DIM(ipoib_rxq_xstats)
#define NB_TXQ		RTE_DIM(ipoib_txq_xstats)
#define NB_CTL		RTE_DIM(ipoib_ctrl_xstats)
#define NB_HCA		RTE_DIM(ipoib_hca_xstats)
#define NB_REJ		(2 * RTE_DIM(ipoib_rej_reasons))
#define NB_GAUGE	RTE_DIM(ipoib_gauge_names)
/* the application's ARP/ND sent without the RC flag (ipoib_adv.c) */
#define NB_ADV		1
#define ADV_NAME	"tx_adv_no_rc"
#define NB_MEM		IPOIB_MEM_NB
#define NB_XSTATS	(NB_RXQ + NB_TXQ + NB_ADV + NB_CTL + NB_HCA + \
			 NB_REJ + NB_GAUGE + NB_MEM)
/* The first gauge's id: the gauges follow the counters */
#define IPOIB_XSTAT_GAUGE0	(NB_RXQ + NB_TXQ + NB_ADV + NB_CTL + NB_HCA + \
				 NB_REJ)

int
ipoib_xstats_get_names(struct rte_eth_dev *dev,
		       struct rte_eth_xstat_name *names, unsigned int n)
{
	unsigned int i, k = 0;

	RTE_SET_USED(dev);
	if (names == NULL || n < NB_XSTATS)
		return NB_XSTATS;
	for (i = 0; i < NB_RXQ; i++)
		strlcpy(names[k++].name, ipoib_rxq_xstats[i].name,
			RTE_ETH_XSTATS_NAME_SIZE);
	for (i = 0; i < NB_TXQ; i++)
		strlcpy(names[k++].name, ipoib_txq_xstats[i].name,
			RTE_ETH_XSTATS_NAME_SIZE);
	strlcpy(names[k++].name, ADV_NAME, RTE_ETH_XSTATS_NAME_SIZE);
	for (i = 0; i < NB_CTL; i++)
		strlcpy(names[k++].name, ipoib_ctrl_xstats[i].name,
			RTE_ETH_XSTATS_NAME_SIZE);
	for (i = 0; i < NB_HCA; i++)
		strlcpy(names[k++].name, ipoib_hca_xstats[i].name,
			RTE_ETH_XSTATS_NAME_SIZE);
	for (i = 0; i < RTE_DIM(ipoib_rej_reasons); i++) {
		snprintf(names[k++].name, RTE_ETH_XSTATS_NAME_SIZE,
			 "rej_sent_reason_%u", ipoib_rej_reasons[i]);
		snprintf(names[k++].name, RTE_ETH_XSTATS_NAME_SIZE,
			 "rej_rcvd_reason_%u", ipoib_rej_reasons[i]);
	}
	for (i = 0; i < NB_GAUGE; i++)
		strlcpy(names[k++].name, ipoib_gauge_names[i],
			RTE_ETH_XSTATS_NAME_SIZE);
	for (i = 0; i < NB_MEM; i++)
		strlcpy(names[k++].name, ipoib_mem_names[i],
			RTE_ETH_XSTATS_NAME_SIZE);
	return NB_XSTATS;
}

static uint64_t
ipoib_field(const void *base, size_t off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)base + off, sizeof(v));
	return v;
}

/* A counter a datapath lcore writes (ipoib_cm.h) */
static uint64_t
ipoib_dp_field(const void *base, size_t off)
{
	return __atomic_load_n((const uint64_t *)
			       ((const uint8_t *)base + off), __ATOMIC_RELAXED);
}

/* Sum a queue counter over the queues, each since its last reset. */
static uint64_t
ipoib_sum_rxq(const struct rte_eth_dev *dev, size_t off)
{
	uint64_t sum = 0;
	uint16_t q;

	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		const struct ipoib_rxq *rxq = dev->data->rx_queues[q];

		if (rxq != NULL)
			sum += ipoib_dp_field(&rxq->stats, off) -
			       ipoib_field(&rxq->stats_base, off);
	}
	return sum;
}

static uint64_t
ipoib_sum_txq(const struct rte_eth_dev *dev, size_t off)
{
	uint64_t sum = 0;
	uint16_t q;

	for (q = 0; q <= dev->data->nb_tx_queues; q++) {
		const struct ipoib_txq *txq = ipoib_txq_nth(dev, q);

		if (txq != NULL)
			sum += ipoib_dp_field(&txq->stats, off) -
			       ipoib_field(&txq->stats_base, off);
	}
	return sum;
}

void
ipoib_gauges(struct ipoib_priv *priv, struct ipoib_gauges *g)
{
	uint32_t i;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < ipoib_peers_nr(&priv->pt); i++) {
		const struct ipoib_peer *p = ipoib_peer_at(&priv->pt, i);

		if (!ipoib_peer_live(p))
			continue;
		g->peers++;
		switch (__atomic_load_n(&p->state, __ATOMIC_RELAXED)) {
		case IPOIB_PEER_CONNECTED:
			g->tx_connected++;
			break;
		case IPOIB_PEER_CONNECTING:
			g->tx_connecting++;
			break;
		case IPOIB_PEER_SPILLED:
			g->spilled++;
			break;
		case IPOIB_PEER_UD:
			g->ud_only++;
			break;
		}
	}
	g->rx = priv->nr_passive;
	g->conns = priv->nr_active + priv->nr_passive;
}

/* The gauges, under ctrl_lock: the peer table is scanned for them. */
static void
ipoib_gauge_values(struct ipoib_priv *priv, const struct ipoib_hca_stats *hs,
		   uint64_t *v)
{
	struct ipoib_gauges g;

	ipoib_gauges(priv, &g);
	v[0] = g.tx_connected;
	v[1] = g.tx_connecting;
	v[2] = g.rx;
	v[3] = g.peers;
	v[4] = g.spilled;
	v[5] = g.ud_only;
	v[6] = __atomic_load_n(&priv->pt.collisions, __ATOMIC_RELAXED);
	v[7] = __atomic_load_n(&priv->pt.learn_fail, __ATOMIC_RELAXED);
	v[8] = priv->cfg.mem_budget;
	v[9] = priv->mem_used;
	v[10] = priv->spare_bytes;
	v[11] = priv->nr_conns;
	v[12] = priv->srq_limit_events;
	v[13] = priv->port_down_events;
	v[14] = ipoib_mcast_nr_joined(priv);
	v[15] = priv->hca == NULL ? 0 :
		ipoib_reaper_waiting(priv->hca, &v[16]);
	if (priv->hca == NULL)
		v[16] = 0;
	v[17] = ipoib_mem_heap_total(&priv->acct);
	v[18] = hs->mem_bytes;
	v[19] = __atomic_load_n(&priv->pt.rcu.scans, __ATOMIC_RELAXED);
}

/* Every xstat; the gauges (a scan of the peer table) only if asked. */
static void
ipoib_xstats_fill(struct rte_eth_dev *dev, struct rte_eth_xstat *xs,
		  bool gauges)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	struct ipoib_hca_stats hs = { 0 };
	uint64_t v[NB_GAUGE] = { 0 };
	unsigned int i, k = 0;

	if (priv->hca != NULL)
		priv->ops->stats_get(priv->hca, &hs);
	pthread_mutex_lock(&priv->ctrl_lock);
	for (i = 0; i < NB_RXQ; i++, k++)
		xs[k].value = ipoib_sum_rxq(dev, ipoib_rxq_xstats[i].offset);
	for (i = 0; i < NB_TXQ; i++, k++)
		xs[k].value = ipoib_sum_txq(dev, ipoib_txq_xstats[i].offset);
	xs[k++].value = __atomic_load_n(&priv->adv.tx_no_rc, __ATOMIC_RELAXED) -
			priv->adv.tx_no_rc_base;
	for (i = 0; i < NB_CTL; i++, k++)
		xs[k].value = ipoib_field(&priv->cstats,
					  ipoib_ctrl_xstats[i].offset) -
			      ipoib_field(&priv->cstats_base,
					  ipoib_ctrl_xstats[i].offset);
	for (i = 0; i < NB_HCA; i++, k++)
		xs[k].value = ipoib_field(&hs, ipoib_hca_xstats[i].offset) -
			      ipoib_field(&priv->hstats_base,
					  ipoib_hca_xstats[i].offset);
	for (i = 0; i < RTE_DIM(ipoib_rej_reasons); i++) {
		uint16_t r = ipoib_rej_reasons[i];

		xs[k++].value = priv->cstats.rej_sent[r] -
				priv->cstats_base.rej_sent[r];
		xs[k++].value = priv->cstats.rej_rcvd[r] -
				priv->cstats_base.rej_rcvd[r];
	}
	RTE_BUILD_BUG_ON(RTE_DIM(v) != 20);
	RTE_VERIFY(k == IPOIB_XSTAT_GAUGE0);
	if (gauges)
		ipoib_gauge_values(priv, &hs, v);
	pthread_mutex_unlock(&priv->ctrl_lock);
	for (i = 0; i < NB_GAUGE; i++)
		xs[k++].value = v[i];
	for (i = 0; i < NB_MEM; i++)
		xs[k++].value = ipoib_mem_get(&priv->acct, i);
	for (i = 0; i < NB_XSTATS; i++)
		xs[i].id = i;
}

int
ipoib_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xs,
		 unsigned int n)
{
	if (xs == NULL || n < NB_XSTATS)
		return NB_XSTATS;
	ipoib_xstats_fill(dev, xs, true);
	return NB_XSTATS;
}

/*
 * Some xstats by id, as an application polling a few counters asks:
 * the peer table is scanned only when a gauge is among them.
 */
int
ipoib_xstats_get_by_id(struct rte_eth_dev *dev, const uint64_t *ids,
		       uint64_t *values, unsigned int n)
{
	struct rte_eth_xstat xs[NB_XSTATS];
	bool gauges = ids == NULL;
	unsigned int i;

	if (values == NULL)
		return NB_XSTATS;
	if (ids == NULL)
		n = RTE_MIN(n, (unsigned int)NB_XSTATS);
	for (i = 0; ids != NULL && i < n; i++) {
		if (ids[i] >= NB_XSTATS)
			return -EINVAL;
		gauges |= ids[i] >= IPOIB_XSTAT_GAUGE0 &&
			  ids[i] < IPOIB_XSTAT_GAUGE0 + NB_GAUGE;
	}
	ipoib_xstats_fill(dev, xs, gauges);
	for (i = 0; i < n; i++)
		values[i] = xs[ids != NULL ? ids[i] : i].value;
	return (int)n;
}

int
ipoib_xstats_reset(struct rte_eth_dev *dev)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	uint16_t q;

	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		struct ipoib_rxq *rxq = dev->data->rx_queues[q];

		if (rxq != NULL)
			IPOIB_STATS_LOAD(&rxq->stats_base, &rxq->stats);
	}
	for (q = 0; q <= dev->data->nb_tx_queues; q++) {
		struct ipoib_txq *txq = ipoib_txq_nth(dev, q);

		if (txq != NULL)
			IPOIB_STATS_LOAD(&txq->stats_base, &txq->stats);
	}
	pthread_mutex_lock(&priv->ctrl_lock);
	priv->cstats_base = priv->cstats;
	priv->adv.tx_no_rc_base = __atomic_load_n(&priv->adv.tx_no_rc,
						  __ATOMIC_RELAXED);
	if (priv->hca != NULL)
		priv->ops->stats_get(priv->hca, &priv->hstats_base);
	pthread_mutex_unlock(&priv->ctrl_lock);
	return 0;
}
