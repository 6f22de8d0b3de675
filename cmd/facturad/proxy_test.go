package main

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// cutProxy forwards TCP connections to a target, so that a test can make a
// dependency of the service go away and come back without stopping it
// (other tests share the PostgreSQL and Redis): Cut closes every forwarded
// connection and then closes each new one as soon as it is accepted, which
// is what the service sees of a database whose host went down; Restore
// forwards again.
type cutProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
		p.wg.Wait()
	})
	return p
}

// proxyURL returns rawURL with its host and port replaced by a cutProxy's
// in front of them.
func proxyURL(t *testing.T, rawURL string) (string, *cutProxy) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal("the URL does not parse") // it may hold a password: not quoted
	}
	p := newCutProxy(t, u.Host)
	u.Host = p.Addr()
	return u.String(), p
}

// Addr is where the proxy listens.
func (p *cutProxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every forwarded connection and refuses to forward new ones.
func (p *cutProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

// Restore forwards new connections again.
func (p *cutProxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed by the cleanup
		}
		p.wg.Add(1)
		go p.forward(c)
	}
}

// track registers c unless the proxy is cut; it reports whether it did.
func (p *cutProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[c] = true
	return true
}

func (p *cutProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
		c.Close()
	}
}

func (p *cutProxy) forward(client net.Conn) {
	defer p.wg.Done()
	if !p.track(client) {
		client.Close()
		return
	}
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		p.untrack(client)
		return
	}
	if !p.track(server) {
		p.untrack(client, server)
		return
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(server, client); done <- struct{}{} }()
	go func() { io.Copy(client, server); done <- struct{}{} }()
	<-done
	p.untrack(client, server) // ends the other copy
	<-done
}
