package delivery

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseSMTPURL: any smtp_url and smtp_from is read or refused without
// a panic, and the password is never in the refusal nor in String, what
// the service shows of its configuration. The URL carries a password
// marker that appears nowhere else in it.
func FuzzParseSMTPURL(f *testing.F) {
	const marker = "Pw7MarKer"
	for _, s := range []struct{ scheme, user, hostRest, from string }{
		{"smtp", "user", "127.0.0.1:1", "a@example.com"},
		{"smtp", "user", "", "a@example.com"},
		{"smtps", "", "mail.example.com", "a@example.com"},
		{"http", "u", "host", "a@example.com"},
		{"smtp", "u", "host", "not an address"},
		{"smtp", "user", "[::1]:2525/x?y#z", "Facturación <facturas@example.com>"},
		{"smtp", "us%20er", "host:587", "a@example.com"},
		{"SMTPS", "a@b", "c:d", "a@example.com"},
	} {
		f.Add(s.scheme, s.user, s.hostRest, s.from)
	}
	f.Fuzz(func(t *testing.T, scheme, user, hostRest, from string) {
		clean := func(s string) string {
			for strings.Contains(s, marker) {
				s = strings.ReplaceAll(s, marker, "")
			}
			return s
		}
		// The marker has no ':' nor '@', so no other occurrence of it can
		// straddle the separators around it.
		raw := clean(scheme+"://"+user) + ":" + marker + "@" + clean(hostRest)
		s, err := ParseSMTPURL(raw, from)
		if err != nil {
			if strings.Contains(err.Error(), marker) {
				t.Fatalf("%q: the refusal %q shows the password", raw, err)
			}
			return
		}
		if s.Host == "" {
			t.Fatalf("%q accepted without a host", raw)
		}
		if strings.Contains(s.Password, marker) && strings.Contains(s.String(), marker) {
			t.Fatalf("%q: String %q shows the password", raw, s.String())
		}
	})
}

// FuzzEnhancedCode: any reply text is read without a panic, and a code
// read is the text's first word, class.subject.detail of one to three
// digits each, of class 2, 4 or 5, its numbers those of the word; and
// every text that starts with such a word is read.
func FuzzEnhancedCode(f *testing.F) {
	for _, s := range []string{
		"5.7.1 Relay access denied", "4.2.2 Mailbox full", "2.0.0 Ok", " 5.1.1 <x@example.com>: unknown",
		"5.7.1", "550 5.7.1 denied", "6.0.0 x", "5.7.1000 x", "5..1 x", "", "5.7.1\tx", "05.7.1 x",
		"5.7.1\u00a0x", "\u00a05.7.1 x", "5.7.-1 x", "5.7.1.2 x", "5.٣.1 x",
	} {
		f.Add(s)
	}
	code := regexp.MustCompile(`^([245])\.([0-9]{1,3})\.([0-9]{1,3})(?: |$)`)
	f.Fuzz(func(t *testing.T, msg string) {
		class, subject, detail, ok := enhancedCode(msg)
		m := code.FindStringSubmatch(strings.TrimSpace(msg))
		if !ok {
			if class != 0 || subject != 0 || detail != 0 {
				t.Fatalf("%q: not read, yet %d.%d.%d", msg, class, subject, detail)
			}
			if m != nil {
				t.Fatalf("%q starts with the code %s, not read", msg, m[0])
			}
			return
		}
		if m == nil {
			t.Fatalf("%q read as %d.%d.%d, but does not start with a code", msg, class, subject, detail)
		}
		if fields := strings.Fields(msg); len(fields) == 0 || fields[0] != strings.TrimSuffix(m[0], " ") {
			t.Fatalf("%q: the code %q is not the first word", msg, m[0])
		}
		for i, n := range []int{class, subject, detail} {
			if want, _ := strconv.Atoi(m[i+1]); n != want {
				t.Fatalf("%q read as %d.%d.%d, the word says %s", msg, class, subject, detail, m[0])
			}
		}
	})
}
