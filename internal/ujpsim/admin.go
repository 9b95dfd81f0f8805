package ujpsim

import (
	"bytes"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// CodeUnauthorized is the simulator's own error code (not UJP's) for a
// /_sim request without the control token: 401 with WWW-Authenticate.
const CodeUnauthorized = "SIM401"

// controlRoute is a route of the control API: a ServeMux pattern and its
// handler, before the token check.
type controlRoute struct {
	pattern string
	handler http.HandlerFunc
}

// adminRoutes serve /_sim: the sandbox's control panel. Every route, and
// every other path under /_sim/, requires the control token
// (Options.ControlToken) as a bearer token. Faults never apply to it.
func (s *Sim) adminRoutes(mux *http.ServeMux) {
	for _, r := range s.controlRoutes() {
		mux.HandleFunc(r.pattern, s.requireToken(r.handler))
	}
}

// controlRoutes lists the control API. A path under /_sim/ that none of
// them serves is 404 E4004, with the token.
func (s *Sim) controlRoutes() []controlRoute {
	var routes []controlRoute
	admin := func(pattern string, h http.HandlerFunc) { routes = append(routes, controlRoute{pattern, h}) }
	admin("/_sim/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, &simError{status: http.StatusNotFound, code: "E4004", msg: "No handler found for HTTP method and URL: " + r.Method + " " + r.URL.Path})
	})
	admin("GET /_sim/faults", func(w http.ResponseWriter, r *http.Request) {
		s.writeFaults(w, r)
	})
	admin("PUT /_sim/faults", func(w http.ResponseWriter, r *http.Request) {
		var f faultsWire
		if !readJSON(w, r, &f) {
			return
		}
		if err := s.SetFaults(r.Context(), f.faults()); err != nil {
			s.fail(w, r, s.asSimError("set faults", err))
			return
		}
		s.writeFaults(w, r)
	})
	admin("POST /_sim/users", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			EUJPID string `json:"eujpId"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		if err := s.AddUser(r.Context(), req.EUJPID); err != nil {
			s.fail(w, r, s.asSimError("add user", err))
			return
		}
		s.ok(w, r, map[string]any{"eujpId": req.EUJPID})
	})
	admin("GET /_sim/rate-limited", func(w http.ResponseWriter, r *http.Request) {
		users, err := s.RateLimited(r.Context())
		if err != nil {
			s.fail(w, r, s.asSimError("rate limited", err))
			return
		}
		total := int64(0)
		for _, n := range users {
			total += n
		}
		s.ok(w, r, map[string]any{"total": total, "users": users})
	})
	admin("GET /_sim/users/{eujpId}/privileges", func(w http.ResponseWriter, r *http.Request) {
		ps, err := s.Privileges(r.Context(), r.PathValue("eujpId"))
		if err != nil {
			s.fail(w, r, s.asSimError("privileges", err))
			return
		}
		s.ok(w, r, map[string]any{"privileges": ps})
	})
	for _, grant := range []bool{true, false} {
		path := "POST /_sim/privileges/grant"
		if !grant {
			path = "POST /_sim/privileges/revoke"
		}
		admin(path, func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				EUJPID     string   `json:"eujpId"`
				EDB        string   `json:"edb"`
				Privileges []string `json:"privileges"`
			}
			if !readJSON(w, r, &req) {
				return
			}
			err := s.Grant(r.Context(), req.EUJPID, req.EDB, req.Privileges...)
			if !grant {
				err = s.Revoke(r.Context(), req.EUJPID, req.EDB, req.Privileges...)
			}
			if err != nil {
				s.fail(w, r, s.asSimError("privileges", err))
				return
			}
			ps, err := s.Privileges(r.Context(), req.EUJPID)
			if err != nil {
				s.fail(w, r, s.asSimError("privileges", err))
				return
			}
			s.ok(w, r, map[string]any{"privileges": ps})
		})
	}
	admin("POST /_sim/sellers/{edb}/fail-next", func(w http.ResponseWriter, r *http.Request) {
		var req CallFault
		if !readJSON(w, r, &req) {
			return
		}
		if err := s.FailNextCalls(r.Context(), r.PathValue("edb"), req); err != nil {
			s.fail(w, r, s.asSimError("call fault", err))
			return
		}
		s.writeFaults(w, r)
	})
	admin("POST /_sim/sellers/{edb}/code-lists", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Changed bool `json:"changed"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		if err := s.SetCodeListsChanged(r.Context(), r.PathValue("edb"), req.Changed); err != nil {
			s.fail(w, r, s.asSimError("code lists", err))
			return
		}
		s.writeFaults(w, r)
	})
	admin("POST /_sim/users/{eujpId}/rate-limit-burst", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Count int `json:"count"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		if err := s.BurstRateLimit(r.Context(), r.PathValue("eujpId"), req.Count); err != nil {
			s.fail(w, r, s.asSimError("burst", err))
			return
		}
		s.ok(w, r, map[string]any{"count": req.Count})
	})
	admin("POST /_sim/certificates", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			EUJPID         string `json:"eujpId"`
			EDB            string `json:"edb"`
			CertificateDER string `json:"certificateDer"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		der, err := base64.StdEncoding.DecodeString(req.CertificateDER)
		if err != nil {
			s.fail(w, r, badRequest("eujpId, edb and base64 certificateDer are required"))
			return
		}
		serial, err := s.RegisterCertificate(r.Context(), req.EUJPID, req.EDB, der)
		if err != nil {
			s.fail(w, r, s.asSimError("register certificate", err))
			return
		}
		s.ok(w, r, map[string]any{"serialNumber": serial})
	})
	admin("POST /_sim/companies", func(w http.ResponseWriter, r *http.Request) {
		var c Company
		if !readJSON(w, r, &c) {
			return
		}
		if err := s.AddCompany(r.Context(), c); err != nil {
			s.fail(w, r, s.asSimError("add company", err))
			return
		}
		s.ok(w, r, map[string]any{"company": c})
	})
	admin("GET /_sim/clock", func(w http.ResponseWriter, r *http.Request) {
		s.writeClock(w, r)
	})
	admin("POST /_sim/clock/advance", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Seconds int64 `json:"seconds"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		if req.Seconds < 0 || req.Seconds > 100*366*24*3600 {
			s.fail(w, r, badRequest("the clock only moves forward, by at most a century"))
			return
		}
		if err := s.AdvanceClock(r.Context(), time.Duration(req.Seconds)*time.Second); err != nil {
			s.fail(w, r, s.asSimError("advance clock", err))
			return
		}
		s.writeClock(w, r)
	})
	admin("POST /_sim/clock/skew", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Seconds int64 `json:"seconds"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		if req.Seconds < -86400 || req.Seconds > 86400 {
			s.fail(w, r, badRequest("a clock skew is within a day"))
			return
		}
		if err := s.SetClockSkew(r.Context(), time.Duration(req.Seconds)*time.Second); err != nil {
			s.fail(w, r, s.asSimError("clock skew", err))
			return
		}
		writeJSON(w, 200, map[string]int64{"seconds": req.Seconds})
	})
	admin("GET /_sim/documents/{euid}", func(w http.ResponseWriter, r *http.Request) {
		s.writeDocument(w, r, r.PathValue("euid"))
	})
	admin("POST /_sim/documents/{euid}/decision", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Accept           bool   `json:"accept"`
			RejectReasonCode string `json:"rejectReasonCode"`
			Comment          string `json:"comment"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		euid := r.PathValue("euid")
		if err := s.Decide(r.Context(), euid, req.Accept, req.RejectReasonCode, req.Comment); err != nil {
			s.fail(w, r, s.asSimError("decide", err))
			return
		}
		s.writeDocument(w, r, euid)
	})
	admin("GET /_sim/sellers/{edb}/documents", func(w http.ResponseWriter, r *http.Request) {
		docs, err := s.Documents(r.Context(), r.PathValue("edb"))
		if err != nil {
			s.fail(w, r, s.asSimError("documents", err))
			return
		}
		writeJSON(w, 200, map[string]any{"documents": docs})
	})
	admin("POST /_sim/sellers/{edb}/outage", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			On bool `json:"on"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		if err := s.SetSellerOutage(r.Context(), r.PathValue("edb"), req.On); err != nil {
			s.fail(w, r, s.asSimError("seller outage", err))
			return
		}
		s.writeFaults(w, r)
	})
	admin("POST /_sim/sellers/{edb}/reject-next", func(w http.ResponseWriter, r *http.Request) {
		var req ForcedRejection
		if !readJSON(w, r, &req) {
			return
		}
		if req.Code == "" || req.Count < 1 {
			s.fail(w, r, badRequest("code and a positive count are required"))
			return
		}
		if err := s.RejectNextSellerSends(r.Context(), r.PathValue("edb"), req.Count, req.Code, req.Message); err != nil {
			s.fail(w, r, s.asSimError("seller rejections", err))
			return
		}
		s.writeFaults(w, r)
	})
	admin("POST /_sim/buyers/{edb}/incoming", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			TransactionDate string `json:"transactionDate"`
			IssueDate       string `json:"issueDate"`
			DocID           string `json:"docId"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		d, err := s.DropIncoming(r.Context(), Incoming{BuyerTin: r.PathValue("edb"), TransactionDate: req.TransactionDate,
			IssueDate: req.IssueDate, DocID: req.DocID})
		if err != nil {
			s.fail(w, r, s.asSimError("incoming", err))
			return
		}
		writeJSON(w, 200, d)
	})
	admin("POST /_sim/sellers/{edb}/portal-invoice", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			BuyerTin  string `json:"buyerTin"`
			IssueDate string `json:"issueDate"`
			DocID     string `json:"docId"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		d, err := s.IssuedInPortal(r.Context(), Portal{SellerTin: r.PathValue("edb"), BuyerTin: req.BuyerTin, IssueDate: req.IssueDate, DocID: req.DocID})
		if err != nil {
			s.fail(w, r, s.asSimError("portal invoice", err))
			return
		}
		writeJSON(w, 200, d)
	})
	admin("DELETE /_sim/documents/{euid}", func(w http.ResponseWriter, r *http.Request) {
		euid := r.PathValue("euid")
		if err := s.LoseDocument(r.Context(), euid); err != nil {
			s.fail(w, r, s.asSimError("lose document", err))
			return
		}
		writeJSON(w, 200, map[string]any{"euid": euid, "lost": true})
	})
	admin("POST /_sim/documents/{euid}/seller-storno", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Reason string `json:"reason"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		d, err := s.SellerStorno(r.Context(), r.PathValue("euid"), req.Reason)
		if err != nil {
			s.fail(w, r, s.asSimError("seller storno", err))
			return
		}
		writeJSON(w, 200, d)
	})
	admin("POST /_sim/documents/{euid}/auto-accept", func(w http.ResponseWriter, r *http.Request) {
		euid := r.PathValue("euid")
		if err := s.ForceAutoAccept(r.Context(), euid); err != nil {
			s.fail(w, r, s.asSimError("auto-accept", err))
			return
		}
		s.writeDocument(w, r, euid)
	})
	return routes
}

// requireToken answers 401 unless the request carries the control token.
// The comparison takes the same time whatever the token's first wrong byte.
func (s *Sim) requireToken(h http.HandlerFunc) http.HandlerFunc {
	want := []byte(s.opts.ControlToken)
	return func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if len(want) == 0 || !ok || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ujp-sim"`)
			s.fail(w, r, &simError{status: http.StatusUnauthorized, code: CodeUnauthorized,
				msg: "The simulator's control API requires its token: Authorization: Bearer <DENAR_UJP_SIM_TOKEN>"})
			return
		}
		h(w, r)
	}
}

