/* sim/fuzz/driver.c -- sc-sim fuzz: the campaign, reproducers, mutant hunts
 * and the command line (docs/fuzz.md).
 *
 * Programs are generated and judged by oracle.c, failures shrunk by
 * shrink.c.  This file prints its own report: fuzz is a command of its own
 * (sim/cli/main.c dispatches to fuzz_main). */
#include "fuzz.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../traces/json.h"
#include "../../traces/outfile.h"
#include "fuzz_priv.h"
#include "sweep.h"

/* ---- the campaign ---------------------------------------------------------------- */
static void tally_reject(Fuzz *f, const char *id, bool bad) {
  int i = 0;
  while (i < f->nrej && (strcmp(f->rej_id[i], id) || f->rej_bad[i] != bad)) i++;
  if (i == f->nrej) {
    if (f->nrej == 64) return;
    snprintf(f->rej_id[i], sizeof f->rej_id[i], "%s", id);
    f->rej_bad[i] = bad;
    f->rej_n[f->nrej++] = 0;
  }
  f->rej_n[i]++;
}

/* The tally class of a verdict: how the summary line counts it. */
static const char *tally_class(Verdict v) {
  switch (v) {
  case VD_ACCEPTED: return "accepted";
  case VD_REJECTED: return "rejected";
  case VD_FAULTED: return "faulted";
  case VD_UNEXPECTED: return "unexpected";
  case VD_MISMATCH: case VD_NOT_REJECTED: case VD_NOT_FAULTED: return "mismatch";
  case VD_FAULT: return "fault";
  case VD_CRASH: return "crash";
  case VD_HANG: return "hang";
  }
  return "crash";
}

void fuzz_tally(Fuzz *f, const char *cls, const char *rule) {
  f->programs++;
  if (!strcmp(cls, "accepted")) f->accepted++;
  else if (!strcmp(cls, "rejected")) tally_reject(f, rule, false);
  else if (!strcmp(cls, "faulted")) {
    char id[40];
    snprintf(id, sizeof id, "!%s", rule); /* '!': a planned fault, listed apart */
    tally_reject(f, id, false), f->faulted++;
  } else if (!strcmp(cls, "unexpected")) tally_reject(f, rule, true), f->unexpected++;
  else if (!strcmp(cls, "mismatch")) f->mismatches++;
  else if (!strcmp(cls, "fault")) f->faults++;
  else if (!strcmp(cls, "hang")) f->hangs++;
  else f->crashes++;
}

static void tally(Fuzz *f, Verdict v, const Outcome *o) { fuzz_tally(f, tally_class(v), o->id); }

/* One program's JSON line (merge.c reads it back). */
void fuzz_json_line(FILE *jf, const Fuzz *f, int index, const char *verdict, const char *cls, const char *rule, bool written,
                    const char *report) {
  fprintf(jf, "{\"kind\": \"fuzz\", \"seed\": %llu, \"count\": %d, \"reject_rate\": %d, \"index\": %d, \"verdict\": ",
          (unsigned long long)f->seed, f->count, f->reject_rate, index);
  json_str(jf, verdict);
  fputs(", \"class\": ", jf);
  json_str(jf, cls);
  fputs(", \"rule\": ", jf);
  json_str(jf, rule);
  fprintf(jf, ", \"reproducer_written\": %s, \"report\": ", written ? "true" : "false");
  if (report && *report) json_str(jf, report);
  else fputs("null", jf);
  fputs("}\n", jf);
  fflush(jf);
}

/* ---- reproducers ---------------------------------------------------------------- */
static bool make_dirs(const char *path, int *err) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1;; p++) {
    if (*p != '/' && *p) continue;
    char c = *p;
    *p = '\0';
    if (mkdir(buf, 0777) && errno != EEXIST) {
      *err = errno;
      return false;
    }
    if (!c) return true;
    *p = c;
  }
}

