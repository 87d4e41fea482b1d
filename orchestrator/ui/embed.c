/*
 * embed.c - a build tool: writes a C file holding the dashboard's files
 * (sw_site_assets, site.h), so the binary serves them with nothing to
 * find at run time. Used by orchestrator/CMakeLists.txt only.
 *
 * usage: embed OUT.c URL_PATH CONTENT_TYPE FILE [URL_PATH CONTENT_TYPE FILE]...
 */
#include <stdio.h>
#include <stdlib.h>

static int put_file(FILE *out, const char *path, size_t k, size_t *len)
{
    FILE *in = fopen(path, "rb");
    int c;

    if (!in) {
        perror(path);
        return 1;
    }
    fprintf(out, "static const unsigned char asset%zu[] = {\n", k);
    for (*len = 0; (c = getc(in)) != EOF; (*len)++)
        fprintf(out, "%d,%s", c, *len % 24 == 23 ? "\n" : "");
    fputs("0};\n", out);
    fclose(in);
    return 0;
}

int main(int argc, char **argv)
{
    size_t i, n, *lens;
    FILE *out;

    if (argc < 2 || (argc - 2) % 3 != 0) {
        fputs("usage: embed OUT.c [URL_PATH TYPE FILE]...\n", stderr);
        return 2;
    }
    n = (size_t)(argc - 2) / 3;
    lens = calloc(n + 1, sizeof(*lens));
    if (!lens || !(out = fopen(argv[1], "w"))) {
        perror(argv[1]);
        return 1;
    }
    fputs("/* Made by orchestrator/ui/embed.c: do not edit. */\n"
          "#include \"orchestrator/ui/site.h\"\n\n",
          out);
    for (i = 0; i < n; i++)
        if (put_file(out, argv[4 + 3 * i], i, &lens[i]))
            return 1;
    fputs("\nconst sw_site_asset sw_site_assets[] = {\n", out);
    for (i = 0; i < n; i++)
        fprintf(out, "    {\"%s\", \"%s\", (const char *)asset%zu, %zu},\n",
                argv[2 + 3 * i], argv[3 + 3 * i], i, lens[i]);
    fprintf(out, "};\nconst size_t sw_site_n_assets = %zu;\n", n);
    free(lens);
    return fclose(out) == 0 ? 0 : 1;
}
