package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
	"github.com/denar-mk/denar/sdk/signer"
)

// TestUsageEndToEnd runs denar serve with the sandbox on one `denar
// ujp-sim` and production on another (DENAR_UJP_PRODUCTION_URL), an
// account on a production plan with a company in each environment: issue,
// an outage that holds a document until its resubmission, and a storno in
// both, and an invoice received in the sandbox company's inbox; GET
// /v1/usage then shows each document once, per environment, with
// billable against the plan in production and 0 in the sandbox. Moving the
// account to a plan without production makes every production call 403
// production_not_enabled. An archive export of the production company is
// downloaded and checked file by file against its manifest, and the
// sandbox company's holds the received invoice byte for byte.
func TestUsageEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, dbURL string) {
		prodDB := storetest.SQLiteURL(t)
		if strings.HasPrefix(dbURL, "postgres") {
			prodDB = storetest.PostgresURL(t)
		}
		prodSim := startSimProcess(t, prodDB)
		// UJP's portal knows the operator's user (production needs it:
		// code lists and registry look-ups go as it).
		const operator = "denar-e2e-operator"
		prodSim.control(t, "/_sim/users", `{"eujpId":"`+operator+`"}`)
		w := newEInvoiceWorld(t, dbURL, "DENAR_UJP_PRODUCTION_URL="+prodSim.url, "DENAR_UJP_USER="+operator)
		env := w.srv.env
		acct := w.account

		// A plan with two documents included; the account moves onto it.
		runAdminCmd(t, env, "plan", "set", "--code", "e2e", "--included", "2", "--extra-price", "10.5", "--production=true")
		runAdminCmd(t, env, "account", "set-plan", "--account", acct, "--plan", "e2e")
		sandboxKey := w.newKey(acct, "sandbox")
		prodKey := w.newKey(acct, "production")

		// Production: a company, an SDK signer whose certificate UJP knows
		// (registered in UJP's portal — here the simulator's), and the
		// documents.
		prod := &prodWorld{t: t, w: w, key: prodKey, sim: prodSim}
		prod.setup()
		first := prod.issue("PROD-1")
		prod.waitStatus(first, "delivered")
		prodSim.control(t, "/_sim/sellers/"+ujpsim.TaxSeller+"/outage", `{"on":true}`)
		held := prod.issue("PROD-HELD")
		prod.waitStatus(held, "held")
		prodSim.control(t, "/_sim/sellers/"+ujpsim.TaxSeller+"/outage", `{"on":false}`)
		prod.waitStatus(held, "delivered")
		r := prod.post("/v1/einvoices/"+first+"/storno", `{"reason":"`+ujpdoc.Snapshot().VoidReasons[0].Code+`"}`)
		if r.status != 202 {
			t.Fatalf("production storno: %d %s", r.status, r.body)
		}
		var storno struct{ ID string }
		_ = json.Unmarshal(r.body, &storno)
		prod.waitStatus(storno.ID, "delivered")
		if n := prodSim.documents(t, ujpsim.TaxSeller)[held]; n != 1 {
			t.Fatalf("UJP holds %d documents for the held one", n)
		}

		// Sandbox: the same story through the simulate endpoint.
		sb1 := w.issue("SB-1")
		w.waitStatus(sb1, "delivered", 20*time.Second)
		sbHeld := w.issue("SB-HELD")
		if r := w.simulate(sbHeld, `{"action":"outage_starts"}`); r.status != 202 {
			t.Fatalf("outage: %d %s", r.status, r.body)
		}
		w.waitStatus(sbHeld, "held", 20*time.Second)
		if r := w.simulate(sbHeld, `{"action":"outage_ends"}`); r.status != 202 {
			t.Fatalf("outage end: %d %s", r.status, r.body)
		}
		w.waitStatus(sbHeld, "delivered", 20*time.Second)
		r = w.post("/v1/einvoices/"+sb1+"/storno", `{"reason":"`+ujpdoc.Snapshot().VoidReasons[0].Code+`"}`)
		if r.status != 202 {
			t.Fatalf("sandbox storno: %d %s", r.status, r.body)
		}
		_ = json.Unmarshal(r.body, &storno)
		w.waitStatus(storno.ID, "delivered", 20*time.Second)

		// Received: an invoice from a fictitious supplier arrives in the
		// sandbox company's inbox, read from UJP's purchase side with the
		// company's signature (twice asked for: it counts once).
		today := time.Now().In(ujpdoc.Skopje).Format(time.DateOnly)
		drop := call(t, "POST", w.srv.einvoice+"/v1/sandbox/inbox", sandboxKey,
			map[string]string{"X-Company-Id": w.company, "Idempotency-Key": "usage-drop"}, `{"transactionDate":"`+today+`"}`)
		var dropped struct{ EUID string }
		if err := json.Unmarshal(drop.body, &dropped); err != nil || drop.status != 202 || dropped.EUID == "" {
			t.Fatalf("sandbox inbox drop: %d %s", drop.status, drop.body)
		}
		inboxDeadline := time.Now().Add(30 * time.Second)
		var inboxID string
		for inboxID == "" {
			r := call(t, "GET", w.srv.einvoice+"/v1/inbox", sandboxKey, map[string]string{"X-Company-Id": w.company}, "")
			var page struct{ Data []struct{ ID, EUID string } }
			_ = json.Unmarshal(r.body, &page)
			for _, d := range page.Data {
				if d.EUID == dropped.EUID {
					inboxID = d.ID
				}
			}
			if inboxID != "" {
				break
			}
			if time.Now().After(inboxDeadline) {
				t.Fatalf("the dropped invoice never reached the inbox: %d %s\n%s", r.status, r.body, tail(w.srv.stderr.String(), 3000))
			}
			time.Sleep(100 * time.Millisecond)
		}

		period := time.Now().In(ujpdoc.Skopje).Format("2006-01")
		usage := func(key, query string) (int, map[string]any) {
			r := call(t, "GET", w.srv.einvoice+"/v1/usage?period="+period+query, key, nil, "")
			var m map[string]any
			_ = json.Unmarshal(r.body, &m)
			return r.status, m
		}
		status, u := usage(prodKey, "")
		want := fmt.Sprintf(`{"byCompany":[{"companyId":%q,"received":0,"sent":3}],"environment":"production","object":"usage","period":%q,`+
			`"plan":{"code":"e2e","currency":"MKD","extraDocumentPrice":"10.50","includedDocuments":2},"totals":{"billable":1,"received":0,"sent":3}}`, prod.company, period)
		if got, _ := json.Marshal(u); status != 200 || string(got) != want {
			t.Fatalf("production usage: %d\n got %s\nwant %s", status, got, want)
		}
		status, u = usage(sandboxKey, "&environment=sandbox")
		want = fmt.Sprintf(`{"byCompany":[{"companyId":%q,"received":1,"sent":3}],"environment":"sandbox","object":"usage","period":%q,`+
			`"plan":{"code":"e2e","currency":"MKD","extraDocumentPrice":"10.50","includedDocuments":2},"totals":{"billable":0,"received":1,"sent":3}}`, w.company, period)
		if got, _ := json.Marshal(u); status != 200 || string(got) != want {
			t.Fatalf("sandbox usage: %d\n got %s\nwant %s", status, got, want)
		}
		if r := call(t, "GET", w.srv.einvoice+"/v1/usage?period="+period, sandboxKey, nil, ""); r.status != 403 || r.code(t) != "environment_mismatch" {
			t.Fatalf("sandbox key on production usage: %d %s", r.status, r.body)
		}
		if r := call(t, "GET", w.srv.einvoice+"/v1/usage?period=2026-13", prodKey, nil, ""); r.status != 422 || !strings.Contains(string(r.body), `"path":"query.period"`) {
			t.Fatalf("bad period: %d %s", r.status, r.body)
		}

		// An archive of the production company's day: three documents,
		// every file as the manifest says.
		r = prod.post("/v1/archive-exports", fmt.Sprintf(`{"companyId":%q,"from":%q,"to":%q}`, prod.company, today, today))
		var arx struct {
			ID, State, Sha256 string
			Counts            struct{ Sent, Received, Files int }
			Size              int64
		}
		if err := json.Unmarshal(r.body, &arx); err != nil || r.status != 202 || arx.State != "pending" || r.header.Get("Location") != "/v1/archive-exports/"+arx.ID {
			t.Fatalf("export: %d %s", r.status, r.body)
		}
		// awaitExport polls the export in arx until it leaves pending.
		awaitExport := func(key string) httpReply {
			t.Helper()
			var r httpReply
			for deadline := time.Now().Add(60 * time.Second); arx.State == "pending"; time.Sleep(200 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("export %s still pending\n%s", arx.ID, tail(w.srv.stderr.String(), 3000))
				}
				r = call(t, "GET", w.srv.einvoice+"/v1/archive-exports/"+arx.ID, key, nil, "")
				_ = json.Unmarshal(r.body, &arx)
			}
			return r
		}
		r = awaitExport(prodKey)
		if arx.State != "ready" || arx.Counts.Sent != 3 || arx.Counts.Received != 0 {
			t.Fatalf("export: %s", r.body)
		}
		r = call(t, "GET", w.srv.einvoice+"/v1/archive-exports/"+arx.ID+"/download", prodKey, nil, "")
		sum := sha256.Sum256(r.body)
		if r.status != 200 || r.header.Get("Content-Type") != "application/zip" || hex.EncodeToString(sum[:]) != arx.Sha256 || int64(len(r.body)) != arx.Size {
			t.Fatalf("download: %d %s, %d bytes", r.status, r.header.Get("Content-Type"), len(r.body))
		}
		files := verifyZip(t, r.body)
		for _, id := range []string{first, held} {
			jws := string(files["sent/"+id+"/signature.jws"])
			parts := strings.Split(jws, ".")
			doc, err := base64.RawURLEncoding.DecodeString(parts[len(parts)/2])
			if len(parts) != 3 || err != nil || !bytes.Equal(doc, files["sent/"+id+"/document.json"]) || !strings.Contains(string(doc), id) {
				t.Fatalf("%s: document.json is not the payload of its JWS", id)
			}
		}

		// The sandbox company's archive holds the received invoice as UJP
		// gave it, byte for byte what GET /v1/inbox/{id}/payload answers.
		r = call(t, "POST", w.srv.einvoice+"/v1/archive-exports", sandboxKey, map[string]string{"Idempotency-Key": "usage-sandbox-archive"},
			fmt.Sprintf(`{"companyId":%q,"from":%q,"to":%q}`, w.company, today, today))
		if err := json.Unmarshal(r.body, &arx); err != nil || r.status != 202 {
			t.Fatalf("sandbox export: %d %s", r.status, r.body)
		}
		r = awaitExport(sandboxKey)
		if arx.State != "ready" || arx.Counts.Sent != 3 || arx.Counts.Received != 1 {
			t.Fatalf("sandbox export: %s", r.body)
		}
		r = call(t, "GET", w.srv.einvoice+"/v1/archive-exports/"+arx.ID+"/download", sandboxKey, nil, "")
		files = verifyZip(t, r.body)
		payload := call(t, "GET", w.srv.einvoice+"/v1/inbox/"+inboxID+"/payload", sandboxKey, map[string]string{"X-Company-Id": w.company}, "")
		if got := files["received/"+inboxID+"/document.json"]; payload.status != 200 || len(got) == 0 || !bytes.Equal(got, payload.body) {
			t.Fatalf("received document in the archive: %d bytes, payload %d %d bytes", len(got), payload.status, len(payload.body))
		}
		if len(files["received/"+inboxID+"/status-history.json"]) == 0 {
			t.Fatal("the received document has no status history in the archive")
		}

		// Off the production plan: every production call is refused.
		runAdminCmd(t, env, "account", "set-plan", "--account", acct, "--plan", "sandbox")
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/v1/usage?period=" + period, ""},
			{"GET", "/v1/archive-exports/" + arx.ID, ""},
			{"POST", "/v1/archive-exports", fmt.Sprintf(`{"companyId":%q,"from":%q,"to":%q}`, prod.company, today, today)},
			{"POST", "/v1/einvoices", invoiceBody("PROD-2", "")},
		} {
			r := call(t, c.method, w.srv.einvoice+c.path, prodKey, map[string]string{"Idempotency-Key": "off-" + c.path, "X-Company-Id": prod.company}, c.body)
			if r.status != 403 || r.code(t) != "production_not_enabled" {
				t.Fatalf("%s %s off plan: %d %s", c.method, c.path, r.status, r.body)
			}
		}
		if status, _ := usage(sandboxKey, "&environment=sandbox"); status != 200 {
			t.Fatalf("sandbox usage off the production plan: %d", status)
		}
		runAdminCmd(t, env, "account", "set-plan", "--account", acct, "--plan", "e2e")
		if status, _ := usage(prodKey, ""); status != 200 {
			t.Fatalf("production usage back on the plan: %d", status)
		}
		w.srv.stop(t)
	})
}

