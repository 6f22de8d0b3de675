#!/usr/bin/env bash
# Measures two builds side by side: deploy/bench.sh runs for another build
# (--serve-bin) and for this tree at the same time, each with its own
# sandbox, replicas and loadgen, at the same open-loop rate. Both then share
# the machine's state, which on a shared machine moves a build's CPU per
# document by ±10% between runs taken one after the other, and the
# difference between the two builds repeats to about 1%.
#
#   deploy/bench-pair.sh [--runs N] [--this-bin FILE] OTHER-BUILD [BENCH FLAGS…] --rate R [LOADGEN FLAGS…]
#
# --this-bin runs this tree's side from FILE, a build of this tree other
# than the default one (the image's: CGO_ENABLED=1 go build -tags openssl),
# so that both sides are built the same way.
#
# For example, the build of an earlier commit against this tree:
#
#   git worktree add ../facturad-old COMMIT && (cd ../facturad-old && go build -o facturad ./cmd/facturad)
#   deploy/bench-pair.sh ../facturad-old/facturad --callbacks --companies 20 --workers 32 --rate 80 --duration 30s
#   deploy/test.sh --run deploy/bench-pair.sh ../facturad-old/facturad --store postgres --callbacks …
#
# --rate is required: in a closed loop the faster build would take more of
# the machine and run at another load, where a document costs another
# amount of CPU. The two together should stay well below the machine's
# capacity. Each run prints the service CPU per document of both builds
# and the change, and each build's ratio (the raw RSA signature loadgen
# measured during the run ÷ that CPU per document); N runs (default 3)
# alternate which starts first.
set -euo pipefail
caller=$PWD # OTHER-BUILD is a path from where the script was called
cd "$(dirname "$0")/.."
. deploy/lib.sh

runs=3
if [[ ${1:-} == --runs ]]; then
	runs=$2
	shift 2
fi
this=()
if [[ ${1:-} == --this-bin ]]; then
	this=(--serve-bin "$(cd "$caller" && realpath "$2")")
	shift 2
fi
usage="usage: deploy/bench-pair.sh [--runs N] [--this-bin FILE] OTHER-BUILD [BENCH FLAGS…] --rate R [LOADGEN FLAGS…]"
(($# >= 1)) || { log "$usage"; exit 2; }
other=$(cd "$caller" && realpath "$1")
shift
[[ " $* " == *" --rate "* ]] || { log "--rate is required: $usage"; exit 2; }

out=$(mktemp -d -t facturad-pair.XXXXXX)
trap 'rm -rf "$out"' EXIT

# perdoc FILE: the service CPU per document a bench run printed.
perdoc() { sed -nE 's/^cpu:.* ([0-9.]+) ms per request.*/\1/p' "$1"; }
# ratio FILE: the ratio a bench run printed against the signature measured
# during the run, "unknown" when it printed none.
ratio() {
	local r
	r=$(sed -nE 's/^rsa:.* during the run .* ratio .* ([0-9.]+)$/\1/p' "$1")
	echo "${r:-unknown}"
}

for ((i = 1; i <= runs; i++)); do
	first=(--serve-bin "$other") firstout=$out/other second=("${this[@]}") secondout=$out/this
	if ((i % 2 == 0)); then
		first=("${this[@]}") firstout=$out/this second=(--serve-bin "$other") secondout=$out/other
	fi
	deploy/bench.sh ${first[@]+"${first[@]}"} "$@" >"$firstout" 2>&1 &
	a=$!
	deploy/bench.sh ${second[@]+"${second[@]}"} "$@" >"$secondout" 2>&1 &
	b=$!
	ok=1
	wait "$a" || ok=
	wait "$b" || ok=
	if [[ -z $ok ]]; then
		log "a run failed:"
		cat "$out/other" "$out/this" >&2
		exit 1
	fi
	o=$(perdoc "$out/other") t=$(perdoc "$out/this")
	if [[ -z $o || -z $t ]]; then
		log "a run printed no CPU per document (one replica each, --server-pid):"
		cat "$out/other" "$out/this" >&2
		exit 1
	fi
	awk -v i="$i" -v o="$o" -v t="$t" -v ro="$(ratio "$out/other")" -v rt="$(ratio "$out/this")" \
		'BEGIN { printf "run %d: other build %.3f ms per document (ratio %s), this tree %.3f ms (ratio %s) (%+.1f%%)\n", i, o, ro, t, rt, 100 * (t - o) / o }'
done
