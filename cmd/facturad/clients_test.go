package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"facturad/signer/certmint"
	"facturad/tenant/storetest"
)

// The generated clients of docs/client.md: their generators are the npm
// packages pinned by docs/clients/package-lock.json, which deploy/test.sh
// installs with npm ci into a folder it names in TEST_CLIENT_TOOLS; the
// Python client's runtime modules (urllib3, python-dateutil, six, certifi)
// are those of the Python it names in TEST_CLIENT_PYTHON.

const (
	clientToolsVar  = "TEST_CLIENT_TOOLS"
	clientPythonVar = "TEST_CLIENT_PYTHON"
	clientsDir      = "../../docs/clients"
)

// exampleLines is what each example prints, one line a step.
var exampleLines = regexp.MustCompile(`^calculate: totalComprobante (\S+)\n` +
	`sent: clave (\d{50}) estado (\d\d)\n` +
	`checked: estado (\d\d) (.*)\n` +
	`refused: (\d+) (\S+): (.+)\n$`)

// TestGeneratedClients generates the TypeScript and the Python client from
// the /openapi.json a running service serves (the command in a process of
// its own: embedded store, built-in sandbox), as docs/client.md says, and
// runs each language's example against it as a branch's API user: the
// example calculates an invoice, sends it, checks it until the sandbox
// accepts it and reads a refused line's 400 as the API's Error. What each
// prints is held to what the service itself answers for the same invoice.
func TestGeneratedClients(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the service and runs the client generators")
	}
	tools, python := os.Getenv(clientToolsVar), os.Getenv(clientPythonVar)
	if tools == "" || python == "" {
		storetest.Missing(t, "the client generators and the Python client's runtime ("+clientToolsVar+", "+clientPythonVar+"; deploy/test.sh installs them)")
	}
	// The tools are those the committed lock pins, not an older install.
	want, err := os.ReadFile(filepath.Join(clientsDir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(tools, "package-lock.json")); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s (%s) was not installed from docs/clients/package-lock.json (%v): install it again with npm ci", clientToolsVar, tools, err)
	}
	for _, tool := range []string{"node", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to generate and run the clients: %v", tool, err)
		}
	}

	svc := startChild(t, nil, "--data-dir", t.TempDir(), "--sandbox-processing-delay", "0",
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken)
	admin := apiClient{t: t, base: "http://" + svc.api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	branch := createCompany(t, admin, ca, "3101123456")
	modules := filepath.Join(tools, "node_modules")

	// Each language works in a copy of docs/clients with the installed
	// generators as its node_modules and the served document as its
	// openapi.json, and runs the commands of docs/client.md there.
	examples := []struct {
		name string
		// run generates the client in dir and runs the example with env,
		// returning what it printed.
		run func(t *testing.T, dir string, env []string) string
	}{
		{"typescript", func(t *testing.T, dir string, env []string) string {
			runIn(t, dir, nil, "node_modules/.bin/openapi-typescript", "openapi.json", "-o", "typescript/facturad.d.ts")
			runIn(t, dir, nil, "node_modules/.bin/tsc", "-p", "typescript")
			return runIn(t, dir, env, "node", "typescript/dist/example.js")
		}},
		{"python", func(t *testing.T, dir string, env []string) string {
			runIn(t, dir, nil, "java", "-jar", "node_modules/@openapitools/openapi-generator-cli/bin/openapi-generator.jar",
				"generate", "-i", "openapi.json", "-g", "python", "-o", "python/client", "--package-name", "facturad_client")
			return runIn(t, dir, append(env, "PYTHONPATH="+filepath.Join(dir, "python", "client")), python, "python/example.py")
		}},
	}
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel()
			c := branch
			c.t = t
			id := "cliente-" + ex.name
			dir := t.TempDir()
			for _, f := range []string{"typescript/example.ts", "typescript/tsconfig.json", "python/example.py"} {
				if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
					t.Fatal(err)
				}
				copyFile(t, filepath.Join(clientsDir, f), filepath.Join(dir, f))
			}
			if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
				t.Fatal(err)
			}
			download(t, c.base+"/openapi.json", filepath.Join(dir, "openapi.json"))
			start := time.Now()
			out := ex.run(t, dir, []string{"BASE=" + c.base, "USUARIO=" + c.user,
				"CONTRASENA=" + c.pass, "API_TOKEN=" + c.token, "ID_EXTERNO=" + id})
			t.Logf("generated, built and ran in %v", time.Since(start).Round(time.Millisecond))
			checkExampleOutput(t, c, id, out)
		})
	}
}

// checkExampleOutput holds an example's output to the service's own
// answers: the calculated total of the invoice (2 × 12500.50 = 25001.00,
// plus 13 % IVA, 3250.13), the document sent under id and accepted, and
// the refusal of the line of quantity 0, under which nothing was numbered.
func checkExampleOutput(t *testing.T, c apiClient, id, out string) {
	t.Helper()
	m := exampleLines.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the example printed:\n%s", out)
	}
	total, clave, sentEstado, estado, mensaje, status, field, message := m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]
	if total != "28251.13" {
		t.Errorf("calculated total %s, want 28251.13", total)
	}
	if sentEstado != "04" {
		t.Errorf("sent with estado %s, want 04 (received)", sentEstado)
	}
	var doc document
	c.json("GET", "/api/documents/"+clave+"/v4", nil, 200, &doc)
	if doc.IDExterno != id || doc.Estado != "01" {
		t.Errorf("the service has document %s as id_externo %q estado %s, want %q estado 01", clave, doc.IDExterno, doc.Estado, id)
	}
	if estado != doc.Estado || mensaje != doc.Mensaje {
		t.Errorf("the example checked estado %s %q, the service says %s %q", estado, mensaje, doc.Estado, doc.Mensaje)
	}
	if status != "400" || field != "detalleServicio[0].cantidad" || strings.TrimSpace(message) == "" {
		t.Errorf("refusal %s %s: %q, want 400 on detalleServicio[0].cantidad with a message", status, field, message)
	}
	var list struct {
		Items []document `json:"items"`
	}
	c.json("GET", "/api/documents/v4?limit=100", nil, 200, &list)
	for _, d := range list.Items {
		if d.IDExterno == id+"-cero" {
			t.Errorf("the refused document was numbered: %s", d.Clave)
		}
	}
}

// download writes what url answers into the file name.
func download(t *testing.T, url, name string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	if err := os.WriteFile(name, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// runIn runs a command in dir with the extra environment, for at most five
// minutes, and returns its standard output; a failure shows both outputs.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, &stdout, &stderr)
	}
	t.Logf("%s %s: %v", name, args[0], time.Since(start).Round(time.Millisecond))
	return stdout.String()
}
