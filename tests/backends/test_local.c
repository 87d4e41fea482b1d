/*
 * test_local.c - the local executor with real processes: exit codes and
 * signals recorded, argv passed literally (never through a shell), the
 * environment, working directory and logs a trial gets, launches
 * answered by events, cancel of the whole process group (also before the
 * start is known), descendants that leave the group (ended with their
 * trial, left alone while it runs), supervisors that die, adoption by a
 * new executor after the process that launched an attempt was killed
 * (with its handle, or without one), and the factory.
 *
 * Each test works in a fresh mkdtemp() folder; trials are /bin/sh
 * scripts, so no helper program is needed. Events are waited for as the
 * engine's loop does: poll() on fd() until next_wake(), then process(),
 * always bounded by a deadline.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backends/executor.h"
#include "sweeps/error.h"

/* clang-format off */
#define SH(script, ...) \
    (char *const[]){"/bin/sh", "-c", script, "sh", __VA_ARGS__}
#define T(test) cmocka_unit_test_setup_teardown(test, setup, teardown)
/* clang-format on */

#define WAIT_S 10.0 /* the longest any event may take */

#define MAX_ATTEMPTS 24

typedef struct {
    char root[64];
    char dirs[MAX_ATTEMPTS][PATH_MAX]; /* each attempt's folder */
    char keys[MAX_ATTEMPTS][32];       /* and key */
    const char *dir, *key;             /* the last attempt's */
    char out[PATH_MAX];
    char err[PATH_MAX];
    int attempts;
    sw_executor *ex;
    char handle[64]; /* the last SW_JOB_STARTED's, and what it says */
    long pid, pgid;
} fixture;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static double clock_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    snprintf(f->root, sizeof(f->root), "/tmp/sw-local-XXXXXX");
    if (!mkdtemp(f->root))
        return -1;
    snprintf(f->out, sizeof(f->out), "%s/stdout.log", f->root);
    snprintf(f->err, sizeof(f->err), "%s/stderr.log", f->root);
    if (sw_executor_local_new(&f->ex) < 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    sw_executor_free(f->ex);
    sw_test_rm_tree(f->root);
    free(f);
    return 0;
}

/* A fresh attempt folder and key, and a launch of argv in it (the
 * strings stay valid until the test ends). */
static sw_launch next_attempt(fixture *f, char *const *argv)
{
    char dir[PATH_MAX];
    sw_launch l;

    assert_true(f->attempts < MAX_ATTEMPTS);
    f->dir = f->dirs[f->attempts];
    f->key = f->keys[f->attempts++];
    snprintf(dir, sizeof(dir), "%s/attempt-%d", f->root, f->attempts);
    memcpy(f->dirs[f->attempts - 1], dir, sizeof(dir));
    snprintf(f->keys[f->attempts - 1], 32, "run-%d", f->attempts);
    assert_int_equal(mkdir(f->dir, 0755), 0);
    memset(&l, 0, sizeof(l));
    l.key = f->key;
    l.argv = argv;
    l.dir = f->dir;
    l.stdout_path = f->out;
    l.stderr_path = f->err;
    return l;
}

/* Waits up to `seconds` for the next event as the engine's loop does:
 * 1 and *ev filled, 0 when none came, < 0 when process() failed. Asserts
 * nothing, so a forked child may use it. */
static int poll_event(sw_executor *ex, sw_job_event *ev, double seconds)
{
    double deadline = clock_s() + seconds, now, wake;
    struct pollfd p;
    int rc;

    while (sw_executor_next_event(ex, ev) == 0) {
        now = clock_s();
        if (now >= deadline)
            return 0;
        wake = sw_executor_next_wake(ex);
        if (wake <= 0 || wake > deadline)
            wake = deadline;
        p.fd = sw_executor_fd(ex);
        p.events = POLLIN;
        p.revents = 0;
        poll(&p, p.fd >= 0 ? 1 : 0,
             wake > now ? (int)((wake - now) * 1000) + 1 : 0);
        if ((rc = sw_executor_process(ex, clock_s())) < 0)
            return rc;
    }
    return 1;
}

static const char *kind_name(sw_job_event_kind k)
{
    static const char *const names[] = {"STARTED", "START_FAILED",
                                        "NOT_STARTED", "ENDED", "LOST"};

    return names[k];
}

/* Waits for the next event, which must be `kind` about `key`; the caller
 * disposes of it. */
static sw_job_event expect(sw_executor *ex, const char *key,
                           sw_job_event_kind kind)
{
    sw_job_event ev;

    memset(&ev, 0, sizeof(ev));
    if (poll_event(ex, &ev, WAIT_S) != 1)
        fail_msg("no event for '%s' within %g s", key, WAIT_S);
    if (ev.kind != kind)
        fail_msg("'%s': %s, not %s (%s)", ev.key, kind_name(ev.kind),
                 kind_name(kind), ev.message ? ev.message : "");
    assert_string_equal(ev.key, key);
    return ev;
}

/* Reads a handle, "PID PGID STARTTIME". */
static void split_handle(const char *h, long *pid, long *pgid)
{
    char *end;

    *pid = strtol(h, &end, 10);
    assert_true(*end == ' ');
    *pgid = strtol(end + 1, &end, 10);
    assert_true(*end == ' ');
    assert_true(strtoull(end + 1, &end, 10) > 0 || *pgid == 0);
    assert_true(*end == '\0');
}

/* Waits for SW_JOB_STARTED about `key`; f->handle, pid and pgid get it. */
static void expect_started(fixture *f, const char *key)
{
    sw_job_event ev = expect(f->ex, key, SW_JOB_STARTED);

    assert_non_null(ev.handle);
    assert_null(ev.message);
    snprintf(f->handle, sizeof(f->handle), "%s", ev.handle);
    split_handle(ev.handle, &f->pid, &f->pgid);
    sw_job_event_dispose(&ev);
}

static sw_exit expect_ended(fixture *f, const char *key)
{
    sw_job_event ev = expect(f->ex, key, SW_JOB_ENDED);
    sw_exit e = ev.exit;

    sw_job_event_dispose(&ev);
    return e;
}

