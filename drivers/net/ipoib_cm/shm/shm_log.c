/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#include <stdarg.h>
#include <stdio.h>

#include "shm_log.h"

static void
shm_log_stderr(int level, const char *msg)
{
	(void)level;
	fprintf(stderr, "%s\n", msg);
}

static shm_log_fn shm_logger = shm_log_stderr;
static int shm_log_level = SHM_LOG_NOTICE;

void
shm_set_logger(shm_log_fn fn, int max_level)
{
	shm_logger = fn != NULL ? fn : shm_log_stderr;
	shm_log_level = max_level;
}

void
shm_log(int level, const char *func, const char *fmt, ...)
{
	char msg[512];
	int n;
	va_list ap;

	if (level > shm_log_level)
		return;
	n = snprintf(msg, sizeof(msg), "%s(): ", func);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	shm_logger(level, msg);
}