// verifyZip checks a zip against its manifest.json as an auditor would
// and returns its files.
func verifyZip(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name], err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	var m struct {
		Files []struct {
			Path, SHA256 string
			Size         int
		}
	}
	if err := json.Unmarshal(files["manifest.json"], &m); err != nil || len(m.Files) != len(files)-1 {
		t.Fatalf("manifest lists %d of %d files: %v", len(m.Files), len(files)-1, err)
	}
	for _, f := range m.Files {
		sum := sha256.Sum256(files[f.Path])
		if hex.EncodeToString(sum[:]) != f.SHA256 || len(files[f.Path]) != f.Size {
			t.Fatalf("%s does not match the manifest", f.Path)
		}
	}
	return files
}

func (p *simProcess) control(t *testing.T, path, body string) {
	t.Helper()
	if r := call(t, "POST", p.url+path, simToken, nil, body); r.status != 200 {
		t.Fatalf("sim %s: %d %s", path, r.status, r.body)
	}
}

func (w *einvoiceWorld) newKey(acct, env string) string {
	args := []string{"key", "create", "--account", acct, "--service", "einvoice", "--env", env, "--json"}
	for _, s := range []string{"companies:read", "companies:write", "einvoices:read", "einvoices:write", "usage:read", "events:read", "inbox:read", "inbox:write"} {
		args = append(args, "--scope", s)
	}
	var key struct{ Key string }
	if err := json.Unmarshal([]byte(runAdminCmd(w.t, w.srv.env, args...)), &key); err != nil {
		w.t.Fatal(err)
	}
	return key.Key
}

