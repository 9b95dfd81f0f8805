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

	"github.com/denar-mk/denar/internal/httpx"
)

type boundedIn struct {
	Body struct {
		Name  string   `json:"name"`
		Code  string   `json:"code" maxLength:"2"`
		Kind  string   `json:"kind,omitempty" enum:"a,b"`
		Notes []string `json:"notes,omitempty" maxItems:"3"`
	}
}

type boundedOut struct {
	Body struct {
		Name string `json:"name"`
	}
}

// TestMaxStringLength: a body string bounded in no other way gets the
// service's MaxStringLength, in the document and in validation; strings
// with their own bound keep it.
func TestMaxStringLength(t *testing.T) {
	t.Parallel()
	s := httpx.NewService(httpx.Options{Name: "test", Title: "t", Version: "1", Log: slog.New(slog.DiscardHandler), MaxStringLength: 5})
	httpx.Register(s, huma.Operation{OperationID: "bounded", Method: http.MethodPost, Path: "/bounded"},
		httpx.Spec{Auth: httpx.AuthNone}, func(ctx context.Context, in *boundedIn) (*boundedOut, error) {
			out := &boundedOut{}
			out.Body.Name = in.Body.Name
			return out, nil
		})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)

	doc, err := s.OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					MaxLength *int `json:"maxLength"`
					Items     *struct {
						MaxLength *int `json:"maxLength"`
					} `json:"items"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	var props = d.Components.Schemas["BoundedInBody"].Properties
	if props == nil {
		t.Fatalf("no BoundedInBody schema in %s", doc)
	}
	for name, want := range map[string]int{"name": 5, "code": 2, "kind": 0} {
		got := 0
		if p := props[name].MaxLength; p != nil {
			got = *p
		}
		if got != want {
			t.Errorf("%s: maxLength %d, want %d", name, got, want)
		}
	}
	if it := props["notes"].Items; it == nil || it.MaxLength == nil || *it.MaxLength != 5 {
		t.Errorf("notes[]: want maxLength 5, got %+v", it)
	}

	for _, tc := range []struct {
		body   string
		status int
		path   string
	}{
		{`{"name":"abcde","code":"ab"}`, 200, ""},
		{`{"name":"абвгд","code":"ab"}`, 200, ""}, // characters, not bytes
		{`{"name":"abcdef","code":"ab"}`, 422, "name"},
		{`{"name":"a","code":"abc"}`, 422, "code"},
		{`{"name":"a","code":"a","notes":["123456"]}`, 422, "notes[0]"},
	} {
		resp, err := http.Post(srv.URL+"/bounded", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.body, resp.StatusCode, tc.status, b)
			continue
		}
		if tc.path != "" {
			var p httpx.Problem
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatal(err)
			}
			if len(p.Errors) != 1 || p.Errors[0].Path != tc.path {
				t.Errorf("%s: errors %+v, want one at %s", tc.body, p.Errors, tc.path)
			}
		}
	}
}
