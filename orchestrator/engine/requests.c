/*
 * requests.c - what other processes ask of a running sweep. The engine is
 * the store's one writer, so `sweep stop` never writes a run itself: it
 * leaves a request, a file in $SWEEP_HOME/requests/<sweep id>/, and the
 * engine's loop, which looks there every REQUESTS_S, acts on it through
 * its own paths and removes the file, which is the asker's answer.
 *
 * A file named after a run of the sweep stops that run by hand, as the
 * stopping rule stops one (rule.c): every answer to its reports says
 * stop, SIGTERM follows (after early_terminate.grace for a trial that
 * reports over HTTP), and its run ends `stopped`, reason "stopped by
 * hand", its last value given to the search as a stopped run's. A file
 * named interrupt* is a Ctrl-C. Requests are written whole (a hidden
 * temporary file, then renamed), so the loop never reads half of one;
 * names starting with '.' are not requests yet.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orchestrator/engine/contract.h"
#include "orchestrator/engine/engine_internal.h"

#define REQUESTS_S 0.25 /* how often the loop looks for requests */

static char *requests_dir(const char *home, const char *sweep_id)
{
    return sw_aprintf("%s/requests/%s", home, sweep_id);
}

/* Stops the run in `s` by hand, once; one the rule stops already stops. */
static void stop_by_hand(sw_engine *e, sw_slot *s)
{
    if (s->stop || s->phase == SW_SLOT_ENDED)
        return;
    s->stop = true;
    s->stop_why = SW_CANCEL_BY_HAND;
    s->stop_at = sw_clock_mono(e->clock) +
                 (s->http ? e->spec->early_terminate.grace : 0);
    if (s->stop_at <= 0)
        s->stop_at = 1e-9; /* 0 means "none due" */
    sw_engine__notice(e, SW_NOTICE_INFO,
                      "sweep %s: run %s stops: asked by hand", e->sweep.id,
                      s->rec.id);
}

/* One request, `name`, of the folder; true when it is a Ctrl-C. */
static bool handle(sw_engine *e, const char *name)
{
    sw_slot *s;

    if (strncmp(name, "interrupt", 9) == 0)
        return true;
    if ((s = sw_engine__find_slot(e, name)) != NULL)
        stop_by_hand(e, s);
    else
        sw_engine__notice(e, SW_NOTICE_WARN,
                          "sweep: `sweep stop %s`: no such run is running "
                          "in sweep %s",
                          name, e->sweep.id);
    return false;
}

int sw_engine__requests(sw_engine *e)
{
    double now = sw_clock_mono(e->clock);
    struct dirent *d;
    char *path;
    DIR *dir;
    int interrupts = 0;

    if (e->virtual_time || !e->home || now < e->requests_at + REQUESTS_S)
        return 0;
    e->requests_at = now;
    if (!e->requests_dir)
        e->requests_dir = requests_dir(e->home, e->sweep.id);
    if ((dir = opendir(e->requests_dir)) == NULL)
        return 0; /* none yet: `sweep stop` makes the folder */
    while ((d = readdir(dir)) != NULL) {
        if (d->d_name[0] == '.')
            continue;
        interrupts += handle(e, d->d_name);
        path = sw_aprintf("%s/%s", e->requests_dir, d->d_name);
        unlink(path);
        free(path);
    }
    closedir(dir);
    return interrupts;
}

double sw_engine__requests_wake(const sw_engine *e)
{
    /* with no attempt in flight the sweep is about to end, or waits for
     * work that wakes it */
    if (e->virtual_time || !e->home || e->n_slots == 0)
        return 0;
    return e->requests_at + REQUESTS_S;
}

bool sw_engine_is_running(const char *home, const char *sweep_id)
{
    char *path = sw_aprintf("%s/%s.lock", home, sweep_id);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    bool running = false;

    /* the engine holds it exclusively; a shared lock, taken and given
     * back at once, fails while it does */
    if (fd >= 0) {
        running = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
        close(fd);
    }
    free(path);
    return running;
}

int sw_engine_ask(const char *home, const char *sweep_id, const char *run_id,
                  char **out_path)
{
    char *dir = requests_dir(home, sweep_id), *tmp, *path;
    int error = sw_contract_mkdirs(dir), fd;

    path = run_id ? sw_aprintf("%s/%s", dir, run_id)
                  : sw_aprintf("%s/interrupt-%ld", dir, (long)getpid());
    tmp = sw_aprintf("%s/.tmp-%ld", dir, (long)getpid());
    if (error == SW_OK) {
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || close(fd) != 0 || rename(tmp, path) != 0)
            error = sw_error_set(SW_EIO, "cannot write %s: %s", path,
                                 strerror(errno));
    }
    if (error)
        unlink(tmp);
    free(tmp);
    free(dir);
    if (error)
        free(path);
    else
        *out_path = path;
    return error;
}
