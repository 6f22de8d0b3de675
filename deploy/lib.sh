# Shell helpers shared by deploy/test.sh and deploy/bench.sh (sourced).

# log writes a message to stderr, prefixed with the script's name.
log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }

# free_port prints a loopback port nothing listened on a moment ago. It
# picks below the kernel's range of ephemeral ports, from which outgoing
# connections take theirs: one of them could otherwise take the port between
# this check and the caller's bind (a benchmark run failed so, 1 in 10).
free_port() {
	local p lo=32768
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	((lo > 11000)) || lo=60000 # an ephemeral range starting that low: take the chance
	for _ in $(seq 1 100); do
		p=$((10000 + RANDOM % (lo - 10000)))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	log "no free port found"
	exit 1
}
