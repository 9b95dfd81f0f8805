package main

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSandboxBackendConfig: the sandbox's UJP is named explicitly, and the
// combinations that would silently do something else are refused with one
// line naming the variable.
func TestSandboxBackendConfig(t *testing.T) {
	token := strings.Repeat("t", minSimToken)
	base := Config{UJPSandboxBackend: backendEmbedded, UJPSimRetention: 90 * 24 * time.Hour, UJPSimWindow: time.Second, UJPSignerInterval: time.Second}
	for _, tc := range []struct {
		name    string
		change  func(*Config)
		wantErr string // "" for a valid configuration
	}{
		{"embedded is the default", func(*Config) {}, ""},
		{"embedded with a URL", func(c *Config) { c.UJPSandboxURL = "http://sim:8090" }, "DENAR_UJP_SANDBOX_URL is set but DENAR_UJP_SANDBOX_BACKEND is embedded"},
		{"ujp-sim", func(c *Config) {
			c.UJPSandboxBackend, c.UJPSandboxURL, c.UJPSimToken = backendUJPSim, "http://sim:8090", token
		}, ""},
		{"ujp-sim without a URL", func(c *Config) { c.UJPSandboxBackend, c.UJPSimToken = backendUJPSim, token }, "needs DENAR_UJP_SANDBOX_URL"},
		{"ujp-sim without a token", func(c *Config) { c.UJPSandboxBackend, c.UJPSandboxURL = backendUJPSim, "http://sim:8090" }, "DENAR_UJP_SIM_TOKEN"},
		{"ujp-sim with a short token", func(c *Config) {
			c.UJPSandboxBackend, c.UJPSandboxURL, c.UJPSimToken = backendUJPSim, "http://sim:8090", token[1:]
		}, "DENAR_UJP_SIM_TOKEN"},
		{"ujp", func(c *Config) { c.UJPSandboxBackend, c.UJPSandboxURL = backendUJP, "https://efakturatest.ujp.gov.mk" }, ""},
		{"ujp without a URL", func(c *Config) { c.UJPSandboxBackend = backendUJP }, "needs DENAR_UJP_SANDBOX_URL"},
		{"production at the sandbox's URL", func(c *Config) {
			c.UJPSandboxBackend, c.UJPSandboxURL, c.UJPSimToken, c.UJPProductionURL = backendUJPSim, "http://sim:8090", token, "http://sim:8090/"
		}, "DENAR_UJP_PRODUCTION_URL is the sandbox's URL"},
		{"an unknown backend", func(c *Config) { c.UJPSandboxBackend = "memory" }, "must be embedded, ujp-sim or ujp"},
		{"retention under an hour", func(c *Config) { c.UJPSimRetention = time.Minute }, "DENAR_UJP_SIM_RETENTION"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.change(&c)
			err := checkSandboxBackend(c)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
	t.Run("the replaced variable", func(t *testing.T) {
		t.Setenv("DENAR_UJP_SANDBOX_SIMULATOR", "true")
		if err := checkSandboxBackend(base); err == nil || !strings.Contains(err.Error(), "DENAR_UJP_SANDBOX_BACKEND") {
			t.Fatalf("got %v", err)
		}
	})
}

// TestConfigUJPEDB: the operator's ЕДБ is checked at start-up, check digit
// included, so a mistyped number is one clear line instead of UJP refusing
// every call that carries it.
func TestConfigUJPEDB(t *testing.T) {
	for _, tc := range []struct {
		edb     string
		wantErr bool
	}{
		{"", false},
		{"4030000000001", false},
		{"4030000375897", false},
		{"4030000000002", true}, // wrong check digit
		{"403000000001", true},
		{"MK4030000000001", true},
	} {
		t.Run(tc.edb, func(t *testing.T) {
			t.Setenv("DENAR_UJP_EDB", tc.edb)
			_, err := LoadConfig()
			if tc.wantErr != (err != nil && strings.Contains(err.Error(), "DENAR_UJP_EDB")) {
				t.Fatalf("DENAR_UJP_EDB=%q: %v", tc.edb, err)
			}
		})
	}
}

// TestUJPIdentityConfig: a real UJP (UJP's test environment as the
// sandbox, or production) needs the operator's identity, with no default
// that would be someone else's; the serial format is one of two.
func TestUJPIdentityConfig(t *testing.T) {
	base := Config{UJPSandboxBackend: backendEmbedded, UJPSerialFormat: "decimal"}
	for _, tc := range []struct {
		name    string
		change  func(*Config)
		wantErr string
	}{
		{"embedded needs none", func(*Config) {}, ""},
		{"ujp-sim needs none", func(c *Config) { c.UJPSandboxBackend = backendUJPSim }, ""},
		{"ujp without the user", func(c *Config) { c.UJPSandboxBackend, c.UJPEDB = backendUJP, "4030000375897" }, "DENAR_UJP_USER"},
		{"ujp without the tax number", func(c *Config) { c.UJPSandboxBackend, c.UJPUser = backendUJP, "EUJP-OPERATOR" }, "DENAR_UJP_EDB"},
		{"ujp with both", func(c *Config) {
			c.UJPSandboxBackend, c.UJPUser, c.UJPEDB = backendUJP, "EUJP-OPERATOR", "4030000375897"
		}, ""},
		{"production without the identity", func(c *Config) { c.UJPProductionURL = "https://efaktura.ujp.gov.mk" }, "DENAR_UJP_PRODUCTION_URL"},
		{"production with it", func(c *Config) {
			c.UJPProductionURL, c.UJPUser, c.UJPEDB = "https://efaktura.ujp.gov.mk", "EUJP-OPERATOR", "4030000375897"
		}, ""},
		{"hex serials", func(c *Config) { c.UJPSerialFormat = "hex" }, ""},
		{"octal serials", func(c *Config) { c.UJPSerialFormat = "octal" }, "DENAR_UJP_SERIAL_FORMAT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.change(&c)
			err := checkUJPIdentity(c)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
}

// TestConfigDefaults: every setting has its default written once — an
// envDefault tag for a setting of the command itself, or a package's
// Default… read by packageDefaults, never both — and the README's table of
// settings lists each with the default LoadConfig gives it.
func TestConfigDefaults(t *testing.T) {
	// No DENAR_* variable from the environment the test runs in.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "DENAR_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	t.Setenv("DENAR_DATA_DIR", "./denar-data")
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{}
	names := regexp.MustCompile("`(DENAR_[A-Z0-9_]+)`")
	for line := range strings.Lines(string(readme)) {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `DENAR_") || len(cells) < 4 {
			continue
		}
		for _, m := range names.FindAllStringSubmatch(cells[1], -1) {
			documented[m[1]] = strings.Trim(strings.TrimSpace(cells[2]), "`")
		}
	}
	pkg := reflect.ValueOf(packageDefaults())
	got := reflect.ValueOf(cfg)
	typ := reflect.TypeFor[Config]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name := f.Tag.Get("env")
		if name == "" {
			continue
		}
		_, tagged := f.Tag.Lookup("envDefault")
		fromPkg := !pkg.Field(i).IsZero()
		if tagged && fromPkg {
			t.Errorf("%s: a default in its envDefault tag and another from its package", name)
		}
		doc, ok := documented[name]
		if !ok {
			t.Errorf("%s is not in the README's table of settings", name)
			continue
		}
		if !tagged && !fromPkg {
			continue // no default: the README says so in words
		}
		if want := settingText(got.Field(i)); doc != want {
			t.Errorf("%s: the README says the default is %q, the service uses %q", name, doc, want)
		}
	}
}

// settingText writes a setting's value as its variable would be set.
func settingText(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case time.Duration:
		return durationText(x)
	case []time.Duration:
		parts := make([]string, len(x))
		for i, d := range x {
			parts[i] = durationText(d)
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v.Interface())
}

// durationText is d as the README writes it: 1m, not 1m0s; 336h, not
// 336h0m0s.
func durationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
