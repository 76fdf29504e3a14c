/*
 * source.c - plain/gzip byte sources for the trace loader (see source.h).
 *
 * Layering: raw bytes come from an fd or a memory block; gz_fill()
 * inflates them (handling concatenated gzip members, as gzip/zcat do)
 * with ISA-L's igzip: on trace JSON it inflates, CRC included, about 3x as
 * fast as zlib (trace_diff/control, 35 MB: 7 ms against 23-25 ms), CPU a
 * load of many .json.gz ranks on few cores spends on every file; a
 * threaded gzip source runs gz_fill() in a producer thread into a ring of
 * RING blocks, and trace_source_read() copies out of the ring.  Errors
 * (truncated stream, corrupt data, read failure) are reported once, with
 * the compressed byte offset, through the json_read_fn error string, so the
 * JSON reader's message names both positions.
 */
#include "trace/source.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <isa-l/igzip_lib.h>

#include "core/buf.h"
#include "core/par.h"

#define INBUF (256u << 10)
#define BLOCK (1u << 20)
#define RING 4

struct block {
	char *data;
	size_t len;
};

struct trace_source {
	/* raw input */
	int fd;
	const unsigned char *mem;
	size_t mem_len, mem_pos;
	char *mem_owned; /* freed with the source */
	unsigned char *in;
	uint64_t raw_off;
	char prefix[16];
	size_t prefix_len, prefix_pos;
	bool raw_eof;
	/* gzip */
	bool gz;
	bool gz_started, gz_done;
	struct inflate_state *is; /* 87 kB: gzip sources only, at the first read */
	char errmsg[256];
	bool failed;
	/* threaded ring */
	bool threaded;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct block ring[RING];
	unsigned head, tail;   /* consumer reads ring[head % RING], producer fills ring[tail % RING] */
	size_t head_pos;
	bool prod_done, stop;
};

/* What is left of the prefix, up to cap bytes of it; 0 once it is out. */
static size_t take_prefix(struct trace_source *s, void *dst, size_t cap)
{
	size_t n = s->prefix_len - s->prefix_pos;
	if (n > cap)
		n = cap;
	memcpy(dst, s->prefix + s->prefix_pos, n);
	s->prefix_pos += n;
	return n;
}

/* The prefix (text), then the file or memory bytes; a gzip source's prefix
 * comes before its inflated text instead (trace_source_read). */
static ssize_t raw_read(struct trace_source *s, void *dst, size_t cap)
{
	size_t np = s->gz ? 0 : take_prefix(s, dst, cap);
	if (np)
		return (ssize_t)np;
	if (s->mem) {
		size_t n = s->mem_len - s->mem_pos;
		if (n > cap)
			n = cap;
		memcpy(dst, s->mem + s->mem_pos, n);
		s->mem_pos += n;
		s->raw_off += n;
		return (ssize_t)n;
	}
	for (;;) {
		ssize_t n = read(s->fd, dst, cap);
		if (n >= 0) {
			s->raw_off += (uint64_t)n;
			return n;
		}
		if (errno != EINTR) {
			snprintf(s->errmsg, sizeof s->errmsg, "read failed at byte %llu: %s",
				 (unsigned long long)s->raw_off, strerror(errno));
			s->failed = true;
			return -1;
		}
	}
}

/* ISA-L's word for an inflate error. */
static const char *isal_what(int rc)
{
	switch (rc) {
	case ISAL_INVALID_BLOCK: return "invalid deflate block";
	case ISAL_INVALID_SYMBOL: return "invalid code in the deflate data";
	case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
	case ISAL_INVALID_WRAPPER: return "invalid gzip header";
	case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
	case ISAL_INCORRECT_CHECKSUM: return "the gzip trailer's CRC-32 or length does not match the data";
	default: return "inflate failed";
	}
}

/* A gzip member starts here: a fresh state that reads its header and checks
 * its trailer (CRC-32 and length). */
static void gz_member(struct trace_source *s)
{
	struct inflate_state *st = s->is;
	uint8_t *in = st->next_in, *out = st->next_out;
	uint32_t avail_in = st->avail_in, avail_out = st->avail_out;
	isal_inflate_init(st);
	st->crc_flag = ISAL_GZIP;
	st->next_in = in;
	st->avail_in = avail_in;
	st->next_out = out;
	st->avail_out = avail_out;
}

/* Inflate up to cap bytes into dst.  Returns the count, 0 at the end, -1 on
 * an error (s->errmsg). */