static void one_line(char *dst, size_t n, const char *src) {
  snprintf(dst, n, "%s", src);
  for (char *p = dst; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
}

/* Writes the shrunk program whole, through the one atomic writer
 * (traces/outfile.h: a temporary file, then a rename); *err gets the
 * errno of a failure (of the folder or of the file). */
static bool write_repro(Fuzz *f, const Plan *pl, const Knobs *k, Verdict v, const Outcome *o, const Meta *orig, char *path, size_t n,
                        int *err) {
  Buf t = {0}, doc = {0};
  Meta m;
  char msg[800];
  gen_program(pl, k, &t, &m);
  one_line(msg, sizeof msg, o->msg);
  bput(&doc, "# sc-sim fuzz reproducer: seed %llu, program %d\n", (unsigned long long)pl->seed, pl->index);
  bput(&doc, "# failure: %s: %s%s%s\n", verdicts[v].text, o->id[0] ? o->id : oc_names[o->kind], msg[0] ? ": " : "", msg);
  if (orig->want) bput(&doc, "# expected: %s %s\n", orig->want_fault ? "a fault of kind" : "rejected with rule", orig->want);
  else bput(&doc, "# expected: accepted, fault-free, engine and reference agreeing\n");
  bput(&doc, "# original program: %d operations, %zu bytes; shrunk: %d operations, %zu bytes (%d runs)\n", orig->ops, orig->bytes,
       m.ops, m.bytes, f->attempts);
  bput(&doc, "# again: sc-sim fuzz --seed %llu --count %d (the last program), or: sc-sim THIS_FILE\n", (unsigned long long)pl->seed,
       pl->index + 1);
  bput(&doc, "%s", t.s);
  snprintf(path, n, "%s/fail-%llu-%d.yaml", f->out, (unsigned long long)pl->seed, pl->index);
  *err = 0;
  bool ok = make_dirs(f->out, err) && outfile_write(path, doc.s, doc.n, err);
  bfree(&t);
  bfree(&doc);
  return ok;
}

static void report_failure(Fuzz *f, const Plan *pl, Verdict v, const Outcome *o, const Meta *meta, char *line, size_t nline) {
  Knobs k;
  memset(&k, 0, sizeof k);
  Sig want = sig_of(v, o);
  shrink(f, pl, &k, &want);
  char path[4200], msg[800], why[4400];
  int err = 0;
  bool ok = write_repro(f, pl, &k, v, o, meta, path, sizeof path, &err);
  snprintf(why, sizeof why, "(could not write the reproducer %s: %s)", path, strerror(err));
  f->written += ok;
  one_line(msg, sizeof msg, o->msg);
  const char *m = !strncmp(msg, "mismatch: ", 10) ? msg + 10 : msg;
  snprintf(line, nline, "fuzz: program %d: %s (%s): %.300s -> %s", pl->index, verdicts[v].text, o->id, m, ok ? path : why);
  printf("%s\n", line);
}

/* The tallied ids of planned rejections (faults: false) or planned faults. */
static void print_ids(const Fuzz *f, bool faults) {
  const char *sep = "";
  for (int i = 0; i < f->nrej; i++) {
    if ((f->rej_id[i][0] == '!') != faults) continue;
    printf("%s%s%s:%d", sep, f->rej_id[i] + faults, f->rej_bad[i] ? "(unexpected)" : "", f->rej_n[i]);
    sep = " ";
  }
}

void fuzz_summary(const Fuzz *f) {
  int failed = f->mismatches + f->faults + f->crashes + f->hangs;
  printf("fuzz: %d programs, %d accepted, %d rejected (", f->programs, f->accepted, f->programs - f->accepted - f->faulted - failed);
  print_ids(f, false);
  printf("), %d faulted as planned (", f->faulted);
  print_ids(f, true);
  printf("), %d mismatches, %d faults, %d crashes, %d hangs, %d reproducers written\n", f->mismatches, f->faults, f->crashes, f->hangs,
         f->written);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int campaign(Fuzz *f) {
  double t0 = now_s();
  int ran = 0;
  for (int i = 0; i < f->count; i++) {
    if (f->shard_n > 1 && i % f->shard_n != f->shard_k) continue; /* --shard K/N */
    Plan pl;
    Knobs k;
    Outcome o;
    Meta meta;
    char line[5400] = "";
    memset(&k, 0, sizeof k);
    plan_program(f->seed, i, f->reject_rate, f->avoid, &pl);
    Verdict v = try_program(f, &pl, &k, MUT_NONE, &o, &meta);
    tally(f, v, &o);
    int written = f->written;
    if (verdicts[v].failure) report_failure(f, &pl, v, &o, &meta, line, sizeof line);
    if (f->jf) fuzz_json_line(f->jf, f, i, verdicts[v].text, tally_class(v), o.id, f->written > written, line);
    ran++;
  }
  double dt = now_s() - t0;
  printf("fuzz: %.1f s, %.1f programs/s (shrinking included)\n", dt, dt > 0 ? ran / dt : 0.0);
  fuzz_summary(f);
  if (f->crashes || f->hangs) return 4;
  return f->mismatches || f->faults || f->unexpected ? 3 : 0;
}

/* ---- mutants ---------------------------------------------------------------------- */
/* Runs programs with mutant m until one shows a mismatch that the correct
 * lowering does not show; returns its 1-based number, 0 when none did. */
static int hunt(Fuzz *f, Mutant m) {
  for (int i = 0; i < f->count; i++) {
    Plan pl;
    Knobs k;
    Outcome o, o2;
    Meta meta;
    memset(&k, 0, sizeof k);
    plan_program(f->seed, i, 0, f->avoid, &pl);
    Verdict v = try_program(f, &pl, &k, m, &o, &meta);
    tally(f, v, &o);
    if (v != VD_MISMATCH) continue;
    if (try_program(f, &pl, &k, MUT_NONE, &o2, &meta) != VD_MISMATCH) return i + 1;
  }
  return 0;
}

static int mutate_campaign(Fuzz *f) {
  Mutant one;
  bool all = !strcmp(f->mutate, "all");
  int missed = 0;
  double t0 = now_s();
  for (int i = 1; i < MUT_COUNT; i++) {
    Mutant m = (Mutant)i;
    if (!all && (!mutant_lookup(f->mutate, &one) || one != m)) continue;
    int n = hunt(f, m);
    if (n) printf("mutant %s: detected after %d programs\n", mutant_name(m), n);
    else printf("mutant %s: not detected in %d programs\n", mutant_name(m), f->count);
    missed += !n;
  }
  double dt = now_s() - t0;
  printf("fuzz: %.1f s, %.1f programs/s\n", dt, dt > 0 ? f->programs / dt : 0.0);
  fuzz_summary(f);
  return missed ? 3 : 0;
}

/* Prints program f->show as the campaign would generate it. */
static int show_program(Fuzz *f) {
  Plan pl;
  Knobs k;
  Meta m;
  Buf t = {0};
  memset(&k, 0, sizeof k);
  plan_program(f->seed, f->show, f->mutate ? 0 : f->reject_rate, f->avoid, &pl);
  gen_program(&pl, &k, &t, &m);
  fputs(t.s, stdout);
  if (m.want) printf("# to be rejected with %s\n", m.want);
  bfree(&t);
  return 0;
}

/* ---- the command line ------------------------------------------------------------ */
static void fuzz_usage(FILE *fp) {
  fputs("usage: sc-sim fuzz --seed S --count N [--out DIR] [--time-limit SECONDS] [--mutate NAME|all] [--reject-rate PERCENT]\n"
        "  --seed S            the campaign's seed (programs are a function of S and their index)\n"
        "  --count N           programs to generate and run (per mutant with --mutate)\n"
        "  --out DIR           where reproducers go (default fuzz-out)\n"
        "  --shard K/N         run only the programs i with i mod N = K (0 <= K < N); sc-sim merge combines the shards\n"
        "  --jsonl FILE        one JSON line per program, for sc-sim merge (docs/cluster.md)\n"
        "  --time-limit SEC    per program, in a forked child; past it the program hangs (default 10)\n"
        "  --mutate NAME|all   run with a mutant lowering and report when it is first detected\n"
        "  --reject-rate PCT   programs built to break one rule (default 10)\n"
        "  --show I            print program I of the campaign and stop\n"
        "  --avoid NAME,...    leave out the constructs of known open sc-sim bugs (KNOWN_BUGS; none is open)\n"
        "exit status: 0 clean, 2 bad invocation, 3 mismatch / unexpected fault or rejection, 4 crash or hang;\n"
        "with --mutate: 0 when every mutant was detected, 3 otherwise\n",
        fp);
}

static bool num_arg(const char *opt, const char *v, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno || *end || !*v || x < lo || x > hi) {
    fprintf(stderr, "sc-sim fuzz: %s takes an integer in [%lld, %lld], got '%s'\n", opt, lo, hi, v);
    return false;
  }
  *out = x;
  return true;
}

/* --avoid NAME[,NAME...] (KNOWN_BUGS) */
static bool avoid_arg(const char *v, unsigned *out) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", v);
  for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
    int b = 0;
    while (b < B_COUNT && strcmp(bug_names[b], t)) b++;
    if (b == B_COUNT) {
      fprintf(stderr, "sc-sim fuzz: --avoid: unknown name '%s' (known:", t);
      for (int i = 0; i < B_COUNT; i++) fprintf(stderr, " %s", bug_names[i]);
      fprintf(stderr, ")\n");
      return false;
    }
    *out |= 1u << b;
  }
  return true;
}

