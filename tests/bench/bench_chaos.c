/*
 * bench_chaos.c - what crashes cost: a grid swept through the real
 * `sweep` binary while `sweep`, its supervisor, or both at once are
 * SIGKILLed at random (seeded) moments, each kill of `sweep` followed by
 * `sweep resume`, until the sweep ends. Then it counts, beside the target:
 *
 *   finished once  points whose run is finished in the store, never
 *                  duplicated;
 *   duplicated     points of which two copies ran at once (a second
 *                  copy found the run's lock taken), or one attempt ran
 *                  to its end twice;
 *   lost           points not finished in the store (failed, canceled,
 *                  or never made);
 *   stuck          runs not in a final state at the end;
 *   orphaned       processes of the sweep (trials, their shims,
 *                  supervisors) still alive at the end.
 *
 * It also counts the points that ran to their end in two attempts: a
 * trial whose end nothing could record (its shim killed too, or a sweep
 * without shims) runs again. That is a rerun, counted apart from the
 * duplicates; its target is 0 all the same.
 *
 * The trial is this program (argv[1] "--trial"): it takes a lock on a
 * file named after its run (held until it ends, by its process), appends
 * "start", sleeps 0.2-1.0 s (by its point), appends "end RUN ATTEMPT"
 * to a ledger outside the sweep home, and exits 0.
 *
 *   build/release/tests/bench/bench_chaos build/release/orchestrator/sweep \
 *       [--points 300] [--parallel 8] [--seed 1] [--kills 40]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_ATTEMPTS 64

typedef struct {
    const char *sweep;       /* the binary */
    char dir[PATH_MAX - 64]; /* the bench's folder; home, ledger, locks in it */
    char home[PATH_MAX];
    char ledger[PATH_MAX];
    int points, parallel, kills;
    uint64_t rng;
} bench;

typedef struct {
    int kills_sweep, kills_supervisor, kills_both, resumes;
    int finished_once, duplicated, lost, stuck, orphaned, reran;
} figures;

/* ---- the trial ---------------------------------------------------- */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void append(const char *path, const char *line)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

    if (fd < 0 || write(fd, line, strlen(line)) < 0)
        exit(3);
    close(fd);
}

/* argv: --trial DIR --x=N. */
static int trial(int argc, char **argv)
{
    const char *run = getenv("SWEEP_RUN_ID"), *att = getenv("SWEEP_ATTEMPT");
    char path[PATH_MAX], ledger[PATH_MAX], line[256];
    long x =
        argc > 3 ? strtol(argv[3] + strcspn(argv[3], "=") + 1, NULL, 10) : 0;
    int fd;

    if (argc < 3 || !run || !att)
        return 2;
    snprintf(ledger, sizeof(ledger), "%s/ledger", argv[2]);
    snprintf(path, sizeof(path), "%s/locks/%s", argv[2], run);
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return 3;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        snprintf(line, sizeof(line), "concurrent %s %s\n", run, att);
        append(ledger, line);
    }
    snprintf(line, sizeof(line), "start %s %s\n", run, att);
    append(ledger, line);
    sleep_ms(200 + (x * 7919) % 800);
    snprintf(line, sizeof(line), "end %s %s\n", run, att);
    append(ledger, line);
    return 0;
}

/* ---- processes ---------------------------------------------------- */