static ssize_t gz_fill(struct trace_source *s, char *dst, size_t cap)
{
	if (s->failed)
		return -1;
	if (!s->is) {
		/* on the first read, not at the open: a source that is never
		 * read (a split parse's main source whose text the helper
		 * inflates, load_split.c) allocates and zeroes nothing */
		s->in = xmalloc(INBUF);
		s->is = xcalloc(1, sizeof *s->is);
		isal_inflate_init(s->is);
	}
	struct inflate_state *st = s->is;
	st->next_out = (uint8_t *)dst;
	st->avail_out = cap < UINT32_MAX ? (uint32_t)cap : UINT32_MAX;
	const uint32_t want = st->avail_out;
	while (st->avail_out > 0 && !s->gz_done) {
		if (st->avail_in == 0 && !s->raw_eof) {
			ssize_t n = raw_read(s, s->in, INBUF);
			if (n < 0)
				return -1;
			if (n == 0)
				s->raw_eof = true;
			st->next_in = s->in;
			st->avail_in = (uint32_t)n;
		}
		if (!s->gz_started) {
			/* a new member must start with the magic; anything else
			 * (or nothing) ends the stream: trailing garbage is
			 * ignored like gzip does */
			if (st->avail_in == 0 || st->next_in[0] != 0x1f) {
				s->gz_done = true;
				break;
			}
			s->gz_started = true;
			gz_member(s);
		}
		uint32_t in_before = st->avail_in, out_before = st->avail_out;
		int rc = isal_inflate(st);
		if (rc == ISAL_DECOMP_OK) {
			if (st->block_state == ISAL_BLOCK_FINISH) {
				s->gz_started = false; /* trailer checked: a next member? */
				continue;
			}
			/* input there, room there, nothing taken or given: stop
			 * rather than spin (a defect of the inflater, never seen) */
			if (in_before && st->avail_in == in_before && st->avail_out == out_before) {
				rc = ISAL_INVALID_BLOCK;
				goto bad;
			}
			/* all the input taken, room left, the member not done */
			if (st->avail_in == 0 && s->raw_eof && st->avail_out > 0) {
				snprintf(s->errmsg, sizeof s->errmsg,
					 "gzip stream truncated (compressed input ended at byte %llu)",
					 (unsigned long long)s->raw_off);
				goto fail;
			}
			continue;
		}
	bad:;
		uint64_t at = s->raw_off - st->avail_in;
		snprintf(s->errmsg, sizeof s->errmsg, "gzip data error at compressed byte %llu: %s",
			 (unsigned long long)at, isal_what(rc));
		goto fail;
	}
	return (ssize_t)(want - st->avail_out);
fail:
	/* hand out what was inflated before the error; the next call fails */
	s->failed = true;
	return want - st->avail_out ? (ssize_t)(want - st->avail_out) : -1;
}

static void *producer(void *arg)
{
	struct trace_source *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->mu);
		while (s->tail - s->head >= RING && !s->stop)
			pthread_cond_wait(&s->cv, &s->mu);
		bool stop = s->stop;
		pthread_mutex_unlock(&s->mu);
		if (stop)
			break;
		struct block *b = &s->ring[s->tail % RING];
		/* fill the whole block: fewer hand-offs */
		size_t got = 0;
		ssize_t n = 1;
		while (got < BLOCK && (n = gz_fill(s, b->data + got, BLOCK - got)) > 0)
			got += (size_t)n;
		pthread_mutex_lock(&s->mu);
		b->len = got;
		if (got)
			s->tail++;
		if (n <= 0)
			s->prod_done = true;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		if (n <= 0)
			break;
	}
	return NULL;
}

static struct trace_source *src_new(void)
{
	struct trace_source *s = xcalloc(1, sizeof *s);
	s->fd = -1;
	return s;
}

void trace_source_start_thread(struct trace_source *s)
{
	if (!s->gz || s->threaded || s->gz_started || s->gz_done || s->failed)
		return;
	for (int i = 0; i < RING; i++)
		s->ring[i].data = xmalloc(BLOCK);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	if (par_thread_start(&s->thread, producer, s) != 0) {
		for (int i = 0; i < RING; i++)
			free(s->ring[i].data);
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
		return; /* inflating in the caller, as without */
	}
	s->threaded = true;
}

static bool setup_gzip(struct trace_source *s, bool threaded)
{
	s->gz = true;
	if (threaded)
		trace_source_start_thread(s);
	return true;
}