static bool fuzz_args(int argc, char **argv, Fuzz *f) {
  long long x;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "sc-sim fuzz: %s: unknown option or missing value\n", a);
      return false;
    }
    i++;
    if (!strcmp(a, "--seed")) {
      char *end;
      errno = 0;
      f->seed = strtoull(v, &end, 10);
      if (errno || *end || !*v) return fprintf(stderr, "sc-sim fuzz: --seed takes an unsigned integer, got '%s'\n", v), false;
    } else if (!strcmp(a, "--count")) {
      if (!num_arg(a, v, 0, 100000000, &x)) return false;
      f->count = (int)x;
    } else if (!strcmp(a, "--time-limit")) {
      if (!num_arg(a, v, 1, 86400, &x)) return false;
      f->limit = (int)x;
    } else if (!strcmp(a, "--reject-rate")) {
      if (!num_arg(a, v, 0, 100, &x)) return false;
      f->reject_rate = (int)x;
    } else if (!strcmp(a, "--out")) {
      f->out = v;
    } else if (!strcmp(a, "--shard")) {
      if (!shard_arg("fuzz", v, &f->shard_k, &f->shard_n)) return false;
    } else if (!strcmp(a, "--jsonl")) {
      f->jsonl = v;
    } else if (!strcmp(a, "--show")) {
      if (!num_arg(a, v, 0, 100000000, &x)) return false;
      f->show = (int)x;
    } else if (!strcmp(a, "--avoid")) {
      if (!avoid_arg(v, &f->avoid)) return false;
    } else if (!strcmp(a, "--mutate")) {
      Mutant m;
      if (strcmp(v, "all") && !mutant_lookup(v, &m))
        return fprintf(stderr, "sc-sim fuzz: unknown mutant '%s' (sc-sim --list-mutants lists them)\n", v), false;
      f->mutate = v;
    } else {
      fprintf(stderr, "sc-sim fuzz: unknown option '%s'\n", a);
      return false;
    }
  }
  return true;
}

