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
    sw_buf b = SW_BUF_INIT;
    char chunk[8192];
    size_t n;
    FILE *f = fopen(path, "rb");

    if (!f)
        return NULL;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        sw_buf_put(&b, chunk, n);
    fclose(f);
    if (len)
        *len = b.len;
    return sw_buf_detach(&b);
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
