#!/bin/sh
# Runs one service of the workspace from its bundle (built into the image by infra/scripts/build.mjs):
#   run-service.sh <identity-dev|access|function|hub-api|delivery-worker|demo-receiver|gateway>
# NODE_OPTIONS=--enable-source-maps maps stack traces to the TypeScript (about 50 MB more per process).
set -eu
service="${1:?name the service to run, e.g. gateway}"
main="services/$service/dist/main.js"
if [ ! -f "$main" ]; then
  echo "no such service: $service ($main does not exist)" >&2
  exit 64
fi
exec node "$main"
