/*
 * test_local.c - the local executor with real processes: exit codes and
 * signals recorded, argv passed literally (never through a shell), the
 * environment, working directory and logs a trial gets, cancel of the
 * whole process group, and re-adoption of an attempt by a new executor
 * after the process that launched it was killed.
 *
 * Each test works in a fresh mkdtemp() folder; trials are /bin/sh
 * scripts, so no helper program is needed.
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

typedef struct {
    char root[64];
    char dir[PATH_MAX]; /* the last attempt's folder */
    char out[PATH_MAX];
    char err[PATH_MAX];
    int attempts;
    sw_executor *ex;
} fixture;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
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

/* A fresh attempt folder, and a launch of argv in it. */
static sw_launch next_attempt(fixture *f, char *const *argv)
{
    sw_launch l;

    snprintf(f->dir, sizeof(f->dir), "%s/attempt-%d", f->root, ++f->attempts);
    assert_int_equal(mkdir(f->dir, 0755), 0);
    memset(&l, 0, sizeof(l));
    l.argv = argv;
    l.dir = f->dir;
    l.stdout_path = f->out;
    l.stderr_path = f->err;
    return l;
}

/* Polls check() (woken by wait_fd) until the attempt ends or is lost. */
static int wait_end(sw_executor *ex, const sw_job *job, sw_exit *out)
{
    struct pollfd p = {sw_executor_wait_fd(ex), POLLIN, 0};
    char sink[64];
    ssize_t n;
    int i, rc = 0;

    for (i = 0; i < 1000; i++) { /* 20 s at most */
        rc = sw_executor_check(ex, job, out);
        if (rc != 0)
            return rc;
        p.fd = sw_executor_wait_fd(ex);
        if (p.fd < 0) {
            poll(NULL, 0, 20);
            continue;
        }
        if (poll(&p, 1, 20) <= 0)
            continue;
        while ((n = read(p.fd, sink, sizeof(sink))) > 0)
            ;
        if (n == 0) /* the supervisor is gone: nothing will wake us */
            poll(NULL, 0, 20);
    }
    return rc;
}

static sw_exit run(fixture *f, const sw_launch *l)
{
    sw_job job;
    sw_exit e;

    assert_int_equal(sw_executor_launch(f->ex, l, &job), 0);
    assert_int_equal(wait_end(f->ex, &job, &e), 1);
    return e;
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
    sw_job job;

    l.env = env;
    assert_int_equal(run(f, &l).exit_code, 0);
    assert_string_equal(slurp(f->out), "2|/nowhere|x=y\n");
    assert_null(getenv("SW_TEST_A")); /* the orchestrator's is untouched */

    env[1] = "NOEQUALS";
    l = next_attempt(f, SH("true", NULL));
    l.env = env;
    assert_int_equal(sw_executor_launch(f->ex, &l, &job), SW_EINVALID);
    assert_non_null(strstr(sw_error_last(), "NOEQUALS"));
}

static void test_cwd(void **state)
{
    fixture *f = *state;
    char work[PATH_MAX], real[PATH_MAX], want[PATH_MAX + 1];
    sw_launch l = next_attempt(f, SH("pwd -P", NULL));
    sw_job job;

    snprintf(work, sizeof(work), "%s/work", f->root);
    assert_int_equal(mkdir(work, 0755), 0);
    assert_non_null(realpath(work, real));
    snprintf(want, sizeof(want), "%s\n", real);
    l.cwd = work;
    assert_int_equal(run(f, &l).exit_code, 0);
    assert_string_equal(slurp(f->out), want);

    l = next_attempt(f, SH("true", NULL));
    l.cwd = "/nonexistent/sweep-cwd";
    assert_int_equal(sw_executor_launch(f->ex, &l, &job), SW_EIO);
    assert_non_null(strstr(sw_error_last(), "/nonexistent/sweep-cwd"));
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
    sw_exit e = run(f, &l);

    assert_true(e.exited);
    assert_int_equal(e.exit_code, 127);
    assert_string_equal(slurp(f->err),
                        "sweep: cannot run 'sweep-no-such-program': "
                        "No such file or directory\n");
}

