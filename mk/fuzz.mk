# mk/fuzz.mk -- coverage-guided fuzzing of sc-sim with libFuzzer (clang).
# Included by the Makefile (-include mk/fuzz.mk); usable alone as well:
#   make -f mk/fuzz.mk fuzz-input
#
# make fuzz-input   SECONDS=N   the front end: load_program_text + check_program
# make fuzz-program SECONDS=N   the whole pipeline, runs bounded to 20000 ops
# make fuzz-build               only build the two harnesses
# make fuzz-seeds               only (re)build the seed corpus
# make fuzz-regress             replay seeds, hostile inputs, tests/golden/robust
#                               and the saved crashes through both harnesses once
# make fuzz-deps                install clang's libFuzzer runtime, libyaml, pkg-config
#
# Knobs (all FUZZ_*, so none clashes with the main Makefile):
#   SECONDS       the campaign length (default 60; FUZZ_SECONDS overrides it)
#   FUZZ_JOBS     parallel fuzzing processes (default 1)
#   FUZZ_FORK     1 (default): libFuzzer's -fork mode, which saves every crash,
#                 leak, timeout and out-of-memory input under crashes/ and
#                 keeps going (known open bugs do not end a campaign);
#                 0: the classic mode, which stops at the first one
#   FUZZ_OPTS     extra libFuzzer flags, e.g. FUZZ_OPTS=-seed=1
#   FUZZ_CC       the compiler (default clang)
# Everything lands under build/fuzz/: the harnesses, obj/, seeds/ (rebuilt
# from tests/golden/**/*.yaml, examples/*.yaml, tests/golden/npy with their
# .npy files, and tests/fuzz/hostile/),
# corpus/input and corpus/program (what the campaigns found; kept between
# runs), crashes/ (crash-, leak-, timeout-, oom- files), logs/.
# tests/fuzz/README.md and docs/robustness.md say more.

# Included before the main Makefile's first target, this file must not
# become the default goal.
FUZZ_SAVED_GOAL := $(.DEFAULT_GOAL)

FUZZ_CC      ?= clang
FUZZ_DIR     := build/fuzz
FUZZ_SECONDS ?= $(if $(SECONDS),$(SECONDS),60)
FUZZ_JOBS    ?= 1
FUZZ_FORK    ?= 1
FUZZ_OPTS    ?=
FUZZ_MAX_LEN := 4096
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Wno-unused-parameter
FUZZ_YAML_CFLAGS = $(shell pkg-config --cflags yaml-0.1 2>/dev/null)
FUZZ_YAML_LIBS   = $(shell pkg-config --libs yaml-0.1 2>/dev/null || echo -lyaml)
FUZZ_PKGS_BASE := clang libyaml-dev pkg-config

# The library sources, listed as the main Makefile lists them.
FUZZ_SRCS := $(wildcard isa/*.c memory/*.c lowering/*.c traces/*.c) $(filter-out sim/cli/main.c,$(wildcard sim/*/*.c))
FUZZ_SRCS := $(filter-out traces/viewer_sdl.c,$(FUZZ_SRCS))
FUZZ_OBJS := $(FUZZ_SRCS:%.c=$(FUZZ_DIR)/obj/%.o)
FUZZ_HARNESSES := $(FUZZ_DIR)/fuzz_input $(FUZZ_DIR)/fuzz_program

FUZZ_LIMITS = -max_len=$(FUZZ_MAX_LEN) -timeout=10 -rss_limit_mb=2048
FUZZ_MODE = $(if $(filter 1,$(FUZZ_FORK)),-fork=$(FUZZ_JOBS) -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1,\
  $(if $(filter-out 1,$(FUZZ_JOBS)),-jobs=$(FUZZ_JOBS) -workers=$(FUZZ_JOBS)))
FUZZ_RUN_FLAGS = $(FUZZ_LIMITS) -max_total_time=$(FUZZ_SECONDS) -dict=$(CURDIR)/tests/fuzz/sc-sim.dict \
  -print_final_stats=1 -use_value_profile=1 $(FUZZ_MODE) $(FUZZ_OPTS)

fuzz-build: $(FUZZ_HARNESSES)

# Missing tools are installed from Debian as root, as `make deps` does;
# otherwise one line says what to run.  The test is whether clang can link
# a libFuzzer harness (the runtime is libclang-rt-N-dev on Debian 12).
fuzz-deps:
	@ok() { command -v $(FUZZ_CC) >/dev/null 2>&1 && pkg-config --exists yaml-0.1 2>/dev/null && \
	    printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' | \
	    $(FUZZ_CC) -fsanitize=fuzzer,address,undefined -x c - -o /dev/null >/dev/null 2>&1; }; \
	if ok; then exit 0; fi; \
	ver=$$( (clang --version 2>/dev/null || apt-cache show clang 2>/dev/null) | sed -n 's/.*clang version \([0-9][0-9]*\).*/\1/p; s/^Depends:.*clang-\([0-9][0-9]*\).*/\1/p' | head -n 1); \
	pkgs="$(FUZZ_PKGS_BASE) libclang-rt-$${ver:-14}-dev"; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "fuzzing needs $$pkgs: run 'sudo apt-get install -y $$pkgs' and then make again" >&2; exit 1; \
	fi; \
	echo "fuzz-deps: installing $$pkgs"; \
	(apt-get install -y $$pkgs || (apt-get update && apt-get install -y $$pkgs)) >/dev/null || \
	  (apt-get install -y $(FUZZ_PKGS_BASE) libclang-common-$${ver:-14}-dev) >/dev/null; \
	ok || { echo "fuzz-deps: $(FUZZ_CC) still cannot link -fsanitize=fuzzer after installing $$pkgs" >&2; exit 1; }

$(FUZZ_DIR)/obj/%.o: %.c | fuzz-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link $(FUZZ_YAML_CFLAGS) -MMD -MP -c -o $@ $<

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/tests/fuzz/fuzz_%.o $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(FUZZ_YAML_LIBS) -lm

fuzz-seeds:
	@tests/fuzz/make_corpus.sh $(FUZZ_DIR)/seeds

fuzz-input fuzz-program: fuzz-%: $(FUZZ_DIR)/fuzz_% fuzz-seeds
	@mkdir -p $(FUZZ_DIR)/corpus/$* $(FUZZ_DIR)/crashes $(FUZZ_DIR)/logs
	@echo "fuzz-$*: $(FUZZ_SECONDS) s; new inputs in $(FUZZ_DIR)/corpus/$*, crashes in $(FUZZ_DIR)/crashes/"
	cd $(FUZZ_DIR)/logs && ../fuzz_$* $(FUZZ_RUN_FLAGS) \
	  -artifact_prefix=$(CURDIR)/$(FUZZ_DIR)/crashes/$*- $(CURDIR)/$(FUZZ_DIR)/corpus/$* $(CURDIR)/$(FUZZ_DIR)/seeds

# One pass, no mutation: every seed, tests/golden/robust program and saved
# crash through both harnesses (tests/fuzz/regress.sh); fails while any of
# them still crashes, leaks, hangs or runs out of memory.
fuzz-regress: $(FUZZ_HARNESSES) fuzz-seeds
	@tests/fuzz/regress.sh $(FUZZ_DIR)

.PHONY: fuzz-build fuzz-deps fuzz-seeds fuzz-input fuzz-program fuzz-regress
-include $(FUZZ_OBJS:.o=.d) $(FUZZ_DIR)/obj/tests/fuzz/fuzz_input.d $(FUZZ_DIR)/obj/tests/fuzz/fuzz_program.d

.DEFAULT_GOAL := $(FUZZ_SAVED_GOAL)
