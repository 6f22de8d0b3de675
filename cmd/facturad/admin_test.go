package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"facturad/tenant"
)

var (
	printedPassword = regexp.MustCompile(`(?m)^\s+contrasena: (\S+)$`)
	printedToken    = regexp.MustCompile(`(?m)^\s+apiToken:\s+(\S+)$`)
)

// printedAdmin reads the generated admin credentials from a command's
// output, as an operator would.
func printedAdmin(t *testing.T, out string) tenant.Credentials {
	t.Helper()
	p, k := printedPassword.FindStringSubmatch(out), printedToken.FindStringSubmatch(out)
	if p == nil || k == nil {
		t.Fatalf("no generated credentials in the output:\n%s", out)
	}
	return tenant.Credentials{Usuario: "admin", Contrasena: p[1], APIToken: k[1]}
}

// resetAdmin runs `facturad admin-reset` on the store of the service
// started with dataDir and storeArgs, and returns the credentials it
// prints, as an operator gets them when the service's own output is not a
// terminal and showed none.
func resetAdmin(t *testing.T, dataDir string, storeArgs ...string) tenant.Credentials {
	t.Helper()
	var out bytes.Buffer
	args := append([]string{"admin-reset", "--data-dir", dataDir, "--log-level", "warn"}, storeArgs...)
	if err := run(context.Background(), args, &out, io.Discard, func(string) string { return "" }); err != nil {
		t.Fatalf("admin-reset: %v\n%s", err, out.String())
	}
	return printedAdmin(t, out.String())
}

// adminStatus is the status of an admin-only call made with cr.
func adminStatus(t *testing.T, api string, cr tenant.Credentials) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+api+"/api/companies/v4?Name=x", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("AuthToken", cr.APIToken)
	req.SetBasicAuth(cr.Usuario, cr.Contrasena)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// busyPort holds a local port until the test ends and returns its address.
func busyPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// A first start that fails on a busy port must not lock the admin out:
// the next start on a free port, with the same data folder, gives the
// operator credentials that log in.
func TestFirstStartOnBusyPort(t *testing.T) {
	const (
		pass  = "a-long-password-123"
		token = "tok-0123456789abcdef0123456789abcdef"
	)
	for _, tc := range []struct {
		name string
		// flags of both starts
		flags []string
		// creds are the credentials the operator has after the second
		// start, given its data folder.
		creds func(t *testing.T, dir string) tenant.Credentials
	}{
		{
			// The output is not a terminal: the operator resets them.
			name:  "ok/generated credentials, reset after the start that succeeds",
			creds: func(t *testing.T, dir string) tenant.Credentials { return resetAdmin(t, dir) },
		},
		{
			name:  "ok/configured credentials",
			flags: []string{"--admin-password", pass, "--admin-token", token},
			creds: func(*testing.T, string) tenant.Credentials {
				return tenant.Credentials{Usuario: "admin", Contrasena: pass, APIToken: token}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"serve", "--listen", busyPort(t), "--admin-listen", "127.0.0.1:0", "--data-dir", dir, "--log-level", "warn"}, tc.flags...)
			var out bytes.Buffer
			err := run(context.Background(), args, &out, io.Discard, func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), "api listener") || !strings.Contains(err.Error(), "choose another address with --listen,") {
				t.Fatalf("start on a busy port: err = %v, want an api listener error naming the setting", err)
			}
			if strings.Contains(out.String(), "bootstrap admin") {
				t.Fatalf("the failed start spoke of the admin:\n%s", out.String())
			}

			out2, api, _, stop := startService(t, dir, tc.flags...)
			defer stop()
			cr := tc.creds(t, dir)
			if got := adminStatus(t, api, cr); got != http.StatusOK {
				t.Fatalf("admin with the operator's credentials: status %d, want 200\n%s", got, out2)
			}
		})
	}
}

// A busy admin port stops the start too, and the error names the setting
// that moves it.
func TestBusyAdminPortNamesTheSetting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	args := []string{"serve", "--listen", "127.0.0.1:0", "--admin-listen", busyPort(t), "--data-dir", dir, "--log-level", "warn"}
	err := run(context.Background(), args, io.Discard, io.Discard, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "admin listener") || !strings.Contains(err.Error(), "choose another address with --admin-listen,") {
		t.Fatalf("err = %v, want an admin listener error naming the setting", err)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("the failed start made the data folder")
	}
}

