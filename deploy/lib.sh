# Shell helpers shared by deploy/test.sh and deploy/bench.sh (sourced).

# log writes a message to stderr, prefixed with the script's name.
log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }

# free_port prints a loopback port nothing listened on a moment ago.
free_port() {
	local p
	for _ in $(seq 1 100); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	log "no free port found"
	exit 1
}
