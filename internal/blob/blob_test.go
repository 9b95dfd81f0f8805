package blob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/blob"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

var versitygw string // path of the S3 server binary, "" when unavailable
var versitygwWhy string

// TestMain finds versitygw (an S3-compatible gateway with a POSIX
// backend) for the S3 tests: DENAR_TEST_VERSITYGW, then PATH and
// $GOPATH/bin (.ci/run installs it there), else it builds it with go
// install into a temporary GOBIN.
func TestMain(m *testing.M) {
	versitygw, versitygwWhy = findVersitygw()
	storetest.Main(m)
}

const versitygwModule = "github.com/versity/versitygw/cmd/versitygw@v1.8.0"

func findVersitygw() (string, string) {
	if p := os.Getenv("DENAR_TEST_VERSITYGW"); p != "" {
		return p, ""
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, ""
	}
	gopath, _ := exec.Command("go", "env", "GOPATH").Output()
	if p := filepath.Join(string(bytes.TrimSpace(gopath)), "bin", "versitygw"); fileExists(p) {
		return p, ""
	}
	dir, err := os.MkdirTemp("", "versitygw-")
	if err != nil {
		return "", err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "install", versitygwModule)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Sprintf("go install %s: %v\n%s", versitygwModule, err, out)
	}
	return filepath.Join(dir, "versitygw"), ""
}

func fileExists(p string) bool { st, err := os.Stat(p); return err == nil && !st.IsDir() }

// payload is n pseudo-random bytes (incompressible, reproducible).
func payload(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// exercise runs the Store contract on s: streamed writes of several
// sizes read back byte for byte, a failed write leaves nothing readable,
// Delete removes, a missing key is ErrNotFound.
func exercise(t *testing.T, s blob.Store, sizes ...int) {
	ctx := t.Context()
	for _, n := range sizes {
		key := fmt.Sprintf("test/%d-%d.bin", n, time.Now().UnixNano())
		want := payload(n)
		got, err := blob.Write(ctx, s, key, func(w io.Writer) error {
			// Small uneven writes, as a zip writer makes.
			for rest := want; len(rest) > 0; {
				k := min(len(rest), 1000+len(rest)%777)
				if _, err := w.Write(rest[:k]); err != nil {
					return err
				}
				rest = rest[k:]
			}
			return nil
		})
		if err != nil || got != int64(n) {
			t.Fatalf("write %d bytes: %d, %v", n, got, err)
		}
		rc, size, err := s.Open(ctx, key)
		if err != nil || size != int64(n) {
			t.Fatalf("open: %d %v", size, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(b, want) {
			t.Fatalf("read back %d bytes (sha %x), want %d (sha %x): %v", len(b), sha256.Sum256(b), n, sha256.Sum256(want), err)
		}
		if err := s.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Open(ctx, key); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("open after delete: %v", err)
		}
	}
	boom := errors.New("the archive could not be built")
	if _, err := blob.Write(ctx, s, "test/failed.bin", func(w io.Writer) error {
		w.Write(payload(300000))
		return boom
	}); err == nil {
		t.Fatalf("failed write: %v", err)
	}
	if _, _, err := s.Open(ctx, "test/failed.bin"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("a failed write is readable: %v", err)
	}
	if err := s.Delete(ctx, "test/never-written"); err != nil {
		t.Fatalf("delete of a missing key: %v", err)
	}
}

func TestDBStore(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		exercise(t, blob.NewDB(db, 64<<10), 0, 1, 64<<10, 3<<20+17)
	})
}

// TestS3Store runs the contract against a real S3-compatible server: a
// versitygw process on loopback with a POSIX backend in a temporary
// directory, reached with minio-go as in production.
func TestS3Store(t *testing.T) {
	t.Parallel()
	if versitygw == "" {
		msg := "versitygw (S3-compatible server) unavailable: " + versitygwWhy
		if os.Getenv("DENAR_TEST_REQUIRE_S3") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg + " (set DENAR_TEST_REQUIRE_S3=1 to fail instead)")
	}
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("versitygw's POSIX backend needs a Unix file system")
	}
	endpoint := startVersitygw(t)
	s, err := blob.NewS3(blob.S3Config{Endpoint: endpoint, Region: "us-east-1", Bucket: "denar-test", AccessKey: "denar-test-access",
		SecretKey: "denar-test-secret-key", Prefix: "denar/", PartSize: 5 << 20, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureBucket(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureBucket(t.Context()); err != nil {
		t.Fatalf("bucket that exists: %v", err)
	}
	// 12 MiB is three parts of a multipart upload.
	exercise(t, s, 0, 1, 100000, 12<<20+5)
}

func startVersitygw(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(versitygw, "--access", "denar-test-access", "--secret", "denar-test-secret-key", "--port", addr,
		"posix", filepath.Join(dir, "data"))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/")
		if err == nil {
			resp.Body.Close()
			return "http://" + addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw never answered on %s: %s", addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
