/*
 * test_gpu_run.c - `sweep run` packing real trial processes onto GPUs,
 * with the fake NVML (tests/backends/fake_nvml.c) loaded as the real one
 * would be. Each trial, a small shell script, writes what it was given
 * (CUDA_VISIBLE_DEVICES) and when it started and ended; the tests check
 * what each trial saw and that no device ever held more trials at once
 * than it can: fractional trials sharing a GPU, 2-GPU trials, MIG slices
 * by UUID, memory used by other processes, a trial that never fits (exit
 * 2, no sweep made), a resume that keeps running trials' devices, trials
 * on CPU only, and gpu_memory: auto learning from NVML's per-process
 * accounting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"
#include "sweeps/json.h"

/* Writes one line when it ends: run, devices (unset, empty or the
 * value), start and end times. With MEM it shows up in the fake NVML's
 * process list on its device meanwhile. */
static const char trial[] =
    "#!/bin/sh\n"
    "start=$(date +%s.%N)\n"
    "v=${CUDA_VISIBLE_DEVICES-unset}; [ -z \"$v\" ] && v=empty\n"
    "[ -n \"$MEM\" ] && echo \"proc $v $$ $MEM\" > \"$PROCS/$$\"\n"
    "sleep \"${SLEEP:-1.5}\"\n"
    "[ -n \"$MEM\" ] && rm -f \"$PROCS/$$\"\n"
    "echo \"$SWEEP_RUN_ID $v $start $(date +%s.%N)\" >> \"$LOG\"\n";

#define MAX_LINES 64

typedef struct {
    char run[64], devices[512];
    double start, end;
} trial_line;

typedef struct {
    sw_h h;
    char *log, *trial;
    trial_line lines[MAX_LINES];
    size_t n;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    char *procs, *ledger;

    sw_h_init(&f->h);
    f->log = sw_aprintf("%s/trials.log", f->h.dir);
    f->trial = sw_h_file(&f->h, "trial.sh", trial);
    chmod(f->trial, 0755);
    procs = sw_aprintf("%s/procs", f->h.dir);
    mkdir(procs, 0700);
    setenv("PROCS", procs, 1);
    setenv("FAKE_NVML_PROCS", procs, 1);
    setenv("LOG", f->log, 1);
    unsetenv("MEM");
    unsetenv("SLEEP");
    ledger = sw_aprintf("%s/ledger", f->h.dir);
    setenv("SWEEP_GPU_LEDGER", ledger, 1); /* the test's own machine */
    free(ledger);
    unsetenv("CUDA_VISIBLE_DEVICES");
    assert_non_null(getenv("FAKE_NVML_LIB"));
    setenv("SWEEP_NVML_LIBRARY", getenv("FAKE_NVML_LIB"), 1);
    free(procs);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    sw_h_dispose(&f->h);
    free(f->log);
    free(f->trial);
    free(f);
    return 0;
}

static void machine(fixture *f, const char *conf)
{
    char *path = sw_h_file(&f->h, "nvml.conf", conf);

    setenv("FAKE_NVML_CONFIG", path, 1);
    free(path);
}

/* A grid of `n` trials running trial.sh, with `extra` lines. */
static char *sweep_file(fixture *f, int n, const char *extra)
{
    char *text = sw_aprintf("method: grid\ncommand: [%s]\nparameters:\n"
                            "  x: {values: [%s]}\n%s",
                            f->trial,
                            n == 3   ? "1, 2, 3"
                            : n == 4 ? "1, 2, 3, 4"
                            : n == 6 ? "1, 2, 3, 4, 5, 6"
                                     : "1, 2, 3, 4, 5, 6, 7, 8, 9",
                            extra);
    char *path = sw_h_file(&f->h, "sweep.yaml", text);

    free(text);
    return path;
}

static char *err_text(const fixture *f)
{
    char *path = sw_aprintf("%s/stderr.txt", f->h.dir);
    char *text = sw_test_slurp(path, NULL);

    free(path);
    return text ? text : sw_strdup("");
}

