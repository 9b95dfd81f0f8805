package httpx_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/jsontext"
)

type memberLine struct {
	Description string `json:"description"`
	Quantity    string `json:"quantity,omitempty"`
}

type memberBody struct {
	TaxNumber string       `json:"taxNumber"`
	Lines     []memberLine `json:"lines,omitempty"`
}

// TestBodyText: what the edge refuses in a JSON body before either kind of
// operation decodes it (huma against the schema, or the handler from the
// raw bytes with jsontext.DecodeJSON): an unpaired surrogate escape as invalid
// UTF-8, NUL raw or escaped, a member given twice (also by case), each a
// 422 validation_failed at the real field's path; and what either kind
// does with a member name in another case than the field's.
func TestBodyText(t *testing.T) {
	t.Parallel()
	s := httpx.NewService(httpx.Options{Name: "test", Title: "t", Version: "1", Log: slog.New(slog.DiscardHandler)})
	echo := func(b memberBody) *struct{ Body memberBody } { return &struct{ Body memberBody }{Body: b} }
	httpx.Register(s, huma.Operation{OperationID: "schema", Method: http.MethodPost, Path: "/schema"},
		httpx.Spec{Auth: httpx.AuthNone}, func(ctx context.Context, in *struct{ Body memberBody }) (*struct{ Body memberBody }, error) {
			return echo(in.Body), nil
		})
	httpx.Register(s, huma.Operation{OperationID: "raw", Method: http.MethodPost, Path: "/raw"},
		httpx.Spec{Auth: httpx.AuthNone, RawBody: true}, func(ctx context.Context, in *struct{ RawBody []byte }) (*struct{ Body memberBody }, error) {
			var b memberBody
			if err := jsontext.DecodeJSON(in.RawBody, &b); err != nil {
				return nil, err
			}
			return echo(b), nil
		})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		name, body string
		status     int
		path, msg  string // msg: a part of the message
	}{
		{"clean", `{"taxNumber":"4030000000028","lines":[{"description":"X\ud83d\ude00Y"}]}`, 200, "", ""},
		{"lone surrogate", `{"taxNumber":"1","lines":[{"description":"X\ud800Y"}]}`, 422, "lines[0].description", "is not valid UTF-8"},
		{"invalid UTF-8", "{\"taxNumber\":\"1\",\"lines\":[{\"description\":\"X\xffY\"}]}", 422, "lines[0].description", "is not valid UTF-8"},
		{"lone surrogate in a key", `{"taxNumber":"1","\udc00":1}`, 422, "", "has a member name that is not valid UTF-8"},
		{"escaped NUL", `{"taxNumber":"a\u0000b"}`, 422, "taxNumber", "contains a NUL character"},
		{"raw NUL", "{\"taxNumber\":\"a\x00b\"}", 422, "taxNumber", "contains a NUL character"},
		{"duplicate", `{"taxNumber":"4030000000028","taxNumber":"4030000000036"}`, 422, "taxNumber", "is given more than once"},
		{"duplicate deep", `{"taxNumber":"1","lines":[{"description":"a","quantity":"1","quantity":"2"}]}`, 422, "lines[0].quantity", "is given more than once"},
		{"duplicate by case", `{"taxNumber":"4030000000028","TaxNumber":"4030000000036"}`, 422, "TaxNumber", `also as "taxNumber"`},
		{"duplicate by escape", `{"taxNumber":"4030000000028","tax\u004eumber":"4030000000036"}`, 422, "taxNumber", "is given more than once"},
		{"duplicate unknown", `{"taxNumber":"1","x":1,"x":2}`, 422, "x", "is given more than once"},
	} {
		for _, route := range []string{"/schema", "/raw"} {
			t.Run(tc.name+route, func(t *testing.T) {
				status, p, raw := postBody(t, srv.URL+route, tc.body)
				if status != tc.status {
					t.Fatalf("status %d, want %d: %s", status, tc.status, raw)
				}
				if tc.status == 200 {
					return
				}
				if p.Code != denar.ECodeValidation || len(p.Errors) != 1 || p.Errors[0].Path != tc.path || !strings.Contains(p.Errors[0].Message, tc.msg) {
					t.Fatalf("got %s, want %s at %q: %s", raw, denar.ECodeValidation, tc.path, tc.msg)
				}
			})
		}
	}

	// A member name alone in another case than its field's is that field
	// on both kinds of operation: huma validates names case-insensitively
	// (huma.ValidateStrictCasing is off) and encoding/json decodes them so.
	// That is why two names that differ only in case are refused above: both
	// would reach the same field, and huma's validation and the decoder need
	// not even pick the same one.
	for _, route := range []string{"/schema", "/raw"} {
		status, _, raw := postBody(t, srv.URL+route, `{"TaxNumber":"4030000000028"}`)
		if status != 200 || !strings.Contains(string(raw), `"taxNumber":"4030000000028"`) {
			t.Errorf("%s, TaxNumber alone: %d %s", route, status, raw)
		}
	}
}

func postBody(t *testing.T, url, body string) (int, httpx.Problem, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var p httpx.Problem
	if resp.StatusCode >= 400 {
		if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
			t.Fatalf("status %d with %s: %s", resp.StatusCode, ct, raw)
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, p, raw
}
