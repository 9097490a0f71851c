# Everything installs itself: a fresh clone needs only python3 (and node/npm for the Node bot).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed-dev
RUNTIME := $(VENV)/.installed-run
PROTOS := $(wildcard proto/croupier/v1/*.proto)
STUBS := gen/.stamp
NODE_DIR := clients/node
NODE_MODULES := $(NODE_DIR)/node_modules/.package-lock.json

.PHONY: run test lint serve bench clean stubs node wheel

# The demo: a duplicate round robin of the bundled bots on an embedded referee, ending with the
# ratings table. Run again, it plays the same tournament with new deals (ratings keep every run);
# interrupted, it resumes.
run: $(RUNTIME) $(STUBS)
	$(PY) -m croupier.clients.cli tournament tournaments/demo.toml --again

test: $(INSTALLED) $(STUBS) node
	$(PY) -m pytest

lint: $(INSTALLED) $(STUBS)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy --strict -p croupier.engine -p croupier.server -p croupier.clients
	@if [ -f Dockerfile ]; then $(VENV)/bin/hadolint Dockerfile; fi

serve: $(RUNTIME) $(STUBS)
	@echo "make serve: once it listens, a bot token: $(VENV)/bin/croupier register NAME (in another terminal)"
	$(PY) -m croupier.clients.cli serve

bench: $(RUNTIME) $(STUBS)
	$(PY) -m bench.engine_playouts

stubs: $(STUBS)

# The virtual environment, rebuilt when the pinned dependencies change: `make run` installs the
# runtime and what builds the stubs, `make test` and `make lint` the dev tools as well.
$(RUNTIME): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[stubs]'
	echo "$(CURDIR)/gen" > $$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/croupier-gen.pth
	touch $@

$(INSTALLED): $(RUNTIME)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

# The croupier package root and its croupier.v1 stubs from the .proto files, never committed; gen/
# also maps engine/, server/ and clients/ into the namespace (croupier.engine and so on).
$(STUBS): $(RUNTIME) $(PROTOS) proto/build_stubs.py
	$(PY) proto/build_stubs.py gen --links
	touch $@

# A wheel with the stubs inside, in dist/.
wheel: $(RUNTIME)
	$(PY) -m pip wheel --quiet --disable-pip-version-check --no-deps -w dist .

# The Node.js bot's packages; skipped (and its test skips, saying why) without npm.
node:
	@if command -v npm >/dev/null 2>&1 && [ -f $(NODE_DIR)/package.json ]; then \
	  [ -f $(NODE_MODULES) ] || (cd $(NODE_DIR) && npm ci --no-audit --no-fund --loglevel=error); \
	else echo "npm not found or no Node bot: the Node.js bot's test will be skipped"; fi

clean:
	rm -rf $(VENV) gen dist build $(NODE_DIR)/node_modules
