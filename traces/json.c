/* traces/json.c -- JSON strings and numbers (see json.h). */
#include "json.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, at most U+10FFFF), 0 if it is not one. */
static int utf8_len(const unsigned char *p, size_t avail) {
  int n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
  if (p[0] < 0xc2 || p[0] > 0xf4 || (size_t)n > avail) return 0;
  for (int i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  if (n == 3 && p[0] == 0xe0 && p[1] < 0xa0) return 0;
  if (n == 3 && p[0] == 0xed && p[1] >= 0xa0) return 0;
  if (n == 4 && p[0] == 0xf0 && p[1] < 0x90) return 0;
  if (n == 4 && p[0] == 0xf4 && p[1] >= 0x90) return 0;
  return n;
}

/* One ASCII byte that needs an escape. */
static void put_escape(JsonPut put, void *ctx, unsigned char c) {
  static const char hex[] = "0123456789abcdef";
  char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
  switch (c) {
  case '"': put(ctx, "\\\"", 2); return;
  case '\\': put(ctx, "\\\\", 2); return;
  case '\n': put(ctx, "\\n", 2); return;
  case '\r': put(ctx, "\\r", 2); return;
  case '\t': put(ctx, "\\t", 2); return;
  case '\b': put(ctx, "\\b", 2); return;
  case '\f': put(ctx, "\\f", 2); return;
  default: put(ctx, esc, 6); return;
  }
}

static bool plain(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; }

void json_put_str(JsonPut put, void *ctx, const char *s, size_t max) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  size_t n = strnlen((const char *)p, max == SIZE_MAX ? SIZE_MAX : max + 1);
  bool cut = n > max;
  if (cut) n = max;
  put(ctx, "\"", 1);
  for (size_t i = 0; i < n;) {
    size_t run = i;
    while (run < n && plain(p[run])) run++;
    if (run > i) put(ctx, (const char *)p + i, run - i); /* the plain run, at once */
    if ((i = run) == n) break;
    if (p[i] < 0x80) {
      put_escape(put, ctx, p[i++]);
      continue;
    }
    int k = utf8_len(p + i, n - i);
    if (k) put(ctx, (const char *)p + i, (size_t)k);
    else put(ctx, "\\ufffd", 6);
    i += k ? (size_t)k : 1;
  }
  if (cut) put(ctx, "...", 3);
  put(ctx, "\"", 1);
}

static void put_file(void *ctx, const char *s, size_t n) { fwrite(s, 1, n, (FILE *)ctx); }

void json_str(FILE *f, const char *s) { json_put_str(put_file, f, s, SIZE_MAX); }

void json_double(FILE *f, double v, int decimals) {
  if (isfinite(v)) fprintf(f, "%.*f", decimals, v);
  else fputs("null", f);
}

static const char *digits(const char *s) {
  while (isdigit((unsigned char)*s)) s++;
  return s;
}

bool json_is_number(const char *s) {
  if (*s == '-') s++;
  if (*s == '0') s++;
  else if (isdigit((unsigned char)*s)) s = digits(s);
  else return false;
  if (*s == '.') {
    if (!isdigit((unsigned char)s[1])) return false;
    s = digits(s + 1);
  }
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '+' || *s == '-') s++;
    if (!isdigit((unsigned char)*s)) return false;
    s = digits(s);
  }
  return *s == '\0';
}

void json_number_text(FILE *f, const char *text) {
  if (json_is_number(text)) fputs(text, f);
  else json_str(f, text);
}
