# bertscore-viz: the app on port 8501, with the bundled model (all-MiniLM-L6-v2) inside the image.
#   CPU (default):  docker build -t bertscore-viz .
#   CUDA:           docker build --build-arg TORCH_VARIANT=cu126 -t bertscore-viz:cuda .
#   run:            docker run -p 8501:8501 bertscore-viz        (add --gpus all for the CUDA image)
#   limits:         docker run -p 8501:8501 -e BERTSCORE_VIZ_MAX_JOBS=1 -v bsv-baselines:/var/lib/bertscore-viz \
#                     -e BERTSCORE_VIZ_BASELINE_DIR=/var/lib/bertscore-viz/baselines bertscore-viz
#   every setting:  docs/DEPLOY.md (environment variables, or a [bertscore_viz] table in .streamlit/secrets.toml)
FROM python:3.11-slim

# Which PyTorch build: "cpu", or a CUDA tag of the PyTorch wheel index (cu126, cu128, ...).
ARG TORCH_VARIANT=cpu
ARG TORCH_VERSION=2.13.0

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1

# What a browser user may do (docs/DEPLOY.md). The defaults: only the bundled model (and catalog models installed
# in the image), no typed directories or hub names, no downloads, 2 models in memory, 2 large scoring jobs at once
# (others queue), 50 MB and 200,000 rows per file, 500 MB per session, baselines kept only in the session.
ENV BERTSCORE_VIZ_MODELS="" \
    BERTSCORE_VIZ_ALLOW_CUSTOM_MODELS=0 \
    BERTSCORE_VIZ_ALLOW_DOWNLOADS=0 \
    BERTSCORE_VIZ_MAX_MODELS=2 \
    BERTSCORE_VIZ_MAX_JOBS=2 \
    BERTSCORE_VIZ_UPLOAD_MB=50 \
    BERTSCORE_VIZ_UPLOAD_ROWS=200000 \
    BERTSCORE_VIZ_SESSION_UPLOAD_MB=500 \
    BERTSCORE_VIZ_BASELINE_DIR="" \
    STREAMLIT_CLIENT_SHOW_ERROR_DETAILS=none
# Streamlit's own upload cap (STREAMLIT_SERVER_MAX_UPLOAD_SIZE) is set by the entry point from BERTSCORE_VIZ_UPLOAD_MB
# unless given here; app.py also hides error details itself (no message, trace or path reaches a browser).

RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin app \
 && mkdir -p /var/lib/bertscore-viz/baselines && chown -R app /var/lib/bertscore-viz
WORKDIR /app

# Dependencies first (a layer that survives code changes). torch from the PyTorch index of the chosen variant.
COPY requirements.txt pyproject.toml README.md LICENSE ./
COPY bertscore_viz ./bertscore_viz
RUN pip install "torch==${TORCH_VERSION}" --index-url "https://download.pytorch.org/whl/${TORCH_VARIANT}" \
 && pip install -r requirements.txt

COPY app.py ./
COPY .streamlit ./.streamlit

USER app
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://localhost:8501/_stcore/health', timeout=4)" || exit 1

# The settings are checked (and printed to the log) before the server starts: a bad value stops the container.
ENTRYPOINT ["bertscore-viz", "check-deploy", "--exec"]
CMD ["streamlit", "run", "app.py", "--server.port=8501", "--server.address=0.0.0.0"]
