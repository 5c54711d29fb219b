#!/bin/sh
# Runs one service of the workspace with tsx: run-service.sh <identity-dev|access|function|hub-api|delivery-worker|gateway>
set -eu
service="${1:?name the service to run, e.g. gateway}"
main="services/$service/src/main.ts"
if [ ! -f "$main" ]; then
  echo "no such service: $service ($main does not exist)" >&2
  exit 64
fi
exec node --import tsx "$main"
