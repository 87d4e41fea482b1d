/*
 * git_module.c - the one symbol sweep-git.so exports: git.c's functions
 * as a table (git_module.h). Everything else in the module is hidden.
 */
#include "backends/git_module.h"

#include "sweeps/error.h"

__attribute__((
    visibility("default"))) extern const sw_git_module sw_git_module_v1;

const sw_git_module sw_git_module_v1 = {
    SW_GIT_MODULE_VERSION, sw_git_open,   sw_git_open_first,
    sw_git_free,           sw_git_root,   sw_git_capture,
    sw_git_changed,        sw_git_export, sw_git_url_strip,
    sw_git_state_dispose,  sw_error_last,
};
