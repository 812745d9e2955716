/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Capture tap: a pcap file of everything a port sends and receives, with
 * LINKTYPE_IPOIB (242). Each record starts with the 40-byte pseudo-header
 * Wireshark and tcpdump decode for that link type:
 * - received: a GRH (version 6 in the first nibble) whose bytes 4-7 carry
 *   the source QPN, then the source and destination GIDs;
 * - sent: 20 zero bytes, then the destination hardware address (flags,
 *   QPN, GID), which the first nibble being 0 announces.
 * The 4-byte IPoIB header and the payload follow.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shm_internal.h"
#include "shm_log.h"

#define SHM_LINKTYPE_IPOIB	242
#define SHM_SNAPLEN		262144
#define SHM_PSEUDO_LEN		40

struct shm_capture {
	FILE *fp;
	uint64_t records;
};

struct pcap_file_hdr {
	uint32_t magic;
	uint16_t version_major;
	uint16_t version_minor;
	int32_t thiszone;
	uint32_t sigfigs;
	uint32_t snaplen;
	uint32_t linktype;
};

struct pcap_rec_hdr {
	uint32_t ts_sec;
	uint32_t ts_usec;
	uint32_t caplen;
	uint32_t len;
};

int
shm_port_capture(struct shm_port *p, const char *path)
{
	struct pcap_file_hdr fh = {
		.magic = 0xa1b2c3d4,
		.version_major = 2,
		.version_minor = 4,
		.snaplen = SHM_SNAPLEN,
		.linktype = SHM_LINKTYPE_IPOIB,
	};
	struct shm_capture *cap;

	shm_capture_close(p);
	if (path == NULL)
		return 0;
	cap = calloc(1, sizeof(*cap));
	if (cap == NULL)
		return -ENOMEM;
	cap->fp = fopen(path, "wb");
	if (cap->fp == NULL) {
		int ret = -errno;

		SHM_LOG(ERR, "port %u: cannot open capture file %s: %s",
			p->index, path, strerror(errno));
		free(cap);
		return ret;
	}
	if (fwrite(&fh, sizeof(fh), 1, cap->fp) != 1) {
		fclose(cap->fp);
		free(cap);
		return -EIO;
	}
	pthread_mutex_lock(&p->cap_lock);
	p->cap = cap;
	pthread_mutex_unlock(&p->cap_lock);
	return 0;
}

void
shm_capture_close(struct shm_port *p)
{
	struct shm_capture *cap;

	pthread_mutex_lock(&p->cap_lock);
	cap = p->cap;
	p->cap = NULL;
	pthread_mutex_unlock(&p->cap_lock);
	if (cap == NULL)
		return;
	fclose(cap->fp);
	free(cap);
}

static void
shm_capture_rec_hdr(struct shm_capture *cap, uint32_t len)
{
	struct pcap_rec_hdr rh;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	rh.ts_sec = (uint32_t)ts.tv_sec;
	rh.ts_usec = (uint32_t)(ts.tv_nsec / 1000);
	rh.len = SHM_PSEUDO_LEN + len;
	rh.caplen = rh.len < SHM_SNAPLEN ? rh.len : SHM_SNAPLEN;
	fwrite(&rh, sizeof(rh), 1, cap->fp);
	cap->records++;
}

/* A sent message: the pseudo-header names the destination. */
void
shm_capture_tx(struct shm_port *p, const struct shm_send *wr, uint32_t dqpn,
	       const uint8_t *dgid, uint32_t len)
{
	uint8_t pseudo[SHM_PSEUDO_LEN] = { 0 };
	uint32_t left = SHM_SNAPLEN - SHM_PSEUDO_LEN;
	uint16_t i;

	pseudo[21] = (uint8_t)(dqpn >> 16);
	pseudo[22] = (uint8_t)(dqpn >> 8);
	pseudo[23] = (uint8_t)dqpn;
	memcpy(&pseudo[24], dgid, IPOIB_GID_LEN);
	pthread_mutex_lock(&p->cap_lock);
	if (p->cap == NULL)
		goto out;
	shm_capture_rec_hdr(p->cap, len);
	fwrite(pseudo, sizeof(pseudo), 1, p->cap->fp);
	for (i = 0; i < wr->iovcnt && left > 0; i++) {
		size_t n = wr->iov[i].iov_len < left ? wr->iov[i].iov_len :
						       left;

		fwrite(wr->iov[i].iov_base, 1, n, p->cap->fp);
		left -= n;
	}
out:
	pthread_mutex_unlock(&p->cap_lock);
}

/* A received message: the pseudo-header is the GRH with the source QPN. */
void
shm_capture_rx(struct shm_port *p, const struct ipoib_wc *wc,
	       const struct shm_rdesc_sge *sge, uint32_t num_sge)
{
	struct shm_fabric *f = p->f;
	uint8_t pseudo[SHM_PSEUDO_LEN] = { 0x60 };
	uint32_t skip = 0, len = wc->byte_len, s;
	const uint8_t *sgid = NULL;

	if (wc->wc_flags & IPOIB_WC_GRH) {
		if (len < IPOIB_GRH_LEN || sge[0].len < IPOIB_GRH_LEN)
			return;
		memcpy(pseudo, shm_arena_ptr(f, f->proc, sge[0].off),
		       IPOIB_GRH_LEN);
		skip = IPOIB_GRH_LEN;
		len -= IPOIB_GRH_LEN;
	} else {
		const struct shm_qp_ent *q = shm_qp_lookup(f, wc->qp_num);

		/* UD without a GRH: the payload still starts at offset 40 */
		if (q != NULL && shm_load_relaxed(&q->type) == SHM_QPT_UD) {
			if (len < IPOIB_GRH_LEN)
				return;
			skip = IPOIB_GRH_LEN;
			len -= IPOIB_GRH_LEN;
		}
		if (wc->slid >= 1 && wc->slid <= SHM_MAX_PORTS)
			sgid = p->f->hdr->ports[wc->slid - 1].gid;
		if (sgid != NULL)
			memcpy(&pseudo[8], sgid, IPOIB_GID_LEN);
		memcpy(&pseudo[24], p->ent->gid, IPOIB_GID_LEN);
	}
	pseudo[0] = 0x60;
	pseudo[1] = pseudo[2] = pseudo[3] = 0;
	pseudo[4] = 0;
	pseudo[5] = (uint8_t)(wc->src_qp >> 16);
	pseudo[6] = (uint8_t)(wc->src_qp >> 8);
	pseudo[7] = (uint8_t)wc->src_qp;
	pthread_mutex_lock(&p->cap_lock);
	if (p->cap == NULL)
		goto out;
	shm_capture_rec_hdr(p->cap, len);
	fwrite(pseudo, sizeof(pseudo), 1, p->cap->fp);
	/* no more than the record header's caplen, or the file is broken */
	if (len > SHM_SNAPLEN - SHM_PSEUDO_LEN)
		len = SHM_SNAPLEN - SHM_PSEUDO_LEN;
	for (s = 0; s < num_sge && len > 0; s++) {
		uint32_t n = sge[s].len;

		if (skip >= n) {
			skip -= n;
			continue;
		}
		n -= skip;
		if (n > len)
			n = len;
		fwrite((uint8_t *)shm_arena_ptr(f, f->proc, sge[s].off) +
		       skip, 1, n, p->cap->fp);
		len -= n;
		skip = 0;
	}
out:
	pthread_mutex_unlock(&p->cap_lock);
}
