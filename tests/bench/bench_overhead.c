/*
 * bench_overhead.c - what a trial costs sweep, beside spawning it alone.
 *
 * Runs TRIALS no-op trials (/bin/true, default 1,000) through `sweep run`
 * at --parallel 1, 4 and 16, with the sweep home on a tmpfs (/dev/shm)
 * and on the disk of $TMPDIR (default /tmp), and, in the same run, spawns
 * and reaps as many /bin/true by themselves (posix_spawn + wait, the same
 * number at a time): the floor. The figure is CPU time per trial (user +
 * system), of every process involved: this one for the floor's spawning,
 * and for sweep's, `sweep` itself, its supervisor, the shims and the
 * trials. This process is a child subreaper, so the supervisor (which
 * outlives `sweep`) comes back to it and is waited for: RUSAGE_CHILDREN
 * then holds them all. Wall time is printed too. Medians of 3 rounds.
 *
 * Last, the idle cost: what sweep spends a second while 8 trials sleep
 * (a sleeping trial itself costs nothing).
 *
 *   build/release/tests/bench/bench_overhead build/release/orchestrator/sweep
 *
 * Targets (issue 22): at most 1.2x the floor on tmpfs, 1.5x on ext4.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define ROUNDS 3
#define TMPFS_MAGIC 0x01021994
#define EXT4_MAGIC 0xEF53

typedef struct {
    double cpu;  /* s of user + system time */
    double wall; /* s */
} cost;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv(struct timeval t)
{
    return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

/* CPU used so far by this process (self) and its waited-for children. */
static double cpu_of(int who)
{
    struct rusage ru;

    getrusage(who, &ru);
    return tv(ru.ru_utime) + tv(ru.ru_stime);
}

static cost floor_cost(int trials, int parallel)
{
    char *argv[] = {"/bin/true", NULL};
    double c0 = cpu_of(RUSAGE_SELF) + cpu_of(RUSAGE_CHILDREN), t0 = now();
    int running = 0, started = 0;
    pid_t pid;
    cost c;

    while (started < trials || running > 0) {
        while (running < parallel && started < trials) {
            if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) == 0)
                running++;
            started++;
        }
        if (wait(NULL) > 0)
            running--;
    }
    c.wall = now() - t0;
    c.cpu = cpu_of(RUSAGE_SELF) + cpu_of(RUSAGE_CHILDREN) - c0;
    return c;
}

/* Runs `sweep run` on a sweep file written into dir, then waits for
 * every process that comes back to this subreaper (the supervisor). */
