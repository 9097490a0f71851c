# Everything installs itself: a fresh clone needs only python3 (and node/npm for the Node bot).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
PROTOS := $(wildcard proto/croupier/v1/*.proto)
STUBS := gen/.stamp
NODE_DIR := clients/node
NODE_MODULES := $(NODE_DIR)/node_modules/.package-lock.json

.PHONY: run test lint serve bench clean stubs node

# The demo: a duplicate round robin of the bundled bots on an embedded referee, ending with the
# ratings table. Run again, it plays the same tournament with new deals (ratings keep every run);
# interrupted, it resumes.
run: $(INSTALLED) $(STUBS)
	$(PY) -m clients.cli tournament tournaments/demo.toml --again

test: $(INSTALLED) $(STUBS) node
	$(PY) -m pytest

lint: $(INSTALLED) $(STUBS)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy --strict engine server clients
	@if [ -f Dockerfile ]; then $(VENV)/bin/hadolint Dockerfile; fi

serve: $(INSTALLED) $(STUBS)
	$(PY) -m clients.cli serve

bench: $(INSTALLED) $(STUBS)
	$(PY) -m bench.engine_playouts

stubs: $(STUBS)

# The virtual environment, rebuilt when the pinned dependencies change.
$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	echo "$(CURDIR)/gen" > $$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/croupier-gen.pth
	touch $@

# Python stubs from the .proto files, never committed.
$(STUBS): $(INSTALLED) $(PROTOS)
	rm -rf gen && mkdir -p gen/croupier/v1
	touch gen/croupier/__init__.py gen/croupier/v1/__init__.py gen/croupier/py.typed
	@if [ -n "$(PROTOS)" ]; then \
	  $(PY) -m grpc_tools.protoc -Iproto \
	    --plugin=protoc-gen-mypy=$(VENV)/bin/protoc-gen-mypy \
	    --plugin=protoc-gen-mypy_grpc=$(VENV)/bin/protoc-gen-mypy_grpc \
	    --python_out=gen --grpc_python_out=gen --mypy_out=quiet:gen --mypy_grpc_out=quiet:gen \
	    $(PROTOS); fi
	touch $@

# The Node.js bot's packages; skipped (and its test skips, saying why) without npm.
node:
	@if command -v npm >/dev/null 2>&1 && [ -f $(NODE_DIR)/package.json ]; then \
	  [ -f $(NODE_MODULES) ] || (cd $(NODE_DIR) && npm ci --no-audit --no-fund --loglevel=error); \
	else echo "npm not found or no Node bot: the Node.js bot's test will be skipped"; fi

clean:
	rm -rf $(VENV) gen $(NODE_DIR)/node_modules
