package main

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"slices"
	"syscall"
	"time"
)

// CPU references of `facturad loadgen` beside the service's own CPU time:
// a raw RSA signature measured in this process after the run.

// The raw RSA reference: rsaBatches batches of rsaBatchSize signatures.
const (
	rsaBatches   = 5
	rsaBatchSize = 40
)

// selfCPU is the CPU time (user + system) this process has used, every
// thread together, to the microsecond.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// rawRSASignCPU measures the CPU time of one RSA-2048 PKCS#1 v1.5 SHA-256
// signature (hash included) with Go's crypto/rsa and a generated key, in
// this process: the median over rsaBatches batches of the batch's process
// CPU time per signature. It runs once the load has stopped, since the
// process time counts every goroutine; the median sets aside a batch that
// shared the process with a late one or with the garbage collector.
func rawRSASignCPU() (time.Duration, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return 0, fmt.Errorf("raw RSA reference: key: %w", err)
	}
	msg := make([]byte, 1024) // about a signed document's SignedInfo and more
	per := make([]time.Duration, rsaBatches)
	for b := range per {
		t0, err := selfCPU()
		if err != nil {
			return 0, fmt.Errorf("raw RSA reference: %w", err)
		}
		for i := range rsaBatchSize {
			msg[0], msg[1] = byte(b), byte(i)
			h := sha256.Sum256(msg)
			if _, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, h[:]); err != nil {
				return 0, fmt.Errorf("raw RSA reference: sign: %w", err)
			}
		}
		t1, err := selfCPU()
		if err != nil {
			return 0, fmt.Errorf("raw RSA reference: %w", err)
		}
		per[b] = (t1 - t0) / rsaBatchSize
	}
	slices.Sort(per)
	return per[len(per)/2], nil
}
