package delivery

import (
	"bufio"
	"bytes"
	"mime"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"facturad/hacienda"
)

func TestMailMoney(t *testing.T) {
	for _, tt := range []struct {
		currency, amount, want string
	}{
		{"USD", "1706.1", "USD 1.706,10"},
		{"CRC", "12345.67", "₡12.345,67"},
		{"", "12345.67", "₡12.345,67"},
		{"crc", "0.5", "₡0,50"},
		{"CRC", "100", "₡100,00"},
		{"CRC", "999", "₡999,00"},
		{"CRC", "1000", "₡1.000,00"},
		{"EUR", "1234567.12345", "EUR 1.234.567,12345"},
		{"USD", "2960683.00330", "USD 2.960.683,0033"},
		{"CRC", "0", "₡0,00"},
		{"CRC", "-15.5", "₡-15,50"},
	} {
		if got := mailMoney(tt.currency, hacienda.MustAmount(tt.amount)); got != tt.want {
			t.Errorf("mailMoney(%q, %s) = %q, want %q", tt.currency, tt.amount, got, tt.want)
		}
	}
	if got := mailMoney("CRC", hacienda.Amount{}); got != "₡0,00" {
		t.Errorf("mailMoney of an absent amount = %q, want ₡0,00", got)
	}
}

func TestHeaderText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Ñandú Café", "Ñandú Café"},
		{"  a \t b  ", "a b"},
		{"Evil\r\nBcc: x@y", "Evil Bcc: x@y"},
		{"a\u2028b\u0085c\x00d", "a b c d"},
		{"\xff\xfeok", "\uFFFDok"},
		{"\r\n", ""},
	} {
		if got := headerText(tt.in); got != tt.want {
			t.Errorf("headerText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzComposeHeaders: whatever the display name, the subject and the
// Reply-To addresses hold, the composed message has exactly the headers
// the service writes, no line longer than 998 characters, and reads back
// with the name and subject as headerText makes them and only Reply-To
// addresses that were given.
func FuzzComposeHeaders(f *testing.F) {
	for _, s := range []struct{ name, subject, reply string }{
		{"Ñandú Café", "Factura Electrónica 0010 de Ñandú por ₡1.000,00", "ventas@nandu.cr"},
		{`Distribuidora "El Sol", S.A.`, "x", "a@b.cr;c@d.cr"},
		{"Evil\r\nBcc: victim@example.com", "s\r\nX-Injected: 1", "a@b.cr\r\nBcc: v@x.cr"},
		{strings.Repeat("Ñ", 100), strings.Repeat("palabra ", 40), "josé@ñandú.cr"},
		{"", "", ""},
		{"=?utf-8?q?encoded?=", "=?utf-8?b?QQ==?=", "\"quoted\"@i.cr"},
	} {
		f.Add(s.name, s.subject, s.reply)
	}
	s := SMTP{From: "facturas@example.com"}
	f.Fuzz(func(t *testing.T, name, subject, reply string) {
		if !utf8.ValidString(name) || !utf8.ValidString(subject) {
			return
		}
		given := strings.Split(reply, ";")
		m := Message{To: []string{"compras@example.com"}, FromName: name, Subject: subject, MessageID: "x@facturad",
			ReplyTo: replyAddresses(given, true)}
		from := (&mail.Address{Name: headerText(name), Address: "facturas@example.com"}).String()
		raw, err := s.compose(m, from)
		if err != nil {
			t.Fatal(err)
		}
		head, _, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
		if !ok {
			t.Fatal("no end of headers")
		}
		for l := range strings.SplitSeq(string(head), "\r\n") {
			if len(l) > 998 || strings.ContainsAny(l, "\r\n") {
				t.Fatalf("header line %q", l)
			}
		}
		msg, err := mail.ReadMessage(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			t.Fatalf("read back: %v\n%s", err, head)
		}
		var names []string
		for k := range msg.Header {
			names = append(names, k)
		}
		slices.Sort(names)
		want := []string{"Content-Type", "Date", "From", "Message-Id", "Mime-Version", "Subject", "To"}
		if len(m.ReplyTo) > 0 {
			want = []string{"Content-Type", "Date", "From", "Message-Id", "Mime-Version", "Reply-To", "Subject", "To"}
		}
		if !slices.Equal(names, want) {
			t.Fatalf("headers %v, want %v\n%s", names, want, head)
		}
		a, err := mail.ParseAddress(msg.Header.Get("From"))
		if err != nil || a.Address != "facturas@example.com" || a.Name != headerText(name) {
			t.Fatalf("From %q read as %v, %v; want name %q", msg.Header.Get("From"), a, err, headerText(name))
		}
		got, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
		if err != nil || got != headerText(subject) {
			t.Fatalf("Subject %q read as %q, %v; want %q", msg.Header.Get("Subject"), got, err, headerText(subject))
		}
		if len(m.ReplyTo) > 0 {
			list, err := mail.ParseAddressList(msg.Header.Get("Reply-To"))
			if err != nil || len(list) != len(m.ReplyTo) || len(list) > 4 {
				t.Fatalf("Reply-To %q read as %v, %v", msg.Header.Get("Reply-To"), list, err)
			}
			for _, a := range list {
				found := false
				for _, g := range given {
					if p, err := mail.ParseAddress(strings.TrimSpace(g)); err == nil && p.Address == a.Address {
						found = true
					}
				}
				if !found || a.Name != "" {
					t.Fatalf("Reply-To names %q, which was not given (%q)", a, reply)
				}
			}
		}
	})
}
