package einvoiceapi_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestWebhookVerifiedByPython: a receiver written with Python's standard
// library (hmac, hashlib; testdata/webhook_receiver.py) verifies our
// deliveries — an event, the test event, and one signed twice after a
// rotation while it still holds the old secret — and refuses a changed
// body and a stale timestamp. The signature scheme is checked against code
// we did not write in Go.
func TestWebhookVerifiedByPython(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("SKIP the Python receiver step: python3 is not installed (.ci/run installs it); " +
			"the Go receivers of the other webhook tests still verify every signature")
	}
	e := newPipeEnv(t, storetest.SQLite(t))
	cmd := exec.Command(py, "testdata/webhook_receiver.py")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("python stderr: %s", stderr.String())
		}
	})
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the Python receiver exited: %s", stderr.String())
			}
			return l
		case <-time.After(20 * time.Second):
			t.Fatalf("no line from the Python receiver: %s", stderr.String())
		}
		return ""
	}
	port, ok := strings.CutPrefix(next(), "port ")
	if !ok {
		t.Fatal("the receiver did not say its port")
	}
	hookURL := "http://127.0.0.1:" + port + "/hook"
	ep, secret := e.createEndpoint(hookURL, []string{"*"}, nil)
	if _, err := fmt.Fprintln(stdin, secret); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{} // event id → type
	inv := e.issue("F-py-1")
	want[e.eventOf(inv, webhooks.EventSignatureRequired)] = webhooks.EventSignatureRequired
	if st, _, raw := e.call("POST", "/v1/webhook-endpoints/"+ep+"/test", nil); st != 202 {
		t.Fatalf("test: %d %s", st, raw)
	}
	e.deliver()
	// Rotated: the receiver keeps the old secret, which still signs.
	if st, _, raw := e.call("POST", "/v1/webhook-endpoints/"+ep+"/rotate-secret", nil); st != 200 {
		t.Fatalf("rotate: %d %s", st, raw)
	}
	inv2 := e.issue("F-py-2")
	want[e.eventOf(inv2, webhooks.EventSignatureRequired)] = webhooks.EventSignatureRequired
	e.deliver()
	gotTest := false
	for range 3 {
		f := strings.Fields(next())
		if len(f) != 3 || f[0] != "ok" {
			t.Fatalf("the Python receiver refused a delivery: %v", f)
		}
		if f[2] == webhooks.EventWebhookTest {
			gotTest = true
			continue
		}
		if want[f[1]] != f[2] {
			t.Fatalf("Python verified %v, not one of %v", f, want)
		}
		delete(want, f[1])
	}
	if len(want) != 0 || !gotTest {
		t.Fatalf("not verified by Python: %v (test event: %v)", want, gotTest)
	}
	for _, d := range e.deliveries("/v1/webhook-endpoints/" + ep + "/deliveries") {
		if d["state"] != "succeeded" || attemptsOf(d)[0]["statusCode"] != float64(204) {
			t.Fatalf("delivery %v", d)
		}
	}

	// The receiver refuses what it should.
	body := []byte(`{"id":"evt_x","type":"einvoice.submitted"}`)
	for _, c := range []struct {
		name   string
		header string
		body   []byte
		want   string
	}{
		{"changed body", webhooks.SignWebhook(time.Now(), body, secret), append(body, ' '), "bad mismatch"},
		{"stale", webhooks.SignWebhook(time.Now().Add(-301*time.Second), body, secret), body, "bad stale"},
		{"no signature", "t=1", body, "bad malformed"},
	} {
		req, _ := http.NewRequest("POST", hookURL, bytes.NewReader(c.body))
		req.Header.Set("Service-Signature", c.header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := next(); resp.StatusCode != 400 || got != c.want {
			t.Fatalf("%s: %d %q, want 400 %q", c.name, resp.StatusCode, got, c.want)
		}
	}
}
