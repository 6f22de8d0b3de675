// Package deploy holds the scripts that install, start and test the
// service; its tests check the scripts' own behaviour.
package deploy

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// strippedPath is a PATH of only the basic tools test.sh needs before it
// installs anything: no apt-get, no sudo, none of the tools it looks for.
func strippedPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range []string{"bash", "dirname", "id", "ls", "sort", "tail", "mktemp", "rm", "cat"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestTestShWithoutApt(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	if out, err := exec.Command(bash, "-n", "test.sh").CombinedOutput(); err != nil {
		t.Fatalf("bash -n test.sh: %v\n%s", err, out)
	}
	tests := []struct {
		name    string
		args    []string
		env     []string
		want    []string // in the message
		wantNot []string
	}{
		{
			name: "error/own services: packages named, and how to use running ones",
			want: []string{"apt-get is not available", "redis-server", "libxml2-utils", "xmlsec1", "poppler-utils", "zbar-tools",
				"prometheus", "curl", "nodejs", "npm", "default-jre-headless", "gcc", "TEST_DATABASE_URL=", "TEST_REDIS_URL=",
				"TEST_S3_URL=", "TEST_S3_ACCESS_KEY=", "TEST_S3_SECRET_KEY=", "TEST_WEED_BIN="},
		},
		{
			name:    "error/running services given: only the tools",
			env:     []string{"TEST_DATABASE_URL=postgres://u@127.0.0.1:1/db", "TEST_REDIS_URL=redis://127.0.0.1:1/0"},
			want:    []string{"apt-get is not available", "libxml2-utils", "xmlsec1", "poppler-utils", "zbar-tools", "prometheus", "curl", "nodejs", "npm", "default-jre-headless", "gcc"},
			wantNot: []string{"redis-server", "postgresql", "TEST_DATABASE_URL=", "TEST_S3_URL="},
		},
		{
			name:    "error/quick: the same services and tools, no C compiler, no client generators",
			args:    []string{"--quick"},
			want:    []string{"apt-get is not available", "redis-server", "libxml2-utils", "xmlsec1", "poppler-utils", "zbar-tools", "prometheus", "curl"},
			wantNot: []string{"gcc", "libssl-dev", "nodejs", "default-jre-headless", "python3-urllib3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policy := filepath.Join(t.TempDir(), "policy-rc.d")
			cmd := exec.Command(bash, append([]string{"test.sh"}, tt.args...)...)
			cmd.Env = append([]string{"PATH=" + strippedPath(t), "HOME=" + t.TempDir(), "TEST_SH_POLICY_RC_D=" + policy}, tt.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit: %v, want status 1\n%s", err, &stderr)
			}
			msg := stderr.String()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("no %q in:\n%s", w, msg)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(msg, w) {
					t.Errorf("%q in:\n%s", w, msg)
				}
			}
			if _, err := os.Stat(policy); err == nil {
				t.Errorf("%s left behind", policy)
			}
		})
	}
}

// fakeApt is an apt-get that records each call, and whether the
// policy-rc.d file was there and what it said, in $FAKE_APT_LOG; its
// install fails with FAKE_APT=fail, and with FAKE_APT=hang it marks
// $FAKE_APT_LOG.started and waits to be interrupted.
const fakeApt = `#!/bin/sh
{
	echo "apt-get $*"
	if [ -e "$TEST_SH_POLICY_RC_D" ]; then echo "policy-rc.d:"; cat "$TEST_SH_POLICY_RC_D"; else echo "no policy-rc.d"; fi
} >>"$FAKE_APT_LOG"
[ "$1" = install ] || exit 0
case "$FAKE_APT" in
fail) exit 100 ;;
hang) : >"$FAKE_APT_LOG.started"; sleep 120 ;;
esac
exit 0
`

