package testenv

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// LossyProxy is a TCP proxy on a loopback port in front of a real server
// that can lose one reply: the request reaches the server and is carried
// out, but its answer never reaches the client, whose connection is closed
// instead. This is the ambiguous failure (a write committed, its reply
// lost) that a Redis pause, a network blip or a killed connection causes,
// made exact so that a test can say which command was hit.
//
// It relays whole reads and assumes one request in flight per connection,
// which holds for go-redis's pooled connections outside pipelines.
type LossyProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	match []byte // the next request holding this loses its reply
	lost  atomic.Int64
	conns []net.Conn
}

// NewLossyProxy starts a proxy to target, closed when the test ends.
func NewLossyProxy(t testing.TB, target string) *LossyProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &LossyProxy{ln: ln, target: target}
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's address, to give to the client instead of target's.
func (p *LossyProxy) Addr() string { return p.ln.Addr().String() }

// LoseNextReply arms the proxy: the next request whose bytes contain match
// (for a Redis script, its body or SHA, or a key) is forwarded and its reply
// dropped.
func (p *LossyProxy) LoseNextReply(match []byte) {
	p.mu.Lock()
	p.match = bytes.Clone(match)
	p.mu.Unlock()
}

// Lost is how many replies the proxy has dropped.
func (p *LossyProxy) Lost() int { return int(p.lost.Load()) }

func (p *LossyProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		var swallow atomic.Bool
		go p.requests(c, s, &swallow)
		go replies(s, c, &swallow, &p.lost)
	}
}

// requests copies client to server, arming swallow before it forwards the
// request that matches, so the reply cannot overtake the flag.
func (p *LossyProxy) requests(c, s net.Conn, swallow *atomic.Bool) {
	defer s.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if p.match != nil && bytes.Contains(buf[:n], p.match) {
				p.match = nil
				swallow.Store(true)
			}
			p.mu.Unlock()
			if _, werr := s.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// replies copies server to client until a swallowed reply arrives: then it
// drops it and closes the client's connection, as a lost link would.
func replies(s, c net.Conn, swallow *atomic.Bool, lost *atomic.Int64) {
	defer c.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if swallow.Load() {
				lost.Add(1)
				_ = s.Close()
				return
			}
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *LossyProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
}
