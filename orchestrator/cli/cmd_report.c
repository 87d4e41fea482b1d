/*
 * cmd_report.c - `sweep report [SWEEP] [--price USD] [--json] [--plot
 * FILE.svg] [--timeout SECONDS]`: how a sweep spent its GPU time: used, idle,
 * saved by early stopping, lost to failures, and what it cost (docs/report.md).
 *
 * Read-only: the figures come from the store (report.c), the plot is
 * written only once they are computed, and a bad option changes nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/report.h"

static const char help[] =
    "usage: sweep report [SWEEP] [--price USD_PER_GPU_HOUR] [--json]\n"
    "                    [--plot FILE.svg] [--timeout SECONDS]\n\n"
    "How SWEEP (default: the newest) spent its GPU time: wall clock, GPUs,\n"
    "GPU-seconds busy and idle, occupancy, saved by early stopping, lost to\n"
    "failures, time to the best value, and with --price what it cost.\n"
    "--plot writes an SVG of the devices' occupancy over time and the best\n"
    "value so far. --timeout stops reading the store after SECONDS\n"
    "(default 60; 0: no limit). docs/report.md defines every figure.\n";

typedef struct {
    bool json;
    double price; /* < 0: none */
    const char *plot;
    const char *sweep;
    double timeout; /* seconds; 0: none */
} report_opts;

static int parse(int argc, char **argv, report_opts *o, bool *helped)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"json", no_argument, NULL, 'j'},
        {"price", required_argument, NULL, 'p'},
        {"plot", required_argument, NULL, 'o'},
        {"timeout", required_argument, NULL, 't'},
        {NULL, 0, NULL, 0}};
    int c;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            *helped = true;
            return SW_EXIT_OK;
        } else if (c == 'j') {
            o->json = true;
        } else if (c == 'p') {
            if (!sw_cli_parse_price(optarg, &o->price))
                return sw_cli_usage("report",
                                    "--price wants US dollars per GPU-hour "
                                    "(such as 2.5), not '%s'",
                                    optarg);
        } else if (c == 'o') {
            o->plot = optarg;
        } else if (c == 't') {
            if (!sw_cli_parse_seconds(optarg, &o->timeout))
                return sw_cli_usage("report",
                                    "--timeout wants seconds (0 for no "
                                    "limit), not '%s'",
                                    optarg);
        } else {
            return sw_cli_usage("report", "unknown option");
        }
    }
    if (optind < argc - 1)
        return sw_cli_usage("report", "expected at most one sweep");
    o->sweep = optind < argc ? argv[optind] : NULL;
    return SW_EXIT_OK;
}

static int write_plot(const char *path, const sw_report_data *d,
                      const sw_report *r)
{
    sw_buf b = SW_BUF_INIT;
    FILE *f = fopen(path, "w");
    int error = SW_OK;

    if (!f)
        return sw_error_set(SW_EIO, "%s: %s", path, strerror(errno));
    sw_report_write_svg(&b, d, r);
    if (fwrite(sw_buf_cstr(&b), 1, b.len, f) != b.len)
        error = sw_error_set(SW_EIO, "%s: %s", path, strerror(errno));
    if (fclose(f) != 0 && !error)
        error = sw_error_set(SW_EIO, "%s: %s", path, strerror(errno));
    sw_buf_dispose(&b);
    return error;
}

static int report(sw_store *st, const report_opts *o)
{
    struct timespec now;
    sw_report_data d;
    sw_buf b = SW_BUF_INIT;
    sw_report r;
    int error;

    clock_gettime(CLOCK_REALTIME, &now);
    error = sw_report_load(st, o->sweep, o->price,
                           (double)now.tv_sec + now.tv_nsec / 1e9, &d);
    if (error)
        return error;
    sw_report_compute(&r, &d);
    if (o->plot)
        error = write_plot(o->plot, &d, &r);
    if (!error) {
        if (o->json)
            sw_report_write_json(&b, &d, &r);
        else
            sw_report_write_text(&b, &d, &r);
        fputs(sw_buf_cstr(&b), stdout);
    }
    sw_buf_dispose(&b);
    sw_report_data_dispose(&d);
    return error;
}

int sw_cmd_report(int argc, char **argv)
{
    report_opts o = {false, -1, NULL, NULL, SW_STORE_READ_TIMEOUT_S};
    sw_store *st = NULL;
    bool helped = false;
    int status, error;

    status = parse(argc, argv, &o, &helped);
    if (status != SW_EXIT_OK || helped)
        return status;
    if ((status = sw_cli_open_store(&st)) != SW_EXIT_OK)
        return status;
    sw_store_read_limit(st, o.timeout);
    error = report(st, &o);
    if (error)
        fprintf(stderr, "sweep report: %s\n", sw_error_last());
    sw_store_close(st);
    return error ? SW_EXIT_FAIL : SW_EXIT_OK;
}