func (s *Sim) writeFaults(w http.ResponseWriter, r *http.Request) {
	f, err := s.Faults(r.Context())
	if err != nil {
		s.fail(w, r, s.internal("faults", err))
		return
	}
	writeJSON(w, 200, toWire(f))
}

func (s *Sim) writeClock(w http.ResponseWriter, r *http.Request) {
	now, err := s.Now(r.Context())
	if err != nil {
		s.fail(w, r, s.internal("clock", err))
		return
	}
	writeJSON(w, 200, map[string]string{"now": now.UTC().Format(time.RFC3339)})
}

func (s *Sim) writeDocument(w http.ResponseWriter, r *http.Request, euid string) {
	d, err := s.Document(r.Context(), euid)
	if err != nil {
		s.fail(w, r, s.asSimError("document", err))
		return
	}
	writeJSON(w, 200, d)
}

// readJSON decodes a control request's body strictly: JSON text (valid
// UTF-8), no unknown field, nothing after it.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	bad := func(msg string) bool {
		writeJSON(w, 400, map[string]any{"success": false, "errorStatus": ErrorStatus{ErrorCode: "E4000", ErrorMessage: "Bad request: " + msg}})
		return false
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	switch {
	case err != nil:
		return bad(err.Error())
	case !utf8.Valid(raw):
		return bad("the body is not UTF-8 text")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bad(err.Error())
	}
	if dec.More() {
		return bad("data after the JSON value")
	}
	return true
}

