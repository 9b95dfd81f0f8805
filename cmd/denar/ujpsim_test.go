package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// TestUJPSimCommand starts `denar ujp-sim` as its own process on its own
// store, on both engines, and speaks UJP's API to it over HTTP, as a
// gateway does: users and certificates exist only once registered out of
// band (the control API here), the registry answers a registered user,
// /_sim refuses requests without the control token, a document sent before
// a restart is there after it (and its docId is still taken: E1023), and
// the retention job is scheduled in the simulator's store.
func TestUJPSimCommand(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, dbURL string) {
		ctx := context.Background()
		p := startSimProcess(t, dbURL)
		ctl := ujpsim.Control{BaseURL: p.url, Token: simToken}
		// One user per call that could meet another's rate window (one
		// request per second per user, always on).
		lookup := func(user, tax string) httpReply {
			return call(t, "GET", p.url+"/einvoice_api/api/v1/companies/"+tax, "", map[string]string{"X-EUJP-ID": user, "X-EDB": ujpsim.TaxSeller}, "")
		}
		if r := lookup("NOBODY", ujpsim.TaxBuyer); r.status != 401 || !strings.Contains(string(r.body), "E1010") {
			t.Fatalf("a user never registered: %d %s\n%s", r.status, r.body, p.out.String())
		}
		for _, u := range []string{"OPERATOR-1", "OPERATOR-2"} {
			if err := ctl.AddUser(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		r := lookup("OPERATOR-1", ujpsim.TaxBuyer)
		var company struct {
			Company ujpsim.Company `json:"company"`
		}
		if err := json.Unmarshal(r.body, &company); r.status != 200 || err != nil || company.Company.TaxNumber != ujpsim.TaxBuyer || company.Company.Name == "" {
			t.Fatalf("registry look-up against denar ujp-sim: %d %s\n%s", r.status, r.body, p.out.String())
		}
		if r := lookup("OPERATOR-2", ujpsim.TaxNeverExisted); r.status != 404 || !strings.Contains(string(r.body), "E1000") {
			t.Fatalf("never-registered tax number: %d %s", r.status, r.body)
		}
		for _, tok := range []string{"", "not-the-token-at-all"} {
			if r := call(t, "GET", p.url+"/_sim/faults", tok, nil, ""); r.status != 401 || !strings.Contains(string(r.body), ujpsim.CodeUnauthorized) {
				t.Fatalf("/_sim with token %q: %d %s", tok, r.status, r.body)
			}
		}

		var signers []*ujpsim.SandboxSigner
		for _, id := range []string{"EUJP-CMD-1", "EUJP-CMD-2"} {
			s, err := ujpsim.NewSandboxSigner(id, ujpsim.TaxSeller)
			if err != nil {
				t.Fatal(err)
			}
			serial, err := ctl.RegisterCertificate(ctx, s.EUJPID, s.EDB, s.Cert.Raw)
			if err != nil || serial != s.Serial() {
				t.Fatalf("register %s: %q %v", id, serial, err)
			}
			signers = append(signers, s)
		}
		res := sendSigned(t, p.url, signers[0], "cmd-1")
		euid, _ := res.m["euid"].(string)
		if res.status != 200 || euid == "" {
			t.Fatalf("send: %d %s", res.status, res.body)
		}

		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("ujp-sim did not stop cleanly: %v\n%s", err, p.out.String())
		}
		p = startSimProcess(t, dbURL)
		r = call(t, "GET", p.url+"/_sim/documents/"+euid, simToken, nil, "")
		var d ujpsim.Document
		if err := json.Unmarshal(r.body, &d); r.status != 200 || err != nil || d.DocID != "cmd-1" || d.Status != "01" {
			t.Fatalf("document after the restart: %d %s", r.status, r.body)
		}
		// Another user of the seller: the certificate registered before the
		// restart verifies, and the docId is taken.
		if again := sendSigned(t, p.url, signers[1], "cmd-1"); again.status != 409 || !strings.Contains(string(again.body), "E1023") ||
			strings.Contains(string(again.body), euid) {
			t.Fatalf("the docId after the restart: %d %s, want E1023 without the EUID", again.status, again.body)
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

type simReply struct {
	status int
	body   []byte
	m      map[string]any
}

// sendSigned sends the simulator's own valid example invoice (from the
// sandbox seller to the sandbox buyer, dated today) with docID, signed by
// s, to the JSON Receiver at base.
func sendSigned(t *testing.T, base string, s *ujpsim.SandboxSigner, docID string) simReply {
	t.Helper()
	b, err := os.ReadFile("../../internal/ujpsim/testdata/documents/valid/type-100.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	skopje, err := time.LoadLocation("Europe/Skopje")
	if err != nil {
		t.Fatal(err)
	}
	today := time.Now().In(skopje).Format(time.DateOnly)
	h := doc["document"].(map[string]any)["header"].(map[string]any)
	h["docId"], h["docDate"], h["docTurnoverDate"] = docID, today, today
	ts := ujpsim.FormatTimestamp(time.Now())
	doc["requestTimestamp"] = ts
	jws, err := s.Sign(doc)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"requestTimestamp": ts, "jws": jws})
	r := call(t, "POST", base+ujpsim.PathSend, "", map[string]string{"X-EUJP-ID": s.EUJPID, "X-EDB": s.EDB,
		"X-SERIAL-NUMBER": s.Serial(), "X-DOC-TYPE-CODE": "100", "Content-Type": "application/json"}, string(body))
	out := simReply{status: r.status, body: r.body}
	_ = json.Unmarshal(r.body, &out.m)
	return out
}

// TestUJPSimOperatorCommands: `denar ujp-sim user add`, `certificate add`,
// `grant`, `revoke` and `privileges` act on the simulator's store, on both
// engines, as UJP's portal does out of band; a bad privilege or a user
// never registered is refused.
func TestUJPSimOperatorCommands(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, dbURL string) {
		run := func(args ...string) (string, error) {
			cmd := exec.Command(denarBin, append([]string{"ujp-sim"}, args...)...)
			cmd.Env = simEnv(t)
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		s, err := ujpsim.NewSandboxSigner("EUJP-OPERATOR", ujpsim.TaxSeller)
		if err != nil {
			t.Fatal(err)
		}
		pemFile := t.TempDir() + "/cert.pem"
		if err := os.WriteFile(pemFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Cert.Raw}), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := run("user", "add", "-db", dbURL, "OPERATOR-1"); err != nil || !strings.Contains(out, "OPERATOR-1") {
			t.Fatalf("user add: %v\n%s", err, out)
		}
		out, err := run("certificate", "add", "-db", dbURL, "-eujp-id", s.EUJPID, "-edb", s.EDB, "-cert", pemFile)
		if err != nil || !strings.Contains(out, s.Serial()) {
			t.Fatalf("certificate add: %v\n%s", err, out)
		}
		if out, err := run("certificate", "add", "-db", dbURL, "-serial-format", "hex", "-eujp-id", s.EUJPID, "-edb", s.EDB, "-cert", pemFile); err != nil ||
			!strings.Contains(out, strings.ToUpper(s.Cert.SerialNumber.Text(16))) {
			t.Fatalf("certificate add, hex: %v\n%s", err, out)
		}
		if out, err := run("grant", "-db", dbURL, "-eujp-id", s.EUJPID, "-edb", s.EDB, "DP", "RD", "DA"); err != nil || !strings.Contains(out, s.EDB+":RD") {
			t.Fatalf("grant: %v\n%s", err, out)
		}
		if out, err := run("revoke", "-db", dbURL, "-eujp-id", s.EUJPID, "-edb", s.EDB, "RD"); err != nil || strings.Contains(out, ":RD") {
			t.Fatalf("revoke: %v\n%s", err, out)
		}
		if out, err := run("grant", "-db", dbURL, "-eujp-id", s.EUJPID, "-edb", s.EDB, "XX"); err == nil {
			t.Fatalf("an unknown privilege: %s", out)
		}
		if out, err := run("grant", "-db", dbURL, "-eujp-id", "NOBODY", "-edb", s.EDB, "DP"); err == nil || !strings.Contains(out, "E1010") {
			t.Fatalf("a user never registered: %v\n%s", err, out)
		}
		// An ЕДБ whose 13th digit is not its check digit, wherever one is
		// taken.
		for _, args := range [][]string{
			{"certificate", "add", "-db", dbURL, "-eujp-id", s.EUJPID, "-edb", "4030000000002", "-cert", pemFile},
			{"grant", "-db", dbURL, "-eujp-id", s.EUJPID, "-edb", "4030000000002", "DP"},
			{"revoke", "-db", dbURL, "-eujp-id", s.EUJPID, "-edb", "4030000000002", "DP"},
		} {
			if out, err := run(args...); err == nil || !strings.Contains(out, "check digit") {
				t.Errorf("%s with ЕДБ 4030000000002: %v\n%s", strings.Join(args[:2], " "), err, out)
			}
		}
		db, err := store.Open(context.Background(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		sim, err := ujpsim.New(db, ujpsim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ps, err := sim.Privileges(context.Background(), s.EUJPID)
		if err != nil || strings.Join(ps, ",") != s.EDB+":DA,"+s.EDB+":DP" {
			t.Fatalf("privileges in the store: %v %v", ps, err)
		}
	})
}
