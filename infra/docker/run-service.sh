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
# hub-api's V8 heap is capped (192 MB of old space): under load a full heap is collected sooner
# instead of growing towards V8's default limit, which keeps its memory bounded (docs/benchmarks.md,
# "Publication"). NODE_MAX_OLD_SPACE_MB overrides it for any service; 0 leaves V8's default.
case "$service" in
  hub-api) heap="${NODE_MAX_OLD_SPACE_MB:-192}" ;;
  *) heap="${NODE_MAX_OLD_SPACE_MB:-0}" ;;
esac
# The delivery worker's young generation is doubled (32 MB semi-spaces): its jobs in flight live
# longer than V8's default one takes to fill, so each scavenge copied them all again
# (docs/decisions/delivery-worker-cpu.md, third pass). NODE_MAX_SEMI_SPACE_MB
# overrides it for any service; 0 leaves V8's default.
# hub-api's is set beside its old space cap: on Node 24 V8 grows the young generation to 64 MB
# semi-spaces, and next to a 192 MB old space hub-api spent about a third of its time collecting
# (docs/decisions/v8-heap-settings.md); 16 is what V8 took on Node 20.
case "$service" in
  delivery-worker) semi="${NODE_MAX_SEMI_SPACE_MB:-32}" ;;
  hub-api) semi="${NODE_MAX_SEMI_SPACE_MB:-16}" ;;
  *) semi="${NODE_MAX_SEMI_SPACE_MB:-0}" ;;
esac
set --
if [ "$heap" != 0 ]; then set -- "$@" --max-old-space-size="$heap"; fi
if [ "$semi" != 0 ]; then set -- "$@" --max-semi-space-size="$semi"; fi
exec node "$@" "$main"
