#!/usr/bin/env bash
# Smoke test of `pnpm start` on the node first on PATH: it must bring every service up ("Event hub is
# running.") within START_SMOKE_TIMEOUT seconds (default 300), then stop every one of them on Ctrl-C
# (SIGINT to its process group, as a terminal sends it).
#   infra/scripts/start-smoke.sh [expected node version prefix, e.g. v20.]
# Ports, databases and RABBITMQ_URL come from the environment, as for `pnpm start`.
set -euo pipefail
cd "$(dirname "$0")/../.."
version="$(node --version)"
if [ -n "${1:-}" ] && [[ "$version" != "$1"* ]]; then
  echo "start-smoke: expected node $1*, found $version" >&2
  exit 1
fi
log="$(mktemp)"
set -m # its own process group, where SIGINT is not ignored as it is for a script's background jobs
pnpm start >"$log" 2>&1 &
pid=$!
set +m
deadline=$((SECONDS + ${START_SMOKE_TIMEOUT:-300}))
until grep -q 'Event hub is running.' "$log"; do
  if ! kill -0 "$pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
    kill -INT -- "-$pid" 2>/dev/null || true
    wait "$pid" || true
    cat "$log" >&2
    echo "start-smoke: pnpm start on node $version did not become ready" >&2
    exit 1
  fi
  sleep 1
done
kill -INT -- "-$pid"
wait "$pid" || true
for _ in $(seq 1 30); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 1; done
if kill -0 -- "-$pid" 2>/dev/null || ! grep -q 'stopping' "$log"; then
  cat "$log" >&2
  echo "start-smoke: pnpm start on node $version did not stop its services on Ctrl-C" >&2
  kill -KILL -- "-$pid" 2>/dev/null || true
  exit 1
fi
grep '✓' "$log"
echo "start-smoke: pnpm start ran on node $version"
rm -f "$log"
