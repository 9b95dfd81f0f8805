package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/sdk/signer"
)

// The timeouts of the server under TestSlowAndHostileClients: short, so the
// test waits little, apart, so each cut shows which one made it, and long
// enough for the server to read a 1 MB body on a loaded machine under -race.
const (
	hostileRead  = 2 * time.Second
	hostileWrite = 4 * time.Second
)

// TestSlowAndHostileClients runs the real denar serve on loopback with short
// DENAR_HTTP_* timeouts and checks what a slow or stalled client gets: a
// body that never finishes loses its connection at the read timeout, with
// or without credentials, whoever reads the body; a client that never reads
// its response loses it at the write timeout; the agent long-poll and
// WebSocket, whose contract is to wait, outlive both; and a shutdown ends
// them at once. Transport behaviour does not depend on the store, so this
// runs on SQLite only.
func TestSlowAndHostileClients(t *testing.T) {
	t.Parallel()
	env := append(baseEnv(t, storetest.MigratedSQLiteURL(t)),
		"DENAR_HTTP_READ_HEADER_TIMEOUT="+hostileRead.String(), "DENAR_HTTP_READ_TIMEOUT="+hostileRead.String(),
		"DENAR_HTTP_WRITE_TIMEOUT="+hostileWrite.String(), "DENAR_HTTP_IDLE_TIMEOUT=10s")
	s := startServer(t, env)
	agent := pairAgent(t, s)

	t.Run("body that never finishes", func(t *testing.T) {
		for _, tt := range []struct {
			name, base, path, key string
			headers               []string
		}{
			{"OAuth token, unauthenticated", s.einvoice, "/v1/oauth/token", "", []string{"Content-Type", "application/x-www-form-urlencoded"}},
			{"mandate page, unauthenticated", s.einvoice, "/mandates/mnd_nothing", "", nil},
			{"POST with Idempotency-Key", s.einvoice, "/v1/companies", s.einvoiceKey, []string{"Idempotency-Key", "stalled-1"}},
			{"payroll operation", s.payroll, "/v1/calculations", s.payrollKey, nil},
			{"payroll file", s.payroll, "/v1/files/mpin/validate", s.payrollKey, nil},
		} {
			addr := strings.TrimPrefix(tt.base, "http://")
			d := stalledRequest(t, addr, tt.path, tt.key, tt.headers...)
			if d < hostileRead || d > hostileRead+3*time.Second {
				t.Errorf("%s: connection closed %s after the request started, want the read timeout %s", tt.name, d, hostileRead)
			}
		}
	})

	t.Run("client that never reads its response", func(t *testing.T) {
		// 4,000 records: a 0.8 MB request for a 7 MB XML file, more than
		// twice what the connection's buffers took in earlier runs (3 MB).
		body := minimalMpin(4000)
		start := time.Now()
		c := dialSmallWindow(t, strings.TrimPrefix(s.payroll, "http://"))
		defer c.Close()
		// With an Idempotency-Key the body is read whole before it is
		// decoded, so a busy machine's slow decoding does not run into
		// the read timeout.
		fmt.Fprintf(c, "POST /v1/files/mpin/xml HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nIdempotency-Key: never-reads\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", s.payrollKey, len(body), body)
		// The server logs the request when its handler returns, which it
		// does once writing to a client that reads nothing fails.
		logged := regexp.MustCompile(`"path":"/v1/files/mpin/xml"[^\n]*"status":(\d+)[^\n]*"bytes":(\d+)`)
		var m []string
		for deadline := time.Now().Add(hostileWrite + 20*time.Second); m == nil; {
			m = logged.FindStringSubmatch(s.stderr.String())
			if m == nil && time.Now().After(deadline) {
				t.Fatalf("the request never ended; log:\n%s", tail(s.stderr.String(), 2000))
			}
			time.Sleep(20 * time.Millisecond)
		}
		if d := time.Since(start); d > hostileWrite+5*time.Second {
			t.Errorf("writing to a client that reads nothing ended after %s, want the write timeout %s", d, hostileWrite)
		}
		// Now read: what the buffers held, then the end of a connection
		// the server closed, short of the whole file. (On a very busy
		// machine the file may not even be made before the deadline; then
		// nothing but the closed connection arrives.)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var n int64
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			n, err = io.Copy(io.Discard, resp.Body)
		}
		if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("read %d bytes, then %v; want the connection cut short by the server", n, err)
		}
		if m[1] != "200" {
			t.Errorf("server log: status %s", m[1])
		}
		t.Logf("the server wrote %s bytes before the write timeout; the client read %d, then %v", m[2], n, err)
	})

	t.Run("long-poll outlives the timeouts", func(t *testing.T) {
		start := time.Now()
		wait := hostileWrite + time.Second
		r := call(t, "GET", fmt.Sprintf("%s/v1/agents/%s/signing-requests?wait=%d", s.einvoice, agent.AgentID, int(wait.Seconds())), "",
			map[string]string{"Authorization": "Agent " + agent.AgentID + "." + agent.Secret}, "")
		if r.status != 200 || !strings.Contains(string(r.body), `"data":[]`) {
			t.Fatalf("long-poll: %d %s", r.status, r.body)
		}
		if d := time.Since(start); d < wait {
			t.Errorf("long-poll answered after %s, before its wait of %s", d, wait)
		}
	})

	t.Run("WebSocket outlives the timeouts", func(t *testing.T) {
		ws := dialAgentSocket(t, s, agent)
		defer ws.CloseNow()
		go func() { // read, so that pongs are seen
			for {
				if _, _, err := ws.Read(context.Background()); err != nil {
					return
				}
			}
		}()
		// Stay connected for longer than both timeouts, then check the
		// socket still answers.
		<-time.After(hostileWrite + hostileRead)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		if err := ws.Ping(ctx); err != nil {
			t.Fatalf("socket after %s: %v", hostileWrite+hostileRead, err)
		}
		if err := ws.Close(websocket.StatusNormalClosure, ""); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("shutdown ends the long-poll and the WebSocket", func(t *testing.T) {
		ws := dialAgentSocket(t, s, agent)
		defer ws.CloseNow()
		// Served now: this socket and the metrics request itself (earlier
		// sockets have gone).
		waitInFlight(t, s.einvoice, 2)
		polled := make(chan httpReply, 1)
		go func() {
			req, _ := http.NewRequest("GET", fmt.Sprintf("%s/v1/agents/%s/signing-requests?wait=55", s.einvoice, agent.AgentID), nil)
			req.Header.Set("Authorization", "Agent "+agent.AgentID+"."+agent.Secret)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				polled <- httpReply{status: -1, body: []byte(err.Error())}
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			polled <- httpReply{status: resp.StatusCode, body: b}
		}()
		waitInFlight(t, s.einvoice, 3) // and the long-poll
		start := time.Now()
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- s.cmd.Wait() }()
		select {
		case r := <-polled:
			if r.status != 200 || !strings.Contains(string(r.body), `"data":[]`) {
				t.Errorf("long-poll at shutdown: %d %s", r.status, r.body)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the long-poll did not end within 20 s of SIGTERM")
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		if _, _, err := ws.Read(ctx); websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Errorf("socket at shutdown: %v, want close status 1001 going away", err)
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("denar serve exited with %v after SIGTERM", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("denar serve did not stop within 30 s of SIGTERM")
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("shutdown with a 55 s long-poll and a socket open took %s", d)
		}
	})
}

// TestNoSniffEverywhere: every response of both services and of the UJP
// simulator carries X-Content-Type-Options: nosniff, errors and pages
// included.
func TestNoSniffEverywhere(t *testing.T) {
	t.Parallel()
	s := startServer(t, baseEnv(t, storetest.MigratedSQLiteURL(t)))
	sim := startSimProcess(t, storetest.SQLiteURL(t))
	agent := pairAgent(t, s)
	for _, tt := range []struct{ method, url, key, body string }{
		{"GET", s.payroll + "/healthz", "", ""},
		{"GET", s.payroll + "/v1/openapi.json", "", ""},
		{"POST", s.payroll + "/v1/calculations", s.payrollKey, `{"grossSalary":"30000"}`},
		{"POST", s.payroll + "/v1/calculations", "", `{"grossSalary":"30000"}`},
		{"POST", s.payroll + "/v1/files/mpin/xml", s.payrollKey, `{`},
		{"GET", s.payroll + "/nowhere", "", ""},
		{"GET", s.einvoice + "/metrics", "", ""},
		{"GET", s.einvoice + "/v1/companies", s.einvoiceKey, ""},
		{"DELETE", s.einvoice + "/v1/companies", s.einvoiceKey, ""},
		{"POST", s.einvoice + "/v1/oauth/token", "", "grant_type=client_credentials"},
		{"GET", s.einvoice + "/mandates/mnd_unknown", "", ""},
		{"GET", sim.url + "/_sim/faults", "", ""},
		{"GET", sim.url + "/nowhere", "", ""},
	} {
		r := call(t, tt.method, tt.url, tt.key, nil, tt.body)
		if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s (%d): X-Content-Type-Options %q", tt.method, tt.url, r.status, got)
		}
	}
	ws := dialAgentSocket(t, s, agent)
	ws.CloseNow()
	s.stop(t)
}

// pairAgent pairs a signing agent through the API with the bootstrap key.
func pairAgent(t *testing.T, s *server) signer.Credentials {
	t.Helper()
	r := call(t, "POST", s.einvoice+"/v1/agents/pairing-codes", s.einvoiceKey, map[string]string{"Idempotency-Key": "pair-" + t.Name()}, "")
	var pc struct{ Code string }
	if err := json.Unmarshal(r.body, &pc); err != nil || r.status != 201 {
		t.Fatalf("pairing code: %d %s", r.status, r.body)
	}
	creds, err := signer.Pair(t.Context(), http.DefaultClient, s.einvoice, pc.Code, "hardening")
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

// dialAgentSocket opens the agent's WebSocket, checks the upgrade's headers
// and reads the hello; the socket keeps reading in the background, so pings
// are answered.
func dialAgentSocket(t *testing.T, s *server, agent signer.Credentials) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	h := http.Header{"Authorization": {"Agent " + agent.AgentID + "." + agent.Secret}}
	url := "ws" + strings.TrimPrefix(s.einvoice, "http") + "/v1/agents/" + agent.AgentID + "/signing-requests"
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatalf("agent socket: %v", err)
	}
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("WebSocket upgrade: X-Content-Type-Options %q", got)
	}
	if _, msg, err := ws.Read(ctx); err != nil || !strings.Contains(string(msg), `"hello"`) {
		t.Fatalf("agent socket hello: %s %v", msg, err)
	}
	return ws
}

