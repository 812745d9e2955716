/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The arena: this process's shared memory segments, from which it
 * allocates its queues and its receive buffers, and the mappings of its
 * peers' segments.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm_internal.h"
#include "shm_log.h"

/* ---- arena ------------------------------------------------------------ */

/*
 * Segment seg of process slot proc in its generation gen. The header's
 * incarnation keeps a fabric that replaced a removed one from ever
 * opening the segments of the old one, and the other way round.
 */
void
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
		      (len + SHM_HUGE_PAGE - 1) & ~(SHM_HUGE_PAGE - 1);
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

/* From this size, an allocation's pages go back to the system when freed. */
#define SHM_ARENA_LARGE		65536

static uint64_t
shm_alloc_size(size_t len)
{
	uint64_t need = (len + SHM_ALIGN - 1) & ~(uint64_t)(SHM_ALIGN - 1);

	if (len >= SHM_ARENA_LARGE)	/* page aligned, for hole punching */
		need = (need + 4095) & ~4095ULL;
	return need;
}

/* First fit in segment sg, at a multiple of align; false: no room. */
static bool
shm_seg_alloc(struct shm_seg *sg, uint64_t need, uint64_t align,
	      uint64_t *off)
{
	unsigned int i;

	for (i = 0; i < sg->nr_free; i++) {
		struct shm_extent *e = &sg->free[i];
		uint64_t start = (e->off + align - 1) & ~(align - 1);

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
 * Map [p, p + len) into this process now, allocating what pages it lacks
 * (0, or -errno: the mapping is as it was, its pages fault in as they
 * are used). A first touch of each 4 KiB page costs a minor fault
 * (1-3 us on the test VM): a fresh CQ took one every 64 completions in
 * each process touching it, its owner polling and its senders pushing,
 * until it had wrapped once (ipoib_cm_perf.rst, "First touch"). An HCA's
 * queues are pinned when made. MADV_POPULATE_WRITE is Linux 5.14's.
 *
 * huge: the range is a walked queue of SHM_HUGE_PAGE bytes or more at a
 * 2 MiB multiple of its segment (shm_arena_alloc()), asked for 2 MiB
 * pages first. A CQ one completion a round trip walks takes a new 4 KiB
 * page every 128 completions and sees one again only a lap later: each
 * costs a TLB miss, and a non-SRQ CQ of 4 MiB tripled the round trip's
 * p99 (ipoib_cm_perf.rst, "Non-SRQ round trips"). Where /dev/shm is
 * mounted huge=advise (or within_size, always), the pages allocated for
 * the range are then huge, and a process that maps it advised the same
 * maps them so; elsewhere the advice changes nothing.
 */
static int
shm_populate(uint8_t *p, size_t len, bool huge)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p & ~(page - 1);

	len += (uintptr_t)p - a;
	if (huge)
		(void)madvise((void *)a, len, MADV_HUGEPAGE);
	return madvise((void *)a, len, MADV_POPULATE_WRITE) < 0 ? -errno : 0;
}

/*
 * Allocate in our arena (flags: SHM_ARENA_*). Committed allocations get
 * their pages now (fallocate), and a large one is mapped
 * (shm_populate()): a full /dev/shm is an error here, not a SIGBUS
 * later, and the datapath does not fault a CQ in page by page. A large
 * walked queue is 2 MiB aligned and populated advised huge, without the
 * fallocate, which would give the file its 4 KiB pages first; where that
 * fails, it is committed as any other.
 */
int
shm_arena_alloc(struct shm_fabric *f, size_t len, unsigned int flags,
		uint64_t *off)
{
	uint64_t need = shm_alloc_size(len), o = 0, align = SHM_ALIGN;
	bool commit = (flags & SHM_ARENA_COMMIT) != 0;
	bool large = len >= SHM_ARENA_LARGE;
	bool huge = commit && (flags & SHM_ARENA_WALKED) != 0 &&
		    len >= SHM_HUGE_PAGE;
	uint32_t seg;
	int ret = 0;

	if (huge)
		align = SHM_HUGE_PAGE;
	else if (large)		/* for hole punching */
		align = 4096;
	pthread_mutex_lock(&f->lock);
	for (seg = 0; seg < f->nr_segs; seg++)
		if (shm_seg_alloc(&f->segs[seg], need, align, &o))
			break;
	if (seg == f->nr_segs) {
		ret = shm_seg_create(f, need + (align > 4096 ? align : 4096));
		if (ret == 0 && !shm_seg_alloc(&f->segs[seg], need, align, &o))
			ret = -ENOMEM;
	}
	if (ret == 0)
		f->arena_used += need;
	pthread_mutex_unlock(&f->lock);
	if (ret < 0)
		return ret;
	*off = SHM_OFF(seg, o);
	if (!commit || (huge && shm_populate(f->segs[seg].base + o, need,
					     true) == 0))
		return 0;
	if (fallocate(f->segs[seg].fd, 0, o, need) < 0) {
		ret = -errno;
		shm_arena_free(f, *off, len);
		SHM_LOG(ERR, "fabric %s: no shared memory for %zu bytes: %s",
			f->name, len, strerror(-ret));
	} else if (large) {
		/*
		 * A small extent's pages stay mapped once touched (it is
		 * zeroed in place when freed): only a large one would fault
		 * in page by page on every reuse. Best effort.
		 */
		(void)shm_populate(f->segs[seg].base + o, need, false);
	}
	return ret;
}

/*
 * Give an extent back. A large one's pages return to the system; a small
 * one (a connection's receive queue, a CQ) is zeroed in place: a hole
 * punched in it unmapped its pages everywhere (TLB shootdowns), and the
 * next allocation faulted them in again, in every non-SRQ connection
 * setup (ipoib_cm_perf.rst).
 */
void
shm_arena_free(struct shm_fabric *f, uint64_t off, size_t len)
{
	struct shm_seg *sg = &f->segs[off >> SHM_SEG_SHIFT];
	uint64_t need = shm_alloc_size(len);
	uint64_t o = off & SHM_SEG_OFF_MASK;
	unsigned int i;

	/* reads of a punched range return zeros: allocations start zeroed */
	if (len < SHM_ARENA_LARGE ||
	    fallocate(sg->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, o,
		      need) < 0)
		memset(sg->base + o, 0, need);
	pthread_mutex_lock(&f->lock);
	f->arena_used -= need;
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
	m->nr_populated = 0;
	__atomic_store_n(&m->base, base, __ATOMIC_RELAXED);
	shm_store(&m->gen, gen);
out:
	pthread_mutex_unlock(&f->lock);
	return base == NULL ? NULL : base + (off & SHM_SEG_OFF_MASK);
}

void
shm_arena_populate(struct shm_fabric *f, uint32_t proc, uint64_t off,
		   size_t len)
{
	uint32_t seg = (uint32_t)(off >> SHM_SEG_SHIFT);
	uint64_t o = off & SHM_SEG_OFF_MASK;
	uint8_t *p = shm_arena_ptr(f, proc, off);
	struct shm_seg_map *m;
	bool known = true;
	uint32_t i;

	/* ours: a large committed extent is populated when allocated */
	if (p == NULL || proc == f->proc)
		return;
	pthread_mutex_lock(&f->lock);
	m = f->maps[proc] != NULL ? &f->maps[proc][seg] : NULL;
	if (m != NULL && m->base != NULL && o < m->size) {
		uint32_t n = m->nr_populated < SHM_POPULATED ?
			     m->nr_populated : SHM_POPULATED;

		for (i = 0; i < n && m->populated[i] != o; i++)
			;
		known = i < n;
		if (!known)	/* the oldest makes room */
			m->populated[m->nr_populated++ % SHM_POPULATED] = o;
		/* what shared memory says of its length: within the map */
		if (len > m->size - o)
			len = m->size - o;
	}
	pthread_mutex_unlock(&f->lock);
	if (!known)	/* only CQs come here: walked queues */
		(void)shm_populate(p, len, len >= SHM_HUGE_PAGE);
}

int
shm_arena_create(struct shm_fabric *f)
{
	int ret;

	pthread_mutex_lock(&f->lock);
	ret = shm_seg_create(f, SHM_SEG_MIN);
	pthread_mutex_unlock(&f->lock);
	return ret;
}

uint64_t
shm_arena_used(struct shm_fabric *f)
{
	uint64_t used;

	pthread_mutex_lock(&f->lock);
	used = f->arena_used;
	pthread_mutex_unlock(&f->lock);
	return used;
}

int
shm_port_arena_alloc(struct shm_port *p, size_t len, unsigned int flags,
		     uint64_t *off)
{
	int ret = shm_arena_alloc(p->f, len, flags, off);

	if (ret == 0)
		__atomic_fetch_add(&p->arena_bytes, shm_alloc_size(len),
				   __ATOMIC_RELAXED);
	return ret;
}

void
shm_port_arena_free(struct shm_port *p, uint64_t off, size_t len)
{
	shm_arena_free(p->f, off, len);
	__atomic_fetch_sub(&p->arena_bytes, shm_alloc_size(len),
			   __ATOMIC_RELAXED);
}

uint64_t
shm_port_arena_bytes(const struct shm_port *p)
{
	return __atomic_load_n(&p->arena_bytes, __ATOMIC_RELAXED);
}

/* ---- memory for posted buffers ----------------------------------------- */

int
shm_mem_alloc(struct shm_fabric *f, size_t len, struct shm_mem *mem)
{
	uint64_t off;
	int ret = shm_arena_alloc(f, len, SHM_ARENA_COMMIT, &off);

	if (ret < 0)
		return ret;
	mem->addr = shm_arena_ptr(f, f->proc, off);
	mem->len = len;
	mem->size = shm_alloc_size(len);
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
	uint64_t off = 0;
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
