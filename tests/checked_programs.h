/* tests/checked_programs.h -- for the unit tests: every program of a
 * golden folder that loads and passes the checker, handed to a callback.
 * Included by the test files that walk goldens (each is its own program). */
#ifndef SC_TESTS_CHECKED_PROGRAMS_H
#define SC_TESTS_CHECKED_PROGRAMS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "../lowering/check.h"
#include "../sim/front/load.h"

typedef void (*CheckedFn)(Program *p, const char *path, void *ctx);

/* Calls fn on each checked program of dir (*.yaml); returns how many, 0
 * when dir cannot be opened.  The program is freed after fn returns. */
static int each_checked_program(const char *dir, CheckedFn fn, void *ctx) {
  DIR *dd = opendir(dir);
  int n = 0;
  if (!dd) return 0;
  struct dirent *e;
  while ((e = readdir(dd))) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 5, ".yaml")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    Program p;
    Diag d;
    memset(&p, 0, sizeof p);
    if (load_program(path, &p, &d) && check_program(&p, &d)) fn(&p, path, ctx), n++;
    program_free(&p);
  }
  closedir(dd);
  return n;
}

#endif