/* Waits for a failed start, lost attempt, ...; returns its message. */
static char *expect_message(fixture *f, const char *key, sw_job_event_kind kind)
{
    static char msg[1024];
    sw_job_event ev = expect(f->ex, key, kind);

    assert_non_null(ev.message);
    snprintf(msg, sizeof(msg), "%s", ev.message);
    sw_job_event_dispose(&ev);
    return msg;
}

static void expect_quiet(fixture *f, double seconds)
{
    sw_job_event ev;

    assert_int_equal(poll_event(f->ex, &ev, seconds), 0);
}

static sw_exit run(fixture *f, const sw_launch *l)
{
    assert_int_equal(sw_executor_launch(f->ex, l), 0);
    expect_started(f, l->key);
    return expect_ended(f, l->key);
}

static char *slurp(const char *path)
{
    static char buf[8192];
    int fd = open(path, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

    if (fd >= 0)
        close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX + 16];
    FILE *fp;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    assert_non_null(fp = fopen(path, "w"));
    fputs(text, fp);
    fclose(fp);
}

/* Waits until `path` holds a complete line; returns it. */
static char *await_line(const char *path)
{
    int i;

    for (i = 0; i < 1000; i++) {
        char *s = slurp(path);

        if (strchr(s, '\n'))
            return s;
        sleep_ms(10);
    }
    fail_msg("%s never got a line", path);
    return NULL;
}

/* Gone, or a zombie nobody reaps (the container's init may not). */
static bool proc_gone(long pid)
{
    char path[64], *s;
    int i;

    for (i = 0; i < 200; i++) {
        if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
            return true;
        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        s = strrchr(slurp(path), ')');
        if (s && (s[2] == 'Z' || s[2] == 'X'))
            return true;
        sleep_ms(10);
    }
    return false;
}

static void test_exit_codes(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("exit 3", NULL));
    sw_exit e = run(f, &l);
    char path[PATH_MAX + 8];

    assert_true(e.exited);
    assert_int_equal(e.exit_code, 3);
    snprintf(path, sizeof(path), "%s/exit", f->dir);
    assert_string_equal(slurp(path), "exit 3\n");
    l = next_attempt(f, (char *const[]){"true", NULL});
    e = run(f, &l);
    assert_true(e.exited);
    assert_int_equal(e.exit_code, 0);
}

static void test_killed_by_signal(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("kill -USR1 $$", NULL));
    sw_exit e = run(f, &l);

    assert_false(e.exited);
    assert_int_equal(e.signal, SIGUSR1);
}

static void test_argv_is_literal(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("printf '%s\\n' \"$@\"", "x; rm -rf ~",
                                     "$(reboot)", "", "a b", "`id`", NULL));

    assert_int_equal(run(f, &l).exit_code, 0);
    assert_string_equal(slurp(f->out), "x; rm -rf ~\n$(reboot)\n\na b\n`id`\n");
}

static void test_env_additions(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(
        f, SH("printf '%s|%s|%s\\n' \"$SW_TEST_A\" \"$HOME\" \"$SW_TEST_B\"",
              NULL));
    char *env[] = {"SW_TEST_A=1", "HOME=/nowhere", "SW_TEST_B=x=y",
                   "SW_TEST_A=2", NULL};

    l.env = env;
    assert_int_equal(run(f, &l).exit_code, 0);
    assert_string_equal(slurp(f->out), "2|/nowhere|x=y\n");
    assert_null(getenv("SW_TEST_A")); /* the orchestrator's is untouched */

    env[1] = "NOEQUALS";
    l = next_attempt(f, SH("true", NULL));
    l.env = env;
    assert_int_equal(sw_executor_launch(f->ex, &l), SW_EINVALID);
    assert_non_null(strstr(sw_error_last(), "NOEQUALS"));
    expect_quiet(f, 0.05); /* refused: no event follows */
}

static void test_cwd(void **state)
{
    fixture *f = *state;
    char work[PATH_MAX], real[PATH_MAX], want[PATH_MAX + 1];
    sw_launch l = next_attempt(f, SH("pwd -P", NULL));

    snprintf(work, sizeof(work), "%s/work", f->root);
    assert_int_equal(mkdir(work, 0755), 0);
    assert_non_null(realpath(work, real));
    snprintf(want, sizeof(want), "%s\n", real);
    l.cwd = work;
    assert_int_equal(run(f, &l).exit_code, 0);
    assert_string_equal(slurp(f->out), want);

    l = next_attempt(f, SH("true", NULL));
    l.cwd = "/nonexistent/sweep-cwd";
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    assert_non_null(strstr(expect_message(f, l.key, SW_JOB_START_FAILED),
                           "/nonexistent/sweep-cwd"));
}

static void test_logs_appended_across_attempts(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("echo one; echo e1 >&2", NULL));

    run(f, &l);
    l = next_attempt(f, SH("echo two; echo e2 >&2", NULL));
    run(f, &l);
    assert_string_equal(slurp(f->out), "one\ntwo\n");
    assert_string_equal(slurp(f->err), "e1\ne2\n");
}

static void test_missing_program(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(
        f, (char *const[]){"sweep-no-such-program", "--lr", "0.1", NULL});

    /* a launch that failed, with why: nothing ran */
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    assert_string_equal(expect_message(f, l.key, SW_JOB_START_FAILED),
                        "cannot run 'sweep-no-such-program': No such file or "
                        "directory");
    assert_string_equal(slurp(f->err),
                        "sweep: cannot run 'sweep-no-such-program': "
                        "No such file or directory\n");
}

static void test_launch_errors(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("true", NULL));

    run(f, &l); /* the folder now holds an attempt */
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    assert_non_null(
        strstr(expect_message(f, l.key, SW_JOB_START_FAILED), f->dir));

    l.dir = "/nonexistent/sweep-dir";
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    assert_non_null(strstr(expect_message(f, l.key, SW_JOB_START_FAILED),
                           "/nonexistent/sweep-dir"));

    l = next_attempt(f, SH("true", NULL));
    l.stdout_path = "/nonexistent/out.log";
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    assert_non_null(strstr(expect_message(f, l.key, SW_JOB_START_FAILED),
                           "/nonexistent/out.log"));

    l.stdout_path = f->out;
    l.argv = (char *const[]){NULL};
    assert_int_equal(sw_executor_launch(f->ex, &l), SW_EINVALID);
    l.argv = SH("true", NULL);
    l.key = NULL;
    assert_int_equal(sw_executor_launch(f->ex, &l), SW_EINVALID);
    l.key = f->key;
    l.dir = NULL;
    assert_int_equal(sw_executor_launch(f->ex, &l), SW_EINVALID);
    expect_quiet(f, 0.05);
}

