/* sim/cli/outcome_json.c -- the outcome as JSON (outcome_json.h).  One
 * field per part of the outcome, each written only from PipeOutcome's data:
 * nothing here reads a message to find a lane or a value. */
#include "outcome_json.h"

#include <stdlib.h>
#include <string.h>

#include "../../lowering/asm.h"
#include "../../traces/json.h"

/* A value as text (dtype_format's, or "undefined"): a JSON number, null
 * when undefined or absent, else a string ("nan", "inf", "True"). */
static void value_text(FILE *f, const char *t) {
  if (!t || !*t || !strcmp(t, "undefined")) fputs("null", f);
  else if (json_is_number(t)) fputs(t, f);
  else json_str(f, t);
}

static void loc_fields(FILE *f, const Diag *d) {
  fputs("\"message\": ", f);
  json_str(f, d->message);
  fputs(", \"file\": ", f);
  json_str(f, d->loc.file ? d->loc.file : "sc-sim");
  fprintf(f, ", \"line\": %d, \"column\": %d", d->loc.line, d->loc.col);
}

static void index_field(FILE *f, const RunElement *at) {
  fputs(", \"index\": ", f);
  if (!at->set) {
    fputs("null", f);
    return;
  }
  fputc('[', f);
  for (int d = 0; d < at->rank; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)at->index[d]);
  fputc(']', f);
}

static void subcore_field(FILE *f, int core, int subcore) {
  if (core < 0) fputs(", \"subcore\": null", f);
  else fprintf(f, ", \"subcore\": \"%d.%d\"", core, subcore);
}

static void text_or_null(FILE *f, const char *key, const char *s) {
  fprintf(f, ", \"%s\": ", key);
  if (s && *s) json_str(f, s);
  else fputs("null", f);
}

/* "error": {"id", "type", "message", "file", "line", "column", "notes"} */
static void error_obj(FILE *f, const char *key, const Diag *d) {
  fprintf(f, ", \"%s\": {\"id\": ", key);
  json_str(f, diag_id_name(d->id));
  fputs(", \"type\": ", f);
  json_str(f, diag_class(d->id) == DC_RULE ? diag_type(d->id) : "InputError");
  fputs(", ", f);
  loc_fields(f, d);
  fputs(", \"notes\": [", f);
  for (int i = 0; i < d->nnotes; i++) {
    if (i) fputs(", ", f);
    json_str(f, d->notes[i]);
  }
  fputs("]}", f);
}

/* "fault": {"kind", "file", "line", "column", "message", "details", "subcore", "index"} */
static void fault_obj(FILE *f, const PipeOutcome *out) {
  const Fault *ft = &out->fault;
  fputs(", \"fault\": {\"kind\": ", f);
  json_str(f, ft->kind == FAULT_NONE ? "none" : fault_name(ft->kind));
  fputs(", ", f);
  loc_fields(f, &out->diag);
  fputs(", \"details\": ", f);
  json_str(f, ft->details);
  subcore_field(f, ft->kind == FAULT_NONE ? -1 : ft->core, ft->subcore);
  index_field(f, &ft->at);
  fputs(", \"origin\": ", f); /* --track-origins */
  if (ft->origin.line) {
    fputs("{\"what\": ", f);
    json_str(f, ft->origin_what);
    fputs(", \"file\": ", f);
    json_str(f, ft->origin.file ? ft->origin.file : "sc-sim");
    fprintf(f, ", \"line\": %d, \"column\": %d}", ft->origin.line, ft->origin.col);
  } else {
    fputs("null", f);
  }
  fputc('}', f);
}

/* "mismatch": {"message", ..., "where", "subcore", "instance", "index", "engine", "reference"} */
static void mismatch_obj(FILE *f, const PipeOutcome *out) {
  const VerifyFirst *x = &out->verify.first;
  fputs(", \"mismatch\": {", f);
  loc_fields(f, &out->diag);
  text_or_null(f, "where", x->set ? x->what : NULL);
  subcore_field(f, x->set ? x->core : -1, x->subcore);
  text_or_null(f, "instance", x->instance);
  index_field(f, &x->at);
  fputs(", \"engine\": ", f);
  value_text(f, x->at.set ? x->at.got : NULL);
  fputs(", \"reference\": ", f);
  value_text(f, x->at.set ? x->at.wanted : NULL);
  fputc('}', f);
}

/* "expect": {"check", "message", ..., "subcore", "instance", "index", "got", "wanted"} */
static void expect_obj(FILE *f, const PipeOutcome *out) {
  const VerifyFirst *x = &out->expect;
  bool error = out->expect_check && !strcmp(out->expect_check, "error");
  fputs(", \"expect\": {\"check\": ", f);
  json_str(f, out->expect_check ? out->expect_check : "expect");
  fputs(", ", f);
  loc_fields(f, &out->diag);
  subcore_field(f, x->set ? x->core : -1, x->subcore);
  text_or_null(f, "instance", x->instance);
  index_field(f, &x->at);
  if (error) { /* a rejection's text is a string whatever it reads; null: none (accepted) */
    text_or_null(f, "got", out->expect_got);
    text_or_null(f, "wanted", out->expect_wanted);
  } else {
    fputs(", \"got\": ", f);
    value_text(f, out->expect_got);
    fputs(", \"wanted\": ", f);
    value_text(f, out->expect_wanted);
  }
  fputc('}', f);
}

