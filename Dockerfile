# pysim lab image: JupyterLab as a non-root user, token required, notebooks ready.
# Build with `make docker-build`; run with `make docker-run`.
FROM debian:bookworm-slim

ARG DEBIAN_FRONTEND=noninteractive
# Site CA certificates (for networks that intercept TLS); `make docker-build` copies the host's.
COPY docker/ca-certificates/ /usr/local/share/ca-certificates/
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates python3 python3-venv python3-dev gcc make \
 && update-ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1

RUN useradd --create-home --uid 1000 lab && install -d -o lab -g lab /home/lab/pysim
WORKDIR /home/lab/pysim
COPY --chown=lab:lab . .
USER lab
ENV PATH=/home/lab/pysim/.venv/bin:$PATH
RUN make setup

EXPOSE 8888
ENTRYPOINT ["docker/entrypoint.sh"]
