/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_kvargs.h>

#include "ipoib_devargs.h"
#include "ipoib_log.h"

#define IPOIB_DEFAULT_FABRIC		"default"
#define IPOIB_DEFAULT_MAX_CONNS		128	/* Linux non-SRQ limit */
#define IPOIB_DEFAULT_MEM_BUDGET	(256ULL << 20)
#define IPOIB_DEFAULT_PKEY		0xffff
#define IPOIB_DEFAULT_IB_MTU		2048
#define IPOIB_DEFAULT_REAP_IDLE		512	/* Linux: stale after 512 s */
#define IPOIB_DEFAULT_RETRY_MIN		100
#define IPOIB_DEFAULT_RETRY_MAX		30000

#define IPOIB_MAX_CONNS_LIMIT		65536
#define IPOIB_MEM_BUDGET_MIN		(64ULL << 10)
#define IPOIB_MEM_BUDGET_MAX		(1ULL << 40)
#define IPOIB_REAP_IDLE_MAX		604800	/* a week */
#define IPOIB_RETRY_LIMIT		3600000	/* an hour */

typedef int (*ipoib_arg_handler_t)(const char *value, struct ipoib_config *cfg);

struct ipoib_arg {
	const char *key;
	const char *accepted;	/* printed when the value is refused */
	ipoib_arg_handler_t handler;
};

/* Unsigned integer in [min, max]; the whole string must be the number. */
static int
parse_uint(const char *value, int base, uint64_t min, uint64_t max,
	   uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (value == NULL || *value == '\0' || !isalnum((unsigned char)*value))
		return -EINVAL;
	errno = 0;
	v = strtoull(value, &end, base);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* One of a fixed list of words; returns its index. */
static int
parse_word(const char *value, const char *const words[], unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (strcmp(value, words[i]) == 0)
			return (int)i;
	return -EINVAL;
}

/* A name of 1..max characters from [A-Za-z0-9_-] (and '.' if dots). */
static int
parse_name(const char *value, char *out, size_t max, bool dots)
{
	size_t len = strlen(value), i;

	if (len == 0 || len > max)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		unsigned char c = value[i];

		if (!isalnum(c) && c != '_' && c != '-' && !(dots && c == '.'))
			return -EINVAL;
	}
	memcpy(out, value, len + 1);
	return 0;
}

static int
arg_transport(const char *value, struct ipoib_config *cfg)
{
	static const char *const words[] = { "shm", "verbs" };
	int i = parse_word(value, words, RTE_DIM(words));

	if (i < 0)
		return i;
	cfg->transport = (enum ipoib_transport_kind)i;
	return 0;
}

static int
arg_fabric(const char *value, struct ipoib_config *cfg)
{
	return parse_name(value, cfg->fabric, IPOIB_FABRIC_NAME_MAX, false);
}

static int
arg_guid(const char *value, struct ipoib_config *cfg)
{
	const char *hex = value;
	uint64_t v;

	if (strncmp(hex, "0x", 2) == 0 || strncmp(hex, "0X", 2) == 0)
		hex += 2;
	if (strlen(hex) > 16 || parse_uint(hex, 16, 1, UINT64_MAX, &v) < 0)
		return -EINVAL;
	cfg->guid = v;
	return 0;
}

static int
arg_dev(const char *value, struct ipoib_config *cfg)
{
	return parse_name(value, cfg->dev, IPOIB_DEV_NAME_MAX, true);
}

static int
arg_port(const char *value, struct ipoib_config *cfg)
{
	uint64_t v;
	int ret = parse_uint(value, 10, 1, UINT8_MAX, &v);

	if (ret == 0)
		cfg->port = (uint8_t)v;
	return ret;
}

static int
arg_gid_index(const char *value, struct ipoib_config *cfg)
{
	uint64_t v;
	int ret = parse_uint(value, 10, 0, UINT8_MAX, &v);

	if (ret == 0)
		cfg->gid_index = (uint8_t)v;
	return ret;
}

