/*
 * testutil.h - what many tests need from the file system: a whole file
 * read into memory, a temporary tree removed. Linked into every test.
 */
#ifndef SW_TESTUTIL_H
#define SW_TESTUTIL_H

#include <stddef.h>

/* The whole file at `path`, NUL-terminated (the caller frees); NULL when
 * it can't be read. *len (may be NULL) gets its length. */
char *sw_test_slurp(const char *path, size_t *len);

/* Removes `path` and everything under it, without following links and
 * without a shell. */
void sw_test_rm_tree(const char *path);

#endif
