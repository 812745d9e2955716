/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Devargs: the port's own keys here, each transport's keys in its table
 * (struct ipoib_hca_ops.args). The transport is read first; a key of
 * another transport is refused naming the transport it applies to.
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bitops.h>
#include <rte_common.h>
#include <rte_kvargs.h>

#include "ipoib_devargs.h"
#include "ipoib_hca.h"
#include "ipoib_log.h"

#define IPOIB_DEFAULT_MAX_CONNS		128	/* Linux non-SRQ limit */
#define IPOIB_DEFAULT_MEM_BUDGET	(256ULL << 20)
#define IPOIB_DEFAULT_PKEY		0xffff
#define IPOIB_DEFAULT_REAP_IDLE		512	/* Linux: stale after 512 s */
#define IPOIB_DEFAULT_RETRY_MIN		100
#define IPOIB_DEFAULT_RETRY_MAX		30000
/* as Linux's path query (ipoib_main.c, path_rec_start(): 3000 ms) */
#define IPOIB_DEFAULT_PATH_TIMEOUT	3000
#define IPOIB_PATH_TIMEOUT_MAX		600000

#define IPOIB_MAX_CONNS_LIMIT		65536
#define IPOIB_MEM_BUDGET_MIN		(64ULL << 10)
#define IPOIB_MEM_BUDGET_MAX		(1ULL << 40)
#define IPOIB_REAP_IDLE_MAX		604800	/* a week */
#define IPOIB_RETRY_LIMIT		3600000	/* an hour */

/* The words of each word-valued key, in enum order; also for the log. */
static const char *const ipoib_transport_words[] = { "shm", "verbs", NULL };
static const char *const ipoib_srq_words[] = { "auto", "on", "off", NULL };
/* Ethernet emulation only: raw IPoIB frames are not implemented. */
static const char *const ipoib_mode_words[] = { "eth", NULL };

/* The transports, by enum ipoib_transport_kind; NULL: not in this build. */
static const struct ipoib_hca_ops *const ipoib_transports[] = {
	[IPOIB_TRANSPORT_SHM] = &ipoib_hca_shm_ops,
#ifdef IPOIB_HAVE_VERBS
	[IPOIB_TRANSPORT_VERBS] = &ipoib_hca_verbs_ops,
#else
	[IPOIB_TRANSPORT_VERBS] = NULL,
#endif
};

const struct ipoib_hca_ops *
ipoib_transport_ops(enum ipoib_transport_kind kind)
{
	return (unsigned int)kind < RTE_DIM(ipoib_transports) ?
	       ipoib_transports[kind] : NULL;
}

/* Unsigned integer in [min, max]; the whole string must be the number. */
int
ipoib_parse_uint(const char *value, int base, uint64_t min, uint64_t max,
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

/* One of a NULL-terminated list of words; returns its index. */
int
ipoib_parse_word(const char *value, const char *const words[])
{
	unsigned int i;

	for (i = 0; words[i] != NULL; i++)
		if (strcmp(value, words[i]) == 0)
			return (int)i;
	return -EINVAL;
}

/* A name of 1..max characters from [A-Za-z0-9_-] (and '.' if dots). */
int
ipoib_parse_name(const char *value, char *out, size_t max, bool dots)
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

/* Store v in an unsigned field of size bytes (its range was checked). */
static void
store_uint(void *field, size_t size, uint64_t v)
{
	switch (size) {
	case 0:
		break;		/* checked, not stored */
	case sizeof(uint8_t):
		*(uint8_t *)field = (uint8_t)v;
		break;
	case sizeof(uint16_t):
		*(uint16_t *)field = (uint16_t)v;
		break;
	case sizeof(uint32_t):
		*(uint32_t *)field = (uint32_t)v;
		break;
	default:
		*(uint64_t *)field = v;
		break;
	}
}

/* Bytes with an optional K, M or G (binary) suffix. */
static int
arg_mem_budget(const char *value, void *field)
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
	if (ipoib_parse_uint(num, 10, 1, IPOIB_MEM_BUDGET_MAX >> shift, &v) < 0)
		return -EINVAL;
	v <<= shift;
	if (v < IPOIB_MEM_BUDGET_MIN)
		return -EINVAL;
	*(uint64_t *)field = v;
	return 0;
}

