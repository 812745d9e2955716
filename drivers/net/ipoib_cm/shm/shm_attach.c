/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The fabric directory: attaching processes, the directory lock, the
 * index of the address records, and the janitor that reclaims what dead
 * processes left behind.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shm_internal.h"
#include "shm_log.h"
#include "shm_sa.h"

static pthread_mutex_t shm_fabrics_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shm_fabric *shm_fabrics;

static uint64_t
shm_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void
shm_obj_name(char *buf, size_t len, const char *fabric)
{
	snprintf(buf, len, "/ipoibcm.%s", fabric);
}

/* Take the directory lock; a holder that died leaves it usable. */
int
shm_lock(struct shm_fabric *f)
{
	int ret = pthread_mutex_lock(&f->hdr->lock);

	if (ret == EOWNERDEAD) {
		SHM_LOG(WARNING, "fabric %s: lock holder died; recovering",
			f->name);
		pthread_mutex_consistent(&f->hdr->lock);
		ret = 0;
	}
	return -ret;
}

void
shm_unlock(struct shm_fabric *f)
{
	pthread_mutex_unlock(&f->hdr->lock);
}

/*
 * Start time and state of a process (/proc/<pid>/stat fields 22 and 3):
 * the start time tells a live pid from a reused one.
 */
static uint64_t
shm_proc_stat(pid_t pid, char *state)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	FILE *fp;
	int field;

	*state = '?';
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fp = fopen(path, "r");
	if (fp == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), fp) == NULL) {
		fclose(fp);
		return 0;
	}
	fclose(fp);
	/* the command name may hold spaces: fields start after the last ')' */
	p = strrchr(buf, ')');
	if (p != NULL && p[1] == ' ')
		*state = p[2];
	for (field = 2; p != NULL && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p != NULL)
		start = strtoull(p + 1, NULL, 10);
	return start;
}

static uint64_t
shm_proc_start_time(pid_t pid)
{
	char state;

	return shm_proc_stat(pid, &state);
}

/*
 * A process killed but not yet reaped by its parent is a zombie: kill(0)
 * still finds it, yet it has released its mappings and will never run
 * again. It is dead for the fabric.
 */
static bool
shm_proc_alive(const struct shm_proc_ent *pe)
{
	char state;

	if (kill(pe->pid, 0) < 0 && errno == ESRCH)
		return false;
	if (shm_proc_stat(pe->pid, &state) != pe->start_time)
		return false;
	return state != 'Z' && state != 'X' && state != 'x';
}

/* ---- attach / detach ---------------------------------------------------- */

static int
shm_hdr_init(struct shm_hdr *h, size_t size)
{
	pthread_mutexattr_t ma;
	int ret;

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	ret = pthread_mutex_init(&h->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	if (ret != 0)
		return -ret;
	h->magic = SHM_MAGIC;
	h->version = SHM_VERSION;
	h->owner_uid = geteuid();
	h->size = size;
	h->next_lid = 1;
	h->incarnation = (uint32_t)(ipoib_now_ns() ^ shm_realtime_ns() ^
				    ((uint64_t)getpid() << 16));
	shm_store(&h->ready, 1);
	return 0;
}

/* Is fd still the object linked under name? (it may have been unlinked) */
static bool
shm_fd_is_linked(int fd, const char *name)
{
	char path[96];
	struct stat a, b;

	snprintf(path, sizeof(path), "/dev/shm%s", name);
	if (fstat(fd, &a) < 0 || stat(path, &b) < 0)
		return false;
	return a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/* Open or create the fabric object and map its directory. */
static int
shm_hdr_open(struct shm_fabric *f)
{
	size_t size = sizeof(struct shm_hdr);
	char name[64];
	struct stat st;
	uint64_t deadline = ipoib_now_ns() + 1000000000ULL;
	bool created = false;
	int fd, ret;

	shm_obj_name(name, sizeof(name), f->name);
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd >= 0) {
		created = true;
		if (ftruncate(fd, size) < 0)
			goto fail_errno;
	} else if (errno == EEXIST) {
		fd = shm_open(name, O_RDWR, 0);
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st) < 0)
			goto fail_errno;
		if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
			SHM_LOG(ERR, "fabric %s: /dev/shm%s belongs to uid %u "
				"with mode %04o; refusing to join it", f->name,
				name, (unsigned int)st.st_uid,
				(unsigned int)(st.st_mode & 07777));
			close(fd);
			return -EACCES;
		}
		/* the creator sizes it right after creating it */
		while ((size_t)st.st_size < size && ipoib_now_ns() < deadline) {
			sched_yield();
			if (fstat(fd, &st) < 0)
				goto fail_errno;
		}
		if ((size_t)st.st_size != size) {
			SHM_LOG(ERR, "fabric %s: object has size %zu, expected "
				"%zu (another version?)", f->name,
				(size_t)st.st_size, size);
			close(fd);
			return -EPROTO;
		}
	} else {
		return -errno;
	}
	if (fstat(fd, &st) < 0)
		goto fail_errno;
	f->hdr_dev = st.st_dev;
	f->hdr_ino = st.st_ino;
	f->hdr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (f->hdr == MAP_FAILED)
		return -errno;
	f->hdr_size = size;
	if (created) {
		ret = shm_hdr_init(f->hdr, size);
		f->incarnation = f->hdr->incarnation;
		return ret;
	}
	while (!shm_load(&f->hdr->ready) && ipoib_now_ns() < deadline)
		sched_yield();
	if (!shm_load(&f->hdr->ready) || f->hdr->magic != SHM_MAGIC ||
	    f->hdr->version != SHM_VERSION) {
		SHM_LOG(ERR, "fabric %s: not an ipoibcm fabric of version %u",
			f->name, SHM_VERSION);
		munmap(f->hdr, size);
		return -EPROTO;
	}
	f->incarnation = f->hdr->incarnation;
	return 0;
