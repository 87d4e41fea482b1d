/*
 * test_report.c - `sweep report` through the real binary, on a real local
 * sweep: half-GPU trials on one declared GPU (`--gpus 1`), one run that
 * fails its first attempt and resumes from its checkpoint, and one that
 * Hyperband stops. Each figure of `--json` is checked against the value
 * computed here from the store's own rows (attempts, metrics) by the
 * definitions of docs/report.md; the plot is checked to be well-formed
 * XML with a bar per attempt.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "testutil.h"
#include "sweeps/json.h"

/* a == b in doubles, within a relative 1e-9 (cmocka's own compares
 * floats) */
#define assert_near(a, b)                                                      \
    do {                                                                       \
        double a_ = (a), b_ = (b);                                             \
        if (!(fabs(a_ - b_) <= 1e-9 * fmax(1, fabs(b_))))                      \
            fail_msg("%.17g != %.17g", a_, b_);                                \
    } while (0)

/* The toy trainer's shape, six steps of 0.3 s, loss (x - 3)^2 + 1/step;
 * x = 2 fails at step 4 on its first attempt, having checkpointed 3. */
static const char trial[] =
    "#!/bin/sh\n"
    "x=0\n"
    "for a in \"$@\"; do case \"$a\" in --x=*) x=${a#--x=};; esac; done\n"
    "dir=${SWEEP_CHECKPOINT_DIR:-.}; i=0\n"
    "[ -f \"$dir/step\" ] && i=$(cat \"$dir/step\")\n"
    "while [ \"$i\" -lt 6 ]; do\n"
    "  i=$((i + 1)); sleep 0.3\n"
    "  if [ \"$x\" = 2 ] && [ \"$i\" -eq 4 ] && "
    "[ \"${SWEEP_ATTEMPT:-1}\" -eq 1 ]; then exit 3; fi\n"
    "  loss=$(awk -v x=\"$x\" -v i=\"$i\" "
    "'BEGIN { printf \"%.6f\", (x - 3) ^ 2 + 1 / i }')\n"
    "  echo \"@metrics {\\\"step\\\": $i, \\\"loss\\\": $loss}\"\n"
    "  echo \"$i\" > \"$dir/step\"\n"
    "done\n";

/* A number the store computes, read back (printf %.17g: SQLite's keeps
 * 16 significant digits). */
static double qnum(const sw_h *h, const char *expr)
{
    char *sql = sw_aprintf("select printf('%%.17g', %s)", expr);
    const char *args[] = {"query", sql, "--csv", NULL};
    char *out = NULL, *nl;
    double v = NAN;

    if (sw_h_run(h, args, &out) == 0 && (nl = strchr(out, '\n')))
        v = strtod(nl + 1, NULL);
    free(out);
    free(sql);
    return v;
}

static double key(const sw_value *obj, const char *name)
{
    const sw_value *v = sw_value_map_get(obj, name);
    double x = NAN;

    assert_non_null(v);
    if (v->type != SW_NULL)
        assert_true(sw_value_number(v, &x));
    return x;
}

/* The run of the sweep's sweep file, and its report; *json parsed. */
static void run_sweep(sw_h *h, sw_value **json, char **svg)
{
    char *script = sw_h_file(h, "trial.sh", trial), *text, *file, *out = NULL;

    assert_int_equal(chmod(script, 0755), 0);
    text = sw_aprintf("program: %s\nmethod: grid\n"
                      "metric: {name: loss, goal: minimize}\n"
                      "command: [\"${program}\", \"${args}\"]\n"
                      "retries: 1\nresources: {gpus: 0.5}\n"
                      "early_terminate: {type: hyperband, min_iter: 2, "
                      "eta: 2}\n"
                      "parameters:\n  x: {values: [3, 2, 30]}\n",
                      script);
    file = sw_h_file(h, "sweep.yaml", text);
    const char *run[] = {"run", file, "--gpus", "1", "--quiet", NULL};
    assert_int_equal(sw_h_run(h, run, NULL), 0);
    *svg = sw_aprintf("%s/plot.svg", h->dir);
    const char *rep[] = {"report", "--json", "--price", "2",
                         "--plot", *svg,     NULL};
    assert_int_equal(sw_h_run(h, rep, &out), 0);
    assert_int_equal(sw_json_parse(json, out, strlen(out)), SW_OK);
    free(out);
    free(text);
    free(file);
    free(script);
}