static int
arg_srq(const char *value, struct ipoib_config *cfg)
{
	static const char *const words[] = { "auto", "on", "off" };
	int i = parse_word(value, words, RTE_DIM(words));

	if (i < 0)
		return i;
	cfg->srq = (enum ipoib_srq_mode)i;
	return 0;
}

static int
arg_max_conns(const char *value, struct ipoib_config *cfg)
{
	uint64_t v;
	int ret = parse_uint(value, 10, 1, IPOIB_MAX_CONNS_LIMIT, &v);

	if (ret == 0)
		cfg->max_conns = (uint32_t)v;
	return ret;
}

/* Bytes with an optional K, M or G (binary) suffix. */
static int
arg_mem_budget(const char *value, struct ipoib_config *cfg)
{
	char num[24];
	size_t len = strlen(value);
	unsigned int shift = 0;
	uint64_t v;

	if (len == 0 || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, value, len + 1);
	switch (num[len - 1]) {
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	}
	if (shift != 0)
		num[len - 1] = '\0';
	if (parse_uint(num, 10, 1, IPOIB_MEM_BUDGET_MAX >> shift, &v) < 0)
		return -EINVAL;
	v <<= shift;
	if (v < IPOIB_MEM_BUDGET_MIN)
		return -EINVAL;
	cfg->mem_budget = v;
	return 0;
}

/* IBTA: the low 15 bits are the key; 0x0000 and 0x8000 are invalid. */
static int
arg_pkey(const char *value, struct ipoib_config *cfg)
{
	uint64_t v;

	if (parse_uint(value, 0, 1, UINT16_MAX, &v) < 0 || (v & 0x7fff) == 0)
		return -EINVAL;
	cfg->pkey = (uint16_t)v;
	return 0;
}

static int
arg_ib_mtu(const char *value, struct ipoib_config *cfg)
{
	uint64_t v;

	if (parse_uint(value, 10, 256, 4096, &v) < 0 || !rte_is_power_of_2(v))
		return -EINVAL;
	cfg->ib_mtu = (uint16_t)v;
	return 0;
}

static int
arg_mode(const char *value, struct ipoib_config *cfg)
{
	static const char *const words[] = { "eth", "raw" };
	int i = parse_word(value, words, RTE_DIM(words));

	if (i < 0)
		return i;
	cfg->mode = (enum ipoib_frame_mode)i;
	return 0;
}

/* The port writes the capture file: a path it cannot write is refused. */
static int
arg_capture(const char *value, struct ipoib_config *cfg)
{
	size_t len = strlen(value);
	char dir[PATH_MAX];
	const char *why = NULL;
	struct stat st;
	char *slash;

	if (len == 0 || len >= sizeof(cfg->capture))
		return -EINVAL;
	memcpy(dir, value, len + 1);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		strcpy(dir, ".");
	else
		slash[slash == dir ? 1 : 0] = '\0';
	if (access(dir, W_OK | X_OK) != 0)
		why = strerror(errno);
	else if (stat(value, &st) == 0 && S_ISDIR(st.st_mode))
		why = "it is a directory";
	else if (access(value, F_OK) == 0 && access(value, W_OK) != 0)
		why = strerror(errno);
	if (why != NULL) {
		IPOIB_LOG(ERR, "devarg capture=%s: the file cannot be written: "
			  "%s", value, why);
		return -EINVAL;
	}
	memcpy(cfg->capture, value, len + 1);
	return 0;
}

static int
arg_reap_idle(const char *value, struct ipoib_config *cfg)
{
	uint64_t v;
	int ret = parse_uint(value, 10, 0, IPOIB_REAP_IDLE_MAX, &v);

	if (ret == 0)
		cfg->reap_idle = (uint32_t)v;
	return ret;
}

static int
arg_retry_min(const char *value, struct ipoib_config *cfg)
{
	uint64_t v;
	int ret = parse_uint(value, 10, 1, IPOIB_RETRY_LIMIT, &v);

	if (ret == 0)
		cfg->retry_min = (uint32_t)v;
	return ret;
}

static int
arg_retry_max(const char *value, struct ipoib_config *cfg)
{
	uint64_t v;
	int ret = parse_uint(value, 10, 1, IPOIB_RETRY_LIMIT, &v);

	if (ret == 0)
		cfg->retry_max = (uint32_t)v;
	return ret;
}

