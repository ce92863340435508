/* isa/isa.c -- the tables ISA_OPS expands into. */
#include "isa.h"

#include <string.h>

static const struct {
  const char *mnemonic, *form, *sem;
} info[I_COUNT] = {
#define X(e, m, f, s) [I_##e] = {m, f, s},
    ISA_OPS(X)
#undef X
};

const char *isa_mnemonic(Opcode op) { return info[op].mnemonic; }
const char *isa_form(Opcode op) { return info[op].form; }
const char *isa_semantics(Opcode op) { return info[op].sem; }

bool isa_lookup(const char *m, Opcode *out) {
  for (int i = 0; i < I_COUNT; i++)
    if (!strcmp(info[i].mnemonic, m)) {
      *out = (Opcode)i;
      return true;
    }
  return false;
}

static const struct {
  const char *key, *meaning;
} flags[IF_COUNT] = {
#define X(e, k, m) [IFB_##e] = {k, m},
    ISA_FLAGS(X)
#undef X
};

const char *isa_flag_key(int b) { return flags[b].key; }
const char *isa_flag_meaning(int b) { return flags[b].meaning; }

bool isa_flag_lookup(const char *key, unsigned *bit) {
  for (int i = 0; i < IF_COUNT; i++)
    if (!strcmp(flags[i].key, key)) return *bit = 1u << i, true;
  return false;
}
