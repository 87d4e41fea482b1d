/*
 * store_guard.c - what one query may cost: the limits of the query
 * connection, its watchdog, and the functions whose work is not bounded
 * by the size of what they return.
 *
 * SQLite checks SQLITE_LIMIT_LENGTH before it allocates a value, and an
 * interrupt between any two jumps of its virtual machine. What is left is
 * work inside one call of a built-in function: printf('%.*c', 2e9, 'x')
 * fills 2e9 characters one by one (7 s, before it gives NULL past the
 * limit), and instr, replace, trim, like and glob compare every position
 * of one value with the other (instr of a 64 MiB value by a 32 MiB one
 * runs for hours). Those names are taken over on the query connection:
 * each call checks the deadline and what the call would cost, refuses a
 * call that would be too big or too slow ("query stopped: ..."), and
 * runs the built-in on a private in-memory connection (same limits)
 * otherwise, so its answer is SQLite's own.
 *
 * The watchdog is a thread per query that calls sqlite3_interrupt at the
 * deadline: a progress handler only runs every N steps of the machine,
 * and a few steps that each copy 50 MiB run past it by seconds.
 */
#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "orchestrator/store/store_internal.h"
#include "sweeps/buf.h"
#include "sweeps/error.h"

/* Work one guarded call may do, in units of its inner loop: a memcmp
 * byte (instr, replace: ~0.05 ns each) or a character compared in a
 * loop of SQLite's (trim, like, glob: ~3 ns each). Each is about 0.4 s
 * on this project's CI machines, so --timeout holds within a second. */
#define WORK_MEMCMP ((int64_t)8 << 30)
#define WORK_CHARS ((int64_t)128 << 20)

#define MAX_ARGS 128 /* SQLITE_MAX_FUNCTION_ARG is 127 */

typedef enum { COST_PRINTF, COST_MEMCMP, COST_CHARS } cost_kind;

static const struct {
    const char *name;
    int nargs;      /* -1: any */
    cost_kind cost; /* how its work is bounded */
    int hay, pin;   /* for a product: the two arguments */
} guarded[] = {
    {"printf", -1, COST_PRINTF, 0, 0}, {"format", -1, COST_PRINTF, 0, 0},
    {"instr", 2, COST_MEMCMP, 0, 1},   {"replace", 3, COST_MEMCMP, 0, 1},
    {"trim", 2, COST_CHARS, 0, 1},     {"ltrim", 2, COST_CHARS, 0, 1},
    {"rtrim", 2, COST_CHARS, 0, 1},    {"like", 2, COST_CHARS, 1, 0},
    {"like", 3, COST_CHARS, 1, 0},     {"glob", 2, COST_CHARS, 1, 0},
};
#define N_GUARDED (sizeof(guarded) / sizeof(guarded[0]))

typedef struct guard guard;

typedef struct {
    guard *g;
    size_t fn; /* index in guarded[] */
} site;

/* The private connection that runs the built-ins, and a statement per
 * function and number of arguments, prepared on first use. */
struct guard {
    sw_store *st;
    sqlite3 *mem;
    site sites[N_GUARDED]; /* the user data of each function */
    sqlite3_stmt *calls[N_GUARDED][MAX_ARGS];
};

void sw_store__query_limits(sqlite3 *db)
{
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, SW_STORE_QUERY_MAX_BYTES);
    sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, SW_STORE_QUERY_MAX_SQL);
    sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, 1000);
    sqlite3_limit(db, SQLITE_LIMIT_COMPOUND_SELECT, 100);
    sqlite3_limit(db, SQLITE_LIMIT_VDBE_OP, 1000000);
    sqlite3_limit(db, SQLITE_LIMIT_FUNCTION_ARG, 127);
    sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 10000);
    sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, MAX_ARGS);
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 0);
    sqlite3_limit(db, SQLITE_LIMIT_WORKER_THREADS, 0);
}

/* ---- what a call costs ------------------------------------------------ */

/* The next argument of a printf `*`, as SQLite 3.40 reads it: an int
 * (the low 32 bits), negative for left-justified; 0 past the end. */
static int64_t star_arg(sqlite3_value **argv, int argc, int *next)
{
    uint64_t v = *next < argc ? (uint64_t)sqlite3_value_int64(argv[*next]) : 0;
    int64_t w = (int32_t)(uint32_t)v;

    (*next)++;
    return w < 0 ? -w : w;
}