/* IBTA: the low 15 bits are the key; 0x0000 and 0x8000 are invalid. */
static int
arg_pkey(const char *value, void *field)
{
	uint64_t v;

	if (ipoib_parse_uint(value, 0, 1, UINT16_MAX, &v) < 0 ||
	    (v & 0x7fff) == 0)
		return -EINVAL;
	*(uint16_t *)field = (uint16_t)v;
	return 0;
}

/* A nice value, -20..19; the whole string must be the number. */
static int
arg_nice(const char *value, void *field)
{
	struct ipoib_nice *n = field;
	long v;
	char *end;

	if (*value == '\0')
		return -EINVAL;
	errno = 0;
	v = strtol(value, &end, 10);
	if (errno != 0 || *end != '\0' || v < IPOIB_NICE_MIN ||
	    v > IPOIB_NICE_MAX)
		return -EINVAL;
	n->set = true;
	n->value = (int8_t)v;
	return 0;
}

static const struct ipoib_arg ipoib_args[] = {
	IPOIB_ARG_WORD(IPOIB_ARG_TRANSPORT, transport, ipoib_transport_words),
	IPOIB_ARG_WORD(IPOIB_ARG_SRQ, srq, ipoib_srq_words),
	IPOIB_ARG_UINT(IPOIB_ARG_MAX_CONNS, "1-65536", max_conns, 1,
		       IPOIB_MAX_CONNS_LIMIT),
	IPOIB_ARG_PARSE(IPOIB_ARG_MEM_BUDGET, "64K-1024G: bytes with an "
			"optional K, M or G suffix", mem_budget,
			arg_mem_budget),
	IPOIB_ARG_PARSE(IPOIB_ARG_PKEY, "0x0001-0xffff, not 0x8000", pkey,
			arg_pkey),
	{ .key = IPOIB_ARG_MODE, .words = ipoib_mode_words,
	  .accepted = "(raw IPoIB frames are not implemented)" },
	IPOIB_ARG_UINT(IPOIB_ARG_REAP_IDLE, "0-604800 seconds (0: never)",
		       reap_idle, 0, IPOIB_REAP_IDLE_MAX),
	IPOIB_ARG_UINT(IPOIB_ARG_RETRY_MIN, "1-3600000 milliseconds",
		       retry_min, 1, IPOIB_RETRY_LIMIT),
	IPOIB_ARG_UINT(IPOIB_ARG_RETRY_MAX, "1-3600000 milliseconds",
		       retry_max, 1, IPOIB_RETRY_LIMIT),
	IPOIB_ARG_UINT(IPOIB_ARG_PATH_TIMEOUT, "1-600000 milliseconds",
		       path_timeout, 1, IPOIB_PATH_TIMEOUT_MAX),
	IPOIB_ARG_PARSE(IPOIB_ARG_CTRL_NICE, "-20 to 19 (a nice value)",
			ctrl_nice, arg_nice),
};

/* Parse value into the field arg names; -EINVAL if it is refused. */
static int
ipoib_arg_apply(const struct ipoib_arg *arg, const char *value,
		struct ipoib_config *cfg)
{
	void *field = (uint8_t *)cfg + arg->off;
	uint64_t v;
	int i;

	if (arg->parse != NULL)
		return arg->parse(value, field);
	if (arg->words != NULL) {
		i = ipoib_parse_word(value, arg->words);
		if (i < 0)
			return i;
		store_uint(field, arg->size, (uint64_t)i);
		return 0;
	}
	if (ipoib_parse_uint(value, 10, arg->min, arg->max, &v) < 0)
		return -EINVAL;
	store_uint(field, arg->size, v);
	return 0;
}

