/*
 * test_sim.c - the simulated executor on its own, driven as simloop.c
 * drives it: wait on fd() while a surrogate runs, then move the virtual
 * clock to next_wake(). Surrogates are /bin/sh scripts. Checked: each
 * line reaches stdout.log exactly at its virtual time, the attempt ends
 * with the surrogate's exit status when its curve ends, a cancel ends it
 * at once with the lines after it never written, failures are drawn from
 * the seed, the run and the attempt only, and adopt() and a command that
 * cannot start are answered as the interface says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/executor.h"
#include "sweeps/error.h"

/* clang-format off */
#define SH(script) (char *const[]){"/bin/sh", "-c", script, NULL}
#define T(test) cmocka_unit_test_setup_teardown(test, setup, teardown)
/* clang-format on */
#define assert_near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

typedef struct {
    char root[64];
    char out[PATH_MAX], err[PATH_MAX];
    sw_executor *ex;
    const sw_clock *clock;
    double t0;      /* the clock when the test began */
    size_t outputs; /* SW_JOB_OUTPUT events next() passed over */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    snprintf(f->root, sizeof(f->root), "/tmp/sweep-sim-XXXXXX");
    if (!f || !mkdtemp(f->root) || sw_executor_new(&f->ex, "sim") != SW_OK ||
        sw_executor_sim_set_timing(f->ex, 0, 0) != SW_OK) /* round times */
        return -1;
    f->clock = sw_executor_clock(f->ex);
    f->t0 = f->clock ? sw_clock_mono(f->clock) : 0;
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

/* Launches `argv` as run `key`, attempt `attempt`, of sweep "s". */
static void launch(fixture *f, const char *key, int attempt, char *const *argv)
{
    char dir[256], a[32];
    char *env[] = {"SWEEP_ID=s", a, NULL};

    snprintf(a, sizeof(a), "SWEEP_ATTEMPT=%d", attempt);
    snprintf(dir, sizeof(dir), "%s/%s", f->root, key);
    mkdir(dir, 0700);
    snprintf(f->out, sizeof(f->out), "%s/stdout.log", dir);
    snprintf(f->err, sizeof(f->err), "%s/stderr.log", dir);
    sw_launch l = {.key = key,
                   .argv = argv,
                   .env = env,
                   .dir = dir,
                   .stdout_path = f->out,
                   .stderr_path = f->err};
    assert_int_equal(sw_executor_launch(f->ex, &l), SW_OK);
}

/* The next event but SW_JOB_OUTPUT (counted in f->outputs), waiting for
 * surrogates and moving the clock as the driver does; `advance` false:
 * only what is due now. 0: none. */
static int next(fixture *f, sw_job_event *ev, bool advance)
{
    struct pollfd p;
    double wake;

    for (int turns = 0; turns < 100000; turns++) {
        sw_executor_process(f->ex, sw_clock_mono(f->clock));
        while (sw_executor_next_event(f->ex, ev) == 1) {
            if (ev->kind != SW_JOB_OUTPUT)
                return 1;
            f->outputs++;
            sw_job_event_dispose(ev);
        }
        p = (struct pollfd){sw_executor_fd(f->ex), POLLIN, 0};
        wake = sw_executor_next_wake(f->ex);
        if (p.fd >= 0)
            assert_true(poll(&p, 1, 10000) == 1);
        else if (advance && wake > 0)
            sw_executor_advance(f->ex, wake);
        else
            return 0;
    }
    fail_msg("no event after 100000 turns");
    return 0;
}

static double vnow(const fixture *f)
{
    return sw_clock_mono(f->clock) - f->t0;
}

static int lines_in(const char *path)
{
    char *text = sw_test_slurp(path, NULL);
    int n = 0;

    for (const char *p = text; p && *p; p++)
        n += *p == '\n';
    free(text);
    return n;
}

static void expect_started(fixture *f)
{
    sw_job_event ev;

    assert_int_equal(next(f, &ev, false), 1);
    assert_int_equal(ev.kind, SW_JOB_STARTED);
    assert_non_null(strstr(ev.handle, "sim "));
    sw_job_event_dispose(&ev);
}

static void test_lines_appear_at_their_virtual_time(void **state)
{
    fixture *f = *state;
    sw_job_event ev;
    double wall0 = sw_clock_wall(f->clock);

    assert_non_null(f->clock);
    launch(f, "s-1", 1,
           SH("[ \"$SWEEP_SIMULATE\" = 1 ] || exit 9\n"
              "echo '@metrics {\"step\": 1, \"_seconds\": 10, \"l\": 3}'\n"
              "echo 'a plain line'\n"
              "echo '@metrics {\"l\": 2, \"_seconds\" : 20}'\n"
              "printf '@metrics {\"l\": 1, \"_seconds\": 30}'"));
    expect_started(f);
    /* nothing of it before the clock moves; then one line at a time */
    assert_int_equal(next(f, &ev, false), 0);
    assert_int_equal(lines_in(f->out), 0);
    assert_near(sw_executor_next_wake(f->ex) - f->t0, 10, 1e-9);
    sw_executor_advance(f->ex, sw_executor_next_wake(f->ex));
    assert_int_equal(next(f, &ev, false), 0);
    assert_int_equal(lines_in(f->out), 2); /* the plain line comes along */
    assert_int_equal(f->outputs, 1);       /* and the engine is told */
    assert_near(sw_executor_next_wake(f->ex) - f->t0, 30, 1e-9);
    assert_int_equal(next(f, &ev, true), 1);
    assert_int_equal(ev.kind, SW_JOB_ENDED);
    assert_true(ev.exit.exited);
    assert_int_equal(ev.exit.exit_code, 0);
    assert_near(vnow(f), 60, 1e-9);
    assert_near(sw_clock_wall(f->clock) - wall0, 60, 1e-6);
    sw_job_event_dispose(&ev);
    assert_int_equal(lines_in(f->out), 4); /* the last gets its newline */
    assert_int_equal(sw_executor_next_wake(f->ex), 0);
}

static void test_exit_status_and_default_seconds(void **state)
{
    fixture *f = *state;
    sw_job_event ev;

    launch(f, "s-1", 1,
           SH("echo '@metrics {\"l\": 1}'; echo '@metrics {\"l\": 0, "
              "\"_seconds\": -5}'; exit 3"));
    expect_started(f);
    assert_int_equal(next(f, &ev, true), 1);
    assert_int_equal(ev.kind, SW_JOB_ENDED);
    assert_int_equal(ev.exit.exit_code, 3);
    assert_near(vnow(f), 2, 1e-9); /* 1 s each, -5 refused */
    sw_job_event_dispose(&ev);
}

static void test_cancel_ends_it_now(void **state)
{
    fixture *f = *state;
    sw_job_event ev;

    launch(f, "s-1", 1,
           SH("for i in 1 2 3 4 5; do echo \"@metrics {\\\"i\\\": $i, "
              "\\\"_seconds\\\": 60}\"; done"));
    expect_started(f);
    next(f, &ev, false);                     /* reaps the surrogate */
    sw_executor_advance(f->ex, f->t0 + 150); /* two lines due */
    assert_int_equal(next(f, &ev, false), 0);
    assert_int_equal(lines_in(f->out), 2);
    assert_int_equal(sw_executor_cancel(f->ex, "s-1", false), SW_OK);
    assert_int_equal(next(f, &ev, false), 1);
    assert_int_equal(ev.kind, SW_JOB_ENDED);
    assert_false(ev.exit.exited);
    assert_int_equal(ev.exit.signal, SIGTERM);
    sw_job_event_dispose(&ev);
    assert_near(vnow(f), 150, 1e-9);
    assert_int_equal(next(f, &ev, true), 0); /* nothing more, ever */
    assert_int_equal(lines_in(f->out), 2);
    assert_int_equal(sw_executor_cancel(f->ex, "s-1", false), SW_ENOTFOUND);
}

/* Which of 20 runs fail at rate 0.5 with `seed`, as a bit mask. */
static uint32_t failures(fixture *f, uint64_t seed)
{
    uint32_t mask = 0;
    sw_job_event ev;
    char key[16];
    int i, ended = 0;

    assert_int_equal(sw_executor_sim_set_failures(f->ex, 0.5, seed), SW_OK);
    for (i = 0; i < 20; i++) {
        snprintf(key, sizeof(key), "s-%d", i);
        launch(f, key, 1,
               SH("for i in 1 2 3 4; do echo '@metrics {\"_seconds\": "
                  "10}'; done"));
    }
    while (ended < 20 && next(f, &ev, true) == 1) {
        if (ev.kind == SW_JOB_ENDED) {
            ended++;
            if (ev.exit.exit_code == 1)
                mask |= 1u << strtol(ev.key + 2, NULL, 10);
        }
        sw_job_event_dispose(&ev);
    }
    assert_int_equal(ended, 20);
    return mask;
}

static void test_failures_come_from_the_seed(void **state)
{
    fixture *f = *state;
    uint32_t a = failures(f, 7), b, c;
    char path[PATH_MAX], *err;
    int i;

    for (i = 0; i < 20 && !(a & (1u << i)); i++)
        ;
    snprintf(path, sizeof(path), "%s/s-%d/stderr.log", f->root, i);
    err = sw_test_slurp(path, NULL);
    assert_non_null(err); /* a failed run's stderr says when */
    assert_non_null(strstr(err, "injected failure at virtual second"));
    free(err);

    /* another executor, the same draws; another seed, others */
    sw_executor_free(f->ex);
    assert_int_equal(sw_executor_new(&f->ex, "sim"), SW_OK);
    f->clock = sw_executor_clock(f->ex);
    b = failures(f, 7);
    c = failures(f, 8);
    assert_int_equal(a, b);
    assert_int_not_equal(a, c);
    assert_true(a != 0 && a != 0xfffff); /* some, not all */
    assert_int_equal(sw_executor_sim_set_failures(f->ex, 1.5, 1), SW_EINVALID);
}

static void test_adopt_and_start_failures(void **state)
{
    fixture *f = *state;
    sw_job_event ev;

    assert_int_equal(sw_executor_adopt(f->ex, "s-9", f->root, "sim 1"), SW_OK);
    assert_int_equal(next(f, &ev, false), 1);
    assert_int_equal(ev.kind, SW_JOB_NOT_STARTED);
    sw_job_event_dispose(&ev);
    launch(f, "s-1", 1, (char *const[]){"/nonexistent/trainer", NULL});
    assert_int_equal(next(f, &ev, false), 1);
    assert_int_equal(ev.kind, SW_JOB_START_FAILED);
    assert_non_null(strstr(ev.message, "/nonexistent/trainer"));
    sw_job_event_dispose(&ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_lines_appear_at_their_virtual_time),
        T(test_exit_status_and_default_seconds),
        T(test_cancel_ends_it_now),
        T(test_failures_come_from_the_seed),
        T(test_adopt_and_start_failures),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