static void test_launch_errors(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("true", NULL));
    sw_job job;

    run(f, &l); /* the folder now holds an attempt */
    assert_int_equal(sw_executor_launch(f->ex, &l, &job), SW_EINVALID);
    assert_non_null(strstr(sw_error_last(), f->dir));

    l.dir = "/nonexistent/sweep-dir";
    assert_int_equal(sw_executor_launch(f->ex, &l, &job), SW_EIO);
    assert_non_null(strstr(sw_error_last(), "/nonexistent/sweep-dir"));

    l = next_attempt(f, SH("true", NULL));
    l.stdout_path = "/nonexistent/out.log";
    assert_int_equal(sw_executor_launch(f->ex, &l, &job), SW_EIO);
    assert_non_null(strstr(sw_error_last(), "/nonexistent/out.log"));

    l.stdout_path = f->out;
    l.argv = (char *const[]){NULL};
    assert_int_equal(sw_executor_launch(f->ex, &l, &job), SW_EINVALID);
}

static void test_pid_file(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("true", NULL));
    char path[PATH_MAX + 8], want[64];
    sw_job job;
    sw_exit e;

    assert_int_equal(sw_executor_launch(f->ex, &l, &job), 0);
    assert_true(job.pid > 0 && job.pgid > 0 && job.pid != job.pgid);
    assert_string_equal(job.dir, f->dir);
    snprintf(path, sizeof(path), "%s/pid", f->dir);
    snprintf(want, sizeof(want), "%lld %lld\n", (long long)job.pid,
             (long long)job.pgid);
    assert_string_equal(slurp(path), want);
    assert_int_equal(wait_end(f->ex, &job, &e), 1);
    assert_int_equal(sw_executor_cancel(f->ex, &job, true), 0); /* ended */
}

static void test_wait_fd_wakes(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("sleep 0.2", NULL));
    struct pollfd p = {sw_executor_wait_fd(f->ex), POLLIN, 0};
    char sink[64];
    sw_job job;
    sw_exit e;
    int rc;

    assert_true(p.fd >= 0);
    while (read(p.fd, sink, sizeof(sink)) > 0)
        ;
    assert_int_equal(sw_executor_launch(f->ex, &l, &job), 0);
    assert_int_equal(sw_executor_check(f->ex, &job, &e), 0);
    do /* SIGCHLD itself interrupts poll(): the byte is then waiting */
        rc = poll(&p, 1, 10000);
    while (rc < 0 && errno == EINTR);
    assert_int_equal(rc, 1);
    assert_int_equal(wait_end(f->ex, &job, &e), 1);
    assert_int_equal(e.exit_code, 0);
}

static void test_cancel_term(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, (char *const[]){"sleep", "30", NULL});
    sw_job job;
    sw_exit e;

    assert_int_equal(sw_executor_launch(f->ex, &l, &job), 0);
    assert_int_equal(sw_executor_cancel(f->ex, &job, false), 0);
    assert_int_equal(wait_end(f->ex, &job, &e), 1);
    assert_false(e.exited);
    assert_int_equal(e.signal, SIGTERM);
}

static void test_cancel_force(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(
        f, SH("trap '' TERM; echo ready; while :; do sleep 1; done", NULL));
    sw_job job;
    sw_exit e;

    assert_int_equal(sw_executor_launch(f->ex, &l, &job), 0);
    await_line(f->out);
    assert_int_equal(sw_executor_cancel(f->ex, &job, false), 0);
    sleep_ms(200);
    assert_int_equal(sw_executor_check(f->ex, &job, &e), 0);
    assert_int_equal(sw_executor_cancel(f->ex, &job, true), 0);
    assert_int_equal(wait_end(f->ex, &job, &e), 1);
    assert_false(e.exited);
    assert_int_equal(e.signal, SIGKILL);
}

