package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// XSDCheck validates a received document against its official v4.4 schema
// with xmllint, as the tax authority validates with Xerces (spec §17 items
// 1–3): Dir holds the schemas (<Root>_V4.4.xsd and the signature schema
// they import, as in hacienda/testdata/xsd/2024/v4.4). It runs one xmllint
// per document, so it is for careful runs, not load; the strict reader of
// DefaultChecks is the everyday approximation.
type XSDCheck struct {
	Dir     string
	XMLLint string // the xmllint to run; empty finds it in PATH
}

// NewXSDCheck checks that dir holds the schemas and that xmllint runs.
func NewXSDCheck(dir string) (*XSDCheck, error) {
	if _, err := os.Stat(filepath.Join(dir, "FacturaElectronica_V4.4.xsd")); err != nil {
		return nil, fmt.Errorf("sandbox: v4.4 schemas: %w", err)
	}
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		return nil, fmt.Errorf("sandbox: schema validation needs xmllint: %w", err)
	}
	return &XSDCheck{Dir: dir, XMLLint: bin}, nil
}

// Check implements Check: one finding per xmllint error line, in the -1
// rows the tax authority writes for schema errors.
func (c *XSDCheck) Check(ctx context.Context, xml []byte) []string {
	return checkReading(ctx, xml, c)
}

// checkRead is Check for a document the sandbox has read already.
func (c *XSDCheck) checkRead(ctx context.Context, xml []byte, in docInfo) []string {
	bin := c.XMLLint
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("xmllint"); err != nil {
			return []string{fmt.Sprintf(`-1, %q, 0, 0`, "xmllint: "+err.Error())}
		}
	}
	schema := filepath.Join(c.Dir, in.root+"_V4.4.xsd")
	if _, err := os.Stat(schema); err != nil {
		return []string{fmt.Sprintf(`-1, "No hay esquema para el elemento raíz %s", 0, 0`, in.root)}
	}
	cmd := exec.CommandContext(ctx, bin, "--noout", "--nonet", "--schema", schema, "-")
	cmd.Stdin = bytes.NewReader(xml)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l == "" || strings.HasSuffix(l, "fails to validate") {
			continue
		}
		lines = append(lines, fmt.Sprintf(`-1, %q, 0, 0`, l))
	}
	if len(lines) == 0 {
		lines = []string{fmt.Sprintf(`-1, %q, 0, 0`, "xmllint: "+err.Error())}
	}
	return lines
}

// AllOf is a Check that runs each of checks and reports every finding;
// those that can take the document as the sandbox read it are given it.
func AllOf(checks ...Check) Check { return allOf(checks) }

type allOf []Check

func (a allOf) Check(ctx context.Context, xml []byte) []string {
	var out []string
	for _, c := range a {
		if c != nil {
			out = append(out, c.Check(ctx, xml)...)
		}
	}
	return out
}

func (a allOf) checkRead(ctx context.Context, xml []byte, in docInfo) []string {
	var out []string
	for _, c := range a {
		out = append(out, runCheck(ctx, c, xml, in)...)
	}
	return out
}
