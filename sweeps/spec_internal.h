/*
 * spec_internal.h - what the two halves of the sweep-file validator share.
 *
 * spec.c checks the top level of a sweep file and owns the validation
 * context: where each value was written and how a problem is reported
 * there. params.c checks `parameters`, spec_gpus.c `resources` and `gpus`,
 * spec_slurm.c `slurm`,
 * with the same context and helpers. Only those files include this; the
 * loader's side of the validator stays in spec.h. Every helper that checks a
 * value reports its own problem, once, located at the value's key.
 */
#ifndef SW_SPEC_INTERNAL_H
#define SW_SPEC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "sweeps/buf.h"
#include "sweeps/diag.h"
#include "sweeps/spec.h"
#include "sweeps/value.h"

/* One validation, from sw_spec__build: the spec being filled, where its
 * problems go, and the source's lines, indexed on demand. */
typedef struct {
    sw_spec *spec;
    sw_diags *diags;
    const sw_spec__keys *keys;
    size_t cap_params;
    size_t *lines; /* offset of each line in spec->source, made on demand */
    bool *ascii;   /* whether each line is ASCII: columns are bytes */
    size_t n_lines;
    size_t src_end;      /* where index_lines stopped: the first NUL */
    const char *at;      /* the last column found on a non-ASCII line... */
    int at_line, at_col; /* ...and where it is: the next starts there */
    bool grid; /* method: grid, known before the parameters are read */
} sw_spec__ctx;

/* Calls `fn` on each key of `map` in document order, with its path. */
typedef void (*sw_spec__key_fn)(sw_spec__ctx *c, const char *key,
                                const sw_value *v, const char *path, void *arg);
void sw_spec__each_key(sw_spec__ctx *c, const sw_value *map, const char *path,
                       sw_spec__key_fn fn, void *arg);

/* Where a problem with `v` is shown: at its key when it has one. */
void sw_spec__where(const sw_spec__ctx *c, const sw_value *v, int *line,
                    int *col);
/* An error about `at` (at its key), with `path` shown as its name. */
void sw_spec__err(sw_spec__ctx *c, const sw_value *at, const char *path,
                  const char *fmt, ...) SW_PRINTF(4, 5);
/* A warning about `at`, shown at its key. */
void sw_spec__warn(sw_spec__ctx *c, const sw_value *at, const char *path,
                   const char *fmt, ...) SW_PRINTF(4, 5);
/* A warning about the value `at` itself (not its key). */
void sw_spec__warn_value(sw_spec__ctx *c, const sw_value *at, const char *path,
                         const char *fmt, ...) SW_PRINTF(4, 5);

/* "path.key", or "key" at the top; a new string, the caller's to free. */
char *sw_spec__join(const char *path, const char *key);
/* The source text where `v` was written, or "" when unknown; borrowed
 * from spec->source. */
const char *sw_spec__source_at(sw_spec__ctx *c, const sw_value *v);
/* True when `v` was written as a plain scalar (no quotes, tag or anchor):
 * then YAML 1.1 decided its type, perhaps not as the user meant. */
bool sw_spec__written_plain(sw_spec__ctx *c, const sw_value *v);
/* Appends how messages name `v`: "a string 'x'", "an integer (3)". */
void sw_spec__describe(sw_buf *b, const sw_value *v);

/* True when `v` has type `t` (an integer passes for SW_FLOAT); else
 * reports "must be ..." and returns false. */
bool sw_spec__want(sw_spec__ctx *c, const sw_value *v, const char *path,
                   sw_type t);
/* A finite number into *out; false, reported, when `v` is not one. */
bool sw_spec__want_number(sw_spec__ctx *c, const sw_value *v, const char *path,
                          double *out);

/* The word of the space-separated `list` closest to `key`, or NULL; a new
 * string, the caller's to free. */
char *sw_spec__closest(const char *key, const char *list);
/* Reports "unknown key", with a suggestion from `list` when one is close. */
void sw_spec__unknown_key_in(sw_spec__ctx *c, const char *key,
                             const sw_value *v, const char *path,
                             const char *list);

/* Checks the top-level `parameters` mapping `v`, adding its leaves to
 * c->spec->params in document order (params.c). */
void sw_spec__top_parameters(sw_spec__ctx *c, const sw_value *v,
                             const char *path);
/* Checks the top-level `resources` and `gpus` (spec_gpus.c). */
void sw_spec__top_resources(sw_spec__ctx *c, const sw_value *v,
                            const char *path);
void sw_spec__top_gpus(sw_spec__ctx *c, const sw_value *v, const char *path);
/* Checks the top-level `slurm` section into spec->slurm_args
 * (spec_slurm.c). */
void sw_spec__top_slurm(sw_spec__ctx *c, const sw_value *v, const char *path);
/* Checks the top-level `budget` into spec->budget (spec_budget.c). */
void sw_spec__top_budget(sw_spec__ctx *c, const sw_value *v, const char *path);
/* Checks the top-level `pbt` section into spec->pbt, and what method:
 * pbt asks of the rest of the file (spec_pbt.c): check_pbt() runs once
 * every key is read. */
void sw_spec__top_pbt(sw_spec__ctx *c, const sw_value *v, const char *path);
void sw_spec__check_pbt(sw_spec__ctx *c, const sw_value *doc);
/* qsort order of sw_param, W&B's: keys sorted at every level, depth
 * first. */
int sw_spec__param_cmp(const void *a, const void *b);

#endif