static void test_pid_file(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("true", NULL));
    char path[PATH_MAX + 8], want[80];

    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    expect_started(f, l.key);
    assert_true(f->pid > 0 && f->pgid > 0 && f->pid != f->pgid);
    snprintf(path, sizeof(path), "%s/pid", f->dir);
    snprintf(want, sizeof(want), "%s\n", f->handle);
    /* the handle, then the boot id */
    assert_memory_equal(slurp(path), want, strlen(want));
    assert_int_equal(strlen(slurp(path)), strlen(want) + 37);
    expect_ended(f, l.key);
    /* ended: the key is forgotten */
    assert_int_equal(sw_executor_cancel(f->ex, l.key, true), SW_ENOTFOUND);
}

static void test_fd_wakes(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("sleep 0.2", NULL));
    struct pollfd p = {sw_executor_fd(f->ex), POLLIN, 0};
    int rc;

    assert_true(p.fd >= 0);
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    expect_started(f, l.key);
    /* our supervisor watches it: nothing to poll, fd() tells the end */
    assert_true(sw_executor_next_wake(f->ex) == 0);
    assert_int_equal(sw_executor_fd(f->ex), p.fd);
    do
        rc = poll(&p, 1, 10000);
    while (rc < 0 && errno == EINTR);
    assert_int_equal(rc, 1);
    assert_int_equal(expect_ended(f, l.key).exit_code, 0);
    assert_true(sw_executor_next_wake(f->ex) == 0);
}

static void test_same_key_refused(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, (char *const[]){"sleep", "30", NULL});
    sw_launch again = next_attempt(f, SH("true", NULL));

    again.key = l.key;
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    assert_int_equal(sw_executor_launch(f->ex, &again), SW_EINVALID);
    assert_non_null(strstr(sw_error_last(), l.key));
    assert_int_equal(sw_executor_adopt(f->ex, l.key, again.dir, NULL),
                     SW_EINVALID);
    expect_started(f, l.key);
    assert_int_equal(sw_executor_launch(f->ex, &again), SW_EINVALID);
    assert_int_equal(sw_executor_cancel(f->ex, l.key, true), 0);
    assert_int_equal(expect_ended(f, l.key).signal, SIGKILL);
    /* forgotten after its end: the key may name a new attempt */
    assert_int_equal(run(f, &again).exit_code, 0);
}

static void test_cancel_term(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, (char *const[]){"sleep", "30", NULL});
    sw_exit e;

    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    expect_started(f, l.key);
    assert_int_equal(sw_executor_cancel(f->ex, l.key, false), 0);
    e = expect_ended(f, l.key);
    assert_false(e.exited);
    assert_int_equal(e.signal, SIGTERM);
    assert_int_equal(sw_executor_cancel(f->ex, "no-such-run", false),
                     SW_ENOTFOUND);
}

static void test_cancel_before_started(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, (char *const[]){"sleep", "30", NULL});
    sw_exit e;

    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    assert_int_equal(sw_executor_cancel(f->ex, l.key, false), 0);
    expect_started(f, l.key); /* the cancel is applied now */
    e = expect_ended(f, l.key);
    assert_false(e.exited);
    assert_int_equal(e.signal, SIGTERM);
}

static void test_cancel_force(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(
        f, SH("trap '' TERM; echo ready; while :; do sleep 1; done", NULL));
    sw_exit e;

    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    expect_started(f, l.key);
    await_line(f->out);
    assert_int_equal(sw_executor_cancel(f->ex, l.key, false), 0);
    expect_quiet(f, 0.2); /* TERM is ignored */
    assert_int_equal(sw_executor_cancel(f->ex, l.key, true), 0);
    e = expect_ended(f, l.key);
    assert_false(e.exited);
    assert_int_equal(e.signal, SIGKILL);
}

static void test_cancel_kills_the_group(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("sleep 30 & echo $!; wait", NULL));
    long grandchild;

    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    expect_started(f, l.key);
    grandchild = strtol(await_line(f->out), NULL, 10);
    assert_true(grandchild > 0);
    assert_int_equal(sw_executor_cancel(f->ex, l.key, false), 0);
    assert_int_equal(expect_ended(f, l.key).signal, SIGTERM);
    assert_true(proc_gone(grandchild));
}

static void test_end_kills_leftovers(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("sleep 30 & echo $!", NULL));
    sw_exit e = run(f, &l);

    assert_true(e.exited);
    assert_int_equal(e.exit_code, 0);
    assert_true(proc_gone(strtol(slurp(f->out), NULL, 10)));
}

/* The parent of `pid` as /proc says it; 0 when it cannot be read. */
static long ppid_of(long pid)
{
    char path[64], *s;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    s = strrchr(slurp(path), ')');
    return s && s[1] == ' ' && s[2] ? strtol(s + 4, NULL, 10) : 0;
}

/* Alive and not a zombie. */
static bool proc_running(long pid)
{
    char path[64], *s;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    s = strrchr(slurp(path), ')');
    return kill((pid_t)pid, 0) == 0 && s && s[2] != 'Z' && s[2] != 'X';
}

static void test_end_kills_other_sessions(void **state)
{
    fixture *f = *state;
    char child[PATH_MAX + 8];
    sw_launch l;
    long grandchild;

    snprintf(child, sizeof(child), "%s/child", f->root);
    l = next_attempt(f, SH("setsid sh -c 'sleep 30; :' & echo $! > \"$1\";"
                           " sleep 0.2",
                           child, NULL));
    assert_int_equal(run(f, &l).exit_code, 0);
    grandchild = strtol(slurp(child), NULL, 10);
    assert_true(grandchild > 0);
    assert_true(proc_gone(grandchild));
}

