#!/usr/bin/env bash
# Parses and validates docker-compose.yml without a Docker engine (Debian's docker-compose needs none).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/services.sh
if docker compose version >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  docker compose config -q
else
  command -v docker-compose >/dev/null 2>&1 || apt_install docker-compose
  docker-compose config -q
fi
echo "docker-compose.yml is valid"
