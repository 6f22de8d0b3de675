package gateway

import (
	"bytes"
	"encoding/base64"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"facturad/tenant"
)

// How the two credential headers (A.1) go wrong, said in a 401's message so
// that a caller can fix its request. The messages name the header and never
// repeat its value.
const (
	reasonNoToken      = "The AuthToken header is missing."
	reasonNoAuth       = "The Authorization header is missing."
	reasonNotBasic     = "The Authorization header is not of the Basic scheme: send Authorization: Basic base64(usuario:contrasena)."
	reasonEmptyBasic   = "The Authorization header has nothing after Basic: send base64(usuario:contrasena)."
	reasonWrapped      = "The Authorization header's Basic value is broken over several lines: encode usuario:contrasena on one line (base64 -w0, or curl -u usuario:contrasena)."
	reasonNotBase64    = "The Authorization header's Basic value is not base64 of usuario:contrasena."
	reasonNoColon      = "The Authorization header's Basic value decodes to no usuario:contrasena pair (no ':')."
	reasonEmptyUser    = "The Authorization header's Basic value has an empty usuario."
	reasonEmptyPasswrd = "The Authorization header's Basic value has an empty contrasena."
)

// credentialsError is a request refused before its credentials were
// checked, because a header is missing or malformed. It is
// tenant.ErrUnauthenticated with a reason.
type credentialsError struct{ reason string }

func (e *credentialsError) Error() string { return "credentials: " + e.reason }
func (e *credentialsError) Unwrap() error { return tenant.ErrUnauthenticated }

// parseBasic reads "Basic base64(user:password)"; the scheme is matched
// without regard to case. A value that cannot be read gives the reason.
func parseBasic(v []byte) (user, pass, reason string) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", "", reasonNoAuth
	}
	scheme, rest, _ := strings.Cut(string(v), " ")
	if !strings.EqualFold(scheme, "basic") {
		return "", "", reasonNotBasic
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return "", "", reasonEmptyBasic
	}
	raw, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		if strings.ContainsAny(rest, " \t\r\n") {
			if _, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(rest), "")); err == nil {
				return "", "", reasonWrapped
			}
		}
		return "", "", reasonNotBase64
	}
	u, p, found := strings.Cut(string(raw), ":")
	switch {
	case !found:
		return "", "", reasonNoColon
	case u == "":
		return "", "", reasonEmptyUser
	case p == "":
		return "", "", reasonEmptyPasswrd
	}
	return u, p, ""
}

// A header line without ':' as fasthttp reports it: the line, then the
// request read so far, both quoted.
var missingColon = regexp.MustCompile(`missing colon: ("(?:[^"\\]|\\.)*").*contents: ("(?:[^"\\]|\\.)*")`)

// headerName is what may be shown of a header's name.
var headerName = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]{1,64}$`)

// brokenHeader recognises a request refused because a header line has no
// ':' (most often a value wrapped over two lines, as base64 wraps a long
// Basic value at 76 columns) and returns the header whose value was
// broken and why; reason is empty when err is something else. The request
// bytes in err are read only for header names, never repeated.
func brokenHeader(err error) (name, reason string) {
	if err == nil || !strings.Contains(err.Error(), "missing colon") {
		return "", ""
	}
	name, reason = "headers", "A request header line has no ':': a header value was broken over several lines (a base64 Authorization: Basic value wraps at 76 columns: encode it with base64 -w0, or use curl -u usuario:contrasena)."
	var m []string
	for e := err; e != nil && m == nil; e = errors.Unwrap(e) {
		m = missingColon.FindStringSubmatch(e.Error())
	}
	if m == nil {
		return name, reason
	}
	bad, err1 := strconv.Unquote(m[1])
	contents, err2 := strconv.Unquote(m[2])
	if err1 != nil || err2 != nil {
		return name, reason
	}
	lines := strings.Split(strings.ReplaceAll(contents, "\r\n", "\n"), "\n")
	prev := ""
	for i, l := range lines {
		if i > 0 && strings.TrimSpace(l) == strings.TrimSpace(bad) {
			break
		}
		if n, _, ok := strings.Cut(l, ":"); ok && i > 0 {
			prev = n
		}
	}
	if !headerName.MatchString(prev) {
		return name, reason
	}
	if strings.EqualFold(prev, "Authorization") {
		return "Authorization", reasonWrapped
	}
	return prev, "The " + prev + " header's value is broken over several lines (a line without ':' follows it): send it on one line."
}
