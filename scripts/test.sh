#!/usr/bin/env bash
# Runs every test, from a fresh clone: installs pnpm and the dependencies, makes sure Postgres and Redis
# are reachable (starting or installing them), builds, migrates, checks migrations against entities,
# then runs every suite against the real services. `pnpm test` calls this script.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/services.sh

export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/tessera}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export TURBO_TELEMETRY_DISABLED=1

step() { printf '\n== %s\n' "$*"; }

step "tools and services"
ensure_all

step "dependencies"
pnpm install --frozen-lockfile

step "build"
pnpm build

step "migrate"
ensure_database "$DATABASE_URL"
pnpm db:migrate

step "entities and migrations agree"
pnpm turbo run db:check --concurrency=1

step "tests"
log_file=$(mktemp)
set +e
pnpm turbo run test --continue --concurrency="${TEST_CONCURRENCY:-2}" 2>&1 | tee "$log_file"
status=${PIPESTATUS[0]}
node --test scripts/*.test.mjs 2>&1 | tee -a "$log_file"
node_status=${PIPESTATUS[0]}
# Chaos suite (issue 15, docs/reliability.md): kill -9, a Redis of its own restarted; each file bounds itself.
pnpm test:chaos 2>&1 | tee -a "$log_file"
chaos_status=${PIPESTATUS[0]}
# The custody state machine's suites again with the simulator's pacing at 0, where a transaction's steps run
# on in one job instead of a queue job each (decision 0424).
pnpm --filter @tessera/custody-api test:run-on 2>&1 | tee -a "$log_file"
run_on_status=${PIPESTATUS[0]}
set -e

# One count for every runner together, then each failure with the first lines of its reason.
node scripts/lib/test-summary.mjs "$log_file"
rm -f "$log_file"
[ "$status" = 0 ] && [ "$node_status" = 0 ] && [ "$chaos_status" = 0 ] && [ "$run_on_status" = 0 ]
