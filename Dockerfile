# The croupier image: the referee (default command), and the tournament runner, bundled bots and
# spectator (`croupier tournament|bot|watch ...`). Two stages: the wheel is built, its engine compiled
# by mypyc, where a C compiler and Python's headers are; the runtime stage gets the installed venv and
# no compiler. Stubs generated at build time (setup.py), a slim non-root runtime, a health check
# through gRPC health. deploy/ runs it (compose, Kubernetes).
# No `# syntax=` line: BuildKit would fetch that frontend from a registry, and builds must work without one.

# Any Debian-like image with python3 (3.11+) and its venv module; where no registry can be reached,
# deploy/debian-base.sh builds one from Debian's packages (docs/operations.md).
ARG BASE_IMAGE=python:3.11-slim

FROM ${BASE_IMAGE} AS build
# The package index pip uses, when it is not PyPI itself (a mirror, a proxy); unset by default.
ARG PIP_INDEX_URL
ARG PIP_EXTRA_INDEX_URL
ARG PIP_TRUSTED_HOST
WORKDIR /src
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# The compiled engine's toolchain, in this stage only: gcc, and Python's headers where the base has
# none (Debian's python3 keeps them in python3-dev; python:3.11-slim ships them). Unpinned: the
# base's own release of each, whatever it is, as its python3 is.
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# hadolint ignore=DL3008
RUN want=(gcc libc6-dev); \
    python3 -c 'import pathlib, sys, sysconfig; sys.exit(not pathlib.Path(sysconfig.get_paths()["include"], "Python.h").exists())' \
      || want+=(python3-dev); \
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null \
 && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/croupier
COPY pyproject.toml setup.py README.md ./
COPY engine/ engine/
COPY wire/ wire/
COPY server/ server/
COPY clients/ clients/
COPY proto/ proto/
COPY gen/croupier/ gen/croupier/
# setup.py generates the croupier.v1 stubs into the wheel and compiles the engine; a build that fell
# back to pure Python (no compiler found) fails here rather than ship a slow image. With Dask's
# distributed (croupier[cluster]): the image is also a Dask scheduler and worker (deploy/k8s/cluster.yaml).
RUN /opt/croupier/bin/pip install ".[cluster]" \
 && /opt/croupier/bin/croupier --version | tee /dev/stderr | grep -q "hot path: compiled"

FROM ${BASE_IMAGE}
RUN useradd --system --uid 10001 --home-dir /data croupier \
 && mkdir -p /data && chown croupier /data
COPY --from=build /opt/croupier /opt/croupier
ENV PATH=/opt/croupier/bin:$PATH PYTHONUNBUFFERED=1
USER 10001
WORKDIR /data
EXPOSE 50051 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s \
  CMD ["python", "-c", "import sys, grpc; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; ch = grpc.insecure_channel('127.0.0.1:50051'); sys.exit(g.HealthStub(ch).Check(h.HealthCheckRequest(), timeout=3).status != 1)"]
ENTRYPOINT ["croupier"]
CMD ["serve", "--address", "0.0.0.0:50051", "--data", "/data", "--metrics-address", "0.0.0.0:9464"]