/* Four attempts on half of GPU 0: two finished, the failed one, the
 * stopped one; the retry went on from step 4. */
static void check_rows(const sw_h *h)
{
    assert_int_equal(sw_h_count(h, "select count(*) from attempts where gpu "
                                   "= 0.5 and gpus like '%\"0\"%'"),
                     4);
    assert_int_equal(sw_h_count(h, "select count(*) from attempts where "
                                   "outcome = 'finished'"),
                     2);
    assert_int_equal(sw_h_count(h, "select count(*) from attempts where "
                                   "outcome = 'failed' and attempt = 1"),
                     1);
    assert_int_equal(sw_h_count(h, "select count(*) from attempts where "
                                   "outcome = 'stopped'"),
                     1);
    assert_int_equal(sw_h_count(h, "select min(m.step) from metrics m join "
                                   "attempts a on a.run_id = m.run_id where "
                                   "a.attempt = 2 and m.time >= a.started_at"),
                     4);
}

#define A_WINDOW "m.time >= a.started_at and m.time <= a.ended_at"

static void check_time(const sw_h *h, const sw_value *j)
{
    /* differences taken in the store: its printf keeps 16 digits */
    double wall = qnum(h, "(select max(ended_at) - min(started_at) from "
                          "attempts)");

    assert_near(key(j, "wall_seconds"), wall);
    assert_near(key(j, "gpus"), 1);
    assert_near(key(j, "gpu_seconds_capacity"), wall);
    assert_near(
        key(j, "gpu_seconds_busy"),
        qnum(h, "(select sum((ended_at - started_at) * gpu) from attempts)"));
    assert_near(key(j, "trial_seconds"),
                qnum(h, "(select sum(ended_at - started_at) from attempts)"));
    assert_near(key(j, "gpu_seconds_idle"), wall - key(j, "gpu_seconds_busy"));
    assert_near(key(j, "occupancy"), key(j, "gpu_seconds_busy") / wall);
    assert_true(key(j, "occupancy") > 0.5 && key(j, "occupancy") <= 1);
    assert_near(key(j, "cost"), wall / 3600 * 2);
    assert_near(key(j, "cost_per_finished_run"), wall / 3600 * 2 / 2);
    assert_true(isnan(key(j, "mean_gpu_utilization")));
    /* the best run's value (its last, docs/metrics.md), as `sweep best`
     * ranks runs, and when it reported it */
    assert_near(key(j, "best_value"),
                qnum(h, "(select value from runs where state in ('finished',"
                        " 'stopped') and value is not null order by state <>"
                        " 'finished', value, idx limit 1)"));
    assert_near(
        key(j, "time_to_best_seconds"),
        qnum(h, "(select m.time from metrics m where m.name = (select metric"
                " from sweeps) and m.run_id = (select id from runs where state"
                " in ('finished', 'stopped') and value is not null order by"
                " state <> 'finished', value, idx limit 1) order by m.rowid"
                " desc limit 1) - (select min(started_at) from attempts)"));
}

/* Saved: the stopped run, at its own pace (the seconds between its first
 * and last reports over the steps between them: not its start-up), up to
 * the finished runs' 6 steps. Lost: the failed
 * attempt after its last report of a step the retry did not redo. */