static int
arg_u32(const char *value, uint64_t min, uint64_t max, uint32_t *out)
{
	uint64_t v;
	int ret = parse_uint(value, 10, min, max, &v);

	if (ret == 0)
		*out = (uint32_t)v;
	return ret;
}

static int
arg_shm_max_qp(const char *value, struct ipoib_config *cfg)
{
	return arg_u32(value, 1, 65536, &cfg->shm_max_qp);
}

static int
arg_shm_max_srq_wr(const char *value, struct ipoib_config *cfg)
{
	return arg_u32(value, 1, 1 << 20, &cfg->shm_max_srq_wr);
}

static int
arg_shm_max_cqe(const char *value, struct ipoib_config *cfg)
{
	return arg_u32(value, 1, 1 << 24, &cfg->shm_max_cqe);
}

static int
arg_fault_drop(const char *value, struct ipoib_config *cfg)
{
	return arg_u32(value, 0, 1000000, &cfg->fault_drop_ppm);
}

static int
arg_fault_cm_delay(const char *value, struct ipoib_config *cfg)
{
	return arg_u32(value, 0, 60000, &cfg->fault_cm_delay_ms);
}

static int
arg_fault_rej(const char *value, struct ipoib_config *cfg)
{
	uint32_t n;

	if (strcmp(value, "all") == 0) {
		cfg->fault_rej_after = 0;
		return 0;
	}
	if (arg_u32(value, 0, 65536, &n) < 0)
		return -EINVAL;
	cfg->fault_rej_after = (int32_t)n;
	return 0;
}

/* CM message types separated by ':' (kvargs keeps ',' for itself). */
static int
arg_fault_cm_drop(const char *value, struct ipoib_config *cfg)
{
	static const char *const words[] = {
		"", "req", "rep", "rej", "rtu", "dreq", "drep",
	};
	char buf[64], *tok, *save = NULL;
	uint32_t mask = 0;
	int i;

	if (strlen(value) == 0 || strlen(value) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, value);
	for (tok = strtok_r(buf, ":", &save); tok != NULL;
	     tok = strtok_r(NULL, ":", &save)) {
		i = parse_word(tok, words, RTE_DIM(words));
		if (i <= 0)
			return -EINVAL;
		mask |= 1u << i;
	}
	cfg->fault_cm_drop_mask = mask;
	return 0;
}

static const struct ipoib_arg ipoib_args[] = {
	{ IPOIB_ARG_TRANSPORT, "shm or verbs", arg_transport },
	{ IPOIB_ARG_FABRIC, "1-31 characters of [A-Za-z0-9_-]", arg_fabric },
	{ IPOIB_ARG_GUID, "a non-zero 64-bit hex number, e.g. 0x0002c90300a1b2c3",
	  arg_guid },
	{ IPOIB_ARG_DEV, "an RDMA device name of 1-63 characters of "
	  "[A-Za-z0-9_.-]", arg_dev },
	{ IPOIB_ARG_PORT, "1-255", arg_port },
	{ IPOIB_ARG_GID_INDEX, "0-255", arg_gid_index },
	{ IPOIB_ARG_SRQ, "auto, on or off", arg_srq },
	{ IPOIB_ARG_MAX_CONNS, "1-65536", arg_max_conns },
	{ IPOIB_ARG_MEM_BUDGET, "64K-1024G: bytes with an optional K, M or G "
	  "suffix", arg_mem_budget },
	{ IPOIB_ARG_PKEY, "0x0001-0xffff, not 0x8000", arg_pkey },
	{ IPOIB_ARG_IB_MTU, "256, 512, 1024, 2048 or 4096", arg_ib_mtu },
	{ IPOIB_ARG_MODE, "eth or raw", arg_mode },
	{ IPOIB_ARG_CAPTURE, "a path the port can write, in a directory that "
	  "exists", arg_capture },
	{ IPOIB_ARG_REAP_IDLE, "0-604800 seconds (0: never)", arg_reap_idle },
	{ IPOIB_ARG_RETRY_MIN, "1-3600000 milliseconds", arg_retry_min },
	{ IPOIB_ARG_RETRY_MAX, "1-3600000 milliseconds", arg_retry_max },
	{ IPOIB_ARG_SHM_MAX_QP, "1-65536", arg_shm_max_qp },
	{ IPOIB_ARG_SHM_MAX_SRQ_WR, "1-1048576", arg_shm_max_srq_wr },
	{ IPOIB_ARG_SHM_MAX_CQE, "1-16777216", arg_shm_max_cqe },
	{ IPOIB_ARG_FAULT_DROP, "0-1000000 (parts per million)",
	  arg_fault_drop },
	{ IPOIB_ARG_FAULT_CM_DELAY, "0-60000 milliseconds",
	  arg_fault_cm_delay },
	{ IPOIB_ARG_FAULT_REJ, "all or 0-65536 (connections accepted)",
	  arg_fault_rej },
	{ IPOIB_ARG_FAULT_CM_DROP, "CM message types req, rep, rej, rtu, "
	  "dreq, drep joined with ':'", arg_fault_cm_drop },
};