static void test_cancel_kills_the_group(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, SH("sleep 30 & echo $!; wait", NULL));
    sw_job job;
    sw_exit e;
    long grandchild;

    assert_int_equal(sw_executor_launch(f->ex, &l, &job), 0);
    grandchild = strtol(await_line(f->out), NULL, 10);
    assert_true(grandchild > 0);
    assert_int_equal(sw_executor_cancel(f->ex, &job, false), 0);
    assert_int_equal(wait_end(f->ex, &job, &e), 1);
    assert_int_equal(e.signal, SIGTERM);
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

static void test_supervisor_killed_is_lost(void **state)
{
    fixture *f = *state;
    sw_launch l = next_attempt(f, (char *const[]){"sleep", "30", NULL});
    sw_job job;
    sw_exit e;

    assert_int_equal(sw_executor_launch(f->ex, &l, &job), 0);
    assert_int_equal(kill((pid_t)job.pid, SIGKILL), 0);
    assert_int_equal(wait_end(f->ex, &job, &e), SW_ENOTFOUND);
    assert_non_null(strstr(sw_error_last(), f->dir));
    assert_false(proc_gone(job.pgid)); /* the orphaned trial still runs */
    assert_int_equal(sw_executor_cancel(f->ex, &job, true), 0);
    assert_true(proc_gone(job.pgid));
}

/* Launches argv from a child process that is then SIGKILLed, like a
 * crashed orchestrator; returns the job it launched. */
static sw_job launch_and_crash(fixture *f, char *const *argv)
{
    sw_launch l = next_attempt(f, argv);
    int fds[2], status;
    sw_job job;
    pid_t pid;

    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sw_executor *ex;

        close(fds[0]);
        if (sw_executor_local_new(&ex) < 0 ||
            sw_executor_launch(ex, &l, &job) < 0)
            _exit(1);
        if (write(fds[1], &job, sizeof(job)) != (ssize_t)sizeof(job))
            _exit(1);
        for (;;)
            pause();
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &job, sizeof(job)), sizeof(job));
    close(fds[0]);
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    job.dir = f->dir;
    return job;
}

static void test_adopt_after_crash(void **state)
{
    fixture *f = *state;
    sw_job job = launch_and_crash(f, SH("sleep 1; echo done; exit 7", NULL));
    sw_exit e;

    assert_int_equal(sw_executor_check(f->ex, &job, &e), 0);
    assert_int_equal(wait_end(f->ex, &job, &e), 1);
    assert_true(e.exited);
    assert_int_equal(e.exit_code, 7);
    assert_string_equal(slurp(f->out), "done\n");
}

static void test_adopt_cancel(void **state)
{
    fixture *f = *state;
    sw_job job = launch_and_crash(f, (char *const[]){"sleep", "30", NULL});
    sw_exit e;

    assert_int_equal(sw_executor_check(f->ex, &job, &e), 0);
    assert_int_equal(sw_executor_cancel(f->ex, &job, false), 0);
    assert_int_equal(wait_end(f->ex, &job, &e), 1);
    assert_int_equal(e.signal, SIGTERM);
}

static void test_adopted_supervisor_killed_is_lost(void **state)
{
    fixture *f = *state;
    sw_job job = launch_and_crash(f, (char *const[]){"sleep", "30", NULL});
    sw_exit e;

    assert_int_equal(sw_executor_check(f->ex, &job, &e), 0);
    assert_int_equal(kill((pid_t)job.pid, SIGKILL), 0);
    assert_int_equal(wait_end(f->ex, &job, &e), SW_ENOTFOUND);
    assert_int_equal(sw_executor_cancel(f->ex, &job, true), 0);
    assert_true(proc_gone(job.pgid));
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
        T(test_wait_fd_wakes),
        T(test_cancel_term),
        T(test_cancel_force),
        T(test_cancel_kills_the_group),
        T(test_end_kills_leftovers),
        T(test_supervisor_killed_is_lost),
        T(test_adopt_after_crash),
        T(test_adopt_cancel),
        T(test_adopted_supervisor_killed_is_lost),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
