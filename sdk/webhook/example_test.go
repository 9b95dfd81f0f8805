package webhook_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/denar-mk/denar/sdk/webhook"
)

// A receiver verifies the raw body before it parses anything.
func ExampleVerify() {
	secret := "whsec_example"
	receiver := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := webhook.Verify(body, r.Header.Get(webhook.Header), secret, webhook.Tolerance, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		// Now parse body, and ignore an event id already handled.
		w.WriteHeader(http.StatusNoContent)
	})

	// What the service sends (signed here as the service does).
	body := `{"id":"evt_1","object":"event","type":"einvoice.submitted"}`
	req := httptest.NewRequest("POST", "/hooks", strings.NewReader(body))
	req.Header.Set(webhook.Header, sign(time.Now(), body, secret))
	rec := httptest.NewRecorder()
	receiver.ServeHTTP(rec, req)
	fmt.Println(rec.Code)

	// A changed byte does not pass.
	req = httptest.NewRequest("POST", "/hooks", strings.NewReader(strings.Replace(body, "evt_1", "evt_2", 1)))
	req.Header.Set(webhook.Header, sign(time.Now(), body, secret))
	rec = httptest.NewRecorder()
	receiver.ServeHTTP(rec, req)
	fmt.Println(rec.Code, strings.TrimSpace(rec.Body.String()))
	// Output:
	// 204
	// 400 webhook: no signature matches the secret
}