/* CPU time, in clock ticks, process pid and its reaped children used. */
static long cpu_ticks(long pid)
{
    char path[64];
    const char *s;
    long ut = 0, st = 0, cut = 0, cst = 0;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    s = strrchr(slurp(path), ')');
    assert_non_null(s);
    /* after the name: state(3) ... utime(14) stime cutime cstime(17) */
    assert_int_equal(sscanf(s + 1,
                            " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u"
                            " %ld %ld %ld %ld",
                            &ut, &st, &cut, &cst),
                     4);
    return ut + st + cut + cst;
}

/* What `n` /bin/true trials, one after another, cost the supervisor and
 * their shims (the supervisor's CPU with its reaped children's). */
static long trials_cost(fixture *f, int n)
{
    long before = -1;
    sw_launch l;
    int i;

    for (i = 0; i <= n; i++) {
        l = next_attempt(f, (char *const[]){"/bin/true", NULL});
        assert_int_equal(run(f, &l).exit_code, 0);
        if (i == 0) /* the supervisor is known from the first handle */
            before = cpu_ticks(f->pid);
    }
    return cpu_ticks(f->pid) - before;
}

/* A trial's end costs the same however many processes the machine
 * runs: nothing looks through all of /proc (the shim walks its own
 * descendants, the supervisor reads its children). 8 trials with 3,000
 * more processes alive cost what 8 trials cost without them, give or
 * take 0.1 s of CPU (two scans of 3,000 stat files a trial would be
 * about 0.5 s). */
static void test_end_cost_does_not_grow_with_processes(void **state)
{
    fixture *f = *state;
    long quiet, busy, tick = sysconf(_SC_CLK_TCK);
    int hold[2], i, n = 0;
    pid_t pid;
    char c;

    quiet = trials_cost(f, 8);
    assert_int_equal(pipe(hold), 0);
    for (i = 0; i < 3000; i++) {
        if ((pid = fork()) == 0) {
            close(hold[1]);
            if (read(hold[0], &c, 1) < 0)
                _exit(1);
            _exit(0);
        }
        if (pid < 0)
            break;
        n++;
    }
    close(hold[0]);
    busy = trials_cost(f, 8);
    close(hold[1]); /* they all go */
    while (n > 0 && wait(NULL) > 0)
        n--;
    if (busy - quiet >= tick / 10)
        fail_msg("8 trials: %ld ticks of CPU with 3,000 more processes, "
                 "%ld without",
                 busy, quiet);
}

static void test_end_kills_untagged_orphans(void **state)
{
    fixture *f = *state;
    char child[PATH_MAX + 8];
    sw_launch l;
    long grandchild;

    snprintf(child, sizeof(child), "%s/child", f->root);
    l = next_attempt(f, SH("setsid env -i /bin/sh -c 'sleep 30; :' &"
                           " echo $! > \"$1\"; sleep 0.2",
                           child, NULL));
    assert_int_equal(run(f, &l).exit_code, 0);
    grandchild = strtol(slurp(child), NULL, 10);
    assert_true(grandchild > 0);
    assert_true(proc_gone(grandchild));
}

static void test_running_trials_orphans_live(void **state)
{
    fixture *f = *state;
    char child[PATH_MAX + 8];
    sw_launch l, other;
    long worker, supervisor;
    int i;

    snprintf(child, sizeof(child), "%s/child", f->root);
    /* the subshell that starts the worker exits: the worker is orphaned
     * while its trial runs */
    l = next_attempt(f, SH("(setsid sh -c 'sleep 30; :' & echo $! > \"$1\");"
                           " sleep 30",
                           child, NULL));
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    expect_started(f, l.key);
    supervisor = f->pid;
    worker = strtol(await_line(child), NULL, 10);
    assert_true(worker > 0);
    (void)supervisor;
    for (i = 0; i < 500 && ppid_of(worker) != f->pgid; i++)
        sleep_ms(10);
    /* reparented to the trial's shim, which leads its group */
    assert_int_equal(ppid_of(worker), f->pgid);
    /* another trial ends: the running trial's worker is left alone */
    other = next_attempt(f, SH("exit 2", NULL));
    assert_int_equal(run(f, &other).exit_code, 2);
    sleep_ms(100);
    assert_true(proc_running(worker));
    /* its trial ends: the worker goes with it */
    assert_int_equal(sw_executor_cancel(f->ex, l.key, true), 0);
    assert_int_equal(expect_ended(f, l.key).signal, SIGKILL);
    assert_true(proc_gone(worker));
}

/* How many living processes (zombies aside) are in group pgid. */
static int group_members(long pgid)
{
    char path[300], *s;
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        s = strrchr(slurp(path), ')');
        if (s && s[2] != 'Z' && s[2] != 'X' &&
            strtol(s + 4 + strcspn(s + 4, " "), NULL, 10) == pgid)
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* The supervisor dies (OOM killer, a stray kill): its trials go on, each
 * watched by its shim, which records its end. Nothing is lost or rerun. */
static void test_supervisor_killed_loses_nothing(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("sleep 0.5; echo done; exit 4", NULL));
    sw_exit e;

    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    expect_started(f, l.key);
    assert_int_equal(kill((pid_t)f->pid, SIGKILL), 0);
    e = expect_ended(f, l.key);
    assert_true(e.exited);
    assert_int_equal(e.exit_code, 4);
    assert_string_equal(slurp(f->out), "done\n");
    /* the next launch starts another supervisor */
    l = next_attempt(f, SH("exit 5", NULL));
    assert_int_equal(run(f, &l).exit_code, 5);
}

/* The supervisor and the trial's shim both die: nothing watches the
 * trial, nor can tell how it ends. It is lost, and ended, all of it,
 * before its loss is told: its run goes again at once, and must never
 * meet it. */
static void test_supervisor_and_shim_killed_is_lost(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(
        f, SH("for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do "
              "sleep 30 & done; echo up; wait",
              NULL));

    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    expect_started(f, l.key);
    await_line(f->out);
    assert_int_equal(group_members(f->pgid), 18); /* shim, sh, 16 sleeps */
    assert_int_equal(kill((pid_t)f->pid, SIGKILL), 0);
    assert_int_equal(kill((pid_t)f->pgid, SIGKILL), 0); /* the shim */
    assert_non_null(strstr(expect_message(f, l.key, SW_JOB_LOST), f->dir));
    assert_int_equal(group_members(f->pgid), 0);
    l = next_attempt(f, SH("exit 5", NULL));
    assert_int_equal(run(f, &l).exit_code, 5);
}

