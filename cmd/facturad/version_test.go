package main

import (
	"runtime/debug"
	"testing"
)

// TestVersionFromBuild checks where the version and revision come from:
// the -X values when set, else what the Go toolchain recorded, else
// "devel" and "unknown".
func TestVersionFromBuild(t *testing.T) {
	stamped := &debug.BuildInfo{
		Main: debug.Module{Path: "facturad", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123abcd"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	tagged := &debug.BuildInfo{Main: debug.Module{Path: "facturad", Version: "v1.4.0"}}
	tests := []struct {
		name              string
		version, revision string
		bi                *debug.BuildInfo
		wantVersion       string
		wantRevision      string
	}{
		{"ok/nothing recorded", "", "", nil, "devel", "unknown"},
		{"ok/image build without .git, -X both", "v1.2.3", "89abcdef", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "v1.2.3", "89abcdef"},
		{"ok/-X revision wins over the VCS stamp", "", "89abcdef", stamped, "devel", "89abcdef"},
		{"ok/VCS stamp of a modified tree", "", "", stamped, "devel", "0123abcd-dirty"},
		{"ok/go install of a tag", "", "", tagged, "v1.4.0", "unknown"},
		{"ok/-X version wins over the module's", "v2.0.0", "", tagged, "v2.0.0", "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := buildInfoFrom(tt.version, tt.revision, tt.bi)
			if b.Version != tt.wantVersion || b.Revision != tt.wantRevision {
				t.Errorf("version %q revision %q, want %q %q", b.Version, b.Revision, tt.wantVersion, tt.wantRevision)
			}
		})
	}
}
