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

.PHONY: run test test-pure lint serve bench clean stubs compiled node wheel cpp-bot go-bot cpp-toolchain go-toolchain

# The demo: a duplicate round robin of the bundled bots on an embedded referee, ending with the
# ratings table. Run again, it plays the same tournament with new deals (ratings keep every run);
# interrupted, it resumes. The web viewer (croupier web) serves it on $(WEB) meanwhile, its address printed:
# every live match, the sealed rotations of a duplicate set too (docs/spectator.md). The bundled bots
# wait PACE ms before each move, so the matches can be watched (a match lasts 10-15 s); PACE=0: full speed.
WEB ?= 127.0.0.1:8080
PACE ?= 100
run: $(RUNTIME) $(STUBS)
	CROUPIER_PACE_MS=$(PACE) $(PY) -m croupier.clients.cli tournament tournaments/demo.toml --again --web $(WEB)

# The whole suite on the compiled hot path (pure Python where no C compiler is), then the suites
# of what is compiled (PURE_TESTS) on pure Python. TEST_WORKERS pytest processes share the files,
# a file on one worker (pytest-xdist's loadfile: its module fixtures built once; loadgroup's
# groups are lost under pytest 9, which ignores the node id xdist rewrites): many tests wait on
# referees and bots. The Docker tests take turns through a lock (tests/docker/conftest.py).
TEST_WORKERS ?= 2
XDIST = -n $(TEST_WORKERS) --dist loadfile
test: $(INSTALLED) $(STUBS) compiled node
	$(PY) -m pytest $(XDIST)
	$(MAKE) --no-print-directory test-pure

PURE_TESTS := tests/engine tests/server/test_convert.py tests/server/test_framing.py tests/server/test_full_matches.py \
  tests/clients/docgen/test_bot_types.py tests/test_native.py tests/clients/sdk/test_sdk_surface.py
# Less the one test that compares the two paths: it needs the compiled one (a skip would fail CI).
test-pure: $(INSTALLED) $(STUBS)
	CROUPIER_PURE=1 $(PY) -m pytest $(XDIST) $(PURE_TESTS) \
	  --deselect tests/test_native.py::test_both_paths_play_every_variant_of_every_game_alike

lint: $(INSTALLED) $(STUBS)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy --strict -p croupier.engine -p croupier.wire -p croupier.server -p croupier.clients
	@if [ -f Dockerfile ]; then $(VENV)/bin/hadolint Dockerfile; fi

# WORKERS=N (or auto, one per core): N referee processes, worker I on port 50051 + I (croupier serve --workers).
serve: $(RUNTIME) $(STUBS)
	@echo "make serve: once it listens, a bot token: $(VENV)/bin/croupier register NAME (in another terminal)"
	$(PY) -m croupier.clients.cli serve $(if $(WORKERS),--workers $(WORKERS))

bench: $(RUNTIME) $(STUBS) compiled
	$(PY) -m bench.engine_playouts

stubs: $(STUBS)

# The hot path (wire/native.py's COMPILED: the engine's rules) compiled by mypyc in place:
# extension modules beside their sources, used while they match them (else pure Python, with a
# warning); `croupier --version` says which runs. Pure Python where no C compiler is (setup.py
# says why), or with CROUPIER_PURE=1.
MANIFEST := gen/croupier/compiled.json
compiled: $(MANIFEST)
$(MANIFEST): $(INSTALLED) $(STUBS) setup.py wire/native.py $(wildcard engine/*.py engine/games/*.py)
	$(PY) setup.py --quiet build_ext --inplace

# The virtual environment, rebuilt when the pinned dependencies change: `make run` installs the
# runtime and what builds the stubs, `make test` and `make lint` the dev tools as well.
$(RUNTIME): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	CROUPIER_PURE=1 $(PY) -m pip install --quiet --disable-pip-version-check -e '.[stubs]'
	echo "$(CURDIR)/gen" > $$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/croupier-gen.pth
	touch $@

$(INSTALLED): $(RUNTIME)
	CROUPIER_PURE=1 $(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

# The croupier.v1 stubs from the .proto files, never committed, into gen/croupier: the namespace,
# committed (its root module, and links that map engine/, wire/, server/ and clients/ into it).
$(STUBS): $(RUNTIME) $(PROTOS) proto/build_stubs.py
	$(PY) proto/build_stubs.py
	touch $@

# A wheel with the stubs inside, in dist/: the hot path compiled where a C compiler is.
wheel: $(RUNTIME)
	$(PY) -m pip wheel --quiet --disable-pip-version-check --no-deps -w dist .

# The Node.js bot's packages; skipped (and its test skips, saying why) without npm.
node:
	@if command -v npm >/dev/null 2>&1 && [ -f $(NODE_DIR)/package.json ]; then \
	  [ -f $(NODE_MODULES) ] || (cd $(NODE_DIR) && npm ci --no-audit --no-fund --loglevel=error); \
	else echo "npm not found or no Node bot: the Node.js bot's test will be skipped"; fi

# The C++ and Go starter bots (clients/cpp, clients/go), from Debian's packages: each target installs
# the missing ones first, saying so (TOOLCHAIN_CHECK=--check only lists them). A build lives in a
# folder named after its sources' content, so a binary always matches the sources it is used with;
# build/cpp-bot/croupier-bot and build/go-bot/croupier-bot link to the newest.
CPP_PACKAGES := g++ make pkg-config libgrpc++-dev protobuf-compiler-grpc
GO_PACKAGES := golang-go golang-google-grpc-dev golang-github-golang-protobuf-1-5-dev \
  golang-google-protobuf-dev protobuf-compiler protoc-gen-go protoc-gen-go-grpc
source_key = $(shell cat $(1) | sha256sum | cut -c1-12)
CPP_KEY = $(call source_key,clients/cpp/bot.cc clients/cpp/Makefile $(PROTOS))
GO_KEY = $(call source_key,clients/go/bot.go clients/go/Makefile $(PROTOS))

cpp-toolchain:
	@clients/debian-packages $(TOOLCHAIN_CHECK) "the C++ starter bot" $(CPP_PACKAGES)

go-toolchain:
	@clients/debian-packages $(TOOLCHAIN_CHECK) "the Go starter bot" $(GO_PACKAGES)

cpp-bot: cpp-toolchain
	@[ -x build/cpp-bot/$(CPP_KEY)/croupier-bot ] || \
	  $(MAKE) --no-print-directory -C clients/cpp -j$$(nproc) BUILD=$(CURDIR)/build/cpp-bot/$(CPP_KEY)
	@ln -sfn $(CPP_KEY)/croupier-bot build/cpp-bot/croupier-bot && echo "built build/cpp-bot/croupier-bot"

go-bot: go-toolchain
	@[ -x build/go-bot/$(GO_KEY)/croupier-bot ] || $(MAKE) --no-print-directory -C clients/go \
	  BUILD=$(CURDIR)/build/go-bot/$(GO_KEY) GOCACHE=$(CURDIR)/build/go-bot/cache
	@ln -sfn $(GO_KEY)/croupier-bot build/go-bot/croupier-bot && echo "built build/go-bot/croupier-bot"

clean:
	rm -rf $(VENV) gen/.stamp gen/croupier/v1 gen/croupier/compiled.json gen/*.so dist build $(NODE_DIR)/node_modules
	rm -f engine/*.so engine/games/*.so server/*.so wire/*.so
