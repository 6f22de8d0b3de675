package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"facturad/deploy/testenv"
	"facturad/hacienda/pdf/pdfcheck"
)

// The README's Quick start is marked block by block: the service's start
// (<!-- quickstart:serve -->) and the steps run in a second terminal
// (<!-- quickstart -->), each a ```sh block right after its mark.
var quickstartBlock = regexp.MustCompile("(?s)<!-- quickstart(:serve)? -->\\n```sh\\n(.*?)```")

// quickstart reads the marked blocks of the README.
func quickstart(t *testing.T) (serve string, steps []string) {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range quickstartBlock.FindAllStringSubmatch(string(readme), -1) {
		if m[1] == ":serve" {
			if serve != "" {
				t.Fatal("README: two quickstart:serve blocks")
			}
			serve = m[2]
			continue
		}
		steps = append(steps, m[2])
	}
	if serve == "" || len(steps) == 0 {
		t.Fatal("README: no marked Quick start blocks")
	}
	return serve, steps
}

// needTools skips the test when a tool the Quick start assumes is absent,
// unless the suite requires every service (deploy/test.sh installs them).
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if testenv.RequireServices(t) {
				t.Fatalf("%s is needed by the README's Quick start: %v", tool, err)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

// TestReadmeQuickstart runs the README's Quick start as written, with
// bash, in a fresh folder: the serve block starts the service (on free
// ports, through FACTURAD_LISTEN and FACTURAD_ADMIN_LISTEN, which the
// service reads from the environment), then the steps run one after the
// other in one shell, as a reader pastes them into a second terminal, with
// BASE set to where the service listens. Each step's result is checked.
//
// `go run ./cmd/facturad` is the program this test binary holds (TestMain
// runs it as facturad): a `go` first on PATH runs it, instead of building
// the same code a second time, and refuses any other use.
func TestReadmeQuickstart(t *testing.T) {
	// Not skipped with -short: the quick subset's one run of the service
	// from a company's creation to a printed, accepted invoice.
	needTools(t, "bash", "curl", "sed")
	serveBlock, steps := quickstart(t)
	if len(steps) != 10 {
		t.Fatalf("README: %d Quick start steps, this test checks 10: update both together", len(steps))
	}

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	work, bin := t.TempDir(), t.TempDir()
	shim := "#!/bin/sh\n" +
		"if [ \"$1\" = run ] && [ \"$2\" = ./cmd/facturad ]; then shift 2; exec \"$QUICKSTART_FACTURAD\" \"$@\"; fi\n" +
		"echo \"the Quick start test runs only go run ./cmd/facturad, not: go $*\" >&2; exit 2\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FACTURAD_") && !strings.HasPrefix(kv, "BASE=") && !strings.HasPrefix(kv, "ADMIN_BASE=") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"QUICKSTART_FACTURAD="+self, asServiceEnv+"=1")

	// The service, in a process group of its own so that nothing of it
	// outlives the test.
	cmd := exec.Command("bash", "-c", serveBlock)
	cmd.Dir = work
	cmd.Env = append(env, "FACTURAD_LISTEN=127.0.0.1:0", "FACTURAD_ADMIN_LISTEN=127.0.0.1:0", "FACTURAD_LOG_LEVEL=warn")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	svc := launch(t, cmd)
	t.Cleanup(func() { _ = syscall.Kill(-svc.cmd.Process.Pid, syscall.SIGKILL) })

	// paste runs steps in one shell, as a reader pastes them into a second
	// terminal, each followed by a mark that splits the output: each
	// step's output, and what the shell wrote to its standard error.
	paste := func(steps []string) (step []string, stderr string) {
		t.Helper()
		var script strings.Builder
		for i, s := range steps {
			fmt.Fprintf(&script, "%s\nprintf '\\n@@@ step %d done\\n'\n", s, i)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		run := exec.CommandContext(ctx, "bash", "-c", script.String())
		run.Dir = work
		run.Env = append(env, "BASE=http://"+svc.api, "ADMIN_BASE=http://"+svc.admin)
		var stdout, errs bytes.Buffer
		run.Stdout, run.Stderr = &stdout, &errs
		if err := run.Run(); err != nil {
			t.Fatalf("the Quick start failed: %v\nstdout:\n%s\nstderr:\n%s\nservice:\n%s", err, &stdout, &errs, svc.errs)
		}
		out := stdout.String()
		step = make([]string, len(steps))
		for i := range steps {
			mark := fmt.Sprintf("\n@@@ step %d done\n", i)
			before, after, ok := strings.Cut(out, mark)
			if !ok {
				t.Fatalf("step %d did not finish:\n%s\nstderr:\n%s", i, out, &errs)
			}
			step[i], out = before, after
		}
		return step, errs.String()
	}
	step, stderr := paste(steps)
	fail := func(i int, what string) {
		t.Helper()
		t.Fatalf("step %d: %s\nits output:\n%s\nstderr:\n%s\nservice:\n%s", i, what, step[i], stderr, svc.errs)
	}

	// 0: BASE and the admin's credentials; 1: the certificate.
	if !strings.Contains(step[1], "wrote empresa.p12") {
		fail(1, "no certificate written")
	}
	if _, err := os.Stat(filepath.Join(work, "empresa.p12")); err != nil {
		fail(1, err.Error())
	}
	// 2: the company, with its first branch's user.
	for _, re := range []string{`"companiaId":[1-9][0-9]*`, `"usuario":"3101123456-001-[a-z0-9]+"`, `"apiToken":"[A-Za-z0-9_-]{43}"`, `"mensajeApi":""`} {
		if !regexp.MustCompile(re).MatchString(step[2]) {
			fail(2, "no "+re+": company not created")
		}
	}
	// 3: its branches, read with the captured branch user, on a line of
	// their own.
	if !strings.HasPrefix(step[3], "[{") || !strings.HasSuffix(step[3], "]\n") || !strings.Contains(step[3], `"sucursal":"001"`) {
		fail(3, "no branch 001 listed on a line of its own")
	}
	// 4: the connection test, every part of it working on the built-in
	// sandbox.
	for _, want := range []string{`"ambiente":"pruebas"`, `"token":"ok"`, `"certificado":"ok"`, `"identificacionCoincide":true`} {
		if !strings.Contains(step[4], want) {
			fail(4, "the connection test does not say "+want)
		}
	}
	// 5: the invoice, received (04).
	clave := regexp.MustCompile(`"clave":"([0-9]{50})"`).FindStringSubmatch(step[5])
	if clave == nil || !strings.Contains(step[5], `"estado":"04"`) {
		fail(5, "no invoice received with estado 04")
	}
	// 6: checked until the verdict: 04 (as often as the sandbox takes),
	// then accepted (01); and its XML downloaded.
	checks := strings.Split(strings.TrimSpace(step[6]), "\n")
	last := checks[len(checks)-1]
	if !strings.Contains(last, `"estado":"01"`) || !strings.Contains(last, clave[1]) {
		fail(6, "the last check is not the invoice accepted (01)")
	}
	for _, c := range checks[:len(checks)-1] {
		if !strings.Contains(c, `"estado":"04"`) {
			fail(6, "a check before the verdict is not 04: "+c)
		}
	}
	f, err := os.Open(filepath.Join(work, "factura.xml"))
	if err != nil {
		fail(6, err.Error())
	}
	defer f.Close()
	root := wellFormedRoot(t, f)
	if root != "FacturaElectronica" {
		fail(6, "factura.xml's root is "+root+", want FacturaElectronica")
	}
	// The printed document, downloaded after the verdict.
	printed, err := os.ReadFile(filepath.Join(work, "factura.pdf"))
	if err != nil {
		fail(6, err.Error())
	}
	// The built-in sandbox's verdict, marked as a test's (decision 171).
	if text := pdfcheck.Text(t, printed); !strings.Contains(text, clave[1]) || !strings.Contains(text, "01 Aceptado por el simulador (sin validez)") ||
		!strings.Contains(text, "SIN VALIDEZ TRIBUTARIA — AMBIENTE DE PRUEBAS") || strings.Contains(text, "Aceptado por Hacienda") {
		fail(6, "factura.pdf does not show the accepted document as the sandbox's:\n"+text)
	}
	// 7: the listing of accepted invoices holds it.
	if !strings.HasPrefix(step[7], `{"items":[{`) || !strings.Contains(step[7], `"clave":"`+clave[1]+`"`) {
		fail(7, "the accepted invoice is not listed")
	}
	// 8: the company's audit log holds its creation by the admin, the
	// names of the form's fields and none of their secret values.
	if !strings.HasPrefix(step[8], `{"items":[{`) || !strings.Contains(step[8], `"accion":"compania.crear"`) ||
		!strings.Contains(step[8], `"nombre":"admin"`) || !strings.Contains(step[8], `"Certificado"`) || !strings.Contains(step[8], `"ContrasenaHacienda"`) ||
		strings.Contains(step[8], "secreto") || strings.Contains(step[8], `"1234"`) {
		fail(8, "the audit log does not show the company's creation, or shows a secret")
	}
	// 9: readiness and the documents' counter.
	if !strings.Contains(step[9], `"status":"ready"`) || !regexp.MustCompile(`(?m)^facturad_pipeline_documents_total\{estado="01",op="check"\} [1-9]`).MatchString(step[9]) {
		fail(9, "not ready, or no accepted document counted")
	}
	quickstartFilesIgnored(t, work)

	// A second run in the same folder, as a reader pastes the steps again:
	// the company is not created again, its branch user's credentials come
	// from empresa.json, the send answers the same invoice, and the
	// downloads are the accepted invoice's again.
	again, againErr := paste(steps)
	if strings.TrimSpace(again[2]) != "" {
		t.Errorf("the second run's step 2 said %q, want nothing (the company made once)\nstderr:\n%s", again[2], againErr)
	}
	if !strings.Contains(again[3], `"sucursal":"001"`) {
		t.Errorf("the second run's branch user cannot list its branches: %q\nstderr:\n%s", again[3], againErr)
	}
	if !strings.Contains(again[5], `"clave":"`+clave[1]+`"`) {
		t.Errorf("the second run's send is not the first's invoice: %q", again[5])
	}
	checks = strings.Split(strings.TrimSpace(again[6]), "\n")
	if !strings.Contains(checks[len(checks)-1], `"estado":"01"`) {
		t.Errorf("the second run's check: %q", again[6])
	}
	xmlFile, err := os.ReadFile(filepath.Join(work, "factura.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if root := wellFormedRoot(t, bytes.NewReader(xmlFile)); root != "FacturaElectronica" {
		t.Errorf("after the second run, factura.xml's root is %s", root)
	}
	pdfFile, err := os.ReadFile(filepath.Join(work, "factura.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if text := pdfcheck.Text(t, pdfFile); !strings.Contains(text, clave[1]) {
		t.Errorf("after the second run, factura.pdf does not show the invoice:\n%s", text)
	}

	// A download the service refuses (here, with credentials it does not
	// know) says so on standard error and leaves the files as they were.
	refused, refusedErr := paste([]string{steps[0],
		"BRANCH=(-u 3101123456-001-nobody:wrong-password -H 'AuthToken: wrong-token')\nCLAVE=" + clave[1], steps[6]})
	if !strings.Contains(refused[2], `"statusCode":401`) {
		t.Errorf("the refused check printed %q, want the 401 answer", refused[2])
	}
	if n := strings.Count(refusedErr, "returned error: 401"); n != 3 {
		t.Errorf("curl said %d times that the server answered 401, want 3 (the check and both downloads):\n%s", n, refusedErr)
	}
	for name, before := range map[string][]byte{"factura.xml": xmlFile, "factura.pdf": pdfFile} {
		after, err := os.ReadFile(filepath.Join(work, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(after, before) {
			t.Errorf("the refused download changed %s: now %d bytes, %.60q", name, len(after), after)
		}
	}
}

// quickstartFilesIgnored checks that what the Quick start left in the
// folder it ran in (the certificate, the company's answer, the XML and
// PDF, data/) would be ignored by
// git in the repository's root, where a reader runs it.
func quickstartFilesIgnored(t *testing.T, work string) {
	t.Helper()
	entries, err := os.ReadDir(work)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	for _, want := range []string{"data/", "empresa.p12", "empresa.json", "factura.xml", "factura.pdf"} {
		if !slices.Contains(names, want) {
			t.Errorf("the Quick start left no %s (it left %q)", want, names)
		}
	}
	root := filepath.Join("..", "..")
	var ignored []string
	if _, err := exec.LookPath("git"); err == nil && exec.Command("git", "-C", root, "rev-parse", "--git-dir").Run() == nil {
		cmd := exec.Command("git", append([]string{"-C", root, "check-ignore", "--no-index", "--"}, names...)...)
		out, _ := cmd.Output() // exit status 1 when none is ignored
		ignored = strings.Fields(string(out))
	} else {
		// Outside a git checkout: the .gitignore's own anchored entries.
		b, err := os.ReadFile(filepath.Join(root, ".gitignore"))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if n, ok := strings.CutPrefix(strings.TrimSpace(l), "/"); ok && slices.Contains(names, n) {
				ignored = append(ignored, n)
			}
		}
	}
	for _, n := range names {
		if !slices.Contains(ignored, n) {
			t.Errorf("the Quick start's %s is not ignored by .gitignore", n)
		}
	}
}

// wellFormedRoot reads a whole XML document and returns its root element's
// name; a document that is not well formed fails the test.
func wellFormedRoot(t *testing.T, r io.Reader) string {
	t.Helper()
	d := xml.NewDecoder(r)
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("factura.xml is not well formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root == "" {
		t.Fatal("factura.xml has no element")
	}
	return root
}