fail_errno:
	close(fd);
	if (created)
		shm_unlink(name);
	return -errno;
}

/* Is our header still the object under the fabric's name? */
static bool
shm_hdr_linked(const struct shm_fabric *f)
{
	char path[96];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/shm/ipoibcm.%s", f->name);
	return stat(path, &st) == 0 && st.st_dev == f->hdr_dev &&
	       st.st_ino == f->hdr_ino;
}

/*
 * Someone removed our objects from /dev/shm (the header, or a segment of
 * ours): processes attaching from now on cannot reach us. What is mapped
 * stays valid, so nothing breaks here; the ports are told to start over.
 */
static void
shm_check_linked(struct shm_fabric *f)
{
	/* another thread may be adding a segment: see shm_seg_create() */
	uint32_t n = __atomic_load_n(&f->nr_segs, __ATOMIC_ACQUIRE);
	struct stat st;
	uint32_t i;
	bool gone = !shm_hdr_linked(f);

	for (i = 0; i < n && !gone; i++)
		gone = fstat(f->segs[i].fd, &st) < 0 || st.st_nlink == 0;
	if (!gone || __atomic_exchange_n(&f->lost, true, __ATOMIC_ACQ_REL))
		return;
	SHM_LOG(ERR, "fabric %s: its objects in /dev/shm were removed: this "
		"process is cut off from processes attaching from now on",
		f->name);
}

bool
shm_fabric_lost(const struct shm_fabric *f)
{
	return __atomic_load_n(&f->lost, __ATOMIC_ACQUIRE);
}

static int
shm_proc_register(struct shm_fabric *f)
{
	struct shm_hdr *h = f->hdr;
	char name[64];
	uint32_t i;
	int fd, ret;

	ret = shm_lock(f);
	if (ret < 0)
		return ret;
	/* the object may have been unlinked by the last process leaving */
	shm_obj_name(name, sizeof(name), f->name);
	fd = shm_open(name, O_RDWR, 0);
	if (fd < 0 || !shm_fd_is_linked(fd, name)) {
		if (fd >= 0)
			close(fd);
		shm_unlock(f);
		return -EAGAIN;
	}
	close(fd);
	for (i = 0; i < SHM_MAX_PROCS; i++)
		if (h->procs[i].state == SHM_PROC_FREE)
			break;
	if (i == SHM_MAX_PROCS) {
		shm_unlock(f);
		SHM_LOG(ERR, "fabric %s: %d processes attached already",
			f->name, SHM_MAX_PROCS);
		return -EUSERS;
	}
	h->procs[i].gen++;
	h->procs[i].pid = getpid();
	h->procs[i].uid = geteuid();
	h->procs[i].start_time = shm_proc_start_time(getpid());
	h->procs[i].nr_segs = 0;
	shm_store(&h->procs[i].state, SHM_PROC_ACTIVE);
	f->proc = i;
	f->gen = h->procs[i].gen;
	shm_unlock(f);
	return 0;
}

