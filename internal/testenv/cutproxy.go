package testenv

import (
	"net"
	"sync"
	"testing"
)

// CutProxy is a TCP proxy on a loopback port in front of a real server
// whose link a test can cut, as a network partition does: while cut,
// connections stay open but carry nothing either way, and new ones are
// accepted and never served, so a client's calls hang until their own
// timeouts (a refused connection would fail them fast, which a partition
// does not). Only the clients given its address are cut off; others reach
// the server directly.
type CutProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns []net.Conn // every connection open now, both sides
}

// NewCutProxy starts a proxy to target, closed when the test ends.
func NewCutProxy(t testing.TB, target string) *CutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &CutProxy{ln: ln, target: target}
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's address, to give to the client instead of target's.
func (p *CutProxy) Addr() string { return p.ln.Addr().String() }

// Cut silences the link.
func (p *CutProxy) Cut() {
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
}

// Restore serves the link again. The connections that lived through the
// cut lost bytes midway, so they are closed: the clients dial again, as
// they would once their timeouts gave up on a partitioned connection.
func (p *CutProxy) Restore() {
	p.mu.Lock()
	conns := p.conns
	p.conns, p.cut = nil, false
	p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

func (p *CutProxy) isCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}

func (p *CutProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		cut := p.cut
		p.mu.Unlock()
		if cut {
			continue // held open, never served; Restore closes it
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, s)
		p.mu.Unlock()
		go p.relay(c, s)
		go p.relay(s, c)
	}
}

// relay copies from to to, dropping what it reads while the link is cut.
func (p *CutProxy) relay(from, to net.Conn) {
	defer to.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 && !p.isCut() {
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *CutProxy) close() {
	_ = p.ln.Close()
	p.Restore()
}
