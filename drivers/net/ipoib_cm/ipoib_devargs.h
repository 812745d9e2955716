/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_DEVARGS_H
#define IPOIB_DEVARGS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipoib_hca_types.h"

#define IPOIB_ARG_TRANSPORT	"transport"
#define IPOIB_ARG_FABRIC	"fabric"
#define IPOIB_ARG_GUID		"guid"
#define IPOIB_ARG_DEV		"dev"
#define IPOIB_ARG_PORT		"port"
#define IPOIB_ARG_GID_INDEX	"gid_index"
#define IPOIB_ARG_SRQ		"srq"
#define IPOIB_ARG_MAX_CONNS	"max_conns"
#define IPOIB_ARG_MEM_BUDGET	"mem_budget"
#define IPOIB_ARG_PKEY		"pkey"
#define IPOIB_ARG_IB_MTU	"ib_mtu"
#define IPOIB_ARG_MODE		"mode"
#define IPOIB_ARG_CAPTURE	"capture"
#define IPOIB_ARG_REAP_IDLE	"reap_idle"
#define IPOIB_ARG_RETRY_MIN	"retry_min"
#define IPOIB_ARG_RETRY_MAX	"retry_max"
#define IPOIB_ARG_PATH_TIMEOUT	"path_timeout"
#define IPOIB_ARG_CTRL_NICE	"ctrl_nice"
#define IPOIB_ARG_SHM_MAX_QP	"shm_max_qp"
#define IPOIB_ARG_SHM_MAX_SRQ_WR "shm_max_srq_wr"
#define IPOIB_ARG_SHM_MAX_CQE	"shm_max_cqe"
#define IPOIB_ARG_SHM_CM_LISTEN	"shm_cm_listen"
#define IPOIB_ARG_SHM_SA_PATH	"shm_sa_path"
#define IPOIB_ARG_FAULT_DROP	"fault_drop"
#define IPOIB_ARG_FAULT_CM_DELAY "fault_cm_delay"
#define IPOIB_ARG_FAULT_REJ	"fault_rej"
#define IPOIB_ARG_FAULT_CM_DROP	"fault_cm_drop"
#define IPOIB_ARG_FAULT_SA_DROP	"fault_sa_drop"

#define IPOIB_FABRIC_NAME_MAX	31
#define IPOIB_NICE_MIN		(-20)	/* setpriority(2)'s range */
#define IPOIB_NICE_MAX		19
#define IPOIB_DEV_NAME_MAX	63

enum ipoib_transport_kind {
	IPOIB_TRANSPORT_SHM,
	IPOIB_TRANSPORT_VERBS,
};

enum ipoib_srq_mode {
	IPOIB_SRQ_AUTO,
	IPOIB_SRQ_ON,
	IPOIB_SRQ_OFF,
};

/* transport=shm: the port on the software fabric (ipoib_hca_shm.c). */
struct ipoib_shm_config {
	char fabric[IPOIB_FABRIC_NAME_MAX + 1];
	uint64_t guid;			/* 0: derived from the device name */
	uint16_t ib_mtu;
	char capture[PATH_MAX];
	/* resource limits of the software HCA (0: its defaults) */
	uint32_t max_qp;
	uint32_t max_srq_wr;
	uint32_t max_cqe;
	/*
	 * 0 (ipoib): the CM listens on the IPoIB service IDs; 1 (none): it
	 * does not, as a process using librdmacm on InfiniBand cannot
	 */
	uint8_t cm_listen;
	/*
	 * 0 (off): a unicast address handle finds its route in the fabric's
	 * directory at once; 1 (on): the port asks the fabric's SA for the
	 * path first, as on InfiniBand (ipoib_path.c)
	 */
	uint8_t sa_path;
	/* fault injection on what this port receives */
	struct ipoib_faults faults;
};

/* transport=verbs: a port of an RDMA device (verbs/ipoib_verbs_port.c). */
struct ipoib_verbs_config {
	char dev[IPOIB_DEV_NAME_MAX + 1];	/* empty: the first device */
	uint8_t port;
	uint8_t gid_index;
};

/* A thread's nice value, if one was asked for (ipoib_ctrl.c). */
struct ipoib_nice {
	bool set;
	int8_t value;			/* IPOIB_NICE_MIN..IPOIB_NICE_MAX */
};

/*
 * The port's configuration: defaults, then devargs, then checks. The
 * keys of a transport are its own (struct ipoib_hca_ops.args).
 */