// stalledRequest sends the headers of a POST and part of its body, then
// nothing, and returns how long the server took to close the connection.
func stalledRequest(t *testing.T, addr, path, key string, headers ...string) time.Duration {
	t.Helper()
	start := time.Now() // before the server can start its clock
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n"
	if key != "" {
		head += "Authorization: Bearer " + key + "\r\n"
	}
	ct := "application/json"
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Content-Type" {
			ct = headers[i+1]
			continue
		}
		head += headers[i] + ": " + headers[i+1] + "\r\n"
	}
	if _, err := io.WriteString(c, head+"Content-Type: "+ct+"\r\n\r\n"+`{"company":{"name":"`); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(hostileRead + 30*time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("%s: still open %s after the request started: %v", path, time.Since(start), err)
	}
	return time.Since(start)
}

// dialSmallWindow connects with a small receive buffer, so that a response
// the client does not read fills the connection's buffers quickly.
func dialSmallWindow(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// minimalMpin is a forced МПИН request of n records with only the fields
// every record needs.
func minimalMpin(n int) string {
	rec := `{"salaryGross":"30000","salaryNet":"21000","pension":"5640","health":"2250","additionalHealth":"150",` +
		`"employmentContrib":"360","pit":"600","employee":{"firstName":"Ана","lastName":"Ангеловска"}}`
	return `{"company":{"name":"Дизајнија ДООЕЛ","taxId":"4030990123455"},"batch":{"periodMonth":5,"periodYear":2026},"force":true,"records":[` +
		strings.TrimSuffix(strings.Repeat(rec+",", n), ",") + `]}`
}

// waitInFlight waits until a service is serving exactly n requests
// (denar_http_requests_in_flight, counting the metrics request itself).
func waitInFlight(t *testing.T, base string, n int) {
	t.Helper()
	gauge := regexp.MustCompile(`(?m)^denar_http_requests_in_flight\{[^}]*\} (\d+)`)
	for deadline := time.Now().Add(20 * time.Second); ; {
		r := call(t, "GET", base+"/metrics", "", nil, "")
		m := gauge.FindSubmatch(r.body)
		if m == nil {
			t.Fatalf("no in-flight gauge in the metrics:\n%.500s", r.body)
		}
		if got, _ := strconv.Atoi(string(m[1])); got == n {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("%s serves %d requests, want %d", base, got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
