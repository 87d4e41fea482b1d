/*
 * error.h - error codes, the thread-local last-error message, and the
 * allocation helpers every layer uses.
 *
 * A fallible function returns 0 (SW_OK) or a negative SW_E* code, and sets
 * the message once, where the problem is found; callers pass the code up
 * unchanged. Allocation failure is not an error code: the helpers print a
 * line and abort, as there is nothing useful a sweep can do without memory.
 */
#ifndef SW_ERROR_H
#define SW_ERROR_H

#include <stdarg.h>
#include <stddef.h>

enum {
    SW_OK = 0,
    SW_ERROR = -1,    /* generic failure */
    SW_EINVALID = -2, /* invalid input: a sweep file, an argument */
    SW_ENOTFOUND = -3,
    SW_EIO = -4,
    SW_EDONE = -5, /* an iterator has nothing more to give */
    SW_EOVERFLOW = -6,
    SW_EUSAGE = -7,   /* bad command-line usage */
    SW_EINTR = -8,    /* stopped by a signal (Ctrl-C); resumable */
    SW_ESTORAGE = -9, /* the disk is full or failing (ENOSPC, EDQUOT, EIO,
                         EROFS): not the input's fault; resumable once fixed */
};

#if defined(__GNUC__)
#define SW_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SW_PRINTF(a, b)
#endif

/* Sets the last error message of this thread and returns `code`. */
int sw_error_set(int code, const char *fmt, ...) SW_PRINTF(2, 3);

/* The last error message of this thread; never NULL. Borrowed. */
const char *sw_error_last(void);

/* The code for a failed file operation that set errno `err`: SW_ESTORAGE
 * when the storage itself failed (full, over quota, I/O error, read-only),
 * else SW_EIO. */
int sw_error_io_code(int err);

/* Clears the last error message. */
void sw_error_clear(void);

/* Allocators that never return NULL (they abort on exhaustion). */
void *sw_malloc(size_t n);
void *sw_calloc(size_t count, size_t size);
void *sw_realloc(void *p, size_t n);
/* Grows *p to hold at least `need` items of `size` bytes; *cap tracks it. */
void sw_grow(void *pp, size_t *cap, size_t need, size_t size);
char *sw_strdup(const char *s);
char *sw_strndup(const char *s, size_t n);
/* Writes all `n` bytes to the file `fd`, retrying short writes and
 * EINTR; -1 with errno on failure. */
int sw_write_all(int fd, const void *buf, size_t n);
/* Reads exactly `n` bytes from `fd`, retrying short reads and EINTR; -1
 * on error (errno set) or at the end of the stream first. */
int sw_read_all(int fd, void *buf, size_t n);

/* A newly allocated printf-formatted string. */
char *sw_aprintf(const char *fmt, ...) SW_PRINTF(1, 2);

#endif