// prodWorld is the production side of a world: a company of the same
// seller, onboarded with a production key, and its own SDK signer.
type prodWorld struct {
	t       *testing.T
	w       *einvoiceWorld
	key     string
	sim     *simProcess
	company string
	n       int
}

func (p *prodWorld) post(path, body string) httpReply {
	p.n++
	return call(p.t, "POST", p.w.srv.einvoice+path, p.key, map[string]string{"Idempotency-Key": fmt.Sprintf("prod-%d-%d", time.Now().UnixNano(), p.n),
		"X-Company-Id": p.company}, body)
}

func (p *prodWorld) setup() {
	t, w := p.t, p.w
	r := p.post("/v1/companies", `{"taxNumber":"`+ujpsim.TaxSeller+`","representative":{"name":"Марија Николовска","email":"marija@example.mk"}}`)
	var co struct{ ID string }
	if err := json.Unmarshal(r.body, &co); err != nil || r.status != 201 {
		t.Fatalf("production company: %d %s", r.status, r.body)
	}
	p.company = co.ID
	db, err := store.Open(t.Context(), w.dbURL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.WriteDB().ExecContext(t.Context(), "UPDATE companies SET status = 'active' WHERE id = $1", p.company); err != nil {
		t.Fatal(err)
	}
	db.Close()
	r = p.post("/v1/agents/pairing-codes", "")
	var pc struct{ Code string }
	if err := json.Unmarshal(r.body, &pc); err != nil || r.status != 201 {
		t.Fatalf("pairing code: %d %s", r.status, r.body)
	}
	creds, err := signer.Pair(t.Context(), http.DefaultClient, w.srv.einvoice, pc.Code, "e2e-production")
	if err != nil {
		t.Fatal(err)
	}
	const eujp = "e2e-production-signer"
	// Production takes no self-signed certificate: the same key, certified
	// by a test authority.
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Тест CA"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageCertSign}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "Тест Продавач ДООЕЛ Скопје"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &w.rsaKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	der := base64.StdEncoding.EncodeToString(leafDER)
	r = call(t, "POST", w.srv.einvoice+"/v1/agents/"+creds.AgentID+"/certificates", "", map[string]string{
		"Authorization": "Agent " + creds.AgentID + "." + creds.Secret, "Idempotency-Key": "prod-cert"},
		fmt.Sprintf(`{"certificateDer":%q,"companyId":%q,"eujpId":%q}`, der, p.company, eujp))
	if r.status != 201 {
		t.Fatalf("production certificate: %d %s", r.status, r.body)
	}
	// UJP's portal: the certificate registered for its user.
	p.sim.control(t, "/_sim/certificates", fmt.Sprintf(`{"eujpId":%q,"edb":%q,"certificateDer":%q}`, eujp, ujpsim.TaxSeller, der))
	ctx, cancel := context.WithCancel(context.Background())
	worker := &signer.Worker{Creds: creds, Signer: w.rsaKey, Wait: 1, HTTP: &http.Client{Timeout: 10 * time.Second}}
	done := make(chan struct{})
	go func() { defer close(done); _ = worker.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func (p *prodWorld) issue(number string) string {
	p.t.Helper()
	r := p.post("/v1/einvoices", invoiceBody(number, ""))
	var m struct{ ID string }
	if err := json.Unmarshal(r.body, &m); err != nil || r.status != 202 {
		p.t.Fatalf("issue %s: %d %s", number, r.status, r.body)
	}
	return m.ID
}

func (p *prodWorld) waitStatus(id, want string) {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := call(p.t, "GET", p.w.srv.einvoice+"/v1/einvoices/"+id, p.key, map[string]string{"X-Company-Id": p.company}, "")
		var m struct{ Status string }
		_ = json.Unmarshal(r.body, &m)
		if m.Status == want {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("production %s: %s, want %s\n%s", id, r.body, want, tail(p.w.srv.stderr.String(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
