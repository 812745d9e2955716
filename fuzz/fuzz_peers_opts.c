/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * fuzz_peers_opts: command lines through the peer emulator's parser,
 * peers_parse_args() (app/ipoibcm-peers/peers_main.c). The parser exits on
 * a bad command line and after --help; the fuzz build compiles
 * peers_main.c with exit() renamed to peers_fuzz_exit() (and main() to
 * peers_main()), which returns here with longjmp.
 *
 * Input: the command line after the program name, arguments separated by
 * a space or a newline (two separators in a row: an empty argument).
 *
 * Properties: no stray access; the parser exits only with status 0 (help)
 * or 2 (usage); an accepted command line leaves a configuration inside the
 * ranges the usage text states, and whose hosts' addresses all fit.
 */

#include <getopt.h>
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "peers.h"

#define FUZZ_CHECK(cond) do {			\
	if (!(cond))				\
		__builtin_trap();		\
} while (0)

#define MAX_LINE	2048
#define MAX_ARGS	128

static jmp_buf exit_jmp;
static int exit_status;
static bool parsing;
static char line[MAX_LINE + 1];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void peers_fuzz_exit(int status) __attribute__((noreturn));

/* exit() of peers_main.c in the fuzz build. */
void
peers_fuzz_exit(int status)
{
	if (!parsing)
		__builtin_trap();	/* only the parser may exit */
	exit_status = status;
	longjmp(exit_jmp, 1);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* --help prints the usage: not to the fuzzer's terminal */
	if (freopen("/dev/null", "w", stdout) == NULL)
		return 0;
	return 0;
}

static bool
fabric_ok(const char *s)
{
	size_t n = strnlen(s, SHM_FABRIC_NAME_MAX + 1), i;

	if (n == 0 || n > SHM_FABRIC_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '-'))
			return false;
	return true;
}

/* 0 is the default (never) for every one of them */
static bool
seconds_ok(double v)
{
	return isfinite(v) && v >= 0 && v <= 1e6;
}

static void
check_conf(const struct peers_conf *c)
{
	FUZZ_CHECK(fabric_ok(c->fabric));
	FUZZ_CHECK(c->hosts >= 1 && c->hosts <= PEERS_MAX_HOSTS);
	FUZZ_CHECK(c->guid_base >= 1 &&
		   c->guid_base <= UINT64_MAX - (c->hosts - 1));
	FUZZ_CHECK(c->ipv4 != 0 &&
		   (uint64_t)c->ipv4 + c->hosts - 1 < 0xe0000000ULL);
	FUZZ_CHECK(c->ipv6_plen <= 96 && c->ipv6_prefix[0] != 0xff);
	FUZZ_CHECK(c->pkey >= 1);
	FUZZ_CHECK(c->ib_mtu >= 256 && c->ib_mtu <= 4096 &&
		   (c->ib_mtu & (c->ib_mtu - 1)) == 0);
	FUZZ_CHECK(c->mtu >= 68 && c->mtu <= IPOIB_CM_MTU);
	FUZZ_CHECK(c->accept <= PEERS_ACCEPT_UD);
	FUZZ_CHECK(c->accept != PEERS_ACCEPT_LIMIT ||
		   c->accept_limit <= 65536);
	FUZZ_CHECK(seconds_ok(c->idle_after) && seconds_ok(c->die_after) &&
		   seconds_ok(c->duration) && seconds_ok(c->report_interval));
	FUZZ_CHECK(c->json == NULL ||
		   (c->json >= line && c->json < line + sizeof(line) &&
		    c->json[0] != '\0'));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *argv[MAX_ARGS + 2];
	static struct peers_conf conf;
	int argc = 0;
	size_t i;

	if (size > MAX_LINE)
		return -1;
	memcpy(line, data, size);
	line[size] = '\0';
	argv[argc++] = (char *)PEERS_PROG;
	argv[argc++] = line;
	for (i = 0; i < size; i++) {
		if (line[i] != ' ' && line[i] != '\n')
			continue;
		line[i] = '\0';
		if (argc == MAX_ARGS + 1)
			return -1;
		argv[argc++] = &line[i + 1];
	}
	if (size == 0)
		argc = 1;
	argv[argc] = NULL;

	peers_conf_defaults(&conf);
	optind = 0;		/* glibc: start over, state included */
	parsing = true;
	if (setjmp(exit_jmp) != 0) {
		parsing = false;
		FUZZ_CHECK(exit_status == 0 || exit_status == 2);
		return 0;
	}
	peers_parse_args(&conf, argc, argv);
	parsing = false;
	check_conf(&conf);
	return 0;
}
