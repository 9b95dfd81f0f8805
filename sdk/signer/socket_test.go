package signer

import "testing"

// FuzzDecodeMessage: any bytes decode or fail cleanly, and a decoded
// signing_request always carries a usable request.
func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(`{"type":"hello","agentId":"agt_1","serverTime":"2026-11-22T10:00:00Z"}`))
	f.Add([]byte(`{"type":"signing_request","request":{"id":"sgr_1","signingInput":"a.b","payload":"b"}}`))
	f.Add([]byte(`{"type":"signing_request"}`))
	f.Add([]byte(`{"type":"future","x":[1,2]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMessage(b)
		if err != nil {
			return
		}
		if m.Type == "signing_request" && (m.Request == nil || m.Request.ID == "" || m.Request.SigningInput == "") {
			t.Fatalf("accepted an unusable signing_request: %q", b)
		}
	})
}

func TestSocketURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://127.0.0.1:8081": "ws://127.0.0.1:8081/v1/agents/agt_1/signing-requests",
		"https://api.denar.mk":  "wss://api.denar.mk/v1/agents/agt_1/signing-requests",
	} {
		if got := socketURL(in, "agt_1"); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
