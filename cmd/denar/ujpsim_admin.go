package main

import (
	"context"
	"encoding/pem"

	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/denar-mk/denar/internal/cli"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// The operator's commands of the simulator: what UJP's portal does out of
// band (users, certificates, privileges), acting on the simulator's store,
// so a running `denar ujp-sim` on the same store sees them at once.
const ujpSimAdminUsage = `Usage:
  denar ujp-sim user add [-db URL] EUJP-ID
  denar ujp-sim certificate add [-db URL] [-serial-format decimal|hex] -eujp-id ID -edb EDB -cert FILE.pem
  denar ujp-sim grant [-db URL] -eujp-id ID -edb EDB PRIVILEGE...
  denar ujp-sim revoke [-db URL] -eujp-id ID -edb EDB PRIVILEGE...
  denar ujp-sim privileges [-db URL] EUJP-ID

Registers users, signing certificates and portal privileges (DP: PDFs,
RD: document payloads, DA: ASiC containers) at the UJP simulator, as UJP's
portal does. -db is the simulator's store (the default is denar ujp-sim's).
See docs/sandbox.md.
`

// ujpSimAdmin runs an operator command; ok is false when args name none
// (the server runs).
func ujpSimAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) (bool, error) {
	if len(args) == 0 {
		return false, nil
	}
	var cmd string
	switch {
	case len(args) >= 2 && args[0] == "user" && args[1] == "add":
		cmd, args = "user add", args[2:]
	case len(args) >= 2 && args[0] == "certificate" && args[1] == "add":
		cmd, args = "certificate add", args[2:]
	case args[0] == "grant" || args[0] == "revoke" || args[0] == "privileges":
		cmd, args = args[0], args[1:]
	default:
		return false, nil
	}
	fs := flag.NewFlagSet("denar ujp-sim "+cmd, flag.ContinueOnError)
	dataDir := os.Getenv("DENAR_DATA_DIR")
	if dataDir == "" {
		dataDir = "./denar-data"
	}
	dbURL := fs.String("db", "sqlite://"+filepath.Join(dataDir, "ujp-sim.db"), "the simulator's store")
	eujpID := fs.String("eujp-id", "", "the user's EUJP id")
	edb := fs.String("edb", "", "the company's tax number (ЕДБ)")
	certFile := fs.String("cert", "", "the signing certificate, PEM or DER")
	serialFormat := fs.String("serial-format", ujpsim.SerialDecimal, "how the serial number is printed: decimal or hex")
	minArgs, maxArgs := 0, 0
	switch cmd {
	case "user add", "privileges":
		minArgs, maxArgs = 1, 1
	case "grant", "revoke":
		minArgs, maxArgs = 1, 3
	}
	if err := cli.Parse(fs, args, minArgs, maxArgs, ujpSimAdminUsage, stdout, stderr); err != nil {
		return true, err
	}
	db, err := store.Open(ctx, *dbURL)
	if err != nil {
		return true, fmt.Errorf("ujp-sim: %w", err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return true, fmt.Errorf("ujp-sim: %w", err)
	}
	sim, err := ujpsim.New(db, ujpsim.Options{SerialFormat: *serialFormat, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return true, err
	}
	switch cmd {
	case "user add":
		if err := sim.AddUser(ctx, fs.Arg(0)); err != nil {
			return true, err
		}
		fmt.Fprintf(stdout, "user %s registered\n", fs.Arg(0))
	case "certificate add":
		if *eujpID == "" || *edb == "" || *certFile == "" {
			return true, cli.Fail(stderr, ujpSimAdminUsage, fs, "certificate add needs -eujp-id, -edb and -cert")
		}
		raw, err := os.ReadFile(*certFile)
		if err != nil {
			return true, err
		}
		der := raw
		if b, _ := pem.Decode(raw); b != nil {
			if b.Type != "CERTIFICATE" {
				return true, fmt.Errorf("%s: a PEM %s, not a CERTIFICATE", *certFile, b.Type)
			}
			der = b.Bytes
		}
		serial, err := sim.RegisterCertificate(ctx, *eujpID, *edb, der)
		if err != nil {
			return true, err
		}
		fmt.Fprintf(stdout, "certificate registered for user %s of %s; X-SERIAL-NUMBER: %s\n", *eujpID, *edb, serial)
	case "grant", "revoke":
		if *eujpID == "" || *edb == "" {
			return true, cli.Fail(stderr, ujpSimAdminUsage, fs, cmd+" needs -eujp-id and -edb")
		}
		op := sim.Grant
		if cmd == "revoke" {
			op = sim.Revoke
		}
		if err := op(ctx, *eujpID, *edb, fs.Args()...); err != nil {
			return true, err
		}
		fallthrough
	case "privileges":
		who := *eujpID
		if cmd == "privileges" {
			who = fs.Arg(0)
		}
		ps, err := sim.Privileges(ctx, who)
		if err != nil {
			return true, err
		}
		if len(ps) == 0 {
			fmt.Fprintf(stdout, "user %s has no privileges\n", who)
		}
		for _, p := range ps {
			fmt.Fprintln(stdout, p)
		}
	}
	return true, nil
}