static void shm_proc_reclaim(struct shm_fabric *f, uint32_t proc);

static void
shm_proc_unregister(struct shm_fabric *f)
{
	char name[64];
	bool last = true;
	uint32_t i;

	if (shm_lock(f) < 0)
		return;
	shm_store(&f->hdr->procs[f->proc].state, SHM_PROC_FREE);
	for (i = 0; i < SHM_MAX_PROCS; i++) {
		struct shm_proc_ent *pe = &f->hdr->procs[i];

		/*
		 * A process that died since the janitor last looked would
		 * keep the fabric (and its own segments) alive for nobody:
		 * the last live process reclaims it on its way out.
		 */
		if (pe->state == SHM_PROC_ACTIVE && !shm_proc_alive(pe))
			shm_proc_reclaim(f, i);
		if (pe->state != SHM_PROC_FREE)
			last = false;
	}
	if (last && shm_hdr_linked(f)) {
		/* newcomers holding this object see it unlinked and retry */
		shm_obj_name(name, sizeof(name), f->name);
		shm_unlink(name);
	}
	shm_unlock(f);
}

/*
 * A child created by fork() inherits its parent's attachments: the slot,
 * the arena and the allocator state are the parent's, and sharing them
 * would hand out the same memory twice. The child attaches on its own.
 */
static bool
shm_fabric_ours(const struct shm_fabric *f)
{
	return f->hdr->procs[f->proc].pid == getpid();
}

