package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"facturad/signer/certmint"
)

// serviceBinary builds the command without the race detector, once: the
// memory test measures the service's own resident set, which the race
// detector's shadow memory would multiply.
var serviceBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "facturad-bin-")
	if err != nil {
		return "", err
	}
	builtBinDir = dir
	bin := filepath.Join(dir, "facturad")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// builtBinDir is removed when the tests end.
var builtBinDir string

// startBinary starts the built command as startChild starts the test
// binary, with the extra environment.
func startBinary(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	bin, err := serviceBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, serveArgs(args...)...)
	cmd.Env = append(os.Environ(), env...)
	return launch(t, cmd)
}

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmHWM in /proc status")
	return 0
}

// TestColdLoginHerdAndPasswordFlood: 300 distinct API users make their
// first call at once against a freshly started service (every pair cold),
// and then 64 clients flood the admin's Argon2id password with wrong
// guesses while a warm client goes on working. Every first call succeeds,
// every warm call succeeds, and the service's peak resident set stays
// under 300 MB throughout with a memory limit of 200 MiB (it reached
// gigabytes when each first call ran a 19 MiB Argon2id hash).
func TestColdLoginHerdAndPasswordFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the service binary")
	}
	const users, flooders, limit = 300, 64, 300 << 20
	dir := t.TempDir()
	args := []string{"--data-dir", dir, "--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken}
	first := startBinary(t, nil, args...)
	admin := apiClient{t: t, base: "http://" + first.api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	branch := createCompany(t, admin, ca, "3101123456")
	var branches []struct{ ID, CompaniaID int64 }
	branch.json("GET", "/api/companies/1/branches/v4", nil, 200, &branches)
	if len(branches) != 1 {
		t.Fatalf("branches: %+v", branches)
	}
	creds := []apiClient{branch}
	for i := 1; i < users; i++ {
		var u struct{ Usuario, Contrasena, APIToken string }
		branch.json("POST", fmt.Sprintf("/api/companies/1/branches/%d/users/v4", branches[0].ID),
			[]byte(fmt.Sprintf(`{"usuario": "caja-%03d"}`, i)), 200, &u)
		creds = append(creds, apiClient{t: t, token: u.APIToken, user: u.Usuario, pass: u.Contrasena})
	}
	first.kill()

	// A fresh process: every pair is cold. It runs under a memory limit,
	// as in a container (facturad serve takes 90% of the container's when
	// GOMEMLIMIT is unset): without one, GOGC 400 lets the heap grow to five
	// times what a collection finds live, and one that finds both slow-hash
	// slots' 19 MiB buffers live sets that near 300 MiB of garbage alone.
	// Unbounded hashing would still show: the buffers in use are live.
	c := startBinary(t, []string{"GOMEMLIMIT=200MiB"}, args...)
	base := "http://" + c.api
	call := func(cl apiClient, hc *http.Client) (int, error) {
		req, _ := http.NewRequest("GET", base+"/api/companies/1/branches/v4", nil)
		req.Header.Set("AuthToken", cl.token)
		req.SetBasicAuth(cl.user, cl.pass)
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: users}}
	var ok atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, cl := range creds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if st, err := call(cl, hc); err == nil && st == 200 {
				ok.Add(1)
			} else {
				t.Errorf("first call of %s: %d %v", cl.user, st, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	herdRSS := peakRSS(t, c.cmd.Process.Pid)
	if ok.Load() != users {
		t.Fatalf("%d of %d first calls succeeded", ok.Load(), users)
	}

	// The wrong-password flood against the admin (Argon2id), with a warm
	// client working meanwhile.
	stop := make(chan struct{})
	var floodAnswers sync.Map
	for i := range flooders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			guess := apiClient{token: e2eAdminToken, user: e2eAdminUser}
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				guess.pass = fmt.Sprintf("guess-%d-%d", i, n)
				st, _ := call(guess, hc)
				v, _ := floodAnswers.LoadOrStore(st, new(atomic.Int64))
				v.(*atomic.Int64).Add(1)
			}
		}()
	}
	warm, warmOK := 0, 0
	var worst time.Duration
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		t0 := time.Now()
		st, err := call(creds[1], hc)
		worst = max(worst, time.Since(t0))
		warm++
		if err == nil && st == 200 {
			warmOK++
		}
	}
	close(stop)
	wg.Wait()
	floodRSS := peakRSS(t, c.cmd.Process.Pid)
	var answers bytes.Buffer
	floodAnswers.Range(func(k, v any) bool {
		fmt.Fprintf(&answers, " %v×%d", k, v.(*atomic.Int64).Load())
		return true
	})
	if warmOK != warm {
		t.Errorf("%d of %d warm calls succeeded during the flood", warmOK, warm)
	}
	if herdRSS > limit || floodRSS > limit {
		t.Errorf("peak RSS %d MiB after the herd, %d MiB after the flood; want under %d MiB", herdRSS>>20, floodRSS>>20, limit>>20)
	}
	t.Logf("%d cold first calls: all succeeded, peak RSS %d MiB; %d-way wrong-password flood (answers:%s): peak RSS %d MiB, %d/%d warm calls succeeded, slowest %v",
		users, herdRSS>>20, flooders, answers.String(), floodRSS>>20, warmOK, warm, worst.Round(time.Millisecond))
}
