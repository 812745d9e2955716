/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * What the verbs transport's connection manager (ipoib_verbs_cm.c)
 * decides without a device: where the active side sends its REQ and with
 * which parameters, what a REP must name, what a REJ's reason is and
 * whether it is tried again at the mapped service ID, which QP attribute
 * bits go to the HCA. Pure functions: the unit tests of the InfiniBand
 * code (app/test-ipoibcm/test_verbs_ib.c) call them with constructed
 * inputs.
 */

#include <errno.h>
#include <string.h>

#include "ipoib_hca.h"
#include "ipoib_verbs.h"
#include "ipoib_wire.h"

static const uint8_t ipoib_vcm_rej_magic[3] = { 'I', 'P', 'R' };

/*
 * The active side's destination for an IPoIB service ID: the rdma_cm port
 * space, port (0: none) and the service ID put in the address. RoCE, and
 * InfiniBand once refused with reason 8 (mapped): the rdma_cm port the
 * service ID maps to and its service ID. InfiniBand at first: the real
 * service ID in RDMA_PS_IB, where Linux and illumos hosts listen.
 */
int
ipoib_vcm_dest(bool roce, bool mapped, uint64_t service_id,
	       enum rdma_port_space *ps, uint16_t *port, uint64_t *sid)
{
	int ret;

	*ps = RDMA_PS_IB;
	*port = 0;
	*sid = service_id;
	if (roce || mapped) {
		ret = ipoib_vcm_sid_map(service_id, ps, port);
		if (ret < 0)
			return ret;
		*sid = ipoib_vcm_ps_sid(*ps, *port);
	}
	return 0;
}

/*
 * The REQ's parameters for c, but the QP's number and SRQ flag (given when
 * it is sent): the private data as the driver gave it (for AF_IB
 * rdma_cm adds no header of its own), the driver's retry
 * counts, but 7 transport retries on Ethernet, where frames are dropped:
 * one loss must not fail the connection.
 */
void
ipoib_vcm_req_param(bool roce, const struct ipoib_cm_connect *c,
		    struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->private_data = c->priv;
	p->private_data_len = c->priv_len;
	p->responder_resources = c->responder_resources;
	p->initiator_depth = 0;
	p->retry_count = roce ? IPOIB_VCM_ROCE_RETRY : c->retry_count;
	p->rnr_retry_count = c->rnr_retry_count;
}

/*
 * A REP's private data ({ be32 UD QPN, be32 MTU }) answering a REQ to
 * service_id. A mapped rdma_cm port (RoCE, or InfiniBand after reason 8)
 * names a UD QPN modulo 64512: the REP must name the one asked for. The
 * real service ID names it exactly: not checked. *got: the QPN named.
 */
bool
ipoib_vcm_rep_check(bool roce, bool mapped, uint64_t service_id,
		    const uint8_t *priv, uint8_t priv_len, uint32_t *got)
{
	*got = 0;
	if (priv_len < 4 || !(roce || mapped))
		return true;
	*got = (uint32_t)priv[1] << 16 | (uint32_t)priv[2] << 8 | priv[3];
	return *got == (uint32_t)(service_id & IPOIB_QPN_MASK);
}

/*
 * rdma_reject() always sends reason 28 (consumer defined): the reason the
 * driver gives travels in the REJ private data as "IPR" <reason>. buf
 * holds IPOIB_VCM_REJ_PRIV_LEN bytes.
 */
uint8_t
ipoib_vcm_rej_priv(uint16_t reason, uint8_t *buf)
{
	memcpy(buf, ipoib_vcm_rej_magic, sizeof(ipoib_vcm_rej_magic));
	buf[sizeof(ipoib_vcm_rej_magic)] = (uint8_t)reason;
	return IPOIB_VCM_REJ_PRIV_LEN;
}

/*
 * A REJ event's reason: its status (no status: a timeout); reason 28
 * with "IPR" <reason> private data: that reason, and the private data is
 * consumed (*priv_len 0).
 */
uint16_t
ipoib_vcm_rej_reason(int status, const uint8_t *priv, uint8_t *priv_len)
{
	uint16_t reason = status > 0 ? (uint16_t)status : IPOIB_REJ_TIMEOUT;

	if (reason == IPOIB_REJ_CONSUMER &&
	    *priv_len >= sizeof(ipoib_vcm_rej_magic) + 1 &&
	    memcmp(priv, ipoib_vcm_rej_magic,
		   sizeof(ipoib_vcm_rej_magic)) == 0) {
		reason = priv[sizeof(ipoib_vcm_rej_magic)];
		*priv_len = 0;
	}
	return reason;
}

/*
 * InfiniBand: the real service ID refused with reason 8 (no such service:
 * not a Linux host, or one without connected mode) is tried again at the
 * mapped one, where ports like ours listen. Once: the mapped one is not
 * tried again.
 */
bool
ipoib_vcm_rej_remap(bool roce, bool active, bool mapped, uint16_t reason)
{
	return !roce && active && !mapped &&
	       reason == IPOIB_REJ_INVALID_SERVICE_ID;
}

/*
 * The attribute mask rdma_init_qp_attr() gave, for ibv_modify_qp():
 * InfiniBand drops the bits librdmacm sets for RoCE only.
 */
int
ipoib_vcm_qp_mask(bool roce, int mask)
{
	return roce ? mask : mask & ~IPOIB_VCM_ROCE_QP_MASK;
}
