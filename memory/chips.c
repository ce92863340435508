/* sim/chips.c -- preset values (SPEC §2, from jax/_src/tpu_info.py). */
#include "chips.h"

#include <stddef.h>
#include <string.h>

#define KIB 1024LL
#define MIB (1024LL * 1024LL)
/*           cores subc lanes vmem       granule smem     hbm B/s */
/* The timing assumptions (CHIP_PARAMS sources), the same on every preset. */
#define TIMING 1000000000LL, 1, 1, 2, 4, 16, 4, 1, 100, 64, 256, 8, 2, 4
#define SC(c, s, l, v, g, bw) {c, s, l, v, g, 1 * MIB, bw, TIMING}
#define NOSC(bw) {0, 0, 0, 0, 0, 1 * MIB, bw, TIMING}

static const Chip chips[] = {
    {"tpu_v2", "TPU v2", NULL, "v2", false, {0, 0, 0, 0, 0, 16 * KIB, 358000000000LL, TIMING}},
    {"tpu_v3", "TPU v3", NULL, "v3", false, {0, 0, 0, 0, 0, 16 * KIB, 412500000000LL, TIMING}},
    {"tpu_v4i", "TPU v4 lite", NULL, "v4i", false, NOSC(614000000000LL)},
    {"tpu_v4", "TPU v4", NULL, "v4", false, NOSC(615000000000LL)},
    {"tpu_v5e", "TPU v5e", "TPU v5 lite", "v5e", false, NOSC(820000000000LL)},
    {"tpu_v5p", "TPU v5p", "TPU v5", "v5p", true, SC(4, 16, 8, 512 * KIB, 32, 1230000000000LL)},
    {"tpu_v6e", "TPU v6e", "TPU v6 lite", "v6e", true, SC(2, 16, 8, 256 * KIB, 32, 1640000000000LL)},
    {"tpu7", "TPU7", NULL, "7", true, SC(2, 16, 16, 512 * KIB, 32, 3700000000000LL)},
    {"tpu7x", "TPU7x", NULL, "7x", true, SC(2, 16, 16, 512 * KIB, 32, 3700000000000LL)},
    {"tpu8i", "TPU8i", NULL, "8i", true, SC(1, 4, 16, 512 * KIB, 64, 4300000000000LL)},
    {"tpu8t", "TPU8t", NULL, "8t", true, SC(2, 16, 16, 256 * KIB, 64, 6400000000000LL)},
};

static const struct {
  const char *name, *unit, *source;
} params[CP_COUNT] = {
#define X(f, u, s) [CP_##f] = {#f, u, s},
    CHIP_PARAMS(X)
#undef X
};

int chip_count(void) { return (int)(sizeof chips / sizeof chips[0]); }
const Chip *chip_at(int i) { return &chips[i]; }

const Chip *chip_find(const char *name) {
  for (int i = 0; i < chip_count(); i++) {
    const Chip *c = &chips[i];
    if (!strcmp(c->name, name) || !strcmp(c->device_kind, name) || (c->alias && !strcmp(c->alias, name)))
      return c;
  }
  return NULL;
}

const char *chip_param_name(ChipParamId id) { return params[id].name; }
const char *chip_param_unit(ChipParamId id) { return params[id].unit; }
const char *chip_param_source(ChipParamId id) { return params[id].source; }

int64_t *chip_param_ptr(ChipParams *p, ChipParamId id) {
  switch (id) {
#define X(f, u, s) \
  case CP_##f: return &p->f;
    CHIP_PARAMS(X)
#undef X
  case CP_COUNT: break;
  }
  return NULL;
}

bool chip_param_lookup(const char *key, ChipParamId *out) {
  for (int i = 0; i < CP_COUNT; i++)
    if (!strcmp(params[i].name, key)) {
      *out = (ChipParamId)i;
      return true;
    }
  return false;
}
