# ELMo Explorer: the Streamlit app on the embedded default model, as a non-root user on port 8501.
#
#   docker build -t elmo-explorer .
#   docker run --rm -p 8501:8501 elmo-explorer                     # then open http://localhost:8501
#
# GPU: torch 2.13.0 from PyPI on Linux x86_64 is the CUDA build (it brings its own CUDA libraries), so the
# default image already uses an NVIDIA GPU when run with `docker run --gpus all ...` (host: NVIDIA driver and
# NVIDIA Container Toolkit). To build on NVIDIA's CUDA runtime image instead (Ubuntu 24.04: Python 3.12 is
# installed below, since that image has none):
#
#   docker build -t elmo-explorer:cuda --build-arg BASE_IMAGE=nvidia/cuda:12.8.1-runtime-ubuntu24.04 .
#   docker run --rm --gpus all -p 8501:8501 elmo-explorer:cuda
#
# A CPU-only image (about 1.5 GB smaller): pass PyTorch's CPU wheel index, e.g.
#   docker build -t elmo-explorer:cpu --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu .
#
# App settings are environment variables (see app/serving/settings.py), e.g. `-e ELMO_EXPLORER_DEVICE=cpu`.
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}

ARG TORCH_INDEX_URL=""

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    NUMBA_CACHE_DIR=/home/app/.cache/numba

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# Python only where the base image has none (the CUDA runtime images); python:3.11-slim skips this.
# DL3008 (pin apt versions) ignored: the versions differ with each base image; the Python packages are pinned.
# hadolint ignore=DL3008
RUN if ! python3 -c "import venv, ensurepip" >/dev/null 2>&1; then \
        apt-get update \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv \
        && rm -rf /var/lib/apt/lists/*; \
    fi \
    && python3 -m venv "$VIRTUAL_ENV" \
    && groupadd --gid 10001 app \
    && useradd --create-home --uid 10001 --gid 10001 --shell /usr/sbin/nologin app

WORKDIR /app
# the packages elmo_core and app are imported from here (the image does not pip-install the project)
ENV PYTHONPATH=/app

# Dependencies first (their layer is reused while only the code changes). torch is pinned in requirements.txt.
COPY requirements.txt .
RUN if [ -n "$TORCH_INDEX_URL" ]; then pip install --index-url "$TORCH_INDEX_URL" "$(grep -E '^torch==' requirements.txt)"; fi \
    && pip install -r requirements.txt

COPY --chown=10001:10001 elmo_core/ elmo_core/
COPY --chown=10001:10001 app/ app/
COPY --chown=10001:10001 assets/ assets/

USER 10001:10001

# Compile UMAP once, at build time, into numba's on-disk cache (NUMBA_CACHE_DIR above; app.explore.projections.import_umap
# has every UMAP function use it): a container then loads UMAP in 2-3 s and compiles nothing, where an empty
# cache took about 40 s on 2 cores. If it fails, a map that asks for UMAP shows PCA and says why.
RUN python -c "from app.serving.warm_up import UmapWarmUp; w = UmapWarmUp().run_now(); print('UMAP warm-up:', w.state, w.error)"

EXPOSE 8501

HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://localhost:8501/_stcore/health', timeout=4).read() != b'ok')"]

CMD ["python", "-m", "app.launch", "--server.address", "0.0.0.0", "--server.port", "8501"]
