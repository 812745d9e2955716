/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The fabric directory: attaching processes, their arenas, ports, and the
 * janitor that reclaims what dead processes left behind.
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

static pthread_mutex_t shm_fabrics_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shm_fabric *shm_fabrics;

uint64_t
shm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

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

/* ---- arena ------------------------------------------------------------ */

/*
 * Segment seg of process slot proc in its generation gen. The header's
 * incarnation keeps a fabric that replaced a removed one from ever
 * opening the segments of the old one, and the other way round.
 */
static void
shm_seg_name(char *buf, size_t len, const struct shm_fabric *f,
	     uint32_t proc, uint32_t gen, uint32_t seg)
{
	snprintf(buf, len, "/ipoibcm.%s.%08x.%u.%u.%u", f->name,
		 f->incarnation, proc, gen, seg);
}

static int
shm_extent_insert(struct shm_seg *sg, unsigned int at, uint64_t off,
		  uint64_t len)
{
	if (sg->nr_free == sg->cap_free) {
		unsigned int cap = sg->cap_free ? sg->cap_free * 2 : 16;
		struct shm_extent *n = realloc(sg->free, cap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		sg->free = n;
		sg->cap_free = cap;
	}
	memmove(&sg->free[at + 1], &sg->free[at],
		(sg->nr_free - at) * sizeof(*sg->free));
	sg->free[at].off = off;
	sg->free[at].len = len;
	sg->nr_free++;
	return 0;
}

static void
shm_extent_remove(struct shm_seg *sg, unsigned int at)
{
	memmove(&sg->free[at], &sg->free[at + 1],
		(sg->nr_free - at - 1) * sizeof(*sg->free));
	sg->nr_free--;
}

/* A new segment of our arena, big enough for len (lock held). */
static int
shm_seg_create(struct shm_fabric *f, size_t len)
{
	size_t size = len <= SHM_SEG_MIN ? SHM_SEG_MIN :
		      (len + (2ULL << 20) - 1) & ~((2ULL << 20) - 1);
	struct shm_seg *sg;
	char name[96];
	int fd;

	if (f->nr_segs == SHM_MAX_SEGS)
		return -ENOSPC;
	sg = &f->segs[f->nr_segs];
	shm_seg_name(name, sizeof(name), f, f->proc, f->gen, f->nr_segs);
	shm_unlink(name);	/* a leftover of a dead incarnation */
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, size) < 0)
		goto fail;
	sg->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sg->base == MAP_FAILED)
		goto fail;
	sg->size = size;
	sg->fd = fd;
	sg->nr_free = 0;
	/* offset 0 of segment 0 stays unused: it means "none" */
	if (shm_extent_insert(sg, 0, SHM_ALIGN, size - SHM_ALIGN) < 0) {
		munmap(sg->base, size);
		sg->base = NULL;
		close(fd);
		shm_unlink(name);
		return -ENOMEM;
	}
	/* shm_arena_own() reads it without the lock: the segment first */
	__atomic_store_n(&f->nr_segs, f->nr_segs + 1, __ATOMIC_RELEASE);
	/* the janitor unlinks segments 0..nr_segs-1 of a dead process */
	shm_store(&f->hdr->procs[f->proc].nr_segs, f->nr_segs);
	return 0;
fail:
	close(fd);
	shm_unlink(name);
	return -errno;
}

static uint64_t
shm_alloc_size(size_t len)
{
	uint64_t need = (len + SHM_ALIGN - 1) & ~(uint64_t)(SHM_ALIGN - 1);

	if (len >= 65536)	/* large ones page aligned, for hole punching */
		need = (need + 4095) & ~4095ULL;
	return need;
}