/* A number of the format at *p (digits or `*`); moves *p past it.
 * Digits wrap as SQLite's do (unsigned, then the low 31 bits). */
static int64_t fmt_number(const char **p, sqlite3_value **argv, int argc,
                          int *next)
{
    uint32_t n = 0;

    if (**p == '*') {
        (*p)++;
        return star_arg(argv, argc, next);
    }
    while (**p >= '0' && **p <= '9') {
        n = n * 10 + (uint32_t)(**p - '0');
        (*p)++;
    }
    return n & 0x7fffffff;
}

/* The fewest bytes printf(argv[0], ...) writes: every width, and the
 * precision of each %c (its count of repeats). Past the length limit the
 * answer is too big whatever the rest is, and the call is refused before
 * SQLite's printf loops over each character of it. */
static int64_t printf_floor(sqlite3_value **argv, int argc)
{
    const char *p = (const char *)sqlite3_value_text(argv[0]);
    int64_t sum = 0;
    int next = 1;

    while (p && *p && sum <= SW_STORE_QUERY_MAX_BYTES) {
        int64_t width, precision = 0;

        if (*p++ != '%')
            continue;
        while (*p && strchr("-+ #!,0", *p))
            p++;
        width = fmt_number(&p, argv, argc, &next);
        if (*p == '.') {
            p++;
            precision = fmt_number(&p, argv, argc, &next);
        }
        while (*p == 'l')
            p++;
        if (*p == '\0')
            break;
        if (*p != '%' && *p != 'n')
            next++;
        sum += width;
        if (*p == 'c')
            sum += precision;
        p++;
    }
    return sum;
}

/* The work of a call, in the units of its kind. */
static int64_t work(size_t fn, sqlite3_value **argv)
{
    int64_t a = sqlite3_value_bytes(argv[guarded[fn].hay]);
    int64_t b = sqlite3_value_bytes(argv[guarded[fn].pin]);

    return (a + 1) * (b + 1);
}

/* ---- the guarded call ------------------------------------------------- */

/* The statement that runs the built-in `fn` with `argc` arguments. */
static sqlite3_stmt *call_stmt(guard *g, size_t fn, int argc)
{
    sw_buf sql = SW_BUF_INIT;

    if (argc < 0 || argc >= MAX_ARGS)
        return NULL;
    if (!g->calls[fn][argc]) {
        sw_buf_printf(&sql, "SELECT %s(", guarded[fn].name);
        for (int i = 1; i <= argc; i++)
            sw_buf_printf(&sql, "%s?%d", i > 1 ? "," : "", i);
        sw_buf_puts(&sql, ")");
        sqlite3_prepare_v2(g->mem, sw_buf_cstr(&sql), -1, &g->calls[fn][argc],
                           NULL);
        sw_buf_dispose(&sql);
    }
    return g->calls[fn][argc];
}

/* Refuses the call: the reason is kept for the query's error line. */
static void stop(sqlite3_context *ctx, guard *g, int code, const char *fmt, ...)
    SW_PRINTF(4, 5);
static void stop(sqlite3_context *ctx, guard *g, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(g->st->stopped, sizeof(g->st->stopped), fmt, ap);
    va_end(ap);
    sqlite3_result_error(ctx, g->st->stopped, -1);
    sqlite3_result_error_code(ctx, code);
}

/* Runs the built-in on the private connection; its answer is the call's. */
static void call_builtin(sqlite3_context *ctx, guard *g, size_t fn, int argc,
                         sqlite3_value **argv)
{
    sqlite3_stmt *s = call_stmt(g, fn, argc);
    int rc;

    if (!s) {
        sqlite3_result_error(ctx, sqlite3_errmsg(g->mem), -1);
        return;
    }
    for (int i = 0; i < argc; i++)
        sqlite3_bind_value(s, i + 1, argv[i]);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW && guarded[fn].cost == COST_PRINTF && argc > 0 &&
        sqlite3_column_type(s, 0) == SQLITE_NULL &&
        sqlite3_value_type(argv[0]) != SQLITE_NULL)
        sqlite3_result_error_toobig(ctx); /* SQLite's printf gives NULL */
    else if (rc == SQLITE_ROW)
        sqlite3_result_value(ctx, sqlite3_column_value(s, 0));
    else {
        sqlite3_result_error(ctx, sqlite3_errmsg(g->mem), -1);
        sqlite3_result_error_code(ctx, sqlite3_errcode(g->mem));
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
}

