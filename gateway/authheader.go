package gateway

import (
	"bytes"
	"encoding/base64"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"facturad/hacienda/msg"
	"facturad/tenant"
)

// credentialsError is a request refused before its credentials were
// checked, because a header is missing or malformed. It is
// tenant.ErrUnauthenticated with a reason: a part of the catalogue
// (msg.AuthNoToken...) that names the header and never repeats its value.
type credentialsError struct{ reason *msg.Entry }

func (e *credentialsError) Error() string { return "credentials:" + e.reason.With().String() }
func (e *credentialsError) Unwrap() error { return tenant.ErrUnauthenticated }

// parseBasic reads "Basic base64(user:password)"; the scheme is matched
// without regard to case. A value that cannot be read gives the reason.
func parseBasic(v []byte) (user, pass string, reason *msg.Entry) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", "", msg.AuthNoAuth
	}
	scheme, rest, _ := strings.Cut(string(v), " ")
	if !strings.EqualFold(scheme, "basic") {
		return "", "", msg.AuthNotBasic
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return "", "", msg.AuthEmptyBasic
	}
	raw, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		if strings.ContainsAny(rest, " \t\r\n") {
			if _, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(rest), "")); err == nil {
				return "", "", msg.AuthWrapped
			}
		}
		return "", "", msg.AuthNotBase64
	}
	u, p, found := strings.Cut(string(raw), ":")
	switch {
	case !found:
		return "", "", msg.AuthNoColon
	case u == "":
		return "", "", msg.AuthEmptyUser
	case p == "":
		return "", "", msg.AuthEmptyPassword
	}
	return u, p, nil
}

// A header line without ':' as fasthttp reports it: the line, then the
// request read so far, both quoted.
var missingColon = regexp.MustCompile(`missing colon: ("(?:[^"\\]|\\.)*").*contents: ("(?:[^"\\]|\\.)*")`)

// headerName is what may be shown of a header's name.
var headerName = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]{1,64}$`)

// brokenHeader recognises a request refused because a header line has no
// ':' (most often a value wrapped over two lines, as base64 wraps a long
// Basic value at 76 columns) and returns the header whose value was
// broken and why; reason is the zero Message when err is something else.
// The request bytes in err are read only for header names, never
// repeated.
func brokenHeader(err error) (name string, reason msg.Message) {
	if err == nil || !strings.Contains(err.Error(), "missing colon") {
		return "", msg.Message{}
	}
	name, reason = "headers", msg.HeaderBroken.With()
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
		return "Authorization", msg.AuthorizationWrapped.With()
	}
	return prev, msg.HeaderWrapped.With(prev)
}
