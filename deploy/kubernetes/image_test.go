package kubernetes_test

import (
	"bufio"
	"go/version"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDockerfilePinsBaseImages checks that every base image of
// deploy/Dockerfile is pinned by digest, that the Go image is at least
// go.mod's version, and that the image runs as the manifests' user.
func TestDockerfilePinsBaseImages(t *testing.T) {
	f, err := os.Open(filepath.Join(repoRoot, "deploy/Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	digest := regexp.MustCompile(`^[^@\s]+:[\w][\w.-]*@sha256:[0-9a-f]{64}$`)
	stages := map[string]bool{}
	var froms int
	var user string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			froms++
			args := fields[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "--") {
				args = args[1:]
			}
			if len(args) == 0 {
				t.Errorf("FROM without an image: %q", sc.Text())
				continue
			}
			image := args[0]
			if len(args) == 3 && strings.EqualFold(args[1], "AS") {
				stages[args[2]] = true
			}
			if stages[image] && !strings.Contains(image, "/") && !strings.Contains(image, ":") {
				continue // an earlier stage
			}
			if !digest.MatchString(image) {
				t.Errorf("FROM %s: not name:tag@sha256:<digest>", image)
			}
			if name, tag, ok := strings.Cut(strings.SplitN(image, "@", 2)[0], ":"); ok && name == "golang" {
				checkGoVersion(t, tag)
			}
		case "USER":
			user = fields[1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if froms < 2 {
		t.Errorf("%d FROM lines, want a build stage and a runtime stage", froms)
	}
	if user != "65532:65532" {
		t.Errorf("the image runs as %q, want 65532:65532 as the manifests' runAsUser and runAsGroup", user)
	}
}

// checkGoVersion checks that the Go image builds go.mod's version: the
// image sets GOTOOLCHAIN=local and would refuse an older one.
func checkGoVersion(t *testing.T, tag string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	img := "go" + strings.SplitN(tag, "-", 2)[0]
	if !version.IsValid(img) || version.Compare(img, "go"+string(m[1])) < 0 {
		t.Errorf("golang:%s is older than go.mod's go %s", tag, m[1])
	}
}

// TestDockerignore checks what .dockerignore keeps out of the build
// context, reading its patterns as docker does: relative to the context's
// root, a pattern that matches a folder excludes what it holds, ** spans
// folders, a later ! pattern takes a path back.
func TestDockerignore(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	ignored := dockerignore(t, string(b))
	tests := []struct {
		path string
		out  bool
	}{
		{".git/HEAD", true},
		{".git/objects/pack/pack-1.pack", true},
		{"data/master.key", true},
		{"data/facturad.db", true},
		{"data/facturad.db-wal", true},
		{"data/test-ca/ca.pem", true},
		{"data/anything-else", true},
		{"company.p12", true},
		{"deploy/tls/server.key", true},
		{"tenant/sqlite/sqlite.test", true},
		{"cover.out", true},
		{"facturad", true},
		// What the build needs stays.
		{"go.mod", false},
		{"go.sum", false},
		{"cmd/facturad/main.go", false},
		{"cmd/facturad/config.go", false},
		{"tenant/postgres/migrations/0001_schema.sql", false},
		{"gateway/static/openapi.json", false},
		{"docs/examples/factura-credito.json", false},
		{"docs/examples/examples.go", false},
		{"pipeline/redislimit/gcra.lua", false},
	}
	for _, tt := range tests {
		if got := ignored(tt.path); got != tt.out {
			t.Errorf("%s: excluded %v, want %v", tt.path, got, tt.out)
		}
	}
}

// dockerignore compiles a .dockerignore into a test of a slash-separated
// path relative to the build context.
func dockerignore(t *testing.T, text string) func(string) bool {
	t.Helper()
	type rule struct {
		re     *regexp.Regexp
		negate bool
	}
	var rules []rule
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := rule{}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		line = strings.TrimPrefix(filepath.ToSlash(filepath.Clean(line)), "/")
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(line); i++ {
			switch c := line[i]; {
			case strings.HasPrefix(line[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(line[i:], "**"):
				re.WriteString(".*")
				i++
			case c == '*':
				re.WriteString("[^/]*")
			case c == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		re.WriteString("$")
		rx, err := regexp.Compile(re.String())
		if err != nil {
			t.Fatalf(".dockerignore %q: %v", line, err)
		}
		r.re = rx
		rules = append(rules, r)
	}
	return func(p string) bool {
		// The path itself or a folder above it.
		var prefixes []string
		parts := strings.Split(p, "/")
		for i := range parts {
			prefixes = append(prefixes, strings.Join(parts[:i+1], "/"))
		}
		out := false
		for _, r := range rules {
			for _, pre := range prefixes {
				if r.re.MatchString(pre) {
					out = !r.negate
					break
				}
			}
		}
		return out
	}
}

// TestDockerfileBuildsOnlyTheBinary checks that the image build fetches
// only what the binary needs: no `go mod download`, which would fetch the
// modules of every test too, and a `go build` of ./cmd/facturad whose
// module cache is a BuildKit cache mount, kept between builds.
func TestDockerfileBuildsOnlyTheBinary(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy/Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	// One instruction a line: continuations joined, comments dropped.
	var instructions []string
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if more, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(more + " ")
			continue
		}
		cur.WriteString(trimmed)
		instructions = append(instructions, cur.String())
		cur.Reset()
	}
	var build string
	for _, ins := range instructions {
		fields := strings.Fields(ins)
		if len(fields) == 0 || !strings.EqualFold(fields[0], "RUN") {
			continue
		}
		if strings.Contains(ins, "go mod download") {
			t.Errorf("%q fetches the modules of the tests too", ins)
		}
		if strings.Contains(ins, "go build") && strings.Contains(ins, "./cmd/facturad") {
			build = ins
		}
	}
	if build == "" {
		t.Fatal("no RUN go build ... ./cmd/facturad")
	}
	if !strings.Contains(build, "--mount=type=cache,target=/go/pkg/mod") {
		t.Errorf("the build's module cache is not a cache mount: %q", build)
	}
}
