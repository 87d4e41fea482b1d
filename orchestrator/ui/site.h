/*
 * site.h - the dashboard's side of the sweep's HTTP server: its pages and
 * scripts (embedded in the binary at build time) and a read-only JSON
 * API over the store of one sweep home (docs/dashboard.md). The live
 * part, the event stream, is the server's (metrics_server.h); the
 * engine publishes into it (engine/live.c).
 *
 * A site only reads: every answer comes from a read-only connection to
 * the store opened for that request, so it is served on the server's
 * threads while the engine's loop writes.
 */
#ifndef SW_UI_SITE_H
#define SW_UI_SITE_H

#include "orchestrator/metrics_server.h"

typedef struct sw_site sw_site;

/* A site over the sweep home `home` (copied). This function can't fail. */
sw_site *sw_site_new(const char *home);
/* Accepts NULL. Only after the server that answers with it has stopped. */
void sw_site_free(sw_site *site);

/* The server's `get` function (metrics_server.h), with the site as ctx. */
void sw_site_get(void *site, const sw_http_get *req, sw_http_reply *out);

/* One embedded file (assets.c, made by the build). */
typedef struct {
    const char *path; /* "/app.js" */
    const char *type; /* its Content-Type */
    const char *data;
    size_t len;
} sw_site_asset;
extern const sw_site_asset sw_site_assets[];
extern const size_t sw_site_n_assets;

#endif