static void check_saved_and_lost(const sw_h *h, const sw_value *j)
{
    double steps = qnum(h, "(select count(distinct m.step) from metrics m "
                           "join attempts a on a.run_id = m.run_id where "
                           "a.outcome = 'stopped')");
    double span = qnum(h, "(select max(m.time) - min(m.time) from metrics m "
                          "join attempts a on a.run_id = m.run_id where "
                          "a.outcome = 'stopped')");
    double lost =
        qnum(h, "(select a.ended_at - max(m.time) from attempts a "
                "join metrics m on m.run_id = a.run_id where "
                "a.outcome = 'failed' and m.step < 4 and " A_WINDOW ")");

    /* each attempt's first step is recorded: the retry's is where it
     * resumed, after the checkpoint of step 3 */
    assert_int_equal(sw_h_count(h, "select group_concat(a.attempt || ':' "
                                   "|| a.first_step) = '1:1,2:4' from "
                                   "(select * from attempts where run_id = "
                                   "(select run_id from attempts where "
                                   "outcome = 'failed') order by attempt) "
                                   "a"),
                     1);
    assert_true(steps >= 2 && steps < 6);
    assert_int_equal(sw_h_count(h, "select max(n) from (select count(distinct "
                                   "step) n from metrics m join runs r on "
                                   "r.id = m.run_id where r.state = "
                                   "'finished' group by r.id)"),
                     6);
    assert_near(key(j, "trial_seconds_saved_by_stopping"),
                (6 - steps) * span / (steps - 1));
    assert_near(key(j, "gpu_seconds_saved_by_stopping"),
                (6 - steps) * span / (steps - 1) * 0.5);
    assert_true(lost > 0.2 && lost < 5);
    assert_near(key(j, "trial_seconds_lost_to_failures"), lost);
    assert_near(key(j, "gpu_seconds_lost_to_failures"), lost * 0.5);
}

static void check_svg(const char *svg)
{
    char *cmd = sw_aprintf("/usr/bin/python3 -c \"import xml.dom.minidom, "
                           "sys; xml.dom.minidom.parse(sys.argv[1])\" '%s'",
                           svg);
    char *text = sw_test_slurp(svg, NULL), *p;
    int bars = 0;

    assert_int_equal(system(cmd), 0);
    assert_non_null(text);
    for (p = text; (p = strstr(p, "<title>")); p++)
        bars++;
    assert_int_equal(bars, 4);
    for (bars = 0, p = text; (p = strstr(p, "class=\"run\" data-run=\"")); p++)
        bars++;
    assert_int_equal(bars, 4); /* each bar names its run */
    assert_non_null(strstr(text, ": failed,"));
    assert_non_null(strstr(text, ": stopped,"));
    assert_non_null(strstr(text, "best loss logged so far, any run, any step"));
    free(text);
    free(cmd);
}

/* `sweep ls` gives each sweep's best value (as `sweep best` ranks it:
 * the least value of a finished run) and when it was
 * made: a date for people, ISO 8601 in UTC in --json (test_json.c reads
 * it back). */
static void check_ls(const sw_h *h)
{
    const char *table[] = {"ls", NULL};
    const char *json[] = {"ls", "--json", NULL};
    sw_value *doc = NULL;
    const sw_value *created;
    char *out = NULL;
    double best;

    assert_int_equal(sw_h_run(h, table, &out), 0);
    assert_non_null(strstr(out, "  best  "));
    assert_non_null(strstr(out, "created\n"));
    assert_non_null(strstr(out, "  GPU time  "));
    assert_non_null(strstr(out, "  20"));
    free(out);
    assert_int_equal(sw_h_run(h, json, &out), 0);
    assert_int_equal(sw_json_parse(&doc, out, strlen(out)), SW_OK);
    created = sw_value_map_get(doc, "created_at");
    assert_true(created && created->type == SW_STR);
    assert_int_equal(strlen(created->u.s), 24); /* 2026-12-01T23:10:56.303Z */
    assert_true(created->u.s[10] == 'T' && created->u.s[23] == 'Z');
    best = key(doc, "best");
    assert_near(best, qnum(h, "(select min(value) from runs where state = "
                              "'finished')"));
    /* the sweep has ended: the GPU time of its attempts, in hours */
    assert_near(key(doc, "gpu_hours"),
                qnum(h, "(select sum((ended_at - started_at) * gpu) from "
                        "attempts)") /
                    3600);
    sw_value_free(doc);
    free(out);
}

