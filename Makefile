# One command to set up and start the app (`make run`), one to run the tests (`make test`).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install run test eval-finance eval-cmrc bench clean

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	# torch first and pinned: the CPU build; a plain `torch` would pull GBs of CUDA packages
	$(PY) -m pip install torch==2.13.0
	$(PY) -m pip install -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	HF_HUB_OFFLINE=1 $(PY) app.py

# pytest exits 5 when it collects no tests: that is a failure here, said plainly, never a silent pass.
test: $(STAMP)
	HF_HUB_OFFLINE=1 $(PY) -m pytest $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; exit $$status

clean:
	rm -rf $(VENV) .pytest_cache test-artefacts
