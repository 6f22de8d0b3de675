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
	"testing"
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
	const policy = "/usr/sbin/policy-rc.d"
	_, statErr := os.Stat(policy)
	policyBefore := statErr == nil

	tests := []struct {
		name     string
		env      []string
		want     []string // in the message
		wantNot  []string
		external bool
	}{
		{
			name: "error/own services: packages named, and how to use running ones",
			want: []string{"apt-get is not available", "redis-server", "libxml2-utils", "xmlsec1", "poppler-utils", "zbar-tools",
				"prometheus", "curl", "TEST_DATABASE_URL=", "TEST_REDIS_URL="},
		},
		{
			name:    "error/running services given: only the tools",
			env:     []string{"TEST_DATABASE_URL=postgres://u@127.0.0.1:1/db", "TEST_REDIS_URL=redis://127.0.0.1:1/0"},
			want:    []string{"apt-get is not available", "libxml2-utils", "xmlsec1", "poppler-utils", "zbar-tools", "prometheus", "curl"},
			wantNot: []string{"redis-server", "postgresql", "TEST_DATABASE_URL="},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bash, "test.sh")
			cmd.Env = append([]string{"PATH=" + strippedPath(t), "HOME=" + t.TempDir()}, tt.env...)
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
			if _, err := os.Stat(policy); !policyBefore && err == nil {
				t.Errorf("%s left behind", policy)
			}
		})
	}
}