/* The same with the trial's output going through its shim (a log
 * limit): the shim's death closes the pipes, and a trial that writes
 * then dies of SIGPIPE. That is still the shim's death, not the
 * trial's failure: lost. */
static void test_shim_killed_with_pipes_is_lost(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(
        f, SH("echo up; while :; do echo more; sleep 0.01; done", NULL));

    l.log_limit = 1 << 20;
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    expect_started(f, l.key);
    await_line(f->out);
    assert_int_equal(kill((pid_t)f->pgid, SIGKILL), 0); /* the shim */
    assert_non_null(strstr(expect_message(f, l.key, SW_JOB_LOST), f->dir));
    assert_int_equal(group_members(f->pgid), 0);
}

/* The trial's shim alone is killed (a stray kill, the OOM killer) while
 * its supervisor lives: how the trial ends is never recorded, so the
 * attempt is lost (its run goes again), never failed with the shim's
 * signal 9 as if it were the trial's; the trial goes with it. A SIGKILL
 * of the whole group is the trial's own end: signal 9. */
static void test_shim_killed_is_lost(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("echo up; sleep 30", NULL));
    int i;

    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    expect_started(f, l.key);
    await_line(f->out);
    assert_int_equal(kill((pid_t)f->pgid, SIGKILL), 0); /* the shim */
    assert_non_null(strstr(expect_message(f, l.key, SW_JOB_LOST), f->dir));
    assert_int_equal(group_members(f->pgid), 0);
    l = next_attempt(f, SH("echo again; sleep 30", NULL));
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    expect_started(f, l.key);
    for (i = 0; i < 1000 && !strstr(slurp(f->out), "again"); i++)
        sleep_ms(10);
    assert_int_equal(kill(-(pid_t)f->pgid, SIGKILL), 0);
    assert_int_equal(expect_ended(f, l.key).signal, SIGKILL);
}

static void test_supervisor_dies_before_replying(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("true", NULL)), with_pid, without;
    long supervisor;

    run(f, &l);
    supervisor = f->pid;
    assert_int_equal(kill((pid_t)supervisor, SIGSTOP), 0);
    with_pid = next_attempt(f, SH("true", NULL));
    assert_int_equal(sw_executor_launch(f->ex, &with_pid), 0);
    without = next_attempt(f, SH("true", NULL));
    assert_int_equal(sw_executor_launch(f->ex, &without), 0);
    /* as if the first had started just before the supervisor died */
    put(with_pid.dir, "pid", "999999 0\n");
    assert_int_equal(kill((pid_t)supervisor, SIGKILL), 0);

    expect_started(f, with_pid.key);
    assert_string_equal(f->handle, "999999 0 0"); /* an older pid file */
    assert_non_null(
        strstr(expect_message(f, with_pid.key, SW_JOB_LOST), with_pid.dir));
    /* it never ran: not a failed start but one to make again */
    assert_non_null(strstr(expect_message(f, without.key, SW_JOB_NOT_STARTED),
                           "died before starting"));
    l = next_attempt(f, SH("exit 4", NULL));
    assert_int_equal(run(f, &l).exit_code, 4);
}

/* Launches argv from a child process that is then SIGKILLed, like a
 * crashed orchestrator, after the launch was answered; f->handle gets
 * the handle it was given. */
static void launch_and_crash(fixture *f, char *const *argv)
{
    sw_launch l = next_attempt(f, argv);
    int fds[2], status;
    pid_t pid;

    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sw_executor *ex;
        sw_job_event ev;

        close(fds[0]);
        if (sw_executor_local_new(&ex) < 0 || sw_executor_launch(ex, &l) < 0 ||
            poll_event(ex, &ev, 10) != 1 || ev.kind != SW_JOB_STARTED)
            _exit(1);
        if (write(fds[1], ev.handle, strlen(ev.handle) + 1) < 0)
            _exit(1);
        for (;;)
            pause();
    }
    close(fds[1]);
    memset(f->handle, 0, sizeof(f->handle));
    assert_true(read(fds[0], f->handle, sizeof(f->handle) - 1) > 0);
    close(fds[0]);
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    split_handle(f->handle, &f->pid, &f->pgid);
}

static void test_adopt_after_crash(void **state)
{
    fixture *f = *state;
    sw_exit e;

    launch_and_crash(f, SH("sleep 0.3; echo done; exit 7", NULL));
    assert_int_equal(sw_executor_adopt(f->ex, f->key, f->dir, f->handle), 0);
    assert_true(sw_executor_next_wake(f->ex) > 0); /* polled */
    e = expect_ended(f, f->key); /* no SW_JOB_STARTED before */
    assert_true(e.exited);
    assert_int_equal(e.exit_code, 7);
    assert_string_equal(slurp(f->out), "done\n");
}

static void test_adopt_without_handle(void **state)
{
    fixture *f = *state;
    char handle[64];

    launch_and_crash(f, SH("sleep 0.3; exit 6", NULL));
    snprintf(handle, sizeof(handle), "%s", f->handle);
    assert_int_equal(sw_executor_adopt(f->ex, f->key, f->dir, NULL), 0);
    expect_started(f, f->key);
    assert_string_equal(f->handle, handle); /* read from the pid file */
    assert_int_equal(expect_ended(f, f->key).exit_code, 6);
}

