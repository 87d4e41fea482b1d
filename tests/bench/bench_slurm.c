/*
 * bench_slurm.c - what sweep adds to Slurm, per trial.
 *
 * Starts a single-node Slurm (tests/slurm/cluster.sh: 8 CPUs), then runs
 * 200 short trials through `sweep run --backend slurm` with parallel 8,
 * and, in the same run, 200 bare sbatch jobs 8 at a time (the next
 * submitted as soon as squeue, asked every 20 ms, no longer lists one).
 * Every job writes the time it starts. Prints, side by side:
 *
 *   - submit-to-start: from sbatch being called (bare) or the engine
 *     deciding to launch (sweep: runs.started_at) to the job's first
 *     line: Slurm's own floor, and sweep's (its sbatch, its queue);
 *   - the wall time of all 200, and per trial at parallel 8.
 *
 *   build/release/tests/bench/bench_slurm build/release/orchestrator/sweep
 *
 * Exit 77 when Slurm cannot be installed or started here.
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define TRIALS 200
#define PARALLEL 8

static char dir[] = "/tmp/sweep-bench-slurm-XXXXXX";

static double wall(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs argv; its stdout into out[size] (may be NULL). Exit status. */
static int run(char *const *argv, char *out, size_t size)
{
    posix_spawn_file_actions_t fa;
    int p[2], status = -1;
    size_t got = 0;
    ssize_t n;
    pid_t pid;

    if (pipe(p) < 0)
        return -1;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0)
        pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    while (pid > 0 && (n = read(p[0], out ? out + got : (char[256]){0},
                                out ? size - 1 - got : 256)) > 0)
        got += out ? (size_t)n : 0;
    close(p[0]);
    if (out)
        out[got] = '\0';
    if (pid > 0)
        waitpid(pid, &status, 0);
    return pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static double read_time(const char *path)
{
    FILE *f = fopen(path, "r");
    double t = 0;

    if (f) {
        if (fscanf(f, "%lf", &t) != 1)
            t = 0;
        fclose(f);
    }
    return t;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
    qsort(v, n, sizeof(*v), cmp);
    return n ? v[(size_t)(p * (double)(n - 1))] : 0;
}

/* How many of our bare jobs squeue still lists. */
static int in_queue(void)
{
    char out[65536], *p;
    char *argv[] = {"squeue", "-h", "-n", "bare", "-o", "%i", NULL};
    int n = 0;

    if (run(argv, out, sizeof(out)) != 0)
        return -1;
    for (p = out; *p; p++)
        n += *p == '\n';
    return n;
}

/* 200 bare jobs, PARALLEL at a time: submit-to-start of each into lat[]. */
static double bare(double *lat)
{
    char script[512], stamp[512], job[64];
    double submitted[TRIALS], t0 = wall();
    int next = 0, i, queued;
    FILE *f;

    snprintf(script, sizeof(script), "%s/bare.sh", dir);
    f = fopen(script, "w");
    fputs("#!/bin/sh\ndate +%s.%N > \"$1\"\n", f);
    fclose(f);
    while (next < TRIALS || in_queue() > 0) {
        queued = in_queue();
        while (queued >= 0 && queued < PARALLEL && next < TRIALS) {
            snprintf(stamp, sizeof(stamp), "%s/bare-%d", dir, next);
            char *argv[] = {"sbatch",
                            "--parsable",
                            "--job-name=bare",
                            "--output=/dev/null",
                            script,
                            stamp,
                            NULL};
            submitted[next] = wall();
            if (run(argv, job, sizeof(job)) != 0)
                return -1;
            next++;
            queued++;
        }
        usleep(20000);
    }
    t0 = wall() - t0;
    for (i = 0; i < TRIALS; i++) {
        snprintf(stamp, sizeof(stamp), "%s/bare-%d", dir, i);
        lat[i] = read_time(stamp) - submitted[i];
    }
    return t0;
}

