/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The verbs transport's subnet directory: a testing convenience, not part
 * of production (see doc/guides/nics/ipoib_cm_verbs.rst).
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipoib_hca.h"
#include "ipoib_log.h"
#include "ipoib_verbs.h"
#include "ipoib_wire.h"

#define IPOIB_VERBS_DIR		"/run/ipoibcm-verbs"

/* ---- subnet directory (a testing convenience, see the guide) ------------- */

/*
 * /run/ipoibcm-verbs/<device>/<MAC>: the 20-byte hardware address that
 * the Ethernet-emulation MAC stands for, and the pid that published it.
 * Only processes of one host see it; real deployments ARP.
 */
static void
ipoib_verbs_dir_path(const struct ipoib_hca *hca, const uint8_t *mac,
		     char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/%02x%02x%02x%02x%02x%02x",
		 IPOIB_VERBS_DIR, hca->dev_name, mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);
}

int
ipoib_verbs_addr_publish(struct ipoib_hca *hca, const uint8_t *mac,
			 uint32_t ud_qpn, uint8_t flags)
{
	char dir[192], tmp[300];
	FILE *f;
	int i;

	snprintf(dir, sizeof(dir), "%s/%s", IPOIB_VERBS_DIR, hca->dev_name);
	mkdir(IPOIB_VERBS_DIR, 0755);
	mkdir(dir, 0755);
	ipoib_verbs_dir_path(hca, mac, hca->dir_file, sizeof(hca->dir_file));
	snprintf(tmp, sizeof(tmp), "%s.%d", hca->dir_file, (int)getpid());
	f = fopen(tmp, "w");
	if (f == NULL) {
		IPOIB_LOG(INFO, "%s: no subnet directory (%s: %s): peers are "
			  "found by ARP only", hca->name, dir, strerror(errno));
		hca->dir_file[0] = '\0';
		return -errno;
	}
	fprintf(f, "%02x%06x", flags, ud_qpn & IPOIB_QPN_MASK);
	for (i = 0; i < IPOIB_GID_LEN; i++)
		fprintf(f, "%02x", hca->gid.raw[i]);
	fprintf(f, " %d\n", (int)getpid());
	if (fclose(f) != 0 || rename(tmp, hca->dir_file) != 0) {
		unlink(tmp);
		hca->dir_file[0] = '\0';
		return -EIO;
	}
	return 0;
}

int
ipoib_verbs_addr_resolve(struct ipoib_hca *hca, const uint8_t *mac,
			 uint8_t *hwaddr)
{
	char path[256], hex[2 * IPOIB_HWADDR_LEN + 1];
	unsigned int i, b;
	FILE *f;
	int pid, n;

	ipoib_verbs_dir_path(hca, mac, path, sizeof(path));
	f = fopen(path, "r");
	if (f == NULL)
		return -ENOENT;
	n = fscanf(f, "%40s %d", hex, &pid);
	fclose(f);
	if (n != 2 || strlen(hex) != 2 * IPOIB_HWADDR_LEN)
		return -EINVAL;
	if (kill(pid, 0) < 0 && errno == ESRCH) {
		unlink(path);	/* its publisher died */
		return -ENOENT;
	}
	for (i = 0; i < IPOIB_HWADDR_LEN; i++) {
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -EINVAL;
		hwaddr[i] = (uint8_t)b;
	}
	return 0;
}

void
ipoib_verbs_dir_remove(struct ipoib_hca *hca)
{
	if (hca->dir_file[0] != '\0')
		unlink(hca->dir_file);
	hca->dir_file[0] = '\0';
}
