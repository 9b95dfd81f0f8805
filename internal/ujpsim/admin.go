package ujpsim

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/denar-mk/denar/internal/ujp"
)

// adminRoutes serve /_sim: the sandbox's control panel. It has no
// authentication; it is for a sandbox reachable only by the service and its
// tests. Faults never apply to it.
func (s *Sim) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /_sim/faults", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, toWire(s.Faults())) })
	mux.HandleFunc("PUT /_sim/faults", func(w http.ResponseWriter, r *http.Request) {
		var f faultsWire
		if !readJSON(w, r, &f) {
			return
		}
		s.SetFaults(f.faults())
		writeJSON(w, 200, toWire(s.Faults()))
	})
	mux.HandleFunc("POST "+ujp.PathSandboxCertificates, func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			EUJPID         string `json:"eujpId"`
			EDB            string `json:"edb"`
			CertificateDER string `json:"certificateDer"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		der, err := base64.StdEncoding.DecodeString(req.CertificateDER)
		if err != nil || req.EUJPID == "" || req.EDB == "" {
			s.fail(w, &simError{status: 400, code: "E4000", msg: "Bad request: eujpId, edb and base64 certificateDer are required"})
			return
		}
		serial, err := s.RegisterCertificate(req.EUJPID, req.EDB, der)
		if err != nil {
			s.fail(w, &simError{status: 400, code: "E5004", msg: "Certificate validation failed: " + err.Error()})
			return
		}
		s.ok(w, map[string]any{"serialNumber": serial})
	})
	mux.HandleFunc("POST /_sim/companies", func(w http.ResponseWriter, r *http.Request) {
		var c ujp.Company
		if !readJSON(w, r, &c) {
			return
		}
		if c.TaxNumber == "" || c.Name == "" {
			s.fail(w, &simError{status: 400, code: "E4000", msg: "Bad request: taxNumber and name are required"})
			return
		}
		s.AddCompany(c)
		s.ok(w, map[string]any{"company": c})
	})
	mux.HandleFunc("GET /_sim/clock", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"now": s.Now().UTC().Format(time.RFC3339)})
	})
	mux.HandleFunc("POST /_sim/clock/advance", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Seconds int64 `json:"seconds"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		if req.Seconds < 0 {
			s.fail(w, &simError{status: 400, code: "E4000", msg: "the clock only moves forward"})
			return
		}
		s.AdvanceClock(time.Duration(req.Seconds) * time.Second)
		writeJSON(w, 200, map[string]string{"now": s.Now().UTC().Format(time.RFC3339)})
	})
	mux.HandleFunc("GET /_sim/documents/{euid}", func(w http.ResponseWriter, r *http.Request) {
		d, ok := s.Document(r.PathValue("euid"))
		if !ok {
			s.fail(w, &simError{status: 404, code: "E4008", msg: "The requested resource could not be found"})
			return
		}
		writeJSON(w, 200, d)
	})
	mux.HandleFunc("POST /_sim/documents/{euid}/decision", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Accept           bool   `json:"accept"`
			RejectReasonCode string `json:"rejectReasonCode"`
			Comment          string `json:"comment"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		s.adminResult(w, r.PathValue("euid"), s.Decide(r.PathValue("euid"), req.Accept, req.RejectReasonCode, req.Comment))
	})
	mux.HandleFunc("GET /_sim/sellers/{edb}/documents", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"documents": s.Documents(r.PathValue("edb"))})
	})
	mux.HandleFunc("POST /_sim/sellers/{edb}/outage", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			On bool `json:"on"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		s.SetSellerOutage(r.PathValue("edb"), req.On)
		writeJSON(w, 200, toWire(s.Faults()))
	})
	mux.HandleFunc("POST /_sim/sellers/{edb}/reject-next", func(w http.ResponseWriter, r *http.Request) {
		var req ForcedRejection
		if !readJSON(w, r, &req) {
			return
		}
		if req.Code == "" || req.Count < 1 {
			s.fail(w, &simError{status: 400, code: "E4000", msg: "Bad request: code and a positive count are required"})
			return
		}
		s.RejectNextSellerSends(r.PathValue("edb"), req.Count, req.Code, req.Message)
		writeJSON(w, 200, toWire(s.Faults()))
	})
	mux.HandleFunc("POST /_sim/documents/{euid}/auto-accept", func(w http.ResponseWriter, r *http.Request) {
		s.adminResult(w, r.PathValue("euid"), s.ForceAutoAccept(r.PathValue("euid")))
	})
}

func (s *Sim) adminResult(w http.ResponseWriter, euid string, err error) {
	var se *simError
	if errors.As(err, &se) {
		s.fail(w, se)
		return
	}
	d, _ := s.Document(euid)
	writeJSON(w, 200, d)
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeJSON(w, 400, map[string]any{"success": false, "errorStatus": ujp.ErrorStatus{ErrorCode: "E4000", ErrorMessage: "Bad request: " + err.Error()}})
		return false
	}
	return true
}

// faultsWire is Faults on the admin API, with latency in milliseconds.
type faultsWire struct {
	Outage        bool                       `json:"outage"`
	LatencyMs     int64                      `json:"latencyMs"`
	ErrorRate     float64                    `json:"errorRate"`
	RateLimit     bool                       `json:"rateLimit"`
	RejectSends   *ForcedRejection           `json:"rejectSends,omitempty"`
	OutageSellers map[string]bool            `json:"outageSellers,omitempty"`
	RejectSellers map[string]ForcedRejection `json:"rejectSellers,omitempty"`
}

func (f faultsWire) faults() Faults {
	return Faults{Outage: f.Outage, Latency: time.Duration(f.LatencyMs) * time.Millisecond, ErrorRate: f.ErrorRate, RateLimit: f.RateLimit, RejectSends: f.RejectSends,
		OutageSellers: f.OutageSellers, RejectSellers: f.RejectSellers}
}

func toWire(f Faults) faultsWire {
	return faultsWire{Outage: f.Outage, LatencyMs: f.Latency.Milliseconds(), ErrorRate: f.ErrorRate, RateLimit: f.RateLimit, RejectSends: f.RejectSends,
		OutageSellers: f.OutageSellers, RejectSellers: f.RejectSellers}
}
