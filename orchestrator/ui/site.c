/*
 * site.c - the dashboard's pages and JSON API (docs/dashboard.md).
 *
 * Every API answer is one JSON document that SQLite itself builds
 * (json_object, json_group_array) from the store's public schema, so
 * 10,000 runs cost one statement and no copy through C structs. What
 * goes into a statement from a request is either an id the store itself
 * returned (sweeps and runs are looked up first) or a quoted literal;
 * nothing else of the request reaches SQL. Each request opens its own
 * read-only connection with a time limit, so a huge sweep can slow an
 * answer, never the engine, and never for long.
 *
 * Answers carry `seq`, the last event published before the store was
 * read: a page that then streams events from `seq` misses none, and may
 * see a few twice (it applies them idempotently).
 */
#include "orchestrator/ui/site.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "orchestrator/report.h"
#include "orchestrator/store/store.h"
#include "sweeps/buf.h"
#include "sweeps/error.h"
#include "sweeps/value.h"

#define API "/api/v1/"
#define READ_LIMIT_S 20.0 /* one request's statements, all together */
#define TAIL_BYTES 16384  /* of a run's stderr.log and stdout.log */
#define ARG_MAX_LEN 4096  /* a query argument past this is refused */
#define RUNS_ARG_MAX 1000 /* run ids in one ?runs= */

struct sw_site {
    char *home;
};

sw_site *sw_site_new(const char *home)
{
    sw_site *site = sw_calloc(1, sizeof(*site));
    char cwd[4096];

    /* absolute now: the home may not exist yet, and no one chdir()s */
    if (home[0] != '/' && getcwd(cwd, sizeof(cwd)))
        site->home = sw_aprintf("%s/%s", cwd, home);
    else
        site->home = sw_strdup(home);
    return site;
}

void sw_site_free(sw_site *site)
{
    if (!site)
        return;
    free(site->home);
    free(site);
}

/* ---- answers -------------------------------------------------------- */

static void reply_buf(sw_http_reply *out, int status, sw_buf *b)
{
    out->status = status;
    out->type = "application/json";
    out->len = b->len;
    out->data = sw_buf_detach(b);
    out->owned = true;
}

static void reply_error(sw_http_reply *out, int status, const char *msg)
{
    sw_buf b = SW_BUF_INIT;

    sw_buf_puts(&b, "{\"error\": ");
    sw_json_write_string(&b, msg);
    sw_buf_puts(&b, "}\n");
    reply_buf(out, status, &b);
}

/* An SW_E code as the status that says whose fault it is. */
static int status_of(int error)
{
    return error == SW_ENOTFOUND ? 404 : error == SW_EINVALID ? 400 : 500;
}

/* ---- SQL ------------------------------------------------------------ */

/* Appends `s` as an SQL string literal. False for what no literal should
 * hold (a NUL cannot arrive here; control characters are refused). */
static bool put_literal(sw_buf *b, const char *s)
{
    const char *p;

    for (p = s; *p; p++)
        if ((unsigned char)*p < 0x20)
            return false;
    sw_buf_puts(b, "'");
    for (p = s; *p; p++)
        if (*p == '\'')
            sw_buf_puts(b, "''");
        else
            sw_buf_putc(b, *p);
    sw_buf_puts(b, "'");
    return true;
}

static int take_json(void *ctx, int64_t row, int ncols,
                     const char *const *names, const sw_value *const *values)
{
    sw_buf *b = ctx;

    (void)names;
    if (row != 0 || ncols < 1)
        return SW_OK;
    if (values[0]->type == SW_STR)
        sw_buf_puts(b, values[0]->u.s);
    else
        sw_buf_puts(b, values[0]->type == SW_NULL ? "null" : "[]");
    return SW_OK;
}

/* Runs `sql`, which selects one JSON text, and appends that text. */
static int put_json(sw_store *st, const char *sql, sw_buf *b)
{
    size_t len = b->len;
    int error = sw_store_query(st, sql, take_json, b);

    if (!error && b->len == len)
        sw_buf_puts(b, "null");
    return error;
}

/* ---- requests ------------------------------------------------------- */

typedef struct {
    sw_site *site;
    const sw_http_get *req;
    sw_store *st;
    sw_buf out;
    unsigned long long seq;
} call;

static int open_store(call *c)
{
    char *path = sw_aprintf("%s/sweep.db", c->site->home);
    struct stat sb;
    int error;

    if (stat(path, &sb) != 0) {
        error =
            sw_error_set(SW_ENOTFOUND, "no sweeps in %s yet", c->site->home);
    } else if ((error = sw_store_open(&c->st, path, false)) == SW_OK) {
        sw_store_read_limit(c->st, READ_LIMIT_S);
        sw_store_query_timeout(c->st, READ_LIMIT_S);
    }
    free(path);
    return error;
}

