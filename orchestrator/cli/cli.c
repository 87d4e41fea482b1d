/*
 * cli.c - what the subcommands share: loading a sweep file with its
 * problems printed, describing a search space, quoting an argv for
 * display, parsing numeric arguments, writing times for people (local)
 * and for scripts (ISO 8601, UTC).
 */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/engine/engine.h"

int sw_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "sweep %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see sweep %s --help)\n", cmd);
    return SW_EXIT_USAGE;
}

int sw_cli_load(sw_spec **out, const char *path)
{
    int error = sw_engine_load(out, path, NULL, NULL);

    if (error == SW_EINVALID)
        return SW_EXIT_USAGE;
    return error ? SW_EXIT_FAIL : SW_EXIT_OK;
}

bool sw_cli_parse_u64(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (!s || !*s || *s == '-' || *s == '+')
        return false;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end)
        return false;
    *out = (uint64_t)v;
    return true;
}

bool sw_cli_parse_seconds(const char *s, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(s, &end);
    return *s && !*end && !errno && *out >= 0 && *out <= 1e9;
}

bool sw_cli_parse_price(const char *s, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(s, &end);
    return end != s && !*end && !errno && isfinite(*out) && *out >= 0;
}

int sw_cli_double_dash(int argc, char **argv)
{
    int i;

    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0)
            return i;
    return argc;
}

bool sw_cli_local_time(char *out, size_t n, double t, bool seconds)
{
    time_t secs = (time_t)t;
    struct tm tm;

    return localtime_r(&secs, &tm) &&
           strftime(out, n, seconds ? "%Y-%m-%d %H:%M:%S" : "%Y-%m-%d %H:%M",
                    &tm) > 0;
}

sw_value *sw_cli_iso_time(double t)
{
    char text[40];
    int64_t ms;
    time_t secs;
    struct tm tm;

    if (!(t > 0) || !isfinite(t) || t > 253402300799.0) /* after 9999 */
        return sw_value_null();
    ms = llround(t * 1000);
    secs = (time_t)(ms / 1000);
    if (!gmtime_r(&secs, &tm) ||
        strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
        return sw_value_null();
    snprintf(text + strlen(text), sizeof(text) - strlen(text), ".%03dZ",
             (int)(ms % 1000));
    return sw_value_str(text);
}

static bool needs_quotes(const char *s)
{
    const char *p;

    if (!*s)
        return true;
    for (p = s; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789-_=./:,+@%",
                    *p))
            return true;
    return false;
}

void sw_cli_quote_argv(sw_buf *out, char *const *argv)
{
    const char *p;
    size_t i;

    for (i = 0; argv[i]; i++) {
        if (i)
            sw_buf_putc(out, ' ');
        if (!needs_quotes(argv[i])) {
            sw_buf_puts(out, argv[i]);
            continue;
        }
        sw_buf_putc(out, '\'');
        for (p = argv[i]; *p; p++) {
            if (*p == '\'')
                sw_buf_puts(out, "'\\''");
            else
                sw_buf_putc(out, *p);
        }
        sw_buf_putc(out, '\'');
    }
}

int sw_cli_format_top(int argc, char **argv, const char *cmd, const char *help,
                      sw_table_format *fmt, bool *helped, uint64_t *top)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"csv", no_argument, NULL, 'c'},
                                         {"top", required_argument, NULL, 't'},
                                         {NULL, 0, NULL, 0}};
    int c;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            *helped = true;
            return SW_EXIT_OK;
        } else if (c == 'j') {
            *fmt = SW_TABLE_JSON;
        } else if (c == 'c') {
            *fmt = SW_TABLE_CSV;
        } else if (c == 't' && top) {
            if (!sw_cli_parse_u64(optarg, top) || *top == 0)
                return sw_cli_usage(cmd,
                                    "--top wants a count from 1, not "
                                    "'%s'",
                                    optarg);
        } else {
            return sw_cli_usage(cmd, "unknown option");
        }
    }
    return SW_EXIT_OK;
}

int sw_cli_format(int argc, char **argv, const char *cmd, const char *help,
                  sw_table_format *fmt, bool *helped)
{
    return sw_cli_format_top(argc, argv, cmd, help, fmt, helped, NULL);
}

int sw_cli_open_store_as(sw_store **out, const char *cmd, bool writer)
{
    const char *home = sw_engine_home();
    char *path = sw_aprintf("%s/sweep.db", home);
    struct stat st;
    int error;

    if (stat(path, &st) != 0) {
        fprintf(stderr,
                "sweep%s%s: no sweeps in %s yet (sweep run FILE creates "
                "one; SWEEP_HOME sets the folder)\n",
                cmd ? " " : "", cmd ? cmd : "", home);
        free(path);
        return SW_EXIT_FAIL;
    }
    error = sw_store_open(out, path, writer);
    if (error)
        fprintf(stderr, "sweep%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "",
                sw_error_last());
    free(path);
    return error ? SW_EXIT_FAIL : SW_EXIT_OK;
}

double sw_cli_waited(const sw_run_rec *r)
{
    struct timespec now;
    double t;

    if (!r->pending_reason || !(r->started_at > 0))
        return -1;
    clock_gettime(CLOCK_REALTIME, &now);
    t = (double)now.tv_sec + now.tv_nsec / 1e9 - r->started_at;
    return t > 0 ? t : 0;
}

int sw_cli_open_store(sw_store **out)
{
    return sw_cli_open_store_as(out, NULL, false);
}
