package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
	"github.com/denar-mk/denar/internal/ujpturns"
)

// TestUJPSimCommand starts `denar ujp-sim` as its own process on its own
// store, on both engines, and speaks to it with the gateway's HTTP client,
// as `denar serve` does with DENAR_UJP_SANDBOX_BACKEND=ujp-sim: the
// registry answers, /_sim refuses requests without the control token, a
// document sent before a restart is there after it (and its docId is still
// taken), and the retention job is scheduled in the simulator's store.
func TestUJPSimCommand(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, dbURL string) {
		ctx := context.Background()
		p := startSimProcess(t, dbURL)
		// The client takes its turns as denar serve's: the simulator
		// holds every user to one call per window.
		turns := ujpturns.New(storetest.SQLite(t), ujpturns.Config{Interval: e2eWindow})
		client, err := ujp.NewClient(ujp.Config{BaseURL: p.url, Timeout: 30 * time.Second, Turns: turns})
		if err != nil {
			t.Fatal(err)
		}
		caller := ujp.Identity{EUJPID: "test", EDB: ujpsim.TaxSeller}
		company, err := client.Company(ctx, caller, ujpsim.TaxBuyer)
		if err != nil {
			t.Fatalf("registry look-up against denar ujp-sim: %v\n%s", err, p.out.String())
		}
		if company.TaxNumber != ujpsim.TaxBuyer || company.Name == "" {
			t.Fatalf("registry answered %+v", company)
		}
		if _, err := client.Company(ctx, caller, ujpsim.TaxNeverExisted); !ujp.IsNotFound(err) {
			t.Fatalf("never-registered tax number: %v, want UJP's not-found", err)
		}
		for _, tok := range []string{"", "not-the-token-at-all"} {
			if r := call(t, "GET", p.url+"/_sim/faults", tok, nil, ""); r.status != 401 || !strings.Contains(string(r.body), ujpsim.CodeUnauthorized) {
				t.Fatalf("/_sim with token %q: %d %s", tok, r.status, r.body)
			}
		}

		s, err := ujpsim.NewSandboxSigner("EUJP-CMD", ujpsim.TaxSeller)
		if err != nil {
			t.Fatal(err)
		}
		// Out of band, as UJP's portal: the control API (what denar
		// serve's sandbox set-up uses with this backend).
		ctl := ujpsim.Control{BaseURL: p.url, Token: simToken}
		if _, err := ctl.RegisterCertificate(ctx, s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
			t.Fatal(err)
		}
		res, err := client.Send(ctx, s.Identity(), "100", signedDoc(t, s, "cmd-1"))
		if err != nil {
			t.Fatal(err)
		}

		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("ujp-sim did not stop cleanly: %v\n%s", err, p.out.String())
		}
		p = startSimProcess(t, dbURL)
		client, _ = ujp.NewClient(ujp.Config{BaseURL: p.url, Timeout: 30 * time.Second, Turns: turns})
		r := call(t, "GET", p.url+"/_sim/documents/"+res.EUID, simToken, nil, "")
		var d ujpsim.Document
		if err := json.Unmarshal(r.body, &d); r.status != 200 || err != nil || d.DocID != "cmd-1" || d.Status != ujp.StatusSent {
			t.Fatalf("document after the restart: %d %s", r.status, r.body)
		}
		if _, err := client.Send(ctx, s.Identity(), "100", signedDoc(t, s, "cmd-1")); !ujp.IsDuplicate(err) {
			t.Fatalf("the docId after the restart: %v, want E1023", err)
		}
		db, err := store.Open(ctx, dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		purges, err := db.Reader().ListJobsByKind(ctx, ujpsim.KindPurge)
		if err != nil {
			t.Fatal(err)
		}
		scheduled, ran := 0, 0
		for _, j := range purges {
			switch j.State {
			case "available":
				scheduled++
			case "completed":
				ran++
			default:
				t.Errorf("retention job %d is %s: %s", j.ID, j.State, j.LastError)
			}
		}
		if scheduled != 1 || ran < 1 {
			t.Fatalf("retention jobs in the simulator's store: %d scheduled, %d run; want 1 and at least 1", scheduled, ran)
		}
	})
}

// TestUJPSimCommandRequiresToken: without DENAR_UJP_SIM_TOKEN the simulator
// does not start (its control API would be open to anyone reaching it).
func TestUJPSimCommandRequiresToken(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(denarBin, "ujp-sim", "-addr", freeAddr(t), "-db", storetest.SQLiteURL(t))
	for _, kv := range simEnv(t) {
		if !strings.HasPrefix(kv, "DENAR_UJP_SIM_TOKEN=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(out.String(), "DENAR_UJP_SIM_TOKEN") {
			t.Fatalf("ujp-sim without a token: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("ujp-sim without a token is still running\n%s", out.String())
	}
}

// signedDoc is a valid invoice from the sandbox seller to the sandbox
// buyer, signed by s.
func signedDoc(t *testing.T, s *ujpsim.SandboxSigner, docID string) string {
	t.Helper()
	today := time.Now().In(ujpdoc.Skopje).Format(time.DateOnly)
	d := ujpdoc.Document{
		Header: ujpdoc.Header{DocType: "100", DocTypeName: "Фактура", DocDate: today, DocTurnoverDate: today, DocNumber: "F-" + docID, DocID: docID},
		Seller: ujpdoc.Seller{SellerCCode: "MK", SellerCName: "Северна Македонија", SellerTin: ujpsim.TaxSeller, SellerName: "Тест Продавач ДООЕЛ Скопје",
			SellerAddress: ujpdoc.Address{StreetAddress: "бул. Партизански одреди", StreetNumber: "1", PostalCode: "1000", City: "Скопје"}},
		Buyer: ujpdoc.Buyer{BuyerCCode: "MK", BuyerCName: "Северна Македонија", BuyerTin: ujpsim.TaxBuyer, BuyerName: "Тест Купувач ДОО Скопје",
			BuyerAddress: ujpdoc.Address{StreetAddress: "ул. Македонија", StreetNumber: "2", PostalCode: "1000", City: "Скопје"}},
		DocPayment: ujpdoc.Payment{DocPaymentTypeCode: "P10", DocPaymentTypeDesc: "Плаќање во готово", DocCurrency: "MKD", DocCurrencyCode: "MKD"},
		DocItems: []ujpdoc.Item{{DocItemLineNo: 1, DocItemDesc: "Леб", DocItemQty: ujpdoc.A("10"), DocItemUnitOriginalPriceWoVat: ujpdoc.A("40"),
			DocItemVatGroup: "DDV-B", DocItemTaxIndicator: "DDV-B"}},
	}
	if err := ujpdoc.ComputeTotals(&d, ujpdoc.Snapshot()); err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(ujpdoc.Request{RequestTimestamp: ujpdoc.FormatTimestamp(time.Now()), Document: d})
	if err != nil {
		t.Fatal(err)
	}
	return jws
}
