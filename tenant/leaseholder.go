package tenant

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
)

// NewLeaseHolder names this process in a lease (StateStore.TakeLease): its
// host name ("facturad" when it has none) and a random suffix, so that two
// processes on one host hold leases apart.
func NewLeaseHolder() (string, error) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "facturad"
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("lease holder name: %w", err)
	}
	return host + "-" + hex.EncodeToString(b[:]), nil
}
