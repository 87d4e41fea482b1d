/*
 * git_module.h - the git adapter as a module of its own: sweep-git.so,
 * the only object that links libgit2, opened with dlopen() where git is
 * used (git_load.c) so that libgit2 and its libraries (mbedTLS, libssh2,
 * PCRE2, ...) cost nothing to the commands that never capture or export
 * code. For the loader and the module alone.
 *
 * The module exports one symbol, SW_GIT_MODULE_SYMBOL: a table of the
 * functions of git.h. It carries its own copy of sweep's helpers, so its
 * error messages live in its own thread-local buffer: `error_last` reads
 * them, and the loader sets each one again on its side.
 */
#ifndef SW_GIT_MODULE_H
#define SW_GIT_MODULE_H

#include "backends/git.h"

#define SW_GIT_MODULE_VERSION 1
#define SW_GIT_MODULE_SYMBOL "sw_git_module_v1"
#define SW_GIT_MODULE_FILE "sweep-git.so"

typedef struct {
    unsigned int version; /* SW_GIT_MODULE_VERSION */
    int (*open)(sw_git **out, const char *path, const sw_git_opts *opts);
    int (*open_first)(sw_git **out, const char *const *paths, size_t n,
                      const sw_git_opts *opts);
    void (*free)(sw_git *g);
    const char *(*root)(const sw_git *g);
    int (*capture)(sw_git *g, const char *ref_prefix, sw_git_state *out);
    int (*changed)(sw_git *g, bool *changed);
    int (*export_to)(sw_git *g, const char *commit, const char *dir);
    char *(*url_strip)(const char *url);
    void (*state_dispose)(sw_git_state *st);
    const char *(*error_last)(void);
} sw_git_module;

#endif