/* First fit in segment sg; false when it has no room. */
static bool
shm_seg_alloc(struct shm_seg *sg, uint64_t need, bool page, uint64_t *off)
{
	unsigned int i;

	for (i = 0; i < sg->nr_free; i++) {
		struct shm_extent *e = &sg->free[i];
		uint64_t start = page ? (e->off + 4095) & ~4095ULL : e->off;

		if (start + need > e->off + e->len)
			continue;
		if (start > e->off) {	/* keep the alignment gap free */
			uint64_t gap = start - e->off;

			e->off = start;
			e->len -= gap;
			if (shm_extent_insert(sg, i, start - gap, gap) < 0)
				return false;
			e = &sg->free[++i];
		}
		*off = e->off;
		e->off += need;
		e->len -= need;
		if (e->len == 0)
			shm_extent_remove(sg, i);
		return true;
	}
	return false;
}

/*
 * Allocate in our arena. Committed allocations get their pages now
 * (fallocate): a full /dev/shm is an error here, not a SIGBUS later.
 */
int
shm_arena_alloc(struct shm_fabric *f, size_t len, bool commit, uint64_t *off)
{
	uint64_t need = shm_alloc_size(len), o = 0;
	uint32_t seg;
	int ret = 0;

	pthread_mutex_lock(&f->lock);
	for (seg = 0; seg < f->nr_segs; seg++)
		if (shm_seg_alloc(&f->segs[seg], need, len >= 65536, &o))
			break;
	if (seg == f->nr_segs) {
		ret = shm_seg_create(f, need + 4096);
		if (ret == 0 && !shm_seg_alloc(&f->segs[seg], need,
					       len >= 65536, &o))
			ret = -ENOMEM;
	}
	pthread_mutex_unlock(&f->lock);
	if (ret < 0)
		return ret;
	*off = SHM_OFF(seg, o);
	if (commit && fallocate(f->segs[seg].fd, 0, o, need) < 0) {
		ret = -errno;
		shm_arena_free(f, *off, len);
		SHM_LOG(ERR, "fabric %s: no shared memory for %zu bytes: %s",
			f->name, len, strerror(-ret));
	}
	return ret;
}

/* Give an extent back; its pages return to the system. */
void
shm_arena_free(struct shm_fabric *f, uint64_t off, size_t len)
{
	struct shm_seg *sg = &f->segs[off >> SHM_SEG_SHIFT];
	uint64_t need = shm_alloc_size(len);
	uint64_t o = off & SHM_SEG_OFF_MASK;
	unsigned int i;

	/* reads of a punched range return zeros: allocations start zeroed */
	if (fallocate(sg->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, o,
		      need) < 0)
		memset(sg->base + o, 0, need);
	pthread_mutex_lock(&f->lock);
	for (i = 0; i < sg->nr_free && sg->free[i].off < o; i++)
		;
	if (i > 0 && sg->free[i - 1].off + sg->free[i - 1].len == o) {
		sg->free[i - 1].len += need;
		if (i < sg->nr_free && o + need == sg->free[i].off) {
			sg->free[i - 1].len += sg->free[i].len;
			shm_extent_remove(sg, i);
		}
	} else if (i < sg->nr_free && o + need == sg->free[i].off) {
		sg->free[i].off = o;
		sg->free[i].len += need;
	} else if (shm_extent_insert(sg, i, o, need) < 0) {
		SHM_LOG(WARNING, "fabric %s: arena extent lost", f->name);
	}
	pthread_mutex_unlock(&f->lock);
}

/* Is [addr, addr + len) inside our segment lkey? Gives its arena offset. */
bool
shm_arena_own(struct shm_fabric *f, uint32_t lkey, uint64_t addr,
	      uint64_t len, uint64_t *off)
{
	const struct shm_seg *sg;

	if (lkey >= __atomic_load_n(&f->nr_segs, __ATOMIC_ACQUIRE))
		return false;
	sg = &f->segs[lkey];
	if (addr < (uintptr_t)sg->base ||
	    addr + len > (uintptr_t)sg->base + sg->size)
		return false;
	*off = SHM_OFF(lkey, addr - (uintptr_t)sg->base);
	return true;
}