/* The same through sweep: submit-to-start of each into lat[]. */
static double through_sweep(const char *bin, double *lat)
{
    char file[512], home[512], out[1 << 16], *line, *save;
    double t0;
    size_t n = 0;
    FILE *f;

    snprintf(file, sizeof(file), "%s/bench.yaml", dir);
    snprintf(home, sizeof(home), "%s/home", dir);
    f = fopen(file, "w");
    fprintf(f,
            "method: grid\nparallel: %d\n"
            "command: [/bin/sh, -c, 'date +%%s.%%N > "
            "$SWEEP_RUN_DIR/started']\n"
            "parameters:\n  i: {values: [",
            PARALLEL);
    for (int i = 0; i < TRIALS; i++)
        fprintf(f, "%s%d", i ? ", " : "", i);
    fputs("]}\n", f);
    fclose(f);
    setenv("SWEEP_HOME", home, 1);
    setenv("SWEEP_GIT", "off", 1);
    char *argv[] = {(char *)bin, "run",   file, "--quiet",
                    "--backend", "slurm", NULL};
    t0 = wall();
    if (run(argv, NULL, 0) != 0)
        return -1;
    t0 = wall() - t0;
    char *q[] = {(char *)bin, "query", "--csv",
                 "select id, started_at from runs", NULL};
    if (run(q, out, sizeof(out)) != 0)
        return -1;
    strtok_r(out, "\n", &save); /* the header */
    while ((line = strtok_r(NULL, "\n", &save)) != NULL && n < TRIALS) {
        char *comma = strchr(line, ','), path[1024];

        if (!comma)
            continue;
        *comma = '\0';
        snprintf(path, sizeof(path), "%s/runs/%s/started", home, line);
        lat[n++] = read_time(path) - strtod(comma + 1, NULL);
    }
    return n == TRIALS ? t0 : -1;
}

static int cluster(const char *what)
{
    char cmd[1024];
    int rc;

    snprintf(cmd, sizeof(cmd), "bash '%s' %s '%s' >/dev/null", CLUSTER_SH, what,
             dir);
    rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

int main(int argc, char **argv)
{
    double bare_lat[TRIALS], sweep_lat[TRIALS], bare_wall, sweep_wall;
    char conf[512];
    int rc;

    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/sweep\n", argv[0]);
        return 2;
    }
    if (!mkdtemp(dir) || (rc = cluster("start")) != 0) {
        fprintf(stderr, "bench_slurm: no Slurm cluster here\n");
        return 77;
    }
    snprintf(conf, sizeof(conf), "%s/slurm.conf", dir);
    setenv("SLURM_CONF", conf, 1);
    bare_wall = bare(bare_lat);
    sweep_wall = through_sweep(argv[1], sweep_lat);
    cluster("stop");
    if (bare_wall < 0 || sweep_wall < 0) {
        fprintf(stderr, "bench_slurm: a run failed (files in %s)\n", dir);
        return 1;
    }
    printf("%d trials, parallel %d, one node (8 CPUs)\n", TRIALS, PARALLEL);
    printf("%-26s %12s %12s\n", "", "bare sbatch", "sweep");
    printf("%-26s %10.0fms %10.0fms\n", "submit-to-start, median",
           pct(bare_lat, TRIALS, 0.5) * 1e3, pct(sweep_lat, TRIALS, 0.5) * 1e3);
    printf("%-26s %10.0fms %10.0fms\n", "submit-to-start, p90",
           pct(bare_lat, TRIALS, 0.9) * 1e3, pct(sweep_lat, TRIALS, 0.9) * 1e3);
    printf("%-26s %11.1fs %11.1fs\n", "all trials, wall", bare_wall,
           sweep_wall);
    printf("%-26s %10.0fms %10.0fms\n", "per trial at parallel 8",
           bare_wall / TRIALS * PARALLEL * 1e3,
           sweep_wall / TRIALS * PARALLEL * 1e3);
    char *rm[] = {"rm", "-rf", dir, NULL};
    run(rm, NULL, 0);
    return 0;
}