static cost sweep_cost(const char *bin, const char *dir, const char *yaml,
                       int round)
{
    char file[512], home[512];
    double c0 = cpu_of(RUSAGE_CHILDREN), t0 = now();
    cost c = {-1, -1};
    int status = 0;
    FILE *f;
    pid_t pid;

    snprintf(file, sizeof(file), "%s/bench.yaml", dir);
    snprintf(home, sizeof(home), "%s/home-%d", dir, round);
    if (!(f = fopen(file, "w")))
        return c;
    fputs(yaml, f);
    fclose(f);
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        /* from the temporary folder, outside any git repository: this
         * measures orchestration, not provenance (bench_git does that) */
        if (chdir(dir) < 0 || setenv("SWEEP_HOME", home, 1) < 0 ||
            !freopen("/dev/null", "w", stdout) ||
            !freopen("/dev/null", "w", stderr))
            _exit(127);
        execl(bin, bin, "run", file, "--quiet", (char *)NULL);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
        return c;
    c.wall = now() - t0;
    while (wait(NULL) > 0 || errno == EINTR) /* the supervisor, at last */
        ;
    c.cpu = cpu_of(RUSAGE_CHILDREN) - c0;
    return c;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static const char *fs_name(const char *dir)
{
    struct statfs st;

    if (statfs(dir, &st) < 0)
        return "?";
    if (st.f_type == TMPFS_MAGIC)
        return "tmpfs";
    if (st.f_type == EXT4_MAGIC)
        return "ext4";
    return "other";
}

/* One line: the medians of ROUNDS floors and sweeps, per trial. */
static int row(const char *bin, const char *dir, int trials, int parallel)
{
    double fc[ROUNDS], fw[ROUNDS], sc[ROUNDS], swl[ROUNDS];
    char yaml[256];
    int r;

    snprintf(yaml, sizeof(yaml),
             "method: grid\nparallel: %d\ncommand: [/bin/true]\n"
             "parameters:\n  i:\n    min: 1\n    max: %d\n",
             parallel, trials);
    for (r = 0; r < ROUNDS; r++) {
        cost f = floor_cost(trials, parallel),
             s = sweep_cost(bin, dir, yaml, parallel * 100 + r);

        if (s.cpu < 0) {
            fprintf(stderr, "bench_overhead: sweep run failed\n");
            return -1;
        }
        fc[r] = f.cpu, fw[r] = f.wall, sc[r] = s.cpu, swl[r] = s.wall;
    }
    qsort(fc, ROUNDS, sizeof(double), cmp);
    qsort(fw, ROUNDS, sizeof(double), cmp);
    qsort(sc, ROUNDS, sizeof(double), cmp);
    qsort(swl, ROUNDS, sizeof(double), cmp);
    printf("  %-6s %8d %10.3f %10.3f %7.2fx %10.3f %10.3f\n", fs_name(dir),
           parallel, fc[1] * 1e3 / trials, sc[1] * 1e3 / trials, sc[1] / fc[1],
           fw[1] * 1e3 / trials, swl[1] * 1e3 / trials);
    fflush(stdout);
    return 0;
}

/* 8 trials asleep: what sweep spends while they sleep, the CPU of a
 * sweep whose trials sleep 6 s less that of one whose trials sleep 1 s,
 * per second of the difference in wall time. */
static int idle(const char *bin, const char *dir)
{
#define IDLE_YAML                                                              \
    "method: grid\nparallel: 8\ncommand: [/bin/sleep, '%d']\n"                 \
    "parameters:\n  i:\n    min: 1\n    max: 8\n"
    char yaml[256];
    cost s1, s6;

    snprintf(yaml, sizeof(yaml), IDLE_YAML, 1);
    s1 = sweep_cost(bin, dir, yaml, 9998);
    snprintf(yaml, sizeof(yaml), IDLE_YAML, 6);
    s6 = sweep_cost(bin, dir, yaml, 9999);
    if (s1.cpu < 0 || s6.cpu < 0 || s6.wall <= s1.wall)
        return -1;
    printf("idle: 8 trials asleep (home on %s): %.2f ms of CPU a second, "
           "%.3f%% of a core (a sleeping trial: 0)\n",
           fs_name(dir), (s6.cpu - s1.cpu) * 1e3 / (s6.wall - s1.wall),
           100.0 * (s6.cpu - s1.cpu) / (s6.wall - s1.wall));
    return 0;
}

static char *scratch(const char *base, char *tmpl, size_t n)
{
    snprintf(tmpl, n, "%s/sweep-bench-XXXXXX", base);
    return mkdtemp(tmpl);
}

int main(int argc, char **argv)
{
    static const int par[] = {1, 4, 16};
    const char *tmp = getenv("TMPDIR");
    char t1[256], t2[256], *dirs[2], rm[1024], bin[PATH_MAX];
    int trials = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 1000, rc = 0;
    size_t d, p;

    if (argc < 2 || argc > 3 || trials < 1 || !realpath(argv[1], bin)) {
        fprintf(stderr, "usage: bench_overhead PATH-TO-SWEEP [TRIALS]\n");
        return 2;
    }
    dirs[0] = scratch("/dev/shm", t1, sizeof(t1));
    dirs[1] = scratch(tmp && tmp[0] ? tmp : "/tmp", t2, sizeof(t2));
    if (!dirs[0] || !dirs[1]) {
        perror("bench_overhead: mkdtemp");
        return 1;
    }
    prctl(PR_SET_CHILD_SUBREAPER, 1); /* the supervisor comes back here */
    printf("%d no-op trials (/bin/true); CPU (user + sys, every process) "
           "and wall time per trial, ms; median of %d rounds\n",
           trials, ROUNDS);
    printf("  %-6s %8s %10s %10s %8s %10s %10s\n", "home", "parallel",
           "floor cpu", "sweep cpu", "ratio", "floor wall", "sweep wall");
    for (d = 0; d < 2 && rc == 0; d++)
        for (p = 0; p < sizeof(par) / sizeof(par[0]) && rc == 0; p++)
            rc = row(bin, dirs[d], trials, par[p]);
    if (rc == 0)
        rc = idle(bin, dirs[0]);
    printf("floor: posix_spawn + wait of the same trials, as many at a "
           "time; targets: sweep <= 1.2x on tmpfs, <= 1.5x on ext4\n");
    snprintf(rm, sizeof(rm), "rm -rf %s %s", dirs[0], dirs[1]);
    if (system(rm) != 0)
        rc = -1;
    return rc == 0 ? 0 : 1;
}