// faultsWire is Faults on the control API, with latency in milliseconds.
type faultsWire struct {
	Outage           bool                       `json:"outage"`
	LatencyMs        int64                      `json:"latencyMs"`
	ErrorRate        float64                    `json:"errorRate"`
	RejectSends      *ForcedRejection           `json:"rejectSends,omitempty"`
	OutageSellers    map[string]bool            `json:"outageSellers,omitempty"`
	RejectSellers    map[string]ForcedRejection `json:"rejectSellers,omitempty"`
	CallFaults       map[string]CallFault       `json:"callFaults,omitempty"`
	CodeListsChanged map[string]bool            `json:"codeListsChanged,omitempty"`
}

func (f faultsWire) faults() Faults {
	return Faults{Outage: f.Outage, Latency: time.Duration(f.LatencyMs) * time.Millisecond, ErrorRate: f.ErrorRate, RejectSends: f.RejectSends,
		OutageSellers: f.OutageSellers, RejectSellers: f.RejectSellers, CallFaults: f.CallFaults, CodeListsChanged: f.CodeListsChanged}
}

func toWire(f Faults) faultsWire {
	return faultsWire{Outage: f.Outage, LatencyMs: f.Latency.Milliseconds(), ErrorRate: f.ErrorRate, RejectSends: f.RejectSends,
		OutageSellers: f.OutageSellers, RejectSellers: f.RejectSellers, CallFaults: f.CallFaults, CodeListsChanged: f.CodeListsChanged}
}
