/*
 * sobol.c - scrambled Sobol sequences, and the sobol strategy that maps
 * them through each parameter's ppf (method: sobol, an extension).
 *
 * Point i of the strategy is fixed by the seed and i alone: the
 * scrambling is drawn once from the seed, and each searchable leaf (in
 * spec order) takes one coordinate, so a sweep of 2^m trials covers
 * every parameter's quantiles evenly and every pair of parameters far
 * better than random draws do. Leaves past SW_SOBOL_MAX_DIMS are drawn at
 * random from trial i's own stream. Observations are ignored; the
 * sequence ends after 2^32 points.
 *
 * Direction numbers: S. Joe and F. Y. Kuo, "Constructing Sobol sequences
 * with better two-dimensional projections", SIAM J. Sci. Comput. 30
 * (2008) 2635-2654; file new-joe-kuo-6.21201 from
 * https://web.maths.unsw.edu.au/~fkuo/sobol/ (the same numbers scipy's
 * qmc.Sobol uses). Each row is dimension d (the first, d = 1, is van der
 * Corput's and needs no row): the degree s of its primitive polynomial,
 * the polynomial's inner coefficients a, and the initial m_1..m_s.
 */
#include "search/sobol.h"

#include <stdlib.h>

#include "search/strategy.h"
#include "search/transform.h"