static void read_log(fixture *f)
{
    char *text = sw_test_slurp(f->log, NULL), *p, *nl;
    trial_line *l;

    f->n = 0;
    assert_non_null(text);
    for (p = text; *p && f->n < MAX_LINES; p = nl + 1) {
        nl = strchr(p, '\n');
        assert_non_null(nl);
        *nl = '\0';
        l = &f->lines[f->n++];
        assert_int_equal(sscanf(p, "%63s %511s %lf %lf", l->run, l->devices,
                                &l->start, &l->end),
                         4);
    }
    free(text);
}

/* Whether `dev` is one of the comma-separated `list`. */
static bool has_device(const char *list, const char *dev)
{
    size_t n = strlen(dev);
    const char *p = list;

    while ((p = strstr(p, dev))) {
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return true;
        p += n;
    }
    return false;
}

/* The most trials that ran at once on `dev` (NULL: on any). */
static int max_overlap(const fixture *f, const char *dev)
{
    int best = 0, now;
    size_t i, j;

    for (i = 0; i < f->n; i++) {
        if (dev && !has_device(f->lines[i].devices, dev))
            continue;
        now = 0;
        for (j = 0; j < f->n; j++)
            now += (!dev || has_device(f->lines[j].devices, dev)) &&
                   f->lines[j].start <= f->lines[i].start &&
                   f->lines[j].end > f->lines[i].start;
        best = now > best ? now : best;
    }
    return best;
}

static void run_ok(fixture *f, const char *const *args, char **out)
{
    int rc = sw_h_run(&f->h, args, out);

    if (rc != 0) {
        char *err = err_text(f);

        fail_msg("sweep %s exited %d: %s", args[0], rc, err);
    }
}

/* ---- the tests ------------------------------------------------------ */

static const char two_gpus[] = "driver 580.159.04\n"
                               "gpu GPU-a0 150754820096 0 0 0 NVIDIA H200\n"
                               "gpu GPU-b1 150754820096 0 0 0 NVIDIA H200\n";

/* gpus: 0.5 on 2 GPUs: 4 at once by default, two on each GPU, never
 * more even when parallel allows it. */
static void test_fractional(void **state)
{
    fixture *f = *state;
    char *file = sweep_file(f, 6, "resources:\n  gpus: 0.5\n"), *out = NULL;
    const char *args[] = {"run", file, "--quiet", NULL};
    /* --parallel 6: only the GPUs limit what starts */
    const char *wide[] = {"run", file, "--quiet", "--parallel", "6", NULL};
    size_t i;

    machine(f, two_gpus);
    run_ok(f, args, &out);
    assert_non_null(strstr(out, "parallel 4"));
    assert_non_null(strstr(out, "2 GPU devices (NVML, driver 580.159.04), "
                                "4 trials at once"));
    free(out);
    unlink(f->log);
    run_ok(f, wide, &out);
    read_log(f);
    assert_int_equal(f->n, 6);
    for (i = 0; i < f->n; i++)
        assert_true(strcmp(f->lines[i].devices, "GPU-a0") == 0 ||
                    strcmp(f->lines[i].devices, "GPU-b1") == 0);
    assert_true(max_overlap(f, "GPU-a0") <= 2);
    assert_true(max_overlap(f, "GPU-b1") <= 2);
    assert_int_equal(max_overlap(f, NULL) >= 3, true); /* they shared */
    assert_int_equal(sw_h_count(&f->h, "select count(*) from runs where"
                                       " gpus ->> '$.share' = 0.5 and"
                                       " json_array_length(gpus, '$.devices')"
                                       " = 1"),
                     12); /* both sweeps' */
    free(out);
    free(file);
}

/* gpus: 2 on 4 GPUs: two distinct whole GPUs each, two trials at once. */
static void test_multi_gpu(void **state)
{
    fixture *f = *state;
    char *file = sweep_file(f, 4, "resources:\n  gpus: 2\n");
    const char *args[] = {"run", file, "--quiet", "--parallel", "4", NULL};
    const char *devs[] = {"GPU-a0", "GPU-b1", "GPU-c2", "GPU-d3"};
    size_t i;

    machine(f, "gpu GPU-a0 85899345920 0 0 0 A100\n"
               "gpu GPU-b1 85899345920 0 0 0 A100\n"
               "gpu GPU-c2 85899345920 0 0 0 A100\n"
               "gpu GPU-d3 85899345920 0 0 0 A100\n");
    run_ok(f, args, NULL);
    read_log(f);
    assert_int_equal(f->n, 4);
    for (i = 0; i < f->n; i++) {
        assert_non_null(strchr(f->lines[i].devices, ','));
        assert_int_equal(strlen(f->lines[i].devices), 13);
        assert_true(strncmp(f->lines[i].devices, f->lines[i].devices + 7, 6) !=
                    0);
    }
    for (i = 0; i < 4; i++)
        assert_true(max_overlap(f, devs[i]) <= 1);
    assert_int_equal(max_overlap(f, NULL), 2);
    free(file);
}

