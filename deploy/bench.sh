#!/usr/bin/env bash
# Measures sends end to end the way docs/performance.md reports them: the
# tax-authority sandbox in a process of its own (so that its checks are not
# counted as the service's), one or more replicas of facturad serve, and
# the load generator (cmd/loadgen), which reports each replica's CPU per
# document and measures one raw RSA-2048 signature in the same run for
# scale.
#
#   deploy/bench.sh [--store sqlite|postgres] [--replicas N] [--callbacks] [--serve-bin FILE] [--keep] [LOADGEN FLAGS…]
#
# The replicas trust the sandbox's answer certificate (--hacienda-trust-bundle),
# as a production service trusts the tax authority's. --callbacks gives each a
# public URL, so that the sandbox calls back with each verdict instead of the
# replicas asking for it.
#
# --serve-bin runs the replicas (and the sandbox) from another build, such
# as one of an earlier commit, with this tree's loadgen: before and after a
# change, measured the same way.
# The embedded store (the default) takes one replica. PostgreSQL and Redis
# come from TEST_DATABASE_URL and TEST_REDIS_URL; deploy/test.sh starts
# private ones around a command:
#
#   deploy/test.sh --run deploy/bench.sh --store postgres --replicas 3 --duration 30s
#
# Each run uses a fresh data folder (and a fresh PostgreSQL schema, dropped
# afterwards), so runs do not see each other's documents. --keep leaves the
# folder, the logs and the schema. Needs bash 4.4 or later.
set -euo pipefail
caller=$PWD # --serve-bin is a path from where the script was called
cd "$(dirname "$0")/.."
. deploy/lib.sh

store=sqlite replicas=1 keep= serve_bin= callbacks=
while (($#)); do
	case $1 in
	--callbacks) callbacks=1; shift ;;
	--serve-bin) serve_bin=$(cd "$caller" && realpath "$2"); shift 2 ;;
	--store) store=$2; shift 2 ;;
	--replicas) replicas=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	*) break ;;
	esac
done
case $store in
sqlite) ((replicas == 1)) || { log "the embedded store takes one replica; use --store postgres"; exit 2; } ;;
postgres)
	[[ -n ${TEST_DATABASE_URL:-} && -n ${TEST_REDIS_URL:-} ]] ||
		{ log "--store postgres needs TEST_DATABASE_URL and TEST_REDIS_URL (run it under deploy/test.sh --run)"; exit 2; }
	command -v psql >/dev/null || { log "--store postgres needs psql"; exit 2; }
	;;
*) log "--store is sqlite or postgres"; exit 2 ;;
esac

work=$(mktemp -d -t facturad-bench.XXXXXX)
pids=() schema=
cleanup() {
	local rc=$?
	# The replicas first, so that they do not log the sandbox's absence.
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill "${pids[$i]}" 2>/dev/null || true
		wait "${pids[$i]}" 2>/dev/null || true
	done
	if [[ -n $keep ]]; then
		log "kept $work${schema:+ and schema $schema}"
	else
		rm -rf "$work"
		[[ -z $schema ]] || psql -q "$TEST_DATABASE_URL" -c "SET client_min_messages = warning" -c "DROP SCHEMA $schema CASCADE" || true
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

go build -o "$work/facturad" ./cmd/facturad
go build -o "$work/loadgen" ./cmd/loadgen
bin=$work/facturad
sbin=${serve_bin:-$bin}

# waitfor FILE PATTERN: the first line of FILE matching PATTERN, once it appears.
waitfor() {
	for _ in $(seq 1 600); do
		if grep -q "$2" "$1" 2>/dev/null; then grep -m1 "$2" "$1"; return; fi
		sleep 0.1
	done
	log "timed out waiting for '$2' in $1:"; cat "$1" >&2; exit 1
}

"$sbin" sandbox --listen 127.0.0.1:0 --delay 0 --log-level warn --answer-ca-out "$work/answer-ca.pem" \
	>"$work/sandbox.out" 2>&1 &
pids+=($!)
line=$(waitfor "$work/sandbox.out" 'sandbox listening')
api=$(sed -E 's/.*api ([^ ]+).*/\1/' <<<"$line")
token=$(sed -E 's/.*token ([^ ]+).*/\1/' <<<"$line")

export FACTURAD_ADMIN_USER=bench FACTURAD_ADMIN_PASSWORD=bench-password-0123456789
FACTURAD_ADMIN_TOKEN=bench-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export FACTURAD_ADMIN_TOKEN

storeargs=() loadargs=()
if [[ $store == postgres ]]; then
	schema=bench_$(date +%s)_$$
	psql -q "$TEST_DATABASE_URL" -c "CREATE SCHEMA $schema"
	sep='?'; [[ $TEST_DATABASE_URL == *\?* ]] && sep='&'
	storeargs=(--database-url "$TEST_DATABASE_URL${sep}search_path=$schema" --redis-url "$TEST_REDIS_URL"
		--master-key "$("$bin" keygen)")
	loadargs=(--aux-process postgres --aux-process redis-server)
fi

for ((i = 1; i <= replicas; i++)); do
	extra=()
	((i == 1)) && [[ $store == postgres ]] && extra+=(--migrate)
	listen=127.0.0.1:0
	if [[ -n $callbacks ]]; then
		listen=127.0.0.1:$(free_port)
		extra+=(--public-url "http://$listen")
	fi
	"$sbin" serve --listen "$listen" --admin-listen 127.0.0.1:0 --data-dir "$work/data$i" --log-level warn \
		--hacienda-api-url "$api" --hacienda-token-url "$token" --hacienda-trust-bundle "$work/answer-ca.pem" \
		"${storeargs[@]}" "${extra[@]}" >"$work/serve$i.out" 2>&1 &
	pids+=($!)
	line=$(waitfor "$work/serve$i.out" 'facturad listening')
	loadargs+=(--url "$(sed -E 's/.*api (http:[^ ]+).*/\1/' <<<"$line")" --server-pid "${pids[-1]}")
done

"$work/loadgen" "${loadargs[@]}" "$@"

# Each replica's memory: resident now and at its peak.
for ((i = 1; i <= replicas; i++)); do
	pid=${pids[$i]}
	printf 'replica %d: %s, %s\n' "$i" "$(grep VmRSS "/proc/$pid/status" | tr -s ' \t' ' ')" \
		"$(grep VmHWM "/proc/$pid/status" | tr -s ' \t' ' ')"
done

# The cross-replica invariants, in the store shared by the replicas: every
# number of a branch, terminal and type was handed out once and none is
# missing, and every id_externo of a branch is one document.
if [[ $store == postgres ]]; then
	psql -qAt "$TEST_DATABASE_URL" -v ON_ERROR_STOP=1 <<SQL
SET search_path = $schema;
SELECT 'documents: ' || count(*) FROM documents;
SELECT 'sequences with a gap or a number used twice: ' || count(*) FROM (
  SELECT branch_id, terminal, tipo FROM documents GROUP BY branch_id, terminal, tipo
  HAVING count(*) <> max(numero) OR count(DISTINCT numero) <> count(*)) s;
SELECT 'id_externo used by two documents: ' || count(*) FROM (
  SELECT 1 FROM documents WHERE id_externo <> '' GROUP BY branch_id, id_externo HAVING count(*) > 1) s;
SELECT 'documents by estado: ' || string_agg(estado || '=' || n, ' ' ORDER BY estado)
  FROM (SELECT estado, count(*) n FROM documents GROUP BY estado) s;
SQL
fi
