package main

import (
	"bytes"
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// TestUJPSimCommand starts `denar ujp-sim` as its own process and speaks to
// it with the gateway's HTTP client, as `denar serve` does when
// DENAR_UJP_SANDBOX_URL points at it.
func TestUJPSimCommand(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	cmd := exec.Command(denarBin, "ujp-sim", "-addr", addr, "-state", t.TempDir()+"/sim.json")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	client, err := ujp.NewClient(ujp.Config{BaseURL: "http://" + addr, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	caller := ujp.Identity{EUJPID: "test", EDB: ujpsim.TaxSeller}
	var company *ujp.Company
	deadline := time.Now().Add(20 * time.Second)
	for {
		company, err = client.Company(ctx, caller, ujpsim.TaxBuyer)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("registry look-up against denar ujp-sim: %v\n%s", err, out.String())
	}
	if company.TaxNumber != ujpsim.TaxBuyer || company.Name == "" {
		t.Fatalf("registry answered %+v", company)
	}
	if _, err := client.Company(ctx, caller, ujpsim.TaxNeverExisted); !ujp.IsNotFound(err) {
		t.Fatalf("never-registered tax number: %v, want UJP's not-found", err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ujp-sim did not stop cleanly: %v\n%s", err, out.String())
	}
}
