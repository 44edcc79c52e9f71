# Torch Playground on CPU: `docker build -t torch-playground .` then
# `docker run -p 8501:8501 torch-playground`. Several replicas behind nginx: deploy/.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    STREAMLIT_SERVER_PORT=8501

WORKDIR /app

# torch and torchvision first, from PyTorch's CPU wheel index, with the version ranges of
# requirements.txt: the PyPI wheels pull ~3 GB of CUDA libraries a CPU server never uses.
# The second install then finds them satisfied (2.x+cpu matches the ranges).
COPY requirements.txt .
RUN grep -E '^torch(vision)?[<>=! ]' requirements.txt > /tmp/torch-requirements.txt \
    && pip install --index-url https://download.pytorch.org/whl/cpu -r /tmp/torch-requirements.txt \
    && pip install -r requirements.txt

# Never run the app as root; the home folder holds the torch hub cache (~/.cache/torch). The
# folder exists and is the app user's, so a volume mounted there (compose runs the image with a
# read-only root) starts out writable by the app.
RUN useradd --create-home --uid 1000 app \
    && mkdir -p /home/app/.cache/torch && chown -R app:app /home/app/.cache
COPY --chown=app:app . .
USER app

EXPOSE 8501

HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://localhost:%s/_stcore/health' % os.environ['STREAMLIT_SERVER_PORT'], timeout=4)"]

# Production flags: no file watcher or rerun-on-save (nobody edits code in the container, and
# the watcher costs CPU), headless, on all interfaces so a proxy or `docker run -p` reaches it.
# The port is STREAMLIT_SERVER_PORT (8501; replicas behind nginx each have their own).
CMD ["streamlit", "run", "app.py", \
     "--server.fileWatcherType", "none", \
     "--server.runOnSave", "false", \
     "--server.headless", "true", \
     "--server.address", "0.0.0.0"]
