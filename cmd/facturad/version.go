package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/metrics"
	"facturad/signer"
)

// version and revision are the release and the commit it was built from,
// set at build time with -ldflags "-X main.version=v1.2.3 -X
// main.revision=<commit>" (the image's build passes its VERSION and
// REVISION build arguments so, its context having no .git); empty in a
// plain go build, where readBuildInfo falls back on what the Go toolchain
// recorded.
var (
	version  string
	revision string
)

// buildInfo is what the binary says of itself: its version, the commit it
// was built from, the Go release that built it and its RSA backend.
type buildInfo struct {
	Version, Revision, GoVersion, Signer string
}

// readBuildInfo reads the binary's build information: the version from
// -X main.version when set, else the main module's version (a go install
// of a tagged release), else "devel"; the revision from -X main.revision
// when set, else the VCS stamp ("unknown" without one, as with
// -buildvcs=false or a build context without .git), "-dirty" added when
// the work tree had changes.
func readBuildInfo() buildInfo {
	bi, _ := debug.ReadBuildInfo()
	return buildInfoFrom(version, revision, bi)
}

// buildInfoFrom is readBuildInfo's work on the -X values and what the Go
// toolchain recorded (nil when nothing was).
func buildInfoFrom(version, revision string, bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: version, Revision: revision, GoVersion: runtime.Version(), Signer: signer.RSABackend}
	if bi != nil {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		if b.Revision == "" {
			modified := false
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					b.Revision = s.Value
				case "vcs.modified":
					modified = s.Value == "true"
				}
			}
			if modified && b.Revision != "" {
				b.Revision += "-dirty"
			}
		}
	}
	if b.Version == "" {
		b.Version = "devel"
	}
	if b.Revision == "" {
		b.Revision = "unknown"
	}
	return b
}

// String is the one line `facturad --version` prints.
func (b buildInfo) String() string {
	return fmt.Sprintf("facturad %s (revision %s, %s, rsa %s)", b.Version, b.Revision, b.GoVersion, b.Signer)
}

// register exports b as facturad_build_info{version,revision,goversion,signer} 1.
func (b buildInfo) register(r prometheus.Registerer) error {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Name:      "build_info",
		Help:      "Always 1; its labels say which build runs: version, VCS revision, Go release and RSA signing backend.",
		ConstLabels: prometheus.Labels{
			"version": b.Version, "revision": b.Revision, "goversion": b.GoVersion, "signer": b.Signer,
		},
	})
	g.Set(1)
	return r.Register(g)
}

// runVersion prints the build's version line.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newCommandFlags("version", stdout, stderr, nil)
	if err := fs.ParseEnv(args, func(string) string { return "" }); err != nil {
		return err
	}
	_, err := fmt.Fprintln(stdout, readBuildInfo())
	return err
}
