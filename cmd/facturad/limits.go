package main

import (
	"log/slog"
	"syscall"
)

// reservedFiles are the descriptors kept for what is not an API connection:
// the store, Redis, the tax authority, the admin listener, log files.
const reservedFiles = 256

// raiseOpenFileLimit raises the soft open-file limit to the hard one, as
// far as the process may, and returns the limit in force (0 if unknown).
func raiseOpenFileLimit(log *slog.Logger) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		log.Warn("open-file limit: cannot read it", "err", err)
		return 0
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			log.Warn("open-file limit: cannot raise it", "soft", lim.Cur, "hard", lim.Max, "err", err)
		} else {
			lim = raised
		}
	}
	return lim.Cur
}

// connectionCaps is the cap on API connections in all and per client
// address: as configured, or derived from the open-file limit so that
// connections can never take the descriptors the service needs for its
// store and its calls out (the limit less reservedFiles in all, a quarter
// of that per address: a shop chain behind one NAT address still gets
// much, and two flooding addresses leave half the table to the others).
func connectionCaps(c Config, openFiles uint64) (total, perIP int) {
	total, perIP = c.MaxConns, c.MaxConnsPerIP
	if total == 0 && openFiles > 0 {
		total = 64
		if openFiles > reservedFiles+64 {
			total = int(min(openFiles-reservedFiles, 1<<20))
		}
	}
	if perIP == 0 && total > 0 {
		perIP = max(total/4, 1)
	}
	return total, perIP
}