// TestTestShPolicyRcD runs test.sh's install step with a fake apt-get
// first on PATH (and an id that says root): the policy-rc.d it writes is
// in place while apt-get runs, and gone afterwards whether the install
// succeeds, fails or is interrupted; one that was there before is left as
// it was. The services are given (TEST_DATABASE_URL, TEST_REDIS_URL), so
// after the install the script only runs the --run command.
func TestTestShPolicyRcD(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	const ours = "#!/bin/sh\nexit 101\n"
	tests := []struct {
		name     string
		apt      string         // FAKE_APT
		signal   syscall.Signal // sent to the script's process group once apt-get installs
		before   string         // the policy-rc.d there before, if any
		wantExit int
	}{
		{name: "ok/install succeeds", wantExit: 0},
		{name: "error/install fails", apt: "fail", wantExit: 100},
		{name: "error/interrupted during the install", apt: "hang", signal: syscall.SIGINT, wantExit: 130},
		{name: "error/terminated during the install", apt: "hang", signal: syscall.SIGTERM, wantExit: 130},
		{name: "ok/a policy-rc.d there before is kept", before: "#!/bin/sh\n# the host's own\nexit 0\n", wantExit: 0},
		{name: "error/a policy-rc.d there before is kept when the install fails", apt: "fail", before: "#!/bin/sh\n# the host's own\nexit 0\n", wantExit: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := strippedPath(t)
			for _, tool := range []string{"sh", "env", "chmod", "sleep"} {
				p, err := exec.LookPath(tool)
				if err != nil {
					t.Skipf("%s: %v", tool, err)
				}
				if err := os.Symlink(p, filepath.Join(path, tool)); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(path, "apt-get"), []byte(fakeApt), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(path, "id"), []byte("#!/bin/sh\necho 0\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			policy, aptLog, ran := filepath.Join(dir, "policy-rc.d"), filepath.Join(dir, "apt.log"), filepath.Join(dir, "ran")
			if tt.before != "" {
				if err := os.WriteFile(policy, []byte(tt.before), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(bash, "test.sh", "--run", "bash", "-c", `if [ -e "$2" ]; then echo present; else echo absent; fi >"$1"`, "run", ran, policy)
			cmd.Env = []string{"PATH=" + path, "HOME=" + t.TempDir(), "TEST_SH_POLICY_RC_D=" + policy,
				"FAKE_APT_LOG=" + aptLog, "FAKE_APT=" + tt.apt,
				"TEST_DATABASE_URL=postgres://u@127.0.0.1:1/db", "TEST_REDIS_URL=redis://127.0.0.1:1/0"}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()
			if tt.signal != 0 {
				waitForFile(t, aptLog+".started")
				if err := syscall.Kill(-cmd.Process.Pid, tt.signal); err != nil {
					t.Fatal(err)
				}
			}
			err := cmd.Wait()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantExit {
				t.Errorf("exit status %d, want %d\n%s", code, tt.wantExit, &stderr)
			}
			// Given PostgreSQL and Redis but no object store, it says
			// that the archive's tests will fail.
			if tt.wantExit == 0 && !strings.Contains(stderr.String(), "TEST_S3_URL") {
				t.Errorf("no word of TEST_S3_URL for the archive's tests:\n%s", &stderr)
			}

			log, err := os.ReadFile(aptLog)
			if err != nil {
				t.Fatalf("apt-get never ran: %v\n%s", err, &stderr)
			}
			// apt-get found the policy in place, ours or the one there
			// before, at each call.
			want := ours
			if tt.before != "" {
				want = tt.before
			}
			calls := strings.Split(string(log), "apt-get ")[1:]
			if len(calls) != 2 || !strings.HasPrefix(calls[0], "update") || !strings.HasPrefix(calls[1], "install") {
				t.Fatalf("apt-get calls:\n%s", log)
			}
			for _, c := range calls {
				if !strings.Contains(c, "\npolicy-rc.d:\n"+want) {
					t.Errorf("apt-get ran without the policy %q:\n%s", want, c)
				}
			}
			got, err := os.ReadFile(policy)
			switch {
			case tt.before == "" && err == nil:
				t.Errorf("policy-rc.d left behind: %q", got)
			case tt.before == "" && !errors.Is(err, os.ErrNotExist):
				t.Fatal(err)
			case tt.before != "" && string(got) != tt.before:
				t.Errorf("the policy-rc.d there before became %q (%v)", got, err)
			}
			// The run command runs only after a successful install, with
			// our policy gone by then (and the one there before still
			// there).
			saw, err := os.ReadFile(ran)
			if (err == nil) != (tt.wantExit == 0) {
				t.Errorf("the --run command ran: %v, want %v", err == nil, tt.wantExit == 0)
			}
			if wantSaw := map[bool]string{true: "present\n", false: "absent\n"}[tt.before != ""]; err == nil && string(saw) != wantSaw {
				t.Errorf("the --run command found the policy-rc.d %q, want %q", saw, wantSaw)
			}
		})
	}
}

// TestTestShHeaderNamesItsVariables: every TEST_ variable the script
// exports to the tests, and every one it reads from its caller, is named
// in its header comment, where a reader learns how to run the tests.
func TestTestShHeaderNamesItsVariables(t *testing.T) {
	b, err := os.ReadFile("test.sh")
	if err != nil {
		t.Fatal(err)
	}
	var header strings.Builder
	lines := strings.Split(string(b), "\n")
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "#") {
			break
		}
		header.WriteString(l + "\n")
	}
	body := strings.Join(lines, "\n")
	seen := map[string]bool{}
	for i := 0; ; {
		j := strings.Index(body[i:], "TEST_")
		if j < 0 {
			break
		}
		i += j
		k := i + len("TEST_")
		for k < len(body) && (body[k] == '_' || body[k] >= 'A' && body[k] <= 'Z' || body[k] >= '0' && body[k] <= '9') {
			k++
		}
		name := body[i:k]
		i = k
		if seen[name] || name == "TEST_" {
			continue
		}
		seen[name] = true
		if !strings.Contains(header.String(), name) {
			t.Errorf("test.sh uses %s but its header does not name it", name)
		}
	}
	for _, want := range []string{"TEST_DATABASE_URL", "TEST_REDIS_URL", "TEST_S3_URL", "TEST_S3_ACCESS_KEY", "TEST_S3_SECRET_KEY", "TEST_WEED_BIN"} {
		if !seen[want] {
			t.Errorf("test.sh never mentions %s", want)
		}
	}
}

// waitForFile waits until name exists, for at most a generous minute.
func waitForFile(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(name); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCIRunsTheReadmesTestCommand: CI runs the whole suite with the very
// command the README gives for it, not the quick subset; the README starts
// with exactly the two commands, to run the service and to test it, and
// names the quick subset below them.
func TestCIRunsTheReadmesTestCommand(t *testing.T) {
	ci, err := os.ReadFile(filepath.Join("..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var command string
	for _, l := range strings.Split(string(ci), "\n") {
		if c, ok := strings.CutPrefix(l, "exec "); ok {
			command = strings.TrimSpace(c)
		}
	}
	if command != "./deploy/test.sh" {
		t.Fatalf(".ci/run runs %q, want the whole suite, ./deploy/test.sh", command)
	}
	// The README's first block: exactly two commands, to run and to test.
	_, block, _ := strings.Cut(string(readme), "```sh\n")
	block, rest, _ := strings.Cut(block, "```")
	var commands []string
	whole := false
	for _, l := range strings.Split(block, "\n") {
		cmd, comment, _ := strings.Cut(l, "#")
		if cmd = strings.TrimSpace(cmd); cmd == "" {
			continue
		}
		commands = append(commands, cmd)
		if cmd == command {
			whole = strings.Contains(comment, "whole test suite")
		}
	}
	if len(commands) != 2 || commands[1] != command || !whole {
		t.Errorf("the README's first block is not the two commands, the second %q as the whole suite: %q", command, commands)
	}
	if !strings.Contains(rest, "`"+command+" --quick`") {
		t.Errorf("the README does not name the quick subset, %s --quick", command)
	}
}
