package ujp

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
)

// When a call is on the wire. UJP stamps a call as it reads its headers,
// and the next call of the user must arrive a window later; the turns
// (Turns.Begin) space the next call from when this one was written. The
// transport's own word comes too early: it reports the request written
// (httptrace's WroteHeaders, even WroteRequest) while the request still
// waits in the connection's buffer for the flush that puts it on the
// wire, and a writer not scheduled in between (a loaded machine) sends it
// later than said, within the window of the next call. So the client's
// transport writes through wireConn, which tells the call it carries when
// the first of its writes (the one with its headers) has reached the
// socket.

// wireConn is a connection of the client's transport that tells the call
// it carries (carry) when that call's first write, the one with its
// headers, has reached the socket.
type wireConn struct {
	net.Conn
	mu   sync.Mutex
	call Call
}

func (c *wireConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.mu.Lock()
		call := c.call
		c.call = nil
		c.mu.Unlock()
		if call != nil {
			call.Wrote()
		}
	}
	return n, err
}

// carry makes call the one whose first write c reports: a connection
// carries one request at a time (HTTP/1.1), the next after the previous
// one's answer.
func (c *wireConn) carry(call Call) {
	c.mu.Lock()
	c.call = call
	c.mu.Unlock()
}

// wireOf is the wireConn under conn (as httptrace's GotConn gives it: the
// TLS connection over it for https), or nil.
func wireOf(conn net.Conn) *wireConn {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	w, _ := conn.(*wireConn)
	return w
}

// onTheWire returns rt changed so that its connections are wireConns: a
// clone, its dialer wrapped, HTTP/1.1 only (HTTP/2 would carry several
// calls on one connection at once, and their writes could not be told
// apart); nil when rt is no *http.Transport, whose calls the trace alone
// places. A connection the transport makes otherwise (its own TLS
// dialer) is not a wireConn either, and its calls are placed the same
// way.
func onTheWire(rt http.RoundTripper) *http.Transport {
	if rt == nil {
		rt = http.DefaultTransport
	}
	tr, ok := rt.(*http.Transport)
	if !ok {
		return nil
	}
	tr = tr.Clone()
	dial := tr.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &wireConn{Conn: conn}, nil
	}
	tr.ForceAttemptHTTP2 = false
	tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	return tr
}