/* The accepted values of arg, as the refusal message says them. */
static const char *
ipoib_arg_accepted(const struct ipoib_arg *arg, char *buf, size_t len)
{
	size_t off = 0;
	unsigned int i;

	if (arg->words == NULL)
		return arg->accepted;
	buf[0] = '\0';
	for (i = 0; arg->words[i] != NULL && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i == 0 ? "" :
				arg->words[i + 1] == NULL ? " or " : ", ",
				arg->words[i]);
	if (arg->accepted != NULL && off < len)
		snprintf(buf + off, len - off, " %s", arg->accepted);
	return buf;
}

static const struct ipoib_arg *
ipoib_arg_in(const struct ipoib_arg *args, unsigned int n, const char *key)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (strcmp(key, args[i].key) == 0)
			return &args[i];
	return NULL;
}

/* The transport whose key this is, or -1. */
static int
ipoib_arg_transport(const char *key)
{
	unsigned int t;

	for (t = 0; t < RTE_DIM(ipoib_transports); t++)
		if (ipoib_transports[t] != NULL &&
		    ipoib_arg_in(ipoib_transports[t]->args,
				 ipoib_transports[t]->nb_args, key) != NULL)
			return (int)t;
	return -1;
}

static void
ipoib_log_valid_keys(const char *name)
{
	char keys[768];
	size_t off = 0;
	unsigned int i, t;

	for (i = 0; i < RTE_DIM(ipoib_args) && off < sizeof(keys); i++)
		off += snprintf(keys + off, sizeof(keys) - off, "%s%s",
				i ? ", " : "", ipoib_args[i].key);
	for (t = 0; t < RTE_DIM(ipoib_transports); t++) {
		const struct ipoib_hca_ops *ops = ipoib_transports[t];

		for (i = 0; ops != NULL && i < ops->nb_args &&
		     off < sizeof(keys); i++)
			off += snprintf(keys + off, sizeof(keys) - off,
					", %s (transport=%s)", ops->args[i].key,
					ipoib_transport_words[t]);
	}
	IPOIB_LOG(ERR, "%s: accepted keys: %s", name, keys);
}

void
ipoib_config_defaults(struct ipoib_config *cfg)
{
	unsigned int t;

	memset(cfg, 0, sizeof(*cfg));
	cfg->transport = IPOIB_TRANSPORT_SHM;
	cfg->srq = IPOIB_SRQ_AUTO;
	cfg->max_conns = IPOIB_DEFAULT_MAX_CONNS;
	cfg->mem_budget = IPOIB_DEFAULT_MEM_BUDGET;
	cfg->pkey = IPOIB_DEFAULT_PKEY;
	cfg->reap_idle = IPOIB_DEFAULT_REAP_IDLE;
	cfg->path_timeout = IPOIB_DEFAULT_PATH_TIMEOUT;
	cfg->retry_min = IPOIB_DEFAULT_RETRY_MIN;
	cfg->retry_max = IPOIB_DEFAULT_RETRY_MAX;
	for (t = 0; t < RTE_DIM(ipoib_transports); t++)
		if (ipoib_transports[t] != NULL &&
		    ipoib_transports[t]->config_defaults != NULL)
			ipoib_transports[t]->config_defaults(cfg);
}

/* The key's value into cfg; a refusal names the key and what it takes. */
static int
ipoib_config_pair(struct ipoib_config *cfg, const struct rte_kvargs *kvlist,
		  const struct rte_kvargs_pair *pair, const char *name)
{
	const struct ipoib_hca_ops *ops = ipoib_transports[cfg->transport];
	const struct ipoib_arg *arg;
	char accepted[96];
	int t;

	arg = ipoib_arg_in(ipoib_args, RTE_DIM(ipoib_args), pair->key);
	if (arg == NULL)
		arg = ipoib_arg_in(ops->args, ops->nb_args, pair->key);
	if (arg == NULL) {
		t = ipoib_arg_transport(pair->key);
		if (t >= 0) {
			IPOIB_LOG(ERR, "%s: devarg %s applies to transport=%s "
				  "only", name, pair->key,
				  ipoib_transport_words[t]);
		} else {
			IPOIB_LOG(ERR, "%s: unknown devarg key \"%s\"", name,
				  pair->key);
			ipoib_log_valid_keys(name);
		}
		return -EINVAL;
	}
	if (rte_kvargs_count(kvlist, pair->key) > 1) {
		IPOIB_LOG(ERR, "%s: devarg %s given more than once: accepted "
			  "is a single %s=<value>", name, pair->key, pair->key);
		return -EINVAL;
	}
	if (pair->value == NULL || ipoib_arg_apply(arg, pair->value, cfg) < 0) {
		IPOIB_LOG(ERR, "%s: invalid value \"%s\" for devarg %s: "
			  "accepted values are %s", name,
			  pair->value ? pair->value : "", pair->key,
			  ipoib_arg_accepted(arg, accepted, sizeof(accepted)));
		return -EINVAL;
	}
	return 0;
}