/* Map a peer's segment on first use; mappings stay until detach. */
void *
shm_arena_map(struct shm_fabric *f, uint32_t proc, uint64_t off)
{
	uint32_t seg = (uint32_t)(off >> SHM_SEG_SHIFT);
	struct shm_seg_map *m;
	uint8_t *base = NULL;
	struct stat st;
	char name[96];
	uint32_t gen;
	int fd;

	/* proc and off come from shared memory: check before any use */
	if (proc >= SHM_MAX_PROCS || seg >= SHM_MAX_SEGS)
		return NULL;
	gen = shm_load(&f->hdr->procs[proc].gen);
	pthread_mutex_lock(&f->lock);
	if (f->maps[proc] == NULL)
		__atomic_store_n(&f->maps[proc],
				 calloc(SHM_MAX_SEGS, sizeof(*f->maps[proc])),
				 __ATOMIC_RELEASE);
	if (f->maps[proc] == NULL)
		goto out;
	m = &f->maps[proc][seg];
	if (m->base != NULL && m->gen == gen) {
		base = m->base;
		goto out;
	}
	shm_seg_name(name, sizeof(name), f, proc, gen, seg);
	fd = shm_open(name, O_RDWR, 0);
	if (fd < 0)
		goto out;
	if (fstat(fd, &st) == 0 && st.st_size > 0)
		base = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE,
			    MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED || base == NULL) {
		base = NULL;
		goto out;
	}
	/* an older mapping of that slot is left: a datapath may use it */
	m->size = st.st_size;
	__atomic_store_n(&m->base, base, __ATOMIC_RELAXED);
	shm_store(&m->gen, gen);
out:
	pthread_mutex_unlock(&f->lock);
	return base == NULL ? NULL : base + (off & SHM_SEG_OFF_MASK);
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
	h->incarnation = (uint32_t)(shm_now_ns() ^ shm_realtime_ns() ^
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
	uint64_t deadline = shm_now_ns() + 1000000000ULL;
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
		while ((size_t)st.st_size < size && shm_now_ns() < deadline) {
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
	while (!shm_load(&f->hdr->ready) && shm_now_ns() < deadline)
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

static int
shm_arena_create(struct shm_fabric *f)
{
	int ret;

	pthread_mutex_lock(&f->lock);
	ret = shm_seg_create(f, SHM_SEG_MIN);
	pthread_mutex_unlock(&f->lock);
	return ret;
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
	f->cm_next_id = (uint32_t)(getpid() << 12) ^ (uint32_t)shm_now_ns();
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
				m->members[i] = m->members[--m->nr_members];
				continue;
			}
			i++;
		}
	}
}

/* ---- the address records' index (see shm_hdr.ll_index) ---------------- */

static uint32_t
shm_ll_bucket(const uint8_t *mac)
{
	uint32_t h = 2166136261u;	/* FNV-1a */
	unsigned int i;

	for (i = 0; i < 6; i++)
		h = (h ^ mac[i]) * 16777619u;
	return h & SHM_LL_MASK;
}

/* Take a port's record out of the index (lock held). */
static void
shm_ll_unindex(struct shm_hdr *h, struct shm_port_ent *e)
{
	if (e->ll_slot == 0)
		return;
	shm_store(&h->ll_index[e->ll_slot - 1], SHM_LL_FREED);
	e->ll_slot = 0;
}

/* Index port's record under its MAC (lock held). */
static void
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
	uint64_t now = shm_now_ns();
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

/* ---- ports -------------------------------------------------------------- */