static void test_adopt_not_started(void **state)
{
    fixture *f = *state;
    double t = 100, wake;
    sw_job_event ev;

    /* no folder: answered at once */
    assert_int_equal(
        sw_executor_adopt(f->ex, "gone", "/nonexistent/sweep-dir", NULL), 0);
    assert_int_equal(sw_executor_next_event(f->ex, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_NOT_STARTED);
    assert_string_equal(ev.key, "gone");
    sw_job_event_dispose(&ev);

    /* a folder where nothing was launched: SEEK_GRACE of process() time,
     * driven by a fake clock (nothing waits in real time) */
    next_attempt(f, SH("true", NULL));
    assert_int_equal(sw_executor_adopt(f->ex, f->key, f->dir, NULL), 0);
    assert_int_equal(sw_executor_process(f->ex, t), 0);
    while (sw_executor_next_event(f->ex, &ev) == 0) {
        wake = sw_executor_next_wake(f->ex);
        assert_true(wake > t && wake <= t + 0.05 + 1e-9);
        assert_true(wake < 103);
        t = wake;
        assert_int_equal(sw_executor_process(f->ex, t), 0);
    }
    assert_int_equal(ev.kind, SW_JOB_NOT_STARTED);
    assert_string_equal(ev.key, f->key);
    assert_true(t >= 102 - 1e-9 && t < 102.1);
    sw_job_event_dispose(&ev);
    assert_true(sw_executor_next_wake(f->ex) == 0);
}

static void test_adopt_cancel(void **state)
{
    fixture *f = *state;

    launch_and_crash(f, (char *const[]){"sleep", "30", NULL});
    assert_int_equal(sw_executor_adopt(f->ex, f->key, f->dir, f->handle), 0);
    assert_int_equal(sw_executor_cancel(f->ex, f->key, false), 0);
    assert_int_equal(expect_ended(f, f->key).signal, SIGTERM);
}

static void test_adopted_supervisor_killed_is_lost(void **state)
{
    fixture *f = *state;

    launch_and_crash(f, (char *const[]){"sleep", "30", NULL});
    assert_int_equal(sw_executor_adopt(f->ex, f->key, f->dir, f->handle), 0);
    expect_quiet(f, 0.3); /* still watched by its supervisor */
    assert_int_equal(kill((pid_t)f->pid, SIGKILL), 0);
    expect_quiet(f, 0.6); /* and by its shim */
    assert_int_equal(kill((pid_t)f->pgid, SIGKILL), 0);
    assert_non_null(strstr(expect_message(f, f->key, SW_JOB_LOST), f->dir));
    assert_true(proc_gone(f->pgid));
}

/* A new executor whose supervisor (and the ones after it) reads the
 * fault variable `name`, set to `flag`. */
static void with_fault(fixture *f, const char *name, const char *flag)
{
#ifndef SW_FAULT_INJECTION
    skip(); /* a Release build has no fault points */
#endif
    sw_executor_free(f->ex);
    assert_int_equal(setenv(name, flag, 1), 0);
    assert_int_equal(sw_executor_local_new(&f->ex), 0);
    assert_int_equal(unsetenv(name), 0);
}

/* The one child of process `parent`; 0 when it has none. */
static long child_of(long parent)
{
    char path[64], *s;
    long pid, found = 0;

    for (pid = 2; pid < 4194304 && !found; pid++) {
        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        if (access(path, F_OK) != 0)
            continue;
        s = strrchr(slurp(path), ')');
        if (s && strtol(s + 4, NULL, 10) == parent)
            found = pid;
    }
    return found;
}

/* Waits until process pid is stopped. */
static void await_stopped(long pid)
{
    char path[64], *s;
    int i;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    for (i = 0; i < 1000; i++) {
        s = strrchr(slurp(path), ')');
        if (s && s[2] == 'T')
            return;
        sleep_ms(5);
    }
    fail_msg("process %ld never stopped", pid);
}

/* The supervisor is killed at the worst moment of a launch: its trial
 * exists, its pid file does not. The attempt is known not to have run
 * (NOT_STARTED: no retry spent), nothing of it ever runs or stays, and
 * the next launch of it runs exactly once. */
static void test_killed_mid_launch_runs_once(void **state)
{
    fixture *f = *state;
    char flag[PATH_MAX], ledger[PATH_MAX];
    char *const *argv;
    sw_launch l;
    long supervisor, trial;

    snprintf(flag, sizeof(flag), "%s/stop-flag", f->root);
    snprintf(ledger, sizeof(ledger), "%s/ledger", f->root);
    with_fault(f, "SWEEP_FAULT_LAUNCH_STOP", flag);
    l = next_attempt(f, SH("true", NULL));
    run(f, &l);
    supervisor = f->pid;
    put(f->root, "stop-flag", "");
    argv = SH("echo ran >> \"$1\"", ledger, NULL);
    l = next_attempt(f, argv);
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    await_stopped(supervisor); /* between the fork and the pid file */
    trial = child_of(supervisor);
    assert_true(trial > 0);
    assert_int_equal(kill((pid_t)supervisor, SIGKILL), 0);
    assert_non_null(
        strstr(expect_message(f, l.key, SW_JOB_NOT_STARTED), "never ran"));
    assert_true(proc_gone(trial));
    sleep_ms(100);
    assert_int_equal(access(ledger, F_OK), -1); /* it never ran */
    /* made again, in the same folder: it runs, once */
    assert_int_equal(run(f, &l).exit_code, 0);
    assert_string_equal(slurp(ledger), "ran\n");
}

/* A folder locked by a supervisor that is starting an attempt there is
 * waited for, past SEEK_GRACE: its pid file comes next. */
static void test_adopt_waits_for_a_launch_in_progress(void **state)
{
    fixture *f = *state;
    sw_job_event ev;
    double t = 100;
    int fd;

    next_attempt(f, SH("true", NULL));
    fd = open(f->dir, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);
    assert_int_equal(sw_executor_adopt(f->ex, f->key, f->dir, NULL), 0);
    for (; t < 105; t += 0.5) {
        assert_int_equal(sw_executor_process(f->ex, t), 0);
        assert_int_equal(sw_executor_next_event(f->ex, &ev), 0);
    }
    close(fd); /* the launch gave up: nothing will start it now */
    assert_int_equal(sw_executor_process(f->ex, t), 0);
    assert_int_equal(sw_executor_next_event(f->ex, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_NOT_STARTED);
    sw_job_event_dispose(&ev);
}

/* A full disk at launch: no trial runs, and the failure says it is the
 * disk's (SW_ESTORAGE), so the engine stops instead of failing runs. */
static void test_full_disk_at_launch(void **state)
{
    fixture *f = *state;
    char flag[PATH_MAX], ledger[PATH_MAX];
    sw_job_event ev;
    sw_launch l;

    snprintf(flag, sizeof(flag), "%s/full", f->root);
    snprintf(ledger, sizeof(ledger), "%s/ledger", f->root);
    with_fault(f, "SWEEP_FAULT_NOSPACE", flag);
    put(f->root, "full", "");
    l = next_attempt(f, SH("echo ran >> \"$1\"", ledger, NULL));
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    ev = expect(f->ex, l.key, SW_JOB_START_FAILED);
    assert_int_equal(ev.code, SW_ESTORAGE);
    assert_non_null(strstr(ev.message, "No space left on device"));
    sw_job_event_dispose(&ev);
    sleep_ms(100);
    assert_int_equal(access(ledger, F_OK), -1);
    /* space is back: the same attempt starts */
    assert_int_equal(unlink(flag), 0);
    assert_int_equal(run(f, &l).exit_code, 0);
    assert_string_equal(slurp(ledger), "ran\n");
}

/* Waits until dir/exit holds `want`. */
static void await_exit_file(const char *dir, const char *want)
{
    char path[PATH_MAX + 8];
    int i;

    snprintf(path, sizeof(path), "%s/exit", dir);
    for (i = 0; i < 500 && strcmp(slurp(path), want) != 0; i++)
        sleep_ms(10);
    assert_string_equal(slurp(path), want);
}

/* A trial ends while its exit file cannot be written: its end is not
 * lost. The supervisor tells it over its socket, keeps the attempt
 * watched, and writes the file once there is space. */
static void test_full_disk_keeps_the_exit_status(void **state)
{
    fixture *f = *state;
    char flag[PATH_MAX], path[PATH_MAX + 8];
    sw_exit e;
    sw_launch l;

    snprintf(flag, sizeof(flag), "%s/full", f->root);
    with_fault(f, "SWEEP_FAULT_NOSPACE", flag);
    l = next_attempt(f, SH("sleep 0.2; exit 3", NULL));
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    expect_started(f, l.key);
    put(f->root, "full", "");
    e = expect_ended(f, l.key);
    assert_true(e.exited);
    assert_int_equal(e.exit_code, 3);
    snprintf(path, sizeof(path), "%s/exit", f->dir);
    assert_int_equal(access(path, F_OK), -1);
    sleep_ms(1200); /* retried, still full: still held */
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(unlink(flag), 0);
    await_exit_file(f->dir, "exit 3\n");
}

/* The same, with no orchestrator: a later one, adopting the attempt
 * while the disk is still full, waits for it (it stays watched), and
 * learns how it ended once there is space, as `sweep resume` does. */
static void test_full_disk_then_resume(void **state)
{
    fixture *f = *state;
    char flag[PATH_MAX];

#ifndef SW_FAULT_INJECTION
    skip(); /* a Release build has no fault points */
#endif
    snprintf(flag, sizeof(flag), "%s/full", f->root);
    assert_int_equal(setenv("SWEEP_FAULT_NOSPACE", flag, 1), 0);
    launch_and_crash(f, SH("sleep 0.2; exit 9", NULL));
    assert_int_equal(unsetenv("SWEEP_FAULT_NOSPACE"), 0);
    put(f->root, "full", "");
    assert_int_equal(sw_executor_adopt(f->ex, f->key, f->dir, f->handle), 0);
    expect_quiet(f, 0.8); /* ended, unrecorded, still watched */
    assert_int_equal(unlink(flag), 0);
    assert_int_equal(expect_ended(f, f->key).exit_code, 9);
    assert_true(proc_gone(f->pid)); /* its supervisor, done, left */
}

static pid_t hostile_parent; /* 0: the handler below does nothing */

/* An atfork handler as a library may hold (libuv's closes the
 * descriptors of its signal pipe): in a grandchild of the test, it
 * closes descriptors that are not its own. */
static void hostile_atfork(void)
{
    int fd;

    if (hostile_parent && getppid() != hostile_parent)
        for (fd = 3; fd < 256; fd++)
            close(fd);
}

/* Defect: trials were forked with fork(), which runs the atfork
 * handlers a supervisor inherits from the orchestrator: libuv's closed
 * the descriptors of the trial's logs and gate, and every trial of a
 * supervisor restarted mid-sweep exited 127 (bench_chaos). */
static void test_trials_run_no_atfork_handler(void **state)
{
    fixture *f = *state;
    static bool registered;
    sw_launch l;

    if (!registered)
        assert_int_equal(pthread_atfork(NULL, NULL, hostile_atfork), 0);
    registered = true;
    hostile_parent = getpid();
    sw_executor_free(f->ex);
    assert_int_equal(sw_executor_local_new(&f->ex), 0);
    hostile_parent = 0;
    l = next_attempt(f, SH("echo ok", NULL));
    assert_int_equal(run(f, &l).exit_code, 0);
    assert_string_equal(slurp(f->out), "ok\n");
}

static void test_adopt_bad_handle(void **state)
{
    fixture *f = *state;
    static const char *const bad[] = {
        "",
        "12",
        "12 x",
        "-1 3",
        "0 5",
        "12 -3",
        "1 2 3 4",
        "12  3",
        " 12 3",
        "12 3\n",
        "12 1",
        "012 3",
        "+12 3",
        "12 3 ",
        "12\t3",
        "12 3 0",
        "12 0 5",
        "12 3 x",
        "12 3 07",
        "12 3 -5",
        "99999999999 3",
        "12 3 99999999999999999999",
    };
    size_t i;

    next_attempt(f, SH("true", NULL));
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (sw_executor_adopt(f->ex, f->key, f->dir, bad[i]) != SW_EINVALID)
            fail_msg("handle '%s' was taken", bad[i]);
    /* pgid 0: nothing ran, and the exit file says how it ended */
    put(f->dir, "exit", "exit 127\n");
    assert_int_equal(sw_executor_adopt(f->ex, f->key, f->dir, "12 0"), 0);
    assert_int_equal(expect_ended(f, f->key).exit_code, 127);
}

/* Forks a process that leads a session and group of its own (nothing
 * of any supervisor's); returns its pid once it does. */
static pid_t start_stranger(void)
{
    pid_t pid = fork();
    int i;

    assert_true(pid >= 0);
    if (pid == 0) {
        setsid();
        execlp("sleep", "sleep", "30", (char *)NULL);
        _exit(127);
    }
    for (i = 0; i < 500 && getpgid(pid) != pid; i++)
        sleep_ms(10);
    assert_int_equal(getpgid(pid), pid);
    return pid;
}

/* Field 22 of /proc/PID/stat, read here independently of the executor. */
static unsigned long long start_time_of(pid_t pid)
{
    char path[64], *p;
    unsigned long long st = 0;
    int i;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    assert_non_null(p = strrchr(slurp(path), ')'));
    for (i = 0; i < 20; i++) /* to the space before field 22 */
        assert_non_null(p = strchr(p + 1, ' '));
    assert_int_equal(sscanf(p, " %llu", &st), 1);
    return st;
}

/* Whether pid was left alone: alive, and not stopped by a signal. */
static bool untouched(pid_t pid)
{
    int status;

    return waitpid(pid, &status, WNOHANG) == 0 && kill(pid, 0) == 0;
}

static void end_stranger(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* A recorded group id that some other process has taken since (a reboot,
 * an ended trial): neither cancel nor the lost attempt's kill signals
 * it, and cancel says why. */
static void test_cancel_spares_a_reused_group(void **state)
{
    fixture *f = *state;
    pid_t stranger = start_stranger();
    unsigned long long start = start_time_of(stranger);
    char handle[64];

    next_attempt(f, SH("true", NULL));
    snprintf(handle, sizeof(handle), "%d %d %llu", (int)getpid(), (int)stranger,
             start + 1);
    assert_int_equal(sw_executor_adopt(f->ex, f->key, f->dir, handle), 0);
    assert_int_equal(sw_executor_cancel(f->ex, f->key, true), SW_ERROR);
    assert_non_null(strstr(sw_error_last(), "not signalled"));
    assert_non_null(strstr(sw_error_last(), "not the trial's"));
    assert_non_null(strstr(expect_message(f, f->key, SW_JOB_LOST), f->dir));
    assert_true(untouched(stranger));

    /* an older handle, without a start time, and nobody watching */
    next_attempt(f, SH("true", NULL));
    snprintf(handle, sizeof(handle), "%d %d", (int)getpid(), (int)stranger);
    assert_int_equal(sw_executor_adopt(f->ex, f->key, f->dir, handle), 0);
    assert_int_equal(sw_executor_cancel(f->ex, f->key, true), SW_ERROR);
    assert_non_null(strstr(sw_error_last(), "no start time"));
    expect_message(f, f->key, SW_JOB_LOST);
    assert_true(untouched(stranger));

    /* the right start time, but recorded in another boot */
    next_attempt(f, SH("true", NULL));
    snprintf(handle, sizeof(handle), "%d %d %llu", (int)getpid(), (int)stranger,
             start);
    put(f->dir, "pid", "1 2 3\n00000000-0000-0000-0000-000000000000\n");
    assert_int_equal(sw_executor_adopt(f->ex, f->key, f->dir, handle), 0);
    assert_int_equal(sw_executor_cancel(f->ex, f->key, true), SW_ERROR);
    assert_non_null(strstr(sw_error_last(), "reboot"));
    expect_message(f, f->key, SW_JOB_LOST);
    assert_true(untouched(stranger));
    end_stranger(stranger);
}

/* With the start time it recorded, the group is the trial's: signalled. */
static void test_cancel_checks_the_start_time(void **state)
{
    fixture *f = *state;
    pid_t stranger = start_stranger();
    char handle[64];
    int status;

    next_attempt(f, SH("true", NULL));
    snprintf(handle, sizeof(handle), "%d %d %llu", (int)getpid(), (int)stranger,
             start_time_of(stranger));
    assert_int_equal(sw_executor_adopt(f->ex, f->key, f->dir, handle), 0);
    assert_int_equal(sw_executor_cancel(f->ex, f->key, false), 0);
    assert_int_equal(waitpid(stranger, &status, 0), stranger);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGTERM);
    expect_message(f, f->key, SW_JOB_LOST);
}

static void test_factory(void **state)
{
    sw_executor *ex = NULL;
    sw_job_event ev;

    (void)state;
    memset(&ev, 0, sizeof(ev));
    assert_int_equal(sw_executor_new(&ex, "local"), 0);
    assert_string_equal(sw_executor_name(ex), "local");
    sw_executor_free(ex);
    ex = NULL;
    assert_int_equal(sw_executor_new(&ex, "pbs"), SW_EINVALID);
    assert_null(ex);
    assert_non_null(strstr(sw_error_last(), "'pbs'"));
    assert_non_null(strstr(sw_error_last(), "local, slurm"));
    assert_int_equal(sw_executor_new(&ex, NULL), SW_EINVALID);
    sw_executor_free(NULL);

    ev.key = strdup("k");
    ev.message = strdup("m");
    sw_job_event_dispose(&ev);
    assert_null(ev.key);
    assert_null(ev.message);
    sw_job_event_dispose(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_exit_codes),
        T(test_killed_by_signal),
        T(test_argv_is_literal),
        T(test_env_additions),
        T(test_cwd),
        T(test_logs_appended_across_attempts),
        T(test_missing_program),
        T(test_launch_errors),
        T(test_pid_file),
        T(test_fd_wakes),
        T(test_same_key_refused),
        T(test_cancel_term),
        T(test_cancel_before_started),
        T(test_cancel_force),
        T(test_cancel_kills_the_group),
        T(test_end_kills_leftovers),
        T(test_end_kills_other_sessions),
        T(test_end_kills_untagged_orphans),
        T(test_end_cost_does_not_grow_with_processes),
        T(test_running_trials_orphans_live),
        T(test_supervisor_killed_loses_nothing),
        T(test_supervisor_and_shim_killed_is_lost),
        T(test_shim_killed_is_lost),
        T(test_shim_killed_with_pipes_is_lost),
        T(test_supervisor_dies_before_replying),
        T(test_adopt_after_crash),
        T(test_adopt_without_handle),
        T(test_adopt_not_started),
        T(test_adopt_cancel),
        T(test_adopted_supervisor_killed_is_lost),
        T(test_adopt_bad_handle),
        T(test_killed_mid_launch_runs_once),
        T(test_adopt_waits_for_a_launch_in_progress),
        T(test_full_disk_at_launch),
        T(test_full_disk_keeps_the_exit_status),
        T(test_full_disk_then_resume),
        T(test_trials_run_no_atfork_handler),
        T(test_cancel_spares_a_reused_group),
        T(test_cancel_checks_the_start_time),
        cmocka_unit_test(test_factory),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