/* The sweep `key` names (id, prefix or name), as the store has it. */
static int find_sweep(call *c, const char *key, sw_sweep_rec *s)
{
    if (strlen(key) > 256)
        return sw_error_set(SW_EINVALID, "a sweep key that long names none");
    return sw_store_get_sweep(c->st, key, s);
}

/* The sweep's best run as `sweep best` ranks them (sw_store_best_runs):
 * finished before stopped, then by value (a run's value is its last,
 * docs/metrics.md), ties by idx. */
#define BEST_RUN                                                               \
    " r.sweep_id = s.id and (r.state in ('finished', 'stopped') or (r.state"   \
    " = 'canceled' and r.reason = 'target reached')) and r.value is not"       \
    " null order by r.state <> 'finished', r.value * (select"                  \
    " case when goal = 'maximize' then -1 else 1 end from sweeps g where"      \
    " g.id = r.sweep_id), r.idx limit 1"

static int api_sweeps(call *c)
{
    static const char sql[] =
        "select json_group_array(json_object("
        "'id', s.id, 'name', s.name, 'method', s.method, 'metric', s.metric,"
        " 'goal', s.goal, 'state', s.state, 'created_at', s.created_at,"
        " 'ended_at', s.ended_at, 'parallel', s.parallel,"
        " 'backend', s.backend, 'git_commit', s.git_commit,"
        " 'git_dirty', s.git_dirty,"
        " 'runs', (select count(*) from runs r where r.sweep_id = s.id),"
        " 'states', (select json_group_object(state, n) from (select state,"
        "   count(*) as n from runs r where r.sweep_id = s.id group by state)),"
        " 'best', (select value from runs r where" BEST_RUN "),"
        " 'best_run', (select id from runs r where" BEST_RUN ")))"
        " from (select * from sweeps order by created_at desc, id) s";

    sw_buf_printf(&c->out, "{\"seq\": %llu, \"sweeps\": ", c->seq);
    return put_json(c->st, sql, &c->out);
}

/* The sweep's record, the git facts it started from and `sweep
 * report`'s figures, as of now. */
static int api_sweep(call *c, const sw_sweep_rec *s)
{
    struct timespec now;
    sw_report_data d;
    sw_report r;
    sw_buf sql = SW_BUF_INIT;
    int error;

    sw_buf_printf(&sql,
                  "select json_object('id', id, 'name', name, 'file', file,"
                  " 'config', config, 'method', method, 'metric', metric,"
                  " 'goal', goal, 'state', state, 'cwd', cwd,"
                  " 'parallel', parallel, 'created_at', created_at,"
                  " 'ended_at', ended_at, 'git_commit', git_commit,"
                  " 'git_dirty', git_dirty, 'git', json(git),"
                  " 'backend', backend) from sweeps where id = '%s'",
                  s->id);
    sw_buf_printf(&c->out, "{\"seq\": %llu, \"sweep\": ", c->seq);
    error = put_json(c->st, sw_buf_cstr(&sql), &c->out);
    sw_buf_dispose(&sql);
    if (error)
        return error;
    clock_gettime(CLOCK_REALTIME, &now);
    if ((error = sw_report_load(c->st, s->id, -1,
                                (double)now.tv_sec + now.tv_nsec / 1e9, &d)))
        return error;
    sw_report_compute(&r, &d);
    sw_buf_puts(&c->out, ", \"report\": ");
    sw_report_write_json(&c->out, &d, &r);
    sw_report_data_dispose(&d);
    return SW_OK;
}

/* A run r's labels (`sweep tag`, `sweep note`), as json_object's last
 * members: its tags in the order they were added, and its note or null.
 * A subquery's JSON loses its type, hence json(). */
#define LABELS_SQL                                                             \
    "json((select json_group_array(tag) from (select tag from tags t"          \
    " where t.run_id = r.id order by t.created_at, t.tag))), 'note',"          \
    " (select text from notes n where n.run_id = r.id)"

