# bertscore-viz: the app on port 8501, with the bundled model (all-MiniLM-L6-v2) inside the image.
#   CPU (default):  docker build -t bertscore-viz .
#   CUDA:           docker build --build-arg TORCH_VARIANT=cu126 -t bertscore-viz:cuda .
#   run:            docker run -p 8501:8501 bertscore-viz        (add --gpus all for the CUDA image)
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

RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin app
WORKDIR /app

# Dependencies first (a layer that survives code changes). torch from the PyTorch index of the chosen variant.
COPY requirements.txt pyproject.toml README.md ./
COPY bertscore_viz ./bertscore_viz
RUN pip install "torch==${TORCH_VERSION}" --index-url "https://download.pytorch.org/whl/${TORCH_VARIANT}" \
 && pip install -r requirements.txt

COPY app.py ./
COPY pages ./pages
COPY baselines ./baselines
COPY .streamlit ./.streamlit

USER app
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://localhost:8501/_stcore/health', timeout=4)" || exit 1

CMD ["streamlit", "run", "app.py", "--server.port=8501", "--server.address=0.0.0.0"]