/* The transport first: it says which keys the others may be. */
static int
ipoib_config_transport(struct ipoib_config *cfg,
		       const struct rte_kvargs *kvlist, const char *name)
{
	unsigned int i;
	int ret;

	for (i = 0; i < kvlist->count; i++) {
		const struct rte_kvargs_pair *pair = &kvlist->pairs[i];

		if (strcmp(pair->key, IPOIB_ARG_TRANSPORT) != 0)
			continue;
		ret = ipoib_config_pair(cfg, kvlist, pair, name);
		if (ret < 0)
			return ret;
	}
	if (ipoib_transports[cfg->transport] == NULL) {
		IPOIB_LOG(ERR, "%s: devarg %s=%s: this build has no %s "
			  "transport (libibverbs-dev and librdmacm-dev were "
			  "not found): accepted value is shm", name,
			  IPOIB_ARG_TRANSPORT,
			  ipoib_transport_words[cfg->transport],
			  ipoib_transport_words[cfg->transport]);
		return -EINVAL;
	}
	return 0;
}

/* Checks between keys, once every key has been parsed. */
static int
ipoib_config_check(const struct ipoib_config *cfg, const char *name)
{
	if (cfg->retry_min > cfg->retry_max) {
		IPOIB_LOG(ERR, "%s: devarg %s=%u exceeds %s=%u: accepted values "
			  "are %s <= %s", name, IPOIB_ARG_RETRY_MIN,
			  cfg->retry_min, IPOIB_ARG_RETRY_MAX, cfg->retry_max,
			  IPOIB_ARG_RETRY_MIN, IPOIB_ARG_RETRY_MAX);
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
	int ret;

	if (args == NULL || *args == '\0')
		return 0;
	kvlist = rte_kvargs_parse(args, NULL);
	if (kvlist == NULL) {
		IPOIB_LOG(ERR, "%s: devargs \"%s\" are not a key=value list",
			  name, args);
		return -EINVAL;
	}
	ret = ipoib_config_transport(cfg, kvlist, name);
	for (i = 0; i < kvlist->count && ret == 0; i++)
		if (strcmp(kvlist->pairs[i].key, IPOIB_ARG_TRANSPORT) != 0)
			ret = ipoib_config_pair(cfg, kvlist, &kvlist->pairs[i],
						name);
	if (ret == 0)
		ret = ipoib_config_check(cfg, name);
	rte_kvargs_free(kvlist);
	return ret;
}

/* Log the effective configuration once, after parsing. */
void
ipoib_config_log(const struct ipoib_config *cfg, const char *name)
{
	const struct ipoib_hca_ops *ops = ipoib_transports[cfg->transport];
	char tr[PATH_MAX + 128] = "";

	if (ops->config_describe != NULL)
		ops->config_describe(cfg, tr, sizeof(tr));
	IPOIB_LOG(INFO, "%s: transport=%s%s srq=%s max_conns=%u mem_budget=%"
		  PRIu64 " pkey=0x%04x mode=%s reap_idle=%u retry=%u..%u ms",
		  name, ipoib_transport_words[cfg->transport], tr,
		  ipoib_srq_words[cfg->srq], cfg->max_conns, cfg->mem_budget,
		  cfg->pkey, ipoib_mode_words[0], cfg->reap_idle,
		  cfg->retry_min, cfg->retry_max);
}