/* "warnings": [{"kind", "file", "line", "column", "message"}, ...] */
static void warnings(FILE *f, const RunResult *r) {
  fputs(", \"warnings\": [", f);
  for (int i = 0; r && i < r->nwarnings; i++) {
    const RunWarning *w = &r->warnings[i];
    fprintf(f, "%s{\"kind\": ", i ? ", " : "");
    json_str(f, w->kind);
    fputs(", \"file\": ", f);
    json_str(f, w->loc.file);
    fprintf(f, ", \"line\": %d, \"column\": %d, \"message\": ", w->loc.line, w->loc.col);
    json_str(f, w->text);
    fputc('}', f);
  }
  fputc(']', f);
}

static void cell(FILE *f, Dtype t, Cell c, bool def) {
  char b[64];
  if (!def) {
    fputs("null", f);
    return;
  }
  dtype_format(t, c, b, sizeof b);
  if (dtype_is_float(t)) json_number_text(f, b); /* nan, inf: strings */
  else fputs(b, f);
}

/* Nested JSON lists of `shape` over lanes v/def starting at *i. */
static void array(FILE *f, Dtype t, const Cell *v, const uint8_t *def, int rank, const int64_t *shape, int64_t *i) {
  if (!rank) {
    cell(f, t, v[*i], def[*i]);
    ++*i;
    return;
  }
  fputc('[', f);
  for (int64_t k = 0; k < shape[0]; k++) {
    if (k) fputs(", ", f);
    array(f, t, v, def, rank - 1, shape + 1, i);
  }
  fputc(']', f);
}

static void region(FILE *f, const Ref *ref, Region *g) {
  int sz = dtype_size(ref->dtype);
  Value v = {0};
  val_shape(&v, ref->dtype, ref->rank, ref->shape);
  for (int64_t e = 0; e < ref->nelems; e++) {
    v.v[e] = dtype_load(ref->dtype, g->bytes + e * sz);
    v.def[e] = mem_range_defined(g, e * sz, sz);
  }
  int64_t i = 0;
  array(f, ref->dtype, v.v, v.def, ref->rank, ref->shape, &i);
  val_free(&v);
}

/* "cycles", "refs": {instance: contents}, "values": {name@C.S: value} of the engine's run */
static void run_fields(FILE *f, const Program *p, RunResult *r) {
  fprintf(f, ", \"cycles\": %llu, \"refs\": {", (unsigned long long)r->cycles);
  bool first = true;
  for (int k = 0; k < p->nrefs; k++)
    for (int i = 0; i < mem_instance_count(&r->mem, k); i++) {
      Region *g = mem_instance(&r->mem, k, i);
      char name[200];
      run_instance_name(p->refs[k], g, name, sizeof name);
      fputs(first ? "" : ", ", f);
      first = false;
      json_str(f, name);
      fputs(": ", f);
      region(f, p->refs[k], g);
    }
  fputs("}, \"values\": {", f);
  for (int i = 0; i < r->nvalues; i++) {
    const NamedValue *nv = &r->values[i];
    char name[200];
    snprintf(name, sizeof name, "%s@%d.%d", nv->name, nv->core, nv->subcore);
    fputs(i ? ", " : "", f);
    json_str(f, name);
    fputs(": ", f);
    int64_t j = 0;
    array(f, nv->val.dtype, nv->val.v, nv->val.def, nv->val.rank, nv->val.shape, &j);
  }
  fputc('}', f);
}

/* sc-sim lower --json: the lowered text as one string. */
static void lowered_field(FILE *f, const Code *code) {
  char *text = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&text, &n);
  if (!m) abort();
  asm_print(code, m);
  fclose(m);
  fputs(", \"lowered\": ", f);
  json_str(f, text);
  free(text);
}

/* The part the verdict names. */
static void verdict_obj(FILE *f, const PipeOutcome *out) {
  switch (out->verdict) {
  case PV_OK:
    if (out->expected_rejection) error_obj(f, "rejection", &out->diag);
    break;
  case PV_REJECTED:
    error_obj(f, "error", &out->diag);
    if (out->expect_check) expect_obj(f, out);
    break;
  case PV_INVALID: error_obj(f, "error", &out->diag); break;
  case PV_MISMATCH: mismatch_obj(f, out); break;
  case PV_EXPECT_FAILED: expect_obj(f, out); break;
  case PV_FAULT: fault_obj(f, out); break;
  }
}

void outcome_json(FILE *f, const char *cmd, PipeOutcome *out) {
  fputs("{\"version\": " SC_JSON_VERSION ", \"command\": ", f);
  json_str(f, cmd);
  fprintf(f, ", \"status\": \"%s\", \"exit\": %d", pipe_verdict_name(out->verdict), out->exit);
  verdict_obj(f, out);
  warnings(f, out->ran ? &out->eng : NULL);
  if (out->lowered && !strcmp(cmd, "lower") && out->verdict == PV_OK) lowered_field(f, &out->code);
  if (out->ran) {
    run_fields(f, &out->program, &out->eng);
  }
  if (out->ran && !strcmp(cmd, "diff"))
    fprintf(f, ", \"diff\": {\"matched\": %llu, \"mismatched\": %llu}", (unsigned long long)out->verify.matched,
            (unsigned long long)out->verify.mismatched);
  fputs("}\n", f);
}