/* A splitmix64 step: the bench's own seeded generator. */
static uint64_t next(bench *b)
{
    uint64_t z = (b->rng += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Starts `sweep ARGS` with its output appended to dir/NAME. */
static pid_t start(const bench *b, char *const *args, const char *name)
{
    char *argv[8], out[PATH_MAX + 16];
    posix_spawn_file_actions_t fa;
    pid_t pid = -1;
    int n;

    argv[0] = (char *)b->sweep;
    for (n = 0; args[n] && n < 6; n++)
        argv[n + 1] = args[n];
    argv[n + 1] = NULL;
    snprintf(out, sizeof(out), "%s/%s", b->dir, name);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_APPEND,
                                     0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawn(&pid, b->sweep, &fa, NULL, argv, environ) != 0)
        pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

/* The exit status of pid, waited for. */
static int wait_for(pid_t pid)
{
    int status;

    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Reads /proc/PID/stat: state and parent; false when it is gone. */
static bool proc_stat(long pid, char *state, long *ppid)
{
    char path[64], buf[512], *p;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    p = strrchr(buf, ')');
    return p && sscanf(p + 1, " %c %ld", state, ppid) == 2;
}

/* The living supervisor of `sweep` pid (its child); 0 when none. */
static pid_t supervisor_of(pid_t parent)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t found = 0;
    long ppid;
    char st;

    while (d && !found && (e = readdir(d)))
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
            proc_stat(strtol(e->d_name, NULL, 10), &st, &ppid) &&
            ppid == parent && st != 'Z')
            found = (pid_t)strtol(e->d_name, NULL, 10);
    if (d)
        closedir(d);
    return found;
}

/* Whether process pid's environment holds `needle` (a whole entry). */
static bool environ_has(long pid, const char *needle)
{
    char path[64], buf[65536];
    bool has = false;
    ssize_t n;
    char *p;
    int fd;

    snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    for (p = buf; p < buf + n && !has; p += strlen(p) + 1)
        has = strcmp(p, needle) == 0;
    return has;
}

/* Processes of this bench's sweep still alive (zombies aside), but the
 * bench: trials, their shims, supervisors, `sweep` itself. All of them
 * carry the bench's SWEEP_HOME. */
static int orphans(const bench *b)
{
    char want[PATH_MAX + 16], st;
    DIR *d = opendir("/proc");
    struct dirent *e;
    long pid, ppid;
    int n = 0;

    snprintf(want, sizeof(want), "SWEEP_HOME=%s", b->home);
    while (d && (e = readdir(d))) {
        pid = strtol(e->d_name, NULL, 10);
        if (pid > 0 && pid != (long)getpid() && proc_stat(pid, &st, &ppid) &&
            st != 'Z' && environ_has(pid, want))
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* ---- the chaos ---------------------------------------------------- */

/* One round: waits a random while, then kills sweep, its supervisor or
 * both. 1 when the sweep ended by itself first (*rc its status). */
static int one_kill(bench *b, pid_t pid, figures *f, int *rc)
{
    long ms = 300 + (long)(next(b) % 2700), waited;
    int kind = (int)(next(b) % 3), status;
    pid_t sup;

    for (waited = 0; waited < ms; waited += 10) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            *rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
            return 1;
        }
        sleep_ms(10);
    }
    sup = supervisor_of(pid);
    if (kind != 0 && sup > 0)
        kill(sup, SIGKILL);
    if (kind == 1 && sup > 0) {
        f->kills_supervisor++;
        return 0;
    }
    kill(pid, SIGKILL);
    wait_for(pid);
    if (kind == 2 && sup > 0)
        f->kills_both++;
    else
        f->kills_sweep++;
    return 2;
}

/* Runs the sweep to its end through b->kills random kills. */
static int chaos(bench *b, figures *f)
{
    char *run[] = {"run", NULL, "--quiet", NULL};
    char *resume[] = {"resume", "--quiet", NULL};
    char file[PATH_MAX + 16];
    int kills = 0, rc = -1, r;
    pid_t pid;

    snprintf(file, sizeof(file), "%s/sweep.yaml", b->dir);
    run[1] = file;
    pid = start(b, run, "sweep.log");
    while (kills < b->kills) {
        r = one_kill(b, pid, f, &rc);
        if (r == 1 && rc == 0)
            return 0;
        kills += r != 1;
        if (r == 0)
            continue; /* the supervisor alone: sweep goes on */
        pid = start(b, resume, "sweep.log");
        f->resumes++;
    }
    rc = wait_for(pid);
    while (rc != 0 && f->resumes < 1000) { /* interrupted by our kills */
        rc = wait_for(start(b, resume, "sweep.log"));
        f->resumes++;
    }
    return rc;
}

/* ---- the counts --------------------------------------------------- */

/* `sweep query SQL --csv`'s first value. */
static long query(const bench *b, const char *sql)
{
    char *args[] = {"query", (char *)sql, "--csv", NULL};
    char path[PATH_MAX + 16], buf[256] = "";
    long v = -1;
    FILE *fp;

    snprintf(path, sizeof(path), "%s/query.txt", b->dir);
    unlink(path);
    if (wait_for(start(b, args, "query.txt")) == 0 && (fp = fopen(path, "r"))) {
        if (fgets(buf, sizeof(buf), fp) && fgets(buf, sizeof(buf), fp))
            v = strtol(buf, NULL, 10);
        fclose(fp);
    }
    return v;
}

/* Reads the ledger: per point, how often each attempt ended, and
 * whether a copy ever found its run's lock taken. */
static void read_ledger(const bench *b, figures *f, const bool *finished)
{
    int(*ends)[MAX_ATTEMPTS] = calloc((size_t)b->points + 1, sizeof(*ends));
    bool *dup = calloc((size_t)b->points + 1, 1);
    char kind[16], run[128], *dash;
    FILE *fp = fopen(b->ledger, "r");
    long idx, att;
    int i, a, completed;

    while (fp && fscanf(fp, "%15s %127s %ld", kind, run, &att) == 3) {
        dash = strrchr(run, '-');
        idx = dash ? strtol(dash + 1, NULL, 10) : 0;
        if (idx < 1 || idx > b->points || att < 1 || att >= MAX_ATTEMPTS)
            continue;
        if (strcmp(kind, "concurrent") == 0)
            dup[idx] = true;
        else if (strcmp(kind, "end") == 0 && ++ends[idx][att] > 1)
            dup[idx] = true;
    }
    for (i = 1; i <= b->points; i++) {
        for (a = 1, completed = 0; a < MAX_ATTEMPTS; a++)
            completed += ends[i][a] > 0;
        f->duplicated += dup[i];
        f->reran += completed > 1;
        f->finished_once += finished[i] && !dup[i];
    }
    if (fp)
        fclose(fp);
    free(ends);
    free(dup);
}

/* Which points are finished in the store: one `sweep query`. */
static void finished_points(const bench *b, bool *finished)
{
    char *args[] = {"query", "select id from runs where state = 'finished'",
                    "--csv", NULL};
    char path[PATH_MAX + 16], line[256], *dash;
    FILE *fp;
    long idx;

    snprintf(path, sizeof(path), "%s/ids.txt", b->dir);
    unlink(path);
    if (wait_for(start(b, args, "ids.txt")) != 0 || !(fp = fopen(path, "r")))
        return;
    while (fgets(line, sizeof(line), fp)) {
        dash = strrchr(line, '-');
        idx = dash ? strtol(dash + 1, NULL, 10) : 0;
        if (idx >= 1 && idx <= b->points)
            finished[idx] = true;
    }
    fclose(fp);
}

static void count(const bench *b, figures *f)
{
    bool *finished = calloc((size_t)b->points + 1, 1);
    int i, done = 0;

    sleep_ms(1500); /* the supervisors' last work */
    f->orphaned = orphans(b);
    f->stuck = (int)query(b, "select count(*) from runs where state in "
                             "('pending', 'running')");
    finished_points(b, finished);
    for (i = 1; i <= b->points; i++)
        done += finished[i];
    f->lost = b->points - done;
    read_ledger(b, f, finished);
    free(finished);
}

/* ---- setup -------------------------------------------------------- */

static int setup(bench *b, const char *self)
{
    char path[PATH_MAX + 16], exe[PATH_MAX];
    FILE *fp;
    int i;

    snprintf(b->dir, sizeof(b->dir), "%s/sweep-chaos-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(b->dir) || !realpath(self, exe))
        return -1;
    snprintf(b->home, sizeof(b->home), "%s/home", b->dir);
    snprintf(b->ledger, sizeof(b->ledger), "%s/ledger", b->dir);
    snprintf(path, sizeof(path), "%s/locks", b->dir);
    if (mkdir(path, 0700) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/sweep.yaml", b->dir);
    if (!(fp = fopen(path, "w")))
        return -1;
    fprintf(fp,
            "program: %s\nmethod: grid\nparallel: %d\n"
            "command: ['${program}', --trial, '%s', '${args}']\n"
            "parameters:\n  x:\n    values: [",
            exe, b->parallel, b->dir);
    for (i = 0; i < b->points; i++)
        fprintf(fp, "%s%d", i ? ", " : "", i);
    fprintf(fp, "]\n");
    fclose(fp);
    setenv("SWEEP_HOME", b->home, 1);
    setenv("SWEEP_GIT", "off", 1);
    return 0;
}

static int options(bench *b, int argc, char **argv)
{
    int i;

    b->points = 300;
    b->parallel = 8;
    b->kills = 40;
    b->rng = 1;
    for (i = 2; i + 1 < argc; i += 2) {
        long v = strtol(argv[i + 1], NULL, 10);

        if (strcmp(argv[i], "--points") == 0 && v > 0 && v < 100000)
            b->points = (int)v;
        else if (strcmp(argv[i], "--parallel") == 0 && v > 0 && v < 1000)
            b->parallel = (int)v;
        else if (strcmp(argv[i], "--kills") == 0 && v >= 0 && v < 100000)
            b->kills = (int)v;
        else if (strcmp(argv[i], "--seed") == 0)
            b->rng = (uint64_t)v;
        else
            return -1;
    }
    return i == argc ? 0 : -1;
}

int main(int argc, char **argv)
{
    bench b = {0};
    figures f = {0};
    int rc;

    if (argc > 1 && strcmp(argv[1], "--trial") == 0)
        return trial(argc, argv);
    if (argc < 2 || options(&b, argc, argv) < 0) {
        fprintf(stderr, "usage: bench_chaos SWEEP_BINARY [--points N] "
                        "[--parallel N] [--seed N] [--kills N]\n");
        return 2;
    }
    b.sweep = argv[1];
    if (setup(&b, argv[0]) < 0) {
        perror("bench_chaos: setup");
        return 1;
    }
    printf("%d points, parallel %d, %d kills (seed %llu), in %s\n", b.points,
           b.parallel, b.kills, (unsigned long long)b.rng, b.dir);
    fflush(stdout);
    rc = chaos(&b, &f);
    count(&b, &f);
    printf("kills: %d of sweep, %d of its supervisor, %d of both; %d "
           "resumes; the last sweep exited %d\n",
           f.kills_sweep, f.kills_supervisor, f.kills_both, f.resumes, rc);
    printf("%-16s %8s %8s\n", "", "measured", "target");
    printf("%-16s %8d %8d\n", "finished once", f.finished_once, b.points);
    printf("%-16s %8d %8d\n", "duplicated", f.duplicated, 0);
    printf("%-16s %8d %8d\n", "lost", f.lost, 0);
    printf("%-16s %8d %8d\n", "stuck", f.stuck, 0);
    printf("%-16s %8d %8d\n", "orphaned", f.orphaned, 0);
    printf("%-16s %8d %8d   (ran to their end in two attempts)\n", "rerun",
           f.reran, 0);
    return 0;
}
