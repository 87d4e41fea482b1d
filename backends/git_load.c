/*
 * git_load.c - git.h for sweep: its functions forwarded to sweep-git.so
 * (git_module.h), opened the first time one is called.
 *
 * The module is looked for beside the executable (a build tree), then in
 * SW_GIT_MODULE_REL from the executable's folder (an install: PREFIX/bin
 * and PREFIX/lib/sweep), then where this build tree made it (a test
 * program, which lives elsewhere in the tree). A module that cannot be
 * loaded is an error of sw_git_open(), which sweep turns into a warning:
 * runs are then not tied to their code. Thread-safe (pthread_once).
 */
#include "backends/git_module.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweeps/error.h"

static const sw_git_module *mod;
static char why[512]; /* "" once loaded */
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Opens `path` and takes its table; false, noting why, when it can't. */
static bool try_open(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const sw_git_module *m;

    if (!h) {
        snprintf(why, sizeof(why), "%s", dlerror());
        return false;
    }
    m = dlsym(h, SW_GIT_MODULE_SYMBOL);
    if (!m || m->version != SW_GIT_MODULE_VERSION) {
        snprintf(why, sizeof(why), "%.400s: no %s table of version %d", path,
                 SW_GIT_MODULE_SYMBOL, SW_GIT_MODULE_VERSION);
        dlclose(h);
        return false;
    }
    mod = m;
    return true;
}

static void load(void)
{
    char exe[PATH_MAX], path[PATH_MAX + 64], *slash;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    if (n > 0) {
        exe[n] = '\0';
        if ((slash = strrchr(exe, '/')))
            *slash = '\0';
        snprintf(path, sizeof(path), "%s/%s", exe, SW_GIT_MODULE_FILE);
        if (access(path, F_OK) == 0 && try_open(path))
            return;
        snprintf(path, sizeof(path), "%s/%s/%s", exe, SW_GIT_MODULE_REL,
                 SW_GIT_MODULE_FILE);
        if (access(path, F_OK) == 0 && try_open(path))
            return;
    }
    if (try_open(SW_GIT_MODULE_BUILD))
        return;
}

/* The module's table, or NULL with the error set. */
static const sw_git_module *module(void)
{
    pthread_once(&once, load);
    if (!mod)
        sw_error_set(SW_ERROR, "cannot load %s: %s", SW_GIT_MODULE_FILE, why);
    return mod;
}

/* The module's answer, its message set again on this side. */
static int pass(int error)
{
    if (error < 0)
        sw_error_set(error, "%s", mod->error_last());
    return error;
}

int sw_git_open(sw_git **out, const char *path, const sw_git_opts *opts)
{
    *out = NULL;
    if (!module())
        return SW_ERROR;
    return pass(mod->open(out, path, opts));
}

int sw_git_open_first(sw_git **out, const char *const *paths, size_t n,
                      const sw_git_opts *opts)
{
    *out = NULL;
    if (!module())
        return SW_ERROR;
    return pass(mod->open_first(out, paths, n, opts));
}

/* A handle exists only once the module is loaded. */
void sw_git_free(sw_git *g)
{
    if (g)
        mod->free(g);
}

const char *sw_git_root(const sw_git *g)
{
    return mod->root(g);
}

int sw_git_capture(sw_git *g, const char *ref_prefix, sw_git_state *out)
{
    return pass(mod->capture(g, ref_prefix, out));
}

int sw_git_changed(sw_git *g, bool *changed)
{
    return pass(mod->changed(g, changed));
}

int sw_git_export(sw_git *g, const char *commit, const char *dir)
{
    return pass(mod->export_to(g, commit, dir));
}

/* NULL when the module cannot be loaded. */
char *sw_git_url_strip(const char *url)
{
    return module() ? mod->url_strip(url) : NULL;
}

/* Only the module fills a state; one it never saw is zeroed. */
void sw_git_state_dispose(sw_git_state *st)
{
    if (mod)
        mod->state_dispose(st);
    else if (st)
        memset(st, 0, sizeof(*st));
}