/* What people read of the same sweep: `sweep show` gives times as dates
 * and a missing value as "-" (not Python's None), and a query's table
 * shows each number as stored (a timestamp's every digit, not
 * 1.79618e+09). */
static void check_show_and_query(const sw_h *h)
{
    const char *show[] = {"show", "--", NULL, NULL};
    const char *query[] = {"query", "select started_at from runs limit 1",
                           NULL};
    const char *exact[] = {
        "query", "select 0.123456789 as x, 1796175056.303125 as t", NULL};
    char *id = NULL, *out = NULL, *nl;

    const char *ids[] = {"query", "select id from runs limit 1", "--csv", NULL};
    assert_int_equal(sw_h_run(h, ids, &id), 0);
    nl = strchr(id, '\n');
    assert_non_null(nl);
    nl[strcspn(nl + 1, "\n") + 1] = '\0';
    show[1] = nl + 1;
    show[2] = NULL;
    assert_int_equal(sw_h_run(h, show, &out), 0);
    assert_null(strstr(out, "None"));
    assert_non_null(strstr(out, "\nstarted_at     20"));
    assert_non_null(strstr(out, "(after "));
    assert_non_null(strstr(out, "\nsignal         -\n"));
    free(out);
    assert_int_equal(sw_h_run(h, query, &out), 0);
    assert_null(strstr(out, "e+09"));
    assert_non_null(strstr(out, "\n17"));
    free(out);
    /* and no number rounded: what SQLite stored, as --csv gives it */
    assert_int_equal(sw_h_run(h, exact, &out), 0);
    assert_string_equal(out,
                        "x            t\n0.123456789  1796175056.303125\n");
    free(out);
    free(id);
    check_ls(h);
}

static void test_report_of_a_real_sweep(void **state)
{
    sw_value *j = NULL;
    char *svg = NULL, *out = NULL;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    run_sweep(&h, &j, &svg);
    check_rows(&h);
    assert_near(key(j, "runs"), 3);
    assert_near(key(j, "finished"), 2);
    assert_near(key(j, "stopped"), 1);
    assert_near(key(j, "attempts"), 4);
    check_time(&h, j);
    check_saved_and_lost(&h, j);
    check_svg(svg);
    const char *text[] = {"report", "--timeout", "0", NULL};
    assert_int_equal(sw_h_run(&h, text, &out), 0);
    assert_non_null(strstr(out, "occupancy"));
    assert_non_null(strstr(out, "GPU time lost to failures"));
    free(out);
    check_show_and_query(&h);
    sw_value_free(j);
    free(svg);
    sw_h_dispose(&h);
}

static void test_bad_input_is_refused(void **state)
{
    sw_h h;

    (void)state;
    sw_h_init(&h);
    const char *price[] = {"report", "--price", "-1", NULL};
    assert_int_equal(sw_h_run(&h, price, NULL), 2);
    const char *timeout[] = {"report", "--timeout", "-1", NULL};
    assert_int_equal(sw_h_run(&h, timeout, NULL), 2);
    const char *word[] = {"report", "--timeout", "soon", NULL};
    assert_int_equal(sw_h_run(&h, word, NULL), 2);
    const char *two[] = {"report", "a", "b", NULL};
    assert_int_equal(sw_h_run(&h, two, NULL), 2);
    const char *none[] = {"report", NULL};
    assert_int_equal(sw_h_run(&h, none, NULL), 1);
    sw_h_dispose(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_of_a_real_sweep),
        cmocka_unit_test(test_bad_input_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
