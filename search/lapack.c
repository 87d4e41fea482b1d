/*
 * lapack.c - LAPACKE through dlopen(), for the GP (gp.c).
 *
 * The library is Debian's liblapacke (over whichever BLAS the system's
 * alternatives give, OpenBLAS or the reference one), opened by its
 * soname the first time a GP fits, with pthread_once, for fits run on
 * the engine's worker pool. OpenBLAS is then held to one thread: the
 * search runs beside the trials, and a fit that spins a thread per core
 * competes with itself and with them (sched_yield in a loop, even in
 * sweeps that never fit a GP, when OpenBLAS was linked). This is the
 * only file that loads a library; search/ is otherwise pure.
 */
#include "search/lapack.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "sweeps/error.h"

#define LAPACKE_SONAME "liblapacke.so.3"

typedef lapack_int (*potrf_fn)(int, char, lapack_int, double *, lapack_int);
typedef lapack_int (*potrs_fn)(int, char, lapack_int, lapack_int,
                               const double *, lapack_int, double *,
                               lapack_int);
typedef lapack_int (*trtrs_fn)(int, char, char, char, lapack_int, lapack_int,
                               const double *, lapack_int, double *,
                               lapack_int);

static struct {
    potrf_fn potrf, potri;
    potrs_fn potrs;
    trtrs_fn trtrs;
    char why[256]; /* "": loaded */
} la;

static pthread_once_t once = PTHREAD_ONCE_INIT;

/* dlsym's object pointer as a function pointer (ISO C has no cast). */
static void *sym(void *h, const char *name, void *fn, size_t size)
{
    void *p = dlsym(h, name);

    memcpy(fn, &p, size);
    return p;
}

static void load(void)
{
    void *h = dlopen(LAPACKE_SONAME, RTLD_NOW | RTLD_LOCAL);
    void (*threads)(int) = NULL;

    if (!h) {
        snprintf(la.why, sizeof(la.why), "%s", dlerror());
        return;
    }
    if (!sym(h, "LAPACKE_dpotrf_work", &la.potrf, sizeof(la.potrf)) ||
        !sym(h, "LAPACKE_dpotri_work", &la.potri, sizeof(la.potri)) ||
        !sym(h, "LAPACKE_dpotrs_work", &la.potrs, sizeof(la.potrs)) ||
        !sym(h, "LAPACKE_dtrtrs_work", &la.trtrs, sizeof(la.trtrs))) {
        snprintf(la.why, sizeof(la.why), "%s", dlerror());
        return;
    }
    /* other BLAS builds have no such call, and need none */
    if (sym(h, "openblas_set_num_threads", &threads, sizeof(threads)))
        threads(1);
}

int sw_lapack__load(void)
{
    pthread_once(&once, load);
    if (la.why[0])
        return sw_error_set(SW_ENOTFOUND,
                            "bayes needs LAPACK: cannot load %s: %s "
                            "(apt-get install liblapacke)",
                            LAPACKE_SONAME, la.why);
    return SW_OK;
}

lapack_int sw_lapack__dpotrf(int layout, char uplo, lapack_int n, double *a,
                             lapack_int lda)
{
    return la.potrf(layout, uplo, n, a, lda);
}

lapack_int sw_lapack__dpotrs(int layout, char uplo, lapack_int n,
                             lapack_int nrhs, const double *a, lapack_int lda,
                             double *b, lapack_int ldb)
{
    return la.potrs(layout, uplo, n, nrhs, a, lda, b, ldb);
}

lapack_int sw_lapack__dpotri(int layout, char uplo, lapack_int n, double *a,
                             lapack_int lda)
{
    return la.potri(layout, uplo, n, a, lda);
}

lapack_int sw_lapack__dtrtrs(int layout, char uplo, char trans, char diag,
                             lapack_int n, lapack_int nrhs, const double *a,
                             lapack_int lda, double *b, lapack_int ldb)
{
    return la.trtrs(layout, uplo, trans, diag, n, nrhs, a, lda, b, ldb);
}
