#!/usr/bin/env bash
# Makes sure the tools and local services Tessera needs are there, on a developer machine or a fresh
# Debian CI machine. Sourced by scripts/test.sh and used by scripts/start.mjs (`bash scripts/lib/services.sh`).
# Every step is idempotent: what is already running is left alone.

PNPM_VERSION="${PNPM_VERSION:-12.21.0}"
PG_HOST="${PG_HOST:-127.0.0.1}"
PG_PORT="${PG_PORT:-5432}"
REDIS_HOST="${REDIS_HOST:-127.0.0.1}"
REDIS_PORT="${REDIS_PORT:-6379}"

log() { printf '[services] %s\n' "$*" >&2; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {
  log "installing $* with apt"
  if [ -z "${TESSERA_APT_UPDATED:-}" ]; then as_root apt-get update -qq >/dev/null; export TESSERA_APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

wait_port() {
  for _ in $(seq 1 60); do port_open "$1" "$2" && return 0; sleep 0.5; done
  return 1
}

ensure_pnpm() {
  if command -v pnpm >/dev/null 2>&1 && [[ "$(pnpm --version 2>/dev/null)" == 12.* ]]; then return 0; fi
  log "installing pnpm ${PNPM_VERSION}"
  npm install -g "pnpm@${PNPM_VERSION}" >/dev/null 2>&1 || as_root npm install -g "pnpm@${PNPM_VERSION}" >/dev/null
}

ensure_postgres() {
  if port_open "$PG_HOST" "$PG_PORT"; then return 0; fi
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    apt_install postgresql
    local hba
    hba=$(ls /etc/postgresql/*/main/pg_hba.conf | head -n 1)
    # Local development and CI only: trust loopback connections, as the test harness expects.
    as_root sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
    as_root sed -i -E 's/^(local\s+all\s+postgres\s+)\S+/\1trust/' "$hba"
  fi
  log "starting PostgreSQL"
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n 1)" main start || true
  wait_port "$PG_HOST" "$PG_PORT" || { log "PostgreSQL did not come up on ${PG_HOST}:${PG_PORT}"; return 1; }
}

ensure_redis() {
  if port_open "$REDIS_HOST" "$REDIS_PORT"; then return 0; fi
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server
  log "starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no >/dev/null
  wait_port "$REDIS_HOST" "$REDIS_PORT" || { log "Redis did not come up on ${REDIS_HOST}:${REDIS_PORT}"; return 1; }
}

# ffprobe reads the duration of liveness clips in the verification worker's checks (decision 0133).
ensure_ffmpeg() {
  if command -v ffprobe >/dev/null 2>&1 && command -v ffmpeg >/dev/null 2>&1; then return 0; fi
  apt_install ffmpeg
}

# Debian's chromium, driven by playwright-core in the hosted-SDK page tests (apps/verification-api/test/sdk-page*).
ensure_chromium() {
  if [ -x /usr/bin/chromium ]; then return 0; fi
  apt_install chromium
}

# Creates the database named in DATABASE_URL when it does not exist yet.
ensure_database() {
  local url="${1:-$DATABASE_URL}"
  node -e '
    const { Client } = require(require.resolve("pg", { paths: [process.cwd() + "/libs/platform"] }));
    const target = new URL(process.argv[1]); const name = target.pathname.slice(1);
    const admin = new URL(target); admin.pathname = "/postgres";
    const c = new Client({ connectionString: admin.toString() });
    c.connect()
      .then(() => c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]))
      .then((r) => (r.rowCount ? null : c.query(`CREATE DATABASE "${name.replace(/"/g, "")}"`)))
      .then(() => c.end())
      .catch((e) => { console.error(e.message); process.exit(1); });
  ' "$url"
}

ensure_all() {
  ensure_pnpm && ensure_postgres && ensure_redis && ensure_ffmpeg && ensure_chromium
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-all}" in
    all) ensure_all ;;
    database) ensure_database "${2:-}" ;;
    *) echo "usage: services.sh [all|database URL]" >&2; exit 2 ;;
  esac
fi