/* Unmap and free; unlink our segments only if they are ours (not a fork's). */
static void
shm_fabric_free(struct shm_fabric *f, bool owner)
{
	char name[96];
	uint32_t i, j;

	for (i = 0; i < SHM_MAX_PROCS; i++) {
		for (j = 0; f->maps[i] != NULL && j < SHM_MAX_SEGS; j++)
			if (f->maps[i][j].base != NULL)
				munmap(f->maps[i][j].base, f->maps[i][j].size);
		free(f->maps[i]);
	}
	for (i = 0; i < f->nr_segs; i++) {
		munmap(f->segs[i].base, f->segs[i].size);
		close(f->segs[i].fd);
		free(f->segs[i].free);
		if (!owner)
			continue;
		shm_seg_name(name, sizeof(name), f, f->proc, f->gen, i);
		shm_unlink(name);
	}
	for (i = 0; i < SHM_RQ_MAX / SHM_RQ_CHUNK; i++)
		free(f->rq_tab[i]);
	if (f->hdr != NULL && f->hdr != MAP_FAILED)
		munmap(f->hdr, f->hdr_size);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

/*
 * Attach this process to fabric name (creating it if needed). Attaching
 * twice returns the same handle with a reference more.
 */
int
shm_fabric_attach(const char *name, struct shm_fabric **fp)
{
	struct shm_fabric *f;
	int ret, tries;

	if (strlen(name) == 0 || strlen(name) > SHM_FABRIC_NAME_MAX)
		return -EINVAL;
	pthread_mutex_lock(&shm_fabrics_lock);
	for (f = shm_fabrics; f != NULL; f = f->next) {
		if (strcmp(f->name, name) == 0 && shm_fabric_ours(f) &&
		    !shm_fabric_lost(f)) {
			f->refcnt++;
			*fp = f;
			pthread_mutex_unlock(&shm_fabrics_lock);
			return 0;
		}
	}
	for (tries = 0; tries < 16; tries++) {
		f = calloc(1, sizeof(*f));
		if (f == NULL) {
			ret = -ENOMEM;
			break;
		}
		strcpy(f->name, name);
		pthread_mutex_init(&f->lock, NULL);
		ret = shm_hdr_open(f);
		if (ret == 0)
			ret = shm_proc_register(f);
		if (ret == -EAGAIN) {	/* raced with the last one leaving */
			munmap(f->hdr, f->hdr_size);
			f->hdr = NULL;
			shm_fabric_free(f, true);
			continue;
		}
		if (ret == 0) {
			ret = shm_arena_create(f);
			if (ret < 0)
				shm_proc_unregister(f);
		}
		break;
	}
	if (ret < 0) {
		if (f != NULL)
			shm_fabric_free(f, true);
		pthread_mutex_unlock(&shm_fabrics_lock);
		SHM_LOG(ERR, "cannot attach fabric %s: %s", name,
			strerror(-ret));
		return ret;
	}
	f->refcnt = 1;
	f->cm_next_id = (uint32_t)(getpid() << 12) ^ (uint32_t)ipoib_now_ns();
	shm_janitor(f);		/* what dead processes left goes first */
	f->next = shm_fabrics;
	shm_fabrics = f;
	pthread_mutex_unlock(&shm_fabrics_lock);
	SHM_LOG(INFO, "fabric %s: attached as process %u (pid %d)", name,
		f->proc, (int)getpid());
	*fp = f;
	return 0;
}

void
shm_fabric_detach(struct shm_fabric *f)
{
	struct shm_fabric **pp;

	pthread_mutex_lock(&shm_fabrics_lock);
	if (--f->refcnt > 0) {
		pthread_mutex_unlock(&shm_fabrics_lock);
		return;
	}
	for (pp = &shm_fabrics; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	}
	pthread_mutex_unlock(&shm_fabrics_lock);
	if (!shm_fabric_ours(f)) {
		/* inherited through fork(): the parent's slot stays */
		shm_fabric_free(f, false);
		return;
	}
	shm_proc_unregister(f);
	SHM_LOG(INFO, "fabric %s: detached", f->name);
	shm_fabric_free(f, true);
}

const char *
shm_fabric_name(const struct shm_fabric *f)
{
	return f->name;
}

/* ---- janitor ------------------------------------------------------------ */

static void
shm_mcg_forget_proc(struct shm_hdr *h, uint32_t proc)
{
	uint32_t g, i;

	for (g = 0; g < SHM_MAX_MCGS; g++) {
		struct shm_mcg_ent *m = &h->mcgs[g];

		for (i = 0; i < m->nr_members; ) {
			struct shm_qp_ent *q =
				&h->qps[SHM_QPN_INDEX(m->members[i])];

			if (q->proc == proc) {
				shm_store_relaxed(&m->members[i],
					m->members[m->nr_members - 1]);
				shm_store(&m->nr_members, m->nr_members - 1);
				continue;
			}
			i++;
		}
	}
}

/* ---- the address records' index (see shm_hdr.ll_index) ---------------- */

uint32_t
shm_ll_bucket(const uint8_t *mac)
{
	uint32_t h = 2166136261u;	/* FNV-1a */
	unsigned int i;

	for (i = 0; i < 6; i++)
		h = (h ^ mac[i]) * 16777619u;
	return h & SHM_LL_MASK;
}

/* Take a port's record out of the index (lock held). */
void
shm_ll_unindex(struct shm_hdr *h, struct shm_port_ent *e)
{
	if (e->ll_slot == 0)
		return;
	shm_store(&h->ll_index[e->ll_slot - 1], SHM_LL_FREED);
	e->ll_slot = 0;
}

/* Index port's record under its MAC (lock held). */
void
shm_ll_index(struct shm_hdr *h, uint32_t port)
{
	struct shm_port_ent *e = &h->ports[port];
	uint32_t b = shm_ll_bucket(e->ll_mac), n;

	for (n = 0; n < SHM_LL_BUCKETS; n++, b = (b + 1) & SHM_LL_MASK) {
		uint32_t v = h->ll_index[b];

		if (v == 0 || v == SHM_LL_FREED) {
			shm_store(&h->ll_index[b], port + 1);
			e->ll_slot = b + 1;
			return;
		}
	}
}

/* Release everything of a dead process; called with the lock held. */
static void
shm_proc_reclaim(struct shm_fabric *f, uint32_t proc)
{
	struct shm_hdr *h = f->hdr;
	struct shm_proc_ent *pe = &h->procs[proc];
	char name[96];
	uint32_t i, nports = 0, nqps = 0;
	int fd;

	shm_store(&pe->state, SHM_PROC_DEAD);
	shm_mcg_forget_proc(h, proc);
	for (i = 0; i < SHM_MAX_QPS; i++) {
		struct shm_qp_ent *q = &h->qps[i];

		if (shm_load(&q->state) != SHM_QPS_FREE && q->proc == proc) {
			shm_store(&q->state, SHM_QPS_FREE);
			nqps++;
		}
	}
	for (i = 0; i < SHM_MAX_PORTS; i++) {
		struct shm_port_ent *pt = &h->ports[i];

		if (pt->state != SHM_PORT_FREE && pt->proc == proc) {
			shm_ll_unindex(h, pt);
			shm_sa_port_gone(h, pt);
			shm_store(&pt->state, SHM_PORT_FREE);
			nports++;
		}
	}
	/* free its memory now; mappings elsewhere then read zeros */
	for (i = 0; i < pe->nr_segs && i < SHM_MAX_SEGS; i++) {
		shm_seg_name(name, sizeof(name), f, proc, pe->gen, i);
		fd = shm_open(name, O_RDWR, 0);
		if (fd >= 0) {
			struct stat st;

			if (fstat(fd, &st) == 0)
				fallocate(fd, FALLOC_FL_PUNCH_HOLE |
					  FALLOC_FL_KEEP_SIZE, 0, st.st_size);
			close(fd);
		}
		shm_unlink(name);
	}
	SHM_LOG(NOTICE, "fabric %s: process %u (pid %d) died: reclaimed %u "
		"ports, %u QPs", f->name, proc, (int)pe->pid, nports, nqps);
	shm_store(&pe->state, SHM_PROC_FREE);
}

/* Find processes that died without detaching, and reclaim their state. */
void
shm_janitor(struct shm_fabric *f)
{
	struct shm_hdr *h = f->hdr;
	uint64_t now = ipoib_now_ns();
	uint64_t due = __atomic_load_n(&f->next_janitor_ns, __ATOMIC_RELAXED);
	uint32_t i;

	/* every port's control thread calls it: one of them claims the run */
	if (now < due || !__atomic_compare_exchange_n(&f->next_janitor_ns,
			&due, now + SHM_JANITOR_PERIOD_MS * 1000000ULL, false,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	shm_check_linked(f);
	for (i = 0; i < SHM_MAX_PROCS; i++) {
		struct shm_proc_ent *pe = &h->procs[i];

		if (i == f->proc || shm_load(&pe->state) != SHM_PROC_ACTIVE ||
		    shm_proc_alive(pe))
			continue;
		if (shm_lock(f) < 0)
			return;
		if (pe->state == SHM_PROC_ACTIVE && !shm_proc_alive(pe))
			shm_proc_reclaim(f, i);
		shm_unlock(f);
	}
}

/* Remove the objects of a fabric whose processes are all dead. */
int
shm_fabric_unlink_stale(const char *fabric)
{
	struct shm_fabric *f;
	int ret = shm_fabric_attach(fabric, &f);

	if (ret < 0)
		return ret;
	f->next_janitor_ns = 0;
	shm_janitor(f);
	shm_fabric_detach(f);
	return 0;
}

/* ---- lookups in the directory ------------------------------------------ */

/* The port of gid; under the directory lock: entries are reused. */
int
shm_port_find_gid_locked(struct shm_fabric *f, const uint8_t *gid)
{
	uint32_t i;

	for (i = 0; i < SHM_MAX_PORTS; i++) {
		struct shm_port_ent *pt = &f->hdr->ports[i];

		/* state changes (down, up) without the lock */
		if (shm_load(&pt->state) != SHM_PORT_FREE &&
		    memcmp(pt->gid, gid, IPOIB_GID_LEN) == 0)
			return (int)i;
	}
	return -ENOENT;
}

int
shm_port_find_gid(struct shm_fabric *f, const uint8_t *gid)
{
	int ret = shm_lock(f);

	if (ret < 0)
		return ret;
	ret = shm_port_find_gid_locked(f, gid);
	shm_unlock(f);
	return ret;
}

struct shm_qp_ent *
shm_qp_slot(struct shm_fabric *f, uint32_t qpn)
{
	if (SHM_QPN_GEN(qpn) == 0 || (qpn >> 24) != 0)
		return NULL;
	return &f->hdr->qps[SHM_QPN_INDEX(qpn)];
}

/* The QP entry of qpn, NULL if it is not (or no longer) allocated. */
struct shm_qp_ent *
shm_qp_lookup(struct shm_fabric *f, uint32_t qpn)
{
	struct shm_qp_ent *q = shm_qp_slot(f, qpn);

	if (q == NULL || shm_load_relaxed(&q->gen) != SHM_QPN_GEN(qpn) ||
	    shm_load(&q->state) == SHM_QPS_FREE)
		return NULL;
	return q;
}