int fuzz_main(int argc, char **argv) {
  static Fuzz f;
  memset(&f, 0, sizeof f);
  f.seed = 1;
  f.count = 100;
  f.limit = 10;
  f.reject_rate = 10;
  f.out = "fuzz-out";
  f.show = -1;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return fuzz_usage(stdout), 0;
  if (!fuzz_args(argc, argv, &f)) {
    fuzz_usage(stderr);
    return 2;
  }
  if (f.shard_n > 1 && (f.mutate || f.show >= 0))
    return fprintf(stderr, "sc-sim fuzz: --shard splits a campaign; it does not go with --mutate or --show\n"), 2;
  if (f.show >= 0) return show_program(&f);
  bool seeded = false; /* a campaign is reproducible only from its seed: name it when the user did not */
  for (int i = 1; i < argc; i += 2) seeded |= !strcmp(argv[i], "--seed");
  if (!seeded) printf("fuzz: seed %llu (the default; --seed S picks another)\n", (unsigned long long)f.seed);
  if (f.jsonl && !(f.jf = fopen(f.jsonl, "w")))
    return fprintf(stderr, "sc-sim fuzz: cannot write '%s': %s\n", f.jsonl, strerror(errno)), 2;
  int code = f.mutate ? mutate_campaign(&f) : campaign(&f);
  if (f.jf && fclose(f.jf)) return fprintf(stderr, "sc-sim fuzz: cannot write '%s'\n", f.jsonl), 2;
  return code;
}