/* Keys that only mean something to one transport. */
static const char *const ipoib_shm_only[] = {
	IPOIB_ARG_FABRIC, IPOIB_ARG_GUID, IPOIB_ARG_IB_MTU, IPOIB_ARG_CAPTURE,
	IPOIB_ARG_SHM_MAX_QP, IPOIB_ARG_SHM_MAX_SRQ_WR, IPOIB_ARG_SHM_MAX_CQE,
	IPOIB_ARG_FAULT_DROP, IPOIB_ARG_FAULT_CM_DELAY, IPOIB_ARG_FAULT_REJ,
	IPOIB_ARG_FAULT_CM_DROP,
};
static const char *const ipoib_verbs_only[] = {
	IPOIB_ARG_DEV, IPOIB_ARG_PORT, IPOIB_ARG_GID_INDEX,
};

void
ipoib_config_defaults(struct ipoib_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->transport = IPOIB_TRANSPORT_SHM;
	strcpy(cfg->fabric, IPOIB_DEFAULT_FABRIC);
	cfg->port = 1;
	cfg->srq = IPOIB_SRQ_AUTO;
	cfg->max_conns = IPOIB_DEFAULT_MAX_CONNS;
	cfg->mem_budget = IPOIB_DEFAULT_MEM_BUDGET;
	cfg->pkey = IPOIB_DEFAULT_PKEY;
	cfg->ib_mtu = IPOIB_DEFAULT_IB_MTU;
	cfg->mode = IPOIB_MODE_ETH;
	cfg->reap_idle = IPOIB_DEFAULT_REAP_IDLE;
	cfg->retry_min = IPOIB_DEFAULT_RETRY_MIN;
	cfg->retry_max = IPOIB_DEFAULT_RETRY_MAX;
	cfg->fault_rej_after = -1;
}

static const struct ipoib_arg *
ipoib_arg_find(const char *key)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(ipoib_args); i++)
		if (strcmp(key, ipoib_args[i].key) == 0)
			return &ipoib_args[i];
	return NULL;
}

static bool
ipoib_key_in(const struct rte_kvargs *kvlist, const char *const keys[],
	     unsigned int n, const char **found)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (rte_kvargs_count(kvlist, keys[i]) != 0) {
			*found = keys[i];
			return true;
		}
	}
	return false;
}

static void
ipoib_log_valid_keys(const char *name)
{
	char keys[512];
	size_t off = 0;
	unsigned int i;

	for (i = 0; i < RTE_DIM(ipoib_args) && off < sizeof(keys); i++)
		off += snprintf(keys + off, sizeof(keys) - off, "%s%s",
				i ? ", " : "", ipoib_args[i].key);
	IPOIB_LOG(ERR, "%s: accepted keys: %s", name, keys);
}