// Credentials configured after the admin was created take effect at the
// next start, and the start says so.
func TestServeConfiguredAdminOverExisting(t *testing.T) {
	dir := t.TempDir()
	_, api, _, stop := startService(t, dir)
	generated := resetAdmin(t, dir) // the output is not a terminal
	if got := adminStatus(t, api, generated); got != http.StatusOK {
		t.Fatalf("reset admin: status %d", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// Nothing configured: nothing changes, and the start says how to recover.
	out, api, _, stop := startService(t, dir)
	if !strings.Contains(out.String(), "admin-reset") || printedPassword.MatchString(out.String()) {
		t.Errorf("second start without configured credentials:\n%s", out)
	}
	if got := adminStatus(t, api, generated); got != http.StatusOK {
		t.Fatalf("generated admin after a plain restart: status %d", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	configured := tenant.Credentials{Usuario: "admin", Contrasena: "a-long-password-123", APIToken: "tok-0123456789abcdef0123456789abcdef"}
	out, api, _, stop = startService(t, dir, "--admin-password", configured.Contrasena, "--admin-token", configured.APIToken)
	defer stop()
	if !strings.Contains(out.String(), "contrasena replaced; apiToken replaced") {
		t.Errorf("start with configured credentials did not say it applied them:\n%s", out)
	}
	if strings.Contains(out.String(), configured.Contrasena) || strings.Contains(out.String(), configured.APIToken) {
		t.Errorf("configured secrets were printed:\n%s", out)
	}
	if got := adminStatus(t, api, configured); got != http.StatusOK {
		t.Fatalf("configured admin: status %d, want 200", got)
	}
	if got := adminStatus(t, api, generated); got != http.StatusUnauthorized {
		t.Fatalf("replaced admin credentials: status %d, want 401", got)
	}
}

// admin-reset gives the admin new credentials while the service runs, on
// either store.
func TestAdminReset(t *testing.T) {
	t.Run("embedded", func(t *testing.T) { adminReset(t, nil) })
	t.Run("postgres", func(t *testing.T) {
		adminReset(t, []string{"--database-url", postgresSchema(t), "--master-key", masterKey(t)})
	})

	t.Run("error/not the service's data folder", func(t *testing.T) {
		empty := t.TempDir()
		err := run(context.Background(), []string{"admin-reset", "--data-dir", empty}, io.Discard, io.Discard, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), "--data-dir") {
			t.Fatalf("admin-reset on an empty folder: err = %v", err)
		}
		if _, err := os.Stat(filepath.Join(empty, "facturad.db")); err == nil {
			t.Fatal("admin-reset created a store")
		}
	})
}

// adminReset runs admin-reset against a running service on the store
// storeArgs select: the printed credentials log in at once.
func adminReset(t *testing.T, storeArgs []string) {
	dir := t.TempDir()
	_, api, _, stop := startService(t, dir, storeArgs...)
	defer stop()
	old := resetAdmin(t, dir, storeArgs...) // the service's output is not a terminal

	var resetOut bytes.Buffer
	args := append([]string{"admin-reset", "--data-dir", dir, "--log-level", "warn"}, storeArgs...)
	if err := run(context.Background(), args, &resetOut, io.Discard, func(string) string { return "" }); err != nil {
		t.Fatalf("admin-reset: %v\n%s", err, resetOut.String())
	}
	if !strings.Contains(resetOut.String(), "bootstrap admin admin: contrasena replaced; apiToken replaced") {
		t.Errorf("admin-reset output:\n%s", resetOut.String())
	}
	fresh := printedAdmin(t, resetOut.String())
	if fresh.Contrasena == old.Contrasena || fresh.APIToken == old.APIToken {
		t.Fatal("admin-reset printed an old secret")
	}
	if got := adminStatus(t, api, fresh); got != http.StatusOK {
		t.Fatalf("reset admin on the running service: status %d, want 200\n%s", got, resetOut.String())
	}
	// The reset is in the platform's audit log, without its secrets.
	var log struct {
		Items []struct {
			Usuario struct {
				ID     int64  `json:"id"`
				Nombre string `json:"nombre"`
			} `json:"usuario"`
			RequestID string   `json:"requestId"`
			Accion    string   `json:"accion"`
			Campos    []string `json:"campos"`
		} `json:"items"`
	}
	admin := apiClient{t: t, base: "http://" + api, token: fresh.APIToken, user: fresh.Usuario, pass: fresh.Contrasena}
	status, body := admin.do("GET", "/api/companies/0/auditoria/v4", "", nil)
	// Two resets: the one that gave the old credentials, and this one, first.
	if status != http.StatusOK || json.Unmarshal(body, &log) != nil || len(log.Items) != 2 {
		t.Fatalf("the platform's audit log: %d %s", status, body)
	}
	e := log.Items[0]
	if e.Accion != tenant.AuditAdminReset || e.Usuario.ID != 0 || e.Usuario.Nombre != "facturad admin-reset" ||
		!strings.HasPrefix(e.RequestID, "cli-") || !slices.Equal(e.Campos, []string{"apiToken", "contrasena"}) {
		t.Errorf("the reset's entry: %s", body)
	}
	if strings.Contains(string(body), fresh.Contrasena) || strings.Contains(string(body), fresh.APIToken) {
		t.Errorf("the audit log holds the new secrets: %s", body)
	}
}

// Replicas started at the same moment on one PostgreSQL all start: with no
// admin yet (one makes it, and with its output a pipe says how to get
// credentials instead of printing them; the others find it), and again after the configured credentials changed (each applies
// them or finds them applied by another).
func TestReplicasStartTogether(t *testing.T) {
	notQuick(t, "a replica drill")
	const (
		n     = 3
		pass  = "together-password-123"
		token = "together-token-0123456789abcdef0123"
	)
	args := []string{"--database-url", postgresSchema(t), "--master-key", masterKey(t)}
	startAll := func(extra ...string) []*child {
		t.Helper()
		var cs []*child
		for range n {
			cmd := exec.Command(os.Args[0], serveArgs(append(slices.Clone(args), extra...)...)...)
			cmd.Env = append(os.Environ(), asServiceEnv+"=1")
			cs = append(cs, spawn(t, cmd))
		}
		for _, c := range cs {
			c.waitListening(t, listenLine)
		}
		return cs
	}

	replicas := startAll()
	made := 0
	for i, c := range replicas {
		if strings.Contains(c.out.String(), "bootstrap admin created") {
			made++
			// Its output is a pipe: no secret there, a warning that says how
			// to get credentials.
			if printedPassword.MatchString(c.out.String()) || printedToken.MatchString(c.out.String()) ||
				!strings.Contains(c.errs.String(), "facturad admin-reset") {
				t.Errorf("replica %d made the admin; output not a terminal:\n%s\n%s", i, c.out, c.errs)
			}
		}
	}
	if made != 1 {
		t.Fatalf("%d replicas made the admin, want 1", made)
	}
	reset := resetAdmin(t, t.TempDir(), args...)
	for i, c := range replicas {
		if got := adminStatus(t, c.api, reset); got != http.StatusOK {
			t.Errorf("replica %d: the reset admin: status %d, want 200", i, got)
		}
		c.kill()
	}

	configured := tenant.Credentials{Usuario: "admin", Contrasena: pass, APIToken: token}
	for i, c := range startAll("--admin-password", pass, "--admin-token", token) {
		if got := adminStatus(t, c.api, configured); got != http.StatusOK {
			t.Errorf("replica %d: the configured admin: status %d, want 200\n%s", i, got, c.out)
		}
		if got := adminStatus(t, c.api, reset); got != http.StatusUnauthorized {
			t.Errorf("replica %d: the old credentials: status %d, want 401", i, got)
		}
	}
}

// The address a busy-port error suggests is free when it is written: not
// the busy port itself (someone who followed the advice once and starts a
// second copy has the suggested port taken), not the next one when that
// is taken too, and not the address the other listener is about to take.
func TestBusyPortSuggestsAFreeAddress(t *testing.T) {
	// Two busy ports in a row, p and p+1.
	var p int
	for try := 0; p == 0 && try < 20; try++ {
		first, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := first.Addr().(*net.TCPAddr).Port
		second, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+1)))
		if err != nil {
			first.Close()
			continue
		}
		t.Cleanup(func() { first.Close(); second.Close() })
		p = port
	}
	if p == 0 {
		t.Skip("no two free ports in a row on loopback")
	}
	at := func(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }
	suggested := regexp.MustCompile(`e\.g\. (--[a-z-]+)=(\S+)\)$`)
	for _, tt := range []struct {
		name, flag string
		args       []string
		not        []string
	}{
		{"error/api", "--listen", []string{"--listen", at(p), "--admin-listen", at(p + 2)}, []string{at(p), at(p + 1), at(p + 2)}},
		{"error/admin", "--admin-listen", []string{"--listen", "127.0.0.1:0", "--admin-listen", at(p)}, []string{at(p), at(p + 1)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			args := append([]string{"serve", "--data-dir", dir, "--log-level", "warn"}, tt.args...)
			err := run(context.Background(), args, io.Discard, io.Discard, func(string) string { return "" })
			if err == nil {
				t.Fatal("the start on a busy port succeeded")
			}
			m := suggested.FindStringSubmatch(err.Error())
			if m == nil || m[1] != tt.flag {
				t.Fatalf("err = %v, want an example of %s", err, tt.flag)
			}
			if slices.Contains(tt.not, m[2]) {
				t.Fatalf("suggests %s, which is taken: %v", m[2], err)
			}
			// Near the configured one, on its host.
			host, port, _ := net.SplitHostPort(m[2])
			if n, _ := strconv.Atoi(port); host != "127.0.0.1" || n <= p || n > p+20 {
				t.Fatalf("suggests %s, not a port after %d on 127.0.0.1: %v", m[2], p, err)
			}
			ln, err := net.Listen("tcp", m[2])
			if err != nil {
				t.Fatalf("the suggested %s: %v", m[2], err)
			}
			ln.Close()
		})
	}
}
