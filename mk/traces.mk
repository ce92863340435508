# mk/traces.mk -- the trace viewer and trace tools (included by the Makefile).
# make viewer        build $(BUILD)/sc-sim-view (installs libsdl2-dev from
#                    Debian when missing: as root directly, else says what to run)
# make viewer-test   render a sample trace with SDL's dummy video driver into a
#                    BMP and check its size (run by hand: SDL2 is optional)
# make viewer-shot   regenerate docs/viewer.png: examples/histogram.yaml traced,
#                    drawn with its profile (--stats) by the dummy driver
# make trace-check   build $(BUILD)/trace-check FILE.json|FILE.csv, the strict
#                    checker tests/test_trace.c uses, for traces of real runs
# make SDL=1         `make` builds the viewer too
# The core build never needs SDL: only traces/viewer_sdl.c includes it, and
# the Makefile leaves that file out of SRCS.
TRACE_VIEWER     := $(BUILD)/sc-sim-view
TRACE_CHECK      := $(BUILD)/trace-check
TRACE_SDL_PKG    := libsdl2-dev
TRACE_SDL_CFLAGS  = $(shell pkg-config --cflags sdl2 2>/dev/null)
TRACE_SDL_LIBS    = $(shell pkg-config --libs sdl2 2>/dev/null || echo -lSDL2)
TRACE_TEST_DIR   := $(BUILD)/viewer-test
TRACE_SHOT_W     := 960
TRACE_SHOT_H     := 600

ifeq ($(SDL),1)
all: viewer
endif

viewer: trace-sdl-deps
	@$(MAKE) --no-print-directory $(TRACE_VIEWER)

trace-sdl-deps:
	@if pkg-config --exists sdl2 2>/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "viewer: installing $(TRACE_SDL_PKG)"; \
	  (apt-get install -y $(TRACE_SDL_PKG) || (apt-get update && apt-get install -y $(TRACE_SDL_PKG))) >/dev/null; \
	else \
	  echo "the viewer needs SDL2: run 'sudo apt-get install -y $(TRACE_SDL_PKG)' and then make viewer again" >&2; exit 1; \
	fi

$(TRACE_VIEWER): traces/viewer_sdl.c
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) $(TRACE_SDL_CFLAGS) -o $@ $< $(TRACE_SDL_LIBS) -lm

viewer-test: viewer $(BUILD)/tests/test_trace
	@mkdir -p $(TRACE_TEST_DIR)
	@rm -f $(TRACE_TEST_DIR)/shot.bmp
	$(BUILD)/tests/test_trace --sample $(TRACE_TEST_DIR)/sample.json
	SDL_VIDEODRIVER=dummy $(TRACE_VIEWER) $(TRACE_TEST_DIR)/sample.json --screenshot $(TRACE_TEST_DIR)/shot.bmp \
	  --width $(TRACE_SHOT_W) --height $(TRACE_SHOT_H) | tee $(TRACE_TEST_DIR)/view.out
	@set -- $$(od -An -tu4 -j18 -N8 $(TRACE_TEST_DIR)/shot.bmp 2>/dev/null); \
	if [ "$$(head -c 2 $(TRACE_TEST_DIR)/shot.bmp 2>/dev/null)" = BM ] && [ "$$1" = $(TRACE_SHOT_W) ] && \
	   [ "$$2" = $(TRACE_SHOT_H) ] && ! grep -q '^sc-sim-view: 0 bars' $(TRACE_TEST_DIR)/view.out; then \
	  echo "viewer-test: $(TRACE_TEST_DIR)/shot.bmp is a $$1x$$2 BMP: passed"; \
	else \
	  echo "viewer-test: FAILED: $(TRACE_TEST_DIR)/shot.bmp is not a $(TRACE_SHOT_W)x$(TRACE_SHOT_H) BMP of the sample" >&2; exit 1; \
	fi
	cd examples && ../$(BUILD)/sc-sim histogram.yaml --trace ../$(TRACE_TEST_DIR)/hist.json --stats ../$(TRACE_TEST_DIR)/hist.stats >/dev/null
	SDL_VIDEODRIVER=dummy $(TRACE_VIEWER) $(TRACE_TEST_DIR)/hist.json --stats $(TRACE_TEST_DIR)/hist.stats \
	  --screenshot $(TRACE_TEST_DIR)/hist.bmp --width $(TRACE_SHOT_W) --height $(TRACE_SHOT_H) | tee $(TRACE_TEST_DIR)/hist.out
	@if grep -q ', 6 profile line(s) ->' $(TRACE_TEST_DIR)/hist.out; then \
	  echo "viewer-test: the profile of examples/histogram.yaml (6 program lines) is drawn: passed"; \
	else echo "viewer-test: FAILED: the profile panel did not read the 6 lines of the stats file" >&2; exit 1; fi

viewer-shot: viewer $(BUILD)/sc-sim
	@mkdir -p $(TRACE_TEST_DIR)
	cd examples && ../$(BUILD)/sc-sim histogram.yaml --trace ../$(TRACE_TEST_DIR)/shot.json --stats ../$(TRACE_TEST_DIR)/shot.stats >/dev/null
	SDL_VIDEODRIVER=dummy $(TRACE_VIEWER) $(TRACE_TEST_DIR)/shot.json --stats $(TRACE_TEST_DIR)/shot.stats \
	  --screenshot $(TRACE_TEST_DIR)/viewer.bmp --width 1280 --height 720
	python3 traces/bmp2png.py $(TRACE_TEST_DIR)/viewer.bmp docs/viewer.png

trace-check: $(TRACE_CHECK)

$(TRACE_CHECK): tests/trace_check.c
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) -DTRACE_CHECK_MAIN -o $@ $< -lm

.PHONY: viewer viewer-test viewer-shot trace-sdl-deps trace-check
