/* sim/cli/outcome_json.h -- the outcome of a pipeline as the one JSON object
 * --json prints (docs/format.md, "Outcome and exit status"; its schema is
 * docs/schema/outcome.schema.json). */
#ifndef SC_OUTCOME_JSON_H
#define SC_OUTCOME_JSON_H

#include <stdio.h>

#include "../run/pipeline.h"

/* cmd: run, check, lower, diff.  Every field comes from the outcome as data. */
void outcome_json(FILE *f, const char *cmd, PipeOutcome *out);

#endif