/* A GPU in MIG mode is given out by its slices' UUIDs, never whole. */
static void test_mig_slices(void **state)
{
    fixture *f = *state;
    char *file = sweep_file(f, 6, ""), *out = NULL;
    const char *args[] = {"run", file, "--quiet", "--parallel", "6", NULL};
    const char *devs[] = {"GPU-a0", "MIG-d3", "MIG-e4"};
    size_t i;

    machine(f, "gpu GPU-a0 150754820096 0 0 0 NVIDIA H200\n"
               "gpu GPU-c2 150754820096 0 0 1 NVIDIA H200\n"
               "mig GPU-c2 MIG-d3 76235669504 0 3 1 NVIDIA H200 MIG 3g.71gb\n"
               "mig GPU-c2 MIG-e4 19327352832 0 1 5 NVIDIA H200 MIG 1g.18gb\n");
    run_ok(f, args, &out);
    assert_non_null(strstr(out, "3 GPU devices (NVML), 3 trials at once"));
    read_log(f);
    assert_int_equal(f->n, 6);
    for (i = 0; i < f->n; i++)
        assert_true(strcmp(f->lines[i].devices, devs[0]) == 0 ||
                    strcmp(f->lines[i].devices, devs[1]) == 0 ||
                    strcmp(f->lines[i].devices, devs[2]) == 0);
    for (i = 0; i < 3; i++)
        assert_true(max_overlap(f, devs[i]) <= 1);
    assert_int_equal(max_overlap(f, NULL), 3);
    free(out);
    free(file);
}

/* 64 of 80 GiB used by someone else: one 10 GiB trial at a time, where
 * the free GPU would take eight. */
static void test_memory_used_by_others(void **state)
{
    fixture *f = *state;
    char *file = sweep_file(f, 3, "resources:\n  gpu_memory: 10GiB\n");
    char *out = NULL;
    const char *args[] = {"run", file, "--quiet", "--parallel", "3", NULL};
    const char *plan[] = {"gpus", file, NULL};

    machine(f, "gpu GPU-a0 85899345920 0 0 0 A100\n");
    run_ok(f, plan, &out);
    assert_non_null(strstr(out, "8 trials at once"));
    free(out);
    machine(f, "gpu GPU-a0 85899345920 68719476736 90 0 A100\n");
    run_ok(f, args, &out);
    assert_non_null(strstr(out, "1 trial at once"));
    read_log(f);
    assert_int_equal(f->n, 3);
    assert_int_equal(max_overlap(f, "GPU-a0"), 1);
    assert_int_equal(sw_h_count(&f->h, "select count(*) from runs where"
                                       " gpus ->> '$.memory' = 10737418240"),
                     3);
    free(out);
    free(file);
}

/* A trial no state of the machine can hold: exit 2 before any sweep is
 * made, with the reason. */
static void test_never_fits(void **state)
{
    fixture *f = *state;
    char *file = sweep_file(f, 3, "resources:\n  gpus: 3\n"), *err;
    char *db = sw_aprintf("%s/sweep.db", f->h.home);
    const char *args[] = {"run", file, "--quiet", NULL};
    const char *none[] = {"run", file, "--gpus", "none", NULL};
    struct stat sb;

    machine(f, two_gpus);
    assert_int_equal(sw_h_run(&f->h, args, NULL), 2);
    assert_int_equal(sw_h_run(&f->h, none, NULL), 2);
    err = err_text(f);
    assert_non_null(strstr(err, "no trial can ever run: trials ask for 3 "
                                "GPUs, and 2 of the 2 devices can hold one"));
    assert_non_null(strstr(err, "there is none: declared without GPUs"));
    assert_int_not_equal(stat(db, &sb), 0); /* no store, no sweep */
    assert_false(access(f->log, F_OK) == 0);
    free(err);
    free(db);
    free(file);
}

