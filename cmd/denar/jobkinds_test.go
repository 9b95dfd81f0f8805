package main

import (
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/caarlos0/env/v11"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestJobKinds: the kinds of job denar serve registers (registerJobs, the
// one place) are those testdata/job-kinds.txt lists, runner by runner. A
// kind added, renamed or dropped shows there as a reviewed diff (-update).
func TestJobKinds(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	cfg := packageDefaults()
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: map[string]string{
		"DENAR_DATA_DIR": t.TempDir(), "DENAR_UJP_SIM_TOKEN": strings.Repeat("t", minSimToken)}}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	reg, err := newRegistry(cfg, log, db)
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blobStore(t.Context(), cfg, db)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := auth.NewSecretBox(mustSecretKey(t))
	if err != nil {
		t.Fatal(err)
	}
	_, _, app := services(db, cfg, log, &reg, blobs, secrets)
	runner, hooks := jobs.NewRunner(db, jobs.Config{Logger: log}), jobs.NewRunner(db, jobs.Config{Logger: log})
	if err := registerJobs(t.Context(), runner, hooks, db, cfg, log, &reg, app, secrets); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("# The kinds of job denar serve runs (embedded sandbox simulator), by runner.\n# main runner\n")
	for _, k := range runner.Kinds() {
		b.WriteString(k + "\n")
	}
	b.WriteString("# webhook runner\n")
	for _, k := range hooks.Kinds() {
		b.WriteString(k + "\n")
	}
	const golden = "testdata/job-kinds.txt"
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if b.String() != string(want) {
		t.Errorf("the registered kinds differ from %s (run with -update and review):\n%s", golden, b.String())
	}
}
