/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The one place where the DPDK releases we build against differ (22.11,
 * 24.11, 25.11; doc/guides/nics/ipoib_cm_build.rst). The code is written
 * against the newest API; this header supplies it on older releases,
 * keyed on RTE_VERSION or on a macro DPDK defines. A new difference goes
 * here, never as an #if at a call site.
 */

#ifndef IPOIB_COMPAT_H
#define IPOIB_COMPAT_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <rte_lcore.h>
#include <rte_thread.h>
#include <rte_version.h>

/*
 * 24.11: the addresses of struct rte_ipv6_hdr are struct rte_ipv6_addr
 * (uint8_t a[16]) instead of uint8_t[16]. These name the 16 bytes as an
 * array of uint8_t on every release: index them, copy them, compare them.
 */
#if RTE_VERSION >= RTE_VERSION_NUM(24, 11, 0, 0)
#define IPOIB_IPV6_SRC(h)	((h)->src_addr.a)
#define IPOIB_IPV6_DST(h)	((h)->dst_addr.a)
#else
#define IPOIB_IPV6_SRC(h)	((h)->src_addr)
#define IPOIB_IPV6_DST(h)	((h)->dst_addr)
#endif

/*
 * After 24.11 (25.11 has them): a packed struct is struct
 * __rte_packed_begin name { ... } __rte_packed_end; __rte_packed is
 * deprecated (an error with -Werror). Keyed on the macro itself.
 */
#ifndef __rte_packed_begin
#define __rte_packed_begin
#define __rte_packed_end	__rte_packed
#endif

/*
 * 25.11: rx_queue_count returns int (a negative errno on error), not
 * uint32_t; ipoib_queue_count_t is what it returns.
 */
#if RTE_VERSION >= RTE_VERSION_NUM(25, 11, 0, 0)
typedef int ipoib_queue_count_t;
#else
typedef uint32_t ipoib_queue_count_t;
#endif

/*
 * 25.11: the per-queue counters left struct rte_eth_stats for struct
 * eth_queue_stats, given to the stats_get op beside it (NULL when the
 * caller does not want them). IPOIB_ETH_STATS_GET(name, fill) defines the
 * stats_get op name() of every release over one
 * int fill(dev, stats, ipoib_eth_qstats *qstats), qstats NULL or not.
 */
#if RTE_VERSION >= RTE_VERSION_NUM(25, 11, 0, 0)
typedef struct eth_queue_stats ipoib_eth_qstats;
#define IPOIB_ETH_STATS_GET(name, fill) \
static int \
name(struct rte_eth_dev *dev, struct rte_eth_stats *stats, \
     struct eth_queue_stats *qstats) \
{ \
	return fill(dev, stats, qstats); \
}
#else
typedef struct rte_eth_stats ipoib_eth_qstats;	/* it holds them itself */
#define IPOIB_ETH_STATS_GET(name, fill) \
static int \
name(struct rte_eth_dev *dev, struct rte_eth_stats *stats) \
{ \
	return fill(dev, stats, stats); \
}
#endif

/*
 * 24.03: dev_supported_ptypes_get returns the number of entries too; the
 * list's RTE_PTYPE_UNKNOWN terminator (which earlier releases read up to)
 * is not one of them.
 */
#if RTE_VERSION >= RTE_VERSION_NUM(24, 3, 0, 0)
#define IPOIB_PTYPES_GET_PARAMS	struct rte_eth_dev *dev, size_t *no_of_elements
#define IPOIB_PTYPES_RETURN(list) \
	do { \
		*no_of_elements = RTE_DIM(list) - 1; \
		return list; \
	} while (0)
#else
#define IPOIB_PTYPES_GET_PARAMS	struct rte_eth_dev *dev
#define IPOIB_PTYPES_RETURN(list)	return list
#endif

/* 23.03: rte_tel_data_add_dict_uint, the u64 one deprecated. */
#if RTE_VERSION < RTE_VERSION_NUM(23, 3, 0, 0)
#define rte_tel_data_add_dict_uint rte_tel_data_add_dict_u64
#endif

/*
 * 23.11: rte_thread_create_control (rte_thread_t, a function returning
 * uint32_t) replaces rte_ctrl_thread_create (pthread_t, void *), removed
 * in 24.11. Before 23.11 it is rte_ctrl_thread_create, which gives the
 * thread the same name and CPU affinity, starting the function through a
 * trampoline; rte_thread_join() works on it as on any rte_thread_t.
 */
#if RTE_VERSION < RTE_VERSION_NUM(23, 11, 0, 0)
struct ipoib_compat_thread_start {
	rte_thread_func func;
	void *arg;
};

static inline void *
ipoib_compat_thread_start(void *p)
{
	struct ipoib_compat_thread_start s =
		*(struct ipoib_compat_thread_start *)p;

	free(p);
	return (void *)(uintptr_t)s.func(s.arg);
}

/* As in 23.11: 0, or a negative errno. */
static inline int
rte_thread_create_control(rte_thread_t *thread, const char *name,
			  rte_thread_func thread_func, void *arg)
{
	struct ipoib_compat_thread_start *s = malloc(sizeof(*s));
	pthread_t tid;
	int ret;

	if (s == NULL)
		return -ENOMEM;
	s->func = thread_func;
	s->arg = arg;
	ret = rte_ctrl_thread_create(&tid, name, NULL,
				     ipoib_compat_thread_start, s);
	if (ret != 0) {
		free(s);
		return ret;
	}
	thread->opaque_id = (uintptr_t)tid;
	return 0;
}
#endif

#endif /* IPOIB_COMPAT_H */
