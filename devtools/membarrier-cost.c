/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * What one membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) costs on this
 * machine, alone and while another thread of the process spins (as a
 * datapath lcore does), beside a getppid() for scale. A figure, not a
 * check (ipoib_cm_perf.rst, "A teardown's fences"):
 *
 *   cc -O2 -pthread -o /tmp/mb devtools/membarrier-cost.c
 *   /tmp/mb; /tmp/mb spin
 */

#include <linux/membarrier.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define N	20000

static volatile int stop;

static void *
spin(void *arg)
{
	while (!stop)
		;
	return arg;
}

static double
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int
main(int argc, char **argv)
{
	double t0, t1, t2;
	pthread_t tid;
	int i;

	(void)argv;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
		    0, 0) != 0) {
		perror("membarrier register");
		return 1;
	}
	if (argc > 1 && pthread_create(&tid, NULL, spin, NULL) != 0)
		return 1;
	usleep(10000);		/* the spinner is running */
	t0 = now_ns();
	for (i = 0; i < N; i++)
		syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	t1 = now_ns();
	for (i = 0; i < N; i++)
		syscall(__NR_getppid);
	t2 = now_ns();
	printf("%s: membarrier %.2f us, getppid %.2f us\n",
	       argc > 1 ? "another thread spinning" : "alone",
	       (t1 - t0) / N / 1e3, (t2 - t1) / N / 1e3);
	stop = 1;
	if (argc > 1)
		pthread_join(tid, NULL);
	return 0;
}