static int api_runs(call *c, const sw_sweep_rec *s)
{
    sw_buf sql = SW_BUF_INIT;
    int error;

    sw_buf_printf(
        &sql,
        "select json_group_array(json_object('id', id, 'idx', idx,"
        " 'state', state, 'params', json(params), 'value', value,"
        " 'step', (select max(step) from metrics m where m.run_id = r.id),"
        " 'gpus', json(gpus), 'created_at', created_at,"
        " 'started_at', started_at, 'ended_at', ended_at, 'reason', reason,"
        " 'exit_code', exit_code, 'attempts', attempts, 'tags', " LABELS_SQL
        "))"
        " from (select * from runs where sweep_id = '%s' order by idx) r",
        s->id);
    sw_buf_printf(&c->out, "{\"seq\": %llu, \"runs\": ", c->seq);
    error = put_json(c->st, sw_buf_cstr(&sql), &c->out);
    sw_buf_dispose(&sql);
    return error;
}

/* Appends `and m.run_id in (...)` for ?runs=ID,ID (ids of this sweep
 * only: each must look like one). */
static int put_run_filter(sw_buf *sql, const char *runs)
{
    const char *p = runs, *comma;
    size_t n = 0, len;
    char id[128];

    sw_buf_puts(sql, " and m.run_id in (");
    while (*p) {
        comma = strchr(p, ',');
        len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0 || len >= sizeof(id) || ++n > RUNS_ARG_MAX ||
            strspn(p, "0123456789abcdefABCDEF-") < len)
            return sw_error_set(SW_EINVALID,
                                "runs: a list of run ids, comma-separated "
                                "(at most %d)",
                                RUNS_ARG_MAX);
        memcpy(id, p, len);
        id[len] = '\0';
        sw_buf_printf(sql, "%s'%s'", n > 1 ? ", " : "", id);
        p += len + (comma != NULL);
    }
    sw_buf_puts(sql, ")");
    return SW_OK;
}

/* One metric's values for the sweep's runs (or ?runs=): for each run,
 * [step, value, time] in the order they arrived. */
static int api_series(call *c, const sw_sweep_rec *s)
{
    const char *name = sw_http_get_arg(c->req, "name");
    const char *runs = sw_http_get_arg(c->req, "runs");
    sw_buf sql = SW_BUF_INIT;
    int error = SW_OK;

    if (!name || !*name)
        name = s->metric;
    if (!name)
        return sw_error_set(SW_EINVALID, "name: which metric (the sweep has "
                                         "no metric of its own)");
    sw_buf_puts(&sql, "select json_group_object(run_id, json(pts)) from"
                      " (select run_id, json_group_array(json_array(step,"
                      " value, round(time, 3))) as pts from (select m.run_id,"
                      " m.step, m.value, m.time from metrics m join runs r on"
                      " r.id = m.run_id where r.sweep_id = ");
    sw_buf_printf(&sql, "'%s' and m.name = ", s->id);
    if (!put_literal(&sql, name))
        error = sw_error_set(SW_EINVALID, "name: not a metric's name");
    if (!error && runs && *runs)
        error = put_run_filter(&sql, runs);
    sw_buf_puts(&sql, " order by m.run_id, m.rowid) group by run_id)");
    if (!error) {
        sw_buf_printf(&c->out, "{\"seq\": %llu, \"name\": ", c->seq);
        sw_json_write_string(&c->out, name);
        sw_buf_puts(&c->out, ", \"series\": ");
        error = put_json(c->st, sw_buf_cstr(&sql), &c->out);
    }
    sw_buf_dispose(&sql);
    return error;
}

/* The names of the metrics its newest runs reported. */
static int api_names(call *c, const sw_sweep_rec *s)
{
    sw_buf sql = SW_BUF_INIT;
    int error;

    sw_buf_printf(&sql,
                  "select json_group_array(name) from (select distinct name"
                  " from metrics where run_id in (select id from runs where"
                  " sweep_id = '%s' order by idx desc limit 200) order by"
                  " name)",
                  s->id);
    sw_buf_puts(&c->out, "{\"names\": ");
    error = put_json(c->st, sw_buf_cstr(&sql), &c->out);
    sw_buf_dispose(&sql);
    return error;
}

/* Every attempt that held devices (ended ones from `attempts`, running
 * ones from `runs`), and the devices' samples. */
