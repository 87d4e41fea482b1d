/*
 * diag.h - located problems found in a sweep file.
 *
 * Validation does not stop at the first problem: it collects every error
 * and warning here, each with the file, line, column and key path, so a
 * user fixes a file in one pass. The list owns its strings.
 */
#ifndef SW_DIAG_H
#define SW_DIAG_H

#include <stdbool.h>
#include <stdio.h>

#include "sweeps/error.h"

typedef struct {
    bool warning;
    int line, col; /* 0 when unknown */
    char *path;    /* key path such as "parameters.lr.min"; may be "" */
    char *msg;
} sw_diag;

typedef struct {
    char *file; /* the name shown before each problem */
    sw_diag *items;
    size_t len, cap;
    size_t errors;
} sw_diags;

void sw_diags_init(sw_diags *d, const char *file);
void sw_diags_dispose(sw_diags *d);
/* Records a problem; `path` may be NULL. */
void sw_diags_add(sw_diags *d, bool warning, int line, int col,
                  const char *path, const char *fmt, ...) SW_PRINTF(6, 7);
/* Writes each problem as "file:line:col: path: msg" (warnings prefixed
 * "warning: "), one per line, in the order they were found. */
void sw_diags_print(const sw_diags *d, FILE *out);
/* The first error formatted as above, for sw_error_set; "" when none. */
char *sw_diags_first_error(const sw_diags *d);

#endif