static uint64_t
shm_guid_derive(const char *fabric, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	const char *s;

	for (s = fabric; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	h = (h ^ '/') * 0x100000001b3ULL;
	for (s = name; s != NULL && *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	/* a Mellanox-like OUI keeps derived GUIDs recognisable */
	return 0x0002c90000000000ULL | (h & 0xffffffffffULL);
}

static void
shm_gid_from_guid(uint8_t *gid, uint64_t guid)
{
	uint64_t prefix = SHM_SUBNET_PREFIX;
	int i;

	for (i = 0; i < 8; i++) {
		gid[i] = (uint8_t)(prefix >> (56 - 8 * i));
		gid[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
	}
}

/* The port of gid; under the directory lock: entries are reused. */
static int
shm_port_find_gid_locked(struct shm_fabric *f, const uint8_t *gid)
{
	uint32_t i;

	for (i = 0; i < SHM_MAX_PORTS; i++) {
		struct shm_port_ent *pt = &f->hdr->ports[i];

		/* state changes (down, up) without the lock */
		if (shm_load(&pt->state) != SHM_PORT_FREE &&
		    memcmp(pt->gid, gid, SHM_GID_LEN) == 0)
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

static uint32_t
shm_or_default(uint32_t v, uint32_t def)
{
	return v == 0 ? def : v;
}

static int
shm_port_alloc(struct shm_fabric *f, const struct shm_port_conf *conf,
	       uint64_t guid, uint32_t *index)
{
	struct shm_hdr *h = f->hdr;
	uint8_t gid[SHM_GID_LEN];
	uint32_t i, free_idx = SHM_MAX_PORTS;

	shm_gid_from_guid(gid, guid);
	for (i = 0; i < SHM_MAX_PORTS; i++) {
		struct shm_port_ent *pt = &h->ports[i];

		if (pt->state == SHM_PORT_FREE) {
			if (free_idx == SHM_MAX_PORTS)
				free_idx = i;
		} else if (pt->guid == guid) {
			SHM_LOG(ERR, "fabric %s: GUID 0x%016" PRIx64 " is in "
				"use by port %u", f->name, guid, i);
			return -EADDRINUSE;
		}
	}
	if (free_idx == SHM_MAX_PORTS)
		return -ENOSPC;
	i = free_idx;
	/* state (FREE) is read without the lock: shm_port_open() sets it */
	memset((uint8_t *)&h->ports[i] + sizeof(h->ports[i].state), 0,
	       sizeof(h->ports[i]) - sizeof(h->ports[i].state));
	h->ports[i].proc = f->proc;
	h->ports[i].proc_gen = f->gen;
	h->ports[i].lid = (uint16_t)(i + 1);	/* LIDs 1..16384: unicast */
	h->ports[i].ib_mtu = conf->ib_mtu ? conf->ib_mtu : 2048;
	h->ports[i].guid = guid;
	memcpy(h->ports[i].gid, gid, SHM_GID_LEN);
	h->ports[i].npkeys = conf->npkeys;
	memcpy(h->ports[i].pkeys, conf->pkeys, sizeof(conf->pkeys));
	if (h->ports[i].npkeys == 0) {
		h->ports[i].npkeys = 1;
		h->ports[i].pkeys[0] = 0xffff;
	}
	h->ports[i].max_qp = shm_or_default(conf->max_qp, SHM_DEF_MAX_QP);
	h->ports[i].max_qp_wr = SHM_DEF_MAX_QP_WR;
	h->ports[i].max_srq_wr = shm_or_default(conf->max_srq_wr,
						SHM_DEF_MAX_SRQ_WR);
	h->ports[i].max_cqe = shm_or_default(conf->max_cqe, SHM_DEF_MAX_CQE);
	h->ports[i].fault_rej_after = -1;
	*index = i;
	return 0;
}

int
shm_port_open(struct shm_fabric *f, const struct shm_port_conf *conf,
	      struct shm_port **pp)
{
	uint64_t guid = conf->guid ? conf->guid :
			shm_guid_derive(f->name, conf->name);
	struct shm_port *p;
	uint64_t off;
	uint32_t index;
	int ret;

	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	p->f = f;
	pthread_mutex_init(&p->cap_lock, NULL);
	ret = shm_arena_alloc(f, sizeof(struct shm_cm_ring), false, &off);
	if (ret < 0)
		goto fail;
	p->cm = shm_arena_ptr(f, f->proc, off);	/* zeroed */
	ret = shm_lock(f);
	if (ret < 0)
		goto fail_cm;
	ret = shm_port_alloc(f, conf, guid, &index);
	if (ret == 0) {
		p->index = index;
		p->ent = &f->hdr->ports[index];
		p->ent->cm_ring_off = off;
		shm_store(&p->ent->state, SHM_PORT_ACTIVE);
	}
	shm_unlock(f);
	if (ret < 0)
		goto fail_cm;
	p->last_state = SHM_PORT_ACTIVE;
	SHM_LOG(INFO, "fabric %s: port %u up: GUID 0x%016" PRIx64 " LID %u",
		f->name, index, guid, p->ent->lid);
	*pp = p;
	return 0;
fail_cm:
	shm_arena_free(f, off, sizeof(struct shm_cm_ring));
fail:
	pthread_mutex_destroy(&p->cap_lock);
	free(p);
	return ret;
}

/* The port's QPs, SRQs and CM ids must be gone already. */
void
shm_port_close(struct shm_port *p)
{
	struct shm_fabric *f = p->f;
	/* once the slot is free another process may reuse (and zero) it */
	uint64_t cm_off = p->ent->cm_ring_off;

	shm_capture_close(p);
	if (shm_lock(f) == 0) {
		shm_ll_unindex(f->hdr, p->ent);
		shm_store(&p->ent->state, SHM_PORT_FREE);
		shm_unlock(f);
	}
	shm_arena_free(f, cm_off, sizeof(struct shm_cm_ring));
	free(p->qps);
	free(p->srqs);
	free(p->listen);
	free(p->ids);
	pthread_mutex_destroy(&p->cap_lock);
	free(p);
}

void
shm_port_query(const struct shm_port *p, struct shm_port_info *info)
{
	const struct shm_port_ent *e = p->ent;

	memset(info, 0, sizeof(*info));
	info->guid = e->guid;
	memcpy(info->gid, e->gid, SHM_GID_LEN);
	info->lid = e->lid;
	info->ib_mtu = e->ib_mtu;
	info->active = shm_load(&e->state) == SHM_PORT_ACTIVE;
	info->index = p->index;
	info->max_qp = e->max_qp;
	info->max_qp_wr = e->max_qp_wr;
	info->max_srq_wr = e->max_srq_wr;
	info->max_cqe = e->max_cqe;
	info->npkeys = e->npkeys;
	memcpy(info->pkeys, e->pkeys, sizeof(info->pkeys));
}

/* Take the port down or bring it back (fault injection, tests). */
int
shm_port_set_state(struct shm_port *p, bool active)
{
	shm_store(&p->ent->state, active ? SHM_PORT_ACTIVE : SHM_PORT_DOWN);
	return 0;
}

struct shm_fabric *
shm_port_fabric(const struct shm_port *p)
{
	return p->f;
}

int
shm_ah_resolve(struct shm_fabric *f, const uint8_t *gid, uint16_t dlid,
	       struct shm_ah *ah)
{
	int port;

	memset(ah, 0, sizeof(*ah));
	memcpy(ah->dgid, gid, SHM_GID_LEN);
	if (gid[0] == 0xff) {
		ah->multicast = true;
		ah->dlid = 0xc000;
		return 0;
	}
	port = shm_lock(f);
	if (port < 0)
		return port;
	port = shm_port_find_gid_locked(f, gid);
	if (port >= 0) {
		ah->port = (uint32_t)port;
		ah->dlid = dlid ? dlid : f->hdr->ports[port].lid;
	}
	shm_unlock(f);
	return port < 0 ? port : 0;
}

void
shm_port_event(struct shm_port *p, const struct shm_async_event *ev)
{
	if (p->ev_tail - p->ev_head >= SHM_EVQ_LEN) {
		SHM_LOG(WARNING, "port %u: async event queue full", p->index);
		return;
	}
	p->evq[p->ev_tail++ % SHM_EVQ_LEN] = *ev;
}

static void
shm_port_check_state(struct shm_port *p)
{
	uint32_t st = shm_load(&p->ent->state);
	struct shm_async_event ev = { 0 };

	if (st == p->last_state)
		return;
	p->last_state = st;
	ev.type = st == SHM_PORT_ACTIVE ? SHM_EV_PORT_ACTIVE :
					  SHM_EV_PORT_DOWN;
	shm_port_event(p, &ev);
}

static void
shm_srq_check_limits(struct shm_port *p)
{
	unsigned int i;

	for (i = 0; i < p->nr_srqs; i++) {
		struct shm_rq *srq = p->srqs[i];
		struct shm_async_event ev = { .type = SHM_EV_SRQ_LIMIT };

		if (__atomic_exchange_n(&srq->ring->limit_fired, 0,
					__ATOMIC_ACQ_REL) == 0)
			continue;
		ev.srq = srq;
		shm_port_event(p, &ev);
	}
}

int
shm_async_poll(struct shm_port *p, struct shm_async_event *ev, int n)
{
	int k = 0;

	shm_janitor(p->f);
	if (!p->lost_reported && shm_fabric_lost(p->f)) {
		struct shm_async_event lost = { .type = SHM_EV_FABRIC_LOST };

		p->lost_reported = true;
		shm_port_event(p, &lost);
	}
	shm_port_check_state(p);
	shm_qp_watch(p);
	shm_srq_check_limits(p);
	while (k < n && p->ev_head != p->ev_tail)
		ev[k++] = p->evq[p->ev_head++ % SHM_EVQ_LEN];
	return k;
}

void
shm_port_counters(const struct shm_port *p, struct shm_port_counters *c)
{
	const struct shm_port_ent *e = p->ent;

	c->ud_no_wr = shm_load_relaxed(&e->cnt_ud_no_wr);
	c->pkey_drops = shm_load_relaxed(&e->cnt_pkey_drops);
	c->qkey_drops = shm_load_relaxed(&e->cnt_qkey_drops);
	c->len_errs = shm_load_relaxed(&e->cnt_len_errs);
	c->fault_drops = shm_load_relaxed(&e->cnt_fault_drops);
	c->cm_drops = shm_load_relaxed(&e->cnt_cm_drops);
	c->cm_retries = shm_load_relaxed(&p->cm_retries);
	c->rnr_naks = shm_load_relaxed(&e->cnt_rnr_naks);
	c->link_down_drops = shm_load_relaxed(&e->cnt_link_down_drops);
}

void
shm_port_set_faults(struct shm_port *p, const struct shm_faults *fl)
{
	struct shm_port_ent *e = p->ent;

	shm_store(&e->fault_drop_ppm, fl->drop_ppm);
	shm_store(&e->fault_cm_delay_ms, fl->cm_delay_ms);
	shm_store(&e->fault_rej_after, fl->rej_after);
	shm_store(&e->fault_cm_drop_mask, fl->cm_drop_mask);
}

void
shm_port_get_faults(const struct shm_port *p, struct shm_faults *fl)
{
	const struct shm_port_ent *e = p->ent;

	fl->drop_ppm = shm_load(&e->fault_drop_ppm);
	fl->cm_delay_ms = shm_load(&e->fault_cm_delay_ms);
	fl->rej_after = shm_load(&e->fault_rej_after);
	fl->cm_drop_mask = shm_load(&e->fault_cm_drop_mask);
}

/* Decide a fault-injected drop: ppm in a million, per-thread PRNG. */
bool
shm_fault_drop(uint32_t ppm)
{
	static __thread uint64_t state;

	if (ppm == 0)
		return false;
	if (state == 0)
		state = shm_now_ns() | 1;
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state % 1000000 < ppm;
}

/* ---- memory for posted buffers ----------------------------------------- */

int
shm_mem_alloc(struct shm_fabric *f, size_t len, struct shm_mem *mem)
{
	uint64_t off;
	int ret = shm_arena_alloc(f, len, true, &off);

	if (ret < 0)
		return ret;
	mem->addr = shm_arena_ptr(f, f->proc, off);
	mem->len = len;
	mem->lkey = (uint32_t)(off >> SHM_SEG_SHIFT);
	return 0;
}

/*
 * Free memory from shm_mem_alloc(). A caller that kept only the address
 * and length (lkey 0) must not leak what lives in another segment: the
 * segment is found from the address.
 */
void
shm_mem_free(struct shm_fabric *f, struct shm_mem *mem)
{
	uint64_t off;
	uint32_t seg;

	if (!shm_arena_own(f, mem->lkey, (uintptr_t)mem->addr, mem->len,
			   &off)) {
		for (seg = 0; seg < f->nr_segs; seg++)
			if (shm_arena_own(f, seg, (uintptr_t)mem->addr,
					  mem->len, &off))
				break;
		if (seg == f->nr_segs) {
			SHM_LOG(WARNING, "fabric %s: %zu bytes at %p are not "
				"in the arena", f->name, mem->len, mem->addr);
			mem->addr = NULL;
			return;
		}
	}
	shm_arena_free(f, off, mem->len);
	mem->addr = NULL;
}

/* ---- address records ----------------------------------------------------- */

void
shm_port_publish(struct shm_port *p, const uint8_t *mac, uint32_t qpn,
		 uint8_t flags)
{
	struct shm_port_ent *e = p->ent;
	struct shm_hdr *h = p->f->hdr;

	if (shm_lock(p->f) < 0)
		return;
	shm_ll_unindex(h, e);
	shm_store(&e->ll_valid, 0);
	memcpy(e->ll_mac, mac, sizeof(e->ll_mac));
	e->ll_qpn = qpn;
	e->ll_flags = flags;
	shm_store(&e->ll_valid, 1);
	shm_ll_index(h, p->index);
	shm_unlock(p->f);
}

/* Do two ports have a P_Key in common they may talk with? */
static bool
shm_ports_share_pkey(const struct shm_port_ent *a, const struct shm_port_ent *b)
{
	uint32_t i, j;

	for (i = 0; i < a->npkeys && i < SHM_PKEY_TABLE_LEN; i++)
		for (j = 0; j < b->npkeys && j < SHM_PKEY_TABLE_LEN; j++)
			if (shm_pkey_match(a->pkeys[i], b->pkeys[j]))
				return true;
	return false;
}

int
shm_addr_resolve(const struct shm_port *p, const uint8_t *mac,
		 uint8_t *hwaddr)
{
	struct shm_hdr *h = p->f->hdr;
	uint32_t b = shm_ll_bucket(mac), n;

	for (n = 0; n < SHM_LL_BUCKETS; n++, b = (b + 1) & SHM_LL_MASK) {
		uint32_t v = shm_load(&h->ll_index[b]);
		struct shm_port_ent *e;

		if (v == 0)
			break;		/* the end of its probe path */
		if (v == SHM_LL_FREED || v > SHM_MAX_PORTS)
			continue;
		e = &h->ports[v - 1];
		if (shm_load(&e->state) != SHM_PORT_ACTIVE ||
		    !shm_load(&e->ll_valid) ||
		    memcmp(e->ll_mac, mac, sizeof(e->ll_mac)) != 0 ||
		    !shm_ports_share_pkey(p->ent, e))
			continue;
		hwaddr[0] = e->ll_flags;
		hwaddr[1] = (uint8_t)(e->ll_qpn >> 16);
		hwaddr[2] = (uint8_t)(e->ll_qpn >> 8);
		hwaddr[3] = (uint8_t)e->ll_qpn;
		memcpy(&hwaddr[4], e->gid, SHM_GID_LEN);
		return 0;
	}
	return -ENOENT;
}
