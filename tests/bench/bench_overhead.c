/*
 * bench_overhead.c - orchestration overhead per trial.
 *
 * Runs 1,000 no-op trials (/bin/true) with parallel 2 through `sweep run`,
 * and, in the same run, spawns and reaps 1,000 /bin/true two at a time by
 * themselves. The difference, per trial, is what sweep adds: store
 * writes, supervision, bookkeeping. Prints the medians of 3 rounds.
 *
 *   build/release/tests/bench/bench_overhead build/release/orchestrator/sweep
 *
 * The sweep home goes under $TMPDIR (default /tmp): on ext4 each file a
 * trial's folder needs costs tens of microseconds, on tmpfs a few, so say
 * which one a figure was measured on.
 */
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define TRIALS 1000
#define ROUNDS 3

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double baseline(void)
{
    char *argv[] = {"/bin/true", NULL};
    double t0 = now();
    int running = 0, started = 0;
    pid_t pid;

    while (started < TRIALS || running > 0) {
        while (running < 2 && started < TRIALS) {
            if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) == 0)
                running++;
            started++;
        }
        if (wait(NULL) > 0)
            running--;
    }
    return now() - t0;
}

static double through_sweep(const char *bin, const char *dir, int round)
{
    char file[512], home[512], cmd[8192];
    FILE *f;
    double t0;

    snprintf(file, sizeof(file), "%s/bench.yaml", dir);
    snprintf(home, sizeof(home), "%s/home-%d", dir, round);
    f = fopen(file, "w");
    if (!f)
        return -1;
    fprintf(f,
            "method: grid\nparallel: 2\ncommand: [/bin/true]\n"
            "parameters:\n  i:\n    min: 1\n    max: %d\n",
            TRIALS);
    fclose(f);
    /* from the temporary folder, outside any git repository: this
     * measures orchestration, not provenance (bench_git measures that) */
    snprintf(cmd, sizeof(cmd),
             "cd %s && SWEEP_HOME=%s %s run %s --quiet >/dev/null", dir, home,
             bin, file);
    t0 = now();
    if (system(cmd) != 0)
        return -1;
    return now() - t0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *tmp = getenv("TMPDIR");
    char tmpl[256], *dir, rm[512], bin[PATH_MAX];
    double base[ROUNDS], sw[ROUNDS];
    int r;

    snprintf(tmpl, sizeof(tmpl), "%s/sweep-bench-XXXXXX",
             tmp && tmp[0] ? tmp : "/tmp");
    dir = mkdtemp(tmpl);
    if (argc != 2 || !dir || !realpath(argv[1], bin)) {
        fprintf(stderr, "usage: bench_overhead PATH-TO-SWEEP\n");
        return 2;
    }
    for (r = 0; r < ROUNDS; r++) {
        base[r] = baseline();
        sw[r] = through_sweep(bin, dir, r);
    }
    qsort(base, ROUNDS, sizeof(double), cmp);
    qsort(sw, ROUNDS, sizeof(double), cmp);
    printf("%d no-op trials, parallel 2, median of %d rounds, sweep home "
           "in %s\n",
           TRIALS, ROUNDS, tmpl);
    printf("  spawn+reap alone : %8.3f s  (%.3f ms/trial)\n", base[1],
           base[1] * 1e3 / TRIALS);
    printf("  sweep run        : %8.3f s  (%.3f ms/trial)\n", sw[1],
           sw[1] * 1e3 / TRIALS);
    printf("  overhead         : %8.3f ms/trial  (target < 1 ms; Ray Tune "
           "documents ~9 ms)\n",
           (sw[1] - base[1]) * 1e3 / TRIALS);
    snprintf(rm, sizeof(rm), "rm -rf %s", dir);
    return system(rm) == 0 ? 0 : 1;
}