static void guarded_call(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const site *at = sqlite3_user_data(ctx);
    guard *g = at->g;
    const char *name = guarded[at->fn].name;
    int64_t w;

    if (g->st->q_deadline > 0 && sw_store__now() > g->st->q_deadline) {
        sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
        return;
    }
    if (argc < 1)
        ; /* printf() with no format: SQLite's answer (NULL) */
    else if (guarded[at->fn].cost == COST_PRINTF) {
        if (printf_floor(argv, argc) > SW_STORE_QUERY_MAX_BYTES) {
            sqlite3_result_error_toobig(ctx);
            return;
        }
    } else if ((w = work(at->fn, argv)) > (guarded[at->fn].cost == COST_MEMCMP
                                               ? WORK_MEMCMP
                                               : WORK_CHARS)) {
        stop(ctx, g, SQLITE_ERROR,
             "%s() of values of %d and %d bytes would take too long "
             "(the limit of a query is their product: %lld)",
             name, sqlite3_value_bytes(argv[guarded[at->fn].hay]),
             sqlite3_value_bytes(argv[guarded[at->fn].pin]),
             (long long)(guarded[at->fn].cost == COST_MEMCMP ? WORK_MEMCMP
                                                             : WORK_CHARS));
        return;
    }
    call_builtin(ctx, g, at->fn, argc, argv);
}

/* ---- install ---------------------------------------------------------- */

/* The destructor of the first function: `p` is its site. */
static void guard_free(void *p)
{
    guard *g = ((site *)p)->g;

    for (size_t f = 0; f < N_GUARDED; f++)
        for (int i = 0; i < MAX_ARGS; i++)
            sqlite3_finalize(g->calls[f][i]);
    sqlite3_close(g->mem);
    free(g);
}

int sw_store__guard(sw_store *st, sqlite3 *db)
{
    guard *g = sw_calloc(1, sizeof(*g));
    int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    int rc;

    g->st = st;
    rc = sqlite3_open_v2(":memory:", &g->mem,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        g->sites[0].g = g;
        guard_free(&g->sites[0]);
        return sw_error_set(SW_EIO, "store %s: query: functions: %s", st->path,
                            sqlite3_errstr(rc));
    }
    sw_store__query_limits(g->mem);
    /* the first function owns the guard: closing db frees it (and so
     * does a failure to create it) */
    for (size_t f = 0; rc == SQLITE_OK && f < N_GUARDED; f++) {
        g->sites[f] = (site){g, f};
        rc = sqlite3_create_function_v2(db, guarded[f].name, guarded[f].nargs,
                                        flags, &g->sites[f], guarded_call, NULL,
                                        NULL, f == 0 ? guard_free : NULL);
    }
    if (rc != SQLITE_OK)
        return sw_error_set(SW_EIO, "store %s: query: functions: %s", st->path,
                            sqlite3_errstr(rc));
    return SW_OK;
}

/* ---- the watchdog ----------------------------------------------------- */

struct sw_store__watch {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sqlite3 *db;
    struct timespec at; /* CLOCK_MONOTONIC */
    bool done;
    pthread_t thread;
};

static void *watch(void *p)
{
    sw_store__watch *w = p;

    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        if (pthread_cond_timedwait(&w->cv, &w->mu, &w->at) == ETIMEDOUT &&
            !w->done) {
            /* under the lock: the query is still running */
            sqlite3_interrupt(w->db);
            break;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

sw_store__watch *sw_store__watch_start(sqlite3 *db, double seconds)
{
    sw_store__watch *w;
    pthread_condattr_t ca;
    double whole;

    if (seconds <= 0)
        return NULL;
    if (seconds > 1e9)
        seconds = 1e9;
    w = sw_calloc(1, sizeof(*w));
    w->db = db;
    clock_gettime(CLOCK_MONOTONIC, &w->at);
    seconds += (double)w->at.tv_nsec / 1e9;
    whole = (double)(int64_t)seconds;
    w->at.tv_sec += (time_t)whole;
    w->at.tv_nsec = (long)((seconds - whole) * 1e9);
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&w->thread, NULL, watch, w) != 0) {
        /* without it, the deadline is still checked between calls */
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    return w;
}

void sw_store__watch_stop(sw_store__watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
