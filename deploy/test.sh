#!/usr/bin/env bash
# Runs the whole test suite against real PostgreSQL, Redis and an
# S3-compatible object store (SeaweedFS, for the archive).
#
# What it needs and does not find (PostgreSQL, Redis, xmllint, xmlsec1,
# poppler's pdftotext and zbar's zbarimg) it installs from Debian's packages
# (and promtool, for the alerting rules' tests). It starts its own PostgreSQL and Redis on
# free loopback ports with their data in a temporary folder, exports their
# URLs to the tests (TEST_DATABASE_URL, TEST_REDIS_URL), starts SeaweedFS's
# S3 gateway the same way (its weed command built once with go build into
# a cache folder and reused; TEST_S3_URL, TEST_S3_ACCESS_KEY and
# TEST_S3_SECRET_KEY, and TEST_WEED_BIN for the tests that start and stop
# an object store of their own; the tests create their bucket), builds
# Grafana's dashboard-linter once into the same cache folder for the
# dashboard's test (TEST_DASHBOARD_LINTER_BIN), installs the generators
# that docs/clients/package-lock.json pins (exact versions and integrity)
# once with npm ci into the same cache folder for the generated clients'
# test (TEST_CLIENT_TOOLS; node and npm, and Java for the Python client's
# generator, are installed from Debian's packages when missing) and names
# Debian's python3, with the Python client's modules from Debian's packages,
# for running that client (TEST_CLIENT_PYTHON), with
# TEST_REQUIRE_SERVICES=1 (a test missing one of them fails instead of
# skipping), runs go vet and
# go test -race over every package, then the signer's packages again built
# as the container image builds them, with the OpenSSL backend (cgo and the
# openssl tag, which need a C compiler and Debian's libssl-dev, installed
# too when missing), and the service's documents end to end in that build,
# and stops what it started even when the tests fail. Extra arguments go
# to the first two go test runs (for example -run Store).
#
# deploy/test.sh --quick [GO TEST FLAGS…] is the quick subset, for a first
# look and between changes: the same services and tools (but SeaweedFS and
# the dashboard-linter only when an earlier full run built them, and no C
# compiler, and neither the client generators nor what they run on), go
# vet, and go test -race -short over every package, in which the long
# drills (crash, load, replicas, end to end over every document type), the
# generated clients' test and the tests of what was not built skip
# themselves; no OpenSSL build. The README says how long each takes.
#
# deploy/test.sh --run COMMAND [ARGS…] starts the same services, runs COMMAND
# with their URLs in its environment instead of the tests, and stops them
# (deploy/bench.sh uses it). With PG_DURABLE=1 PostgreSQL keeps its default
# fsync and synchronous commits instead of the tests' fast settings.
#
# With TEST_DATABASE_URL and TEST_REDIS_URL both set, it uses that
# PostgreSQL and Redis and starts neither (nor installs them, nor builds or
# starts SeaweedFS: set TEST_S3_URL, TEST_S3_ACCESS_KEY, TEST_S3_SECRET_KEY
# and TEST_WEED_BIN for the archive's tests, which fail without them; the
# dashboard linter is built and the client generators are installed as
# usual before the tests, not for --run, unless TEST_DASHBOARD_LINTER_BIN
# and TEST_CLIENT_TOOLS name them): the
# tests work in schemas, key prefixes and bucket prefixes of their own, and
# drop their schemas.
# Without apt-get, or without root or sudo, it says which packages to
# install instead of installing them.
#
# While it installs, /usr/sbin/policy-rc.d keeps the packages from starting
# their system-wide services; it is written only when absent and removed
# on every way out. TEST_SH_POLICY_RC_D names another file for it (the
# script's own test uses it).
set -euo pipefail
cd "$(dirname "$0")/.."
. deploy/lib.sh

run_cmd=()
quick=
if [[ ${1:-} == --quick ]]; then
	shift
	quick=1
