#!/usr/bin/env bash
# The Debian packages the test suite runs, installed when they are missing (`pnpm test` runs this
# before jest; docs/development.md, "What `pnpm test` installs"):
#   chromium     the panel's browser tests (tests/panel) drive /usr/bin/chromium
#   prometheus   for promtool, which tests/ops runs on the alerts
#   nginx, haproxy           the edge-proxy test starts instances of its own
#   patroni, etcd-server     the PostgreSQL HA cluster test starts a cluster of its own
# Only the binaries are used: no package may start its system daemon (a policy-rc.d says no during
# the install), and afterwards none may listen on its default port, where the tests' own instances or
# another checkout's could collide with it.
# When everything is there this is a handful of dpkg and socket checks. When something is missing and
# this cannot install it (not root, or no apt-get), it prints the command to run and exits 1.
# Its stops are `service <name> stop`: the packages' daemons, never anything the tests started.
set -euo pipefail

PACKAGES=(chromium prometheus nginx haproxy patroni etcd-server)
# The system services of those packages and the port each listens on by default.
SERVICES=(prometheus:9090 nginx:80 haproxy:0 patroni:8008 etcd:2379)

installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = 'install ok installed' ]
}

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${PACKAGES[@]}"; do
    # A browser of the caller's own (PANEL_CHROMIUM) stands for the package.
    if [ "$p" = chromium ] && [ -n "${PANEL_CHROMIUM:-}" ] && [ -x "$PANEL_CHROMIUM" ]; then continue; fi
    installed "$p" || missing+=("$p")
  done
else
  command -v chromium >/dev/null 2>&1 || [ -x "${PANEL_CHROMIUM:-}" ] || missing+=(chromium)
  command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
  for b in nginx haproxy patroni etcd; do command -v "$b" >/dev/null 2>&1 || missing+=("$b"); done
fi

command_to_run="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]:-}"

POLICY=/usr/sbin/policy-rc.d
SAVED_POLICY=''
restore_policy() {
  if [ -n "$SAVED_POLICY" ]; then mv -f "$SAVED_POLICY" "$POLICY"; else rm -f "$POLICY"; fi
}

install_missing() {
  if [ -e "$POLICY" ]; then
    SAVED_POLICY="$(mktemp)"
    cp -p "$POLICY" "$SAVED_POLICY"
  fi
  # The machine's own policy comes back however the install ends.
  trap restore_policy EXIT
  printf '#!/bin/sh\n# test-prerequisites.sh: no daemon starts while the test packages install\nexit 101\n' >"$POLICY"
  chmod 755 "$POLICY"
  export DEBIAN_FRONTEND=noninteractive
  # Another install under way holds dpkg's lock: wait for it rather than fail.
  local wait=(-o DPkg::Lock::Timeout=600)
  apt-get "${wait[@]}" update -q
  apt-get "${wait[@]}" install -y -q --no-install-recommends "${missing[@]}"
  # Nor at the next boot.
  local entry
  for entry in "${SERVICES[@]}"; do update-rc.d "${entry%%:*}" disable >/dev/null 2>&1 || true; done
}

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "The tests need these Debian packages, which are not installed: ${missing[*]}." >&2
    echo "Install them (as root), then run pnpm test again:" >&2
    echo "  $command_to_run" >&2
    exit 1
  fi
  echo "test-prerequisites: installing ${missing[*]} (their daemons are kept stopped)"
  (install_missing)
fi

listening() {
  [ "$1" -gt 0 ] && (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# No system daemon of these packages on its default port (or, for haproxy, which has none, at all).
busy=()
for entry in "${SERVICES[@]}"; do
  name="${entry%%:*}"
  port="${entry##*:}"
  running=false
  if [ "$port" -gt 0 ]; then
    listening "$port" && running=true
  elif [ -e "/run/$name.pid" ] && kill -0 "$(cat "/run/$name.pid")" 2>/dev/null; then
    running=true
  fi
  "$running" || continue
  if [ "$(id -u)" -eq 0 ] && command -v service >/dev/null 2>&1; then
    service "$name" stop >/dev/null 2>&1 || true
  fi
  if [ "$port" -gt 0 ] && listening "$port"; then busy+=("$name on :$port"); fi
done
# Something else on one of those ports (a Prometheus of docker compose's, say) is not the tests'
# business: they start their own instances on free ports. Say so and go on.
if [ "${#busy[@]}" -gt 0 ]; then
  echo "test-prerequisites: a default port of these packages is still in use: ${busy[*]}" >&2
fi
