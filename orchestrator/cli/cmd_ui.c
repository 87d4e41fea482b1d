/*
 * cmd_ui.c - `sweep ui [SWEEP] [--listen ADDR:PORT]`: the dashboard
 * (docs/dashboard.md) for sweeps that are not running, served from the
 * store until Ctrl-C. It is the page a running sweep serves, on a server
 * of its own: it only reads, so it may run beside `sweep run` (whose own
 * server is the one with live updates).
 *
 * Loopback by default; on any other address a view token is made and
 * printed with the URL, as `sweep run --listen` does.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/engine/contract.h"
#include "orchestrator/engine/engine.h"
#include "orchestrator/metrics_server.h"
#include "orchestrator/store/store.h"
#include "orchestrator/ui/site.h"

static const char help[] =
    "usage: sweep ui [SWEEP] [--listen ADDR:PORT]\n\n"
    "Serves the dashboard of the sweep home (docs/dashboard.md) until\n"
    "Ctrl-C, and prints its URL: SWEEP's page, or the list of sweeps when\n"
    "none is named. A running `sweep run` serves the same pages itself,\n"
    "live, at the URL it printed.\n\n"
    "  --listen ADDR:PORT  where to listen (default 127.0.0.1 on a free\n"
    "                      port); off loopback, the URL carries a view\n"
    "                      token that every request must show\n";

/* The id of the sweep `key` names, checked now so a typo is said at
 * once; the caller frees it. */
static int resolve(const char *key, char **id)
{
    sw_store *st = NULL;
    sw_sweep_rec s;
    int status, error;

    if ((status = sw_cli_open_store_as(&st, "ui", false)) != SW_EXIT_OK)
        return status;
    error = sw_store_get_sweep(st, key, &s);
    sw_store_close(st);
    if (error) {
        fprintf(stderr, "sweep ui: %s\n", sw_error_last());
        return error == SW_ENOTFOUND ? SW_EXIT_USAGE : SW_EXIT_FAIL;
    }
    *id = sw_strdup(s.id);
    sw_sweep_rec_dispose(&s);
    return SW_EXIT_OK;
}

/* Serves until SIGINT or SIGTERM, which are blocked and waited for. */
static int serve(const char *listen, const char *id)
{
    sw_metrics_server_opts o = SW_METRICS_SERVER_OPTS_INIT;
    char token[SW_CONTRACT_TOKEN_LEN + 1];
    sw_metrics_server *srv = NULL;
    sw_site *site = sw_site_new(sw_engine_home());
    char *where, *url;
    sigset_t set;
    int sig = 0;

    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* before the server's threads */
    o.listen = listen;
    o.get = sw_site_get;
    o.get_ctx = site;
    if (!sw_metrics_server_loopback(listen)) {
        if (sw_contract_new_token(token) != SW_OK) {
            fprintf(stderr, "sweep ui: %s\n", sw_error_last());
            sw_site_free(site);
            return SW_EXIT_FAIL;
        }
        o.view_token = token;
    }
    if (sw_metrics_server_start(&srv, &o) != SW_OK) {
        fprintf(stderr, "sweep ui: %s\n", sw_error_last());
        sw_site_free(site);
        return SW_EXIT_FAIL;
    }
    where = id ? sw_aprintf("sweep/%s", id) : NULL;
    url = sw_metrics_server_view_url(srv, o.view_token, where);
    printf("dashboard: %s\n", url);
    fflush(stdout);
    free(url);
    free(where);
    sigwait(&set, &sig);
    sw_metrics_server_free(srv);
    sw_site_free(site);
    return SW_EXIT_OK;
}

int sw_cmd_ui(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"listen", required_argument, NULL, 'l'},
        {NULL, 0, NULL, 0}};
    const char *listen = NULL;
    char *id = NULL;
    int c, status;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            return SW_EXIT_OK;
        } else if (c == 'l') {
            listen = optarg;
        } else {
            return sw_cli_usage("ui", "unknown option (see sweep ui --help)");
        }
    }
    if (argc - optind > 1)
        return sw_cli_usage("ui", "one sweep at most (see sweep ui --help)");
    if (optind < argc && (status = resolve(argv[optind], &id)) != SW_EXIT_OK)
        return status;
    status = serve(listen, id);
    free(id);
    return status;
}
