/*
 * lapack.h - the four LAPACKE routines the GP uses, loaded on first use.
 *
 * LAPACK and the BLAS under it (OpenBLAS, with libgfortran) are the
 * heaviest libraries sweep uses: linked, the dynamic loader relocated
 * them at every start of every command, 11 ms of CPU, for the one search
 * method that needs them. They are opened with dlopen() when a GP first
 * fits. Thread-safe; once loaded, they stay.
 */
#ifndef SW_LAPACK_H
#define SW_LAPACK_H

#include <lapacke.h>

/* Loads LAPACKE (once; later calls return the first answer): 0, or
 * SW_ENOTFOUND with a message naming the library and why. Before the
 * first use of any routine below. */
int sw_lapack__load(void);

/* LAPACKE's _work entry points of the same names (column-major). */
lapack_int sw_lapack__dpotrf(int layout, char uplo, lapack_int n, double *a,
                             lapack_int lda);
lapack_int sw_lapack__dpotrs(int layout, char uplo, lapack_int n,
                             lapack_int nrhs, const double *a, lapack_int lda,
                             double *b, lapack_int ldb);
lapack_int sw_lapack__dpotri(int layout, char uplo, lapack_int n, double *a,
                             lapack_int lda);
lapack_int sw_lapack__dtrtrs(int layout, char uplo, char trans, char diag,
                             lapack_int n, lapack_int nrhs, const double *a,
                             lapack_int lda, double *b, lapack_int ldb);

#endif
