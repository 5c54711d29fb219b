#!/usr/bin/env bash
# Installs every dependency, generates the Prisma clients and runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/../.."
export COREPACK_INTEGRITY_KEYS=0
pnpm install --frozen-lockfile
pnpm typecheck
pnpm lint
pnpm test
