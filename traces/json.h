/* traces/json.h -- JSON text, written one way everywhere (RFC 8259).
 *
 * Every JSON sc-sim writes (--stats, --trace, --json, the fuzz reports)
 * escapes its strings and prints its numbers here, so that a file name
 * with a quote or a control character cannot break one of them.  Strings
 * are escaped into a caller's sink (a callback), so the trace writer can
 * keep its own buffer and the others a FILE. */
#ifndef SC_JSON_H
#define SC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* sc-sim's version, and the version of the JSON it writes (--json,
 * --stats, --trace; docs/schema/): the schema's changes when a field
 * changes meaning or goes away, not when one is added. */
#define SC_SIM_VERSION "0.1.0"
#define SC_SCHEMA_VERSION 1
/* The "version" object every JSON output carries, as a literal. */
#define SC_JSON_VERSION "{\"sc_sim\": \"" SC_SIM_VERSION "\", \"schema\": " SC_STR(SC_SCHEMA_VERSION) "}"
#define SC_STR(x) SC_STR_(x)
#define SC_STR_(x) #x

/* Receives n bytes of JSON text. */
typedef void (*JsonPut)(void *ctx, const char *s, size_t n);

/* Writes s (NULL: "") as a JSON string literal, quotes included: `"` and
 * `\` escaped, control characters as \n \r \t \b \f or \u00XX, DEL as
 * \u007f, valid UTF-8 passed through, each invalid byte as \ufffd.  At
 * most `max` bytes of s are written (then "..." inside the quotes);
 * SIZE_MAX: all of it. */
void json_put_str(JsonPut put, void *ctx, const char *s, size_t max);
/* json_put_str to a FILE, all of s. */
void json_str(FILE *f, const char *s);
/* A finite double with `decimals` digits after the point (printf %.Nf);
 * NaN and the infinities, which JSON cannot hold, as null. */
void json_double(FILE *f, double v, int decimals);
/* Whether s is a JSON number (RFC 8259 §6: -?int frac? exp?). */
bool json_is_number(const char *s);
/* The text of a number: as it is when it is a JSON number, else (nan,
 * inf, -inf) as a JSON string. */
void json_number_text(FILE *f, const char *text);

#endif
