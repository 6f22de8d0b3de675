package kubernetes_test

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/version"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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

	// Every file a //go:embed of the build embeds stays: without it the
	// image's go build fails.
	embedded := embeddedFiles(t)
	for _, want := range []string{"hacienda/trust/ca-raiz-nacional-costa-rica-v2.pem", "gateway/static/openapi.json"} {
		if !slices.Contains(embedded, want) {
			t.Errorf("the //go:embed walk did not find %s among %d files", want, len(embedded))
		}
	}
	for _, f := range embedded {
		if ignored(f) {
			t.Errorf("%s is embedded by the build but .dockerignore excludes it", f)
		}
	}
}

// embeddedFiles walks the module's non-test .go files and returns, relative
// to the repository root and slash-separated, every file their //go:embed
// directives match.
func embeddedFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != repoRoot && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != repoRoot {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		patterns, err := embedPatterns(path)
		if err != nil {
			return err
		}
		for _, pat := range patterns {
			all := false
			if p, ok := strings.CutPrefix(pat, "all:"); ok {
				pat, all = p, true
			}
			matches, err := filepath.Glob(filepath.Join(filepath.Dir(path), filepath.FromSlash(pat)))
			if err != nil {
				return fmt.Errorf("%s: //go:embed %s: %w", path, pat, err)
			}
			if len(matches) == 0 {
				return fmt.Errorf("%s: //go:embed %s matches nothing", path, pat)
			}
			for _, m := range matches {
				got, err := embeddedUnder(m, all)
				if err != nil {
					return err
				}
				for _, g := range got {
					rel, err := filepath.Rel(repoRoot, g)
					if err != nil {
						return err
					}
					files = append(files, filepath.ToSlash(rel))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// embedPatterns reads the patterns of a Go file's //go:embed directives,
// quoted or not.
func embedPatterns(path string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var patterns []string
	for _, group := range f.Comments {
		for _, c := range group.List {
			args, ok := strings.CutPrefix(c.Text, "//go:embed")
			if !ok || (args != "" && args[0] != ' ' && args[0] != '\t') {
				continue
			}
			for args = strings.TrimSpace(args); args != ""; args = strings.TrimSpace(args) {
				var pat string
				switch args[0] {
				case '"', '`':
					end := strings.IndexByte(args[1:], args[0])
					if end < 0 {
						return nil, fmt.Errorf("%s: unterminated //go:embed pattern %s", path, args)
					}
					q := args[:end+2]
					if pat, err = strconv.Unquote(q); err != nil {
						return nil, fmt.Errorf("%s: //go:embed %s: %w", path, q, err)
					}
					args = args[end+2:]
				default:
					pat, args, _ = strings.Cut(args, " ")
				}
				patterns = append(patterns, pat)
			}
		}
	}
	return patterns, nil
}

// embeddedUnder is what a pattern's match embeds: the file itself, or the
// files of a folder, leaving out names starting with . or _ unless all is
// set, as the go command does.
func embeddedUnder(match string, all bool) ([]string, error) {
	fi, err := os.Stat(match)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{match}, nil
	}
	var files []string
	err = filepath.WalkDir(match, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != match && !all && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	return files, err
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
	for _, ins := range dockerInstructions(t) {
		if isRun(ins) && strings.Contains(ins, "go mod download") {
			t.Errorf("%q fetches the modules of the tests too", ins)
		}
	}
	build := imageBuild(t)
	if !strings.Contains(build, "--mount=type=cache,target=/go/pkg/mod") {
		t.Errorf("the build's module cache is not a cache mount: %q", build)
	}
}

// dockerInstructions reads deploy/Dockerfile one instruction a line:
// continuations joined, comments dropped.
func dockerInstructions(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy/Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
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
	return instructions
}

func isRun(ins string) bool {
	fields := strings.Fields(ins)
	return len(fields) > 0 && strings.EqualFold(fields[0], "RUN")
}

// imageBuild is the Dockerfile's RUN that builds ./cmd/facturad.
func imageBuild(t *testing.T) string {
	t.Helper()
	var build string
	for _, ins := range dockerInstructions(t) {
		if isRun(ins) && strings.Contains(ins, "go build") && strings.Contains(ins, "./cmd/facturad") {
			build = ins
		}
	}
	if build == "" {
		t.Fatal("no RUN go build ... ./cmd/facturad")
	}
	return build
}

// buildTags is the value of the -tags flag in a go command line, "" when
// there is none.
func buildTags(cmd string) string {
	m := regexp.MustCompile(`(?:^|\s)-tags[= ]("[^"]*"|'[^']*'|\S+)`).FindStringSubmatch(cmd)
	if m == nil {
		return ""
	}
	return strings.Trim(m[1], `"'`)
}

// TestImageShipsTheTestedOpenSSLBuild checks that the image ships the
// OpenSSL signer (cgo and the openssl tag) on a runtime base that has
// libcrypto from the same Debian release the build stage compiled against,
// and that deploy/test.sh tests that same build: the signer's packages and
// the service's documents end to end, with cgo and the same tags.
func TestImageShipsTheTestedOpenSSLBuild(t *testing.T) {
	build := imageBuild(t)
	if !strings.Contains(build, "CGO_ENABLED=1") {
		t.Errorf("the image build does not enable cgo, which the OpenSSL signer needs: %q", build)
	}
	tags := buildTags(build)
	if !slices.Contains(strings.Split(tags, ","), "openssl") {
		t.Errorf("the image build's tags %q leave out openssl: %q", tags, build)
	}

	var froms []string
	for _, ins := range dockerInstructions(t) {
		if f := strings.Fields(ins); len(f) >= 2 && strings.EqualFold(f[0], "FROM") {
			froms = append(froms, f[1])
		}
	}
	if len(froms) < 2 {
		t.Fatalf("FROM lines %v, want a build stage and a runtime stage", froms)
	}
	builder, runtime := strings.SplitN(froms[0], "@", 2)[0], strings.SplitN(froms[len(froms)-1], "@", 2)[0]
	// distroless "base" and "cc" carry glibc and libssl3; "static" has neither.
	if !strings.HasPrefix(runtime, "gcr.io/distroless/base-") && !strings.HasPrefix(runtime, "gcr.io/distroless/cc-") {
		t.Errorf("runtime image %s has no libcrypto for the OpenSSL signer", runtime)
	}
	releases := map[string]string{"bookworm": "debian12", "trixie": "debian13"}
	var same bool
	for codename, release := range releases {
		if strings.Contains(builder, "-"+codename) && strings.Contains(runtime, "-"+release) {
			same = true
		}
	}
	if !same {
		t.Errorf("build stage %s and runtime %s are not named for the same Debian release (%v): the binary could link an OpenSSL the runtime lacks", builder, runtime, releases)
	}

	// deploy/test.sh tests the signer and the service in the image's build.
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy/test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	tested := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "CGO_ENABLED=1 go test ") || buildTags(line) != tags {
			continue
		}
		for _, pkg := range []string{"./signer/...", "./cmd/facturad"} {
			if slices.Contains(strings.Fields(line), pkg) {
				tested[pkg] = true
			}
		}
	}
	if !tested["./signer/..."] || !tested["./cmd/facturad"] {
		t.Errorf("deploy/test.sh runs `CGO_ENABLED=1 go test -tags %s` on %v, want ./signer/... and ./cmd/facturad, as the image builds them", tags, tested)
	}
}

// TestDefaultBuildIsPureGo checks that `go run ./cmd/facturad` and a plain
// `go build` compile none of the project's cgo, even where cgo is on, and
// that the image's tags do (so that the check can fail).
func TestDefaultBuildIsPureGo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	cgoPackages := func(tags string) []string {
		t.Helper()
		cmd := exec.Command("go", "list", "-deps", "-tags", tags, "-f", "{{if .CgoFiles}}{{.ImportPath}}{{end}}", "./cmd/facturad")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		var own []string
		for _, p := range strings.Fields(string(out)) {
			if strings.HasPrefix(p, "facturad/") {
				own = append(own, p)
			}
		}
		return own
	}
	if own := cgoPackages(""); len(own) > 0 {
		t.Errorf("the default build compiles cgo of its own: %v", own)
	}
	if own := cgoPackages(buildTags(imageBuild(t))); !slices.Contains(own, "facturad/signer/openssl") {
		t.Errorf("the image's build compiles %v with cgo, not facturad/signer/openssl", own)
	}
}

// TestDockerfileStampsVersion checks that the image's build passes its
// VERSION and REVISION build arguments to the binary's version variables
// (the build context has no .git, so the toolchain records no revision),
// and that cmd/facturad has those variables: -X on a missing one is
// silently ignored.
func TestDockerfileStampsVersion(t *testing.T) {
	args := map[string]bool{}
	stage := 0
	for _, ins := range dockerInstructions(t) {
		f := strings.Fields(ins)
		switch {
		case strings.EqualFold(f[0], "FROM"):
			stage++
		case strings.EqualFold(f[0], "ARG") && stage == 1 && len(f) >= 2:
			name, _, _ := strings.Cut(f[1], "=")
			args[name] = true
		}
	}
	build := imageBuild(t)
	for _, v := range []struct{ arg, variable string }{{"VERSION", "version"}, {"REVISION", "revision"}} {
		if !args[v.arg] {
			t.Errorf("the build stage declares no ARG %s", v.arg)
		}
		if want := "-X main." + v.variable + "=${" + v.arg + "}"; !strings.Contains(build, want) {
			t.Errorf("the image build does not pass %s: %q", want, build)
		}
		if !mainStringVar(t, v.variable) {
			t.Errorf("cmd/facturad has no package-level string variable %s for -X main.%s", v.variable, v.variable)
		}
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy/Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--build-arg VERSION=", "--build-arg REVISION="} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the Dockerfile's header does not show %s", want)
		}
	}
}

// mainStringVar reports whether package main of cmd/facturad declares a
// package-level variable name of type string, as -X needs.
func mainStringVar(t *testing.T, name string) bool {
	t.Helper()
	dir := filepath.Join(repoRoot, "cmd/facturad")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				typ, ok := vs.Type.(*ast.Ident)
				if !ok || typ.Name != "string" {
					continue
				}
				for _, n := range vs.Names {
					if n.Name == name {
						return true
					}
				}
			}
		}
	}
	return false
}
