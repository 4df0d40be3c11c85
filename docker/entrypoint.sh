#!/bin/sh
# Start JupyterLab in the container. A token is always required: JUPYTER_TOKEN,
# or a random one printed here.
set -eu
if [ -z "${JUPYTER_TOKEN:-}" ]; then
  JUPYTER_TOKEN=$(python -c 'import secrets; print(secrets.token_hex(24))')
  echo "JUPYTER_TOKEN was not set; using $JUPYTER_TOKEN"
fi
exec jupyter lab --no-browser --ip=0.0.0.0 --port=8888 --ServerApp.root_dir=/home/lab/pysim/notebooks \
  --IdentityProvider.token="$JUPYTER_TOKEN" "$@"