static const struct {
    unsigned char s;
    unsigned char a;
    unsigned short m[9];
} joe_kuo[SW_SOBOL_MAX_DIMS - 1] = {
    {1, 0, {1}},                                  /* 2 */
    {2, 1, {1, 3}},                               /* 3 */
    {3, 1, {1, 3, 1}},                            /* 4 */
    {3, 2, {1, 1, 1}},                            /* 5 */
    {4, 1, {1, 1, 3, 3}},                         /* 6 */
    {4, 4, {1, 3, 5, 13}},                        /* 7 */
    {5, 2, {1, 1, 5, 5, 17}},                     /* 8 */
    {5, 4, {1, 1, 5, 5, 5}},                      /* 9 */
    {5, 7, {1, 1, 7, 11, 19}},                    /* 10 */
    {5, 11, {1, 1, 5, 1, 1}},                     /* 11 */
    {5, 13, {1, 1, 1, 3, 11}},                    /* 12 */
    {5, 14, {1, 3, 5, 5, 31}},                    /* 13 */
    {6, 1, {1, 3, 3, 9, 7, 49}},                  /* 14 */
    {6, 13, {1, 1, 1, 15, 21, 21}},               /* 15 */
    {6, 16, {1, 3, 1, 13, 27, 49}},               /* 16 */
    {6, 19, {1, 1, 1, 15, 7, 5}},                 /* 17 */
    {6, 22, {1, 3, 1, 15, 13, 25}},               /* 18 */
    {6, 25, {1, 1, 5, 5, 19, 61}},                /* 19 */
    {7, 1, {1, 3, 7, 11, 23, 15, 103}},           /* 20 */
    {7, 4, {1, 3, 7, 13, 13, 15, 69}},            /* 21 */
    {7, 7, {1, 1, 3, 13, 7, 35, 63}},             /* 22 */
    {7, 8, {1, 3, 5, 9, 1, 25, 53}},              /* 23 */
    {7, 14, {1, 3, 1, 13, 9, 35, 107}},           /* 24 */
    {7, 19, {1, 3, 1, 5, 27, 61, 31}},            /* 25 */
    {7, 21, {1, 1, 5, 11, 19, 41, 61}},           /* 26 */
    {7, 28, {1, 3, 5, 3, 3, 13, 69}},             /* 27 */
    {7, 31, {1, 1, 7, 13, 1, 19, 1}},             /* 28 */
    {7, 32, {1, 3, 7, 5, 13, 19, 59}},            /* 29 */
    {7, 37, {1, 1, 3, 9, 25, 29, 41}},            /* 30 */
    {7, 41, {1, 3, 5, 13, 23, 1, 55}},            /* 31 */
    {7, 42, {1, 3, 7, 3, 13, 59, 17}},            /* 32 */
    {7, 50, {1, 3, 1, 3, 5, 53, 69}},             /* 33 */
    {7, 55, {1, 1, 5, 5, 23, 33, 13}},            /* 34 */
    {7, 56, {1, 1, 7, 7, 1, 61, 123}},            /* 35 */
    {7, 59, {1, 1, 7, 9, 13, 61, 49}},            /* 36 */
    {7, 62, {1, 3, 3, 5, 3, 55, 33}},             /* 37 */
    {8, 14, {1, 3, 1, 15, 31, 13, 49, 245}},      /* 38 */
    {8, 21, {1, 3, 5, 15, 31, 59, 63, 97}},       /* 39 */
    {8, 22, {1, 3, 1, 11, 11, 11, 77, 249}},      /* 40 */
    {8, 38, {1, 3, 1, 11, 27, 43, 71, 9}},        /* 41 */
    {8, 47, {1, 1, 7, 15, 21, 11, 81, 45}},       /* 42 */
    {8, 49, {1, 3, 7, 3, 25, 31, 65, 79}},        /* 43 */
    {8, 50, {1, 3, 1, 1, 19, 11, 3, 205}},        /* 44 */
    {8, 52, {1, 1, 5, 9, 19, 21, 29, 157}},       /* 45 */
    {8, 56, {1, 3, 7, 11, 1, 33, 89, 185}},       /* 46 */
    {8, 67, {1, 3, 3, 3, 15, 9, 79, 71}},         /* 47 */
    {8, 70, {1, 3, 7, 11, 15, 39, 119, 27}},      /* 48 */
    {8, 84, {1, 1, 3, 1, 11, 31, 97, 225}},       /* 49 */
    {8, 97, {1, 1, 1, 3, 23, 43, 57, 177}},       /* 50 */
    {8, 103, {1, 3, 7, 7, 17, 17, 37, 71}},       /* 51 */
    {8, 115, {1, 3, 1, 5, 27, 63, 123, 213}},     /* 52 */
    {8, 122, {1, 1, 3, 5, 11, 43, 53, 133}},      /* 53 */
    {9, 8, {1, 3, 5, 5, 29, 17, 47, 173, 479}},   /* 54 */
    {9, 13, {1, 3, 3, 11, 3, 1, 109, 9, 69}},     /* 55 */
    {9, 16, {1, 1, 1, 5, 17, 39, 23, 5, 343}},    /* 56 */
    {9, 22, {1, 3, 1, 5, 25, 15, 31, 103, 499}},  /* 57 */
    {9, 25, {1, 1, 1, 11, 11, 17, 63, 105, 183}}, /* 58 */
    {9, 44, {1, 1, 5, 11, 9, 29, 97, 231, 363}},  /* 59 */
    {9, 47, {1, 1, 5, 15, 19, 45, 41, 7, 383}},   /* 60 */
    {9, 52, {1, 3, 7, 7, 31, 19, 83, 137, 221}},  /* 61 */
    {9, 55, {1, 1, 1, 3, 23, 15, 111, 223, 83}},  /* 62 */
    {9, 59, {1, 1, 5, 13, 31, 15, 55, 25, 161}},  /* 63 */
    {9, 62, {1, 1, 3, 13, 25, 47, 39, 87, 257}},  /* 64 */
};

/* The plain direction numbers of dimension `j`, as 32-bit fractions. */
static void directions(uint32_t *v, size_t j)
{
    unsigned s, a, k, i;

    if (j == 0) {
        for (k = 0; k < SW_SOBOL_BITS; k++)
            v[k] = UINT32_C(1) << (SW_SOBOL_BITS - 1 - k);
        return;
    }
    s = joe_kuo[j - 1].s;
    a = joe_kuo[j - 1].a;
    for (k = 0; k < s && k < SW_SOBOL_BITS; k++)
        v[k] = (uint32_t)joe_kuo[j - 1].m[k] << (SW_SOBOL_BITS - 1 - k);
    for (k = s; k < SW_SOBOL_BITS; k++) {
        v[k] = v[k - s] ^ (v[k - s] >> s);
        for (i = 1; i < s; i++)
            if ((a >> (s - 1 - i)) & 1)
                v[k] ^= v[k - i];
    }
}

static unsigned parity(uint32_t x)
{
    x ^= x >> 16;
    x ^= x >> 8;
    x ^= x >> 4;
    x ^= x >> 2;
    x ^= x >> 1;
    return x & 1;
}