struct ipoib_config {
	enum ipoib_transport_kind transport;
	enum ipoib_srq_mode srq;
	uint32_t max_conns;
	uint64_t mem_budget;		/* bytes */
	uint16_t pkey;
	uint32_t reap_idle;		/* seconds, 0: never */
	uint32_t retry_min;		/* milliseconds */
	uint32_t retry_max;		/* milliseconds */
	uint32_t path_timeout;		/* milliseconds: a path query's */
	struct ipoib_nice ctrl_nice;	/* the control thread's */
	struct ipoib_shm_config shm;
	struct ipoib_verbs_config verbs;
};

/*
 * One devarg: an unsigned integer in [min, max] stored in the field at
 * off (size bytes), one of a list of words stored as its index, or a
 * value of its own kind read by parse. A word key with size 0 is checked
 * and stored nowhere.
 */
struct ipoib_arg {
	const char *key;
	const char *accepted;		/* printed when the value is refused */
	size_t off;			/* the field in struct ipoib_config */
	size_t size;
	uint64_t min, max;		/* integers */
	const char *const *words;	/* words, NULL-terminated */
	int (*parse)(const char *value, void *field);
};

#define IPOIB_CFG_FIELD(f) \
	.off = offsetof(struct ipoib_config, f), \
	.size = sizeof(((struct ipoib_config *)NULL)->f)
#define IPOIB_ARG_UINT(k, acc, f, lo, hi) \
	{ .key = (k), .accepted = (acc), IPOIB_CFG_FIELD(f), \
	  .min = (lo), .max = (hi) }
#define IPOIB_ARG_WORD(k, f, w) \
	{ .key = (k), IPOIB_CFG_FIELD(f), .words = (w) }
#define IPOIB_ARG_PARSE(k, acc, f, fn) \
	{ .key = (k), .accepted = (acc), IPOIB_CFG_FIELD(f), .parse = (fn) }

/* Parsers for the transports' keys; 0 or -EINVAL. */
int ipoib_parse_uint(const char *value, int base, uint64_t min, uint64_t max,
		     uint64_t *out);
int ipoib_parse_word(const char *value, const char *const words[]);
int ipoib_parse_name(const char *value, char *out, size_t max, bool dots);

/* The string RTE_PMD_REGISTER_PARAM_STRING publishes. */
#define IPOIB_PARAM_STRING \
	IPOIB_ARG_TRANSPORT "=shm|verbs " \
	IPOIB_ARG_FABRIC "=<name> " \
	IPOIB_ARG_GUID "=<hex64> " \
	IPOIB_ARG_DEV "=<rdma device> " \
	IPOIB_ARG_PORT "=<1-255> " \
	IPOIB_ARG_GID_INDEX "=<0-255> " \
	IPOIB_ARG_SRQ "=auto|on|off " \
	IPOIB_ARG_MAX_CONNS "=<1-65536> " \
	IPOIB_ARG_MEM_BUDGET "=<bytes>[K|M|G] " \
	IPOIB_ARG_PKEY "=<0x0001-0xffff> " \
	IPOIB_ARG_IB_MTU "=256|512|1024|2048|4096 " \
	IPOIB_ARG_MODE "=eth " \
	IPOIB_ARG_CAPTURE "=<pcap file> " \
	IPOIB_ARG_REAP_IDLE "=<seconds> " \
	IPOIB_ARG_RETRY_MIN "=<ms> " \
	IPOIB_ARG_RETRY_MAX "=<ms> " \
	IPOIB_ARG_PATH_TIMEOUT "=<ms> " \
	IPOIB_ARG_CTRL_NICE "=<-20..19> " \
	IPOIB_ARG_SHM_MAX_QP "=<n> " \
	IPOIB_ARG_SHM_MAX_SRQ_WR "=<n> " \
	IPOIB_ARG_SHM_MAX_CQE "=<n> " \
	IPOIB_ARG_SHM_CM_LISTEN "=ipoib|none " \
	IPOIB_ARG_SHM_SA_PATH "=off|on " \
	IPOIB_ARG_FAULT_DROP "=<ppm> " \
	IPOIB_ARG_FAULT_CM_DELAY "=<ms> " \
	IPOIB_ARG_FAULT_REJ "=all|<n> " \
	IPOIB_ARG_FAULT_CM_DROP "=<req:rep:rej:rtu:dreq:drep> " \
	IPOIB_ARG_FAULT_SA_DROP "=<ppm>"

struct ipoib_hca_ops;

void ipoib_config_defaults(struct ipoib_config *cfg);
int ipoib_config_parse(struct ipoib_config *cfg, const char *name,
		       const char *args);
void ipoib_config_log(const struct ipoib_config *cfg, const char *name);
/* The ops of a transport; NULL if this build does not have it. */
const struct ipoib_hca_ops *
ipoib_transport_ops(enum ipoib_transport_kind kind);

#endif /* IPOIB_DEVARGS_H */
