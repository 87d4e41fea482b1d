/*
 * executor.c - the one place that knows every executor by name, and what
 * all of them share: the events they hand to the engine.
 *
 * Adding an executor is one line in the table below; the engine and the
 * command line only ever name it.
 */
#include "backends/executor.h"
#include "sweeps/buf.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    int (*make)(sw_executor **out, char *const *args);
} maker;

/* SW_EINVALID when an executor without arguments of its own is given
 * some. */
static int no_args(const char *name, char *const *args)
{
    if (args && args[0])
        return sw_error_set(SW_EINVALID,
                            "the %s backend takes no backend arguments "
                            "('%s'): they are for --backend slurm",
                            name, args[0]);
    return SW_OK;
}

static int make_local(sw_executor **out, char *const *args)
{
    int error = no_args("local", args);

    return error ? error : sw_executor_local_new(out);
}

static int make_sim(sw_executor **out, char *const *args)
{
    int error = no_args("sim", args);

    return error ? error : sw_executor_sim_new(out);
}

static const maker makers[] = {
    {"local", make_local},
    {"slurm", sw_executor_slurm_new},
    {"sim", make_sim},
};

#define N_MAKERS (sizeof(makers) / sizeof(makers[0]))

int sw_executor_new(sw_executor **out, const char *name)
{
    return sw_executor_new_with(out, name, NULL);
}

int sw_executor_new_with(sw_executor **out, const char *name, char *const *args)
{
    sw_buf names = SW_BUF_INIT;
    size_t i;
    int error;

    for (i = 0; name && i < N_MAKERS; i++)
        if (strcmp(name, makers[i].name) == 0)
            return makers[i].make(out, args);
    for (i = 0; i < N_MAKERS; i++)
        sw_buf_printf(&names, "%s%s", i ? ", " : "", makers[i].name);
    error =
        sw_error_set(SW_EINVALID, "unknown backend '%s' (the backends are: %s)",
                     name ? name : "", sw_buf_cstr(&names));
    sw_buf_dispose(&names);
    return error;
}

void sw_job_event_dispose(sw_job_event *ev)
{
    if (!ev)
        return;
    free(ev->key);
    free(ev->handle);
    free(ev->message);
    memset(ev, 0, sizeof(*ev));
}