struct trace_source *trace_source_open(const char *path, bool threaded, char *errbuf, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(errbuf, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	unsigned char magic[2];
	ssize_t n = pread(fd, magic, 2, 0);
	if (n < 0) {
		snprintf(errbuf, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	struct trace_source *s = src_new();
	s->fd = fd;
	if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b && !setup_gzip(s, threaded)) {
		snprintf(errbuf, errlen, "%s: zlib initialisation failed", path);
		trace_source_close(s);
		return NULL;
	}
	return s;
}

/* The prefix a range source hands out first (at most 16 bytes kept). */
static void set_prefix(struct trace_source *s, const char *prefix)
{
	s->prefix_len = strlen(prefix) < sizeof s->prefix ? strlen(prefix) : sizeof s->prefix;
	memcpy(s->prefix, prefix, s->prefix_len);
}

struct trace_source *trace_source_open_range(const char *path, uint64_t offset, const char *prefix,
					     char *errbuf, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char magic[2] = {0, 0};
	ssize_t got = fd < 0 ? -1 : pread(fd, magic, 2, 0);
	if (got < 0) {
		snprintf(errbuf, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	struct trace_source *s = src_new();
	s->fd = fd;
	if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
		/* no seeking in a deflate stream: inflate the text before
		 * offset and drop it (ISA-L: ~0.2 ms a MB); an error or the end
		 * on the way stays with the source, for its reads to report */
		setup_gzip(s, false);
		char *scratch = xmalloc(INBUF);
		for (uint64_t left = offset; left > 0;) {
			ssize_t n = gz_fill(s, scratch, left < INBUF ? (size_t)left : INBUF);
			if (n <= 0)
				break;
			left -= (uint64_t)n;
		}
		free(scratch);
	} else if (lseek(fd, (off_t)offset, SEEK_SET) < 0) {
		snprintf(errbuf, errlen, "%s: %s", path, strerror(errno));
		trace_source_close(s);
		return NULL;
	} else {
		s->raw_off = offset;
	}
	set_prefix(s, prefix);
	return s;
}

uint64_t trace_source_file_size(const struct trace_source *s)
{
	struct stat st;
	if (s->fd < 0 || fstat(s->fd, &st) != 0)
		return 0;
	return (uint64_t)st.st_size;
}

uint64_t trace_source_text_size_hint(const struct trace_source *s)
{
	uint64_t size = trace_source_file_size(s);
	if (!s->gz || size < 18) /* 18: gzip header + trailer */
		return size;
	unsigned char t[4];
	if (pread(s->fd, t, sizeof t, (off_t)(size - 4)) != (ssize_t)sizeof t)
		return 0;
	uint64_t isize = (uint64_t)t[0] | (uint64_t)t[1] << 8 | (uint64_t)t[2] << 16 | (uint64_t)t[3] << 24;
	/* A multi-member file records only its last member: then this is an
	 * underestimate, and the columns grow as without a hint.  Wrapped
	 * past 4 GiB is possible only for big files (trace JSON compresses
	 * 8-30x): a small file that compresses badly keeps its own size. */
	while (size >= (UINT64_C(64) << 20) && isize < size * 4 && isize < (UINT64_C(1) << 40))
		isize += UINT64_C(1) << 32;
	/* and no more than trace JSON can come from (a trailer is just four
	 * bytes anyone can write: a small file claiming 4 GiB must not reserve
	 * gigabytes of columns) */
	return isize < size * 64 ? isize : size * 64;
}

struct trace_source *trace_source_mem(const void *data, size_t len)
{
	struct trace_source *s = src_new();
	s->mem = data ? data : (const void *)"";
	s->mem_len = data ? len : 0;
	if (len >= 2 && s->mem[0] == 0x1f && s->mem[1] == 0x8b)
		setup_gzip(s, false);
	return s;
}

struct trace_source *trace_source_mem_prefix(char *data, size_t len, const char *prefix)
{
	struct trace_source *s = src_new();
	s->mem = data ? (const unsigned char *)data : (const unsigned char *)"";
	s->mem_len = data ? len : 0;
	s->mem_owned = data;
	set_prefix(s, prefix);
	return s;
}

void trace_source_close(struct trace_source *s)
{
	if (!s)
		return;
	if (s->threaded) {
		pthread_mutex_lock(&s->mu);
		s->stop = true;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->thread, NULL);
		for (int i = 0; i < RING; i++)
			free(s->ring[i].data);
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
	}
	free(s->is);
	free(s->in);
	free(s->mem_owned);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

ssize_t trace_source_read(void *ctx, char *dst, size_t cap, const char **err)
{
	struct trace_source *s = ctx;
	ssize_t n;
	if (s->gz && s->prefix_pos < s->prefix_len) {
		n = (ssize_t)take_prefix(s, dst, cap);
	} else if (!s->gz) {
		n = raw_read(s, dst, cap);
	} else if (!s->threaded) {
		n = gz_fill(s, dst, cap);
	} else {
		pthread_mutex_lock(&s->mu);
		while (s->head == s->tail && !s->prod_done)
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->head == s->tail) {
			pthread_mutex_unlock(&s->mu);
			n = s->failed ? -1 : 0;
		} else {
			pthread_mutex_unlock(&s->mu);
			struct block *b = &s->ring[s->head % RING];
			size_t left = b->len - s->head_pos;
			n = (ssize_t)(left < cap ? left : cap);
			memcpy(dst, b->data + s->head_pos, (size_t)n);
			s->head_pos += (size_t)n;
			if (s->head_pos == b->len) {
				s->head_pos = 0;
				pthread_mutex_lock(&s->mu);
				s->head++;
				pthread_cond_broadcast(&s->cv);
				pthread_mutex_unlock(&s->mu);
			}
		}
	}
	if (n < 0) {
		errno = EIO;
		*err = s->errmsg;
	}
	return n;
}

bool trace_source_is_gzip(const struct trace_source *s) { return s->gz; }
