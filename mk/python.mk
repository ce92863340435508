# mk/python.mk -- the Python front end sc_sim (included by the Makefile).
# make venv            build/venv with the pinned packages (python/requirements.txt),
#                      created when missing or older than the requirements
# make test-python     the pytest suite (python/tests) against $(BUILD)/sc-sim;
#                      under `make asan` that is the sanitizer build
# make install-python  pip install ./python into PY_INSTALL_PYTHON (default: the
#                      venv's python), with the sc-sim binary beside the package
PYTHON            ?= python3
PY_VENV           := build/venv
PY_VENV_STAMP     := $(PY_VENV)/.installed
PY_REQUIREMENTS   := python/requirements.txt
PY_SOURCES        := $(wildcard python/sc_sim/*.py python/tests/*.py) python/pyproject.toml
PY_INSTALL_PYTHON ?= $(PY_VENV)/bin/python
PYTEST_FLAGS      ?= -q

$(PY_VENV_STAMP): $(PY_REQUIREMENTS)
	@test -x $(PY_VENV)/bin/python || $(PYTHON) -m venv $(PY_VENV) || { \
	  rm -rf $(PY_VENV); echo "venv: installing python3-venv from Debian"; \
	  (apt-get install -y python3-venv || (apt-get update && apt-get install -y python3-venv)) >/dev/null && \
	  $(PYTHON) -m venv $(PY_VENV); }
	$(PY_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r $(PY_REQUIREMENTS)
	@touch $@

venv: $(PY_VENV_STAMP)

test-python: $(PY_VENV_STAMP) $(BUILD)/sc-sim
	cd python && SC_SIM_BINARY=$(abspath $(BUILD)/sc-sim) ../$(PY_VENV)/bin/python -m pytest $(PYTEST_FLAGS)

install-python: $(PY_VENV_STAMP) $(BUILD)/sc-sim
	$(PY_INSTALL_PYTHON) -m pip install --quiet --disable-pip-version-check ./python
	install -m 755 $(BUILD)/sc-sim "$$($(PY_INSTALL_PYTHON) -c 'import os, sc_sim; print(os.path.dirname(sc_sim.__file__))')/sc-sim"

.PHONY: venv test-python install-python