/* Without GPUs and resources, trials inherit the environment as always;
 * --gpus none hides the GPUs from them. */
static void test_cpu_only(void **state)
{
    fixture *f = *state;
    char *file = sweep_file(f, 3, "");
    const char *none[] = {"run", file, "--quiet", "--gpus", "none", NULL};
    const char *args[] = {"run", file, "--quiet", NULL};
    size_t i;

    setenv("SLEEP", "0", 1);
    machine(f, two_gpus);
    run_ok(f, none, NULL);
    setenv("SWEEP_NVML_LIBRARY", "", 1); /* NVML off: no GPU */
    run_ok(f, args, NULL);
    read_log(f);
    assert_int_equal(f->n, 6);
    for (i = 0; i < f->n; i++)
        assert_string_equal(f->lines[i].devices, i < 3 ? "empty" : "unset");
    assert_int_equal(
        sw_h_count(&f->h, "select count(*) from runs where gpus is null"), 6);
    free(file);
}

static void wait_running(const fixture *f, long n)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    int i;

    for (i = 0; i < 1000; i++) {
        if (sw_h_count(&f->h, "select count(*) from runs where state ="
                              " 'running' and job is not null") >= n)
            return;
        nanosleep(&ts, NULL);
    }
    fail_msg("no %ld runs running in 20 s", n);
}

/* The orchestrator dies while two trials hold both GPUs: the resumed
 * sweep re-adopts them with their devices, and starts the rest only as
 * they end, never on a GPU still held, even when its parallel would let
 * it. */
static void test_resume_keeps_devices(void **state)
{
    fixture *f = *state;
    char *file = sweep_file(f, 4, ""), *before;
    const char *args[] = {"run", file, "--quiet", NULL};
    /* --parallel 4: only the GPUs held limit what starts */
    const char *resume[] = {"resume", "--quiet", "--parallel", "4", NULL};
    pid_t pid;

    setenv("SLEEP", "3", 1);
    machine(f, two_gpus);
    pid = sw_h_start(&f->h, args);
    assert_true(pid > 0);
    wait_running(f, 2);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    before = sw_aprintf("%ld", sw_h_count(&f->h, "select count(*) from runs"
                                                 " where state = 'running'"
                                                 " and gpus is not null"));
    assert_string_equal(before, "2");
    run_ok(f, resume, NULL);
    read_log(f);
    assert_int_equal(f->n, 4);
    assert_int_equal(max_overlap(f, "GPU-a0"), 1);
    assert_int_equal(max_overlap(f, "GPU-b1"), 1);
    assert_int_equal(sw_h_count(&f->h, "select count(*) from runs where"
                                       " state = 'finished'"),
                     4);
    free(before);
    free(file);
}

static size_t runs_on(const sw_value *doc, size_t gpu)
{
    const sw_value *gpus = sw_value_map_get(doc, "gpus"), *g, *d, *runs;

    assert_non_null(gpus);
    g = gpus->u.list.items[gpu];
    d = sw_value_map_get(g, "devices")->u.list.items[0];
    runs = sw_value_map_get(d, "runs");
    assert_non_null(runs);
    if (runs->u.list.len)
        assert_true(sw_value_map_get(runs->u.list.items[0], "share")->u.f ==
                    0.5);
    return runs->u.list.len;
}

/* How many trials are between their start and their end now: each
 * keeps a file in $PROCS meanwhile. */
static int started(const fixture *f)
{
    char *procs = sw_aprintf("%s/procs", f->h.dir);
    DIR *d = opendir(procs);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    free(procs);
    return n;
}

/* A sweep resumed after gpu_memory: auto learned goes on packing by
 * what it learned: only the very first trial ever had a whole GPU, and
 * new trials join the re-adopted ones at once. */