/* Checks between keys, once every key has been parsed. */
static int
ipoib_config_check(const struct ipoib_config *cfg,
		   const struct rte_kvargs *kvlist, const char *name)
{
	const char *key;

	if (cfg->retry_min > cfg->retry_max) {
		IPOIB_LOG(ERR, "%s: devarg %s=%u exceeds %s=%u: accepted values "
			  "are %s <= %s", name, IPOIB_ARG_RETRY_MIN,
			  cfg->retry_min, IPOIB_ARG_RETRY_MAX, cfg->retry_max,
			  IPOIB_ARG_RETRY_MIN, IPOIB_ARG_RETRY_MAX);
		return -EINVAL;
	}
	if (cfg->transport == IPOIB_TRANSPORT_SHM &&
	    ipoib_key_in(kvlist, ipoib_verbs_only, RTE_DIM(ipoib_verbs_only),
			 &key)) {
		IPOIB_LOG(ERR, "%s: devarg %s applies to transport=verbs only",
			  name, key);
		return -EINVAL;
	}
	if (cfg->transport == IPOIB_TRANSPORT_VERBS &&
	    ipoib_key_in(kvlist, ipoib_shm_only, RTE_DIM(ipoib_shm_only),
			 &key)) {
		IPOIB_LOG(ERR, "%s: devarg %s applies to transport=shm only",
			  name, key);
		return -EINVAL;
	}
	return 0;
}

/*
 * Parse the devargs string of port @name into @cfg (already holding the
 * defaults). Every refusal names the key and the accepted values.
 */
int
ipoib_config_parse(struct ipoib_config *cfg, const char *name,
		   const char *args)
{
	struct rte_kvargs *kvlist;
	unsigned int i;
	int ret = 0;

	if (args == NULL || *args == '\0')
		return 0;
	kvlist = rte_kvargs_parse(args, NULL);
	if (kvlist == NULL) {
		IPOIB_LOG(ERR, "%s: devargs \"%s\" are not a key=value list",
			  name, args);
		return -EINVAL;
	}
	for (i = 0; i < kvlist->count && ret == 0; i++) {
		const struct rte_kvargs_pair *pair = &kvlist->pairs[i];
		const struct ipoib_arg *arg = ipoib_arg_find(pair->key);

		if (arg == NULL) {
			IPOIB_LOG(ERR, "%s: unknown devarg key \"%s\"", name,
				  pair->key);
			ipoib_log_valid_keys(name);
			ret = -EINVAL;
		} else if (rte_kvargs_count(kvlist, pair->key) > 1) {
			IPOIB_LOG(ERR, "%s: devarg %s given more than once: "
				  "accepted is a single %s=<value>", name,
				  pair->key, pair->key);
			ret = -EINVAL;
		} else if (pair->value == NULL ||
			   arg->handler(pair->value, cfg) < 0) {
			IPOIB_LOG(ERR, "%s: invalid value \"%s\" for devarg %s: "
				  "accepted values are %s", name,
				  pair->value ? pair->value : "", pair->key,
				  arg->accepted);
			ret = -EINVAL;
		}
	}
	if (ret == 0)
		ret = ipoib_config_check(cfg, kvlist, name);
	rte_kvargs_free(kvlist);
	return ret;
}

static const char *
ipoib_transport_name(enum ipoib_transport_kind t)
{
	return t == IPOIB_TRANSPORT_VERBS ? "verbs" : "shm";
}

/* Log the effective configuration once, after parsing. */
void
ipoib_config_log(const struct ipoib_config *cfg, const char *name)
{
	static const char *const srq[] = { "auto", "on", "off" };

	IPOIB_LOG(INFO, "%s: transport=%s fabric=%s guid=0x%016" PRIx64
		  " srq=%s max_conns=%u mem_budget=%" PRIu64 " pkey=0x%04x"
		  " ib_mtu=%u mode=%s reap_idle=%u retry=%u..%u ms%s%s",
		  name, ipoib_transport_name(cfg->transport), cfg->fabric,
		  cfg->guid, srq[cfg->srq], cfg->max_conns, cfg->mem_budget,
		  cfg->pkey, cfg->ib_mtu,
		  cfg->mode == IPOIB_MODE_RAW ? "raw" : "eth", cfg->reap_idle,
		  cfg->retry_min, cfg->retry_max,
		  cfg->capture[0] ? " capture=" : "", cfg->capture);
}
