#!/usr/bin/env bash
# Smoke test of `pnpm start` on the node first on PATH: it must bring every service up and seed the
# demo ("Ctrl-C stops everything." ends its output) within START_SMOKE_TIMEOUT seconds (default 300);
# the first publication it prints (README's steps 2 and 3), pasted into bash, must reach the demo
# receiver's /recebidos; then every service must stop on Ctrl-C (SIGINT to its process group, as a
# terminal sends it).
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
until grep -q 'Ctrl-C stops everything.' "$log"; do
  if ! kill -0 "$pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
    kill -INT -- "-$pid" 2>/dev/null || true
    wait "$pid" || true
    cat "$log" >&2
    echo "start-smoke: pnpm start on node $version did not become ready" >&2
    exit 1
  fi
  sleep 1
done

# The first publication as printed: the lines indented by 4 after its heading (unless START_SEED=false).
if [ "${START_SEED:-true}" != "false" ]; then
  block="$(awk '/^Publish a first event/ { on = 1; next } on && /^    / { print substr($0, 5); next } on { exit }' "$log")"
  published=""
  if [ -n "$block" ]; then
    answer="$(bash -euo pipefail -c "$block" 2>&1 || true)"
    id="$(printf '%s' "$answer" | grep -oE '"id":"[0-9a-f-]{36}"' | head -n 1 | cut -d'"' -f4 || true)"
    if [ -n "$id" ]; then
      for _ in $(seq 1 20); do
        if bash -c "$(printf '%s\n' "$block" | tail -n 1)" | grep -q "$id"; then published="$id"; break; fi
        sleep 1
      done
    fi
  fi
  if [ -z "$published" ]; then
    kill -INT -- "-$pid" 2>/dev/null || true
    wait "$pid" || true
    cat "$log" >&2
    echo "start-smoke: the first publication pnpm start printed did not reach /recebidos: ${answer:-no block printed}" >&2
    exit 1
  fi
  echo "start-smoke: the printed first publication (event $published) reached the demo receiver"
fi

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