elif [[ ${1:-} == --run ]]; then
	shift
	(($#)) || { log "--run needs a command"; exit 2; }
	run_cmd=("$@")
	set --
fi

as_root() {
	if [[ $(id -u) -eq 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
		log "need root (or sudo) to run: $*"; exit 1
	fi
}

pg_bin() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[[ -n $d && -x $d/initdb ]] && echo "$d"
}

# external is set when the tests use a PostgreSQL and a Redis that run
# already (both URLs given): none is installed or started.
external=
if [[ -n ${TEST_DATABASE_URL:-} && -n ${TEST_REDIS_URL:-} ]]; then
	external=1
fi

# cannot_install explains what to do when the missing packages cannot be
# installed here, and stops.
cannot_install() {
	log "cannot install the missing tools: $1"
	log "install these Debian packages (or their equivalents), then run this again: ${missing[*]}"
	if [[ -z $external ]]; then
		log "or point the tests at a PostgreSQL and a Redis that run already; then neither is installed nor started:"
		log "  TEST_DATABASE_URL='postgres://USER:PASSWORD@HOST:5432/DATABASE?sslmode=disable' TEST_REDIS_URL='redis://HOST:6379/0' ./deploy/test.sh"
		log "  (the user must be allowed to create schemas in that database; the tests drop theirs when done)"
		log "  and, for the archive's tests, an S3-compatible store and a SeaweedFS weed command for the tests that start their own:"
		log "  TEST_S3_URL='s3://BUCKET/PREFIX?endpoint=http://HOST:8333&region=us-east-1' TEST_S3_ACCESS_KEY=... TEST_S3_SECRET_KEY=... TEST_WEED_BIN=/path/to/weed"
	fi
	exit 1
}

# policy_added is set while this script's policy-rc.d exists; it is
# removed on every way out, failures and interrupts included. One that was
# there before is neither replaced nor removed.
policy_rc_d=${TEST_SH_POLICY_RC_D:-/usr/sbin/policy-rc.d}
policy_added=
remove_policy() {
	if [[ -n $policy_added ]]; then
		as_root rm -f "$policy_rc_d" || log "could not remove $policy_rc_d: remove it by hand"
		policy_added=
	fi
}
trap remove_policy EXIT
trap 'exit 130' INT TERM

# run_tests [GO TEST FLAGS…]: go vet and go test -race over every package,
# then the build the image ships (deploy/Dockerfile: CGO_ENABLED=1, -tags
# openssl; a cgo-less build would quietly test crypto/rsa again): the
# signer's packages, and the service sending every type of document end
# to end on both stores (deploy/kubernetes checks that these tags are the
# Dockerfile's).
run_tests() {
	go vet ./...
	if [[ -n $quick ]]; then
		go test -race -short -count=1 -timeout 40m ./... "$@"
		return
	fi
	go test -race -count=1 -timeout 40m ./... "$@"
	CGO_ENABLED=1 go vet -tags openssl ./signer/... ./cmd/...
	CGO_ENABLED=1 go test -race -count=1 -timeout 10m -tags openssl ./signer/... "$@"
	CGO_ENABLED=1 go test -race -count=1 -timeout 15m -tags openssl ./cmd/facturad -run '^(TestOpenSSLSignsTheServiceDocuments|TestEndToEndPostgresRedis)$'
}

# build_dashboard_linter builds Grafana's dashboard-linter (Apache-2.0),
# pinned, once into the cache folder and exports TEST_DASHBOARD_LINTER_BIN
# for the dashboard's test (deploy/monitoring), unless that names one
# already. Its module is taken from the Go module proxy; one of its
# dependencies, the adapter of Grafana's v2 dashboard schema (lint/v2.go,
# which needs github.com/grafana/grafana/apps/dashboard, a module the proxy
# does not serve), is replaced in the build's copy by a stub that refuses v2
# dashboards: ours is a v1 (JSON model) dashboard, which every rule reads
# as before.
dashboard_linter_version=v0.2.0
build_dashboard_linter() {
	local bin=${TEST_DASHBOARD_LINTER_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/facturad-test/dashboard-linter-$dashboard_linter_version/dashboard-linter}
	if [[ ! -x $bin && -n $quick ]]; then
		log "--quick: Grafana's dashboard-linter is not built (a full run builds it): its test skips"
		return
	fi
	if [[ ! -x $bin ]]; then
		log "building Grafana's dashboard-linter $dashboard_linter_version into ${bin%/*} (once)"
		mkdir -p "${bin%/*}"
		local src tmp
		src=$(cd "${bin%/*}" && go mod download -json "github.com/grafana/dashboard-linter@$dashboard_linter_version" |
			sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
		[[ -n $src ]] || { log "could not download dashboard-linter $dashboard_linter_version"; exit 1; }
		tmp=$(mktemp -d)
		cp -r "$src/." "$tmp" && chmod -R u+w "$tmp"
		rm -f "$tmp/lint/v2.go" "$tmp/lint/v2_test.go"
		cat >"$tmp/lint/v2_off.go" <<'GO'
package lint

import (
	"encoding/json"
	"errors"
)

// The v2 schema's adapter is left out of this build (see deploy/test.sh).
func isV2APIVersion(string) bool { return false }

func newDashboardFromV2(json.RawMessage, string) (Dashboard, error) {
	return Dashboard{}, errors.New("v2 dashboards are not supported by this build")
}
GO
		(cd "$tmp" && GOFLAGS=-buildvcs=false go build -o "$bin.tmp" .) && mv "$bin.tmp" "$bin" || { rm -rf "$tmp"; exit 1; }
		rm -rf "$tmp"
	fi
	export TEST_DASHBOARD_LINTER_BIN=$bin
}

# client_python runs the generated Python client in the generated clients'
# test (docs/client.md): Debian's, with the modules that client imports.
client_python=/usr/bin/python3

# install_client_tools installs the generators of the generated clients'
# test, pinned with their integrity by docs/clients/package-lock.json, with
# npm ci into a cache folder named after the lock (once per lock) and
# exports TEST_CLIENT_TOOLS, the folder (the test finds the lock there and
# the generators in its node_modules), unless that names one already, and
# TEST_CLIENT_PYTHON, unless that is set. With --quick it does nothing:
# the test skips with -short.
install_client_tools() {
	[[ -z $quick ]] || return 0
	export TEST_CLIENT_PYTHON=${TEST_CLIENT_PYTHON:-$client_python}
	[[ -z ${TEST_CLIENT_TOOLS:-} ]] || return 0
	local sum dir
	sum=$(sha256sum docs/clients/package-lock.json | cut -c1-16)
	dir=${XDG_CACHE_HOME:-$HOME/.cache}/facturad-test/client-tools-$sum
	if [[ ! -d $dir ]]; then
		log "installing the client generators of docs/clients/package-lock.json into $dir (once)"
		rm -rf "$dir.tmp"
		mkdir -p "$dir.tmp"
		cp docs/clients/package.json docs/clients/package-lock.json "$dir.tmp/"
		if ! (cd "$dir.tmp" && npm ci --include=dev --ignore-scripts --no-audit --no-fund >/dev/null); then
			rm -rf "$dir.tmp"
			log "could not install the client generators"
			exit 1
		fi
		mv "$dir.tmp" "$dir"
	fi
	export TEST_CLIENT_TOOLS=$dir
}

# 1. Install what is missing, without letting the packages start their own
#    system-wide services (policy-rc.d answers "not now" to invoke-rc.d).
missing=()
if [[ -z $external ]]; then
	[[ -n $(pg_bin) ]] || missing+=(postgresql)
	command -v redis-server >/dev/null || missing+=(redis-server)
fi
command -v xmllint >/dev/null || missing+=(libxml2-utils)
command -v xmlsec1 >/dev/null || missing+=(xmlsec1)
# The printed documents are read back with poppler (pdftotext, pdfinfo,
# pdftoppm) and their QR codes with zbarimg.
command -v pdftotext >/dev/null || missing+=(poppler-utils)
command -v zbarimg >/dev/null || missing+=(zbar-tools)
# promtool comes with the Prometheus server package, which must not start.
command -v promtool >/dev/null || missing+=(prometheus)
# The README's Quick start, which a test runs, uses curl.
command -v curl >/dev/null || missing+=(curl)
# The generated clients' test makes a TypeScript client with node and a
# Python one with Java, and runs the Python one with Debian's python3; it
# skips with -short, so the quick subset needs none of them.
if [[ -z $quick ]]; then
	command -v node >/dev/null || missing+=(nodejs)
	command -v npm >/dev/null || missing+=(npm)
	command -v java >/dev/null || missing+=(default-jre-headless)
	"$client_python" -c 'import urllib3, dateutil, six, certifi' 2>/dev/null ||
		missing+=(python3 python3-urllib3 python3-dateutil python3-six python3-certifi)
fi
# The optional OpenSSL signer (the openssl build tag), which the tests
# build too, is compiled with cgo against libcrypto's headers.
if ((${#run_cmd[@]} == 0)) && [[ -z $quick ]]; then
	command -v gcc >/dev/null || missing+=(gcc)
	[[ -e /usr/include/openssl/evp.h ]] || missing+=(libssl-dev)
fi
if ((${#missing[@]})); then
	command -v apt-get >/dev/null || cannot_install "apt-get is not available"
	if [[ $(id -u) -ne 0 ]] && ! command -v sudo >/dev/null; then
		cannot_install "not root, and sudo is not available"
	fi
	log "installing ${missing[*]}"
	if [[ ! -e $policy_rc_d ]]; then
		policy_added=1 # set first: an interrupt while it is written still removes it
		as_root sh -c 'printf "#!/bin/sh\nexit 101\n" > "$1" && chmod 755 "$1"' sh "$policy_rc_d"
	fi
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	remove_policy
fi

if [[ -n $external ]]; then
	export TEST_REQUIRE_SERVICES=1
	log "using PostgreSQL at TEST_DATABASE_URL and Redis at TEST_REDIS_URL; starting neither"
	if [[ -z ${TEST_S3_URL:-} || -z ${TEST_WEED_BIN:-} ]]; then
		log "TEST_S3_URL (with TEST_S3_ACCESS_KEY and TEST_S3_SECRET_KEY) or TEST_WEED_BIN is not set: the archive's tests will fail"
	fi
	if ((${#run_cmd[@]})); then
		"${run_cmd[@]}"
		exit
	fi
	build_dashboard_linter
	install_client_tools
	run_tests "$@"
	exit
fi
PGBIN=$(pg_bin)

# 2. Start private instances.
work=$(mktemp -d -t facturad-test.XXXXXX)
pg_started= redis_started= weed_pid=
cleanup() {
	local rc=$?
	remove_policy
	if [[ -n $weed_pid ]]; then
		kill "$weed_pid" 2>/dev/null || true
		wait "$weed_pid" 2>/dev/null || true
	fi
	if [[ -n $pg_started ]]; then
		run_pg "$PGBIN/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
	fi
	if [[ -n $redis_started && -f $work/redis.pid ]]; then
		kill "$(cat "$work/redis.pid")" 2>/dev/null || true
	fi
	rm -rf "$work"
	exit $rc
}
trap cleanup EXIT INT TERM

# PostgreSQL refuses to run as root: run it as the postgres user when we are root.
pg_user=
if [[ $(id -u) -eq 0 ]]; then
	pg_user=postgres
	id -u postgres >/dev/null 2>&1 || pg_user=nobody
	chown "$pg_user" "$work"
fi
run_pg() { if [[ -n $pg_user ]]; then runuser -u "$pg_user" -- "$@"; else "$@"; fi; }

run_pg "$PGBIN/initdb" -D "$work/pg" -A trust -U postgres -E UTF8 --no-sync >"$work/initdb.log" 2>&1 ||
	{ cat "$work/initdb.log" >&2; exit 1; }
# A free port may be taken by another program between the look and the
# start: each server is tried on up to three ports.
for try in 1 2 3; do
	pg_port=$(free_port)
	pg_opts="-p $pg_port -k $work -c listen_addresses=127.0.0.1 -c max_connections=300"
	[[ -n ${PG_DURABLE:-} ]] || pg_opts+=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	if run_pg "$PGBIN/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w -t 60 -o "$pg_opts" start >/dev/null; then
		pg_started=1
		break
	fi
	((try < 3)) || { cat "$work/pg.log" >&2; exit 1; }
done

mkdir -p "$work/redis"
for try in 1 2 3; do
	redis_port=$(free_port)
	redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/redis" \
		--daemonize yes --pidfile "$work/redis.pid" --logfile "$work/redis.log"
	redis_started=1
	for _ in $(seq 1 50); do
		redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break 2
		sleep 0.1
	done
	((try < 3)) || { cat "$work/redis.log" >&2; exit 1; }
done

# SeaweedFS (Apache-2.0), an S3-compatible object store for the archive's
# tests: its weed command is built once from its module into a cache folder
# (a few minutes the first time) and reused; TEST_WEED_BIN names one built
# already.
weed_version=v0.0.0-20261109003541-7506e5f91cd6
weed_bin=${TEST_WEED_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/facturad-test/weed-$weed_version/weed}
if [[ ! -x $weed_bin && -n $quick ]]; then
	log "--quick: SeaweedFS's weed is not built (a full run builds it): the archive's tests against S3 skip"
	weed_bin=
elif [[ ! -x $weed_bin ]]; then
	log "building SeaweedFS's weed $weed_version into ${weed_bin%/*} (once)"
	mkdir -p "${weed_bin%/*}"
	weed_dir=$(cd "$work" && go mod download -json "github.com/seaweedfs/seaweedfs@$weed_version" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[[ -n $weed_dir ]] || { log "could not download SeaweedFS $weed_version"; exit 1; }
	(cd "$weed_dir" && GOFLAGS=-buildvcs=false go build -o "$weed_bin.tmp" ./weed) && mv "$weed_bin.tmp" "$weed_bin"
fi
if [[ -n $weed_bin ]]; then
	s3_key=facturad-test s3_secret=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
	mkdir -p "$work/weed"
	printf '{"identities":[{"name":"facturad","credentials":[{"accessKey":"%s","secretKey":"%s"}],"actions":["Admin","Read","Write","List","Tagging"]}]}\n' \
		"$s3_key" "$s3_secret" >"$work/weed/s3.json"
	for try in 1 2 3; do
		s3_port=$(free_port) m_port=$(free_port) v_port=$(free_port) f_port=$(free_port)
		"$weed_bin" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$work/weed" \
			-master.port="$m_port" -master.port.grpc="$((m_port + 1))" -master.volumeSizeLimitMB=64 \
			-volume.port="$v_port" -volume.port.grpc="$((v_port + 1))" -volume.max=20 \
			-filer.port="$f_port" -filer.port.grpc="$((f_port + 1))" \
			-s3 -s3.port="$s3_port" -s3.config="$work/weed/s3.json" >"$work/weed.log" 2>&1 &
		weed_pid=$!
		for _ in $(seq 1 300); do
			(exec 3<>"/dev/tcp/127.0.0.1/$s3_port") 2>/dev/null && break 2
			kill -0 "$weed_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill "$weed_pid" 2>/dev/null || true
		wait "$weed_pid" 2>/dev/null || true
		weed_pid=
		((try < 3)) || { tail -n 50 "$work/weed.log" >&2; exit 1; }
	done
	export TEST_S3_URL="s3://facturad-test/run?endpoint=http://127.0.0.1:$s3_port&region=us-east-1"
	export TEST_S3_ACCESS_KEY=$s3_key TEST_S3_SECRET_KEY=$s3_secret
	export TEST_WEED_BIN=$weed_bin
fi
export TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port/postgres?sslmode=disable"
export TEST_REDIS_URL="redis://127.0.0.1:$redis_port/0"
export TEST_REQUIRE_SERVICES=1
build_dashboard_linter
install_client_tools
log "PostgreSQL on 127.0.0.1:$pg_port, Redis on 127.0.0.1:$redis_port${weed_bin:+, SeaweedFS S3 on 127.0.0.1:$s3_port}"

if ((${#run_cmd[@]})); then
	"${run_cmd[@]}"
	exit
fi

# 3. Check and test.
run_tests "$@"
