package payrollapi_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/denar-mk/denar/internal/payrollapi"
)

// TestExamplesAnswered: the reference's example of every request body is
// sent to the service, which answers with the reference's example of the
// response, byte for byte for the files and value for value for JSON. The
// examples are therefore real: what a caller who copies them gets.
func TestExamplesAnswered(t *testing.T) {
	t.Parallel()
	e := setup(t)
	doc, err := payrollapi.New(payrollapi.Deps{Log: slog.New(slog.DiscardHandler)}).OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct {
					Example any `json:"example"`
					Schema  struct {
						Ref string `json:"$ref"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
			Responses map[string]struct {
				Content map[string]struct {
					Example any `json:"example"`
					Schema  struct {
						Ref string `json:"$ref"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Examples []any `json:"examples"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	example := func(ex any, ref string) any {
		if ex != nil {
			return ex
		}
		if s := d.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]; len(s.Examples) > 0 {
			return s.Examples[0]
		}
		return nil
	}
	sent := 0
	for path, ops := range d.Paths {
		op, ok := ops["post"]
		if !ok {
			continue
		}
		mt := op.RequestBody.Content["application/json"]
		req := example(mt.Example, mt.Schema.Ref)
		if req == nil {
			t.Errorf("POST %s: no request example", path)
			continue
		}
		body, _ := json.Marshal(req)
		status, _, got := e.post(t, path, string(body))
		if status != http.StatusOK {
			t.Errorf("POST %s with its example: %d %s", path, status, got)
			continue
		}
		sent++
		for media, rt := range op.Responses["200"].Content {
			want := example(rt.Example, rt.Schema.Ref)
			switch media {
			case "application/json":
				var g any
				if err := json.Unmarshal(got, &g); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(g, want) {
					w, _ := json.Marshal(want)
					t.Errorf("POST %s answers\n%s\nthe reference shows\n%s", path, got, w)
				}
			case "text/plain":
				if text := decodeUTF16(got); text != want {
					t.Errorf("POST %s answers\n%q\nthe reference shows\n%q", path, text, want)
				}
			default:
				if string(got) != want {
					t.Errorf("POST %s answers\n%s\nthe reference shows\n%s", path, got, want)
				}
			}
		}
	}
	if sent < 9 {
		t.Errorf("%d operations answered their example", sent)
	}
	// The rates of the example's date.
	req, _ := http.NewRequest(http.MethodGet, e.url+"/v1/rates?date=2026-05-31", nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var g any
	_ = json.Unmarshal(got, &g)
	if want := example(nil, "RatesOutputBody"); !reflect.DeepEqual(g, want) {
		t.Errorf("GET /v1/rates?date=2026-05-31 answers %s, the reference shows %v", got, want)
	}
}

func decodeUTF16(b []byte) string {
	if len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE {
		b = b[2:]
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	return string(utf16.Decode(u))
}
