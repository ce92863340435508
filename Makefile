# sc-sim -- a simulator of the memory system of TPU SparseCores.
# make            build build/sc-sim
# make run        build, then run examples/quickstart.yaml
# make test       unit tests (CUnit), golden CLI tests, the Python front end's suite
#                 (creates build/venv with the pinned jax when missing)
# make asan       the whole suite under AddressSanitizer + UBSan
# make valgrind   the golden suite under valgrind (memcheck, definite leaks)
# make callgrind-budget  host instructions per simulated instruction against bench/callgrind_budget.txt
# make deps       install libyaml, CUnit and pkg-config from Debian
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wswitch-enum -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-format-truncation
BUILD   ?= build
PREFIX  ?= /usr/local
DEPS_PKGS := libyaml-dev libcunit1-dev pkg-config

HAVE_DEPS := $(shell pkg-config --exists yaml-0.1 2>/dev/null && test -f /usr/include/CUnit/CUnit.h && echo yes)
YAML_CFLAGS = $(shell pkg-config --cflags yaml-0.1 2>/dev/null)
YAML_LIBS   = $(shell pkg-config --libs yaml-0.1 2>/dev/null || echo -lyaml)

SRCS := $(wildcard isa/*.c memory/*.c lowering/*.c traces/*.c) $(filter-out sim/cli/main.c,$(wildcard sim/*/*.c))
SRCS := $(filter-out traces/viewer_sdl.c,$(SRCS))
OBJS := $(SRCS:%.c=$(BUILD)/%.o)
UNIT_TESTS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c))

all: deps-check $(BUILD)/sc-sim

$(BUILD)/sc-sim: $(OBJS) $(BUILD)/sim/cli/main.o
	$(CC) $(CFLAGS) -o $@ $^ $(YAML_LIBS) -lm

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) $(YAML_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(YAML_LIBS) -lcunit -lm

run: all
	$(BUILD)/sc-sim examples/quickstart.yaml

test: deps-check $(UNIT_TESTS) $(BUILD)/sc-sim $(BUILD)/trace-check
	@for t in $(UNIT_TESTS); do $$t || exit 1; done
	@python3 tests/layers.py $(BUILD)
	@tests/golden.sh $(BUILD)/sc-sim
	@$(MAKE) --no-print-directory venv
	@$(PY_VENV)/bin/python tests/json_schema.py $(BUILD)/sc-sim
	@tests/cli_texts.sh $(BUILD)/sc-sim
	@python3 tests/npy_out.py $(BUILD)/sc-sim
	@python3 tests/verdicts.py $(BUILD)/sc-sim
	@tests/limits.sh $(BUILD)/sc-sim
	@tests/traces.sh $(BUILD)/sc-sim $(BUILD)/trace-check
	@tests/outputs.sh $(BUILD)/sc-sim
	@tests/mutants.sh $(BUILD)/sc-sim
	@tests/fuzz_smoke.sh $(BUILD)/sc-sim
	@tests/shards.sh $(BUILD)/sc-sim
	@$(MAKE) --no-print-directory test-python

# Benchmarks: simulator speed as a ratio to plain C loops doing the same work.
bench: all $(BUILD)/bench/baseline
	@bench/run.sh $(BUILD)/sc-sim $(BUILD)/bench/baseline

# Host instructions per simulated instruction under callgrind on two bench
# programs, against bench/callgrind_budget.txt (more than 20 % over fails):
# a speed check that does not depend on the machine's load.  valgrind comes
# from Debian.
callgrind-budget: all
	@command -v valgrind >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then echo "callgrind-budget: installing valgrind"; \
	    (apt-get install -y valgrind || (apt-get update && apt-get install -y valgrind)) >/dev/null; \
	  else echo "make callgrind-budget needs valgrind: run 'sudo apt-get install -y valgrind' and then make again" >&2; exit 1; fi; }
	@bench/callgrind.sh $(BUILD)/sc-sim

$(BUILD)/bench/baseline: bench/baseline.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -o $@ $<

SAN := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
# Under the sanitizers programs run ~20x slower: the bounded fuzz run is smaller.
asan:
	FUZZ_SMOKE_COUNT=500 SC_SIM_SANITIZED=1 $(MAKE) BUILD=build/asan CFLAGS="$(SAN)" test

# The golden suite under valgrind's memcheck: a program with any memory
# error or definite leak exits 99 with valgrind's report on standard error,
# which its golden comparison then reports.  valgrind comes from Debian.
VALGRIND_FLAGS := -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite
valgrind: all
	@command -v valgrind >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then echo "valgrind: installing valgrind"; \
	    (apt-get install -y valgrind || (apt-get update && apt-get install -y valgrind)) >/dev/null; \
	  else echo "make valgrind needs valgrind: run 'sudo apt-get install -y valgrind' and then make again" >&2; exit 1; fi; }
	@mkdir -p $(BUILD)/valgrind
	@printf '#!/bin/sh\nexec valgrind $(VALGRIND_FLAGS) %s "$$@"\n' "$(CURDIR)/$(BUILD)/sc-sim" > $(BUILD)/valgrind/sc-sim
	@chmod +x $(BUILD)/valgrind/sc-sim
	GOLDEN_TIMEOUT=900 tests/golden.sh $(BUILD)/valgrind/sc-sim

# Installs the build dependencies when they are missing: as root directly,
# otherwise one line says what to run.
deps-check:
ifneq ($(HAVE_DEPS),yes)
	@$(MAKE) --no-print-directory deps
endif

deps:
	@if pkg-config --exists yaml-0.1 2>/dev/null && test -f /usr/include/CUnit/CUnit.h; then \
	  echo "deps: libyaml, CUnit and pkg-config are installed"; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "deps: installing $(DEPS_PKGS)"; \
	  (apt-get install -y $(DEPS_PKGS) || (apt-get update && apt-get install -y $(DEPS_PKGS))) >/dev/null; \
	else \
	  echo "sc-sim needs $(DEPS_PKGS): run 'sudo apt-get install -y $(DEPS_PKGS)' and then make again" >&2; exit 1; \
	fi

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BUILD)/sc-sim $(DESTDIR)$(PREFIX)/bin/sc-sim
	@$(MAKE) --no-print-directory install-python

clean:
	rm -rf build

.PHONY: all run test asan valgrind bench callgrind-budget deps deps-check install clean
.SECONDARY:
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
-include mk/fuzz.mk
-include mk/traces.mk
-include mk/python.mk
-include mk/slurm.mk
