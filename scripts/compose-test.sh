#!/usr/bin/env bash
# docker-compose for real: builds the image from the Dockerfile and starts docker-compose.yml
# (PostgreSQL, Redis, the service) under a project name of its own, on a free port; waits until
# the service is healthy, sends requests through the published port, runs
# `npx team-access migrate` inside the image, stops the service and wants exit code 0. Always
# takes the project down afterwards (containers, network, volume).
#
# There is no Docker Hub on the CI machines: ../shared/compose builds local stand-ins for the base
# images (node:<major>-bookworm-slim, postgres:15, redis:7) from Debian's packages, and starts
# dockerd. Without it the test is skipped. The stand-ins and the build cache stay in docker, so a
# second run only starts containers.
set -euo pipefail
cd "$(dirname "$0")/.."

shared=../shared/compose
if [ ! -d "$shared" ]; then
  echo "compose test: skipped (no ../shared/compose beside the checkout to build the base images from)"
  exit 0
fi
shared=$(cd "$shared" && pwd)

now () { echo "$EPOCHREALTIME"; }
since () { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }
fail () { echo "compose test: FAILED: $*" >&2; exit 1; }

# Debian's docker.io (dockerd) and docker-compose (v1) when the machine lacks them
if [ ! -x /usr/sbin/dockerd ] || ! command -v docker-compose >/dev/null 2>&1; then
  echo "installing docker.io and docker-compose" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose) >/dev/null
fi
# shellcheck source=/dev/null
. "$shared/dockerd.sh"
ensure_dockerd || fail "dockerd does not start"

# the classic builder: this docker has no buildx, and nothing may come from Docker Hub
export DOCKER_BUILDKIT=0 COMPOSE_DOCKER_CLI_BUILD=0

logs=$(mktemp -d)
started=$(now)
# the stand-ins, with the Node major the Dockerfile names (npx fetches that Node once, then caches it)
major=$(sed -nE 's/^FROM node:([0-9]+)-bookworm-slim.*/\1/p' Dockerfile | head -1)
[ -n "$major" ] || fail "no FROM node:<major>-bookworm-slim in the Dockerfile"
nodebin=$(command -v node)
if [ "$("$nodebin" --version | sed -E 's/^v([0-9]+).*/\1/')" != "$major" ]; then
  nodebin=$(cd / && npx -y -p "node@$major" -c 'command -v node' 2>/dev/null) || fail "cannot get Node $major with npx"
fi
NODE_BIN=$nodebin bash "$shared/build-standins.sh" > "$logs/standins.log" 2>&1 ||
  { tail -20 "$logs/standins.log" >&2; fail "the stand-in base images were not built"; }
t_standins=$(since "$started")

project="ta-compose-test-$$"
port=$(node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close() })")
export TEAM_ACCESS_PORT=$port
compose () { docker-compose -p "$project" -f docker-compose.yml "$@"; }
cid=
cleanup () {
  local image='' id='' old=''
  if [ -n "$cid" ]; then
    image=$(docker inspect -f '{{.Config.Image}}' "$cid" 2>/dev/null || true)
    id=$(docker inspect -f '{{.Image}}' "$cid" 2>/dev/null || true)
  fi
  compose down -v --remove-orphans >/dev/null 2>&1 || true
  # the built image stays as the build cache under one name; the run's own name goes
  if [ -n "$id" ]; then
    old=$(docker image inspect -f '{{.Id}}' team-access-compose-test:cache 2>/dev/null || true)
    docker tag "$id" team-access-compose-test:cache
    [ -z "$image" ] || docker rmi "$image" >/dev/null 2>&1 || true
    [ -z "$old" ] || [ "$old" = "$id" ] || docker rmi "$old" >/dev/null 2>&1 || true
  fi
  rm -rf "$logs"
}
trap cleanup EXIT
on_failure () {
  [ -z "$cid" ] || { echo "--- the service's log (last 30 lines)" >&2; docker logs --tail 30 "$cid" >&2 2>&1 || true; }
}

t=$(now)
compose up -d --build > "$logs/up.log" 2>&1 || { tail -30 "$logs/up.log" >&2; fail "docker-compose up --build"; }
t_build=$(since "$t")

t=$(now)
cid=$(compose ps -q team-access)
[ -n "$cid" ] || fail "no team-access container"
health=
deadline=$(( ${EPOCHREALTIME%.*} + 120 ))
while [ "${EPOCHREALTIME%.*}" -lt "$deadline" ]; do
  health=$(docker inspect -f '{{.State.Health.Status}}' "$cid")
  [ "$health" = healthy ] && break
  [ "$(docker inspect -f '{{.State.Running}}' "$cid")" = true ] || { health="not running"; break; }
  sleep 0.5
done
[ "$health" = healthy ] || { on_failure; fail "the service is not healthy after 120 s ($health)"; }
t_healthy=$(since "$t")

t=$(now)
base="http://127.0.0.1:$port"
status () { curl -s -o "$logs/body" -D "$logs/headers" -w '%{http_code}' "$@"; }
check () { # check WHAT EXPECTED ACTUAL
  [ "$2" = "$3" ] || { on_failure; fail "$1: expected $2, got $3"; }
}
check "GET /readyz" 200 "$(status "$base/readyz")"
check "GET /api/v2/ping" 204 "$(status "$base/api/v2/ping")"
check "GET /api/v2/account/details without a token" 401 "$(status "$base/api/v2/account/details")"
grep -qi '^content-type: application/vnd.api+json' "$logs/headers" ||
  { on_failure; fail "the 401 is not application/vnd.api+json: $(grep -i '^content-type' "$logs/headers")"; }
node -e "const d = JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8')); process.exit(Array.isArray(d.errors) && d.errors[0].status === '401' ? 0 : 1)" "$logs/body" ||
  { on_failure; fail "the 401 is not a JSON:API error document: $(head -c 300 "$logs/body")"; }
check "GET /ui/ (the access review's page, built into the image)" 200 "$(status "$base/ui/")"
check "GET /ui/app.js" 200 "$(status "$base/ui/app.js")"
uid=$(compose exec -T team-access id -u) || fail "docker-compose exec"
[ "$uid" != 0 ] || fail "the service runs as root"
migrate=$(compose exec -T team-access npx team-access migrate 2>&1) || { echo "$migrate" >&2; fail "npx team-access migrate inside the image"; }
check "npx team-access migrate inside the image" "migrations: up to date" "$migrate"
t_checks=$(since "$t")

t=$(now)
compose stop team-access > "$logs/stop.log" 2>&1 || { cat "$logs/stop.log" >&2; fail "docker-compose stop"; }
t_stop=$(since "$t")
code=$(docker inspect -f '{{.State.ExitCode}}' "$cid")
[ "$code" = 0 ] || { on_failure; fail "the service exited with $code on docker-compose stop"; }

echo "compose test: passed (stand-ins $t_standins, build $t_build, healthy $t_healthy, checks $t_checks, stop $t_stop, stop exit $code)"