static int api_gpus(call *c, const sw_sweep_rec *s)
{
    sw_buf sql = SW_BUF_INIT;
    int error;

    sw_buf_printf(
        &sql,
        "select json_group_array(json_object('run', run_id, 'attempt',"
        " attempt, 'start', started_at, 'end', ended_at, 'outcome', outcome,"
        " 'devices', json_extract(gpus, '$.devices'), 'share',"
        " json_extract(gpus, '$.share'))) from (select a.run_id, a.attempt,"
        " a.started_at, a.ended_at, a.outcome, a.gpus from attempts a join"
        " runs r on r.id = a.run_id where r.sweep_id = '%s' and"
        " a.started_at is not null union all select id, attempts,"
        " started_at, null, 'running', gpus from runs where sweep_id = '%s'"
        " and state = 'running' and started_at is not null order by 3)",
        s->id, s->id);
    sw_buf_printf(&c->out, "{\"seq\": %llu, \"attempts\": ", c->seq);
    error = put_json(c->st, sw_buf_cstr(&sql), &c->out);
    sw_buf_dispose(&sql);
    sw_buf_printf(&sql,
                  "select json_group_array(json_array(device, round(time, 3),"
                  " utilization, memory_used, memory_total, trials)) from"
                  " (select * from gpu_samples where sweep_id = '%s' order"
                  " by time)",
                  s->id);
    sw_buf_puts(&c->out, ", \"samples\": ");
    if (!error)
        error = put_json(c->st, sw_buf_cstr(&sql), &c->out);
    sw_buf_dispose(&sql);
    return error;
}

/* The last TAIL_BYTES of a run's log, as a JSON string ("" when none). */
static void put_tail(sw_buf *b, const char *home, const char *run,
                     const char *log)
{
    char *path = sw_aprintf("%s/runs/%s/%s", home, run, log);
    char buf[TAIL_BYTES + 1];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = 0;
    off_t end;

    free(path);
    if (fd >= 0 && (end = lseek(fd, 0, SEEK_END)) > 0) {
        lseek(fd, end > TAIL_BYTES ? end - TAIL_BYTES : 0, SEEK_SET);
        n = read(fd, buf, TAIL_BYTES);
    }
    if (fd >= 0)
        close(fd);
    buf[n > 0 ? n : 0] = '\0';
    sw_json_write_string(b, buf); /* a NUL in a log ends the tail there */
}

static int api_run(call *c, const char *id)
{
    sw_buf sql = SW_BUF_INIT;
    sw_run_rec r;
    int error;

    if (strlen(id) > 128 || (error = sw_store_get_run(c->st, id, &r)))
        return strlen(id) > 128
                   ? sw_error_set(SW_ENOTFOUND, "no run %.40s...", id)
                   : error;
    sw_buf_printf(
        &sql,
        "select json_object('id', id, 'sweep_id', sweep_id, 'idx', idx,"
        " 'state', state, 'params', json(params), 'argv', json(argv),"
        " 'value', value, 'reason', reason, 'exit_code', exit_code,"
        " 'signal', signal, 'attempts', attempts, 'lost', lost,"
        " 'created_at', created_at, 'started_at', started_at,"
        " 'ended_at', ended_at, 'gpus', json(gpus), 'git_commit', git_commit,"
        " 'git_dirty', git_dirty, 'step', (select max(step) from metrics m"
        " where m.run_id = runs.id), 'attempts_list', (select"
        " json_group_array(json_object('attempt', attempt, 'started_at',"
        " started_at, 'ended_at', ended_at, 'outcome', outcome, 'reason',"
        " reason)) from attempts a where a.run_id = runs.id)) from runs"
        " where id = '%s'",
        r.id);
    sw_buf_printf(&c->out, "{\"seq\": %llu, \"run\": ", c->seq);
    error = put_json(c->st, sw_buf_cstr(&sql), &c->out);
    if (!error) {
        sw_buf_puts(&c->out, ", \"stderr_tail\": ");
        put_tail(&c->out, c->site->home, r.id, "stderr.log");
        sw_buf_puts(&c->out, ", \"stdout_tail\": ");
        put_tail(&c->out, c->site->home, r.id, "stdout.log");
    }
    sw_buf_dispose(&sql);
    sw_run_rec_dispose(&r);
    return error;
}

/* All of a run's values: for each name, [step, value, time]. */
static int api_run_metrics(call *c, const char *id)
{
    sw_buf sql = SW_BUF_INIT;
    sw_run_rec r;
    int error;

    if (strlen(id) > 128)
        return sw_error_set(SW_ENOTFOUND, "no run %.40s...", id);
    if ((error = sw_store_get_run(c->st, id, &r)))
        return error;
    sw_buf_printf(&sql,
                  "select json_group_object(name, json(pts)) from (select"
                  " name, json_group_array(json_array(step, value,"
                  " round(time, 3))) as pts from (select name, step, value,"
                  " time from metrics where run_id = '%s' order by rowid)"
                  " group by name)",
                  r.id);
    sw_buf_printf(&c->out, "{\"seq\": %llu, \"run\": ", c->seq);
    sw_json_write_string(&c->out, r.id);
    sw_buf_puts(&c->out, ", \"metrics\": ");
    error = put_json(c->st, sw_buf_cstr(&sql), &c->out);
    sw_buf_dispose(&sql);
    sw_run_rec_dispose(&r);
    return error;
}

