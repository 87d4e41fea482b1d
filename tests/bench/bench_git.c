/*
 * bench_git.c - the cost of git provenance, at sweep start and per run.
 *
 * Builds a repository of 10,000 committed files (100 folders of 100, about
 * 1 KiB each) with `git`, modifies 100 of them, then times with the git
 * adapter: the first capture on a fresh handle (open, status, hashing the
 * 100 files, snapshot commit, patch), a repeated capture with nothing
 * changed, and a repeated capture after one file changed. Each round
 * modifies the 100 files anew, so the first capture always writes new
 * objects. `git status` on the same tree is timed beside them as a
 * reference. Prints medians.
 *
 *   build/release/tests/bench/bench_git
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backends/git.h"
#include "sweeps/error.h"

#define DIRS 100
#define PER_DIR 100
#define MODIFIED 100
#define ROUNDS 5
#define REPEATS 21

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp);
    return v[n / 2];
}

static int write_file(const char *repo, int d, int i, const char *extra)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/d%03d/f%03d.py", repo, d, i);
    if (!(f = fopen(path, "w")))
        return -1;
    for (int line = 0; line < 16; line++)
        fprintf(f, "value_%d_%d_%d = %d  # padding padding padding pad\n", d, i,
                line, d * i + line);
    fputs(extra, f);
    return fclose(f);
}

static int make_repo(const char *repo)
{
    char path[512], cmd[1024];

    if (mkdir(repo, 0755) != 0)
        return -1;
    for (int d = 0; d < DIRS; d++) {
        snprintf(path, sizeof(path), "%s/d%03d", repo, d);
        if (mkdir(path, 0755) != 0)
            return -1;
        for (int i = 0; i < PER_DIR; i++)
            if (write_file(repo, d, i, "") != 0)
                return -1;
    }
    snprintf(cmd, sizeof(cmd),
             "cd %s && git init -q && git add -A && git -c user.name=b "
             "-c user.email=b@b commit -qm init",
             repo);
    return system(cmd) == 0 ? 0 : -1;
}

/* Modifies the first file of every folder, differently each round. */
static int modify(const char *repo, int round)
{
    char extra[64];

    snprintf(extra, sizeof(extra), "edited = %d\n", round);
    for (int d = 0; d < MODIFIED; d++)
        if (write_file(repo, d % DIRS, 0, extra) != 0)
            return -1;
    return 0;
}

static double time_capture(sw_git *g, bool *new_snapshot)
{
    sw_git_state st;
    double t0 = now();

    if (sw_git_capture(g, "refs/sweep/bench", &st) != SW_OK) {
        fprintf(stderr, "bench_git: %s\n", sw_error_last());
        exit(1);
    }
    t0 = now() - t0;
    *new_snapshot = st.snapshot_new;
    sw_git_state_dispose(&st);
    return t0;
}

/* One round: first capture, then REPEATS unchanged and REPEATS with one
 * file changed before each. */
static int round_of(const char *repo, int r, double *first, double *same,
                    double *one)
{
    double t0, v[REPEATS];
    char extra[64];
    bool fresh;
    sw_git *g;

    if (modify(repo, r) != 0)
        return -1;
    t0 = now();
    if (sw_git_open(&g, repo, NULL) != SW_OK)
        return -1;
    *first = now() - t0 + time_capture(g, &fresh);
    for (int i = 0; i < REPEATS; i++)
        v[i] = time_capture(g, &fresh);
    *same = median(v, REPEATS);
    for (int i = 0; i < REPEATS; i++) {
        snprintf(extra, sizeof(extra), "edited = %d  # %d\n", r, i);
        if (write_file(repo, DIRS - 1, PER_DIR - 1, extra) != 0)
            return -1;
        v[i] = time_capture(g, &fresh);
        if (!fresh)
            return -1;
    }
    *one = median(v, REPEATS);
    sw_git_free(g);
    return 0;
}

static double git_status(const char *repo)
{
    char cmd[600];
    double t0 = now();

    snprintf(cmd, sizeof(cmd),
             "cd %s && git --no-optional-locks status --porcelain "
             ">/dev/null",
             repo);
    if (system(cmd) != 0)
        return -1;
    return now() - t0;
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    char tmpl[256], repo[300], rm[400];
    double first[ROUNDS], same[ROUNDS], one[ROUNDS], st[ROUNDS];
    int error = 0;

    snprintf(tmpl, sizeof(tmpl), "%s/sweep-bench-git-XXXXXX",
             tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(tmpl))
        return 1;
    snprintf(repo, sizeof(repo), "%s/repo", tmpl);
    if (make_repo(repo) != 0) {
        fprintf(stderr, "bench_git: cannot build the repository\n");
        return 1;
    }
    for (int r = 0; !error && r < ROUNDS; r++) {
        error = round_of(repo, r, &first[r], &same[r], &one[r]);
        st[r] = git_status(repo);
    }
    if (!error) {
        printf("%d files, %d modified; medians of %d rounds (%d captures "
               "each for repeats)\n",
               DIRS * PER_DIR, MODIFIED, ROUNDS, REPEATS);
        printf("  first capture (sweep start) : %7.1f ms  (target < 500 "
               "ms)\n",
               median(first, ROUNDS) * 1e3);
        printf("  repeat, nothing changed     : %7.1f ms  (target < 50 "
               "ms)\n",
               median(same, ROUNDS) * 1e3);
        printf("  repeat, one file changed    : %7.1f ms  (target < 50 "
               "ms)\n",
               median(one, ROUNDS) * 1e3);
        printf("  git status (reference)      : %7.1f ms\n",
               median(st, ROUNDS) * 1e3);
    }
    snprintf(rm, sizeof(rm), "rm -rf %s", tmpl);
    if (system(rm) != 0)
        error = -1;
    return error ? 1 : 0;
}
