/*
 * testutil.c - file-system helpers shared by the tests.
 */
#include "testutil.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sweeps/buf.h"

char *sw_test_slurp(const char *path, size_t *len)
{
    return sw_buf_read_file(path, len);
}

void sw_test_rm_tree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    char sub[PATH_MAX];
    struct stat st;

    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
            sw_test_rm_tree(sub);
        else
            unlink(sub);
    }
    if (d)
        closedir(d);
    rmdir(path);
}