/* Multiplies every direction by a random lower-triangular binary matrix
 * with a unit diagonal: output digit r is digit r plus a random choice of
 * the more significant digits, so the nets stay nets. */
static void scramble(uint32_t *v, sw_rng *r)
{
    uint32_t rows[SW_SOBOL_BITS], out;
    unsigned k, b;

    for (b = 0; b < SW_SOBOL_BITS; b++) {
        uint32_t self = UINT32_C(1) << (SW_SOBOL_BITS - 1 - b);
        uint32_t above = ~(self | (self - 1)); /* more significant bits */

        rows[b] = self | ((uint32_t)sw_rng_next(r) & above);
    }
    for (k = 0; k < SW_SOBOL_BITS; k++) {
        out = 0;
        for (b = 0; b < SW_SOBOL_BITS; b++)
            out |= (uint32_t)parity(v[k] & rows[b]) << (SW_SOBOL_BITS - 1 - b);
        v[k] = out;
    }
}

void sw_sobol__init(sw_sobol *q, size_t dims, sw_rng *r)
{
    size_t j;

    q->dims = dims < SW_SOBOL_MAX_DIMS ? dims : SW_SOBOL_MAX_DIMS;
    for (j = 0; j < q->dims; j++) {
        directions(q->v[j], j);
        q->shift[j] = 0;
        if (r) {
            scramble(q->v[j], r);
            q->shift[j] = (uint32_t)sw_rng_next(r);
        }
    }
}

void sw_sobol__point(const sw_sobol *q, uint32_t index, double *u)
{
    uint32_t gray = index ^ (index >> 1);
    size_t j;
    unsigned k;

    for (j = 0; j < q->dims; j++) {
        uint32_t x = q->shift[j];

        for (k = 0; gray >> k; k++)
            if ((gray >> k) & 1)
                x ^= q->v[j][k];
        u[j] = (double)x * 0x1.0p-32;
    }
}

/* The strategy: one coordinate per searchable leaf. */
typedef struct {
    const sw_spec *spec;
    uint64_t seed;
    size_t n_dims; /* searchable leaves */
    sw_sobol seq;
} sobol_state;

/* The stream the scrambling is drawn from; trial streams are 0, 1, ... */
#define SCRAMBLE_STREAM UINT64_C(0x5350a1e5c4a3b1e0)

static int sobol_open(void **state, const sw_spec *spec, uint64_t seed)
{
    sobol_state *st = sw_calloc(1, sizeof(*st));
    sw_rng r;
    size_t i;

    st->spec = spec;
    st->seed = seed;
    for (i = 0; i < spec->n_params; i++)
        st->n_dims += sw_transform__searchable(&spec->params[i]);
    sw_rng_seed(&r, seed, SCRAMBLE_STREAM);
    sw_sobol__init(&st->seq, st->n_dims, &r);
    *state = st;
    return SW_OK;
}

static void sobol_close(void *state)
{
    free(state);
}

static int sobol_at(void *state, uint64_t index, sw_value **vals)
{
    const sobol_state *st = state;
    double u[SW_SOBOL_MAX_DIMS];
    size_t i, j = 0;
    sw_rng r;

    if (index >> SW_SOBOL_BITS)
        return sw_error_set(SW_EDONE, "the Sobol sequence has 2^32 points");
    sw_sobol__point(&st->seq, (uint32_t)index, u);
    sw_rng_seed(&r, st->seed, index);
    for (i = 0; i < st->spec->n_params; i++) {
        const sw_param *p = &st->spec->params[i];
        double x;

        if (!sw_transform__searchable(p)) {
            vals[i] = sw_value_clone(p->value);
            continue;
        }
        x = j < st->seq.dims ? u[j] : sw_rng_uniform(&r);
        vals[i] = sw_transform__ppf(p, x);
        j++;
    }
    return SW_OK;
}

static void sobol_size(const void *state, uint64_t *count, bool *bounded,
                       bool *saturated)
{
    (void)state;
    *count = UINT64_C(1) << SW_SOBOL_BITS;
    *bounded = true;
    *saturated = false;
}

const sw_strategy sw_sobol__strategy = {
    .version = SW_STRATEGY_VERSION,
    .name = "sobol",
    .open = sobol_open,
    .close = sobol_close,
    .at = sobol_at,
    .size = sobol_size,
};