/* /api/v1/sweeps/KEY[/WHAT] */
static int route_sweep(call *c, const char *rest)
{
    const char *slash = strchr(rest, '/');
    char *key =
        slash ? sw_strndup(rest, (size_t)(slash - rest)) : sw_strdup(rest);
    const char *what = slash ? slash + 1 : "";
    sw_sweep_rec s;
    int error;

    if ((error = find_sweep(c, key, &s)) != SW_OK) {
        free(key);
        return error;
    }
    free(key);
    if (!*what)
        error = api_sweep(c, &s);
    else if (strcmp(what, "runs") == 0)
        error = api_runs(c, &s);
    else if (strcmp(what, "metrics") == 0)
        error = api_series(c, &s);
    else if (strcmp(what, "names") == 0)
        error = api_names(c, &s);
    else if (strcmp(what, "gpus") == 0)
        error = api_gpus(c, &s);
    else
        error = sw_error_set(SW_ENOTFOUND, "no such endpoint: %.60s", what);
    sw_sweep_rec_dispose(&s);
    return error;
}

/* /api/v1/runs/ID[/metrics] */
static int route_run(call *c, const char *rest)
{
    const char *slash = strchr(rest, '/');
    char *id;
    int error;

    if (slash && strcmp(slash, "/metrics") != 0)
        return sw_error_set(SW_ENOTFOUND, "no such endpoint: %.60s", slash);
    id = slash ? sw_strndup(rest, (size_t)(slash - rest)) : sw_strdup(rest);
    error = slash ? api_run_metrics(c, id) : api_run(c, id);
    free(id);
    return error;
}

static int route_api(call *c, const char *path)
{
    int error;

    if (strcmp(path, "sweeps") != 0 && strncmp(path, "sweeps/", 7) != 0 &&
        strncmp(path, "runs/", 5) != 0)
        return sw_error_set(SW_ENOTFOUND,
                            "no such endpoint: " API "%.60s (docs/dashboard.md"
                            " lists them)",
                            path);
    if ((error = open_store(c)) != SW_OK)
        return error;
    if (strcmp(path, "sweeps") == 0)
        error = api_sweeps(c);
    else if (strncmp(path, "sweeps/", 7) == 0)
        error = route_sweep(c, path + 7);
    else
        error = route_run(c, path + 5);
    if (!error)
        sw_buf_puts(&c->out, "}\n");
    return error;
}

/* Whether every query argument the API reads is of a sane length. */
static bool args_ok(const sw_http_get *req)
{
    static const char *const names[] = {"name", "runs", "since"};
    const char *v;
    size_t i;

    for (i = 0; i < sizeof(names) / sizeof(*names); i++)
        if ((v = sw_http_get_arg(req, names[i])) &&
            strlen(v) > (i == 1 ? 64 * RUNS_ARG_MAX : ARG_MAX_LEN))
            return false;
    return true;
}

static bool serve_asset(const char *path, sw_http_reply *out)
{
    size_t i;

    if (strcmp(path, "/") == 0)
        path = "/index.html";
    for (i = 0; i < sw_site_n_assets; i++) {
        if (strcmp(sw_site_assets[i].path, path) != 0)
            continue;
        out->type = sw_site_assets[i].type;
        out->data = sw_site_assets[i].data;
        out->len = sw_site_assets[i].len;
        out->immutable = strcmp(path, "/index.html") != 0;
        return true;
    }
    return false;
}

void sw_site_get(void *ctx, const sw_http_get *req, sw_http_reply *out)
{
    call c = {ctx, req, NULL, SW_BUF_INIT, sw_http_get_seq(req)};
    const char *path = sw_http_get_path(req);
    int error;

    if (serve_asset(path, out))
        return;
    if (strcmp(path, API "events") == 0) {
        out->stream = true;
        return;
    }
    if (strncmp(path, API, strlen(API)) != 0) {
        reply_error(out, 404, "no such page");
        return;
    }
    if (!args_ok(req)) {
        reply_error(out, 414, "a query argument is over its limit");
        return;
    }
    error = route_api(&c, path + strlen(API));
    sw_store_close(c.st);
    if (error) {
        sw_buf_dispose(&c.out);
        reply_error(out, status_of(error), sw_error_last());
        return;
    }
    reply_buf(out, 200, &c.out);
}
