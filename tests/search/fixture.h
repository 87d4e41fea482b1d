/*
 * fixture.h - sweep specs built in memory for the search tests, without
 * the loader: a spec is a plain struct, so the tests fill one directly.
 *
 * fx_param adds a leaf with W&B's defaults (mu 0, sigma 1, q 1, a 1, b 1);
 * a dotted name ("p2.n1") makes a nested leaf. Add leaves in W&B's order
 * (sorted at every level, depth first), as the loader would. fx_free
 * releases what these helpers allocated. Pointers to leaves stay valid
 * as more are added (at most FX_MAX_PARAMS).
 */
#ifndef SW_TEST_FIXTURE_H
#define SW_TEST_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "search/search.h"

#define FX_MAX_PARAMS 32

static inline sw_param *fx_param(sw_spec *s, const char *name, sw_dist d)
{
    sw_param *p;
    const char *c, *dot;

    /* fixed capacity: pointers to earlier leaves stay valid */
    if (!s->params)
        s->params = sw_calloc(FX_MAX_PARAMS, sizeof(*p));
    if (s->n_params == FX_MAX_PARAMS)
        abort();
    p = &s->params[s->n_params++];
    memset(p, 0, sizeof(*p));
    p->name = sw_strdup(name);
    for (c = name;; c = dot + 1) {
        dot = strchr(c, '.');
        p->path = sw_realloc(p->path, (p->depth + 1) * sizeof(char *));
        p->path[p->depth++] =
            dot ? sw_strndup(c, (size_t)(dot - c)) : sw_strdup(c);
        if (!dot)
            break;
    }
    p->dist = d;
    p->sigma = p->q = p->a = p->b = 1.0;
    return p;
}

/* A categorical leaf; consumes the `n` values. */
static inline sw_param *fx_values(sw_spec *s, const char *name, size_t n,
                                  sw_value **vals)
{
    sw_param *p = fx_param(s, name, SW_DIST_CATEGORICAL);

    p->values = sw_calloc(n, sizeof(*p->values));
    memcpy(p->values, vals, n * sizeof(*vals));
    p->n_values = n;
    return p;
}

/* A constant leaf; consumes `v`. */
static inline sw_param *fx_const(sw_spec *s, const char *name, sw_value *v)
{
    sw_param *p = fx_param(s, name, SW_DIST_CONSTANT);

    p->value = v;
    return p;
}

static inline sw_param *fx_int(sw_spec *s, const char *name, int64_t lo,
                               int64_t hi)
{
    sw_param *p = fx_param(s, name, SW_DIST_INT_UNIFORM);

    p->imin = lo;
    p->imax = hi;
    p->min = (double)lo;
    p->max = (double)hi;
    return p;
}

static inline sw_param *fx_range(sw_spec *s, const char *name, sw_dist d,
                                 double lo, double hi)
{
    sw_param *p = fx_param(s, name, d);

    p->min = lo;
    p->max = hi;
    return p;
}

static inline void fx_free(sw_spec *s)
{
    size_t i, j;

    for (i = 0; i < s->n_params; i++) {
        sw_param *p = &s->params[i];

        for (j = 0; j < p->depth; j++)
            free(p->path[j]);
        free(p->path);
        free(p->name);
        sw_value_free(p->value);
        for (j = 0; j < p->n_values; j++)
            sw_value_free(p->values[j]);
        free(p->values);
        free(p->probs);
    }
    free(s->params);
    memset(s, 0, sizeof(*s));
}

/* The leaf at `path` (dotted) of a trial's nested params, or NULL. */
static inline const sw_value *fx_get(const sw_value *v, const char *path)
{
    char key[64];
    const char *dot;

    while (v && (dot = strchr(path, '.'))) {
        size_t n = (size_t)(dot - path);

        if (n >= sizeof(key))
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        v = sw_value_map_get(v, key);
        path = dot + 1;
    }
    return v ? sw_value_map_get(v, path) : NULL;
}

#endif