static void test_auto_memory_survives_resume(void **state)
{
    fixture *f = *state;
    char *file = sweep_file(f, 9, "resources:\n  gpu_memory: auto\n");
    /* two at once, then room for two more beside the re-adopted two */
    const char *args[] = {"run", file, "--quiet", "--parallel", "2", NULL};
    const char *resume[] = {"resume", "--quiet", "--parallel", "4", NULL};
    struct timespec ts = {0, 20 * 1000 * 1000}, now;
    double killed, first_end = 1e300;
    bool joined = false;
    pid_t pid;
    size_t k;
    int i;

    setenv("MEM", "3221225472", 1);
    setenv("SLEEP", "2", 1);
    machine(f, "driver 580.159.04\ngpu GPU-a0 17179869184 0 40 0 L4\n");
    pid = sw_h_start(&f->h, args);
    assert_true(pid > 0);
    /* both packed trials stored as running and started (their process
     * files written), however slow the machine is */
    for (i = 0; i < 3000 && (sw_h_count(&f->h, "select count(*) from runs"
                                               " where state = 'running' and"
                                               " gpus ->> '$.memory' ="
                                               " 3758096384") < 2 ||
                             started(f) < 2);
         i++)
        nanosleep(&ts, NULL);
    assert_true(i < 3000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    clock_gettime(CLOCK_REALTIME, &now);
    killed = (double)now.tv_sec + now.tv_nsec / 1e9;
    run_ok(f, resume, NULL);
    read_log(f);
    assert_int_equal(f->n, 9);
    for (k = 0; k < f->n; k++) /* the re-adopted ones */
        if (f->lines[k].start < killed && f->lines[k].end > killed &&
            f->lines[k].end < first_end)
            first_end = f->lines[k].end;
    for (k = 0; k < f->n; k++)
        joined = joined ||
                 (f->lines[k].start > killed && f->lines[k].start < first_end);
    assert_true(first_end < 1e300);
    assert_true(joined);
    assert_int_equal(sw_h_count(&f->h, "select count(*) from runs where"
                                       " gpus ->> '$.share' = 1"),
                     1);
    assert_true(max_overlap(f, "GPU-a0") <= 4);
    free(file);
}

/* While a sweep runs, `sweep gpus` says which runs hold each device. */
static void test_gpus_shows_runs(void **state)
{
    fixture *f = *state;
    char *file = sweep_file(f, 4, "resources:\n  gpus: 0.5\n"), *out = NULL;
    const char *args[] = {"run", file, "--quiet", NULL};
    const char *json[] = {"gpus", "--json", NULL};
    const char *table[] = {"gpus", NULL};
    sw_value *doc = NULL;
    pid_t pid;

    setenv("SLEEP", "4", 1);
    machine(f, two_gpus);
    pid = sw_h_start(&f->h, args);
    assert_true(pid > 0);
    wait_running(f, 4);
    run_ok(f, json, &out);
    assert_int_equal(sw_json_parse(&doc, out, strlen(out)), SW_OK);
    assert_int_equal(runs_on(doc, 0), 2);
    assert_int_equal(runs_on(doc, 1), 2);
    sw_value_free(doc);
    free(out);
    run_ok(f, table, &out);
    assert_non_null(strstr(out, "util  runs"));
    assert_non_null(strstr(out, "-1, "));
    free(out);
    assert_int_equal(sw_h_wait(pid, 60), 0);
    run_ok(f, table, &out);
    assert_null(strstr(out, "runs")); /* none holds a device now */
    free(out);
    free(file);
}

/* gpu_memory: auto: the first trial runs alone on the GPU; once it ended,
 * having used 3 GiB (NVML's per-process accounting), trials get 3.5 GiB
 * each and four run at once on 16 GiB. Samples are stored meanwhile. */
static void test_auto_memory(void **state)
{
    fixture *f = *state;
    char *file = sweep_file(f, 9, "resources:\n  gpu_memory: auto\n");
    char *err;
    const char *args[] = {"run", file, NULL};
    size_t i;

    setenv("MEM", "3221225472", 1);
    setenv("SLEEP", "2", 1);
    machine(f, "driver 580.159.04\ngpu GPU-a0 17179869184 0 40 0 L4\n");
    run_ok(f, args, NULL);
    err = err_text(f);
    assert_non_null(strstr(err, "gpu_memory: auto: run "));
    assert_non_null(strstr(err, "used 3 GiB; trials now get 3.5 GiB, 4 at "
                                "once"));
    read_log(f);
    assert_int_equal(f->n, 9);
    for (i = 1; i < f->n; i++) /* the first one ended before all others */
        assert_true(f->lines[i].start >= f->lines[0].end);
    assert_true(max_overlap(f, "GPU-a0") <= 4);
    assert_true(max_overlap(f, "GPU-a0") >= 3);
    assert_int_equal(sw_h_count(&f->h, "select count(*) from runs where"
                                       " gpus ->> '$.memory' = 3758096384"),
                     8);
    assert_true(sw_h_count(&f->h, "select count(*) from gpu_samples where"
                                  " device = 'GPU-a0' and memory_total ="
                                  " 17179869184 and utilization = 40") >= 1);
    free(err);
    free(file);
}

/* ---- two sweeps on one machine ---------------------------------------- */

/* Runs two sweeps of `file` at once, each in a home of its own, on the
 * machine's GPU ledger in the test's folder; returns their stderr. */
static char *run_two(fixture *f, const char *file, const char *gpus)
{
    const char *args[] = {"run", file, "--gpus", gpus, NULL};
    char *home2 = sw_aprintf("%s/home2", f->h.dir), *out = NULL;
    pid_t first;
    int rc;

    setenv("SLEEP", "1", 1);
    first = sw_h_start(&f->h, args);
    setenv("SWEEP_HOME", home2, 1);
    rc = sw_h_run(&f->h, args, &out);
    setenv("SWEEP_HOME", f->h.home, 1);
    assert_int_equal(sw_h_wait(first, 120), 0);
    if (rc != 0)
        fail_msg("the second sweep exited %d: %s", rc, err_text(f));
    free(out);
    free(home2);
    return err_text(f);
}

static int count_of(const char *text, const char *what)
{
    int n = 0;

    for (; (text = strstr(text, what)); text += strlen(what))
        n++;
    return n;
}

/* Two sweeps of one-GPU trials on the same 2 GPUs: never more than one
 * trial on a GPU at once, all 12 ran, and a sweep that waited for the
 * other said so once at most. */
static void test_two_sweeps_share(void **state)
{
    fixture *f = *state;
    char *file = sweep_file(f, 6, ""), *err;
    int waits;

    err = run_two(f, file, "2");
    read_log(f);
    assert_int_equal(f->n, 12);
    assert_int_equal(max_overlap(f, "0"), 1);
    assert_int_equal(max_overlap(f, "1"), 1);
    waits = count_of(err, "waiting for a GPU: other sweeps on this machine");
    assert_true(waits >= 1 && waits <= 2);
    free(err);
    free(file);
}

/* Shares count across sweeps too: gpus: 0.5 on one GPU, two sweeps:
 * never more than two trials on it at once. */
static void test_two_sweeps_share_fractions(void **state)
{
    fixture *f = *state;
    char *file = sweep_file(f, 4, "resources:\n  gpus: 0.5\n"), *err;

    err = run_two(f, file, "1");
    read_log(f);
    assert_int_equal(f->n, 8);
    assert_int_equal(max_overlap(f, "0"), 2);
    free(err);
    free(file);
}

/* A sweep that died (its file is in the ledger, but nothing holds its
 * lock) holds nothing: its file is removed and the devices are used. */
static void test_dead_sweep_holds_nothing(void **state)
{
    fixture *f = *state;
    char *file = sweep_file(f, 3, ""), *ledger, *dead;
    const char *args[] = {"run", file, "--quiet", "--gpus", "1", NULL};
    struct stat st;

    ledger = sw_aprintf("%s/ledger", f->h.dir);
    mkdir(ledger, 0700);
    dead = sw_aprintf("%s/sweep-deadbeef-1", ledger);
    free(sw_h_file(&f->h, "ledger/sweep-deadbeef-1",
                   "sweep deadbeef pid 1\n0 1000000 0\n"));
    run_ok(f, args, NULL);
    read_log(f);
    assert_int_equal(f->n, 3);
    assert_int_equal(stat(dead, &st), -1); /* removed */
    free(dead);
    free(ledger);
    free(file);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_fractional),
        T(test_multi_gpu),
        T(test_mig_slices),
        T(test_memory_used_by_others),
        T(test_never_fits),
        T(test_cpu_only),
        T(test_resume_keeps_devices),
        T(test_auto_memory),
        T(test_gpus_shows_runs),
        T(test_auto_memory_survives_resume),
        T(test_two_sweeps_share),
        T(test_two_sweeps_share_fractions),
        T(test_dead_sweep_holds_nothing),
    };
#undef T

    return cmocka_run_group_tests(tests, NULL, NULL);
}
